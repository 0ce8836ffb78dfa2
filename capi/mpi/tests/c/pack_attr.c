/* Subarray datatypes (C and Fortran order) in messages, explicit packing
 * (MPI_Pack/Unpack/Pack_size, MPI_PACKED messages received with the original types),
 * and the attributes predefined on MPI_COMM_WORLD; with the error classes of each.
 * Expected layouts and values are computed here by hand. */
#include <string.h>
#include "test_check.h"

enum { ROWS = 6, COLS = 8 };

static int rank, size, left, right;

static void test_subarray(void) {
    int a[ROWS * COLS], box[12];
    for (int i = 0; i < ROWS * COLS; i++) a[i] = rank * 1000 + i;
    /* The 3x4 box at row 2, column 3 of a 6x8 C array. */
    int sizes[2] = {ROWS, COLS}, subsizes[2] = {3, 4}, starts[2] = {2, 3};
    MPI_Datatype c_box, f_box;
    CHECK_RC(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &c_box));
    CHECK_RC(MPI_Type_commit(&c_box));
    int sz = 0;
    MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;
    CHECK_RC(MPI_Type_size(c_box, &sz));
    CHECK_RC(MPI_Type_get_extent(c_box, &lb, &ext));
    CHECK_RC(MPI_Type_get_true_extent(c_box, &tlb, &text));
    CHECK(sz == 48 && lb == 0 && ext == ROWS * COLS * 4);
    CHECK(tlb == (2 * COLS + 3) * 4 && text == ((4 * COLS + 6) - (2 * COLS + 3) + 1) * 4);
    CHECK_RC(MPI_Sendrecv(a, 1, c_box, right, 1, box, 12, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) CHECK(box[r * 4 + c] == left * 1000 + (2 + r) * COLS + 3 + c);
    /* Fortran order: the first index varies fastest, element (i, j) at i + j * ROWS. */
    CHECK_RC(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &f_box));
    CHECK_RC(MPI_Type_commit(&f_box));
    CHECK_RC(MPI_Sendrecv(a, 1, f_box, right, 2, box, 12, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++) CHECK(box[j * 3 + i] == left * 1000 + (2 + i) + (3 + j) * ROWS);
    /* Two boxes in a row are two whole arrays apart: the extent is the array's. */
    int two[2 * ROWS * COLS], got[24];
    for (int i = 0; i < 2 * ROWS * COLS; i++) two[i] = rank * 1000 + i;
    CHECK_RC(MPI_Sendrecv(two, 2, c_box, right, 3, got, 24, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got[12] == left * 1000 + ROWS * COLS + 2 * COLS + 3);
    /* Received into a box: the rest of the array is untouched. */
    int into[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) into[i] = -1;
    for (int i = 0; i < 12; i++) box[i] = rank * 100 + i;
    CHECK_RC(MPI_Sendrecv(box, 12, MPI_INT, right, 4, into, 1, c_box, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) {
            int in_box = r >= 2 && r < 5 && c >= 3 && c < 7;
            CHECK(into[r * COLS + c] == (in_box ? left * 100 + (r - 2) * 4 + (c - 3) : -1));
        }
    CHECK_RC(MPI_Type_free(&c_box));
    CHECK_RC(MPI_Type_free(&f_box));
    /* Bad shapes. */
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int zero[2] = {3, 0}, past[2] = {4, 4}, neg[2] = {-1, 0};
    CHECK_CLASS(MPI_Type_create_subarray(2, sizes, zero, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_subarray(2, sizes, subsizes, past, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_subarray(2, sizes, subsizes, neg, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_subarray(2, sizes, subsizes, starts, 99, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_subarray(0, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_DIMS);
    CHECK(t == MPI_DATATYPE_NULL);
}

static void test_pack(void) {
    /* An int, three doubles and a column of a 4x3 int matrix, packed one after another. */
    int n = rank + 7, m[4][3];
    double d[3] = {rank + 0.5, rank + 1.5, rank + 2.5};
    for (int i = 0; i < 12; i++) m[i / 3][i % 3] = rank * 100 + i;
    MPI_Datatype column;
    CHECK_RC(MPI_Type_vector(4, 1, 3, MPI_INT, &column));
    CHECK_RC(MPI_Type_commit(&column));
    int s_int = 0, s_dbl = 0, s_col = 0;
    CHECK_RC(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s_int));
    CHECK_RC(MPI_Pack_size(3, MPI_DOUBLE, MPI_COMM_WORLD, &s_dbl));
    CHECK_RC(MPI_Pack_size(1, column, MPI_COMM_WORLD, &s_col));
    CHECK(s_int == 4 && s_dbl == 24 && s_col == 16);
    char buf[64], back[64];
    int pos = 0;
    CHECK_RC(MPI_Pack(&n, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(d, 3, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Pack(&m[0][1], 1, column, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 44);
    /* Too little room: an error, and the position stays. */
    CHECK_CLASS(MPI_Pack(d, 3, MPI_DOUBLE, buf, 50, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 44);
    MPI_Status st;
    CHECK_RC(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 5, back, sizeof back, MPI_PACKED, left, 5, MPI_COMM_WORLD, &st));
    int got = 0;
    CHECK_RC(MPI_Get_count(&st, MPI_PACKED, &got));
    CHECK(got == 44);
    int n2 = 0, col[4] = {0};
    double d2[3] = {0};
    pos = 0;
    CHECK_RC(MPI_Unpack(back, got, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(back, got, &pos, d2, 3, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK_RC(MPI_Unpack(back, got, &pos, col, 4, MPI_INT, MPI_COMM_WORLD));
    CHECK(pos == 44 && n2 == left + 7 && d2[0] == left + 0.5 && d2[2] == left + 2.5);
    for (int i = 0; i < 4; i++) CHECK(col[i] == left * 100 + i * 3 + 1);
    CHECK_CLASS(MPI_Unpack(back, got, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = got + 1;
    CHECK_CLASS(MPI_Unpack(back, got, &pos, &n2, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG);
    /* Packed bytes received with the original type, and typed data received packed. */
    int five[5], five_back[5];
    for (int i = 0; i < 5; i++) five[i] = rank * 10 + i;
    pos = 0;
    CHECK_RC(MPI_Pack(five, 5, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_RC(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 6, five_back, 5, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 5; i++) CHECK(five_back[i] == left * 10 + i);
    CHECK_RC(MPI_Sendrecv(&m[0][2], 1, column, right, 7, back, sizeof back, MPI_PACKED, left, 7, MPI_COMM_WORLD, &st));
    pos = 0;
    CHECK_RC(MPI_Unpack(back, 16, &pos, col, 4, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) CHECK(col[i] == left * 100 + i * 3 + 2);
    CHECK_CLASS(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &s_int), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Pack(five, 5, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_RC(MPI_Type_free(&column));
}

static void test_attributes(void) {
    int *v = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && v != NULL && *v >= 32767);
    /* The largest tag works. */
    int out = rank, in = -1;
    CHECK_RC(MPI_Sendrecv(&out, 1, MPI_INT, right, *v, &in, 1, MPI_INT, left, *v, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == left);
    CHECK_CLASS(MPI_Send(&out, 1, MPI_INT, right, *v + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag == 1 && *v == size);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag == 1 && *v == 0);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag == 1 && *v == MPI_PROC_NULL);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag == 1 && *v == MPI_ANY_SOURCE);
    CHECK_RC(MPI_Attr_get(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag == 1 && (*v == 0 || *v == 1));
    /* Attached to MPI_COMM_WORLD alone. */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    flag = 1;
    CHECK_RC(MPI_Comm_get_attr(dup, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_free(&dup));
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM);
}

int main(int argc, char **argv) {
    CHECK_RC(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_subarray();
    test_pack();
    test_attributes();
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("ok pack_attr\n");
    CHECK_RC(MPI_Finalize());
    return 0;
}
