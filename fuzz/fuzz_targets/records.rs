//! Byte 0 holds flags (Fetch reader, CRC checks off, headers only), the rest is a records
//! field: reading never panics or over-allocates, and what reads round-trips through bytes
//! and JSON. The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

use kafka_codec_fuzz_oracle::{alloc_limit::LimitedAllocator, MALLOC_LIMIT};

// A single allocation over the limit aborts, with or without a sanitizer.
#[global_allocator]
static ALLOCATOR: LimitedAllocator = LimitedAllocator::new(MALLOC_LIMIT);

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::records(data));
