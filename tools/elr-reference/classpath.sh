#!/usr/bin/env bash
# Builds tools/elr-reference (Kafka 4.4's kafka-metadata and ElrReference, which drives its
# PartitionChangeBuilder) and prints the class path to run it with on stdout:
#
#   KAFKA_ELR_REFERENCE=$(bash tools/elr-reference/classpath.sh) \
#       cargo test -p kafka-codec-cluster --test cluster -- --ignored elr_reference::
#
# Maven's output goes to target/mvn.log, shown only if the build fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$here/target"
mvn -q -B -f "$here/pom.xml" package dependency:build-classpath >"$here/target/mvn.log" 2>&1 ||
    { cat "$here/target/mvn.log" >&2; exit 1; }
printf '%s\n' "$here/target/elr-reference.jar:$(cat "$here/target/classpath")"
