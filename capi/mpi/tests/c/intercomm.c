/* Intercommunicators: creation between the two groups of a split of the world (evens
 * and odds with a leader that is not local rank 0; the last rank against the rest),
 * their queries, point-to-point across the groups (statuses name remote ranks),
 * merge in both orders, dup and free, the intercommunicator collectives against a
 * sequential computation, the calls that refuse an intercommunicator, the errors of
 * MPI_Intercomm_create, and 50 create/free rounds. Needs >= 2 processes. */
#include <string.h>
#include "test_check.h"

#define MAXP 64

static int wrank, wsize;

/* One split of the world into two groups: colour of each world rank, and per colour
 * the members' world ranks in order. */
struct split {
    int colour[MAXP];
    int members[2][MAXP];
    int n[2];
};

static void make_split(struct split *s, int last_alone) {
    s->n[0] = s->n[1] = 0;
    for (int r = 0; r < wsize; r++) {
        int c = last_alone ? (r == wsize - 1 ? 0 : 1) : r % 2;
        s->colour[r] = c;
        s->members[c][s->n[c]++] = r;
    }
}

/* The intercommunicator of `s` for this process, with local leader `leader_last`
 * ? the group's last member : its first; `local` is the local group's communicator. */
static MPI_Comm create(const struct split *s, int leader_last, int tag, MPI_Comm *local) {
    int me = s->colour[wrank], other = 1 - me;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me, wrank, local));
    int lleader = leader_last ? s->n[me] - 1 : 0;
    int rleader = s->members[other][leader_last ? s->n[other] - 1 : 0];
    MPI_Comm ic;
    CHECK_RC(MPI_Intercomm_create(*local, lleader, MPI_COMM_WORLD, rleader, tag, &ic));
    return ic;
}

/* The world ranks of `g`'s members, in order. */
static void world_ranks(MPI_Group g, int n, int *out) {
    MPI_Group world;
    int ranks[MAXP];
    for (int i = 0; i < n; i++) ranks[i] = i;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_translate_ranks(g, n, ranks, world, out));
    CHECK_RC(MPI_Group_free(&world));
}

