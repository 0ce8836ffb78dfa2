/* MPI_Cancel (a receive nobody sends to is cancelled; one whose message is in, a send
 * and a persistent receive's run as the standard allows), MPI_Test_cancelled, and
 * MPI_Issend and MPI_Ssend, which complete only once their receive has started, also
 * when both sides wait in synchronous sends for receives they posted first, and when
 * the receiver blocks in another call (a barrier, a receive from a third process)
 * after posting the receive. */
#include "test_check.h"

static int rank, size, left, right;

static void test_cancel(void) {
    int x = -1, flag = -1;
    MPI_Request rq;
    MPI_Status st;
    /* Nobody sends tag 77: the receive is cancelled. */
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Cancel(&rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && x == -1);
    /* A cancelled wildcard receive takes nothing from a later message. */
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 80, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Cancel(&rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);
    /* Only now may the message it could have taken be sent. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    int v = rank + 80;
    CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, right, 80, &x, 1, MPI_INT, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == left + 80);
    /* The message is in before the cancel: the receive completes instead. */
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, left, 78, MPI_COMM_WORLD, &rq));
    v = rank + 78;
    CHECK_RC(MPI_Send(&v, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Cancel(&rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 && x == left + 78 && st.MPI_SOURCE == left);
    /* A send cannot be cancelled here: it is delivered. */
    v = rank + 79;
    CHECK_RC(MPI_Isend(&v, 1, MPI_INT, right, 79, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Cancel(&rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, left, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == left + 79);
    /* A persistent receive's run is cancelled; the request stays, inactive. */
    CHECK_RC(MPI_Recv_init(&x, 1, MPI_INT, left, 81, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Cancel(&rq));
    CHECK_RC(MPI_Wait(&rq, &st));
    CHECK_RC(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && rq != MPI_REQUEST_NULL);
    CHECK_RC(MPI_Request_free(&rq));
    /* Errors. */
    rq = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Test_cancelled(MPI_STATUS_IGNORE, &flag), MPI_ERR_ARG);
}

static void test_issend(void) {
    int v = rank + 90, x = -1, flag = -1;
    MPI_Request rq;
    CHECK_RC(MPI_Issend(&v, 1, MPI_INT, right, 90, MPI_COMM_WORLD, &rq));
    /* The right neighbour has not posted its receive: not complete. */
    for (int i = 0; i < 10; i++) {
        CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, left, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(x == left + 90 && rq == MPI_REQUEST_NULL);
    /* Several in flight to one destination, with a derived type, the sends waited for
     * first: each process completes its own posted receives while it waits. */
    int m[4][3], col[3][4];
    for (int i = 0; i < 12; i++) m[i / 3][i % 3] = rank * 100 + i;
    MPI_Datatype column;
    CHECK_RC(MPI_Type_vector(4, 1, 3, MPI_INT, &column));
    CHECK_RC(MPI_Type_commit(&column));
    MPI_Request rs[3], rr[3];
    for (int c = 0; c < 3; c++) CHECK_RC(MPI_Issend(&m[0][c], 1, column, right, 91, MPI_COMM_WORLD, &rs[c]));
    for (int c = 2; c >= 0; c--) CHECK_RC(MPI_Irecv(col[c], 4, MPI_INT, left, 91, MPI_COMM_WORLD, &rr[c]));
    CHECK_RC(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Waitall(3, rr, MPI_STATUSES_IGNORE));
    /* Receives match in the order they were posted: col[2] got the first column. */
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 4; i++) CHECK(col[2 - c][i] == left * 100 + i * 3 + c);
    CHECK_RC(MPI_Type_free(&column));
    /* The classic exchange: post the receive, then a blocking synchronous send. */
    for (int r = 0; r < 5; r++) {
        v = rank * 10 + r;
        CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, left, 93, MPI_COMM_WORLD, &rq));
        CHECK_RC(MPI_Ssend(&v, 1, MPI_INT, right, 93, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(x == left * 10 + r);
    }
    CHECK_RC(MPI_Issend(&v, 1, MPI_INT, MPI_PROC_NULL, 92, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Issend(&v, 1, MPI_INT, size, 92, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
}

/* The receiver posts its receive, then blocks elsewhere before it waits for it: the
 * synchronous send must complete meanwhile (the receive has started). */
static void test_ssend_receiver_elsewhere(void) {
    enum { BIG = 100000 };
    static int big[BIG], got[BIG];
    for (int n = 1; n <= BIG; n += BIG - 1) {
        for (int i = 0; i < n; i++) big[i] = rank * 7 + i;
        /* Pairs (0,1), (2,3), ...: the even one receives, then enters the barrier,
         * which its partner reaches only after its synchronous send. */
        int partner = rank ^ 1;
        MPI_Request rq;
        if (partner < size && rank % 2 == 0) {
            CHECK_RC(MPI_Irecv(got, n, MPI_INT, partner, 94, MPI_COMM_WORLD, &rq));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++) CHECK(got[i] == partner * 7 + i);
        } else if (partner < size) {
            CHECK_RC(MPI_Ssend(big, n, MPI_INT, partner, 94, MPI_COMM_WORLD));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        }
        /* Rank 0 posts for rank 1's synchronous send, then blocks receiving from
         * rank 2, which sends only once rank 1 tells it its send completed. */
        if (size >= 3 && rank < 3) {
            int token = 0;
            if (rank == 0) {
                CHECK_RC(MPI_Irecv(got, n, MPI_INT, 1, 95, MPI_COMM_WORLD, &rq));
                CHECK_RC(MPI_Recv(&token, 1, MPI_INT, 2, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                CHECK(token == 2);
                for (int i = 0; i < n; i++) CHECK(got[i] == 7 + i);
            } else if (rank == 1) {
                CHECK_RC(MPI_Ssend(big, n, MPI_INT, 0, 95, MPI_COMM_WORLD));
                CHECK_RC(MPI_Send(&token, 1, MPI_INT, 2, 96, MPI_COMM_WORLD));
            } else {
                CHECK_RC(MPI_Recv(&token, 1, MPI_INT, 1, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                token = 2;
                CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 96, MPI_COMM_WORLD));
            }
        }
    }
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_cancel();
    test_issend();
    test_ssend_receiver_elsewhere();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok cancel_issend\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
