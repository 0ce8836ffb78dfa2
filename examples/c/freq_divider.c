/*
 * freq_divider: RCCE's power management (build with -DRC_POWER_MANAGEMENT,
 * or PWRMGMT=1 with the RCCE Makefile).  Each power domain's master slows
 * its domain down to divider 8 (200 MHz), then back to the default, timing
 * the same compute loop at each setting; UE 0 prints the tiles' dividers.
 * In real-time mode the host runs the loop at its own speed, so the times
 * show what the calls cost, not the chip's clock; with virtual time the
 * dividers scale the compute.
 *
 *     rccerun -nue 8 ./freq_divider
 */
#include <stdio.h>

#include "RCCE.h"

static double work(void)
{
    volatile double x = 0;
    int i;
    for (i = 0; i < 2000000; i++)
        x += i * 0.5;
    return x;
}

int RCCE_APP(int argc, char **argv)
{
    RCCE_REQUEST req;
    int me, div = 0, level = 0, master, step;
    static const int dividers[] = {8, RCCE_POWER_DEFAULT};

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    master = RCCE_power_domain_master() == me;
    for (step = 0; step < 2; step++) {
        double t0;
        if (master) {
            RCCE_iset_power(dividers[step], &req, &div, &level);
            RCCE_wait_power(&req);
            printf("UE %d (domain %d, %d UEs): divider %d, voltage level %d\n", me, RCCE_power_domain(),
                   RCCE_power_domain_size(), div, level);
        }
        RCCE_barrier(&RCCE_COMM_WORLD);
        t0 = RCCE_wtime();
        work();
        if (me == 0)
            printf("UE 0: compute loop took %.3f ms\n", (RCCE_wtime() - t0) * 1e3);
        if (me == 0 && step == 0)
            print_dividers();
        RCCE_barrier(&RCCE_COMM_WORLD);
    }
    RCCE_finalize();
    return 0;
}
