/*
 * pingpong: RCCE's synchronous send/recv between two UEs, timed.
 *
 * UE 0 and UE 1 bounce a message back and forth for every size from 32 B to
 * 64 KiB (doubling); UE 0 prints one line per size: the size in bytes, the
 * round-trip time in microseconds, the one-way latency and the bandwidth,
 * to standard output or, given a second argument, to that file (how a harness
 * reads the figures).  Other UEs only take part in the barriers.
 *
 *     rccerun -nue 2 ./pingpong [reps [file]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "RCCE.h"

#define MAX_BYTES (64 * 1024)

int RCCE_APP(int argc, char **argv)
{
    static char buf[MAX_BYTES];
    int reps, me, peer, i;
    size_t size;
    FILE *out = stdout;

    RCCE_init(&argc, &argv);
    reps = argc > 1 ? atoi(argv[1]) : 1000;
    if (reps < 1)
        reps = 1;
    me = RCCE_ue();
    peer = 1 - me;
    memset(buf, me, sizeof buf);
    if (me == 0 && argc > 2 && (out = fopen(argv[2], "w")) == NULL) {
        perror(argv[2]);
        return 1;
    }
    if (me == 0)
        fprintf(out, "# bytes round_trip_us one_way_us MB_per_s\n");
    for (size = 32; size <= MAX_BYTES; size *= 2) {
        double t0;
        RCCE_barrier(&RCCE_COMM_WORLD);
        t0 = RCCE_wtime();
        for (i = 0; i < reps && me < 2; i++) {
            if (me == 0) {
                RCCE_send(buf, size, peer);
                RCCE_recv(buf, size, peer);
            } else {
                RCCE_recv(buf, size, peer);
                RCCE_send(buf, size, peer);
            }
        }
        if (me == 0) {
            double rtt = (RCCE_wtime() - t0) / reps * 1e6;
            fprintf(out, "%zu %.3f %.3f %.1f\n", size, rtt, rtt / 2, size / (rtt / 2));
        }
    }
    if (out != stdout && fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    RCCE_finalize();
    return 0;
}
