#!/usr/bin/env bash
# Build time of a tiny dependent: clean builds of a binary that decodes one
# DescribeQuorumResponse v2, once against kafka-codec and once against kafka-protocol 0.18, in
# one run, interleaved, each in a fresh target directory. Prints a markdown table of wall time
# and CPU time (user, and user + system) per build, and the load average before each build.
#
#   bash benches/build-time.sh                      # every configuration, release and debug
#   ROUNDS=3 bash benches/build-time.sh             # three interleaved rounds; the table has medians
#   CONFIGS="kp-client kc-client" PROFILES=release bash benches/build-time.sh
#   KAFKA_CODEC_SRC=/path/to/other/checkout bash benches/build-time.sh   # e.g. an older commit
#   KAFKA_CODEC_BASELINE=/path/to/main CONFIGS="kc-baseline kc-default" bash benches/build-time.sh
#
# Configurations (the dependent's dependency line):
#   kp-client   kafka-protocol 0.18, default-features = false, features = ["client"]
#   kp-default  kafka-protocol 0.18, default features (both directions, compression codecs)
#   kc-client   kafka-codec, default-features = false, features = ["client", "all-apis"]
#   kc-default  kafka-codec, default features
#   kc-api      kafka-codec, default-features = false, features = ["client", "describe-quorum"]
#   kc-client-views  kc-client with the zero-copy views (feature "views")
#   kc-baseline kafka-codec from $KAFKA_CODEC_BASELINE (another checkout), default features
#   kc-baseline-client  the same checkout with kc-client's features
#   kc-baseline-client-views  the same checkout with kc-client-views's features
#
# Every build runs with CARGO_INCREMENTAL=0: kafka-codec is a path dependency here, and cargo
# compiles path dependencies incrementally in debug builds, which a dependent that takes the
# crate from a registry would not pay. Dependencies are fetched before the first timed build;
# the timed builds run `--offline`. Scratch space: $BUILD_TIME_DIR (default a fresh directory
# under ${TMPDIR:-/tmp}), deleted at the end unless KEEP=1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${KAFKA_CODEC_SRC:-$here/..}" && pwd)
baseline=${KAFKA_CODEC_BASELINE:+$(cd "$KAFKA_CODEC_BASELINE" && pwd)}
rounds=${ROUNDS:-1}
profiles=${PROFILES:-release debug}
configs=${CONFIGS:-kp-client kc-client kp-default kc-default}
work=${BUILD_TIME_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/build-time.XXXXXX")}
mkdir -p "$work"
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT

# The body of tests/golden/describe_quorum_response_v2.txt (the frame minus its size prefix
# and response header v1): a two-voter quorum with one observer.
body='0x00,0x00,0x01,0x02,0x13,0x5f,0x5f,0x63,0x6c,0x75,0x73,0x74,0x65,0x72,0x5f,0x6d,0x65,0x74,
0x61,0x64,0x61,0x74,0x61,0x02,0x00,0x00,0x00,0x00,0x00,0x00,0x01,0x00,0x00,0x00,0x01,0x00,0x00,
0x00,0x05,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x03,0x03,0x00,0x00,0x00,0x01,0x01,0x01,0x01,0x01,
0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x01,0x00,0x00,0x00,0x00,0x00,0x00,0x00,
0x04,0x00,0x00,0x01,0x8b,0xcf,0xe5,0x68,0xc8,0x00,0x00,0x01,0x8b,0xcf,0xe5,0x68,0xc8,0x00,0x00,
0x00,0x00,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,
0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x03,0x00,0x00,0x01,0x8b,0xcf,0xe5,0x68,0x64,0x00,0x00,0x01,
0x8b,0xcf,0xe5,0x68,0x64,0x00,0x02,0x00,0x00,0x00,0x03,0x03,0x03,0x03,0x03,0x03,0x03,0x03,0x03,
0x03,0x03,0x03,0x03,0x03,0x03,0x03,0x03,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x03,0x00,0x00,0x01,
0x8b,0xcf,0xe5,0x68,0x64,0x00,0x00,0x01,0x8b,0xcf,0xe5,0x68,0x64,0x00,0x00,0x00,0x03,0x00,0x00,
0x00,0x01,0x02,0x0b,0x43,0x4f,0x4e,0x54,0x52,0x4f,0x4c,0x4c,0x45,0x52,0x03,0x63,0x31,0x23,0x85,
0x00,0x00,0x00,0x00,0x00,0x02,0x02,0x0b,0x43,0x4f,0x4e,0x54,0x52,0x4f,0x4c,0x4c,0x45,0x52,0x03,
0x63,0x32,0x23,0x85,0x00,0x00,0x00'

# Writes the dependent crate for configuration $1 into $work/$1.
make_dependent() {
    local name=$1 dir=$work/$1 dep uses decode
    case $name in
    kp-client) dep='kafka-protocol = { version = "=0.18.0", default-features = false, features = ["client"] }' ;;
    kp-default) dep='kafka-protocol = "=0.18.0"' ;;
    kc-client) dep="kafka-codec = { path = \"$src\", default-features = false, features = [\"client\", \"all-apis\"] }" ;;
    kc-client-views) dep="kafka-codec = { path = \"$src\", default-features = false, features = [\"client\", \"all-apis\", \"views\"] }" ;;
    kc-default) dep="kafka-codec = { path = \"$src\" }" ;;
    kc-api) dep="kafka-codec = { path = \"$src\", default-features = false, features = [\"client\", \"describe-quorum\"] }" ;;
    kc-baseline)
        [ -n "$baseline" ] || { echo "kc-baseline needs KAFKA_CODEC_BASELINE" >&2; exit 2; }
        dep="kafka-codec = { path = \"$baseline\" }"
        ;;
    kc-baseline-client)
        [ -n "$baseline" ] || { echo "kc-baseline-client needs KAFKA_CODEC_BASELINE" >&2; exit 2; }
        dep="kafka-codec = { path = \"$baseline\", default-features = false, features = [\"client\", \"all-apis\"] }"
        ;;
    kc-baseline-client-views)
        [ -n "$baseline" ] || { echo "kc-baseline-client-views needs KAFKA_CODEC_BASELINE" >&2; exit 2; }
        dep="kafka-codec = { path = \"$baseline\", default-features = false, features = [\"client\", \"all-apis\", \"views\"] }"
        ;;
    *) echo "unknown configuration $name" >&2; exit 2 ;;
    esac
    case $name in
    kp-*)
        dep="$dep
