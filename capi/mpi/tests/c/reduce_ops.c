/* Every predefined reduction op on every basic type it applies to, through
 * MPI_Allreduce and MPI_Reduce (root rotating over the ranks), each element checked
 * against the value computed here from the known inputs of every rank; MINLOC and
 * MAXLOC on every pair type; MPI_IN_PLACE at the root of Reduce and in Allreduce.
 *
 * The groups are MPI 3.1's (section 5.9.2): MIN/MAX on C integers and floating
 * types, SUM/PROD also, LAND/LOR/LXOR on C integers, BAND/BOR/BXOR on C integers and
 * MPI_BYTE. MPI_CHAR is taken as a C integer, as MPICH and Open MPI do: programs
 * reduce char buffers with it. Inputs are small enough that no type overflows. */
#include <stdint.h>
#include <string.h>
#include "test_check.h"

static int rank, size;
enum { N = 13 }; /* elements per reduction: odd, and more than one */

enum kind { K_CHAR, K_SCHAR, K_UCHAR, K_BYTE, K_SHORT, K_INT, K_UNS, K_LONG, K_ULONG, K_LL, K_ULL, K_FLOAT,
            K_DOUBLE, K_I64, K_U64, K_AINT };
struct tinfo {
    MPI_Datatype dt;
    const char *name;
    enum kind kind;
    int is_signed, is_float, byte_only;
};
static const struct tinfo types[] = {
    {MPI_CHAR, "MPI_CHAR", K_CHAR, 0, 0, 0},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", K_SCHAR, 1, 0, 0},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", K_UCHAR, 0, 0, 0},
    {MPI_BYTE, "MPI_BYTE", K_BYTE, 0, 0, 1},
    {MPI_SHORT, "MPI_SHORT", K_SHORT, 1, 0, 0},
    {MPI_INT, "MPI_INT", K_INT, 1, 0, 0},
    {MPI_UNSIGNED, "MPI_UNSIGNED", K_UNS, 0, 0, 0},
    {MPI_LONG, "MPI_LONG", K_LONG, 1, 0, 0},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", K_ULONG, 0, 0, 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", K_LL, 1, 0, 0},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", K_ULL, 0, 0, 0},
    {MPI_FLOAT, "MPI_FLOAT", K_FLOAT, 1, 1, 0},
    {MPI_DOUBLE, "MPI_DOUBLE", K_DOUBLE, 1, 1, 0},
    {MPI_INT64_T, "MPI_INT64_T", K_I64, 1, 0, 0},
    {MPI_UINT64_T, "MPI_UINT64_T", K_U64, 0, 0, 0},
    {MPI_AINT, "MPI_AINT", K_AINT, 1, 0, 0},
};
enum { NTYPES = sizeof types / sizeof types[0] };

struct opinfo {
    MPI_Op op;
    const char *name;
    int arith, logical, bitwise; /* which groups it takes */
};
static const struct opinfo ops[] = {
    {MPI_SUM, "MPI_SUM", 1, 0, 0},   {MPI_PROD, "MPI_PROD", 1, 0, 0}, {MPI_MIN, "MPI_MIN", 1, 0, 0},
    {MPI_MAX, "MPI_MAX", 1, 0, 0},   {MPI_LAND, "MPI_LAND", 0, 1, 0}, {MPI_LOR, "MPI_LOR", 0, 1, 0},
    {MPI_LXOR, "MPI_LXOR", 0, 1, 0}, {MPI_BAND, "MPI_BAND", 0, 0, 1}, {MPI_BOR, "MPI_BOR", 0, 0, 1},
    {MPI_BXOR, "MPI_BXOR", 0, 0, 1},
};
enum { NOPS = sizeof ops / sizeof ops[0] };

static size_t elem_size(enum kind k) {
    switch (k) {
    case K_CHAR: case K_SCHAR: case K_UCHAR: case K_BYTE: return 1;
    case K_SHORT: return sizeof(short);
    case K_INT: case K_UNS: return sizeof(int);
    case K_LONG: case K_ULONG: return sizeof(long);
    case K_LL: case K_ULL: return sizeof(long long);
    case K_FLOAT: return sizeof(float);
    case K_DOUBLE: return sizeof(double);
    case K_I64: case K_U64: return 8;
    case K_AINT: return sizeof(MPI_Aint);
    }
    return 0;
}

/* Element i of a buffer of kind k, as a double (every value used is exact in one). */
static double load(enum kind k, const void *buf, int i) {
    switch (k) {
    case K_CHAR: return ((const char *)buf)[i];
    case K_SCHAR: return ((const signed char *)buf)[i];
    case K_UCHAR: case K_BYTE: return ((const unsigned char *)buf)[i];
    case K_SHORT: return ((const short *)buf)[i];
    case K_INT: return ((const int *)buf)[i];
    case K_UNS: return ((const unsigned *)buf)[i];
    case K_LONG: return (double)((const long *)buf)[i];
    case K_ULONG: return (double)((const unsigned long *)buf)[i];
    case K_LL: return (double)((const long long *)buf)[i];
    case K_ULL: return (double)((const unsigned long long *)buf)[i];
    case K_FLOAT: return ((const float *)buf)[i];
    case K_DOUBLE: return ((const double *)buf)[i];
    case K_I64: return (double)((const int64_t *)buf)[i];
    case K_U64: return (double)((const uint64_t *)buf)[i];
    case K_AINT: return (double)((const MPI_Aint *)buf)[i];
    }
    return 0;
}

