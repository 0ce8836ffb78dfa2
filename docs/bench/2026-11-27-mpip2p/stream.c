/* N windows of 64 MPI_Irecv from this rank, then 64 MPI_Isend to it, then one
 * MPI_Waitall of all 128: benches/mpi/pt2pt.c's streaming pattern (both ranks' halves)
 * on one rank, so that no call waits. 8 B messages, a tag per slot. */
#include <mpi.h>
#include <stdlib.h>
#define W 64
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[1]), me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    static char out[W][8], in[W][8];
    MPI_Request r[2 * W];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < W; k++)
            MPI_Irecv(in[k], 8, MPI_CHAR, me, k, MPI_COMM_WORLD, &r[k]);
        for (int k = 0; k < W; k++)
            MPI_Isend(out[k], 8, MPI_CHAR, me, k, MPI_COMM_WORLD, &r[W + k]);
        MPI_Waitall(2 * W, r, MPI_STATUSES_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
