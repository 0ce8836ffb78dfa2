/* Generalized requests: an operation run by a thread of the program and completed with
 * MPI_Grequest_complete. A wait sleeps until the thread completes it (the thread sets
 * a value first, which query_fn must see); query_fn fills the status with
 * MPI_Status_set_elements and MPI_Status_set_cancelled, free_fn runs once, after it;
 * MPI_Test says "not yet" before the completion; MPI_Waitall mixes one with
 * point-to-point requests; MPI_Request_free before completion still calls both
 * callbacks once the operation completes; MPI_Cancel calls cancel_fn; a query_fn error
 * is the wait's error; bad arguments give their classes; a request function called
 * from query_fn fails instead of hanging. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "test_check.h"

static int rank, size;

struct op {
    MPI_Request request;
    int value;          /* written by the worker before it completes the request */
    int queried, freed, cancelled_calls, cancel_complete;
    int query_error;    /* what query_fn returns */
    int delay_us;
};

static int query_fn(void *extra, MPI_Status *status) {
    struct op *op = extra;
    op->queried++;
    CHECK(op->freed == 0); /* free_fn comes after */
    MPI_Status_set_elements(status, MPI_INT, op->value);
    MPI_Status_set_cancelled(status, op->cancelled_calls > 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return op->query_error;
}

static int free_fn(void *extra) {
    struct op *op = extra;
    op->freed++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    struct op *op = extra;
    op->cancelled_calls++;
    op->cancel_complete = complete;
    return MPI_SUCCESS;
}

static void *worker(void *arg) {
    struct op *op = arg;
    struct timespec pause = {0, (long)op->delay_us * 1000L};
    nanosleep(&pause, NULL);
    op->value = 42 + rank;
    int rc = MPI_Grequest_complete(op->request);
    if (rc != MPI_SUCCESS) fprintf(stderr, "rank %d: Grequest_complete failed\n", rank);
    return NULL;
}

static void start(struct op *op, int delay_us) {
    memset(op, 0, sizeof *op);
    op->delay_us = delay_us;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->request));
    CHECK(op->request != MPI_REQUEST_NULL);
}

/* A wait that sleeps until another thread completes the request. */
static void test_wait(void) {
    struct op op;
    pthread_t t;
    start(&op, 20000);
    int flag = -1;
    CHECK_RC(MPI_Test(&op.request, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0 && op.queried == 0);
    CHECK(pthread_create(&t, NULL, worker, &op) == 0);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&op.request, &st));
    CHECK(op.request == MPI_REQUEST_NULL);
    CHECK(op.queried == 1 && op.freed == 1);
    int count = -1, cancelled = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 42 + rank);
    CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 0);
    CHECK(pthread_join(t, NULL) == 0);
}

/* Waitall over a generalized request and a ring exchange. */
static void test_waitall(void) {
    struct op op;
    pthread_t t;
    start(&op, 5000);
    int out = rank, in = -1;
    MPI_Request rq[3];
    CHECK_RC(MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, &rq[0]));
    rq[1] = op.request;
    CHECK_RC(MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD, &rq[2]));
    CHECK(pthread_create(&t, NULL, worker, &op) == 0);
    MPI_Status st[3];
    CHECK_RC(MPI_Waitall(3, rq, st));
    CHECK(in == (rank + size - 1) % size);
    CHECK(op.queried == 1 && op.freed == 1);
    int count = -1;
    CHECK_RC(MPI_Get_elements(&st[1], MPI_INT, &count));
    CHECK(count == 42 + rank);
    CHECK(pthread_join(t, NULL) == 0);
}

