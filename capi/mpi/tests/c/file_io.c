/* MPI-IO: open modes and their outcomes (CREATE, EXCL, DELETE_ON_CLOSE), explicit
 * offsets with contiguous and strided memory, collective forms, sizes, views with
 * holes (each rank's blocks interleaved through a vector filetype) checked against a
 * sequential computation of the file's bytes read back with plain stdio, individual
 * file pointers, seek, byte offsets, nonblocking forms, split collectives, hints,
 * error handlers and the error classes of bad calls. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_check.h"

#define N 16 /* ints in each rank's block */
#define B 3  /* ints in a block of the interleaved view */
#define K 4  /* tiles each rank writes through the view */
#define ISZ ((MPI_Offset)sizeof(int))

static int rank, size;

static int file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static int errors_seen = 0, last_class = -1;
static void on_error(MPI_File *fh, int *code, ...) {
    (void)fh;
    errors_seen++;
    MPI_Error_class(*code, &last_class);
}

/* Each rank's block at its offset; everyone reads every block back. */
static void blocks(const char *path) {
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int amode = 0;
    CHECK_RC(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    CHECK_RC(MPI_File_set_size(fh, 0));
    int mine[N];
    for (int i = 0; i < N; i++) mine[i] = rank * 1000 + i;
    MPI_Status st;
    CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), mine, N, MPI_INT, &st));
    int count = -1;
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N);
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Offset len = -1;
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == (MPI_Offset)size * N * (MPI_Offset)sizeof(int));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* everyone saw the size before it grows */
    for (int r = 0; r < size; r++) {
        int got[N];
        memset(got, 0xff, sizeof got);
        CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)r * N * sizeof(int), got, N, MPI_INT, &st));
        CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == N);
        for (int i = 0; i < N; i++) CHECK(got[i] == r * 1000 + i);
    }
    /* Strided memory: every other int of 2N, written collectively after the blocks. */
    MPI_Datatype every_other;
    CHECK_RC(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    CHECK_RC(MPI_Type_commit(&every_other));
    int wide[2 * N];
    for (int i = 0; i < 2 * N; i++) wide[i] = (i % 2) ? -1 : rank * 7 + i / 2;
    MPI_Offset base = (MPI_Offset)(size + rank) * N * sizeof(int);
    CHECK_RC(MPI_File_write_at_all(fh, base, wide, 1, every_other, &st));
    CHECK_RC(MPI_Get_count(&st, every_other, &count));
    CHECK(count == 1);
    int elements = -1;
    CHECK_RC(MPI_Get_elements(&st, every_other, &elements));
    CHECK(elements == N);
    int next = (rank + 1) % size, got[N];
    CHECK_RC(MPI_File_read_at_all(fh, (MPI_Offset)(size + next) * N * sizeof(int), got, N, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(got[i] == next * 7 + i);
    /* Read into strided memory: the holes stay as they were. */
    for (int i = 0; i < 2 * N; i++) wide[i] = -5;
    CHECK_RC(MPI_File_read_at(fh, 0, wide, 1, every_other, &st));
    for (int i = 0; i < 2 * N; i++) CHECK(wide[i] == ((i % 2) ? -5 : i / 2));
    CHECK_RC(MPI_Type_free(&every_other));

    /* At the end of the file: a short read, then none. */
    MPI_Offset end = (MPI_Offset)2 * size * N * sizeof(int);
    CHECK_RC(MPI_File_read_at(fh, end - 2 * sizeof(int), got, N, MPI_INT, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 2);
    CHECK(got[0] == (size - 1) * 7 + N - 2 && got[1] == (size - 1) * 7 + N - 1);
    CHECK_RC(MPI_File_read_at(fh, end + 100, got, N, MPI_INT, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0);

    /* Nonblocking forms complete (after everyone's reads at the end). */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request req;
    int one = 4242 + rank, back = 0;
    CHECK_RC(MPI_File_iwrite_at(fh, end + rank * sizeof(int), &one, 1, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_RC(MPI_File_iread_at(fh, end + rank * sizeof(int), &back, 1, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 1 && back == one);

    /* Sizes: truncate, preallocate (grows only). */
    CHECK_RC(MPI_File_set_size(fh, 10));
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == 10);
    CHECK_RC(MPI_File_preallocate(fh, 100));
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == 100);
    CHECK_RC(MPI_File_preallocate(fh, 50));
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == 100);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(file_size(path) == 100);
    CHECK_RC(MPI_File_read_at(fh, 0, got, 2, MPI_INT, &st));
    CHECK(got[0] == 0 && got[1] == 1);

    /* The group is the communicator's. */
    MPI_Group fg, wg;
    int cmp = -1;
    CHECK_RC(MPI_File_get_group(fh, &fg));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_compare(fg, wg, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&fg);
    MPI_Group_free(&wg);
    CHECK_RC(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);
}

/* Rank r's j-th int through the interleaved view. */
static int view_value(int r, int j) { return r * 100000 + j; }

/* Views with holes: blocks of B ints, two per tile, owner by rank. */
static void views(const char *path) {
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    MPI_Datatype vec, filetype;
    CHECK_RC(MPI_Type_vector(2, B, B * size, MPI_INT, &vec));
    CHECK_RC(MPI_Type_create_resized(vec, 0, (MPI_Aint)2 * B * size * sizeof(int), &filetype));
    CHECK_RC(MPI_Type_commit(&filetype));
    MPI_Offset disp = 8 + (MPI_Offset)rank * B * sizeof(int); /* 8 header bytes */
    CHECK_RC(MPI_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL));
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 0);
    int data[2 * B * K];
    for (int j = 0; j < 2 * B * K; j++) data[j] = view_value(rank, j);
    MPI_Status st;
    /* Half by MPI_File_write, half by MPI_File_write_all. */
    CHECK_RC(MPI_File_write(fh, data, B * K, MPI_INT, &st));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == B * K);
    CHECK_RC(MPI_File_write_all(fh, data + B * K, B * K, MPI_INT, &st));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 2 * B * K);
    if (rank == 0) {
        /* The header, through the default view of another handle. */
        MPI_File raw;
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &raw));
        CHECK_RC(MPI_File_write_at(raw, 0, "HEADER!", 8, MPI_CHAR, &st));
        CHECK_RC(MPI_File_close(&raw));
    }
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));

    /* The file's bytes, read with stdio, against a sequential computation. */
    long ints = (long)2 * B * K * size;
    CHECK(file_size(path) == 8 + ints * (long)sizeof(int));
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    char header[8];
    CHECK(fread(header, 1, 8, f) == 8 && memcmp(header, "HEADER!", 8) == 0);
    for (long j = 0; j < ints; j++) {
        int v;
        CHECK(fread(&v, sizeof v, 1, f) == 1);
        long block = j / B, owner = block % size, idx = (block / size) * B + j % B;
        CHECK(v == view_value((int)owner, (int)idx));
    }
    fclose(f);

    /* Reads through the view: explicit offsets, seek, the pointer. */
    int got[2 * B * K];
    CHECK_RC(MPI_File_read_at(fh, 0, got, 2 * B * K, MPI_INT, &st));
    for (int j = 0; j < 2 * B * K; j++) CHECK(got[j] == view_value(rank, j));
    CHECK_RC(MPI_File_seek(fh, B + 1, MPI_SEEK_SET));
    int v = 0;
    CHECK_RC(MPI_File_read(fh, &v, 1, MPI_INT, &st));
    CHECK(v == view_value(rank, B + 1));
    CHECK_RC(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    CHECK_RC(MPI_File_read(fh, &v, 1, MPI_INT, &st));
    CHECK(v == view_value(rank, B));
    CHECK_RC(MPI_File_seek(fh, -1, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 2 * B * K - 1);
    CHECK_RC(MPI_File_read_all(fh, &v, 1, MPI_INT, &st));
    CHECK(v == view_value(rank, 2 * B * K - 1));
    int count = -1;
    CHECK_RC(MPI_File_read(fh, &v, 1, MPI_INT, &st)); /* at the end: nothing */
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0);
    MPI_Offset byte = -1;
    CHECK_RC(MPI_File_get_byte_offset(fh, 0, &byte));
    CHECK(byte == disp);
    CHECK_RC(MPI_File_get_byte_offset(fh, B, &byte));
    CHECK(byte == disp + B * size * ISZ);
    CHECK_RC(MPI_File_get_byte_offset(fh, 2 * B + 1, &byte));
    CHECK(byte == disp + 2 * B * size * ISZ + ISZ);

    /* The view as set. */
    MPI_Offset d = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(d == disp && et == MPI_INT && strcmp(rep, "native") == 0);
    MPI_Aint lb, extent;
    int tsize;
    CHECK_RC(MPI_Type_get_extent(ft, &lb, &extent));
    CHECK_RC(MPI_Type_size(ft, &tsize));
    CHECK(lb == 0 && extent == (MPI_Aint)2 * B * size * (MPI_Aint)sizeof(int) && tsize == 2 * B * (int)sizeof(int));
    CHECK_RC(MPI_Type_free(&ft));

    /* Whole etypes only; views need native data and agreeing etypes. */
    CHECK_CLASS(MPI_File_read_at(fh, 0, got, 3, MPI_SHORT, &st), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, filetype, "external32", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_File_set_view(fh, -1, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    if (size > 1)
        CHECK_CLASS(MPI_File_set_view(fh, 0, rank ? MPI_INT : MPI_DOUBLE, rank ? MPI_INT : MPI_DOUBLE,
                                      "native", MPI_INFO_NULL), MPI_ERR_NOT_SAME);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_read_at(fh, 0, header, 8, MPI_CHAR, &st));
    CHECK(memcmp(header, "HEADER!", 8) == 0);
    CHECK_RC(MPI_Type_free(&filetype));
    CHECK_RC(MPI_Type_free(&vec));
    CHECK_RC(MPI_File_close(&fh));
}

/* Creation outcomes, deletion, and error classes. */
static void modes(const char *path) {
    MPI_File fh;
    char excl[300];
    snprintf(excl, sizeof excl, "%s.excl", path);
    /* Exactly one creation: everyone succeeds, then everyone sees the file exist. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, excl, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_close(&fh));
    CHECK(file_exists(excl));
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, excl, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK_RC(MPI_File_delete(excl, MPI_INFO_NULL));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(!file_exists(excl));
    CHECK_CLASS(MPI_File_delete(excl, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    /* EXCL without CREATE creates nothing, and opens what exists. */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, excl, MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
    CHECK(!file_exists(excl));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, excl, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);

    /* DELETE_ON_CLOSE. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, excl, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write_at_all(fh, rank, "x", 1, MPI_CHAR, MPI_STATUS_IGNORE));
    CHECK(file_exists(excl));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(!file_exists(excl));

    /* Bad modes, alone or disagreeing. */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, 0, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    if (size > 1)
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, rank ? MPI_MODE_RDWR : MPI_MODE_RDONLY,
                                  MPI_INFO_NULL, &fh), MPI_ERR_NOT_SAME);
    CHECK_CLASS(MPI_File_open(MPI_COMM_NULL, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_COMM);
    /* Names that reach different files fail everywhere; another name of the same file
     * (a path through "/tmp/../tmp") is the same file. */
    char other[300], same[320];
    snprintf(other, sizeof other, "%s.other", path);
    snprintf(same, sizeof same, "/tmp/../%s", path + 1);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_close(&fh));
    if (size > 1)
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, rank ? other : path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_ERR_NOT_SAME);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, rank ? same : path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK_RC(MPI_File_delete(other, MPI_INFO_NULL));
    /* A bad argument on one member fails them all, without a hang. */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, rank == size - 1 ? "" : path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, rank == 0 ? (MPI_Info)MPI_COMM_WORLD : MPI_INFO_NULL,
                              &fh), MPI_ERR_INFO);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, "/nonexistent-dir/x", MPI_MODE_CREATE | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);

    /* Access errors on an open file. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    int v = 0;
    CHECK_CLASS(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_read_at(fh, -1, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_read_at(fh, 0, &v, -1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_File_read_at(fh, 0, &v, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_get_byte_offset(fh, -3, NULL), MPI_ERR_ARG);

    /* Hints are kept. */
    MPI_Info info, used;
    CHECK_RC(MPI_Info_create(&info));
    CHECK_RC(MPI_Info_set(info, "access_style", "read_once"));
    CHECK_RC(MPI_File_set_info(fh, info));
    CHECK_RC(MPI_Info_free(&info));
    CHECK_RC(MPI_File_get_info(fh, &used));
    char value[64];
    int flag = 0;
    CHECK_RC(MPI_Info_get(used, "access_style", sizeof value - 1, value, &flag));
    CHECK(flag && strcmp(value, "read_once") == 0);
    CHECK_RC(MPI_Info_free(&used));

    /* Error handlers: files return errors by default; the program's own is called. */
    MPI_Errhandler eh;
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    CHECK_RC(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Errhandler mine;
    CHECK_RC(MPI_File_create_errhandler(on_error, &mine));
    CHECK_RC(MPI_File_set_errhandler(fh, mine));
    CHECK_RC(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == mine);
    CHECK_CLASS(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    CHECK(errors_seen == 1 && last_class == MPI_ERR_READ_ONLY);
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(errors_seen == 2 && last_class == MPI_ERR_IO);
    CHECK_RC(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Errhandler_free(&mine));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_read_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    CHECK_RC(MPI_File_close(&fh));

    /* Handles that name no open file. */
    MPI_Offset len;
    CHECK_CLASS(MPI_File_get_size(MPI_FILE_NULL, &len), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_get_size(fh, &len), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_get_size((MPI_File)MPI_COMM_WORLD, &len), MPI_ERR_FILE);
    CHECK_CLASS(MPI_File_close(&fh), MPI_ERR_FILE);
    char msg[MPI_MAX_ERROR_STRING];
    int msglen = 0;
    CHECK_RC(MPI_Error_string(MPI_ERR_NO_SUCH_FILE, msg, &msglen));
    CHECK(msglen > 0);
}

/* Split collectives: begin does the access, end gives the status; one at a time. */
static void splits(const char *path) {
    MPI_File fh;
    MPI_Status st;
    int count = -1, v = 500 + rank, w = -1;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_write_at_all_begin(fh, rank, &v, 1, MPI_INT));
    CHECK_RC(MPI_File_write_at_all_end(fh, &v, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 1);
    int next = (rank + 1) % size;
    CHECK_RC(MPI_File_read_at_all_begin(fh, next, &w, 1, MPI_INT));
    CHECK_RC(MPI_File_read_at_all_end(fh, &w, &st));
    CHECK(w == 500 + next);
    CHECK_RC(MPI_File_seek(fh, rank, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all_begin(fh, &w, 1, MPI_INT));
    CHECK_RC(MPI_File_read_all_end(fh, &w, &st));
    CHECK(w == v);
    MPI_Offset pos = -1;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == rank + 1);
    CHECK_RC(MPI_File_seek(fh, size + rank, MPI_SEEK_SET));
    v = 600 + rank;
    CHECK_RC(MPI_File_write_all_begin(fh, &v, 1, MPI_INT));
    CHECK_RC(MPI_File_write_all_end(fh, &v, &st));
    CHECK_RC(MPI_File_seek_shared(fh, 2 * size, MPI_SEEK_SET));
    v = 700 + rank;
    CHECK_RC(MPI_File_write_ordered_begin(fh, &v, 1, MPI_INT));
    CHECK_RC(MPI_File_write_ordered_end(fh, &v, &st));
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int *all = malloc(sizeof(int) * 3 * size);
    CHECK(all != NULL);
    CHECK_RC(MPI_File_read_ordered_begin(fh, all, rank == 0 ? 3 * size : 0, MPI_INT));
    CHECK_RC(MPI_File_read_ordered_end(fh, all, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == (rank == 0 ? 3 * size : 0));
    if (rank == 0)
        for (int i = 0; i < 3 * size; i++) CHECK(all[i] == 500 + 100 * (i / size) + i % size);
    free(all);

    /* One at a time, ended by its own kind; no end without a begin. */
    CHECK_RC(MPI_File_read_at_all_begin(fh, 0, &w, 1, MPI_INT));
    CHECK_CLASS(MPI_File_read_at_all_begin(fh, 0, &w, 1, MPI_INT), MPI_ERR_OTHER);
    CHECK_CLASS(MPI_File_read_all_end(fh, &w, &st), MPI_ERR_OTHER);
    CHECK_RC(MPI_File_read_at_all_end(fh, &w, &st));
    CHECK(w == 500);
    CHECK_CLASS(MPI_File_write_all_end(fh, &w, &st), MPI_ERR_OTHER);
    CHECK_RC(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char path[256];
    if (rank == 0) snprintf(path, sizeof path, "/tmp/sccemu_file_io_%ld.dat", (long)getpid());
    CHECK_RC(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));

    blocks(path);
    views(path);
    modes(path);
    splits(path);

    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL));
    if (rank == 0) printf("ok file_io\n");
    MPI_Finalize();
    return 0;
}
