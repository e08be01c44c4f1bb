//! Arbitrary bytes as a request or response frame read through a zero-copy view: making the
//! view never panics nor allocates past the owned decode's budget, it accepts and refuses
//! exactly as the owned decoder does, and walking every accessor gives the owned frame.
//! The checks are in `tools/fuzz-oracle/src/lib.rs`.
#![no_main]

use kafka_codec_fuzz_oracle::alloc_limit::LimitedAllocator;
use kafka_codec_fuzz_oracle::counting_alloc::CountingAllocator;
use kafka_codec_fuzz_oracle::MALLOC_LIMIT;

// Counts the heap, so the checks can hold each view to the owned decode's memory budget. And a
// single allocation over the limit aborts, with or without a sanitizer.
#[global_allocator]
static ALLOCATOR: LimitedAllocator<CountingAllocator> =
    LimitedAllocator::wrapping(CountingAllocator::new(), MALLOC_LIMIT);

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_codec_fuzz_oracle::views(data));
