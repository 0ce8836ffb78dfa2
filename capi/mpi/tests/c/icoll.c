/* The nonblocking collectives: Ibarrier (returns at once, completes only once all
 * entered), Ibcast from every root (and a strided derived type), Ireduce from every
 * root and Iallreduce with predefined and a non-commutative user op, Igather from
 * every root and Iallgather, MPI_IN_PLACE;
 * two in flight at once on one communicator with one on a dup, alongside
 * point-to-point messages of the same tags received with wildcards; the NBX pattern
 * (Issend, Iprobe/Recv, Ibarrier once the sends are done, Test); completion by Test
 * loops, Wait and Waitall; error classes under MPI_ERRORS_RETURN. Every value is
 * checked against what the sequential program would hold. */
#include <string.h>
#include "test_check.h"

static int rank, size;

static int val(int t, int r, int i) { return t * 1000003 + r * 1009 + i; }

/* Completes `req` by MPI_Test alone. */
static void test_loop(MPI_Request *req) {
    int flag = 0;
    while (!flag) CHECK_RC(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
    CHECK(*req == MPI_REQUEST_NULL);
}

/* Rank 0's barrier and allreduce cannot complete before the last rank starts them,
 * which it does only on rank 0's word, sent once rank 0 saw both still open: so both
 * calls returned at once, and neither completed early. */
static void test_ibarrier(void) {
    MPI_Request req[2];
    int go = 1, one = 1, total = 0;
    if (rank == size - 1 && size > 1) CHECK_RC(MPI_Recv(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &req[0]));
    CHECK_RC(MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]));
    if (rank == 0 && size > 1) {
        for (int k = 0; k < 20; k++) {
            int flag = 1;
            CHECK_RC(MPI_Test(&req[k % 2], &flag, MPI_STATUS_IGNORE));
            CHECK(!flag);
        }
        CHECK_RC(MPI_Send(&go, 1, MPI_INT, size - 1, 5, MPI_COMM_WORLD));
    }
    if (rank % 2) {
        test_loop(&req[1]);
        test_loop(&req[0]);
    } else {
        CHECK_RC(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        CHECK_RC(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    }
    CHECK(total == size);
}

static void test_ibcast(int n) {
    int *buf = malloc(sizeof(int) * (size_t)n);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++) buf[i] = rank == root ? val(1, root, i) : -1;
        MPI_Request req;
        CHECK_RC(MPI_Ibcast(buf, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        if (root % 2) test_loop(&req);
        else CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) CHECK(buf[i] == val(1, root, i));
    }
    free(buf);
    /* A strided type: every other int of 7 (its extent); the gaps stay untouched. */
    MPI_Datatype every_other;
    CHECK_RC(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    int root = size - 1, strided[16];
    for (int i = 0; i < 16; i++) strided[i] = rank == root ? val(2, root, i) : -1;
    MPI_Request req;
    CHECK_RC(MPI_Ibcast(strided, 2, every_other, root, MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++) {
        int moved = i < 14 && (i < 7 ? i : i - 7) % 2 == 0;
        CHECK(strided[i] == (rank == root || moved ? val(2, root, i) : -1));
    }
    CHECK_RC(MPI_Type_free(&every_other));
}

/* A non-commutative associative op: pairs (a, b) are maps x -> a x + b (mod P); the
 * combination applies the earlier rank's map first. */
#define P 1000003LL
static void affine(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const int *x = in;
    int *y = inout;
    for (int i = 0; i + 1 < *len; i += 2) {
        long long a = (long long)y[i] * x[i] % P, b = ((long long)y[i] * x[i + 1] + y[i + 1]) % P;
        y[i] = (int)a;
        y[i + 1] = (int)b;
    }
}

static int map_of(int r, int i) { return i % 2 == 0 ? 2 + (r * 7 + i) % 11 : (r * 13 + i) % 17; }

/* The ranks' maps composed in rank order, element pair by pair. */
static void sequential_affine(int *out, int n) {
    for (int i = 0; i < n; i++) out[i] = map_of(0, i);
    for (int r = 1; r < size; r++) {
        int x[64];
        for (int i = 0; i < n; i++) x[i] = out[i], out[i] = map_of(r, i);
        int len = n;
        affine(x, out, &len, NULL);
    }
}

static void test_reductions(int n) {
    int *mine = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    double dmine[3], dout[3];
    MPI_Op op;
    CHECK_RC(MPI_Op_create(affine, 0, &op));
    for (int root = 0; root < size; root++) {
        MPI_Request req[2];
        for (int i = 0; i < n; i++) mine[i] = val(3, rank, i), out[i] = -1;
        for (int i = 0; i < 3; i++) dmine[i] = rank * (i + 1.5), dout[i] = -1;
        CHECK_RC(MPI_Ireduce(mine, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req[0]));
        CHECK_RC(MPI_Ireduce(dmine, dout, 3, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD, &req[1]));
        CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++) {
            long long sum = 0;
            for (int r = 0; r < size; r++) sum += val(3, r, i);
            CHECK(out[i] == (rank == root ? (int)sum : -1));
        }
        for (int i = 0; i < 3; i++) CHECK(dout[i] == (rank == root ? (size - 1) * (i + 1.5) : -1));
        /* In place at the root, with the user op. */
        int seq[64];
        sequential_affine(seq, 8);
        int ub[8];
        for (int i = 0; i < 8; i++) ub[i] = map_of(rank, i);
        if (rank == root) CHECK_RC(MPI_Ireduce(MPI_IN_PLACE, ub, 8, MPI_INT, op, root, MPI_COMM_WORLD, &req[0]));
        else CHECK_RC(MPI_Ireduce(ub, NULL, 8, MPI_INT, op, root, MPI_COMM_WORLD, &req[0]));
        test_loop(&req[0]);
        if (rank == root) for (int i = 0; i < 8; i++) CHECK(ub[i] == seq[i]);
    }
    /* Iallreduce: sum, in-place max, the user op. */
    MPI_Request req[3];
    int inplace[4], user[8], seq[64];
    for (int i = 0; i < n; i++) mine[i] = val(4, rank, i), out[i] = -1;
    for (int i = 0; i < 4; i++) inplace[i] = (rank * 5 + i * 3) % 7;
    for (int i = 0; i < 8; i++) user[i] = map_of(rank, i);
    int udst[8];
    CHECK_RC(MPI_Iallreduce(mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]));
    CHECK_RC(MPI_Iallreduce(MPI_IN_PLACE, inplace, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[1]));
    CHECK_RC(MPI_Iallreduce(user, udst, 8, MPI_INT, op, MPI_COMM_WORLD, &req[2]));
    CHECK_RC(MPI_Wait(&req[2], MPI_STATUS_IGNORE));
    test_loop(&req[0]);
    CHECK_RC(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) {
        long long sum = 0;
        for (int r = 0; r < size; r++) sum += val(4, r, i);
        CHECK(out[i] == (int)sum);
    }
    for (int i = 0; i < 4; i++) {
        int max = 0;
        for (int r = 0; r < size; r++) max = (r * 5 + i * 3) % 7 > max ? (r * 5 + i * 3) % 7 : max;
        CHECK(inplace[i] == max);
    }
    sequential_affine(seq, 8);
    for (int i = 0; i < 8; i++) CHECK(udst[i] == seq[i]);
    CHECK_RC(MPI_Op_free(&op));
    free(mine);
    free(out);
}

