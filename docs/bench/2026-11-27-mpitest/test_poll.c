/* MPI_Test's cost on one rank (measure.sh), messages to oneself so that nothing waits.
 * idle: one MPI_Irecv from oneself, not sent during the polls, then argv[2] MPI_Test
 * polls of it (flag 0 each time); then its message, and MPI_Wait.
 * pair: argv[2] times: MPI_Irecv from oneself, MPI_Isend to oneself, then MPI_Test of
 * each until both are complete. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long len = argc > 2 ? atol(argv[2]) : 1000;
    int in = 0, out = 1, flag = 0;
    MPI_Request rq[2];
    if (argc > 1 && strcmp(argv[1], "idle") == 0) {
        MPI_Irecv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[0]);
        for (long k = 0; k < len; k++) MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
        MPI_Send(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    } else {
        for (long k = 0; k < len; k++) {
            MPI_Irecv(&in, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(&out, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq[1]);
            for (int i = 0; i < 2; i++)
                for (flag = 0; !flag;) MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return in == out ? 0 : 1;
}
