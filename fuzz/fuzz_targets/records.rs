//! Byte 0 holds flags (Fetch reader, CRC checks off, headers only), the rest is a records
//! field: reading never panics or over-allocates, and what reads round-trips through bytes
//! and JSON. The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::records(data));
