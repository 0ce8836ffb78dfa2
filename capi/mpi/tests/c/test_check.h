/* Shared checks of the MPI C tests: a failed check prints where and why, then aborts
 * the job (so the harness sees a non-zero exit). */
#ifndef TEST_CHECK_H
#define TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

static int check_rank(void) {
    int init = 0, rank = -1;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void fail_at(const char *file, int line, const char *what) {
    fprintf(stderr, "FAIL rank %d %s:%d: %s\n", check_rank(), file, line, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

#define CHECK(cond) do { if (!(cond)) fail_at(__FILE__, __LINE__, #cond); } while (0)
#define CHECK_RC(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { \
    char msg_[MPI_MAX_ERROR_STRING]; int len_ = 0; MPI_Error_string(rc_, msg_, &len_); \
    fail_at(__FILE__, __LINE__, msg_); } } while (0)
/* Expects an error of class `cls` from `call` (under MPI_ERRORS_RETURN). */
#define CHECK_CLASS(call, cls) do { int rc_ = (call), c_ = -1; MPI_Error_class(rc_, &c_); \
    if (c_ != (cls)) { char m_[160]; snprintf(m_, sizeof m_, "%s gave class %d, not %d", #call, c_, (cls)); \
    fail_at(__FILE__, __LINE__, m_); } } while (0)

#endif
