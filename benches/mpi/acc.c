/* MPI_Accumulate bandwidth, the owner-computes paper's Figure 2: rank 0 accumulates
 * `bytes` of f64 with MPI_SUM into rank 1's window, one exclusive lock epoch per
 * operation (lock, accumulate, unlock), so each operation is complete at the target.
 * Pattern `accumulate-sum-f64`; sizes are rounded down to whole f64s (at least one). */
#include "common.h"

static int rank;
static double *source;
static MPI_Win win;

static void run_accumulate(long bytes, int count) {
    if (rank != 0) return;
    int elements = bytes / 8 < 1 ? 1 : (int)(bytes / 8);
    for (int i = 0; i < count; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Accumulate(source, elements, MPI_DOUBLE, 1, 0, elements, MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_unlock(1, win);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    need_ranks(2);
    options o;
    parse_options(argc, argv, &o);
    long elements = max_size(&o) / 8 < 1 ? 1 : max_size(&o) / 8;
    source = malloc(elements * sizeof(double));
    for (long i = 0; i < elements; i++) source[i] = 1.0;
    void *base;
    MPI_Win_allocate(elements * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, elements * sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int p = 0; p < o.npatterns; p++) {
        if (strcmp(o.patterns[p], "accumulate-sum-f64") != 0) die("acc: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) measure(&o, o.patterns[p], o.sizes[s], run_accumulate, 1.0);
    }
    MPI_Win_free(&win);
    free(source);
    MPI_Finalize();
    return 0;
}
