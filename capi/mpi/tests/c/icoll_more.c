/* More nonblocking collectives: Iscatter from every root (in place at the root,
 * garbage in the arguments the other ranks ignore, a strided receive type),
 * Ialltoall (ints, doubles, in place), Ireduce_scatter_block, Iscan and Iexscan (sum,
 * max, in place, and a non-commutative user op that must give the rank-ordered
 * result); the v-forms Igatherv and Iscatterv from every root (in place too),
 * Iallgatherv (in place, a vector receive type) and Ialltoallv (in place), with
 * uneven counts (some zero), gaps, blocks out of rank order and receive counts larger
 * than the blocks; at several counts, on the world and on a split communicator whose
 * rank order is the reverse of the world's; several operations outstanding at once
 * on one communicator and on both, completed by Wait, Waitall, Waitany, Waitsome and
 * Test, Testall and Testany loops in varying orders; error classes of bad arguments
 * under MPI_ERRORS_RETURN, and MPI_ERR_TRUNCATE at completion, after which the
 * communicator still works. Every value is checked against what the sequential
 * program would hold; gaps must keep their sentinel. */
#include <string.h>
#include "test_check.h"

#define SENT (-7)

static int rank, size;

static int val(int t, int r, int i) { return t * 100003 + r * 1009 + i; }
static double dval(int t, int r, int i) { return val(t, r, i) + 0.25; }

/* Buffers of one test: allocated by ints, doubles and longs, freed together by release. */
static void *held[32];
static int nheld;
static void *hold(size_t bytes) {
    CHECK(nheld < 32);
    held[nheld] = malloc(bytes > 0 ? bytes : 1);
    CHECK(held[nheld] != NULL);
    return held[nheld++];
}
static int *ints(int n) { return hold(sizeof(int) * (size_t)n); }
static double *doubles(int n) { return hold(sizeof(double) * (size_t)n); }
static long long *longs(int n) { return hold(sizeof(long long) * (size_t)n); }
static void release(void) {
    while (nheld > 0) free(held[--nheld]);
}

/* Completes `req` by MPI_Test alone. */
static void test_loop(MPI_Request *req) {
    int flag = 0;
    while (!flag) CHECK_RC(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
    CHECK(*req == MPI_REQUEST_NULL);
}

/* Completes all `n` of `req` in the way `how` (0..5) picks. */
static void complete(int n, MPI_Request *req, int how) {
    int done = 0, flag = 0, idx = -1, outs = 0, indices[16];
    switch (how % 6) {
    case 0: CHECK_RC(MPI_Waitall(n, req, MPI_STATUSES_IGNORE)); break;
    case 1: for (int i = n - 1; i >= 0; i--) CHECK_RC(MPI_Wait(&req[i], MPI_STATUS_IGNORE)); break;
    case 2: for (int i = 0; i < n; i++) test_loop(&req[(i + 1) % n]); break;
    case 3:
        while (done < n) {
            CHECK_RC(MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE));
            CHECK(idx >= 0 && idx < n && req[idx] == MPI_REQUEST_NULL);
            done++;
        }
        break;
    case 4:
        while (done < n) {
            CHECK_RC(MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE));
            if (flag) {
                CHECK(idx >= 0 && idx < n && req[idx] == MPI_REQUEST_NULL);
                done++;
            }
        }
        break;
    default:
        while (!flag) CHECK_RC(MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE));
        break;
    }
    for (int i = 0; i < n; i++) CHECK(req[i] == MPI_REQUEST_NULL);
    /* Waitsome on what is left (nothing): MPI_UNDEFINED. */
    CHECK_RC(MPI_Waitsome(n, req, &outs, indices, MPI_STATUSES_IGNORE));
    CHECK(outs == MPI_UNDEFINED);
}

/* A non-commutative associative op: pairs (a, b) are maps x -> a x + b (mod P); the
 * combination applies the earlier rank's map first. */
#define P 1000003LL
static void affine(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const int *x = in;
    int *y = inout;
    for (int i = 0; i + 1 < *len; i += 2) {
        long long a = (long long)y[i] * x[i] % P, b = ((long long)y[i] * x[i + 1] + y[i + 1]) % P;
        y[i] = (int)a;
        y[i + 1] = (int)b;
    }
}

