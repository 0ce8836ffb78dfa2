/* MPI_THREAD_MULTIPLE with pthreads: a helper thread blocked in MPI_Recv while the
 * main thread sends and receives; two threads running rings on one communicator at
 * once (told apart by tag); and two threads issuing puts and accumulates inside one
 * lock_all epoch. Built with -pthread. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "test_check.h"

static int rank, size, left, right;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

static void sleep_ms(long ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The helper: announce itself, then block receiving round `round`'s value. */
static void *receiver(void *arg) {
    int round = *(int *)arg, got = -1, is_main = -1;
    MPI_Status st;
    CHECK_RC(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 0);
    pthread_mutex_lock(&mu);
    started = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    CHECK_RC(MPI_Recv(&got, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    CHECK(got == left * 100 + round && st.MPI_SOURCE == left && st.MPI_TAG == 1);
    return NULL;
}

static void test_blocked_receiver(void) {
    for (int round = 0; round < 10; round++) {
        pthread_t t;
        started = 0;
        CHECK(pthread_create(&t, NULL, receiver, &round) == 0);
        pthread_mutex_lock(&mu);
        while (!started) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        sleep_ms(2); /* the helper is (almost surely) inside MPI_Recv now */
        /* Tell the left neighbour that our helper waits; hear the same from the right,
         * whose helper is blocked meanwhile too; then send it its value. */
        int ready = round, heard = -1, v = rank * 100 + round;
        CHECK_RC(MPI_Send(&ready, 1, MPI_INT, left, 2, MPI_COMM_WORLD));
        CHECK_RC(MPI_Recv(&heard, 1, MPI_INT, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(heard == round);
        CHECK_RC(MPI_Send(&v, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
        CHECK(pthread_join(t, NULL) == 0);
    }
}

/* A ring of `ROUNDS` Sendrecvs with tag `tag`, each value checked. */
enum { ROUNDS = 200 };
static void *ring(void *arg) {
    int tag = *(int *)arg;
    for (int k = 0; k < ROUNDS; k++) {
        int out[4] = {rank, k, tag, rank * k}, in[4] = {-1, -1, -1, -1};
        CHECK_RC(MPI_Sendrecv(out, 4, MPI_INT, right, tag, in, 4, MPI_INT, left, tag, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        CHECK(in[0] == left && in[1] == k && in[2] == tag && in[3] == left * k);
    }
    return NULL;
}

static void test_concurrent_rings(void) {
    int tag_a = 10, tag_b = 11;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, ring, &tag_a) == 0);
    ring(&tag_b);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
}

/* Two threads, one lock_all epoch: each puts its mark into its own slot on every
 * rank and adds 1 to every rank's counter, K times, flushing as it goes. */
enum { K = 25 };
static MPI_Win win;
static void *rma_worker(void *arg) {
    int t = *(int *)arg;
    for (int k = 0; k < K; k++) {
        for (int r = 0; r < size; r++) {
            int one = 1, mark = rank * 1000 + t * 100 + k;
            CHECK_RC(MPI_Accumulate(&one, 1, MPI_INT, r, 0, 1, MPI_INT, MPI_SUM, win));
            CHECK_RC(MPI_Put(&mark, 1, MPI_INT, r, 1 + 2 * rank + t, 1, MPI_INT, win));
            CHECK_RC(MPI_Win_flush(r, win)); /* mark may be reused */
        }
        int old = -1, two = 2;
        CHECK_RC(MPI_Fetch_and_op(&two, &old, MPI_INT, (rank + k) % size, 1 + 2 * size, MPI_SUM, win));
        CHECK_RC(MPI_Win_flush_all(win));
        CHECK(old >= 0 && old % 2 == 0);
    }
    return NULL;
}

static void test_threaded_rma(void) {
    int *base, n = 2 + 2 * size;
    CHECK_RC(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, n * sizeof(int));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock_all(0, win));
    pthread_t th;
    int t0 = 0, t1 = 1;
    CHECK(pthread_create(&th, NULL, rma_worker, &t1) == 0);
    rma_worker(&t0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_RC(MPI_Win_unlock_all(win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    CHECK(base[0] == 2 * K * size);
    for (int r = 0; r < size; r++)
        for (int t = 0; t < 2; t++) CHECK(base[1 + 2 * r + t] == r * 1000 + t * 100 + K - 1);
    /* Fetch-and-add counter: rank q's two threads hit rank (q + k) % size at each k. */
    int hits = 0;
    for (int q = 0; q < size; q++)
        for (int k = 0; k < K; k++) hits += (q + k) % size == rank ? 2 : 0;
    CHECK(base[1 + 2 * size] == 2 * hits);
    CHECK_RC(MPI_Win_unlock(rank, win));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    int provided = -1, is_main = 0;
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    CHECK_RC(MPI_Is_thread_main(&is_main));
    CHECK(is_main);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    test_blocked_receiver();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_concurrent_rings();
    test_threaded_rma();
    if (rank == 0) printf("ok threads\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
