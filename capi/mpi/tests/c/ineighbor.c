/* Nonblocking neighbourhood collectives: every form outstanding at once on a
 * distributed graph and on a graph (repeated edges, self-loops), overlapped with
 * point-to-point traffic that receives from MPI_ANY_SOURCE with MPI_ANY_TAG and a
 * synchronous send, and with a blocking neighbourhood collective, completed in reverse
 * order; progress on a periodic grid with large blocks while the peers sit in a
 * blocking receive that waits for this rank's completion; and the error classes of
 * bad arguments, after which the calls still work. Results are checked against what
 * each rank's neighbour lists say it must receive. */
#include <stdlib.h>
#include "test_check.h"

#define MAXD 8

static int rank, size;

/* A rank's neighbours, as its topology's query gives them. */
typedef struct {
    int nin, nout, in[MAXD], out[MAXD];
} hood_t;

/* How many times list[k] appears before place k: blocks between one pair pair up in
 * list order, so this tells a block's place among its pair's. */
static int occ(const int *list, int k) {
    int m = 0;
    for (int i = 0; i < k; i++) m += list[i] == list[k];
    return m;
}

/* Element e of the m-th block from s to d, and that block's length. */
static int val(int s, int d, int m, int e) { return s * 100000 + d * 1000 + m * 10 + e; }
static int cnt(int d, int m) { return (d + m) % 3 + 1; }

/* Every form started on `g` at once, then point-to-point traffic and a blocking
 * neighbourhood collective, then the waits, last started first. */
static void all_forms(MPI_Comm g, const hood_t *h) {
    int me, left = (rank + size - 1) % size, right = (rank + 1) % size;
    CHECK_RC(MPI_Comm_rank(g, &me));
    MPI_Request req[5];
    /* allgather and allgatherv: {me, -me} into blocks of 2 at stride 3. */
    int pair[2] = {me, -me}, ag[MAXD], agv[3 * MAXD], two[MAXD], at3[MAXD];
    for (int k = 0; k < 3 * MAXD; k++) agv[k] = -1;
    for (int k = 0; k < h->nin; k++) two[k] = 2, at3[k] = 3 * k;
    CHECK_RC(MPI_Ineighbor_allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, g, &req[0]));
    CHECK_RC(MPI_Ineighbor_allgatherv(pair, 2, MPI_INT, agv, two, at3, MPI_INT, g, &req[1]));
    /* alltoall: one int per block. */
    int a[MAXD], b[MAXD];
    for (int j = 0; j < h->nout; j++) a[j] = val(me, h->out[j], occ(h->out, j), 0);
    CHECK_RC(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, g, &req[2]));
    /* alltoallv: cnt ints per block, at stride 4. */
    int sc[MAXD], sd[MAXD], rc[MAXD], rd[MAXD], va[4 * MAXD], vb[4 * MAXD];
    for (int j = 0; j < h->nout; j++) {
        int m = occ(h->out, j);
        sc[j] = cnt(h->out[j], m), sd[j] = 4 * j;
        for (int e = 0; e < sc[j]; e++) va[4 * j + e] = val(me, h->out[j], m, e);
    }
    for (int k = 0; k < h->nin; k++) rc[k] = cnt(me, occ(h->in, k)), rd[k] = 4 * k;
    for (int i = 0; i < 4 * MAXD; i++) vb[i] = -1;
    CHECK_RC(MPI_Ineighbor_alltoallv(va, sc, sd, MPI_INT, vb, rc, rd, MPI_INT, g, &req[3]));
    /* alltoallw: the same blocks as doubles, received as one contiguous type each. */
    double wa[4 * MAXD], wb[4 * MAXD];
    MPI_Aint wsd[MAXD], wrd[MAXD];
    MPI_Datatype wst[MAXD], wrt[MAXD];
    int ones[MAXD];
    for (int j = 0; j < h->nout; j++) {
        wsd[j] = sd[j] * (MPI_Aint)sizeof(double), wst[j] = MPI_DOUBLE;
        for (int e = 0; e < sc[j]; e++) wa[4 * j + e] = va[4 * j + e] + 0.5;
    }
    for (int k = 0; k < h->nin; k++) {
        wrd[k] = rd[k] * (MPI_Aint)sizeof(double), ones[k] = 1;
        CHECK_RC(MPI_Type_contiguous(rc[k], MPI_DOUBLE, &wrt[k]));
        CHECK_RC(MPI_Type_commit(&wrt[k]));
    }
    for (int i = 0; i < 4 * MAXD; i++) wb[i] = -1;
    CHECK_RC(MPI_Ineighbor_alltoallw(wa, sc, wsd, wst, wb, ones, wrd, wrt, g, &req[4]));
    /* The types may go at once: the operation keeps what it needs. */
    for (int k = 0; k < h->nin; k++) CHECK_RC(MPI_Type_free(&wrt[k]));
    /* Point-to-point meanwhile, on the world and on the graph's communicator: none of
     * it may match the collectives' messages, nor they it. */
    int token = rank * 3, got = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Ssend(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(got == left * 3 && st.MPI_SOURCE == left && st.MPI_TAG == 7);
    got = -1;
    CHECK_RC(MPI_Sendrecv(&token, 1, MPI_INT, right, 9, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, g, &st));
    CHECK(got == left * 3 && st.MPI_TAG == 9);
    /* A blocking neighbourhood collective while the others are in flight. */
    int again[MAXD];
    CHECK_RC(MPI_Neighbor_allgather(&me, 1, MPI_INT, again, 1, MPI_INT, g));
    for (int k = 0; k < h->nin; k++) CHECK(again[k] == h->in[k]);
    for (int i = 4; i >= 0; i--) {
        CHECK_RC(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        CHECK(req[i] == MPI_REQUEST_NULL);
    }
    for (int k = 0; k < h->nin; k++) {
        int s = h->in[k], m = occ(h->in, k);
        CHECK(ag[k] == s && agv[3 * k] == s && agv[3 * k + 1] == -s && agv[3 * k + 2] == -1);
        CHECK(b[k] == val(s, me, m, 0));
        for (int e = 0; e < 4; e++) {
            CHECK(vb[4 * k + e] == (e < rc[k] ? val(s, me, m, e) : -1));
            CHECK(wb[4 * k + e] == (e < rc[k] ? val(s, me, m, e) + 0.5 : -1));
        }
    }
}

/* A distributed graph: from the left twice, from the right, and from itself; to the
 * right twice, to the left, and to itself. */
static void test_dist_graph(void) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int sources[4] = {left, right, rank, left}, dests[4] = {right, rank, left, right};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, sources, MPI_UNWEIGHTED, 4, dests, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &g));
    hood_t h = {4, 4, {0}, {0}};
    CHECK_RC(MPI_Dist_graph_neighbors(g, MAXD, h.in, MPI_UNWEIGHTED, MAXD, h.out, MPI_UNWEIGHTED));
    all_forms(g, &h);
    CHECK_RC(MPI_Comm_free(&g));
}