static int map_of(int t, int r, int i) { return i % 2 == 0 ? 2 + (r * 7 + i + t) % 11 : (r * 13 + i + t) % 17; }

/* The maps of ranks lo..hi-1, elements off..off+n-1 (off even), composed in rank
 * order: what the op folds to. */
static void composed(int *out, int n, int t, int off, int lo, int hi) {
    for (int i = 0; i < n; i++) out[i] = map_of(t, lo, off + i);
    int *x = ints(n); /* released with the test's buffers */
    for (int r = lo + 1; r < hi; r++) {
        for (int i = 0; i < n; i++) x[i] = out[i], out[i] = map_of(t, r, off + i);
        int len = n;
        affine(x, out, &len, NULL);
    }
}

/* Iscatter from every root of `comm`, `n` ints a block: in place at odd roots, the
 * arguments the root alone reads garbage elsewhere; completion varies with the root. */
static void test_iscatter(MPI_Comm comm, int n, int t) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int *all = ints(n * np), *mine = ints(n);
    for (int root = 0; root < np; root++) {
        int at_root = me == root, inplace = at_root && root % 2;
        for (int i = 0; i < n * np; i++) all[i] = at_root ? val(t + root, i / n, i % n) : SENT;
        for (int i = 0; i < n; i++) mine[i] = SENT;
        MPI_Request req;
        CHECK_RC(MPI_Iscatter(at_root ? all : NULL, at_root ? n : -5, at_root ? MPI_INT : MPI_DATATYPE_NULL,
                              inplace ? MPI_IN_PLACE : mine, n, MPI_INT, root, comm, &req));
        complete(1, &req, root);
        for (int i = 0; i < n; i++) CHECK(mine[i] == (inplace ? SENT : val(t + root, me, i)));
        if (at_root) for (int i = 0; i < n * np; i++) CHECK(all[i] == val(t + root, i / n, i % n));
    }
    /* Doubles, 3 a block, received through a strided type (every other double): the
     * gaps keep their sentinel. */
    MPI_Datatype every_other;
    CHECK_RC(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    double *dall = doubles(3 * np), got[6];
    int root = np - 1;
    for (int i = 0; i < 3 * np; i++) dall[i] = dval(t, i / 3, i % 3);
    for (int i = 0; i < 6; i++) got[i] = SENT;
    MPI_Request req;
    CHECK_RC(MPI_Iscatter(dall, 3, MPI_DOUBLE, got, 1, every_other, root, comm, &req));
    CHECK_RC(MPI_Type_free(&every_other)); /* the operation keeps what it needs */
    test_loop(&req);
    for (int i = 0; i < 6; i++) CHECK(got[i] == (i % 2 == 0 && i < 5 ? dval(t, me, i / 2) : SENT));
    release();
}

/* Ialltoall: ints, ints in place, doubles of another count, all three outstanding. */
static void test_ialltoall(MPI_Comm comm, int n, int t, int how) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int m = n + 1;
    int *send = ints(n * np), *recv = ints(n * np), *inpl = ints(m * np);
    double *dsend = doubles(m * np), *drecv = doubles(m * np);
    /* Block j of rank me holds (t, me * np + j, i); so rank me receives block me of j. */
    for (int j = 0; j < np; j++) {
        for (int i = 0; i < n; i++) send[j * n + i] = val(t, me * np + j, i), recv[j * n + i] = SENT;
        for (int i = 0; i < m; i++) {
            inpl[j * m + i] = val(t + 1, me * np + j, i);
            dsend[j * m + i] = dval(t + 2, me * np + j, i), drecv[j * m + i] = SENT;
        }
    }
    MPI_Request req[3];
    CHECK_RC(MPI_Ialltoall(send, n, MPI_INT, recv, n, MPI_INT, comm, &req[0]));
    CHECK_RC(MPI_Ialltoall(MPI_IN_PLACE, -3, MPI_DATATYPE_NULL, inpl, m, MPI_INT, comm, &req[1]));
    CHECK_RC(MPI_Ialltoall(dsend, m, MPI_DOUBLE, drecv, m, MPI_DOUBLE, comm, &req[2]));
    complete(3, req, how);
    for (int j = 0; j < np; j++) {
        for (int i = 0; i < n; i++) CHECK(recv[j * n + i] == val(t, j * np + me, i));
        for (int i = 0; i < m; i++) {
            CHECK(inpl[j * m + i] == val(t + 1, j * np + me, i));
            CHECK(drecv[j * m + i] == dval(t + 2, j * np + me, i));
        }
    }
    release();
}

