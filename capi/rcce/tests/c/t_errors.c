/*
 * t_errors: bad input returns RCCE's error codes, and the job stays usable.
 *
 * Every core makes the same bad calls; each must return its code at once
 * (without communicating).  Afterwards flags, put/get, messages and (in
 * the simplified interface) collectives still work.  The codes expected
 * for each case are listed in README.md.
 */
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_errors"
#include "test_check.h"

static int np;

static int color_all(int rank, void *aux)
{
    (void)rank;
    (void)aux;
    return 0;
}

int RCCE_APP(int argc, char **argv)
{
    static unsigned char priv[2 * RCCE_BUFF_SIZE_MAX], priv2[64];
    static unsigned char fake_line[RCCE_LINE_SIZE];
    t_vcharp mpb, mpb2, sh;
    RCCE_FLAG f, zero, forged, forged_sh;
    RCCE_FLAG_STATUS st;
    RCCE_COMM zc;
    int left, right, i, t, size, rank, len;
    char text[RCCE_MAX_ERROR_STRING];
#ifdef GORY
    t_vcharp combuf;
    RCCE_FLAG ready, sent, g;
#endif

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    left = (me + np - 1) % np;
    right = (me + 1) % np;

    mpb = RCCE_malloc(RCCE_LINE_SIZE);
    mpb2 = RCCE_malloc(RCCE_LINE_SIZE);
    sh = RCCE_shmalloc(256);
    CHECK(mpb && mpb2 && sh, "allocations failed");
    memset(priv, 3, sizeof priv);

    /* ---- put / get / put_char / get_char ---------------------------- */
    /* core ID out of range */
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, 32, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, 32, -1), RCCE_ERROR_ID);
    CHECK_RC(RCCE_get((t_vcharp)priv, mpb, 32, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_get((t_vcharp)priv, mpb, 32, -1), RCCE_ERROR_ID);
    CHECK_RC(RCCE_put_char(mpb, (t_vcharp)priv, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_get_char((t_vcharp)priv, mpb, -1), RCCE_ERROR_ID);
    /* NULL addresses */
    CHECK_RC(RCCE_put(NULL, (t_vcharp)priv, 32, me), RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_put(mpb, NULL, 32, me), RCCE_ERROR_SOURCE);
    CHECK_RC(RCCE_get(NULL, mpb, 32, me), RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_get((t_vcharp)priv, NULL, 32, me), RCCE_ERROR_SOURCE);
    /* the MPB side outside the MPB: private memory, shared DRAM */
    CHECK_RC(RCCE_put((t_vcharp)priv2, (t_vcharp)priv, 32, me),
             RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_get((t_vcharp)priv, (t_vcharp)priv2, 32, me),
             RCCE_ERROR_SOURCE);
    CHECK_RC(RCCE_put(sh, (t_vcharp)priv, 32, right), RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_get((t_vcharp)priv, sh, 32, left), RCCE_ERROR_SOURCE);
    CHECK_RC(RCCE_put_char((t_vcharp)priv2, (t_vcharp)priv, me),
             RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_get_char((t_vcharp)priv, (t_vcharp)priv2, me),
             RCCE_ERROR_SOURCE);
    /* a range that runs past the end of the MPB */
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, RCCE_BUFF_SIZE_MAX, right),
             RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_get((t_vcharp)priv, mpb, RCCE_BUFF_SIZE_MAX, left),
             RCCE_ERROR_SOURCE);
    /* misaligned MPB address */
    CHECK_RC(RCCE_put(mpb + 1, (t_vcharp)priv, 32, right),
             RCCE_ERROR_ALIGNMENT);
    CHECK_RC(RCCE_get((t_vcharp)priv, mpb + 8, 32, left),
             RCCE_ERROR_ALIGNMENT);
    /* lengths that are not multiples of a line */
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, 33, right),
             RCCE_ERROR_MESSAGE_LENGTH);
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, -32, right),
             RCCE_ERROR_MESSAGE_LENGTH);
    CHECK_RC(RCCE_get((t_vcharp)priv, mpb, 5, left),
             RCCE_ERROR_MESSAGE_LENGTH);
    /* byte copy onto itself */
    CHECK_RC(RCCE_put_char(mpb + 3, mpb + 3, me), RCCE_ERROR_DATA_OVERLAP);
    /* ... while byte copies need no alignment */
    CHECK_RC(RCCE_put_char(mpb2 + 3, (t_vcharp)priv, me), RCCE_SUCCESS);
    CHECK_RC(RCCE_get_char((t_vcharp)priv2, mpb2 + 3, me), RCCE_SUCCESS);
    CHECK(priv2[0] == 3, "get_char after put_char gave %u", priv2[0]);
    /* With debugging on, errors are still returned (and printed). */
    CHECK_RC(RCCE_debug_set(RCCE_DEBUG_ALL), RCCE_SUCCESS);
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, 32, np + 5), RCCE_ERROR_ID);
    CHECK_RC(RCCE_debug_unset(RCCE_DEBUG_ALL), RCCE_SUCCESS);

    /* ---- flags ------------------------------------------------------ */
    memset(&zero, 0, sizeof zero);
    CHECK_RC(RCCE_flag_write(&zero, RCCE_FLAG_SET, me),
             RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_flag_read(zero, &st, right), RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_wait_until(zero, RCCE_FLAG_SET),
             RCCE_ERROR_FLAG_NOT_ALLOCATED);
    forged.location = 0;
    forged.flag_addr = (t_vcharp)fake_line;
    forged.line_address = (t_vcharp)fake_line;
    CHECK_RC(RCCE_flag_write(&forged, RCCE_FLAG_SET, right),
             RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER);
    CHECK_RC(RCCE_flag_read(forged, &st, me),
             RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER);
    CHECK_RC(RCCE_wait_until(forged, RCCE_FLAG_SET),
             RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER);
    forged_sh.location = 0;
    forged_sh.flag_addr = sh;
    forged_sh.line_address = sh;
    CHECK_RC(RCCE_flag_write(&forged_sh, RCCE_FLAG_SET, me),
             RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER);
    CHECK_RC(RCCE_flag_read(forged_sh, &st, left),
             RCCE_ERROR_FLAG_NOT_IN_COMM_BUFFER);

    CHECK_RC(RCCE_flag_alloc(NULL), RCCE_ERROR_FLAG_UNDEFINED);
    CHECK_RC(RCCE_flag_alloc(&f), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_write(NULL, RCCE_FLAG_SET, me),
             RCCE_ERROR_FLAG_UNDEFINED);
    CHECK_RC(RCCE_flag_write(&f, 7, right), RCCE_ERROR_FLAG_STATUS_UNDEFINED);
    CHECK_RC(RCCE_flag_write(&f, -1, right), RCCE_ERROR_FLAG_STATUS_UNDEFINED);
    CHECK_RC(RCCE_wait_until(f, 2), RCCE_ERROR_FLAG_STATUS_UNDEFINED);
    CHECK_RC(RCCE_flag_read(f, NULL, me), RCCE_ERROR_VAL_UNDEFINED);
    CHECK_RC(RCCE_flag_write(&f, RCCE_FLAG_SET, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_flag_read(f, &st, -1), RCCE_ERROR_ID);
#ifdef GORY
    CHECK_RC(RCCE_flag_free(NULL), RCCE_ERROR_FLAG_UNDEFINED);
    CHECK_RC(RCCE_flag_free(&zero), RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_flag_alloc(&g), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_free(&g), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_write(&g, RCCE_FLAG_SET, me),
             RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_flag_read(g, &st, me), RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_wait_until(g, RCCE_FLAG_SET), RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_flag_free(&g), RCCE_ERROR_FLAG_NOT_ALLOCATED);
#endif
    /* f is untouched by the failed calls and works. */
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_write(&f, RCCE_FLAG_SET, right), RCCE_SUCCESS);
    CHECK_RC(RCCE_wait_until(f, RCCE_FLAG_SET), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_read(f, &st, me), RCCE_SUCCESS);
    CHECK(st == RCCE_FLAG_SET, "flag not set after the error calls");
    CHECK_RC(RCCE_flag_write(&f, RCCE_FLAG_UNSET, me), RCCE_SUCCESS);

    /* ---- communicators ---------------------------------------------- */
    memset(&zc, 0, sizeof zc);
    CHECK_RC(RCCE_comm_size(zc, &size), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_comm_rank(zc, &rank), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_comm_free(&zc), RCCE_ERROR_COMM_INITIALIZED);
    CHECK_RC(RCCE_comm_split(color_all, NULL, NULL), RCCE_ERROR_COMM_UNDEFINED);
    CHECK_RC(RCCE_barrier(NULL), RCCE_ERROR_COMM_UNDEFINED);

    /* ---- messages --------------------------------------------------- */
