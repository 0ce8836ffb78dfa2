/* MPI_Testall's cost on one rank (measure.sh). idle: 64 MPI_Irecv from oneself, never
 * sent during the polls, then argv[2] MPI_Testall polls of them (flag 0 each time);
 * then the messages, and MPI_Waitall. stream: argv[2] times: 64 MPI_Irecv, 64 MPI_Isend
 * to oneself, MPI_Testall of the 128 until flag. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define N 64
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long len = atol(argv[2]);
    int buf[N], out[N]; MPI_Request rq[2 * N];
    int flag = 0;
    if (strcmp(argv[1], "idle") == 0) {
        for (int i = 0; i < N; i++) MPI_Irecv(&buf[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &rq[i]);
        for (long k = 0; k < len; k++) MPI_Testall(N, rq, &flag, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++) { out[i] = i; MPI_Send(&out[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD); }
        MPI_Waitall(N, rq, MPI_STATUSES_IGNORE);
    } else {
        for (long k = 0; k < len; k++) {
            for (int i = 0; i < N; i++) MPI_Irecv(&buf[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &rq[i]);
            for (int i = 0; i < N; i++) { out[i] = i; MPI_Isend(&out[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &rq[N + i]); }
            for (flag = 0; !flag;) MPI_Testall(2 * N, rq, &flag, MPI_STATUSES_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