/* Freed before it completes: both callbacks still run, once, after the completion. */
static void test_free_early(void) {
    static struct op op;
    pthread_t t;
    start(&op, 1000);
    MPI_Request handle = op.request;
    CHECK_RC(MPI_Request_free(&handle));
    CHECK(handle == MPI_REQUEST_NULL);
    CHECK(pthread_create(&t, NULL, worker, &op) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    /* Detached requests are driven by later waits: a barrier, then a trivial wait. */
    int x = 0;
    MPI_Request r;
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r));
    CHECK_RC(MPI_Send(&x, 1, MPI_INT, rank, 9, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(op.queried == 1 && op.freed == 1);
}

/* Cancel: cancel_fn with complete false; the status then says cancelled. An error
 * from query_fn is the wait's. */
static void test_cancel_and_errors(void) {
    struct op op;
    start(&op, 0);
    CHECK_RC(MPI_Cancel(&op.request));
    CHECK(op.cancelled_calls == 1 && op.cancel_complete == 0);
    CHECK_RC(MPI_Grequest_complete(op.request));
    MPI_Status st;
    CHECK_RC(MPI_Wait(&op.request, &st));
    int cancelled = 0;
    CHECK_RC(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 1 && op.freed == 1);

    start(&op, 0);
    op.query_error = MPI_ERR_OTHER;
    CHECK_RC(MPI_Grequest_complete(op.request));
    CHECK_CLASS(MPI_Wait(&op.request, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
    CHECK(op.queried == 1 && op.freed == 1);

    MPI_Request r;
    CHECK_CLASS(MPI_Grequest_start(NULL, free_fn, cancel_fn, NULL, &r), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    MPI_Status s;
    memset(&s, 0, sizeof s);
    CHECK_CLASS(MPI_Status_set_elements(&s, MPI_DATATYPE_NULL, 3), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Status_set_elements(&s, MPI_INT, -1), MPI_ERR_COUNT);
    /* Elements of a derived type: 2 whole (int, double) pairs and one more int. */
    MPI_Datatype pair, types[2] = {MPI_INT, MPI_DOUBLE};
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    CHECK_RC(MPI_Type_create_struct(2, lens, displs, types, &pair));
    CHECK_RC(MPI_Type_commit(&pair));
    CHECK_RC(MPI_Status_set_elements(&s, pair, 5));
    int elements = -1, count = -1;
    CHECK_RC(MPI_Get_elements(&s, pair, &elements));
    CHECK_RC(MPI_Get_count(&s, pair, &count));
    CHECK(elements == 5 && count == MPI_UNDEFINED);
    CHECK_RC(MPI_Type_free(&pair));
}

/* A callback that calls a request function: where it runs under the request table's
 * lock (MPI_Test, MPI_Testall), that call fails with MPI_ERR_OTHER instead of waiting
 * for the lock its own thread holds; the request it named is untouched. */
static MPI_Request other; /* an open receive, tested from query_fn */
static int inner_rc;

static int query_calls_test(void *extra, MPI_Status *status) {
    int flag = -1;
    inner_rc = MPI_Test(&other, &flag, MPI_STATUS_IGNORE);
    return query_fn(extra, status);
}

static void test_reentry(void) {
    for (int all = 0; all < 2; all++) {
        int x = -1, y = 7 + all, flag = 0, cls = -1;
        CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &other));
        struct op op;
        memset(&op, 0, sizeof op);
        CHECK_RC(MPI_Grequest_start(query_calls_test, free_fn, cancel_fn, &op, &op.request));
        CHECK_RC(MPI_Grequest_complete(op.request));
        inner_rc = MPI_SUCCESS;
        if (all) CHECK_RC(MPI_Testall(1, &op.request, &flag, MPI_STATUSES_IGNORE));
        else CHECK_RC(MPI_Test(&op.request, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 1 && op.request == MPI_REQUEST_NULL && op.queried == 1 && op.freed == 1);
        CHECK_RC(MPI_Error_class(inner_rc, &cls));
        CHECK(cls == MPI_ERR_OTHER);
        CHECK(other != MPI_REQUEST_NULL);
        CHECK_RC(MPI_Send(&y, 1, MPI_INT, rank, 11, MPI_COMM_WORLD));
        CHECK_RC(MPI_Wait(&other, MPI_STATUS_IGNORE));
        CHECK(x == y);
    }
}

int main(int argc, char **argv) {
    int provided = 0;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_wait();
    test_waitall();
    test_free_early();
    test_cancel_and_errors();
    test_reentry();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok grequest\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
