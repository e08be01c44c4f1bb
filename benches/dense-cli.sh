#!/usr/bin/env bash
# Peak RSS of `kafka-codec decode` on the dense frames of issue 11, next to the peak RSS of
# the library decoding the same frame (`examples/dense_memory.rs one`), both measured by
# `/usr/bin/time -v` (maximum resident set size). A second table: `kafka-codec encode` of the
# JSON that decode printed, next to the JSON's size plus the library's decode peak (issue 11's
# goal for encode is at most twice that sum).
#
# Usage: benches/dense-cli.sh [SIZE_MIB...]     (default: 1 10; add 50 for issue 11's goal)
# Environment:
#   CLI_MEMORY_CAP_KIB  virtual memory cap for the CLI (`ulimit -v`, default 8 GiB, so that a
#                       decode that would take the shared machine's memory aborts instead;
#                       "aborted" is then reported with the RSS reached)
#   CARGO_TARGET_DIR    as for cargo
#   ENCODE_CLI          the `kafka-codec` binary whose encode is measured (default the one
#                       built here; point it at another checkout's build for a before/after)
# Prints a markdown table; the CLI's JSON goes to /dev/null.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "dense-cli.sh: /usr/bin/time (GNU time) is needed" >&2; exit 1; }
target=${CARGO_TARGET_DIR:-target}
cap=${CLI_MEMORY_CAP_KIB:-$((8 * 1024 * 1024))}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 10)
cargo build --quiet --release -p kafka-codec-cli
cargo build --quiet --profile bench -p kafka-codec-bench --example dense_memory
cli="$target/release/kafka-codec"
lib="$target/release/examples/dense_memory"
encode_cli=${ENCODE_CLI:-$cli}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Maximum RSS in bytes from `time -v` output.
rss() { sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$1" | awk '{print $1 * 1024}'; }
ratio() { python3 -c "print(f'{$1 / $2:.1f}')"; }
human() { python3 -c "b=$1; print(f'{b/1e9:.2f} GB' if b >= 1e9 else f'{b/1e6:.1f} MB')"; }

echo "| shape | frame | CLI peak RSS | CLI wall | library peak RSS | CLI / library |"
echo "|---|--:|--:|--:|--:|--:|"
for mib in "${sizes[@]}"; do
  size=$((mib * 1024 * 1024))
  for shape in list_groups_response_v3 metadata_request_v9; do
    frame="$work/$shape.bin"
    "$lib" write "$shape" "$size" "$frame" 2>/dev/null
    case $shape in
      list_groups_response_v3) args=(decode response --api-key 16 --api-version 3 "$frame") ;;
      metadata_request_v9) args=(decode request "$frame") ;;
    esac
    status=ok
    ( ulimit -v "$cap"; /usr/bin/time -v "$cli" "${args[@]}" >/dev/null 2>"$work/cli.err" ) \
      2>"$work/cli.time" || status=aborted
    # `time -v` writes to stderr after the command's own; both may be in either file.
    cat "$work/cli.err" >>"$work/cli.time"
    cli_rss=$(rss "$work/cli.time")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/cli.time")
    /usr/bin/time -v "$lib" one "$shape" "$size" >/dev/null 2>"$work/lib.time"
    lib_rss=$(rss "$work/lib.time")
    note=""
    [ $status = ok ] || note=" ($status at the ${cap} KiB cap: $(grep -m1 -o 'memory allocation of [0-9]* bytes failed' "$work/cli.time" || echo 'see stderr'))"
    echo "| $shape | $mib MiB | $(human "$cli_rss") ($(ratio "$cli_rss" "$size")×)$note | $wall | $(human "$lib_rss") ($(ratio "$lib_rss" "$size")×) | $(ratio "$cli_rss" "$lib_rss") |"
    rm -f "$frame"
  done
done

echo
echo "| shape | frame | JSON | encode peak RSS | JSON + library decode peak | encode / (JSON + library) |"
echo "|---|--:|--:|--:|--:|--:|"
for mib in "${sizes[@]}"; do
  size=$((mib * 1024 * 1024))
  for shape in list_groups_response_v3 metadata_request_v9; do
    frame="$work/$shape.bin"
    json="$work/$shape.json"
    "$lib" write "$shape" "$size" "$frame" 2>/dev/null
    case $shape in
      list_groups_response_v3)
        "$cli" decode response --api-key 16 --api-version 3 "$frame" >"$json"
        args=(encode response "$json") ;;
      metadata_request_v9)
        "$cli" decode request "$frame" >"$json"
        args=(encode request "$json") ;;
    esac
    rm -f "$frame"
    json_size=$(stat -c %s "$json")
    status=ok
    ( ulimit -v "$cap"; /usr/bin/time -v "$encode_cli" "${args[@]}" >/dev/null 2>"$work/cli.err" ) \
      2>"$work/cli.time" || status=aborted
    cat "$work/cli.err" >>"$work/cli.time"
    cli_rss=$(rss "$work/cli.time")
    /usr/bin/time -v "$lib" one "$shape" "$size" >/dev/null 2>"$work/lib.time"
    lib_rss=$(rss "$work/lib.time")
    budget=$((json_size + lib_rss))
    note=""
    [ $status = ok ] || note=" ($status at the ${cap} KiB cap)"
    echo "| $shape | $mib MiB | $(human "$json_size") | $(human "$cli_rss")$note | $(human "$budget") | $(ratio "$cli_rss" "$budget") |"
    rm -f "$json"
  done
done
