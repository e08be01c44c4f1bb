#!/usr/bin/env bash
# The in-memory cluster's DescribeConfigs against a real Kafka broker's: starts
# `kafka-codec cluster` (target/debug, built by tools/ci-live.sh), then kafka-python's admin
# client creates a topic on both, overrides one config and describes the topic's and a
# broker's configs with synonyms; cluster_configs_vs_broker.py compares them config by config.
# Then cluster_create_topics_vs_broker.py sends the same CreateTopics v7 requests (topic
# configs good and bad, validate_only) to both and compares the answers byte for byte.
# Needs KAFKA_BROKER (tools/kafka-broker/broker.sh env) and the clients' venv.
#
#   bash tools/clients/cluster-configs-proof.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KAFKA_BROKER:?KAFKA_BROKER names the real broker (tools/kafka-broker/broker.sh env)}"
python=$(bash tools/clients/venv.sh)
log=$(mktemp)
target/debug/kafka-codec cluster --listen 127.0.0.1:0 2>"$log" &
cluster=$!
trap 'kill "$cluster" 2>/dev/null || true; rm -f "$log"' EXIT
bootstrap=
for _ in $(seq 100); do
    bootstrap=$(sed -n '1s/^kafka-codec cluster: bootstrap //p' "$log")
    [ -n "$bootstrap" ] && break
    sleep 0.1
done
[ -n "$bootstrap" ] || { cat "$log" >&2; echo "the cluster did not start" >&2; exit 1; }
"$python" tools/clients/cluster_configs_vs_broker.py "$KAFKA_BROKER" "$bootstrap"
"$python" tools/clients/cluster_create_topics_vs_broker.py "$KAFKA_BROKER" "$bootstrap"
