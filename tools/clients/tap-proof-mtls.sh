#!/usr/bin/env bash
# The certificates people use, through the tap (issue 24), against the real broker:
# - mutual TLS both ways, in front of the broker's MTLS listener (ssl.client.auth=required):
#   librdkafka (confluent-kafka) and the Java client present the client certificate of
#   broker.sh (client.p12, signed by the test CA) to the tap, which requires it
#   (--listen-tls-client-ca) and logs its subject; the tap presents its own certificate to
#   the broker (--upstream-tls-cert/--upstream-tls-key). One run each.
# - a self-signed upstream certificate with CA:TRUE (the broker's SELFSIGNED listener, made
#   by keytool as `openssl req -x509` makes one), trusted because it is itself in
#   --upstream-ca: first refused, in words, with the test CA as --upstream-ca; then one
#   librdkafka run through a tap trusting the certificate itself.
# Then check_tap_log.py over the three logs (every frame decoded, every byte forwarded as
# received, every produced record found), and every connection of the mTLS runs logged the
# client's subject.
#
# Run by tools/ci-live.sh (step `tap_mtls`); by hand, with a broker running:
#
#   set -a; . "$(tools/kafka-broker/broker.sh envfile)"; set +a
#   bash tools/clients/tap-proof-mtls.sh
#
# Logs: target/tap-proof-mtls/*.jsonl (kept), each tap's stderr next to its log.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
out=$repo/target/tap-proof-mtls
t0=$(date +%s)
say() { printf 'tap-proof-mtls: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }
for name in KAFKA_BROKER_MTLS KAFKA_BROKER_SELF_SIGNED KAFKA_TLS_CA KAFKA_TLS_TRUSTSTORE \
    KAFKA_TLS_STORE_PASSWORD KAFKA_TAP_TLS_CERT KAFKA_TAP_TLS_KEY KAFKA_TLS_CLIENT_KEYSTORE \
    KAFKA_TLS_SELF_SIGNED_CERT; do
    [ -n "${!name:-}" ] ||
        { echo "tap-proof-mtls: $name is not set (tools/kafka-broker/broker.sh start prints it)" >&2; exit 1; }
done
subject="CN=kafka-codec test client"

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
tap_build confluent-kafka java
say "built the CLI, the venv and the Java client"
run=mtls-$(date +%s)
trap tap_stop EXIT

# The tap's TLS toward clients: its CA-signed certificate, client certificates required.
listen_tls=(--listen-tls-cert "$KAFKA_TAP_TLS_CERT" --listen-tls-key "$KAFKA_TAP_TLS_KEY")
logs=()
mtls_logs=()
for client in confluent-kafka java; do
    log=$out/mtls-$client.jsonl
    tap_start "$out/mtls-$client.tap.err" --listen 127.0.0.1:0 --upstream "$KAFKA_BROKER_MTLS" \
        --rewrite-brokers --records --log "$log" "${listen_tls[@]}" \
        --listen-tls-client-ca "$KAFKA_TLS_CA" \
        --upstream-tls --upstream-ca "$KAFKA_TLS_CA" \
        --upstream-tls-cert "$KAFKA_TAP_TLS_CERT" --upstream-tls-key "$KAFKA_TAP_TLS_KEY"
    py_login=(--protocol SSL --ca "$KAFKA_TLS_CA" --keystore "$KAFKA_TLS_CLIENT_KEYSTORE"
        --keystore-password "$KAFKA_TLS_STORE_PASSWORD")
    java_login=(--protocol SSL --truststore "$KAFKA_TLS_TRUSTSTORE"
        --truststore-password "$KAFKA_TLS_STORE_PASSWORD"
        --keystore "$KAFKA_TLS_CLIENT_KEYSTORE" --keystore-password "$KAFKA_TLS_STORE_PASSWORD")
    run_workload "$client" "$tap_address" "$run"
    tap_wait_closed "$log"
    tap_stop
    say "$client, mutual TLS: done, $(wc -l <"$log") log lines"
    logs+=("$client/mtls=$log")
    mtls_logs+=("$log")
done

# The self-signed CA:TRUE certificate is what webpki alone refuses: with the test CA as
# --upstream-ca it is not pinned, and the tap says what it is.
log=$out/self-signed-refused.jsonl
tap_start "$out/self-signed-refused.tap.err" --listen 127.0.0.1:0 \
    --upstream "$KAFKA_BROKER_SELF_SIGNED" --log "$log" --upstream-tls --upstream-ca "$KAFKA_TLS_CA"
# Any bytes make the tap connect upstream; it logs the refusal on its connect line.
exec 3<>"/dev/tcp/${tap_address%:*}/${tap_address##*:}"
printf '\0\0\0\0' >&3
for _ in $(seq 100); do
    grep -q '"event":"connect"' "$log" && break
    sleep 0.1
done
exec 3>&-
tap_stop
failed=0
if ! grep -q 'is a CA certificate (basic constraints CA:TRUE), not a server certificate' "$log"; then
    echo "tap-proof-mtls: the self-signed listener's certificate was not refused as a CA" \
        "certificate without the pin:" >&2
    cat "$log" >&2
    failed=1
fi
# Pinned: trusted as itself.
log=$out/self-signed-confluent-kafka.jsonl
tap_start "$out/self-signed-confluent-kafka.tap.err" --listen 127.0.0.1:0 \
    --upstream "$KAFKA_BROKER_SELF_SIGNED" --rewrite-brokers --records --log "$log" \
    "${listen_tls[@]}" --upstream-tls --upstream-ca "$KAFKA_TLS_SELF_SIGNED_CERT"
py_login=(--protocol SSL --ca "$KAFKA_TLS_CA")
java_login=()
run_workload confluent-kafka "$tap_address" "$run-self-signed"
tap_wait_closed "$log"
tap_stop
say "confluent-kafka, self-signed upstream: done, $(wc -l <"$log") log lines"
logs+=("confluent-kafka/self-signed=$log")

python3 "$here/check_tap_log.py" "${logs[@]}" || failed=1
# Every connection of the mutual TLS runs reached the broker and logged the client's subject.
python3 - "$subject" "${mtls_logs[@]}" <<'EOF' || failed=1
import json
import sys

subject, logs = sys.argv[1], sys.argv[2:]
failed = False
for log in logs:
    with open(log, encoding="utf-8") as lines:
        connects = [line for line in map(json.loads, lines) if line["event"] == "connect"]
    wrong = [c for c in connects if "error" in c or c.get("clientSubject") != subject]
    for line in wrong:
        print(f"tap-proof-mtls: {log}: want clientSubject {subject!r} and no error: "
              f"{json.dumps(line)}", file=sys.stderr)
    if not connects:
        print(f"tap-proof-mtls: {log}: no connection", file=sys.stderr)
    failed = failed or bool(wrong) or not connects
    print(f"{log}: {len(connects)} connections, {len(connects) - len(wrong)} with "
          f"clientSubject {subject!r}")
sys.exit(1 if failed else 0)
EOF
[ $failed = 0 ] || { say "FAILED"; exit 1; }
say "checked"
