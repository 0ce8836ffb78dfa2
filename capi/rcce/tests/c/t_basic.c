/*
 * t_basic: RCCE_init / RCCE_finalize / RCCE_ue / RCCE_num_ues / RCCE_wtime,
 * consumption of the launcher's arguments, and RCCE_COMM_WORLD.
 *
 * Run with no user arguments, or with exactly the three user arguments
 *     alpha --beta=1 42
 * (RCCE_init must leave argv[0] followed by them, and argc reduced to 4).
 * Also meant to be compiled with -DRCCE_MAXNP=64 and -DRCCE_MAXNP=4096.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "RCCE.h"

#define TEST_NAME "t_basic"
#include "test_check.h"

static int all_digits(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int RCCE_APP(int argc, char **argv)
{
    int np, i, rc, size, rank;
    double t0, t1, t2;
    volatile int *seen;
    static const char *const expect[] = {"alpha", "--beta=1", "42"};

    rc = RCCE_init(&argc, &argv);
    me = RCCE_ue();
    CHECK(rc == RCCE_SUCCESS, "RCCE_init returned %d", rc);
    np = RCCE_num_ues();

    /* Ranks. */
    CHECK(np >= 1, "RCCE_num_ues() = %d", np);
    CHECK(np <= RCCE_MAXNP, "RCCE_num_ues() = %d > RCCE_MAXNP", np);
    CHECK(me >= 0 && me < np, "RCCE_ue() = %d with %d UEs", me, np);
    CHECK(RCCE_ue() == me && RCCE_num_ues() == np, "ue/num_ues not stable");

    /* Arguments: prog NP GHz ids... have been consumed. */
    CHECK(argv != NULL && argv[0] != NULL && argv[0][0] != '\0',
          "argv[0] missing after RCCE_init");
    CHECK(!all_digits(argv[0]), "argv[0] is \"%s\", a launcher argument",
          argv[0]);
    CHECK(argv[argc] == NULL, "argv[argc] (argc %d) is not NULL", argc);
    if (argc == 1) {
        /* no user arguments */
    } else {
        CHECK(argc == 4, "argc after RCCE_init is %d, expected 1 or 4", argc);
        for (i = 0; i < 3; i++)
            CHECK(strcmp(argv[i + 1], expect[i]) == 0,
                  "argv[%d] is \"%s\", expected \"%s\"", i + 1, argv[i + 1],
                  expect[i]);
    }

    /* RCCE_COMM_WORLD. */
    CHECK(RCCE_COMM_WORLD.size == np, "RCCE_COMM_WORLD.size %d",
          RCCE_COMM_WORLD.size);
    CHECK(RCCE_COMM_WORLD.my_rank == me, "RCCE_COMM_WORLD.my_rank %d",
          RCCE_COMM_WORLD.my_rank);
    for (i = 0; i < np; i++)
        CHECK(RCCE_COMM_WORLD.member[i] == i,
              "RCCE_COMM_WORLD.member[%d] = %d", i,
              RCCE_COMM_WORLD.member[i]);
    CHECK_RC(RCCE_comm_size(RCCE_COMM_WORLD, &size), RCCE_SUCCESS);
    CHECK(size == np, "RCCE_comm_size(WORLD) = %d", size);
    CHECK_RC(RCCE_comm_rank(RCCE_COMM_WORLD, &rank), RCCE_SUCCESS);
    CHECK(rank == me, "RCCE_comm_rank(WORLD) = %d", rank);

    /* Ranks form a permutation of 0..np-1 (seen through shared DRAM). */
    seen = (volatile int *)RCCE_shmalloc((size_t)np * sizeof(int));
    CHECK(seen != NULL, "RCCE_shmalloc(%d ints) failed", np);
    seen[me] = me + 1000;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    for (i = 0; i < np; i++)
        CHECK(seen[i] == i + 1000, "slot %d of the rank table holds %d", i,
              seen[i]);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree((t_vcharp)seen);

    /* RCCE_wtime: finite, non-decreasing, and advances across a sleep. */
    t0 = RCCE_wtime();
    t1 = RCCE_wtime();
    CHECK(t0 == t0 && t1 >= t0, "RCCE_wtime went from %f to %f", t0, t1);
    {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    t2 = RCCE_wtime();
    CHECK(t2 - t1 >= 0.015 && t2 - t1 < 10.0,
          "RCCE_wtime advanced %f s across a 20 ms sleep", t2 - t1);

    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d, RCCE_MAXNP %d, argc %d)\n", test_name,
               me, np, RCCE_MAXNP, argc);
    return 0;
}
