#!/bin/bash
# Instructions per MPI_Test pattern on one rank, as callgrind counts them (the whole
# rank at two lengths, the figure is the difference), for sccemu's MPI library and
# Open MPI (LIBS="scc ompi" by default):
#   idle  test_poll.c idle: one MPI_Test of an open MPI_Irecv that cannot complete
#   pair  test_poll.c pair: MPI_Irecv from oneself, MPI_Isend to oneself, MPI_Test of
#         each until it completes (per pair)
# Run from the repository root. Builds the library archive that sccmpicc links.
set -e
out=${OUT:-/tmp/mpitest}
here=$(dirname "$0")
mkdir -p "$out"
CARGO_INCREMENTAL=0 cargo build -q --release -p sccemu-tools -p sccemu-mpi
target/release/sccmpicc -std=c99 -O2 -Wall -Wextra -Werror -o "$out/test_poll_scc" "$here/test_poll.c"
mpicc.openmpi -std=c99 -O2 -Wall -Wextra -Werror -o "$out/test_poll_ompi" "$here/test_poll.c"
count() { # mode, library, length
  if [ "$2" = scc ]; then
    target/release/sccrun -n 1 -- valgrind --tool=callgrind --callgrind-out-file="$out/$1_$2.$3" \
      "$out/test_poll_$2" "$1" "$3" >/dev/null 2>&1
  else
    mpirun.openmpi --allow-run-as-root --mca btl vader,self -np 1 \
      valgrind --tool=callgrind --callgrind-out-file="$out/$1_$2.$3" "$out/test_poll_$2" "$1" "$3" \
      >/dev/null 2>&1
  fi
  grep -h '^summary:' "$out/$1_$2.$3" | awk '{print $2}'
}
# mode, short length, long length, unit
for spec in "idle 1000 3000 poll" "pair 1000 3000 pair"; do
  set -- $spec
  for lib in ${LIBS:-scc ompi}; do
    a=$(count "$1" $lib "$2"); b=$(count "$1" $lib "$3")
    echo "$1 $lib $(( (b - a) / ($3 - $2) )) instructions per $4"
  done
done
