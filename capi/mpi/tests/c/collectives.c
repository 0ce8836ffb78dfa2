/* The collectives: Barrier (it really holds everyone back), Bcast, Reduce, Allreduce,
 * Gather, Scatter, Allgather, Alltoall and Reduce_scatter_block from every root, at
 * small and large counts, on MPI_COMM_WORLD, on a split communicator (uneven halves
 * at odd sizes), on a dup, and with a derived (contiguous) type in Bcast and
 * Allgather. Every value is a function of (rank, index), checked against what the
 * sequential program would hold. The op-by-type matrix is in reduce_ops.c. */
#include <string.h>
#include "test_check.h"

static int wrank, wsize;

/* The value rank r contributes at index i of test t. */
static int val(int t, int r, int i) { return t * 1000003 + r * 1009 + i; }

/* The barrier holds every rank until all have entered it: messages sent after it
 * cannot have arrived at rank 0 before rank 0 entered it. */
static void test_barrier(MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            int got[64], flag = 1;
            MPI_Request rq[64];
            for (int r = 1; r < size; r++) CHECK_RC(MPI_Irecv(&got[r], 1, MPI_INT, r, 40 + round, comm, &rq[r]));
            if (size > 1) CHECK_RC(MPI_Testall(size - 1, &rq[1], &flag, MPI_STATUSES_IGNORE));
            CHECK(size == 1 || !flag);
            CHECK_RC(MPI_Barrier(comm));
            CHECK_RC(MPI_Waitall(size - 1, &rq[1], MPI_STATUSES_IGNORE));
            for (int r = 1; r < size; r++) CHECK(got[r] == r + round);
        } else {
            CHECK_RC(MPI_Barrier(comm));
            int v = rank + round;
            CHECK_RC(MPI_Send(&v, 1, MPI_INT, 0, 40 + round, comm));
        }
    }
}

/* Bcast, Gather, Scatter, Reduce from every root of `comm`; Allgather, Alltoall,
 * Allreduce, Reduce_scatter_block. `n` elements per rank (per block). */
static void test_all(MPI_Comm comm, int n) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *buf = malloc(sizeof(int) * (size_t)n * size), *mine = malloc(sizeof(int) * (size_t)n * size);
    int *one = malloc(sizeof(int) * (size_t)n);
    for (int root = 0; root < size; root++) {
        /* Bcast: the root's values everywhere. */
        for (int i = 0; i < n; i++) one[i] = rank == root ? val(1, root, i) : -1;
        CHECK_RC(MPI_Bcast(one, n, MPI_INT, root, comm));
        for (int i = 0; i < n; i++) CHECK(one[i] == val(1, root, i));

        /* Gather: the root holds every rank's block in rank order; others' recvbuf untouched. */
        for (int i = 0; i < n; i++) one[i] = val(2, rank, i);
        for (int i = 0; i < n * size; i++) buf[i] = -7;
        CHECK_RC(MPI_Gather(one, n, MPI_INT, buf, n, MPI_INT, root, comm));
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) CHECK(buf[r * n + i] == (rank == root ? val(2, r, i) : -7));

        /* Scatter: block r of the root's buffer to rank r; sendbuf unused elsewhere. */
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++) mine[r * n + i] = val(3, r, i) + root;
        for (int i = 0; i < n; i++) one[i] = -1;
        CHECK_RC(MPI_Scatter(rank == root ? mine : NULL, n, MPI_INT, one, n, MPI_INT, root, comm));
        for (int i = 0; i < n; i++) CHECK(one[i] == val(3, rank, i) + root);

        /* Reduce (SUM) at this root. */
        for (int i = 0; i < n; i++) one[i] = (rank + 1) * (i % 5 + 1) - root;
        for (int i = 0; i < n; i++) buf[i] = -3;
        CHECK_RC(MPI_Reduce(one, buf, n, MPI_INT, MPI_SUM, root, comm));
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == (rank == root ? size * (size + 1) / 2 * (i % 5 + 1) - size * root : -3));
    }

    /* Allgather. */
    for (int i = 0; i < n; i++) one[i] = val(4, rank, i);
    for (int i = 0; i < n * size; i++) buf[i] = -1;
    CHECK_RC(MPI_Allgather(one, n, MPI_INT, buf, n, MPI_INT, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) CHECK(buf[r * n + i] == val(4, r, i));

    /* Alltoall: block k of rank j goes to block j of rank k. */
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++) mine[k * n + i] = val(5, rank, i) * 7 + k;
    for (int i = 0; i < n * size; i++) buf[i] = -1;
    CHECK_RC(MPI_Alltoall(mine, n, MPI_INT, buf, n, MPI_INT, comm));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < n; i++) CHECK(buf[j * n + i] == val(5, j, i) * 7 + rank);

    /* Allreduce MAX and SUM. */
    for (int i = 0; i < n; i++) one[i] = (rank * 13 + i * 7) % 29;
    CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, one, n, MPI_INT, MPI_MAX, comm));
    for (int i = 0; i < n; i++) {
        int m = 0;
        for (int r = 0; r < size; r++) m = (r * 13 + i * 7) % 29 > m ? (r * 13 + i * 7) % 29 : m;
        CHECK(one[i] == m);
    }

    /* Reduce_scatter_block: rank r gets block r of the element-wise sum. */
    for (int k = 0; k < size; k++)
        for (int i = 0; i < n; i++) mine[k * n + i] = rank * 3 + k * 5 + i;
    for (int i = 0; i < n; i++) one[i] = -1;
    CHECK_RC(MPI_Reduce_scatter_block(mine, one, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; i++) CHECK(one[i] == 3 * size * (size - 1) / 2 + size * (rank * 5 + i));
    free(buf);
    free(mine);
    free(one);
}

