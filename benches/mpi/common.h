/* Shared by every MPI peer program of `sccrun bench`: options, timing and output.
 *
 * Every program takes the same options, chosen by the harness so that MPICH, Open MPI
 * and sccemu measure the same sizes with the same repetitions:
 *
 *     PROG --patterns a,b --sizes 8,64 --reps 20 --warmup 3 --inner 100 [--peer K]
 *
 * `--peer K` (default 1) names the rank that rank 0 talks to where a pattern has one
 * partner (pt2pt's latency): on an emulated chip, pairs at different distances.
 * A sample is the time of `inner` operations divided by `inner` (µs per operation);
 * `warmup` samples (at least one) are taken and thrown away first; `inner` shrinks
 * when one operation turns out far slower than planned (see calibrate). Rank 0
 * prints, for each (pattern, size):
 *
 *     BEGIN pattern bytes                       before measuring (so a timeout names it)
 *     ROW pattern bytes reps median p10 p90     after (µs per operation)
 *
 * Percentiles use the same rule as sccemu's `measure::summarize`: sorted samples,
 * index round((n - 1) * q).
 */
#ifndef SCCEMU_BENCH_COMMON_H
#define SCCEMU_BENCH_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64
#define MAX_NAME 48
/* Longest a timed sample should take, in seconds. */
#define SAMPLE_BUDGET_S 0.02

typedef struct {
    int npatterns;
    char patterns[MAX_LIST][MAX_NAME];
    int nsizes;
    long sizes[MAX_LIST];
    int reps;
    int warmup;
    int inner;
    int peer;
} options;

static inline void die(const char *why) {
    fprintf(stderr, "error: %s\n", why);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static void parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->reps = 10;
    o->warmup = 2;
    o->inner = 100;
    o->peer = 1;
    o->nsizes = 1;
    o->sizes[0] = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *key = argv[i];
        char *value = argv[i + 1];
        if (strcmp(key, "--patterns") == 0) {
            o->npatterns = 0;
            for (char *t = strtok(value, ","); t && o->npatterns < MAX_LIST; t = strtok(NULL, ",")) {
                snprintf(o->patterns[o->npatterns++], MAX_NAME, "%s", t);
            }
        } else if (strcmp(key, "--sizes") == 0) {
            o->nsizes = 0;
            for (char *t = strtok(value, ","); t && o->nsizes < MAX_LIST; t = strtok(NULL, ",")) {
                o->sizes[o->nsizes++] = atol(t);
            }
        } else if (strcmp(key, "--reps") == 0) {
            o->reps = atoi(value);
        } else if (strcmp(key, "--warmup") == 0) {
            o->warmup = atoi(value);
        } else if (strcmp(key, "--inner") == 0) {
            o->inner = atoi(value);
        } else if (strcmp(key, "--peer") == 0) {
            o->peer = atoi(value);
        } else {
            die("unknown option");
        }
    }
    if (o->reps < 1 || o->inner < 1 || o->npatterns < 1) die("need --patterns, reps >= 1, inner >= 1");
    if (o->peer < 1) die("--peer must name a rank other than 0");
    if (o->warmup < 1) o->warmup = 1;
}

/* Large messages take long per operation: fewer per sample keeps a sweep short. */
static int inner_for(const options *o, long bytes) {
    int n = o->inner;
    if (bytes >= 65536) n /= 10;
    if (bytes >= 524288) n /= 4;
    return n < 1 ? 1 : n;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, int n, double q) {
    return sorted[(int)((n - 1) * q + 0.5)];
}

static void begin(const char *pattern, long bytes) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("BEGIN %s %ld\n", pattern, bytes);
        fflush(stdout);
    }
}

/* Prints rank 0's samples; other ranks' are ignored. */
static void report(const char *pattern, long bytes, double *samples_us, int reps) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    qsort(samples_us, reps, sizeof(double), compare_doubles);
    printf("ROW %s %ld %d %.6f %.6f %.6f\n", pattern, bytes, reps, percentile(samples_us, reps, 0.5),
           percentile(samples_us, reps, 0.1), percentile(samples_us, reps, 0.9));
    fflush(stdout);
}

/* One timed operation of a pattern: runs `count` operations of `bytes`. */
typedef void (*pattern_fn)(long bytes, int count);

/* Times one operation on rank 0 (shared with every rank): an operation far slower
 * than planned (an oversubscribed MPI that busy-polls takes milliseconds per barrier)
 * would make the sweep outlast its timeout, so samples shrink to about
 * SAMPLE_BUDGET_S. */
static int calibrate(long bytes, pattern_fn run, int count) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run(bytes, 1);
    double per_op = MPI_Wtime() - t0;
    MPI_Bcast(&per_op, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (per_op * count > SAMPLE_BUDGET_S) count = (int)(SAMPLE_BUDGET_S / per_op);
    return count < 1 ? 1 : count;
}

/* Warm-up, then `reps` samples, each starting from a barrier so that ranks enter together. */
static void measure(const options *o, const char *pattern, long bytes, pattern_fn run, double per_op_scale) {
    double *samples = calloc(o->reps, sizeof(double));
    begin(pattern, bytes);
    int count = calibrate(bytes, run, inner_for(o, bytes));
    for (int i = 0; i < o->warmup; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        run(bytes, count);
    }
    for (int i = 0; i < o->reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run(bytes, count);
        samples[i] = (MPI_Wtime() - t0) * 1e6 / count * per_op_scale;
    }
    report(pattern, bytes, samples, o->reps);
    free(samples);
}

static inline long max_size(const options *o) {
    long m = 0;
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > m) m = o->sizes[i];
    return m;
}

static inline void need_ranks(int at_least) {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < at_least) die("not enough ranks for this pattern");
}

#endif
