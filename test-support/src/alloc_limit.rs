//! The fuzz targets' ceiling on a single allocation: an allocator (the system's, or the
//! [`CountingAllocator`](crate::counting_alloc::CountingAllocator)) that aborts the process
//! on any one request (`alloc`, `alloc_zeroed`, or the new size of a `realloc`) over
//! its limit.
//!
//! libFuzzer's `-malloc_limit_mb` sees a single malloc only through a sanitizer's malloc
//! hooks; a build with `--sanitizer none` (CI's, see `.ci/fuzz.sh`) has none, and the flag
//! then catches nothing. This allocator keeps the check there: the abort is a deadly signal
//! to libFuzzer, which fails the run and keeps the input. Aborting rather than returning null
//! also catches a `try_reserve` that would have turned the request into a quiet `Err`.
//!
//! A fuzz target installs it with
//! `#[global_allocator] static ALLOCATOR: LimitedAllocator = LimitedAllocator::new(LIMIT);`,
//! or around the counting allocator with `LimitedAllocator::wrapping(CountingAllocator::new(),
//! LIMIT)`.
//!
//! Only `std` is used.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// An allocator, `System` by default, with a ceiling on each request (see the module's
/// documentation).
pub struct LimitedAllocator<A = System> {
    inner: A,
    limit: usize,
}

impl LimitedAllocator {
    /// The system allocator: a request of more than `limit` bytes aborts; `limit` bytes are
    /// served.
    pub const fn new(limit: usize) -> Self {
        Self::wrapping(System, limit)
    }
}

impl<A> LimitedAllocator<A> {
    /// `inner`, with a request of more than `limit` bytes aborting.
    pub const fn wrapping(inner: A, limit: usize) -> Self {
        LimitedAllocator { inner, limit }
    }

    /// The largest request served.
    pub const fn limit(&self) -> usize {
        self.limit
    }

    /// Aborts with the request's size when it is over the limit. Writing a number to the
    /// unbuffered stderr allocates nothing, so this cannot re-enter the allocator.
    fn check(&self, size: usize) {
        if size > self.limit {
            let _ = writeln!(
                std::io::stderr(),
                "LimitedAllocator: an allocation of {size} bytes, over the limit of {} bytes",
                self.limit
            );
            std::process::abort();
        }
    }
}

// SAFETY: each method either aborts the process before touching memory or hands its
// arguments unchanged to the same method of `inner`, which implements `GlobalAlloc`'s
// contract, and returns `inner`'s result unchanged; a pointer passed in therefore came from
// `inner` with the layout given, as `inner` requires. The check allocates nothing (see
// `check`), so no call re-enters the allocator.
unsafe impl<A: GlobalAlloc> GlobalAlloc for LimitedAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.check(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract for `layout`; forwarded as is.
        unsafe { self.inner.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.check(layout.size());
        // SAFETY: as in `alloc`.
        unsafe { self.inner.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by this allocator, i.e. by `inner`, for `layout`.
        unsafe { self.inner.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.check(new_size);
        // SAFETY: `ptr` was returned by `inner` for `layout`, and the caller upholds
        // `realloc`'s contract for `new_size`; forwarded as is.
        unsafe { self.inner.realloc(ptr, layout, new_size) }
    }
}
