/* Datatype decoding (MPI_Type_get_envelope, MPI_Type_get_contents): every constructor's
 * combiner and arguments exactly as passed; predefined and pair types are named; a
 * derived argument comes back as a new handle that is freed without touching the
 * original (and outlives the original's own handle); types rebuilt from their decoded
 * contents, recursively, have the same shape, pack the same bytes and carry the same
 * bytes between ranks; and the error classes of bad calls under MPI_ERRORS_RETURN. */
#include <stddef.h>
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;

#define BUF 4096
#define OFF 1024 /* where element 0 starts in the buffers: room for negative bounds */

static int combiner_of(MPI_Datatype t) {
    int ni = -1, na = -1, nd = -1, comb = -1;
    CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    return comb;
}

/* Checks that `a` and `b` have the same shape, pack `count` elements into the same
 * bytes, and that a message sent with one and received with the other (both ways,
 * around the ring) lands on exactly the bytes the sender's type covers. */
static void same_layout(MPI_Datatype a, MPI_Datatype b, int count, int line) {
    static unsigned char src[BUF], theirs[BUF], got[BUF], want[BUF], pa[BUF], pb[BUF];
    int sa = -1, sb = -2;
    MPI_Aint la, ea, lb, eb, tla, tea, tlb, teb;
    CHECK_RC(MPI_Type_size(a, &sa));
    CHECK_RC(MPI_Type_size(b, &sb));
    CHECK_RC(MPI_Type_get_extent(a, &la, &ea));
    CHECK_RC(MPI_Type_get_extent(b, &lb, &eb));
    CHECK_RC(MPI_Type_get_true_extent(a, &tla, &tea));
    CHECK_RC(MPI_Type_get_true_extent(b, &tlb, &teb));
    if (sa != sb || la != lb || ea != eb || tla != tlb || tea != teb) fail_at(__FILE__, line, "shapes differ");
    if (sa <= 0) fail_at(__FILE__, line, "an empty type tests nothing");
    for (int i = 0; i < BUF; i++) {
        src[i] = (unsigned char)(i * 7 + rank * 31 + 1);
        theirs[i] = (unsigned char)(i * 7 + left * 31 + 1);
    }
    int posa = 0, posb = 0;
    CHECK_RC(MPI_Pack(src + OFF, count, a, pa, BUF, &posa, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(src + OFF, count, b, pb, BUF, &posb, MPI_COMM_WORLD));
    if (posa != count * sa || posb != posa || memcmp(pa, pb, (size_t)posa) != 0)
        fail_at(__FILE__, line, "the types pack different bytes");
    MPI_Datatype dirs[2][2] = {{a, b}, {b, a}};
    for (int d = 0; d < 2; d++) {
        MPI_Datatype send = dirs[d][0], recv = dirs[d][1];
        /* What the left neighbour's buffer looks like through the sender's type. */
        int pos = 0;
        memset(want, 0, BUF);
        CHECK_RC(MPI_Pack(theirs + OFF, count, send, pa, BUF, &pos, MPI_COMM_WORLD));
        pos = 0;
        CHECK_RC(MPI_Unpack(pa, BUF, &pos, want + OFF, count, send, MPI_COMM_WORLD));
        memset(got, 0, BUF);
        MPI_Status st;
        CHECK_RC(MPI_Sendrecv(src + OFF, count, send, right, 40 + d, got + OFF, count, recv, left, 40 + d,
                              MPI_COMM_WORLD, &st));
        int n = -1;
        CHECK_RC(MPI_Get_count(&st, recv, &n));
        if (n != count) fail_at(__FILE__, line, "received a different count");
        if (memcmp(got, want, BUF) != 0) fail_at(__FILE__, line, "the types carry different bytes");
    }
}
#define SAME_LAYOUT(a, b, count) same_layout(a, b, count, __LINE__)

/* Checks that `a` and `b` decode to the same combiner and arguments, descending into
 * derived arguments; frees every handle the decoding returned. */
static void same_contents(MPI_Datatype a, MPI_Datatype b, int line) {
    int na[4], nb[4];
    CHECK_RC(MPI_Type_get_envelope(a, &na[0], &na[1], &na[2], &na[3]));
    CHECK_RC(MPI_Type_get_envelope(b, &nb[0], &nb[1], &nb[2], &nb[3]));
    if (memcmp(na, nb, sizeof na) != 0) fail_at(__FILE__, line, "envelopes differ");
    if (na[3] == MPI_COMBINER_NAMED) {
        if (a != b) fail_at(__FILE__, line, "different named types");
        return;
    }
    int ia[64], ib[64];
    MPI_Aint aa[16], ab[16];
    MPI_Datatype ta[16], tb[16];
    CHECK(na[0] <= 64 && na[1] <= 16 && na[2] <= 16);
    CHECK_RC(MPI_Type_get_contents(a, na[0], na[1], na[2], ia, aa, ta));
    CHECK_RC(MPI_Type_get_contents(b, nb[0], nb[1], nb[2], ib, ab, tb));
    if (memcmp(ia, ib, (size_t)na[0] * sizeof *ia) != 0) fail_at(__FILE__, line, "integers differ");
    if (memcmp(aa, ab, (size_t)na[1] * sizeof *aa) != 0) fail_at(__FILE__, line, "addresses differ");
    for (int i = 0; i < na[2]; i++) {
        same_contents(ta[i], tb[i], line);
        if (combiner_of(ta[i]) != MPI_COMBINER_NAMED) {
            CHECK_RC(MPI_Type_free(&ta[i]));
            CHECK_RC(MPI_Type_free(&tb[i]));
        }
    }
}

/* A new type built, recursively, from nothing but the decoded contents of `t` (`t`
 * itself when it is named). */
static MPI_Datatype rebuild(MPI_Datatype t) {
    int ni, na, nd, comb;
    CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED) return t;
    int in[64] = {0};
    MPI_Aint ad[16] = {0};
    MPI_Datatype ty[16], inner[16];
    CHECK(ni <= 64 && na <= 16 && nd <= 16);
    CHECK_RC(MPI_Type_get_contents(t, ni, na, nd, in, ad, ty));
    for (int i = 0; i < nd; i++) inner[i] = rebuild(ty[i]);
    MPI_Datatype out = MPI_DATATYPE_NULL;
    int n = in[0];
    switch (comb) {
    case MPI_COMBINER_DUP: CHECK_RC(MPI_Type_dup(inner[0], &out)); break;
    case MPI_COMBINER_CONTIGUOUS: CHECK_RC(MPI_Type_contiguous(n, inner[0], &out)); break;
    case MPI_COMBINER_VECTOR: CHECK_RC(MPI_Type_vector(n, in[1], in[2], inner[0], &out)); break;
    case MPI_COMBINER_HVECTOR: CHECK_RC(MPI_Type_create_hvector(n, in[1], ad[0], inner[0], &out)); break;
    case MPI_COMBINER_INDEXED: CHECK_RC(MPI_Type_indexed(n, in + 1, in + 1 + n, inner[0], &out)); break;
    case MPI_COMBINER_HINDEXED: CHECK_RC(MPI_Type_create_hindexed(n, in + 1, ad, inner[0], &out)); break;
    case MPI_COMBINER_INDEXED_BLOCK:
        CHECK_RC(MPI_Type_create_indexed_block(n, in[1], in + 2, inner[0], &out));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        CHECK_RC(MPI_Type_create_hindexed_block(n, in[1], ad, inner[0], &out));
        break;
    case MPI_COMBINER_STRUCT: CHECK_RC(MPI_Type_create_struct(n, in + 1, ad, inner, &out)); break;
    case MPI_COMBINER_SUBARRAY:
        CHECK_RC(MPI_Type_create_subarray(n, in + 1, in + 1 + n, in + 1 + 2 * n, in[1 + 3 * n], inner[0], &out));
        break;
    case MPI_COMBINER_RESIZED: CHECK_RC(MPI_Type_create_resized(inner[0], ad[0], ad[1], &out)); break;
    default: CHECK(!"an unknown combiner");
    }
    /* The new type needs neither the decoded handles nor the rebuilt parts' handles. */
    for (int i = 0; i < nd; i++) {
        if (inner[i] != ty[i]) {
            CHECK_RC(MPI_Type_free(&ty[i]));
            CHECK_RC(MPI_Type_free(&inner[i]));
        }
    }
    return out;
}

