#!/usr/bin/env bash
# Instructions per operation for every benchmark case, both crates, decode and encode,
# counted by callgrind: independent of the machine's load, so they can be quoted beside
# criterion's medians on a shared machine.
#
# Each count is (Ir of `profile CASE OP WHO 1+N`) - (Ir of `profile CASE OP WHO 1`), divided
# by N (N = 100 by default: the runs with 101 and 1 operations). `profile` runs one warm-up
# operation before its count, so the case's setup, the warm-up and the first operation are in
# both runs and cancel out.
#
# Usage: benches/callgrind.sh [CASE...]      (default: every case; `profile list` names them)
# Environment:
#   OPS        N, operations counted per case (default 100)
#   OPS_LARGE  N for the 2,000-topic Metadata case, whose one decode is ~10^8 instructions
#              (default 10; counts are exact, so fewer operations lose nothing but noise
#              from allocator state, which is small at this size)
#   CARGO_TARGET_DIR  as for cargo (default: target/ of the workspace)
# Prints a markdown table; ratio = kafka-protocol / kafka-codec (above 1: we run fewer
# instructions). Op `encode-segmented` is kafka-codec's `Message::encode_segments` (large
# `bytes`/`records` values shared, not copied) against kafka-protocol's encode. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
OPS=${OPS:-100}
OPS_LARGE=${OPS_LARGE:-10}
target=${CARGO_TARGET_DIR:-target}
cargo build --quiet --profile bench -p kafka-codec-bench --example profile
bin="$target/release/examples/profile"
if [ $# -gt 0 ]; then cases=("$@"); else mapfile -t cases < <("$bin" list); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Total instructions of one run.
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$bin" "$@" 2>"$work/log" >/dev/null \
    || { cat "$work/log" >&2; echo "callgrind.sh: profile $* failed" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/log"
}

per_op() { # CASE OP WHO N
  local base more
  base=$(ir "$1" "$2" "$3" 1)
  more=$(ir "$1" "$2" "$3" $((1 + $4)))
  echo $(((more - base) / $4))
}

echo "| case | op | N | kafka-codec Ir/op | kafka-protocol Ir/op | ratio (kp/ours) | kafka-codec Ir/partition | kafka-protocol Ir/partition |"
echo "|---|---|--:|--:|--:|--:|--:|--:|"
for case in "${cases[@]}"; do
  n=$OPS
  parts=""
  if [[ $case =~ _([0-9]+)x([0-9]+)x[0-9]+$ ]]; then
    parts=$((BASH_REMATCH[1] * BASH_REMATCH[2]))
    [ "$parts" -gt 10000 ] && n=$OPS_LARGE
  fi
  for op in decode encode encode-segmented; do
    ours=$(per_op "$case" "$op" kafka-codec "$n")
    # The segmented encode is compared with kafka-protocol's (only) encode.
    theirs=$(per_op "$case" "${op%-segmented}" kafka-protocol "$n")
    ratio=$(python3 -c "print(f'{$theirs / $ours:.2f}')")
    if [ -n "$parts" ]; then
      pp_ours=$(python3 -c "print(f'{$ours / $parts:.0f}')")
      pp_theirs=$(python3 -c "print(f'{$theirs / $parts:.0f}')")
    else
      pp_ours="" pp_theirs=""
    fi
    echo "| $case | $op | $n | $ours | $theirs | $ratio | $pp_ours | $pp_theirs |"
  done
done
