#!/usr/bin/env bash
# schemas/password-configs.tsv: the configs Kafka types as PASSWORD, read from the pinned
# Kafka's jars (tools/kafka-version) by PasswordConfigs.java. Needs Java 17+ and mvn; the jars
# (broker, Streams, Connect; about 125 MB) are copied once into target/password-configs/lib.
#
#   tools/password-configs/run.sh write   # rewrite the file from the jars
#   tools/password-configs/run.sh check   # fail if the committed file differs from the jars
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/password-configs/lib
file=$repo/schemas/password-configs.tsv
# shellcheck source=tools/jar-tables.sh
. "$repo/tools/jar-tables.sh"

mode=${1:-}
jar_table_mode "$mode"

version=$(pinned_kafka_version)

# The jars, once per pom.xml content.
fetch_jars "$lib" dependency:copy-dependencies -DincludeScope=runtime
[ -f "$lib/kafka_2.13-$version.jar" ] || die "kafka_2.13-$version.jar missing in $lib"

new=$(mktemp)
trap 'rm -f "$new"' EXIT
{
    printf '# The configs Kafka %s types as PASSWORD, read from its jars by tools/password-configs/run.sh; do not edit.\n' "$version"
    printf 'name\tdefined by\n'
    # The scan's notes (classes it could not load) go to stderr only with a failure.
    java -cp "$lib/*" "$here/PasswordConfigs.java" 2>"$new.err" ||
        { cat "$new.err" >&2; die "PasswordConfigs.java failed"; }
} >"$new"
rm -f "$new.err"

write_or_check "$mode" "$new" "$file" "Kafka $version's jars" "$(($(wc -l <"$new") - 2)) configs"
