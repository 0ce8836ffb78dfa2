#!/bin/bash
# usage: ab-run.sh LABEL SCCRUN PROG N SIZES
# One many-to-one run of benches/mpi/pt2pt.c under SCCRUN -n N; prints its ROW lines
# with the label, the rank count and the 1-minute load average before the run.
label=$1; sccrun=$2; prog=$3; n=$4; sizes=$5
load=$(cut -d' ' -f1 /proc/loadavg)
out=$(timeout 300 $sccrun -n $n -- $prog --patterns many-to-one --sizes $sizes --reps 10 --warmup 2 --inner 5 2>&1 | grep ROW)
echo "$out" | while read -r l; do echo "$label n=$n load=$load $l"; done
