/*
 * t_deadlock: ranks 0 and 1 both RCCE_send to each other first.  Sends are
 * synchronous, so neither returns: the launcher must detect the deadlock,
 * stop the job and print its report (the harness checks the report).  The
 * other ranks return at once, without RCCE_finalize.  Needs >= 2 cores.
 */
#include <string.h>

#include "RCCE.h"

int RCCE_APP(int argc, char **argv)
{
    static char buf[64];
    int me, np, other;
#ifdef GORY
    t_vcharp combuf;
    RCCE_FLAG ready, sent;
#endif

    if (RCCE_init(&argc, &argv) != RCCE_SUCCESS) {
        printf("FAIL t_deadlock: RCCE_init failed\n");
        return 1;
    }
    me = RCCE_ue();
    np = RCCE_num_ues();
#ifdef GORY
    combuf = RCCE_malloc(64);
    if (combuf == NULL || RCCE_flag_alloc(&ready) != RCCE_SUCCESS ||
        RCCE_flag_alloc(&sent) != RCCE_SUCCESS) {
        printf("rank %d: FAIL t_deadlock: MPB allocation failed\n", me);
        return 1;
    }
#endif
    /* every core has set up its flags before anyone sends */
    RCCE_barrier(&RCCE_COMM_WORLD);
    if (np < 2) {
        printf("rank %d: FAIL t_deadlock: needs at least 2 cores\n", me);
        return 1;
    }
    if (me > 1)
        return 0;

    other = 1 - me;
    memset(buf, me, sizeof buf);
#ifdef GORY
    RCCE_send(buf, combuf, 64, &ready, &sent, sizeof buf, other);
#else
    RCCE_send(buf, sizeof buf, other);
#endif
    printf("rank %d: FAIL t_deadlock: RCCE_send to %d returned without a "
           "matching RCCE_recv\n", me, other);
    fflush(stdout);
    return 2;
}
