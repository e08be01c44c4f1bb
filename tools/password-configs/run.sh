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

die() { printf 'password-configs: error: %s\n' "$*" >&2; exit 1; }

mode=${1:-}
[ "$mode" = write ] || [ "$mode" = check ] || die "usage: $0 write|check"
command -v java >/dev/null || die "java (17+) is needed"
command -v mvn >/dev/null || die "mvn is needed to fetch Kafka's jars"

version=$(tr -d '[:space:]' <"$repo/tools/kafka-version")
pom_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
[ "$version" = "$pom_version" ] ||
    die "tools/kafka-version says $version but tools/password-configs/pom.xml says $pom_version"

# The jars, once per pom.xml content.
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

case $mode in
write)
    cp "$new" "$file"
    printf 'password-configs: wrote %s (%s configs)\n' "${file#"$repo"/}" "$(($(wc -l <"$file") - 2))"
    ;;
check)
    if ! diff -u "$file" "$new" >&2; then
        die "schemas/password-configs.tsv is not what Kafka $version's jars say; run tools/password-configs/run.sh write"
    fi
    printf 'password-configs: schemas/password-configs.tsv matches Kafka %s (%s configs)\n' \
        "$version" "$(($(wc -l <"$file") - 2))"
    ;;
esac
