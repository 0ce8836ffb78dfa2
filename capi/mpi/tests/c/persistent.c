/* Persistent requests: a ring of MPI_Send_init/MPI_Recv_init started again and again
 * (the send reads its buffer at each start), completed by every wait and test form,
 * handles that stay valid and inactive in between, a derived datatype, MPI_ANY_SOURCE,
 * MPI_PROC_NULL, MPI_Request_free of an inactive and of an active request, and the
 * error classes. */
#include "test_check.h"

enum { ROUNDS = 20 };

static int rank, size, left, right;

/* One round trip around the ring with the persistent pair `rq`: sends `value`, checks
 * what arrives from the left, completing with form `how`. */
static void round_of(MPI_Request rq[2], int *out, const int *in, int value, int how) {
    *out = value;
    CHECK_RC(MPI_Startall(2, rq));
    int flag = 0, index = -1, outcount = 0, indices[2];
    MPI_Status st[2];
    switch (how) {
    case 0:
        CHECK_RC(MPI_Waitall(2, rq, st));
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 5);
        break;
    case 1:
        CHECK_RC(MPI_Wait(&rq[0], &st[0]));
        CHECK(st[0].MPI_SOURCE == left);
        CHECK_RC(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        break;
    case 2:
        while (!flag) CHECK_RC(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
        break;
    case 3:
        /* Two completions, then a third finds both inactive. */
        for (int k = 0; k < 2; k++) {
            CHECK_RC(MPI_Waitany(2, rq, &index, &st[0]));
            CHECK(index == 0 || index == 1);
        }
        CHECK_RC(MPI_Waitany(2, rq, &index, &st[0]));
        CHECK(index == MPI_UNDEFINED);
        break;
    case 4:
        for (int done = 0; done < 2; done += outcount) CHECK_RC(MPI_Waitsome(2, rq, &outcount, indices, st));
        CHECK_RC(MPI_Waitsome(2, rq, &outcount, indices, st));
        CHECK(outcount == MPI_UNDEFINED);
        break;
    default:
        for (int k = 0; k < 2; k++) {
            flag = 0;
            while (!flag) CHECK_RC(MPI_Testany(2, rq, &index, &flag, &st[0]));
            CHECK(index == 0 || index == 1);
        }
        CHECK_RC(MPI_Testany(2, rq, &index, &flag, &st[0]));
        CHECK(flag == 1 && index == MPI_UNDEFINED);
        break;
    }
    /* Still the same valid handles, now inactive. */
    CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL);
    CHECK(*in == value - rank + left);
}

static void test_ring(void) {
    int out = 0, in = -1;
    MPI_Request rq[2];
    CHECK_RC(MPI_Recv_init(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Send_init(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]));
    /* An inactive request completes at once with the empty status, and stays; so does
     * the null request. */
    MPI_Request keep = rq[0], null = MPI_REQUEST_NULL;
    int flag = 0, count = -1;
    MPI_Status st;
    CHECK_RC(MPI_Wait(&rq[0], &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && count == 0);
    CHECK_RC(MPI_Wait(&null, &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    CHECK_RC(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1 && rq[0] == keep);
    for (int r = 0; r < ROUNDS; r++) round_of(rq, &out, &in, rank + 100 * r, r % 6);
    /* Starting an active request is an error; the running one still completes. */
    CHECK_RC(MPI_Start(&rq[0]));
    CHECK_CLASS(MPI_Start(&rq[0]), MPI_ERR_REQUEST);
    out = rank + 7;
    CHECK_RC(MPI_Start(&rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(in == left + 7);
    CHECK_RC(MPI_Request_free(&rq[0]));
    CHECK_RC(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL);
}

static void test_typed_any_source_and_free(void) {
    /* A column of a 4x3 matrix, received from any source into a contiguous buffer. */
    int m[4][3], col[4];
    MPI_Datatype column;
    CHECK_RC(MPI_Type_vector(4, 1, 3, MPI_INT, &column));
    CHECK_RC(MPI_Type_commit(&column));
    MPI_Request rq[2];
    CHECK_RC(MPI_Recv_init(col, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Rsend_init(&m[0][1], 1, column, right, 9, MPI_COMM_WORLD, &rq[1]));
    /* Freeing the type does not affect the requests made with it. */
    CHECK_RC(MPI_Type_free(&column));
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 12; i++) m[i / 3][i % 3] = rank * 1000 + r * 100 + i;
        /* The receive is posted before the matching send can start anywhere. */
        CHECK_RC(MPI_Start(&rq[0]));
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Start(&rq[1]));
        MPI_Status st[2];
        CHECK_RC(MPI_Waitall(2, rq, st));
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 9);
        for (int i = 0; i < 4; i++) CHECK(col[i] == left * 1000 + r * 100 + i * 3 + 1);
    }
    /* Freed while active: the send still arrives. */
    CHECK_RC(MPI_Start(&rq[1]));
    CHECK_RC(MPI_Request_free(&rq[1]));
    CHECK_RC(MPI_Start(&rq[0]));
    CHECK_RC(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(col[0] == left * 1000 + 200 + 1);
    CHECK_RC(MPI_Request_free(&rq[0]));
    /* MPI_PROC_NULL: completes at once, every time. */
    int x = 0;
    MPI_Request nul;
    CHECK_RC(MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &nul));
    for (int r = 0; r < 3; r++) {
        CHECK_RC(MPI_Start(&nul));
        CHECK_RC(MPI_Wait(&nul, MPI_STATUS_IGNORE));
    }
    CHECK_RC(MPI_Request_free(&nul));
}

static void test_errors(void) {
    int x = 0;
    MPI_Request rq = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Send_init(&x, 1, MPI_INT, size, 1, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send_init(&x, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Recv_init(&x, -1, MPI_INT, left, 1, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_init(&x, 1, MPI_DATATYPE_NULL, left, 1, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Recv_init(&x, 1, MPI_INT, left, 1, MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    CHECK(rq == MPI_REQUEST_NULL);
    /* MPI_Start on what is not a persistent request. */
    CHECK_CLASS(MPI_Start(&rq), MPI_ERR_REQUEST);
    MPI_Request plain;
    CHECK_RC(MPI_Isend(&x, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &plain));
    CHECK_CLASS(MPI_Start(&plain), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&plain, MPI_STATUS_IGNORE));
    CHECK(plain == MPI_REQUEST_NULL);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_ring();
    test_typed_any_source_and_free();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok persistent\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
