/* The fast paths of the hottest one-sided calls (contiguous predefined data in
 * MPI_Put and MPI_Get; MPI_Fetch_and_op and MPI_Compare_and_swap on 4- and 8-byte
 * integers and floats; MPI_Win_flush, MPI_Win_lock and MPI_Win_unlock of one target)
 * give the general path's results and error classes, under every accumulate
 * strategy:
 *
 *  - every fetch-and-op the hardware has (SUM, REPLACE, NO_OP; BAND, BOR, BXOR on
 *    integers), and MAX (general path), on every 4- and 8-byte type, each rank in
 *    turn onto rank 0, every returned value and the final one checked against a
 *    sequential computation;
 *  - compare-and-swap on the same types, floats compared bit for bit (-0.0 is not 0.0);
 *  - puts and gets with a displacement unit, origin and target types that differ but
 *    carry the same bytes, zero counts at the end of a part, the last bytes of a part;
 *  - the error classes at the edges: a rank past the window, MPI_PROC_NULL (nothing
 *    happens), a displacement past the part or before it, RMA outside an epoch, an op
 *    the type does not have, a misaligned atomic, a lock of a locked target, an unlock
 *    or a flush without a lock; every atomic type misaligned, across a part's end and
 *    past it. */
#include <stdint.h>
#include <string.h>
#include "test_check.h"

static int rank, size;
static const char *strategy;
static MPI_Info info;

enum { SLOTS = 8 }; /* 8-byte slots per rank in the atomics' window */

struct type {
    MPI_Datatype dt;
    int bytes, is_float;
    const char *name;
};
static const struct type types[] = {
    {MPI_INT, 4, 0, "MPI_INT"},         {MPI_UNSIGNED, 4, 0, "MPI_UNSIGNED"},
    {MPI_INT64_T, 8, 0, "MPI_INT64_T"}, {MPI_UINT64_T, 8, 0, "MPI_UINT64_T"},
    {MPI_FLOAT, 4, 1, "MPI_FLOAT"},     {MPI_DOUBLE, 8, 1, "MPI_DOUBLE"},
};

/* A value of a type as its bits (integers) or as a double (floats). */
typedef struct {
    uint64_t bits;
    double real;
} value;

static uint64_t mask(int bytes) { return bytes == 8 ? UINT64_MAX : 0xffffffffu; }

static void store(const struct type *t, void *p, value v) {
    if (t->is_float && t->bytes == 4) { float f = (float)v.real; memcpy(p, &f, 4); }
    else if (t->is_float) memcpy(p, &v.real, 8);
    else if (t->bytes == 4) { uint32_t u = (uint32_t)v.bits; memcpy(p, &u, 4); }
    else memcpy(p, &v.bits, 8);
}

static value load(const struct type *t, const void *p) {
    value v = {0, 0};
    if (t->is_float && t->bytes == 4) { float f; memcpy(&f, p, 4); v.real = f; }
    else if (t->is_float) memcpy(&v.real, p, 8);
    else if (t->bytes == 4) { uint32_t u; memcpy(&u, p, 4); v.bits = u; }
    else memcpy(&v.bits, p, 8);
    return v;
}

static int same(const struct type *t, value a, value b) {
    return t->is_float ? a.real == b.real : (a.bits & mask(t->bytes)) == (b.bits & mask(t->bytes));
}

/* `a op b` as MPI defines it for the ops this test uses. */
static value apply(const struct type *t, MPI_Op op, value a, value b) {
    value r = a;
    if (op == MPI_SUM) { r.bits = a.bits + b.bits; r.real = a.real + b.real; }
    else if (op == MPI_REPLACE) r = b;
    else if (op == MPI_BAND) r.bits = a.bits & b.bits;
    else if (op == MPI_BOR) r.bits = a.bits | b.bits;
    else if (op == MPI_BXOR) r.bits = a.bits ^ b.bits;
    else if (op == MPI_MAX) {
        if (t->is_float) r.real = a.real > b.real ? a.real : b.real;
        else if (t->dt == MPI_INT) r.bits = (int32_t)a.bits > (int32_t)b.bits ? a.bits : b.bits;
        else if (t->dt == MPI_INT64_T) r.bits = (int64_t)a.bits > (int64_t)b.bits ? a.bits : b.bits;
        else r.bits = (a.bits & mask(t->bytes)) > (b.bits & mask(t->bytes)) ? a.bits : b.bits;
    }
    r.bits &= mask(t->bytes);
    return r;
}

/* Rank r's operand: distinct bits per rank, and a negative value for the signed MAX. */
static value operand(int r) {
    value v;
    v.bits = ((uint64_t)1 << (r % 31)) | ((uint64_t)(r + 3) << 40) | 0x5a;
    v.real = r % 2 ? -(double)(r + 3) : (double)(r + 3) * 0.5;
    if (r % 2) v.bits = ~v.bits;
    return v;
}

