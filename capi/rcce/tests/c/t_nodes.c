/*
 * t_nodes: what an RCCE program may do whether or not its job spans nodes
 * (`sccrun --nodes K`), without shared DRAM, checked from C.
 *
 *  - RCCE_comm_buffer[id] is NULL exactly for the UEs on other nodes; run
 *    with the argument `spans` at least one is, without it none is.
 *  - Put/get between all pairs: each UE puts a line of its own into its line
 *    of every UE's MPB; after a barrier each UE checks every line of its own
 *    MPB, and gets every UE's line back from there.
 *  - RCCE_barrier: nobody leaves before everybody entered (phase numbers in
 *    each UE's MPB, read by everyone after each barrier).
 *  - RCCE_bcast (0, 5, 8200 B) from roots 0, np/2, np-1; RCCE_reduce and
 *    RCCE_allreduce of ints and doubles (sum, max) against a sequential
 *    result; communicators of the even and the odd ranks with their own
 *    barrier and allreduce (simplified interface only).
 *  - RCCE_shmalloc: NULL when the job spans nodes, memory otherwise.
 *  - RCCE_acquire_lock: UE 0's register guards a counter in the last UE's MPB
 *    (on two different nodes when the job spans them), which every UE
 *    increments ROUNDS times, checking that nobody writes it while it holds
 *    the lock (exact total).
 */
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_nodes"
#include "test_check.h"

#define ROUNDS 20
#define PHASES 6

static int np;

static void fill(unsigned char *line, int from, int to)
{
    int i;
    for (i = 0; i < RCCE_LINE_SIZE; i++)
        line[i] = (unsigned char)(from * 31 + to * 7 + i);
}

