#!/bin/bash
# Instructions per message on each rank of stream2.c (2 ranks, 8 B, windows of 64), as
# callgrind counts them: each rank whole, at two lengths, the figure is the difference
# over the 12 800 messages between them. A rank's count includes its waiting, so the
# receiver's (rank 1, the busier one) is the figure to read. Run from the repository
# root; SCCRUN and SCCMPICC (default: this tree's release build) name another build to
# compare, OUT the directory for the profiles.
set -e
out=${OUT:-/tmp/round}
here=$(dirname "$0")
mkdir -p "$out"
if [ -z "$SCCRUN" ]; then
  CARGO_INCREMENTAL=0 cargo build -q --release -p sccemu-tools -p sccemu-mpi
fi
run=${SCCRUN:-target/release/sccrun}
${SCCMPICC:-target/release/sccmpicc} -O2 -o "$out/stream2" "$here/stream2.c"
for n in 100 300; do
  rm -f "$out"/cg.$n.*
  "$run" -n 2 -- valgrind --tool=callgrind --callgrind-out-file="$out/cg.$n.%q{SCCEMU_RANK}" "$out/stream2" $n 2>/dev/null
done
count() { grep -h '^summary:' "$out/cg.$1.$2" | awk '{print $2}'; }
echo "sender (rank 0)   $(( ($(count 300 0) - $(count 100 0)) / 12800 )) instructions per message"
echo "receiver (rank 1) $(( ($(count 300 1) - $(count 100 1)) / 12800 )) instructions per message"
