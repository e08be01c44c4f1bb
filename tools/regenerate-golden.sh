#!/usr/bin/env bash
# Rewrites the golden corpus (tests/golden/) from Apache Kafka's own answers: builds the Java
# oracle, runs tests/oracle_diff.rs in record mode from its fixed seed, then replays the new
# corpus without Java. Run it after a schema change, a new Kafka version, or a codec fix that
# changes what we write; review the diff of tests/golden/ like any other change.
set -euo pipefail
cd "$(dirname "$0")/.."

mvn -q -B -f tools/java-oracle/pom.xml package -DskipTests
env -u KAFKA_CODEC_SEED -u KAFKA_CODEC_ORACLE_ONLY \
  KAFKA_ORACLE_JAR="$PWD/tools/java-oracle/target/java-oracle.jar" KAFKA_CODEC_RECORD_GOLDEN=1 \
  cargo test --test oracle_diff -- --ignored --nocapture
cargo test --test golden_replay -- --nocapture
du -sh tests/golden
