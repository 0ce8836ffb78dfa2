/* Attribute caching on datatypes and windows (MPI-3.1 6.7): keys of each kind,
 * set/get/delete, delete callbacks run exactly once with the right arguments (at
 * delete, at overwrite, at MPI_Type_free and MPI_Win_free), copy callbacks at
 * MPI_Type_dup (flag 0 drops the attribute), keys freed while attributes still use
 * them, callbacks that fail (their error is the call's) or that call MPI themselves,
 * keys of one kind refused on another, the errors of bad handles and keys; and
 * MPI_Type_match_size. */
#include "test_check.h"

static int rank;

/* What the delete callbacks saw: how many ran, and the arguments of the last one. */
static int deletes;
static int del_handle, del_key, del_value;
static void *del_extra;
/* Nonzero: the delete callbacks fail with this code. */
static int delete_fails;
/* How many copy callbacks ran, with the last one's arguments. */
static int copies;
static int copy_handle, copy_key;
static void *copy_extra;

static int *boxed(int v) {
    int *p = malloc(sizeof(int));
    *p = v;
    return p;
}

/* Frees a boxed int, recording the call; fails (keeping the box) when asked to. */
static int delete_boxed(int handle, int key, void *value, void *extra) {
    if (delete_fails) return delete_fails;
    deletes++;
    del_handle = handle;
    del_key = key;
    del_value = *(int *)value;
    del_extra = extra;
    free(value);
    return MPI_SUCCESS;
}

/* Copies a boxed int as value + 1; a negative value is not copied (flag 0); a value
 * of 99 fails with MPI_ERR_INTERN. */
static int copy_plus_one(int old, int key, void *extra, void *in, void *out, int *flag) {
    copies++;
    copy_handle = old;
    copy_key = key;
    copy_extra = extra;
    int v = *(int *)in;
    if (v == 99) return MPI_ERR_INTERN;
    if (v < 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(void **)out = boxed(v + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* A delete callback that calls MPI: it sets and reads an attribute of MPI_INT (no
 * lock of the library may be held while it runs). */
static int nested_key = MPI_KEYVAL_INVALID;
static int nested_ran;
static int delete_calls_mpi(int handle, int key, void *value, void *extra) {
    (void)handle;
    (void)key;
    (void)value;
    (void)extra;
    static int marker = 5;
    void *got = NULL;
    int flag = 0;
    CHECK_RC(MPI_Type_set_attr(MPI_INT, nested_key, &marker));
    CHECK_RC(MPI_Type_get_attr(MPI_INT, nested_key, &got, &flag));
    CHECK(flag == 1 && got == &marker);
    int r = -1;
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &r));
    CHECK(r == rank);
    nested_ran++;
    return MPI_SUCCESS;
}

static int get_int(MPI_Datatype t, int key, int *flag) {
    void *got = NULL;
    *flag = -1;
    CHECK_RC(MPI_Type_get_attr(t, key, &got, flag));
    return *flag ? *(int *)got : 0;
}

static void test_type_round_trips(void) {
    static char extra_a;
    int ka, flag;
    CHECK_RC(MPI_Type_create_keyval(copy_plus_one, delete_boxed, &ka, &extra_a));
    CHECK(ka != MPI_KEYVAL_INVALID);
    MPI_Datatype t, d;
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &t));
    get_int(t, ka, &flag);
    CHECK(flag == 0);
    CHECK_RC(MPI_Type_set_attr(t, ka, boxed(10)));
    CHECK(get_int(t, ka, &flag) == 10 && flag == 1);
    /* Overwriting deletes the old value, once, with the type, key and extra state. */
    CHECK_RC(MPI_Type_set_attr(t, ka, boxed(20)));
    CHECK(deletes == 1 && del_value == 10 && del_handle == t && del_key == ka && del_extra == &extra_a);
    CHECK(get_int(t, ka, &flag) == 20);
    /* MPI_Type_dup runs the copy callback with the old type; the copy gets 21. */
    CHECK_RC(MPI_Type_dup(t, &d));
    CHECK(copies == 1 && copy_handle == t && copy_key == ka && copy_extra == &extra_a);
    CHECK(get_int(d, ka, &flag) == 21);
    CHECK(get_int(t, ka, &flag) == 20);
    /* Delete: once; a second delete finds nothing. */
    CHECK_RC(MPI_Type_delete_attr(t, ka));
    CHECK(deletes == 2 && del_value == 20 && del_handle == t);
    get_int(t, ka, &flag);
    CHECK(flag == 0);
    CHECK_CLASS(MPI_Type_delete_attr(t, ka), MPI_ERR_KEYVAL);
    CHECK(deletes == 2);
    /* A negative value is refused by the copy callback: the dup does not get it. */
    CHECK_RC(MPI_Type_set_attr(t, ka, boxed(-1)));
    MPI_Datatype e;
    CHECK_RC(MPI_Type_dup(t, &e));
    CHECK(copies == 2);
    get_int(e, ka, &flag);
    CHECK(flag == 0);
    CHECK_RC(MPI_Type_free(&e));
    CHECK(deletes == 2);
    /* MPI_Type_free deletes the attributes: each once, with the freed type. */
    int freed_d = d;
    CHECK_RC(MPI_Type_free(&d));
    CHECK(d == MPI_DATATYPE_NULL);
    CHECK(deletes == 3 && del_value == 21 && del_handle == freed_d && del_key == ka);
    int freed_t = t;
    CHECK_RC(MPI_Type_free(&t));
    CHECK(deletes == 4 && del_value == -1 && del_handle == freed_t);
    /* Predefined types carry attributes too. */
    CHECK_RC(MPI_Type_set_attr(MPI_DOUBLE, ka, boxed(7)));
    CHECK(get_int(MPI_DOUBLE, ka, &flag) == 7);
    CHECK_RC(MPI_Type_delete_attr(MPI_DOUBLE, ka));
    CHECK(deletes == 5 && del_value == 7 && del_handle == MPI_DOUBLE);
    CHECK_RC(MPI_Type_free_keyval(&ka));
    CHECK(ka == MPI_KEYVAL_INVALID);
}

