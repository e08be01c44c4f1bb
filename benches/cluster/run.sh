#!/usr/bin/env bash
# The cluster benchmark of issue 29 ("fast and light"): `kafka-codec cluster` (the `dist`
# profile's build, as `cargo install --path cli --profile dist` installs it), franz-go's
# kfake (one broker, default settings: benches/cluster/kfake) and a real
# Kafka 4.4 broker (tools/kafka-broker's jars), a fresh server every round, interleaved,
# librdkafka (confluent-kafka) producing and consuming. Prints the table benches/README.md
# shows. Slow (minutes): not part of CI.
#
#   bash benches/cluster/run.sh                     # 5 rounds, 1 M records of 100 bytes
#   ROUNDS=3 RECORDS=200000 bash benches/cluster/run.sh
#   SERVERS=kafka-codec,kfake bash benches/cluster/run.sh   # without the JVM broker
#
# Needs cargo, go (the kfake module is fetched from the Go module proxy), java 17+ and mvn
# (the broker's jars from Maven Central), python3. Only one Kafka broker should run on the
# machine at a time: the script refuses to start while another kafka.Kafka process runs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
servers=${SERVERS:-kafka-codec,kfake,kafka}
out=${OUT:-$target/cluster-bench.json}

cargo build --profile dist -q -p kafka-codec-cli --manifest-path "$repo/Cargo.toml" >&2
(cd "$here/kfake" && go build -o "$target/kfake-bench" .) >&2
python=$(bash "$repo/tools/clients/venv.sh")
kafka_lib=
if [[ ,$servers, == *,kafka,* ]]; then
    if pgrep -f 'kafka\.Kafka ' >/dev/null; then
        echo "run.sh: a Kafka broker already runs on this machine; wait until it is stopped" >&2
        exit 1
    fi
    bash "$repo/tools/kafka-broker/broker.sh" fetch >&2
    kafka_lib=${KAFKA_BROKER_HOME:-$repo/target/kafka-broker}/lib
fi

"$python" "$here/bench.py" --ours "$target/dist/kafka-codec" --kfake "$target/kfake-bench" \
    --kafka-lib "$kafka_lib" --servers "$servers" --rounds "${ROUNDS:-5}" \
    --records "${RECORDS:-1000000}" --size "${SIZE:-100}" --out "$out"
"$python" "$here/bench.py" --report "$out"