/* A graph: node i's neighbours are i - 1, itself and i + 1 (at 2 ranks, the other
 * twice). */
static void test_graph(void) {
    int index[MAXD], edges[3 * MAXD];
    for (int i = 0; i < size; i++) {
        edges[3 * i] = (i + size - 1) % size;
        edges[3 * i + 1] = i;
        edges[3 * i + 2] = (i + 1) % size;
        index[i] = 3 * (i + 1);
    }
    MPI_Comm g;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    hood_t h;
    CHECK_RC(MPI_Graph_neighbors_count(g, rank, &h.nin));
    CHECK(h.nin == 3);
    CHECK_RC(MPI_Graph_neighbors(g, rank, MAXD, h.in));
    h.nout = h.nin;
    for (int k = 0; k < h.nin; k++) h.out[k] = h.in[k];
    all_forms(g, &h);
    CHECK_RC(MPI_Comm_free(&g));
}

/* Large blocks on a periodic grid. First, each rank starts its operation only once
 * the rank before it started and sent a token: so starting must not wait for the
 * peers. Then, rank 0 completes its operation by MPI_Test alone while every other
 * rank waits in MPI_Recv for a token that passes down the ranks as each completes:
 * so each must complete while its peers are blocked elsewhere. */
static void test_progress(void) {
    enum { N = 16384 };
    int dims[2] = {0, 0}, periods[2] = {1, 1}, nb[4];
    CHECK_RC(MPI_Dims_create(size, 2, dims));
    MPI_Comm grid;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
    CHECK_RC(MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]));
    CHECK_RC(MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]));
    int *out = malloc(4 * N * sizeof(int)), *in = malloc(4 * N * sizeof(int));
    CHECK(out && in);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < N; i++) out[j * N + i] = rank * 10 + j + i * 100, in[j * N + i] = -1;
    MPI_Request req;
    int token = 0, flag = 0;
    if (rank > 0) CHECK_RC(MPI_Recv(&token, 1, MPI_INT, rank - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Ineighbor_alltoall(out, N, MPI_INT, in, N, MPI_INT, grid, &req));
    if (rank + 1 < size) CHECK_RC(MPI_Send(&token, 1, MPI_INT, rank + 1, 2, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < N; i += 997) CHECK(in[k * N + i] == nb[k] * 10 + (k ^ 1) + i * 100);
    for (int i = 0; i < 4 * N; i++) in[i] = -1;
    CHECK_RC(MPI_Ineighbor_alltoall(out, N, MPI_INT, in, N, MPI_INT, grid, &req));
    if (rank > 0) CHECK_RC(MPI_Recv(&token, 1, MPI_INT, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    while (!flag) CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (rank + 1 < size) CHECK_RC(MPI_Send(&token, 1, MPI_INT, rank + 1, 3, MPI_COMM_WORLD));
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < N; i += 997) CHECK(in[k * N + i] == nb[k] * 10 + (k ^ 1) + i * 100);
    free(out);
    free(in);
    CHECK_RC(MPI_Comm_free(&grid));
}

/* Bad arguments, alike on every rank: the class, no request, and the next call works. */
static void test_errors(void) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size, x = rank, y[2] = {-1, -1};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &g));
    MPI_Request rq = MPI_REQUEST_NULL;
    int one = 1, neg = -1, zero = 0;
    MPI_Aint at0 = 0;
    MPI_Datatype loose, type = MPI_INT;
    CHECK_RC(MPI_Type_contiguous(1, MPI_INT, &loose));
    CHECK_CLASS(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &rq), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Ineighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, g, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Ineighbor_alltoallv(&x, &neg, &zero, MPI_INT, y, &one, &zero, MPI_INT, g, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ineighbor_alltoallw(&x, &one, &at0, &loose, y, &one, &at0, &type, g, &rq), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Ineighbor_allgatherv(&x, 1, MPI_INT, NULL, &one, &zero, MPI_INT, g, &rq), MPI_ERR_BUFFER);
    CHECK(rq == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Type_free(&loose));
    CHECK_RC(MPI_Ineighbor_alltoallw(&x, &one, &at0, &type, y, &one, &at0, &type, g, &rq));
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(y[0] == left && y[1] == -1);
    CHECK_RC(MPI_Comm_free(&g));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXD);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_dist_graph();
    test_graph();
    test_progress();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok ineighbor\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
