//! Arbitrary bytes as a request frame: decode, and when it decodes, encode → decode gives the same frame.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

// Counts the heap, so the checks can hold each decode to its memory budget.
#[global_allocator]
static ALLOCATOR: kafka_codec_fuzz_oracle::counting_alloc::CountingAllocator =
    kafka_codec_fuzz_oracle::counting_alloc::CountingAllocator::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::request_frame(data));