static void store(enum kind k, void *buf, int i, double v) {
    switch (k) {
    case K_CHAR: ((char *)buf)[i] = (char)v; break;
    case K_SCHAR: ((signed char *)buf)[i] = (signed char)v; break;
    case K_UCHAR: case K_BYTE: ((unsigned char *)buf)[i] = (unsigned char)v; break;
    case K_SHORT: ((short *)buf)[i] = (short)v; break;
    case K_INT: ((int *)buf)[i] = (int)v; break;
    case K_UNS: ((unsigned *)buf)[i] = (unsigned)v; break;
    case K_LONG: ((long *)buf)[i] = (long)v; break;
    case K_ULONG: ((unsigned long *)buf)[i] = (unsigned long)v; break;
    case K_LL: ((long long *)buf)[i] = (long long)v; break;
    case K_ULL: ((unsigned long long *)buf)[i] = (unsigned long long)v; break;
    case K_FLOAT: ((float *)buf)[i] = (float)v; break;
    case K_DOUBLE: ((double *)buf)[i] = v; break;
    case K_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
    case K_U64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case K_AINT: ((MPI_Aint *)buf)[i] = (MPI_Aint)v; break;
    }
}

/* Rank r's input for element i under op o on type t. */
static double input(const struct tinfo *t, int o, int r, int i) {
    int neg = t->is_signed && !t->is_float;
    switch (ops[o].op == MPI_SUM ? 0 : ops[o].op == MPI_PROD ? 1 : ops[o].arith ? 2 : ops[o].logical ? 3 : 4) {
    case 0: return (r * 7 + i * 3) % 11 - (neg ? 5 : 0) + (t->is_float ? 0.5 : 0);
    case 1:
        if ((r + i) % 4 == 0) return 2;
        if (t->is_float && (r + i) % 4 == 1) return 0.5;
        return (t->is_signed && (r + 2 * i) % 3 == 0) ? -1 : 1;
    case 2: return (r * 5 + i * 3) % 13 - (t->is_signed ? 6 : 0) + (t->is_float ? 0.25 : 0);
    case 3:
        if (i % 4 == 0) return 0;               /* false everywhere */
        if (i % 4 == 1) return 1 + r % 3;       /* true everywhere */
        return (r * 3 + i) % 4;                 /* mixed */
    default: {
        long v = (r * 37 + i * 11 + 5) & 0x7f;
        if (elem_size(t->kind) >= 4) v |= (long)((r + i) % 3) << 20;
        return (double)v;
    }
    }
}

/* The reduction of every rank's input, computed sequentially. */
static double expected(const struct tinfo *t, int o, int i) {
    MPI_Op op = ops[o].op;
    double acc = input(t, o, 0, i);
    long bits = (long)acc;
    int truth = acc != 0, parity = acc != 0;
    for (int r = 1; r < size; r++) {
        double v = input(t, o, r, i);
        if (op == MPI_SUM) acc += v;
        else if (op == MPI_PROD) acc *= v;
        else if (op == MPI_MIN) acc = v < acc ? v : acc;
        else if (op == MPI_MAX) acc = v > acc ? v : acc;
        truth = op == MPI_LAND ? (truth && v != 0) : (truth || v != 0);
        parity ^= v != 0;
        bits = op == MPI_BAND ? (bits & (long)v) : op == MPI_BOR ? (bits | (long)v) : (bits ^ (long)v);
    }
    if (op == MPI_LAND || op == MPI_LOR) return truth;
    if (op == MPI_LXOR) return parity;
    if (ops[o].bitwise) return (double)bits;
    return acc;
}

static int applies(const struct tinfo *t, int o) {
    if (t->byte_only) return ops[o].bitwise;
    if (t->is_float) return ops[o].arith;
    return 1;
}

static void fail_elem(const struct tinfo *t, int o, const char *call, int i, double got, double want, int line) {
    char m[200];
    snprintf(m, sizeof m, "%s %s on %s: element %d is %g, not %g", call, ops[o].name, t->name, i, got, want);
    fail_at(__FILE__, line, m);
}

