/* MPI_Comm_split and MPI_Comm_create of an intercommunicator (MPI-3.1 6.4.2), over
 * uneven groups (the first (n + 1) / 3 world ranks against the rest): the new
 * intercommunicators' groups and orders, messages both ways across each and an
 * allreduce and allgather on each, against a sequential computation of what MPI
 * specifies; MPI_COMM_NULL for MPI_UNDEFINED, for a colour only one side has, for a
 * process outside its group and for an empty group; errors; freeing, and the old
 * intercommunicator still works. Needs >= 2 processes. */
#include <string.h>
#include "test_check.h"

#define MAXP 64

static int wrank, wsize, me, lrank;
static int group_of[MAXP], members[2][MAXP], n[2];

/* The world ranks of `g`'s first `k` members, in order. */
static void world_ranks(MPI_Group g, int k, int *out) {
    MPI_Group world;
    int ranks[MAXP];
    for (int i = 0; i < k; i++) ranks[i] = i;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_translate_ranks(g, k, ranks, world, out));
    CHECK_RC(MPI_Group_free(&world));
}

/* Checks that `nc` is the intercommunicator between `local` and `remote` (world ranks,
 * in rank order), or MPI_COMM_NULL if either is empty or this process is not in
 * `local`; then uses and frees it. */
static void check_new(MPI_Comm nc, const int *local, int ln, const int *remote, int rn, int round) {
    int mine = -1;
    for (int i = 0; i < ln; i++)
        if (local[i] == wrank) mine = i;
    if (mine < 0 || ln == 0 || rn == 0) {
        CHECK(nc == MPI_COMM_NULL);
        return;
    }
    CHECK(nc != MPI_COMM_NULL);
    int flag = -1, k = -1, got[MAXP];
    MPI_Group g;
    CHECK_RC(MPI_Comm_test_inter(nc, &flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Comm_size(nc, &k));
    CHECK(k == ln);
    CHECK_RC(MPI_Comm_rank(nc, &k));
    CHECK(k == mine);
    CHECK_RC(MPI_Comm_remote_size(nc, &k));
    CHECK(k == rn);
    CHECK_RC(MPI_Comm_remote_group(nc, &g));
    world_ranks(g, rn, got);
    CHECK(memcmp(got, remote, rn * sizeof(int)) == 0);
    CHECK_RC(MPI_Group_free(&g));
    CHECK_RC(MPI_Comm_group(nc, &g));
    world_ranks(g, ln, got);
    CHECK(memcmp(got, local, ln * sizeof(int)) == 0);
    CHECK_RC(MPI_Group_free(&g));
    /* Every member to every remote member and back: payloads name both ends. */
    int out[MAXP][2], in[MAXP][2];
    MPI_Request req[MAXP];
    for (int j = 0; j < rn; j++) {
        out[j][0] = wrank;
        out[j][1] = j + 10 * round;
        CHECK_RC(MPI_Isend(out[j], 2, MPI_INT, j, 3, nc, &req[j]));
    }
    for (int j = 0; j < rn; j++) {
        MPI_Status st;
        CHECK_RC(MPI_Recv(in[j], 2, MPI_INT, j, 3, nc, &st));
        CHECK(st.MPI_SOURCE == j && in[j][0] == remote[j] && in[j][1] == mine + 10 * round);
    }
    CHECK_RC(MPI_Waitall(rn, req, MPI_STATUSES_IGNORE));
    /* Collectives: the remote group's sum, and its members in its rank order. */
    long x = wrank + round, sum = -1, want = 0;
    for (int j = 0; j < rn; j++) want += remote[j] + round;
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, nc));
    CHECK(sum == want);
    int all[MAXP];
    CHECK_RC(MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, nc));
    CHECK(memcmp(all, remote, rn * sizeof(int)) == 0);
    CHECK_RC(MPI_Comm_free(&nc));
    CHECK(nc == MPI_COMM_NULL);
}

/* The members of group `gr` with colour[] == c, ordered by key[] then local rank. */
static int select_sorted(int gr, const int *colour, const int *key, int c, int *out) {
    int k = 0;
    for (int i = 0; i < n[gr]; i++) {
        int w = members[gr][i];
        if (colour[w] != c) continue;
        int at = k++;
        while (at > 0 && key[out[at - 1]] > key[w]) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = w;
    }
    return k;
}

