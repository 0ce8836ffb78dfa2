/* Two-sided patterns, osu-style.
 *   latency      ping-pong between ranks 0 and 1 (or --peer K); one-way µs per message
 *                (half a round trip); other ranks only join the barriers
 *   bandwidth    rank 0 streams a window of 64 isends to rank 1, which acknowledges each
 *                window; µs per message
 *   many-to-one  ranks 1..N-1 each stream a window of messages to rank 0, which receives
 *                from MPI_ANY_SOURCE; µs per message received (the SRB's throughput pattern)
 */
#include "common.h"

#define WINDOW 64

static char *buffer;
static int rank, size, peer = 1;
static MPI_Request requests[WINDOW];

static void run_latency(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        if (rank == 0) {
            MPI_Send(buffer, (int)bytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buffer, (int)bytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == peer) {
            MPI_Recv(buffer, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
}

/* One "operation" is a whole window; measure() divides by count, we scale by 1/WINDOW. */
static void run_bandwidth(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buffer, (int)bytes, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(WINDOW, requests, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(buffer, (int)bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(WINDOW, requests, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
        }
    }
}

static void run_many_to_one(long bytes, int count) {
    for (int i = 0; i < count; i++) {
        if (rank == 0) {
            for (int m = 0; m < (size - 1) * WINDOW; m++)
                MPI_Recv(buffer, (int)bytes, MPI_CHAR, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(buffer, (int)bytes, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &requests[w]);
            MPI_Waitall(WINDOW, requests, MPI_STATUSES_IGNORE);
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    need_ranks(2);
    options o;
    parse_options(argc, argv, &o);
    peer = o.peer;
    if (peer >= size) die("--peer must be a rank of the job");
    buffer = calloc(max_size(&o) + 1, 1);
    for (int p = 0; p < o.npatterns; p++) {
        const char *name = o.patterns[p];
        for (int s = 0; s < o.nsizes; s++) {
            long bytes = o.sizes[s];
            if (strcmp(name, "latency") == 0) measure(&o, name, bytes, run_latency, 0.5);
            else if (strcmp(name, "bandwidth") == 0) measure(&o, name, bytes, run_bandwidth, 1.0 / WINDOW);
            else if (strcmp(name, "many-to-one") == 0)
                measure(&o, name, bytes, run_many_to_one, 1.0 / ((size - 1) * WINDOW));
            else die("pt2pt: unknown pattern");
        }
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
