/* Point-to-point: blocking, non-blocking, any-source, tags, truncation, Ssend,
 * probe, sendrecv, communicator isolation. */
#include <string.h>
#include "test_check.h"

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Ring shift with Sendrecv. */
    int got = -1;
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st));
    CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 7);
    int n = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 1);

    /* Gather at 0 with ANY_SOURCE and ANY_TAG; tags carry the sender. */
    if (rank == 0) {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            double v;
            CHECK_RC(MPI_Recv(&v, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 100 + st.MPI_SOURCE && v == 0.5 * st.MPI_SOURCE);
            seen |= 1 << st.MPI_SOURCE;
        }
        CHECK(seen == ((1 << size) - 2));
    } else {
        double v = 0.5 * rank;
        CHECK_RC(MPI_Send(&v, 1, MPI_DOUBLE, 0, 100 + rank, MPI_COMM_WORLD));
    }
    /* Else rank 0's wildcard receives could match the messages below. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));

    /* Non-blocking, large messages both ways, waited for in reverse. */
    enum { N = 1 << 18 };
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) out[i] = rank * N + i;
    MPI_Request r[2];
    CHECK_RC(MPI_Irecv(in, N, MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]));
    CHECK_RC(MPI_Isend(out, N, MPI_INT, right, 1, MPI_COMM_WORLD, &r[1]));
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    for (int i = 0; i < N; i++) CHECK(in[i] == left * N + i);

    /* A duplicate communicator's messages never match the parent's. */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int a = rank, b = -rank - 1, x = 99, y = 99;
    MPI_Request rr[2];
    CHECK_RC(MPI_Isend(&a, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rr[0]));
    CHECK_RC(MPI_Isend(&b, 1, MPI_INT, right, 5, dup, &rr[1]));
    CHECK_RC(MPI_Recv(&y, 1, MPI_INT, left, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Recv(&x, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == left && y == -left - 1);
    CHECK_RC(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);

    /* Probe, then receive into an exactly sized buffer. */
    if (rank == 0) {
        char msg[] = "hello from zero";
        CHECK_RC(MPI_Ssend(msg, (int)sizeof msg, MPI_CHAR, 1, 3, MPI_COMM_WORLD));
    } else if (rank == 1) {
        CHECK_RC(MPI_Probe(0, 3, MPI_COMM_WORLD, &st));
        int len;
        MPI_Get_count(&st, MPI_CHAR, &len);
        char *buf = malloc(len);
        CHECK_RC(MPI_Recv(buf, len, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(strcmp(buf, "hello from zero") == 0);
        free(buf);
    }

    /* Truncation is an error class under MPI_ERRORS_RETURN; the job goes on. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 0) {
        int four[4] = {1, 2, 3, 4};
        CHECK_RC(MPI_Send(four, 4, MPI_INT, 1, 9, MPI_COMM_WORLD));
    } else if (rank == 1) {
        int two[2] = {0, 0};
        CHECK_CLASS(MPI_Recv(two, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
        CHECK(two[0] == 1 && two[1] == 2);
    }
    /* Bad arguments. */
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send(&a, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, 0, (MPI_Comm)12345), MPI_ERR_COMM);
    MPI_Request bogus = (MPI_Request)777;
    CHECK_CLASS(MPI_Wait(&bogus, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    /* PROC_NULL completes at once. */
    CHECK_RC(MPI_Recv(&a, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);

    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    free(out);
    free(in);
    if (rank == 0) printf("ok p2p_basic\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
