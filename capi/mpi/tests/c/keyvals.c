/* Attribute caching: keys with copy and delete callbacks (MPI_Comm_create_keyval and
 * the MPI-1 names), set/get/delete, copying by MPI_Comm_dup as the callbacks decide,
 * deletion by MPI_Comm_free and, for MPI_COMM_SELF, by MPI_Finalize; the predefined
 * callbacks; a failing callback; and the errors. */
#include "test_check.h"

static int rank;
static int copies, deletes, last_deleted, self_deleted;

/* Copies an int attribute as a new allocation holding value + 1; refuses odd values
 * with MPI_ERR_OTHER when extra_state says so. */
static int copy_plus_one(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)key;
    copies++;
    int v = *(int *)in;
    if (extra != NULL && v % 2) return MPI_ERR_OTHER;
    int *copy = malloc(sizeof(int));
    *copy = v + 1;
    *(void **)out = copy;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_int(MPI_Comm comm, int key, void *value, void *extra) {
    (void)comm;
    (void)key;
    (void)extra;
    deletes++;
    last_deleted = *(int *)value;
    free(value);
    return MPI_SUCCESS;
}

static int on_self_delete(MPI_Comm comm, int key, void *value, void *extra) {
    (void)key;
    (void)value;
    (void)extra;
    CHECK(comm == MPI_COMM_SELF);
    self_deleted = 1;
    /* Still inside MPI_Finalize: MPI calls work. */
    int init = 0;
    CHECK_RC(MPI_Initialized(&init));
    printf("%s", rank == 0 ? "ok keyvals\n" : "");
    return MPI_SUCCESS;
}

static int *boxed(int v) {
    int *p = malloc(sizeof(int));
    *p = v;
    return p;
}

static void test_keys(void) {
    int key = MPI_KEYVAL_INVALID, dupkey, nullkey, flag = -1;
    void *got = NULL;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus_one, delete_int, &key, NULL));
    CHECK(key != MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL));
    CHECK_RC(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &nullkey, NULL));
    MPI_Comm a, b;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK_RC(MPI_Comm_get_attr(a, key, &got, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_set_attr(a, key, boxed(10)));
    static int shared = 77;
    CHECK_RC(MPI_Comm_set_attr(a, dupkey, &shared));
    CHECK_RC(MPI_Attr_put(a, nullkey, &shared));
    CHECK_RC(MPI_Comm_get_attr(a, key, &got, &flag));
    CHECK(flag == 1 && *(int *)got == 10);
    /* Setting again deletes the old value first. */
    CHECK_RC(MPI_Comm_set_attr(a, key, boxed(20)));
    CHECK(deletes == 1 && last_deleted == 10);
    /* A dup runs the copy callbacks: +1 copy, the same pointer, none. */
    CHECK_RC(MPI_Comm_dup(a, &b));
    CHECK(copies == 1);
    CHECK_RC(MPI_Comm_get_attr(b, key, &got, &flag));
    CHECK(flag == 1 && *(int *)got == 21);
    CHECK_RC(MPI_Comm_get_attr(b, dupkey, &got, &flag));
    CHECK(flag == 1 && got == &shared);
    CHECK_RC(MPI_Attr_get(b, nullkey, &got, &flag));
    CHECK(flag == 0);
    /* Delete one, free the other: the callbacks run once per value. */
    CHECK_RC(MPI_Comm_delete_attr(a, key));
    CHECK(deletes == 2 && last_deleted == 20);
    CHECK_CLASS(MPI_Comm_delete_attr(a, key), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Comm_free(&b));
    CHECK(deletes == 3 && last_deleted == 21);
    /* A freed key sets nothing new, but its attributes keep their callbacks. */
    CHECK_RC(MPI_Comm_set_attr(a, key, boxed(30)));
    int freed = key;
    CHECK_RC(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    CHECK_CLASS(MPI_Comm_set_attr(a, freed, boxed(1)), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Attr_delete(a, freed));
    CHECK(deletes == 4 && last_deleted == 30);
    /* A copy callback's error fails the dup, which then gives no communicator. */
    int strict;
    CHECK_RC(MPI_Comm_create_keyval(copy_plus_one, delete_int, &strict, &strict));
    CHECK_RC(MPI_Comm_set_attr(a, strict, boxed(5)));
    MPI_Comm c = MPI_COMM_WORLD;
    int cls = -1;
    MPI_Error_class(MPI_Comm_dup(a, &c), &cls);
    CHECK(cls == MPI_ERR_OTHER);
    CHECK_RC(MPI_Comm_free(&a));
    CHECK(last_deleted == 5);
    /* Errors: a key that is none; the predefined attributes cannot be set. */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, 12345, &shared), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &shared), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Keyval_free(&dupkey));
    CHECK_RC(MPI_Comm_free_keyval(&nullkey));
    CHECK_RC(MPI_Comm_free_keyval(&strict));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_keys();
    /* The clean-up hook: an attribute on MPI_COMM_SELF, deleted by MPI_Finalize, whose
     * callback prints the harness's "ok" line. */
    int hook;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_self_delete, &hook, NULL));
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, hook, NULL));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_Finalize());
    return self_deleted ? 0 : 4;
}
