/* N rounds of an 8 B MPI_Send to self then MPI_Recv of it. */
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[1]), me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char a[8] = {0}, b[8];
    for (int i = 0; i < n; i++) {
        MPI_Send(a, 8, MPI_CHAR, me, 1, MPI_COMM_WORLD);
        MPI_Recv(b, 8, MPI_CHAR, me, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
