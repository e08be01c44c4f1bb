#!/usr/bin/env bash
# The policy proof: `kafka-codec tap --deny-topic 'PREFIX-denied*'` in front of the broker at
# $KAFKA_BROKER, and librdkafka (confluent-kafka, in the venv of venv.sh) through it
# (deny_proof.py): a denied topic's records and fetches get TOPIC_AUTHORIZATION_FAILED while
# the allowed topic's go through in the same requests, and none reaches the broker; then the
# tap's log is checked (every frame decoded, every request answered, each denial logged).
# Run by tools/ci-live.sh (step `tap_deny`); by hand, with a broker running:
#
#   KAFKA_BROKER=127.0.0.1:19092 bash tools/clients/tap-deny-proof.sh
#
# Log: target/tap-deny-proof/confluent-kafka.jsonl (kept), the tap's stderr next to it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
: "${KAFKA_BROKER:?KAFKA_BROKER is not set (tools/kafka-broker/broker.sh start prints it)}"
out=$repo/target/tap-deny-proof
t0=$(date +%s)
say() { printf 'tap-deny-proof: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
tap_build confluent-kafka
prefix=deny-$(date +%s)
trap tap_stop EXIT

log=$out/confluent-kafka.jsonl
tap_start "$out/confluent-kafka.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" \
    --rewrite-brokers --deny-topic "$prefix-denied*" --log "$log" || exit 1
(cd "$here" && "$py" deny_proof.py run "$tap_address" "$KAFKA_BROKER" "$prefix")
tap_wait_closed "$log"
tap_stop
say "confluent-kafka: done, $(wc -l <"$log") log lines"
python3 "$here/deny_proof.py" check "$log" "$prefix"
say "checked"
