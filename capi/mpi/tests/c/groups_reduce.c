/* Groups from groups (union, intersection, difference, range_incl/excl), MPI_Cart_sub,
 * communicator names, MPI_Reduce_scatter (predefined and non-commutative user ops, in
 * place), MPI_Reduce_local and MPI_Alltoallw, checked against sequential computations;
 * and their errors. */
#include <string.h>
#include "test_check.h"

static int rank, size;

/* Checks that `g` holds exactly the world ranks `want[0..n)`, in order. */
static void check_members(MPI_Group g, const int *want, int n) {
    MPI_Group world;
    int gsize = -1;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_size(g, &gsize));
    CHECK(gsize == n);
    for (int i = 0; i < n; i++) {
        int in_world = -1;
        CHECK_RC(MPI_Group_translate_ranks(g, 1, &i, world, &in_world));
        CHECK(in_world == want[i]);
    }
    CHECK_RC(MPI_Group_free(&world));
}

static void test_groups(void) {
    MPI_Group world, evens, low, u, x, d, r;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ranges[1][3] = {{0, size - 1, 2}};
    CHECK_RC(MPI_Group_range_incl(world, 1, ranges, &evens));
    int want[64], n = 0;
    for (int i = 0; i < size; i += 2) want[n++] = i;
    check_members(evens, want, n);
    int lows = (size + 1) / 2;
    int low_ranges[1][3] = {{lows - 1, 0, -1}};
    CHECK_RC(MPI_Group_range_incl(world, 1, low_ranges, &low));
    /* union: evens, then the low ones that are not even, in low's order (descending). */
    CHECK_RC(MPI_Group_union(evens, low, &u));
    n = 0;
    for (int i = 0; i < size; i += 2) want[n++] = i;
    for (int i = lows - 1; i >= 0; i--)
        if (i % 2) want[n++] = i;
    check_members(u, want, n);
    /* intersection and difference keep the first group's order. */
    CHECK_RC(MPI_Group_intersection(low, evens, &x));
    n = 0;
    for (int i = lows - 1; i >= 0; i--)
        if (i % 2 == 0) want[n++] = i;
    check_members(x, want, n);
    CHECK_RC(MPI_Group_difference(world, evens, &d));
    n = 0;
    for (int i = 1; i < size; i += 2) want[n++] = i;
    check_members(d, want, n);
    /* range_excl of everything but the last, in two ranges going both ways. */
    int ex[2][3] = {{0, (size - 1) / 2, 1}, {size - 2, (size - 1) / 2 + 1, -1}};
    CHECK_RC(MPI_Group_range_excl(world, size > 2 ? 2 : 1, ex, &r));
    want[0] = size - 1;
    check_members(r, want, size >= 2 ? 1 : 0);
    /* The empty results are MPI_GROUP_EMPTY; errors. */
    MPI_Group e;
    CHECK_RC(MPI_Group_difference(evens, world, &e));
    CHECK(e == MPI_GROUP_EMPTY);
    int zero[1][3] = {{0, 1, 0}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, zero, &e), MPI_ERR_ARG);
    int past[1][3] = {{0, size, 1}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, past, &e), MPI_ERR_RANK);
    int twice[2][3] = {{0, 0, 1}, {0, 0, 1}};
    CHECK_CLASS(MPI_Group_range_incl(world, 2, twice, &e), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_union(world, MPI_GROUP_NULL, &e), MPI_ERR_GROUP);
    MPI_Group all[] = {world, evens, low, u, x, d, r};
    for (int i = 0; i < 7; i++) CHECK_RC(MPI_Group_free(&all[i]));
}

