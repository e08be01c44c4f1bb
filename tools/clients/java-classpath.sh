#!/usr/bin/env bash
# Builds the Java clients' module (tools/clients/java: kafka-clients 4.4 and the programs
# that drive it) and prints the class path to run them with on stdout, as venv.sh prints the
# Python clients' interpreter:
#
#   CP=$(bash tools/clients/java-classpath.sh)   # then: java -cp "$CP" kafkacodec.clients.ClusterClients ...
#
# Maven's output goes to target/mvn.log, shown only if the build fails (its console library
# writes colour resets even with -B).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
java=$here/java
mkdir -p "$java/target"
mvn -q -B -f "$java/pom.xml" package dependency:build-classpath >"$java/target/mvn.log" 2>&1 ||
    { cat "$java/target/mvn.log" >&2; exit 1; }
printf '%s\n' "$java/target/java-clients.jar:$(cat "$java/target/classpath")"
