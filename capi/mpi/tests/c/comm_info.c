/* Communicator hints: MPI_Comm_set_info keeps the hints it is not given, MPI_Comm_dup
 * copies them, MPI_Comm_dup_with_info replaces them, MPI_Comm_get_info returns them in
 * a new info; the duplicates work; errors. */
#include <string.h>
#include "test_check.h"

/* Whether `comm`'s hints are exactly the `n` pairs of `want` (in any order). */
static int hints_are(MPI_Comm comm, int n, const char *want[][2]) {
    MPI_Info used;
    CHECK_RC(MPI_Comm_get_info(comm, &used));
    int nkeys = -1, same = 1;
    CHECK_RC(MPI_Info_get_nkeys(used, &nkeys));
    for (int i = 0; i < n && same; i++) {
        char value[64];
        int flag = 0;
        CHECK_RC(MPI_Info_get(used, want[i][0], sizeof value - 1, value, &flag));
        same = flag && strcmp(value, want[i][1]) == 0;
    }
    CHECK_RC(MPI_Info_free(&used));
    return same && nkeys == n;
}

static MPI_Info info_of(int n, const char *pairs[][2]) {
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info));
    for (int i = 0; i < n; i++) CHECK_RC(MPI_Info_set(info, pairs[i][0], pairs[i][1]));
    return info;
}

/* The communicator works: an allreduce of ranks. */
static void works(MPI_Comm comm) {
    int rank, size, sum = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CHECK_RC(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    CHECK(hints_are(comm, 0, NULL));

    const char *first[][2] = {{"a", "1"}, {"b", "2"}};
    MPI_Info info = info_of(2, first);
    CHECK_RC(MPI_Comm_set_info(comm, info));
    CHECK_RC(MPI_Info_free(&info));
    CHECK(hints_are(comm, 2, first));

    /* Given hints replace theirs; the others stay. */
    const char *second[][2] = {{"b", "3"}, {"c", "4"}};
    info = info_of(2, second);
    CHECK_RC(MPI_Comm_set_info(comm, info));
    CHECK_RC(MPI_Info_free(&info));
    const char *merged[][2] = {{"a", "1"}, {"b", "3"}, {"c", "4"}};
    CHECK(hints_are(comm, 3, merged));

    MPI_Comm copy, with, without;
    CHECK_RC(MPI_Comm_dup(comm, &copy));
    CHECK(hints_are(copy, 3, merged));
    const char *own[][2] = {{"x", "9"}};
    info = info_of(1, own);
    CHECK_RC(MPI_Comm_dup_with_info(comm, info, &with));
    CHECK_RC(MPI_Info_free(&info));
    CHECK(hints_are(with, 1, own));
    CHECK_RC(MPI_Comm_dup_with_info(comm, MPI_INFO_NULL, &without));
    CHECK(hints_are(without, 0, NULL));
    CHECK(hints_are(comm, 3, merged));
    works(copy);
    works(with);
    works(without);

    /* Errors, and the communicator still works after them. */
    int bad_info = 12345;
    MPI_Info used;
    CHECK_CLASS(MPI_Comm_set_info(comm, bad_info), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_get_info(comm, NULL), MPI_ERR_ARG);
    MPI_Comm none = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_dup_with_info(comm, bad_info, &none), MPI_ERR_INFO);
    CHECK(none == MPI_COMM_NULL);
    CHECK(hints_are(comm, 3, merged));
    works(comm);

    MPI_Comm_free(&copy);
    MPI_Comm_free(&with);
    MPI_Comm_free(&without);
    MPI_Comm_free(&comm);
    if (rank == 0) printf("ok comm_info\n");
    MPI_Finalize();
    return 0;
}
