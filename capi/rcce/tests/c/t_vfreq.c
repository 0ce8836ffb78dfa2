#define RC_POWER_MANAGEMENT
/*
 * t_vfreq: a tile's frequency in virtual time.  UE 0 times the same computation
 * at the start-up divider and after halving its domain's frequency
 * (RCCE_set_frequency_divider to twice the divider), and prints the ratio of
 * the two virtual times as "ratio <value>".  Meant for rccerun -clock 0.533.
 */
#include <stdlib.h>

#include "RCCE.h"

#define TEST_NAME "t_vfreq"
#include "test_check.h"

static volatile double sink;

static double work(void)
{
    double t0 = RCCE_wtime(), x = 0.0;
    long i;
    for (i = 0; i < 30000000L; i++)
        x += (double)(i % 7) * 0.5;
    sink = x;
    return RCCE_wtime() - t0;
}

int RCCE_APP(int argc, char **argv)
{
    int divider = 0, rc;
    double slow, fast, fast_again;

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    if (me == 0) {
        fast = work();
        rc = RCCE_set_frequency_divider(6, &divider);
        CHECK(rc == RCCE_SUCCESS && divider == 6, "set_frequency_divider: rc %d, divider %d", rc, divider);
        slow = work();
        rc = RCCE_set_frequency_divider(3, &divider);
        CHECK(rc == RCCE_SUCCESS, "back to divider 3: rc %d", rc);
        fast_again = work();
        CHECK(fast > 0.0 && fast_again > 0.0, "compute took no virtual time");
        printf("ratio %.4f\nok %s\n", 2.0 * slow / (fast + fast_again), TEST_NAME);
    }
    RCCE_barrier(&RCCE_COMM_WORLD);
    RCCE_finalize();
    (void)argv;
    return 0;
}
