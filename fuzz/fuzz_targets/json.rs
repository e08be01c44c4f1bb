//! Arbitrary bytes as the JSON form of a chosen message and version: read, encode, decode, compare.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

use kafka_codec_fuzz_oracle::{alloc_limit::LimitedAllocator, MALLOC_LIMIT};

// A single allocation over the limit aborts, with or without a sanitizer.
#[global_allocator]
static ALLOCATOR: LimitedAllocator = LimitedAllocator::new(MALLOC_LIMIT);

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::json(data));
