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
    println!("cargo:rerun-if-env-changed=KAFKA_CODEC_NO_SYMBOL_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" || profile_directory().as_deref() != Some("dist") {
        return;
    }
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("dist-symbol-order.txt");
    if order.is_file()
        && std::env::var_os("KAFKA_CODEC_NO_SYMBOL_ORDER").is_none()
        && rustc_minor().is_some_and(|minor| minor >= 90)
    {
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

/// The minor version of the rustc building this (`rustc 1.95.0 (…)` → 95).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let output = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}
