/*
 * t_early_exit: rank 1 returns from main right after the communicator
 * split, without RCCE_finalize.  That is a normal exit: the other cores go
 * on (after waiting 100 ms, so rank 1 is really gone) with barriers, a ring
 * exchange and (simplified interface) a broadcast and an allreduce in a
 * communicator that excludes rank 1, then return 0 -- also without
 * RCCE_finalize, which on the chip is a barrier over all cores.
 * Needs at least 2 cores.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "RCCE.h"

#define TEST_NAME "t_early_exit"
#include "test_check.h"

static int color_not_one(int rank, void *aux)
{
    (void)aux;
    return rank == 1;
}

int RCCE_APP(int argc, char **argv)
{
    static RCCE_COMM rest;
    int np, i, k, n, r, left, right;
    struct timespec ts = {0, 100 * 1000 * 1000};
#ifdef GORY
    t_vcharp combuf;
    RCCE_FLAG ready, sent;
#endif

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    CHECK(np >= 2, "needs at least 2 cores, has %d", np);

    memset(&rest, 0, sizeof rest);
    CHECK_RC(RCCE_comm_split(color_not_one, NULL, &rest), RCCE_SUCCESS);
#ifdef GORY
    combuf = RCCE_malloc(256);
    CHECK(combuf != NULL, "RCCE_malloc failed");
    CHECK_RC(RCCE_flag_alloc(&ready), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_alloc(&sent), RCCE_SUCCESS);
#endif
    if (me == 1)
        return 0; /* no RCCE_finalize */

    nanosleep(&ts, NULL);
    n = rest.size;
    r = rest.my_rank;
    CHECK(n == np - 1, "the communicator without rank 1 has %d members", n);
    for (i = 0; i < n; i++)
        CHECK(rest.member[i] == (i == 0 ? 0 : i + 1), "member[%d] = %d", i,
              rest.member[i]);
    for (k = 0; k < 5; k++)
        CHECK_RC(RCCE_barrier(&rest), RCCE_SUCCESS);

    /* ring among the members */
    left = rest.member[(r + n - 1) % n];
    right = rest.member[(r + 1) % n];
    if (n > 1) {
        char out[500], in[500];
        for (i = 0; i < 500; i++)
            out[i] = (char)(me + i);
#ifdef GORY
#define SEND(b, c, d) RCCE_send((b), combuf, 256, &ready, &sent, (c), (d))
#define RECV(b, c, s) RCCE_recv((b), combuf, 256, &ready, &sent, (c), (s))
#else
#define SEND(b, c, d) RCCE_send((b), (c), (d))
#define RECV(b, c, s) RCCE_recv((b), (c), (s))
#endif
        if (r % 2 == 0) {
            CHECK_RC(SEND(out, 500, right), RCCE_SUCCESS);
            CHECK_RC(RECV(in, 500, left), RCCE_SUCCESS);
        } else {
            CHECK_RC(RECV(in, 500, left), RCCE_SUCCESS);
            CHECK_RC(SEND(out, 500, right), RCCE_SUCCESS);
        }
        for (i = 0; i < 500; i++)
            CHECK(in[i] == (char)(left + i), "ring byte %d", i);
    }
#ifndef GORY
    {
        int v = (r == n - 1) ? 4242 : 0, sum = -1;
        CHECK_RC(RCCE_bcast((char *)&v, sizeof v, n - 1, rest), RCCE_SUCCESS);
        CHECK(v == 4242, "bcast in the communicator gave %d", v);
        v = me;
        CHECK_RC(RCCE_allreduce((char *)&v, (char *)&sum, 1, RCCE_INT, RCCE_SUM,
                                rest),
                 RCCE_SUCCESS);
        CHECK(sum == np * (np - 1) / 2 - 1, "allreduce gave %d", sum);
    }
#endif
    CHECK_RC(RCCE_barrier(&rest), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0; /* no RCCE_finalize */
}
