/* MPI-IO's shared file pointer: concurrent MPI_File_write_shared calls take disjoint
 * parts, the ordered collectives lay the members' parts out in rank order, seek and
 * position of the shared pointer (also through a view, which resets it),
 * MPI_MODE_APPEND's starting pointers, MPI_MODE_SEQUENTIAL's limits; errors. Then the
 * nonblocking forms, atomic mode (records written and read concurrently through a
 * view with holes are never seen torn) and MPI_File_get_type_extent. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_check.h"

#define M 8
#define REC 64   /* blocks of a record */
#define BLK 16   /* ints in a block */
#define ROUNDS 30

static int rank, size;

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Nonblocking forms (complete when they start), atomic mode, type extents. */
static void more(const char *path) {
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Offset pos;
    int count = -1, v[4], w[4] = {0, 0, 0, 0};
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    for (int i = 0; i < 4; i++) v[i] = rank * 10 + i;
    CHECK_RC(MPI_File_seek(fh, (MPI_Offset)rank * 4 * sizeof(int), MPI_SEEK_SET));
    CHECK_RC(MPI_File_iwrite(fh, v, 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 4);
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(rank + 1) * 4 * (MPI_Offset)sizeof(int));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_seek(fh, (MPI_Offset)rank * 4 * sizeof(int), MPI_SEEK_SET));
    CHECK_RC(MPI_File_iread_all(fh, w, 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    for (int i = 0; i < 4; i++) CHECK(w[i] == v[i]);
    int next = (rank + 1) % size;
    CHECK_RC(MPI_File_iread_at_all(fh, (MPI_Offset)next * 4 * sizeof(int), w, 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    for (int i = 0; i < 4; i++) CHECK(w[i] == next * 10 + i);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD)); /* the nonblocking collectives do not synchronize */
    CHECK_RC(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * 4 * sizeof(int), w, 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)rank * 4 * sizeof(int), v, 4, MPI_INT, &st));
    for (int i = 0; i < 4; i++) CHECK(v[i] == next * 10 + i);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_iwrite_shared(fh, &rank, 1, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == size * (MPI_Offset)sizeof(int));
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got = -1, *all = malloc(sizeof(int) * size);
    CHECK(all != NULL);
    CHECK_RC(MPI_File_iread_shared(fh, &got, 1, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK_RC(MPI_Allgather(&got, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    qsort(all, size, sizeof(int), cmp_int);
    for (int i = 0; i < size; i++) CHECK(all[i] == i);
    free(all);

    /* Type extents in the file are the memory ones ("native"). */
    MPI_Aint extent = 0;
    MPI_Datatype wide;
    CHECK_RC(MPI_Type_create_resized(MPI_INT, 0, 12, &wide));
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_INT, &extent));
    CHECK(extent == sizeof(int));
    CHECK_RC(MPI_File_get_type_extent(fh, wide, &extent));
    CHECK(extent == 12);
    CHECK_RC(MPI_Type_free(&wide));

    /* Atomic mode: records of REC blocks, each block a separate piece of the file
     * (a view with holes), written whole by one rank at a time; reads see whole records. */
    int flag = -1;
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0);
    if (size > 1) CHECK_CLASS(MPI_File_set_atomicity(fh, rank % 2), MPI_ERR_NOT_SAME);
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1);
    MPI_Datatype holes;
    CHECK_RC(MPI_Type_vector(REC, BLK, 2 * BLK, MPI_INT, &holes));
    CHECK_RC(MPI_Type_commit(&holes));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, holes, "native", MPI_INFO_NULL));
    int *rec = malloc(sizeof(int) * REC * BLK), *seen = malloc(sizeof(int) * REC * BLK);
    CHECK(rec && seen);
    for (int i = 0; i < REC * BLK; i++) rec[i] = rank + 1;
    CHECK_RC(MPI_File_write_at_all(fh, 0, rec, REC * BLK, MPI_INT, &st));
    for (int round = 0; round < ROUNDS; round++) {
        if ((round + rank) % 2 == 0) {
            for (int i = 0; i < REC * BLK; i++) rec[i] = rank + 1 + round * 100;
            CHECK_RC(MPI_File_write_at(fh, 0, rec, REC * BLK, MPI_INT, &st));
        } else {
            CHECK_RC(MPI_File_read_at(fh, 0, seen, REC * BLK, MPI_INT, &st));
            for (int i = 1; i < REC * BLK; i++) CHECK(seen[i] == seen[0]);
        }
    }
    free(rec);
    free(seen);
    CHECK_RC(MPI_Type_free(&holes));
    CHECK_RC(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char path[256], seq[300];
    if (rank == 0) snprintf(path, sizeof path, "/tmp/sccemu_file_shared_%ld.dat", (long)getpid());
    CHECK_RC(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
    snprintf(seq, sizeof seq, "%s.seq", path);

    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos = -1;
    int count = -1;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));

    /* Concurrent independent writes: each rank's block lands whole, once. */
    int mine[M];
    for (int i = 0; i < M; i++) mine[i] = rank * 1000 + i;
    CHECK_RC(MPI_File_write_shared(fh, mine, M, MPI_INT, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == M);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * M * (MPI_Offset)sizeof(int));
    int *all = malloc(sizeof(int) * size * M), *seen = calloc(size, sizeof(int));
    CHECK(all && seen);
    CHECK_RC(MPI_File_read_at(fh, 0, all, size * M, MPI_INT, &st));
    for (int b = 0; b < size; b++) {
        int owner = all[b * M] / 1000;
        CHECK(owner >= 0 && owner < size && !seen[owner]);
        seen[owner] = 1;
        for (int i = 0; i < M; i++) CHECK(all[b * M + i] == owner * 1000 + i);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));

    /* Ordered writes: rank r's r + 1 ints after those of the lower ranks. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int *part = malloc(sizeof(int) * (size + 1));
    CHECK(part != NULL);
    for (int i = 0; i <= rank; i++) part[i] = 77 + rank;
    CHECK_RC(MPI_File_write_ordered(fh, part, rank + 1, MPI_INT, &st));
    CHECK_RC(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == rank + 1);
    int total = size * (size + 1) / 2;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)total * (MPI_Offset)sizeof(int));
    CHECK_RC(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    for (int r = 0, j = 0; r < size; r++)
        for (int i = 0; i <= r; i++, j++) CHECK(all[j] == 77 + r);

    /* Ordered reads give each rank its own part back. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(part, 0, sizeof(int) * (size + 1));
    CHECK_RC(MPI_File_read_ordered(fh, part, rank + 1, MPI_INT, &st));
    for (int i = 0; i <= rank; i++) CHECK(part[i] == 77 + rank);

    /* Independent reads: the first `size` ints, one each, in some order. */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int one = -1, *got = malloc(sizeof(int) * size);
    CHECK(got != NULL);
    CHECK_RC(MPI_File_read_shared(fh, &one, 1, MPI_INT, &st));
    CHECK_RC(MPI_Allgather(&one, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD));
    qsort(got, size, sizeof(int), cmp_int);
    for (int i = 0; i < size; i++) CHECK(got[i] == all[i]);
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == size * (MPI_Offset)sizeof(int));

    /* A view resets the pointer and sets its unit; seek from the end and the current place. */
    MPI_Offset len;
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK_RC(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0);
    CHECK_RC(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (len - 4) / 4 - 1);
    CHECK_RC(MPI_File_seek_shared(fh, -2, MPI_SEEK_CUR));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (len - 4) / 4 - 3);
    CHECK_CLASS(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_seek_shared(fh, 0, 4711), MPI_ERR_ARG);
    if (size > 1) CHECK_CLASS(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), MPI_ERR_NOT_SAME);
    CHECK_CLASS(MPI_File_write_shared(fh, mine, 3, MPI_SHORT, &st), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_File_read_shared(MPI_FILE_NULL, mine, 1, MPI_INT, &st), MPI_ERR_FILE);
    /* A bad argument on one member fails its ordered call, and the others' complete. */
    int rc = MPI_File_write_ordered(fh, mine, rank == 0 ? -1 : 1, MPI_INT, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rank == 0 ? cls == MPI_ERR_COUNT : rc == MPI_SUCCESS);
    CHECK_RC(MPI_File_close(&fh));

    /* APPEND: both pointers start at the end. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, seq, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write_at_all(fh, 0, "0123456789", rank == 0 ? 10 : 0, MPI_CHAR, &st));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, seq, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 10);
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 10);
    CHECK_RC(MPI_File_write_ordered(fh, "ab", 1, MPI_CHAR, &st));
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == 10 + size);
    CHECK_RC(MPI_File_close(&fh));

    /* SEQUENTIAL: shared pointers only. */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, seq, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write_ordered(fh, mine, 1, MPI_INT, &st));
    /* A view from where the shared pointer is. */
    CHECK_RC(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == size * (MPI_Offset)sizeof(int));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0);
    CHECK_RC(MPI_File_write_ordered(fh, mine, 2, MPI_INT, &st));
    CHECK_RC(MPI_File_get_size(fh, &len));
    CHECK(len == 3 * size * (MPI_Offset)sizeof(int));
    CHECK_CLASS(MPI_File_write_at(fh, 0, mine, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_write(fh, mine, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_read_shared(fh, mine, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    FILE *f = fopen(seq, "rb");
    CHECK(f == NULL);
    f = fopen(path, "rb");
    CHECK(f == NULL);

    free(all);
    free(seen);
    free(part);
    free(got);
    more(path);
    if (rank == 0) printf("ok file_shared\n");
    MPI_Finalize();
    return 0;
}
