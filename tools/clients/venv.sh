#!/usr/bin/env bash
# A Python virtualenv with the real Kafka clients the live tests drive: librdkafka (through
# confluent-kafka, whose wheel bundles it with every codec), kafka-python and aiokafka, plus
# the compression modules the last two need for snappy, lz4 and zstd. Pinned, so a run is
# the same on every machine. Prints the venv's python on stdout; idempotent.
#
#   PY=$(bash tools/clients/venv.sh)       # then: "$PY" my_client_script.py
#
# KAFKA_CLIENTS_VENV overrides the location (default: <repo>/target/clients-venv).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${KAFKA_CLIENTS_VENV:-$repo/target/clients-venv}
requirements=$here/requirements.txt
stamp=$venv/.requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" >&2
    printf '%s\n' "$want" >"$stamp"
fi
printf '%s\n' "$venv/bin/python"