bytes = \"1\""
        uses='use kafka_protocol::messages::DescribeQuorumResponse;
use kafka_protocol::protocol::Decodable;'
        decode='let mut buf = bytes::Bytes::from_static(BODY);
    let response = DescribeQuorumResponse::decode(&mut buf, 2).expect("decodes");
    println!("{} topics, {} nodes", response.topics.len(), response.nodes.len());'
        ;;
    kc-*)
        uses='use kafka_codec::messages::DescribeQuorumResponse;
use kafka_codec::Message;'
        decode='let mut buf = kafka_codec::bytes::Bytes::from_static(BODY);
    let response = DescribeQuorumResponse::decode(&mut buf, 2).expect("decodes");
    println!("{} topics, {} nodes", response.topics.len(), response.nodes.len());'
        ;;
    esac
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "dependent-$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$dep

# Not part of any enclosing workspace.
[workspace]
EOF
    cat >"$dir/src/main.rs" <<EOF
$uses

const BODY: &[u8] = &[$body];

fn main() {
    $decode
}
EOF
    (cd "$dir" && cargo fetch -q)
}

# Clean build of configuration $1 in profile $2; appends "config profile wall user sys load".
measure() {
    local name=$1 profile=$2 target=$work/target-$1-$2 flag=() load t
    [ "$profile" = release ] && flag=(--release)
    rm -rf "$target"
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -o "$work/time" -f '%e %U %S' env CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$target" \
        cargo build -q --offline "${flag[@]}" --manifest-path "$work/$name/Cargo.toml" \
        >/dev/null 2>"$work/build.log" || {
        cat "$work/build.log" >&2
        exit 1
    }
    t=$(tail -1 "$work/time")
    # The binary must run and decode the response.
    "$target/$profile/dependent-$name" >/dev/null
    rm -rf "$target"
    echo "$name $profile $t $load" >>"$work/results"
    printf '  %-10s %-7s wall %6ss  user %6ss  sys %5ss  (load %s)\n' "$name" "$profile" $t "$load" >&2
}

for name in $configs; do make_dependent "$name"; done
: >"$work/results"
echo "kafka-codec from $src; $(nproc) cores; $rounds round(s)" >&2
for round in $(seq "$rounds"); do
    echo "round $round" >&2
    for profile in $profiles; do
        for name in $configs; do measure "$name" "$profile"; done
    done
done

python3 - "$work/results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, profile, wall, user, sys_, load = line.split()
    rows.setdefault((name, profile), []).append((float(wall), float(user), float(sys_), float(load)))
label = {
    "kp-client": 'kafka-protocol 0.18, `default-features = false, features = ["client"]`',
    "kp-default": "kafka-protocol 0.18, default features",
    "kc-client": 'kafka-codec, `default-features = false, features = ["client", "all-apis"]`',
    "kc-client-views": 'kafka-codec, `default-features = false, features = ["client", "all-apis", "views"]`',
    "kc-default": "kafka-codec, default features",
    "kc-api": 'kafka-codec, `default-features = false, features = ["client", "describe-quorum"]`',
    "kc-baseline": "kafka-codec before (baseline checkout), default features",
    "kc-baseline-client": 'kafka-codec before (baseline checkout), `["client", "all-apis"]`',
    "kc-baseline-client-views": 'kafka-codec before (baseline checkout), `["client", "all-apis", "views"]`',
}
def fmt(seconds):
    return f"{int(seconds // 60)} m {seconds % 60:02.0f} s" if seconds >= 60 else f"{seconds:.0f} s"
print("| clean build of a tiny dependent | profile | wall | CPU user | CPU user+sys | load |")
print("|---|---|---:|---:|---:|---:|")
for (name, profile), runs in rows.items():
    med = lambda i: statistics.median(r[i] for r in runs)
    print(f"| {label[name]} | {profile} | {fmt(med(0))} | {med(1):.0f} s | {med(1) + med(2):.0f} s | {med(3):.1f} |")
EOF
