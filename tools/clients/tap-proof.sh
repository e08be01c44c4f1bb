#!/usr/bin/env bash
# The tap proof: `kafka-codec tap --rewrite-brokers` in front of the broker at $KAFKA_BROKER,
# and four real clients through it, one tap (and one log) each: librdkafka (confluent-kafka),
# kafka-python, aiokafka (tap_workload.py, in the venv of venv.sh) and Java kafka-clients
# (java/, built here with Maven). Each creates a topic, produces with every codec it supports,
# consumes in a group, commits, lists and describes. Then check_tap_log.py checks every log
# (every frame decoded, every byte forwarded as received, and, since the taps run with
# --records, every produced record found in the expanded Produce and Fetch records) and prints
# the frames per API and client. Run by tools/ci-live.sh (step `tap`); by hand, with a broker running:
#
#   KAFKA_BROKER=127.0.0.1:19092 bash tools/clients/tap-proof.sh [CLIENT...]
#
# Logs: target/tap-proof/CLIENT.jsonl (kept), the tap's stderr next to them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
: "${KAFKA_BROKER:?KAFKA_BROKER is not set (tools/kafka-broker/broker.sh start prints it)}"
out=$repo/target/tap-proof
t0=$(date +%s)
say() { printf 'tap-proof: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

clients=(confluent-kafka kafka-python aiokafka java)
[ $# -gt 0 ] && clients=("$@")

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
tap_build "${clients[@]}"
say "built the CLI, the venv and the Java client"
# Topics and groups of this run only, so a rerun against the same broker starts clean.
prefix=tap-$(date +%s)
trap tap_stop EXIT

logs=()
for client in "${clients[@]}"; do
    log=$out/$client.jsonl
    tap_start "$out/$client.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" \
        --rewrite-brokers --records --log "$log" || exit 1
    run_workload "$client" "$tap_address" "$prefix"
    tap_wait_closed "$log"
    tap_stop
    say "$client: done, $(wc -l <"$log") log lines"
    logs+=("$client=$log")
done
python3 "$here/check_tap_log.py" "${logs[@]}"
say "checked"
