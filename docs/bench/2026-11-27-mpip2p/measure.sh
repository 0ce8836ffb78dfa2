#!/bin/bash
# Instructions per call pattern on one rank, as callgrind counts them (the whole rank
# at two lengths, the figure is the difference), for sccemu's MPI library and Open MPI:
#   step   ../2026-11-27-halo-small/step.c: 4 irecv, 4 isend to oneself, waitall (per step)
#   self   ../2026-11-27-halo-small/self.c: 8 B send to oneself, then its recv (per pair)
#   stream stream.c: 64 irecv, 64 isend to oneself, waitall of 128 (per message: its
#          isend, its irecv and their two requests' share of the waitall)
#   sendfirst  step.c built with -DSENDS_FIRST=1: the 4 isend before the 4 irecv (per step)
# Run from the repository root. Builds the library archive that sccmpicc links
# (`--bins` alone would leave target/release/libsccmpi.a as it was).
set -e
out=${OUT:-/tmp/mpip2p}
here=$(dirname "$0")
halo=$here/../2026-11-27-halo-small
mkdir -p "$out"
CARGO_INCREMENTAL=0 cargo build -q --release -p sccemu-tools -p sccemu-mpi
for p in "$halo/step.c" "$halo/self.c" "$here/stream.c"; do
  b=$(basename "$p" .c)
  target/release/sccmpicc -O2 -o "$out/${b}_scc" "$p"
  mpicc.openmpi -O2 -o "$out/${b}_ompi" "$p"
done
target/release/sccmpicc -O2 -DSENDS_FIRST=1 -o "$out/sendfirst_scc" "$halo/step.c"
mpicc.openmpi -O2 -DSENDS_FIRST=1 -o "$out/sendfirst_ompi" "$halo/step.c"
count() { # program, library, length
  if [ "$2" = scc ]; then
    target/release/sccrun -n 1 -- valgrind --tool=callgrind --callgrind-out-file="$out/$1_$2.$3" "$out/$1_$2" "$3" 2>/dev/null
  else
    mpirun.openmpi --allow-run-as-root --mca btl vader,self -np 1 \
      valgrind --tool=callgrind --callgrind-out-file="$out/$1_$2.$3" "$out/$1_$2" "$3" 2>/dev/null
  fi
  grep -h '^summary:' "$out/$1_$2.$3" | awk '{print $2}'
}
# program, short length, long length, units per length, unit
for spec in "step 1000 3000 1 step" "self 10000 30000 1 send+recv" "stream 100 300 64 message" \
  "sendfirst 1000 3000 1 step"; do
  set -- $spec
  for lib in ${LIBS:-scc ompi}; do
    a=$(count "$1" $lib "$2"); b=$(count "$1" $lib "$3")
    echo "$1 $lib $(( (b - a) / (($3 - $2) * $4) )) instructions per $5"
  done
done
