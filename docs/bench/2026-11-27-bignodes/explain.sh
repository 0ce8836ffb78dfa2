#!/bin/bash
# Where the time of a 16 MiB message across nodes goes: one-way latency (node_pingpong,
# blocking send/recv) across 2 nodes with the default 64 KiB ring and larger rings, and
# on one node by the ring (single copy off) and by the single copy; 3 rounds alternating.
cd /work/wt-bignodes
EX=target/release/examples/node_pingpong
ARGS="--patterns latency --sizes 4194304,4227072,16777216 --reps 10 --warmup 2 --inner 1"
for round in 1 2 3; do
  echo "round $round load $(cat /proc/loadavg)"
  for ring in 65536 1048576 4194304; do
    echo "== 2 nodes, --ring $ring"
    timeout 300 target/release/sccrun --nodes 2 -n 2 --ring $ring -- $EX $ARGS 2>&1 | grep ROW
  done
  echo "== 1 node, ring path (SCCEMU_SINGLE_COPY=off), --ring 65536"
  SCCEMU_SINGLE_COPY=off timeout 300 target/release/sccrun -n 2 -- $EX $ARGS 2>&1 | grep ROW
  echo "== 1 node, single copy"
  timeout 300 target/release/sccrun -n 2 -- $EX $ARGS 2>&1 | grep ROW
done
echo "end load $(cat /proc/loadavg)"
