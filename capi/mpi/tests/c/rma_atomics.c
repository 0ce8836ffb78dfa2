/* Atomicity and ordering of one-sided operations, written from MPI 3.1's semantics
 * (chapter 11), under every accumulate strategy sccemu offers: each window is made
 * with the info key sccemu_accumulate_strategy = atomic, caller, caller:64 or owner,
 * and every test runs once per strategy.
 *
 *  - lock contention: get + put under an exclusive lock; the total is exact;
 *  - fetch-and-add: every returned value distinct, 0..n-1, and the final value exact;
 *  - a compare-and-swap spin lock around a non-atomic get/put increment;
 *  - PSCW: accumulates of one epoch are seen after Win_wait;
 *  - lock_all + flush, observed by a third rank told by a message;
 *  - get_accumulate: the old values returned chain into exact partial sums;
 *  - accumulate with every op on int and double, MPI_REPLACE, MPI_NO_OP, long vectors;
 *  - fetch_and_op and compare_and_swap on MPI_CHAR. */
#include <string.h>
#include "test_check.h"

static int rank, size;
static const char *strategy;
static MPI_Info info;

/* A window of `n` elements of `esize` bytes (disp_unit esize) under the strategy,
 * from Win_allocate or (with `create`) Win_create over malloc'ed memory. */
static MPI_Win window(int n, int esize, int create, void **base) {
    MPI_Win win;
    if (create) {
        *base = calloc((size_t)n, (size_t)esize);
        CHECK_RC(MPI_Win_create(*base, (MPI_Aint)n * esize, esize, info, MPI_COMM_WORLD, &win));
    } else {
        CHECK_RC(MPI_Win_allocate((MPI_Aint)n * esize, esize, info, MPI_COMM_WORLD, base, &win));
        memset(*base, 0, (size_t)n * esize);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* zeroed everywhere before anyone targets it */
    return win;
}

static void unwindow(MPI_Win *win, int create, void *base) {
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(win));
    if (create) free(base);
}

