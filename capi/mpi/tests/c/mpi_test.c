/* MPI_Test on every kind of handle. A request not complete leaves flag 0 and its handle
 * as it was; a complete one sets flag 1, fills the status and releases the handle
 * (MPI_REQUEST_NULL; a persistent request keeps its own, inactive, and restarts);
 * MPI_REQUEST_NULL and an inactive persistent request give flag 1 and the empty status;
 * a generalized request completes once MPI_Grequest_complete was called, through its
 * query_fn and free_fn; a cancelled receive completes with MPI_Test_cancelled true;
 * under MPI_ERRORS_RETURN a bad handle fails with MPI_ERR_REQUEST and stays, a
 * truncated receive and a query_fn error are the call's error and release the handle
 * (a persistent one stays, and restarts). Each status is poisoned before the call, so
 * one not written shows. A rank's receive from the left cannot complete before the
 * next barrier: the left rank sends only after it. */
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;

static void poison(MPI_Status *s) {
    memset(s, 0x5a, sizeof *s);
}

static int count_of(const MPI_Status *s) {
    int n = -1;
    CHECK_RC(MPI_Get_count(s, MPI_INT, &n));
    return n;
}

static int cancelled(const MPI_Status *s) {
    int c = -1;
    CHECK_RC(MPI_Test_cancelled(s, &c));
    return c;
}

static void check_empty(const MPI_Status *s) {
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG);
    CHECK(count_of(s) == 0 && cancelled(s) == 0);
}

/* Polls MPI_Test on `*rq` until it completes; the status it gave then. */
static void test_until_done(MPI_Request *rq, MPI_Status *st) {
    for (int flag = 0; !flag;) {
        flag = -1;
        poison(st);
        CHECK_RC(MPI_Test(rq, &flag, st));
        CHECK(flag == 0 || flag == 1);
    }
}

/* Polls MPI_Test on `*rq` until it fails or completes; its code then. */
static int test_until_failed(MPI_Request *rq, MPI_Status *st) {
    int flag = 0, rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(rq, &flag, st);
    return rc;
}

/* Polls `*rq`, which must not complete: flag 0 and the handle unchanged each time. */
static void test_open(MPI_Request *rq, int times) {
    MPI_Request held = *rq;
    MPI_Status st;
    for (int k = 0; k < times; k++) {
        int flag = -1;
        CHECK_RC(MPI_Test(rq, &flag, &st));
        CHECK(flag == 0 && *rq == held);
    }
}

static void plain(void) {
    int from_left = -1, mine = 100 + rank, got = -1, flag = -1;
    MPI_Request rq[2];
    MPI_Status st;
    CHECK_RC(MPI_Irecv(&from_left, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
    test_open(&rq[0], 20);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[1]));
    test_until_done(&rq[0], &st);
    CHECK(rq[0] == MPI_REQUEST_NULL && from_left == 100 + left);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 1 && count_of(&st) == 1 && cancelled(&st) == 0);
    test_until_done(&rq[1], &st);
    CHECK(rq[1] == MPI_REQUEST_NULL && cancelled(&st) == 0);
    /* The handle a completion released is null: testing it again gives the empty status. */
    flag = 0;
    poison(&st);
    CHECK_RC(MPI_Test(&rq[0], &flag, &st));
    CHECK(flag == 1 && rq[0] == MPI_REQUEST_NULL);
    check_empty(&st);
    /* To oneself, the receive first, statuses ignored. */
    CHECK_RC(MPI_Irecv(&got, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &rq[1]));
    for (int i = 0; i < 2; i++) {
        for (flag = 0; !flag;) CHECK_RC(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
        CHECK(rq[i] == MPI_REQUEST_NULL);
    }
    CHECK(got == mine);
}

static void null_and_inactive(void) {
    int x = -1, flag = 0;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    poison(&st);
    CHECK_RC(MPI_Test(&rq, &flag, &st));
    CHECK(flag == 1 && rq == MPI_REQUEST_NULL);
    check_empty(&st);
    flag = 0;
    CHECK_RC(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1);
    /* A persistent request never started is inactive. */
    CHECK_RC(MPI_Recv_init(&x, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rq));
    MPI_Request held = rq;
    flag = 0;
    poison(&st);
    CHECK_RC(MPI_Test(&rq, &flag, &st));
    CHECK(flag == 1 && rq == held);
    check_empty(&st);
    CHECK_RC(MPI_Request_free(&rq));
    CHECK(rq == MPI_REQUEST_NULL && x == -1);
}

static void persistent(void) {
    int x = -1, mine = -1, flag = 0;
    MPI_Request rq[2], held[2];
    MPI_Status st;
    CHECK_RC(MPI_Recv_init(&x, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]));
    CHECK_RC(MPI_Send_init(&mine, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]));
    memcpy(held, rq, sizeof rq);
    for (int run = 0; run < 3; run++) {
        x = -1;
        mine = 10 * rank + run;
        CHECK_RC(MPI_Start(&rq[0]));
        test_open(&rq[0], 5);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Start(&rq[1]));
        test_until_done(&rq[0], &st);
        CHECK(rq[0] == held[0] && x == 10 * left + run);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 4 && count_of(&st) == 1);
        test_until_done(&rq[1], &st);
        CHECK(rq[1] == held[1]);
        /* Inactive now: complete at once, with the empty status. */
        flag = 0;
        poison(&st);
        CHECK_RC(MPI_Test(&rq[0], &flag, &st));
        CHECK(flag == 1 && rq[0] == held[0]);
        check_empty(&st);
    }
    CHECK_RC(MPI_Request_free(&rq[0]));
    CHECK_RC(MPI_Request_free(&rq[1]));
}

