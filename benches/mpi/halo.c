/* Ghost-cell exchange, the MPICH2 synchronization paper's Tables 1 and 2: the ranks
 * form a periodic 2-D grid (MPI_Dims_create) and each exchanges `bytes` with its 4
 * neighbours per operation. The same work as sccemu's Rust halo suite
 * (benches/src/exchange.rs), step for step:
 *   halo-p2p    irecv x4 into the ghost buffer, isend x4, waitall
 *   halo-fence  put x4 into the neighbours' window slots, MPI_Win_fence, copy out
 *   halo-pscw   post/start on the neighbour group, put x4, complete, wait, copy out
 *   halo-lock   per distinct neighbour: shared lock, its puts, unlock; then a barrier,
 *               after which every slot is known to be filled; copy out
 * Each rank's window holds 2 x 4 slots, one set per step parity: a put travelling in
 * direction d lands in the target's slot for the opposite side in this step's set, so
 * a neighbour one step ahead never overwrites a slot still being read. The one-sided
 * versions copy their 4 slots out into the ghost buffer after each step, where the
 * two-sided version receives directly. */
#include "common.h"

static int rank, size, neighbour[4], distinct[4], ndistinct;
static char *send_buffer, *ghost, *window;
static MPI_Win win;
static MPI_Group neighbours;
static MPI_Request requests[8];
static int step;

static int opposite(int d) { return d ^ 1; }

static void run_p2p(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        for (int d = 0; d < 4; d++)
            MPI_Irecv(ghost + opposite(d) * bytes, (int)bytes, MPI_CHAR, neighbour[opposite(d)], d,
                      MPI_COMM_WORLD, &requests[d]);
        for (int d = 0; d < 4; d++)
            MPI_Isend(send_buffer + d * bytes, (int)bytes, MPI_CHAR, neighbour[d], d, MPI_COMM_WORLD,
                      &requests[4 + d]);
        MPI_Waitall(8, requests, MPI_STATUSES_IGNORE);
    }
}

/* Byte offset of the slot for data from direction `from`, in the set of `parity`. */
static long slot(int parity, int from, long bytes) { return (parity * 4L + from) * bytes; }

static void put_to(int d, int parity, long bytes) {
    MPI_Put(send_buffer + d * bytes, (int)bytes, MPI_CHAR, neighbour[d], slot(parity, opposite(d), bytes),
            (int)bytes, MPI_CHAR, win);
}

static void put_all(int parity, long bytes) {
    for (int d = 0; d < 4; d++) put_to(d, parity, bytes);
}

/* After the step's synchronisation: this step's slots into the ghost buffer. */
static void copy_out(int parity, long bytes) {
    for (int d = 0; d < 4; d++) memcpy(ghost + d * bytes, window + slot(parity, d, bytes), (size_t)bytes);
}

static void run_fence(long bytes, int count) {
    MPI_Win_fence(0, win);
    for (int i = 0; i < count; i++) {
        int parity = ++step % 2;
        put_all(parity, bytes);
        MPI_Win_fence(0, win);
        copy_out(parity, bytes);
    }
}

static void run_pscw(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        int parity = ++step % 2;
        MPI_Win_post(neighbours, 0, win);
        MPI_Win_start(neighbours, 0, win);
        put_all(parity, bytes);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        copy_out(parity, bytes);
    }
}

static void run_lock(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        int parity = ++step % 2;
        for (int u = 0; u < ndistinct; u++) {
            MPI_Win_lock(MPI_LOCK_SHARED, distinct[u], 0, win);
            for (int d = 0; d < 4; d++)
                if (neighbour[d] == distinct[u]) put_to(d, parity, bytes);
            MPI_Win_unlock(distinct[u], win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        copy_out(parity, bytes);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    parse_options(argc, argv, &o);

    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_shift(grid, 0, 1, &neighbour[0], &neighbour[1]);
    MPI_Cart_shift(grid, 1, 1, &neighbour[2], &neighbour[3]);

    /* PSCW groups must not repeat a rank: with 2 columns, left and right coincide. */
    for (int d = 0; d < 4; d++) {
        int seen = 0;
        for (int u = 0; u < ndistinct; u++) seen |= distinct[u] == neighbour[d];
        if (!seen) distinct[ndistinct++] = neighbour[d];
    }
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, ndistinct, distinct, &neighbours);

    long most = max_size(&o) < 1 ? 1 : max_size(&o);
    send_buffer = calloc(4 * most, 1);
    ghost = calloc(4 * most, 1);
    MPI_Win_allocate(8 * most, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int p = 0; p < o.npatterns; p++) {
        const char *name = o.patterns[p];
        pattern_fn run = strcmp(name, "halo-p2p") == 0     ? run_p2p
                         : strcmp(name, "halo-fence") == 0 ? run_fence
                         : strcmp(name, "halo-pscw") == 0  ? run_pscw
                         : strcmp(name, "halo-lock") == 0  ? run_lock
                                                           : NULL;
        if (!run) die("halo: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) measure(&o, name, o.sizes[s], run, 1.0);
    }
    MPI_Win_free(&win);
    MPI_Group_free(&neighbours);
    MPI_Group_free(&world);
    MPI_Comm_free(&grid);
    free(send_buffer);
    free(ghost);
    MPI_Finalize();
    return 0;
}
