//! Peak resident memory of the `kafka-codec` binary's children (as `wait4` reports it, per
//! child), against the library's own decode of the same input: issue 11's dense frames
//! (`dense`) and record batches (`records_memory`). Some tests run this binary again as a
//! child, naming one of its tests (`--exact`), to measure the library alone.

#[path = "../support/mod.rs"]
mod support;

mod dense;
mod records_memory;
