#!/bin/bash
# Wall-clock figures of benches/mpi/pt2pt.c (8 B to 64 KiB: latency, streaming
# bandwidth) and halo.c (halo-p2p, 2 and 4 ranks) on sccemu's MPI library, built from
# this tree and from another (BASE: a checkout whose release build is done), beside
# MPICH and Open MPI, interleaved: ROUNDS passes (default 3), each running every
# variant once. Each ROW line is the program's own: pattern, bytes, reps, median, p10,
# p90 (µs per message or per step). Run from the repository root on an idle machine.
set -e
out=${OUT:-/tmp/round-timed}
rounds=${ROUNDS:-3}
base=${BASE:?BASE names the checkout to compare}
mkdir -p "$out"
for p in pt2pt halo; do
  target/release/sccmpicc -O2 -o "$out/${p}_new" "benches/mpi/$p.c"
  "$base/target/release/sccmpicc" -O2 -o "$out/${p}_base" "benches/mpi/$p.c"
  mpicc.mpich -O2 -o "$out/${p}_mpich" "benches/mpi/$p.c" 2>/dev/null
  mpicc.openmpi -O2 -o "$out/${p}_ompi" "benches/mpi/$p.c" 2>/dev/null
done
run() { # variant, ranks, program, arguments...
  local v=$1 n=$2 p=$3; shift 3
  case $v in
    new) target/release/sccrun -n "$n" -- "$out/${p}_new" "$@" ;;
    base) "$base/target/release/sccrun" -n "$n" -- "$out/${p}_base" "$@" ;;
    mpich) mpirun.mpich -np "$n" "$out/${p}_mpich" "$@" ;;
    ompi) mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl vader,self -np "$n" "$out/${p}_ompi" "$@" 2>/dev/null ;;
  esac | grep '^ROW' | sed "s/^/$v $n /"
}
P2P="--patterns latency,bandwidth --sizes 8,64,4096,65536 --reps 20 --warmup 3 --inner 1000"
HALO="--patterns halo-p2p --sizes 16,4096,65536 --reps 20 --warmup 3 --inner 300"
for r in $(seq "$rounds"); do
  for v in base new mpich ompi; do
    run $v 2 pt2pt $P2P
    run $v 2 halo $HALO
    run $v 4 halo $HALO
  done
done | tee "$out/rows.txt"