struct gop {
    int queried, freed, value, error;
};

static int query_fn(void *extra, MPI_Status *status) {
    struct gop *op = extra;
    op->queried++;
    MPI_Status_set_elements(status, MPI_INT, op->value);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = 5;
    status->MPI_TAG = 6;
    return op->error;
}

static int free_fn(void *extra) {
    ((struct gop *)extra)->freed++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* A generalized request completed on this thread; `error`: what its query_fn returns
 * (under MPI_ERRORS_RETURN when not MPI_SUCCESS). */
static void generalized(int error) {
    struct gop op = {0, 0, 3, error};
    MPI_Request rq;
    MPI_Status st;
    int flag = -1;
    CHECK_RC(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &op, &rq));
    test_open(&rq, 5);
    CHECK(op.queried == 0 && op.freed == 0);
    CHECK_RC(MPI_Grequest_complete(rq));
    poison(&st);
    if (error == MPI_SUCCESS) {
        CHECK_RC(MPI_Test(&rq, &flag, &st));
        CHECK(flag == 1 && st.MPI_SOURCE == 5 && st.MPI_TAG == 6 && count_of(&st) == 3);
    } else {
        CHECK_CLASS(MPI_Test(&rq, &flag, &st), error);
    }
    CHECK(rq == MPI_REQUEST_NULL && op.queried == 1 && op.freed == 1);
}

static void cancel(void) {
    int x = -1, mine = 200 + rank;
    MPI_Request rq;
    MPI_Status st;
    /* Nobody sends tag 77. */
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &rq));
    test_open(&rq, 3);
    CHECK_RC(MPI_Cancel(&rq));
    test_until_done(&rq, &st);
    CHECK(rq == MPI_REQUEST_NULL && cancelled(&st) == 1 && x == -1);
    /* A persistent receive's run cancelled; the request restarts and receives. */
    CHECK_RC(MPI_Recv_init(&x, 1, MPI_INT, left, 78, MPI_COMM_WORLD, &rq));
    MPI_Request held = rq;
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Cancel(&rq));
    test_until_done(&rq, &st);
    CHECK(rq == held && cancelled(&st) == 1 && x == -1);
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
    test_until_done(&rq, &st);
    CHECK(rq == held && cancelled(&st) == 0 && x == 200 + left && st.MPI_SOURCE == left);
    CHECK_RC(MPI_Request_free(&rq));
    /* A receive whose message is here: either cancelled, and the message still there,
     * or complete with it, as MPI allows. */
    x = -1;
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 79, MPI_COMM_WORLD));
    CHECK_RC(MPI_Irecv(&x, 1, MPI_INT, rank, 79, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Cancel(&rq));
    test_until_done(&rq, &st);
    CHECK(rq == MPI_REQUEST_NULL);
    if (cancelled(&st)) {
        CHECK(x == -1);
        CHECK_RC(MPI_Recv(&x, 1, MPI_INT, rank, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHECK(x == mine);
}

/* Under MPI_ERRORS_RETURN. */
static void errors(void) {
    int two[2] = {1, 2}, one = -1, flag = -1;
    MPI_Request rq, send;
    MPI_Status st;
    /* A bad handle: the call fails before any change. */
    MPI_Request bad = (MPI_Request)777;
    CHECK_CLASS(MPI_Test(&bad, &flag, &st), MPI_ERR_REQUEST);
    CHECK(bad == (MPI_Request)777);
    /* A cancel of the null handle. */
    rq = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    /* A truncated receive: its error, and the handle released. */
    CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 20, MPI_COMM_WORLD, &rq));
    CHECK_RC(MPI_Isend(two, 2, MPI_INT, rank, 20, MPI_COMM_WORLD, &send));
    CHECK_CLASS(test_until_failed(&rq, &st), MPI_ERR_TRUNCATE);
    CHECK(rq == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Wait(&send, MPI_STATUS_IGNORE));
    /* A persistent receive truncated: its handle stays, inactive, and restarts. */
    CHECK_RC(MPI_Recv_init(&one, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &rq));
    MPI_Request held = rq;
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Isend(two, 2, MPI_INT, rank, 21, MPI_COMM_WORLD, &send));
    CHECK_CLASS(test_until_failed(&rq, &st), MPI_ERR_TRUNCATE);
    CHECK(rq == held);
    CHECK_RC(MPI_Wait(&send, MPI_STATUS_IGNORE));
    flag = 0;
    CHECK_RC(MPI_Test(&rq, &flag, &st));
    CHECK(flag == 1);
    check_empty(&st);
    one = -1;
    CHECK_RC(MPI_Start(&rq));
    CHECK_RC(MPI_Send(&two[1], 1, MPI_INT, rank, 21, MPI_COMM_WORLD));
    test_until_done(&rq, &st);
    CHECK(rq == held && one == 2 && count_of(&st) == 1);
    CHECK_RC(MPI_Request_free(&rq));
    /* A query_fn's error. */
    generalized(MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    plain();
    null_and_inactive();
    persistent();
    generalized(MPI_SUCCESS);
    cancel();
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok mpi_test\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
