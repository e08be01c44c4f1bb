#!/usr/bin/env bash
# A fresh dependent builds from the packaged .crate files, not from the workspace: package
# every registry crate, unpack them outside the repository, and build and run a throwaway
# crate (tools/package-check/main.rs) against them through [patch.crates-io], once with the
# default features (beside the server and cluster crates, which turn on none beyond them) and
# once with `default-features = false, features = ["client", "metadata"]`; then build the
# CLI's package itself (its binary, on the other packages) and run it.
# A file missing from a package's `include` list fails here, where the workspace build
# would not notice. This is what `cargo publish --dry-run`'s verification built (every
# package's library, the CLI's binary, from the .crate files, the library at its default
# features), so tools/ci-publish.sh runs that with `--no-verify`; as it did, a build script
# must leave its package's files as they were (checked at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export CARGO_INCREMENTAL=0

# The crates meant for the registry, named: the bench, test-support and fuzz-oracle crates are
# `publish = false` and never packaged.
registry_crates=(-p kafka-codec-codegen -p kafka-codec -p kafka-codec-hexdump -p kafka-codec-server -p kafka-codec-cluster -p kafka-codec-cli)
cargo package "${registry_crates[@]}" --no-verify --allow-dirty -q

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/packages"
for crate in target/package/*.crate; do
    tar -xzf "$crate" -C "$work/packages"
    du -k "$crate" | awk -v c="$(basename "$crate")" '{ printf "package-check: %s is %d KiB\n", c, $1 }'
done
# The packaged version of each crate: the directory name after the crate name.
version_of() {
    local dir
    dir=$(find "$work/packages" -maxdepth 1 -type d -regex ".*/$1-[0-9][^/]*" | sort -V | tail -1)
    [ -n "$dir" ] || { echo "package-check: no package of $1 under target/package" >&2; exit 1; }
    echo "${dir##*/$1-}"
}
lib_version=$(version_of kafka-codec)
codegen_version=$(version_of kafka-codec-codegen)
server_version=$(version_of kafka-codec-server)
cluster_version=$(version_of kafka-codec-cluster)
hexdump_version=$(version_of kafka-codec-hexdump)
cli_version=$(version_of kafka-codec-cli)
# Every file of the unpacked packages but the lock files cargo writes, to compare after the
# builds.
package_files() {
    (cd "$work/packages" && find . -type f ! -name Cargo.lock -print0 | sort -z | xargs -0 sha256sum)
}
package_files >"$work/files.before"

# Registry dependencies come from crates.io; offline only when it cannot be reached (then
# the local cache must hold them), and that is said. Each dependent resolves its own lock.
offline=()
# Shares a target directory under the repository's, so registry crates build once per machine.
export CARGO_TARGET_DIR="$repo/target/package-check"
build() { # $1: label, $2: the kafka-codec dependency line, $3: the dependent's features
    local dir="$work/dependent-$1"
    mkdir -p "$dir/src"
    cp tools/package-check/main.rs "$dir/src/main.rs"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "package-check-$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$2

[features]
broker = []

[patch.crates-io]
kafka-codec = { path = "$work/packages/kafka-codec-$lib_version" }
kafka-codec-codegen = { path = "$work/packages/kafka-codec-codegen-$codegen_version" }
kafka-codec-server = { path = "$work/packages/kafka-codec-server-$server_version" }
kafka-codec-cluster = { path = "$work/packages/kafka-codec-cluster-$cluster_version" }

[workspace]
TOML
    echo "package-check: $1: $2"
    if [ ${#offline[@]} = 0 ] && ! (cd "$dir" && cargo generate-lockfile -q); then
        echo "package-check: crates.io unreachable; resolving --offline from the local cache"
        offline=(--offline)
    fi
    (cd "$dir" && cargo run -q "${offline[@]}" --features "$3")
    # The patch must have been used: the lock names no registry source for kafka-codec.
    if grep -A2 '^name = "kafka-codec"$' "$dir/Cargo.lock" | grep -q '^source'; then
        echo "package-check: $1 resolved kafka-codec from a registry, not the package" >&2
        exit 1
    fi
}
build default "kafka-codec = \"=$lib_version\"
kafka-codec-server = \"=$server_version\"
kafka-codec-cluster = \"=$cluster_version\"" broker
build client-metadata \
    "kafka-codec = { version = \"=$lib_version\", default-features = false, features = [\"client\", \"metadata\"] }" ""

# The CLI's own package, as `cargo install kafka-codec-cli` builds it: its binary
# on the other packages (the library with the `views` feature the CLI adds), then the binary
# runs.
cli_dir="$work/packages/kafka-codec-cli-$cli_version"
patches=()
for crate in kafka-codec kafka-codec-codegen kafka-codec-server kafka-codec-cluster kafka-codec-hexdump; do
    patches+=(--config "patch.crates-io.$crate.path=\"$(find "$work/packages" -maxdepth 1 -type d -name "$crate-[0-9]*" | sort -V | tail -1)\"")
done
echo "package-check: kafka-codec-cli $cli_version, its binary"
(cd "$cli_dir" && cargo build -q "${offline[@]}" "${patches[@]}")
"$CARGO_TARGET_DIR/debug/kafka-codec" --help >/dev/null
if grep -A2 -E '^name = "kafka-codec(-server|-cluster|-hexdump)?"$' "$cli_dir/Cargo.lock" | grep -q '^source'; then
    echo "package-check: the CLI resolved a kafka-codec package from a registry, not the package" >&2
    exit 1
fi

# As `cargo publish`'s verification: no build script wrote into its package.
package_files >"$work/files.after"
if ! diff "$work/files.before" "$work/files.after"; then
    echo "package-check: the builds above changed the packages' files (a build script writing outside OUT_DIR?)" >&2
    exit 1
fi
echo "package-check: OK"
