/* The graph topology (MPI_Graph_create and its queries, MPI_Graph_map, MPI_Cart_map,
 * MPI_Topo_test) and the neighbourhood collectives on graphs (a ring, a star, an
 * irregular graph with a self-loop and a repeated edge) and on periodic grids with
 * dimensions of 1 and 2, each checked against a sequential computation of what every
 * rank must receive; then the error classes of bad arguments, after which the
 * communicators still work. */
#include <string.h>
#include "test_check.h"

static int rank, size;

#define MAXN 8
#define MAXE (4 * MAXN * MAXN)

/* A graph as MPI_Graph_create takes it. */
typedef struct {
    int nnodes, index[MAXN], edges[MAXE];
} graph_t;

/* The graph whose node i has, in turn, the nodes (i + t) % n for t = 0..n-1, each
 * repeated adj[i][j] times: symmetric if adj is, in a rotated (unsorted) order. */
static void from_adjacency(graph_t *g, int n, int adj[MAXN][MAXN]) {
    int e = 0;
    g->nnodes = n;
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < n; t++)
            for (int m = 0; m < adj[i][(i + t) % n]; m++) g->edges[e++] = (i + t) % n;
        g->index[i] = e;
    }
}

static int first_edge(const graph_t *g, int node) { return node == 0 ? 0 : g->index[node - 1]; }
static int degree(const graph_t *g, int node) { return g->index[node] - first_edge(g, node); }
static int nbr(const graph_t *g, int node, int k) { return g->edges[first_edge(g, node) + k]; }

/* Which of its blocks neighbour nbr(node, k) sends to `node` into block k: blocks
 * between a pair match in list order, so the m-th occurrence of s in node's list gets
 * s's block at the m-th occurrence of node in s's list. */
static int sender_block(const graph_t *g, int node, int k) {
    int s = nbr(g, node, k), m = 0;
    for (int i = 0; i < k; i++) m += nbr(g, node, i) == s;
    for (int j = 0; j < degree(g, s); j++)
        if (nbr(g, s, j) == node && m-- == 0) return j;
    fail_at(__FILE__, __LINE__, "the graph is not symmetric");
    return -1;
}

/* Elements of block j from `node` in the alltoallv test. */
static int vcount(int node, int j) { return (node + j) % 3 + 1; }

/* Builds `g` on the world, checks the queries, runs allgather, alltoall, alltoallv and
 * alltoallw on it against the sequential expectation. */
