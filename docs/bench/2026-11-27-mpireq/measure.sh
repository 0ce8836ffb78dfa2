#!/bin/bash
# Instructions per halo step (../2026-11-27-halo-small/step.c: 4 irecv, 4 isend, waitall,
# one rank, its own neighbour) and per 8 B send + receive to oneself (self.c there), as
# callgrind counts them: the whole rank at two lengths, the figure is the difference.
# Run from the repository root. Builds the library archive too: `--bins` alone leaves
# target/release/libsccmpi.a as it was, and sccmpicc links that archive.
set -e
out=${OUT:-/tmp/mpireq}
src=$(dirname "$0")/../2026-11-27-halo-small
mkdir -p "$out"
CARGO_INCREMENTAL=0 cargo build -q --release -p sccemu-tools -p sccemu-mpi
target/release/sccmpicc -O2 -o "$out/step" "$src/step.c"
target/release/sccmpicc -O2 -o "$out/self" "$src/self.c"
count() { # program, rounds
  target/release/sccrun -n 1 -- valgrind --tool=callgrind --callgrind-out-file="$out/$1.$2" "$out/$1" "$2" 2>/dev/null
  grep -h '^summary:' "$out/$1.$2" | awk '{print $2}'
}
a=$(count step 1000); b=$(count step 3000)
echo "step $(( (b - a) / 2000 )) instructions per step"
a=$(count self 10000); b=$(count self 30000)
echo "self $(( (b - a) / 20000 )) instructions per send + receive"
