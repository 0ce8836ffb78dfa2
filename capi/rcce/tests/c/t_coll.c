/*
 * t_coll: collectives of the simplified interface over RCCE_COMM_WORLD.
 *
 *  - RCCE_barrier: nobody leaves a barrier before everybody has entered it
 *    (phase numbers in shared DRAM).
 *  - RCCE_bcast from every root, of 0, 5 and 8200 bytes (8200 bytes only
 *    from roots 0, np/2 and np-1 above 16 cores).
 *  - RCCE_reduce (roots 0, np/2, np-1) and RCCE_allreduce for every op
 *    (SUM, MIN, MAX, PROD) and type (INT, LONG, FLOAT, DOUBLE), against a
 *    sequential computation; values are small integers, so results are
 *    exact.  Only the root's output buffer is written by RCCE_reduce.
 *  - One 1100-double (8800 B, two chunks) reduce and allreduce.
 * Simplified interface only (RCCE 1.0.13 has no gory collectives).
 */
#ifdef GORY
#error "t_coll covers the simplified interface's collectives: build without -DGORY"
#endif

#include <stdarg.h>
#include <string.h>

#include "RCCE.h"

#define TEST_NAME "t_coll"
#include "test_check.h"

#define NEL 5          /* elements per reduction */
#define BIGN 1100      /* elements of the two-chunk reduction */
#define SENTINEL 0x77

static int np;

static const int types[] = {RCCE_INT, RCCE_LONG, RCCE_FLOAT, RCCE_DOUBLE};
static const char *const type_names[] = {"INT", "LONG", "FLOAT", "DOUBLE"};
static const int ops[] = {RCCE_SUM, RCCE_MIN, RCCE_MAX, RCCE_PROD};
static const char *const op_names[] = {"SUM", "MIN", "MAX", "PROD"};

static size_t type_size(int type)
{
    switch (type) {
    case RCCE_INT: return sizeof(int);
    case RCCE_LONG: return sizeof(long);
    case RCCE_FLOAT: return sizeof(float);
    default: return sizeof(double);
    }
}

static void store(int type, void *buf, int e, long v)
{
    switch (type) {
    case RCCE_INT: ((int *)buf)[e] = (int)v; break;
    case RCCE_LONG: ((long *)buf)[e] = v; break;
    case RCCE_FLOAT: ((float *)buf)[e] = (float)v; break;
    default: ((double *)buf)[e] = (double)v; break;
    }
}

static double load(int type, const void *buf, int e)
{
    switch (type) {
    case RCCE_INT: return ((const int *)buf)[e];
    case RCCE_LONG: return (double)((const long *)buf)[e];
    case RCCE_FLOAT: return ((const float *)buf)[e];
    default: return ((const double *)buf)[e];
    }
}

/* Contribution of rank r to element e under op (small integers). */
static long value(int op, int r, int e)
{
    if (op == RCCE_PROD) {
        if ((r + e) % 7 == 3)
            return 2;
        return ((r * 3 + e) % 5 == 0) ? -1 : 1;
    }
    return (long)((r * 37 + e * 11 + (op - RCCE_SUM) * 5) % 101) - 50;
}

static long expected(int op, int e)
{
    long acc = value(op, 0, e);
    int r;
    for (r = 1; r < np; r++) {
        long v = value(op, r, e);
        switch (op) {
        case RCCE_SUM: acc += v; break;
        case RCCE_MIN: acc = v < acc ? v : acc; break;
        case RCCE_MAX: acc = v > acc ? v : acc; break;
        default: acc *= v; break;
        }
    }
    return acc;
}

static void test_barrier(void)
{
    volatile int *phase =
        (volatile int *)RCCE_shmalloc((size_t)np * sizeof(int));
    int it, i;
    CHECK(phase != NULL, "RCCE_shmalloc failed");
    phase[me] = -1;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (it = 0; it < 10; it++) {
        phase[me] = it;
        RCCE_shflush();
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
        for (i = 0; i < np; i++)
            CHECK(phase[i] == it,
                  "after barrier %d, rank %d is at phase %d", it, i, phase[i]);
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    }
    RCCE_shfree((t_vcharp)phase);
}

