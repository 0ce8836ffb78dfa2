/* MPI_Comm_idup and the nonblocking collectives on intercommunicators (MPI-3.1 5.12,
 * 5.2.2, 6.4.2). Checks, against a sequential computation of what MPI specifies:
 * Ibarrier, Ibcast (MPI_ROOT / MPI_PROC_NULL), Ireduce and Iallreduce (MPI_SUM and a
 * non-commutative user op, in the remote group's rank order), Igather, Iscatter,
 * Iallgather and Ialltoall, with either group as the root or sender, several in flight
 * at once; the v-forms Igatherv, Iscatterv, Iallgatherv, Ialltoallv (blocks of
 * different sizes, with gaps), Ialltoallw; Ireduce_scatter_block and
 * Ireduce_scatter; that they overlap (an operation posted, then a synchronous send that the
 * other side receives *before* its own call, then the wait: a blocking implementation
 * deadlocks), and that an intercommunicator Ibarrier does not complete before the
 * other group entered; MPI_Comm_idup of world, of the local group and of the
 * intercommunicator, overlapped the same way, several in flight, and mixed with a
 * blocking MPI_Comm_dup of the same parent before the wait (the ids must differ: a
 * message on one is never received on another); the error classes of bad arguments
 * under MPI_ERRORS_RETURN, after which the communicator still works. Splits:
 * evens/odds, the last rank against the rest, the first rank against the rest.
 * Needs >= 2 processes. */
#include <string.h>
#include "test_check.h"

#define MAXP 64

static int wrank, wsize;
static int me, other, lrank, ln, rn;
static int members[2][MAXP], nmem[2];

static int remote(int j) { return members[other][j]; }

static void make_split(int kind) {
    nmem[0] = nmem[1] = 0;
    for (int r = 0; r < wsize; r++) {
        int c = kind == 0 ? r % 2 : kind == 1 ? (r == wsize - 1) : (r != 0);
        members[c][nmem[c]++] = r;
        if (r == wrank) me = c;
    }
    other = 1 - me;
}

static int root_arg(int from, int root_local) {
    if (me == from) return lrank == root_local ? MPI_ROOT : MPI_PROC_NULL;
    return root_local;
}

/* Non-commutative: the fold a0 op a1 op ... is a polynomial in the order. */
static void poly(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((long *)inout)[i] = 3 * ((long *)in)[i] + ((long *)inout)[i];
}

/* Group 0 posts `req` (already started), then each of its members sends synchronously
 * to one remote member, which receives before it starts its own operation (`start`);
 * then both wait. A blocking start would never return on group 0. */
static void overlapped(MPI_Comm ic, MPI_Request *req, void (*start)(MPI_Comm, MPI_Request *)) {
    int token = 0;
    if (me == 0) {
        start(ic, req);
        token = 500 + wrank;
        CHECK_RC(MPI_Ssend(&token, 1, MPI_INT, lrank % rn, 9, ic));
    } else {
        /* Group 0's members lrank with lrank % rn == mine. */
        for (int i = lrank; i < rn; i += ln) {
            CHECK_RC(MPI_Recv(&token, 1, MPI_INT, i, 9, ic, MPI_STATUS_IGNORE));
            CHECK(token == 500 + remote(i));
        }
        start(ic, req);
    }
    CHECK_RC(MPI_Wait(req, MPI_STATUS_IGNORE));
}

static void start_ibarrier(MPI_Comm c, MPI_Request *r) { CHECK_RC(MPI_Ibarrier(c, r)); }
static MPI_Comm dup_out;
static void start_idup(MPI_Comm c, MPI_Request *r) { CHECK_RC(MPI_Comm_idup(c, &dup_out, r)); }

/* Group 1 enters the barrier first and must not leave before group 0 entered, which
 * waits for group 1's leader's message, sent after the leader's tests (so the leader's
 * tests must all fail; the other members' may run after the message). */