static void test_type_op(int ti, int o) {
    const struct tinfo *t = &types[ti];
    size_t es = elem_size(t->kind);
    unsigned char in[N * 8 + 8], out[N * 8 + 8], inplace[N * 8 + 8];
    memset(in, 0, sizeof in);
    for (int i = 0; i < N; i++) store(t->kind, in, i, input(t, o, rank, i));
    memset(out, 0xa5, sizeof out);
    CHECK_RC(MPI_Allreduce(in, out, N, t->dt, ops[o].op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        if (load(t->kind, out, i) != expected(t, o, i))
            fail_elem(t, o, "MPI_Allreduce", i, load(t->kind, out, i), expected(t, o, i), __LINE__);
    CHECK(out[N * es] == 0xa5); /* nothing past the buffer */

    /* Reduce at a root that moves with the type and op; others' recvbuf untouched. */
    int root = (ti + o) % size;
    memset(out, 0xa5, sizeof out);
    CHECK_RC(MPI_Reduce(in, out, N, t->dt, ops[o].op, root, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        if (rank != root) {
            CHECK(out[i] == 0xa5);
        } else if (load(t->kind, out, i) != expected(t, o, i)) {
            fail_elem(t, o, "MPI_Reduce", i, load(t->kind, out, i), expected(t, o, i), __LINE__);
        }
    }

    /* In place: Allreduce everywhere; Reduce at the root only. */
    memcpy(inplace, in, sizeof in);
    CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, inplace, N, t->dt, ops[o].op, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        if (load(t->kind, inplace, i) != expected(t, o, i))
            fail_elem(t, o, "MPI_Allreduce(MPI_IN_PLACE)", i, load(t->kind, inplace, i), expected(t, o, i),
                      __LINE__);
    memcpy(inplace, in, sizeof in);
    if (rank == root) {
        CHECK_RC(MPI_Reduce(MPI_IN_PLACE, inplace, N, t->dt, ops[o].op, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            if (load(t->kind, inplace, i) != expected(t, o, i))
                fail_elem(t, o, "MPI_Reduce(MPI_IN_PLACE)", i, load(t->kind, inplace, i), expected(t, o, i),
                          __LINE__);
    } else {
        CHECK_RC(MPI_Reduce(inplace, NULL, N, t->dt, ops[o].op, root, MPI_COMM_WORLD));
        CHECK(memcmp(inplace, in, sizeof in) == 0); /* a send buffer is not written */
    }
}

/* MINLOC/MAXLOC: values with ties (the lowest index wins a tie), locations the rank. */
#define PAIR_TEST(fn, vtype, dt)                                                                              \
    static void fn(void) {                                                                                    \
        struct { vtype v; int loc; } in[N], mn[N], mx[N];                                                     \
        for (int i = 0; i < N; i++) in[i].v = (vtype)((rank * 5 + i * 3) % 7 - 3), in[i].loc = rank;          \
        CHECK_RC(MPI_Allreduce(in, mn, N, dt, MPI_MINLOC, MPI_COMM_WORLD));                                   \
        memset(mx, 0, sizeof mx);                                                                             \
        CHECK_RC(MPI_Reduce(in, mx, N, dt, MPI_MAXLOC, size - 1, MPI_COMM_WORLD));                             \
        for (int i = 0; i < N; i++) {                                                                         \
            int lo = 0, hi = 0;                                                                               \
            for (int r = 1; r < size; r++) {                                                                  \
                int v = (r * 5 + i * 3) % 7 - 3;                                                              \
                if (v < (lo * 5 + i * 3) % 7 - 3) lo = r;                                                     \
                if (v > (hi * 5 + i * 3) % 7 - 3) hi = r;                                                     \
            }                                                                                                 \
            CHECK(mn[i].v == (vtype)((lo * 5 + i * 3) % 7 - 3) && mn[i].loc == lo);                           \
            if (rank == size - 1) CHECK(mx[i].v == (vtype)((hi * 5 + i * 3) % 7 - 3) && mx[i].loc == hi);     \
        }                                                                                                     \
        CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, in, N, dt, MPI_MAXLOC, MPI_COMM_WORLD));                         \
        CHECK_RC(MPI_Bcast(mx, N, dt, size - 1, MPI_COMM_WORLD));                                             \
        for (int i = 0; i < N; i++) CHECK(in[i].v == mx[i].v && in[i].loc == mx[i].loc);                      \
    }
PAIR_TEST(pair_2int, int, MPI_2INT)
PAIR_TEST(pair_double_int, double, MPI_DOUBLE_INT)
PAIR_TEST(pair_float_int, float, MPI_FLOAT_INT)
PAIR_TEST(pair_long_int, long, MPI_LONG_INT)
PAIR_TEST(pair_short_int, short, MPI_SHORT_INT)

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int tested = 0;
    for (int ti = 0; ti < NTYPES; ti++)
        for (int o = 0; o < NOPS; o++)
            if (applies(&types[ti], o)) {
                test_type_op(ti, o);
                tested++;
            }
    CHECK(tested == 13 * NOPS + 2 * 4 + 3); /* integers take all ten, floats four, MPI_BYTE three */
    pair_2int();
    pair_double_int();
    pair_float_int();
    pair_long_int();
    pair_short_int();
    /* A larger vector: long enough to be split by any pipelined algorithm. */
    enum { BIG = 100003 };
    double *big = malloc(BIG * sizeof(double)), *sum = malloc(BIG * sizeof(double));
    for (int i = 0; i < BIG; i++) big[i] = (rank + 1) * 0.5 + (i % 17);
    CHECK_RC(MPI_Allreduce(big, sum, BIG, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++) CHECK(sum[i] == 0.25 * size * (size + 1) + size * (double)(i % 17));
    free(big);
    free(sum);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok reduce_ops\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
