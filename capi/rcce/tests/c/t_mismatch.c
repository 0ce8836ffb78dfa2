/*
 * t_mismatch: rank 0 sends 100 bytes to rank 1, which receives only 64.
 * No size travels with an RCCE message; under SCCEMU_CHECK=1 the job must
 * report the mismatch (the harness checks the report).  Without checking,
 * the pair behaves as on the chip (the sender waits for a handshake that
 * never comes).  The other ranks return at once.  Needs >= 2 cores.
 */
#include <string.h>

#include "RCCE.h"

int RCCE_APP(int argc, char **argv)
{
    static char buf[128];
    int me, np;
#ifdef GORY
    t_vcharp combuf;
    RCCE_FLAG ready, sent;
#endif

    if (RCCE_init(&argc, &argv) != RCCE_SUCCESS) {
        printf("FAIL t_mismatch: RCCE_init failed\n");
        return 1;
    }
    me = RCCE_ue();
    np = RCCE_num_ues();
#ifdef GORY
    combuf = RCCE_malloc(256);
    if (combuf == NULL || RCCE_flag_alloc(&ready) != RCCE_SUCCESS ||
        RCCE_flag_alloc(&sent) != RCCE_SUCCESS) {
        printf("rank %d: FAIL t_mismatch: MPB allocation failed\n", me);
        return 1;
    }
#define SEND(b, n, d) RCCE_send((b), combuf, 256, &ready, &sent, (n), (d))
#define RECV(b, n, s) RCCE_recv((b), combuf, 256, &ready, &sent, (n), (s))
#else
#define SEND(b, n, d) RCCE_send((b), (n), (d))
#define RECV(b, n, s) RCCE_recv((b), (n), (s))
#endif
    /* every core has set up its flags before anyone sends */
    RCCE_barrier(&RCCE_COMM_WORLD);
    if (np < 2) {
        printf("rank %d: FAIL t_mismatch: needs at least 2 cores\n", me);
        return 1;
    }
    memset(buf, 0x5A, sizeof buf);
    if (me == 0)
        SEND(buf, 100, 1);
    else if (me == 1)
        RECV(buf, 64, 0);
    if (me <= 1)
        printf("rank %d: t_mismatch: mismatched pair returned\n", me);
    fflush(stdout);
    return 0;
}
