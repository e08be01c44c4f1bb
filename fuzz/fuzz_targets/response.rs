//! Bytes 0-1 pick an API and version, the rest is a response frame: decode, and when it decodes, encode → decode gives the same frame.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

use kafka_codec_fuzz_oracle::alloc_limit::LimitedAllocator;
use kafka_codec_fuzz_oracle::counting_alloc::CountingAllocator;
use kafka_codec_fuzz_oracle::MALLOC_LIMIT;

// Counts the heap, so the checks can hold each decode to its memory budget. And a single
// allocation over the limit aborts, with or without a sanitizer.
#[global_allocator]
static ALLOCATOR: LimitedAllocator<CountingAllocator> =
    LimitedAllocator::wrapping(CountingAllocator::new(), MALLOC_LIMIT);

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::response(data));
