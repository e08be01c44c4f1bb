//! The one counting global allocator of the tests, the fuzz targets and the memory tool: the
//! system allocator, with counters beside it, so that a check can compare what a decode
//! allocated with a bound.
//!
//! A binary installs it with
//! `#[global_allocator] static ALLOCATOR: CountingAllocator = CountingAllocator::new();`
//! and measures a closure with [`measure`]. The counters are this module's statics: each
//! binary has its own, and they stay 0 in a binary that does not install the allocator.
//!
//! Only the measuring thread's allocations are counted. A test harness allocates on threads
//! of its own while a test runs (libtest's main thread collects results and prints them,
//! other tests start and finish), and counting those made a measurement of a few bytes read
//! as kilobytes on a loaded machine or in a release build. The closure [`measure`] runs must
//! therefore do its work on the calling thread, as every decode does. Measurements still take
//! a mutex, since the counters are shared.
//!
//! Only `std` is used.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

thread_local! {
    /// Whether this thread is inside [`measure`]. A `const` initialiser and a type without
    /// `Drop`: reading it never allocates (no lazy initialisation, no destructor to
    /// register), so the allocator may read it.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread's allocations are counted. False while the thread-local is
/// being torn down, when it cannot be read.
fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

/// Bytes the measuring thread allocated and has not freed since its measurement began:
/// negative when it frees blocks that were live before.
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The most `LIVE` reached since the last reset, a `realloc` counted as its growth.
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// As `PEAK`, but every `realloc` holding its old and its new block at once.
static PEAK_IF_COPIED: AtomicUsize = AtomicUsize::new(0);
/// The largest block asked for (by `alloc` or `realloc`).
static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// Bytes of every `alloc` and the whole new size of every `realloc`.
static REQUESTED: AtomicUsize = AtomicUsize::new(0);
/// Bytes in blocks handed out: a `realloc` that moved counts its whole new block, one that
/// stayed in place its growth.
static TOTAL: AtomicUsize = AtomicUsize::new(0);
static REALLOCS: AtomicUsize = AtomicUsize::new(0);
static MOVED: AtomicUsize = AtomicUsize::new(0);
static MOVED_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Keeps the measurements of one binary's tests, which run on parallel threads, apart.
static MEASURING: Mutex<()> = Mutex::new(());

/// The system allocator, counting (see the module's documentation).
pub struct CountingAllocator;

impl CountingAllocator {
    pub const fn new() -> Self {
        CountingAllocator
    }
}

impl Default for CountingAllocator {
    fn default() -> Self {
        Self::new()
    }
}

/// The live bytes as a peak: never below the start of the measurement.
fn as_peak(live: isize) -> usize {
    usize::try_from(live).unwrap_or(0)
}

/// A new block of `size` bytes (by `alloc`, `alloc_zeroed` or a `realloc` that moved).
fn allocated(size: usize) {
    let grow = size as isize;
    let live = as_peak(LIVE.fetch_add(grow, Relaxed) + grow);
    PEAK.fetch_max(live, Relaxed);
    PEAK_IF_COPIED.fetch_max(live, Relaxed);
    LARGEST.fetch_max(size, Relaxed);
    REQUESTED.fetch_add(size, Relaxed);
    TOTAL.fetch_add(size, Relaxed);
}

/// A successful `realloc` of a block of `old` bytes to `new` bytes, `moved` or in place.
fn reallocated(old: usize, new: usize, moved: bool) {
    REALLOCS.fetch_add(1, Relaxed);
    LARGEST.fetch_max(new, Relaxed);
    REQUESTED.fetch_add(new, Relaxed);
    let change = new as isize - old as isize;
    let before = LIVE.fetch_add(change, Relaxed);
    PEAK.fetch_max(as_peak(before + change), Relaxed);
    PEAK_IF_COPIED.fetch_max(as_peak(before + new as isize), Relaxed);
    if moved {
        TOTAL.fetch_add(new, Relaxed);
        MOVED.fetch_add(1, Relaxed);
        MOVED_BYTES.fetch_add(old.min(new), Relaxed);
    } else {
        TOTAL.fetch_add(new.saturating_sub(old), Relaxed);
    }
}

// SAFETY: each method hands its arguments unchanged to the same method of `System`, which
// implements `GlobalAlloc`'s contract, and returns `System`'s result unchanged; a pointer
// passed in therefore came from `System` with the layout given, as `System` requires. The
// counters are atomics beside the memory, only ever given sizes and the returned address, and
// they allocate nothing, so no call re-enters the allocator; nor does reading the `COUNTING`
// thread-local (const-initialised, no destructor).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract for `layout`; forwarded as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() && counting() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() && counting() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counting() {
            LIVE.fetch_sub(layout.size() as isize, Relaxed);
        }
        // SAFETY: `ptr` was returned by this allocator, i.e. by `System`, for `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was returned by `System` for `layout`, and the caller upholds
        // `realloc`'s contract for `new_size`; forwarded as is.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() && counting() {
            reallocated(layout.size(), new_size, new != ptr);
        }
        new
    }
}

/// What the allocator counted of the measuring thread while [`measure`] ran its closure.
/// Peaks are above the bytes live when it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// The most heap live at once, a `realloc` counted as its growth (a large one remaps
    /// pages rather than copying).
    pub peak: usize,
    /// The same, but every `realloc` counted as holding its old and new block at once, as a
    /// copying one does: a bound that does not depend on where the system put the block.
    pub peak_if_copied: usize,
    /// The largest block asked for.
    pub largest: usize,
    /// Bytes asked for: every `alloc` and the whole new size of every `realloc`.
    pub requested: usize,
    /// Bytes in blocks handed out: a `realloc` that moved counts its whole new block, one in
    /// place its growth.
    pub total: usize,
    /// Every `realloc`.
    pub reallocs: usize,
    /// The `realloc`s that moved their block, and the bytes they copied.
    pub moved: usize,
    pub moved_bytes: usize,
}

/// Stops counting the thread when dropped, also when the measured closure panics.
struct CountingGuard;

impl CountingGuard {
    fn start() -> Self {
        COUNTING.with(|on| on.set(true));
        CountingGuard
    }
}

impl Drop for CountingGuard {
    fn drop(&mut self) {
        // `try_with`: a panic during the thread's teardown must not panic again here.
        let _ = COUNTING.try_with(|on| on.set(false));
    }
}

/// Runs `f` on this thread, alone among this binary's measurements, and returns what this
/// thread allocated meanwhile (other threads' allocations are not counted). Zeros where the
/// binary did not install [`CountingAllocator`].
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Stats) {
    // A measurement that panicked (a failed assertion inside `f`) leaves nothing to repair.
    let _alone = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    LIVE.store(0, Relaxed);
    for counter in [
        &PEAK,
        &PEAK_IF_COPIED,
        &LARGEST,
        &REQUESTED,
        &TOTAL,
        &REALLOCS,
        &MOVED,
        &MOVED_BYTES,
    ] {
        counter.store(0, Relaxed);
    }
    let value = {
        let _counting = CountingGuard::start();
        f()
    };
    let stats = Stats {
        peak: PEAK.load(Relaxed),
        peak_if_copied: PEAK_IF_COPIED.load(Relaxed),
        largest: LARGEST.load(Relaxed),
        requested: REQUESTED.load(Relaxed),
        total: TOTAL.load(Relaxed),
        reallocs: REALLOCS.load(Relaxed),
        moved: MOVED.load(Relaxed),
        moved_bytes: MOVED_BYTES.load(Relaxed),
    };
    (value, stats)
}