static int small(int t, int r, int i) { return (r * 7 + i * 3 + t) % 11; }

/* Ireduce_scatter_block: int sum, in-place double max, the user op (pairs), all
 * outstanding at once. */
static void test_ireduce_scatter_block(MPI_Comm comm, int n, int t, int how) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int u = 2 * n; /* the user op works on pairs */
    int *send = ints(n * np), *recv = ints(n), *usend = ints(u * np), *urecv = ints(u), *want = ints(u);
    double *inpl = doubles(n * np);
    for (int i = 0; i < n * np; i++) send[i] = val(t, me, i), inpl[i] = small(t, me, i) + 0.5;
    for (int i = 0; i < u * np; i++) usend[i] = map_of(t, me, i);
    for (int i = 0; i < n; i++) recv[i] = SENT;
    MPI_Op op;
    CHECK_RC(MPI_Op_create(affine, 0, &op));
    MPI_Request req[3];
    CHECK_RC(MPI_Ireduce_scatter_block(usend, urecv, u, MPI_INT, op, comm, &req[0]));
    CHECK_RC(MPI_Ireduce_scatter_block(send, recv, n, MPI_INT, MPI_SUM, comm, &req[1]));
    CHECK_RC(MPI_Ireduce_scatter_block(MPI_IN_PLACE, inpl, n, MPI_DOUBLE, MPI_MAX, comm, &req[2]));
    complete(3, req, how);
    CHECK_RC(MPI_Op_free(&op));
    for (int i = 0; i < n; i++) {
        long long sum = 0;
        int max = 0;
        for (int r = 0; r < np; r++) {
            sum += val(t, r, me * n + i);
            if (small(t, r, me * n + i) > max) max = small(t, r, me * n + i);
        }
        CHECK(recv[i] == (int)sum);
        CHECK(inpl[i] == max + 0.5);
    }
    composed(want, u, t, me * u, 0, np);
    for (int i = 0; i < u; i++) CHECK(urecv[i] == want[i]);
    release();
}

/* Iscan and Iexscan: int sum, in-place double max and long long sum, and the user op;
 * all six outstanding at once. Exscan leaves rank 0's buffer alone. */
static void test_iscan(MPI_Comm comm, int n, int t, int how) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int u = 2 * n;
    int *mine = ints(n), *scan = ints(n), *exscan = ints(n), *umine = ints(u), *uscan = ints(u), *uex = ints(u);
    int *want = ints(u);
    double *dmax = doubles(n);
    long long *lsum = longs(n);
    for (int i = 0; i < n; i++) {
        mine[i] = val(t, me, i), scan[i] = exscan[i] = SENT;
        dmax[i] = small(t, me, i) + 0.5, lsum[i] = 1000000000LL * me + i;
    }
    for (int i = 0; i < u; i++) umine[i] = map_of(t, me, i), uscan[i] = uex[i] = SENT;
    MPI_Op op;
    CHECK_RC(MPI_Op_create(affine, 0, &op));
    MPI_Request req[6];
    CHECK_RC(MPI_Iscan(mine, scan, n, MPI_INT, MPI_SUM, comm, &req[0]));
    CHECK_RC(MPI_Iexscan(mine, exscan, n, MPI_INT, MPI_SUM, comm, &req[1]));
    CHECK_RC(MPI_Iscan(MPI_IN_PLACE, dmax, n, MPI_DOUBLE, MPI_MAX, comm, &req[2]));
    CHECK_RC(MPI_Iexscan(MPI_IN_PLACE, lsum, n, MPI_LONG_LONG, MPI_SUM, comm, &req[3]));
    CHECK_RC(MPI_Iscan(umine, uscan, u, MPI_INT, op, comm, &req[4]));
    CHECK_RC(MPI_Iexscan(umine, uex, u, MPI_INT, op, comm, &req[5]));
    complete(6, req, how);
    CHECK_RC(MPI_Op_free(&op));
    for (int i = 0; i < n; i++) {
        long long sum = 0, lwant = 0;
        int max = 0;
        for (int r = 0; r < me; r++) sum += val(t, r, i), lwant += 1000000000LL * r + i;
        for (int r = 0; r <= me; r++) max = small(t, r, i) > max ? small(t, r, i) : max;
        CHECK(exscan[i] == (me == 0 ? SENT : (int)sum));
        CHECK(scan[i] == (int)(sum + val(t, me, i)));
        CHECK(dmax[i] == max + 0.5);
        CHECK(lsum[i] == (me == 0 ? (long long)i : lwant));
    }
    composed(want, u, t, 0, 0, me + 1);
    for (int i = 0; i < u; i++) CHECK(uscan[i] == want[i]);
    if (me > 0) composed(want, u, t, 0, 0, me);
    for (int i = 0; i < u; i++) CHECK(uex[i] == (me == 0 ? SENT : want[i]));
    release();
}

