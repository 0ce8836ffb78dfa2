#!/bin/bash
# Instructions per 8 B RMA operation on rank 0 (2 cores), with callgrind: each program
# runs each op at 10000 and 20000 iterations; the cost is the difference of rank 0's
# totals over 10000, counting only the function that holds the loop (rma_loop in both
# programs, --toggle-collect): the waits at start-up and in barriers spin for a number
# of rounds that differs from run to run, a few instructions per op of noise when they
# were counted (docs/bench/2026-11-27-mpirma2). Copied from docs/bench/2026-11-27-mpirma3,
# unchanged but for this line. Run from the repository root after
#   CARGO_INCREMENTAL=0 cargo build --release -p sccemu-tools -p sccemu-mpi --bins \
#     --example rma_cost --example rma_cost_window
# lib: capi/mpi/examples/rma_cost.c through the MPI library; native: rma_cost.rs (the
# epoch API); window: rma_cost_window.rs (the bare sccemu::Window calls; no slock or
# alock).
# BIN (default target/release) is where sccrun, sccmpicc and the examples are: a copy
# of another build's measures that build (the "before" column was measured so).
# Prints "program op instructions-per-op".
set -e
bin=${BIN:-target/release}
out=${OUT:-/tmp/rma_cost}
mkdir -p "$out"
"$bin/sccmpicc" -O2 capi/mpi/examples/rma_cost.c -o "$out/rma_cost_c"
for p in ${PROGS:-lib native}; do
  case $p in
    lib) prog=$out/rma_cost_c; only=rma_loop;;
    native) prog=$bin/rma_cost; [ -x "$prog" ] || prog=$bin/examples/rma_cost; only='*rma_loop*';;
    # rma_cost_window.rs has no rma_loop: its whole run counts, with the start-up's noise.
    window) prog=$bin/rma_cost_window; [ -x "$prog" ] || prog=$bin/examples/rma_cost_window; only=;;
  esac
  for op in ${OPS:-put get fop cas lock slock alock}; do
    declare -A tot
    for n in 10000 20000; do
      d=$out/$p-$op-$n; rm -rf "$d"; mkdir -p "$d"
      "$bin/sccrun" -n 2 -- valgrind --tool=callgrind ${only:+--toggle-collect="$only"} \
        --callgrind-out-file="$d/cg.%q{SCCEMU_RANK}" "$prog" "$op" "$n" >/dev/null 2>"$d/err"
      tot[$n]=$(grep -h '^summary:\|^totals:' "$d/cg.0" | head -1 | awk '{print $2}')
    done
    echo "$p $op $(( (${tot[20000]} - ${tot[10000]}) / 10000 ))"
  done
done
