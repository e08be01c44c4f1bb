//! The counting allocator counts the measuring thread only: another thread that allocates a
//! large block while a measurement runs leaves it unchanged.

use kafka_codec_test_support::counting_alloc::{measure, CountingAllocator};
use std::hint::black_box;
use std::sync::atomic::{AtomicU8, Ordering::SeqCst};
use std::thread;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

#[test]
fn another_threads_allocations_are_not_counted() {
    // 0: wait, 1: allocate now, 2: allocated and holding it, 3: free it and end.
    static STEP: AtomicU8 = AtomicU8::new(0);
    let other = thread::spawn(|| {
        while STEP.load(SeqCst) != 1 {
            thread::yield_now();
        }
        let block = black_box(vec![1u8; 1 << 20]);
        STEP.store(2, SeqCst);
        while STEP.load(SeqCst) != 3 {
            thread::yield_now();
        }
        drop(block);
    });
    let (len, stats) = measure(|| {
        STEP.store(1, SeqCst);
        while STEP.load(SeqCst) != 2 {
            thread::yield_now();
        }
        // Allocated while the other thread holds its megabyte.
        let mine = black_box(vec![2u8; 100]);
        STEP.store(3, SeqCst);
        mine.len()
    });
    other.join().unwrap();
    assert_eq!(len, 100);
    assert_eq!(stats.peak, 100, "{stats:?}");
    assert_eq!(stats.peak_if_copied, 100, "{stats:?}");
    assert_eq!(stats.largest, 100, "{stats:?}");
    assert_eq!(stats.requested, 100, "{stats:?}");
}

#[test]
fn peaks_are_above_the_heap_at_the_start() {
    let old = black_box(vec![0u8; 4096]);
    let (_, stats) = measure(|| {
        let grown: Vec<u8> = black_box(Vec::with_capacity(1000));
        drop(old);
        let again: Vec<u8> = black_box(Vec::with_capacity(2000));
        grown.capacity() + again.capacity()
    });
    // 1,000 bytes above the start, then 4 KiB freed that was live before: the 2,000 bytes
    // allocated after it leave the heap below where it started.
    assert_eq!(stats.peak, 1000, "{stats:?}");
    assert_eq!(stats.requested, 3000, "{stats:?}");
}
