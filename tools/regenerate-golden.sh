#!/usr/bin/env bash
# Rewrites the golden corpus (tests/golden/) from Apache Kafka's own answers: builds the Java
# oracle, runs tests/live/oracle_diff.rs in record mode from its fixed seed, then replays the new
# corpus without Java. Run it after a schema change, a new Kafka version, or a codec fix that
# changes what we write; review the diff of tests/golden/ like any other change.
set -euo pipefail
cd "$(dirname "$0")/.."

# Two builds of the oracle: the pinned Kafka 4.4.0, and Kafka 3.9.1 for the versions and APIs
# Kafka 4 removed (each cell is checked against the newest release that defines it).
mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests
mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests -Pkafka3
jars="$PWD/tools/java-oracle/target/java-oracle.jar,$PWD/tools/java-oracle/target/kafka3/java-oracle.jar"
env -u KAFKA_CODEC_SEED -u KAFKA_CODEC_ORACLE_ONLY \
  KAFKA_ORACLE_JAR="$jars" KAFKA_CODEC_RECORD_GOLDEN=1 \
  cargo test --test live oracle_diff:: -- --ignored --nocapture
cargo test --test codec golden_replay:: -- --nocapture
du -sh tests/golden
