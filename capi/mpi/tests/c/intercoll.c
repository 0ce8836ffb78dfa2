/* The rooted and variable-size collectives on intercommunicators (MPI-3.1 5.2.2):
 * Reduce (predefined, derived and a non-commutative user op), Gather(v), Scatter(v),
 * Allgatherv, Alltoall(v,w), Reduce_scatter(_block), each with either group as the root
 * or sending group, against a sequential computation of what MPI specifies; then the
 * error classes of bad arguments and mismatched signatures, after which the
 * intercommunicator still works, and of a bad argument at one process of a rooted call
 * (the root, or one member of the other group), after which a correct call of the same
 * kind gets its own data. Splits: evens/odds, the last rank against the rest,
 * the first rank against the rest. Needs >= 2 processes. */
#include <string.h>
#include "test_check.h"

#define MAXP 64
#define BIG (8 * MAXP)

static int wrank, wsize;

struct split {
    int colour[MAXP];
    int members[2][MAXP];
    int n[2];
};

/* The current intercommunicator's view from this process. */
static int me, other, lrank, ln, rn;
static const struct split *S;

static void make_split(struct split *s, int kind) {
    s->n[0] = s->n[1] = 0;
    for (int r = 0; r < wsize; r++) {
        int c = kind == 0 ? r % 2 : kind == 1 ? (r == wsize - 1) : (r != 0);
        s->colour[r] = c;
        s->members[c][s->n[c]++] = r;
    }
}

static int remote(int j) { return S->members[other][j]; }

/* Root argument for a rooted call whose root is local rank `root_local` of group
 * `from`. */
static int root_arg(int from, int root_local) {
    if (me == from) return lrank == root_local ? MPI_ROOT : MPI_PROC_NULL;
    return root_local;
}

/* Non-commutative: the fold a0 op a1 op ... is a polynomial in the order. */
static void poly(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((long *)inout)[i] = 3 * ((long *)in)[i] + ((long *)inout)[i];
}

static void reduce(MPI_Comm ic, int from, int root_local, MPI_Op polyop, MPI_Datatype pair) {
    int root = root_arg(from, root_local);
    long in[4], out[4], want[4];
    for (int k = 0; k < 4; k++) {
        in[k] = wrank * 7 + k;
        out[k] = -1;
    }
    /* MPI_SUM over 4 longs. */
    CHECK_RC(MPI_Reduce(in, out, 4, MPI_LONG, MPI_SUM, root, ic));
    if (root == MPI_ROOT) {
        for (int k = 0; k < 4; k++) {
            want[k] = 0;
            for (int j = 0; j < rn; j++) want[k] += remote(j) * 7 + k;
            CHECK(out[k] == want[k]);
        }
    } else {
        for (int k = 0; k < 4; k++) CHECK(out[k] == -1);
    }
    /* The user op, in the remote group's rank order. */
    for (int k = 0; k < 4; k++) out[k] = -1;
    CHECK_RC(MPI_Reduce(in, out, 4, MPI_LONG, polyop, root, ic));
    if (root == MPI_ROOT)
        for (int k = 0; k < 4; k++) {
            want[k] = remote(0) * 7 + k;
            for (int j = 1; j < rn; j++) want[k] = 3 * want[k] + remote(j) * 7 + k;
            CHECK(out[k] == want[k]);
        }
    /* Allreduce with the user op: every member gets the remote group's fold. */
    for (int k = 0; k < 4; k++) out[k] = -1;
    CHECK_RC(MPI_Allreduce(in, out, 4, MPI_LONG, polyop, ic));
    for (int k = 0; k < 4; k++) {
        want[k] = remote(0) * 7 + k;
        for (int j = 1; j < rn; j++) want[k] = 3 * want[k] + remote(j) * 7 + k;
        CHECK(out[k] == want[k]);
    }
    /* MPI_MAX on a derived type (pairs of ints). */
    int pin[4] = {wrank, -wrank, 100 - wrank, wrank * wrank}, pout[4] = {-1, -1, -1, -1};
    CHECK_RC(MPI_Reduce(pin, pout, 2, pair, MPI_MAX, root, ic));
    if (root == MPI_ROOT) {
        int w[4] = {-1000, -1000, -1000, -1000};
        for (int j = 0; j < rn; j++) {
            int r = remote(j), v[4] = {r, -r, 100 - r, r * r};
            for (int k = 0; k < 4; k++)
                if (v[k] > w[k]) w[k] = v[k];
        }
        CHECK(memcmp(pout, w, sizeof w) == 0);
    }
}

