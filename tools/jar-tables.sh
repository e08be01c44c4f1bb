# What the scripts that read a committed table out of Kafka's jars share
# (release-api-versions, release-features, config-defaults, password-configs: each
# `run.sh write|check`): the mode and the tools they need, the release lines pom.xml lists,
# the jars fetched once per pom.xml, and the write or the check of the table. Sourced, not run; the sourcing script
# sets `here` (its folder, holding pom.xml, whose name prefixes the messages) and `repo`
# first.

die() { printf '%s: error: %s\n' "${here##*/}" "$*" >&2; exit 1; }

# jar_table_mode MODE: MODE is write or check, and java, javac and mvn are there.
jar_table_mode() {
    [ "$1" = write ] || [ "$1" = check ] || die "usage: $0 write|check"
    command -v java >/dev/null || die "java (17+) is needed"
    command -v javac >/dev/null || die "javac (17+) is needed"
    command -v mvn >/dev/null || die "mvn is needed to fetch Kafka's jars"
}

# pinned_kafka_version: tools/kafka-version, which must be the version $here/pom.xml pins.
pinned_kafka_version() {
    local version pom_version
    version=$(tr -d '[:space:]' <"$repo/tools/kafka-version")
    pom_version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
    [ "$version" = "$pom_version" ] ||
        die "tools/kafka-version says $version but ${here#"$repo"/}/pom.xml says $pom_version"
    printf '%s\n' "$version"
}

# pom_releases ARTIFACT NAMED_BY: "LINE:VERSION" for each artifactItem of ARTIFACT in
# $here/pom.xml, in its order; LINE is the item's destFileName without ".jar" (NAMED_BY
# destFileName) or the last folder of its outputDirectory (NAMED_BY outputDirectory).
pom_releases() {
    python3 - "$here/pom.xml" "$1" "$2" <<'PY'
import sys
import xml.etree.ElementTree as ET
pom, artifact, named_by = sys.argv[1:]
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
for item in ET.parse(pom).getroot().iterfind(".//m:artifactItem", ns):
    if item.findtext("m:artifactId", namespaces=ns) == artifact:
        name = item.findtext(f"m:{named_by}", namespaces=ns)
        line = name.removesuffix(".jar") if named_by == "destFileName" else name.rsplit("/", 1)[1]
        print(f"{line}:{item.findtext('m:version', namespaces=ns)}")
PY
}

# fetch_jars LIB GOAL [ARG...]: `mvn GOAL ARG...` of $here/pom.xml copies the jars into LIB,
# once per content of pom.xml (a stamp in LIB says which).
fetch_jars() {
    local lib=$1 goal=$2
    shift 2
    local stamp=$lib/.pom.sha256 want
    want=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
    if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        rm -rf "$lib"
        mkdir -p "$lib"
        mvn -q -B -f "$here/pom.xml" "$goal" "$@" -DoutputDirectory="$lib" >&2 ||
            die "mvn $goal failed"
        printf '%s\n' "$want" >"$stamp"
    fi
}

# write_or_check MODE NEW FILE SOURCE SUMMARY: write: NEW becomes FILE; check: unless FILE
# is NEW, shows the difference and fails. SOURCE says what the table was read from,
# SUMMARY how much it holds.
write_or_check() {
    local mode=$1 new=$2 file=$3 source=$4 summary=$5
    case $mode in
    write)
        cp "$new" "$file"
        printf '%s: wrote %s (%s)\n' "${here##*/}" "${file#"$repo"/}" "$summary"
        ;;
    check)
        if ! diff -u "$file" "$new" >&2; then
            die "${file#"$repo"/} is not what $source say; run $0 write"
        fi
        printf '%s: %s matches %s (%s)\n' "${here##*/}" "${file#"$repo"/}" "$source" "$summary"
        ;;
    esac
}