/* Collectives on a communicator split by world parity, keyed so that ranks run
 * backwards; each checks world ranks through what it gathers. */
static void test_split_and_dup(void) {
    MPI_Comm half, dup;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half));
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    int members = (wsize + 1 - wrank % 2) / 2;
    CHECK(hs == members);
    /* Who is who: gather world ranks in the half's order (world ranks descending). */
    int who[64];
    CHECK_RC(MPI_Allgather(&wrank, 1, MPI_INT, who, 1, MPI_INT, half));
    for (int i = 0; i < hs; i++) CHECK(who[i] % 2 == wrank % 2 && (i == 0 || who[i] < who[i - 1]));
    CHECK(who[hr] == wrank);
    int sum = -1;
    CHECK_RC(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int r = wrank % 2; r < wsize; r += 2) want += r;
    CHECK(sum == want);
    /* The half's last rank broadcasts its world rank. */
    int b = wrank;
    CHECK_RC(MPI_Bcast(&b, 1, MPI_INT, hs - 1, half));
    CHECK(b == wrank % 2);
    test_barrier(half);
    test_all(half, 3);

    /* Interleaved with world collectives of the same kind: no cross-talk. */
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int x = wrank, y = wrank * 2;
    CHECK_RC(MPI_Bcast(&x, 1, MPI_INT, 0, dup));
    CHECK_RC(MPI_Bcast(&y, 1, MPI_INT, hs - 1, half));
    CHECK(x == 0 && y == 2 * (wrank % 2));
    test_all(dup, 2);
    test_barrier(dup);
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_RC(MPI_Comm_free(&half));
}

/* A derived type (3 doubles contiguous) in Bcast and Allgather, and received as 3
 * basic doubles by count. */
static void test_derived(void) {
    MPI_Datatype triple;
    CHECK_RC(MPI_Type_contiguous(3, MPI_DOUBLE, &triple));
    CHECK_RC(MPI_Type_commit(&triple));
    double b[4][3], all[64][3], flat[64 * 3];
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++) b[k][j] = wrank == wsize - 1 ? k * 3 + j + 0.5 : -1;
    CHECK_RC(MPI_Bcast(b, 4, triple, wsize - 1, MPI_COMM_WORLD));
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++) CHECK(b[k][j] == k * 3 + j + 0.5);
    double mine[3] = {wrank, wrank + 0.25, -wrank};
    CHECK_RC(MPI_Allgather(mine, 1, triple, all, 1, triple, MPI_COMM_WORLD));
    for (int r = 0; r < wsize; r++) CHECK(all[r][0] == r && all[r][1] == r + 0.25 && all[r][2] == -r);
    /* The same signature on both sides in another form: 1 triple sent, 3 doubles received. */
    CHECK_RC(MPI_Allgather(mine, 1, triple, flat, 3, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int r = 0; r < wsize; r++) CHECK(flat[3 * r] == r && flat[3 * r + 2] == -r);
    CHECK_RC(MPI_Type_free(&triple));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 64);
    test_barrier(MPI_COMM_WORLD);
    test_all(MPI_COMM_WORLD, 1);
    test_all(MPI_COMM_WORLD, 7);
    test_all(MPI_COMM_WORLD, 4099); /* larger than an MPB line or a channel slot */
    test_split_and_dup();
    test_derived();
    /* A large broadcast from a non-zero root. */
    enum { BIG = 1 << 19 };
    int *big = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) big[i] = wrank == wsize - 1 ? i ^ 0x5a5a : 0;
    CHECK_RC(MPI_Bcast(big, BIG, MPI_INT, wsize - 1, MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++) CHECK(big[i] == (i ^ 0x5a5a));
    free(big);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("ok collectives\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
