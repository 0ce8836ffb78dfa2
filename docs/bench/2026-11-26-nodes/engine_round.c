/* The cost of one round of sccemu's node engine (tools/src/nodes/engine.rs) on the raw
 * MPI alone, with no gateway behind it: an allgather of 8 status words per node, an
 * all-to-all of one byte count per node, and an all-to-all-varcount of `bytes` bytes to
 * every other node. Rank 0 prints µs per round for each size:
 *
 *     ROUND bytes rounds median_us p10_us p90_us
 *
 * mpirun.openmpi -np 2 --oversubscribe --bind-to none --mca btl self,tcp ./engine_round
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define STATUS_WORDS 8
#define REPS 15
#define ROUNDS 2000

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const long sizes[] = {0, 64, 4096, 32768, 65536};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    unsigned long long mine[STATUS_WORDS] = {0};
    unsigned long long *all = calloc((size_t)size * STATUS_WORDS, sizeof *all);
    int *counts = calloc((size_t)size, sizeof *counts), *arriving = calloc((size_t)size, sizeof *arriving);
    int *sdispl = calloc((size_t)size, sizeof *sdispl), *rdispl = calloc((size_t)size, sizeof *rdispl);
    char *out = calloc((size_t)size * 65536 + 1, 1), *in = calloc((size_t)size * 65536 + 1, 1);
    for (int s = 0; s < nsizes; s++) {
        int rounds = sizes[s] >= 32768 ? ROUNDS / 10 : ROUNDS;
        double samples[REPS];
        for (int rep = 0; rep < REPS + 1; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int r = 0; r < rounds; r++) {
                MPI_Allgather(mine, STATUS_WORDS, MPI_UNSIGNED_LONG_LONG, all, STATUS_WORDS,
                              MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
                for (int p = 0; p < size; p++) counts[p] = p == rank ? 0 : (int)sizes[s];
                MPI_Alltoall(counts, 1, MPI_INT, arriving, 1, MPI_INT, MPI_COMM_WORLD);
                int at = 0, from = 0;
                for (int p = 0; p < size; p++) {
                    sdispl[p] = at;
                    at += counts[p];
                    rdispl[p] = from;
                    from += arriving[p];
                }
                MPI_Alltoallv(out, counts, sdispl, MPI_CHAR, in, arriving, rdispl, MPI_CHAR, MPI_COMM_WORLD);
            }
            if (rep > 0) samples[rep - 1] = (MPI_Wtime() - t0) * 1e6 / rounds;
        }
        if (rank == 0) {
            qsort(samples, REPS, sizeof samples[0], compare);
            printf("ROUND %ld %d %.3f %.3f %.3f\n", sizes[s], rounds, samples[REPS / 2], samples[REPS / 10],
                   samples[REPS - 1 - REPS / 10]);
            fflush(stdout);
        }
    }
    free(all), free(counts), free(arriving), free(sdispl), free(rdispl), free(out), free(in);
    MPI_Finalize();
    return 0;
}