static void splits(MPI_Comm ic, int round) {
    int colour[MAXP], key[MAXP];
    for (int w = 0; w < wsize; w++) {
        /* Group 0: colours 0, 0, 1, 1, ...; group 1: 0, 1, 2 (2 has no partner). The last
         * rank is MPI_UNDEFINED; keys reverse group 0's order and tie in group 1. */
        colour[w] = group_of[w] == 0 ? w / 2 % 2 : w % 3;
        if (w == wsize - 1) colour[w] = MPI_UNDEFINED;
        key[w] = group_of[w] == 0 ? -w : (w + round) % 2;
    }
    MPI_Comm nc;
    CHECK_RC(MPI_Comm_split(ic, colour[wrank], key[wrank], &nc));
    int local[MAXP], remote[MAXP], ln = 0, rn = 0;
    if (colour[wrank] != MPI_UNDEFINED) {
        ln = select_sorted(me, colour, key, colour[wrank], local);
        rn = select_sorted(1 - me, colour, key, colour[wrank], remote);
    }
    check_new(nc, local, ln, remote, rn, round);
}

static void creates(MPI_Comm ic) {
    /* Group 0 passes its even local ranks in reverse order, group 1 all but its first. */
    MPI_Group lg, sub;
    int ranks[MAXP], k = 0, local[MAXP], remote[MAXP], ln = 0, rn = 0;
    CHECK_RC(MPI_Comm_group(ic, &lg));
    if (me == 0)
        for (int i = n[0] - 1; i >= 0; i--) {
            if (i % 2 == 0) ranks[k++] = i;
        }
    else
        for (int i = 1; i < n[1]; i++) ranks[k++] = i;
    CHECK_RC(MPI_Group_incl(lg, k, ranks, &sub));
    int *side[2] = {me == 0 ? local : remote, me == 1 ? local : remote}, *len[2] = {me == 0 ? &ln : &rn, me == 1 ? &ln : &rn};
    for (int i = n[0] - 1; i >= 0; i--)
        if (i % 2 == 0) side[0][(*len[0])++] = members[0][i];
    for (int i = 1; i < n[1]; i++) side[1][(*len[1])++] = members[1][i];
    MPI_Comm nc;
    CHECK_RC(MPI_Comm_create(ic, sub, &nc));
    check_new(nc, local, ln, remote, rn, 5);
    /* Group 1 passes the empty group: no one gets a communicator. */
    CHECK_RC(MPI_Comm_create(ic, me == 1 ? MPI_GROUP_EMPTY : sub, &nc));
    CHECK(nc == MPI_COMM_NULL);
    /* The whole local group on both sides: congruent groups. */
    CHECK_RC(MPI_Comm_create(ic, lg, &nc));
    check_new(nc, members[me], n[me], members[1 - me], n[1 - me], 6);
    /* Errors, passed by every process: a group that is not local, a bad colour. */
    MPI_Group rg;
    CHECK_RC(MPI_Comm_remote_group(ic, &rg));
    nc = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_create(ic, rg, &nc), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create(ic, MPI_GROUP_NULL, &nc), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_split(ic, -2, 0, &nc), MPI_ERR_ARG);
    CHECK(nc == MPI_COMM_NULL);
    CHECK_RC(MPI_Group_free(&rg));
    CHECK_RC(MPI_Group_free(&sub));
    CHECK_RC(MPI_Group_free(&lg));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= MAXP);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    n[0] = n[1] = 0;
    for (int w = 0; w < wsize; w++) {
        group_of[w] = w < (wsize + 1) / 3 ? 0 : 1;
        members[group_of[w]][n[group_of[w]]++] = w;
    }
    me = group_of[wrank];
    MPI_Comm local, ic;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me, wrank, &local));
    CHECK_RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, members[1 - me][0], 9, &ic));
    CHECK_RC(MPI_Comm_rank(ic, &lrank));
    for (int round = 0; round < 3; round++) splits(ic, round);
    creates(ic);
    /* The old intercommunicator still works after all that. */
    long x = wrank, sum = -1, want = 0;
    for (int j = 0; j < n[1 - me]; j++) want += members[1 - me][j];
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, ic));
    CHECK(sum == want);
    CHECK_RC(MPI_Comm_free(&ic));
    CHECK_RC(MPI_Comm_free(&local));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok intersplit\n");
    MPI_Finalize();
    return 0;
}
