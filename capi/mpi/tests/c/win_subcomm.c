/* Windows on communicators that do not hold every process, or hold them in another
 * order: the even/odd halves of MPI_Comm_split (their sizes differ at odd job sizes,
 * and both halves use their windows at the same time), a communicator of every process
 * in reverse order, and MPI_COMM_SELF. Every rank argument is a rank of the window's
 * communicator, which the checks translate to world ranks (`worlds`) to predict data.
 *
 * On each communicator, under every accumulate strategy (info key
 * sccemu_accumulate_strategy) and with MPI_Win_allocate's parts in DRAM and in the
 * MPBs (sccemu_placement=mpb):
 *  - fence: a ring of puts, and accumulates into rank 0;
 *  - PSCW: a ring with groups made from the communicator's group, completed with
 *    Win_wait, then with Win_test;
 *  - exclusive-lock contention on rank 0's counter (get + put), shared-lock reads, on
 *    a window from MPI_Win_create over malloc'ed memory;
 *  - lock_all + flush: rank 0 puts into rank 1's part, flushes, tells rank 2 with a
 *    message, and rank 2 must see the data;
 *  - fetch-and-op counters (every fetched value distinct) and a compare-and-swap
 *    mutex around a non-atomic get/put increment.
 * Once per strategy: MPI_Win_allocate_shared + MPI_Win_shared_query on a half
 * (contiguous parts, load/store), a dynamic window on a half, MPI_Win_get_group, and
 * the error classes of ranks outside the window's communicator (MPI_ERR_RANK; a PSCW
 * group with a process outside it: MPI_ERR_GROUP), and a window used after its
 * communicator was freed. Once: the attributes every window has (MPI_Win_get_attr)
 * for each flavour, and window names. */
#include <string.h>
#include "test_check.h"

enum { ROUNDS = 12, MAXP = 64 };

static int wrank, wsize;
/* The window info: the accumulate strategy, and MPI_Win_allocate's placement. */
static MPI_Info info;

/* World rank of every rank of `comm`, by rank. */
static void worlds(MPI_Comm comm, int *out) {
    CHECK_RC(MPI_Allgather(&wrank, 1, MPI_INT, out, 1, MPI_INT, comm));
}

static void ring(MPI_Comm comm, int *r, int *n, int *left, int *right) {
    CHECK_RC(MPI_Comm_rank(comm, r));
    CHECK_RC(MPI_Comm_size(comm, n));
    *left = (*r + *n - 1) % *n;
    *right = (*r + 1) % *n;
}

/* Fence: world rank to the right neighbour; world rank + 1 summed into rank 0. */
static void test_fence(MPI_Comm comm) {
    int r, n, left, right, w[MAXP], *base;
    ring(comm, &r, &n, &left, &right);
    worlds(comm, w);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, comm, &base, &win));
    for (int i = 0; i < 4; i++) base[i] = 0;
    CHECK_RC(MPI_Win_fence(0, win));
    int one = wrank + 1;
    CHECK_RC(MPI_Put(&wrank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(MPI_Accumulate(&one, 1, MPI_INT, 0, 1, 1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(base[0] == w[left]);
    int sum = 0;
    for (int i = 0; i < n; i++) sum += w[i] + 1;
    CHECK(base[1] == (r == 0 ? sum : 0));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK_RC(MPI_Win_free(&win));
}

/* PSCW round a ring: expose to the left, access the right. */
static void test_pscw(MPI_Comm comm) {
    int r, n, left, right, w[MAXP], *base;
    ring(comm, &r, &n, &left, &right);
    worlds(comm, w);
    MPI_Win win;
    MPI_Group cg, gl, gr;
    CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, comm, &base, &win));
    CHECK_RC(MPI_Comm_group(comm, &cg));
    CHECK_RC(MPI_Group_incl(cg, 1, &left, &gl));
    CHECK_RC(MPI_Group_incl(cg, 1, &right, &gr));
    for (int round = 0; round < 2; round++) {
        int v = 100 * wrank + round;
        CHECK_RC(MPI_Win_post(gl, 0, win));
        CHECK_RC(MPI_Win_start(gr, 0, win));
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, right, round, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_complete(win));
        if (round == 0) {
            CHECK_RC(MPI_Win_wait(win));
        } else {
            int flag = 0;
            while (!flag) CHECK_RC(MPI_Win_test(win, &flag));
        }
        CHECK(base[round] == 100 * w[left] + round);
    }
    CHECK_RC(MPI_Group_free(&gl));
    CHECK_RC(MPI_Group_free(&gr));
    CHECK_RC(MPI_Group_free(&cg));
    CHECK_RC(MPI_Win_free(&win));
}

