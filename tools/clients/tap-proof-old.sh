#!/usr/bin/env bash
# The proof with old protocol versions (issue 18): `kafka-codec tap --rewrite-brokers
# --records` in front of a Kafka 3.9 broker at $KAFKA_BROKER (tools/kafka-broker/broker.sh
# --kafka 3.9), and real clients pinned to the versions Kafka 4 no longer speaks through it,
# one tap and one log per setting (old_workload.py says what each setting does):
# - kafka-python with api_version (0, 8, 2), (0, 9) and (0, 10, 1);
# - librdkafka (confluent-kafka) with api.version.request=false and
#   broker.version.fallback=0.9.0 (a fallback of 0.10.0 or later turns ApiVersions back on);
# - Java kafka-clients 0.9.0.1, 0.10.0.1 and 0.10.2.2 (java-old/: a Java client has no setting
#   that sends older versions than it knows, so old releases do).
# Each produces with every codec of the old message formats, consumes (in a group where its
# versions have one), commits, lists offsets and makes the admin calls its versions allow.
# Then check_tap_log.py checks every log as tap-proof.sh does (every frame decoded, every byte
# forwarded as received, every produced record found in the Produce requests and the Fetch
# responses) and that each setting's old versions are in its log (EXPECT below), and prints
# the versions each client sent. Run by tools/ci-live-old.sh (step `tap_old`); by hand, with a
# 3.9 broker running:
#
#   KAFKA_BROKER=127.0.0.1:19392 bash tools/clients/tap-proof-old.sh [SETTING...]
#
# Logs: target/tap-proof-old/SETTING.jsonl (kept), the tap's stderr next to them.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
: "${KAFKA_BROKER:?KAFKA_BROKER is not set (tools/kafka-broker/broker.sh --kafka 3.9 start prints it)}"
out=$repo/target/tap-proof-old
t0=$(date +%s)
say() { printf 'tap-proof-old: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

# What each setting must have sent, besides whatever else it sent: the versions that make it
# old (Kafka 4.4 reads none of Produce v0-v2, Fetch v0-v3, ListOffsets v0, OffsetCommit v0-v1,
# CreateTopics v0-v1, DeleteTopics v0), as measured against Kafka 3.9.1.
# shellcheck disable=SC2054 # the commas are inside the values
declare -A EXPECT=(
    [kafka-python-0.8.2]=Produce:0,Fetch:0,ListOffsets:0,OffsetCommit:1
    [kafka-python-0.9]=Produce:1,Fetch:1,ListOffsets:0,JoinGroup:0
    [kafka-python-0.10.1]=CreateTopics:0,Produce:2,Fetch:3,DeleteTopics:0
    [confluent-kafka-0.9.0]=Produce:1,Fetch:1,ListOffsets:0,JoinGroup:0
    [java-0.9.0.1]=Produce:1,Fetch:1,ListOffsets:0,JoinGroup:0
    [java-0.10.0.1]=Produce:2,Fetch:2,ListOffsets:0,JoinGroup:0
    [java-0.10.2.2]=ApiVersions:0,Produce:2,Fetch:3,JoinGroup:1
)
settings=(kafka-python-0.8.2 kafka-python-0.9 kafka-python-0.10.1 confluent-kafka-0.9.0
    java-0.9.0.1 java-0.10.0.1 java-0.10.2.2)
[ $# -gt 0 ] && settings=("$@")
for setting in "${settings[@]}"; do
    [ -n "${EXPECT[$setting]:-}" ] || { echo "tap-proof-old: unknown setting $setting" >&2; exit 2; }
done

# The checks this proof adds to check_tap_log.py, tested before anything relies on them.
if ! result=$(cd "$here" && python3 test_check_tap_log.py 2>&1); then
    printf '%s\n' "$result" >&2
    echo "tap-proof-old: check_tap_log.py failed its own test" >&2
    exit 1
fi
say "check_tap_log.py passed its own test ($(grep -o 'Ran [0-9]* tests' <<<"$result"))"

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
# shellcheck disable=SC2119 # no client of tap-proof.sh: the CLI and the venv only
tap_build
# The Java workload, built once against the oldest release, and the class path of each
# release it runs with.
java_old=$here/java-old
if printf '%s\n' "${settings[@]}" | grep -q '^java-'; then
    mvn -q -B -f "$java_old/pom.xml" package >"$out/mvn.log" 2>&1 ||
        { cat "$out/mvn.log" >&2; exit 1; }
    for setting in "${settings[@]}"; do
        case $setting in java-*) ;; *) continue ;; esac
        mvn -q -B -f "$java_old/pom.xml" dependency:build-classpath \
            -Dkafka.version="${setting#java-}" \
            -Dmdep.outputFile="$java_old/target/classpath-${setting#java-}" >>"$out/mvn.log" 2>&1 ||
            { cat "$out/mvn.log" >&2; exit 1; }
    done
fi
say "built the CLI, the venv and the old Java clients"
# Topics and groups of this run only, so a rerun against the same broker starts clean.
prefix=old-$(date +%s)
trap tap_stop EXIT

args=(--versions)
for setting in "${settings[@]}"; do
    log=$out/$setting.jsonl
    topic=$prefix-$setting
    tap_start "$out/$setting.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" \
        --rewrite-brokers --records --log "$log" || exit 1
    started=$(date +%s%3N)
    case $setting in
        java-*)
            (cd "$here" && "$py" old_workload.py "$setting" - "$topic" --direct "$KAFKA_BROKER" \
                --create-only)
            java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -cp "$java_old/target/java-old-clients.jar:$(cat "$java_old/target/classpath-${setting#java-}")" \
                kafkacodec.clients.OldWorkload "$tap_address" "$topic" "$setting" ;;
        *)
            (cd "$here" && "$py" old_workload.py "$setting" "$tap_address" "$topic" \
                --direct "$KAFKA_BROKER") ;;
    esac
    ms=$(($(date +%s%3N) - started))
    tap_wait_closed "$log"
    tap_stop
    say "$setting: done in $((ms / 1000)).$(printf %03d $((ms % 1000)))s, $(wc -l <"$log") log lines"
    args+=(--expect "${EXPECT[$setting]}" "$setting=$log")
done
python3 "$here/check_tap_log.py" "${args[@]}"
say "checked"