static void queries(const struct split *s, MPI_Comm ic, MPI_Comm local) {
    int me = s->colour[wrank], other = 1 - me, flag = -1, n, r, got[MAXP], cmp;
    MPI_Group g;
    CHECK_RC(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_size(ic, &n));
    CHECK(n == s->n[me]);
    CHECK_RC(MPI_Comm_rank(ic, &r));
    CHECK(s->members[me][r] == wrank);
    CHECK_RC(MPI_Comm_remote_size(ic, &n));
    CHECK(n == s->n[other]);
    CHECK_RC(MPI_Comm_remote_group(ic, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK(n == s->n[other]);
    world_ranks(g, n, got);
    CHECK(memcmp(got, s->members[other], n * sizeof(int)) == 0);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Comm_group(ic, &g));
    world_ranks(g, s->n[me], got);
    CHECK(memcmp(got, s->members[me], s->n[me] * sizeof(int)) == 0);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Comm_compare(ic, ic, &cmp));
    CHECK(cmp == MPI_IDENT);
    CHECK_RC(MPI_Comm_compare(ic, local, &cmp));
    CHECK(cmp == MPI_UNEQUAL);
    CHECK_RC(MPI_Comm_compare(ic, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_UNEQUAL);
}

/* Every process sends to every remote process and receives from every one: blocking,
 * nonblocking, synchronous, persistent, ANY_SOURCE, probes and matched probes,
 * sendrecv. Payloads name the sender (world rank, local rank) and the receiver. */
static void point_to_point(const struct split *s, MPI_Comm ic) {
    int me = s->colour[wrank], other = 1 - me, lrank, rn = s->n[other];
    int out[MAXP][3], in[MAXP][3], seen[MAXP];
    MPI_Request req[2 * MAXP];
    MPI_Status st[2 * MAXP], one;
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    for (int j = 0; j < rn; j++) {
        out[j][0] = wrank;
        out[j][1] = lrank;
        out[j][2] = j;
    }
    /* Isend (fast path) + blocking Recv by source. */
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Isend(out[j], 3, MPI_INT, j, 100 + lrank, ic, &req[j]));
    for (int j = 0; j < rn; j++) {
        CHECK_RC(MPI_Recv(in[j], 3, MPI_INT, j, 100 + j, ic, &one));
        CHECK(one.MPI_SOURCE == j && one.MPI_TAG == 100 + j);
        CHECK(in[j][0] == s->members[other][j] && in[j][1] == j && in[j][2] == lrank);
    }
    CHECK_RC(MPI_Waitall(rn, req, MPI_STATUSES_IGNORE));
    /* Irecv by source + Ssend (general path), statuses from Waitall. */
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Irecv(in[j], 3, MPI_INT, j, 7, ic, &req[j]));
    for (int j = 0; j < rn; j++) {
        int to = (j + lrank) % rn; /* staggered, so that no one waits on one receiver */
        CHECK_RC(MPI_Ssend(out[to], 3, MPI_INT, to, 7, ic));
    }
    CHECK_RC(MPI_Waitall(rn, req, st));
    for (int j = 0; j < rn; j++) {
        CHECK(st[j].MPI_SOURCE == j && st[j].MPI_TAG == 7);
        CHECK(in[j][0] == s->members[other][j] && in[j][1] == j && in[j][2] == lrank);
    }
    /* ANY_SOURCE and ANY_TAG, blocking: each remote process once. */
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Isend(out[j], 3, MPI_INT, j, 8, ic, &req[j]));
    memset(seen, 0, sizeof seen);
    for (int k = 0; k < rn; k++) {
        int m[3];
        CHECK_RC(MPI_Recv(m, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &one));
        CHECK(one.MPI_SOURCE >= 0 && one.MPI_SOURCE < rn && one.MPI_TAG == 8);
        CHECK(!seen[one.MPI_SOURCE]);
        seen[one.MPI_SOURCE] = 1;
        CHECK(m[0] == s->members[other][one.MPI_SOURCE] && m[1] == one.MPI_SOURCE && m[2] == lrank);
    }
    CHECK_RC(MPI_Waitall(rn, req, MPI_STATUSES_IGNORE));
    /* No one sends the next messages before every ANY_TAG receive above is done: this
     * fails if the barrier lets a process out early. */
    CHECK_RC(MPI_Barrier(ic));
    /* ANY_SOURCE nonblocking receives, then probes and matched probes. */
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Irecv(in[j], 3, MPI_INT, MPI_ANY_SOURCE, 9, ic, &req[j]));
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Send(out[j], 3, MPI_INT, j, 9, ic));
    CHECK_RC(MPI_Waitall(rn, req, st));
    memset(seen, 0, sizeof seen);
    for (int j = 0; j < rn; j++) {
        int src = st[j].MPI_SOURCE;
        CHECK(src >= 0 && src < rn && !seen[src]);
        seen[src] = 1;
        CHECK(in[j][0] == s->members[other][src] && in[j][1] == src);
    }
    for (int j = 0; j < rn; j++) CHECK_RC(MPI_Isend(out[j], 3, MPI_INT, j, 10 + (j % 2), ic, &req[j]));
    for (int k = 0; k < rn; k++) {
        int m[3], count = -1;
        MPI_Message msg;
        if (k % 2 == 0) {
            CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &one));
            CHECK(one.MPI_SOURCE >= 0 && one.MPI_SOURCE < rn);
            CHECK_RC(MPI_Get_count(&one, MPI_INT, &count));
            CHECK(count == 3);
            CHECK_RC(MPI_Recv(m, 3, MPI_INT, one.MPI_SOURCE, one.MPI_TAG, ic, &one));
        } else {
            CHECK_RC(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &msg, &one));
            CHECK_RC(MPI_Mrecv(m, 3, MPI_INT, &msg, &one));
        }
        CHECK(one.MPI_TAG == 10 + (lrank % 2));
        CHECK(m[0] == s->members[other][one.MPI_SOURCE] && m[1] == one.MPI_SOURCE && m[2] == lrank);
    }
    CHECK_RC(MPI_Waitall(rn, req, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Barrier(ic));
    /* Persistent requests, started twice. */
    for (int j = 0; j < rn; j++) {
        CHECK_RC(MPI_Recv_init(in[j], 3, MPI_INT, j, 11, ic, &req[j]));
        CHECK_RC(MPI_Send_init(out[j], 3, MPI_INT, j, 11, ic, &req[rn + j]));
    }
    for (int round = 0; round < 2; round++) {
        memset(in, 0, sizeof in);
        CHECK_RC(MPI_Startall(2 * rn, req));
        CHECK_RC(MPI_Waitall(2 * rn, req, st));
        for (int j = 0; j < rn; j++) {
            CHECK(st[j].MPI_SOURCE == j);
            CHECK(in[j][0] == s->members[other][j] && in[j][2] == lrank);
        }
    }
    for (int j = 0; j < 2 * rn; j++) CHECK_RC(MPI_Request_free(&req[j]));
    /* Sendrecv with the remote process of the same rank, if any; a typed (vector)
     * message on the general path. */
    if (lrank < rn) {
        int mine[4] = {wrank, -1, lrank, -1}, theirs[4] = {-9, -9, -9, -9};
        MPI_Datatype every_other;
        CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
        CHECK_RC(MPI_Type_commit(&every_other));
        CHECK_RC(MPI_Sendrecv(mine, 1, every_other, lrank, 12, theirs, 1, every_other, lrank, 12, ic, &one));
        CHECK(one.MPI_SOURCE == lrank);
        CHECK(theirs[0] == s->members[other][lrank] && theirs[2] == lrank && theirs[1] == -9);
        CHECK_RC(MPI_Type_free(&every_other));
    }
    /* Out-of-range ranks are the remote group's: rn is one too far. */
    CHECK_CLASS(MPI_Send(out[0], 3, MPI_INT, rn, 1, ic), MPI_ERR_RANK);
    CHECK_RC(MPI_Send(out[0], 3, MPI_INT, MPI_PROC_NULL, 1, ic));
}

