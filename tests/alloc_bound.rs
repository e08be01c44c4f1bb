//! Decoding never reserves memory out of proportion to its input: a 16-byte request frame
//! that claims 2^31 array elements is answered with an error after allocating almost nothing.

use bytes::Bytes;
use kafka_codec::{DecodeErrorKind, RequestFrame};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts bytes allocated while `COUNTING` is on; otherwise the system allocator.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s
// contract; the counter update has no effect on the memory handed out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATED.fetch_add(layout.size(), Ordering::SeqCst);
        }
        // SAFETY: same layout the caller gave us, forwarded to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn sixteen_bytes_claiming_two_billion_elements_allocate_under_one_kib() {
    let frame = Bytes::from_static(&[
        0x00, 0x37, // DescribeQuorum
        0x00, 0x00, // version 0 (flexible: request header v2)
        0x00, 0x00, 0x00, 0x01, // correlation id
        0xff, 0xff, // client id null
        0x00, // header tags
        0x81, 0x80, 0x80, 0x80, 0x08, // Topics: compact count 2^31 + 1, i.e. 2^31 elements
    ]);
    assert_eq!(frame.len(), 16);
    ALLOCATED.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let result = RequestFrame::decode(frame);
    COUNTING.store(false, Ordering::SeqCst);
    let allocated = ALLOCATED.load(Ordering::SeqCst);
    let err = result.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::LengthExceedsInput {
                declared: 0x8000_0000,
                ..
            }
        ),
        "{err}"
    );
    assert!(allocated < 1024, "allocated {allocated} bytes");
    eprintln!("allocated {allocated} bytes while refusing the frame");
}