static MPI_Win window(void **base) {
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(SLOTS * 8, 8, info, MPI_COMM_WORLD, base, &win));
    memset(*base, 0, SLOTS * 8);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    return win;
}

static void test_fetch_and_op(void) {
    static const MPI_Op ops[] = {MPI_SUM, MPI_REPLACE, MPI_NO_OP, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAX};
    void *base;
    MPI_Win win = window(&base);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const struct type *t = &types[k];
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            MPI_Op op = ops[o];
            int bitwise = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
            if (t->is_float && bitwise) continue;
            value start = operand(size + 1), now = start;
            if (rank == 0) store(t, (char *)base + 8, start);
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            for (int r = 0; r < size; r++) {
                unsigned char mine[8], old[8];
                store(t, mine, operand(r));
                if (rank == r) {
                    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                    CHECK_RC(MPI_Fetch_and_op(mine, old, t->dt, 0, 1, op, win));
                    CHECK_RC(MPI_Win_flush(0, win));
                    CHECK_RC(MPI_Win_unlock(0, win));
                    if (!same(t, load(t, old), now)) {
                        char m[160];
                        snprintf(m, sizeof m, "strategy %s: %s op %zu returned a wrong old value", strategy,
                                 t->name, o);
                        fail_at(__FILE__, __LINE__, m);
                    }
                }
                now = apply(t, op, now, op == MPI_NO_OP ? now : load(t, mine));
                CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            }
            if (rank == 0) {
                CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                value final = load(t, (char *)base + 8);
                CHECK_RC(MPI_Win_unlock(0, win));
                CHECK(same(t, final, now));
            }
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    CHECK_RC(MPI_Win_free(&win));
}

static void test_compare_and_swap(void) {
    void *base;
    MPI_Win win = window(&base);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const struct type *t = &types[k];
        unsigned char cur[8], swap[8], wrong[8], old[8];
        value now = operand(size + 2);
        if (t->is_float) now.real = -0.0;
        if (rank == 0) store(t, (char *)base + 16, now);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        for (int r = 0; r < size; r++) {
            if (rank == r) {
                /* One bit off; for floats a different number, or 0.0 against -0.0: equal as
                 * numbers, not as bits. */
                value w = now;
                w.bits ^= 1;
                w.real = now.real == 0.0 ? -now.real : now.real + 1;
                store(t, cur, now);
                store(t, wrong, w);
                store(t, swap, operand(r));
                CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                CHECK_RC(MPI_Compare_and_swap(swap, wrong, old, t->dt, 0, 2, win));
                CHECK(memcmp(old, cur, (size_t)t->bytes) == 0); /* failed: unchanged */
                CHECK_RC(MPI_Compare_and_swap(swap, cur, old, t->dt, 0, 2, win));
                CHECK(memcmp(old, cur, (size_t)t->bytes) == 0); /* swapped */
                CHECK_RC(MPI_Win_unlock(0, win));
            }
            now = operand(r);
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
        if (rank == 0) {
            store(t, cur, now);
            CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            CHECK(memcmp((char *)base + 16, cur, (size_t)t->bytes) == 0);
            CHECK_RC(MPI_Win_unlock(0, win));
        }
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Win_free(&win));
}