/* The v-forms: rank r's block has vcnt(k, r) elements (none for r = 1, 5, ...), and
 * lies after every later rank's block and a gap of 2: out of rank order. */
static int vcnt(int k, int r) { return k * ((r * 3 + 1) % 4); }
static int vdispl(int k, int np, int r) {
    int d = 1;
    for (int q = np - 1; q > r; q--) d += vcnt(k, q) + 2;
    return d;
}
static int vspan(int k, int np) { return vdispl(k, np, 0) + vcnt(k, 0) + 3; }

/* `b` holds block r of test t at vdispl(r) for every rank r, the sentinel elsewhere. */
static void check_vblocks(const int *b, int k, int np, int t) {
    for (int i = 0; i < vspan(k, np); i++) {
        int want = SENT;
        for (int r = 0; r < np; r++)
            if (i >= vdispl(k, np, r) && i < vdispl(k, np, r) + vcnt(k, r)) want = val(t, r, i - vdispl(k, np, r));
        CHECK(b[i] == want);
    }
}

/* Igatherv of doubles from every root (in place at odd roots): odd ranks' receive
 * counts exceed what they send (a shorter message is allowed; the extra slot keeps its
 * sentinel); the other ranks pass nothing the root alone reads. */
static void test_igatherv(MPI_Comm comm, int k, int t) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int n = vspan(k, np), *counts = ints(np), *displs = ints(np);
    double *send = doubles(vcnt(k, me)), *recv = doubles(n);
    for (int r = 0; r < np; r++) counts[r] = vcnt(k, r) + r % 2, displs[r] = vdispl(k, np, r);
    for (int root = 0; root < np; root++) {
        int at_root = me == root, inplace = at_root && root % 2;
        for (int i = 0; i < vcnt(k, me); i++) send[i] = dval(t + root, me, i);
        for (int i = 0; i < n; i++) recv[i] = SENT;
        if (inplace) memcpy(recv + displs[me], send, sizeof(double) * (size_t)vcnt(k, me));
        MPI_Request req;
        CHECK_RC(MPI_Igatherv(inplace ? MPI_IN_PLACE : send, vcnt(k, me), MPI_DOUBLE, at_root ? recv : NULL,
                              at_root ? counts : NULL, at_root ? displs : NULL,
                              at_root ? MPI_DOUBLE : MPI_DATATYPE_NULL, root, comm, &req));
        complete(1, &req, root + 1);
        for (int i = 0; i < n && at_root; i++) {
            double want = SENT;
            for (int r = 0; r < np; r++)
                if (i >= displs[r] && i < displs[r] + vcnt(k, r)) want = dval(t + root, r, i - displs[r]);
            CHECK(recv[i] == want);
        }
    }
    release();
}

/* Iscatterv from every root (in place at odd roots), into a receive count one larger
 * than the block. */
