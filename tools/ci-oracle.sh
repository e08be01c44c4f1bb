#!/usr/bin/env bash
# Live differential test against Apache Kafka: builds the Java oracle (Kafka's own message
# classes) and runs tests/oracle_diff.rs over every (schema, version) cell with a fresh random
# seed. The seed is printed first; replay a failure with KAFKA_CODEC_SEED=<seed> tools/ci-oracle.sh.
# Meant for .ci/run; needs java (17+) and mvn on the PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in java mvn cargo; do
  command -v "$tool" >/dev/null || { echo "ci-oracle: $tool is not installed" >&2; exit 1; }
done

seed="${KAFKA_CODEC_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
echo "ci-oracle: KAFKA_CODEC_SEED=$seed"

mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests
KAFKA_ORACLE_JAR="$PWD/tools/java-oracle/target/java-oracle.jar" KAFKA_CODEC_SEED="$seed" \
  cargo test --test oracle_diff -- --ignored --nocapture
