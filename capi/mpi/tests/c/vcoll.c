/* The v-collectives (Gatherv, Scatterv, Allgatherv, Alltoallv) from every root, with
 * uneven counts (some zero), displacements with gaps and out of rank order, a vector
 * type on one side, and MPI_IN_PLACE; Scan and Exscan with SUM, MAX and MINLOC, in
 * place too; a non-commutative user op (2x2 matrix product mod 1009, on a contiguous
 * and on a strided matrix type) in Reduce, Allreduce, Reduce_scatter_block, Scan and
 * Exscan, which must give the rank-ordered product; Op_commutative and Op_free; and the
 * error classes under MPI_ERRORS_RETURN. Every value is checked against what the
 * sequential program would hold; gaps must keep their sentinel. */
#include <string.h>
#include "test_check.h"

#define SENT (-7)
#define MAXN 64
#define BIG 4096

static int rank, size;

static int val(int t, int r, int i) { return t * 100003 + r * 1009 + i; }
/* Elements rank r contributes: uneven, zero for r = 1, 5, ... */
static int cnt(int r) { return (r * 3 + 1) % 4; }
/* Rank r's block starts after every later rank's block and a gap: out of rank order. */
static int displ(int r) {
    int d = 1;
    for (int q = size - 1; q > r; q--) d += cnt(q) + 2;
    return d;
}
static int span(void) { return displ(0) + cnt(0) + 3; }
/* Alltoallv: elements rank a sends to rank b. */
static int pair_cnt(int a, int b) { return (a + 2 * b) % 3; }

static void fill(int *b, int n) { for (int i = 0; i < n; i++) b[i] = SENT; }

/* `b` holds block r of test t at displ(r) for every rank r, and the sentinel
 * everywhere else. */
static void check_blocks(const int *b, int t) {
    int n = span();
    for (int i = 0; i < n; i++) {
        int want = SENT;
        for (int r = 0; r < size; r++)
            if (i >= displ(r) && i < displ(r) + cnt(r)) want = val(t, r, i - displ(r));
        CHECK(b[i] == want);
    }
}

static void test_gatherv(void) {
    int counts[MAXN], displs[MAXN], send[8], recv[BIG];
    for (int r = 0; r < size; r++) counts[r] = cnt(r), displs[r] = displ(r);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < cnt(rank); i++) send[i] = val(1 + root, rank, i);
        fill(recv, span());
        CHECK_RC(MPI_Gatherv(send, cnt(rank), MPI_INT, recv, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root) check_blocks(recv, 1 + root);
        /* In place at the root: its block is already in recv. */
        fill(recv, span());
        if (rank == root) {
            memcpy(recv + displ(root), send, sizeof(int) * cnt(root));
            CHECK_RC(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, recv, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
            check_blocks(recv, 1 + root);
        } else {
            CHECK_RC(MPI_Gatherv(send, cnt(rank), MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD));
        }
    }
}

static void test_scatterv(void) {
    int counts[MAXN], displs[MAXN], send[BIG], recv[10];
    for (int r = 0; r < size; r++) counts[r] = cnt(r), displs[r] = displ(r);
    for (int root = 0; root < size; root++) {
        fill(send, span());
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt(r); i++) send[displ(r) + i] = val(20 + root, r, i);
        fill(recv, 10);
        CHECK_RC(MPI_Scatterv(send, counts, displs, MPI_INT, recv, cnt(rank), MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < 10; i++) CHECK(recv[i] == (i < cnt(rank) ? val(20 + root, rank, i) : SENT));
        if (rank == root) {
            CHECK_RC(MPI_Scatterv(send, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < cnt(root); i++) CHECK(send[displ(root) + i] == val(20 + root, root, i));
        } else {
            fill(recv, 10);
            CHECK_RC(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, recv, cnt(rank), MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < 10; i++) CHECK(recv[i] == (i < cnt(rank) ? val(20 + root, rank, i) : SENT));
        }
    }
}

static void test_allgatherv(void) {
    int counts[MAXN], displs[MAXN], send[8], recv[BIG];
    for (int r = 0; r < size; r++) counts[r] = cnt(r), displs[r] = displ(r);
    for (int i = 0; i < cnt(rank); i++) send[i] = val(40, rank, i);
    fill(recv, span());
    CHECK_RC(MPI_Allgatherv(send, cnt(rank), MPI_INT, recv, counts, displs, MPI_INT, MPI_COMM_WORLD));
    check_blocks(recv, 40);
    fill(recv, span());
    memcpy(recv + displ(rank), send, sizeof(int) * cnt(rank));
    CHECK_RC(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT, MPI_COMM_WORLD));
    check_blocks(recv, 40);

    /* Received as a vector (2 ints, stride 2: extent 3 ints); displacements count
     * vectors. Each rank sends 2 * cnt contiguous ints. */
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * cnt(rank); i++) send[i] = val(41, rank, i);
    fill(recv, 3 * span());
    CHECK_RC(MPI_Allgatherv(send, 2 * cnt(rank), MPI_INT, recv, counts, displs, vec, MPI_COMM_WORLD));
    for (int i = 0; i < 3 * span(); i++) {
        int want = SENT;
        for (int r = 0; r < size; r++) {
            int e = i / 3 - displ(r), k = i % 3;
            if (e >= 0 && e < cnt(r) && k != 1) want = val(41, r, 2 * e + k / 2);
        }
        CHECK(recv[i] == want);
    }
    CHECK_RC(MPI_Type_free(&vec));
}

