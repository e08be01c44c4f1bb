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
# shellcheck source=tools/jar-tables.sh
. "$repo/tools/jar-tables.sh"

mode=${1:-}
jar_table_mode "$mode"

# The release lines, oldest first, and the release each is read from, as pom.xml names them
# (the kafka-server-common of each line).
mapfile -t releases < <(pom_releases kafka-server-common outputDirectory)
[ "${#releases[@]}" -gt 0 ] || die "pom.xml names no release"

# The jars, once per pom.xml content.
fetch_jars "$lib" dependency:copy

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

write_or_check "$mode" "$work/table" "$file" "the jars" "${#releases[@]} releases"