/* Checks the envelope and contents of `t` exactly (`types[i]` the original argument:
 * a named one must come back as itself, a derived one as a new handle decoding like
 * it), then that the type rebuilt from its contents decodes, packs and travels like
 * `t` (`count` elements). Commits `t`. */
static void expect(MPI_Datatype t, int comb, int ni, const int *ints, int na, const MPI_Aint *addrs, int nd,
                   const MPI_Datatype *types, int count, int line) {
    int gi = -1, ga = -1, gd = -1, gc = -1;
    CHECK_RC(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc));
    if (gc != comb || gi != ni || ga != na || gd != nd) {
        char m[160];
        snprintf(m, sizeof m, "envelope %d %d %d combiner %d, not %d %d %d %d", gi, ga, gd, gc, ni, na, nd, comb);
        fail_at(__FILE__, line, m);
    }
    /* Arrays longer than needed: only the envelope's counts are written. */
    int in[66];
    MPI_Aint ad[18];
    MPI_Datatype ty[18];
    for (int i = 0; i < 66; i++) in[i] = -777;
    for (int i = 0; i < 18; i++) ad[i] = -777, ty[i] = -777;
    CHECK(ni <= 64 && na <= 16 && nd <= 16);
    CHECK_RC(MPI_Type_get_contents(t, ni + 2, na + 2, nd + 2, in, ad, ty));
    for (int i = 0; i < ni; i++)
        if (in[i] != ints[i]) fail_at(__FILE__, line, "an integer differs");
    for (int i = 0; i < na; i++)
        if (ad[i] != addrs[i]) fail_at(__FILE__, line, "an address differs");
    if (in[ni] != -777 || ad[na] != -777 || ty[nd] != -777) fail_at(__FILE__, line, "wrote past the envelope");
    for (int i = 0; i < nd; i++) {
        if (combiner_of(types[i]) == MPI_COMBINER_NAMED) {
            if (ty[i] != types[i]) fail_at(__FILE__, line, "a named type came back as another handle");
            continue;
        }
        if (ty[i] == types[i] || ty[i] == MPI_DATATYPE_NULL) fail_at(__FILE__, line, "no new handle");
        same_contents(ty[i], types[i], line);
        CHECK_RC(MPI_Type_commit(&ty[i]));
        MPI_Datatype orig = types[i];
        CHECK_RC(MPI_Type_commit(&orig));
        same_layout(ty[i], orig, 2, line);
        CHECK_RC(MPI_Type_free(&ty[i]));
        CHECK(ty[i] == MPI_DATATYPE_NULL);
        /* The original is untouched by freeing the decoded handle. */
        same_layout(orig, orig, 1, line);
    }
    MPI_Datatype again = rebuild(t);
    CHECK(again != t);
    same_contents(again, t, line);
    CHECK_RC(MPI_Type_commit(&t));
    CHECK_RC(MPI_Type_commit(&again));
    same_layout(t, again, count, line);
    CHECK_RC(MPI_Type_free(&again));
}
#define EXPECT(t, comb, ni, ints, na, addrs, nd, types, count) \
    expect(t, comb, ni, ints, na, addrs, nd, types, count, __LINE__)