/* Igather from every root (in place at odd roots), Iallgather (and in place). */
static void test_gathers(int n) {
    int *mine = malloc(sizeof(int) * (size_t)n), *all = malloc(sizeof(int) * (size_t)n * size);
    for (int root = 0; root < size; root++) {
        MPI_Request req;
        for (int i = 0; i < n; i++) mine[i] = val(8, rank, i);
        for (int i = 0; i < n * size; i++) all[i] = rank == root && root % 2 && i / n == root ? mine[i % n] : -1;
        const void *send = rank == root && root % 2 ? MPI_IN_PLACE : (const void *)mine;
        CHECK_RC(MPI_Igather(send, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        if (root % 2) CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
        else test_loop(&req);
        for (int i = 0; i < n * size; i++) CHECK(all[i] == (rank == root ? val(8, i / n, i % n) : -1));
    }
    MPI_Request req[2];
    int *inplace = malloc(sizeof(int) * (size_t)n * size);
    for (int i = 0; i < n; i++) mine[i] = val(9, rank, i);
    for (int i = 0; i < n * size; i++) all[i] = -1, inplace[i] = i / n == rank ? val(10, rank, i % n) : -1;
    CHECK_RC(MPI_Iallgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD, &req[0]));
    CHECK_RC(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inplace, n, MPI_INT, MPI_COMM_WORLD, &req[1]));
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n * size; i++) CHECK(all[i] == val(9, i / n, i % n) && inplace[i] == val(10, i / n, i % n));
    free(mine);
    free(all);
    free(inplace);
}

/* Two collectives in flight on the world and one on a dup, while point-to-point
 * messages with tags 0..2 (what the collectives' own messages would carry as user
 * tags) go around and are received with MPI_ANY_SOURCE and MPI_ANY_TAG. */