/* A vector type (2 ints at stride 2) on the send side: Gatherv and Alltoallv. */
static void test_derived_sends(void) {
    MPI_Datatype vec;
    int counts[MAXN], displs[MAXN], send[64], recv[BIG];
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_commit(&vec));
    /* Rank r sends cnt(r) vectors: its values 2e and 2e+1 at ints 3e and 3e+2. */
    fill(send, 64);
    for (int e = 0; e < cnt(rank); e++) send[3 * e] = val(90, rank, 2 * e), send[3 * e + 2] = val(90, rank, 2 * e + 1);
    for (int r = 0; r < size; r++) counts[r] = 2 * cnt(r), displs[r] = 2 * displ(r);
    int root = size - 1;
    fill(recv, 2 * span());
    CHECK_RC(MPI_Gatherv(send, cnt(rank), vec, recv, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int i = 0; i < 2 * span(); i++) {
            int want = SENT;
            for (int r = 0; r < size; r++)
                if (i >= 2 * displ(r) && i < 2 * displ(r) + 2 * cnt(r)) want = val(90, r, i - 2 * displ(r));
            CHECK(recv[i] == want);
        }
    /* Alltoallv: one vector to every rank, at vector displacement b (stride 3 ints),
     * received as 2 ints at 2b. */
    int one[MAXN], two[MAXN], d[MAXN], d2[MAXN], big[3 * MAXN];
    for (int b = 0; b < size; b++) {
        one[b] = 1, two[b] = 2, d[b] = b, d2[b] = 2 * b;
        big[3 * b] = val(91, rank, 2 * b), big[3 * b + 1] = SENT, big[3 * b + 2] = val(91, rank, 2 * b + 1);
    }
    CHECK_RC(MPI_Alltoallv(big, one, d, vec, recv, two, d2, MPI_INT, MPI_COMM_WORLD));
    for (int a = 0; a < size; a++)
        CHECK(recv[2 * a] == val(91, a, 2 * rank) && recv[2 * a + 1] == val(91, a, 2 * rank + 1));
    CHECK_RC(MPI_Type_free(&vec));
}

/* Where rank a's block for rank b lies in a's send buffer (out of order, gaps). */
static int sdispl(int a, int b) {
    int d = 2;
    for (int q = 0; q < b; q++) d += pair_cnt(a, q) + 1;
    return d;
}
/* Where rank b's block from rank a lies in b's receive buffer (reverse order). */
static int rdispl(int b, int a) {
    int d = 1;
    for (int q = size - 1; q > a; q--) d += pair_cnt(q, b) + 2;
    return d;
}

static void check_alltoallv(const int *recv, int t) {
    int n = rdispl(rank, 0) + pair_cnt(0, rank) + 2;
    for (int i = 0; i < n; i++) {
        int want = SENT;
        for (int a = 0; a < size; a++)
            if (i >= rdispl(rank, a) && i < rdispl(rank, a) + pair_cnt(a, rank))
                want = val(t, a * MAXN + rank, i - rdispl(rank, a));
        CHECK(recv[i] == want);
    }
}