#ifdef GORY
    combuf = RCCE_malloc(64);
    CHECK(combuf != NULL, "RCCE_malloc(64) failed");
    CHECK_RC(RCCE_flag_alloc(&ready), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_alloc(&sent), RCCE_SUCCESS);
    CHECK_RC(RCCE_send((char *)priv, combuf, 64, &ready, &sent, 10, np),
             RCCE_ERROR_ID);
    CHECK_RC(RCCE_recv((char *)priv, combuf, 64, &ready, &sent, 10, -1),
             RCCE_ERROR_ID);
    CHECK_RC(RCCE_recv_test((char *)priv, combuf, 64, &ready, &sent, 10, np,
                            &t),
             RCCE_ERROR_ID);
    CHECK_RC(RCCE_send((char *)priv, (t_vcharp)priv2, 64, &ready, &sent, 10,
                       right),
             RCCE_ERROR_TARGET);
    CHECK_RC(RCCE_recv((char *)priv, (t_vcharp)priv2, 64, &ready, &sent, 10,
                       left),
             RCCE_ERROR_SOURCE);
    CHECK_RC(RCCE_send((char *)priv, combuf, 0, &ready, &sent, 10, right),
             RCCE_ERROR_MESSAGE_LENGTH);
    CHECK_RC(RCCE_recv((char *)priv, combuf, 33, &ready, &sent, 10, left),
             RCCE_ERROR_MESSAGE_LENGTH);
    CHECK_RC(RCCE_send((char *)priv, combuf, 64, &zero, &sent, 10, right),
             RCCE_ERROR_FLAG_NOT_ALLOCATED);
    CHECK_RC(RCCE_recv((char *)priv, combuf, 64, &ready, &zero, 10, left),
             RCCE_ERROR_FLAG_NOT_ALLOCATED);
