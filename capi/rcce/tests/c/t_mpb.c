/*
 * t_mpb: MPB allocation and one-sided access.
 *
 *  - RCCE_malloc returns the same offset on every core (pointer differences
 *    agree across cores, and puts land where the owner reads them), aligned
 *    to RCCE_LINE_SIZE.
 *  - GORY: the MPB holds 255 allocatable lines minus the library's flag
 *    lines; RCCE_malloc returns NULL once it is exhausted, for size 0 and
 *    for sizes that are not multiples of 32; RCCE_malloc_request halves the
 *    request until it fits; RCCE_free returns every line.
 *  - Simplified interface (via RCCE_lib.h): RCCE_malloc of single lines,
 *    after which RCCE_send/RCCE_recv still work with the shrunk chunk.
 *  - RCCE_put / RCCE_get between every pair of cores (own MPB, remote MPB,
 *    MPB-to-MPB), plain loads from the local MPB, and RCCE_put_char /
 *    RCCE_get_char at unaligned addresses.
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_mpb"
#include "test_check.h"

#ifdef SINGLEBITFLAGS
#define FLAGS_PER_LINE 256
#else
#define FLAGS_PER_LINE 32
#endif
#define MPB_LINES ((RCCE_BUFF_SIZE_MAX - RCCE_LINE_SIZE) / RCCE_LINE_SIZE)

static int np;
static volatile long *table; /* np longs in shared DRAM */