/* A 2-D periodic grid's rows and columns. */
static void test_cart_sub(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_RC(MPI_Dims_create(size, 2, dims));
    MPI_Comm grid, row, col, point;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int coords[2];
    CHECK_RC(MPI_Cart_coords(grid, rank, 2, coords));
    int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, keep_none[2] = {0, 0};
    CHECK_RC(MPI_Cart_sub(grid, keep_row, &row));
    CHECK_RC(MPI_Cart_sub(grid, keep_col, &col));
    CHECK_RC(MPI_Cart_sub(grid, keep_none, &point));
    int rsize, rrank, csize, crank, psize, ndims = -1;
    MPI_Comm_size(row, &rsize);
    MPI_Comm_rank(row, &rrank);
    MPI_Comm_size(col, &csize);
    MPI_Comm_rank(col, &crank);
    MPI_Comm_size(point, &psize);
    CHECK(rsize == dims[1] && rrank == coords[1] && csize == dims[0] && crank == coords[0] && psize == 1);
    int d1[1], p1[1], c1[1];
    CHECK_RC(MPI_Cart_get(col, 1, d1, p1, c1));
    CHECK(d1[0] == dims[0] && p1[0] == 1 && c1[0] == coords[0]);
    CHECK_RC(MPI_Cartdim_get(point, &ndims));
    CHECK(ndims == 0);
    /* A row's sum of grid ranks: the ranks of this row are coords[0]*dims[1] + j. */
    int sum = -1;
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(sum == coords[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2);
    CHECK_CLASS(MPI_Cart_sub(MPI_COMM_WORLD, keep_row, &point), MPI_ERR_TOPOLOGY);
    MPI_Comm all[] = {grid, row, col, point};
    for (int i = 0; i < 4; i++) CHECK_RC(MPI_Comm_free(&all[i]));
}

/* A non-commutative op on 2x2 integer matrices (row-major): inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        for (int i = 0; i < 4; i++) b[i] = c[i];
    }
}

/* The matrix rank r contributes at element e. */
static void mat_of(int r, int e, int *m) {
    m[0] = 1;
    m[1] = (r + e) % 3;
    m[2] = (r * e) % 2;
    m[3] = 1 + (r == e % size);
}

static void test_reduce_scatter(void) {
    /* Rank i receives i % 3 + 1 elements, none at ranks 2 mod 3. */
    int counts[64], total = 0, first = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = (i % 3 == 2) ? 0 : i % 3 + 1;
        if (i < rank) first += counts[i];
        total += counts[i];
    }
    long send[256], recv[256];
    for (int e = 0; e < total; e++) send[e] = (long)(rank + 1) * (e + 1);
    CHECK_RC(MPI_Reduce_scatter(send, recv, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < counts[rank]; k++)
        CHECK(recv[k] == (long)(first + k + 1) * size * (size + 1) / 2);
    /* In place: the input in recvbuf, the result at its start. */
    for (int e = 0; e < total; e++) recv[e] = (long)(rank + 1) * (e + 1);
    CHECK_RC(MPI_Reduce_scatter(MPI_IN_PLACE, recv, counts, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    for (int k = 0; k < counts[rank]; k++) CHECK(recv[k] == (long)size * (first + k + 1));
    /* A non-commutative user op on a contiguous type of four ints: rank order. */
    MPI_Datatype mat;
    MPI_Op mul;
    CHECK_RC(MPI_Type_contiguous(4, MPI_INT, &mat));
    CHECK_RC(MPI_Type_commit(&mat));
    CHECK_RC(MPI_Op_create(matmul, 0, &mul));
    int in[256][4], out[256][4];
    for (int e = 0; e < total; e++) mat_of(rank, e, in[e]);
    CHECK_RC(MPI_Reduce_scatter(in, out, counts, mat, mul, MPI_COMM_WORLD));
    for (int k = 0; k < counts[rank]; k++) {
        int e = first + k, acc[4];
        mat_of(0, e, acc);
        for (int r = 1; r < size; r++) {
            int m[4], one = 1;
            mat_of(r, e, m);
            matmul(acc, m, &one, &mat); /* m = acc * m */
            for (int i = 0; i < 4; i++) acc[i] = m[i];
        }
        for (int i = 0; i < 4; i++) CHECK(out[k][i] == acc[i]);
    }
    /* MPI_Reduce_local: inout = in op inout, with both op kinds. */
    int a[2][4], b[2][4], two = 2;
    mat_of(1, 0, a[0]);
    mat_of(2, 1, a[1]);
    mat_of(3, 0, b[0]);
    mat_of(0, 1, b[1]);
    int want[2][4];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) want[k][i] = b[k][i];
    matmul(a, want, &two, &mat);
    CHECK_RC(MPI_Reduce_local(a, b, 2, mat, mul));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) CHECK(b[k][i] == want[k][i]);
    double x[3] = {1.5, -2, 4}, y[3] = {2, 2, 2};
    CHECK_RC(MPI_Reduce_local(x, y, 3, MPI_DOUBLE, MPI_PROD));
    CHECK(y[0] == 3 && y[1] == -4 && y[2] == 8);
    CHECK_CLASS(MPI_Reduce_local(x, y, 3, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
    /* Errors: a negative count everywhere; a bad op everywhere. Then still usable. */
    int bad[64];
    for (int i = 0; i < size; i++) bad[i] = counts[i];
    bad[0] = -1;
    CHECK_CLASS(MPI_Reduce_scatter(send, recv, bad, MPI_LONG, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    int cls = -1;
    MPI_Error_class(MPI_Reduce_scatter(send, recv, counts, MPI_LONG, MPI_OP_NULL, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_OP);
    CHECK_RC(MPI_Reduce_scatter(send, recv, counts, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < counts[rank]; k++)
        CHECK(recv[k] == (long)(first + k + 1) * size * (size + 1) / 2);
    CHECK_RC(MPI_Op_free(&mul));
    CHECK_RC(MPI_Type_free(&mat));
}

/* Communicator names: the predefined ones', a set one (cut to fit), none on a dup. */
static void test_names(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
    MPI_Comm dup, dup2;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == 0 && name[0] == 0);
    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    CHECK_RC(MPI_Comm_set_name(dup, longer));
    CHECK_RC(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len);
    CHECK_RC(MPI_Comm_set_name(dup, "halo rows"));
    CHECK_RC(MPI_Comm_dup(dup, &dup2));
    CHECK_RC(MPI_Comm_get_name(dup, name, &len));
    CHECK(strcmp(name, "halo rows") == 0 && len == 9);
    CHECK_RC(MPI_Comm_get_name(dup2, name, &len));
    CHECK(len == 0);
    CHECK_CLASS(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM);
    CHECK_RC(MPI_Comm_free(&dup2));
    CHECK_RC(MPI_Comm_free(&dup));
}

/* Alltoallw: a's block for b is c(a, b) ints or doubles, T(a, b), at byte offsets in
 * rank order on the send side and in reverse on the receive side. */
static int c_of(int a, int b) { return (a + 2 * b) % 3 + 1; }
static MPI_Datatype t_of(int a, int b) { return (a + b) % 2 ? MPI_DOUBLE : MPI_INT; }

static void test_alltoallw(void) {
    enum { SLOT = 64 };
    static char send[64 * SLOT], recv[64 * SLOT];
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype st[64], rt[64];
    memset(recv, 0x5a, sizeof recv);
    for (int b = 0; b < size; b++) {
        sc[b] = c_of(rank, b), sd[b] = b * SLOT, st[b] = t_of(rank, b);
        rc[b] = c_of(b, rank), rd[b] = (size - 1 - b) * SLOT, rt[b] = t_of(b, rank);
        for (int i = 0; i < sc[b]; i++) {
            if (st[b] == MPI_INT) ((int *)(send + sd[b]))[i] = rank * 1000 + b * 10 + i;
            else ((double *)(send + sd[b]))[i] = rank * 1000 + b * 10 + i + 0.5;
        }
    }
    CHECK_RC(MPI_Alltoallw(send, sc, sd, st, recv, rc, rd, rt, MPI_COMM_WORLD));
    for (int a = 0; a < size; a++)
        for (int i = 0; i < rc[a]; i++) {
            double want = a * 1000 + rank * 10 + i + (rt[a] == MPI_DOUBLE ? 0.5 : 0);
            double got = rt[a] == MPI_INT ? ((int *)(recv + rd[a]))[i] : ((double *)(recv + rd[a]))[i];
            CHECK(got == want);
        }
    /* A receive block too small for what comes: MPI_ERR_TRUNCATE, on that rank. */
    int cls = MPI_SUCCESS;
    rc[rank] = 0;
    MPI_Error_class(MPI_Alltoallw(send, sc, sd, st, recv, rc, rd, rt, MPI_COMM_WORLD), &cls);
    CHECK(cls == MPI_ERR_TRUNCATE);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_groups();
    test_cart_sub();
    test_names();
    test_reduce_scatter();
    test_alltoallw();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok groups_reduce\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
