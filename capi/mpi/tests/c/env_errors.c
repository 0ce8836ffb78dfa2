/* The environment (thread levels, versions, names, clocks, error strings and
 * classes, error handlers, info objects, MPI_Alloc_mem) and, under
 * MPI_ERRORS_RETURN, the error class of bad input in every area: ranks, counts,
 * datatypes, communicators, tags, roots, ops, requests, windows, RMA ranges and
 * synchronization, lock types, asserts and info handles. After each error the job
 * must stay usable: a collective and a message succeed. */
#include <stdint.h>
#include <string.h>
#include "test_check.h"

static int rank, size;

/* A collective and a ring message, both of which must still work. */
static void still_usable(const char *after) {
    int sum = -1, got = -1, want = size * (size - 1) / 2;
    int rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != want) {
        fprintf(stderr, "FAIL rank %d: allreduce after %s: rc %d sum %d\n", rank, after, rc, sum);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    rc = MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 77, &got, 1, MPI_INT, (rank + size - 1) % size, 77,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || got != (rank + size - 1) % size) {
        fprintf(stderr, "FAIL rank %d: ring message after %s: rc %d got %d\n", rank, after, rc, got);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void test_environment(void) {
    int flag = -1, provided = -1, v = 0, sv = -1, len = -1;
    CHECK_RC(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_MULTIPLE); /* what main asked for; the library offers every level */
    CHECK_RC(MPI_Is_thread_main(&flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 1);
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Get_version(&v, &sv));
    CHECK(v == 3 && sv == 1 && v == MPI_VERSION && sv == MPI_SUBVERSION);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    memset(lib, 'x', sizeof lib);
    CHECK_RC(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len);
    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 'x', sizeof name);
    len = -1;
    CHECK_RC(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len);

    /* Wtime never goes back and does advance; Wtick is a plausible resolution. */
    double tick = MPI_Wtick(), t0 = MPI_Wtime(), prev = t0, now = t0;
    CHECK(tick > 0.0 && tick <= 0.01);
    for (long i = 0; i < 50000000L && now - t0 < 0.002; i++) {
        now = MPI_Wtime();
        CHECK(now >= prev);
        prev = now;
    }
    CHECK(now - t0 >= 0.002);

    /* Every class of mpi.h is its own class and has a text of its own. */
    static const int classes[] = {
        MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK,
        MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG,
        MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
        MPI_ERR_ACCESS, MPI_ERR_AMODE, MPI_ERR_ASSERT, MPI_ERR_BAD_FILE, MPI_ERR_BASE, MPI_ERR_CONVERSION,
        MPI_ERR_DISP, MPI_ERR_DUP_DATAREP, MPI_ERR_FILE_EXISTS, MPI_ERR_FILE_IN_USE, MPI_ERR_FILE,
        MPI_ERR_INFO_KEY, MPI_ERR_INFO_NOKEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO, MPI_ERR_IO, MPI_ERR_KEYVAL,
        MPI_ERR_LOCKTYPE, MPI_ERR_NAME, MPI_ERR_NO_MEM, MPI_ERR_NOT_SAME, MPI_ERR_NO_SPACE,
        MPI_ERR_NO_SUCH_FILE, MPI_ERR_PORT, MPI_ERR_QUOTA, MPI_ERR_READ_ONLY, MPI_ERR_RMA_CONFLICT,
        MPI_ERR_RMA_SYNC, MPI_ERR_SERVICE, MPI_ERR_SIZE, MPI_ERR_SPAWN, MPI_ERR_UNSUPPORTED_DATAREP,
        MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_WIN, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_ATTACH, MPI_ERR_RMA_SHARED,
        MPI_ERR_RMA_FLAVOR};
    enum { NCLASSES = sizeof classes / sizeof classes[0] };
    static char texts[NCLASSES][MPI_MAX_ERROR_STRING];
    for (int i = 0; i < NCLASSES; i++) {
        int cls = -1;
        CHECK_RC(MPI_Error_class(classes[i], &cls));
        if (cls != classes[i]) {
            char m[96];
            snprintf(m, sizeof m, "MPI_Error_class(%d) gave %d", classes[i], cls);
            fail_at(__FILE__, __LINE__, m);
        }
        len = -1;
        CHECK_RC(MPI_Error_string(classes[i], texts[i], &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(texts[i]) == len);
        for (int j = 0; j < i; j++) CHECK(strcmp(texts[i], texts[j]) != 0);
    }
    CHECK(MPI_ERR_LASTCODE >= MPI_ERR_RMA_FLAVOR);

    /* Error handlers: the default, set, get, inherited by a dup, freed. */
    MPI_Comm dup;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Comm dup2;
    CHECK_RC(MPI_Comm_dup(dup, &dup2));
    CHECK_RC(MPI_Comm_get_errhandler(dup2, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    /* An error on the dup returns (the world's handler is still fatal). */
    CHECK_CLASS(MPI_Send(&rank, 1, MPI_INT, size, 0, dup2), MPI_ERR_RANK);
    CHECK_RC(MPI_Comm_free(&dup2));
    CHECK_RC(MPI_Comm_free(&dup));

    /* Info objects. */
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int nkeys = -1;
    CHECK_RC(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL);
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 0);
    CHECK_RC(MPI_Info_set(info, "alpha", "hello"));
    CHECK_RC(MPI_Info_set(info, "beta", "2"));
    CHECK_RC(MPI_Info_set(info, "gamma", "three"));
    CHECK_RC(MPI_Info_set(info, "beta", "two")); /* replaces */
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 3);
    flag = 0;
    CHECK_RC(MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "two") == 0);
    CHECK_RC(MPI_Info_get(info, "alpha", 3, val, &flag)); /* valuelen 3: truncated to 3 chars */
    CHECK(flag && strcmp(val, "hel") == 0);
    CHECK_RC(MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Info_delete(info, "alpha"));
    CHECK_RC(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 2);
    CHECK_RC(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "three") == 0);
    /* A duplicate: the same keys in the same order, changed independently. */
    MPI_Info copy;
    char key[MPI_MAX_INFO_KEY + 1];
    len = -1;
    CHECK_RC(MPI_Info_dup(info, &copy));
    CHECK_RC(MPI_Info_get_nkeys(copy, &nkeys));
    CHECK(nkeys == 2);
    CHECK_RC(MPI_Info_get_nthkey(copy, 0, key));
    CHECK(strcmp(key, "beta") == 0);
    CHECK_RC(MPI_Info_get_nthkey(copy, 1, key));
    CHECK(strcmp(key, "gamma") == 0);
    /* Info calls raise errors on MPI_COMM_WORLD, whose handler is still fatal here. */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Info_get_nthkey(copy, 2, key), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nthkey(copy, -1, key), MPI_ERR_ARG);
    CHECK_RC(MPI_Info_get_valuelen(copy, "gamma", &len, &flag));
    CHECK(flag && len == 5);
    CHECK_RC(MPI_Info_get_valuelen(copy, "alpha", &len, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Info_set(copy, "gamma", "changed"));
    CHECK_RC(MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && strcmp(val, "three") == 0);
    MPI_Info stale = copy;
    CHECK_RC(MPI_Info_free(&copy));
    CHECK_CLASS(MPI_Info_dup(MPI_INFO_NULL, &copy), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get_nthkey(stale, 0, key), MPI_ERR_INFO); /* freed */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);

    /* Alloc_mem: usable memory, aligned for any basic type, freed. */
    double *mem = NULL;
    CHECK_RC(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
    CHECK(mem != NULL && ((uintptr_t)mem % sizeof(double)) == 0);
    for (int i = 0; i < (1 << 17); i++) mem[i] = i * 0.5;
    for (int i = 0; i < (1 << 17); i++) CHECK(mem[i] == i * 0.5);
    CHECK_RC(MPI_Free_mem(mem));
}