struct rec {
    int i;
    double d;
    char c[3];
};

static void test_each_constructor(void) {
    MPI_Datatype t;
    const MPI_Datatype INT[1] = {MPI_INT};

    CHECK_RC(MPI_Type_contiguous(5, MPI_INT, &t));
    EXPECT(t, MPI_COMBINER_CONTIGUOUS, 1, ((int[]){5}), 0, NULL, 1, INT, 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t));
    EXPECT(t, MPI_COMBINER_VECTOR, 3, ((int[]){3, 2, 4}), 0, NULL, 1, ((MPI_Datatype[]){MPI_DOUBLE}), 2);
    CHECK_RC(MPI_Type_free(&t));
    CHECK_RC(MPI_Type_vector(2, 1, -3, MPI_INT, &t));
    EXPECT(t, MPI_COMBINER_VECTOR, 3, ((int[]){2, 1, -3}), 0, NULL, 1, INT, 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_hvector(3, 1, 24, MPI_INT, &t));
    EXPECT(t, MPI_COMBINER_HVECTOR, 2, ((int[]){3, 1}), 1, ((MPI_Aint[]){24}), 1, INT, 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){0, 4, 7}, MPI_INT, &t));
    EXPECT(t, MPI_COMBINER_INDEXED, 7, ((int[]){3, 2, 1, 3, 0, 4, 7}), 0, NULL, 1, INT, 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){16, 0}, MPI_SHORT, &t));
    EXPECT(t, MPI_COMBINER_HINDEXED, 3, ((int[]){2, 1, 2}), 2, ((MPI_Aint[]){16, 0}), 1,
           ((MPI_Datatype[]){MPI_SHORT}), 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_indexed_block(3, 2, (int[]){5, 0, 9}, MPI_FLOAT, &t));
    EXPECT(t, MPI_COMBINER_INDEXED_BLOCK, 5, ((int[]){3, 2, 5, 0, 9}), 0, NULL, 1,
           ((MPI_Datatype[]){MPI_FLOAT}), 2);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){40, 8}, MPI_CHAR, &t));
    EXPECT(t, MPI_COMBINER_HINDEXED_BLOCK, 2, ((int[]){2, 3}), 2, ((MPI_Aint[]){40, 8}), 1,
           ((MPI_Datatype[]){MPI_CHAR}), 2);
    CHECK_RC(MPI_Type_free(&t));

    MPI_Aint rd[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c)};
    MPI_Datatype rt[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    CHECK_RC(MPI_Type_create_struct(3, (int[]){1, 1, 3}, rd, rt, &t));
    EXPECT(t, MPI_COMBINER_STRUCT, 4, ((int[]){3, 1, 1, 3}), 3, rd, 3, rt, 3);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_C, MPI_INT, &t));
    EXPECT(t, MPI_COMBINER_SUBARRAY, 8, ((int[]){2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C}), 0, NULL, 1, INT, 2);
    CHECK_RC(MPI_Type_free(&t));
    CHECK_RC(MPI_Type_create_subarray(3, (int[]){3, 4, 2}, (int[]){2, 2, 1}, (int[]){1, 0, 1},
                                      MPI_ORDER_FORTRAN, MPI_DOUBLE, &t));
    EXPECT(t, MPI_COMBINER_SUBARRAY, 11, ((int[]){3, 3, 4, 2, 2, 2, 1, 1, 0, 1, MPI_ORDER_FORTRAN}), 0, NULL, 1,
           ((MPI_Datatype[]){MPI_DOUBLE}), 1);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    EXPECT(t, MPI_COMBINER_RESIZED, 0, NULL, 2, ((MPI_Aint[]){-4, 16}), 1, INT, 3);
    CHECK_RC(MPI_Type_free(&t));

    CHECK_RC(MPI_Type_dup(MPI_DOUBLE_INT, &t));
    EXPECT(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, ((MPI_Datatype[]){MPI_DOUBLE_INT}), 2);
    /* A dup has no integers or addresses: null arrays with room 0 are fine. */
    MPI_Datatype d = MPI_DATATYPE_NULL;
    CHECK_RC(MPI_Type_get_contents(t, 0, 0, 1, NULL, NULL, &d));
    CHECK(d == MPI_DOUBLE_INT);
    CHECK_RC(MPI_Type_free(&t));
}