/* MPI_Intercomm_merge with the given high flags: checks the merged ranks and an
 * allreduce and an allgather on it. */
static void merge(const struct split *s, MPI_Comm ic, int high_of_colour[2]) {
    int me = s->colour[wrank], other = 1 - me, lrank, mrank, msize;
    MPI_Comm merged;
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    CHECK_RC(MPI_Intercomm_merge(ic, high_of_colour[me], &merged));
    int flag = -1;
    CHECK_RC(MPI_Comm_test_inter(merged, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_size(merged, &msize));
    CHECK(msize == wsize);
    /* Which group comes first: the low one, or the one whose first member (local
     * rank 0, the leader here) has the lower world rank. */
    int first;
    if (high_of_colour[0] != high_of_colour[1]) first = high_of_colour[0] ? 1 : 0;
    else first = s->members[0][0] < s->members[1][0] ? 0 : 1;
    CHECK_RC(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == (me == first ? lrank : s->n[other] + lrank));
    int order[MAXP], expect[MAXP];
    CHECK_RC(MPI_Allgather(&wrank, 1, MPI_INT, order, 1, MPI_INT, merged));
    memcpy(expect, s->members[first], s->n[first] * sizeof(int));
    memcpy(expect + s->n[first], s->members[1 - first], s->n[1 - first] * sizeof(int));
    CHECK(memcmp(order, expect, wsize * sizeof(int)) == 0);
    long sum = 0, weighted = (long)mrank * (wrank + 1), all = 0;
    CHECK_RC(MPI_Allreduce(&weighted, &sum, 1, MPI_LONG, MPI_SUM, merged));
    for (int r = 0; r < wsize; r++) all += (long)r * (expect[r] + 1);
    CHECK(sum == all);
    CHECK_RC(MPI_Comm_free(&merged));
    CHECK(merged == MPI_COMM_NULL);
}

/* Barrier, Bcast both ways, Allreduce, Allgather on `ic`, against sequential results. */
static void collectives(const struct split *s, MPI_Comm ic, int round) {
    int me = s->colour[wrank], other = 1 - me, lrank, rn = s->n[other];
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    CHECK_RC(MPI_Barrier(ic));
    /* Bcast from the last member of colour 0, then from the first of colour 1. */
    for (int from = 0; from < 2; from++) {
        int root_local = from == 0 ? s->n[0] - 1 : 0;
        int buf[5], root;
        for (int k = 0; k < 5; k++) buf[k] = -1;
        if (me == from) {
            root = lrank == root_local ? MPI_ROOT : MPI_PROC_NULL;
            if (root == MPI_ROOT)
                for (int k = 0; k < 5; k++) buf[k] = 1000 * round + 10 * from + k;
        } else {
            root = root_local;
        }
        CHECK_RC(MPI_Bcast(buf, 5, MPI_INT, root, ic));
        for (int k = 0; k < 5; k++) {
            if (me != from) CHECK(buf[k] == 1000 * round + 10 * from + k);
            else if (root == MPI_PROC_NULL) CHECK(buf[k] == -1);
        }
    }
    /* Allreduce: each group gets the other group's reduction. */
    long in[3] = {wrank, (long)wrank * wrank, 1 + round}, outl[3] = {0, 0, 0}, want[3] = {0, 0, 0};
    for (int j = 0; j < rn; j++) {
        long w = s->members[other][j];
        want[0] += w;
        want[1] += w * w;
        want[2] += 1 + round;
    }
    CHECK_RC(MPI_Allreduce(in, outl, 3, MPI_LONG, MPI_SUM, ic));
    CHECK(memcmp(outl, want, sizeof want) == 0);
    double d = wrank + 0.5, dmax = -1, dwant = -1;
    for (int j = 0; j < rn; j++)
        if (s->members[other][j] + 0.5 > dwant) dwant = s->members[other][j] + 0.5;
    CHECK_RC(MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, ic));
    CHECK(dmax == dwant);
    /* Allgather: the other group's blocks in its rank order. */
    int mine[2] = {wrank, 10 * wrank + round}, all[2 * MAXP];
    CHECK_RC(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, ic));
    for (int j = 0; j < rn; j++)
        CHECK(all[2 * j] == s->members[other][j] && all[2 * j + 1] == 10 * s->members[other][j] + round);
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