static void barrier_order(MPI_Comm ic) {
    MPI_Request req;
    int token = 0, flag = 1;
    if (me == 1) {
        CHECK_RC(MPI_Ibarrier(ic, &req));
        for (int k = 0; k < 20; k++) {
            CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag || lrank != 0);
        }
        if (lrank == 0)
            for (int j = 0; j < rn; j++) CHECK_RC(MPI_Send(&token, 1, MPI_INT, j, 8, ic));
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, 0, 8, ic, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Ibarrier(ic, &req));
        do CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE)); while (!flag);
    }
}

/* A communicator from idup, checked to be usable and a copy of `parent`. */
static void check_dup(MPI_Comm parent, MPI_Comm d) {
    int result = -1, inter = 0, n = 0, pn = 0, sum = 0, want = 0;
    CHECK_RC(MPI_Comm_compare(parent, d, &result));
    CHECK(result == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_test_inter(d, &inter));
    if (inter) {
        CHECK_RC(MPI_Comm_remote_size(d, &n));
        CHECK_RC(MPI_Comm_remote_size(parent, &pn));
        CHECK(n == pn);
        for (int j = 0; j < n; j++) want += remote(j);
    } else {
        CHECK_RC(MPI_Comm_size(d, &n));
        CHECK_RC(MPI_Comm_size(parent, &pn));
        CHECK(n == pn);
        CHECK_RC(MPI_Allreduce(&wrank, &want, 1, MPI_INT, MPI_SUM, parent));
    }
    CHECK_RC(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK(sum == want);
}

/* Messages on communicators with one tag, received in the other order: a receive on
 * one never takes the other's message (their context ids differ everywhere). */
static void distinct2(MPI_Comm a, int peer_a, MPI_Comm b, int peer_b, int sender) {
    int x = 0;
    if (sender) {
        x = 2;
        CHECK_RC(MPI_Send(&x, 1, MPI_INT, peer_b, 4, b));
        x = 1;
        CHECK_RC(MPI_Send(&x, 1, MPI_INT, peer_a, 4, a));
    } else {
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, peer_a, 4, a, MPI_STATUS_IGNORE));
        CHECK(x == 1);
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, peer_b, 4, b, MPI_STATUS_IGNORE));
        CHECK(x == 2);
    }
}

static void distinct(MPI_Comm a, MPI_Comm b, int peer, int sender) { distinct2(a, peer, b, peer, sender); }

static void idups_of_world(void) {
    MPI_Request req[3];
    MPI_Comm d[3], b;
    int flag = 0;
    /* Rank 0 idups then sends; rank 1 receives first, then idups. */
    int token = 0;
    if (wrank == 0) {
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &req[0]));
        CHECK_RC(MPI_Ssend(&token, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
    } else {
        if (wrank == 1) CHECK_RC(MPI_Recv(&token, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &req[0]));
    }
    CHECK_RC(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_WORLD, d[0]);
    /* Two more in flight, and a blocking dup of the same parent before the waits. */
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[1], &req[1]));
    CHECK_RC(MPI_Comm_idup(d[0], &d[2], &req[2]));
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    CHECK_RC(MPI_Waitall(2, &req[1], MPI_STATUSES_IGNORE));
    check_dup(MPI_COMM_WORLD, d[1]);
    check_dup(MPI_COMM_WORLD, d[2]);
    check_dup(MPI_COMM_WORLD, b);
    MPI_Comm all[5] = {MPI_COMM_WORLD, d[0], d[1], d[2], b};
    if (wrank < 2)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                if (i != j) distinct(all[i], all[j], 1 - wrank, wrank == 0);
    /* The error handler is inherited: this returns instead of aborting. */
    CHECK_CLASS(MPI_Send(&token, 1, MPI_INT, wsize, 0, d[1]), MPI_ERR_RANK);
    for (int i = 0; i < 3; i++) CHECK_RC(MPI_Comm_free(&d[i]));
    CHECK_RC(MPI_Comm_free(&b));
    /* Attributes are copied by their callbacks, as at MPI_Comm_dup. */
    int key_dup, key_none, value = 42, *got = NULL;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_none, NULL));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, key_dup, &value));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, key_none, &value));
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &req[0]));
    CHECK_RC(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_get_attr(d[0], key_dup, &got, &flag));
    CHECK(flag && got == &value);
    CHECK_RC(MPI_Comm_get_attr(d[0], key_none, &got, &flag));
    CHECK(!flag);
    CHECK_RC(MPI_Comm_free(&d[0]));
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, key_dup));
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, key_none));
    CHECK_RC(MPI_Comm_free_keyval(&key_dup));
    CHECK_RC(MPI_Comm_free_keyval(&key_none));
    /* Of a communicator of one: no message at all. */
    int one = 0;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_SELF, &d[0], &req[0]));
    do CHECK_RC(MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE)); while (!flag);
    CHECK_RC(MPI_Comm_size(d[0], &one));
    CHECK(one == 1);
    CHECK_RC(MPI_Comm_free(&d[0]));
}

