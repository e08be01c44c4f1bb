#!/usr/bin/env bash
# Short fuzz runs for CI: each target for FUZZ_SECONDS (60 by default) over the corpus that
# `fuzz-seeds` writes (the tracked seeds in fuzz/seeds/<target> and the generated ones): the
# directory FUZZ_CORPUS names (.ci/run writes it once per run), else a fresh one. A crash, a failed property, a timeout or an allocation
# over the limits fails the run (non-zero exit) and prints the input as hex for a
# regression test. See fuzz/README.md for what each target checks and for long campaigns.
#
# cargo-fuzz needs nightly-only rustc flags (-Zsanitizer, coverage instrumentation):
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them, and its rust-std ships the
# AddressSanitizer runtime, so no nightly toolchain is needed.
#
# No sanitizer by default (FUZZ_SANITIZER=address for one): the ASan build of the targets took
# about 13 minutes of a fresh-clone CI run, for a check that finds memory errors only unsafe
# code can make; our crates have a few small blocks, each with a proof comment and a test
# (`grep -rn unsafe src`), and they, the dependencies' unsafe code and zstd-sys's C are left
# to the ASan campaigns of fuzz/README.md. Without a
# sanitizer, libFuzzer's -malloc_limit_mb sees no allocation (it needs the sanitizer's malloc
# hooks); the targets' global allocator (kafka_codec_fuzz_oracle::alloc_limit, at
# MALLOC_LIMIT) aborts on one over 64 MiB instead.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${FUZZ_SECONDS:-60}
targets=(${FUZZ_TARGETS:-request_frame response json structured_roundtrip records views})
sanitizer=${FUZZ_SANITIZER:-none}
export RUSTC_BOOTSTRAP=1
# opt-level 1 for CI's short runs (FUZZ_OPT_LEVEL=3 for cargo-fuzz's default). Measured on an
# idle 2-core machine: a cold build of the six targets took 450 s of CPU at opt-level 1
# against about 1,025 s at 3; executions per second at 1 against 3, 20 s each on the seeds:
# request_frame 0.86x, response 1.0x, json 0.59x, structured_roundtrip 0.81x, records 1.15x,
# views 0.63x. Exported, so `cargo fuzz run` finds the build it made.
export CARGO_PROFILE_RELEASE_OPT_LEVEL=${FUZZ_OPT_LEVEL:-1}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz from crates.io"
    cargo install cargo-fuzz --locked
fi
cargo fuzz --version
build_start=$SECONDS

# -a: debug assertions (integer overflow checks) on, as in the campaigns.
build=(--sanitizer "$sanitizer" -a)
if ! cargo fuzz build "${build[@]}"; then
    [ "$sanitizer" != none ] || exit 1
    echo "build with --sanitizer $sanitizer failed; falling back to --sanitizer none"
    sanitizer=none
    build=(--sanitizer none -a)
    cargo fuzz build "${build[@]}"
fi
echo "fuzz: targets built in $((SECONDS - build_start))s"
# FUZZ_BUILD_ONLY=1: .ci/run builds the targets in the background (nice 19) from its first
# step, then runs this script again in the fuzz step, whose build above finds them fresh.
[ "${FUZZ_BUILD_ONLY:-}" != 1 ] || exit 0

# The corpus: the tracked, named seeds (fuzz/seeds/) and a seed for every schema and version,
# regenerated rather than committed (see fuzz/README.md).
if [ -n "${FUZZ_CORPUS:-}" ] && [ -d "$FUZZ_CORPUS" ]; then
    corpus=$FUZZ_CORPUS
else
    corpus=$(mktemp -d)
    (cd .. && cargo run -q -p kafka-codec-fuzz-oracle --bin fuzz-seeds -- "$corpus")
fi

# One input is at most 64 KiB, so no allocation may exceed 64 MiB: -malloc_limit_mb under a
# sanitizer, the targets' own allocator (the same limit) under none or any.
limits=(-max_len=65536 -malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=10)
failed=()
for target in "${targets[@]}"; do
    mkdir -p "$corpus/$target"  # a target without seeds starts from nothing
    work=$(mktemp -d)
    artifacts=$(mktemp -d)
    echo "=== fuzz $target for ${seconds}s (sanitizer $sanitizer)"
    # New inputs go to the scratch directory; the corpus is only read.
    if timeout $((seconds + 300)) cargo fuzz run "${build[@]}" "$target" "$work" "$corpus/$target" -- \
        "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$work.log" 2>&1; then
        grep -E '^#[0-9]+.*(DONE|pulse)' "$work.log" | tail -1 || true
        grep -E '^stat::number_of_executed_units' "$work.log" || true
    else
        failed+=("$target")
        tail -60 "$work.log"
        for artifact in "$artifacts"/*; do
            [ -f "$artifact" ] || continue
            echo "$target: $(basename "$artifact"): $(od -An -v -tx1 "$artifact" | tr -d ' \n')"
        done
    fi
    rm -rf "$work" "$work.log" "$artifacts"
done

[ "$corpus" = "${FUZZ_CORPUS:-}" ] || rm -rf "$corpus"

if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: failed targets: ${failed[*]}"
    exit 1
fi
echo "fuzz: ${#targets[@]} passed, 0 failed"
