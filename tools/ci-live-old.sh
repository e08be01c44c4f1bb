#!/usr/bin/env bash
# The proof with old protocol versions (issue 18 item 4), apart from ci-live.sh because it
# needs Kafka 3.9.1 instead of the pinned release: real clients pinned to the versions Kafka 4
# dropped, and a ZooKeeper-mode broker's own inter-broker traffic, each through
# `kafka-codec tap`, with every frame decoded. Each step starts and stops its own brokers
# (tools/kafka-broker/broker.sh --kafka 3.9 [--zookeeper]), one at a time; run after
# ci-live.sh has stopped the pinned one, so no two brokers share the two cores.
#
# It passes only once the crate reads every version Kafka 3.9 speaks (the union of 3.9.1's
# and 4.4.0's schemas): before that the tap logs those frames as undecodable and the checks
# say which.
#
# Meant for .ci/run; by hand: `bash tools/ci-live-old.sh [STEP...]` runs only the named steps.
set -euo pipefail
cd "$(dirname "$0")/.."
broker=(bash tools/kafka-broker/broker.sh --kafka 3.9)
t0=$(date +%s)
say() { printf 'ci-live-old: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

steps=(tap_old tap_inter_broker)
# kafka-python with api_version (0, 8, 2), (0, 9) and (0, 10, 1), librdkafka with
# api.version.request=false and broker.version.fallback=0.9.0, Java kafka-clients 0.9.0.1,
# 0.10.0.1 and 0.10.2.2, through a tap in front of a 3.9 KRaft node
# (tools/clients/tap-proof-old.sh); then the old clients' results against the broker and
# against the cluster, compared (tools/clients/compare_old_clients.py).
step_tap_old() {
    # A broker left over from an interrupted run of this checkout would hold the ports. (No
    # `set -e` in here: the step runs as a condition.)
    "${broker[@]}" stop || return 1
    "${broker[@]}" start >/dev/null || return 1
    local status=0
    (
        set -a
        # shellcheck disable=SC1090
        . "$("${broker[@]}" envfile)"
        set +a
        bash tools/clients/tap-proof-old.sh
    ) || status=$?
    # The old clients of cluster/tests/old_clients.rs (kafka-python at api_version (0, 9) and
    # (0, 10), kafka-clients 0.10.2.2 and 0.11.0.3) against this broker and against
    # `kafka-codec cluster --as-version 3.9`, their observable results compared (about 30 s).
    (
        set -a
        # shellcheck disable=SC1090
        . "$("${broker[@]}" envfile)"
        set +a
        python3 tools/clients/compare_old_clients.py "$KAFKA_BROKER" \
            --python "$(bash tools/clients/venv.sh)"
    ) || status=$?
    if [ $status != 0 ]; then
        say "broker log: target/kafka-broker-3.9/logs/server.log" >&2
        tail -n 30 target/kafka-broker-3.9/logs/server.log >&2 || true
    fi
    "${broker[@]}" stop
    return $status
}
# A ZooKeeper-mode 3.9 broker whose controller reaches it through a tap: LeaderAndIsr,
# UpdateMetadata, StopReplica and ControlledShutdown at three inter-broker protocol versions
# (tools/clients/tap-proof-inter-broker.sh, which starts and stops the broker each round).
step_tap_inter_broker() { bash tools/clients/tap-proof-inter-broker.sh; }

[ $# -gt 0 ] && steps=("$@")

# Build first, so no broker idles through a compile.
cargo build -q --bin kafka-codec # no -p: the features of the other CLI builds (tools/ci-live.sh)
bash tools/clients/venv.sh >/dev/null
"${broker[@]}" fetch
say "built the CLI and the venv, fetched Kafka 3.9.1"

cleanup() {
    "${broker[@]}" stop || true
    "${broker[@]}" --zookeeper stop || true
    say "done"
}
trap cleanup EXIT

failed=()
for step in "${steps[@]}"; do
    say "step $step"
    started=$(date +%s)
    if ! "step_$step"; then
        failed+=("$step")
    fi
    say "step $step: $(($(date +%s) - started))s"
done
if [ ${#failed[@]} -gt 0 ]; then
    say "failed: ${failed[*]}" >&2
    exit 1
fi
