/* The profiling interface: this program defines its own MPI_Init, MPI_Send,
 * MPI_Recv, MPI_Allreduce, MPI_Put and MPI_Finalize, which count their calls and
 * reach the library through the PMPI_ names. Every call the program makes goes
 * through them exactly once, and none that the library makes on its own behalf (a
 * sendrecv, a broadcast, a barrier inside a fence) does. */
#include "test_check.h"

static int inits, sends, recvs, allreduces, put_calls, finalizes;
static int last_allreduce_count = -1;

int MPI_Init(int *argc, char ***argv) {
    inits++;
    return PMPI_Init(argc, argv);
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    sends++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    recvs++;
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
    allreduces++;
    last_allreduce_count = count;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    put_calls++;
    return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                    target_datatype, win);
}

int MPI_Finalize(void) {
    finalizes++;
    return PMPI_Finalize();
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(inits == 1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A ring of sends and receives, through the wrappers. */
    int token = rank, got = -1;
    for (int round = 0; round < 3; round++) {
        if (rank % 2 == 0) {
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, round, MPI_COMM_WORLD));
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_RC(MPI_Send(&token, 1, MPI_INT, right, round, MPI_COMM_WORLD));
        }
        CHECK(got == left);
    }
    CHECK(sends == 3 && recvs == 3);

    /* Calls the library makes messages for on its own count nothing here. */
    CHECK_RC(MPI_Sendrecv(&token, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    int value = rank;
    CHECK_RC(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK_RC(MPI_Reduce(&token, &got, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    CHECK(value == 0 && sends == 3 && recvs == 3 && allreduces == 0);

    int sum = 0;
    CHECK_RC(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2 && allreduces == 1 && last_allreduce_count == 1);

    /* One-sided: a put into the right neighbour's window, between fences. */
    int *base;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    *base = -1;
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(*base == left && put_calls == 1);
    CHECK_RC(MPI_Win_free(&win));

    /* The PMPI_ names reach the library directly, past the wrappers. */
    CHECK_RC(PMPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(PMPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(allreduces == 1);
    CHECK(sends == 3 && recvs == 3 && inits == 1 && finalizes == 0);
    if (rank == 0) printf("ok profiling\n");
    MPI_Finalize();
    return finalizes == 1 ? 0 : 1;
}
