/* Derived datatypes: every constructor, commit/free/dup, the size and extent queries,
 * names, addresses, Get_count/Get_elements; and typed messages around a ring: a
 * column of a matrix (vector), an array of {int; double; char[3]} (struct), a
 * triangle (indexed), each sent with one type and received with another of the
 * same type signature. Expected layouts are computed here by hand. */
#include <stddef.h>
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;

struct rec {
    int i;
    double d;
    char c[3];
};

/* Checks size, lb, extent, true lb and true extent of `t`. */
static void shape(MPI_Datatype t, int sz, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int line) {
    int s = -1;
    MPI_Aint l = -99, e = -99, tl = -99, te = -99;
    CHECK_RC(MPI_Type_size(t, &s));
    CHECK_RC(MPI_Type_get_extent(t, &l, &e));
    CHECK_RC(MPI_Type_get_true_extent(t, &tl, &te));
    if (s != sz || l != lb || e != ext || tl != tlb || te != text) {
        char m[200];
        snprintf(m, sizeof m, "type shape: size %d lb %ld extent %ld true lb %ld true extent %ld, not %d %ld %ld %ld %ld",
                 s, (long)l, (long)e, (long)tl, (long)te, sz, (long)lb, (long)ext, (long)tlb, (long)text);
        fail_at(__FILE__, line, m);
    }
    /* The MPI_Count forms agree. */
    MPI_Count xs = -1, xl = -99, xe = -99, xtl = -99, xte = -99;
    CHECK_RC(MPI_Type_size_x(t, &xs));
    CHECK_RC(MPI_Type_get_extent_x(t, &xl, &xe));
    CHECK_RC(MPI_Type_get_true_extent_x(t, &xtl, &xte));
    if (xs != sz || xl != lb || xe != ext || xtl != tlb || xte != text) fail_at(__FILE__, line, "the _x forms differ");
}
#define SHAPE(t, sz, lb, ext, tlb, text) shape(t, sz, lb, ext, tlb, text, __LINE__)

