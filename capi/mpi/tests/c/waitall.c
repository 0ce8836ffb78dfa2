/* MPI_Waitall's cases: null and inactive persistent handles beside requests complete
 * at their start and open ones; an active persistent request (stays, inactive); a bad
 * or stale handle (MPI_ERR_REQUEST, no handle changed); a truncated receive
 * (MPI_ERR_IN_STATUS with its code in its status, MPI_ERR_TRUNCATE when the statuses
 * are ignored). Each rank sends to itself and around the ring. */
#include "test_check.h"

static void check_error_class(int code, int cls) {
    int c = -1;
    MPI_Error_class(code, &c);
    CHECK(c == cls);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int mine = 10 + rank, got_self = -1, got_left = -1, kept = -1;
    MPI_Status st[6];

    /* Null, inactive persistent, an open receive from the left, a send to this rank
       (complete at its start), its receive, and a send to the right. */
    MPI_Request rq[6], persistent;
    rq[0] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Recv_init(&kept, 1, MPI_INT, left, 99, MPI_COMM_WORLD, &persistent));
    rq[1] = persistent;
    CHECK_RC(MPI_Irecv(&got_left, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[2]));
    CHECK_RC(MPI_Irecv(&got_self, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &rq[4]));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &rq[3]));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[5]));
    CHECK_RC(MPI_Waitall(6, rq, st));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == persistent);
    for (int i = 2; i < 6; i++) CHECK(rq[i] == MPI_REQUEST_NULL);
    for (int i = 0; i < 2; i++) CHECK(st[i].MPI_SOURCE == MPI_ANY_SOURCE && st[i].MPI_TAG == MPI_ANY_TAG);
    CHECK(got_left == 10 + left && st[2].MPI_SOURCE == left && st[2].MPI_TAG == 2);
    CHECK(got_self == mine && st[4].MPI_SOURCE == rank && st[4].MPI_TAG == 1);
    int n = -1;
    CHECK_RC(MPI_Get_count(&st[4], MPI_INT, &n));
    CHECK(n == 1);

    /* An active persistent request completes and keeps its handle, inactive. */
    MPI_Request two[2];
    CHECK_RC(MPI_Start(&persistent));
    two[0] = persistent;
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, right, 99, MPI_COMM_WORLD, &two[1]));
    CHECK_RC(MPI_Waitall(2, two, st));
    CHECK(two[0] == persistent && two[1] == MPI_REQUEST_NULL);
    CHECK(kept == 10 + left && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 99);
    CHECK_RC(MPI_Waitall(1, two, st));
    CHECK(two[0] == persistent && st[0].MPI_TAG == MPI_ANY_TAG);
    CHECK_RC(MPI_Request_free(&persistent));

    /* A bad handle fails the call and changes no handle: the others complete later. */
    int a = -1;
    MPI_Request bad[3];
    CHECK_RC(MPI_Irecv(&a, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &bad[2]));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &bad[0]));
    bad[1] = (MPI_Request)777;
    MPI_Request keep0 = bad[0], keep2 = bad[2];
    CHECK_CLASS(MPI_Waitall(3, bad, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    CHECK(bad[0] == keep0 && bad[1] == (MPI_Request)777 && bad[2] == keep2);
    bad[1] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Waitall(3, bad, MPI_STATUSES_IGNORE));
    CHECK(a == mine && bad[0] == MPI_REQUEST_NULL && bad[2] == MPI_REQUEST_NULL);

    /* A completed request's old handle names nothing. */
    MPI_Request done;
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &done));
    MPI_Request stale = done;
    CHECK_RC(MPI_Wait(&done, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Waitall(1, &stale, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Recv(&a, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    /* A truncated receive among completed ones. */
    for (int ignore = 0; ignore < 2; ignore++) {
        int pair[2] = {7, 8}, one = -1, fine = -1;
        MPI_Request tr[4];
        CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &tr[0]));
        CHECK_RC(MPI_Irecv(&fine, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &tr[1]));
        CHECK_RC(MPI_Isend(pair, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, &tr[2]));
        CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &tr[3]));
        if (ignore) {
            CHECK_CLASS(MPI_Waitall(4, tr, MPI_STATUSES_IGNORE), MPI_ERR_TRUNCATE);
        } else {
            CHECK_CLASS(MPI_Waitall(4, tr, st), MPI_ERR_IN_STATUS);
            check_error_class(st[0].MPI_ERROR, MPI_ERR_TRUNCATE);
            for (int i = 1; i < 4; i++) CHECK(st[i].MPI_ERROR == MPI_SUCCESS);
            CHECK(st[1].MPI_SOURCE == rank && st[1].MPI_TAG == 6);
        }
        for (int i = 0; i < 4; i++) CHECK(tr[i] == MPI_REQUEST_NULL);
        CHECK(one == 7 && fine == mine);
    }

    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok waitall\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
