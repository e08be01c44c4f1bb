#!/usr/bin/env bash
# The tap proof with TLS and SASL (issue 20): `kafka-codec tap --rewrite-brokers --records`
# with TLS on both sides, in front of the broker's SASL_SSL listener. Clients reach the tap
# over TLS (its certificate, tap-cert.pem, is signed by the test CA they trust) and the tap
# reaches the broker over TLS, trusting the same CA. The four clients of tap-proof.sh go
# through it, each once logging in with PLAIN and once with SCRAM-SHA-512 (the users of
# tools/kafka-broker/sasl-users), one tap and one log per run. Then:
# - check_tap_log.py --records --expect-login, once per mechanism: every frame decoded, every
#   byte forwarded as received, every produced record found, and every connection logged in
#   through the tap;
# - check_secrets.py over every log and every tap's stderr: no password as text, base64 or
#   hex. Its own test (test_check_secrets.py) runs first: the proof is only as good as it.
#
# Run by tools/ci-live.sh (step `tap_tls`); by hand, with a broker running:
#
#   set -a; . "$(tools/kafka-broker/broker.sh envfile)"; set +a
#   bash tools/clients/tap-proof-tls.sh [--no-tls] [CLIENT...]
#
# --no-tls runs the same against the SASL_PLAINTEXT listener through a tap without TLS flags:
# the logins through the tap and the secrets check, before the tap speaks TLS.
# Logs: target/tap-proof-tls/MECHANISM-CLIENT.jsonl (kept), each tap's stderr next to its log.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
out=$repo/target/tap-proof-tls
t0=$(date +%s)
say() { printf 'tap-proof-tls: %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }
need() {
    for name in "$@"; do
        [ -n "${!name:-}" ] ||
            { echo "tap-proof-tls: $name is not set (tools/kafka-broker/broker.sh start prints it)" >&2; exit 1; }
    done
}

tls=1
if [ "${1:-}" = --no-tls ]; then
    tls=0
    shift
fi
clients=(confluent-kafka kafka-python aiokafka java)
[ $# -gt 0 ] && clients=("$@")
mechanisms=(PLAIN SCRAM-SHA-512)
need KAFKA_SASL_USERS
if [ $tls = 1 ]; then
    need KAFKA_BROKER_SASL_SSL KAFKA_TLS_CA KAFKA_TLS_TRUSTSTORE KAFKA_TLS_STORE_PASSWORD \
        KAFKA_TAP_TLS_CERT KAFKA_TAP_TLS_KEY
    upstream=$KAFKA_BROKER_SASL_SSL
    protocol=SASL_SSL
    # The tap serves TLS with the CA-signed certificate of broker.sh, and verifies the
    # broker's certificate against the same CA (for the address 127.0.0.1).
    tap_tls=(--listen-tls-cert "$KAFKA_TAP_TLS_CERT" --listen-tls-key "$KAFKA_TAP_TLS_KEY"
        --upstream-tls --upstream-ca "$KAFKA_TLS_CA")
else
    need KAFKA_BROKER_SASL_PLAINTEXT
    upstream=$KAFKA_BROKER_SASL_PLAINTEXT
    protocol=SASL_PLAINTEXT
    tap_tls=()
fi

# The secrets check's own test, before anything relies on it.
if ! result=$(python3 "$here/test_check_secrets.py" 2>&1); then
    printf '%s\n' "$result" >&2
    echo "tap-proof-tls: the secrets check failed its own test" >&2
    exit 1
fi
say "the secrets check passed its own test ($(grep -o 'Ran [0-9]* tests' <<<"$result"))"

rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tap-common.sh
. "$here/tap-common.sh"
cargo build -q --bin kafka-codec # no -p: the features of the other CLI builds (tools/ci-live.sh)
if [ $tls = 1 ] && ! "$repo/target/debug/kafka-codec" tap --help | grep -q -e '--listen-tls-cert'; then
    echo "tap-proof-tls: kafka-codec tap has no --listen-tls-cert: it does not speak TLS yet" \
        "(issue 20); nothing to prove. (--no-tls runs the proof on SASL_PLAINTEXT.)" >&2
    exit 1
fi
tap_build "${clients[@]}"
say "built the CLI, the venv and the Java client"
# Topics and groups of this run only, so a rerun against the same broker starts clean.
run=tls-$(date +%s)
trap tap_stop EXIT

# Every check runs, so that one failure does not hide another; any failure fails the proof.
failed=0
scanned=()
for mechanism in "${mechanisms[@]}"; do
    logs=()
    short=$(printf '%s' "${mechanism%%-*}" | tr '[:upper:]' '[:lower:]')
    for client in "${clients[@]}"; do
        log=$out/$short-$client.jsonl
        err=$out/$short-$client.tap.err
        if ! tap_start "$err" --listen 127.0.0.1:0 --upstream "$upstream" --rewrite-brokers \
            --records --log "$log" ${tap_tls[@]+"${tap_tls[@]}"}; then
            if grep -q "unexpected argument" "$err"; then
                echo "tap-proof-tls: kafka-codec tap refused its TLS flags: it does not speak" \
                    "TLS yet (issue 20)" >&2
            fi
            exit 1
        fi
        py_login=(--sasl "$mechanism" --protocol "$protocol" --users "$KAFKA_SASL_USERS")
        java_login=(--sasl "$mechanism" --users "$KAFKA_SASL_USERS")
        if [ $tls = 1 ]; then
            py_login+=(--ca "$KAFKA_TLS_CA")
            java_login+=(--truststore "$KAFKA_TLS_TRUSTSTORE"
                --truststore-password "$KAFKA_TLS_STORE_PASSWORD")
        else
            java_login+=(--protocol SASL_PLAINTEXT)
        fi
        run_workload "$client" "$tap_address" "$run-$short"
        tap_wait_closed "$log"
        tap_stop
        say "$client, $protocol $mechanism: done, $(wc -l <"$log") log lines"
        logs+=("$client/$short=$log")
        scanned+=("$log" "$err")
    done
    python3 "$here/check_tap_log.py" --expect-login "${logs[@]}" || failed=1
done
python3 "$here/check_secrets.py" --users "$KAFKA_SASL_USERS" "${scanned[@]}" || failed=1
[ $failed = 0 ] || { say "FAILED"; exit 1; }
say "checked"
