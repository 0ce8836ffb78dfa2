/*
 * t_power: the power-management interface (build with -DRC_POWER_MANAGEMENT).
 *
 *  - RCCE_power_domain (0..5), RCCE_power_domain_master (the lowest rank
 *    in the caller's domain) and RCCE_power_domain_size (cores of the job
 *    in that domain, 1..8) agree across all cores.
 *  - Only a domain master changes anything; other cores' calls return
 *    RCCE_SUCCESS.  On a master:
 *    RCCE_set_frequency_divider clamps into 2..16: 1 -> 2, 17 -> 16,
 *    8 -> 8, RCCE_POWER_DEFAULT -> 3 (at the default voltage level);
 *    RCCE_iset_power(16) picks voltage level 0; a second request in flight
 *    and a divider change in flight give RCCE_ERROR_MULTIPLE_RPC_REQUESTS;
 *    RCCE_wait_power completes it, a second wait gives
 *    RCCE_ERROR_NO_ACTIVE_RPC_REQUEST; at level 0, divider 2 (800 MHz) is
 *    beyond the voltage's cap: RCCE_ERROR_FDIVIDER; RCCE_iset_power(1)
 *    clamps to 2 and picks level 4 (1.1 V); RCCE_iset_power of
 *    RCCE_POWER_DEFAULT gives divider 3 at a level whose cap allows 533 MHz.
 *  - print_dividers (rank 0).
 */
#ifndef RC_POWER_MANAGEMENT
#error "t_power needs -DRC_POWER_MANAGEMENT"
#endif

#include <stdarg.h>
#include <string.h>

#include "RCCE.h"

#define TEST_NAME "t_power"
#include "test_check.h"

/* MHz cap of each voltage level 0..6 (0.7 V .. 1.3 V). */
static const int mhz_cap[7] = {460, 598, 644, 748, 875, 1024, 1198};

/* Lowest voltage level whose cap allows 1600/fdiv MHz. */
static int min_level(int fdiv)
{
    int l;
    for (l = 0; l < 7; l++)
        if (mhz_cap[l] >= 1600 / fdiv)
            return l;
    return -1;
}

static void set_div(int request, int want)
{
    int got = -1;
    CHECK_RC(RCCE_set_frequency_divider(request, &got), RCCE_SUCCESS);
    CHECK(got == want, "RCCE_set_frequency_divider(%d) set %d, expected %d",
          request, got, want);
}

static void iset(RCCE_REQUEST *req, int request, int want_div)
{
    int div = -1, level = -1;
    CHECK_RC(RCCE_iset_power(request, req, &div, &level), RCCE_SUCCESS);
    CHECK(div == want_div, "RCCE_iset_power(%d) chose divider %d, expected %d",
          request, div, want_div);
    CHECK(level >= 0 && level < 7 && mhz_cap[level] >= 1600 / div,
          "RCCE_iset_power(%d) chose voltage level %d for %d MHz", request,
          level, 1600 / div);
    if (request != RCCE_POWER_DEFAULT)
        CHECK(level == min_level(div),
              "RCCE_iset_power(%d) chose level %d, the lowest fit is %d",
              request, level, min_level(div));
}

int RCCE_APP(int argc, char **argv)
{
    int np, i, dom, master, size, want_size, want_master, div, level;
    volatile int *doms;
    RCCE_REQUEST req, req2;

    CHECK_RC(RCCE_init(&argc, &argv), RCCE_SUCCESS);
    me = RCCE_ue();
    np = RCCE_num_ues();

    /* Domains agree across cores. */
    dom = RCCE_power_domain();
    master = RCCE_power_domain_master();
    size = RCCE_power_domain_size();
    CHECK(dom >= 0 && dom < 6, "RCCE_power_domain() = %d", dom);
    doms = (volatile int *)RCCE_shmalloc((size_t)np * sizeof(int));
    CHECK(doms != NULL, "RCCE_shmalloc failed");
    doms[me] = dom;
    RCCE_shflush();
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    want_master = -1;
    want_size = 0;
    for (i = 0; i < np; i++) {
        if (doms[i] != dom)
            continue;
        if (want_master < 0)
            want_master = i;
        want_size++;
    }
    CHECK(master == want_master, "power domain %d: master %d, expected %d",
          dom, master, want_master);
    CHECK(size == want_size && size >= 1 && size <= 8,
          "power domain %d: size %d, expected %d", dom, size, want_size);
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    if (me != master) {
        /* Non-masters: accepted and ignored. */
        div = -1;
        CHECK_RC(RCCE_set_frequency_divider(8, &div), RCCE_SUCCESS);
        CHECK(div == -1 || div == 8, "non-master got divider %d", div);
        CHECK_RC(RCCE_iset_power(5, &req, &div, &level), RCCE_SUCCESS);
        CHECK_RC(RCCE_wait_power(&req), RCCE_SUCCESS);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    if (me == master) {
        /* Clamping, at the default voltage level (1.1 V, up to 875 MHz). */
        set_div(1, 2);
        set_div(17, 16);
        set_div(8, 8);
        set_div(RCCE_POWER_DEFAULT, 3);
        set_div(-4, 2);
        set_div(1000, 16);
        set_div(3, 3);

        /* Down to 100 MHz at the lowest voltage. */
        iset(&req, 16, 16);
        CHECK_RC(RCCE_iset_power(4, &req2, &div, &level),
                 RCCE_ERROR_MULTIPLE_RPC_REQUESTS);
        CHECK_RC(RCCE_set_frequency_divider(4, &div),
                 RCCE_ERROR_MULTIPLE_RPC_REQUESTS);
        CHECK_RC(RCCE_wait_power(&req), RCCE_SUCCESS);
        CHECK(req.new_frequency_divider == 16 && req.new_voltage_level == 0,
              "request finished at divider %d level %d",
              req.new_frequency_divider, req.new_voltage_level);
        CHECK_RC(RCCE_wait_power(&req), RCCE_ERROR_NO_ACTIVE_RPC_REQUEST);
        /* 800 MHz does not run at 0.7 V; 200 MHz does. */
        div = -1;
        CHECK_RC(RCCE_set_frequency_divider(2, &div), RCCE_ERROR_FDIVIDER);
        set_div(8, 8);

        /* Back up: 1 clamps to 2, which needs level 4. */
        iset(&req, 1, 2);
        CHECK_RC(RCCE_wait_power(&req), RCCE_SUCCESS);
        set_div(2, 2);
        set_div(17, 16);

        /* The default: divider 3. */
        iset(&req, RCCE_POWER_DEFAULT, 3);
        CHECK_RC(RCCE_wait_power(&req), RCCE_SUCCESS);
        set_div(RCCE_POWER_DEFAULT, 3);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);

    if (me == 0) {
        print_dividers();
        fflush(stdout);
    }
    CHECK_RC(RCCE_barrier(&RCCE_COMM_WORLD), RCCE_SUCCESS);
    RCCE_shfree((t_vcharp)doms);
    CHECK_RC(RCCE_finalize(), RCCE_SUCCESS);
    if (me == 0)
        printf("ok %s rank %d (np %d)\n", test_name, me, np);
    return 0;
}