static void test_type_predefined_callbacks(void) {
    static int shared = 42;
    int kdup, knull, flag;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &knull, NULL));
    MPI_Datatype t, d;
    CHECK_RC(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
    CHECK_RC(MPI_Type_set_attr(t, kdup, &shared));
    CHECK_RC(MPI_Type_set_attr(t, knull, &shared));
    CHECK_RC(MPI_Type_dup(t, &d));
    void *got = NULL;
    CHECK_RC(MPI_Type_get_attr(d, kdup, &got, &flag));
    CHECK(flag == 1 && got == &shared);
    CHECK_RC(MPI_Type_get_attr(d, knull, &got, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Type_free(&d));
    CHECK_RC(MPI_Type_free(&t));
    CHECK_RC(MPI_Type_free_keyval(&kdup));
    CHECK_RC(MPI_Type_free_keyval(&knull));
}

/* A key freed while attributes use it stays valid for them until they are deleted,
 * callbacks included; then it is gone. */
static void test_type_key_freed_in_use(void) {
    int key, flag, before = deletes;
    CHECK_RC(MPI_Type_create_keyval(copy_plus_one, delete_boxed, &key, NULL));
    int stale = key;
    MPI_Datatype t, d;
    CHECK_RC(MPI_Type_contiguous(3, MPI_CHAR, &t));
    CHECK_RC(MPI_Type_set_attr(t, key, boxed(30)));
    CHECK_RC(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    CHECK(get_int(t, stale, &flag) == 30 && flag == 1);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, stale, boxed(1)), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_free_keyval(&stale), MPI_ERR_KEYVAL);
    /* A dup still copies it. */
    CHECK_RC(MPI_Type_dup(t, &d));
    CHECK(get_int(d, stale, &flag) == 31);
    CHECK_RC(MPI_Type_free(&t));
    CHECK(deletes == before + 1 && del_value == 30 && del_key == stale);
    CHECK_RC(MPI_Type_delete_attr(d, stale));
    CHECK(deletes == before + 2 && del_value == 31);
    /* No attribute uses it any more: the key is gone. */
    CHECK_CLASS(MPI_Type_get_attr(d, stale, &(void *){NULL}, &flag), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Type_free(&d));
    CHECK(deletes == before + 2);
}

