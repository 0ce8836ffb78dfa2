#!/bin/bash
# usage: count-run.sh LABEL SCCRUN PROG N SIZE
# One many-to-one run under `perf record` on the futex tracepoints and sched_switch;
# prints, for the whole job and for rank 0 (the receiver; the lowest pt2pt pid, since
# sccrun starts the ranks in order), futex wake calls (FUTEX_WAKE), futex wait calls
# (FUTEX_WAIT), futex_waitv calls (sleeps on two bells) and context switches.
label=$1; sccrun=$2; prog=$3; n=$4; size=$5
data=$(mktemp /tmp/count-run.XXXXXX)
load=$(cut -d' ' -f1 /proc/loadavg)
row=$(timeout 300 perf record -q -o "$data" -e syscalls:sys_enter_futex -e syscalls:sys_enter_futex_waitv \
    -e sched:sched_switch -- $sccrun -n $n -- $prog --patterns many-to-one --sizes $size --reps 10 \
    --warmup 2 --inner 5 2>/dev/null | grep ROW)
perf script -i "$data" -F comm,pid,event,trace 2>/dev/null | python3 -c '
import re, sys, collections
label, n, load, row = sys.argv[1:5]
by = collections.Counter()
for line in sys.stdin:
    f = line.split()
    if len(f) < 3 or f[0] != "pt2pt":
        continue
    pid, ev = int(f[1]), f[2]
    if "futex_waitv" in ev:
        k = "waitv"
    elif "sys_enter_futex:" in ev:
        op = int(re.search(r"op: (0x[0-9a-f]+)", line).group(1), 16) & 127
        k = {0: "wait", 9: "wait", 1: "wake", 10: "wake"}.get(op, "other")
    elif "sched_switch" in ev:
        k = "switch"
    else:
        continue
    by[pid, k] += 1
pids = sorted({p for p, _ in by})
ks = ("wake", "wait", "waitv", "switch")
job = " ".join(f"{k} {sum(by[p, k] for p in pids)}" for k in ks)
r0 = " ".join(f"{k} {by[pids[0], k]}" for k in ks) if pids else ""
print(f"{label} n={n} load={load} {row} | job: {job} | rank0: {r0}")
' "$label" "$n" "$load" "$row"
rm -f "$data"