static void test_iscatterv(MPI_Comm comm, int k, int t) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int n = vspan(k, np), m = vcnt(k, me) + 2;
    int *counts = ints(np), *displs = ints(np), *send = ints(n), *recv = ints(m);
    for (int r = 0; r < np; r++) counts[r] = vcnt(k, r), displs[r] = vdispl(k, np, r);
    for (int root = 0; root < np; root++) {
        int at_root = me == root, inplace = at_root && root % 2;
        for (int i = 0; i < n; i++) send[i] = SENT;
        for (int r = 0; r < np; r++)
            for (int i = 0; i < vcnt(k, r); i++) send[displs[r] + i] = val(t + root, r, i);
        for (int i = 0; i < m; i++) recv[i] = SENT;
        MPI_Request req;
        CHECK_RC(MPI_Iscatterv(at_root ? send : NULL, at_root ? counts : NULL, at_root ? displs : NULL,
                               at_root ? MPI_INT : MPI_DATATYPE_NULL, inplace ? MPI_IN_PLACE : recv, m - 1, MPI_INT,
                               root, comm, &req));
        complete(1, &req, root + 2);
        for (int i = 0; i < m; i++) CHECK(recv[i] == (i < vcnt(k, me) && !inplace ? val(t + root, me, i) : SENT));
        if (at_root) check_vblocks(send, k, np, t + root);
    }
    release();
}

/* Iallgatherv three times at once: plainly, in place, and received through a vector
 * type (2 ints at stride 2, extent 3 ints: displacements count vectors) from
 * contiguous ints. */
static void test_iallgatherv(MPI_Comm comm, int k, int t, int how) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int n = vspan(k, np), *counts = ints(np), *displs = ints(np);
    int *send = ints(2 * vcnt(k, me)), *recv = ints(n), *inpl = ints(n), *strided = ints(3 * n);
    for (int r = 0; r < np; r++) counts[r] = vcnt(k, r), displs[r] = vdispl(k, np, r);
    for (int i = 0; i < 2 * vcnt(k, me); i++) send[i] = val(t, me, i);
    for (int i = 0; i < n; i++) recv[i] = SENT, inpl[i] = SENT;
    for (int i = 0; i < 3 * n; i++) strided[i] = SENT;
    for (int i = 0; i < vcnt(k, me); i++) inpl[displs[me] + i] = val(t + 1, me, i);
    MPI_Datatype pair;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    MPI_Request req[3];
    CHECK_RC(MPI_Iallgatherv(send, vcnt(k, me), MPI_INT, recv, counts, displs, MPI_INT, comm, &req[0]));
    CHECK_RC(MPI_Iallgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, inpl, counts, displs, MPI_INT, comm, &req[1]));
    CHECK_RC(MPI_Iallgatherv(send, 2 * vcnt(k, me), MPI_INT, strided, counts, displs, pair, comm, &req[2]));
    CHECK_RC(MPI_Type_free(&pair)); /* the operation keeps what it needs */
    complete(3, req, how);
    check_vblocks(recv, k, np, t);
    check_vblocks(inpl, k, np, t + 1);
    for (int i = 0; i < 3 * n; i++) {
        int want = SENT;
        for (int r = 0; r < np; r++) {
            int e = i / 3 - vdispl(k, np, r), j = i % 3;
            if (e >= 0 && e < vcnt(k, r) && j != 1) want = val(t, r, 2 * e + j / 2);
        }
        CHECK(strided[i] == want);
    }
    release();
}

/* Ialltoallv twice at once: with uneven counts (rank a sends pc(a, b) to rank b)
 * laid out in rank order in the send buffer and in reverse order in the receive
 * buffer, with receive counts one larger for odd sources; and in place, with
 * symmetric counts (as the standard requires). */