static void gathers(MPI_Comm ic, int from, int root_local, MPI_Datatype gap) {
    int root = root_arg(from, root_local);
    /* Gather: 2 ints each; the root receives with a strided type (ints at 0 and 2 of
     * every 4), whose gaps must stay untouched. */
    int mine[3] = {wrank, 100 + wrank, 7}, all[BIG];
    for (int i = 0; i < BIG; i++) all[i] = -1;
    CHECK_RC(MPI_Gather(mine, 2, MPI_INT, all, 1, gap, root, ic));
    if (root == MPI_ROOT)
        for (int j = 0; j < rn; j++)
            CHECK(all[4 * j] == remote(j) && all[4 * j + 1] == -1 && all[4 * j + 2] == 100 + remote(j) &&
                  all[4 * j + 3] == -1);
    else
        CHECK(all[0] == -1);
    /* Gatherv: local rank l sends l % 3 + 1 ints; the root places them in reverse rank
     * order with a gap of one int after each. */
    int counts[MAXP], displs[MAXP], at = 0;
    for (int j = rn - 1; j >= 0; j--) {
        counts[j] = j % 3 + 1;
        displs[j] = at;
        at += counts[j] + 1;
    }
    int vmine[3];
    for (int k = 0; k < 3; k++) vmine[k] = 1000 * wrank + k;
    for (int i = 0; i < BIG; i++) all[i] = -1;
    CHECK_RC(MPI_Gatherv(vmine, lrank % 3 + 1, MPI_INT, all, counts, displs, MPI_INT, root, ic));
    if (root == MPI_ROOT)
        for (int j = 0; j < rn; j++) {
            for (int k = 0; k < counts[j]; k++) CHECK(all[displs[j] + k] == 1000 * remote(j) + k);
            CHECK(all[displs[j] + counts[j]] == -1);
        }
}

static void scatters(MPI_Comm ic, int from, int root_local, MPI_Datatype triple) {
    int root = root_arg(from, root_local);
    int src[BIG], got[4] = {-1, -1, -1, -1};
    for (int j = 0; j < rn; j++)
        for (int k = 0; k < 3; k++) src[3 * j + k] = 10000 * from + 100 * wrank + 10 * j + k;
    /* Scatter: the root sends one triple type per member, members receive 3 ints. */
    CHECK_RC(MPI_Scatter(src, 1, triple, got, 3, MPI_INT, root, ic));
    int rootw = me == from ? -1 : remote(root_local);
    if (me != from)
        for (int k = 0; k < 3; k++) CHECK(got[k] == 10000 * from + 100 * rootw + 10 * lrank + k);
    else
        CHECK(got[0] == -1);
    CHECK(got[3] == -1);
    /* Scatterv: remote rank j gets j % 3 + 1 ints, taken in reverse order with gaps. */
    int counts[MAXP], displs[MAXP], at = 0;
    for (int j = rn - 1; j >= 0; j--) {
        counts[j] = j % 3 + 1;
        displs[j] = at;
        at += counts[j] + 1;
    }
    for (int i = 0; i < BIG; i++) src[i] = -5;
    for (int j = 0; j < rn; j++)
        for (int k = 0; k < counts[j]; k++) src[displs[j] + k] = 100 * wrank + 10 * j + k;
    for (int k = 0; k < 4; k++) got[k] = -1;
    CHECK_RC(MPI_Scatterv(src, counts, displs, MPI_INT, got, lrank % 3 + 1, MPI_INT, root, ic));
    if (me != from) {
        for (int k = 0; k <= lrank % 3; k++) CHECK(got[k] == 100 * rootw + 10 * lrank + k);
        CHECK(got[lrank % 3 + 1] == -1);
    }
}

