/*
 * t_sendrecv: synchronous point-to-point messages, in the simplified
 * interface (default) or the gory one (-DGORY).
 *
 *  - Every ordered pair of cores exchanges messages of every size in a
 *    list that straddles the line size and both chunk sizes (8032 and
 *    8128 B); the receiver's buffer past the message is untouched (short
 *    messages are padded only inside the MPB).  The pairs are scheduled as
 *    a round robin, lower rank sending first.  The 100000 B size runs
 *    between all pairs up to 16 cores, and in the first 3 rounds above.
 *  - RCCE_send is synchronous: it does not return before the receiver has
 *    entered RCCE_recv (checked through shared DRAM, 1 B and 100000 B; when
 *    the job spans nodes, where RCCE_shmalloc must fail, through a line of
 *    rank 0's MPB that the receiver puts before it receives).
 *  - RCCE_recv_test returns at once with *test == 0 while nothing was sent
 *    (leaving the buffer alone), and completes the message once the sender
 *    has started.
 *  - GORY: the same with user buffers and flags: a 160 B chunk (5 lines)
 *    and a 4096 B chunk, each with its own ready/sent flags (a barrier
 *    separates the rounds, as one flag pair serves one sender at a time).
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_sendrecv"
#include "test_check.h"

#define BIG 100000
#define GUARD 64
#define GUARD_BYTE 0xA5

static int np;
static unsigned char sbuf[BIG], rbuf[BIG + GUARD];

/* ------------------------------------------------------------------ */
/* Transport: the same calls in both interfaces.                       */
/* ------------------------------------------------------------------ */
#ifdef GORY
typedef struct {
    t_vcharp combuf;
    size_t chunk;
    RCCE_FLAG ready, sent;
} channel;
static channel chan[2];
static channel *cur;

static void open_channel(channel *c, size_t chunk)
{
    c->chunk = chunk;
    c->combuf = RCCE_malloc(chunk);
    CHECK(c->combuf != NULL, "RCCE_malloc(%lu) for a channel failed",
          (unsigned long)chunk);
    CHECK_RC(RCCE_flag_alloc(&c->ready), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_alloc(&c->sent), RCCE_SUCCESS);
}

static void close_channel(channel *c)
{
    CHECK_RC(RCCE_flag_free(&c->sent), RCCE_SUCCESS);
    CHECK_RC(RCCE_flag_free(&c->ready), RCCE_SUCCESS);
    RCCE_free(c->combuf);
}

static int xsend(unsigned char *b, size_t n, int dest)
{
    return RCCE_send((char *)b, cur->combuf, cur->chunk, &cur->ready,
                     &cur->sent, n, dest);
}
static int xrecv(unsigned char *b, size_t n, int src)
{
    return RCCE_recv((char *)b, cur->combuf, cur->chunk, &cur->ready,
                     &cur->sent, n, src);
}
static int xrecv_test(unsigned char *b, size_t n, int src, int *t)
{
    return RCCE_recv_test((char *)b, cur->combuf, cur->chunk, &cur->ready,
                          &cur->sent, n, src, t);
}
#else
static int xsend(unsigned char *b, size_t n, int dest)
{
    return RCCE_send((char *)b, n, dest);
}
static int xrecv(unsigned char *b, size_t n, int src)
{
    return RCCE_recv((char *)b, n, src);
}
static int xrecv_test(unsigned char *b, size_t n, int src, int *t)
{
    return RCCE_recv_test((char *)b, n, src, t);
}
#endif

/* ------------------------------------------------------------------ */

static unsigned char pat(int src, int dst, size_t i, size_t size)
{
    return (unsigned char)(src * 131 + dst * 29 + i * 7 + size * 3 + (i >> 8));
}

static void fill(int dst, size_t size)
{
    size_t i;
    for (i = 0; i < size; i++)
        sbuf[i] = pat(me, dst, i, size);
    memset(rbuf, GUARD_BYTE, size + GUARD);
}

static void verify(int src, size_t size, const char *what)
{
    size_t i;
    for (i = 0; i < size; i++)
        CHECK(rbuf[i] == pat(src, me, i, size),
              "%s: %lu B from %d: byte %lu is %u, expected %u", what,
              (unsigned long)size, src, (unsigned long)i, rbuf[i],
              pat(src, me, i, size));
    for (i = size; i < size + GUARD; i++)
        CHECK(rbuf[i] == GUARD_BYTE,
              "%s: %lu B from %d: byte %lu past the end was overwritten",
              what, (unsigned long)size, src, (unsigned long)i);
}

/* Partner of rank r in round k of a round robin over np (odd np: -1 = bye) */
static int partner(int k, int r)
{
    int m = np + (np & 1), p;
    if (r == m - 1)
        p = k;
    else if (r == k)
        p = m - 1;
    else
        p = ((2 * k - r) % (m - 1) + (m - 1)) % (m - 1);
    return p < np ? p : -1;
}

static void exchange(int p, size_t size)
{
    fill(p, size);
    if (me < p) {
        CHECK_RC(xsend(sbuf, size, p), RCCE_SUCCESS);
        CHECK_RC(xrecv(rbuf, size, p), RCCE_SUCCESS);
    } else {
        CHECK_RC(xrecv(rbuf, size, p), RCCE_SUCCESS);
        CHECK_RC(xsend(sbuf, size, p), RCCE_SUCCESS);
    }
    verify(p, size, "exchange");
}

