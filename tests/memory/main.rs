//! Memory bounds, measured with the counting allocator of `kafka-codec-test-support`: what a
//! decode allocates for a hostile frame (`alloc_bound`), for issue 11's dense frames
//! (`dense_alloc`), for decompression bombs (`records_alloc`), and the zero-copy views'
//! routing reads, which allocate nothing (`views_alloc`, with the `views` feature).
//!
//! A binary of its own, apart from the other areas' tests: it installs the counting allocator
//! as the global allocator. That allocator counts only the thread that measures; every test
//! still takes `SERIAL` for its whole run, so that the tests' 2–8 MiB frames are not built
//! side by side on a 2-core machine.

use kafka_codec_test_support::counting_alloc::CountingAllocator;
use std::sync::Mutex;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Held by every test of this binary while it runs.
static SERIAL: Mutex<()> = Mutex::new(());

mod alloc_bound;
mod dense_alloc;
mod records_alloc;
#[cfg(all(feature = "views", feature = "client", feature = "broker"))]
mod views_alloc;