static int pc(int k, int a, int b) { return k * ((a + 2 * b) % 3); }
static void test_ialltoallv(MPI_Comm comm, int k, int t, int how) {
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int *sc = ints(np), *sd = ints(np), *rc = ints(np), *rd = ints(np), *sym = ints(np), *id = ints(np);
    int ns = 2, nr = 1;
    for (int b = 0; b < np; b++) sc[b] = pc(k, me, b), sd[b] = ns, ns += sc[b] + 1;
    for (int a = np - 1; a >= 0; a--) rc[a] = pc(k, a, me) + a % 2, rd[a] = nr, nr += rc[a] + 2;
    for (int b = 0; b < np; b++) sym[b] = k * ((me + b) % 3), id[b] = 1 + (2 * k + 2) * (np - 1 - b);
    int ni = (2 * k + 2) * np + 1;
    int *send = ints(ns), *recv = ints(nr), *inpl = ints(ni);
    for (int i = 0; i < ns; i++) send[i] = SENT;
    for (int i = 0; i < nr; i++) recv[i] = SENT;
    for (int i = 0; i < ni; i++) inpl[i] = SENT;
    for (int b = 0; b < np; b++) {
        for (int i = 0; i < sc[b]; i++) send[sd[b] + i] = val(t, me * 64 + b, i);
        for (int i = 0; i < sym[b]; i++) inpl[id[b] + i] = val(t + 1, me * 64 + b, i);
    }
    MPI_Request req[2];
    CHECK_RC(MPI_Ialltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, comm, &req[0]));
    CHECK_RC(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, inpl, sym, id, MPI_INT, comm, &req[1]));
    complete(2, req, how);
    for (int i = 0; i < nr; i++) {
        int want = SENT;
        for (int a = 0; a < np; a++)
            if (i >= rd[a] && i < rd[a] + pc(k, a, me)) want = val(t, a * 64 + me, i - rd[a]);
        CHECK(recv[i] == want);
    }
    for (int i = 0; i < ni; i++) {
        int want = SENT;
        for (int b = 0; b < np; b++)
            if (i >= id[b] && i < id[b] + sym[b]) want = val(t + 1, b * 64 + me, i - id[b]);
        CHECK(inpl[i] == want);
    }
    release();
}

/* Operations outstanding on the world and on the split at once, started in an order
 * that differs between the two, completed in yet another. */
static void test_mixed(MPI_Comm split, int n) {
    int sme, snp;
    MPI_Comm_rank(split, &sme);
    MPI_Comm_size(split, &snp);
    int *wsend = ints(n * size), *wrecv = ints(n * size), *ssend = ints(n * snp), *srecv = ints(n);
    int wscan[2], wmine[2] = { rank, 1 }, sscan[2], smine[2] = { sme, 2 };
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) wsend[j * n + i] = val(40, rank * size + j, i), wrecv[j * n + i] = SENT;
    for (int i = 0; i < n * snp; i++) ssend[i] = val(41, sme, i);
    /* Allgatherv on the world: rank r gives r % 3 + 1 ints; alltoallv on the split:
     * rank a gives rank b (a + b) % 2 + 1 ints. Both packed in rank order. */
    int *gcounts = ints(size), *gdispls = ints(size), *gathered = ints(3 * size), gmine[3];
    int *tc = ints(snp), *td = ints(snp), *tsend = ints(2 * snp), *rcv = ints(2 * snp), *rc = ints(snp), *rd = ints(snp);
    for (int r = 0, d = 0; r < size; d += gcounts[r], r++) gcounts[r] = r % 3 + 1, gdispls[r] = d;
    for (int i = 0; i < 3; i++) gmine[i] = val(42, rank, i);
    for (int b = 0, d = 0, e = 0; b < snp; d += tc[b], e += rc[b], b++) {
        tc[b] = (sme + b) % 2 + 1, td[b] = d, rc[b] = tc[b], rd[b] = e;
        for (int i = 0; i < tc[b]; i++) tsend[d + i] = val(43, sme * 64 + b, i);
    }
    MPI_Request req[7];
    CHECK_RC(MPI_Iexscan(smine, sscan, 2, MPI_INT, MPI_SUM, split, &req[0]));
    CHECK_RC(MPI_Ialltoall(wsend, n, MPI_INT, wrecv, n, MPI_INT, MPI_COMM_WORLD, &req[1]));
    CHECK_RC(MPI_Ialltoallv(tsend, tc, td, MPI_INT, rcv, rc, rd, MPI_INT, split, &req[5]));
    CHECK_RC(MPI_Ireduce_scatter_block(ssend, srecv, n, MPI_INT, MPI_SUM, split, &req[2]));
    CHECK_RC(MPI_Iscan(wmine, wscan, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[3]));
    CHECK_RC(MPI_Ibarrier(split, &req[4]));
    CHECK_RC(MPI_Iallgatherv(gmine, rank % 3 + 1, MPI_INT, gathered, gcounts, gdispls, MPI_INT, MPI_COMM_WORLD,
                             &req[6]));
    test_loop(&req[3]);
    CHECK_RC(MPI_Wait(&req[2], MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Waitall(7, req, MPI_STATUSES_IGNORE));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) CHECK(wrecv[j * n + i] == val(40, j * size + rank, i));
    for (int i = 0; i < n; i++) {
        long long sum = 0;
        for (int r = 0; r < snp; r++) sum += val(41, r, sme * n + i);
        CHECK(srecv[i] == (int)sum);
    }
    CHECK(wscan[0] == rank * (rank + 1) / 2 && wscan[1] == rank + 1);
    if (sme > 0) CHECK(sscan[0] == sme * (sme - 1) / 2 && sscan[1] == 2 * sme);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < gcounts[r]; i++) CHECK(gathered[gdispls[r] + i] == val(42, r, i));
    for (int a = 0; a < snp; a++)
        for (int i = 0; i < rc[a]; i++) CHECK(rcv[rd[a] + i] == val(43, a * 64 + sme, i));
    release();
}

