/*
 * t_misc: RCCE_error_string (every code, and unknown codes),
 * RCCE_debug_set / RCCE_debug_unset (every level, and an unknown one),
 * RCCE_fence and RCCE_qsort.
 */
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define TEST_NAME "t_misc"
#include "test_check.h"

#define NUM_CODES 27

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double key;
    char tag[12];
} record;

static int cmp_record(const void *a, const void *b)
{
    double x = ((const record *)a)->key, y = ((const record *)b)->key;
    return (x > y) - (x < y);
}

int RCCE_APP(int argc, char **argv)
{
    static char text[NUM_CODES + 1][RCCE_MAX_ERROR_STRING + 16];
    static const int levels[] = {RCCE_DEBUG_ALL, RCCE_DEBUG_SYNCH,
                                 RCCE_DEBUG_COMM, RCCE_DEBUG_RPC,
                                 RCCE_DEBUG_DEBUG};
    static const int unknown[] = {-1, 1, 12345, RCCE_ERROR_BASE,
                                  RCCE_ERROR_BASE + NUM_CODES + 1,
                                  RCCE_ERROR_BASE - 1, 2 * RCCE_ERROR_BASE};
    char buf[RCCE_MAX_ERROR_STRING + 16];
    int np, i, j, len, n;
    int values[257];
    record recs[40];

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();

    /* Error strings: RCCE_SUCCESS and every RCCE_ERROR_* code have a
       distinct, non-empty text that fits RCCE_MAX_ERROR_STRING. */
    for (i = 0; i <= NUM_CODES; i++) {
        int code = i == 0 ? RCCE_SUCCESS : RCCE_ERROR_BASE + i;
        memset(text[i], 'Z', sizeof text[i]);
        len = -1;
        CHECK_RC(RCCE_error_string(code, text[i], &len), RCCE_SUCCESS);
        CHECK(memchr(text[i], '\0', RCCE_MAX_ERROR_STRING) != NULL,
              "text of code %d is not terminated within %d bytes", code,
              RCCE_MAX_ERROR_STRING);
        CHECK(len == (int)strlen(text[i]), "code %d: length %d but text \"%s\"",
              code, len, text[i]);
        CHECK(len > 0, "code %d has an empty text", code);
        for (j = 0; j < i; j++)
            CHECK(strcmp(text[i], text[j]) != 0,
                  "codes %d and %d share the text \"%s\"", i, j, text[i]);
    }
    CHECK(RCCE_ERROR_CORE_NOT_IN_HOSTFILE == RCCE_ERROR_BASE + NUM_CODES,
          "the last error code is not RCCE_ERROR_BASE + %d", NUM_CODES);

    /* Unknown codes: RCCE_ERROR_INVALID_ERROR_CODE, empty text, length 0. */
    for (i = 0; i < (int)(sizeof unknown / sizeof unknown[0]); i++) {
        strcpy(buf, "untouched");
        len = -1;
        CHECK_RC(RCCE_error_string(unknown[i], buf, &len),
                 RCCE_ERROR_INVALID_ERROR_CODE);
        CHECK(buf[0] == '\0' && len == 0,
              "unknown code %d gave text \"%s\" length %d", unknown[i], buf,
              len);
    }

    /* Debug levels: every documented level can be set and unset, in any
       order; anything else is RCCE_ERROR_DEBUG_FLAG, and the job goes on. */
    for (i = 0; i < 5; i++) {
        CHECK_RC(RCCE_debug_set(levels[i]), RCCE_SUCCESS);
        CHECK_RC(RCCE_debug_unset(levels[i]), RCCE_SUCCESS);
    }
    for (i = 0; i < 5; i++)
        CHECK_RC(RCCE_debug_set(levels[i]), RCCE_SUCCESS);
    for (i = 4; i >= 0; i--)
        CHECK_RC(RCCE_debug_unset(levels[i]), RCCE_SUCCESS);
    CHECK_RC(RCCE_debug_set(0), RCCE_ERROR_DEBUG_FLAG);
    CHECK_RC(RCCE_debug_set(111222), RCCE_ERROR_DEBUG_FLAG);
    CHECK_RC(RCCE_debug_unset(-5), RCCE_ERROR_DEBUG_FLAG);
    CHECK_RC(RCCE_debug_unset(RCCE_DEBUG_ALL + 1), RCCE_ERROR_DEBUG_FLAG);
    /* With debugging on, an error is still returned (it is also printed). */
    CHECK_RC(RCCE_debug_set(RCCE_DEBUG_DEBUG), RCCE_SUCCESS);
    CHECK_RC(RCCE_error_string(7, buf, &len), RCCE_ERROR_INVALID_ERROR_CODE);
    CHECK_RC(RCCE_debug_set(12), RCCE_ERROR_DEBUG_FLAG);
    CHECK_RC(RCCE_debug_unset(RCCE_DEBUG_DEBUG), RCCE_SUCCESS);

    /* RCCE_fence: a plain call, then the job is still usable. */
    RCCE_fence();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_fence();

    /* RCCE_qsort: ints (with duplicates, rank-dependent) and records. */
    n = 257;
    for (i = 0; i < n; i++)
        values[i] = (int)((i * 7919u + (unsigned)me * 104729u) % 101u) - 50;
    CHECK_RC(RCCE_qsort((char *)values, (size_t)n, sizeof(int), cmp_int),
             RCCE_SUCCESS);
    for (i = 1; i < n; i++)
        CHECK(values[i - 1] <= values[i], "RCCE_qsort: ints out of order at %d",
              i);
    {
        long sum = 0;
        for (i = 0; i < n; i++)
            sum += values[i];
        long want = 0;
        for (i = 0; i < n; i++)
            want += (long)((i * 7919u + (unsigned)me * 104729u) % 101u) - 50;
        CHECK(sum == want, "RCCE_qsort changed the ints (sum %ld, want %ld)",
              sum, want);
    }
    for (i = 0; i < 40; i++) {
        recs[i].key = (double)((i * 17) % 40) / 4.0;
        sprintf(recs[i].tag, "r%d", (i * 17) % 40);
    }
    CHECK_RC(RCCE_qsort((char *)recs, 40, sizeof(record), cmp_record),
             RCCE_SUCCESS);
    for (i = 0; i < 40; i++) {
        sprintf(buf, "r%d", i);
        CHECK(recs[i].key == (double)i / 4.0 && strcmp(recs[i].tag, buf) == 0,
              "RCCE_qsort: record %d holds key %f tag %s", i, recs[i].key,
              recs[i].tag);
    }
    CHECK_RC(RCCE_qsort((char *)values, 0, sizeof(int), cmp_int),
             RCCE_SUCCESS);
    CHECK_RC(RCCE_qsort((char *)values, 1, sizeof(int), cmp_int),
             RCCE_SUCCESS);

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