static void rooted(MPI_Comm ic, int from, int root_local, MPI_Op polyop) {
    int root = root_arg(from, root_local), isroot = root == MPI_ROOT, receiving = me != from;
    MPI_Request req[4];
    int bc[5], g[2 * MAXP], sc[2 * MAXP] = {0}, got[2];
    long in[3], sum[3], pol[3];
    for (int k = 0; k < 5; k++) bc[k] = isroot ? 100 * from + k : -1;
    for (int k = 0; k < 3; k++) {
        in[k] = 7 * wrank + k;
        sum[k] = pol[k] = -1;
    }
    int mine[2] = {wrank, -wrank};
    for (int j = 0; j < 2 * MAXP; j++) g[j] = -1;
    for (int j = 0; j < rn && isroot; j++) {
        sc[2 * j] = 3 * remote(j);
        sc[2 * j + 1] = from;
    }
    got[0] = got[1] = -1;
    /* Four in flight at once. */
    CHECK_RC(MPI_Ibcast(bc, 5, MPI_INT, root, ic, &req[0]));
    CHECK_RC(MPI_Ireduce(in, sum, 3, MPI_LONG, MPI_SUM, root, ic, &req[1]));
    CHECK_RC(MPI_Igather(mine, 2, MPI_INT, g, 2, MPI_INT, root, ic, &req[2]));
    CHECK_RC(MPI_Iscatter(sc, 2, MPI_INT, got, 2, MPI_INT, root, ic, &req[3]));
    CHECK_RC(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Ireduce(in, pol, 3, MPI_LONG, polyop, root, ic, &req[0]));
    CHECK_RC(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    for (int k = 0; k < 5; k++) CHECK(bc[k] == (receiving || isroot ? 100 * from + k : -1));
    for (int k = 0; k < 3; k++) {
        long s = 0, p = remote(0) * 7 + k;
        for (int j = 0; j < rn; j++) s += remote(j) * 7 + k;
        for (int j = 1; j < rn; j++) p = 3 * p + remote(j) * 7 + k;
        CHECK(sum[k] == (isroot ? s : -1));
        CHECK(pol[k] == (isroot ? p : -1));
    }
    for (int j = 0; j < rn; j++) {
        CHECK(g[2 * j] == (isroot ? remote(j) : -1));
        CHECK(g[2 * j + 1] == (isroot ? -remote(j) : -1));
    }
    CHECK(got[0] == (receiving ? 3 * wrank : -1));
    CHECK(got[1] == (receiving ? from : -1));
}

static void all_to_all(MPI_Comm ic, MPI_Op polyop) {
    MPI_Request req[4];
    long in[2] = {wrank, 10 * wrank}, sum[2] = {-1, -1}, pol[2] = {-1, -1};
    int mine = 11 * wrank, ag[MAXP], out[2 * MAXP], back[2 * MAXP];
    for (int j = 0; j < rn; j++) {
        out[2 * j] = 1000 * wrank + remote(j);
        out[2 * j + 1] = j;
    }
    CHECK_RC(MPI_Iallreduce(in, sum, 2, MPI_LONG, MPI_SUM, ic, &req[0]));
    CHECK_RC(MPI_Iallgather(&mine, 1, MPI_INT, ag, 1, MPI_INT, ic, &req[1]));
    CHECK_RC(MPI_Ialltoall(out, 2, MPI_INT, back, 2, MPI_INT, ic, &req[2]));
    CHECK_RC(MPI_Iallreduce(in, pol, 2, MPI_LONG, polyop, ic, &req[3]));
    CHECK_RC(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    long s0 = 0, p0 = remote(0), p1 = 10 * remote(0);
    for (int j = 0; j < rn; j++) s0 += remote(j);
    for (int j = 1; j < rn; j++) {
        p0 = 3 * p0 + remote(j);
        p1 = 3 * p1 + 10 * remote(j);
    }
    CHECK(sum[0] == s0 && sum[1] == 10 * s0);
    CHECK(pol[0] == p0 && pol[1] == p1);
    for (int j = 0; j < rn; j++) {
        CHECK(ag[j] == 11 * remote(j));
        CHECK(back[2 * j] == 1000 * remote(j) + wrank);
        CHECK(back[2 * j + 1] == lrank);
    }
}

/* The v-forms: remote rank j's block has j + 1 ints (for alltoallv, the block for local
 * rank t has t + 1), blocks lie one int apart (the gaps must stay untouched). */
#define VN (MAXP * (MAXP + 2))
static int vin[VN], vout[VN], counts[MAXP], displs[MAXP], scounts[MAXP], sdispls[MAXP];

static void gapped(int n, int each_is_own) {
    for (int j = 0, at = 0; j < n; j++) {
        counts[j] = each_is_own ? lrank + 1 : j + 1;
        displs[j] = at;
        at += counts[j] + 1;
    }
}

static void vforms(MPI_Comm ic, int from, int root_local) {
    int root = root_arg(from, root_local), isroot = root == MPI_ROOT, receiving = me != from;
    MPI_Request req;
    /* Igatherv: the root gets remote rank j's j + 1 ints. */
    for (int k = 0; k < VN; k++) vout[k] = -1;
    for (int k = 0; k <= lrank; k++) vin[k] = 10 * wrank + k;
    gapped(rn, 0);
    CHECK_RC(MPI_Igatherv(vin, lrank + 1, MPI_INT, vout, counts, displs, MPI_INT, root, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < rn; j++) {
        for (int k = 0; k < counts[j]; k++) CHECK(vout[displs[j] + k] == (isroot ? 10 * remote(j) + k : -1));
        CHECK(vout[displs[j] + counts[j]] == -1);
    }
    /* Iscatterv: remote rank j gets the root's j + 1 ints. */
    for (int j = 0; j < rn; j++)
        for (int k = 0; k < counts[j]; k++) vin[displs[j] + k] = 100 * remote(j) + k + from;
    for (int k = 0; k < VN; k++) vout[k] = -1;
    CHECK_RC(MPI_Iscatterv(vin, counts, displs, MPI_INT, vout, lrank + 1, MPI_INT, root, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k <= lrank; k++) CHECK(vout[k] == (receiving ? 100 * wrank + k + from : -1));
    CHECK(vout[lrank + 1] == -1);
    /* Iallgatherv: everyone gets remote rank j's j + 1 ints. */
    for (int k = 0; k <= lrank; k++) vin[k] = 7 * wrank + k;
    for (int k = 0; k < VN; k++) vout[k] = -1;
    CHECK_RC(MPI_Iallgatherv(vin, lrank + 1, MPI_INT, vout, counts, displs, MPI_INT, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < rn; j++) {
        for (int k = 0; k < counts[j]; k++) CHECK(vout[displs[j] + k] == 7 * remote(j) + k);
        CHECK(vout[displs[j] + counts[j]] == -1);
    }
    /* Ialltoallv: the block for remote rank j has j + 1 ints; each received one
     * lrank + 1. */
    for (int j = 0; j < rn; j++) {
        scounts[j] = counts[j];
        sdispls[j] = displs[j];
        for (int k = 0; k < counts[j]; k++) vin[displs[j] + k] = 1000 * wrank + 10 * remote(j) + k;
    }
    gapped(rn, 1);
    for (int k = 0; k < VN; k++) vout[k] = -1;
    CHECK_RC(MPI_Ialltoallv(vin, scounts, sdispls, MPI_INT, vout, counts, displs, MPI_INT, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < rn; i++) {
        for (int k = 0; k <= lrank; k++) CHECK(vout[displs[i] + k] == 1000 * remote(i) + 10 * wrank + k);
        CHECK(vout[displs[i] + lrank + 1] == -1);
    }
    /* Ialltoallw: 2 ints to remote rank j as MPI_INT, received as one pair (two ints),
     * blocks one int apart (displacements in bytes). */
    MPI_Datatype pair, ints[MAXP], pairs[MAXP];
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    for (int j = 0; j < rn; j++) {
        vin[2 * j] = 1000 * wrank + remote(j);
        vin[2 * j + 1] = -wrank;
        scounts[j] = 2;
        sdispls[j] = 2 * j * (int)sizeof(int);
        ints[j] = MPI_INT;
        counts[j] = 1;
        displs[j] = 3 * j * (int)sizeof(int);
        pairs[j] = pair;
    }
    for (int k = 0; k < VN; k++) vout[k] = -1;
    CHECK_RC(MPI_Ialltoallw(vin, scounts, sdispls, ints, vout, counts, displs, pairs, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < rn; i++) {
        CHECK(vout[3 * i] == 1000 * remote(i) + wrank);
        CHECK(vout[3 * i + 1] == -remote(i));
        CHECK(vout[3 * i + 2] == -1);
    }
    CHECK_RC(MPI_Type_free(&pair));
    gapped(rn, 1);
    for (int j = 0; j < rn; j++) scounts[j] = counts[j];
    /* Errors, the same everywhere: nothing starts. */
    scounts[0] = -1;
    CHECK_CLASS(MPI_Ialltoallv(vin, scounts, sdispls, MPI_INT, vout, counts, displs, MPI_INT, ic, &req),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Igatherv(vin, 1, MPI_INT, vout, counts, displs, MPI_INT, 1000, ic, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iallgatherv(MPI_IN_PLACE, 1, MPI_INT, vout, counts, displs, MPI_INT, ic, &req),
                MPI_ERR_BUFFER);
}

/* As intercoll.c's blocking ones: the block form, each group's input ln * rn longs,
 * local rank l getting rn elements of the remote group's sum from l * rn; the varied
 * form, 12 elements cut unevenly over the local group, with the user op. Both in
 * flight at once. */
static void reduce_scatters(MPI_Comm ic, MPI_Op polyop) {
    static long in[MAXP * MAXP], in2[12], out[MAXP + 1], out2[13];
    MPI_Request req[2];
    int cnt[MAXP], first = 0;
    for (int e = 0; e < ln * rn; e++) in[e] = wrank + 3L * e;
    for (int i = 0; i <= rn; i++) out[i] = -1;
    for (int l = 0; l < ln; l++) {
        cnt[l] = 12 / ln + (l < 12 % ln);
        if (l < lrank) first += cnt[l];
    }
    for (int e = 0; e < 12; e++) in2[e] = wrank + e;
    for (int i = 0; i < 13; i++) out2[i] = -1;
    CHECK_RC(MPI_Ireduce_scatter_block(in, out, rn, MPI_LONG, MPI_SUM, ic, &req[0]));
    CHECK_RC(MPI_Ireduce_scatter(in2, out2, cnt, MPI_LONG, polyop, ic, &req[1]));
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < rn; k++) {
        long want = 0;
        for (int j = 0; j < rn; j++) want += remote(j) + 3L * (lrank * rn + k);
        CHECK(out[k] == want);
    }
    CHECK(out[rn] == -1);
    for (int k = 0; k < cnt[lrank]; k++) {
        long want = remote(0) + first + k;
        for (int j = 1; j < rn; j++) want = 3 * want + remote(j) + first + k;
        CHECK(out2[k] == want);
    }
    CHECK(out2[cnt[lrank]] == -1);
}

static void errors(MPI_Comm ic) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Datatype types[MAXP];
    for (int j = 0; j < MAXP; j++) types[j] = MPI_INT;
    int a[4] = {0}, b[4 * MAXP];
    CHECK_CLASS(MPI_Ibcast(a, 1, MPI_INT, 1000, ic, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ibcast(a, 1, MPI_INT, -7, ic, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iallreduce(MPI_IN_PLACE, a, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ireduce(a, b, 1, MPI_INT, MPI_OP_NULL, me == 0 && lrank == 0 ? MPI_ROOT : me == 0 ? MPI_PROC_NULL : 0,
                            ic, &req),
                MPI_ERR_OP);
    CHECK_CLASS(MPI_Ialltoall(a, -1, MPI_INT, b, 1, MPI_INT, ic, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iallgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, ic, &req), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ibarrier(ic, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ireduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ialltoallw(MPI_IN_PLACE, scounts, sdispls, types, b, scounts, sdispls, types, ic, &req),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Comm_idup(MPI_COMM_NULL, &dup_out, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_idup(ic, NULL, &req), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL);
    /* The root expects 3 ints, the other group reduces 2: MPI_ERR_TRUNCATE at the root
     * alone, when its request completes. */
    int root = me == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK_RC(MPI_Ireduce(a, b, root == MPI_ROOT ? 3 : 2, MPI_INT, MPI_SUM, root, ic, &req));
    CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), root == MPI_ROOT ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    /* Still in step: a correct call gets its data. */
    a[0] = wrank;
    CHECK_RC(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_MAX, ic, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(b[0] == remote(rn - 1));
}

static void run(int kind, MPI_Op polyop) {
    make_split(kind);
    MPI_Comm local, ic, wd;
    MPI_Request req;
    /* An idup of the world in flight across the blocking creations (whose waits drive
     * it): its id must differ from theirs. */
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &wd, &req));
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me, wrank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, members[other][0], 70 + kind, &ic));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    CHECK_RC(MPI_Comm_size(ic, &ln));
    CHECK_RC(MPI_Comm_remote_size(ic, &rn));
    /* World ranks members[0][0] and members[1][0] are each other's remote rank 0. */
    if (lrank == 0) {
        int peer = members[other][0];
        distinct2(wd, peer, ic, 0, me == 0);
        distinct2(ic, 0, wd, peer, me == 0);
    }
    if (ln > 1 && lrank < 2) {
        distinct2(wd, members[me][1 - lrank], local, 1 - lrank, lrank == 0);
        distinct2(local, 1 - lrank, wd, members[me][1 - lrank], lrank == 0);
    }
    check_dup(MPI_COMM_WORLD, wd);
    CHECK_RC(MPI_Comm_free(&wd));
    overlapped(ic, &req, start_ibarrier);
    barrier_order(ic);
    overlapped(ic, &req, start_idup);
    MPI_Comm icd = dup_out;
    check_dup(ic, icd);
    overlapped(icd, &req, start_idup);
    MPI_Comm icdd = dup_out;
    check_dup(ic, icdd);
    CHECK_RC(MPI_Comm_idup(local, &dup_out, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_free(&dup_out));
    for (int from = 0; from < 2; from++) {
        rooted(ic, from, from == 0 ? nmem[0] - 1 : 0, polyop);
        rooted(icd, from, 0, polyop);
        vforms(ic, from, from == 0 ? 0 : nmem[1] - 1);
    }
    all_to_all(ic, polyop);
    all_to_all(icdd, polyop);
    reduce_scatters(ic, polyop);
    errors(ic);
    CHECK_RC(MPI_Comm_free(&icdd));
    CHECK_RC(MPI_Comm_free(&icd));
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
    CHECK_RC(MPI_Op_create(poly, 0, &polyop));
    idups_of_world();
    for (int kind = 0; kind < 3; kind++) run(kind, polyop);
    CHECK_RC(MPI_Op_free(&polyop));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok icoll_inter\n");
    MPI_Finalize();
    return 0;
}