static void test_errors(void) {
    MPI_Comm w = MPI_COMM_WORLD;
    CHECK_RC(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    int x[64] = { 0 }, y[64];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype loose;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &loose)); /* never committed */
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, size, w, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, -1, w, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, -1, MPI_INT, 0, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_DATATYPE_NULL, 0, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, 0, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    /* MPI_IN_PLACE off the root, or as the root's send buffer. */
    CHECK_CLASS(MPI_Iscatter(rank == 0 ? MPI_IN_PLACE : (void *)x, 1, MPI_INT, rank == 0 ? (void *)y : MPI_IN_PLACE,
                             1, MPI_INT, 0, w, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ialltoall(x, -1, MPI_INT, y, 1, MPI_INT, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_DATATYPE_NULL, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ialltoall(x, 1, loose, y, 2, MPI_INT, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ialltoall(x, 1, MPI_INT, y, 1, MPI_INT, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Ialltoall(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ialltoall(x, 2, MPI_INT, y, 1, MPI_INT, w, &req), MPI_ERR_TRUNCATE);
    CHECK_CLASS(MPI_Ireduce_scatter_block(x, y, -1, MPI_INT, MPI_SUM, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ireduce_scatter_block(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ireduce_scatter_block(x, y, 1, MPI_INT, MPI_OP_NULL, w, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Ireduce_scatter_block(x, y, 1, MPI_DOUBLE, MPI_BAND, w, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Ireduce_scatter_block(x, y, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iscan(x, y, -2, MPI_INT, MPI_SUM, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iscan(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iscan(x, y, 1, loose, MPI_SUM, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iscan(x, y, 1, MPI_INT, MPI_OP_NULL, w, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iscan(x, y, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iscan(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iexscan(x, y, -1, MPI_INT, MPI_SUM, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iexscan(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iexscan(x, y, 1, MPI_FLOAT, MPI_BXOR, w, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iexscan(x, y, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_ARG);
    /* The v-forms. */
    int cnts[64], dsp[64], bad[64];
    for (int r = 0; r < size; r++) cnts[r] = 1, dsp[r] = r, bad[r] = r == size - 1 ? -1 : 1;
    CHECK_CLASS(MPI_Igatherv(x, 1, MPI_INT, y, cnts, dsp, MPI_INT, size, w, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Igatherv(x, -1, MPI_INT, y, cnts, dsp, MPI_INT, 0, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Igatherv(x, 1, MPI_DATATYPE_NULL, y, cnts, dsp, MPI_INT, 0, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Igatherv(x, 1, MPI_INT, y, cnts, dsp, MPI_INT, 0, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iscatterv(x, cnts, dsp, MPI_INT, y, 1, MPI_INT, -1, w, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iscatterv(x, cnts, dsp, MPI_INT, y, -1, MPI_INT, 0, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iscatterv(x, cnts, dsp, MPI_INT, y, 1, loose, 0, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iscatterv(x, cnts, dsp, MPI_INT, y, 1, MPI_INT, 0, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, bad, dsp, MPI_INT, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, cnts, bad, MPI_INT, w, &req), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, NULL, dsp, MPI_INT, w, &req), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, cnts, dsp, MPI_DATATYPE_NULL, w, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Iallgatherv(x, 1, MPI_INT, y, cnts, dsp, MPI_INT, w, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Ialltoallv(x, bad, dsp, MPI_INT, y, cnts, dsp, MPI_INT, w, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ialltoallv(x, cnts, dsp, MPI_INT, y, cnts, bad, MPI_INT, w, &req), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Ialltoallv(x, cnts, dsp, MPI_INT, MPI_IN_PLACE, cnts, dsp, MPI_INT, w, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ialltoallv(x, cnts, dsp, MPI_INT, y, cnts, dsp, MPI_INT, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ialltoallv(x, cnts, dsp, MPI_INT, y, cnts, dsp, MPI_INT, w, NULL), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Type_free(&loose));
    /* Errors found at completion, both MPI_ERR_TRUNCATE: a block longer than its
     * receive count (a v-form), and members whose counts differ (an equal-block call:
     * rank 0 sends and expects blocks of two, the others of one). */
    for (int r = 0; r < size; r++) cnts[r] = 2, dsp[r] = 2 * r;
    CHECK_RC(MPI_Iscatterv(x, cnts, dsp, MPI_INT, y, 1, MPI_INT, 0, w, &req));
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    CHECK(req == MPI_REQUEST_NULL);
    if (size > 1) {
        int flag = 0, rc = MPI_SUCCESS, k = rank == 0 ? 2 : 1;
        CHECK_RC(MPI_Ialltoall(x, k, MPI_INT, y, k, MPI_INT, w, &req));
        while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK_CLASS(rc, MPI_ERR_TRUNCATE);
    }
    for (int r = 0; r < size; r++) cnts[r] = 1, dsp[r] = r;
    /* The refused calls took no sequence numbers: the next ones still match. */
    MPI_Request reqs[4];
    int s[2] = { rank, 3 }, sc[2], a[64], b[64], root = size - 1;
    for (int j = 0; j < size; j++) a[j] = val(50, rank, j), x[j] = val(51, rank, j);
    CHECK_RC(MPI_Iscan(s, sc, 2, MPI_INT, MPI_SUM, w, &reqs[0]));
    CHECK_RC(MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, w, &reqs[1]));
    CHECK_RC(MPI_Iscatter(x, 1, MPI_INT, &y[0], 1, MPI_INT, root, w, &reqs[2]));
    CHECK_RC(MPI_Ireduce_scatter_block(a, &y[1], 1, MPI_INT, MPI_MAX, w, &reqs[3]));
    CHECK_RC(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    CHECK(sc[0] == rank * (rank + 1) / 2 && sc[1] == 3 * (rank + 1));
    for (int j = 0; j < size; j++) CHECK(b[j] == val(50, j, rank));
    CHECK(y[0] == val(51, root, rank) && y[1] == val(50, size - 1, rank));
    for (int j = 0; j < size; j++) y[j] = SENT;
    CHECK_RC(MPI_Iallgatherv(&a[0], 1, MPI_INT, y, cnts, dsp, MPI_INT, w, &reqs[0]));
    CHECK_RC(MPI_Ialltoallv(a, cnts, dsp, MPI_INT, b, cnts, dsp, MPI_INT, w, &reqs[1]));
    CHECK_RC(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int j = 0; j < size; j++) CHECK(y[j] == val(50, j, 0) && b[j] == val(50, j, rank));
    CHECK_RC(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Two halves (even and odd world ranks), each in the reverse of the world's order. */
    MPI_Comm split;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split));
    int counts[3] = { 1, 7, 1500 };
    for (int k = 0; k < 3; k++) {
        int n = counts[k];
        MPI_Comm comms[2] = { MPI_COMM_WORLD, split };
        for (int c = 0; c < 2; c++) {
            int t = 10 * k + 3 * c;
            test_iscatter(comms[c], n, t);
            test_ialltoall(comms[c], n, t, k + c);
            test_ireduce_scatter_block(comms[c], n, t, k + c + 2);
            test_iscan(comms[c], n, t, k + c + 4);
            test_igatherv(comms[c], n, t);
            test_iscatterv(comms[c], n, t);
            test_iallgatherv(comms[c], n, t, k + c + 1);
            test_ialltoallv(comms[c], n, t, k + c + 3);
        }
        test_mixed(split, n);
    }
    test_errors();
    CHECK_RC(MPI_Comm_free(&split));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok icoll_more\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
