/*
 * test_check.h: how every C test of the RCCE interface fails.  A test defines
 * TEST_NAME, includes this header (after RCCE.h), sets `me` to its rank, and
 * checks with CHECK(cond, fmt, ...) and CHECK_RC(call, expected code).  A failed
 * check prints "rank R: FAIL <test> (line L): ..." and exits 1 (or aborts, with
 * -DSCCEMU_TEST_ABORT), which the launcher turns into a job abort.
 */
#ifndef SCCEMU_TEST_CHECK_H
#define SCCEMU_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *test_name = TEST_NAME;
static int me = -1;

#ifdef __GNUC__
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void fail_at(int line, const char *fmt, ...)
{
    va_list ap;
    printf("rank %d: FAIL %s (line %d): ", me, test_name, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
#ifdef SCCEMU_TEST_ABORT
    abort();
#else
    exit(1);
#endif
}

#define CHECK(cond, ...) \
    do { if (!(cond)) fail_at(__LINE__, __VA_ARGS__); } while (0)
#define CHECK_RC(call, want)                                                  \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != (want))                                                    \
            fail_at(__LINE__, "%s returned %d, expected %s (%d)", #call, rc_, \
                    #want, (int)(want));                                      \
    } while (0)

#endif /* SCCEMU_TEST_CHECK_H */
