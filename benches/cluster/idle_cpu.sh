#!/usr/bin/env bash
# CPU time and voluntary context switches of an idle `kafka-codec cluster`: started, left
# 2 s to come up, then utime+stime (/proc/PID/stat) and voluntary_ctxt_switches summed over
# its threads (/proc/PID/task/*/status) read before and after SECONDS of idling. One line
# per run; run it on two binaries in turn (interleaved) to compare them.
#
#   bash benches/cluster/idle_cpu.sh BIN [SECONDS] [CLUSTER ARGS...]
#   bash benches/cluster/idle_cpu.sh target/debug/kafka-codec 60 --controllers 3
set -euo pipefail
bin=$1
secs=${2:-60}
shift $(($# < 2 ? $# : 2))
"$bin" cluster --listen 127.0.0.1:0 "$@" 2>/dev/null &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
sleep 2
tick=$(getconf CLK_TCK)
cpu_ms() { awk -v t="$tick" '{print ($14 + $15) * 1000 / t}' "/proc/$pid/stat"; }
switches() { cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
cpu0=$(cpu_ms)
ctx0=$(switches)
sleep "$secs"
cpu1=$(cpu_ms)
ctx1=$(switches)
echo "cpu_ms=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {print b - a}') voluntary_ctxt=$((ctx1 - ctx0)) load=$(cut -d' ' -f1 /proc/loadavg)"