static void allgatherv(MPI_Comm ic) {
    double mine[2] = {wrank + 0.25, wrank + 0.5}, all[BIG];
    int counts[MAXP], displs[MAXP], at = 0;
    for (int j = 0; j < rn; j++) {
        counts[j] = j % 2 + 1;
        displs[j] = at + 1; /* a gap before each block */
        at += counts[j] + 1;
    }
    for (int i = 0; i < BIG; i++) all[i] = -1;
    CHECK_RC(MPI_Allgatherv(mine, lrank % 2 + 1, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, ic));
    for (int j = 0; j < rn; j++) {
        CHECK(all[displs[j] - 1] == -1);
        CHECK(all[displs[j]] == remote(j) + 0.25);
        if (counts[j] == 2) CHECK(all[displs[j] + 1] == remote(j) + 0.5);
    }
}

static void alltoalls(MPI_Comm ic) {
    /* Alltoall: 2 ints to each remote rank j. */
    int out[BIG], in[BIG];
    for (int j = 0; j < rn; j++) {
        out[2 * j] = 100 * wrank + j;
        out[2 * j + 1] = -wrank;
    }
    for (int i = 0; i < BIG; i++) in[i] = -1;
    CHECK_RC(MPI_Alltoall(out, 2, MPI_INT, in, 2, MPI_INT, ic));
    for (int i = 0; i < rn; i++) CHECK(in[2 * i] == 100 * remote(i) + lrank && in[2 * i + 1] == -remote(i));
    CHECK(in[2 * rn] == -1);
    /* Alltoallv: (sender + receiver) % 3 ints from local rank l to remote rank j (some
     * empty); receive blocks in reverse order with gaps. */
    int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], at = 0;
    for (int j = 0; j < rn; j++) {
        sc[j] = (lrank + j) % 3;
        sd[j] = at;
        at += sc[j];
        for (int k = 0; k < sc[j]; k++) out[sd[j] + k] = 1000 * wrank + 10 * j + k;
    }
    at = 0;
    for (int i = rn - 1; i >= 0; i--) {
        rc[i] = (lrank + i) % 3;
        rd[i] = at;
        at += rc[i] + 1;
    }
    for (int i = 0; i < BIG; i++) in[i] = -1;
    CHECK_RC(MPI_Alltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, ic));
    for (int i = 0; i < rn; i++) {
        for (int k = 0; k < rc[i]; k++) CHECK(in[rd[i] + k] == 1000 * remote(i) + 10 * lrank + k);
        CHECK(in[rd[i] + rc[i]] == -1);
    }
    /* Alltoallw: the block from local rank l to remote rank j holds (l + j) % 3
     * elements, ints where l + j is even and doubles where it is odd; byte
     * displacements, receive blocks in reverse order with a gap of one double. */
    double wout[BIG], wbuf[BIG];
    int wsc[MAXP], wsd[MAXP], wrc[MAXP], wrd[MAXP];
    MPI_Datatype st[MAXP], rt[MAXP];
    at = 0;
    for (int j = 0; j < rn; j++) {
        int ints = (lrank + j) % 2 == 0;
        wsc[j] = (lrank + j) % 3;
        st[j] = ints ? MPI_INT : MPI_DOUBLE;
        wsd[j] = at * (int)sizeof(double);
        for (int k = 0; k < wsc[j]; k++) {
            if (ints)
                ((int *)&wout[at])[k] = 2000 * wrank + 10 * j + k;
            else
                wout[at + k] = 1000.5 * wrank + 10 * j + k;
        }
        at += wsc[j];
    }
    at = 0;
    for (int i = rn - 1; i >= 0; i--) {
        wrc[i] = (lrank + i) % 3;
        rt[i] = (lrank + i) % 2 == 0 ? MPI_INT : MPI_DOUBLE;
        wrd[i] = at * (int)sizeof(double);
        at += wrc[i] + 1;
    }
    for (int i = 0; i < BIG; i++) wbuf[i] = -1;
    CHECK_RC(MPI_Alltoallw(wout, wsc, wsd, st, wbuf, wrc, wrd, rt, ic));
    for (int i = 0; i < rn; i++) {
        double *block = &wbuf[wrd[i] / (int)sizeof(double)];
        for (int k = 0; k < wrc[i]; k++) {
            if (rt[i] == MPI_INT)
                CHECK(((int *)block)[k] == 2000 * remote(i) + 10 * lrank + k);
            else
                CHECK(block[k] == 1000.5 * remote(i) + 10 * lrank + k);
        }
        CHECK(block[wrc[i]] == -1);
    }
}