static void all_pairs(const size_t *sizes, int nsizes, size_t big)
{
    int m = np + (np & 1), k, s, p;
    for (k = 0; k < m - 1; k++) {
        p = partner(k, me);
        if (p >= 0) {
            for (s = 0; s < nsizes; s++)
                exchange(p, sizes[s]);
            if (big && (np <= 16 || k < 3))
                exchange(p, big);
        }
#ifdef GORY
        /* One "sent" flag per receiver cannot tell senders apart: a core
           may not start the next round while its new partner still
           expects a message from the old one. */
        CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
#endif
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

static void nap_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* The receiver's mark: in shared DRAM, or across nodes in rank 0's MPB. */
static volatile int *mark;
static t_vcharp mark_line;

static void mark_set(int tag)
{
    int line[RCCE_LINE_SIZE / sizeof(int)];
    if (mark_line == NULL) {
        *mark = tag;
        RCCE_shflush();
        return;
    }
    memset(line, 0, sizeof line);
    line[0] = tag;
    CHECK_RC(RCCE_put(mark_line, (t_vcharp)line, RCCE_LINE_SIZE, 0), RCCE_SUCCESS);
}

static int mark_get(void)
{
    int line[RCCE_LINE_SIZE / sizeof(int)];
    if (mark_line == NULL) {
        RCCE_shflush();
        return *mark;
    }
    CHECK_RC(RCCE_get((t_vcharp)line, mark_line, RCCE_LINE_SIZE, 0), RCCE_SUCCESS);
    return line[0];
}

/* RCCE_send(0 -> 1) cannot return before rank 1 has entered RCCE_recv. */
static void synchronous_send(size_t size, int tag)
{
    if (me == 1) {
        nap_ms(50);
        mark_set(tag);
        memset(rbuf, GUARD_BYTE, size + GUARD);
        CHECK_RC(xrecv(rbuf, size, 0), RCCE_SUCCESS);
        verify(0, size, "synchronous send");
    } else if (me == 0) {
        fill(1, size);
        CHECK_RC(xsend(sbuf, size, 1), RCCE_SUCCESS);
        CHECK(mark_get() == tag,
              "RCCE_send of %lu B returned before the receiver called "
              "RCCE_recv", (unsigned long)size);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

/* Ring with RCCE_recv_test polling. */
static void recv_test_ring(size_t size)
{
    int left = (me + np - 1) % np, right = (me + 1) % np, t = -7, polls = 0;
    double t0;

    /* Nothing has been sent: the test fails at once, buffer untouched. */
    memset(rbuf, GUARD_BYTE, size + GUARD);
    CHECK_RC(xrecv_test(rbuf, size, left, &t), RCCE_SUCCESS);
    CHECK(t == 0, "RCCE_recv_test reported a message nobody sent (%d)", t);
    for (size_t i = 0; i < size + GUARD; i++)
        CHECK(rbuf[i] == GUARD_BYTE, "failed RCCE_recv_test wrote byte %lu",
              (unsigned long)i);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    fill(right, size);
    if (me % 2 == 0)
        CHECK_RC(xsend(sbuf, size, right), RCCE_SUCCESS);
    t0 = RCCE_wtime();
    for (;;) {
        t = -7;
        CHECK_RC(xrecv_test(rbuf, size, left, &t), RCCE_SUCCESS);
        CHECK(t == 0 || t == 1, "RCCE_recv_test set *test to %d", t);
        if (t)
            break;
        polls++;
        CHECK(RCCE_wtime() - t0 < 60.0, "RCCE_recv_test never succeeded");
        sched_yield();
    }
    verify(left, size, "recv_test");
    if (me % 2 == 1)
        CHECK_RC(xsend(sbuf, size, right), RCCE_SUCCESS);
    (void)polls;
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
}

int RCCE_APP(int argc, char **argv)
{
    int id, spans = 0;
#ifdef GORY
    static const size_t small[] = {0, 1, 31, 32, 33, 159, 160, 161, 321, 5000};
    static const size_t large[] = {4095, 4096, 4097};
#else
    static const size_t sizes[] = {0,    1,    31,   32,   33,
                                   8032, 8033, 8128, 8129, 20000};
#endif

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();
    for (id = 0; id < np; id++)
        spans |= RCCE_comm_buffer[id] == NULL; /* a UE on another node */
    mark = (volatile int *)RCCE_shmalloc(sizeof(int));
    if (spans) {
        CHECK(mark == NULL, "RCCE_shmalloc gave memory across nodes");
        mark_line = RCCE_malloc(RCCE_LINE_SIZE);
        CHECK(mark_line != NULL, "RCCE_malloc of the mark failed");
        if (me == 0)
            mark_set(0);
    } else {
        CHECK(mark != NULL, "RCCE_shmalloc failed");
        if (me == 0)
            mark_set(0);
    }
#ifdef GORY
    open_channel(&chan[0], 5 * RCCE_LINE_SIZE);
    open_channel(&chan[1], 4096);
    cur = &chan[1];
#endif
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    if (np > 1) {
        synchronous_send(1, 1);
        synchronous_send(BIG, 2);
#ifdef GORY
        cur = &chan[0];
        all_pairs(small, (int)(sizeof small / sizeof small[0]), 0);
        recv_test_ring(1);
        recv_test_ring(100);
        recv_test_ring(1000);
        cur = &chan[1];
        all_pairs(large, (int)(sizeof large / sizeof large[0]), BIG);
        recv_test_ring(10000);
#else
        all_pairs(sizes, (int)(sizeof sizes / sizeof sizes[0]), BIG);
        recv_test_ring(1);
        recv_test_ring(100);
        recv_test_ring(20000);
#endif
    }

#ifdef GORY
    close_channel(&chan[1]);
    close_channel(&chan[0]);
#endif
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    if (mark != NULL)
        RCCE_shfree((t_vcharp)mark);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d, %s interface)\n", test_name, me, np,
#ifdef GORY
               "gory"
#else
               "simplified"
#endif
        );
    return 0;
}
