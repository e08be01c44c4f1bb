#!/usr/bin/env bash
# Issue 19, "a crate people can depend on": what a dependent and the registry see. Called by
# .ci/run after clippy; runs alone too (`bash tools/ci-publish.sh`); `--install-msrv` only
# installs the MSRV toolchains (see there); `--msrv` runs only the MSRV part and `--no-msrv`
# every part but that one (.ci/run runs the MSRV part in the background). Each part prints its
# seconds; a check that cannot run here prints a SKIPPED line saying why, never passes
# silently.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0 CARGO_TERM_COLOR=never
part() {
    local now
    now=$(date +%s)
    [ -n "${part_name:-}" ] && printf -- '--- %s: %ss\n' "$part_name" "$((now - part_start))"
    part_name=$1
    part_start=$now
    [ -n "$1" ] && printf -- '\n--- %s\n' "$1"
    return 0
}

rust_version() { # $1: package name -> its rust-version, padded to a toolchain name (1.82 -> 1.82.0)
    cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
v = next(p["rust_version"] for p in json.load(sys.stdin)["packages"] if p["name"] == sys.argv[1])
print(v if v.count(".") == 2 else v + ".0")' "$1"
}
have_toolchain() { # $1: toolchain; installed, or installed now
    rustup run "$1" rustc --version >/dev/null 2>&1 && return 0
    timeout 600 rustup toolchain install "$1" --profile minimal >/dev/null 2>&1 &&
        rustup run "$1" rustc --version >/dev/null 2>&1
}
# The packages whose rust-version the MSRV part builds with.
msrv_packages=(kafka-codec kafka-codec-cli)

# `--install-msrv`: only install the MSRV toolchains, and exit. .ci/run starts this in the
# background before its first build, so the download (about 170 s for two toolchains, most
# of it waiting on the network) overlaps the steps before this script's; the MSRV part below
# then finds them installed (or installs them itself if that failed).
if [ "${1:-}" = --install-msrv ]; then
    for package in "${msrv_packages[@]}"; do
        toolchain=$(rust_version "$package")
        if have_toolchain "$toolchain"; then
            echo "MSRV toolchain $toolchain installed (${SECONDS}s)"
        else
            echo "MSRV toolchain $toolchain could not be installed; the MSRV part tries again"
        fi
    done
    exit 0
fi
mode=${1:-all}
case $mode in all | --msrv | --no-msrv) ;; *) echo "usage: $0 [--install-msrv|--msrv|--no-msrv]" >&2; exit 2 ;; esac

if [ "$mode" != --msrv ]; then
part "relative links in README.md, benches/README.md and docs/*.md name existing files"
python3 tools/check_doc_links.py

part "doc examples name buffers and JSON through kafka_codec, as a dependent must"
# A doctest sees the crate's own dependencies, so `use bytes::...` compiles there and fails
# in a dependent that has no `bytes` of its own; hence a grep, not a test.
if grep -rnE '^\s*//[/!]\s*(# )?use (bytes|serde_json)::' src codegen/src; then
    echo "doc examples above import a dependency directly; use kafka_codec::bytes / kafka_codec::serde_json" >&2
    exit 1
fi

part "cargo publish --dry-run --workspace (the bench crate is publish = false)"
# --allow-dirty: earlier CI steps may leave files behind; what is packaged is set by each
# manifest's `include` list, not by the state of the tree. --no-verify: the verification
# built every package from its .crate (kafka-codec three times over: from its own package,
# then as the others' dependency with and without the CLI's `views`), which the next part
# builds too (kafka-codec there: by default, with the CLI's features, and with a client's
# few); see tools/package-check.sh.
cargo publish --dry-run --workspace --allow-dirty --no-verify 2>&1 |
    grep -vE '^warning: ignoring (test|example|bench) ' # each unshipped test target, by name

part "a fresh dependent builds from the packaged .crate files"
bash tools/package-check.sh

part "rustdoc -D warnings, every feature"
# The bench crate is never published, and documenting it would check kafka-protocol too.
RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --exclude kafka-codec-bench --no-deps --all-features

