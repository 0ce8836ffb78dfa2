/* Communicators, groups and topologies: dup, split (with MPI_UNDEFINED), create,
 * split_type, free; groups (incl, excl, translate, compare); Cartesian grids (dims,
 * coords, rank, shift periodic and not, messages along the grid) and distributed
 * graphs (adjacent creation, neighbour queries, messages along the edges). Every
 * expected value is computed here from the rank and size alone. */
#include <string.h>
#include "test_check.h"

static int rank, size;

/* The balanced factorisation MPI_Dims_create must give for 2 dimensions. */
static void dims2_expected(int n, int out[2]) {
    int best = 1;
    for (int d = 1; d * d <= n; d++)
        if (n % d == 0) best = d;
    out[0] = n / best;
    out[1] = best;
}

static void test_dup_split_compare(void) {
    MPI_Comm dup, split, rev, same;
    int res = -1;
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT);
    int r = -1, s = -1;
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    CHECK(r == rank && s == size);

    /* A dup of a dup keeps the group, and its messages stay on it. */
    MPI_Comm dup2;
    CHECK_RC(MPI_Comm_dup(dup, &dup2));
    CHECK_RC(MPI_Comm_compare(dup, dup2, &res));
    CHECK(res == MPI_CONGRUENT);
    int token = rank * 10, got = -1;
    CHECK_RC(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                          dup2, MPI_STATUS_IGNORE));
    CHECK(got == ((rank + size - 1) % size) * 10);
    CHECK_RC(MPI_Comm_free(&dup2));
    CHECK(dup2 == MPI_COMM_NULL);

    /* Split by parity, key = -rank: new ranks count down. The last rank opts out when
     * there are more than 2 ranks. */
    int opt_out = size > 2 && rank == size - 1;
    int color = opt_out ? MPI_UNDEFINED : rank % 2;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &split));
    if (opt_out) {
        CHECK(split == MPI_COMM_NULL);
    } else {
        int members = 0, above = 0;
        for (int q = 0; q < size; q++) {
            if (size > 2 && q == size - 1) continue;
            if (q % 2 != color) continue;
            members++;
            if (q > rank) above++;
        }
        MPI_Comm_rank(split, &r);
        MPI_Comm_size(split, &s);
        CHECK(s == members && r == above);
        CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, split, &res));
        CHECK(res == (members == size ? MPI_SIMILAR : MPI_UNEQUAL));
        /* Sum of world ranks over the split communicator with messages to its rank 0. */
        if (r == 0) {
            int sum = rank, v;
            for (int i = 1; i < s; i++) {
                CHECK_RC(MPI_Recv(&v, 1, MPI_INT, i, 4, split, MPI_STATUS_IGNORE));
                sum += v;
            }
            int want = 0;
            for (int q = 0; q < size; q++)
                if (!(size > 2 && q == size - 1) && q % 2 == color) want += q;
            CHECK(sum == want);
        } else {
            CHECK_RC(MPI_Send(&rank, 1, MPI_INT, 0, 4, split));
        }
        CHECK_RC(MPI_Comm_free(&split));
    }

    /* Every rank in one colour with reversed keys: the same group in another order. */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    MPI_Comm_rank(rev, &r);
    CHECK(r == size - 1 - rank);
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
    /* Keys equal: ties keep the parent's order. */
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 7, 0, &same));
    CHECK_RC(MPI_Comm_compare(MPI_COMM_WORLD, same, &res));
    CHECK(res == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_free(&rev));
    CHECK_RC(MPI_Comm_free(&same));

    /* Split type shared: the ranks that share memory, a run of consecutive ranks in
     * order: the whole communicator on one node, a node's ranks in a job across nodes
     * (nodes.c counts those, and checks the one node of sccmpiexec's jobs). */
    MPI_Comm node;
    CHECK_RC(MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &s);
    int nrank = -1, first = -1;
    MPI_Comm_rank(node, &nrank);
    CHECK_RC(MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node));
    CHECK(first == rank - nrank && first + s <= size);
    CHECK_RC(MPI_Comm_free(&node));
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
}

