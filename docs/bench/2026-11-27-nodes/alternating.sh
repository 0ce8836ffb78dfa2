#!/bin/bash
# Alternating A/B launches: old build, new build, raw Open MPI (gateways' mpirun flags).
A="--patterns latency,bandwidth --sizes 8,1048576 --reps 10 --warmup 2"
f=/tmp/ab/new-2/build/openmpi/pt2pt
for i in 1 2 3 4 5 6; do
  echo "LOAD $i $(cat /proc/loadavg)"
  for v in old new mpi; do
    case $v in
      old) b=/tmp/sccemu-base/target/release; out=$($b/sccrun --nodes 2 -n 2 -- $b/examples/node_pingpong $A 2>&1);;
      new) b=/work/wt-nodes/target/release; out=$($b/sccrun --nodes 2 -n 2 -- $b/examples/node_pingpong $A 2>&1);;
      mpi) out=$(mpirun.openmpi -np 2 --oversubscribe --bind-to none --mca btl self,tcp --allow-run-as-root $f $A 2>&1);;
    esac
    echo "$out" | grep ROW | sed "s/^/$v $i /"
  done
done
