//! Links the `kafka-codec` binary of the `dist` profile (the workspace's Cargo.toml) so that
//! an idle `kafka-codec cluster` keeps less of it in memory, on x86_64 Linux (glibc): the
//! functions that start and idle run are placed together (`dist-symbol-order.txt`, written by
//! `benches/cluster/startup_order.py`), since the kernel maps the pages around each faulting
//! address and startup code spread over the whole text kept most of it resident. The order
//! file needs rust-lld, the target's default linker from rustc 1.90 on; with an older rustc,
//! or `KAFKA_CODEC_NO_SYMBOL_ORDER` set, it is left out.
//!
//! It stays a position-independent executable, so the loader still places it at a random
//! address (ASLR): `kafka-codec` also runs `tap`, in front of real brokers, and a
//! fixed-address link saved only 0.5 MiB more (the relocated read-only data).
//!
//! Measured in benches/README.md (branches `rss11`, and "PIE kept" after it). Other profiles
//! keep the defaults.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=dist-symbol-order.txt");
    println!("cargo:rerun-if-changed=dist-symbol-order.rustc");
    println!("cargo:rerun-if-env-changed=KAFKA_CODEC_NO_SYMBOL_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" || profile_directory().as_deref() != Some("dist") {
        return;
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let order = here.join("dist-symbol-order.txt");
    let rustc = rustc_version();
    let minor = rustc.as_deref().and_then(rustc_minor);
    if order.is_file()
        && std::env::var_os("KAFKA_CODEC_NO_SYMBOL_ORDER").is_none()
        && minor.is_some_and(|minor| minor >= 90)
    {
        // The names carry the toolchain's hashes: after a toolchain update most of them miss
        // and the build is only as good as without the file. Say so rather than stay silent.
        let written_for =
            std::fs::read_to_string(here.join("dist-symbol-order.rustc")).unwrap_or_default();
        if let Some(rustc) = rustc.as_deref().filter(|r| r.trim() != written_for.trim()) {
            println!(
                "cargo:warning=dist-symbol-order.txt was written for `{}`, this build uses \
                 `{}`: its names may miss, and an idle `kafka-codec cluster` then keeps \
                 ~3 MiB more resident. Rewrite it: benches/cluster/startup_order.py",
                written_for.trim(),
                rustc.trim()
            );
        }
        println!(
            "cargo:rustc-link-arg-bin=kafka-codec=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // A name this build does not have (another toolchain, a changed dependency) is
        // skipped; the file is a layout hint, not a requirement.
        println!("cargo:rustc-link-arg-bin=kafka-codec=-Wl,--no-warn-symbol-ordering");
    }
}

/// Cargo does not tell a build script its profile's name; the output directory is
/// `TARGET/[TRIPLE/]PROFILE/build/PACKAGE-HASH/out`.
fn profile_directory() -> Option<String> {
    let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
    Some(out.ancestors().nth(3)?.file_name()?.to_str()?.to_owned())
}

/// What the rustc building this says of itself (`rustc 1.95.0 (59807616e 2026-04-14)`).
fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC")?;
    let output = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    String::from_utf8(output.stdout).ok()
}

/// The minor version in rustc's `--version` line (`rustc 1.95.0 (…)` → 95).
fn rustc_minor(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}
