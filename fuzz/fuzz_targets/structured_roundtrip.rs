//! Random messages valid for every schema and version: encode → decode gives the same message, encoded_len is exact.
//! The checks are in `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz::structured_roundtrip(data));
