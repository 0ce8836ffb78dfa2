/* Launch, one barrier, exit: the `scale` suite's C side, meaning what sccemu's `hello`
 * example does (attach, barrier, leave). Prints one line from rank 0 unless
 * HELLO_QUIET is set, like the example. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !getenv("HELLO_QUIET")) printf("hello from %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
