#!/bin/bash
# Instructions per 8 B RMA operation on rank 0 (2 cores), with callgrind: each program
# runs each op at 10000 and 20000 iterations; the cost is the difference of rank 0's
# totals over 10000. Run from the repository root after
#   CARGO_INCREMENTAL=0 cargo build --release -p sccemu-tools -p sccemu-mpi --bins \
#     --example rma_cost --example rma_cost_window
# lib: capi/mpi/examples/rma_cost.c through the MPI library; native: rma_cost.rs (the
# epoch API); window: rma_cost_window.rs (the bare sccemu::Window calls).
set -e
out=${OUT:-/tmp/rma_cost}
mkdir -p "$out"
target/release/sccmpicc -O2 capi/mpi/examples/rma_cost.c -o "$out/rma_cost_c"
for p in ${PROGS:-lib native window}; do
  case $p in
    lib) bin=$out/rma_cost_c;;
    native) bin=target/release/examples/rma_cost;;
    window) bin=target/release/examples/rma_cost_window;;
  esac
  for op in ${OPS:-put get fop cas lock}; do
    declare -A tot
    for n in 10000 20000; do
      d=$out/$p-$op-$n; rm -rf "$d"; mkdir -p "$d"
      target/release/sccrun -n 2 -- valgrind --tool=callgrind \
        --callgrind-out-file="$d/cg.%q{SCCEMU_RANK}" "$bin" "$op" "$n" >/dev/null 2>"$d/err"
      tot[$n]=$(grep -h '^summary:\|^totals:' "$d/cg.0" | head -1 | awk '{print $2}')
    done
    echo "$p $op $(( (${tot[20000]} - ${tot[10000]}) / 10000 ))"
  done
done
