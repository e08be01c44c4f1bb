#!/usr/bin/env bash
# cluster/release-api-versions.tsv: the API versions each Kafka release's brokers served,
# one column per release line (0.8 … 4.4, the last patch release of each, as pom.xml lists
# them), read from that release's kafka-clients jar by ReleaseApiVersions.java, and beside it
# cluster/release-api-listeners.tsv: which of that release's listeners (ZooKeeper-mode
# broker, KRaft broker, KRaft controller) listed each API in ApiVersions.
# `kafka-codec cluster --as-version` answers from both. Needs Java 17+ and mvn; the jars (about
# 150 MB) are copied once into target/release-api-versions/lib.
#
#   tools/release-api-versions/run.sh write   # rewrite the files from the jars
#   tools/release-api-versions/run.sh check   # fail if a committed file differs from them
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib=$repo/target/release-api-versions/lib
file=$repo/cluster/release-api-versions.tsv
listeners_file=$repo/cluster/release-api-listeners.tsv
# shellcheck source=tools/jar-tables.sh
. "$repo/tools/jar-tables.sh"

mode=${1:-}
jar_table_mode "$mode"

# The release lines, oldest first, and the release each is read from, as pom.xml names them.
mapfile -t releases < <(pom_releases kafka-clients destFileName)
[ "${#releases[@]}" -gt 0 ] || die "pom.xml names no kafka-clients release"

# The jars, once per pom.xml content.
fetch_jars "$lib" dependency:copy

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Compiled once; it needs no Kafka class at compile time (reflection).
javac -d "$work/classes" "$here/ReleaseApiVersions.java" ||
    die "ReleaseApiVersions.java does not compile"
for entry in "${releases[@]}"; do
    line=${entry%%:*}
    java -cp "$work/classes:$lib/$line.jar:$lib/slf4j-api.jar" ReleaseApiVersions \
        >"$work/$line.tsv" 2>"$work/err" ||
        { cat "$work/err" >&2; die "ReleaseApiVersions failed on kafka-clients ${entry#*:}"; }
done

python3 - "$work" "${releases[@]}" >"$work/table" 3>"$work/listeners" <<'PY'
import os
import sys
from pathlib import Path

work = Path(sys.argv[1])
releases = [entry.split(":", 1) for entry in sys.argv[2:]]
cells = {}  # API key -> {line: "min-max"}
listeners = {}  # API key -> {line: "ZBC" or a part of it, or "none"}
names = {}  # API key -> its enum name in the newest release that has it
for line, _ in releases:
    for row in (work / f"{line}.tsv").read_text().splitlines():
        key, low, high, name, listed_by, *listed = row.split("\t")
        listeners.setdefault(int(key), {})[line] = "none" if listed_by == "-" else listed_by
        cell = low if low == high else f"{low}-{high}"
        if listed:
            # ApiVersions listed from a lower version than the broker served.
            cell += f" (lists {listed[0]}-{high})"
        cells.setdefault(int(key), {})[line] = cell
        names[int(key)] = name
print("# The API versions each Kafka release's brokers served (what ApiVersions listed, "
      "unstable versions left out), one column per release line; `-`: the release lacks "
      "the API; `A-B (lists C-B)`: served A-B, listed C-B in ApiVersions. Read from the kafka-clients jars by tools/release-api-versions/run.sh; "
      "do not edit.")
print("# Read from kafka-clients " + " ".join(f"{line}={version}" for line, version in releases))
print("\t".join(["key", "name"] + [line for line, _ in releases]))
for key in sorted(cells):
    print("\t".join([str(key), names[key]] + [cells[key].get(line, "-") for line, _ in releases]))

with os.fdopen(3, "w") as out:
    print("# Which listeners of each Kafka release listed each API in ApiVersions, one column per "
          "release line as in release-api-versions.tsv: `Z` a ZooKeeper-mode broker, `B` a KRaft "
          "broker, `C` a KRaft controller; `none`: the release defines the API but no listener "
          "listed it; `-`: the release lacks the API. From ApiKeys.apisForListener (2.8 and "
          "later), ApiKeys.enabledApis (2.7: ZooKeeper brokers only), every API before (ZooKeeper "
          "brokers only). Read from the kafka-clients jars by tools/release-api-versions/run.sh; "
          "do not edit.", file=out)
    print("\t".join(["key", "name"] + [line for line, _ in releases]), file=out)
    for key in sorted(listeners):
        print("\t".join([str(key), names[key]]
                        + [listeners[key].get(line, "-") for line, _ in releases]), file=out)
PY

write_or_check "$mode" "$work/table" "$file" "the kafka-clients jars" "${#releases[@]} releases"
write_or_check "$mode" "$work/listeners" "$listeners_file" "the kafka-clients jars" \
    "${#releases[@]} releases"
