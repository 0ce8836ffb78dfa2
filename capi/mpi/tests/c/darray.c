/* MPI_Type_create_darray: every rank's part of a distributed 7 x 10 array, in C and
 * Fortran order, block and cyclic distributions over a 2-D process grid, checked
 * element by element against the distributions' formulas; the parts cover the array
 * exactly once; decoding; errors. */
#include <string.h>
#include "test_check.h"

enum { ROWS = 7, COLS = 10, N = ROWS * COLS, TAG = 4 };

/* Storage position of element (row, col). */
static int at(int row, int col, int order) {
    return order == MPI_ORDER_C ? row * COLS + col : row + ROWS * col;
}

/* The rank that owns (row, col): rows in blocks of ceil(ROWS / p0) (or blocks of
 * `rows_block` if positive), columns dealt round in blocks of 2. */
static int owner(int row, int col, const int psizes[2], int rows_block) {
    int b0 = rows_block > 0 ? rows_block : (ROWS + psizes[0] - 1) / psizes[0];
    int c0 = row / b0, c1 = (col / 2) % psizes[1];
    return c0 * psizes[1] + c1;
}

/* Rank 0 gathers every rank's part, sent from a copy of the array holding
 * rank * 1000 + position, and checks who sent each element. */
static void gather_and_check(int rank, int size, int order, const int psizes[2], int rows_block) {
    int gsizes[2] = {ROWS, COLS};
    int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {rows_block > 0 ? rows_block : MPI_DISTRIBUTE_DFLT_DARG, 2};
    int mine[N], out[N];
    for (int i = 0; i < N; i++) mine[i] = rank * 1000 + i;
    MPI_Datatype part;
    CHECK_RC(MPI_Type_create_darray(size, rank, 2, gsizes, distribs, dargs, psizes, order, MPI_INT, &part));
    CHECK_RC(MPI_Type_commit(&part));
    MPI_Aint lb, extent;
    CHECK_RC(MPI_Type_get_extent(part, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)(N * sizeof(int)));
    int bytes = 0, total = 0;
    CHECK_RC(MPI_Type_size(part, &bytes));
    CHECK_RC(MPI_Reduce(&bytes, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_Request send;
    CHECK_RC(MPI_Isend(mine, 1, part, 0, TAG, MPI_COMM_WORLD, &send));
    if (rank == 0) {
        for (int i = 0; i < N; i++) out[i] = -1;
        /* The parts add up to the array, and each lands where its rank owns. */
        CHECK(total == (int)(N * sizeof(int)));
        for (int r = 0; r < size; r++) {
            MPI_Datatype theirs;
            CHECK_RC(MPI_Type_create_darray(size, r, 2, gsizes, distribs, dargs, psizes, order, MPI_INT, &theirs));
            CHECK_RC(MPI_Type_commit(&theirs));
            CHECK_RC(MPI_Recv(out, 1, theirs, r, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Type_free(&theirs));
        }
        for (int row = 0; row < ROWS; row++)
            for (int col = 0; col < COLS; col++) {
                int i = at(row, col, order);
                CHECK(out[i] == owner(row, col, psizes, rows_block) * 1000 + i);
            }
    }
    CHECK_RC(MPI_Wait(&send, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Type_free(&part));
}

static void decoding(int size) {
    int gsizes[1] = {N}, distribs[1] = {MPI_DISTRIBUTE_CYCLIC}, dargs[1] = {3}, psizes[1] = {size};
    MPI_Datatype t;
    CHECK_RC(MPI_Type_create_darray(size, size - 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_DOUBLE, &t));
    int ni, na, nd, combiner;
    CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_DARRAY && ni == 8 && na == 0 && nd == 1);
    int ints[8];
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    CHECK_RC(MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types));
    int want[8] = {size, size - 1, 1, N, MPI_DISTRIBUTE_CYCLIC, 3, size, MPI_ORDER_C};
    CHECK(memcmp(ints, want, sizeof want) == 0 && types[0] == MPI_DOUBLE);
    /* Cyclic blocks of 3 over `size` ranks: the last rank's share of 70 elements. */
    int expect = 0;
    for (int i = 0; i < N; i++) expect += (i / 3) % size == size - 1;
    int bytes;
    CHECK_RC(MPI_Type_size(t, &bytes));
    CHECK(bytes == expect * (int)sizeof(double));
    CHECK_RC(MPI_Type_free(&t));
}

static void errors(int size) {
    int gsizes[2] = {ROWS, COLS}, dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    int block[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int grid[2] = {size, 1}, wrong_grid[2] = {size + 1, 1};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    CHECK_CLASS(MPI_Type_create_darray(size, 0, 2, gsizes, block, dargs, wrong_grid, MPI_ORDER_C, MPI_INT, &t),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_darray(size, size, 2, gsizes, block, dargs, grid, MPI_ORDER_C, MPI_INT, &t),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Type_create_darray(size, 0, 0, gsizes, block, dargs, grid, MPI_ORDER_C, MPI_INT, &t),
                MPI_ERR_DIMS);
    int small[2] = {1, 1};  /* blocks of 1 cannot cover 7 rows unless 7 ranks share them */
    if (size < ROWS)
        CHECK_CLASS(MPI_Type_create_darray(size, 0, 2, gsizes, block, small, grid, MPI_ORDER_C, MPI_INT, &t),
                    MPI_ERR_ARG);
    int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
    if (size > 1)
        CHECK_CLASS(MPI_Type_create_darray(size, 0, 2, gsizes, none, dargs, grid, MPI_ORDER_C, MPI_INT, &t),
                    MPI_ERR_ARG);
    int bad[2] = {MPI_DISTRIBUTE_BLOCK, 77};
    CHECK_CLASS(MPI_Type_create_darray(size, 0, 2, gsizes, bad, dargs, grid, MPI_ORDER_C, MPI_INT, &t),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_darray(size, 0, 2, gsizes, block, dargs, grid, 99, MPI_INT, &t), MPI_ERR_ARG);
    CHECK(t == MPI_DATATYPE_NULL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int psizes[2] = {0, 0};
    CHECK_RC(MPI_Dims_create(size, 2, psizes));
    gather_and_check(rank, size, MPI_ORDER_C, psizes, 0);
    gather_and_check(rank, size, MPI_ORDER_FORTRAN, psizes, 0);
    /* Explicit row blocks: 4 over 2 ranks; over more, all 7 rows go to rank 0 and the
     * other ranks' types are empty. */
    int tall[2] = {size, 1};
    gather_and_check(rank, size, MPI_ORDER_C, tall, size > 2 ? ROWS : 4);
    decoding(size);
    errors(size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("ok darray\n");
    MPI_Finalize();
    return 0;
}
