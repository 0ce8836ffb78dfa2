/*
 * t_hostfile: run with a host file that lists the core IDs in reverse
 * order (rccerun -f).  Ranks are still 0..np-1 (the library ranks cores by
 * sorted core ID; the harness checks the placement), they form a
 * permutation, RCCE_COMM_WORLD matches, and a ring exchange in both
 * directions works (simplified or gory interface).
 */
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"

#define TEST_NAME "t_hostfile"
#include "test_check.h"

#define MSG 3000

#ifdef GORY
static t_vcharp combuf;
static RCCE_FLAG ready, sent;
#define SEND(b, n, d) RCCE_send((b), combuf, 1024, &ready, &sent, (n), (d))
#define RECV(b, n, s) RCCE_recv((b), combuf, 1024, &ready, &sent, (n), (s))
#else
#define SEND(b, n, d) RCCE_send((b), (n), (d))
#define RECV(b, n, s) RCCE_recv((b), (n), (s))
#endif

/* Send to `to`, receive from `from`; even ranks send first. */
static void shift(int to, int from, int dir)
{
    static char out[MSG], in[MSG];
    int i;
    for (i = 0; i < MSG; i++)
        out[i] = (char)(me * 7 + i + dir);
    memset(in, 0, sizeof in);
    if (me % 2 == 0) {
        CHECK_RC(SEND(out, MSG, to), RCCE_SUCCESS);
        CHECK_RC(RECV(in, MSG, from), RCCE_SUCCESS);
    } else {
        CHECK_RC(RECV(in, MSG, from), RCCE_SUCCESS);
        CHECK_RC(SEND(out, MSG, to), RCCE_SUCCESS);
    }
    for (i = 0; i < MSG; i++)
        CHECK(in[i] == (char)(from * 7 + i + dir),
              "shift %d from rank %d: byte %d", dir, from, i);
}

int RCCE_APP(int argc, char **argv)
{
    int np, i, left, right;
    volatile int *seen;

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    CHECK(np >= 1 && np <= 48 && me >= 0 && me < np, "ue %d of %d", me, np);
    CHECK(RCCE_COMM_WORLD.size == np && RCCE_COMM_WORLD.my_rank == me,
          "RCCE_COMM_WORLD: size %d my_rank %d", RCCE_COMM_WORLD.size,
          RCCE_COMM_WORLD.my_rank);
    for (i = 0; i < np; i++)
        CHECK(RCCE_COMM_WORLD.member[i] == i, "member[%d] = %d", i,
              RCCE_COMM_WORLD.member[i]);

    seen = (volatile int *)RCCE_shmalloc((size_t)np * sizeof(int));
    CHECK(seen != NULL, "RCCE_shmalloc failed");
    seen[me] = me;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < np; i++)
        CHECK(seen[i] == i, "rank table slot %d holds %d", i, seen[i]);

#ifdef GORY
    combuf = RCCE_malloc(1024);
    CHECK(combuf != NULL, "RCCE_malloc failed");
    CHECK_RC(RCCE_flag_alloc(&ready), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_alloc(&sent), RCCE_SUCCESS);
    /* nobody touches a peer's flags before the peer has allocated them */
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
#endif
    left = (me + np - 1) % np;
    right = (me + 1) % np;
    if (np > 1) {
        shift(right, left, 0);
#ifdef GORY
        /* one flag pair: the senders change, so separate the shifts */
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
#endif
        shift(left, right, 1);
    }

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree((t_vcharp)seen);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
