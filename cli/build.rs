//! Links the `kafka-codec` binary of the `dist` profile (the workspace's Cargo.toml) so that
//! an idle `kafka-codec cluster` keeps less of it in memory, on x86_64 Linux (glibc):
//!
//! - as a fixed-address (non-PIE) executable: a position-independent one has every pointer
//!   in its read-only data (vtables, string tables: about 22,000) relocated by the loader at
//!   each start, which reads the relocation table (0.7 MiB) and copies the pages it writes
//!   into private memory (0.5 MiB) before `main` runs;
//! - with the functions that start and idle run placed together (`dist-symbol-order.txt`,
//!   written by `benches/cluster/startup_order.py`): the kernel maps the pages around each
//!   faulting address, so startup code spread over the whole text kept most of it resident.
//!   The order file needs rust-lld, the target's default linker from rustc 1.90 on; with an
//!   older rustc, or `KAFKA_CODEC_NO_SYMBOL_ORDER` set, it is left out.
//!
//! Measured in benches/README.md (branch `rss11`). Other profiles keep the defaults.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=dist-symbol-order.txt");
    println!("cargo:rerun-if-env-changed=KAFKA_CODEC_NO_SYMBOL_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu" || profile_directory().as_deref() != Some("dist") {
        return;
    }
    // After rustc's own `-pie`; the last of the two wins. The code is position-independent
    // either way; only the link changes.
    println!("cargo:rustc-link-arg-bin=kafka-codec=-no-pie");
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
