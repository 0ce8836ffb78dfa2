#!/bin/bash
# usage: run.sh LABEL SCCRUN PROG N SIZES ROUNDS
label=$1; sccrun=$2; prog=$3; n=$4; sizes=$5
load=$(cut -d' ' -f1 /proc/loadavg)
out=$(timeout 300 $sccrun -n $n -- $prog --patterns many-to-one --sizes $sizes --reps 10 --warmup 2 --inner 5 2>&1 | grep ROW)
echo "$out" | while read -r l; do echo "$label n=$n load=$load $l"; done