/* Exclusive-lock contention on rank 0's counter, on Win_create'd malloc memory. */
static void test_locks(MPI_Comm comm) {
    int r, n, left, right;
    ring(comm, &r, &n, &left, &right);
    int *mem = calloc(2, sizeof(int));
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, 2 * sizeof(int), sizeof(int), info, comm, &win));
    CHECK_RC(MPI_Barrier(comm));
    for (int i = 0; i < ROUNDS; i++) {
        int v = 0;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_flush(0, win));
        v++;
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(right, win));
        CHECK(v == 0);
    }
    CHECK_RC(MPI_Barrier(comm));
    if (r == 0) {
        int v = -1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(0, win));
        CHECK(v == n * ROUNDS);
    }
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_free(&win));
    free(mem);
}

/* lock_all epochs: a flushed put seen by a third rank; fetch-and-op counters; a
 * compare-and-swap mutex around a get/put increment. */
static void test_lock_all(MPI_Comm comm) {
    int r, n, left, right, w[MAXP];
    long *base;
    ring(comm, &r, &n, &left, &right);
    worlds(comm, w);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(8 * sizeof(long), sizeof(long), info, comm, &base, &win));
    for (int i = 0; i < 8; i++) base[i] = 0;
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_lock_all(0, win));
    if (n >= 3 && r == 0) {
        long v = 7000 + wrank;
        CHECK_RC(MPI_Put(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_flush(1, win));
        CHECK_RC(MPI_Send(&v, 1, MPI_LONG, 2, 5, comm));
    } else if (n >= 3 && r == 2) {
        long told = 0, seen = 0;
        CHECK_RC(MPI_Recv(&told, 1, MPI_LONG, 0, 5, comm, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Get(&seen, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_flush(1, win));
        CHECK(told == 7000 + w[0] && seen == told);
    }
    long got[ROUNDS], one = 1, all[ROUNDS * MAXP];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_RC(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, n - 1, 1, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush(n - 1, win));
    }
    long me = wrank + 1, zero = 0;
    for (int i = 0; i < ROUNDS; i++) {
        long old = -1;
        do {
            CHECK_RC(MPI_Compare_and_swap(&me, &zero, &old, MPI_LONG, 0, 2, win));
            CHECK_RC(MPI_Win_flush(0, win));
        } while (old != 0);
        long v = 0;
        CHECK_RC(MPI_Get(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_flush(0, win));
        v++;
        CHECK_RC(MPI_Put(&v, 1, MPI_LONG, 0, 3, 1, MPI_LONG, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK_RC(MPI_Compare_and_swap(&zero, &me, &old, MPI_LONG, 0, 2, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK(old == me);
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Allgather(got, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, comm));
    char seen[ROUNDS * MAXP];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < n * ROUNDS; i++) {
        CHECK(all[i] >= 0 && all[i] < n * ROUNDS && !seen[all[i]]);
        seen[all[i]] = 1;
    }
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win));
    if (r == n - 1) CHECK(base[1] == n * ROUNDS);
    if (r == 0) CHECK(base[3] == n * ROUNDS && base[2] == 0);
    CHECK_RC(MPI_Win_unlock(r, win));
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_free(&win));
}

/* Win_allocate_shared on `comm`: contiguous parts in rank order, load/store through
 * the queried pointers. */
static void test_shared(MPI_Comm comm) {
    int r, n, left, right, *mine = NULL, *seg[MAXP];
    ring(comm, &r, &n, &left, &right);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate_shared((r + 1) * 2 * sizeof(int), sizeof(int), info, comm, &mine, &win));
    for (int i = 0; i < n; i++) {
        MPI_Aint sz = -1;
        int du = -1;
        CHECK_RC(MPI_Win_shared_query(win, i, &sz, &du, &seg[i]));
        CHECK(sz == (MPI_Aint)((i + 1) * 2 * sizeof(int)) && du == (int)sizeof(int));
        if (i > 0) CHECK(seg[i] == seg[i - 1] + i * 2);
    }
    CHECK(seg[r] == mine);
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < (r + 1) * 2; k++) mine[k] = 10 * wrank + k;
    CHECK_RC(MPI_Win_sync(win));
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_sync(win));
    int w[MAXP];
    worlds(comm, w);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < (i + 1) * 2; k++) CHECK(seg[i][k] == 10 * w[i] + k);
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_free(&win));
}

