#!/usr/bin/env bash
# Builds tools/assignor-reference (Kafka 4.4's kafka-group-coordinator and AssignorReference, which drives its
# UniformAssignor and RangeAssignor, and ShareAssignorReference, which drives its SimpleAssignor) and prints
# the class path to run them with on stdout:
#
#   java -cp "$(bash tools/assignor-reference/classpath.sh)" kafkacodec.assignor.AssignorReference \
#       > cluster/tests/data/assignors.txt
#   java -cp "$(bash tools/assignor-reference/classpath.sh)" kafkacodec.assignor.ShareAssignorReference \
#       > cluster/tests/data/share-assignor.txt
#
# Maven's output goes to target/mvn.log, shown only if the build fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$here/target"
mvn -q -B -f "$here/pom.xml" package dependency:build-classpath >"$here/target/mvn.log" 2>&1 ||
    { cat "$here/target/mvn.log" >&2; exit 1; }
printf '%s\n' "$here/target/assignor-reference.jar:$(cat "$here/target/classpath")"
