/* MPI_Comm_create_group: even and odd ranks create at once with one tag while a user
 * message with that tag waits on MPI_COMM_WORLD; a reversed group gives reversed ranks,
 * also over a parent that is not the world; overlapping groups create in turn with
 * different tags, and their messages (and those of a dup made while one lives) never
 * mix; the same group again and again; a group of one; far more creations and frees
 * than the heap holds communicators at once; the error classes under
 * MPI_ERRORS_RETURN, with a working creation after each. Every expected value is
 * computed here from the rank and size alone. */
#include "test_check.h"

static int rank, size;

/* The group of `n` world ranks `ranks`. */
static MPI_Group group_of(int n, const int *ranks) {
    MPI_Group world, g;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_incl(world, n, ranks, &g));
    CHECK_RC(MPI_Group_free(&world));
    return g;
}

/* Checks that `comm` holds world ranks `ranks` in that order (this process among
 * them): its rank and size, an allgather of world ranks, an allreduce and a bcast
 * from its last rank, each against the sum computed here. */
static void check_members(MPI_Comm comm, int n, const int *ranks) {
    int r = -1, s = -1, want_rank = -1;
    for (int i = 0; i < n; i++)
        if (ranks[i] == rank) want_rank = i;
    CHECK_RC(MPI_Comm_rank(comm, &r));
    CHECK_RC(MPI_Comm_size(comm, &s));
    CHECK(s == n && r == want_rank);
    int got[64];
    CHECK(n <= 64);
    CHECK_RC(MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, comm));
    long want_sum = 0;
    for (int i = 0; i < n; i++) {
        CHECK(got[i] == ranks[i]);
        want_sum += ranks[i] * 3 + 1;
    }
    long mine = rank * 3 + 1, sum = -1;
    CHECK_RC(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm));
    CHECK(sum == want_sum);
    int from_last = r == n - 1 ? 1000 + rank : -1;
    CHECK_RC(MPI_Bcast(&from_last, 1, MPI_INT, n - 1, comm));
    CHECK(from_last == 1000 + ranks[n - 1]);
}

/* Creates the communicator over world ranks `ranks` from `parent` with `tag`, if a
 * member; checks it. */
static MPI_Comm create(MPI_Comm parent, int n, const int *ranks, int tag) {
    MPI_Group g = group_of(n, ranks);
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_create_group(parent, g, tag, &c));
    CHECK(c != MPI_COMM_NULL);
    CHECK_RC(MPI_Group_free(&g));
    check_members(c, n, ranks);
    return c;
}

static int member(int n, const int *ranks) {
    for (int i = 0; i < n; i++)
        if (ranks[i] == rank) return 1;
    return 0;
}

/* Even and odd ranks at once, one tag; a user message with that tag, sent on the world
 * to the group's leader first, is still there for an MPI_ANY_TAG receive afterwards. */
static void test_parity(void) {
    int ranks[64], n = 0;
    for (int q = rank % 2; q < size; q += 2) ranks[n++] = q;
    int note = 500 + rank, got = -1;
    MPI_Request req;
    CHECK_RC(MPI_Isend(&note, 1, MPI_INT, ranks[0], 7, MPI_COMM_WORLD, &req));
    MPI_Comm c = create(MPI_COMM_WORLD, n, ranks, 7);
    if (rank == ranks[0]) {
        for (int i = 0; i < n; i++) {
            MPI_Status st;
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, ranks[i], MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(got == 500 + ranks[i] && st.MPI_TAG == 7);
        }
    }
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL);
}

/* The whole world reversed; then the first half of that communicator's group over it. */
static void test_reversed(void) {
    int ranks[64];
    for (int i = 0; i < size; i++) ranks[i] = size - 1 - i;
    MPI_Comm rev = create(MPI_COMM_WORLD, size, ranks, 3);
    int half = (size + 1) / 2;
    if (member(half, ranks)) {
        MPI_Comm sub = create(rev, half, ranks, 3);
        CHECK_RC(MPI_Comm_free(&sub));
    }
    CHECK_RC(MPI_Comm_free(&rev));
}

/* Sends `*out` (100 * salt + this world rank) to both neighbours in `comm` and checks
 * what they sent: nonblocking, so that several communicators' exchanges overlap, and
 * the same two processes exchange in each of them. */
static void ring_start(MPI_Comm comm, int *out, MPI_Request req[2]) {
    int r, s;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    CHECK_RC(MPI_Isend(out, 1, MPI_INT, (r + 1) % s, 0, comm, &req[0]));
    CHECK_RC(MPI_Isend(out, 1, MPI_INT, (r + s - 1) % s, 0, comm, &req[1]));
}

static void ring_finish(MPI_Comm comm, int salt, int n, const int *ranks, MPI_Request req[2]) {
    int r, s, got = -1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    CHECK(s == n);
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, (r + s - 1) % s, 0, comm, MPI_STATUS_IGNORE));
    CHECK(got == 100 * salt + ranks[(r + s - 1) % s]);
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, (r + 1) % s, 0, comm, MPI_STATUS_IGNORE));
    CHECK(got == 100 * salt + ranks[(r + 1) % s]);
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
}

/* A = ranks 0..size-2 (all at 2 ranks), B = ranks size-1 down to 1 (down to 0 at 2),
 * created in turn with different tags; then a dup of the world while both live. The
 * messages of the three, sent before any is received, each reach their own. */
