/* The program's own error handlers: MPI_Comm_create_errhandler and
 * MPI_Win_create_errhandler (called with the object and the code, the failing call
 * then returning the code), inheritance by MPI_Comm_dup, MPI_Comm_call_errhandler and
 * MPI_Win_call_errhandler, and freeing a handler still in use; and the program's own
 * error classes, codes and strings (MPI_Add_error_class/code/string). */
#include <string.h>
#include "test_check.h"

static int rank, size;
static int calls, last_class;
static MPI_Comm last_comm = MPI_COMM_NULL;
static MPI_Win last_win = MPI_WIN_NULL;

static void on_comm_error(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_comm = *comm;
    /* A handler may call MPI. */
    CHECK_RC(MPI_Error_class(*code, &last_class));
}

static void on_win_error(MPI_Win *win, int *code, ...) {
    calls++;
    last_win = *win;
    CHECK_RC(MPI_Error_class(*code, &last_class));
}

static void test_comm(void) {
    MPI_Errhandler eh, got;
    MPI_Comm dup, child;
    CHECK_RC(MPI_Comm_create_errhandler(on_comm_error, &eh));
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_set_errhandler(dup, eh));
    CHECK_RC(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh);
    int x = 1, cls = -1;
    /* The failing call runs the handler, then returns the code. */
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, dup);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK && calls == 1 && last_comm == dup && last_class == MPI_ERR_RANK);
    /* Inherited by a dup; still in use after it is freed. */
    CHECK_RC(MPI_Comm_dup(dup, &child));
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    rc = MPI_Recv(&x, -1, MPI_INT, 0, 0, child, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT && calls == 2 && last_comm == child && last_class == MPI_ERR_COUNT);
    CHECK_RC(MPI_Comm_call_errhandler(child, MPI_ERR_OTHER));
    CHECK(calls == 3 && last_class == MPI_ERR_OTHER);
    /* A freed handler can be given to nothing new; a null function is refused. */
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_SELF, got), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG);
    /* Under MPI_ERRORS_RETURN, calling the handler does nothing. */
    CHECK_RC(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(calls == 3);
    CHECK_RC(MPI_Comm_free(&child));
    CHECK_RC(MPI_Comm_free(&dup));
}

static void test_win(void) {
    MPI_Errhandler weh, ceh;
    MPI_Win win;
    int *base;
    CHECK_RC(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_RC(MPI_Win_create_errhandler(on_win_error, &weh));
    CHECK_RC(MPI_Comm_create_errhandler(on_comm_error, &ceh));
    /* A communicator's handler is not a window's. */
    CHECK_CLASS(MPI_Win_set_errhandler(win, ceh), MPI_ERR_ARG);
    CHECK_RC(MPI_Win_set_errhandler(win, weh));
    CHECK_RC(MPI_Win_fence(0, win));
    int x = 5, cls = -1, before = calls;
    int rc = MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK && calls == before + 1 && last_win == win && last_class == MPI_ERR_RANK);
    CHECK_RC(MPI_Win_call_errhandler(win, MPI_ERR_ARG));
    CHECK(calls == before + 2 && last_class == MPI_ERR_ARG);
    CHECK_RC(MPI_Win_fence(0, win));
    CHECK_RC(MPI_Errhandler_free(&weh));
    CHECK_RC(MPI_Errhandler_free(&ceh));
    CHECK_RC(MPI_Win_free(&win));
}

/* A library's own errors: new classes and codes above MPI_ERR_LASTCODE, their
 * strings, MPI_LASTUSEDCODE, and a handler called with one of them. */
static void test_added_errors(void) {
    int cls = -1, code = -1, code2 = -1, got = -1, len = -1, flag = 0, *last = NULL;
    char text[MPI_MAX_ERROR_STRING];
    CHECK_RC(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE);
    CHECK_RC(MPI_Add_error_code(cls, &code));
    CHECK_RC(MPI_Add_error_code(MPI_ERR_RANK, &code2));
    CHECK(code > MPI_ERR_LASTCODE && code != cls && code2 != code && code2 != cls);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= cls && *last >= code && *last >= code2);
    CHECK_RC(MPI_Error_class(cls, &got));
    CHECK(got == cls);
    CHECK_RC(MPI_Error_class(code, &got));
    CHECK(got == cls);
    CHECK_RC(MPI_Error_class(code2, &got));
    CHECK(got == MPI_ERR_RANK);
    /* No string yet: an empty one. */
    CHECK_RC(MPI_Error_string(code, text, &len));
    CHECK(len == 0 && text[0] == '\0');
    CHECK_RC(MPI_Add_error_string(cls, "solver diverged"));
    CHECK_RC(MPI_Add_error_string(code, "solver diverged: residual grew"));
    CHECK_RC(MPI_Error_string(cls, text, &len));
    CHECK(strcmp(text, "solver diverged") == 0 && len == (int)strlen(text));
    CHECK_RC(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "solver diverged: residual grew") == 0);
    /* Bad input: not a class, not an added value, MPI_SUCCESS, a predefined code. */
    CHECK_CLASS(MPI_Add_error_code(code, &got), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(MPI_SUCCESS, &got), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "mine"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_string(*last + 1, "none"), MPI_ERR_ARG);
    /* A handler gets the program's code and finds its class. */
    MPI_Errhandler eh;
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_create_errhandler(on_comm_error, &eh));
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_RC(MPI_Comm_set_errhandler(dup, eh));
    calls = 0;
    CHECK_RC(MPI_Comm_call_errhandler(dup, code));
    CHECK(calls == 1 && last_class == cls);
    CHECK_RC(MPI_Errhandler_free(&eh));
    CHECK_RC(MPI_Comm_free(&dup));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_comm();
    test_win();
    test_added_errors();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok errhandlers\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
