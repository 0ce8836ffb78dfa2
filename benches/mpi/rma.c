/* One-sided patterns, OSU one-sided style; rank 0 is the origin, rank 1 the target.
 *   put-lock-flush / get-lock-flush   one shared lock epoch; each op is put|get + flush
 *   put-fence / get-fence             each op is put|get + MPI_Win_fence (both ranks)
 *   put-pscw / get-pscw               each op is a start/put|get/complete epoch at the
 *                                     origin matched by post/wait at the target
 *   fetch-and-op                      MPI_Fetch_and_op SUM on a uint64 + flush (8 B)
 *   compare-and-swap                  MPI_Compare_and_swap on a uint64 + flush (8 B)
 *   lock-unlock                       an empty exclusive lock/unlock epoch on rank 1 by
 *                                     every other rank (uncontended with N = 2; N-1
 *                                     contenders otherwise) (0 B)
 *   lock_all-unlock_all               an empty lock_all/unlock_all epoch by rank 0 (0 B)
 *   fence                             MPI_Win_fence on every rank (0 B; any N)
 */
#include "common.h"

#include <stdint.h>

static int rank, size;
static char *local;
static MPI_Win win;
static MPI_Group world_group, origin_group, target_group;

static void put_or_get(int is_put, long bytes) {
    if (is_put) MPI_Put(local, (int)bytes, MPI_CHAR, 1, 0, (int)bytes, MPI_CHAR, win);
    else MPI_Get(local, (int)bytes, MPI_CHAR, 1, 0, (int)bytes, MPI_CHAR, win);
}

static void lock_flush(int is_put, long bytes, int count) {
    if (rank != 0) return;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = 0; i < count; i++) {
        put_or_get(is_put, bytes);
        MPI_Win_flush(1, win);
    }
    MPI_Win_unlock(1, win);
}
static void run_put_lock_flush(long bytes, int count) { lock_flush(1, bytes, count); }
static void run_get_lock_flush(long bytes, int count) { lock_flush(0, bytes, count); }

static void fence(int is_put, long bytes, int count) {
    MPI_Win_fence(0, win);
    for (int i = 0; i < count; i++) {
        if (rank == 0) put_or_get(is_put, bytes);
        MPI_Win_fence(0, win);
    }
}
static void run_put_fence(long bytes, int count) { fence(1, bytes, count); }
static void run_get_fence(long bytes, int count) { fence(0, bytes, count); }

static void pscw(int is_put, long bytes, int count) {
    for (int i = 0; i < count; i++) {
        if (rank == 0) {
            MPI_Win_start(target_group, 0, win);
            put_or_get(is_put, bytes);
            MPI_Win_complete(win);
        } else if (rank == 1) {
            MPI_Win_post(origin_group, 0, win);
            MPI_Win_wait(win);
        }
    }
}
static void run_put_pscw(long bytes, int count) { pscw(1, bytes, count); }
static void run_get_pscw(long bytes, int count) { pscw(0, bytes, count); }

static void run_fetch_and_op(long bytes, int count) {
    (void)bytes;
    if (rank != 0) return;
    uint64_t one = 1, old;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = 0; i < count; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_UINT64_T, 1, 0, MPI_SUM, win);
        MPI_Win_flush(1, win);
    }
    MPI_Win_unlock(1, win);
}

static void run_compare_and_swap(long bytes, int count) {
    (void)bytes;
    if (rank != 0) return;
    uint64_t compare = 0, swap = 0, old;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = 0; i < count; i++) {
        swap = compare + 1;
        MPI_Compare_and_swap(&swap, &compare, &old, MPI_UINT64_T, 1, 0, win);
        MPI_Win_flush(1, win);
        compare = old;
    }
    MPI_Win_unlock(1, win);
}

static void run_lock_unlock(long bytes, int count) {
    (void)bytes;
    if (rank == 1) return;
    for (int i = 0; i < count; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Win_unlock(1, win);
    }
}

static void run_lock_all_unlock_all(long bytes, int count) {
    (void)bytes;
    if (rank != 0) return;
    for (int i = 0; i < count; i++) {
        MPI_Win_lock_all(0, win);
        MPI_Win_unlock_all(win);
    }
}

static void run_fence_only(long bytes, int count) {
    (void)bytes;
    for (int i = 0; i < count; i++) MPI_Win_fence(0, win);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    need_ranks(2);
    options o;
    parse_options(argc, argv, &o);
    long window_bytes = max_size(&o) < 8 ? 8 : max_size(&o);
    local = calloc(window_bytes, 1);
    void *base;
    MPI_Win_allocate(window_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, window_bytes);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int zero = 0, one = 1;
    MPI_Group_incl(world_group, 1, &zero, &origin_group);
    MPI_Group_incl(world_group, 1, &one, &target_group);
    MPI_Barrier(MPI_COMM_WORLD);

    static const struct {
        const char *name;
        pattern_fn run;
    } table[] = {
        {"put-lock-flush", run_put_lock_flush}, {"get-lock-flush", run_get_lock_flush},
        {"put-fence", run_put_fence},           {"get-fence", run_get_fence},
        {"put-pscw", run_put_pscw},             {"get-pscw", run_get_pscw},
        {"fetch-and-op", run_fetch_and_op},     {"compare-and-swap", run_compare_and_swap},
        {"lock-unlock", run_lock_unlock},       {"fence", run_fence_only},
        {"lock_all-unlock_all", run_lock_all_unlock_all},
    };
    for (int p = 0; p < o.npatterns; p++) {
        pattern_fn run = NULL;
        for (size_t t = 0; t < sizeof table / sizeof table[0]; t++)
            if (strcmp(o.patterns[p], table[t].name) == 0) run = table[t].run;
        if (!run) die("rma: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) measure(&o, o.patterns[p], o.sizes[s], run, 1.0);
    }
    MPI_Group_free(&origin_group);
    MPI_Group_free(&target_group);
    MPI_Group_free(&world_group);
    MPI_Win_free(&win);
    free(local);
    MPI_Finalize();
    return 0;
}
