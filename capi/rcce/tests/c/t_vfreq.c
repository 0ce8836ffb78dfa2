#define RC_POWER_MANAGEMENT
/*
 * t_vfreq: a tile's frequency in virtual time.  UE 0 times the same computation
 * at the start-up divider and after halving its domain's frequency
 * (RCCE_set_frequency_divider to twice the divider), and prints the ratio of
 * the two virtual times as "ratio <value>".  Meant for rccerun -clock 0.533.
 * Compute is the host's CPU time, which a loaded (virtual) machine inflates now
 * and then: each side is timed ROUNDS times, alternating, and the fastest of each
 * side is compared, since noise only ever adds time.
 */
#include <stdlib.h>

#include "RCCE.h"

#define TEST_NAME "t_vfreq"
#define ROUNDS 5
#include "test_check.h"

static volatile double sink;

static double work(void)
{
    double t0 = RCCE_wtime(), x = 0.0;
    long i;
    for (i = 0; i < 10000000L; i++)
        x += (double)(i % 7) * 0.5;
    sink = x;
    return RCCE_wtime() - t0;
}

int RCCE_APP(int argc, char **argv)
{
    int divider = 0, rc, round;
    double slow = 0.0, fast = 0.0, t;

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    if (me == 0) {
        for (round = 0; round < ROUNDS; round++) {
            t = work();
            CHECK(t > 0.0, "compute took no virtual time");
            fast = round == 0 || t < fast ? t : fast;
            rc = RCCE_set_frequency_divider(6, &divider);
            CHECK(rc == RCCE_SUCCESS && divider == 6, "set_frequency_divider: rc %d, divider %d", rc, divider);
            t = work();
            slow = round == 0 || t < slow ? t : slow;
            rc = RCCE_set_frequency_divider(3, &divider);
            CHECK(rc == RCCE_SUCCESS && divider == 3, "back to divider 3: rc %d, divider %d", rc, divider);
        }
        printf("ratio %.4f\nok %s\n", slow / fast, TEST_NAME);
    }
    RCCE_barrier(&RCCE_COMM_WORLD);
    RCCE_finalize();
    (void)argv;
    return 0;
}