static void run_graph(const graph_t *g) {
    MPI_Comm comm;
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, g->nnodes, g->index, g->edges, 1, &comm));
    int mapped = -1;
    CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, g->nnodes, g->index, g->edges, &mapped));
    if (rank >= g->nnodes) {
        CHECK(comm == MPI_COMM_NULL && mapped == MPI_UNDEFINED);
        return;
    }
    CHECK(comm != MPI_COMM_NULL && mapped == rank);
    int status = -1, nn = -1, ne = -1, me = -1, sz = -1;
    CHECK_RC(MPI_Topo_test(comm, &status));
    CHECK(status == MPI_GRAPH);
    CHECK_RC(MPI_Comm_rank(comm, &me));
    CHECK_RC(MPI_Comm_size(comm, &sz));
    CHECK(me == rank && sz == g->nnodes);
    CHECK_RC(MPI_Graphdims_get(comm, &nn, &ne));
    CHECK(nn == g->nnodes && ne == g->index[g->nnodes - 1]);
    int index[MAXN], edges[MAXE], list[MAXE], count = -1;
    CHECK_RC(MPI_Graph_get(comm, MAXN, MAXE, index, edges));
    CHECK(memcmp(index, g->index, nn * sizeof(int)) == 0 && memcmp(edges, g->edges, ne * sizeof(int)) == 0);
    for (int node = 0; node < nn; node++) {
        CHECK_RC(MPI_Graph_neighbors_count(comm, node, &count));
        CHECK(count == degree(g, node));
        CHECK_RC(MPI_Graph_neighbors(comm, node, MAXE, list));
        for (int k = 0; k < count; k++) CHECK(list[k] == nbr(g, node, k));
    }
    int d = degree(g, rank);
    /* allgather: block k is neighbour k's rank. */
    int got[MAXE];
    for (int k = 0; k < MAXE; k++) got[k] = -1;
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, comm));
    for (int k = 0; k < d; k++) CHECK(got[k] == nbr(g, rank, k));
    CHECK(got[d] == -1);
    /* alltoall: block j of node s is s * 100 + j. */
    int out[MAXE], in[MAXE];
    for (int j = 0; j < d; j++) out[j] = rank * 100 + j;
    for (int k = 0; k < MAXE; k++) in[k] = -1;
    CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, comm));
    for (int k = 0; k < d; k++) CHECK(in[k] == nbr(g, rank, k) * 100 + sender_block(g, rank, k));
    /* alltoallv: block j holds vcount(me, j) elements s * 1000 + j * 10 + e, laid out
     * backwards in the send buffer and forwards at stride 4 in the receive buffer. */
    int sc[MAXE], sd[MAXE], rc[MAXE], rd[MAXE], vout[4 * MAXE], vin[4 * MAXE];
    for (int j = 0; j < d; j++) {
        sc[j] = vcount(rank, j);
        sd[j] = 4 * (d - 1 - j);
        for (int e = 0; e < sc[j]; e++) vout[sd[j] + e] = rank * 1000 + j * 10 + e;
    }
    for (int k = 0; k < d; k++) {
        rc[k] = vcount(nbr(g, rank, k), sender_block(g, rank, k));
        rd[k] = 4 * k;
    }
    for (int i = 0; i < 4 * MAXE; i++) vin[i] = -1;
    CHECK_RC(MPI_Neighbor_alltoallv(vout, sc, sd, MPI_INT, vin, rc, rd, MPI_INT, comm));
    for (int k = 0; k < d; k++) {
        int s = nbr(g, rank, k), j = sender_block(g, rank, k);
        for (int e = 0; e < 4; e++) CHECK(vin[4 * k + e] == (e < rc[k] ? s * 1000 + j * 10 + e : -1));
    }
    /* alltoallw: the same blocks as doubles, sent as MPI_DOUBLEs at byte offsets and
     * received as one contiguous type of the block's length each. */
    double wout[4 * MAXE], win[4 * MAXE];
    MPI_Aint wsd[MAXE], wrd[MAXE];
    MPI_Datatype wst[MAXE], wrt[MAXE];
    int ones[MAXE];
    for (int j = 0; j < d; j++) {
        wsd[j] = sd[j] * (MPI_Aint)sizeof(double);
        wst[j] = MPI_DOUBLE;
        for (int e = 0; e < sc[j]; e++) wout[sd[j] + e] = vout[sd[j] + e] + 0.5;
    }
    for (int k = 0; k < d; k++) {
        wrd[k] = rd[k] * (MPI_Aint)sizeof(double);
        ones[k] = 1;
        CHECK_RC(MPI_Type_contiguous(rc[k], MPI_DOUBLE, &wrt[k]));
        CHECK_RC(MPI_Type_commit(&wrt[k]));
    }
    for (int i = 0; i < 4 * MAXE; i++) win[i] = -1;
    CHECK_RC(MPI_Neighbor_alltoallw(wout, sc, wsd, wst, win, ones, wrd, wrt, comm));
    for (int k = 0; k < d; k++) {
        for (int e = 0; e < 4; e++) CHECK(win[4 * k + e] == (e < rc[k] ? vin[4 * k + e] + 0.5 : -1));
        CHECK_RC(MPI_Type_free(&wrt[k]));
    }
    /* A duplicate keeps the graph. */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(comm, &dup));
    CHECK_RC(MPI_Graph_neighbors_count(dup, rank, &count));
    CHECK(count == d);
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_RC(MPI_Comm_free(&comm));
}

static void test_graphs(void) {
    static int adj[MAXN][MAXN];
    graph_t g;
    /* A ring (at 2 ranks, each node lists the other twice). */
    memset(adj, 0, sizeof adj);
    for (int i = 0; i < size; i++) {
        adj[i][(i + 1) % size]++;
        adj[(i + 1) % size][i]++;
    }
    from_adjacency(&g, size, adj);
    run_graph(&g);
    /* A star around node 0. */
    memset(adj, 0, sizeof adj);
    for (int i = 1; i < size; i++) adj[0][i] = adj[i][0] = 1;
    from_adjacency(&g, size, adj);
    run_graph(&g);
    /* Irregular, on all ranks but the last from 3 on: a self-loop at 0, a double edge
     * 0-1, a tree i-(i/2), and chords i-(n-1) for every third i, one node left alone
     * when there are 5 or more. */
    int n = size > 2 ? size - 1 : size;
    memset(adj, 0, sizeof adj);
    adj[0][0] = 1;
    adj[0][1] = adj[1][0] = 2;
    for (int i = 2; i < n; i++) {
        if (n >= 5 && i == 4) continue;
        adj[i][i / 2]++;
        adj[i / 2][i]++;
        if (i % 3 == 0 && i != n - 1) adj[i][n - 1]++, adj[n - 1][i]++;
    }
    from_adjacency(&g, n, adj);
    run_graph(&g);
}