/* Callbacks that fail make the call fail with their error. */
static void test_type_callback_errors(void) {
    int key, flag, before = deletes;
    CHECK_RC(MPI_Type_create_keyval(copy_plus_one, delete_boxed, &key, NULL));
    MPI_Datatype t, d = MPI_INT;
    CHECK_RC(MPI_Type_contiguous(4, MPI_SHORT, &t));
    CHECK_RC(MPI_Type_set_attr(t, key, boxed(1)));
    delete_fails = MPI_ERR_OTHER;
    /* Failed delete and overwrite leave the attribute as it was. */
    CHECK_CLASS(MPI_Type_delete_attr(t, key), MPI_ERR_OTHER);
    CHECK(get_int(t, key, &flag) == 1);
    int *spare = boxed(2);
    CHECK_CLASS(MPI_Type_set_attr(t, key, spare), MPI_ERR_OTHER);
    CHECK(get_int(t, key, &flag) == 1);
    free(spare);
    /* A failed free is an error too; the type stays, without its attributes. */
    CHECK_CLASS(MPI_Type_free(&t), MPI_ERR_OTHER);
    CHECK(t != MPI_DATATYPE_NULL);
    delete_fails = 0;
    CHECK(deletes == before);
    CHECK_RC(MPI_Type_set_attr(t, key, boxed(3)));
    /* The copy callback of another key copies first (keys copy in creation order),
     * then this one fails: the dup gives no type and its copied attribute goes. */
    int bad;
    CHECK_RC(MPI_Type_create_keyval(copy_plus_one, delete_boxed, &bad, NULL));
    CHECK_RC(MPI_Type_set_attr(t, bad, boxed(99)));
    CHECK_CLASS(MPI_Type_dup(t, &d), MPI_ERR_INTERN);
    CHECK(d == MPI_DATATYPE_NULL);
    CHECK(deletes == before + 1 && del_value == 4);
    CHECK_RC(MPI_Type_free(&t));
    CHECK(deletes == before + 3);
    /* A delete callback may call MPI, setting another attribute. */
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &nested_key, NULL));
    int calls;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_calls_mpi, &calls, NULL));
    CHECK_RC(MPI_Type_contiguous(1, MPI_INT, &t));
    CHECK_RC(MPI_Type_set_attr(t, calls, NULL));
    CHECK_RC(MPI_Type_free(&t));
    CHECK(nested_ran == 1);
    CHECK_RC(MPI_Type_delete_attr(MPI_INT, nested_key));
    CHECK_RC(MPI_Type_free_keyval(&nested_key));
    CHECK_RC(MPI_Type_free_keyval(&calls));
    CHECK_RC(MPI_Type_free_keyval(&key));
    CHECK_RC(MPI_Type_free_keyval(&bad));
}

/* Bad handles and keys, and keys of one kind used on another. */
static void test_type_errors(void) {
    int tkey, ckey, flag;
    void *got = NULL;
    static int v = 1;
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    CHECK_CLASS(MPI_Type_set_attr(MPI_DATATYPE_NULL, tkey, &v), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_get_attr(12345, tkey, &got, &flag), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_delete_attr(MPI_COMM_WORLD, tkey), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, 12345, &v), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, ckey, &v), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, &v), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, tkey, &got, &flag), MPI_ERR_KEYVAL);
    /* Freeing a key as another kind's is refused and leaves it be. */
    int copy = tkey;
    CHECK_CLASS(MPI_Comm_free_keyval(&copy), MPI_ERR_KEYVAL);
    CHECK(copy == tkey);
    CHECK_CLASS(MPI_Type_free_keyval(&ckey), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, NULL, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_get_attr(MPI_INT, tkey, &got, NULL), MPI_ERR_ARG);
    CHECK_RC(MPI_Type_free_keyval(&tkey));
    CHECK_CLASS(MPI_Type_free_keyval(&tkey), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_free_keyval(&copy), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Comm_free_keyval(&ckey));
}

static void test_match_size(void) {
    struct {
        int cls, size;
        MPI_Datatype want;
    } cases[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_SIGNED_CHAR},
        {MPI_TYPECLASS_INTEGER, sizeof(short), MPI_SHORT},
        {MPI_TYPECLASS_INTEGER, sizeof(int), MPI_INT},
        {MPI_TYPECLASS_INTEGER, sizeof(long long), MPI_LONG_LONG},
        {MPI_TYPECLASS_REAL, sizeof(float), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, sizeof(double), MPI_DOUBLE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int size = -1;
        CHECK_RC(MPI_Type_match_size(cases[i].cls, cases[i].size, &t));
        CHECK(t == cases[i].want);
        CHECK_RC(MPI_Type_size(t, &size));
        CHECK(size == cases[i].size);
    }
    MPI_Datatype t = MPI_INT;
    CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, NULL), MPI_ERR_ARG);
    /* A predefined type, not a copy: it cannot be freed. */
    CHECK_RC(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &t));
    CHECK_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
}

