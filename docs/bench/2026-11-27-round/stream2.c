/* benches/mpi/pt2pt.c's streaming pattern between 2 ranks, a fixed number of times:
 * rank 0 starts 64 MPI_Isend of 8 B to rank 1 and waits for them all, rank 1 posts 64
 * MPI_Irecv and waits for them all, then acknowledges the window. */
#include <mpi.h>
#include <stdlib.h>
#define W 64
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[1]), me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    static char buf[8];
    MPI_Request r[W];
    for (int i = 0; i < n; i++) {
        if (me == 0) {
            for (int k = 0; k < W; k++) MPI_Isend(buf, 8, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &r[k]);
            MPI_Waitall(W, r, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < W; k++) MPI_Irecv(buf, 8, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &r[k]);
            MPI_Waitall(W, r, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
