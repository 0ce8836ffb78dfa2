/* Neighbourhood collectives (allgather, allgatherv, alltoall, alltoallv, alltoallw) on
 * Cartesian grids (periodic and not, dimensions of 1 and 2 where a neighbour is both
 * source and destination) and on a distributed graph with repeated edges, checked
 * against the topology's own neighbours; alltoallw with another datatype per neighbour
 * and absolute addresses from MPI_BOTTOM; and the errors of bad arguments, after which
 * the communicator still works. */
#include "test_check.h"

static int rank, size;

/* Byte storage for alltoallw's blocks, aligned for ints and doubles. */
typedef union {
    double d[64];
    int i[128];
    char c[512];
} store_t;

/* alltoallw on the grid of test_grid: blocks along dimension 0 are 3 ints, sent as a
 * vector of stride 2 and received as 3 MPI_INTs; along dimension 1, 2 doubles, sent
 * as 2 MPI_DOUBLEs and received as one contiguous pair. Block j goes at byte 64 * j. */
static void test_alltoallw_grid(MPI_Comm grid, const int nb[4]) {
    MPI_Datatype strided, pair;
    CHECK_RC(MPI_Type_vector(3, 1, 2, MPI_INT, &strided));
    CHECK_RC(MPI_Type_commit(&strided));
    CHECK_RC(MPI_Type_contiguous(2, MPI_DOUBLE, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    store_t out, in;
    int sc[4], rc[4];
    MPI_Aint sd[4], rd[4];
    MPI_Datatype st[4], rt[4];
    for (int i = 0; i < 128; i++) out.i[i] = in.i[i] = -1;
    for (int j = 0; j < 4; j++) {
        sd[j] = rd[j] = 64 * j;
        if (j / 2 == 0) {
            for (int e = 0; e < 3; e++) out.i[16 * j + 2 * e] = rank * 100 + j * 10 + e;
            sc[j] = 1, st[j] = strided, rc[j] = 3, rt[j] = MPI_INT;
        } else {
            for (int e = 0; e < 2; e++) out.d[8 * j + e] = rank * 100 + j * 10 + e + 0.5;
            sc[j] = 2, st[j] = MPI_DOUBLE, rc[j] = 1, rt[j] = pair;
        }
    }
    CHECK_RC(MPI_Neighbor_alltoallw(out.c, sc, sd, st, in.c, rc, rd, rt, grid));
    /* Neighbour k sent its block k ^ 1 toward us. */
    for (int k = 0; k < 4; k++) {
        int from = nb[k], j = k ^ 1;
        for (int e = 0; e < (k / 2 == 0 ? 3 : 2); e++) {
            if (k / 2 == 0)
                CHECK(in.i[16 * k + e] == (from == MPI_PROC_NULL ? -1 : from * 100 + j * 10 + e));
            else if (from == MPI_PROC_NULL)
                CHECK(in.i[16 * k + 2 * e] == -1 && in.i[16 * k + 2 * e + 1] == -1);
            else
                CHECK(in.d[8 * k + e] == from * 100 + j * 10 + e + 0.5);
        }
    }
    /* Errors, on every member alike, then the call still works: an uncommitted type,
     * a negative count, a null buffer for a non-empty block. */
    MPI_Datatype loose;
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &loose));
    rt[0] = loose;
    CHECK_CLASS(MPI_Neighbor_alltoallw(out.c, sc, sd, st, in.c, rc, rd, rt, grid), MPI_ERR_TYPE);
    rt[0] = MPI_INT;
    sc[1] = -1;
    CHECK_CLASS(MPI_Neighbor_alltoallw(out.c, sc, sd, st, in.c, rc, rd, rt, grid), MPI_ERR_COUNT);
    sc[1] = 1;
    CHECK_CLASS(MPI_Neighbor_alltoallw(NULL, sc, sd, st, in.c, rc, rd, rt, grid), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Neighbor_alltoallw(out.c, sc, sd, st, in.c, rc, rd, rt, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    for (int i = 0; i < 128; i++) in.i[i] = -1;
    CHECK_RC(MPI_Neighbor_alltoallw(out.c, sc, sd, st, in.c, rc, rd, rt, grid));
    for (int k = 0; k < 2; k++)
        CHECK(in.i[16 * k] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k] * 100 + (k ^ 1) * 10));
    CHECK_RC(MPI_Type_free(&loose));
    CHECK_RC(MPI_Type_free(&strided));
    CHECK_RC(MPI_Type_free(&pair));
}

