/* A job across nodes (`sccrun --nodes K`, run by sccemu-tools' tests/multinode_mpi.rs):
 * what crosses nodes works unchanged, what does not fails cleanly. The mode is argv[1]:
 *   basic K - a ring, reductions, split, dup, Comm_create, group calls, MPI_Alloc_mem
 *             memory as message buffers, checked against sequential values, and
 *             MPI_COMM_TYPE_SHARED communicators: K of them, each a run of ranks;
 *   refused - windows from MPI_Win_allocate and MPI_Win_create (over the world and part
 *             of it) and MPI_Win_allocate_shared over one node's ranks work across
 *             nodes, and so do dynamic windows; under MPI_ERRORS_RETURN, a shared window
 *             over several nodes returns MPI_ERR_UNSUPPORTED_OPERATION on every rank,
 *             and the job goes on;
 *   abort   - the last rank calls MPI_Abort(MPI_COMM_WORLD, 7) while the others wait
 *             in a receive that nothing matches: the whole job must end with 7. */
#include <string.h>
#include "test_check.h"

static int rank, size;

/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives each node's ranks: consecutive
 * world ranks in order, `nodes` communicators in all. */
static void shared_split(int nodes) {
    MPI_Comm node;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    int nrank, nsize, first = -1, last = -1, leaders = 0;
    CHECK_RC(MPI_Comm_rank(node, &nrank));
    CHECK_RC(MPI_Comm_size(node, &nsize));
    CHECK_RC(MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node));
    CHECK_RC(MPI_Allreduce(&rank, &last, 1, MPI_INT, MPI_MAX, node));
    CHECK(first == rank - nrank && last == first + nsize - 1);
    int leader = nrank == 0;
    CHECK_RC(MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(leaders == nodes);
    CHECK_RC(MPI_Comm_free(&node));
}

static void basic(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A token around the ring: every rank adds its rank. */
    int token = 0;
    if (rank == 0) {
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == size * (size - 1) / 2);
    } else {
        CHECK_RC(MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        token += rank;
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
    }

    /* Reductions of the world. */
    long sum = 0, mine = rank + 1;
    CHECK_RC(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == (long)size * (size + 1) / 2);
    int top = -1;
    CHECK_RC(MPI_Reduce(&rank, &top, 1, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1) CHECK(top == size - 1);

    /* Split by parity, so that each half spans the nodes: an allreduce and a bcast. */
    MPI_Comm half, dup;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hrank, hsize, hsum = 0;
    CHECK_RC(MPI_Comm_rank(half, &hrank));
    CHECK_RC(MPI_Comm_size(half, &hsize));
    CHECK(hsize == (size + 1 - rank % 2) / 2);
    CHECK_RC(MPI_Comm_dup(half, &dup));
    CHECK_RC(MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, dup));
    int want = 0;
    for (int r = rank % 2; r < size; r += 2) want += r;
    CHECK(hsum == want);
    int root_world = hrank == 0 ? rank : -1;
    CHECK_RC(MPI_Bcast(&root_world, 1, MPI_INT, 0, dup));
    CHECK(root_world == size - 1 - (size - 1 - rank % 2) % 2); /* the highest of the parity */
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_RC(MPI_Comm_free(&half));

    /* Comm_create over a group that keeps every third rank, then its allgather. */
    MPI_Group world_group, thirds;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int range[1][3] = {{0, size - 1, 3}};
    CHECK_RC(MPI_Group_range_incl(world_group, 1, range, &thirds));
    MPI_Comm third;
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, thirds, &third));
    if (rank % 3 == 0) {
        int tsize;
        CHECK_RC(MPI_Comm_size(third, &tsize));
        CHECK(tsize == (size + 2) / 3);
        int all[64];
        CHECK(tsize <= 64);
        CHECK_RC(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, third));
        for (int i = 0; i < tsize; i++) CHECK(all[i] == 3 * i);
        CHECK_RC(MPI_Comm_free(&third));
    } else {
        CHECK(third == MPI_COMM_NULL);
    }
    CHECK_RC(MPI_Group_free(&thirds));
    CHECK_RC(MPI_Group_free(&world_group));

    /* MPI_Alloc_mem memory as the buffers of a large exchange around the ring. */
    enum { N = 1 << 16 };
    int *out, *in;
    CHECK_RC(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &out));
    CHECK_RC(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &in));
    for (int i = 0; i < N; i++) out[i] = rank * N + i;
    CHECK_RC(MPI_Sendrecv(out, N, MPI_INT, right, 2, in, N, MPI_INT, left, 2, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(in[i] == left * N + i);
    CHECK_RC(MPI_Free_mem(in));
    CHECK_RC(MPI_Free_mem(out));
}

/* One fence epoch on `win` (ints, disp_unit 4) over `comm`: every rank puts its world
 * rank into its right neighbour's first int and adds 1 to everyone's second. */
static void fence_ring(MPI_Win win, MPI_Comm comm, int *mine) {
    int crank, csize, one = 1;
    CHECK_RC(MPI_Comm_rank(comm, &crank));
    CHECK_RC(MPI_Comm_size(comm, &csize));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&rank, 1, MPI_INT, (crank + 1) % csize, 0, 1, MPI_INT, win));
    for (int t = 0; t < csize; t++)
        CHECK_RC(MPI_Accumulate(&one, 1, MPI_INT, t, 1, 1, MPI_INT, MPI_SUM, win));
    CHECK_RC(MPI_Win_fence(0, win));
    int left_world = -1, left = (crank + csize - 1) % csize;
    MPI_Group cg, wg;
    CHECK_RC(MPI_Comm_group(comm, &cg));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_translate_ranks(cg, 1, &left, wg, &left_world));
    CHECK(mine[0] == left_world && mine[1] == csize);
    CHECK_RC(MPI_Group_free(&cg));
    CHECK_RC(MPI_Group_free(&wg));
}

