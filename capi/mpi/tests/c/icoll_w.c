/* MPI_Ialltoallw and MPI_Ireduce_scatter. Ialltoallw: a type per block (ints to even
 * ranks, a strided vector of ints to odd ones, doubles from rank 0's receive side),
 * byte displacements out of rank order, an empty block, in place; each result is
 * compared with the blocking MPI_Alltoallw's, and the request is overlapped with
 * point-to-point traffic. Ireduce_scatter: uneven counts with a zero, sum and a
 * non-commutative user op (rank-ordered result), in place; checked against the
 * sequential result. Then the error classes under MPI_ERRORS_RETURN, after which the
 * communicator still works. */
#include <string.h>
#include "test_check.h"

#define SENT (-7)

static int rank, size;

static int val(int t, int r, int i) { return t * 100003 + r * 1009 + i; }

/* Block r's element count: 0 for the last rank (when there are 3 or more), else r+1. */
static int count_for(int r) { return (size >= 3 && r == size - 1) ? 0 : r + 1; }

/* One Ialltoallw between every pair, with per-block types: to rank r go count_for(r)
 * ints as MPI_INT when r is even, or as a vector of count_for(r) ints with stride 2
 * when r is odd; every rank receives each block as plain ints. Placed in reverse rank
 * order, with a gap of one int between blocks. */
static void test_alltoallw(int in_place) {
    MPI_Datatype vec[64];
    int scounts[64], sdispls[64], rcounts[64], rdispls[64];
    MPI_Datatype stypes[64], rtypes[64];
    int *src = malloc(sizeof(int) * 4096), *got = malloc(sizeof(int) * 4096), *want = malloc(sizeof(int) * 4096);
    CHECK(src && got && want && size <= 64);
    int at = 0;
    for (int r = 0; r < size; r++) {
        int k = count_for(r);
        scounts[r] = k ? 1 : 0;
        if (r % 2 == 0) {
            CHECK_RC(MPI_Type_contiguous(k ? k : 1, MPI_INT, &vec[r]));
        } else {
            CHECK_RC(MPI_Type_vector(k ? k : 1, 1, 2, MPI_INT, &vec[r]));
        }
        CHECK_RC(MPI_Type_commit(&vec[r]));
        stypes[r] = vec[r];
        sdispls[r] = at * (int)sizeof(int);
        for (int i = 0; i < 2 * k; i++) src[at + i] = (r % 2 == 0 || i % 2 == 0) ? val(1, rank, r * 100 + (r % 2 ? i / 2 : i)) : SENT;
        at += 2 * k + 1;
    }
    /* Receive side: block from rank s lands in reverse order, as count_for(rank) ints. */
    at = 0;
    for (int s = size - 1; s >= 0; s--) {
        rcounts[s] = count_for(rank);
        rtypes[s] = MPI_INT;
        rdispls[s] = at * (int)sizeof(int);
        at += count_for(rank) + 1;
    }
    for (int i = 0; i < at; i++) got[i] = want[i] = SENT;
    for (int s = 0; s < size; s++)
        for (int i = 0; i < count_for(rank); i++) want[rdispls[s] / (int)sizeof(int) + i] = val(1, s, rank * 100 + i);
    if (in_place) {
        /* In place, each block is sent from where it is received, so both must have one
         * layout: one int from and to every rank. */
        for (int s = 0; s < size; s++) {
            rcounts[s] = 1;
            got[rdispls[s] / (int)sizeof(int)] = val(2, rank, s);
        }
        MPI_Request rq;
        CHECK_RC(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, got, rcounts, rdispls, rtypes, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int s = 0; s < size; s++) CHECK(got[rdispls[s] / (int)sizeof(int)] == val(2, s, rank));
    } else {
        /* Overlap: a ring message in flight while the collective runs. */
        int token = rank, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Request rq[3];
        CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &rq[0]));
        CHECK_RC(MPI_Ialltoallw(src, scounts, sdispls, stypes, got, rcounts, rdispls, rtypes, MPI_COMM_WORLD, &rq[1]));
        CHECK_RC(MPI_Isend(&token, 1, MPI_INT, right, 77, MPI_COMM_WORLD, &rq[2]));
        CHECK_RC(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        CHECK(in == left);
        for (int i = 0; i < at; i++) CHECK(got[i] == want[i]);
        /* The blocking call agrees. */
        int *blocking = malloc(sizeof(int) * 4096);
        CHECK(blocking != NULL);
        for (int i = 0; i < at; i++) blocking[i] = SENT;
        CHECK_RC(MPI_Alltoallw(src, scounts, sdispls, stypes, blocking, rcounts, rdispls, rtypes, MPI_COMM_WORLD));
        CHECK(memcmp(blocking, got, sizeof(int) * (size_t)at) == 0);
        free(blocking);
    }
    for (int r = 0; r < size; r++) CHECK_RC(MPI_Type_free(&vec[r]));
    free(src);
    free(got);
    free(want);
}