static void test_groups(void) {
    MPI_Group world, evens, no_zero, reordered, g;
    int n = -1, r = -1, res = -1;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_RC(MPI_Group_size(world, &n));
    CHECK_RC(MPI_Group_rank(world, &r));
    CHECK(n == size && r == rank);

    int ne = (size + 1) / 2, ev[64], odd_or_undef;
    for (int i = 0; i < ne; i++) ev[i] = 2 * i;
    CHECK_RC(MPI_Group_incl(world, ne, ev, &evens));
    CHECK_RC(MPI_Group_size(evens, &n));
    CHECK_RC(MPI_Group_rank(evens, &r));
    odd_or_undef = rank % 2 ? MPI_UNDEFINED : rank / 2;
    CHECK(n == ne && r == odd_or_undef);

    int zero = 0;
    CHECK_RC(MPI_Group_excl(world, 1, &zero, &no_zero));
    CHECK_RC(MPI_Group_size(no_zero, &n));
    CHECK_RC(MPI_Group_rank(no_zero, &r));
    CHECK(n == size - 1 && r == (rank == 0 ? MPI_UNDEFINED : rank - 1));

    /* Translate every world rank into each group. */
    int all[64], into[64];
    for (int i = 0; i < size; i++) all[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(world, size, all, evens, into));
    for (int i = 0; i < size; i++) CHECK(into[i] == (i % 2 ? MPI_UNDEFINED : i / 2));
    CHECK_RC(MPI_Group_translate_ranks(world, size, all, no_zero, into));
    for (int i = 0; i < size; i++) CHECK(into[i] == (i == 0 ? MPI_UNDEFINED : i - 1));
    CHECK_RC(MPI_Group_translate_ranks(no_zero, size - 1, all, world, into));
    for (int i = 0; i < size - 1; i++) CHECK(into[i] == i + 1);
    int pn = MPI_PROC_NULL;
    CHECK_RC(MPI_Group_translate_ranks(world, 1, &pn, evens, into));
    CHECK(into[0] == MPI_PROC_NULL);

    /* Compare: the same members in the same order, in another order, or others. */
    int rev[64];
    for (int i = 0; i < size; i++) rev[i] = size - 1 - i;
    CHECK_RC(MPI_Group_incl(world, size, rev, &reordered));
    CHECK_RC(MPI_Group_compare(world, world, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_compare(world, reordered, &res));
    CHECK(res == MPI_SIMILAR);
    CHECK_RC(MPI_Group_compare(world, no_zero, &res));
    CHECK(res == MPI_UNEQUAL);
    CHECK_RC(MPI_Group_incl(world, size, all, &g));
    CHECK_RC(MPI_Group_compare(world, g, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL);
    /* Excluding everyone leaves an empty group. */
    CHECK_RC(MPI_Group_excl(world, size, all, &g));
    CHECK_RC(MPI_Group_size(g, &n));
    CHECK_RC(MPI_Group_rank(g, &r));
    CHECK(n == 0 && r == MPI_UNDEFINED);
    CHECK_RC(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_free(&g));

    /* Comm_create from the even group: odd ranks get MPI_COMM_NULL. */
    MPI_Comm ecomm;
    CHECK_RC(MPI_Comm_create(MPI_COMM_WORLD, evens, &ecomm));
    if (rank % 2) {
        CHECK(ecomm == MPI_COMM_NULL);
    } else {
        MPI_Comm_size(ecomm, &n);
        MPI_Comm_rank(ecomm, &r);
        CHECK(n == ne && r == rank / 2);
        MPI_Group eg;
        CHECK_RC(MPI_Comm_group(ecomm, &eg));
        CHECK_RC(MPI_Group_compare(eg, evens, &res));
        CHECK(res == MPI_IDENT);
        CHECK_RC(MPI_Group_free(&eg));
        int v = rank, got = -1;
        CHECK_RC(MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 1, &got, 1, MPI_INT, (r + n - 1) % n, 1, ecomm,
                              MPI_STATUS_IGNORE));
        CHECK(got == 2 * ((r + n - 1) % n));
        CHECK_RC(MPI_Comm_free(&ecomm));
    }
    CHECK_RC(MPI_Group_free(&evens));
    CHECK_RC(MPI_Group_free(&no_zero));
    CHECK_RC(MPI_Group_free(&reordered));
    CHECK_RC(MPI_Group_free(&world));
}

static void test_dims(void) {
    int d[3];
    int want[2];
    d[0] = d[1] = 0;
    CHECK_RC(MPI_Dims_create(size, 2, d));
    dims2_expected(size, want);
    CHECK(d[0] == want[0] && d[1] == want[1]);
    d[0] = d[1] = d[2] = 0;
    CHECK_RC(MPI_Dims_create(12, 3, d));
    CHECK(d[0] == 3 && d[1] == 2 && d[2] == 2);
    d[0] = d[1] = 0;
    CHECK_RC(MPI_Dims_create(7, 2, d));
    CHECK(d[0] == 7 && d[1] == 1);
    d[0] = d[1] = 0;
    CHECK_RC(MPI_Dims_create(16, 2, d));
    CHECK(d[0] == 4 && d[1] == 4);
    /* A fixed entry stays; the others share what is left. */
    d[0] = 0, d[1] = 3, d[2] = 0;
    CHECK_RC(MPI_Dims_create(12, 3, d));
    CHECK(d[0] == 2 && d[1] == 3 && d[2] == 2);
    d[0] = 0, d[1] = 5;
    CHECK_RC(MPI_Dims_create(10, 2, d));
    CHECK(d[0] == 2 && d[1] == 5);
}

static void test_cart(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2];
    CHECK_RC(MPI_Dims_create(size, 2, dims));
    MPI_Comm cart;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL);
    int t = -1, nd = -1, r = -1;
    CHECK_RC(MPI_Topo_test(cart, &t));
    CHECK(t == MPI_CART);
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &t));
    CHECK(t == MPI_UNDEFINED);
    CHECK_RC(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2);
    int gd[2], gp[2], gc[2];
    CHECK_RC(MPI_Cart_get(cart, 2, gd, gp, gc));
    MPI_Comm_rank(cart, &r);
    CHECK(r == rank); /* no reordering asked for */
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]); /* row-major */
    for (int q = 0; q < size; q++) {
        CHECK_RC(MPI_Cart_coords(cart, q, 2, coords));
        CHECK(coords[0] == q / dims[1] && coords[1] == q % dims[1]);
        int back = -1;
        CHECK_RC(MPI_Cart_rank(cart, coords, &back));
        CHECK(back == q);
    }
    /* A periodic dimension wraps an out-of-range coordinate. */
    int wrap[2] = {-1, 0}, wr = -1;
    CHECK_RC(MPI_Cart_rank(cart, wrap, &wr));
    CHECK(wr == (dims[0] - 1) * dims[1]);
    wrap[0] = dims[0];
    CHECK_RC(MPI_Cart_rank(cart, wrap, &wr));
    CHECK(wr == 0);

    /* Shift along the periodic dimension 0 by +1 and along the open dimension 1 by -1. */
    int c0 = rank / dims[1], c1 = rank % dims[1], src = -5, dst = -5;
    CHECK_RC(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    CHECK(src == ((c0 + dims[0] - 1) % dims[0]) * dims[1] + c1);
    CHECK(dst == ((c0 + 1) % dims[0]) * dims[1] + c1);
    int got = -1;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 2, &got, 1, MPI_INT, src, 2, cart, MPI_STATUS_IGNORE));
    CHECK(got == src);
    CHECK_RC(MPI_Cart_shift(cart, 1, -1, &src, &dst));
    CHECK(src == (c1 + 1 < dims[1] ? rank + 1 : MPI_PROC_NULL));
    CHECK(dst == (c1 > 0 ? rank - 1 : MPI_PROC_NULL));
    got = -7;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -7 : src));
    /* Shifting by a whole period lands on oneself. */
    CHECK_RC(MPI_Cart_shift(cart, 0, dims[0], &src, &dst));
    CHECK(src == rank && dst == rank);
    CHECK_RC(MPI_Comm_free(&cart));

    /* A 1-D non-periodic grid of size - 1 ranks: the last rank is left out. */
    if (size > 2) {
        int n1 = size - 1, p1 = 0;
        MPI_Comm line;
        CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &p1, 0, &line));
        if (rank == size - 1) {
            CHECK(line == MPI_COMM_NULL);
        } else {
            int s = -1;
            MPI_Comm_size(line, &s);
            CHECK(s == n1);
            CHECK_RC(MPI_Cart_shift(line, 0, 1, &src, &dst));
            CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1));
            CHECK(dst == (rank == n1 - 1 ? MPI_PROC_NULL : rank + 1));
            /* A prefix sum passed down the line. */
            int acc = 0;
            if (src != MPI_PROC_NULL) CHECK_RC(MPI_Recv(&acc, 1, MPI_INT, src, 5, line, MPI_STATUS_IGNORE));
            acc += rank + 1;
            CHECK(acc == (rank + 1) * (rank + 2) / 2);
            if (dst != MPI_PROC_NULL) CHECK_RC(MPI_Send(&acc, 1, MPI_INT, dst, 5, line));
            CHECK_RC(MPI_Comm_free(&line));
        }
    }
}

