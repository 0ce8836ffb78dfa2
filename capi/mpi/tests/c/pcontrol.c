/* MPI_Pcontrol against sccemu's profiler (run under sccmpiexec --timing --trace): a
 * 2-rank ping-pong of three rounds traced, five rounds with profiling off (level 0),
 * then two more at level 1. The harness reads the trace: rank 0's track has the two
 * level changes, sends before and after, and none between them. Without a trace the
 * calls only return. */
#include "test_check.h"

static void rounds(int n, int rank) {
    int peer = 1 - rank, value = rank;
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            CHECK_RC(MPI_Send(&value, 1, MPI_INT, peer, i, MPI_COMM_WORLD));
            CHECK_RC(MPI_Recv(&value, 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(MPI_Recv(&value, 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Send(&value, 1, MPI_INT, peer, i, MPI_COMM_WORLD));
        }
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2);
    rounds(3, rank);
    CHECK_RC(MPI_Pcontrol(0));
    rounds(5, rank);
    /* Further arguments, as profilers may define them, are accepted and ignored. */
    CHECK_RC(MPI_Pcontrol(1, "phase", 3));
    rounds(2, rank);
    if (rank == 0) printf("ok pcontrol\n");
    MPI_Finalize();
    return 0;
}
