/* MPI_Win_lock, MPI_Win_unlock, MPI_Win_lock_all and MPI_Win_unlock_all, whose fast
 * paths take sccemu's entries for bindings, under every accumulate strategy:
 *
 *  - an exclusive lock excludes: every rank adds 1 to a counter on every rank, ITERS
 *    times each, as a get, a flush and a put of the value + 1 under an exclusive lock
 *    (not atomic: only the lock makes the count right), and every counter ends at
 *    size * ITERS; shared locks then read it on every rank;
 *  - lock_all: each rank puts its rank into its slot on every rank, unlock_all, and
 *    every slot is seen after the barrier;
 *  - misuse returns its class and leaves the epochs as they were: unlock without a
 *    lock, a lock twice (either type), an unlock of a target not locked, lock_all over
 *    a lock and a lock under lock_all, lock_all twice, unlock_all without lock_all, a
 *    rank out of range (either side, lock and unlock), a bad lock type or assert, the
 *    null window and a freed one; MPI_PROC_NULL does nothing; an epoch that survived an
 *    error still carries RMA and unlocks, and a closed one carries none. */
#include <stdint.h>
#include <string.h>
#include "test_check.h"

static int rank, size;
static MPI_Info info;

enum { ITERS = 50 };

/* Slot 0: the counter; slot 1: written by the previous rank in the misuse tests; slot
 * 2 + r: rank r's under lock_all. */
static MPI_Win window(int64_t **base) {
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)(2 + size) * 8;
    CHECK_RC(MPI_Win_allocate(bytes, 8, info, MPI_COMM_WORLD, base, &win));
    memset(*base, 0, (size_t)bytes);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    return win;
}

static void test_exclusion(MPI_Win win) {
    for (int i = 0; i < ITERS; i++) {
        for (int k = 0; k < size; k++) {
            int t = (rank + k) % size;
            int64_t v = -1;
            CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            CHECK_RC(MPI_Get(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win));
            CHECK_RC(MPI_Win_flush(t, win));
            v += 1;
            CHECK_RC(MPI_Put(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win));
            CHECK_RC(MPI_Win_unlock(t, win));
        }
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < size; t++) {
        int64_t v = -1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        CHECK_RC(MPI_Get(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T, win));
        CHECK_RC(MPI_Win_unlock(t, win));
        CHECK(v == (int64_t)size * ITERS);
    }
}

static void test_lock_all(MPI_Win win, const int64_t *base) {
    int64_t me = 100 + rank;
    CHECK_RC(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; t++) CHECK_RC(MPI_Put(&me, 1, MPI_INT64_T, t, 2 + rank, 1, MPI_INT64_T, win));
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int r = 0; r < size; r++) CHECK(base[2 + r] == 100 + r);
    CHECK_RC(MPI_Win_unlock(rank, win));
}

static void test_misuse(MPI_Win win) {
    int next = (rank + 1) % size, other = (rank + 2) % size; /* other != next: size > 1 */
    int64_t one = 1;
    CHECK_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, -7, 0, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_unlock(size, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_unlock(-7, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Win_lock(7, next, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 1, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_lock_all(1, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_unlock(next, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_lock_all(0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_unlock_all(MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    CHECK_RC(MPI_Win_unlock(MPI_PROC_NULL, win));

    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(other, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(size, win), MPI_ERR_RANK);
    /* Still open after the errors. */
    CHECK_RC(MPI_Put(&one, 1, MPI_INT64_T, next, 1, 1, MPI_INT64_T, win));
    CHECK_RC(MPI_Win_unlock(next, win));
    CHECK_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Put(&one, 1, MPI_INT64_T, next, 1, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC);

    CHECK_RC(MPI_Win_lock_all(0, win));
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(next, win), MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Put(&one, 1, MPI_INT64_T, next, 1, 1, MPI_INT64_T, win));
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Put(&one, 1, MPI_INT64_T, next, 1, 1, MPI_INT64_T, win), MPI_ERR_RMA_SYNC);

    /* An assert takes the general path, which still locks. */
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, next, MPI_MODE_NOCHECK, win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_unlock(next, win));
    CHECK_RC(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    CHECK_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_unlock_all(win));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* MPI_WIN_NULL has no handler of its own: its errors go to MPI_COMM_WORLD's. */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    static const char *strategies[] = {"atomic", "caller", "owner"};
    for (int s = 0; s < 3; s++) {
        CHECK_RC(MPI_Info_create(&info));
        CHECK_RC(MPI_Info_set(info, "sccemu_accumulate_strategy", strategies[s]));
        int64_t *base;
        MPI_Win win = window(&base);
        test_exclusion(win);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        test_lock_all(win, base);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        test_misuse(win);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Win freed = win;
        CHECK_RC(MPI_Win_free(&win));
        CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, freed), MPI_ERR_WIN);
        CHECK_CLASS(MPI_Win_unlock(0, freed), MPI_ERR_WIN);
        CHECK_CLASS(MPI_Win_lock_all(0, freed), MPI_ERR_WIN);
        CHECK_CLASS(MPI_Win_unlock_all(freed), MPI_ERR_WIN);
        CHECK_RC(MPI_Info_free(&info));
        if (rank == 0) printf("strategy %s: ok\n", strategies[s]);
    }
    if (rank == 0) printf("ok rma_locks\n");
    MPI_Finalize();
    return 0;
}
