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
cargo build -q -p kafka-codec-cli
tap=$repo/target/debug/kafka-codec
py=$(bash "$here/venv.sh")
if printf '%s\n' "${clients[@]}" | grep -qx java; then
    # Maven's console library writes colour resets even with -B: its output goes to a file,
    # shown only if the build fails.
    mvn -q -B -f "$here/java/pom.xml" package dependency:build-classpath >"$out/mvn.log" 2>&1 ||
        { cat "$out/mvn.log" >&2; exit 1; }
fi
say "built the CLI, the venv and the Java client"
# Topics and groups of this run only, so a rerun against the same broker starts clean.
prefix=tap-$(date +%s)

tap_pid=
stop_tap() {
    if [ -n "$tap_pid" ]; then
        kill "$tap_pid" 2>/dev/null || true
        wait "$tap_pid" 2>/dev/null || true
        tap_pid=
    fi
}
trap stop_tap EXIT

logs=()
for client in "${clients[@]}"; do
    log=$out/$client.jsonl
    # The tap's stderr is opened by the background child, which may not have run yet when
    # the loop below first reads it: create it first (a missing file would end the script).
    : >"$out/$client.tap.err"
    "$tap" tap --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" --rewrite-brokers --records \
        --log "$log" 2>"$out/$client.tap.err" &
    tap_pid=$!
    address=
    for _ in $(seq 100); do
        address=$(sed -n 's/^kafka-codec tap: listening on \([^,]*\),.*/\1/p' "$out/$client.tap.err")
        [ -n "$address" ] && break
        kill -0 "$tap_pid" 2>/dev/null || { cat "$out/$client.tap.err" >&2; exit 1; }
        sleep 0.1
    done
    [ -n "$address" ] || { echo "tap-proof: the tap did not start" >&2; exit 1; }
    case $client in
        java)
            java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -cp "$here/java/target/java-clients.jar:$(cat "$here/java/target/classpath")" \
                kafkacodec.clients.Workload "$address" "$prefix" ;;
        *)
            (cd "$here" && "$py" tap_workload.py "$client" "$address" "$prefix") ;;
    esac
    # The client has exited, so its sockets are closed; wait until the tap has logged the
    # end of each connection (both directions) before stopping it.
    for _ in $(seq 100); do
        opened=$(grep -c '"event":"connect"' "$log" || true)
        closed=$(grep -c '"event":"close"' "$log" || true)
        [ "$opened" -gt 0 ] && [ "$opened" = "$closed" ] && break
        sleep 0.1
    done
    stop_tap
    say "$client: done, $(wc -l <"$log") log lines"
    logs+=("$client=$log")
done
python3 "$here/check_tap_log.py" "${logs[@]}"
say "checked"