/* A periodic grid of dimensions 1, 2 and size / 2 (from 3 ranks, the last is left
 * out): every neighbour computed here from the coordinates, and checked against
 * MPI_Cart_shift and the neighbourhood collectives. */
static void test_small_periodic_grid(void) {
    int dims[3] = {1, 2, size / 2}, periods[3] = {1, 1, 1}, cells = 2 * (size / 2);
    MPI_Comm grid;
    int mapped = -2;
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 3, dims, periods, &mapped));
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &grid));
    if (rank >= cells) {
        CHECK(grid == MPI_COMM_NULL && mapped == MPI_UNDEFINED);
        return;
    }
    CHECK(mapped == rank);
    int c[3] = {0, rank / dims[2], rank % dims[2]}, nb[6];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int x[3] = {c[0], c[1], c[2]};
            x[d] = (x[d] + (s ? 1 : -1) + dims[d]) % dims[d];
            nb[2 * d + s] = (x[0] * dims[1] + x[1]) * dims[2] + x[2];
        }
    for (int d = 0; d < 3; d++) {
        int src, dst;
        CHECK_RC(MPI_Cart_shift(grid, d, 1, &src, &dst));
        CHECK(src == nb[2 * d] && dst == nb[2 * d + 1]);
    }
    int got[6], out[6], in[6];
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, grid));
    for (int k = 0; k < 6; k++) out[k] = rank * 10 + k, in[k] = -1;
    CHECK_RC(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, grid));
    for (int k = 0; k < 6; k++) CHECK(got[k] == nb[k] && in[k] == nb[k] * 10 + (k ^ 1));
    CHECK_RC(MPI_Comm_free(&grid));
}

/* Bad arguments give their class on every rank, and leave everything usable. */
static void test_errors(void) {
    int index[3] = {1, 2, 3}, edges[3] = {1, 0, 0}, bad_index[2] = {2, 1}, bad_edges[2] = {1, 5};
    int out = -1, nn, ne, list[4];
    MPI_Comm g = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, index, bad_edges, 0, &g), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_map(MPI_COMM_WORLD, 2, bad_index, edges, &out), MPI_ERR_ARG);
    CHECK(g == MPI_COMM_NULL);
    CHECK_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 4, list), MPI_ERR_TOPOLOGY);
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0};
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &out), MPI_ERR_TOPOLOGY);
    dims[0] = 0;
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &out), MPI_ERR_DIMS);
    /* A good graph of two nodes joined by an edge, plus a self-loop at node 1. */
    int gi[2] = {1, 3}, ge[3] = {1, 0, 1};
    CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, 2, gi, ge, 0, &g));
    if (g == MPI_COMM_NULL) return;
    CHECK_CLASS(MPI_Graph_neighbors_count(g, 2, &nn), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors(g, -1, 4, list), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cartdim_get(g, &nn), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(g, &nn, &ne, &out), MPI_ERR_TOPOLOGY);
    /* A short copy: the first entries only. */
    int one_index = -1, two_edges[2] = {-1, -1};
    CHECK_RC(MPI_Graph_get(g, 1, 2, &one_index, two_edges));
    CHECK(one_index == 1 && two_edges[0] == 1 && two_edges[1] == 0);
    int send[2] = {rank, rank}, recv[2] = {-1, -1};
    MPI_Datatype loose;
    CHECK_RC(MPI_Type_contiguous(1, MPI_INT, &loose));
    CHECK_CLASS(MPI_Neighbor_alltoall(send, -1, MPI_INT, recv, 1, MPI_INT, g), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Neighbor_alltoall(send, 1, loose, recv, 1, MPI_INT, g), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Neighbor_alltoall(send, 1, MPI_INT, NULL, 1, MPI_INT, g), MPI_ERR_BUFFER);
    CHECK_RC(MPI_Type_free(&loose));
    /* Node 0 receives from 1; node 1 from 0, then from itself. */
    CHECK_RC(MPI_Neighbor_allgather(&rank, 1, MPI_INT, recv, 1, MPI_INT, g));
    CHECK(rank == 0 ? recv[0] == 1 : (recv[0] == 0 && recv[1] == 1));
    CHECK_RC(MPI_Comm_free(&g));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXN);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_graphs();
    test_small_periodic_grid();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok graph_topo\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
