/*
 * t_flags: RCCE_flag_alloc / RCCE_flag_write / RCCE_flag_read /
 * RCCE_wait_until (and RCCE_flag_free under GORY), in both flag widths.
 *
 *  - New flags read RCCE_FLAG_UNSET, locally and remotely.
 *  - Writing some flags of a line leaves the neighbouring flags alone
 *    (bits under SINGLEBITFLAGS, bytes otherwise).
 *  - A token travels the ring with RCCE_wait_until, carrying a counter put
 *    into the next core's MPB before the flag (data visible before flag).
 *  - Every core sets its own flag in rank 0's MPB at the same time (all in
 *    the same line(s); single-bit writes must not lose each other).
 *  - GORY: 300 flags take 9..10 MPB lines with byte flags and 1..2 lines
 *    with single-bit flags; RCCE_flag_free gives every line back.
 *  - Simplified interface: RCCE_send/RCCE_recv still work afterwards.
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_flags"
#include "test_check.h"

#define K 40          /* flags in the pattern test (more than one byte line) */
#define LAPS 3        /* token laps */
#define ROUNDS 5      /* many-writer rounds */
#define MANY 300      /* flags in the width test */
#define MPB_LINES ((RCCE_BUFF_SIZE_MAX - RCCE_LINE_SIZE) / RCCE_LINE_SIZE)

static int np;

static RCCE_FLAG_STATUS read_flag(RCCE_FLAG f, int id)
{
    RCCE_FLAG_STATUS st = -1;
    CHECK_RC(RCCE_flag_read(f, &st, id), RCCE_SUCCESS);
    CHECK(st == RCCE_FLAG_SET || st == RCCE_FLAG_UNSET,
          "RCCE_flag_read gave status %d", st);
    return st;
}

/* Poll a flag in core id's MPB until it has value want (bounded). */
static void poll_flag(RCCE_FLAG f, int id, RCCE_FLAG_STATUS want,
                      const char *what, int which)
{
    double t0 = RCCE_wtime();
    while (read_flag(f, id) != want) {
        CHECK(RCCE_wtime() - t0 < 60.0, "%s %d never became %d", what, which,
              want);
        sched_yield();
    }
}

#ifdef GORY
static int count_free_lines(void)
{
    t_vcharp got[MPB_LINES + 1];
    int n = 0, i;
    while (n <= MPB_LINES && (got[n] = RCCE_malloc(RCCE_LINE_SIZE)) != NULL)
        n++;
    CHECK(n <= MPB_LINES, "RCCE_malloc handed out more than %d lines",
          MPB_LINES);
    for (i = n - 1; i >= 0; i--)
        RCCE_free(got[i]);
    return n;
}
#endif

