#!/usr/bin/env bash
# cluster/release-features.tsv: the feature levels (KIP-584) a freshly formatted broker of
# each KRaft release line (3.3 … 4.4, the last patch release of each, as pom.xml lists them)
# answers in ApiVersions v3+, read from that release's own classes by ReleaseFeatures.java.
# `kafka-codec cluster --as-version` answers from it. Needs Java 17+ and mvn; the jars
# (about 140 MB) are copied once into target/release-features/lib.
#
#   tools/release-features/run.sh write   # rewrite the file from the jars
#   tools/release-features/run.sh check   # fail if the committed file differs from them
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/release-features/lib
file=$repo/cluster/release-features.tsv

die() { printf 'release-features: error: %s\n' "$*" >&2; exit 1; }

mode=${1:-}
[ "$mode" = write ] || [ "$mode" = check ] || die "usage: $0 write|check"
command -v java >/dev/null || die "java (17+) is needed"
command -v javac >/dev/null || die "javac (17+) is needed"
command -v mvn >/dev/null || die "mvn is needed to fetch Kafka's jars"

# The release lines, oldest first, and the release each is read from, as pom.xml names them
# (the kafka-server-common of each line).
mapfile -t releases < <(python3 - "$here/pom.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
for item in ET.parse(sys.argv[1]).getroot().iterfind(".//m:artifactItem", ns):
    if item.findtext("m:artifactId", namespaces=ns) == "kafka-server-common":
        line = item.findtext("m:outputDirectory", namespaces=ns).rsplit("/", 1)[1]
        print(f"{line}:{item.findtext('m:version', namespaces=ns)}")
PY
)
[ "${#releases[@]}" -gt 0 ] || die "pom.xml names no release"

# The jars, once per pom.xml content.
stamp=$lib/.pom.sha256
want=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$lib"
    mkdir -p "$lib"
    mvn -q -B -f "$here/pom.xml" dependency:copy -DoutputDirectory="$lib" >&2 ||
        die "mvn dependency:copy failed"
    printf '%s\n' "$want" >"$stamp"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Compiled once; it needs no Kafka class at compile time (reflection).
javac -d "$work/classes" "$here/ReleaseFeatures.java" ||
    die "ReleaseFeatures.java does not compile"
{
    printf '# The feature levels (KIP-584) a freshly formatted broker of each KRaft release answers in ApiVersions v3+ (kafka-storage format --standalone, unstable versions off): the supported ranges and the finalized levels, each in the order the broker lists them. Read from each release'"'"'s BrokerFeatures, MetadataVersion and feature enums by tools/release-features/run.sh; do not edit.\n'
    printf '# Read from %s\n' "$(printf '%s ' "${releases[@]/:/=}" | sed 's/ $//')"
    printf 'release\tkind\tname\tmin\tmax\n'
    for entry in "${releases[@]}"; do
        line=${entry%%:*}
        # Each line's own jars, then the shared ones (scala-library, scala-logging,
        # commons-validator, slf4j-api: the 3.x broker classes load them).
        java -cp "$work/classes:$lib/$line/*:$lib/*" ReleaseFeatures >"$work/$line.tsv" \
            2>"$work/err" ||
            { cat "$work/err" >&2; die "ReleaseFeatures failed on Kafka ${entry#*:}"; }
        while IFS=$'\t' read -r kind name low high; do
            printf '%s\t%s\t%s\t%s\t%s\n' "$line" "$kind" "$name" "$low" "${high:-$low}"
        done <"$work/$line.tsv"
    done
} >"$work/table"

case $mode in
write)
    cp "$work/table" "$file"
    printf 'release-features: wrote %s (%s releases)\n' "${file#"$repo"/}" "${#releases[@]}"
    ;;
check)
    if ! diff -u "$file" "$work/table" >&2; then
        die "cluster/release-features.tsv is not what the jars say; run $0 write"
    fi
    printf 'release-features: %s matches the jars of %s releases\n' \
        "${file#"$repo"/}" "${#releases[@]}"
    ;;
esac