/* A dynamic window on `comm`: attached memory addressed by exchanged addresses. */
static void test_dynamic(MPI_Comm comm) {
    int r, n, left, right, w[MAXP];
    ring(comm, &r, &n, &left, &right);
    worlds(comm, w);
    MPI_Win win;
    CHECK_RC(MPI_Win_create_dynamic(info, comm, &win));
    long *buf = malloc(4 * sizeof(long));
    for (int i = 0; i < 4; i++) buf[i] = -1;
    CHECK_RC(MPI_Win_attach(win, buf, 4 * sizeof(long)));
    MPI_Aint addr, addrs[MAXP];
    CHECK_RC(MPI_Get_address(buf, &addr));
    CHECK_RC(MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, comm));
    long v = 500 + wrank;
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_RC(MPI_Put(&v, 1, MPI_LONG, right, MPI_Aint_add(addrs[right], sizeof(long)), 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_all(win));
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
    CHECK(buf[0] == -1 && buf[1] == 500 + w[left]);
    CHECK_RC(MPI_Win_unlock(r, win));
    CHECK_RC(MPI_Barrier(comm));
    CHECK_RC(MPI_Win_detach(win, buf));
    CHECK_RC(MPI_Win_free(&win));
    free(buf);
}

/* Win_get_group is the communicator's group; `result` is how it compares with the
 * world's. */
static void test_group(MPI_Comm comm, int result) {
    int *base;
    MPI_Win win;
    MPI_Group wg, cg, world;
    CHECK_RC(MPI_Win_allocate(sizeof(int), sizeof(int), info, comm, &base, &win));
    CHECK_RC(MPI_Win_get_group(win, &wg));
    CHECK_RC(MPI_Comm_group(comm, &cg));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int res = -1;
    CHECK_RC(MPI_Group_compare(wg, cg, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_compare(wg, world, &res));
    CHECK(res == result);
    MPI_Group *gs[] = {&wg, &cg, &world};
    for (int i = 0; i < 3; i++) CHECK_RC(MPI_Group_free(gs[i]));
    CHECK_RC(MPI_Win_free(&win));
}

/* Ranks outside the window's communicator: MPI_ERR_RANK; a PSCW group with a process
 * outside it (world rank `outsider`, or -1 if none): MPI_ERR_GROUP. */
static void test_errors(MPI_Comm comm, int outsider) {
    int r, n, left, right;
    long *base, v = 1, old = 0;
    ring(comm, &r, &n, &left, &right);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(2 * sizeof(long), sizeof(long), info, comm, &base, &win));
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_CLASS(MPI_Put(&v, 1, MPI_LONG, n, 0, 1, MPI_LONG, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Get(&v, 1, MPI_LONG, n + 3, 0, 1, MPI_LONG, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Fetch_and_op(&v, &old, MPI_LONG, n, 0, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_LONG, n, 0, 1, MPI_LONG, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_flush(n, win), MPI_ERR_RANK);
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, n, 0, win), MPI_ERR_RANK);
    MPI_Aint sz;
    int du;
    void *p;
    CHECK_CLASS(MPI_Win_shared_query(win, n, &sz, &du, &p), MPI_ERR_RANK);
    if (outsider >= 0) {
        MPI_Group world, g;
        CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
        CHECK_RC(MPI_Group_incl(world, 1, &outsider, &g));
        CHECK_CLASS(MPI_Win_start(g, 0, win), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Win_post(g, 0, win), MPI_ERR_GROUP);
        CHECK_RC(MPI_Group_free(&g));
        CHECK_RC(MPI_Group_free(&world));
    }
    /* Still usable. */
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&v, 1, MPI_LONG, right, 1, 1, MPI_LONG, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(base[1] == 1);
    CHECK_RC(MPI_Win_free(&win));
}

/* A window outlives its communicator: MPI_Comm_free before the window's last use. */
static void test_comm_freed_first(void) {
    MPI_Comm c;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &c));
    int r, n, left, right, w[MAXP], *base;
    ring(c, &r, &n, &left, &right);
    worlds(c, w);
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(sizeof(int), sizeof(int), info, c, &base, &win));
    CHECK_RC(MPI_Comm_free(&c));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&wrank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(base[0] == w[left]);
    MPI_Group g;
    int gs = -1;
    CHECK_RC(MPI_Win_get_group(win, &g));
    CHECK_RC(MPI_Group_size(g, &gs));
    CHECK(gs == n);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Win_free(&win));
}

/* MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR and _MODEL for the four flavours,
 * and a window's name. */
static void test_attributes(MPI_Comm comm) {
    int r;
    MPI_Comm_rank(comm, &r);
    int *flavor, *unit, *model, flag = 0;
    MPI_Aint *size;
    void *base;
    double *mine;
    MPI_Win w;
    CHECK_RC(MPI_Win_allocate((MPI_Aint)(8 * r + 8), 8, MPI_INFO_NULL, comm, &mine, &w));
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(flag == 1 && base == mine);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag == 1 && *size == 8 * r + 8);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag == 1 && *unit == 8);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag == 1 && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag == 1 && *model == MPI_WIN_UNIFIED);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_RC(MPI_Win_get_name(w, name, &len));
    CHECK(len == 0);
    CHECK_RC(MPI_Win_set_name(w, "halo window"));
    CHECK_RC(MPI_Win_get_name(w, name, &len));
    CHECK(len == 11 && strcmp(name, "halo window") == 0);
    CHECK_RC(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Win_get_attr(w, MPI_TAG_UB, &base, &flag), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Win_free(&w));
    int buf[3];
    CHECK_RC(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, comm, &w));
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(base == buf);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(*flavor == MPI_WIN_FLAVOR_CREATE);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_SIZE, &size, &flag));
    CHECK(*size == (MPI_Aint)sizeof buf);
    CHECK_RC(MPI_Win_free(&w));
    CHECK_RC(MPI_Win_allocate_shared(16, 4, MPI_INFO_NULL, comm, &mine, &w));
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(*flavor == MPI_WIN_FLAVOR_SHARED);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(base == mine);
    CHECK_RC(MPI_Win_free(&w));
    CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w));
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_BASE, &base, &flag));
    CHECK(flag == 1 && base == NULL);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_SIZE, &size, &flag));
    CHECK(*size == 0);
    CHECK_RC(MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(*flavor == MPI_WIN_FLAVOR_DYNAMIC);
    CHECK_RC(MPI_Win_free(&w));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= MAXP);
    MPI_Comm half, rev;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev));
    int hr, rr;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_rank(rev, &rr);
    CHECK(hr == wrank / 2 && rr == wsize - 1 - wrank);
    MPI_Comm comms[3] = {half, rev, MPI_COMM_SELF};
    static const char *strategies[] = {"atomic", "caller", "caller:64", "owner"};
    static const char *placements[] = {"dram", "mpb"};
    for (int s = 0; s < 4; s++) {
        for (int p = 0; p < 2; p++) {
            CHECK_RC(MPI_Info_create(&info));
            CHECK_RC(MPI_Info_set(info, "sccemu_accumulate_strategy", strategies[s]));
            CHECK_RC(MPI_Info_set(info, "sccemu_placement", placements[p]));
            for (int c = 0; c < 3; c++) {
                test_fence(comms[c]);
                test_pscw(comms[c]);
                test_locks(comms[c]);
                test_lock_all(comms[c]);
            }
            CHECK_RC(MPI_Info_free(&info));
        }
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "sccemu_accumulate_strategy", strategies[s]));
        test_shared(half);
        test_dynamic(half);
        test_dynamic(rev);
        test_group(half, MPI_UNEQUAL);
        test_group(rev, MPI_SIMILAR);
        test_group(MPI_COMM_SELF, MPI_UNEQUAL);
        test_errors(half, wrank % 2 == 0 ? 1 : 0); /* a process of the other half */
        test_errors(rev, -1);
        test_errors(MPI_COMM_SELF, (wrank + 1) % wsize);
        test_comm_freed_first();
        CHECK_RC(MPI_Info_free(&info));
        if (wrank == 0) printf("strategy %s: ok\n", strategies[s]);
    }
    test_attributes(half);
    test_attributes(MPI_COMM_WORLD);
    CHECK_RC(MPI_Comm_free(&half));
    CHECK_RC(MPI_Comm_free(&rev));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok win_subcomm\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
