#!/usr/bin/env bash
# The proof with a broker's own traffic (issue 18): Kafka 3.9.1 in ZooKeeper mode
# (tools/kafka-broker/broker.sh --kafka 3.9 --zookeeper, KAFKA_INTER_BROKER_PROXY=1), whose
# inter-broker listener is advertised at a `kafka-codec tap` in front of it. The controller
# reaches the broker, even itself, through that address, and the broker the controller; so
# the tap sees LeaderAndIsr and UpdateMetadata when inter_broker_workload.py creates a topic,
# StopReplica when it deletes it, and the broker's ControlledShutdown when it is stopped
# (cleanly, while the tap still runs). Once per inter-broker protocol version (IBPS below):
# the controller's request versions follow it. One ZooKeeper and one broker at a time, each
# started and stopped within its round.
#
# Then check_tap_log.py checks every log as for the clients (every frame decoded, every byte
# forwarded as received) and that each of those four APIs is in it at the version the IBP
# implies, and prints the versions seen. Run by tools/ci-live-old.sh (step `tap_inter_broker`);
# by hand, with nothing of broker.sh --zookeeper running:
#
#   bash tools/clients/tap-proof-inter-broker.sh [IBP...]      # default: 3.9 2.4 0.10.2
#
# Logs: target/tap-proof-inter-broker/ibp-IBP.jsonl (kept), the tap's stderr next to them, the
# broker's in target/kafka-broker-3.9-zk/logs (the last round's).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
out=$repo/target/tap-proof-inter-broker
broker=(bash "$repo/tools/kafka-broker/broker.sh" --kafka 3.9 --zookeeper)
t0=$(date +%s)
say() { printf 'tap-proof-inter-broker: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

# The versions each IBP makes the controller and the broker send, from Kafka 3.9.1's choice
# by IBP. 3.9 (the default, the newest) and 0.10.2 (the oldest whose UpdateMetadata carries
# listener names, which the separate inter-broker listener needs) are the ends; 2.4 is the
# first with flexible versions (KIP-482) in all four.
# shellcheck disable=SC2054 # the commas are inside the values
declare -A EXPECT=(
    [3.9]=LeaderAndIsr:7,UpdateMetadata:8,StopReplica:4,ControlledShutdown:3
    [2.4]=LeaderAndIsr:4,UpdateMetadata:6,StopReplica:2,ControlledShutdown:3
    [0.10.2]=LeaderAndIsr:0,UpdateMetadata:3,StopReplica:0,ControlledShutdown:1
)
ibps=(3.9 2.4 0.10.2)
[ $# -gt 0 ] && ibps=("$@")
for ibp in "${ibps[@]}"; do
    [ -n "${EXPECT[$ibp]:-}" ] || { echo "tap-proof-inter-broker: no expectations for IBP $ibp" >&2; exit 2; }
done

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
# shellcheck disable=SC2119 # no client of tap-proof.sh: the CLI and the venv only
tap_build
say "built the CLI and the venv"
cleanup() {
    "${broker[@]}" stop || true
    tap_stop
}
trap cleanup EXIT
# One left over from an interrupted run would hold the ports.
"${broker[@]}" stop

args=(--versions)
for ibp in "${ibps[@]}"; do
    log=$out/ibp-$ibp.jsonl
    started=$(date +%s%3N)
    # 3.9 is the broker's default: no setting, as a 3.9 cluster runs by default.
    ibp_setting=$ibp
    [ "$ibp" = 3.9 ] && ibp_setting=
    KAFKA_INTER_BROKER_PROXY=1 KAFKA_INTER_BROKER_PROTOCOL_VERSION=$ibp_setting \
        "${broker[@]}" start >/dev/null
    # shellcheck disable=SC1090
    . "$("${broker[@]}" envfile)"
    # Until the tap listens the controller's connections are refused and retried.
    tap_start "$out/ibp-$ibp.tap.err" --listen "$KAFKA_INTER_BROKER_ADVERTISED" \
        --upstream "$KAFKA_INTER_BROKER" --log "$log" || exit 1
    (cd "$here" && "$py" inter_broker_workload.py "$KAFKA_BROKER" "inter-broker-$ibp")
    # ControlledShutdown goes through the tap on the way down; the tap stops after the broker.
    "${broker[@]}" stop
    tap_wait_closed "$log"
    tap_stop
    ms=$(($(date +%s%3N) - started))
    say "IBP $ibp: start, workload and stop in $((ms / 1000)).$(printf %03d $((ms % 1000)))s, $(wc -l <"$log") log lines"
    args+=(--expect "${EXPECT[$ibp]}" "inter-broker/ibp-$ibp=$log")
done
python3 "$here/check_tap_log.py" "${args[@]}"
say "checked"
