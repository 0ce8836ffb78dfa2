/*
 * shm_reduce: a reduction through shared off-chip DRAM.  Every UE sums its
 * share of 1..N into a slot of an RCCE_shmalloc'd array, then adds its total
 * into a shared accumulator under UE 0's test-and-set lock.  After a barrier
 * every UE reads both results and checks them against N(N+1)/2.
 *
 *     rccerun -nue 8 ./shm_reduce [N]
 */
#include <stdio.h>
#include <stdlib.h>

#include "RCCE.h"

int RCCE_APP(int argc, char **argv)
{
    volatile long long *partial, *total;
    long long n, lo, hi, k, mine = 0, sum = 0;
    int me, np, r, ok;

    RCCE_init(&argc, &argv);
    n = argc > 1 ? atoll(argv[1]) : 1000000;
    me = RCCE_ue();
    np = RCCE_num_ues();
    partial = (volatile long long *)RCCE_shmalloc((size_t)np * sizeof(long long));
    total = (volatile long long *)RCCE_shmalloc(sizeof(long long));
    if (me == 0)
        *total = 0;
    RCCE_shflush();
    RCCE_barrier(&RCCE_COMM_WORLD);

    lo = 1 + n * me / np;
    hi = n * (me + 1) / np;
    for (k = lo; k <= hi; k++)
        mine += k;
    partial[me] = mine;
    RCCE_acquire_lock(0);
    *total += mine;
    RCCE_shflush();
    RCCE_release_lock(0);
    RCCE_barrier(&RCCE_COMM_WORLD);

    for (r = 0; r < np; r++)
        sum += partial[r];
    ok = sum == n * (n + 1) / 2 && *total == sum;
    if (me == 0 || !ok)
        printf("UE %d: sum of 1..%lld = %lld by slots, %lld by lock: %s\n", me, n, sum, *total,
               ok ? "ok" : "WRONG");
    RCCE_finalize();
    return ok ? 0 : 1;
}