/* Rank 0's element `disp` of an int window, read under a self-lock. */
static long read0(MPI_Win win, const void *base, int esize, int disp) {
    long v = 0;
    if (rank == 0) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        if (esize == 1) v = ((const signed char *)base)[disp];
        else if (esize == 4) v = ((const int *)base)[disp];
        else v = ((const long *)base)[disp];
        CHECK_RC(MPI_Win_unlock(0, win));
    }
    CHECK_RC(MPI_Bcast(&v, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    return v;
}

static int iters(int small, int large) { return size > 4 ? small : large; }

static void test_lock_contention(void) {
    void *base;
    MPI_Win win = window(1, sizeof(int), 0, &base);
    int n = iters(20, 50);
    for (int k = 0; k < n; k++) {
        int v = -1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_flush(0, win));
        v++;
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_unlock(0, win));
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(read0(win, base, sizeof(int), 0) == (long)n * size);
    unwindow(&win, 0, base);
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void test_fetch_and_add(void) {
    void *base;
    MPI_Win win = window(2, sizeof(long), 1, &base);
    enum { MAXN = 64 };
    int n = iters(32, MAXN);
    long got[MAXN], one = 1, *all = malloc(sizeof(long) * MAXN * size);
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        CHECK_RC(MPI_Fetch_and_op(&one, &got[k], MPI_LONG, 0, 1, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK(k == 0 || got[k] > got[k - 1]); /* one origin's increments are ordered */
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Allgather(got, n, MPI_LONG, all, n, MPI_LONG, MPI_COMM_WORLD));
    qsort(all, (size_t)n * size, sizeof(long), cmp_long);
    for (int i = 0; i < n * size; i++) CHECK(all[i] == i); /* distinct and complete */
    CHECK(read0(win, base, sizeof(long), 1) == (long)n * size);
    CHECK(read0(win, base, sizeof(long), 0) == 0); /* the neighbour untouched */
    free(all);
    unwindow(&win, 1, base);
}

/* A spin lock on element 0 (0 = free, r + 1 = held by r) protecting a get/put
 * increment of element 1. */
static void test_cas_mutex(void) {
    void *base;
    MPI_Win win = window(2, sizeof(int), 0, &base);
    int n = iters(10, 25), zero = 0, me = rank + 1;
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        int old = -1;
        do {
            CHECK_RC(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, win));
            CHECK_RC(MPI_Win_flush(0, win));
            CHECK(old != me); /* never held by us already */
        } while (old != 0);
        int c = -1;
        CHECK_RC(MPI_Get(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_flush(0, win));
        c++;
        CHECK_RC(MPI_Put(&c, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
        CHECK_RC(MPI_Win_flush(0, win));
        int was = -1;
        CHECK_RC(MPI_Fetch_and_op(&zero, &was, MPI_INT, 0, 0, MPI_REPLACE, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK(was == me); /* nobody took it from us */
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(read0(win, base, sizeof(int), 1) == (long)n * size);
    CHECK(read0(win, base, sizeof(int), 0) == 0);
    unwindow(&win, 0, base);
}

/* PSCW: each rank accumulates into its right neighbour; what one epoch adds is
 * there after Win_wait, round after round. */
static void test_pscw(void) {
    void *base;
    MPI_Win win = window(4, sizeof(long), 1, &base);
    long *mem = base;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Group world, gl, gr;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_incl(world, 1, &left, &gl));
    CHECK_RC(MPI_Group_incl(world, 1, &right, &gr));
    long sum = 0;
    for (int round = 1; round <= 4; round++) {
        long v = (rank + 1) * 100 + round;
        CHECK_RC(MPI_Win_post(gl, 0, win));
        CHECK_RC(MPI_Win_start(gr, 0, win));
        CHECK_RC(MPI_Accumulate(&v, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Accumulate(&v, 1, MPI_LONG, right, 1 + round % 3, 1, MPI_LONG, MPI_REPLACE, win));
        CHECK_RC(MPI_Win_complete(win));
        CHECK_RC(MPI_Win_wait(win));
        sum += (left + 1) * 100 + round;
        CHECK(mem[0] == sum && mem[1 + round % 3] == (left + 1) * 100 + round);
    }
    CHECK_RC(MPI_Group_free(&gl));
    CHECK_RC(MPI_Group_free(&gr));
    CHECK_RC(MPI_Group_free(&world));
    unwindow(&win, 1, base);
}

/* Rank 0 puts to rank 1 and accumulates there, flushes, and tells rank 2 by message;
 * rank 2 then reads rank 1's memory and must see both. */
static void test_flush_third_party(void) {
    if (size < 3) return;
    void *base;
    MPI_Win win = window(2, sizeof(int), 0, &base);
    CHECK_RC(MPI_Win_lock_all(0, win));
    if (rank == 0) {
        int v = 4242, a = 17;
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Accumulate(&a, 1, MPI_INT, 1, 1, 1, MPI_INT, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush(1, win));
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, 2, 9, MPI_COMM_WORLD));
    } else if (rank == 2) {
        int note, seen = -1, acc = -1, dummy = 0;
        CHECK_RC(MPI_Recv(&note, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Get(&seen, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
        CHECK_RC(MPI_Get_accumulate(&dummy, 1, MPI_INT, &acc, 1, MPI_INT, 1, 1, 1, MPI_INT, MPI_NO_OP, win));
        CHECK_RC(MPI_Win_flush(1, win));
        CHECK(seen == note && acc == 17);
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    unwindow(&win, 0, base);
}

/* Concurrent get_accumulate SUM: sorted by old value, each old value is the previous
 * one plus the previous increment; the first is 0 and the last plus its increment is
 * the final value. */
static void test_get_accumulate_chain(void) {
    void *base;
    MPI_Win win = window(1, sizeof(long), 1, &base);
    enum { MAXN = 40 };
    int n = iters(20, MAXN);
    long pair[2 * MAXN], *all = malloc(sizeof(long) * 2 * MAXN * size);
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        long inc = (long)(rank + 1) * 1000 + k, old = -1;
        CHECK_RC(MPI_Get_accumulate(&inc, 1, MPI_LONG, &old, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush(0, win));
        pair[2 * k] = old, pair[2 * k + 1] = inc;
    }
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Allgather(pair, 2 * n, MPI_LONG, all, 2 * n, MPI_LONG, MPI_COMM_WORLD));
    /* Sort the (old, inc) pairs by old (insertion sort; at most a few hundred pairs). */
    int total = n * size;
    for (int i = 1; i < total; i++)
        for (int j = i; j > 0 && all[2 * j] < all[2 * (j - 1)]; j--) {
            long o = all[2 * j], c = all[2 * j + 1];
            all[2 * j] = all[2 * (j - 1)], all[2 * j + 1] = all[2 * (j - 1) + 1];
            all[2 * (j - 1)] = o, all[2 * (j - 1) + 1] = c;
        }
    CHECK(all[0] == 0);
    for (int i = 1; i < total; i++) CHECK(all[2 * i] == all[2 * (i - 1)] + all[2 * (i - 1) + 1]);
    long want = 0;
    for (int r = 0; r < size; r++)
        for (int k = 0; k < n; k++) want += (long)(r + 1) * 1000 + k;
    CHECK(all[2 * (total - 1)] + all[2 * (total - 1) + 1] == want);
    CHECK(read0(win, base, sizeof(long), 0) == want);
    free(all);
    unwindow(&win, 1, base);
}

/* Accumulate with every op on int and on double from every rank into rank 0, in a
 * fence epoch; then MPI_REPLACE (one of the writers wins, untorn) and MPI_NO_OP; then
 * a 600-element SUM on long. */
static int iin(int op, int r) { /* rank r's int input for op index op */
    switch (op) {
    case 0: return r * 3 - 5;                              /* SUM */
    case 1: return r % 4 == 0 ? 2 : (r % 3 == 1 ? -1 : 1); /* PROD */
    case 2: case 3: return (r * 7) % 11 - 5;               /* MIN, MAX */
    case 4: case 5: case 6: return r % 3;                  /* LAND, LOR, LXOR */
    default: return (r * 37 + 5) & 0xff;                   /* BAND, BOR, BXOR */
    }
}

static void test_every_op(void) {
    static const MPI_Op iops[10] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND,
                                    MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    void *ib, *db;
    MPI_Win iw = window(11, sizeof(int), 0, &ib), dw = window(5, sizeof(double), 1, &db);
    int *imem = ib;
    double *dmem = db;
    /* Start each element from the op's identity-free first operand: rank 0's input. */
    if (rank == 0) {
        for (int o = 0; o < 10; o++) imem[o] = iin(o, 0);
        for (int o = 0; o < 4; o++) dmem[o] = iin(o, 0) + 0.5;
    }
    CHECK_RC(MPI_Win_fence(0, iw));
    CHECK_RC(MPI_Win_fence(0, dw));
    if (rank != 0)
        for (int o = 0; o < 10; o++) {
            int v = iin(o, rank);
            CHECK_RC(MPI_Accumulate(&v, 1, MPI_INT, 0, o, 1, MPI_INT, iops[o], iw));
            double d = v + 0.5;
            if (o < 4) CHECK_RC(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, o, 1, MPI_DOUBLE, iops[o], dw));
        }
    double rd = rank * 1.0e6 + 0.125; /* REPLACE: every rank writes, one wins */
    CHECK_RC(MPI_Accumulate(&rd, 1, MPI_DOUBLE, 0, 4, 1, MPI_DOUBLE, MPI_REPLACE, dw));
    CHECK_RC(MPI_Win_fence(0, iw));
    CHECK_RC(MPI_Win_fence(0, dw));
    if (rank == 0) {
        for (int o = 0; o < 10; o++) {
            int acc = iin(o, 0);
            double dacc = acc + 0.5;
            for (int r = 1; r < size; r++) {
                int v = iin(o, r);
                double d = v + 0.5;
                switch (o) {
                case 0: acc += v, dacc += d; break;
                case 1: acc *= v, dacc *= d; break;
                case 2: acc = v < acc ? v : acc, dacc = d < dacc ? d : dacc; break;
                case 3: acc = v > acc ? v : acc, dacc = d > dacc ? d : dacc; break;
                case 4: acc = acc && v; break;
                case 5: acc = acc || v; break;
                case 6: acc = !acc != !v; break;
                case 7: acc &= v; break;
                case 8: acc |= v; break;
                default: acc ^= v; break;
                }
            }
            if (imem[o] != acc) {
                char m[120];
                snprintf(m, sizeof m, "strategy %s: int op %d gave %d, not %d", strategy, o, imem[o], acc);
                fail_at(__FILE__, __LINE__, m);
            }
            if (o < 4) CHECK(dmem[o] == dacc);
        }
        int won = 0;
        for (int r = 0; r < size; r++) won |= dmem[4] == r * 1.0e6 + 0.125;
        CHECK(won);
    }
    /* NO_OP through get_accumulate and fetch_and_op: the value, unchanged. */
    CHECK_RC(MPI_Win_fence(0, iw));
    int before = 0, after = 0, ignored = 99;
    CHECK_RC(MPI_Get_accumulate(&ignored, 1, MPI_INT, &before, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, iw));
    CHECK_RC(MPI_Win_fence(0, iw));
    CHECK_RC(MPI_Fetch_and_op(&ignored, &after, MPI_INT, 0, 0, MPI_NO_OP, iw));
    CHECK_RC(MPI_Win_fence(0, iw));
    long s = 0;
    for (int r = 0; r < size; r++) s += iin(0, r);
    CHECK(before == s && after == s);
    unwindow(&iw, 0, ib);
    unwindow(&dw, 1, db);

    /* 600 longs (past an inline request): every rank adds (rank+1)*i to element i. */
    enum { LONGN = 600 };
    void *lb;
    MPI_Win lw = window(LONGN, sizeof(long), 0, &lb);
    long *add = malloc(LONGN * sizeof(long));
    for (int i = 0; i < LONGN; i++) add[i] = (long)(rank + 1) * i;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, size - 1, 0, lw));
    CHECK_RC(MPI_Accumulate(add, LONGN, MPI_LONG, size - 1, 0, LONGN, MPI_LONG, MPI_SUM, lw));
    CHECK_RC(MPI_Win_unlock(size - 1, lw));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, lw));
        for (int i = 0; i < LONGN; i++) CHECK(((long *)lb)[i] == (long)size * (size + 1) / 2 * i);
        CHECK_RC(MPI_Win_unlock(rank, lw));
    }
    free(add);
    unwindow(&lw, 0, lb);
}

/* Fetch_and_op and Compare_and_swap on MPI_CHAR: a shared byte counter, one byte lane
 * per rank beside it, and a one-winner CAS. */
static void test_char_atomics(void) {
    void *base;
    MPI_Win win = window(2 + size, 1, 1, &base);
    int n = 120 / size < 30 ? 120 / size : 30; /* n * size and n * (rank + 1) stay below 128 */
    char one = 1, prev = -1, lane = (char)(rank + 1), got;
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int k = 0; k < n; k++) {
        CHECK_RC(MPI_Fetch_and_op(&one, &prev, MPI_CHAR, 0, 0, MPI_SUM, win));
        CHECK_RC(MPI_Fetch_and_op(&lane, &got, MPI_CHAR, 0, 2 + rank, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush(0, win));
        CHECK(prev >= 0 && prev < n * size && got == (char)(k * (rank + 1)));
    }
    char zero = 0, mine = (char)(rank + 1), old = -1;
    CHECK_RC(MPI_Compare_and_swap(&mine, &zero, &old, MPI_CHAR, 0, 1, win));
    CHECK_RC(MPI_Win_flush(0, win));
    CHECK_RC(MPI_Win_unlock_all(win));
    int winners = old == 0, total = 0;
    CHECK_RC(MPI_Allreduce(&winners, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == 1);
    long final = read0(win, base, 1, 1);
    CHECK(final >= 1 && final <= size);
    CHECK(old == 0 ? final == rank + 1 : old == final); /* losers saw the winner */
    CHECK(read0(win, base, 1, 0) == (long)n * size);
    for (int r = 0; r < size; r++) CHECK(read0(win, base, 1, 2 + r) == (long)n * (r + 1));
    unwindow(&win, 1, base);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 48);
    /* One strategy if named, else all. */
    static const char *strategies[] = {"atomic", "caller", "caller:64", "owner"};
    for (int s = 0; s < 4; s++) {
        strategy = argc > 1 ? argv[1] : strategies[s];
        if (argc > 1 && s > 0) break;
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "sccemu_accumulate_strategy", strategy));
        test_lock_contention();
        test_fetch_and_add();
        test_cas_mutex();
        test_pscw();
        test_flush_third_party();
        test_get_accumulate_chain();
        test_every_op();
        test_char_atomics();
        CHECK_RC(MPI_Info_free(&info));
        if (rank == 0) printf("strategy %s: ok\n", strategy);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok rma_atomics\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
