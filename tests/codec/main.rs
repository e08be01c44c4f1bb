//! The codec: messages and frames against Kafka's own bytes (golden files, vectors,
//! releases), round trips of random messages, hostile and malformed input (binary and JSON),
//! decode limits, the frame API, segments, JSON transcoding, redaction and the memory-density
//! table. One test binary for the area, so that `cargo test` links one binary, not twelve.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod frame_api;
mod golden_replay;
mod json_bad_input;
mod limits;
mod memory_density;
mod redact;
mod releases;
mod roundtrip;
mod segments;
mod transcode;
mod vectors;