/* Every call that takes intracommunicators only refuses `ic` with MPI_ERR_COMM. */
static void refused(MPI_Comm ic) {
    int a[MAXP] = {0}, b[MAXP] = {0};
    MPI_Comm nc;
    MPI_Request req;
    MPI_Win win;
    MPI_Op op;
    MPI_Group g;
    int dims[1] = {1}, periods[1] = {0};
    /* The other blocking collectives work (tests/c/intercoll.c), but the scans. */
    CHECK_CLASS(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    /* The other nonblocking collectives work (tests/c/icoll_inter.c), but the scans. */
    CHECK_CLASS(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Win_create(a, sizeof a, 1, MPI_INFO_NULL, ic, &win), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Win_create_dynamic(MPI_INFO_NULL, ic, &win), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Cart_create(ic, 1, dims, periods, 0, &nc), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, ic), MPI_ERR_COMM);
    /* MPI_Comm_split and MPI_Comm_create take one (tests/c/intersplit.c). */
    CHECK_RC(MPI_Comm_group(ic, &g));
    CHECK_CLASS(MPI_Comm_create_group(ic, g, 0, &nc), MPI_ERR_COMM);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_CLASS(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 0, &nc), MPI_ERR_COMM);
    /* A user op works too (each group gets the other's maximum). */
    a[0] = wrank;
    CHECK_RC(MPI_Op_create(user_max, 1, &op));
    CHECK_RC(MPI_Allreduce(a, b, 1, MPI_INT, op, ic));
    CHECK_RC(MPI_Op_free(&op));
    int rn, rmax = -1, rr[MAXP];
    MPI_Group rg;
    CHECK_RC(MPI_Comm_remote_size(ic, &rn));
    CHECK_RC(MPI_Comm_remote_group(ic, &rg));
    world_ranks(rg, rn, rr);
    CHECK_RC(MPI_Group_free(&rg));
    for (int j = 0; j < rn; j++)
        if (rr[j] > rmax) rmax = rr[j];
    CHECK(b[0] == rmax);
    CHECK_CLASS(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER);
    /* And the intercommunicator calls refuse an intracommunicator. */
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &a[0]), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &nc), MPI_ERR_COMM);
}