static void test_overlapping(void) {
    int a[64], b[64], na = size > 2 ? size - 1 : size, nb = na, all[64];
    for (int i = 0; i < na; i++) a[i] = i;
    for (int i = 0; i < nb; i++) b[i] = size - 1 - i;
    for (int i = 0; i < size; i++) all[i] = i;
    MPI_Comm ca = MPI_COMM_NULL, cb = MPI_COMM_NULL, dup;
    if (member(na, a)) ca = create(MPI_COMM_WORLD, na, a, 11);
    if (member(nb, b)) cb = create(MPI_COMM_WORLD, nb, b, 12);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int oa = 100 + rank, ob = 200 + rank, od = 300 + rank;
    MPI_Request ra[2], rb[2], rd[2];
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    ring_start(dup, &od, rd);
    if (cb != MPI_COMM_NULL) ring_start(cb, &ob, rb);
    if (ca != MPI_COMM_NULL) ring_start(ca, &oa, ra);
    if (ca != MPI_COMM_NULL) ring_finish(ca, 1, na, a, ra);
    if (cb != MPI_COMM_NULL) ring_finish(cb, 2, nb, b, rb);
    ring_finish(dup, 3, size, all, rd);
    if (ca != MPI_COMM_NULL) CHECK_RC(MPI_Comm_free(&ca));
    if (cb != MPI_COMM_NULL) CHECK_RC(MPI_Comm_free(&cb));
    CHECK_RC(MPI_Comm_free(&dup));
}

/* The same group (the last rank and rank 0) ten times with one tag; a group of one. */
static void test_repeated_and_single(void) {
    int pair[2] = {size - 1, 0};
    if (member(2, pair)) {
        for (int i = 0; i < 10; i++) {
            MPI_Comm c = create(MPI_COMM_WORLD, 2, pair, 5);
            CHECK_RC(MPI_Comm_free(&c));
        }
    }
    MPI_Comm alone = create(MPI_COMM_WORLD, 1, &rank, 0);
    CHECK_RC(MPI_Comm_free(&alone));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
}

/* Freed communicators give their shared memory back: far more creations, each with
 * collectives (which allocate the communicator's staging), than the heap holds at
 * once (at 2 ranks about 64). */
static void test_many(void) {
    MPI_Group world;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < 100; i++) {
        MPI_Comm c, d;
        int sum = -1;
        CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, world, 2, &c));
        CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size * (size - 1) / 2);
        CHECK_RC(MPI_Comm_dup(c, &d));
        CHECK_RC(MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_MAX, d));
        CHECK(sum == i);
        CHECK_RC(MPI_Comm_free(&d));
        CHECK_RC(MPI_Comm_free(&c));
    }
    CHECK_RC(MPI_Group_free(&world));
}

/* After an error: a creation over the parity groups still works. */
static void still_usable(void) {
    int ranks[64], n = 0;
    for (int q = rank % 2; q < size; q += 2) ranks[n++] = q;
    MPI_Comm c = create(MPI_COMM_WORLD, n, ranks, 9);
    CHECK_RC(MPI_Comm_free(&c));
}

static void test_errors(void) {
    MPI_Comm c = MPI_COMM_NULL;
    int other = (rank + 1) % size, *ub = NULL, flag = 0;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && ub);

    /* Not in the group: alone, nobody else calls. */
    MPI_Group g = group_of(1, &other);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 0, &c), MPI_ERR_GROUP);
    CHECK_RC(MPI_Group_free(&g));
    still_usable();

    g = group_of(1, &rank);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, g, -1, &c), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, g, *ub + 1, &c), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, g, MPI_ANY_TAG, &c), MPI_ERR_TAG);
    still_usable();
    /* The largest tag is fine. */
    CHECK_RC(MPI_Comm_create_group(MPI_COMM_WORLD, g, *ub, &c));
    CHECK_RC(MPI_Comm_free(&c));

    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_NULL, g, 0, &c), MPI_ERR_COMM);
    still_usable();

    /* A group with a member outside the parent: the even ranks' communicator with the
     * world's group. */
    MPI_Comm evens;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &evens));
    if (evens != MPI_COMM_NULL) {
        MPI_Group world;
        CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
        CHECK_CLASS(MPI_Comm_create_group(evens, world, 0, &c), MPI_ERR_GROUP);
        CHECK_RC(MPI_Group_free(&world));
        /* Its own group is fine, over the parent that is not the world. */
        MPI_Group mine;
        CHECK_RC(MPI_Comm_group(evens, &mine));
        CHECK_RC(MPI_Comm_create_group(evens, mine, 1, &c));
        int n = 0, ranks[64];
        for (int q = 0; q < size; q += 2) ranks[n++] = q;
        check_members(c, n, ranks);
        CHECK_RC(MPI_Comm_free(&c));
        CHECK_RC(MPI_Group_free(&mine));
        CHECK_RC(MPI_Comm_free(&evens));
    }
    CHECK_RC(MPI_Group_free(&g));
    still_usable();
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64);
    test_parity();
    test_reversed();
    test_overlapping();
    test_repeated_and_single();
    test_many();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok comm_create_group\n");
    MPI_Finalize();
    return 0;
}