static void test_named(void) {
    const MPI_Datatype named[] = {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT,
                                  MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
                                  MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_INT8_T,
                                  MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T, MPI_INT32_T, MPI_UINT32_T,
                                  MPI_INT64_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_2INT,
                                  MPI_DOUBLE_INT, MPI_FLOAT_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_C_BOOL,
                                  MPI_WCHAR, MPI_PACKED};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
        int ni = -1, na = -1, nd = -1, comb = -1;
        CHECK_RC(MPI_Type_get_envelope(named[i], &ni, &na, &nd, &comb));
        CHECK(ni == 0 && na == 0 && nd == 0 && comb == MPI_COMBINER_NAMED);
    }
}

/* A struct of a vector and an hvector of a resized type: decoded level by level, the
 * parts' handles outlive the originals' (freed before decoding), and each decoding
 * gives its own handles. */
static void test_nested(void) {
    MPI_Datatype v1, r, v2, s;
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &v1));
    CHECK_RC(MPI_Type_create_resized(MPI_SHORT, 0, 4, &r));
    CHECK_RC(MPI_Type_create_hvector(2, 1, 16, r, &v2));
    MPI_Datatype parts[3] = {v1, v2, MPI_INT};
    MPI_Aint disps[3] = {0, 64, 128};
    CHECK_RC(MPI_Type_create_struct(3, (int[]){1, 2, 1}, disps, parts, &s));
    EXPECT(s, MPI_COMBINER_STRUCT, 4, ((int[]){3, 1, 2, 1}), 3, disps, 3, parts, 2);
    /* The program's handles of the parts go; the struct still decodes to them. */
    CHECK_RC(MPI_Type_free(&v1));
    CHECK_RC(MPI_Type_free(&v2));
    CHECK_RC(MPI_Type_free(&r));
    int in[4];
    MPI_Aint ad[3];
    MPI_Datatype first[3], second[3];
    CHECK_RC(MPI_Type_get_contents(s, 4, 3, 3, in, ad, first));
    CHECK_RC(MPI_Type_get_contents(s, 4, 3, 3, in, ad, second));
    CHECK(first[0] != second[0] && first[1] != second[1] && first[0] != first[1]);
    CHECK(first[2] == MPI_INT && second[2] == MPI_INT);
    /* Level 2: the vector. */
    int vi[3] = {0, 0, 0};
    MPI_Datatype vt = MPI_DATATYPE_NULL;
    CHECK(combiner_of(first[0]) == MPI_COMBINER_VECTOR);
    CHECK_RC(MPI_Type_get_contents(first[0], 3, 0, 1, vi, NULL, &vt));
    CHECK(vi[0] == 2 && vi[1] == 1 && vi[2] == 3 && vt == MPI_INT);
    /* Levels 2 and 3: the hvector, then the resized short inside it. */
    int hi[2] = {0, 0};
    MPI_Aint ha = 0, ra[2] = {0, 0};
    MPI_Datatype ht = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
    CHECK(combiner_of(first[1]) == MPI_COMBINER_HVECTOR);
    CHECK_RC(MPI_Type_get_contents(first[1], 2, 1, 1, hi, &ha, &ht));
    CHECK(hi[0] == 2 && hi[1] == 1 && ha == 16);
    CHECK(combiner_of(ht) == MPI_COMBINER_RESIZED);
    CHECK_RC(MPI_Type_get_contents(ht, 0, 2, 1, NULL, ra, &rt));
    CHECK(ra[0] == 0 && ra[1] == 4 && rt == MPI_SHORT);
    /* The decoded parts work as types: the vector moves like a new vector. */
    MPI_Datatype fresh;
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &fresh));
    CHECK_RC(MPI_Type_commit(&fresh));
    CHECK_RC(MPI_Type_commit(&first[0]));
    SAME_LAYOUT(first[0], fresh, 3);
    CHECK_RC(MPI_Type_free(&fresh));
    /* Freeing one decoding's handles leaves the other's and the struct working. */
    for (int i = 0; i < 2; i++) CHECK_RC(MPI_Type_free(&first[i]));
    CHECK_RC(MPI_Type_free(&ht));
    CHECK_RC(MPI_Type_commit(&second[1]));
    MPI_Datatype again = rebuild(second[1]);
    CHECK_RC(MPI_Type_commit(&again));
    SAME_LAYOUT(second[1], again, 2);
    CHECK_RC(MPI_Type_free(&again));
    for (int i = 0; i < 2; i++) CHECK_RC(MPI_Type_free(&second[i]));
    MPI_Datatype whole = rebuild(s);
    CHECK_RC(MPI_Type_commit(&whole));
    SAME_LAYOUT(s, whole, 2);
    same_contents(s, whole, __LINE__);
    CHECK_RC(MPI_Type_free(&whole));
    /* A dup of a derived type decodes to a new handle of the original. */
    MPI_Datatype dup, inner = MPI_DATATYPE_NULL;
    CHECK_RC(MPI_Type_dup(s, &dup));
    CHECK_RC(MPI_Type_get_contents(dup, 0, 0, 1, NULL, NULL, &inner));
    CHECK(inner != s && inner != dup && inner != MPI_DATATYPE_NULL);
    same_contents(inner, s, __LINE__);
    CHECK_RC(MPI_Type_free(&inner));
    CHECK_RC(MPI_Type_free(&dup));
    CHECK_RC(MPI_Type_free(&s));
}