static void put_get_all_pairs(t_vcharp lines)
{
    unsigned char out[RCCE_LINE_SIZE], in[RCCE_LINE_SIZE], want[RCCE_LINE_SIZE];
    int id;
    for (id = 0; id < np; id++) {
        fill(out, me, id);
        CHECK_RC(RCCE_put(lines + me * RCCE_LINE_SIZE, out, RCCE_LINE_SIZE, id), RCCE_SUCCESS);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (id = 0; id < np; id++) {
        fill(want, id, me);
        CHECK(memcmp((const void *)(lines + id * RCCE_LINE_SIZE), want, RCCE_LINE_SIZE) == 0,
              "line of UE %d in my MPB is wrong", id);
        fill(want, me, id);
        CHECK_RC(RCCE_get(in, lines + me * RCCE_LINE_SIZE, RCCE_LINE_SIZE, id), RCCE_SUCCESS);
        CHECK(memcmp(in, want, RCCE_LINE_SIZE) == 0, "my line in UE %d's MPB is wrong", id);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

static void barrier_phases(t_vcharp line)
{
    int phase, id, got[RCCE_LINE_SIZE / sizeof(int)];
    for (phase = 1; phase <= PHASES; phase++) {
        memset(got, 0, sizeof got);
        got[0] = phase;
        CHECK_RC(RCCE_put(line, (t_vcharp)got, RCCE_LINE_SIZE, me), RCCE_SUCCESS);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        for (id = 0; id < np; id++) {
            CHECK_RC(RCCE_get((t_vcharp)got, line, RCCE_LINE_SIZE, id), RCCE_SUCCESS);
            CHECK(got[0] == phase || got[0] == phase + 1,
                  "after barrier %d UE %d is in phase %d", phase, id, got[0]);
        }
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

#ifndef GORY
static int parity(int rank, void *aux)
{
    (void)aux;
    return rank % 2;
}

static void collectives(void)
{
    static char buf[8200];
    const size_t sizes[] = {0, 5, 8200};
    int roots[3], r, s, i, n, x, ints[4], isum[4];
    double d[3], dmax[3];
    RCCE_COMM halves;

    roots[0] = 0;
    roots[1] = np / 2;
    roots[2] = np - 1;
    for (r = 0; r < 3; r++) {
        for (s = 0; s < 3; s++) {
            for (i = 0; i < (int)sizes[s]; i++)
                buf[i] = (char)(me == roots[r] ? roots[r] + i * 3 : 0);
            CHECK_RC(RCCE_bcast(buf, sizes[s], roots[r], RCCE_COMM_WORLD), RCCE_SUCCESS);
            for (i = 0; i < (int)sizes[s]; i++)
                CHECK(buf[i] == (char)(roots[r] + i * 3), "bcast from %d of %zu B: byte %d", roots[r],
                      sizes[s], i);
        }
        for (i = 0; i < 4; i++)
            ints[i] = me * 10 + i;
        memset(isum, 0, sizeof isum);
        CHECK_RC(RCCE_reduce((char *)ints, (char *)isum, 4, RCCE_INT, RCCE_SUM, roots[r], RCCE_COMM_WORLD),
                 RCCE_SUCCESS);
        for (i = 0; i < 4; i++)
            CHECK(isum[i] == (me == roots[r] ? 10 * np * (np - 1) / 2 + np * i : 0),
                  "reduce to %d: element %d is %d", roots[r], i, isum[i]);
    }
    for (i = 0; i < 3; i++)
        d[i] = (double)((me * 7 + i * 5) % np);
    CHECK_RC(RCCE_allreduce((char *)d, (char *)dmax, 3, RCCE_DOUBLE, RCCE_MAX, RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < 3; i++) {
        double want = 0;
        for (r = 0; r < np; r++)
            if ((double)((r * 7 + i * 5) % np) > want)
                want = (double)((r * 7 + i * 5) % np);
        CHECK(dmax[i] == want, "allreduce max: element %d is %g, not %g", i, dmax[i], want);
    }

    CHECK_RC(RCCE_comm_split(parity, NULL, &halves), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&halves), RCCE_SUCCESS);
    n = (me % 2 == 0) ? (np + 1) / 2 : np / 2;
    CHECK(halves.size == n, "the communicator has %d members, not %d", halves.size, n);
    x = me;
    ints[0] = 0;
    CHECK_RC(RCCE_allreduce((char *)&x, (char *)ints, 1, RCCE_INT, RCCE_SUM, halves), RCCE_SUCCESS);
    for (r = me % 2, s = 0; r < np; r += 2)
        s += r;
    CHECK(ints[0] == s, "allreduce in my half gave %d, not %d", ints[0], s);
    CHECK_RC(RCCE_barrier(&halves), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}
#endif

static void locks(t_vcharp line)
{
    int k, owner = 0, keeper = np - 1, counter[RCCE_LINE_SIZE / sizeof(int)];
    memset(counter, 0, sizeof counter);
    if (me == keeper)
        CHECK_RC(RCCE_put(line, (t_vcharp)counter, RCCE_LINE_SIZE, me), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 0; k < ROUNDS; k++) {
        CHECK_RC(RCCE_acquire_lock(owner), RCCE_SUCCESS);
        CHECK_RC(RCCE_get((t_vcharp)counter, line, RCCE_LINE_SIZE, keeper), RCCE_SUCCESS);
        counter[0]++;
        counter[1] = me;
        CHECK_RC(RCCE_put(line, (t_vcharp)counter, RCCE_LINE_SIZE, keeper), RCCE_SUCCESS);
        CHECK_RC(RCCE_get((t_vcharp)counter, line, RCCE_LINE_SIZE, keeper), RCCE_SUCCESS);
        CHECK(counter[1] == me, "UE %d wrote the counter while UE %d held the lock", counter[1], me);
        CHECK_RC(RCCE_release_lock(owner), RCCE_SUCCESS);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    if (me == keeper) {
        CHECK_RC(RCCE_get((t_vcharp)counter, line, RCCE_LINE_SIZE, me), RCCE_SUCCESS);
        CHECK(counter[0] == ROUNDS * np, "the counter is %d, not %d", counter[0], ROUNDS * np);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

int RCCE_APP(int argc, char **argv)
{
    int spans, id, remote = 0;
    t_vcharp lines, phase, counter, sh;

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    spans = argc > 1 && strcmp(argv[1], "spans") == 0;
    for (id = 0; id < np; id++) {
        if (RCCE_comm_buffer[id] == NULL)
            remote++;
    }
    CHECK(RCCE_comm_buffer[me] != NULL, "my own MPB has no address");
    CHECK(spans ? remote > 0 : remote == 0, "%d UEs are on other nodes (spans: %d)", remote, spans);

    lines = RCCE_malloc((size_t)np * RCCE_LINE_SIZE);
    phase = RCCE_malloc(RCCE_LINE_SIZE);
    counter = RCCE_malloc(RCCE_LINE_SIZE);
    CHECK(lines != NULL && phase != NULL && counter != NULL, "RCCE_malloc failed");
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    put_get_all_pairs(lines);
    barrier_phases(phase);
#ifndef GORY
    collectives();
#endif
    locks(counter);

    sh = RCCE_shmalloc(64);
    CHECK(spans ? sh == NULL : sh != NULL, "RCCE_shmalloc(64) gave %p (spans: %d)", (void *)sh, spans);

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d, %d on other nodes)\n", test_name, me, np, remote);
    return 0;
}