static void test_error_classes(void) {
    int a = 1, b = 0;
    double d = 1.0, e = 0.0;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* The code of an error carries its class and a text naming the problem. */
    int code = MPI_Send(&a, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD), cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Error_class(code, &cls));
    CHECK(cls == MPI_ERR_RANK);
    CHECK_RC(MPI_Error_string(code, msg, &len));
    CHECK(len > 0 && (int)strlen(msg) == len);

    /* Ranks. */
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Recv(&a, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    MPI_Request req;
    CHECK_CLASS(MPI_Isend(&a, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    still_usable("bad ranks");

    /* Counts. */
    CHECK_CLASS(MPI_Send(&a, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv(&a, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Bcast(&a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allreduce(&a, &b, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Datatype t;
    CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    still_usable("bad counts");

    /* Datatypes: null, not a datatype, not committed, freed. */
    CHECK_CLASS(MPI_Send(&a, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Send(&a, 1, (MPI_Datatype)0x60000fff, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Bcast(&a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Datatype pair, pair_copy;
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &pair));
    int two[2] = {0, 0};
    CHECK_CLASS(MPI_Send(two, 1, pair, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Recv(two, 1, pair, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    int two_out[2];
    CHECK_CLASS(MPI_Allreduce(two, two_out, 1, pair, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int sz = -1;
    CHECK_RC(MPI_Type_size(pair, &sz)); /* queries need no commit */
    CHECK(sz == 2 * (int)sizeof(int));
    pair_copy = pair;
    CHECK_RC(MPI_Type_free(&pair));
    CHECK(pair == MPI_DATATYPE_NULL);
    CHECK_CLASS(MPI_Type_size(pair_copy, &sz), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_commit(&pair_copy), MPI_ERR_TYPE);
    MPI_Datatype builtin = MPI_INT;
    CHECK_CLASS(MPI_Type_free(&builtin), MPI_ERR_TYPE);
    int at[1] = {0};
    CHECK_CLASS(MPI_Type_create_indexed_block(-1, 2, at, MPI_INT, &pair), MPI_ERR_COUNT);
    still_usable("bad datatypes");

    /* Communicators: null, not a communicator, freed. */
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_size((MPI_Comm)0x44000fff, &sz), MPI_ERR_COMM);
    MPI_Comm dup, stale;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    stale = dup;
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_CLASS(MPI_Comm_rank(stale, &sz), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Bcast(&a, 1, MPI_INT, 0, stale), MPI_ERR_COMM);
    MPI_Comm world = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_free(&world), MPI_ERR_COMM);
    still_usable("bad communicators");

    /* Tags. */
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, SCCEMU_MPI_TAG_UB + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send(&a, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Recv(&a, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    /* The largest tag is fine. */
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, rank, SCCEMU_MPI_TAG_UB, &b, 1, MPI_INT, rank, SCCEMU_MPI_TAG_UB,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(b == rank);
    still_usable("bad tags");

    /* Roots: the standard's class for an invalid root is MPI_ERR_ROOT. */
    CHECK_CLASS(MPI_Bcast(&a, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(&a, 1, MPI_INT, -4, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(&a, &b, 1, MPI_INT, MPI_SUM, size + 1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Gather(&a, 1, MPI_INT, two, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    still_usable("bad roots");

    /* Ops: a bitwise op on a floating type, logical-and on a pair type, no op at all. */
    CHECK_CLASS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(two, two_out, 1, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(&a, &b, 1, MPI_INT, (MPI_Op)0x5c000fff, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce(&d, &e, 1, MPI_DOUBLE, MPI_BOR, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    still_usable("bad ops");

    /* Requests. */
    MPI_Request bogus = (MPI_Request)0x4c000fff;
    int flag = 0;
    CHECK_CLASS(MPI_Wait(&bogus, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Test(&bogus, &flag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    MPI_Request null_req = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Request_free(&null_req), MPI_ERR_REQUEST);
    /* A completed request's handle is stale. */
    CHECK_RC(MPI_Irecv(&b, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &req));
    MPI_Request old = req;
    CHECK_RC(MPI_Send(&a, 1, MPI_INT, rank, 3, MPI_COMM_WORLD));
    CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_CLASS(MPI_Wait(&old, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    still_usable("bad requests");

    /* Info handles and keys. */
    MPI_Info info;
    int nkeys;
    char val[16];
    CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get_nkeys((MPI_Info)0x54000fff, &nkeys), MPI_ERR_INFO);
    CHECK_RC(MPI_Info_create(&info));
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    CHECK_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    static char longval[MPI_MAX_INFO_VAL + 2];
    memset(longval, 'v', sizeof longval - 1);
    CHECK_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    CHECK_CLASS(MPI_Info_delete(info, "absent"), MPI_ERR_INFO_NOKEY);
    MPI_Info stale_info = info;
    CHECK_RC(MPI_Info_free(&info));
    CHECK_CLASS(MPI_Info_get(stale_info, "k", 15, val, &flag), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_free(&stale_info), MPI_ERR_INFO);
    MPI_Win w;
    void *base;
    CHECK_CLASS(MPI_Win_allocate(64, 1, (MPI_Info)0x54000fff, MPI_COMM_WORLD, &base, &w), MPI_ERR_INFO);
    still_usable("bad info handles");
}

static void test_rma_errors(void) {
    int *base = NULL, v = 5;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Errhandler eh;
    CHECK_RC(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL); /* windows start fatal, whatever the communicator has */
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    int right = (rank + 1) % size;

    /* No epoch yet. */
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Get(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    still_usable("RMA calls outside an epoch");

    /* Inside a fence epoch: range, rank, type, count and op errors. */
    CHECK_CLASS(MPI_Win_fence(1 << 20, win), MPI_ERR_ASSERT);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Get(&v, 2, MPI_INT, right, 3, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Accumulate(&v, 1, MPI_INT, right, 100, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Put(&v, -1, MPI_INT, right, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    double dv = 1.0;
    CHECK_CLASS(MPI_Accumulate(&dv, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP);
    CHECK_RC(MPI_Put(&rank, 1, MPI_INT, right, 3, 1, MPI_INT, win)); /* the last int is in range */
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK(base[3] == (rank + size - 1) % size);
    still_usable("RMA errors in a fence epoch");

    /* Locks: bad lock type, bad assert, double lock. */
    CHECK_CLASS(MPI_Win_lock(999, right, 0, win), MPI_ERR_LOCKTYPE);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 1 << 20, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_lock_all(1 << 20, win), MPI_ERR_ASSERT);
    CHECK_CLASS(MPI_Win_post(MPI_GROUP_EMPTY, 1 << 20, win), MPI_ERR_ASSERT);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_unlock(right, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    still_usable("lock errors");

    /* Windows: null, not a window, freed. */
    MPI_Win stale = win;
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    CHECK_CLASS(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_fence(0, (MPI_Win)0x50000fff), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, stale), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_free(&stale), MPI_ERR_WIN);
    still_usable("bad windows");
}

int main(int argc, char **argv) {
    int flag = -1, provided = -1, v = 0, sv = 0;
    /* Callable before MPI_Init. */
    CHECK_RC(MPI_Initialized(&flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Get_version(&v, &sv));
    CHECK(v == 3 && sv == 1);
    CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    test_environment();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    test_error_classes();
    test_rma_errors();
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok env_errors\n");
    CHECK_RC(MPI_Finalize());
    CHECK_RC(MPI_Finalized(&flag));
    CHECK(flag == 1);
    return 0;
}
