//! Memory bounds, measured with the counting allocator of `kafka-codec-test-support`: what a
//! decode allocates for a hostile frame (`alloc_bound`), for issue 11's dense frames
//! (`dense_alloc`) and for decompression bombs (`records_alloc`).
//!
//! A binary of its own, apart from the other areas' tests: it installs the counting allocator
//! as the global allocator, which counts every thread's allocations. Within it, every test
//! takes `SERIAL` for its whole run, so that no other test allocates while one is measured.

use kafka_codec_test_support::counting_alloc::CountingAllocator;
use std::sync::Mutex;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Held by every test of this binary while it runs.
static SERIAL: Mutex<()> = Mutex::new(());

mod alloc_bound;
mod dense_alloc;
mod records_alloc;