/* Puts and gets on a window of 8 ints per rank (displacement unit 4). */
static void test_put_get(void) {
    int *base, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(8 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win));
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 8; i++) base[i] = -1;
    int two[2] = {100 * rank + 1, 100 * rank + 2}, got[8];
    CHECK_RC(MPI_Win_fence(0, win));
    /* The last two ints of the next rank's part, as 8 bytes. */
    CHECK_RC(MPI_Put(two, 2, MPI_INT, next, 6, 8, MPI_BYTE, win));
    CHECK_RC(MPI_Put(NULL, 0, MPI_INT, next, 8, 0, MPI_INT, win)); /* empty, at the end */
    CHECK_RC(MPI_Put(two, 1, MPI_INT, next, 0, 1, MPI_FLOAT, win)); /* same 4 bytes */
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(base[0] == 100 * prev + 1 && base[6] == 100 * prev + 1 && base[7] == 100 * prev + 2);
    CHECK(base[1] == -1 && base[5] == -1);
    CHECK_RC(MPI_Get(got, 32, MPI_BYTE, next, 0, 8, MPI_INT, win));
    CHECK_RC(MPI_Get(NULL, 0, MPI_BYTE, next, 8, 0, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(got[0] == 100 * rank + 1 && got[6] == 100 * rank + 1 && got[7] == 100 * rank + 2 && got[3] == -1);

    /* Error classes, inside the fence epoch. */
    CHECK_CLASS(MPI_Put(two, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Get(got, 1, MPI_INT, -7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_RC(MPI_Put(two, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    CHECK_CLASS(MPI_Put(two, 2, MPI_INT, next, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(got, 1, MPI_INT, next, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(two, 1, MPI_INT, next, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(two, 2, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(two, -1, MPI_INT, next, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(two, 1, MPI_DATATYPE_NULL, next, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Put(NULL, 1, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_BUFFER);
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* No epoch now. */
    CHECK_CLASS(MPI_Put(two, 1, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Get(got, 1, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush(next, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Put(two, 1, MPI_INT, next, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&win));
}

/* The atomics' and the lock calls' error classes. */
static void test_atomic_errors(void) {
    void *base;
    MPI_Win win = window(&base);
    int64_t one = 1, old = 0;
    double d = 1, dold = 0;
    int next = (rank + 1) % size;
    CHECK_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, next, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Compare_and_swap(&one, &old, &old, MPI_INT64_T, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(7, next, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, size, 0, MPI_SUM, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, next, SLOTS, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Fetch_and_op(&d, &dold, MPI_DOUBLE, next, 0, MPI_BAND, win), MPI_ERR_OP);
    CHECK_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, next, 0, MPI_OP_NULL, win), MPI_ERR_OP);
    CHECK_CLASS(MPI_Fetch_and_op(&one, NULL, MPI_INT64_T, next, 0, MPI_SUM, win), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Compare_and_swap(&one, &old, &old, MPI_INT64_T, next, -1, win), MPI_ERR_RMA_RANGE);
    CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, MPI_PROC_NULL, 0, MPI_SUM, win));
    CHECK_RC(MPI_Win_flush(MPI_PROC_NULL, win));
    CHECK_RC(MPI_Win_unlock(next, win));
    CHECK_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&win));

    /* A misaligned 8-byte atomic (displacement unit 1). */
    MPI_Win bytes;
    CHECK_RC(MPI_Win_allocate(64, 1, info, MPI_COMM_WORLD, &base, &bytes));
    CHECK_RC(MPI_Win_set_errhandler(bytes, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Win_lock_all(0, bytes));
    CHECK_CLASS(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, next, 4, MPI_SUM, bytes), MPI_ERR_DISP);
    CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, next, 8, MPI_SUM, bytes));
    /* Every type's atomics, misaligned (half an element off), across the part's end and
     * past it: the fast path falls back to the general path's classes. */
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const struct type *t = &types[k];
        unsigned char v[8] = {0}, r[8];
        MPI_Aint half = t->bytes / 2, edge = 64 - half;
        static const MPI_Op ops[] = {MPI_SUM, MPI_REPLACE, MPI_NO_OP};
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, half, ops[o], bytes), MPI_ERR_DISP);
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, edge, ops[o], bytes), MPI_ERR_RMA_RANGE);
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, 64, ops[o], bytes), MPI_ERR_RMA_RANGE);
        }
        if (!t->is_float) {
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, half, MPI_BXOR, bytes), MPI_ERR_DISP);
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, edge, MPI_BAND, bytes), MPI_ERR_RMA_RANGE);
        } else {
            CHECK_CLASS(MPI_Fetch_and_op(v, r, t->dt, next, 0, MPI_BOR, bytes), MPI_ERR_OP);
        }
        CHECK_CLASS(MPI_Compare_and_swap(v, v, r, t->dt, next, half, bytes), MPI_ERR_DISP);
        CHECK_CLASS(MPI_Compare_and_swap(v, v, r, t->dt, next, edge, bytes), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Compare_and_swap(v, v, r, t->dt, next, 64, bytes), MPI_ERR_RMA_RANGE);
        CHECK_CLASS(MPI_Compare_and_swap(v, v, r, t->dt, size, 0, bytes), MPI_ERR_RANK);
        /* Aligned, in the part: fine (0 op 0, or 0 compared with 0). */
        CHECK_RC(MPI_Fetch_and_op(v, r, t->dt, next, 2 * t->bytes, MPI_SUM, bytes));
        CHECK_RC(MPI_Compare_and_swap(v, v, r, t->dt, next, 2 * t->bytes, bytes));
    }
    CHECK_RC(MPI_Win_unlock_all(bytes));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&bytes));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* MPI_WIN_NULL has no handler of its own: its errors go to MPI_COMM_WORLD's. */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    static const char *strategies[] = {"atomic", "caller", "caller:64", "owner"};
    for (int s = 0; s < 4; s++) {
        strategy = strategies[s];
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "sccemu_accumulate_strategy", strategy));
        test_fetch_and_op();
        test_compare_and_swap();
        test_put_get();
        test_atomic_errors();
        CHECK_RC(MPI_Info_free(&info));
        if (rank == 0) printf("strategy %s: ok\n", strategy);
    }
    if (rank == 0) printf("ok rma_fast\n");
    MPI_Finalize();
    return 0;
}
