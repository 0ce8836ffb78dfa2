#!/bin/bash
# Instructions per MPI_Testall pattern on one rank, as callgrind counts them (the whole
# rank at two lengths, the figure is the difference):
#   idle   testall.c idle: one MPI_Testall of 64 open MPI_Irecv (none can complete)
#   stream testall.c stream: 64 MPI_Irecv, 64 MPI_Isend to oneself, MPI_Testall of the
#          128 until it completes them (per window)
# Run from the repository root. Builds the library archive that sccmpicc links.
set -e
out=${OUT:-/tmp/testall}
here=$(dirname "$0")
mkdir -p "$out"
CARGO_INCREMENTAL=0 cargo build -q --release -p sccemu-tools -p sccemu-mpi
target/release/sccmpicc -O2 -o "$out/testall" "$here/testall.c"
count() { # mode, length
  target/release/sccrun -n 1 -- valgrind --tool=callgrind --callgrind-out-file="$out/$1.$2" \
    "$out/testall" "$1" "$2" >/dev/null 2>&1
  grep -h '^summary:' "$out/$1.$2" | awk '{print $2}'
}
# mode, short length, long length, unit
for spec in "idle 1000 3000 poll" "stream 100 300 window"; do
  set -- $spec
  a=$(count "$1" "$2"); b=$(count "$1" "$3")
  echo "$1 $(( (b - a) / ($3 - $2) )) instructions per $4"
done