static void test_reduce_scatter(int in_place) {
    int counts[64], total = 0;
    for (int r = 0; r < size; r++) total += counts[r] = count_for(r);
    int *in = malloc(sizeof(int) * (size_t)(total + 1)), *out = malloc(sizeof(int) * (size_t)(total + 1));
    CHECK(in && out);
    for (int i = 0; i < total; i++) in[i] = val(3, rank, i);
    int before = 0;
    for (int r = 0; r < rank; r++) before += counts[r];
    MPI_Request rq;
    if (in_place) {
        memcpy(out, in, sizeof(int) * (size_t)total);
        CHECK_RC(MPI_Ireduce_scatter(MPI_IN_PLACE, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    } else {
        for (int i = 0; i <= total; i++) out[i] = SENT;
        CHECK_RC(MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    }
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < counts[rank]; i++) {
        long long sum = 0;
        for (int s = 0; s < size; s++) sum += val(3, s, before + i);
        CHECK(out[i] == (int)sum);
    }
    if (!in_place) CHECK(out[counts[rank]] == SENT);
    free(in);
    free(out);
}

/* A non-commutative op, x o y = y: MPI folds in rank order, (a0 o a1) o ... o a(n-1),
 * and calls the function with `in` the earlier operand, so the result is the last
 * rank's value, and any other order gives another rank's. */
static void keep_later(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
}

static void test_reduce_scatter_user_op(void) {
    MPI_Op op;
    CHECK_RC(MPI_Op_create(keep_later, 0, &op));
    int counts[64], total = 0;
    for (int r = 0; r < size; r++) total += counts[r] = r + 1;
    int *in = malloc(sizeof(int) * (size_t)total), *out = malloc(sizeof(int) * (size_t)total);
    CHECK(in && out);
    for (int i = 0; i < total; i++) in[i] = val(4, rank, i);
    int before = 0;
    for (int r = 0; r < rank; r++) before += counts[r];
    MPI_Request rq;
    CHECK_RC(MPI_Ireduce_scatter(in, out, counts, MPI_INT, op, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < counts[rank]; i++) CHECK(out[i] == val(4, size - 1, before + i));
    CHECK_RC(MPI_Op_free(&op));
    free(in);
    free(out);
}

static void test_errors(void) {
    int counts[64], displs[64], x[64];
    MPI_Datatype types[64];
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = r * (int)sizeof(int);
        types[r] = MPI_INT;
        x[r] = r;
    }
    counts[0] = -1;
    CHECK_CLASS(MPI_Ireduce_scatter(x, x, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ialltoallw(x, counts, displs, types, x, counts, displs, types, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    counts[0] = 1;
    CHECK_CLASS(MPI_Ireduce_scatter(x, x, counts, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ireduce_scatter(x, x, counts, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &rq), MPI_ERR_OP);
    CHECK_CLASS(MPI_Ireduce_scatter(x, x, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq), MPI_ERR_ARG);
    types[size - 1] = MPI_DATATYPE_NULL;
    CHECK_CLASS(MPI_Ialltoallw(x, counts, displs, types, x, counts, displs, types, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    types[size - 1] = MPI_INT;
    CHECK_CLASS(MPI_Ialltoallw(x, counts, displs, types, x, counts, displs, types, MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Ialltoallw(x, counts, displs, types, x, counts, displs, types, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK(rq == MPI_REQUEST_NULL);
    /* Still usable: an alltoallw of one int each. */
    int y[64];
    CHECK_RC(MPI_Ialltoallw(x, counts, displs, types, y, counts, displs, types, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++) CHECK(y[r] == rank);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_alltoallw(0);
    test_alltoallw(1);
    test_reduce_scatter(0);
    test_reduce_scatter(1);
    test_reduce_scatter_user_op();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok icoll_w\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