static void test_constructors(void) {
    MPI_Datatype t;
    /* Basic types, including the pair types MINLOC/MAXLOC use (C struct layouts). */
    SHAPE(MPI_INT, 4, 0, 4, 0, 4);
    SHAPE(MPI_DOUBLE, 8, 0, 8, 0, 8);
    SHAPE(MPI_2INT, 8, 0, 8, 0, 8);
    struct di { double d; int i; };
    struct si { short s; int i; };
    struct li { long l; int i; };
    struct fi { float f; int i; };
    SHAPE(MPI_DOUBLE_INT, 12, 0, (MPI_Aint)sizeof(struct di), 0, 12);
    SHAPE(MPI_SHORT_INT, 6, 0, (MPI_Aint)sizeof(struct si), 0, (MPI_Aint)offsetof(struct si, i) + 4);
    SHAPE(MPI_LONG_INT, (int)sizeof(long) + 4, 0, (MPI_Aint)sizeof(struct li), 0, (MPI_Aint)sizeof(long) + 4);
    SHAPE(MPI_FLOAT_INT, 8, 0, (MPI_Aint)sizeof(struct fi), 0, 8);

    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &t));
    SHAPE(t, 12, 0, 12, 0, 12);
    CHECK_RC(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);
    CHECK_RC(MPI_Type_contiguous(0, MPI_INT, &t));
    SHAPE(t, 0, 0, 0, 0, 0);
    CHECK_RC(MPI_Type_free(&t));

    /* 4 blocks of 2 doubles, 5 doubles apart. */
    CHECK_RC(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &t));
    SHAPE(t, 64, 0, 17 * 8, 0, 17 * 8);
    CHECK_RC(MPI_Type_free(&t));
    /* 3 ints, 24 bytes apart. */
    CHECK_RC(MPI_Type_create_hvector(3, 1, 24, MPI_INT, &t));
    SHAPE(t, 12, 0, 52, 0, 52);
    CHECK_RC(MPI_Type_free(&t));
    /* Blocks {2,1,3} at {0,4,7} ints. */
    int bl[3] = {2, 1, 3}, dp[3] = {0, 4, 7};
    CHECK_RC(MPI_Type_indexed(3, bl, dp, MPI_INT, &t));
    SHAPE(t, 24, 0, 40, 0, 40);
    CHECK_RC(MPI_Type_free(&t));
    /* A first block away from 0 moves the lower bound. */
    int bl2[2] = {1, 1}, dp2[2] = {5, 2};
    CHECK_RC(MPI_Type_indexed(2, bl2, dp2, MPI_INT, &t));
    SHAPE(t, 8, 8, 16, 8, 16);
    CHECK_RC(MPI_Type_free(&t));
    int hbl[2] = {1, 2};
    MPI_Aint hdp[2] = {8, 32};
    CHECK_RC(MPI_Type_create_hindexed(2, hbl, hdp, MPI_DOUBLE, &t));
    SHAPE(t, 24, 8, 40, 8, 40);
    CHECK_RC(MPI_Type_free(&t));
    /* Indexed blocks of one length: 2 ints at {6, 0, 3} ints; 3 doubles at {40, 8} bytes. */
    int bdp[3] = {6, 0, 3};
    CHECK_RC(MPI_Type_create_indexed_block(3, 2, bdp, MPI_INT, &t));
    SHAPE(t, 24, 0, 32, 0, 32);
    CHECK_RC(MPI_Type_free(&t));
    MPI_Aint hbdp[2] = {40, 8};
    CHECK_RC(MPI_Type_create_hindexed_block(2, 3, hbdp, MPI_DOUBLE, &t));
    SHAPE(t, 48, 8, 56, 8, 56);
    CHECK_RC(MPI_Type_free(&t));

    /* The struct: extent padded to the C struct's size, true extent not. */
    int sbl[3] = {1, 1, 3};
    MPI_Aint sdp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c)};
    MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    CHECK_RC(MPI_Type_create_struct(3, sbl, sdp, sty, &t));
    SHAPE(t, 15, 0, (MPI_Aint)sizeof(struct rec), 0, (MPI_Aint)offsetof(struct rec, c) + 3);
    CHECK_RC(MPI_Type_free(&t));

    /* Resized: lb and extent as asked, size and true extent unchanged. */
    CHECK_RC(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    SHAPE(t, 4, -4, 16, 0, 4);
    MPI_Datatype t2;
    CHECK_RC(MPI_Type_contiguous(2, t, &t2)); /* the second int starts one extent on */
    SHAPE(t2, 8, -4, 32, 0, 20);
    CHECK_RC(MPI_Type_free(&t2));
    CHECK_RC(MPI_Type_free(&t));

    /* Built from a type that is freed meanwhile: the new type keeps working. */
    MPI_Datatype pair, grid;
    CHECK_RC(MPI_Type_contiguous(2, MPI_SHORT, &pair));
    CHECK_RC(MPI_Type_vector(3, 1, 2, pair, &grid));
    CHECK_RC(MPI_Type_free(&pair));
    CHECK_RC(MPI_Type_commit(&grid));
    SHAPE(grid, 12, 0, 20, 0, 20);
    short out[10], in[6];
    for (int i = 0; i < 10; i++) out[i] = (short)(rank * 100 + i);
    CHECK_RC(MPI_Sendrecv(out, 1, grid, right, 1, in, 6, MPI_SHORT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 2; j++) CHECK(in[2 * k + j] == left * 100 + 4 * k + j);

    /* Dup: the same layout, committed as its original was, named separately. */
    MPI_Datatype copy;
    CHECK_RC(MPI_Type_dup(grid, &copy));
    SHAPE(copy, 12, 0, 20, 0, 20);
    memset(in, 0, sizeof in);
    CHECK_RC(MPI_Sendrecv(out, 1, copy, right, 2, in, 6, MPI_SHORT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[5] == left * 100 + 9);
    CHECK_RC(MPI_Type_free(&grid));
    CHECK_RC(MPI_Type_free(&copy));
}

static void test_names_addresses(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_RC(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7);
    CHECK_RC(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0);
    MPI_Datatype t;
    CHECK_RC(MPI_Type_contiguous(4, MPI_FLOAT, &t));
    CHECK_RC(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0);
    CHECK_RC(MPI_Type_set_name(t, "four floats"));
    CHECK_RC(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "four floats") == 0 && len == 11);
    CHECK_RC(MPI_Type_set_name(t, "renamed"));
    CHECK_RC(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "renamed") == 0 && len == 7);
    CHECK_RC(MPI_Type_free(&t));

    struct rec r[2];
    MPI_Aint a0, a1, ad, a2;
    CHECK_RC(MPI_Get_address(&r[0], &a0));
    CHECK_RC(MPI_Get_address(&r[0].d, &ad));
    CHECK_RC(MPI_Get_address(&r[1], &a1));
    CHECK_RC(MPI_Get_address(&r[0].c[2], &a2));
    CHECK(ad - a0 == (MPI_Aint)offsetof(struct rec, d));
    CHECK(MPI_Aint_diff(a1, a0) == (MPI_Aint)sizeof(struct rec));
    CHECK(MPI_Aint_add(a0, (MPI_Aint)offsetof(struct rec, c) + 2) == a2);
}

