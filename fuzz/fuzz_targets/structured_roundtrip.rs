//! Random messages valid for every schema and version: encode → decode gives the same message, encoded_len is exact.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::structured_roundtrip(data));