static void reduce_scatters(MPI_Comm ic, MPI_Op polyop) {
    /* Block: each group's input is ln * rn longs (the same total on both sides); local
     * rank l gets rn elements of the remote group's sum from l * rn. */
    long in[BIG * 2], out[BIG];
    for (int e = 0; e < ln * rn; e++) in[e] = wrank + 3L * e;
    for (int i = 0; i < BIG; i++) out[i] = -1;
    CHECK_RC(MPI_Reduce_scatter_block(in, out, rn, MPI_LONG, MPI_SUM, ic));
    for (int k = 0; k < rn; k++) {
        long want = 0;
        for (int j = 0; j < rn; j++) want += remote(j) + 3L * (lrank * rn + k);
        CHECK(out[k] == want);
    }
    CHECK(out[rn] == -1);
    /* Varied: 12 elements cut unevenly over the local group, the user op. */
    int counts[MAXP], first = 0;
    for (int l = 0; l < ln; l++) {
        counts[l] = 12 / ln + (l < 12 % ln);
        if (l < lrank) first += counts[l];
    }
    for (int e = 0; e < 12; e++) in[e] = wrank + e;
    for (int i = 0; i < BIG; i++) out[i] = -1;
    CHECK_RC(MPI_Reduce_scatter(in, out, counts, MPI_LONG, polyop, ic));
    for (int k = 0; k < counts[lrank]; k++) {
        long want = remote(0) + first + k;
        for (int j = 1; j < rn; j++) want = 3 * want + remote(j) + first + k;
        CHECK(out[k] == want);
    }
    CHECK(out[counts[lrank]] == -1);
}

/* Bad arguments, passed alike by every process, and mismatched signatures; then the
 * intercommunicator still works. */
static void errors(MPI_Comm ic) {
    int a[BIG], b[BIG], counts[MAXP], displs[MAXP];
    for (int i = 0; i < MAXP; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    for (int i = 0; i < BIG; i++) a[i] = b[i] = 0;
    int fromroot = root_arg(0, 0);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, rn + ln, ic), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -7, ic), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Scatterv(a, counts, displs, MPI_INT, b, 1, MPI_INT, MAXP, ic), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, fromroot, ic), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Reduce(a, b, 1, MPI_INT, MPI_OP_NULL, fromroot, ic), MPI_ERR_OP);
    CHECK_CLASS(MPI_Alltoall(a, -1, MPI_INT, b, -1, MPI_INT, ic), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgatherv(MPI_IN_PLACE, 1, MPI_INT, b, counts, displs, MPI_INT, ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_OP_NULL, ic), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_scatter(a, b, counts, MPI_DATATYPE_NULL, MPI_SUM, ic), MPI_ERR_TYPE);
    int neg[MAXP];
    for (int i = 0; i < MAXP; i++) neg[i] = -1;
    CHECK_CLASS(MPI_Alltoallv(a, counts, neg, MPI_INT, b, counts, displs, MPI_INT, ic), MPI_ERR_ARG);
    MPI_Datatype types[MAXP];
    for (int i = 0; i < MAXP; i++) types[i] = MPI_INT;
    CHECK_CLASS(MPI_Alltoallw(MPI_IN_PLACE, counts, displs, types, b, counts, displs, types, ic), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Alltoallw(a, counts, neg, types, b, counts, displs, types, ic), MPI_ERR_ARG);
    /* Mismatches: the root of group 0 receives 1 int per member where 2 come. */
    int rc = MPI_Gather(a, 2, MPI_INT, b, 1, MPI_INT, fromroot, ic), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == (fromroot == MPI_ROOT ? MPI_ERR_TRUNCATE : MPI_SUCCESS));
    /* Group 0 sends 3 ints per block, group 1 expects 2: group 1 gets the error. */
    rc = MPI_Alltoall(a, me == 0 ? 3 : 2, MPI_INT, b, 2, MPI_INT, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == (me == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS));
    /* Scatter of 2 per member into 3: the receivers' error, every one of them. */
    rc = MPI_Scatter(a, 2, MPI_INT, b, 3, MPI_INT, fromroot, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == (me == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS));
    /* Reduce_scatter_block whose totals differ (group 1's is one element longer). */
    rc = MPI_Reduce_scatter_block(a, b, me == 1 ? 2 : 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE);
    /* Still usable. */
    long x = wrank, sum = 0, want = 0;
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, ic));
    for (int j = 0; j < rn; j++) want += remote(j);
    CHECK(sum == want);
    allgatherv(ic);
}