part "docs.rs build: --cfg docsrs, feature labels"
docsrs_toolchain=()
docsrs_env=()
# With stable, the rustc of the part above: RUSTDOCFLAGS reach only rustdoc, so the
# dependencies it checked are reused from its target directory rather than checked again
# (and this documentation replaces its kafka-codec pages, which nothing reads after it).
docsrs_target=target
if rustup run nightly rustc --version >/dev/null 2>&1; then
    docsrs_toolchain=(+nightly)
    # Another rustc: nothing to reuse, and its artifacts kept apart.
    docsrs_target=target/docsrs
else
    # As .ci/fuzz.sh does for its nightly flags; the labels are checked below either way.
    # For rustdoc only, through a wrapper: build scripts that probe for nightly features
    # rerun when RUSTC_BOOTSTRAP changes (proc-macro2's does), which would rebuild every
    # dependency here and again in each later step sharing this target directory.
    echo "no nightly toolchain: building the docs.rs docs with stable and RUSTC_BOOTSTRAP=1 (rustdoc only)"
    rustdoc_bootstrap=$(mktemp)
    printf '#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec rustdoc "$@"\n' >"$rustdoc_bootstrap"
    chmod +x "$rustdoc_bootstrap"
    docsrs_env=(RUSTDOC="$rustdoc_bootstrap")
fi
env "${docsrs_env[@]}" RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo "${docsrs_toolchain[@]}" doc -q \
    -p kafka-codec --all-features --no-deps --target-dir "$docsrs_target"
[ ${#docsrs_env[@]} = 0 ] || rm -f "$rustdoc_bootstrap"
# The labels themselves: a feature-gated module and a per-API item must carry one.
for page in conn/tokio/index.html messages/metadata_request/index.html; do
    if ! grep -q 'Available on <strong>crate feature' "$docsrs_target/doc/kafka_codec/$page"; then
        echo "docs.rs build: no feature label on $page" >&2
        exit 1
    fi
done
echo "feature labels present"
fi

if [ "$mode" != --no-msrv ]; then
part "MSRV: each declared rust-version builds"
# The committed Cargo.lock follows the newest releases, some of which need a newer Rust than
# the declared minimum; a dependent on that Rust gets older releases. The MSRV build therefore
# resolves its own lock, with cargo's rust-version-aware resolver (fallback: the newest
# release whose rust-version each package accepts), in a copy of the tracked tree under
# target/msrv, so the committed lock is left alone.
lib_msrv=$(rust_version "${msrv_packages[0]}")
cli_msrv=$(rust_version "${msrv_packages[1]}")
msrv_ws=target/msrv/ws
rm -rf "$msrv_ws"
mkdir -p "$msrv_ws"
git ls-files -z | grep -zv '^fuzz/' | xargs -0 cp --parents -t "$msrv_ws"
(cd "$msrv_ws" && CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo generate-lockfile -q)
msrv_check() { # $1: toolchain, then cargo check arguments
    local toolchain=$1
    shift
    if ! have_toolchain "$toolchain"; then
        echo "SKIPPED: MSRV toolchain $toolchain not available (rustup could not install it): cargo check $*"
        return 0
    fi
    echo "cargo +$toolchain check $*"
    (cd "$msrv_ws" && cargo "+$toolchain" check -q --target-dir ../target "$@")
}
msrv_check "$lib_msrv" -p kafka-codec --lib --all-features
msrv_check "$lib_msrv" -p kafka-codec --lib
msrv_check "$cli_msrv" -p kafka-codec-cli
rm -rf "$msrv_ws"
fi

if [ "$mode" != --msrv ]; then
part "semver: the public API against the latest release tag"
latest_tag=$(git tag --list 'v*' --sort=-version:refname | head -1)
if [ -z "$latest_tag" ]; then
    echo "SKIPPED: no v* release tag yet; the semver check starts at the first tagged version"
else
    tools_root=target/cargo-tools
    if ! "$tools_root/bin/cargo-semver-checks" --version >/dev/null 2>&1; then
        echo "installing cargo-semver-checks into $tools_root (cached there for later runs)"
        cargo install -q cargo-semver-checks --locked --root "$tools_root"
    fi
    echo "cargo semver-checks check-release -p kafka-codec --baseline-rev $latest_tag"
    PATH="$PWD/$tools_root/bin:$PATH" cargo semver-checks check-release -p kafka-codec \
        --baseline-rev "$latest_tag"
fi
fi

part ""
echo "publish checks: ${SECONDS}s in all"
