/* 9-point stencil on a 2-D grid split by rows (the RCKMPI paper's CFD-like automaton):
 * strong scaling of a fixed grid of GLOBAL_ROWS rows; each row holds `bytes` of f64, so
 * the halo a rank exchanges with each of its (at most 2) neighbours per step is `bytes`.
 * One operation is one step: exchange halos, then every interior cell becomes the mean
 * of its 3x3 neighbourhood.
 *   stencil-p2p    irecv/isend of the boundary rows, waitall
 *   stencil-fence  put of the boundary rows into the neighbours' ghost rows, fence
 *   stencil-pscw   the same puts in a post/start/complete/wait epoch with the neighbours
 *   stencil-lock   the same puts each under a shared lock, then a barrier
 * Speedup is the report's: time per step at 1 rank over time per step at N. */
#include "common.h"

#define GLOBAL_ROWS 512

static int rank, size, up, down, rows, width;
/* The window: two sets of ghost rows, each [from up, from down]. Fence alternates them
 * by step parity: a neighbour's put of the next step may land while this rank still
 * copies the last one out. PSCW and lock use set 0 (their handshakes order it). */
static double *grid, *next, *ghosts;
static MPI_Win win;
static MPI_Group neighbours;
static MPI_Request requests[4];

static double *row(double *g, int r) { return g + (size_t)r * width; }

/* Rows 0 and rows+1 of the grid are the ghosts; rows 1..rows are this rank's. */
static void compute(void) {
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j < width - 1; j++) {
            double sum = 0;
            for (int di = -1; di <= 1; di++)
                for (int dj = -1; dj <= 1; dj++) sum += row(grid, i + di)[j + dj];
            row(next, i)[j] = sum / 9.0;
        }
    double *t = grid;
    grid = next;
    next = t;
}

static void ghosts_into_grid(int set) {
    double *from = ghosts + (size_t)set * 2 * width;
    if (up != MPI_PROC_NULL) memcpy(row(grid, 0), from, width * sizeof(double));
    if (down != MPI_PROC_NULL) memcpy(row(grid, rows + 1), from + width, width * sizeof(double));
}

/* My first row goes to the rank above (its "from down" ghost), my last to the one below. */
static void put_boundaries(int set, int locked) {
    MPI_Aint base = (MPI_Aint)set * 2 * width;
    if (up != MPI_PROC_NULL) {
        if (locked) MPI_Win_lock(MPI_LOCK_SHARED, up, 0, win);
        MPI_Put(row(grid, 1), width, MPI_DOUBLE, up, base + width, width, MPI_DOUBLE, win);
        if (locked) MPI_Win_unlock(up, win);
    }
    if (down != MPI_PROC_NULL) {
        if (locked) MPI_Win_lock(MPI_LOCK_SHARED, down, 0, win);
        MPI_Put(row(grid, rows), width, MPI_DOUBLE, down, base, width, MPI_DOUBLE, win);
        if (locked) MPI_Win_unlock(down, win);
    }
}

static void run_p2p(long bytes, int count) {
    (void)bytes;
    for (int i = 0; i < count; i++) {
        MPI_Irecv(row(grid, 0), width, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &requests[0]);
        MPI_Irecv(row(grid, rows + 1), width, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &requests[1]);
        MPI_Isend(row(grid, 1), width, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &requests[2]);
        MPI_Isend(row(grid, rows), width, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &requests[3]);
        MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
        compute();
    }
}

static void run_fence(long bytes, int count) {
    (void)bytes;
    MPI_Win_fence(0, win);
    for (int i = 0; i < count; i++) {
        put_boundaries(i % 2, 0);
        MPI_Win_fence(0, win);
        ghosts_into_grid(i % 2);
        compute();
    }
}

static void run_pscw(long bytes, int count) {
    (void)bytes;
    for (int i = 0; i < count; i++) {
        MPI_Win_post(neighbours, 0, win);
        MPI_Win_start(neighbours, 0, win);
        put_boundaries(0, 0);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        ghosts_into_grid(0);
        compute();
    }
}

static void run_lock(long bytes, int count) {
    (void)bytes;
    for (int i = 0; i < count; i++) {
        put_boundaries(0, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        ghosts_into_grid(0);
        compute();
        /* Nobody may overwrite a ghost row before its owner has copied it. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    parse_options(argc, argv, &o);
    up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    rows = GLOBAL_ROWS / size + (rank < GLOBAL_ROWS % size);

    int members[2], nmembers = 0;
    if (up != MPI_PROC_NULL) members[nmembers++] = up;
    if (down != MPI_PROC_NULL) members[nmembers++] = down;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, nmembers, members, &neighbours);

    long widest = max_size(&o) / 8 < 3 ? 3 : max_size(&o) / 8;
    MPI_Win_allocate(4 * widest * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &ghosts, &win);
    grid = calloc((size_t)(rows + 2) * widest, sizeof(double));
    next = calloc((size_t)(rows + 2) * widest, sizeof(double));

    for (int p = 0; p < o.npatterns; p++) {
        const char *name = o.patterns[p];
        pattern_fn run = strcmp(name, "stencil-p2p") == 0     ? run_p2p
                         : strcmp(name, "stencil-fence") == 0 ? run_fence
                         : strcmp(name, "stencil-pscw") == 0  ? run_pscw
                         : strcmp(name, "stencil-lock") == 0  ? run_lock
                                                              : NULL;
        if (!run) die("stencil: unknown pattern");
        for (int s = 0; s < o.nsizes; s++) {
            width = o.sizes[s] / 8 < 3 ? 3 : (int)(o.sizes[s] / 8);
            for (long c = 0; c < (long)(rows + 2) * width; c++) grid[c] = next[c] = (double)(c % 7);
            measure(&o, name, o.sizes[s], run, 1.0);
        }
    }
    MPI_Win_free(&win);
    MPI_Group_free(&neighbours);
    MPI_Group_free(&world);
    free(grid);
    free(next);
    MPI_Finalize();
    return 0;
}
