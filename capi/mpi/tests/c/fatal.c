/* MPI_ERRORS_ARE_FATAL, the default handler: a send to a rank that does not exist
 * ends the whole job. The harness expects a non-zero exit, stderr naming MPI_Send and
 * the last rank (the one that makes the bad call), and no "ok fatal" line. */
#include "test_check.h"

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("fatal: before the bad send\n");
        fflush(stdout);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        int v = 1;
        MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD); /* never returns */
        fprintf(stderr, "FAIL rank %d: MPI_Send to rank %d returned\n", rank, size);
        return 4;
    }
    /* The others wait for a message that never comes; the abort ends them. */
    int x;
    MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_RC(MPI_Finalize());
    if (rank == 0) printf("ok fatal\n");
    return 0;
}