#else
    CHECK_RC(RCCE_send((char *)priv, 10, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_send((char *)priv, 10, -1), RCCE_ERROR_ID);
    CHECK_RC(RCCE_recv((char *)priv, 10, np), RCCE_ERROR_ID);
    CHECK_RC(RCCE_recv_test((char *)priv, 10, -2, &t), RCCE_ERROR_ID);
    /* collectives: bad root, operator, type (everyone, no communication) */
    CHECK_RC(RCCE_bcast((char *)priv, 10, np, RCCE_COMM_WORLD), RCCE_ERROR_ID);
    CHECK_RC(RCCE_bcast((char *)priv, 10, -1, RCCE_COMM_WORLD), RCCE_ERROR_ID);
    CHECK_RC(RCCE_reduce((char *)priv, (char *)priv2, 1, RCCE_INT, RCCE_SUM,
                         np, RCCE_COMM_WORLD),
             RCCE_ERROR_ID);
    CHECK_RC(RCCE_reduce((char *)priv, (char *)priv2, 1, RCCE_INT, 999, 0,
                         RCCE_COMM_WORLD),
             RCCE_ERROR_ILLEGAL_OP);
    CHECK_RC(RCCE_reduce((char *)priv, (char *)priv2, 1, 999, RCCE_SUM, 0,
                         RCCE_COMM_WORLD),
             RCCE_ERROR_ILLEGAL_TYPE);
    CHECK_RC(RCCE_allreduce((char *)priv, (char *)priv2, 1, RCCE_DOUBLE,
                            RCCE_OP_BASE - 1, RCCE_COMM_WORLD),
             RCCE_ERROR_ILLEGAL_OP);
    CHECK_RC(RCCE_allreduce((char *)priv, (char *)priv2, 1, RCCE_TYPE_BASE + 4,
                            RCCE_MAX, RCCE_COMM_WORLD),
             RCCE_ERROR_ILLEGAL_TYPE);
#endif

    /* ---- error strings ---------------------------------------------- */
    CHECK_RC(RCCE_error_string(RCCE_ERROR_BASE + 28, text, &len),
             RCCE_ERROR_INVALID_ERROR_CODE);
    CHECK_RC(RCCE_error_string(42, text, &len), RCCE_ERROR_INVALID_ERROR_CODE);
    CHECK_RC(RCCE_error_string(RCCE_ERROR_ID, text, &len), RCCE_SUCCESS);

    /* ---- the job is still usable ------------------------------------ */
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < RCCE_LINE_SIZE; i++)
        priv[i] = (unsigned char)(me + i);
    CHECK_RC(RCCE_put(mpb, (t_vcharp)priv, RCCE_LINE_SIZE, right),
             RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_get((t_vcharp)priv2, mpb, RCCE_LINE_SIZE, me), RCCE_SUCCESS);
    for (i = 0; i < RCCE_LINE_SIZE; i++)
        CHECK(priv2[i] == (unsigned char)(left + i), "put after errors: byte %d",
              i);
    if (np > 1) {
        char out[100], in[100];
        for (i = 0; i < 100; i++)
            out[i] = (char)(me * 3 + i);
#ifdef GORY
#define SEND(b, n, d) RCCE_send((b), combuf, 64, &ready, &sent, (n), (d))
#define RECV(b, n, s) RCCE_recv((b), combuf, 64, &ready, &sent, (n), (s))
#else
#define SEND(b, n, d) RCCE_send((b), (n), (d))
#define RECV(b, n, s) RCCE_recv((b), (n), (s))
#endif
        if (me % 2 == 0) {
            CHECK_RC(SEND(out, 100, right), RCCE_SUCCESS);
            CHECK_RC(RECV(in, 100, left), RCCE_SUCCESS);
        } else {
            CHECK_RC(RECV(in, 100, left), RCCE_SUCCESS);
            CHECK_RC(SEND(out, 100, right), RCCE_SUCCESS);
        }
        for (i = 0; i < 100; i++)
            CHECK(in[i] == (char)(left * 3 + i), "message after errors: %d", i);
    }
#ifndef GORY
    {
        int v = me, sum = -1;
        CHECK_RC(RCCE_allreduce((char *)&v, (char *)&sum, 1, RCCE_INT,
                                RCCE_SUM, RCCE_COMM_WORLD),
                 RCCE_SUCCESS);
        CHECK(sum == np * (np - 1) / 2, "allreduce after errors gave %d", sum);
    }
#else
    CHECK_RC(RCCE_flag_free(&sent), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_free(&ready), RCCE_SUCCESS);
    RCCE_free(combuf);
    CHECK_RC(RCCE_flag_free(&f), RCCE_SUCCESS);
    RCCE_free(mpb2);
    RCCE_free(mpb);
#endif
    (void)t;

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree(sh);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