static void refused(void) {
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Win win = MPI_WIN_NULL;
    void *base = NULL;
    /* Windows that cross nodes: allocated, and over the caller's memory. */
    CHECK_RC(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, 2 * sizeof(int));
    fence_ring(win, MPI_COMM_WORLD, base);
    CHECK_RC(MPI_Win_free(&win));
    int buf[2] = {0, 0};
    CHECK_RC(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    fence_ring(win, MPI_COMM_WORLD, buf);
    /* Another node's part is not mapped here: the first rank after this node's. */
    MPI_Comm node;
    int last = -1;
    CHECK_RC(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    CHECK_RC(MPI_Allreduce(&rank, &last, 1, MPI_INT, MPI_MAX, node));
    MPI_Aint sz;
    int du;
    void *there = NULL;
    CHECK_CLASS(MPI_Win_shared_query(win, (last + 1) % size, &sz, &du, &there), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_RC(MPI_Win_free(&win));
    /* Shared windows over several nodes do not cross. */
    CHECK_CLASS(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(win == MPI_WIN_NULL);
    /* The message says why. */
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK_RC(MPI_Error_string(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                              text, &len));
    CHECK(strstr(text, "spans nodes") != NULL);
    /* A dynamic window: memory attached on every rank, addressed by its address there. */
    int attached[2] = {0, 0};
    MPI_Aint mine_at, right_at;
    CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_RC(MPI_Win_attach(win, attached, sizeof attached));
    CHECK_RC(MPI_Get_address(attached, &mine_at));
    CHECK_RC(MPI_Sendrecv(&mine_at, 1, MPI_AINT, (rank + size - 1) % size, 3, &right_at, 1, MPI_AINT,
                          (rank + 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&rank, 1, MPI_INT, (rank + 1) % size, right_at, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(attached[0] == (rank + size - 1) % size);
    CHECK_RC(MPI_Win_detach(win, attached));
    CHECK_RC(MPI_Win_free(&win));
    /* A shared window over one node's ranks works. */
    CHECK_RC(MPI_Win_allocate_shared(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win));
    memset(base, 0, 2 * sizeof(int));
    fence_ring(win, node, base);
    CHECK_RC(MPI_Win_free(&win));
    CHECK_RC(MPI_Comm_free(&node));
    /* A window over part of the world, across nodes. */
    MPI_Comm half;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    CHECK_RC(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, half, &base, &win));
    memset(base, 0, 2 * sizeof(int));
    fence_ring(win, half, base);
    CHECK_RC(MPI_Win_free(&win));
    CHECK_RC(MPI_Comm_free(&half));
    /* Nothing was left half done: the world still works. */
    int sum = 0;
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2);
}

static void abort_last(void) {
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1) {
        MPI_Abort(MPI_COMM_WORLD, 7);
    } else {
        int never;
        MPI_Recv(&never, 1, MPI_INT, size - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    fprintf(stderr, "rank %d outlived MPI_Abort\n", rank);
    exit(1);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (strcmp(mode, "basic") == 0) {
        CHECK(argc > 2);
        basic();
        shared_split(atoi(argv[2]));
    } else if (strcmp(mode, "refused") == 0) {
        refused();
    } else if (strcmp(mode, "abort") == 0) {
        abort_last();
    } else {
        CHECK(!"a known mode");
    }
    CHECK_RC(MPI_Finalize());
    if (rank == 0) printf("ok nodes %s\n", mode);
    return 0;
}