int RCCE_APP(int argc, char **argv)
{
    static RCCE_FLAG f[K], g[RCCE_MAXNP];
    RCCE_FLAG tok;
    t_vcharp cnt;
    int left, right, k, r, lap, it, i;
    int counter[RCCE_LINE_SIZE / sizeof(int)];

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    left = (me + np - 1) % np;
    right = (me + 1) % np;

    /* Allocation; fresh flags are unset everywhere. */
    for (k = 0; k < K; k++) {
        CHECK_RC(RCCE_flag_alloc(&f[k]), RCCE_SUCCESS);
        CHECK(f[k].flag_addr != NULL && f[k].line_address != NULL,
              "flag %d has no address", k);
        for (i = 0; i < k; i++)
            CHECK(f[i].flag_addr != f[k].flag_addr ||
                      f[i].location != f[k].location,
                  "flags %d and %d coincide", i, k);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 0; k < K; k++) {
        CHECK(read_flag(f[k], me) == RCCE_FLAG_UNSET, "new flag %d is set", k);
        CHECK(read_flag(f[k], right) == RCCE_FLAG_UNSET,
              "new flag %d is set at core %d", k, right);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Odd flags set in the right neighbour; even ones stay unset. */
    for (k = 1; k < K; k += 2)
        CHECK_RC(RCCE_flag_write(&f[k], RCCE_FLAG_SET, right), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 0; k < K; k++) {
        RCCE_FLAG_STATUS want = (k % 2) ? RCCE_FLAG_SET : RCCE_FLAG_UNSET;
        CHECK(read_flag(f[k], me) == want, "own flag %d is not %d", k, want);
        CHECK(read_flag(f[k], left) == want, "flag %d at core %d is not %d",
              k, left, want);
    }
    CHECK_RC(RCCE_wait_until(f[1], RCCE_FLAG_SET), RCCE_SUCCESS);
    CHECK_RC(RCCE_wait_until(f[0], RCCE_FLAG_UNSET), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 1; k < K; k += 2)
        CHECK_RC(RCCE_flag_write(&f[k], RCCE_FLAG_UNSET, me), RCCE_SUCCESS);
    /* Setting an already set flag, and unsetting an unset one, are fine. */
    CHECK_RC(RCCE_flag_write(&f[2], RCCE_FLAG_UNSET, me), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 0; k < K; k++)
        CHECK(read_flag(f[k], me) == RCCE_FLAG_UNSET,
              "flag %d is still set after clearing", k);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Token ring with a counter: data put before the flag is seen. */
    tok = f[3];
    cnt = RCCE_malloc(RCCE_LINE_SIZE);
    CHECK(cnt != NULL, "RCCE_malloc of the counter line failed");
    /* nobody writes a peer's line before the peer has allocated it */
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    if (np > 1) {
        for (lap = 0; lap < LAPS; lap++) {
            if (me == 0) {
                memset(counter, 0, sizeof counter);
                counter[0] = lap * np + 1;
                counter[1] = lap;
                CHECK_RC(RCCE_put(cnt, (t_vcharp)counter, RCCE_LINE_SIZE,
                                  right), RCCE_SUCCESS);
                CHECK_RC(RCCE_flag_write(&tok, RCCE_FLAG_SET, right),
                         RCCE_SUCCESS);
                CHECK_RC(RCCE_wait_until(tok, RCCE_FLAG_SET), RCCE_SUCCESS);
                CHECK_RC(RCCE_flag_write(&tok, RCCE_FLAG_UNSET, me),
                         RCCE_SUCCESS);
                CHECK_RC(RCCE_get((t_vcharp)counter, cnt, RCCE_LINE_SIZE, me),
                         RCCE_SUCCESS);
                CHECK(counter[0] == (lap + 1) * np && counter[1] == lap,
                      "token came back with %d (lap %d), expected %d (lap %d)",
                      counter[0], counter[1], (lap + 1) * np, lap);
            } else {
                CHECK_RC(RCCE_wait_until(tok, RCCE_FLAG_SET), RCCE_SUCCESS);
                CHECK_RC(RCCE_flag_write(&tok, RCCE_FLAG_UNSET, me),
                         RCCE_SUCCESS);
                CHECK_RC(RCCE_get((t_vcharp)counter, cnt, RCCE_LINE_SIZE, me),
                         RCCE_SUCCESS);
                CHECK(counter[0] == lap * np + me && counter[1] == lap,
                      "token holds %d (lap %d), expected %d (lap %d)",
                      counter[0], counter[1], lap * np + me, lap);
                counter[0]++;
                CHECK_RC(RCCE_put(cnt, (t_vcharp)counter, RCCE_LINE_SIZE,
                                  right), RCCE_SUCCESS);
                CHECK_RC(RCCE_flag_write(&tok, RCCE_FLAG_SET, right),
                         RCCE_SUCCESS);
            }
        }
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Many writers into rank 0's flags at once. */
    for (r = 0; r < np; r++)
        CHECK_RC(RCCE_flag_alloc(&g[r]), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (it = 0; it < ROUNDS; it++) {
        if (me != 0) {
            CHECK_RC(RCCE_flag_write(&g[me], RCCE_FLAG_SET, 0), RCCE_SUCCESS);
        } else {
            for (r = 1; r < np; r++)
                poll_flag(g[r], 0, RCCE_FLAG_SET, "rank 0's flag for rank",
                          r);
            CHECK(read_flag(g[0], 0) == RCCE_FLAG_UNSET,
                  "rank 0's own flag was set by someone");
            for (r = 1; r < np; r++)
                CHECK_RC(RCCE_flag_write(&g[r], RCCE_FLAG_UNSET, 0),
                         RCCE_SUCCESS);
        }
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        CHECK(read_flag(g[me], 0) == RCCE_FLAG_UNSET,
              "flag %d at rank 0 not cleared in round %d", me, it);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    }

#ifdef GORY
    {
        static RCCE_FLAG many[MANY];
        int f0, f1, used, lo, hi;

        RCCE_free(cnt);
        for (k = 0; k < K; k++)
            CHECK_RC(RCCE_flag_free(&f[k]), RCCE_SUCCESS);
        for (r = 0; r < np; r++)
            CHECK_RC(RCCE_flag_free(&g[r]), RCCE_SUCCESS);

        f0 = count_free_lines();
        for (k = 0; k < MANY; k++)
            CHECK_RC(RCCE_flag_alloc(&many[k]), RCCE_SUCCESS);
        f1 = count_free_lines();
        used = f0 - f1;
#ifdef SINGLEBITFLAGS
        lo = 1;
        hi = 2;
#else
        lo = 9;
        hi = 10;
#endif
        CHECK(used >= lo && used <= hi,
              "%d flags took %d MPB lines, expected %d..%d", MANY, used, lo,
              hi);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        /* They work: everyone sets its flag number me in the right core. */
        CHECK_RC(RCCE_flag_write(&many[me], RCCE_FLAG_SET, right),
                 RCCE_SUCCESS);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        for (k = 0; k < MANY; k++)
            CHECK(read_flag(many[k], me) ==
                      (k == left ? RCCE_FLAG_SET : RCCE_FLAG_UNSET),
                  "flag %d of %d has the wrong value", k, MANY);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        for (k = 0; k < MANY; k++)
            CHECK_RC(RCCE_flag_free(&many[k]), RCCE_SUCCESS);
        CHECK(count_free_lines() == f0,
              "freeing %d flags did not give back every line", MANY);
    }
#else
    /* Messages still flow alongside the flags taken above. */
    if (np > 1) {
        char out[3000], in[3000];
        for (i = 0; i < (int)sizeof out; i++)
            out[i] = (char)(me * 5 + i);
        if (me % 2 == 0) {
            CHECK_RC(RCCE_send(out, sizeof out, right), RCCE_SUCCESS);
            CHECK_RC(RCCE_recv(in, sizeof in, left), RCCE_SUCCESS);
        } else {
            CHECK_RC(RCCE_recv(in, sizeof in, left), RCCE_SUCCESS);
            CHECK_RC(RCCE_send(out, sizeof out, right), RCCE_SUCCESS);
        }
        for (i = 0; i < (int)sizeof in; i++)
            CHECK(in[i] == (char)(left * 5 + i), "message byte %d", i);
    }
#endif

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d, %s flags)\n", test_name, me, np,
               SCCEMU_RCCE_SINGLEBITFLAGS ? "single-bit" : "byte");
    return 0;
}
