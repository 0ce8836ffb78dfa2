/* The multi-request completion calls besides MPI_Waitall: MPI_Testall that cannot
 * complete all leaves every handle as it was (complete ones included, a persistent
 * request stays active) and a later call completes them with their data and statuses;
 * Testall over persistent, inactive and null handles; MPI_Testany, MPI_Testsome,
 * MPI_Waitany and MPI_Waitsome: indices, statuses, MPI_UNDEFINED; a truncated receive
 * under MPI_ERRORS_RETURN (MPI_ERR_IN_STATUS with its code in its status, or its own
 * error where there is one status). A rank's receive from the left cannot complete
 * before the next barrier: the left rank sends only after it. */
#include <string.h>
#include "test_check.h"

static int rank, size, left, right;

static int error_class(int code) {
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

static void check_empty(const MPI_Status *s) {
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG);
}

static void check_int(const MPI_Status *s, int source, int tag) {
    int n = -1;
    CHECK(s->MPI_SOURCE == source && s->MPI_TAG == tag);
    CHECK_RC(MPI_Get_count(s, MPI_INT, &n));
    CHECK(n == 1);
}

/* Testall that cannot complete all, with complete ones among them: no handle changes. */
static void testall_leaves_handles(int by_waitall) {
    int from_left = -1, early = -1, late = -1, mine = 100 + rank, flag = 1;
    MPI_Request rq[6], before[6];
    MPI_Status st[6];
    CHECK_RC(MPI_Irecv(&from_left, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &rq[0]));
    /* A receive whose message is here when it starts, and one posted before it. */
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &rq[1]));
    CHECK_RC(MPI_Irecv(&early, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &rq[2]));
    rq[3] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Irecv(&late, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &rq[4]));
    CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &rq[5]));
    memcpy(before, rq, sizeof rq);
    for (int k = 0; k < 50; k++) {
        CHECK_RC(MPI_Testall(6, rq, &flag, st));
        CHECK(flag == 0);
        CHECK(memcmp(before, rq, sizeof rq) == 0);
    }
    /* A bad handle fails the call and changes none either. */
    MPI_Request bad[3] = {rq[0], (MPI_Request)777, rq[2]};
    CHECK_CLASS(MPI_Testall(3, bad, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    CHECK(bad[0] == rq[0] && bad[1] == (MPI_Request)777 && bad[2] == rq[2]);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, right, 10, MPI_COMM_WORLD));
    if (by_waitall) {
        CHECK_RC(MPI_Waitall(6, rq, st));
    } else {
        for (flag = 0; !flag;) CHECK_RC(MPI_Testall(6, rq, &flag, st));
    }
    for (int i = 0; i < 6; i++) CHECK(rq[i] == MPI_REQUEST_NULL);
    CHECK(from_left == 100 + left && early == mine && late == mine);
    check_int(&st[0], left, 10);
    check_int(&st[2], rank, 11);
    check_int(&st[4], rank, 12);
    check_empty(&st[3]);
}

/* Testall over persistent requests: an active one that completed while another did
 * not stays active (MPI_Start refuses it); inactive and null ones count complete. */
static void testall_persistent(void) {
    int from_left = -1, self_got = -1, mine = 200 + rank, flag = 1, other = -1;
    MPI_Request p_left, p_self, p_send, idle, rq[5];
    MPI_Status st[5];
    CHECK_RC(MPI_Recv_init(&from_left, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &p_left));
    CHECK_RC(MPI_Recv_init(&self_got, 1, MPI_INT, rank, 21, MPI_COMM_WORLD, &p_self));
    CHECK_RC(MPI_Send_init(&mine, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &p_send));
    CHECK_RC(MPI_Recv_init(&other, 1, MPI_INT, rank, 22, MPI_COMM_WORLD, &idle));
    for (int round = 0; round < 2; round++) {
        mine = 200 + 10 * round + rank;
        CHECK_RC(MPI_Start(&p_left));
        CHECK_RC(MPI_Start(&p_self));
        CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 21, MPI_COMM_WORLD));
        rq[0] = p_left, rq[1] = p_self, rq[2] = idle, rq[3] = MPI_REQUEST_NULL;
        for (int k = 0; k < 20; k++) {
            CHECK_RC(MPI_Testall(4, rq, &flag, st));
            CHECK(flag == 0);
            CHECK(rq[0] == p_left && rq[1] == p_self && rq[2] == idle && rq[3] == MPI_REQUEST_NULL);
        }
        /* p_self's receive is complete by now (its message was sent before the
           polls), yet it stays active until a call completes it. */
        CHECK_CLASS(MPI_Start(&p_self), MPI_ERR_REQUEST);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_RC(MPI_Start(&p_send));
        rq[4] = p_send;
        for (flag = 0; !flag;) CHECK_RC(MPI_Testall(5, rq, &flag, st));
        CHECK(rq[0] == p_left && rq[1] == p_self && rq[2] == idle && rq[3] == MPI_REQUEST_NULL);
        CHECK(rq[4] == p_send);
        CHECK(from_left == 200 + 10 * round + left && self_got == mine);
        check_int(&st[0], left, 20);
        check_int(&st[1], rank, 21);
        check_empty(&st[2]);
        check_empty(&st[3]);
        /* All inactive now: complete at once, with empty statuses. */
        CHECK_RC(MPI_Testall(5, rq, &flag, st));
        CHECK(flag == 1);
        for (int i = 0; i < 5; i++) check_empty(&st[i]);
        CHECK(rq[0] == p_left && rq[4] == p_send);
    }
    CHECK_RC(MPI_Request_free(&p_left));
    CHECK_RC(MPI_Request_free(&p_self));
    CHECK_RC(MPI_Request_free(&p_send));
    CHECK_RC(MPI_Request_free(&idle));
}

