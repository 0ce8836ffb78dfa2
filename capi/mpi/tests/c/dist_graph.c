/* MPI_Dist_graph_create, the general form: each process gives some of the edges of an
 * irregular graph (self-loops, an edge given three times, a process that gives none),
 * weighted, unweighted, with MPI_WEIGHTS_EMPTY, on the world and on a reversed
 * communicator; every rank's in- and out-lists, their weights and the neighbourhood
 * collectives on the result are checked against a sequential computation (edges
 * ordered by the rank that gave them, then by their place in its arrays); then the
 * error classes of bad arguments on one process or all, after which creation still
 * works. */
#include "test_check.h"

#define MAXE 64

static int rank, size;

/* The graph, for `n` processes: edge e is es[e] -> ed[e] of weight ew[e], given by
 * process who[e]. */
static int n, nedges, es[MAXE], ed[MAXE], ew[MAXE], who[MAXE];

static void add(int s, int d) {
    es[nedges] = s, ed[nedges] = d, ew[nedges] = nedges * 7 % 11;
    nedges++;
}

static void make_graph(int nprocs) {
    n = nprocs, nedges = 0;
    for (int i = 0; i < n; i++) {
        add(i, (i + 1) % n);
        add(i, (i * i + 1) % n); /* for i = 0, a second 0 -> 1 */
        if (i % 3 == 0) add(i, i);
    }
    add(0, 1); /* and a third */
    if (n > 2) add(n - 1, 0);
    /* From 3 processes on, the last gives no edges. */
    for (int e = 0; e < nedges; e++) who[e] = (e * 5 + 1) % (n > 2 ? n - 1 : n);
}

/* Node `node`'s in-list (sources, weights) and out-list, as the library must order them. */
static void lists(int node, int *in, int *inw, int *nin, int *out, int *outw, int *nout) {
    *nin = *nout = 0;
    for (int p = 0; p < n; p++)
        for (int e = 0; e < nedges; e++) {
            if (who[e] != p) continue;
            if (ed[e] == node) in[*nin] = es[e], inw[(*nin)++] = ew[e];
            if (es[e] == node) out[*nout] = ed[e], outw[(*nout)++] = ew[e];
        }
}

/* Creates the graph on `comm` (this process's rank `me` there): its edges, consecutive
 * ones out of one node grouped under one source entry. */
static int create(MPI_Comm comm, int me, int weighted, MPI_Comm *g) {
    int src[MAXE], deg[MAXE], dst[MAXE], w[MAXE], k = 0, m = 0;
    for (int e = 0; e < nedges; e++) {
        if (who[e] != me) continue;
        if (k == 0 || src[k - 1] != es[e]) src[k] = es[e], deg[k++] = 0;
        deg[k - 1]++;
        dst[m] = ed[e], w[m++] = ew[e];
    }
    const int *weights = !weighted ? MPI_UNWEIGHTED : m == 0 ? MPI_WEIGHTS_EMPTY : w;
    return MPI_Dist_graph_create(comm, k, src, deg, dst, weights, MPI_INFO_NULL, 1, g);
}

static void check_graph(MPI_Comm comm, int weighted) {
    int me;
    MPI_Comm g;
    CHECK_RC(MPI_Comm_rank(comm, &me));
    CHECK_RC(create(comm, me, weighted, &g));
    int status = -1;
    CHECK_RC(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH);
    int in[MAXE], inw[MAXE], out[MAXE], outw[MAXE], nin, nout;
    lists(me, in, inw, &nin, out, outw, &nout);
    int indeg = -1, outdeg = -1, isw = -1;
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &isw));
    CHECK(indeg == nin && outdeg == nout && isw == weighted);
    int gs[MAXE], gsw[MAXE], gd[MAXE], gdw[MAXE];
    CHECK_RC(MPI_Dist_graph_neighbors(g, MAXE, gs, gsw, MAXE, gd, gdw));
    for (int k = 0; k < nin; k++) CHECK(gs[k] == in[k] && (!weighted || gsw[k] == inw[k]));
    for (int j = 0; j < nout; j++) CHECK(gd[j] == out[j] && (!weighted || gdw[j] == outw[j]));
    /* allgather: block k is in-neighbour k's rank. */
    int got[MAXE], blocks[MAXE], recv[MAXE];
    CHECK_RC(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, g));
    for (int k = 0; k < nin; k++) CHECK(got[k] == in[k]);
    /* alltoall: the m-th block from s is s's block at the m-th place of `me` in its
     * out-list. */
    for (int j = 0; j < nout; j++) blocks[j] = me * 100 + j;
    CHECK_RC(MPI_Neighbor_alltoall(blocks, 1, MPI_INT, recv, 1, MPI_INT, g));
    for (int k = 0; k < nin; k++) {
        int s = in[k], m = 0, sin[MAXE], sinw[MAXE], sout[MAXE], soutw[MAXE], sn, so, j;
        for (int i = 0; i < k; i++) m += in[i] == s;
        lists(s, sin, sinw, &sn, sout, soutw, &so);
        for (j = 0; j < so; j++)
            if (sout[j] == me && m-- == 0) break;
        CHECK(j < so && recv[k] == s * 100 + j);
    }
    CHECK_RC(MPI_Comm_free(&g));
}

/* Bad arguments, on one process or all: every process returns the class, and the
 * communicator still makes graphs. */
static void test_errors(void) {
    MPI_Comm g = MPI_COMM_NULL;
    int src[1] = {rank}, deg[1] = {1}, dst[1] = {(rank + 1) % size}, w[1] = {1};
    int bad_dst[1] = {rank == 1 ? size : 0}, neg_deg[1] = {rank == 0 ? -1 : 1}, neg_w[1] = {-1};
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, bad_dst, w, MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, neg_deg, dst, w, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, rank == 0 ? MPI_UNWEIGHTED : w,
                                      MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, neg_w, MPI_INFO_NULL, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, src, deg, dst, w, MPI_INFO_NULL, 0, &g), MPI_ERR_ARG);
    CHECK(g == MPI_COMM_NULL);
    /* Each gives the edge to its right: one in, one out. */
    CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, dst, w, MPI_INFO_NULL, 0, &g));
    int indeg, outdeg, weighted, left = -1, right = -1;
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted == 1);
    CHECK_RC(MPI_Dist_graph_neighbors(g, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED));
    CHECK(left == (rank + size - 1) % size && right == dst[0]);
    CHECK_RC(MPI_Comm_free(&g));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    make_graph(size);
    CHECK(nedges <= MAXE);
    check_graph(MPI_COMM_WORLD, 1);
    check_graph(MPI_COMM_WORLD, 0);
    MPI_Comm reversed;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed));
    check_graph(reversed, 1);
    CHECK_RC(MPI_Comm_free(&reversed));
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok dist_graph\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
