#!/bin/bash
# node_pingpong's bandwidth window allocated once per operation (old, 3a3bc0a) or once
# per size (new, b1e13d7): sccrun --nodes 2 -n 2, bandwidth, 3 rounds alternating.
cd /work/wt-bignodes
ARGS="--patterns bandwidth --sizes 1048576,16777216 --reps 10 --warmup 2 --inner 25"
for round in 1 2 3; do
  for v in old new; do
    echo "round $round $v load $(cut -d' ' -f1-3 /proc/loadavg)"
    timeout 300 target/release/sccrun --nodes 2 -n 2 -- /tmp/bignodes/pingpong-$v $ARGS 2>&1 | grep ROW
  done
done