/* Testany, Testsome, Waitany, Waitsome: indices, statuses, MPI_UNDEFINED. */
static void any_and_some(void) {
    int from_left = -1, a = -1, b = -1, c = -1, mine = 300 + rank, flag = 0, index = -2, outcount = -2;
    int indices[4];
    MPI_Status st[4], one;
    MPI_Request idle, rq[4];
    CHECK_RC(MPI_Recv_init(&a, 1, MPI_INT, rank, 39, MPI_COMM_WORLD, &idle));

    /* Nothing active: null and inactive persistent handles only. */
    rq[0] = MPI_REQUEST_NULL, rq[1] = idle;
    CHECK_RC(MPI_Testany(2, rq, &index, &flag, &one));
    CHECK(flag == 1 && index == MPI_UNDEFINED);
    check_empty(&one);
    CHECK_RC(MPI_Waitany(2, rq, &index, &one));
    CHECK(index == MPI_UNDEFINED);
    check_empty(&one);
    CHECK_RC(MPI_Testsome(2, rq, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED);
    CHECK_RC(MPI_Waitsome(2, rq, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == idle);

    /* Testany: the open receive from the left never, the self one at index 2. */
    CHECK_RC(MPI_Irecv(&from_left, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &rq[1]));
    MPI_Request open = rq[1];
    rq[0] = idle;
    CHECK_RC(MPI_Irecv(&a, 1, MPI_INT, rank, 31, MPI_COMM_WORLD, &rq[2]));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 31, MPI_COMM_WORLD));
    for (flag = 0; !flag;) CHECK_RC(MPI_Testany(3, rq, &index, &flag, &one));
    CHECK(index == 2 && rq[2] == MPI_REQUEST_NULL && rq[1] == open && rq[0] == idle && a == mine);
    check_int(&one, rank, 31);
    CHECK_RC(MPI_Testany(3, rq, &index, &flag, &one));
    CHECK(flag == 0 && index == MPI_UNDEFINED && rq[1] == open);

    /* Testsome: both self receives, in index order, not the open one. */
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 32, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 33, MPI_COMM_WORLD));
    CHECK_RC(MPI_Irecv(&b, 1, MPI_INT, rank, 32, MPI_COMM_WORLD, &rq[0]));
    rq[2] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Irecv(&c, 1, MPI_INT, rank, 33, MPI_COMM_WORLD, &rq[3]));
    CHECK_RC(MPI_Testsome(4, rq, &outcount, indices, st));
    CHECK(outcount == 2 && indices[0] == 0 && indices[1] == 3);
    check_int(&st[0], rank, 32);
    check_int(&st[1], rank, 33);
    CHECK(b == mine && c == mine && rq[0] == MPI_REQUEST_NULL && rq[3] == MPI_REQUEST_NULL && rq[1] == open);
    CHECK_RC(MPI_Testsome(4, rq, &outcount, indices, st));
    CHECK(outcount == 0 && rq[1] == open);

    /* Waitsome and Waitany block for the left's message and the self one. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, right, 30, MPI_COMM_WORLD));
    CHECK_RC(MPI_Waitsome(4, rq, &outcount, indices, st));
    CHECK(outcount == 1 && indices[0] == 1 && rq[1] == MPI_REQUEST_NULL);
    check_int(&st[0], left, 30);
    CHECK(from_left == 300 + left);
    CHECK_RC(MPI_Waitsome(4, rq, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED);
    rq[0] = idle;
    CHECK_RC(MPI_Irecv(&a, 1, MPI_INT, rank, 34, MPI_COMM_WORLD, &rq[3]));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 34, MPI_COMM_WORLD));
    CHECK_RC(MPI_Waitany(4, rq, &index, &one));
    CHECK(index == 3 && rq[3] == MPI_REQUEST_NULL && rq[0] == idle);
    check_int(&one, rank, 34);
    CHECK_RC(MPI_Request_free(&idle));
}

/* A receive truncated: Testall's MPI_ERR_IN_STATUS (MPI_ERR_TRUNCATE without
 * statuses) once all completed; kept while another is open; Testsome and Testany. */