/* The errors of MPI_Intercomm_create, each on every member of a group alike, with no
 * message left behind: afterwards the groups still create and use one. */
static void creation_errors(const struct split *s, MPI_Comm local) {
    int me = s->colour[wrank], other = 1 - me, lsize, lrank;
    int rleader = s->members[other][0];
    MPI_Comm nc = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_size(local, &lsize));
    CHECK_RC(MPI_Comm_rank(local, &lrank));
    CHECK_CLASS(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rleader, -5, &nc), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wsize, 3, &nc), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, rleader, 3, &nc), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(local, 0, MPI_COMM_NULL, rleader, 3, &nc), MPI_ERR_COMM);
    if (s->n[0] > 1 || s->n[1] > 1) /* members that disagree on the leader (in either group) */
        CHECK_CLASS(MPI_Intercomm_create(local, lrank, MPI_COMM_WORLD, rleader, 3, &nc), MPI_ERR_ARG);
    /* One group's members disagree on the leader, the other group is right: both
     * groups get the error (none waits for a leader), and nothing is left queued. */
    int odd = s->n[0] > 1 ? 0 : 1;
    if (s->n[odd] > 1) {
        int lleader = me == odd && lrank == lsize - 1 ? 1 : 0;
        CHECK_CLASS(MPI_Intercomm_create(local, lleader, MPI_COMM_WORLD, rleader, 4, &nc), MPI_ERR_ARG);
    }
    CHECK(nc == MPI_COMM_NULL);
    /* Overlapping groups: the remote leader is in the local group. */
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 1, 3, &nc), MPI_ERR_COMM);
    CHECK(nc == MPI_COMM_NULL);
}

static void run(int last_alone) {
    struct split s;
    make_split(&s, last_alone);
    int me = s.colour[wrank], other = 1 - me;
    MPI_Comm local, ic, dup;
    ic = create(&s, !last_alone, 40 + last_alone, &local);
    queries(&s, ic, local);
    point_to_point(&s, ic);
    collectives(&s, ic, 0);
    int highs[4][2] = {{0, 1}, {1, 0}, {0, 0}, {1, 1}};
    for (int h = 0; h < 4; h++) merge(&s, ic, highs[h]);
    /* Dup: congruent, same groups, and its messages apart from the original's. */
    int cmp, lrank;
    CHECK_RC(MPI_Comm_dup(ic, &dup));
    CHECK_RC(MPI_Comm_compare(ic, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    queries(&s, dup, local);
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    if (lrank == 0) {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request r[2];
        CHECK_RC(MPI_Isend(&a, 1, MPI_INT, 0, 5, dup, &r[0]));
        CHECK_RC(MPI_Isend(&b, 1, MPI_INT, 0, 5, ic, &r[1]));
        CHECK_RC(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, 0, 5, dup, MPI_STATUS_IGNORE));
        CHECK(x == 1 && y == 2);
        CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    }
    collectives(&s, dup, 1);
    point_to_point(&s, dup);
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
    refused(ic);
    creation_errors(&s, local);
    CHECK_RC(MPI_Comm_free(&ic));
    /* 50 rounds of create, use, dup, free: nothing leaks (the heap would run out). */
    for (int round = 0; round < 50; round++) {
        int lleader = round % s.n[me], rleader = s.members[other][round % s.n[other]];
        long x = wrank, sum = 0, want = 0;
        CHECK_RC(MPI_Intercomm_create(local, lleader, MPI_COMM_WORLD, rleader, round, &ic));
        if (round % 5 == 0) {
            CHECK_RC(MPI_Comm_dup(ic, &dup));
            CHECK_RC(MPI_Comm_free(&ic));
            ic = dup;
        }
        CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, ic));
        for (int j = 0; j < s.n[other]; j++) want += s.members[other][j];
        CHECK(sum == want);
        CHECK_RC(MPI_Comm_free(&ic));
    }
    CHECK_RC(MPI_Comm_free(&local));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= MAXP);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    run(0);
    run(1);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok intercomm\n");
    MPI_Finalize();
    return 0;
}
