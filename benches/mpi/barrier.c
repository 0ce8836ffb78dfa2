/* Barrier latency (µs per MPI_Barrier over all ranks): pattern `barrier`, size 0. */
#include "common.h"

static void run_barrier(long bytes, int count) {
    (void)bytes;
    for (int i = 0; i < count; i++) MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    options o;
    parse_options(argc, argv, &o);
    for (int p = 0; p < o.npatterns; p++) {
        if (strcmp(o.patterns[p], "barrier") != 0) die("barrier: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) measure(&o, "barrier", o.sizes[s], run_barrier, 1.0);
    }
    MPI_Finalize();
    return 0;
}
