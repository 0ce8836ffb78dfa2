/*
 * t_shm: off-chip shared DRAM and the test-and-set locks.
 *
 *  - RCCE_shmalloc(0) and RCCE_shmalloc(RCCE_SHM_SIZE_MAX + 1) give NULL.
 *  - Collective RCCE_shmalloc returns the same block on every core (same
 *    pointer differences; what one core writes and flushes with
 *    RCCE_shflush, every core reads), for sizes that are not multiples of
 *    the line size too.
 *  - A shared-DRAM reduction: every core stores a partial sum, everybody
 *    adds them up after a barrier and gets the closed form.
 *  - RCCE_acquire_lock / RCCE_release_lock guard read-modify-write updates
 *    of counters in shared DRAM, one counter per lock (locks of ranks
 *    0..min(np,4)-1, each taken by every core): exact totals, and no two
 *    cores inside the same lock at once.
 *  - Exhaustion and RCCE_shfree: 40 MiB fits once, not twice, and again
 *    after RCCE_shfree; its first and last bytes are shared.
 */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdarg.h>
#include <string.h>

#include "RCCE.h"

#define TEST_NAME "t_shm"
#include "test_check.h"

#define MIB (1024L * 1024L)
#define TERMS 1000000L

static int np;
static volatile long *table;

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

int RCCE_APP(int argc, char **argv)
{
    t_vcharp a, b, c, big, big2;
    volatile int *ints;
    volatile double *partial;
    volatile long *counter, *inside;
    int i, j, it, nlocks, iters;
    long lo, hi, k;
    double sum;

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();

    table = (volatile long *)RCCE_shmalloc((size_t)np * sizeof(long));
    CHECK(table != NULL, "RCCE_shmalloc of the table failed");
    CHECK(RCCE_shmalloc(0) == NULL, "RCCE_shmalloc(0) succeeded");
    CHECK(RCCE_shmalloc((size_t)RCCE_SHM_SIZE_MAX + 1) == NULL,
          "RCCE_shmalloc of more than RCCE_SHM_SIZE_MAX succeeded");

    /* Same blocks everywhere, any size. */
    a = RCCE_shmalloc(100);
    b = RCCE_shmalloc(4096 * sizeof(int));
    c = RCCE_shmalloc(3);
    CHECK(a && b && c, "RCCE_shmalloc(100 / 16384 / 3) failed");
    CHECK(a != b && b != c && a != c, "RCCE_shmalloc returned a block twice");
    all_equal((long)(b - a), "shmalloc offsets");
    all_equal((long)(c - a), "shmalloc offsets");
    ints = (volatile int *)b;
    ints[me] = me * me + 1;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < np; i++)
        CHECK(ints[i] == i * i + 1, "shared slot %d holds %d", i, ints[i]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    if (me == np - 1) {
        for (i = 0; i < 100; i++)
            a[i] = (unsigned char)(i + 1);
        c[0] = 7;
        c[2] = 9;
        RCCE_shflush();
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < 100; i++)
        CHECK(a[i] == (unsigned char)(i + 1), "shared byte %d is %u", i, a[i]);
    CHECK(c[0] == 7 && c[2] == 9, "3-byte block holds %u/%u", c[0], c[2]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Shared-DRAM reduction of 0 + 1 + ... + (TERMS-1). */
    partial = (volatile double *)RCCE_shmalloc((size_t)np * sizeof(double));
    CHECK(partial != NULL, "RCCE_shmalloc of the partial sums failed");
    lo = TERMS * me / np;
    hi = TERMS * (me + 1) / np;
    for (sum = 0.0, k = lo; k < hi; k++)
        sum += (double)k;
    partial[me] = sum;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (sum = 0.0, i = 0; i < np; i++)
        sum += partial[i];
    CHECK(sum == (double)TERMS * (TERMS - 1) / 2,
          "shared-DRAM reduction gave %.1f, expected %.1f", sum,
          (double)TERMS * (TERMS - 1) / 2);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Locks guarding counters. */
    nlocks = np < 4 ? np : 4;
    iters = np <= 8 ? 200 : 40;
    counter = (volatile long *)RCCE_shmalloc(8 * sizeof(long));
    inside = (volatile long *)RCCE_shmalloc(8 * sizeof(long));
    CHECK(counter && inside, "RCCE_shmalloc of the counters failed");
    if (me == 0) {
        for (j = 0; j < 8; j++)
            counter[j] = inside[j] = 0;
        RCCE_shflush();
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (it = 0; it < iters; it++) {
        for (j = 0; j < nlocks; j++) {
            int lock = (j + me) % nlocks;
            long v;
            CHECK_RC(RCCE_acquire_lock(lock), RCCE_SUCCESS);
            CHECK(inside[lock] == 0, "lock %d: another core is inside", lock);
            inside[lock] = me + 1;
            RCCE_shflush();
            v = counter[lock];
            if (it % 8 == 0)
                sched_yield(); /* widen the window for a broken lock */
            counter[lock] = v + 1;
            CHECK(inside[lock] == me + 1, "lock %d: core %ld got in", lock,
                  inside[lock] - 1);
            inside[lock] = 0;
            RCCE_shflush();
            CHECK_RC(RCCE_release_lock(lock), RCCE_SUCCESS);
        }
    }
    /* One's own lock, taken and given back twice. */
    for (i = 0; i < 2; i++) {
        CHECK_RC(RCCE_acquire_lock(me), RCCE_SUCCESS);
        CHECK_RC(RCCE_release_lock(me), RCCE_SUCCESS);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (j = 0; j < nlocks; j++)
        CHECK(counter[j] == (long)np * iters,
              "counter %d is %ld, expected %ld", j, counter[j],
              (long)np * iters);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    /* Exhaustion and RCCE_shfree. */
    big = RCCE_shmalloc((size_t)(40 * MIB));
    CHECK(big != NULL, "RCCE_shmalloc(40 MiB) failed");
    CHECK(RCCE_shmalloc((size_t)(40 * MIB)) == NULL,
          "a second RCCE_shmalloc(40 MiB) succeeded");
    RCCE_shfree(big);
    big2 = RCCE_shmalloc((size_t)(40 * MIB));
    CHECK(big2 != NULL, "RCCE_shmalloc(40 MiB) after RCCE_shfree failed");
    all_equal((long)(big2 - a), "shmalloc offset after shfree");
    if (me == 0) {
        big2[0] = 0x11;
        big2[40 * MIB - 1] = 0x22;
        RCCE_shflush();
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK(big2[0] == 0x11 && big2[40 * MIB - 1] == 0x22,
          "the ends of a 40 MiB block are not shared (%u, %u)", big2[0],
          big2[40 * MIB - 1]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    RCCE_shfree(big2);
    RCCE_shfree((t_vcharp)inside);
    RCCE_shfree((t_vcharp)counter);
    RCCE_shfree((t_vcharp)partial);
    RCCE_shfree(c);
    RCCE_shfree(b);
    RCCE_shfree(a);
    /* Everything was given back: 60 MiB fit again. */
    big = RCCE_shmalloc((size_t)(60 * MIB));
    CHECK(big != NULL, "RCCE_shmalloc(60 MiB) after freeing everything failed");
    RCCE_shfree(big);

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree((t_vcharp)table);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
