#!/usr/bin/env bash
# cluster/config-defaults.tsv: the topic and broker configs a Kafka broker describes, with
# the defaults of the pinned Kafka (tools/kafka-version), read from its ConfigDefs by
# ConfigDefaults.java. The cluster's DescribeConfigs answers from it. Needs Java 17+ and mvn;
# the jars (about 40 MB) are copied once into target/config-defaults/lib.
#
#   tools/config-defaults/run.sh write   # rewrite the file from the jars
#   tools/config-defaults/run.sh check   # fail if the committed file differs from them
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/config-defaults/lib
file=$repo/cluster/config-defaults.tsv
# shellcheck source=tools/jar-tables.sh
. "$repo/tools/jar-tables.sh"

mode=${1:-}
jar_table_mode "$mode"

version=$(pinned_kafka_version)

fetch_jars "$lib" dependency:copy-dependencies -DincludeScope=runtime

new=$(mktemp)
trap 'rm -f "$new" "$new.err"' EXIT
{
    printf '# The configs Kafka %s brokers describe, with their defaults, read from its ConfigDefs by tools/config-defaults/run.sh; do not edit. `\\N`: no value (none, or sensitive).\n' "$version"
    printf 'scope\tname\ttype\tdefault\tsensitive\tread-only\tfrom\n'
    java -cp "$lib/*" "$here/ConfigDefaults.java" 2>"$new.err" ||
        { cat "$new.err" >&2; die "ConfigDefaults.java failed"; }
} >"$new"

write_or_check "$mode" "$new" "$file" "Kafka $version's jars" "$(($(wc -l <"$new") - 2)) configs"
