/* The buffered send mode (MPI_Buffer_attach/detach, MPI_Bsend, MPI_Ibsend) with its
 * capacity errors, MPI_Irsend, MPI_Testsome and MPI_Request_get_status, and the
 * persistent synchronous and buffered sends (MPI_Ssend_init, MPI_Bsend_init). */
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;

/* Buffered sends return before any receive is posted, use the attached buffer's
 * capacity (message + MPI_BSEND_OVERHEAD), and detach waits for them. */
static void test_bsend(void) {
    enum { N = 1000, MSGS = 4 };
    int data[MSGS][N], got[N];
    int cap = MSGS * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *space = malloc((size_t)cap);
    CHECK(space != NULL);
    int dummy = 0;
    /* No buffer yet: MPI_ERR_BUFFER, and detaching gives nothing back. */
    CHECK_CLASS(MPI_Bsend(&dummy, 1, MPI_INT, right, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    void *back = &dummy;
    int back_size = -1;
    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == NULL && back_size == 0);
    CHECK_RC(MPI_Buffer_attach(space, cap));
    CHECK_CLASS(MPI_Buffer_attach(space, cap), MPI_ERR_BUFFER);
    /* MSGS messages fit the buffer even if none has left: the receivers take them
     * only after the barrier below, which the senders reach after all their sends. */
    for (int m = 0; m < MSGS; m++) {
        for (int i = 0; i < N; i++) data[m][i] = rank * 100000 + m * N + i;
        if (m % 2 == 0) {
            CHECK_RC(MPI_Bsend(data[m], N, MPI_INT, right, 10 + m, MPI_COMM_WORLD));
        } else {
            MPI_Request rq;
            CHECK_RC(MPI_Ibsend(data[m], N, MPI_INT, right, 10 + m, MPI_COMM_WORLD, &rq));
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        /* The data may be reused as soon as the call returns. */
        memset(data[m], 0xff, sizeof data[m]);
    }
    /* A message larger than the whole buffer is refused, whatever has left. */
    static int big[(MSGS + 1) * N];
    CHECK_CLASS(MPI_Bsend(big, (MSGS + 1) * N, MPI_INT, right, 9, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    for (int m = MSGS - 1; m >= 0; m--) {
        CHECK_RC(MPI_Recv(got, N, MPI_INT, left, 10 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) CHECK(got[i] == left * 100000 + m * N + i);
    }
    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == space && back_size == cap);
    /* Sending to MPI_PROC_NULL needs no buffer. */
    CHECK_RC(MPI_Bsend(&dummy, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHECK_CLASS(MPI_Buffer_attach(space, -1), MPI_ERR_ARG);
    /* A small buffer takes small messages only; one left in it at MPI_Finalize is
     * delivered too (received at the end of main). */
    CHECK_RC(MPI_Buffer_attach(space, 64 + MPI_BSEND_OVERHEAD));
    CHECK_CLASS(MPI_Bsend(data[0], 17, MPI_INT, right, 11, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    int last = rank + 4242;
    CHECK_RC(MPI_Bsend(&last, 1, MPI_INT, right, 12, MPI_COMM_WORLD));
}

/* MPI_Irsend with the receive posted first; MPI_Testsome and MPI_Request_get_status. */
static void test_requests(void) {
    int in[3] = {-1, -1, -1}, out[3];
    MPI_Request rq[4];
    for (int k = 0; k < 3; k++) CHECK_RC(MPI_Irecv(&in[k], 1, MPI_INT, left, 20 + k, MPI_COMM_WORLD, &rq[k]));
    rq[3] = MPI_REQUEST_NULL;
    int flag = -1, outcount = -1, idx[4];
    MPI_Status st[4];
    /* Nothing sent yet (the barrier below orders it): none complete. */
    CHECK_RC(MPI_Testsome(4, rq, &outcount, idx, st));
    CHECK(outcount == 0);
    CHECK_RC(MPI_Request_get_status(rq[1], &flag, &st[0]));
    CHECK(flag == 0);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request sq[3];
    for (int k = 0; k < 3; k++) {
        out[k] = rank * 10 + k;
        CHECK_RC(MPI_Irsend(&out[k], 1, MPI_INT, right, 20 + k, MPI_COMM_WORLD, &sq[k]));
    }
    CHECK_RC(MPI_Waitall(3, sq, MPI_STATUSES_IGNORE));
    /* get_status does not free: the request completes again in the wait, same status. */
    do {
        CHECK_RC(MPI_Request_get_status(rq[1], &flag, &st[0]));
    } while (!flag);
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 21);
    CHECK(rq[1] != MPI_REQUEST_NULL);
    int done = 0, seen[3] = {0, 0, 0};
    while (done < 3) {
        CHECK_RC(MPI_Testsome(4, rq, &outcount, idx, st));
        CHECK(outcount >= 0);
        for (int k = 0; k < outcount; k++) {
            int i = idx[k];
            CHECK(i >= 0 && i < 3 && !seen[i]);
            seen[i] = 1;
            CHECK(rq[i] == MPI_REQUEST_NULL && st[k].MPI_TAG == 20 + i && in[i] == left * 10 + i);
        }
        done += outcount;
    }
    /* All inactive now: MPI_UNDEFINED. */
    CHECK_RC(MPI_Testsome(4, rq, &outcount, idx, st));
    CHECK(outcount == MPI_UNDEFINED);
    CHECK_RC(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st[0]));
    CHECK(flag == 1 && st[0].MPI_SOURCE == MPI_ANY_SOURCE);
}

/* Persistent synchronous and buffered sends, each started three times; a start reads
 * the buffer as it is then. A synchronous start completes only once the receive is
 * posted (after the barrier); a buffered one fails when the buffer lacks room then. */
static void test_persistent_modes(void) {
    enum { N = 256 };
    int sval = -1, got = -1;
    MPI_Request sreq;
    CHECK_RC(MPI_Ssend_init(&sval, 1, MPI_INT, right, 40, MPI_COMM_WORLD, &sreq));
    for (int round = 0; round < 3; round++) {
        sval = rank * 100 + round;
        CHECK_RC(MPI_Start(&sreq));
        int flag = 1;
        CHECK_RC(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(&got, 1, MPI_INT, left, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == left * 100 + round);
        CHECK_RC(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK(sreq != MPI_REQUEST_NULL);
    }
    CHECK_RC(MPI_Request_free(&sreq));

    static int data[N], in[N];
    int cap = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *space = malloc((size_t)cap);
    CHECK(space != NULL);
    MPI_Request breq, big;
    CHECK_RC(MPI_Bsend_init(data, N, MPI_INT, right, 41, MPI_COMM_WORLD, &breq));
    CHECK_RC(MPI_Bsend_init(data, N + 1, MPI_INT, right, 42, MPI_COMM_WORLD, &big));
    CHECK_CLASS(MPI_Start(&breq), MPI_ERR_BUFFER); /* no buffer attached */
    CHECK_RC(MPI_Buffer_attach(space, cap));
    CHECK_CLASS(MPI_Start(&big), MPI_ERR_BUFFER); /* larger than the whole buffer */
    /* One message in flight per pair at a time, so that it always leaves into the
     * channel at once and gives its room back before the next start. */
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) data[i] = rank * 1000 + round * N + i;
        CHECK_RC(MPI_Start(&breq));
        CHECK_RC(MPI_Wait(&breq, MPI_STATUS_IGNORE));
        memset(data, 0xff, sizeof data);
        CHECK_RC(MPI_Recv(in, N, MPI_INT, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) CHECK(in[i] == left * 1000 + round * N + i);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    }
    CHECK_RC(MPI_Request_free(&big));
    CHECK_RC(MPI_Request_free(&breq));
    void *back = NULL;
    int back_size = -1;
    CHECK_RC(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == space && back_size == cap);
    free(space);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_persistent_modes();
    test_bsend();
    test_requests();
    int last = -1;
    CHECK_RC(MPI_Recv(&last, 1, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(last == left + 4242);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok send_modes\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
