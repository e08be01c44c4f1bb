#!/usr/bin/env bash
# cluster/tests/data/re2j.tsv: what Kafka's group coordinator does with each pattern of
# patterns.txt as a ConsumerGroupHeartbeat's SubscribedTopicRegex (its
# INVALID_REGULAR_EXPRESSION message, or the topic names of the first line RE2J matches),
# read from the pinned Kafka's jars by Re2jTable.java. tests/consumer_groups.rs compares
# the cluster's reading of every pattern with it. Needs Java 17+ and mvn.
#
#   tools/regex-reference/run.sh write   # rewrite the table from the jars
#   tools/regex-reference/run.sh check   # fail if the committed table differs from them
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/regex-reference/lib
file=$repo/cluster/tests/data/re2j.tsv
# shellcheck source=tools/jar-tables.sh
. "$repo/tools/jar-tables.sh"

mode=${1:-}
jar_table_mode "$mode"
version=$(pinned_kafka_version)
fetch_jars "$lib" dependency:copy-dependencies -DincludeScope=runtime

new=$(mktemp)
trap 'rm -f "$new"' EXIT
{
    printf '# SubscribedTopicRegex patterns as Kafka %s reads them, from its jars by tools/regex-reference/run.sh; do not edit. Line 2: the topic names; then pattern, ok or invalid, the names matched or the message.\n' "$version"
    java -cp "$lib/*" "$here/Re2jTable.java" <"$here/patterns.txt"
} >"$new"
write_or_check "$mode" "$new" "$file" "Kafka $version's jars" "$(($(wc -l <"$new") - 2)) patterns"
