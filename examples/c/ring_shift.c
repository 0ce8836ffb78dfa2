/*
 * ring_shift: every UE passes a block of integers to its right neighbour,
 * NP times, so that each block goes round the whole ring.  After the last
 * shift every UE checks the closed forms: the block it holds is its own
 * again, and the running sums it added up along the way are the sum of all
 * blocks.  Written for both interfaces: the simplified one (default) and,
 * with -DGORY, RCCE_put/RCCE_get through the MPB with flags.
 *
 *     rccerun -nue 8 ./ring_shift
 */
#include <stdio.h>
#include <string.h>

#include "RCCE.h"
#include "RCCE_lib.h"

#define N 1024 /* integers per block */

static int me, np;

#ifdef GORY
static t_vcharp slot;      /* one block in every UE's MPB */
static RCCE_FLAG full;     /* set in the receiver's MPB: its slot holds a block */
static RCCE_FLAG empty;    /* set in the sender's MPB: the receiver's slot is free */

static void shift(int *out, int *in)
{
    int right = (me + 1) % np;
    /* Wait until the right neighbour has taken the previous block. */
    RCCE_wait_until(empty, RCCE_FLAG_SET);
    RCCE_flag_write(&empty, RCCE_FLAG_UNSET, me);
    RCCE_put(slot, (t_vcharp)out, N * sizeof(int), right);
    RCCE_flag_write(&full, RCCE_FLAG_SET, right);
    /* Take the block the left neighbour put here, then free the slot. */
    RCCE_wait_until(full, RCCE_FLAG_SET);
    RCCE_flag_write(&full, RCCE_FLAG_UNSET, me);
    RCCE_get((t_vcharp)in, slot, N * sizeof(int), me);
    RCCE_flag_write(&empty, RCCE_FLAG_SET, (me + np - 1) % np);
}
#else
static void shift(int *out, int *in)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    /* Even UEs send first: odd ones receive first, so no cycle of synchronous
       sends can wait on itself (with an odd count, UE 0 receives from the last
       even UE once its own send is done). */
    if (me % 2 == 0) {
        RCCE_send((char *)out, N * sizeof(int), right);
        RCCE_recv((char *)in, N * sizeof(int), left);
    } else {
        RCCE_recv((char *)in, N * sizeof(int), left);
        RCCE_send((char *)out, N * sizeof(int), right);
    }
}
#endif

int RCCE_APP(int argc, char **argv)
{
    static int block[N], incoming[N];
    long long sum = 0, expected = 0;
    int i, step, r, ok = 1;

    RCCE_init(&argc, &argv);
    me = RCCE_ue();
    np = RCCE_num_ues();
#ifdef GORY
    slot = RCCE_malloc(N * sizeof(int));
    RCCE_flag_alloc(&full);
    RCCE_flag_alloc(&empty);
    RCCE_flag_write(&empty, RCCE_FLAG_SET, me); /* the right neighbour's slot starts free */
    RCCE_barrier(&RCCE_COMM_WORLD);
#endif
    for (i = 0; i < N; i++)
        block[i] = me * N + i;
    for (step = 0; step < np; step++) {
        for (i = 0; i < N; i++)
            sum += block[i];
        if (np > 1) {
            shift(block, incoming);
            memcpy(block, incoming, sizeof block);
        }
    }
    /* Closed forms: every block visited every UE once; I hold my own again. */
    for (r = 0; r < np; r++)
        expected += (long long)N * r * N + (long long)N * (N - 1) / 2;
    for (i = 0; i < N; i++)
        ok &= block[i] == me * N + i;
    ok &= sum == expected;
    printf("UE %d: %s (sum %lld, expected %lld)\n", me, ok ? "ok" : "WRONG", sum, expected);
    RCCE_finalize();
    return ok ? 0 : 1;
}
