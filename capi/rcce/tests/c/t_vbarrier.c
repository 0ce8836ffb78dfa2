/*
 * t_vbarrier: virtual time of RCCE_barrier.  Every UE passes `rounds` barriers
 * (argument 1, default 10); UE 0 prints the virtual time its whole loop took,
 * in picoseconds, as "barrier_ps <value>", for the harness to compare with the
 * model's closed form.  Meant for rccerun -clock ... with compute not charged.
 */
#include <stdlib.h>

#include "RCCE.h"

#define TEST_NAME "t_vbarrier"
#include "test_check.h"

int RCCE_APP(int argc, char **argv)
{
    int rounds, i;
    double t0, t1;

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    rounds = argc > 1 ? atoi(argv[1]) : 10;
    t0 = RCCE_wtime();
    for (i = 0; i < rounds; i++)
        RCCE_barrier(&RCCE_COMM_WORLD);
    t1 = RCCE_wtime();
    CHECK(t1 > t0, "virtual time did not move: %f to %f", t0, t1);
    if (me == 0)
        printf("barrier_ps %.0f\nok %s\n", (t1 - t0) * 1e12, TEST_NAME);
    RCCE_finalize();
    return 0;
}
