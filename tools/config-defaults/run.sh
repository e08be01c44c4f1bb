#!/usr/bin/env bash
# cluster/config-defaults.tsv: the topic and broker configs a Kafka broker describes, with
# the defaults of the pinned Kafka (tools/kafka-version), read from its ConfigDefs by
# ConfigDefaults.java. The cluster's DescribeConfigs answers from it. Likewise
# cluster/group-configs.tsv, the per-group configs (GroupConfigDefaults.java). Needs Java 17+ and mvn;
# the jars (about 40 MB) are copied once into target/config-defaults/lib.
#
#   tools/config-defaults/run.sh write   # rewrite the file from the jars
#   tools/config-defaults/run.sh check   # fail if the committed file differs from them
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/config-defaults/lib
file=$repo/cluster/config-defaults.tsv

die() { printf 'config-defaults: error: %s\n' "$*" >&2; exit 1; }

mode=${1:-}
[ "$mode" = write ] || [ "$mode" = check ] || die "usage: $0 write|check"
command -v java >/dev/null || die "java (17+) is needed"
command -v mvn >/dev/null || die "mvn is needed to fetch Kafka's jars"

version=$(tr -d '[:space:]' <"$repo/tools/kafka-version")
pom_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
[ "$version" = "$pom_version" ] ||
    die "tools/kafka-version says $version but tools/config-defaults/pom.xml says $pom_version"

stamp=$lib/.pom.sha256
want=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$lib"
    mkdir -p "$lib"
    mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$lib" >&2 ||
        die "mvn dependency:copy-dependencies failed"
    printf '%s\n' "$want" >"$stamp"
fi

new=$(mktemp)
group_file=$repo/cluster/group-configs.tsv
group_new=$(mktemp)
trap 'rm -f "$new" "$new.err" "$group_new"' EXIT
{
    printf '# The configs Kafka %s brokers describe, with their defaults, read from its ConfigDefs by tools/config-defaults/run.sh; do not edit. `\\N`: no value (none, or sensitive).\n' "$version"
    printf 'scope\tname\ttype\tdefault\tsensitive\tread-only\tfrom\n'
    java -cp "$lib/*" "$here/ConfigDefaults.java" 2>"$new.err" ||
        { cat "$new.err" >&2; die "ConfigDefaults.java failed"; }
} >"$new"
{
    printf '# The per-group configs (ConfigResource GROUP) of Kafka %s, read from its GroupConfig by tools/config-defaults/run.sh; do not edit. `\\N`: no value; `-`: none.\n' "$version"
    printf 'name\ttype\tdefault\tinternal\tbroker-synonym\tsynonym-default\tvalidator\tmin-config\tmin\tmax-config\tmax\n'
    java -cp "$lib/*" "$here/GroupConfigDefaults.java" 2>"$new.err" ||
        { cat "$new.err" >&2; die "GroupConfigDefaults.java failed"; }
} >"$group_new"

case $mode in
write)
    cp "$new" "$file"
    cp "$group_new" "$group_file"
    printf 'config-defaults: wrote %s (%s configs)\n' "${file#"$repo"/}" "$(($(wc -l <"$file") - 2))"
    ;;
check)
    if ! diff -u "$file" "$new" >&2; then
        die "cluster/config-defaults.tsv is not what Kafka $version's jars say; run $0 write"
    fi
    if ! diff -u "$group_file" "$group_new" >&2; then
        die "cluster/group-configs.tsv is not what Kafka $version's jars say; run $0 write"
    fi
    printf 'config-defaults: cluster/config-defaults.tsv matches Kafka %s (%s configs)\n' \
        "$version" "$(($(wc -l <"$file") - 2))"
    ;;
esac
