#!/usr/bin/env bash
# Live tests against a real Kafka broker (tests/live_broker.rs): start a single KRaft node on
# 127.0.0.1 (tools/kafka-broker/broker.sh), run the tests against it, always stop it.
# Exits non-zero if the broker does not start or a test fails. Meant for .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
broker=tools/kafka-broker/broker.sh
t0=$(date +%s)

# Build the test first, so the broker does not idle through a compile.
cargo test --test live_broker --no-run

cleanup() {
    bash "$broker" stop || true
    echo "ci-broker: ${SECONDS}s in all"
}
trap cleanup EXIT

# A broker left over from an interrupted run of this checkout would hold the ports.
bash "$broker" stop
SECONDS=$(($(date +%s) - t0))
bash "$broker" start >/dev/null
set -a
# shellcheck disable=SC1090
. "$(bash "$broker" envfile)"
set +a
echo "ci-broker: KAFKA_BROKER=$KAFKA_BROKER KAFKA_CONTROLLER=$KAFKA_CONTROLLER (up after ${SECONDS}s)"
if ! cargo test --test live_broker -- --nocapture; then
    echo "ci-broker: live tests failed; broker log: target/kafka-broker/logs/server.log" >&2
    tail -n 30 target/kafka-broker/logs/server.log >&2 || true
    exit 1
fi