static void test_overlap(void) {
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int data[100], sum[2] = { rank, 1 }, total[2], dsum = rank, dtotal = -1;
    for (int i = 0; i < 100; i++) data[i] = rank == 0 ? val(5, 0, i) : -1;
    MPI_Request req[3], sends[3];
    CHECK_RC(MPI_Ibcast(data, 100, MPI_INT, 0, MPI_COMM_WORLD, &req[0]));
    CHECK_RC(MPI_Iallreduce(&dsum, &dtotal, 1, MPI_INT, MPI_SUM, dup, &req[1]));
    CHECK_RC(MPI_Iallreduce(sum, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]));
    int to = (rank + 1) % size, from = (rank + size - 1) % size, msg[3];
    for (int t = 0; t < 3; t++) {
        msg[t] = val(6, rank, t);
        CHECK_RC(MPI_Isend(&msg[t], 1, MPI_INT, to, t, MPI_COMM_WORLD, &sends[t]));
    }
    for (int t = 0; t < 3; t++) {
        int got = -1;
        MPI_Status st;
        CHECK_RC(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        if (!(st.MPI_SOURCE == from && st.MPI_TAG == t && got == val(6, from, t)))
            fprintf(stderr, "rank %d t %d: source %d tag %d got %d\n", rank, t, st.MPI_SOURCE, st.MPI_TAG, got);
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == t && got == val(6, from, t));
    }
    CHECK_RC(MPI_Waitall(3, sends, MPI_STATUSES_IGNORE));
    /* Completed in the reverse order of their starts. */
    CHECK_RC(MPI_Wait(&req[2], MPI_STATUS_IGNORE));
    CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 100; i++) CHECK(data[i] == val(5, 0, i));
    CHECK(total[0] == size * (size - 1) / 2 && total[1] == size && dtotal == size * (size - 1) / 2);
    CHECK_RC(MPI_Comm_free(&dup));
    /* The wildcard receives above must not see the next test's messages. */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
}

/* NBX: rank r sends (r % 3) + 1 synchronous messages to the next ranks; nobody knows
 * how many it will receive; the barrier, entered once a rank's sends were matched,
 * completes once every message was received. Each round has its own tag: a rank out
 * of its round may already send the next round's messages. */
static void test_nbx(int tag) {
    int k = rank % 3 + 1, out[3];
    MPI_Request sends[3], barrier = MPI_REQUEST_NULL;
    for (int j = 0; j < k; j++) {
        out[j] = val(7, rank, j);
        CHECK_RC(MPI_Issend(&out[j], 1, MPI_INT, (rank + 1 + j) % size, tag, MPI_COMM_WORLD, &sends[j]));
    }
    int received = 0, started = 0, done = 0;
    while (!done) {
        int flag = 0;
        MPI_Status st;
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st));
        if (flag) {
            int got = -1;
            CHECK_RC(MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int j = got - val(7, st.MPI_SOURCE, 0);
            CHECK(j >= 0 && j < st.MPI_SOURCE % 3 + 1 && (st.MPI_SOURCE + 1 + j) % size == rank);
            received++;
        }
        if (!started) {
            int all = 0;
            CHECK_RC(MPI_Testall(k, sends, &all, MPI_STATUSES_IGNORE));
            if (all) {
                CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
                started = 1;
            }
        } else {
            CHECK_RC(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
        }
    }
    int expect = 0;
    for (int r = 0; r < size; r++)
        for (int j = 0; j < r % 3 + 1; j++) expect += (r + 1 + j) % size == rank;
    CHECK(received == expect);
}

static void test_errors(void) {
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[4] = { 0 }, y[4];
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Ibcast(x, 4, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ibcast(x, 4, MPI_INT, -1, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ireduce(x, y, 4, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ireduce(x, y, 4, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iallreduce(x, y, 4, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD, &req), MPI_ERR_OP);
    CHECK_CLASS(MPI_Iallreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ibcast(x, -2, MPI_INT, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Igather(x, 1, MPI_INT, y, 1, MPI_INT, size, MPI_COMM_WORLD, &req), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iallgather(x, -1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    CHECK(req == MPI_REQUEST_NULL);
    /* The refused calls took no sequence numbers: the next ones still match. */
    for (int i = 0; i < 4; i++) x[i] = rank + i;
    CHECK_RC(MPI_Iallreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(y[i] == size * (size - 1) / 2 + size * i);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_ibarrier();
    test_ibcast(1);
    test_ibcast(5000);
    test_reductions(1);
    test_reductions(3000);
    test_gathers(1);
    test_gathers(700);
    test_overlap();
    for (int round = 0; round < 3; round++) test_nbx(9 + round);
    test_errors();
    test_ibarrier();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok icoll\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
