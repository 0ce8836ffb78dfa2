/* Matched probes: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv. A probed message is
 * out of every other receive's reach; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC; a
 * short buffer truncates and consumes the message; a synchronous send completes once
 * probed; two threads probing at once never take each other's messages. */
#include <pthread.h>
#include "test_check.h"

static int rank, size, left, right;

static void test_basic(void) {
    int a[3] = {1, 2, 3}, b[5] = {4, 5, 6, 7, 8}, got[8];
    MPI_Request rq[2];
    CHECK_RC(MPI_Isend(a, 3, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(b, 5, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[1]));
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = -1, n = -1;
    CHECK_RC(MPI_Improbe(left, 99, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag == 0 && m == MPI_MESSAGE_NULL);
    CHECK_RC(MPI_Mprobe(left, 1, MPI_COMM_WORLD, &m, &st));
    CHECK(m != MPI_MESSAGE_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 1);
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 3);
    /* The probed message is out of reach: a receive gets the second one. */
    CHECK_RC(MPI_Recv(got, 8, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5 && got[0] == 4 && got[4] == 8);
    CHECK_RC(MPI_Mrecv(got, 3, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && got[0] == 1 && got[2] == 3 && st.MPI_TAG == 1);
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    /* MPI_PROC_NULL. */
    CHECK_RC(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    CHECK_RC(MPI_Mrecv(got, 8, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL);
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 0);
    CHECK_RC(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC);
    MPI_Request r;
    CHECK_RC(MPI_Imrecv(got, 8, MPI_INT, &m, &r));
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
}

/* MPI_Imrecv with a derived type; a short buffer; a probed synchronous send. */
static void test_more(void) {
    double col[4] = {rank, rank + 0.5, rank + 0.25, rank + 0.125}, grid[4][3];
    MPI_Datatype column;
    CHECK_RC(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &column));
    CHECK_RC(MPI_Type_commit(&column));
    MPI_Request s, r;
    CHECK_RC(MPI_Isend(col, 4, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &s));
    MPI_Message m;
    MPI_Status st;
    int flag = 0;
    while (!flag) CHECK_RC(MPI_Improbe(left, 2, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK_RC(MPI_Imrecv(&grid[0][1], 1, column, &m, &r));
    CHECK(m == MPI_MESSAGE_NULL);
    CHECK_RC(MPI_Wait(&r, &st));
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(grid[i][1] == col[i] - rank + left);
    CHECK_RC(MPI_Type_free(&column));
    /* Longer than the buffer: truncated, and consumed all the same. */
    int five[5] = {9, 8, 7, 6, 5}, two[2] = {0, 0};
    CHECK_RC(MPI_Isend(five, 5, MPI_INT, right, 3, MPI_COMM_WORLD, &s));
    CHECK_RC(MPI_Mprobe(left, 3, MPI_COMM_WORLD, &m, &st));
    CHECK_CLASS(MPI_Mrecv(two, 2, MPI_INT, &m, &st), MPI_ERR_TRUNCATE);
    CHECK(two[0] == 9 && two[1] == 8);
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Iprobe(left, 3, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 0);
    /* A synchronous send completes once probed: its sender tells us so before we
     * receive the message. */
    int v = rank, token = -1;
    CHECK_RC(MPI_Issend(&v, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &s));
    CHECK_RC(MPI_Mprobe(left, 4, MPI_COMM_WORLD, &m, &st));
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Send(&v, 1, MPI_INT, right, 5, MPI_COMM_WORLD));
    CHECK_RC(MPI_Recv(&token, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(token == left);
    CHECK_RC(MPI_Mrecv(&token, 1, MPI_INT, &m, &st));
    CHECK(token == left);
    /* Errors. */
    m = MPI_MESSAGE_NULL;
    CHECK_CLASS(MPI_Mrecv(&token, 1, MPI_INT, &m, &st), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Mprobe(size, 0, MPI_COMM_WORLD, &m, &st), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Improbe(left, -5, MPI_COMM_WORLD, &flag, &m, &st), MPI_ERR_TAG);
}

enum { PER_THREAD = 60, THREADS = 2 };
static int seen[THREADS * PER_THREAD];

/* Probes any message from the left and receives it into a buffer of its size. */
static void *prober(void *unused) {
    (void)unused;
    for (int k = 0; k < PER_THREAD; k++) {
        MPI_Message m;
        MPI_Status st;
        int n = -1;
        CHECK_RC(MPI_Mprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &n));
        int *buf = malloc(sizeof(int) * (size_t)(n + 1));
        CHECK(buf != NULL);
        CHECK_RC(MPI_Mrecv(buf, n, MPI_INT, &m, &st));
        int i = st.MPI_TAG - 100;
        CHECK(i >= 0 && i < THREADS * PER_THREAD && n == i % 50 + 1);
        for (int j = 0; j < n; j++) CHECK(buf[j] == i * 1000 + j);
        __atomic_fetch_add(&seen[i], 1, __ATOMIC_RELAXED);
        free(buf);
    }
    return NULL;
}

static void test_threads(void) {
    static int out[THREADS * PER_THREAD][50];
    MPI_Request rq[THREADS * PER_THREAD];
    for (int i = 0; i < THREADS * PER_THREAD; i++) {
        for (int j = 0; j < 50; j++) out[i][j] = i * 1000 + j;
        CHECK_RC(MPI_Isend(out[i], i % 50 + 1, MPI_INT, right, 100 + i, MPI_COMM_WORLD, &rq[i]));
    }
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) CHECK(pthread_create(&t[k], NULL, prober, NULL) == 0);
    for (int k = 0; k < THREADS; k++) CHECK(pthread_join(t[k], NULL) == 0);
    for (int i = 0; i < THREADS * PER_THREAD; i++) CHECK(seen[i] == 1);
    CHECK_RC(MPI_Waitall(THREADS * PER_THREAD, rq, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv) {
    int provided = -1;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_basic();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_more();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_threads();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok mprobe\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