static void test_alltoallv(void) {
    int sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], send[BIG], recv[BIG];
    for (int b = 0; b < size; b++) {
        sc[b] = pair_cnt(rank, b), sd[b] = sdispl(rank, b);
        rc[b] = pair_cnt(b, rank), rd[b] = rdispl(rank, b);
    }
    fill(send, BIG);
    for (int b = 0; b < size; b++)
        for (int i = 0; i < sc[b]; i++) send[sd[b] + i] = val(60, rank * MAXN + b, i);
    fill(recv, BIG);
    CHECK_RC(MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD));
    check_alltoallv(recv, 60);

    /* In place: the blocks to send are recv's, with its counts; here the counts are
     * symmetric (every pair exchanges rc), as the standard requires. */
    int sym[MAXN], id[MAXN];
    for (int b = 0; b < size; b++) sym[b] = (rank + b) % 3, id[b] = 1 + 4 * (size - 1 - b);
    fill(recv, BIG);
    for (int b = 0; b < size; b++)
        for (int i = 0; i < sym[b]; i++) recv[id[b] + i] = val(61, rank * MAXN + b, i);
    CHECK_RC(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, sym, id, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 4 * size + 2; i++) {
        int want = SENT;
        for (int b = 0; b < size; b++)
            if (i >= id[b] && i < id[b] + sym[b]) want = val(61, b * MAXN + rank, i - id[b]);
        CHECK(recv[i] == want);
    }
}

/* The sequential fold of op `k` (index in `ops`) over a and b. */
static long long apply(int k, long long a, long long b) {
    switch (k) {
    case 0: return a > b ? a : b;
    case 1: return a < b ? a : b;
    case 2: return a + b;
    case 3: return a * b;
    case 4: return a && b;
    case 5: return a & b;
    case 6: return a || b;
    case 7: return a | b;
    case 8: return !a != !b;
    default: return a ^ b;
    }
}

/* Scan and Exscan with every predefined arithmetic and logical op, on int, long long
 * and unsigned char; MAXLOC on double-int pairs. */