static void test_bcast(void)
{
    static unsigned char buf[8200 + 32];
    static const size_t sizes[] = {0, 5, 8200};
    int root, s;
    size_t i, n;
    for (root = 0; root < np; root++) {
        for (s = 0; s < 3; s++) {
            n = sizes[s];
            /* above 16 cores, the two-chunk size only from 3 roots */
            if (n > 5 && np > 16 && root != 0 && root != np / 2 &&
                root != np - 1)
                continue;
            for (i = 0; i < n + 32; i++)
                buf[i] = (me == root && i < n)
                             ? (unsigned char)(root * 13 + i * 5 + n)
                             : 0x5A;
            CHECK_RC(RCCE_bcast((char *)buf, n, root, RCCE_COMM_WORLD),
                     RCCE_SUCCESS);
            for (i = 0; i < n; i++)
                CHECK(buf[i] == (unsigned char)(root * 13 + i * 5 + n),
                      "bcast of %lu B from %d: byte %lu is %u",
                      (unsigned long)n, root, (unsigned long)i, buf[i]);
            for (i = n; i < n + 32; i++)
                CHECK(buf[i] == 0x5A,
                      "bcast of %lu B from %d wrote past the end",
                      (unsigned long)n, root);
        }
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

static void check_result(int type, int op, const void *out, int root,
                         const char *what)
{
    int e;
    for (e = 0; e < NEL; e++) {
        double want = (double)expected(op, e);
        double got = load(type, out, e);
        CHECK(got == want, "%s %s %s (root %d): element %d is %g, expected %g",
              what, op_names[op - RCCE_SUM], type_names[type - RCCE_INT], root,
              e, got, want);
    }
}

static void test_reduce(void)
{
    double in[NEL], out[NEL];
    int roots[3], nroots = 0, t, o, k, e;
    roots[nroots++] = 0;
    if (np / 2 != 0)
        roots[nroots++] = np / 2;
    if (np - 1 != np / 2 && np - 1 != 0)
        roots[nroots++] = np - 1;

    for (t = 0; t < 4; t++) {
        for (o = 0; o < 4; o++) {
            int type = types[t], op = ops[o];
            for (k = 0; k < nroots; k++) {
                for (e = 0; e < NEL; e++)
                    store(type, in, e, value(op, me, e));
                memset(out, SENTINEL, sizeof out);
                CHECK_RC(RCCE_reduce((char *)in, (char *)out, NEL, type, op,
                                     roots[k], RCCE_COMM_WORLD),
                         RCCE_SUCCESS);
                if (me == roots[k]) {
                    check_result(type, op, out, roots[k], "reduce");
                } else {
                    const unsigned char *b = (const unsigned char *)out;
                    size_t i;
                    for (i = 0; i < sizeof out; i++)
                        CHECK(b[i] == SENTINEL,
                              "reduce wrote the output of non-root %d", me);
                }
            }
            for (e = 0; e < NEL; e++)
                store(type, in, e, value(op, me, e));
            memset(out, SENTINEL, sizeof out);
            CHECK_RC(RCCE_allreduce((char *)in, (char *)out, NEL, type, op,
                                    RCCE_COMM_WORLD),
                     RCCE_SUCCESS);
            check_result(type, op, out, -1, "allreduce");
            {
                /* nothing past NEL elements was written */
                const unsigned char *b = (const unsigned char *)out;
                size_t i;
                for (i = NEL * type_size(type); i < sizeof out; i++)
                    CHECK(b[i] == SENTINEL, "allreduce wrote past %d elements",
                          NEL);
            }
        }
    }

    /* A reduction spanning two chunks. */
    {
        static double bin[BIGN], bout[BIGN];
        int i, root = np - 1;
        for (i = 0; i < BIGN; i++)
            bin[i] = (double)(me * BIGN + i);
        memset(bout, 0, sizeof bout);
        CHECK_RC(RCCE_reduce((char *)bin, (char *)bout, BIGN, RCCE_DOUBLE,
                             RCCE_SUM, root, RCCE_COMM_WORLD),
                 RCCE_SUCCESS);
        if (me == root)
            for (i = 0; i < BIGN; i++)
                CHECK(bout[i] == (double)BIGN * np * (np - 1) / 2 +
                                     (double)np * i,
                      "large reduce: element %d is %g", i, bout[i]);
        for (i = 0; i < BIGN; i++)
            bin[i] = (double)(me * BIGN + i);
        memset(bout, 0, sizeof bout);
        CHECK_RC(RCCE_allreduce((char *)bin, (char *)bout, BIGN, RCCE_DOUBLE,
                                RCCE_MAX, RCCE_COMM_WORLD),
                 RCCE_SUCCESS);
        for (i = 0; i < BIGN; i++)
            CHECK(bout[i] == (double)((np - 1) * BIGN + i),
                  "large allreduce: element %d is %g", i, bout[i]);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

int RCCE_APP(int argc, char **argv)
{
    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();

    test_barrier();
    test_bcast();
    test_reduce();

    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