/* One process's bad argument (the root's, or one member's of the other group): the
 * call still moves its messages, every process that learns of it gets the class, and a
 * correct call of the same kind that follows gets its own data, not the failed one's.
 * Group 0's first member is the root; group 1's last member, or its leader, errs. */
static void lone_errors(MPI_Comm ic) {
    int root = root_arg(0, 0), isroot = root == MPI_ROOT, g1 = me == 1, last = g1 && lrank == ln - 1;
    int a[BIG], b[BIG], counts[MAXP], displs[MAXP], neg[MAXP];
    for (int i = 0; i < MAXP; i++) {
        counts[i] = 1;
        displs[i] = i;
        neg[i] = -1;
    }
    for (int round = 0; round < 2; round++) {
        long x = wrank + 100L * round, sum = -1, want = 0;
        for (int j = 0; j < rn; j++) want += remote(j) + 100L * round;
        /* Reduce: the root's receive buffer is MPI_IN_PLACE, then its op is null. */
        if (round == 0)
            CHECK_CLASS(MPI_Reduce(&x, isroot ? MPI_IN_PLACE : (void *)&sum, 1, MPI_LONG, MPI_SUM, root, ic),
                        isroot ? MPI_ERR_BUFFER : MPI_SUCCESS);
        else
            CHECK_CLASS(MPI_Reduce(&x, &sum, 1, MPI_LONG, isroot ? MPI_OP_NULL : MPI_SUM, root, ic),
                        isroot ? MPI_ERR_OP : MPI_SUCCESS);
        CHECK_RC(MPI_Reduce(&x, &sum, 1, MPI_LONG, MPI_SUM, root, ic));
        if (isroot) CHECK(sum == want);
        /* Reduce: one sender's op is null; its whole group and the root learn it. */
        CHECK_CLASS(MPI_Reduce(&x, &sum, 1, MPI_LONG, last ? MPI_OP_NULL : MPI_SUM, root, ic),
                    isroot || g1 ? MPI_ERR_OP : MPI_SUCCESS);
        sum = -1;
        CHECK_RC(MPI_Reduce(&x, &sum, 1, MPI_LONG, MPI_SUM, root, ic));
        if (isroot) CHECK(sum == want);
        /* Gather: the root's count is negative, then its displacements (v). */
        for (int i = 0; i < BIG; i++) a[i] = wrank + 1000 * round;
        if (round == 0)
            CHECK_CLASS(MPI_Gather(a, 1, MPI_INT, b, isroot ? -1 : 1, MPI_INT, root, ic),
                        isroot ? MPI_ERR_COUNT : MPI_SUCCESS);
        else
            CHECK_CLASS(MPI_Gatherv(a, 1, MPI_INT, b, counts, isroot ? neg : displs, MPI_INT, root, ic),
                        isroot ? MPI_ERR_ARG : MPI_SUCCESS);
        /* Gather: one sender's count is negative. */
        CHECK_CLASS(MPI_Gather(a, last ? -1 : 1, MPI_INT, b, 1, MPI_INT, root, ic),
                    isroot || g1 ? MPI_ERR_COUNT : MPI_SUCCESS);
        for (int i = 0; i < BIG; i++) b[i] = -1;
        CHECK_RC(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, root, ic));
        if (isroot)
            for (int j = 0; j < rn; j++) CHECK(b[j] == remote(j) + 1000 * round);
        /* Scatter: the root's send type is null (its group 1 gets the class too), then
         * group 1's leader's receive count is negative (its group gets it). */
        if (round == 0)
            CHECK_CLASS(MPI_Scatter(a, 1, isroot ? MPI_DATATYPE_NULL : MPI_INT, b, 1, MPI_INT, root, ic),
                        isroot || g1 ? MPI_ERR_TYPE : MPI_SUCCESS);
        else
            CHECK_CLASS(MPI_Scatter(a, 1, MPI_INT, b, g1 && lrank == 0 ? -1 : 1, MPI_INT, root, ic),
                        g1 ? MPI_ERR_COUNT : MPI_SUCCESS);
        for (int j = 0; j < rn; j++) a[j] = 10 * remote(j) + round;
        b[0] = -1;
        CHECK_RC(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, root, ic));
        if (g1) CHECK(b[0] == 10 * wrank + round);
        /* Bcast: the root's count is negative; group 1 learns its class. */
        a[0] = 7 + round;
        CHECK_CLASS(MPI_Bcast(a, isroot ? -1 : 1, MPI_INT, root, ic), isroot || g1 ? MPI_ERR_COUNT : MPI_SUCCESS);
        a[0] = isroot ? 70 + round : -1;
        CHECK_RC(MPI_Bcast(a, 1, MPI_INT, root, ic));
        if (g1) CHECK(a[0] == 70 + round);
    }
}

