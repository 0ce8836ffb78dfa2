/*
 * t_comm: communicators.
 *
 *  - RCCE_comm_split with colour functions (rank % m using aux, low/high
 *    halves, everyone, everyone alone): size, my_rank and member[] as
 *    computed from the colour function; RCCE_comm_size / RCCE_comm_rank.
 *  - Inside each sub-communicator: RCCE_barrier, and (simplified
 *    interface) RCCE_bcast from and RCCE_reduce to every member (first,
 *    middle and last member above 8 members), and RCCE_allreduce; roots
 *    are ranks within the communicator.
 *  - Re-splitting an initialised communicator changes its membership.
 *  - RCCE_comm_free; afterwards comm_size/comm_rank/comm_free give
 *    RCCE_ERROR_COMM_INITIALIZED; a freed communicator can be split again.
 *  - GORY: ten split/free cycles leak no MPB line.
 * Also meant to be compiled with -DRCCE_MAXNP=64.
 */
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"

#define TEST_NAME "t_comm"
#include "test_check.h"

#define MPB_LINES ((RCCE_BUFF_SIZE_MAX - RCCE_LINE_SIZE) / RCCE_LINE_SIZE)

static int np;

static int color_mod(int rank, void *aux)
{
    return rank % *(const int *)aux;
}
static int color_half(int rank, void *aux)
{
    return rank < *(const int *)aux ? 10 : 20;
}
static int color_all(int rank, void *aux)
{
    (void)rank;
    (void)aux;
    return 7;
}
static int color_self(int rank, void *aux)
{
    (void)aux;
    return 1000 + rank;
}

typedef int (*color_fn)(int, void *);

static void check_comm(const RCCE_COMM *c, color_fn color, void *aux,
                       const char *what)
{
    int r, n = 0, mine = color(me, aux), size = -1, rank = -1;
    for (r = 0; r < np; r++) {
        if (color(r, aux) != mine)
            continue;
        CHECK(n < c->size && c->member[n] == r,
              "%s: member[%d] is %d, expected %d", what, n,
              n < c->size ? c->member[n] : -1, r);
        if (r == me)
            CHECK(c->my_rank == n, "%s: my_rank %d, expected %d", what,
                  c->my_rank, n);
        n++;
    }
    CHECK(c->size == n, "%s: size %d, expected %d", what, c->size, n);
    CHECK_RC(RCCE_comm_size(*c, &size), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_rank(*c, &rank), RCCE_SUCCESS);
    CHECK(size == c->size && rank == c->my_rank,
          "%s: comm_size %d / comm_rank %d disagree with the struct", what,
          size, rank);
}

