#!/usr/bin/env bash
# The capture proof: real clients (librdkafka through confluent-kafka, and Java
# kafka-clients) talk to the broker at $KAFKA_BROKER through `kafka-codec tap
# --rewrite-brokers`, while tcpdump captures the tap's port on loopback. Then `kafka-codec
# decode pcap` reads the capture, and compare_pcap_log.py checks that it gives the tap's own
# log of the same session: per connection the same pairs (API, version, correlation id, the
# request's and the response's JSON) and the same byte counts each way; and a TLS client's
# connection is named TLS by both. Run by
# tools/ci-live.sh (step `pcap`); by hand, with a broker running:
#
#   KAFKA_BROKER=127.0.0.1:19092 bash tools/clients/pcap-proof.sh [CLIENT...]
#
# Files: target/pcap-proof/CLIENT.{tap.jsonl,pcap,pcap.jsonl} (kept).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
: "${KAFKA_BROKER:?KAFKA_BROKER is not set (tools/kafka-broker/broker.sh start prints it)}"
out=$repo/target/pcap-proof
t0=$(date +%s)
say() { printf 'pcap-proof: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

clients=(confluent-kafka java)
[ $# -gt 0 ] && clients=("$@")

# tcpdump is a Debian package; capturing needs root (CAP_NET_RAW), as does installing it.
if ! command -v tcpdump >/dev/null; then
    sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get install -y -q tcpdump >/dev/null 2>&1 ||
        { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q tcpdump >/dev/null; }
fi
tcpdump=$(command -v tcpdump)

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
tap_build "${clients[@]}"
say "built the CLI, the venv and the Java client"
prefix=pcap-$(date +%s)

dump_pid=
dump_stop() {
    if [ -n "$dump_pid" ]; then
        # SIGINT: tcpdump writes out what it buffered and exits.
        kill -INT "$dump_pid" 2>/dev/null || true
        wait "$dump_pid" 2>/dev/null || true
        dump_pid=
    fi
}
trap 'dump_stop; tap_stop' EXIT

for client in "${clients[@]}"; do
    tap_start "$out/$client.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER" \
        --rewrite-brokers --records --log "$out/$client.tap.jsonl" || exit 1
    port=${tap_address##*:}
    # A kernel buffer of 64 MiB, so that no packet is dropped while the clients burst;
    # --immediate-mode and -U so that every packet is in the file when tcpdump is stopped
    # (otherwise the last ones wait in a kernel block that is never read).
    : >"$out/$client.tcpdump.err"
    "$tcpdump" -i lo -B 65536 -s 0 --immediate-mode -U -w "$out/$client.pcap" "tcp port $port" \
        2>"$out/$client.tcpdump.err" &
    dump_pid=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$out/$client.tcpdump.err" && break
        sleep 0.1
    done
    grep -q "listening on" "$out/$client.tcpdump.err" ||
        { cat "$out/$client.tcpdump.err" >&2; exit 1; }
    run_workload "$client" "$tap_address" "$prefix" >"$out/$client.workload.out"
    # And a TLS client (Python's ssl, on OpenSSL) at the plaintext tap: the broker drops it;
    # the tap's close line and the capture's `tls` line must both name it.
    python3 - "$tap_address" <<'PY' || true
import socket, ssl, sys
host, port = sys.argv[1].rsplit(":", 1)
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
try:
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="kafka.example"):
            pass
except (OSError, ssl.SSLError):
    pass
PY
    tap_wait_closed "$out/$client.tap.jsonl"
    # The last FINs and ACKs have passed once every connection is closed.
    sleep 1
    dump_stop
    tap_stop
    grep -E "captured|dropped" "$out/$client.tcpdump.err" | tr '\n' ' ' | sed 's/^/tcpdump: /'
    echo
    "$tap" decode pcap "$out/$client.pcap" --port "$port" --records >"$out/$client.pcap.jsonl"
    python3 "$here/compare_pcap_log.py" "$client" "$out/$client.tap.jsonl" \
        "$out/$client.pcap.jsonl"
    say "$client: done"
done