/* A 2-D grid, periodic in dimension 0 only. */
static void test_grid(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_RC(MPI_Dims_create(size, 2, dims));
    MPI_Comm grid;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    int nb[4];
    CHECK_RC(MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]));
    CHECK_RC(MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]));
    /* allgather: block k is neighbour k's rank, or untouched for MPI_PROC_NULL. */
    int got[4] = {-7, -7, -7, -7};
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, grid));
    for (int k = 0; k < 4; k++) CHECK(got[k] == (nb[k] == MPI_PROC_NULL ? -7 : nb[k]));
    /* alltoall: block j goes to neighbour j; neighbour k sent us its block k ^ 1. */
    long out[4][2], in[4][2];
    for (int j = 0; j < 4; j++) {
        out[j][0] = rank * 100 + j;
        out[j][1] = -(rank * 100 + j);
        in[j][0] = in[j][1] = -1;
    }
    CHECK_RC(MPI_Neighbor_alltoall(out, 2, MPI_LONG, in, 2, MPI_LONG, grid));
    for (int k = 0; k < 4; k++) {
        long want = nb[k] == MPI_PROC_NULL ? -1 : nb[k] * 100 + (k ^ 1);
        CHECK(in[k][0] == want && in[k][1] == (nb[k] == MPI_PROC_NULL ? -1 : -want));
    }
    /* allgatherv into blocks of 3 elements at scattered displacements. */
    int counts[4] = {2, 0, 1, 3}, displs[4] = {12, 0, 8, 1}, many[16];
    int mine[3] = {rank, rank + 1000, rank + 2000};
    for (int i = 0; i < 16; i++) many[i] = -5;
    int eq[4] = {3, 3, 3, 3}, edispl[4] = {12, 0, 8, 4};
    CHECK_RC(MPI_Neighbor_allgatherv(mine, 3, MPI_INT, many, eq, edispl, MPI_INT, grid));
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++)
            CHECK(many[edispl[k] + i] == (nb[k] == MPI_PROC_NULL ? -5 : nb[k] + 1000 * i));
    /* alltoallv into blocks of 2, 0, 1, 3 elements, in another order: block j to
     * neighbour j holds counts[j ^ 1] elements, the block its receiver (to which we are
     * neighbour j ^ 1) has for us. */
    int sc[4], sd[4], src_buf[16];
    for (int j = 0; j < 4; j++) {
        sc[j] = counts[j ^ 1];
        sd[j] = 4 * j;
        for (int i = 0; i < 4; i++) src_buf[4 * j + i] = rank * 10 + j + 1000 * i;
    }
    for (int i = 0; i < 16; i++) many[i] = -5;
    CHECK_RC(MPI_Neighbor_alltoallv(src_buf, sc, sd, MPI_INT, many, counts, displs, MPI_INT, grid));
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < counts[k]; i++)
            CHECK(many[displs[k] + i] == (nb[k] == MPI_PROC_NULL ? -5 : nb[k] * 10 + (k ^ 1) + 1000 * i));
    test_alltoallw_grid(grid, nb);
    CHECK_RC(MPI_Comm_free(&grid));
}

/* A periodic grid of one process: both neighbours are itself, and each block still
 * goes to its own place (block 0 gets what was sent toward +1, block 1 toward -1). */
static void test_self_grid(void) {
    MPI_Comm alone, ring;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone));
    int one = 1, periodic = 1;
    CHECK_RC(MPI_Cart_create(alone, 1, &one, &periodic, 0, &ring));
    int out[2] = {rank * 2, rank * 2 + 1}, in[2] = {-1, -1};
    CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring));
    CHECK(in[0] == out[1] && in[1] == out[0]);
    CHECK_RC(MPI_Comm_free(&ring));
    CHECK_RC(MPI_Comm_free(&alone));
}

/* A graph: each rank receives from its left twice and its right once, and sends to
 * its right twice and its left once; repeated edges deliver in list order. */
static void test_graph(void) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sources[3] = {left, right, left}, dests[3] = {right, left, right};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, dests,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    int out[3], in[3] = {-1, -1, -1};
    for (int j = 0; j < 3; j++) out[j] = rank * 10 + j;
    CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, g));
    /* From the left: its blocks to its right (me), destinations 0 then 2; from the
     * right: its block to its left, destination 1. */
    CHECK(in[0] == left * 10 + 0 && in[2] == left * 10 + 2 && in[1] == right * 10 + 1);
    int all[3];
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, g));
    CHECK(all[0] == left && all[1] == right && all[2] == left);
    /* alltoallw with another type per destination: 2 ints to the right, a double to
     * the left, then 3 shorts to the right again; received at absolute addresses
     * (MPI_BOTTOM), the shorts as a vector of stride 2. */
    int two_ints[2] = {rank, -rank}, got_ints[2] = {-1, -1};
    double one_d = rank + 0.25, got_d = -1;
    short shorts[3] = {(short)(rank + 1), (short)(rank + 2), (short)(rank + 3)}, got_s[6] = {-1, -1, -1, -1, -1, -1};
    MPI_Datatype every_other;
    CHECK_RC(MPI_Type_vector(3, 1, 2, MPI_SHORT, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    int wsc[3] = {2, 1, 3}, wrc[3] = {2, 1, 1};
    MPI_Aint wsd[3] = {0, (char *)&one_d - (char *)two_ints, (char *)shorts - (char *)two_ints}, wrd[3];
    MPI_Datatype wst[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, wrt[3] = {MPI_INT, MPI_DOUBLE, every_other};
    CHECK_RC(MPI_Get_address(got_ints, &wrd[0]));
    CHECK_RC(MPI_Get_address(&got_d, &wrd[1]));
    CHECK_RC(MPI_Get_address(got_s, &wrd[2]));
    CHECK_RC(MPI_Neighbor_alltoallw(two_ints, wsc, wsd, wst, MPI_BOTTOM, wrc, wrd, wrt, g));
    CHECK(got_ints[0] == left && got_ints[1] == -left && got_d == right + 0.25);
    CHECK(got_s[0] == left + 1 && got_s[2] == left + 2 && got_s[4] == left + 3);
    CHECK(got_s[1] == -1 && got_s[3] == -1 && got_s[5] == -1);
    CHECK_RC(MPI_Type_free(&every_other));
    /* A receive block of another length than what arrives: MPI_ERR_TRUNCATE. */
    int two[6];
    int cls = -1;
    MPI_Error_class(MPI_Neighbor_allgather(&rank, 1, MPI_INT, two, 2, MPI_INT, g), &cls);
    CHECK(cls == MPI_ERR_TRUNCATE);
    CHECK_RC(MPI_Comm_free(&g));
    CHECK_CLASS(MPI_Neighbor_allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_grid();
    test_self_grid();
    test_graph();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok neighbor\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
