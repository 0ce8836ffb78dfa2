#define _POSIX_C_SOURCE 199309L
#define RC_POWER_MANAGEMENT
/*
 * t_vfreq: a tile's frequency in virtual time.  UE 0 runs the same computation
 * at the start-up divider and after halving its domain's frequency
 * (RCCE_set_frequency_divider to twice the divider), and prints how much more
 * virtual time one second of its CPU time is charged at the lower frequency, as
 * "ratio <value>".  Meant for rccerun -clock 0.533.
 *
 * Compute is charged from the host's CPU time, which a loaded (virtual) machine
 * inflates now and then, so comparing two virtual durations measures the machine
 * as much as the model.  The program reads its own thread CPU time around the
 * same interval the library charges, and compares virtual seconds per CPU second:
 * the quantity the frequency scales.
 */
#include <stdlib.h>
#include <time.h>

#include "RCCE.h"

#define TEST_NAME "t_vfreq"
#define ROUNDS 3
#include "test_check.h"

static volatile double sink;

static double cpu_seconds(void)
{
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0, "no thread CPU clock");
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Virtual seconds charged per CPU second of one computation. */
static double virtual_per_cpu(void)
{
    double t0 = RCCE_wtime(), c0 = cpu_seconds(), x = 0.0, cpu, virt;
    long i;
    for (i = 0; i < 10000000L; i++)
        x += (double)(i % 7) * 0.5;
    sink = x;
    cpu = cpu_seconds() - c0;
    virt = RCCE_wtime() - t0;
    CHECK(cpu > 0.0 && virt > 0.0, "compute took no time: cpu %g s, virtual %g s", cpu, virt);
    return virt / cpu;
}

int RCCE_APP(int argc, char **argv)
{
    int divider = 0, rc, round;
    double slow = 0.0, fast = 0.0;

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    if (me == 0) {
        for (round = 0; round < ROUNDS; round++) {
            fast += virtual_per_cpu();
            rc = RCCE_set_frequency_divider(6, &divider);
            CHECK(rc == RCCE_SUCCESS && divider == 6, "set_frequency_divider: rc %d, divider %d", rc, divider);
            slow += virtual_per_cpu();
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