static void test_windows(void) {
    static char extra_w;
    int *base = NULL, wk, wk2, dupk, ckey, tkey, flag;
    void *got = NULL;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_boxed, &wk, &extra_w));
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_DUP_FN, delete_boxed, &wk2, NULL));
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &dupk, NULL));
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
    CHECK_RC(MPI_Win_get_attr(win, wk, &got, &flag));
    CHECK(flag == 0);
    int before = deletes;
    CHECK_RC(MPI_Win_set_attr(win, wk, boxed(100 + rank)));
    CHECK_RC(MPI_Win_get_attr(win, wk, &got, &flag));
    CHECK(flag == 1 && *(int *)got == 100 + rank);
    CHECK_RC(MPI_Win_set_attr(win, wk, boxed(200 + rank)));
    CHECK(deletes == before + 1 && del_value == 100 + rank && del_handle == win && del_key == wk &&
          del_extra == &extra_w);
    CHECK_RC(MPI_Win_set_attr(win, wk2, boxed(300)));
    CHECK_RC(MPI_Win_delete_attr(win, wk2));
    CHECK(deletes == before + 2 && del_value == 300 && del_key == wk2);
    CHECK_CLASS(MPI_Win_delete_attr(win, wk2), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Win_set_attr(win, dupk, &extra_w));
    /* The predefined attributes are still there, and cannot be set or deleted. */
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_BASE, &got, &flag));
    CHECK(flag == 1 && got == base);
    MPI_Aint *size = NULL;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag == 1 && *size == 4 * (MPI_Aint)sizeof(int));
    CHECK_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, &extra_w), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_delete_attr(win, MPI_WIN_SIZE), MPI_ERR_KEYVAL);
    /* Keys of other kinds, and no key at all. */
    CHECK_CLASS(MPI_Win_set_attr(win, ckey, &extra_w), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_get_attr(win, tkey, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_get_attr(win, MPI_TAG_UB, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_delete_attr(win, 12345), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, wk, &got, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, wk, &extra_w), MPI_ERR_KEYVAL);
    int copy = wk;
    CHECK_CLASS(MPI_Comm_free_keyval(&copy), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_free_keyval(&ckey), MPI_ERR_KEYVAL);
    /* Bad windows. */
    CHECK_CLASS(MPI_Win_set_attr(MPI_WIN_NULL, wk, &extra_w), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_get_attr(MPI_WIN_NULL, wk, &got, &flag), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_delete_attr(MPI_COMM_WORLD, wk), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_get_attr(win, wk, NULL, &flag), MPI_ERR_ARG);
    /* The key is freed while in use: MPI_Win_free still runs its delete callback, once,
     * with the window being freed. */
    int stale = wk;
    CHECK_RC(MPI_Win_free_keyval(&wk));
    CHECK(wk == MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Win_get_attr(win, stale, &got, &flag));
    CHECK(flag == 1 && *(int *)got == 200 + rank);
    CHECK_CLASS(MPI_Win_set_attr(win, stale, &extra_w), MPI_ERR_KEYVAL);
    int old = win;
    CHECK_RC(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    CHECK(deletes == before + 3 && del_value == 200 + rank && del_handle == old && del_key == stale);
    CHECK_CLASS(MPI_Win_get_attr(old, dupk, &got, &flag), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_free_keyval(&stale), MPI_ERR_KEYVAL);

    /* A delete callback's error fails MPI_Win_free, on every process or on rank 0 alone:
     * the window is freed all the same (the free is collective, and nobody is left
     * waiting in it), and the call returns the callback's error. */
    for (int only_rank0 = 0; only_rank0 < 2; only_rank0++) {
        CHECK_RC(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        CHECK_RC(MPI_Win_set_attr(win, wk2, boxed(400)));
        int fails = !only_rank0 || rank == 0;
        delete_fails = fails ? MPI_ERR_NO_MEM : 0;
        int rc = MPI_Win_free(&win), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == (fails ? MPI_ERR_NO_MEM : MPI_SUCCESS));
        delete_fails = 0;
        CHECK(win == MPI_WIN_NULL);
    }
    CHECK(deletes == before + 3 + (rank != 0));
    CHECK_RC(MPI_Win_free_keyval(&wk2));
    CHECK_RC(MPI_Win_free_keyval(&dupk));
    CHECK_RC(MPI_Comm_free_keyval(&ckey));
    CHECK_RC(MPI_Type_free_keyval(&tkey));
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_type_round_trips();
    test_type_predefined_callbacks();
    test_type_key_freed_in_use();
    test_type_callback_errors();
    test_type_errors();
    test_match_size();
    test_windows();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok win_type_attrs\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