static void test_messages(void) {
    MPI_Status st;
    int n = -1;
    /* A column of a 5x4 matrix: received as 5 contiguous doubles, and into a column. */
    enum { R = 5, C = 4 };
    double m[R][C], col[R], back[R][C];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) m[i][j] = rank * 1000 + i * 10 + j;
    MPI_Datatype column, column1;
    CHECK_RC(MPI_Type_vector(R, 1, C, MPI_DOUBLE, &column));
    CHECK_RC(MPI_Type_commit(&column));
    CHECK_RC(MPI_Sendrecv(&m[0][2], 1, column, right, 3, col, R, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st));
    for (int i = 0; i < R; i++) CHECK(col[i] == left * 1000 + i * 10 + 2);
    CHECK_RC(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == R);
    CHECK_RC(MPI_Get_count(&st, column, &n));
    CHECK(n == 1);
    /* Two neighbouring columns with the column resized to one double. */
    CHECK_RC(MPI_Type_create_resized(column, 0, sizeof(double), &column1));
    CHECK_RC(MPI_Type_commit(&column1));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) back[i][j] = -1;
    CHECK_RC(MPI_Sendrecv(&m[0][1], 2, column1, right, 4, &back[0][2], 2, column1, left, 4, MPI_COMM_WORLD, &st));
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) CHECK(back[i][j] == (j >= 2 ? left * 1000 + i * 10 + (j - 1) : -1));
    CHECK_RC(MPI_Get_count(&st, column1, &n));
    CHECK(n == 2);
    CHECK_RC(MPI_Get_elements(&st, column1, &n));
    CHECK(n == 2 * R);
    MPI_Count xn = -1;
    CHECK_RC(MPI_Get_elements_x(&st, column1, &xn));
    CHECK(xn == 2 * R);
    CHECK_RC(MPI_Type_free(&column));
    CHECK_RC(MPI_Type_free(&column1));

    /* An array of structs with the unresized struct type (its extent is the C size). */
    int sbl[3] = {1, 1, 3};
    MPI_Aint base, sdp[3];
    struct rec rs[3], rr[3];
    MPI_Get_address(&rs[0], &base);
    MPI_Get_address(&rs[0].i, &sdp[0]);
    MPI_Get_address(&rs[0].d, &sdp[1]);
    MPI_Get_address(&rs[0].c, &sdp[2]);
    for (int k = 0; k < 3; k++) sdp[k] -= base;
    MPI_Datatype sty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, srec;
    CHECK_RC(MPI_Type_create_struct(3, sbl, sdp, sty, &srec));
    CHECK_RC(MPI_Type_commit(&srec));
    memset(rr, 0, sizeof rr);
    for (int k = 0; k < 3; k++) {
        rs[k].i = rank * 10 + k;
        rs[k].d = rank + k * 0.25;
        rs[k].c[0] = (char)('a' + k), rs[k].c[1] = (char)('A' + rank % 26), rs[k].c[2] = (char)k;
    }
    CHECK_RC(MPI_Sendrecv(rs, 3, srec, right, 5, rr, 3, srec, left, 5, MPI_COMM_WORLD, &st));
    for (int k = 0; k < 3; k++) {
        CHECK(rr[k].i == left * 10 + k && rr[k].d == left + k * 0.25);
        CHECK(rr[k].c[0] == 'a' + k && rr[k].c[1] == 'A' + left % 26 && rr[k].c[2] == k);
    }
    CHECK_RC(MPI_Get_count(&st, srec, &n));
    CHECK(n == 3);
    CHECK_RC(MPI_Get_elements(&st, srec, &n));
    CHECK(n == 15); /* 3 x (1 int + 1 double + 3 chars) */
    /* The same signature (int, double, 3 chars) received with another layout. */
    struct other {
        double pad;
        int i;
        char gap[4];
        double d;
        char c[3];
    } one;
    int obl[3] = {1, 1, 3};
    MPI_Aint odp[3] = {offsetof(struct other, i), offsetof(struct other, d), offsetof(struct other, c)};
    MPI_Datatype otype;
    CHECK_RC(MPI_Type_create_struct(3, obl, odp, sty, &otype));
    CHECK_RC(MPI_Type_commit(&otype));
    memset(&one, 0x55, sizeof one);
    CHECK_RC(MPI_Sendrecv(&rs[1], 1, srec, right, 6, &one, 1, otype, left, 6, MPI_COMM_WORLD, &st));
    CHECK(one.i == left * 10 + 1 && one.d == left + 0.25);
    CHECK(one.c[0] == 'b' && one.c[1] == 'A' + left % 26 && one.c[2] == 1);
    CHECK(one.gap[0] == 0x55 && one.gap[3] == 0x55); /* the holes are untouched */
    CHECK_RC(MPI_Get_elements(&st, otype, &n));
    CHECK(n == 5);
    CHECK_RC(MPI_Type_free(&otype));
    CHECK_RC(MPI_Type_free(&srec));

    /* The upper triangle of a 4x4 matrix (indexed), received as 10 ints. */
    int a[4][4], tri[10], tbl[4], tdp[4];
    for (int i = 0; i < 4; i++) {
        tbl[i] = 4 - i;
        tdp[i] = 4 * i + i;
        for (int j = 0; j < 4; j++) a[i][j] = rank * 100 + i * 4 + j;
    }
    MPI_Datatype upper;
    CHECK_RC(MPI_Type_indexed(4, tbl, tdp, MPI_INT, &upper));
    CHECK_RC(MPI_Type_commit(&upper));
    CHECK_RC(MPI_Sendrecv(a, 1, upper, right, 7, tri, 10, MPI_INT, left, 7, MPI_COMM_WORLD, &st));
    for (int i = 0, k = 0; i < 4; i++)
        for (int j = i; j < 4; j++, k++) CHECK(tri[k] == left * 100 + i * 4 + j);
    /* ... and back the other way: 10 contiguous ints into the triangle of a zeroed matrix. */
    int z[4][4];
    memset(z, 0, sizeof z);
    CHECK_RC(MPI_Sendrecv(tri, 10, MPI_INT, left, 8, z, 1, upper, right, 8, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) CHECK(z[i][j] == (j >= i ? rank * 100 + i * 4 + j : 0));
    CHECK_RC(MPI_Type_free(&upper));

    /* Get_count with a type the message does not fill: MPI_UNDEFINED; elements still count. */
    MPI_Datatype three;
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &three));
    CHECK_RC(MPI_Type_commit(&three));
    int seven[9] = {0};
    for (int i = 0; i < 7; i++) seven[i] = rank + i;
    CHECK_RC(MPI_Sendrecv(seven, 7, MPI_INT, right, 9, tri, 3, three, left, 9, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Get_count(&st, three, &n));
    CHECK(n == MPI_UNDEFINED);
    CHECK_RC(MPI_Get_elements(&st, three, &n));
    CHECK(n == 7);
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 7);
    for (int i = 0; i < 7; i++) CHECK(tri[i] == left + i);
    CHECK_RC(MPI_Sendrecv(seven, 6, MPI_INT, right, 10, tri, 3, three, left, 10, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Get_count(&st, three, &n));
    CHECK(n == 2);
    CHECK_RC(MPI_Type_free(&three));

    /* Non-blocking with a derived type: an hvector of every other int. */
    MPI_Datatype every2;
    CHECK_RC(MPI_Type_create_hvector(8, 1, 2 * sizeof(int), MPI_INT, &every2));
    CHECK_RC(MPI_Type_commit(&every2));
    int src[16], dst[16];
    for (int i = 0; i < 16; i++) src[i] = rank * 16 + i, dst[i] = -1;
    MPI_Request rq[2];
    CHECK_RC(MPI_Irecv(dst + 1, 1, every2, left, 11, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(src, 1, every2, right, 11, MPI_COMM_WORLD, &rq[1]));
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 16; i++) CHECK(dst[i] == (i % 2 ? left * 16 + i - 1 : -1));
    CHECK_RC(MPI_Type_free(&every2));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_constructors();
    test_names_addresses();
    test_messages();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok datatypes\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