/* Every core passes its value; all must be equal. */
static void all_equal(long v, const char *what)
{
    int i;
    table[me] = v;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < np; i++)
        CHECK(table[i] == table[0], "%s: rank %d has %ld, rank 0 has %ld", what,
              i, table[i], table[0]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

static unsigned char pat(int a, int b, int i)
{
    return (unsigned char)(a * 37 + b * 11 + i * 3 + 1);
}

static int aligned(t_vcharp p)
{
    return ((uintptr_t)p % RCCE_LINE_SIZE) == 0;
}

#ifdef GORY
/* Free MPB lines, counted by taking them one at a time (collective). */
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

/* What RCCE_malloc_request grants from avail contiguous bytes. */
static size_t request_grant(size_t size, size_t avail)
{
    size_t c = (size + RCCE_LINE_SIZE - 1) / RCCE_LINE_SIZE * RCCE_LINE_SIZE;
    for (;;) {
        if (c == 0)
            return 0;
        if (c <= avail)
            return c;
        if (c <= RCCE_LINE_SIZE)
            return 0;
        c = (c / 2 + RCCE_LINE_SIZE - 1) / RCCE_LINE_SIZE * RCCE_LINE_SIZE;
    }
}
#endif

int RCCE_APP(int argc, char **argv)
{
    static unsigned char priv[1024], got[1024];
    t_vcharp buf, buf2, buf3, buf4;
    int n, i, j, k, left, right, left2;
    unsigned char c;
#ifdef GORY
    int f0;
#endif

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    left = (me + np - 1) % np;
    right = (me + 1) % np;
    left2 = (left + np - 1) % np;
    table = (volatile long *)RCCE_shmalloc((size_t)np * sizeof(long));
    CHECK(table != NULL, "RCCE_shmalloc of the table failed");

#ifdef GORY
    {
        int lo, flags, extra;
        t_vcharp big, p[6], q;
        size_t c1, c2, c3, c4, avail;

        /* The whole MPB less the library's flag lines is free. */
        f0 = count_free_lines();
        all_equal(f0, "free MPB lines");
        flags = 2 + 2 * np + 4;  /* world barrier, send/recv, power comms */
        extra = 2;
#ifdef RC_POWER_MANAGEMENT
        extra += 2;
#endif
        lo = MPB_LINES - (flags + FLAGS_PER_LINE - 1) / FLAGS_PER_LINE - extra;
        CHECK(f0 >= lo && f0 <= MPB_LINES - 1,
              "%d free MPB lines after RCCE_init, expected %d..%d", f0, lo,
              MPB_LINES - 1);

        /* Exhaustion: the free space is one block; then nothing is left. */
        big = RCCE_malloc((size_t)f0 * RCCE_LINE_SIZE);
        CHECK(big != NULL, "RCCE_malloc(%d) of all free lines failed",
              f0 * RCCE_LINE_SIZE);
        CHECK(aligned(big), "RCCE_malloc returned an unaligned address");
        CHECK(RCCE_malloc(RCCE_LINE_SIZE) == NULL,
              "RCCE_malloc succeeded on an exhausted MPB");
        CHECK(RCCE_malloc_request(RCCE_LINE_SIZE, &c1) == NULL && c1 == 0,
              "RCCE_malloc_request succeeded on an exhausted MPB (chunk %lu)",
              (unsigned long)c1);
        RCCE_free(big);
        CHECK(RCCE_malloc((size_t)(f0 + 1) * RCCE_LINE_SIZE) == NULL,
              "RCCE_malloc of more than the free lines succeeded");

        /* Sizes that are not positive multiples of a line. */
        CHECK(RCCE_malloc(0) == NULL, "RCCE_malloc(0) succeeded");
        CHECK(RCCE_malloc(16) == NULL, "RCCE_malloc(16) succeeded");
        CHECK(RCCE_malloc(33) == NULL, "RCCE_malloc(33) succeeded");
        CHECK(count_free_lines() == f0, "failed RCCE_malloc calls took lines");

        /* RCCE_malloc_request halves the request until it fits. */
        avail = (size_t)f0 * RCCE_LINE_SIZE;
        p[0] = RCCE_malloc_request(RCCE_BUFF_SIZE_MAX, &c1);
        CHECK(p[0] != NULL && c1 == request_grant(RCCE_BUFF_SIZE_MAX, avail),
              "RCCE_malloc_request(8192) gave %p, chunk %lu (expected %lu)",
              (void *)p[0], (unsigned long)c1,
              (unsigned long)request_grant(RCCE_BUFF_SIZE_MAX, avail));
        avail -= c1;
        p[1] = RCCE_malloc_request(RCCE_BUFF_SIZE_MAX, &c2);
        CHECK(p[1] != NULL && c2 == request_grant(RCCE_BUFF_SIZE_MAX, avail),
              "second RCCE_malloc_request(8192) gave chunk %lu (expected %lu)",
              (unsigned long)c2,
              (unsigned long)request_grant(RCCE_BUFF_SIZE_MAX, avail));
        avail -= c2;
        p[2] = RCCE_malloc_request(33, &c3);
        CHECK(p[2] != NULL && c3 == 64,
              "RCCE_malloc_request(33) gave chunk %lu", (unsigned long)c3);
        c4 = 99;
        CHECK(RCCE_malloc_request(0, &c4) == NULL && c4 == 0,
              "RCCE_malloc_request(0) gave chunk %lu", (unsigned long)c4);
        all_equal((long)(p[1] - p[0]), "malloc_request offsets");
        all_equal((long)(p[2] - p[0]), "malloc_request offsets");
        for (i = 0; i < 3; i++)
            CHECK(aligned(p[i]), "RCCE_malloc_request: unaligned block %d", i);
        RCCE_free(p[1]);
        RCCE_free(p[0]);
        RCCE_free(p[2]);
        CHECK(count_free_lines() == f0, "RCCE_free did not return all lines");

        /* Same offsets on every core, for a mixed sequence with a hole. */
        p[0] = RCCE_malloc(32);
        p[1] = RCCE_malloc(96);
        p[2] = RCCE_malloc(64);
        p[3] = RCCE_malloc(1024);
        p[4] = RCCE_malloc(32);
        for (i = 0; i < 5; i++)
            CHECK(p[i] != NULL && aligned(p[i]), "RCCE_malloc #%d: %p", i,
                  (void *)p[i]);
        for (i = 1; i < 5; i++) {
            all_equal((long)(p[i] - p[0]), "RCCE_malloc offsets");
            for (j = 0; j < i; j++)
                CHECK(p[i] != p[j], "RCCE_malloc returned %p twice",
                      (void *)p[i]);
        }
        RCCE_free(p[1]);
        RCCE_free(p[3]);
        q = RCCE_malloc(64);
        CHECK(q != NULL, "RCCE_malloc(64) after frees failed");
        all_equal((long)(q - p[0]), "RCCE_malloc offset after RCCE_free");
        RCCE_free(q);
        RCCE_free(p[0]);
        RCCE_free(p[2]);
        RCCE_free(p[4]);
        CHECK(count_free_lines() == f0, "lines leaked in the mixed sequence");

        n = 1024;
        buf = RCCE_malloc((size_t)n);
        buf2 = RCCE_malloc(RCCE_LINE_SIZE);
        buf3 = RCCE_malloc((size_t)n);
        buf4 = RCCE_malloc((size_t)n);
    }
#else
    /* Simplified interface: single lines. */
    n = RCCE_LINE_SIZE;
    buf = RCCE_malloc(RCCE_LINE_SIZE);
    buf2 = RCCE_malloc(RCCE_LINE_SIZE);
    buf3 = RCCE_malloc(RCCE_LINE_SIZE);
    buf4 = RCCE_malloc(RCCE_LINE_SIZE);
#endif
    CHECK(buf && buf2 && buf3 && buf4, "RCCE_malloc of the test buffers failed");
    CHECK(aligned(buf) && aligned(buf2) && aligned(buf3) && aligned(buf4),
          "RCCE_malloc returned unaligned test buffers");
    all_equal((long)(buf2 - buf), "buffer offsets");
    all_equal((long)(buf3 - buf), "buffer offsets");
    all_equal((long)(buf4 - buf), "buffer offsets");

    /* A: each core fills its own MPB; every core reads every MPB. */
    for (i = 0; i < n; i++)
        priv[i] = pat(me, 0, i);
    CHECK_RC(RCCE_put(buf, (t_vcharp)priv, n, me), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (j = 0; j < np; j++) {
        memset(got, 0, sizeof got);
        CHECK_RC(RCCE_get((t_vcharp)got, buf, n, j), RCCE_SUCCESS);
        for (i = 0; i < n; i++)
            CHECK(got[i] == pat(j, 0, i),
                  "get from core %d: byte %d is %u, expected %u", j, i, got[i],
                  pat(j, 0, i));
        if (n >= 4 * RCCE_LINE_SIZE) {
            /* An interior window: the offset is kept. */
            memset(got, 0, sizeof got);
            CHECK_RC(RCCE_get((t_vcharp)got, buf + 64, 64, j), RCCE_SUCCESS);
            for (i = 0; i < 64; i++)
                CHECK(got[i] == pat(j, 0, 64 + i),
                      "windowed get from core %d: byte %d", j, i);
        }
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* B: each core writes its right neighbour's MPB. */
    for (i = 0; i < n; i++)
        priv[i] = pat(me, 1, i);
    CHECK_RC(RCCE_put(buf, (t_vcharp)priv, n, right), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    memset(got, 0, sizeof got);
    CHECK_RC(RCCE_get((t_vcharp)got, buf, n, me), RCCE_SUCCESS);
    for (i = 0; i < n; i++) {
        CHECK(got[i] == pat(left, 1, i), "put from core %d: byte %d is %u",
              left, i, got[i]);
        CHECK(buf[i] == pat(left, 1, i),
              "plain load from the local MPB: byte %d is %u", i, buf[i]);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* C: single bytes at every offset of a line, remote and local. */
    for (k = 0; k < RCCE_LINE_SIZE; k++) {
        c = pat(me, 2, k);
        CHECK_RC(RCCE_put_char(buf2 + k, (t_vcharp)&c, right), RCCE_SUCCESS);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (k = 0; k < RCCE_LINE_SIZE; k++) {
        c = 0;
        CHECK_RC(RCCE_get_char((t_vcharp)&c, buf2 + k, me), RCCE_SUCCESS);
        CHECK(c == pat(left, 2, k), "get_char own byte %d is %u", k, c);
        c = 0;
        CHECK_RC(RCCE_get_char((t_vcharp)&c, buf2 + k, left), RCCE_SUCCESS);
        CHECK(c == pat(left2, 2, k), "get_char from core %d byte %d is %u",
              left, k, c);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* D: MPB-to-MPB: put from the local MPB to the right, get from the
       left into the local MPB.  buf holds pat(left, 1, .) everywhere. */
    CHECK_RC(RCCE_put(buf3, buf, n, right), RCCE_SUCCESS);
    CHECK_RC(RCCE_get(buf4, buf, n, left), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < n; i++) {
        CHECK(buf3[i] == pat(left2, 1, i), "MPB-to-MPB put: byte %d is %u", i,
              buf3[i]);
        CHECK(buf4[i] == pat(left2, 1, i), "get into the MPB: byte %d is %u",
              i, buf4[i]);
    }
    /* put_char from the local MPB. */
    CHECK_RC(RCCE_put_char(buf2 + 5, buf + 7, right), RCCE_SUCCESS);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK(buf2[5] == pat(left2, 1, 7), "put_char from the MPB: got %u",
          buf2[5]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

#ifdef GORY
    RCCE_free(buf4);
    RCCE_free(buf3);
    RCCE_free(buf2);
    RCCE_free(buf);
    CHECK(count_free_lines() == f0, "MPB lines leaked by the test buffers");
#else
    /* Messages still flow with four fewer payload lines. */
    {
        static char out[20000], in[20000];
        int sz = (int)sizeof out;
        for (i = 0; i < sz; i++)
            out[i] = (char)pat(me, 3, i);
        memset(in, 0, sizeof in);
        if (np > 1) {
            if (me % 2 == 0) {
                CHECK_RC(RCCE_send(out, sizeof out, right), RCCE_SUCCESS);
                CHECK_RC(RCCE_recv(in, sizeof in, left), RCCE_SUCCESS);
            } else {
                CHECK_RC(RCCE_recv(in, sizeof in, left), RCCE_SUCCESS);
                CHECK_RC(RCCE_send(out, sizeof out, right), RCCE_SUCCESS);
            }
            for (i = 0; i < sz; i++)
                CHECK(in[i] == (char)pat(left, 3, i),
                      "message after RCCE_malloc: byte %d", i);
        }
    }
#endif

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree((t_vcharp)table);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
