#!/bin/bash
# Instructions per halo-p2p step of 16 B (benches/mpi/halo.c's run_p2p: 4 irecv, 4 isend,
# waitall) on one rank, where all four neighbours are the rank itself: the library's
# per-message cost with no waiting. callgrind counts the whole rank at 1000 and 3000
# steps; the figure is the difference over 2000. Run from the repository root after
#   CARGO_INCREMENTAL=0 cargo build --release -p sccemu-tools -p sccemu-mpi --bins
set -e
out=${OUT:-/tmp/halo-small}
here=$(dirname "$0")
mkdir -p "$out"
target/release/sccmpicc -O2 -o "$out/step_scc" "$here/step.c"
mpicc.openmpi -O2 -o "$out/step_ompi" "$here/step.c"
for n in 1000 3000; do
  target/release/sccrun -n 1 -- valgrind --tool=callgrind --callgrind-out-file="$out/scc.$n" "$out/step_scc" $n 2>/dev/null
  mpirun.openmpi --allow-run-as-root --mca btl vader,self -np 1 \
    valgrind --tool=callgrind --callgrind-out-file="$out/ompi.$n" "$out/step_ompi" $n 2>/dev/null
done
for k in scc ompi; do
  a=$(grep -h '^summary:' "$out/$k.1000" | awk '{print $2}')
  b=$(grep -h '^summary:' "$out/$k.3000" | awk '{print $2}')
  echo "$k $(( (b - a) / 2000 )) instructions per step"
done