static void exercise(RCCE_COMM *c, const char *what)
{
    int i;
    for (i = 0; i < 3; i++) {
        int rc = RCCE_barrier(c);
        CHECK(rc == RCCE_SUCCESS, "%s: RCCE_barrier returned %d", what, rc);
    }
#ifndef GORY
    {
        unsigned char buf[40];
        int root, j, in, out, sum;
        double din, dout[2];
        for (root = 0; root < c->size; root++) {
            int g = c->member[root];
            /* every member up to 8, else first, middle and last */
            if (c->size > 8 && root != 0 && root != c->size / 2 &&
                root != c->size - 1)
                continue;
            for (j = 0; j < 40; j++)
                buf[j] = (me == g) ? (unsigned char)(g * 3 + j) : 0;
            CHECK_RC(RCCE_bcast((char *)buf, sizeof buf, root, *c),
                     RCCE_SUCCESS);
            for (j = 0; j < 40; j++)
                CHECK(buf[j] == (unsigned char)(g * 3 + j),
                      "%s: bcast from member %d (rank %d): byte %d", what,
                      root, g, j);
            in = me + 1;
            out = -1;
            CHECK_RC(RCCE_reduce((char *)&in, (char *)&out, 1, RCCE_INT,
                                 RCCE_SUM, root, *c),
                     RCCE_SUCCESS);
            if (me == g) {
                for (sum = 0, j = 0; j < c->size; j++)
                    sum += c->member[j] + 1;
                CHECK(out == sum, "%s: reduce to member %d gave %d, not %d",
                      what, root, out, sum);
            } else {
                CHECK(out == -1, "%s: reduce wrote a non-root's output", what);
            }
        }
        din = (double)me;
        dout[0] = dout[1] = -1.0;
        CHECK_RC(RCCE_allreduce((char *)&din, (char *)dout, 1, RCCE_DOUBLE,
                                RCCE_MAX, *c),
                 RCCE_SUCCESS);
        CHECK(dout[0] == (double)c->member[c->size - 1] && dout[1] == -1.0,
              "%s: allreduce MAX gave %g", what, dout[0]);
        din = (double)me;
        CHECK_RC(RCCE_allreduce((char *)&din, (char *)dout, 1, RCCE_DOUBLE,
                                RCCE_MIN, *c),
                 RCCE_SUCCESS);
        CHECK(dout[0] == (double)c->member[0], "%s: allreduce MIN gave %g",
              what, dout[0]);
    }
#endif
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

#ifdef GORY
static int count_free_lines(void)
{
    t_vcharp got[MPB_LINES + 1];
    int n = 0, i;
    while (n <= MPB_LINES && (got[n] = RCCE_malloc(RCCE_LINE_SIZE)) != NULL)
        n++;
    CHECK(n <= MPB_LINES, "RCCE_malloc handed out more than %d lines",
          MPB_LINES);
    for (i = n - 1; i >= 0; i--)
        RCCE_free(got[i]);
    return n;
}
#endif

int RCCE_APP(int argc, char **argv)
{
    static RCCE_COMM sub_mod, sub_half, sub_all, sub_self;
    int mod, half, size, rank, cycle;

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    memset(&sub_mod, 0, sizeof sub_mod);
    memset(&sub_half, 0, sizeof sub_half);
    memset(&sub_all, 0, sizeof sub_all);
    memset(&sub_self, 0, sizeof sub_self);

    mod = 2;
    CHECK_RC(RCCE_comm_split(color_mod, &mod, &sub_mod), RCCE_SUCCESS);
    check_comm(&sub_mod, color_mod, &mod, "even/odd");
    exercise(&sub_mod, "even/odd");

    half = np / 2 > 0 ? np / 2 : 1;
    CHECK_RC(RCCE_comm_split(color_half, &half, &sub_half), RCCE_SUCCESS);
    check_comm(&sub_half, color_half, &half, "halves");
    exercise(&sub_half, "halves");

    CHECK_RC(RCCE_comm_split(color_all, NULL, &sub_all), RCCE_SUCCESS);
    check_comm(&sub_all, color_all, NULL, "everyone");
    exercise(&sub_all, "everyone");

    CHECK_RC(RCCE_comm_split(color_self, NULL, &sub_self), RCCE_SUCCESS);
    check_comm(&sub_self, color_self, NULL, "alone");
    exercise(&sub_self, "alone");

    /* The old communicators still work after new ones were made. */
    exercise(&sub_mod, "even/odd again");

    /* Re-split an initialised communicator: new membership. */
    mod = 3;
    CHECK_RC(RCCE_comm_split(color_mod, &mod, &sub_mod), RCCE_SUCCESS);
    check_comm(&sub_mod, color_mod, &mod, "mod 3");
    exercise(&sub_mod, "mod 3");

    /* Free, then the communicator is no longer usable as such. */
    CHECK_RC(RCCE_comm_free(&sub_self), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_free(&sub_all), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_free(&sub_half), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_free(&sub_mod), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_size(sub_mod, &size), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_comm_rank(sub_mod, &rank), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_comm_free(&sub_mod), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* ... and can be split again. */
    mod = 2;
    CHECK_RC(RCCE_comm_split(color_mod, &mod, &sub_mod), RCCE_SUCCESS);
    check_comm(&sub_mod, color_mod, &mod, "even/odd after free");
    exercise(&sub_mod, "even/odd after free");
    CHECK_RC(RCCE_comm_free(&sub_mod), RCCE_SUCCESS);

    /* Split/free cycles do not leak. */
    {
#ifdef GORY
        int f0 = count_free_lines();
#endif
        for (cycle = 0; cycle < 10; cycle++) {
            mod = 2 + cycle % 3;
            CHECK_RC(RCCE_comm_split(color_mod, &mod, &sub_mod), RCCE_SUCCESS);
            CHECK_RC(RCCE_barrier(&sub_mod), RCCE_SUCCESS);
            CHECK_RC(RCCE_comm_free(&sub_mod), RCCE_SUCCESS);
        }
#ifdef GORY
        CHECK(count_free_lines() == f0,
              "split/free cycles leaked %d MPB lines", f0 - count_free_lines());
#endif
    }

    /* RCCE_COMM_WORLD is untouched by all this. */
    CHECK_RC(RCCE_comm_size(RCCE_COMM_WORLD, &size), RCCE_SUCCESS);
    CHECK_RC(RCCE_comm_rank(RCCE_COMM_WORLD, &rank), RCCE_SUCCESS);
    CHECK(size == np && rank == me, "RCCE_COMM_WORLD changed: size %d rank %d",
          size, rank);
    exercise(&RCCE_COMM_WORLD, "world");

    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
