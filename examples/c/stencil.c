/*
 * stencil: a 5-point Jacobi stencil on a square grid with fixed boundaries,
 * split into blocks of rows, one block per UE.  Each iteration exchanges one
 * halo row with each neighbour through RCCE's synchronous send/recv, then
 * updates the block.  At the end UE 0 gathers the grid and checks it against
 * a sequential run of the same iterations, bit for bit.
 *
 *     rccerun -nue 16 ./stencil [iterations] [grid size]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "RCCE.h"

static int n; /* grid is n x n, boundary included */

static double initial(int i, int j)
{
    if (i == 0)
        return 1.0; /* a hot top edge */
    if (j == 0 || j == n - 1 || i == n - 1)
        return 0.0;
    return 0.5 * sin(0.1 * i) * cos(0.1 * j);
}

/* One Jacobi sweep of rows 1..rows of `old` into `new` (row length n). */
static void sweep(const double *old, double *new, int rows)
{
    int i, j;
    for (i = 1; i <= rows; i++)
        for (j = 1; j < n - 1; j++)
            new[i * n + j] = 0.25 * (old[(i - 1) * n + j] + old[(i + 1) * n + j] +
                                     old[i * n + j - 1] + old[i * n + j + 1]);
}

int RCCE_APP(int argc, char **argv)
{
    int iters, me, np, first, rows, it, i, j, r, ok = 1;
    double *a, *b, t0, elapsed;
    size_t row;

    RCCE_init(&argc, &argv);
    iters = argc > 1 ? atoi(argv[1]) : 100;
    n = argc > 2 ? atoi(argv[2]) : 258;
    me = RCCE_ue();
    np = RCCE_num_ues();
    if (n - 2 < np) {
        if (me == 0)
            printf("stencil: a %d-point grid has fewer interior rows than %d UEs\n", n, np);
        RCCE_finalize();
        return 1;
    }
    row = (size_t)n * sizeof(double);
    /* My interior rows: first..first+rows-1 of the global grid. */
    first = 1 + (int)((long)(n - 2) * me / np);
    rows = 1 + (int)((long)(n - 2) * (me + 1) / np) - first;
    a = malloc((size_t)(rows + 2) * row);
    b = malloc((size_t)(rows + 2) * row);
    for (i = 0; i < rows + 2; i++)
        for (j = 0; j < n; j++)
            a[i * n + j] = b[i * n + j] = initial(first - 1 + i, j);

    RCCE_barrier(&RCCE_COMM_WORLD);
    t0 = RCCE_wtime();
    for (it = 0; it < iters; it++) {
        /* Halo rows: even UEs talk up then down, odd ones the other way round. */
        int up = me - 1, down = me + 1, k;
        for (k = 0; k < 2; k++) {
            int to_up = (k == 0) == (me % 2 == 0);
            if (to_up && up >= 0) {
                if (me % 2 == 0) {
                    RCCE_send((char *)&a[1 * n], row, up);
                    RCCE_recv((char *)&a[0], row, up);
                } else {
                    RCCE_recv((char *)&a[0], row, up);
                    RCCE_send((char *)&a[1 * n], row, up);
                }
            } else if (!to_up && down < np) {
                if (me % 2 == 0) {
                    RCCE_send((char *)&a[rows * n], row, down);
                    RCCE_recv((char *)&a[(rows + 1) * n], row, down);
                } else {
                    RCCE_recv((char *)&a[(rows + 1) * n], row, down);
                    RCCE_send((char *)&a[rows * n], row, down);
                }
            }
        }
        sweep(a, b, rows);
        { double *t = a; a = b; b = t; }
    }
    elapsed = RCCE_wtime() - t0;

    /* Gather the blocks on UE 0 and compare with a sequential run. */
    if (me == 0) {
        double *grid = malloc((size_t)n * row), *seq = malloc((size_t)n * row), *tmp = malloc((size_t)n * row);
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++)
                grid[i * n + j] = seq[i * n + j] = tmp[i * n + j] = initial(i, j);
        memcpy(&grid[first * n], &a[n], (size_t)rows * row);
        for (r = 1; r < np; r++) {
            int f = 1 + (int)((long)(n - 2) * r / np), m = 1 + (int)((long)(n - 2) * (r + 1) / np) - f;
            RCCE_recv((char *)&grid[f * n], (size_t)m * row, r);
        }
        for (it = 0; it < iters; it++) {
            sweep(seq, tmp, n - 2);
            { double *t = seq; seq = tmp; tmp = t; }
        }
        for (i = 0; i < n * n; i++)
            ok &= grid[i] == seq[i];
        printf("stencil: %d UEs, %dx%d grid, %d iterations: %.3f s, %.1f us per iteration, %s\n", np, n, n,
               iters, elapsed, elapsed / iters * 1e6, ok ? "matches the sequential run" : "WRONG");
        free(grid);
        free(seq);
        free(tmp);
    } else {
        RCCE_send((char *)&a[n], (size_t)rows * row, 0);
    }
    free(a);
    free(b);
    RCCE_finalize();
    return ok ? 0 : 1;
}
