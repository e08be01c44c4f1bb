//! Arbitrary bytes as a request frame: decode, and when it decodes, encode → decode gives the same frame.
//! The checks are in `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz::request_frame(data));
