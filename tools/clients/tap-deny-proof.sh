#!/usr/bin/env bash
# The policy proof: `kafka-codec tap --deny-topic 'PREFIX-denied*'` in front of the broker at
# $KAFKA_BROKER, and two real clients through it, a tap and a log each: librdkafka
# (confluent-kafka, in the venv of venv.sh; deny_proof.py) and Java kafka-clients (java/,
# DenyProof): a denied topic's records and fetches get TOPIC_AUTHORIZATION_FAILED while the
# allowed topic's go through, in the same requests where the client batches them (the tap
# splits them), and none reaches the broker; then each tap's log is checked (every frame
# decoded, every request answered, each denial logged, the expected splits and answers).
# Run by tools/ci-live.sh (step `tap_deny`); by hand, with a broker running:
#
#   KAFKA_BROKER=127.0.0.1:19092 bash tools/clients/tap-deny-proof.sh [CLIENT...]
#
# Logs: target/tap-deny-proof/CLIENT.jsonl (kept), the tap's stderr next to them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
: "${KAFKA_BROKER:?KAFKA_BROKER is not set (tools/kafka-broker/broker.sh start prints it)}"
out=$repo/target/tap-deny-proof
t0=$(date +%s)
say() { printf 'tap-deny-proof: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

clients=(confluent-kafka java)
[ $# -gt 0 ] && clients=("$@")

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
tap_build "${clients[@]}"
prefix=deny-$(date +%s)
trap tap_stop EXIT

for client in "${clients[@]}"; do
    log=$out/$client.jsonl
    tap_start "$out/$client.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" \
        --rewrite-brokers --deny-topic "$prefix-denied*" --deny-topic "$prefix-jdenied*" \
        --log "$log" || exit 1
    case $client in
        java)
            java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -cp "$here/java/target/java-clients.jar:$(cat "$here/java/target/classpath")" \
                kafkacodec.clients.DenyProof "$tap_address" "$KAFKA_BROKER" "$prefix"
            expect=(--expect "Produce split" --expect "Fetch split") ;;
        *)
            (cd "$here" && "$py" deny_proof.py run "$tap_address" "$KAFKA_BROKER" "$prefix")
            expect=(--expect "Produce answered" --expect "Fetch split" --expect "CreateTopics answered") ;;
    esac
    tap_wait_closed "$log"
    tap_stop
    say "$client: done, $(wc -l <"$log") log lines"
    python3 "$here/deny_proof.py" check "$log" "$prefix" "${expect[@]}"
done
say "checked"