static void truncation(void) {
    int pair[2] = {7, 8}, mine = 400 + rank;
    for (int ignore = 0; ignore < 2; ignore++) {
        int one = -1, fine = -1, flag = 0, rc;
        MPI_Request tr[4];
        MPI_Status st[4];
        CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 40, MPI_COMM_WORLD, &tr[0]));
        CHECK_RC(MPI_Irecv(&fine, 1, MPI_INT, rank, 41, MPI_COMM_WORLD, &tr[1]));
        CHECK_RC(MPI_Isend(pair, 2, MPI_INT, rank, 40, MPI_COMM_WORLD, &tr[2]));
        CHECK_RC(MPI_Isend(&mine, 1, MPI_INT, rank, 41, MPI_COMM_WORLD, &tr[3]));
        do {
            rc = MPI_Testall(4, tr, &flag, ignore ? MPI_STATUSES_IGNORE : st);
        } while (rc == MPI_SUCCESS && !flag);
        CHECK(flag == 1);
        if (ignore) {
            CHECK(error_class(rc) == MPI_ERR_TRUNCATE);
        } else {
            CHECK(error_class(rc) == MPI_ERR_IN_STATUS);
            CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE);
            for (int i = 1; i < 4; i++) CHECK(st[i].MPI_ERROR == MPI_SUCCESS);
            check_int(&st[1], rank, 41);
        }
        for (int i = 0; i < 4; i++) CHECK(tr[i] == MPI_REQUEST_NULL);
        CHECK(one == 7 && fine == mine);
    }

    /* Failed beside one still open: not all complete, the failure waits its turn. */
    int one = -1, from_left = -1, flag = 1;
    MPI_Request tr[2], before[2];
    MPI_Status st[2];
    CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 42, MPI_COMM_WORLD, &tr[0]));
    CHECK_RC(MPI_Irecv(&from_left, 1, MPI_INT, left, 43, MPI_COMM_WORLD, &tr[1]));
    CHECK_RC(MPI_Send(pair, 2, MPI_INT, rank, 42, MPI_COMM_WORLD));
    memcpy(before, tr, sizeof tr);
    for (int k = 0; k < 20; k++) {
        CHECK_RC(MPI_Testall(2, tr, &flag, st));
        CHECK(flag == 0 && memcmp(before, tr, sizeof tr) == 0);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, right, 43, MPI_COMM_WORLD));
    CHECK_CLASS(MPI_Waitall(2, tr, st), MPI_ERR_IN_STATUS);
    CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE && st[1].MPI_ERROR == MPI_SUCCESS);
    check_int(&st[1], left, 43);
    CHECK(tr[0] == MPI_REQUEST_NULL && tr[1] == MPI_REQUEST_NULL && one == 7 && from_left == 400 + left);

    /* Testsome: MPI_ERR_IN_STATUS, the failed one's index and code reported. */
    int indices[2], outcount = 0, rc;
    CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 44, MPI_COMM_WORLD, &tr[0]));
    CHECK_RC(MPI_Irecv(&from_left, 1, MPI_INT, rank, 45, MPI_COMM_WORLD, &tr[1]));
    CHECK_RC(MPI_Send(&mine, 1, MPI_INT, rank, 45, MPI_COMM_WORLD));
    CHECK_RC(MPI_Send(pair, 2, MPI_INT, rank, 44, MPI_COMM_WORLD));
    rc = MPI_Testsome(2, tr, &outcount, indices, st);
    CHECK(error_class(rc) == MPI_ERR_IN_STATUS && outcount == 2);
    CHECK(indices[0] == 0 && indices[1] == 1);
    CHECK(error_class(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE && st[1].MPI_ERROR == MPI_SUCCESS);
    check_int(&st[1], rank, 45);
    CHECK(tr[0] == MPI_REQUEST_NULL && tr[1] == MPI_REQUEST_NULL);

    /* Testany: the error itself, with the index and the handle released. */
    int index = -2;
    tr[0] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Irecv(&one, 1, MPI_INT, rank, 46, MPI_COMM_WORLD, &tr[1]));
    CHECK_RC(MPI_Send(pair, 2, MPI_INT, rank, 46, MPI_COMM_WORLD));
    rc = MPI_Testany(2, tr, &index, &flag, &st[0]);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE && index == 1 && flag == 1 && tr[1] == MPI_REQUEST_NULL);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    right = (rank + 1) % size, left = (rank + size - 1) % size;
    testall_leaves_handles(1);
    testall_leaves_handles(0);
    testall_persistent();
    any_and_some();
    truncation();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok completions\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