static void run(int kind, MPI_Op polyop, MPI_Datatype pair, MPI_Datatype gap, MPI_Datatype triple) {
    struct split s;
    make_split(&s, kind);
    S = &s;
    me = s.colour[wrank];
    other = 1 - me;
    MPI_Comm local, ic;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me, wrank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, s.members[other][0], 60 + kind, &ic));
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    CHECK_RC(MPI_Comm_size(ic, &ln));
    CHECK_RC(MPI_Comm_remote_size(ic, &rn));
    for (int from = 0; from < 2; from++) {
        /* The root: the last member of group 0, the first of group 1. */
        int root_local = from == 0 ? s.n[0] - 1 : 0;
        reduce(ic, from, root_local, polyop, pair);
        gathers(ic, from, root_local, gap);
        scatters(ic, from, root_local, triple);
    }
    allgatherv(ic);
    alltoalls(ic);
    reduce_scatters(ic, polyop);
    errors(ic);
    lone_errors(ic);
    CHECK_RC(MPI_Comm_free(&ic));
    CHECK_RC(MPI_Comm_free(&local));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= MAXP);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Op polyop;
    MPI_Datatype pair, vec, gap, triple;
    CHECK_RC(MPI_Op_create(poly, 0, &polyop));
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CHECK_RC(MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &gap));
    CHECK_RC(MPI_Type_commit(&gap));
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &triple));
    CHECK_RC(MPI_Type_commit(&triple));
    for (int kind = 0; kind < 3; kind++) run(kind, polyop, pair, gap, triple);
    CHECK_RC(MPI_Type_free(&vec));
    CHECK_RC(MPI_Type_free(&gap));
    CHECK_RC(MPI_Type_free(&pair));
    CHECK_RC(MPI_Type_free(&triple));
    CHECK_RC(MPI_Op_free(&polyop));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok intercoll\n");
    MPI_Finalize();
    return 0;
}
