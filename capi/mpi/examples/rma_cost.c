/* Instruction counts of 8 B one-sided calls through the MPI library, for callgrind;
 * rma_cost.rs is the same loop on the native API. Rank 0 runs OP ITERS times on
 * rank `size - 1` (itself when alone): put, get, fop and cas are each followed by
 * MPI_Win_flush in one shared lock epoch; lock is an exclusive MPI_Win_lock +
 * MPI_Win_unlock, slock a shared one, alock MPI_Win_lock_all + MPI_Win_unlock_all.
 * Run it twice under callgrind with different ITERS, counting rma_loop alone: the
 * difference of the totals over the difference of ITERS is the cost of one
 * operation (see the doc comment of rma_cost.rs). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0's loop, out of line so that callgrind counts it alone
 * (--toggle-collect=rma_loop): the waits at start-up and in barriers spin for a number
 * of rounds that differs from run to run. */
static __attribute__((noinline)) void rma_loop(char k, long iters, int t, MPI_Win win) {
    int kind = k == 's' ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
    uint64_t buf = 1, old = 0, compare = 0;
    if (k == 'l' || k == 's') {
        for (long i = 0; i < iters; i++) {
            MPI_Win_lock(kind, t, 0, win);
            MPI_Win_unlock(t, win);
        }
    } else if (k == 'a') {
        for (long i = 0; i < iters; i++) {
            MPI_Win_lock_all(0, win);
            MPI_Win_unlock_all(win);
        }
    } else {
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        for (long i = 0; i < iters; i++) {
            if (k == 'p') MPI_Put(&buf, 8, MPI_CHAR, t, 0, 8, MPI_CHAR, win);
            else if (k == 'g') MPI_Get(&buf, 8, MPI_CHAR, t, 0, 8, MPI_CHAR, win);
            else if (k == 'f') MPI_Fetch_and_op(&buf, &old, MPI_UINT64_T, t, 0, MPI_SUM, win);
            else {
                uint64_t swap = compare + 1;
                MPI_Compare_and_swap(&swap, &compare, &old, MPI_UINT64_T, t, 0, win);
                compare = old + 1;
            }
            MPI_Win_flush(t, win);
        }
        MPI_Win_unlock(t, win);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: rma_cost put|get|fop|cas|lock|slock|alock ITERS\n");
        return 2;
    }
    const char *op = argv[1];
    long iters = atol(argv[2]);
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t *base;
    MPI_Win win;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = size - 1;
    /* The op by its first letter: the loop tests a char, not strings. */
    char k = op[0];
    if (rank == 0) rma_loop(k, iters, t, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
