/* N halo-p2p steps of 16 B on a periodic 2-D grid, as benches/mpi/halo.c's run_p2p.
   Built with -DSENDS_FIRST=1 the 4 MPI_Isend come before the 4 MPI_Irecv, so that each
   receive finds its message arrived already (docs/bench/2026-11-27-mpip2p's sendfirst). */
#include <mpi.h>
#include <stdlib.h>
#ifndef SENDS_FIRST
#define SENDS_FIRST 0
#endif
static void post_receives(char *ghost, long bytes, const int *nb, MPI_Request *r) {
    for (int d = 0; d < 4; d++)
        MPI_Irecv(ghost + (d ^ 1) * bytes, (int)bytes, MPI_CHAR, nb[d ^ 1], d, MPI_COMM_WORLD, &r[d]);
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size, n = atoi(argv[1]), nb[4], dims[2] = {0, 0}, periods[2] = {1, 1};
    long bytes = 16;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);
    char send[64], ghost[64];
    MPI_Request r[8];
    for (int i = 0; i < n; i++) {
        if (!SENDS_FIRST) post_receives(ghost, bytes, nb, r);
        for (int d = 0; d < 4; d++)
            MPI_Isend(send + d * bytes, (int)bytes, MPI_CHAR, nb[d], d, MPI_COMM_WORLD, &r[4 + d]);
        if (SENDS_FIRST) post_receives(ghost, bytes, nb, r);
        MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
