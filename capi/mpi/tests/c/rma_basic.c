/* One-sided basics: every window flavor (allocate; create on malloc'ed, on
 * MPI_Alloc_mem, on static and on stack memory; allocate_shared with load/store
 * through Win_shared_query's pointers; dynamic with attach/detach), Win_get_group, Put/Get with disp_unit != 1
 * and with derived datatypes on both sides, Rput/Rget/Raccumulate, and every
 * synchronization: fence with asserts, post/start/complete/wait/test, lock shared
 * and exclusive, lock_all, the four flushes and Win_sync. The MPI_Win_allocate tests
 * run twice: with the default placement and with sccemu_placement=mpb. Rank r's
 * data is a function of (r, index); the target's memory is checked against it. */
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;
/* The info of MPI_Win_allocate: none, or sccemu_placement=mpb (parts in the MPBs). */
static MPI_Info alloc_info = MPI_INFO_NULL;

static int val(int r, int i) { return r * 1000 + i; }

/* Copies this rank's own window memory under an exclusive self-lock (the portable way
 * to read what others put). */
static void read_own(MPI_Win win, const void *base, void *out, size_t bytes) {
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memcpy(out, base, bytes);
    CHECK_RC(MPI_Win_unlock(rank, win));
}

static void test_allocate_fence(void) {
    enum { N = 16 };
    int *base = NULL, got[N];
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(N * sizeof(int), sizeof(int), alloc_info, MPI_COMM_WORLD, &base, &win));
    CHECK(base != NULL);
    for (int i = 0; i < N; i++) base[i] = -1;
    /* Epoch 1: puts to the right (NOPRECEDE: no RMA before). */
    int mine[N];
    for (int i = 0; i < N; i++) mine[i] = val(rank, i);
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_RC(MPI_Put(mine, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win));
    CHECK_RC(MPI_Put(mine + N / 2, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, win)); /* disp in ints */
    /* No local stores in epoch 1; no puts into this window in epoch 2. */
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int i = 0; i < N; i++) CHECK(base[i] == val(left, i));
    /* Epoch 2: get back from the right what this rank put there, in reverse halves. */
    CHECK_RC(MPI_Get(got, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, win));
    CHECK_RC(MPI_Get(got + N / 2, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++) CHECK(got[i] == val(rank, i + N / 2) && got[i + N / 2] == val(rank, i));
    /* Epoch 3: everyone adds into rank 0's element 5; also a put to oneself. */
    int one = rank + 1, self = -rank;
    CHECK_RC(MPI_Accumulate(&one, 1, MPI_INT, 0, 5, 1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Put(&self, 1, MPI_INT, rank, 7, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(base[5] == (rank == 0 ? val(left, 5) + size * (size + 1) / 2 : val(left, 5)));
    CHECK(base[7] == -rank);
    /* The hints in use: the placement asked for, the default strategy (the
     * environment's, if it sets one) and orderings. */
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    CHECK_RC(MPI_Win_get_info(win, &used));
    CHECK_RC(MPI_Info_get(used, "sccemu_placement", MPI_MAX_INFO_VAL, value, &found));
    CHECK(found && strcmp(value, alloc_info == MPI_INFO_NULL ? "dram" : "mpb") == 0);
    CHECK_RC(MPI_Info_get(used, "sccemu_accumulate_strategy", MPI_MAX_INFO_VAL, value, &found));
    const char *strategy = getenv("SCCEMU_ACCUMULATE_STRATEGY");
    CHECK(found && strcmp(value, strategy ? strategy : "atomic") == 0);
    CHECK_RC(MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL, value, &found));
    CHECK(found && strcmp(value, "rar,raw,war,waw") == 0);
    CHECK_RC(MPI_Info_free(&used));
    /* The window's group is the communicator's. */
    MPI_Group wg, cg;
    int res = -1;
    CHECK_RC(MPI_Win_get_group(win, &wg));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    CHECK_RC(MPI_Group_compare(wg, cg, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_free(&wg));
    CHECK_RC(MPI_Group_free(&cg));
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
}

/* Win_create on memory from malloc and from MPI_Alloc_mem; passive-target puts with
 * shared and exclusive locks; disp_unit = sizeof(double). */
static void test_create_locks(int use_alloc_mem) {
    enum { N = 10 };
    double *mem;
    if (use_alloc_mem) CHECK_RC(MPI_Alloc_mem(N * sizeof(double), MPI_INFO_NULL, &mem));
    else mem = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) mem[i] = -1;
    MPI_Win win;
    CHECK_RC(MPI_Win_create(mem, N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* everyone initialized before any put */
    /* Shared lock on the right; put at element 3 (disp_unit 8). */
    double v = rank + 0.5, back = 0;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_RC(MPI_Put(&v, 1, MPI_DOUBLE, right, 3, 1, MPI_DOUBLE, win));
    CHECK_RC(MPI_Win_flush(right, win)); /* complete at the target: a later get sees it */
    CHECK_RC(MPI_Get(&back, 1, MPI_DOUBLE, right, 3, 1, MPI_DOUBLE, win));
    CHECK_RC(MPI_Win_unlock(right, win));
    CHECK(back == rank + 0.5);
    /* Exclusive locks on rank 0, one slot each (slots past N wrap onto 4..9: exclusive
     * locks order them, and the last writer's value is one of the candidates). */
    double w = 100.0 + rank;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_RC(MPI_Put(&w, 1, MPI_DOUBLE, 0, 4 + rank % 6, 1, MPI_DOUBLE, win));
    CHECK_RC(MPI_Win_unlock(0, win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    double seen[N];
    read_own(win, mem, seen, sizeof seen);
    CHECK(seen[3] == left + 0.5);
    if (rank == 0)
        for (int s = 4; s < N; s++) {
            int ok = s - 4 >= size && seen[s] == -1;
            for (int r = s - 4; r < size; r += 6) ok |= seen[s] == 100.0 + r;
            CHECK(ok);
        }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&win));
    if (use_alloc_mem) CHECK_RC(MPI_Free_mem(mem));
    else free(mem);
}

/* Win_create over a static array between two other globals and over an array on
 * this function's stack: puts land, the neighbouring globals and the stack frame stay
 * intact, and the contents survive the window's free. */
static int static_before = 11;
static double static_arr[16];
static int static_after = 22;
static void test_create_static_stack(void) {
    double stack_arr[8];
    int canary = 0x5eed + rank;
    for (int i = 0; i < 8; i++) stack_arr[i] = -1;
    for (int i = 0; i < 16; i++) static_arr[i] = -1;
    MPI_Win ws, wk;
    CHECK_RC(MPI_Win_create(static_arr, sizeof static_arr, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &ws));
    CHECK_RC(MPI_Win_create(stack_arr, sizeof stack_arr, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &wk));
    double v = rank + 0.5;
    CHECK_RC(MPI_Win_fence(0, ws));
    CHECK_RC(MPI_Win_fence(0, wk));
    CHECK_RC(MPI_Put(&v, 1, MPI_DOUBLE, right, 3, 1, MPI_DOUBLE, ws));
    CHECK_RC(MPI_Put(&v, 1, MPI_DOUBLE, right, 5, 1, MPI_DOUBLE, wk));
    CHECK_RC(MPI_Win_fence(0, ws));
    CHECK_RC(MPI_Win_fence(0, wk));
    CHECK(static_arr[3] == left + 0.5 && stack_arr[5] == left + 0.5 && stack_arr[4] == -1);
    CHECK(static_before == 11 && static_after == 22 && canary == 0x5eed + rank);
    static_before++, static_after++;
    CHECK_RC(MPI_Win_free(&wk));
    CHECK_RC(MPI_Win_free(&ws));
    CHECK(static_arr[3] == left + 0.5 && stack_arr[5] == left + 0.5);
    CHECK(static_before == 12 && static_after == 23 && canary == 0x5eed + rank);
}

/* Derived datatypes on both sides: every other int of 8 at the origin into blocks of
 * 2 ints 3 apart at the target; read back with a vector get into a strided buffer. */
static void test_datatypes(void) {
    enum { N = 12 };
    int *base, src[8], dst[8];
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(N * sizeof(int), sizeof(int), alloc_info, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++) base[i] = -1;
    for (int i = 0; i < 8; i++) src[i] = val(rank, i), dst[i] = -2;
    MPI_Datatype every2, pairs3;
    CHECK_RC(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
    CHECK_RC(MPI_Type_vector(2, 2, 3, MPI_INT, &pairs3));
    CHECK_RC(MPI_Type_commit(&every2));
    CHECK_RC(MPI_Type_commit(&pairs3));
    CHECK_RC(MPI_Win_fence(0, win));
    /* 4 ints (src 0,2,4,6) land at target elements 1,2,4,5 (disp 1 = 4 bytes on). */
    CHECK_RC(MPI_Put(src, 1, every2, right, 1, 1, pairs3, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int want = i == 1 ? val(left, 0) : i == 2 ? val(left, 2) : i == 4 ? val(left, 4) : i == 5 ? val(left, 6) : -1;
        CHECK(base[i] == want);
    }
    /* Get those 4 back into every other int of dst. */
    CHECK_RC(MPI_Get(dst, 1, every2, right, 1, 1, pairs3, win));
    CHECK_RC(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++) CHECK(dst[i] == (i % 2 ? -2 : val(rank, i)));
    CHECK_RC(MPI_Type_free(&every2));
    CHECK_RC(MPI_Type_free(&pairs3));
    CHECK_RC(MPI_Win_free(&win));
}

/* Win_allocate_shared: contiguous segments of different sizes, load/store through
 * the queried pointers with Win_sync + barrier, and RMA on the same window. */
static void test_shared(void) {
    MPI_Comm node;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int *mine = NULL;
    MPI_Win win;
    MPI_Aint bytes = (rank + 1) * 4 * sizeof(int);
    CHECK_RC(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    int *seg[64];
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        CHECK_RC(MPI_Win_shared_query(win, r, &sz, &du, &seg[r]));
        CHECK(sz == (MPI_Aint)((r + 1) * 4 * sizeof(int)) && du == (int)sizeof(int));
        if (r > 0) CHECK(seg[r] == seg[r - 1] + r * 4); /* contiguous by default */
    }
    CHECK(seg[rank] == mine);
    int *first = NULL;
    MPI_Aint fsz;
    int fdu;
    CHECK_RC(MPI_Win_shared_query(win, MPI_PROC_NULL, &fsz, &fdu, &first));
    CHECK(first == seg[0] && fsz == (MPI_Aint)(4 * sizeof(int)));

    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < (rank + 1) * 4; k++) mine[k] = val(rank, k);
    CHECK_RC(MPI_Win_sync(win));
    CHECK_RC(MPI_Barrier(node));
    CHECK_RC(MPI_Win_sync(win));
    for (int r = 0; r < size; r++)
        for (int k = 0; k < (r + 1) * 4; k++) CHECK(seg[r][k] == val(r, k));
    CHECK_RC(MPI_Barrier(node)); /* all read before anyone overwrites */
    /* Stores into the right neighbour's segment, loads by it. */
    seg[right][0] = -rank - 1;
    CHECK_RC(MPI_Win_sync(win));
    CHECK_RC(MPI_Barrier(node));
    CHECK_RC(MPI_Win_sync(win));
    CHECK(mine[0] == -left - 1);
    /* RMA on the shared window: a get of the left's last element. */
    int last = 0;
    CHECK_RC(MPI_Get(&last, 1, MPI_INT, left, (left + 1) * 4 - 1, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_flush(left, win));
    CHECK(last == val(left, (left + 1) * 4 - 1));
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Win_free(&win));
    CHECK_RC(MPI_Comm_free(&node));
}

/* A dynamic window: memory attached after creation, addressed by MPI_Get_address
 * exchanged with Allgather; detached before freeing. */
static void test_dynamic(void) {
    MPI_Win win;
    CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long *buf = malloc(8 * sizeof(long));
    for (int i = 0; i < 8; i++) buf[i] = -1;
    CHECK_RC(MPI_Win_attach(win, buf, 8 * sizeof(long)));
    MPI_Aint addr, addrs[64];
    CHECK_RC(MPI_Get_address(buf, &addr));
    CHECK_RC(MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    CHECK(addrs[rank] == addr);
    long out[3] = {val(rank, 0), val(rank, 1), val(rank, 2)}, back[3] = {0, 0, 0};
    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_RC(MPI_Put(out, 3, MPI_LONG, right, MPI_Aint_add(addrs[right], 2 * sizeof(long)), 3, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush(right, win));
    CHECK_RC(MPI_Get(back, 3, MPI_LONG, right, MPI_Aint_add(addrs[right], 2 * sizeof(long)), 3, MPI_LONG, win));
    CHECK_RC(MPI_Win_flush_all(win));
    CHECK_RC(MPI_Win_unlock_all(win));
    for (int i = 0; i < 3; i++) CHECK(back[i] == val(rank, i));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    long seen[8];
    read_own(win, buf, seen, sizeof seen);
    for (int i = 0; i < 8; i++) CHECK(seen[i] == (i >= 2 && i < 5 ? val(left, i - 2) : -1));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* nobody targets buf after this */
    CHECK_RC(MPI_Win_detach(win, buf));
    CHECK_RC(MPI_Win_free(&win));
    free(buf);
}

/* Request-based operations in a lock_all epoch, and the local flushes. */
static void test_requests_flushes(void) {
    enum { N = 8 };
    int *base;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(N * sizeof(int), sizeof(int), alloc_info, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++) base[i] = i == 6 ? 0 : val(rank, i);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock_all(0, win));
    MPI_Request rq[3];
    int put = -rank - 10, got = 0, add = rank + 1;
    CHECK_RC(MPI_Rput(&put, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]));
    CHECK_RC(MPI_Rget(&got, 1, MPI_INT, right, 3, 1, MPI_INT, win, &rq[1]));
    CHECK_RC(MPI_Raccumulate(&add, 1, MPI_INT, 0, 6, 1, MPI_INT, MPI_SUM, win, &rq[2]));
    CHECK_RC(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++) CHECK(rq[i] == MPI_REQUEST_NULL);
    CHECK(got == val(right, 3)); /* an Rget's data is there once it completes */
    /* Rget_accumulate: a fetch-and-add on rank 0's element 7, and a read (MPI_NO_OP,
     * whose origin arguments are ignored). */
    int old = -1, read3 = -1;
    CHECK_RC(MPI_Rget_accumulate(&add, 1, MPI_INT, &old, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_SUM, win, &rq[0]));
    CHECK_RC(MPI_Rget_accumulate(NULL, 0, MPI_DATATYPE_NULL, &read3, 1, MPI_INT, right, 3, 1, MPI_INT, MPI_NO_OP,
                                 win, &rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(read3 == val(right, 3));
    /* flush_local: the origin buffer may be reused at once; flush makes both visible. */
    int a = 11 * (rank + 1);
    CHECK_RC(MPI_Put(&a, 1, MPI_INT, right, 1, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_flush_local(right, win));
    a = 13 * (rank + 1);
    CHECK_RC(MPI_Put(&a, 1, MPI_INT, right, 2, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_flush_local_all(win));
    a = -1;
    CHECK_RC(MPI_Win_flush(right, win));
    int two[2] = {0, 0};
    CHECK_RC(MPI_Get(two, 2, MPI_INT, right, 1, 2, MPI_INT, win));
    CHECK_RC(MPI_Win_flush_all(win));
    CHECK(two[0] == 11 * (rank + 1) && two[1] == 13 * (rank + 1));
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    int seen[N];
    read_own(win, base, seen, sizeof seen);
    CHECK(seen[0] == -left - 10 && seen[1] == 11 * (left + 1) && seen[2] == 13 * (left + 1));
    CHECK(seen[3] == val(rank, 3) && seen[6] == (rank == 0 ? size * (size + 1) / 2 : 0));
    /* The fetch-and-adds were atomic: every rank's old value plus its addend is another
     * rank's old value or the final one, and one rank saw the initial value. */
    int olds[64], first = 0;
    CHECK_RC(MPI_Allgather(&old, 1, MPI_INT, olds, 1, MPI_INT, MPI_COMM_WORLD));
    int final7 = val(0, 7) + size * (size + 1) / 2;
    if (rank == 0) CHECK(seen[7] == final7);
    for (int i = 0; i < size; i++) {
        int next = olds[i] + i + 1, found = next == final7;
        for (int j = 0; j < size; j++) found |= olds[j] == next;
        CHECK(found);
        first += olds[i] == val(0, 7);
    }
    CHECK(first == 1);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&win));
}

/* Post/start/complete/wait around a ring (expose to the left, access the right), then
 * rank 0 exposed to everyone, completed with Win_test. */
static void test_pscw(void) {
    enum { N = 64 };
    int *base;
    MPI_Win win;
    MPI_Group world, gl, gr, others, zero;
    CHECK_RC(MPI_Win_allocate(N * sizeof(int), sizeof(int), alloc_info, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < N; i++) base[i] = -1;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_incl(world, 1, &left, &gl));
    CHECK_RC(MPI_Group_incl(world, 1, &right, &gr));
    int z = 0;
    CHECK_RC(MPI_Group_incl(world, 1, &z, &zero));
    CHECK_RC(MPI_Group_excl(world, 1, &z, &others));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < 3; round++) {
        int v[2] = {val(rank, round), -val(rank, round)};
        CHECK_RC(MPI_Win_post(gl, round == 2 ? MPI_MODE_NOSTORE : 0, win));
        CHECK_RC(MPI_Win_start(gr, 0, win));
        CHECK_RC(MPI_Put(v, 2, MPI_INT, right, 2 * round, 2, MPI_INT, win));
        CHECK_RC(MPI_Win_complete(win));
        CHECK_RC(MPI_Win_wait(win));
        /* The data of the epoch that just ended is in place. */
        CHECK(base[2 * round] == val(left, round) && base[2 * round + 1] == -val(left, round));
    }
    /* Rank 0 exposes to all others, who each put their rank at their slot. */
    if (rank == 0) {
        for (int i = 0; i < N; i++) base[i] = -1;
        CHECK_RC(MPI_Win_post(others, 0, win));
        int flag = 0;
        while (!flag) CHECK_RC(MPI_Win_test(win, &flag));
        for (int r = 1; r < size; r++) CHECK(base[r] == val(r, 9));
        CHECK(base[0] == -1);
    } else {
        int v = val(rank, 9);
        CHECK_RC(MPI_Win_start(zero, 0, win));
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_complete(win));
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Group *gs[] = {&world, &gl, &gr, &others, &zero};
    for (int i = 0; i < 5; i++) CHECK_RC(MPI_Group_free(gs[i]));
    CHECK_RC(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 64);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    /* The MPI_Win_allocate tests with the default placement, then in the MPBs. */
    for (int mpb = 0; mpb < 2; mpb++) {
        if (mpb) {
            CHECK_RC(MPI_Info_create(&alloc_info));
            CHECK_RC(MPI_Info_set(alloc_info, "sccemu_placement", "mpb"));
        }
        test_allocate_fence();
        test_datatypes();
        test_requests_flushes();
        test_pscw();
    }
    CHECK_RC(MPI_Info_free(&alloc_info));
    test_create_locks(0);
    test_create_locks(1);
    test_create_static_stack();
    test_shared();
    test_dynamic();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok rma_basic\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
