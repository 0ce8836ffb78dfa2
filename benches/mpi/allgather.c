/* Collectives: MPI_Allgather of `bytes` per rank (the concurrency paper's Figures 7
 * and 8) and MPI_Allreduce SUM over `bytes` of f64 (at least one). */
#include "common.h"

static char *mine, *all;
static double *in, *out;

static void run_allgather(long bytes, int count) {
    for (int i = 0; i < count; i++)
        MPI_Allgather(mine, (int)bytes, MPI_CHAR, all, (int)bytes, MPI_CHAR, MPI_COMM_WORLD);
}

static void run_allreduce(long bytes, int count) {
    int elements = bytes / 8 < 1 ? 1 : (int)(bytes / 8);
    for (int i = 0; i < count; i++) MPI_Allreduce(in, out, elements, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    parse_options(argc, argv, &o);
    long largest = max_size(&o) < 8 ? 8 : max_size(&o);
    mine = calloc(largest, 1);
    all = calloc(largest * size, 1);
    in = calloc(largest / 8, sizeof(double));
    out = calloc(largest / 8, sizeof(double));
    for (int p = 0; p < o.npatterns; p++) {
        const char *name = o.patterns[p];
        pattern_fn run = strcmp(name, "allgather") == 0 ? run_allgather
                         : strcmp(name, "allreduce") == 0 ? run_allreduce
                                                          : NULL;
        if (!run) die("allgather: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) measure(&o, name, o.sizes[s], run, 1.0);
    }
    free(mine);
    free(all);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
