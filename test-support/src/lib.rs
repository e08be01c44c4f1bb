//! Helpers shared across the workspace's crates: the library's tests, the CLI's tests, the
//! bench crate and the fuzz oracle (`tools/fuzz-oracle`). A crate of its own, so that each of
//! them depends on it instead of including its files by `#[path]` across crate boundaries.
//!
//! Only `std` is used (see `Cargo.toml`).

pub mod alloc_limit;
pub mod counting_alloc;
pub mod dense;