static void test_scan_ops(void) {
    MPI_Op ops[10] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
    for (int k = 0; k < 10; k++) {
        for (int i = 0; i < 4; i++) {
            /* Small values, some zero, so that PROD stays in range and LAND varies. */
            long long mine = (rank * 3 + i * 5 + k) % 4, acc = 0, before = 0;
            for (int r = 0; r <= rank; r++) {
                long long v = (r * 3 + i * 5 + k) % 4;
                if (r == rank) before = acc;
                acc = r == 0 ? v : apply(k, acc, v);
            }
            int ii = (int)mine, io = SENT;
            long long li = mine, lo = SENT;
            unsigned char ci = (unsigned char)mine, co = 99;
            CHECK_RC(MPI_Scan(&ii, &io, 1, MPI_INT, ops[k], MPI_COMM_WORLD));
            CHECK(io == (int)acc);
            CHECK_RC(MPI_Exscan(&li, &lo, 1, MPI_LONG_LONG, ops[k], MPI_COMM_WORLD));
            CHECK(lo == (rank == 0 ? SENT : before));
            if (k != 3 && k != 2) { /* unsigned char: no overflow */
                CHECK_RC(MPI_Scan(MPI_IN_PLACE, &ci, 1, MPI_UNSIGNED_CHAR, ops[k], MPI_COMM_WORLD));
                co = ci;
                CHECK(co == (unsigned char)acc);
            }
        }
    }
    struct { double v; int i; } p = {(double)((rank * 5) % 3), rank}, q = {-1.0, SENT}, best = {-1.0, -1};
    for (int r = 0; r < rank; r++)
        if ((double)((r * 5) % 3) > best.v) best.v = (double)((r * 5) % 3), best.i = r;
    CHECK_RC(MPI_Exscan(&p, &q, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    if (rank == 0) CHECK(q.v == -1.0 && q.i == SENT);
    else CHECK(q.v == best.v && q.i == best.i);
}

static void test_scan(void) {
    int in[3], out[3], acc[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) in[i] = val(80, rank, i);
    CHECK_RC(MPI_Scan(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int r = 0; r <= rank; r++)
        for (int i = 0; i < 3; i++) acc[i] += val(80, r, i);
    for (int i = 0; i < 3; i++) CHECK(out[i] == acc[i]);
    memcpy(out, in, sizeof in);
    CHECK_RC(MPI_Scan(MPI_IN_PLACE, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(out[i] == acc[i]);

    for (int i = 0; i < 3; i++) out[i] = SENT;
    CHECK_RC(MPI_Exscan(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(out[i] == (rank == 0 ? SENT : acc[i] - in[i]));
    memcpy(out, in, sizeof in);
    CHECK_RC(MPI_Exscan(MPI_IN_PLACE, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(out[i] == (rank == 0 ? in[i] : acc[i] - in[i]));

    double d = (double)((rank * 5) % 7), dmax = -1, dout = -9;
    for (int r = 0; r <= rank; r++) dmax = (double)((r * 5) % 7) > dmax ? (double)((r * 5) % 7) : dmax;
    CHECK_RC(MPI_Scan(&d, &dout, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dout == dmax);

    /* MINLOC: ties go to the lowest index. */
    struct { int v, i; } p = {(rank * 7) % 3, rank}, q = {SENT, SENT}, best = {1 << 30, -1}, before = {SENT, SENT};
    for (int r = 0; r <= rank; r++) {
        if (r == rank) before = best;
        if ((r * 7) % 3 < best.v) best.v = (r * 7) % 3, best.i = r;
    }
    CHECK_RC(MPI_Scan(&p, &q, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(q.v == best.v && q.i == best.i);
    q.v = q.i = SENT;
    CHECK_RC(MPI_Exscan(&p, &q, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    if (rank == 0) CHECK(q.v == SENT && q.i == SENT);
    else CHECK(q.v == before.v && q.i == before.i);
}

/* ---- A non-commutative user op: 2x2 matrices mod 1009 ---- */
static MPI_Datatype matc, matv; /* 4 contiguous ints; rows of 2 at stride 3 (extent 5) */
static int calls;

static void mat_at(int *base, MPI_Datatype t, int k, int **m) {
    int stride = t == matv ? 5 : 4, row = t == matv ? 3 : 2;
    m[0] = base + k * stride, m[1] = base + k * stride + 1;
    m[2] = base + k * stride + row, m[3] = base + k * stride + row + 1;
}

static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
    calls++;
    for (int k = 0; k < *len; k++) {
        int *a[4], *b[4];
        mat_at(in, *t, k, a);
        mat_at(inout, *t, k, b);
        int c0 = (*a[0] * *b[0] + *a[1] * *b[2]) % 1009, c1 = (*a[0] * *b[1] + *a[1] * *b[3]) % 1009;
        int c2 = (*a[2] * *b[0] + *a[3] * *b[2]) % 1009, c3 = (*a[2] * *b[1] + *a[3] * *b[3]) % 1009;
        *b[0] = c0, *b[1] = c1, *b[2] = c2, *b[3] = c3;
    }
}

/* Rank r's matrix k, row-major. */
static void mat_of(int r, int k, int *m) { m[0] = 1 + k, m[1] = r + 2, m[2] = (r * r + k) % 5, m[3] = 1; }

/* The product of the matrices k of ranks from..to-1, in rank order. */
static void product(int from, int to, int k, int *m) {
    m[0] = 1, m[1] = 0, m[2] = 0, m[3] = 1;
    for (int r = from; r < to; r++) {
        int x[4], y[4];
        mat_of(r, k, x);
        y[0] = (m[0] * x[0] + m[1] * x[2]) % 1009, y[1] = (m[0] * x[1] + m[1] * x[3]) % 1009;
        y[2] = (m[2] * x[0] + m[3] * x[2]) % 1009, y[3] = (m[2] * x[1] + m[3] * x[3]) % 1009;
        memcpy(m, y, sizeof y);
    }
}

/* Writes matrices k0.. of rank r into `buf` as `t` lays them out. */
static void put_mats(int *buf, MPI_Datatype t, int r, int k0, int n) {
    for (int k = 0; k < n; k++) {
        int m[4], *p[4];
        mat_of(r, k0 + k, m);
        mat_at(buf, t, k, p);
        for (int j = 0; j < 4; j++) *p[j] = m[j];
    }
}

static void check_mats(int *buf, MPI_Datatype t, int from, int to, int k0, int n) {
    for (int k = 0; k < n; k++) {
        int m[4], *p[4];
        product(from, to, k0 + k, m);
        mat_at(buf, t, k, p);
        for (int j = 0; j < 4; j++) CHECK(*p[j] == m[j]);
    }
}

static void test_user_op(void) {
    MPI_Op op;
    int commute = -1;
    CHECK_RC(MPI_Type_contiguous(4, MPI_INT, &matc));
    CHECK_RC(MPI_Type_vector(2, 2, 3, MPI_INT, &matv));
    CHECK_RC(MPI_Type_commit(&matc));
    CHECK_RC(MPI_Type_commit(&matv));
    CHECK_RC(MPI_Op_create(matmul, 0, &op));
    CHECK_RC(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0);
    CHECK_RC(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1);
    int in[5 * MAXN + 8], out[5 * MAXN + 8];
    fill(in, 5 * MAXN + 8);
    fill(out, 5 * MAXN + 8);
    MPI_Datatype types[2] = {matc, matv};
    for (int ti = 0; ti < 2; ti++) {
        MPI_Datatype t = types[ti];
        put_mats(in, t, rank, 0, 3);
        CHECK_RC(MPI_Allreduce(in, out, 3, t, op, MPI_COMM_WORLD));
        check_mats(out, t, 0, size, 0, 3);
        for (int root = 0; root < size; root++) {
            CHECK_RC(MPI_Reduce(in, out, 3, t, op, root, MPI_COMM_WORLD));
            if (rank == root) check_mats(out, t, 0, size, 0, 3);
        }
        CHECK_RC(MPI_Scan(in, out, 3, t, op, MPI_COMM_WORLD));
        check_mats(out, t, 0, rank + 1, 0, 3);
        put_mats(out, t, rank, 0, 3);
        CHECK_RC(MPI_Exscan(MPI_IN_PLACE, out, 3, t, op, MPI_COMM_WORLD));
        if (rank > 0) check_mats(out, t, 0, rank, 0, 3);
        else check_mats(out, t, 0, 1, 0, 3); /* untouched: rank 0's own */
        /* Reduce_scatter_block: one matrix per rank; rank k gets matrix k's product. */
        put_mats(in, t, rank, 0, size);
        CHECK_RC(MPI_Reduce_scatter_block(in, out, 1, t, op, MPI_COMM_WORLD));
        check_mats(out, t, 0, size, rank, 1);
    }
    CHECK(size == 1 || calls > 0);
    /* Not in one-sided accumulate. */
    MPI_Win win;
    int target[4] = {0, 0, 0, 0};
    CHECK_RC(MPI_Win_create(target, sizeof target, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_CLASS(MPI_Accumulate(in, 1, MPI_INT, 0, 0, 1, MPI_INT, op, win), MPI_ERR_OP);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Win_free(&win));

    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Op stale = op;
    CHECK_RC(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    CHECK_CLASS(MPI_Allreduce(in, out, 1, matc, op, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Scan(in, out, 1, matc, stale, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_free(&stale), MPI_ERR_OP);
    MPI_Op sum = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&sum), MPI_ERR_OP);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Type_free(&matc));
    CHECK_RC(MPI_Type_free(&matv));
}

static void test_errors(void) {
    int counts[MAXN], displs[MAXN], buf[BIG], two[2] = {1, 2};
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int r = 0; r < size; r++) counts[r] = 1, displs[r] = r;
    CHECK_CLASS(MPI_Gatherv(two, -1, MPI_INT, buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    counts[size - 1] = -2;
    CHECK_CLASS(MPI_Allgatherv(two, 1, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    counts[size - 1] = 1, displs[0] = -1;
    CHECK_CLASS(MPI_Allgatherv(two, 1, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Alltoallv(buf, counts, displs, MPI_INT, buf + 100, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_ARG);
    displs[0] = 0;
    /* Only rank 0's arguments are wrong: everyone returns an error, nobody hangs. */
    CHECK_CLASS(MPI_Allgatherv(two, rank == 0 ? -1 : 1, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scan(two, buf, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scan(two, buf, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Exscan(two, buf, 1, MPI_INT, (MPI_Op)0x5c000fff, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Scan(two, buf, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_create(NULL, 1, NULL), MPI_ERR_ARG);
    /* Truncation: 2 ints arrive where 1 fits. */
    CHECK_CLASS(MPI_Allgatherv(two, 2, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK_CLASS(MPI_Scatterv(buf, counts, displs, MPI_INT, two, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    int rc = MPI_Gatherv(two, 2, MPI_INT, buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rank == 0 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS);
    int twos[MAXN];
    for (int r = 0; r < size; r++) twos[r] = 2;
    CHECK_CLASS(MPI_Alltoallv(buf, twos, displs, MPI_INT, buf + 100, counts, displs, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_TRUNCATE);
    /* Still usable afterwards. */
    int s = 1, t = 0;
    CHECK_RC(MPI_Scan(&s, &t, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(t == rank + 1);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXN);
    test_gatherv();
    test_scatterv();
    test_allgatherv();
    test_alltoallv();
    test_scan();
    test_scan_ops();
    test_derived_sends();
    test_user_op();
    test_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("ok vcoll\n");
    MPI_Finalize();
    return 0;
}
