//! Arbitrary bytes as the JSON form of a chosen message and version: read, encode, decode, compare.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::json(data));