static void test_errors(void) {
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int in[8], ni, na, nd, comb;
    MPI_Aint ad[8];
    MPI_Datatype ty[8] = {-5, -5, -5, -5, -5, -5, -5, -5};
    /* Named types have no contents. */
    CHECK_CLASS(MPI_Type_get_contents(MPI_INT, 8, 8, 8, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(MPI_2INT, 8, 8, 8, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(MPI_DOUBLE_INT, 8, 8, 8, in, ad, ty), MPI_ERR_ARG);
    /* Room below the envelope's counts, in each array; no handle is given out. */
    MPI_Datatype v, s;
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    CHECK_CLASS(MPI_Type_get_contents(v, 2, 0, 1, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(v, 3, 0, 0, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(v, -1, 0, 1, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(v, 3, 0, 1, NULL, ad, ty), MPI_ERR_ARG);
    CHECK_RC(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 32}, (MPI_Datatype[]){v, MPI_INT}, &s));
    CHECK_CLASS(MPI_Type_get_contents(s, 3, 1, 2, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(s, 3, 2, 1, in, ad, ty), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_contents(s, 2, 2, 2, in, ad, ty), MPI_ERR_ARG);
    for (int i = 0; i < 8; i++) CHECK(ty[i] == -5);
    /* Handles that are no datatype. */
    CHECK_CLASS(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_contents(MPI_DATATYPE_NULL, 8, 8, 8, in, ad, ty), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_envelope((MPI_Datatype)MPI_COMM_WORLD, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    MPI_Datatype gone;
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &gone));
    MPI_Datatype stale = gone;
    CHECK_RC(MPI_Type_free(&gone));
    CHECK_CLASS(MPI_Type_get_envelope(stale, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_contents(stale, 8, 8, 8, in, ad, ty), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_envelope(v, NULL, &na, &nd, &comb), MPI_ERR_ARG);
    /* The job goes on: the types still decode and communicate. */
    CHECK_RC(MPI_Type_get_contents(s, 3, 2, 2, in, ad, ty));
    CHECK(in[0] == 2 && in[1] == 1 && in[2] == 1 && ad[0] == 0 && ad[1] == 32 && ty[1] == MPI_INT);
    CHECK(ty[0] != v && combiner_of(ty[0]) == MPI_COMBINER_VECTOR);
    CHECK_RC(MPI_Type_commit(&ty[0]));
    CHECK_RC(MPI_Type_commit(&v));
    SAME_LAYOUT(v, ty[0], 2);
    CHECK_RC(MPI_Type_free(&ty[0]));
    CHECK_RC(MPI_Type_free(&v));
    CHECK_RC(MPI_Type_free(&s));
    int sum = 0, one = 1;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_named();
    test_each_constructor();
    test_nested();
    test_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok type_decode\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