static void test_dist_graph(void) {
    /* Rank r sends to r+1 and r+2 (mod size), so it hears from r-1 and r-2; edge
     * weights are the sender's rank * 100 + receiver's rank. */
    int dst[2] = {(rank + 1) % size, (rank + 2) % size};
    int srcs[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
    int dw[2] = {rank * 100 + dst[0], rank * 100 + dst[1]};
    int sw[2] = {srcs[0] * 100 + rank, srcs[1] * 100 + rank};
    MPI_Comm g;
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dst, dw, MPI_INFO_NULL, 0, &g));
    int t = -1, in = -1, out = -1, weighted = -1;
    CHECK_RC(MPI_Topo_test(g, &t));
    CHECK(t == MPI_DIST_GRAPH);
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted);
    int gs[2], gsw[2], gdst[2], gdw[2];
    CHECK_RC(MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gdst, gdw));
    for (int i = 0; i < 2; i++) {
        CHECK(gs[i] == srcs[i] && gsw[i] == sw[i]);
        CHECK(gdst[i] == dst[i] && gdw[i] == dw[i]);
    }
    /* Messages along the out-edges; each receive names its in-edge. */
    MPI_Request rq[4];
    int got[2] = {-1, -1}, mine[2] = {dw[0], dw[1]};
    for (int i = 0; i < 2; i++) CHECK_RC(MPI_Irecv(&got[i], 1, MPI_INT, gs[i], 10 + i, g, &rq[i]));
    for (int i = 0; i < 2; i++) CHECK_RC(MPI_Isend(&mine[i], 1, MPI_INT, gdst[i], 10 + i, g, &rq[2 + i]));
    CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    CHECK(got[0] == sw[0] && got[1] == sw[1]);
    CHECK_RC(MPI_Comm_free(&g));

    /* Unweighted, and a rank with no edges at all (the last, when size > 2). */
    int lonely = size > 2 && rank == size - 1;
    int nout = 0, nin = 0, o[1], i1[1];
    if (!lonely) {
        int nxt = (rank + 1) % (size > 2 ? size - 1 : size), prv;
        int m = size > 2 ? size - 1 : size;
        prv = (rank + m - 1) % m;
        o[0] = nxt, i1[0] = prv, nout = 1, nin = 1;
    }
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, i1, MPI_UNWEIGHTED, nout, o, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &g));
    CHECK_RC(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    CHECK(in == nin && out == nout && !weighted);
    if (!lonely) {
        int s1 = -1, d1 = -1;
        CHECK_RC(MPI_Dist_graph_neighbors(g, 1, &s1, MPI_UNWEIGHTED, 1, &d1, MPI_UNWEIGHTED));
        CHECK(s1 == i1[0] && d1 == o[0]);
        int v = -1;
        CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, d1, 0, &v, 1, MPI_INT, s1, 0, g, MPI_STATUS_IGNORE));
        CHECK(v == s1);
    }
    CHECK_RC(MPI_Comm_free(&g));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 64);
    test_dup_split_compare();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_groups();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_dims();
    test_cart();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_dist_graph();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok comm_topo\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
