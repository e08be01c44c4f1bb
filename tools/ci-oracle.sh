#!/usr/bin/env bash
# Live differential test against Apache Kafka: builds the Java oracle (Kafka's own message
# classes) and runs tests/live/oracle_diff.rs over every (schema, version) cell with a fresh random
# seed. The seed is printed first; replay a failure with KAFKA_CODEC_SEED=<seed> tools/ci-oracle.sh.
# Meant for .ci/run; needs java (17+) and mvn on the PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in java mvn cargo; do
  command -v "$tool" >/dev/null || { echo "ci-oracle: $tool is not installed" >&2; exit 1; }
done

seed="${KAFKA_CODEC_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
echo "ci-oracle: KAFKA_CODEC_SEED=$seed"

# Two builds of the oracle: the pinned Kafka 4.4.0, and Kafka 3.9.1 for the versions and APIs
# Kafka 4 removed (each cell is checked against the newest release that defines it).
mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests
mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests -Pkafka3
jars="$PWD/tools/java-oracle/target/java-oracle.jar,$PWD/tools/java-oracle/target/kafka3/java-oracle.jar"
KAFKA_ORACLE_JAR="$jars" KAFKA_CODEC_SEED="$seed" \
  cargo test --test live oracle_diff:: -- --ignored --nocapture
# The error responses `tap --deny-api/--deny-topic` builds, one per API and version: Kafka's
# classes read each and find its error codes where this crate put them (a few seconds).
KAFKA_ORACLE_JAR="$jars" \
  cargo test --bin kafka-codec tap::policy -- --ignored --nocapture
