//! The runtime of zero-copy views (feature `views`): the walk the generated views read with,
//! their two modes, their iterators and values, and the helpers their generated checks call.
//!
//! Each generated view (`codegen/src/emit/view.rs`) has, per struct, straight-line code for
//! every version as the owned decoder has: `view_check`, which checks the struct's bytes as
//! the owned decoder reads them; `view_skip_to`, which steps over its first fields to the one
//! an accessor reads (fixed-width fields are constant steps the compiler folds), and marks
//! what it stepped over ([`ViewMark`]: where the struct's last `bytes` field lies, where its
//! variable-width fields end and its tagged section starts), so that the accessors of a
//! struct found by a step start where the step passed their field; `view_step`, the same step
//! marking nothing (over array elements, whose marks nobody reads); and
//! `view_read_owned`, which reads the whole struct of a checked view in one pass (what its
//! `to_owned` falls back on; `to_owned` runs the owned decoder, [`OwnedDecode`]).
//!
//! **Two modes, one generator** ([`ViewMode`]). A [`Checked`] view (the default) was made
//! after `view_check` passed over the whole frame: it uses the owned decoder's own readers
//! (`Decoder::read_str`, `read_array_count`, `read_tagged_fields`, ...) and charges the
//! memory budget as the owned decode reserves, so it refuses what the owned decoder refuses.
//! Its accessors then cannot fail and return plain values. A [`Lazy`] view was made after
//! checking only the framing and header; its accessors return `Result`s.
//!
//! **The walk.** Both modes read with [`Walk`]: every read is bounds-checked (`get`, against
//! the frame's end); a read past it yields a zero or an empty value and marks the walk bad,
//! as do a string that is not UTF-8, a null where the field cannot be null, a varint longer
//! than five bytes, and (lazy only) a value over the `DecodeLimits`. A checked view never
//! sees a bad walk (its bytes were checked); a lazy accessor turns one into the owned
//! decoder's error for the whole frame ([`LazyOrigin`]). Steps over fields (`skip_*`) read
//! only lengths and counts, every count bounded by the frame's length, so any walk is
//! finite and proportional to the frame. Strings are checked as UTF-8 when read (`utf8`:
//! `is_ascii`, else `str::from_utf8`), so no walk, even over hostile bytes, can make a `&str`
//! of bytes that are not UTF-8; the one `unsafe` block is that check's ASCII case.

use super::array::{FixedWidth, INLINE_CAPACITY};
use super::{DecodeError, DecodeErrorKind, DecodeLimits, Decoder, TaggedFields, Utf8Bytes, Uuid};
use super::{PrimitiveArray, RawTaggedField};
use crate::frame::DecodeOptions;
use bytes::Bytes;
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

// ---------------------------------------------------------------------------------------------
// Checking, once, when a view is made (called by the generated `view_check`)

/// A generated `view_check`: a struct's bytes at a version, checked from the decoder's
/// position.
pub type ViewCheck = fn(&mut Decoder<'_>, i16) -> Result<(), DecodeError>;

/// The owned decoder of a struct (`DecodeFields::decode_fields`): what a lazy view's
/// `to_owned` runs on its bytes.
pub type OwnedDecode<T> = fn(&mut Decoder<'_>, i16) -> Result<T, DecodeError>;

/// The elements of a `bool` array: `Vec<bool>` in the owned struct, one byte each.
#[inline]
pub fn check_bool_array(d: &mut Decoder<'_>, count: usize) -> Result<(), DecodeError> {
    d.charge(count)?;
    d.skip(count)
}

/// The elements of a fixed-width array: a `PrimitiveArray`, inline when short, else one shared
/// `Bytes` behind a box.
#[inline]
pub fn check_fixed_array(
    d: &mut Decoder<'_>,
    count: usize,
    width: usize,
) -> Result<(), DecodeError> {
    let len = count * width;
    if len > INLINE_CAPACITY {
        d.charge(std::mem::size_of::<Bytes>())?;
    }
    d.skip(len)
}

/// A whole array of fixed-width values (count and elements), nullable where `nullable`.
#[inline]
pub fn check_fixed_array_field(
    d: &mut Decoder<'_>,
    compact: bool,
    nullable: bool,
    width: usize,
) -> Result<(), DecodeError> {
    // A short compact array that cannot be null is the common case (replica lists).
    if compact && !nullable && d.skip_short_compact_array(width) {
        return Ok(());
    }
    let count = check_count(d, compact, nullable, width)?;
    check_fixed_array(d, count, width)
}

/// The elements of a string array.
pub fn check_str_array(
    d: &mut Decoder<'_>,
    count: usize,
    compact: bool,
) -> Result<(), DecodeError> {
    d.charge(count.saturating_mul(std::mem::size_of::<Utf8Bytes>()))?;
    for _ in 0..count {
        d.read_str(compact)?;
    }
    Ok(())
}

/// The elements of an array of `bytes`.
pub fn check_bytes_array(
    d: &mut Decoder<'_>,
    count: usize,
    compact: bool,
) -> Result<(), DecodeError> {
    d.charge(count.saturating_mul(std::mem::size_of::<Bytes>()))?;
    for _ in 0..count {
        d.read_byte_slice(compact)?;
    }
    Ok(())
}

/// The elements of a struct array, each `owned_size` bytes in the owned `Vec`: one nesting
/// level for every element, as the owned decoder counts it.
#[inline]
pub fn check_struct_array(
    d: &mut Decoder<'_>,
    count: usize,
    owned_size: usize,
    mut check: impl FnMut(&mut Decoder<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    d.charge(count.saturating_mul(owned_size))?;
    if count == 0 {
        return Ok(());
    }
    d.enter()?;
    for _ in 0..count {
        check(d)?;
    }
    d.leave();
    Ok(())
}

/// A nested struct (not an array): `nullable` reads its marker first.
#[inline]
pub fn check_struct(
    d: &mut Decoder<'_>,
    nullable: bool,
    check: impl FnOnce(&mut Decoder<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    if nullable && !d.read_struct_marker()? {
        return Ok(());
    }
    d.enter()?;
    check(d)?;
    d.leave();
    Ok(())
}

/// An array's count (0 for null where `nullable`), checked as the owned decoder checks it.
#[inline]
pub fn check_count(
    d: &mut Decoder<'_>,
    compact: bool,
    nullable: bool,
    min_element_size: usize,
) -> Result<usize, DecodeError> {
    if nullable {
        Ok(d.read_array_len(compact, min_element_size)?.unwrap_or(0))
    } else {
        d.read_array_count(compact, min_element_size)
    }
}

/// A string, nullable where `nullable`.
#[inline]
pub fn check_str(d: &mut Decoder<'_>, compact: bool, nullable: bool) -> Result<(), DecodeError> {
    if nullable {
        d.read_nullable_str(compact).map(drop)
    } else {
        d.read_str(compact).map(drop)
    }
}

/// `bytes` or `records`, nullable where `nullable`.
#[inline]
pub fn check_bytes(d: &mut Decoder<'_>, compact: bool, nullable: bool) -> Result<(), DecodeError> {
    if nullable {
        d.read_nullable_byte_slice(compact).map(drop)
    } else {
        d.read_byte_slice(compact).map(drop)
    }
}

// ---------------------------------------------------------------------------------------------
// Modes: checked once when made, or lazy

/// How a view reads its bytes: [`Checked`] (the default) or [`Lazy`].
///
/// A checked view's bytes were checked whole when it was made, so its accessors return
/// their values (`Out<T>` is `T`). A lazy view was made after checking only the frame's
/// framing and header, so each accessor returns `Result<T, DecodeError>` (`Out<T>`): it
/// fails when the bytes it reads or steps over run past the frame, or the value it reads
/// is refused (a string that is not UTF-8 or longer than the limit, bytes or an array over
/// the limit), with the error, offset and field path the owned decoder gives for the whole
/// frame. What it steps over is not otherwise checked (that is what makes it cheap).
pub trait ViewMode: Copy + 'static + sealed::Sealed {
    /// What the views of this mode carry to report an error: nothing for [`Checked`], the
    /// frame's [`LazyOrigin`] for [`Lazy`].
    type Origin<'a>: Copy;
    /// What an accessor returns for a value of type `T`.
    type Out<T>;
    /// Whether this is [`Lazy`]: a lazy iterator steps over its last element when asked past
    /// it, a checked one (its bytes were checked) need not.
    #[doc(hidden)]
    const LAZY: bool;
    #[doc(hidden)]
    fn bytes<'a>(buf: &'a Bytes, origin: Self::Origin<'a>) -> &'a [u8];
    /// A lazy iterator's item for bad bytes found past its last element (the owned
    /// decoder's error); `None` for a checked view, whose bytes cannot be bad.
    #[doc(hidden)]
    fn failed<'a, T>(origin: Self::Origin<'a>) -> Option<Self::Out<T>>;
    /// Where the array of structs last walked to its end by a lazy iterator of this frame
    /// ends ([`ArrayEnd`]): a step over that array starts there (0 = none; a checked view
    /// keeps none).
    #[doc(hidden)]
    fn array_end<'a>(origin: Self::Origin<'a>) -> u64;
    /// Remembers where a lazy iterator found the end of its array ([`ArrayEnd`]).
    #[doc(hidden)]
    fn set_array_end<'a>(origin: Self::Origin<'a>, end: u64);
    #[doc(hidden)]
    fn finish<'a, T>(origin: Self::Origin<'a>, ok: bool, value: T) -> Self::Out<T>;
    #[doc(hidden)]
    fn limits<'a>(origin: Self::Origin<'a>) -> Option<&'a DecodeLimits>;
    /// An accessor's value as a `Result` (a checked one is always `Ok`).
    #[doc(hidden)]
    fn result<T>(out: Self::Out<T>) -> Result<T, DecodeError>;
    /// The owned struct at the cursor, decoded by the owned decoder `decode` (a lazy view's
    /// errors are the owned decoder's; a checked view's bytes cannot fail, and `read`, the
    /// view's own reader, stands behind it).
    #[doc(hidden)]
    fn to_owned<'a, T: Default>(
        cursor: ViewCursor<'a, Self>,
        decode: OwnedDecode<T>,
        read: fn(&mut Walk<'a, Checked>) -> T,
    ) -> Self::Out<T>;
}

/// The limits a checked view's `to_owned` decodes under: none, its bytes were checked.
const UNLIMITED: DecodeLimits = DecodeLimits {
    max_frame_size: usize::MAX,
    max_array_len: usize::MAX,
    max_string_len: usize::MAX,
    max_bytes_len: usize::MAX,
    max_nesting: usize::MAX,
    max_decompressed_batch_size: usize::MAX,
    memory_budget: Some(usize::MAX),
};

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Checked {}
    impl Sealed for super::Lazy {}
}

/// Views checked whole when made (`RequestFrameView::new`, `view_message`): accessors
/// cannot fail.
#[derive(Clone, Copy, Debug)]
pub struct Checked;

/// Views checked only as far as their framing and header when made
/// (`LazyRequestFrame::new`, `LazyResponseFrame::new`, `LazyMessage::new`): each accessor
/// reads and bounds-checks only what it needs and returns a `Result` (see [`ViewMode`]).
#[derive(Clone, Copy, Debug)]
pub struct Lazy;

impl ViewMode for Checked {
    type Origin<'a> = ();
    type Out<T> = T;
    const LAZY: bool = false;

    #[inline]
    fn failed<'a, T>(_: Self::Origin<'a>) -> Option<T> {
        None
    }

    #[inline]
    fn array_end<'a>(_: Self::Origin<'a>) -> u64 {
        0
    }

    #[inline]
    fn set_array_end<'a>(_: Self::Origin<'a>, _: u64) {}

    #[inline]
    fn bytes<'a>(buf: &'a Bytes, _: Self::Origin<'a>) -> &'a [u8] {
        buf.as_ref()
    }

    #[inline]
    fn finish<'a, T>(_: Self::Origin<'a>, _: bool, value: T) -> T {
        value
    }

    #[inline]
    fn limits<'a>(_: Self::Origin<'a>) -> Option<&'a DecodeLimits> {
        None
    }

    #[inline]
    fn result<T>(out: T) -> Result<T, DecodeError> {
        Ok(out)
    }

    #[inline]
    fn to_owned<'a, T: Default>(
        cursor: ViewCursor<'a, Self>,
        decode: OwnedDecode<T>,
        read: fn(&mut Walk<'a, Checked>) -> T,
    ) -> T {
        let Some(at) = cursor.at else {
            return T::default();
        };
        // The owned decoder is the faster reader (its arrays are reserved once, its structs
        // built in place). The bytes were checked against the caller's limits when the view
        // was made, so they are decoded here under none: this decode cannot fail. Should it
        // (a bug), the view's own reader, which never fails, reads them instead.
        let mut d = Decoder::with_limits_in(cursor.buf, at, cursor.frame.len(), UNLIMITED);
        match decode(&mut d, cursor.version) {
            Ok(value) => value,
            Err(_) => match cursor.walk() {
                Some(mut w) => read(&mut w),
                None => T::default(),
            },
        }
    }
}

impl ViewMode for Lazy {
    type Origin<'a> = &'a LazyOrigin<'a>;
    type Out<T> = Result<T, DecodeError>;
    const LAZY: bool = true;

    #[cold]
    fn failed<'a, T>(origin: Self::Origin<'a>) -> Option<Result<T, DecodeError>> {
        Some(Err(origin.error(None)))
    }

    #[inline]
    fn array_end<'a>(origin: Self::Origin<'a>) -> u64 {
        origin.array_end.load(Ordering::Relaxed)
    }

    #[inline]
    fn set_array_end<'a>(origin: Self::Origin<'a>, end: u64) {
        origin.array_end.store(end, Ordering::Relaxed);
    }

    #[inline]
    fn bytes<'a>(buf: &'a Bytes, origin: Self::Origin<'a>) -> &'a [u8] {
        buf.get(..origin.end).unwrap_or_default()
    }

    #[inline]
    fn finish<'a, T>(origin: Self::Origin<'a>, ok: bool, value: T) -> Result<T, DecodeError> {
        if ok {
            Ok(value)
        } else {
            Err(origin.error(None))
        }
    }

    #[inline]
    fn limits<'a>(origin: Self::Origin<'a>) -> Option<&'a DecodeLimits> {
        Some(&origin.options.limits)
    }

    #[inline]
    fn result<T>(out: Result<T, DecodeError>) -> Result<T, DecodeError> {
        out
    }

    fn to_owned<'a, T: Default>(
        cursor: ViewCursor<'a, Self>,
        decode: OwnedDecode<T>,
        _: fn(&mut Walk<'a, Checked>) -> T,
    ) -> Result<T, DecodeError> {
        let origin = cursor.origin;
        let Some(at) = cursor.at else {
            return Ok(T::default());
        };
        // Nothing of the struct was checked: the owned decoder reads it from its bytes in
        // place, one pass that checks and builds at once (a check and then a checked read
        // would be two), so a lazy `to_owned` costs what the owned decode costs.
        let mut d = Decoder::with_limits_in(cursor.buf, at, origin.end, origin.options.limits);
        decode(&mut d, cursor.version).map_err(|e| origin.error(Some(e)))
    }
}

/// Where a lazy view's bytes come from, to report an error as the owned decoder would: the
/// input, where its frame ends, the options, and how the owned decoder reads it.
pub struct LazyOrigin<'a> {
    input: &'a Bytes,
    end: usize,
    options: DecodeOptions,
    key: i16,
    version: i16,
    redo: fn(&LazyOrigin<'_>) -> Result<(), DecodeError>,
    /// The array of structs that a lazy iterator last walked to its end, every element
    /// stepped over without a bad read ([`ArrayEnd`]): a later step over the struct that
    /// holds it (the iterator of its parent's array, asked for the next element or past the
    /// last) starts past it instead of stepping over its elements again. One word, read and
    /// written whole, so that views of one frame on several threads only ever see a pair
    /// that some walk found.
    array_end: AtomicU64,
}

impl<'a> LazyOrigin<'a> {
    /// The origin of a frame or message in `input[..end]` that `redo` decodes owned.
    pub(crate) fn new(
        input: &'a Bytes,
        end: usize,
        options: DecodeOptions,
        (key, version): (i16, i16),
        redo: fn(&LazyOrigin<'_>) -> Result<(), DecodeError>,
    ) -> Self {
        LazyOrigin {
            input,
            end,
            options,
            key,
            version,
            redo,
            array_end: AtomicU64::new(0),
        }
    }

    /// The input.
    pub fn input(&self) -> &'a Bytes {
        self.input
    }

    /// The options the view was made with.
    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    /// The API key (-1 for a message that is not an API's body) and version the bytes were
    /// read at.
    pub fn api(&self) -> (i16, i16) {
        (self.key, self.version)
    }

    /// The owned decoder's error for these bytes, which a lazy read found bad: a bad frame
    /// is rare, so the owned decoder reads it again to give the error its kind, offset and
    /// path. Should it accept them (a lazy read cannot see everything the owned decoder
    /// does, but never refuses what it accepts), `found` or an end-of-input error stands.
    ///
    ///
    /// Inside [`ViaAccessors`] (a read that builds the message from its accessors) the
    /// owned decode waits: `found` or the end-of-input error is returned as is, and the
    /// outermost such read decodes again once what it built is dropped.
    #[cold]
    #[inline(never)]
    pub(crate) fn error(&self, found: Option<DecodeError>) -> DecodeError {
        if VIA_ACCESSORS.with(Cell::get) > 0 {
            ERROR_DEFERRED.with(|deferred| deferred.set(Some(found.is_none())));
            return found.unwrap_or_else(|| self.end_of_input());
        }
        self.owned_error(found)
    }

    /// The owned decoder's error for these bytes, or `found` (else the end-of-input error)
    /// should it accept them.
    #[cold]
    #[inline(never)]
    fn owned_error(&self, found: Option<DecodeError>) -> DecodeError {
        match (self.redo)(self) {
            Err(e) => e,
            Ok(()) => found.unwrap_or_else(|| self.end_of_input()),
        }
    }

    /// The error of a lazy read that found its bytes bad without an error of its own.
    fn end_of_input(&self) -> DecodeError {
        let kind = DecodeErrorKind::UnexpectedEof {
            needed: 1,
            remaining: 0,
        };
        DecodeError::new(kind, self.end)
    }

    /// Whether `e` is [`LazyOrigin::end_of_input`]'s error.
    fn is_end_of_input(&self, e: &DecodeError) -> bool {
        let eof = DecodeErrorKind::UnexpectedEof {
            needed: 1,
            remaining: 0,
        };
        *e.kind() == eof && e.offset() == self.end
    }
}

thread_local! {
    /// How many [`ViaAccessors`] reads run on this thread, one inside another. A `const`
    /// initialiser and no `Drop`: reading it never allocates.
    static VIA_ACCESSORS: Cell<u32> = const { Cell::new(0) };
    /// Whether a lazy read inside them failed and left the owned decode, which gives the
    /// error its kind and path, to the outermost: `Some(true)` when it had no error of its
    /// own to return (it returned the end-of-input error).
    static ERROR_DEFERRED: Cell<Option<bool>> = const { Cell::new(None) };
}

/// A read that builds an owned value from a lazy view's accessors (the generated
/// `to_owned_via_accessors`, which calls its `read_via_accessors` between [`enter`] and
/// [`finish`]): a failure is given the owned decoder's error only after everything the read
/// built is dropped. A read that fails late, in the last element of a big array, holds
/// nearly the whole message when it fails; the owned decode that names the error takes as
/// much again, so run at the failing read the peak was about twice the owned decode's heap
/// (`tests/memory/views_alloc.rs`). Nested structs are read without it
/// (`read_via_accessors`, which passes a failure up as it is); one inside another does the
/// same, and the outermost decodes once. Leaves the read when dropped, also on a panic.
///
/// [`enter`]: ViaAccessors::enter
/// [`finish`]: ViaAccessors::finish
#[doc(hidden)]
pub struct ViaAccessors {
    outermost: bool,
}

impl ViaAccessors {
    /// Enters a read through the accessors.
    #[inline]
    pub fn enter() -> Self {
        let outermost = VIA_ACCESSORS.with(|depth| {
            let outer = depth.get();
            depth.set(outer.saturating_add(1));
            outer == 0
        });
        if outermost {
            ERROR_DEFERRED.with(|deferred| deferred.set(None));
        }
        ViaAccessors { outermost }
    }

    /// Leaves the read with its `result`, the owned decoder's error given to a failure the
    /// read deferred if this is the outermost.
    #[inline]
    pub fn finish<T>(
        self,
        origin: &LazyOrigin<'_>,
        result: Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        let outermost = self.outermost;
        drop(self);
        if !outermost || result.is_ok() {
            return result;
        }
        deferred_error(origin, result)
    }
}

impl Drop for ViaAccessors {
    fn drop(&mut self) {
        // `try_with`: a panic during the thread's teardown must not panic again here.
        let _ = VIA_ACCESSORS.try_with(|depth| depth.set(depth.get().saturating_sub(1)));
    }
}

/// The outermost read's failure, named once what it built is dropped: only its result is
/// alive, and an end-of-input error (made again should the owned decoder accept the bytes)
/// not even that.
#[cold]
#[inline(never)]
fn deferred_error<T>(
    origin: &LazyOrigin<'_>,
    result: Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match (result, ERROR_DEFERRED.with(Cell::take)) {
        (Err(found), Some(true)) if origin.is_end_of_input(&found) => {
            drop(found);
            Err(origin.owned_error(None))
        }
        (Err(found), Some(_)) => Err(origin.owned_error(Some(found))),
        (result, _) => result,
    }
}

impl std::fmt::Debug for LazyOrigin<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyOrigin")
            .field("len", &self.end)
            .field("key", &self.key)
            .field("version", &self.version)
            .finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

/// A position in a view's bytes. Every read is bounds-checked (`get`); a read past the end
/// yields a zero or an empty value and marks the walk bad, which a checked view never sees
/// (its bytes were checked) and a lazy view turns into the owned decoder's error.
#[derive(Clone, Copy)]
pub struct Walk<'a, M: ViewMode> {
    buf: &'a Bytes,
    /// All the bytes the view may read (the frame), for the structs found in this walk.
    frame: &'a [u8],
    /// The bytes this walk may read: the frame, or a tagged field's value.
    bytes: &'a [u8],
    pos: usize,
    version: i16,
    compact: bool,
    bad: bool,
    origin: M::Origin<'a>,
}

impl<'a, M: ViewMode> Walk<'a, M> {
    /// The version the bytes were written at.
    #[inline]
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The input.
    #[inline]
    pub fn buf(&self) -> &'a Bytes {
        self.buf
    }

    /// Whether every read so far was within the bytes and valid.
    #[inline]
    pub fn ok(&self) -> bool {
        !self.bad
    }

    /// Whether the next value's lengths are compact (set before each read).
    #[inline]
    pub fn set_compact(&mut self, compact: bool) {
        self.compact = compact;
    }

    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        match self
            .bytes
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
        {
            Some(value) => {
                // Within the bytes, so no overflow: a plain addition.
                self.pos += N;
                *value
            }
            None => self.past_end(N, [0; N]),
        }
    }

    #[inline]
    fn slice(&mut self, len: usize) -> &'a [u8] {
        let start = self.pos;
        match self.bytes.get(start..).and_then(|rest| rest.get(..len)) {
            Some(slice) => {
                self.pos = start + len;
                slice
            }
            None => self.past_end(len, &[]),
        }
    }

    /// A read of `len` bytes past the end: the walk is bad, and steps on (saturating) so that
    /// a lazy walk's later reads fail too.
    #[cold]
    fn past_end<T>(&mut self, len: usize, empty: T) -> T {
        self.bad = true;
        self.pos = self.pos.saturating_add(len);
        empty
    }

    #[inline]
    fn uvarint(&mut self) -> u64 {
        // Nearly every varint here is one byte (a short length, an empty tagged section);
        // a records length of up to 2 MiB is three.
        if let Some(&[a, b, c]) = self
            .bytes
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk())
        {
            if a < 0x80 {
                self.pos += 1;
                return u64::from(a);
            }
            if b < 0x80 {
                self.pos += 2;
                return u64::from(a & 0x7f) | u64::from(b) << 7;
            }
            if c < 0x80 {
                self.pos += 3;
                return u64::from(a & 0x7f) | u64::from(b & 0x7f) << 7 | u64::from(c) << 14;
            }
        }
        // The rare long varint, read apart from the walk: a call that took the walk by
        // reference would keep it in memory (not registers) in every loop that steps.
        let (value, pos, bad) = uvarint_long(self.bytes, self.pos);
        self.pos = pos;
        self.bad |= bad;
        value
    }

    /// A length prefix; `None` for null (negative).
    // Always inlined: every string, bytes and array read starts here, and a call would keep
    // the walk in memory rather than registers (LLVM outlined it in Fetch's walk otherwise).
    #[inline(always)]
    fn len(&mut self, classic_i16: bool) -> Option<usize> {
        let len = if self.compact {
            self.uvarint() as i64 - 1
        } else if classic_i16 {
            i64::from(i16::from_be_bytes(self.take()))
        } else {
            i64::from(i32::from_be_bytes(self.take()))
        };
        // Any negative length is null, as the owned decoder reads it where null is allowed
        // (where it is not, the reader marks the walk bad).
        usize::try_from(len).ok()
    }

    /// Steps over `len` bytes (fixed-width fields); a step past the end shows at the next
    /// read.
    #[inline]
    pub fn skip(&mut self, len: usize) {
        self.pos = self.pos.saturating_add(len);
    }

    /// Steps over a string, null or not.
    #[inline]
    pub fn skip_str(&mut self, compact: bool) {
        self.compact = compact;
        let len = self.len(true).unwrap_or(0);
        self.skip(len);
    }

    /// Steps over `bytes` or `records`, null or not.
    #[inline]
    pub fn skip_bytes(&mut self, compact: bool) {
        self.compact = compact;
        let len = self.len(false).unwrap_or(0);
        self.skip(len);
    }

    /// Steps over `bytes` or `records` as [`Walk::skip_bytes`] does, and marks where its value
    /// lies ([`ViewMark`]), so that the struct's view reads it without reading its length again.
    #[inline]
    pub fn skip_bytes_marked(&mut self, compact: bool, mark: &mut ViewMark) {
        self.compact = compact;
        let (at, end) = match self.len(false) {
            None => (ViewMark::NULL_AT, 0),
            Some(len) => {
                let at = self.pos;
                self.skip(len);
                (at, self.pos)
            }
        };
        // Marked only when read whole and within the walk's bytes (a tagged value's, where
        // the walk is inside one); else the accessor walks to it as for any field.
        if !self.bad && end <= self.bytes.len() {
            (mark.at, mark.end) = (at, end);
        }
    }

    /// Marks where the walk is as the end of the struct's variable-width field `slot`
    /// ([`ViewMark`]).
    #[inline]
    pub fn mark_after(&self, mark: &mut ViewMark, slot: usize) {
        if let Some(after) = mark.after.get_mut(slot) {
            *after = self.marked_pos();
        }
    }

    /// Marks where the walk is as the start of the struct's tagged section.
    #[inline]
    pub fn mark_tagged(&self, mark: &mut ViewMark) {
        mark.tagged = self.marked_pos();
    }

    /// The position as a mark holds it: unknown past what `u32` holds (frames that large are
    /// then walked as before).
    #[inline]
    fn marked_pos(&self) -> u32 {
        u32::try_from(self.pos).unwrap_or(NOT_MARKED)
    }

    /// An array's count (0 for null), bounded by the input so that any walk stays finite.
    #[inline]
    pub fn count(&mut self, compact: bool) -> usize {
        self.compact = compact;
        self.len(false).unwrap_or(0).min(self.bytes.len())
    }

    /// Steps over an array of fixed-width values `width` bytes each.
    #[inline]
    pub fn skip_fixed_array(&mut self, compact: bool, width: usize) {
        // Nearly every such array (a replica list) is compact and short: a one-byte count,
        // 0 for null, else the element count plus one.
        if compact {
            if let Some(&count) = self.bytes.get(self.pos) {
                if count < 0x80 {
                    let elements = usize::from(count.saturating_sub(1));
                    self.pos += 1 + elements * width;
                    return;
                }
            }
        }
        let count = self.count(compact);
        self.skip(count.saturating_mul(width));
    }

    /// Steps over an array of strings.
    pub fn skip_str_array(&mut self, compact: bool) {
        for _ in 0..self.count(compact) {
            self.skip_str(compact);
        }
    }

    /// Steps over an array of `bytes`.
    pub fn skip_bytes_array(&mut self, compact: bool) {
        for _ in 0..self.count(compact) {
            self.skip_bytes(compact);
        }
    }

    /// Steps over an array of structs: of a lazy view, at once to its end where a lazy
    /// iterator walked this array (at this position of this frame) to its end already
    /// ([`ArrayEnd`]), every element stepped over then.
    #[inline]
    pub fn skip_struct_array<V: StructView<'a, Mode = M>>(&mut self, compact: bool) {
        if M::LAZY {
            if let Some(end) = self.known_array_end() {
                self.compact = compact;
                self.pos = end;
                return;
            }
        }
        for _ in 0..self.count(compact) {
            V::step(self);
        }
    }

    /// Where this walk may take the end of the array whose count is at its position from a
    /// lazy iterator's walk over it ([`ArrayEnd`]).
    #[inline]
    fn known_array_end(&self) -> Option<usize> {
        let end = ArrayEnd::find(M::array_end(self.origin), self.pos)?;
        (end <= self.bytes.len()).then_some(end)
    }

    /// Steps over a struct (after its marker where `nullable`).
    #[inline]
    pub fn skip_struct<V: StructView<'a, Mode = M>>(&mut self, nullable: bool) {
        if !nullable || self.take::<1>()[0] as i8 >= 0 {
            V::step(self);
        }
    }

    /// Steps over a tagged section.
    #[inline]
    pub fn skip_tagged(&mut self) {
        // Nearly every section is empty: the zero byte.
        if self.bytes.get(self.pos) == Some(&0) {
            self.pos += 1;
            return;
        }
        // Apart from the walk, as `uvarint_long`.
        let (pos, bad) = tagged_entries_end(self.bytes, self.pos);
        self.pos = pos;
        self.bad |= bad;
    }

    /// Finds tagged field `tag` in the section (the walk is at it, and ends past the entries
    /// it read): where its value starts and ends.
    fn find_tagged(&mut self, tag: u32) -> Option<(usize, usize)> {
        let count = self.uvarint().min(self.bytes.len() as u64);
        for _ in 0..count {
            let t = self.uvarint() as u32;
            let size = self.uvarint() as usize;
            let at = self.pos;
            self.slice(size);
            if self.bad {
                return None;
            }
            if t == tag {
                return Some((at, self.pos));
            }
        }
        None
    }

    /// The walk over tagged field `tag`'s value (bounded by the value's size), if the section
    /// (the walk is at it) has it.
    #[inline]
    pub fn tagged(&mut self, tag: u32) -> Option<Walk<'a, M>> {
        let (at, end) = self.find_tagged(tag)?;
        Some(Walk {
            pos: at,
            bytes: self.bytes.get(..end).unwrap_or_default(),
            ..*self
        })
    }

    /// [`Walk::tagged`] of a copy of the walk (at the section), which stays where it is.
    #[inline]
    pub fn tagged_from(mut self, tag: u32) -> Option<Walk<'a, M>> {
        self.tagged(tag)
    }

    /// The raw value of tagged field `tag` in the section (the walk is at it).
    #[inline]
    pub fn raw_tagged(&mut self, tag: u32) -> Option<&'a [u8]> {
        let (at, end) = self.find_tagged(tag)?;
        self.bytes.get(at..end)
    }

    /// The tagged fields of the section (the walk is at it) that `known` does not know, as
    /// the owned decoder keeps them ([`Walk::read_unknown_tagged`] of a copy of the walk).
    pub fn unknown_tagged(mut self, known: impl Fn(u32) -> bool) -> TaggedFields {
        self.read_unknown_tagged(known)
    }

    /// The tagged fields of the section (the walk is at it, and ends past it) that `known`
    /// does not know, as the owned decoder keeps them; none where the section is bad, which
    /// marks the walk bad.
    ///
    /// Allocates no more than the owned decoder would for the section: a count the owned
    /// decoder refuses (over a lazy view's `max_array_len`, or more entries than two bytes
    /// each leave room for) is refused before anything is reserved, the entries are
    /// reserved once (for those left when the first unknown one comes, as the owned decoder
    /// does), and the first read past the section's bytes ends the read. A lazy view's bad
    /// section once kept reading entries (tag 0, no value) past the end of the input, one for
    /// each of the count it claimed up to the input's length: 289 bytes of input took 30 KiB.
    pub fn read_unknown_tagged(&mut self, known: impl Fn(u32) -> bool) -> TaggedFields {
        // Nearly every section is empty: its count is the zero byte.
        if self.bytes.get(self.pos) == Some(&0) {
            self.pos += 1;
            return TaggedFields::new();
        }
        self.read_unknown_entries(&known)
    }

    /// [`Walk::read_unknown_tagged`] of a section that is not the empty one: out of line, one
    /// body for every `known`.
    #[inline(never)]
    fn read_unknown_entries(&mut self, known: &dyn Fn(u32) -> bool) -> TaggedFields {
        let count = self.uvarint();
        let room = self.bytes.len().saturating_sub(self.pos) as u64;
        if count.saturating_mul(2) > room
            || self
                .limits()
                .is_some_and(|l| count > l.max_array_len as u64)
        {
            self.bad = true;
        }
        if self.bad {
            return TaggedFields::new();
        }
        let buf = self.buf;
        let mut unknown = Vec::new();
        for entry in 0..count {
            let tag = self.uvarint() as u32;
            let size = self.uvarint() as usize;
            let value = self.slice(size);
            if self.bad {
                return TaggedFields::new();
            }
            if known(tag) {
                continue;
            }
            if unknown.capacity() == 0 {
                // At most one entry per two bytes left: checked above.
                unknown.reserve_exact((count - entry) as usize);
            }
            unknown.push(RawTaggedField {
                tag,
                data: share(buf, value),
            });
        }
        unknown.into()
    }

    /// A value of `T`, read as nullable where `nullable`.
    #[inline]
    pub fn read<T: ViewNullable<'a, M>>(&mut self, compact: bool, nullable: bool) -> Option<T> {
        self.compact = compact;
        if nullable {
            T::read_nullable(self)
        } else {
            Some(T::read(self))
        }
    }

    /// A value of `T` that is never null on the wire.
    #[inline]
    pub fn read_value<T: ViewValue<'a, M>>(&mut self, compact: bool) -> T {
        self.compact = compact;
        T::read(self)
    }

    /// The limits a lazy view checks the values it reads against.
    #[inline]
    fn limits(&self) -> Option<&'a DecodeLimits> {
        M::limits(self.origin)
    }
}

impl<'a> Walk<'a, Checked> {
    /// An array of numbers, strings, bytes or booleans, converted to its owned type; the walk
    /// ends past the array.
    #[inline]
    pub fn read_owned_array<T: OwnedArray<'a> + ViewValue<'a, Checked>>(
        &mut self,
        compact: bool,
        nullable: bool,
    ) -> Option<T::Array> {
        self.compact = compact;
        let mut elements = if nullable {
            ViewIter::<T, Checked>::read_nullable(self)?
        } else {
            ViewIter::<T, Checked>::read(self)
        };
        let array = T::collect(&mut elements, self.buf);
        if elements.behind {
            T::step_element(&mut elements.walk);
        }
        self.pos = elements.walk.pos;
        Some(array)
    }

    /// An array of fixed-width numbers or uuids as the owned decoder makes it: inline when
    /// short, else sharing the input; the walk ends past the array.
    #[inline]
    pub fn read_owned_fixed_array<T: FixedWidth>(
        &mut self,
        compact: bool,
        nullable: bool,
    ) -> Option<PrimitiveArray<T>> {
        self.compact = compact;
        let count = self.len(false);
        if count.is_none() && nullable {
            return None;
        }
        let len = count.unwrap_or(0).saturating_mul(T::WIDTH);
        let bytes = self.slice(len);
        // Checked by `view_check` to be whole elements; a wrong walk gets the empty array.
        Some(
            if len <= INLINE_CAPACITY {
                PrimitiveArray::from_be_slice(bytes)
            } else {
                PrimitiveArray::from_be_bytes(share(self.buf, bytes))
            }
            .unwrap_or_default(),
        )
    }

    /// An array of structs, each read by `read` (the element's `view_read_owned`); the walk
    /// ends past the array.
    #[inline]
    pub fn read_owned_structs<T>(
        &mut self,
        compact: bool,
        nullable: bool,
        mut read: impl FnMut(&mut Walk<'a, Checked>) -> T,
    ) -> Option<Vec<T>> {
        self.compact = compact;
        let count = self.len(false);
        if count.is_none() && nullable {
            return None;
        }
        let count = count.unwrap_or(0).min(self.bytes.len());
        Some((0..count).map(|_| read(self)).collect())
    }

    /// A struct converted by `read`, after its marker where `nullable` (`None` for null).
    #[inline]
    pub fn read_owned_struct<T>(
        &mut self,
        nullable: bool,
        read: impl FnOnce(&mut Walk<'a, Checked>) -> T,
    ) -> Option<T> {
        if nullable && (self.take::<1>()[0] as i8) < 0 {
            return None;
        }
        Some(read(self))
    }
}

/// What stepping over a struct found, handed to its view (by its array's iterator, as a
/// field, or by `marked()`) so that its accessors start where the step left off instead of
/// walking from the struct's start again (an array's iterator hands out most elements
/// unmarked, see [`ViewValue::read_element`]):
///
/// - where the value of its last `bytes`/`records` field lies: its accessor reads the value
///   from here instead of reading its length a second time (a records value is most of a
///   Produce or Fetch partition);
/// - where each of its first [`VIEW_SLOTS`] variable-width fields (strings, bytes, arrays,
///   structs) ends, and where its tagged section starts: an accessor starts at the last such
///   place before its field and steps over fixed-width fields only, so reading every field
///   of a struct is one pass, not one walk per field.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewMark {
    at: usize,
    end: usize,
    /// Where the struct's variable-width fields end, in field order (`NOT_MARKED`: unknown).
    after: [u32; VIEW_SLOTS],
    /// Where its tagged section starts (`NOT_MARKED`: unknown).
    tagged: u32,
}

/// How many variable-width fields of a struct a [`ViewMark`] remembers the end of: enough for
/// every struct of the benchmarked shapes (a Metadata partition has three replica lists), few
/// enough that a view stays small. An accessor past the last remembered one walks as before.
pub const VIEW_SLOTS: usize = 4;

/// A place a [`ViewMark`] does not know (or one past what `u32` holds).
const NOT_MARKED: u32 = u32::MAX;

/// Where a lazy view's iterator found the end of its array of structs, kept in one word in
/// the frame's [`LazyOrigin`]: the position of the array's count plus one (high half; 0 is
/// none) and where its last element ends (low half). The iterator keeps it when it has
/// stepped over every element without a bad read (its last element handed out already
/// stepped over, or stepped over when asked past it); a step over the same array of the same
/// frame (the lazy step over the struct that holds it, when its own array's iterator moves
/// past it) then starts at that end: the bytes at a position of a frame are read as one
/// field only, so that step would read what the iterator read and end where it ended. A
/// router that reads a topic's partitions to their end thus does not step over them again
/// when it asks for the next topic.
#[doc(hidden)]
pub struct ArrayEnd;

impl ArrayEnd {
    /// The word for the array whose count is at `start` and whose last element ends at
    /// `end` (0, none, past what `u32` holds).
    #[inline]
    fn pack(start: usize, end: usize) -> u64 {
        match (u32::try_from(start.wrapping_add(1)), u32::try_from(end)) {
            (Ok(start), Ok(end)) if start != 0 => (u64::from(start) << 32) | u64::from(end),
            _ => 0,
        }
    }

    /// Where the array whose count is at `start` ends, if `word` knows it.
    #[inline]
    fn find(word: u64, start: usize) -> Option<usize> {
        let known = word >> 32;
        (known != 0 && known == (start as u64).wrapping_add(1))
            .then_some((word & u64::from(u32::MAX)) as usize)
    }
}

impl ViewMark {
    /// Not found: the accessor walks to the field.
    pub const UNKNOWN: ViewMark = ViewMark {
        at: usize::MAX,
        end: 0,
        after: [NOT_MARKED; VIEW_SLOTS],
        tagged: NOT_MARKED,
    };
    /// Where the marked `bytes` value is null on the wire.
    const NULL_AT: usize = usize::MAX - 1;
}

/// A varint that is not one of the short ones `Walk::uvarint` reads inline, at `pos` in
/// `bytes`: its value, where it ends, and whether it was bad (past the end, or longer than five
/// bytes; the value is then 0).
#[inline(never)]
fn uvarint_long(bytes: &[u8], mut pos: usize) -> (u64, usize, bool) {
    let mut value = 0u64;
    // The owned decoder reads lengths, counts and tags as 32-bit varints: five bytes
    // at most, of which it keeps the low 32 bits.
    for shift in 0..5 {
        let Some(&byte) = bytes.get(pos) else {
            return (0, pos, true);
        };
        pos += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte & 0x80 == 0 {
            return (value & u64::from(u32::MAX), pos, false);
        }
    }
    (0, pos, true)
}

/// Where the tagged section at `pos` in `bytes` (not the empty one) ends, and whether a read
/// of it was bad (bounds-checked: a section may end the bytes a lazy view reads).
#[inline(never)]
fn tagged_entries_end(bytes: &[u8], pos: usize) -> (usize, bool) {
    let mut w = Walk::<Checked> {
        buf: &EMPTY,
        frame: bytes,
        bytes,
        pos,
        version: 0,
        compact: false,
        bad: false,
        origin: (),
    };
    let count = w.uvarint();
    for _ in 0..count.min(bytes.len() as u64) {
        w.uvarint();
        let size = w.uvarint();
        w.slice(size as usize);
    }
    (w.pos, w.bad)
}

/// No input: what a struct the version lacks reads from.
static EMPTY: Bytes = Bytes::from_static(&[]);

/// Where a struct starts in a view's bytes, the version it was written at and the mode's
/// origin; or a struct the version does not have, whose fields all read as their defaults.
pub struct ViewCursor<'a, M: ViewMode> {
    buf: &'a Bytes,
    /// The bytes the view may read (`M::bytes` of `buf`), found once per frame rather than
    /// once per accessor.
    frame: &'a [u8],
    at: Option<usize>,
    version: i16,
    origin: M::Origin<'a>,
    /// Where the struct's last `bytes` field lies, if found when it was stepped over.
    mark: ViewMark,
}

impl<M: ViewMode> Clone for ViewCursor<'_, M> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<M: ViewMode> Copy for ViewCursor<'_, M> {}

impl<'a, M: ViewMode> ViewCursor<'a, M> {
    /// The struct at `at` in `buf` at `version`.
    #[inline]
    pub fn new(buf: &'a Bytes, at: usize, version: i16, origin: M::Origin<'a>) -> Self {
        ViewCursor {
            buf,
            frame: M::bytes(buf, origin),
            at: Some(at),
            version,
            origin,
            mark: ViewMark::UNKNOWN,
        }
    }

    /// A struct the version lacks: every field reads as its default.
    #[inline]
    pub fn absent(version: i16, origin: M::Origin<'a>) -> Self {
        ViewCursor {
            buf: &EMPTY,
            frame: &[],
            at: None,
            version,
            origin,
            mark: ViewMark::UNKNOWN,
        }
    }

    /// The version the struct was written at.
    #[inline]
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The input the struct is part of.
    #[inline]
    pub fn buf(&self) -> &'a Bytes {
        self.buf
    }

    /// What the mode carries to report an error.
    #[inline]
    pub fn origin(&self) -> M::Origin<'a> {
        self.origin
    }

    /// The walk at the struct's start; `None` for a struct the version lacks.
    #[inline]
    pub fn walk(&self) -> Option<Walk<'a, M>> {
        Some(Walk {
            buf: self.buf,
            frame: self.frame,
            bytes: self.frame,
            pos: self.at?,
            version: self.version,
            compact: false,
            bad: false,
            origin: self.origin,
        })
    }

    /// The walk from the end of the struct's variable-width field `slot` ([`ViewMark`]) and
    /// `true`, or from the struct's start and `false` where that place is not marked (the
    /// caller then steps from the start); `None` for a struct the version lacks.
    #[doc(hidden)]
    #[inline]
    pub fn walk_after(&self, slot: usize) -> Option<(Walk<'a, M>, bool)> {
        let at = self.mark.after.get(slot).copied().unwrap_or(NOT_MARKED);
        self.walk_marked(at)
    }

    /// [`ViewCursor::walk_after`] from the start of the struct's tagged section.
    #[doc(hidden)]
    #[inline]
    pub fn walk_tagged(&self) -> Option<(Walk<'a, M>, bool)> {
        self.walk_marked(self.mark.tagged)
    }

    #[inline]
    fn walk_marked(&self, at: u32) -> Option<(Walk<'a, M>, bool)> {
        let mut walk = self.walk()?;
        if at == NOT_MARKED {
            return Some((walk, false));
        }
        // The place was reached by stepping over this struct's own fields in these bytes
        // (the view is handed out only when that step was good), so walking from here reads
        // what walking from the start would.
        walk.pos = at as usize;
        Some((walk, true))
    }

    /// The cursor with the marks one step over its struct (`skip`, the view's generated
    /// `view_skip`) finds, where it has none: a message's root view is not made by a step, so
    /// without this each accessor after its first variable-width field walks from its start
    /// (reading a field after a large array steps over the whole array again). A step that
    /// fails (a lazy view's bad bytes) marks nothing: the accessors then walk and report the
    /// error as before.
    #[doc(hidden)]
    #[inline]
    pub fn marked(self, skip: fn(&mut Walk<'a, M>) -> ViewMark) -> Self {
        if self.mark != ViewMark::UNKNOWN {
            return self;
        }
        let Some(mut walk) = self.walk() else {
            return self;
        };
        let mark = skip(&mut walk);
        if !walk.ok() {
            return self;
        }
        ViewCursor { mark, ..self }
    }

    /// The struct's marked `bytes` field ([`ViewMark`]), as its walk would read it with
    /// `nullable`: `None` when not marked (the accessor then walks to it). Clears `ok` where
    /// the walk would mark itself bad: a null where the field cannot be null, a value over
    /// the limit (lazy views).
    #[doc(hidden)]
    #[inline]
    pub fn marked_bytes(&self, nullable: bool, ok: &mut bool) -> Option<Option<&'a [u8]>> {
        match self.mark.at {
            at if at == ViewMark::UNKNOWN.at => None,
            at if at == ViewMark::NULL_AT => {
                if nullable {
                    Some(None)
                } else {
                    *ok = false;
                    Some(Some(&[]))
                }
            }
            at => {
                let value = self.frame.get(at..self.mark.end)?;
                if M::limits(self.origin).is_some_and(|l| value.len() > l.max_bytes_len) {
                    *ok = false;
                }
                Some(Some(value))
            }
        }
    }
}

/// How many elements [`collect_via_accessors`] reserves room for at most before it reads
/// them: a wire count is not checked against the memory budget here, so the room reserved
/// up front is bounded by a constant, not by what a hostile count says.
const VIA_ACCESSORS_RESERVE: usize = 256;

/// The owned elements of a lazy view's struct array, each read through its accessors
/// (`to_owned_via_accessors`), collected with room reserved once for the count (up to
/// 256 elements) rather than grown from empty as a `collect` of `Result`s is.
#[doc(hidden)]
#[inline]
pub fn collect_via_accessors<'a, V>(
    elements: ViewIter<'a, V, Lazy>,
) -> Result<Vec<V::Owned>, DecodeError>
where
    V: OwnedViaAccessors + ViewValue<'a, Lazy>,
{
    let mut owned = Vec::with_capacity(elements.remaining().min(VIA_ACCESSORS_RESERVE));
    for element in elements {
        owned.push(element?.read_via_accessors()?);
    }
    Ok(owned)
}

/// `part` as a `Bytes` that shares `buf` when it is a slice of it (no copy), else a copy (a
/// default value).
pub fn share(buf: &Bytes, part: &[u8]) -> Bytes {
    let (start, end) = (buf.as_ptr() as usize, buf.as_ptr() as usize + buf.len());
    let at = part.as_ptr() as usize;
    if part.is_empty() {
        Bytes::new()
    } else if start <= at && at + part.len() <= end {
        buf.slice_ref(part)
    } else {
        Bytes::copy_from_slice(part)
    }
}

/// A value a view's accessor returns, read from a walk of mode `M`.
pub trait ViewValue<'a, M: ViewMode>: Sized {
    /// Whether this is a struct's view: a lazy iterator over such elements keeps where it
    /// found their array's end ([`ArrayEnd`]).
    #[doc(hidden)]
    const STRUCT: bool = false;
    #[doc(hidden)]
    fn read(walk: &mut Walk<'a, M>) -> Self;
    /// The value as an array's element ([`ViewIter`]), and whether the walk is past it. A
    /// struct's view is handed out at its start, unmarked, the walk left there, and stepped
    /// over ([`ViewValue::step_element`]) only when the iterator is asked for the next
    /// element (the last one, of a lazy view, when the iterator is asked past it; of a
    /// checked view, whose bytes were checked, never), once and without marks (a reader of an element that holds an array of structs iterates it anyway, which an
    /// eager step would walk first). But a struct with a `bytes`/`records` field (a Produce
    /// or Fetch partition) is stepped over with marks as it is handed out, so that its value
    /// is found from its mark, without reading its length twice or stepping again over the
    /// fields before it.
    #[doc(hidden)]
    #[inline]
    fn read_element(walk: &mut Walk<'a, M>) -> (Self, bool) {
        (Self::read(walk), true)
    }
    /// Steps over an element that [`ViewValue::read_element`] left the walk at the start of.
    #[doc(hidden)]
    #[inline]
    fn step_element(walk: &mut Walk<'a, M>) {
        let _ = walk;
    }
}

/// A value that may be null on the wire (`Option<T>` of a nullable field).
pub trait ViewNullable<'a, M: ViewMode>: ViewValue<'a, M> {
    #[doc(hidden)]
    fn read_nullable(walk: &mut Walk<'a, M>) -> Option<Self>;
}

impl<'a, M: ViewMode, T: ViewNullable<'a, M>> ViewValue<'a, M> for Option<T> {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        T::read_nullable(walk)
    }
}

macro_rules! fixed_values {
    ($($ty:ty),*) => {$(
        impl<'a, M: ViewMode> ViewValue<'a, M> for $ty {
            #[inline]
            fn read(walk: &mut Walk<'a, M>) -> Self {
                <$ty>::from_be_bytes(walk.take())
            }
        }
    )*};
}
fixed_values!(i8, i16, u16, i32, u32, i64, f64);

impl<'a, M: ViewMode> ViewValue<'a, M> for bool {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        walk.take::<1>()[0] != 0
    }
}

impl<'a, M: ViewMode> ViewValue<'a, M> for Uuid {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        Uuid(walk.take())
    }
}

impl<'a, M: ViewMode> ViewValue<'a, M> for &'a str {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        let value = Self::read_nullable(walk);
        // Null where the field cannot be: the owned decoder refuses it.
        walk.bad |= value.is_none();
        value.unwrap_or("")
    }
}

impl<'a, M: ViewMode> ViewNullable<'a, M> for &'a str {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a, M>) -> Option<Self> {
        let len = walk.len(true)?;
        if walk.limits().is_some_and(|l| len > l.max_string_len) {
            walk.bad = true;
        }
        // A checked view's bytes were checked when it was made; checked again here, in safe
        // code (see the module). A lazy view's are checked here only.
        match utf8(walk.slice(len)) {
            Ok(value) => Some(value),
            Err(_) => {
                walk.bad = true;
                Some("")
            }
        }
    }
}

/// `bytes` as a `&str` if they are UTF-8. Names, hosts and ids are nearly always ASCII:
/// `is_ascii` checks a word at a time, inlined, where `str::from_utf8` is a call that walks a
/// short string byte by byte; only text that is not ASCII pays for the general check (as
/// `Utf8Bytes::from_utf8` does for the owned decoder).
#[inline]
fn utf8(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every byte is below 0x80, and each such byte is a complete one-byte UTF-8
        // sequence (UTF-8's ASCII subset), so the whole slice is valid UTF-8.
        // `utf8_agrees_with_str_from_utf8` (below) compares this with `str::from_utf8` on
        // every byte value and on mixed strings.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}

impl<'a, M: ViewMode> ViewValue<'a, M> for &'a [u8] {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        let value = Self::read_nullable(walk);
        walk.bad |= value.is_none();
        value.unwrap_or(&[])
    }
}

impl<'a, M: ViewMode> ViewNullable<'a, M> for &'a [u8] {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a, M>) -> Option<Self> {
        let len = walk.len(false)?;
        if walk.limits().is_some_and(|l| len > l.max_bytes_len) {
            walk.bad = true;
        }
        Some(walk.slice(len))
    }
}

/// A generated view of a struct.
pub trait StructView<'a>: Copy {
    /// Checks the struct's bytes at `version` from the decoder's position (the caller has
    /// entered its nesting level), as the owned decoder would read them.
    #[doc(hidden)]
    fn check(d: &mut Decoder<'_>, version: i16) -> Result<(), DecodeError>;
    /// How the view reads: [`Checked`] or [`Lazy`].
    type Mode: ViewMode;
    /// Steps over the whole struct, tagged section included; where its last `bytes` field
    /// lies.
    #[doc(hidden)]
    fn skip(walk: &mut Walk<'a, Self::Mode>) -> ViewMark;
    /// Steps over the whole struct as [`StructView::skip`] does, marking nothing.
    #[doc(hidden)]
    fn step(walk: &mut Walk<'a, Self::Mode>);
    /// The owned struct.
    type Owned;
    #[doc(hidden)]
    fn from_cursor(cursor: ViewCursor<'a, Self::Mode>) -> Self;
    /// The owned struct, equal to what the owned decoder reads from the same bytes (a lazy
    /// view checks them first: a `Result`).
    fn to_owned_struct(&self) -> <Self::Mode as ViewMode>::Out<Self::Owned>;
    /// Every field handed to `visitor` in wire order: the view's `walk` ([`ViewVisitor`]).
    fn walk_struct<V: ViewVisitor<'a> + ?Sized>(
        &self,
        visitor: &mut V,
    ) -> <Self::Mode as ViewMode>::Out<()>;
}

/// An owned struct that has views: `M::View<'a>` (checked) and `M::LazyView<'a>` name them
/// generically.
pub trait Viewable: Sized {
    /// The struct's checked view.
    type View<'a>: StructView<'a, Owned = Self, Mode = Checked> + OwnedViaFields<Owned = Self>;
    /// The struct's lazy view.
    type LazyView<'a>: StructView<'a, Owned = Self, Mode = Lazy>
        + OwnedViaAccessors<Owned = Self>
        + OwnedViaFields<Owned = Self>;
}

/// A view's owned struct built from its `fields()` (the generated `to_owned_via_fields`):
/// what the proofs compare with the owned decode.
#[doc(hidden)]
pub trait OwnedViaFields {
    /// The owned struct.
    type Owned;
    /// Every field read by `fields()` in one pass, nested structs and arrays through theirs.
    fn to_owned_via_fields(self) -> Result<Self::Owned, DecodeError>;
}

/// A lazy view's owned struct read through its accessors alone (the generated
/// `to_owned_via_accessors`): what the proofs and the fuzz target walk.
#[doc(hidden)]
pub trait OwnedViaAccessors {
    /// The owned struct.
    type Owned;
    /// Every field read through its accessor, unknown tagged fields from the section.
    fn to_owned_via_accessors(self) -> Result<Self::Owned, DecodeError>;
    /// The same inside another `to_owned_via_accessors` (see [`ViaAccessors`]).
    fn read_via_accessors(self) -> Result<Self::Owned, DecodeError>;
}

/// A view of a struct as an array element or a field: generated per view.
#[doc(hidden)]
#[inline]
pub fn read_struct<'a, M: ViewMode, V: StructView<'a, Mode = M>>(walk: &mut Walk<'a, M>) -> V {
    // The frame's bytes travel with the walk: a struct found here reads them without
    // looking them up again.
    let mut cursor = ViewCursor {
        buf: walk.buf,
        frame: walk.frame,
        at: Some(walk.pos),
        version: walk.version,
        origin: walk.origin,
        mark: ViewMark::UNKNOWN,
    };
    // Stepping over the struct finds where its last `bytes` field lies: handed to its view.
    cursor.mark = V::skip(walk);
    V::from_cursor(cursor)
}

/// A view of a struct as an array element, at the walk's position, which stays there: no
/// marks (its accessors walk from its start), and the iterator steps over it (the view's
/// `view_step`) only when asked for the next element.
#[doc(hidden)]
#[inline]
pub fn struct_at<'a, M: ViewMode, V: StructView<'a, Mode = M>>(walk: &Walk<'a, M>) -> V {
    V::from_cursor(ViewCursor {
        buf: walk.buf,
        frame: walk.frame,
        at: Some(walk.pos),
        version: walk.version,
        origin: walk.origin,
        mark: ViewMark::UNKNOWN,
    })
}

/// A nullable struct: its marker byte, then the struct.
#[doc(hidden)]
#[inline]
pub fn read_nullable_struct<'a, M: ViewMode, V: StructView<'a, Mode = M>>(
    walk: &mut Walk<'a, M>,
) -> Option<V> {
    (walk.take::<1>()[0] as i8 >= 0).then(|| read_struct(walk))
}

/// The elements of an array field: read one by one as the iterator goes, allocating nothing.
/// Of a checked view, the count is known (an [`ExactSizeIterator`]) and items are values; of
/// a lazy view, items are `Result`s, and the iterator ends after the first error.
///
/// A lazy iterator steps over an element that its reader may have read only in part when it
/// is asked for the next one, and over the last when it is asked past it: bad bytes there
/// (an element cut short, its tagged section gone) are reported then, the last element's as
/// one more item (the owned decoder's error) before the end. So a read that takes the
/// iterator to its end has checked every byte of the array; one that stops sooner (after
/// [`remaining`](Self::remaining) elements, without asking past the last) has not checked
/// what it did not read of the element it stopped in.
pub struct ViewIter<'a, T, M: ViewMode = Checked> {
    walk: Walk<'a, M>,
    left: usize,
    /// The walk is at the start of the element last handed out, not past it
    /// ([`ViewValue::read_element`]).
    behind: bool,
    /// Where the array's count lies (its [`ArrayEnd`]'s key).
    start: usize,
    element: PhantomData<T>,
}

impl<T, M: ViewMode> Clone for ViewIter<'_, T, M> {
    fn clone(&self) -> Self {
        ViewIter {
            walk: self.walk,
            left: self.left,
            behind: self.behind,
            start: self.start,
            element: PhantomData,
        }
    }
}

impl<T, M: ViewMode> std::fmt::Debug for ViewIter<'_, T, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewIter").field("len", &self.left).finish()
    }
}

impl<'a, T, M: ViewMode> ViewIter<'a, T, M> {
    /// No elements (an array the version lacks).
    #[inline]
    pub fn empty(origin: M::Origin<'a>) -> Self {
        ViewIter {
            walk: ViewCursor::<M>::absent(0, origin).walk_absent(),
            left: 0,
            behind: false,
            start: usize::MAX,
            element: PhantomData,
        }
    }

    /// The elements not yet read, as the array's count on the wire says (a lazy view's
    /// iterator may end sooner, at an error, or give one more item after the last, the
    /// error found stepping over it).
    #[inline]
    pub fn remaining(&self) -> usize {
        self.left
    }
}

impl<'a, M: ViewMode> ViewCursor<'a, M> {
    /// A walk over no bytes (an absent array's).
    #[inline]
    fn walk_absent(&self) -> Walk<'a, M> {
        Walk {
            buf: self.buf,
            frame: &[],
            bytes: &[],
            pos: 0,
            version: self.version,
            compact: false,
            bad: false,
            origin: self.origin,
        }
    }
}

impl<'a, M: ViewMode, T: ViewValue<'a, M>> Iterator for ViewIter<'a, T, M> {
    type Item = M::Out<T>;

    #[inline]
    fn next(&mut self) -> Option<M::Out<T>> {
        if self.left == 0 {
            // Of a lazy view, asked past a last element handed out unstepped: its bytes are
            // checked now, and bad ones are one more item, the error.
            return if M::LAZY && self.behind {
                self.past_last()
            } else {
                None
            };
        }
        self.left -= 1;
        if self.behind {
            // Past the element handed out before: a lazy view's bad bytes there end the
            // iterator here, with the owned decoder's error, as a read of that element would.
            T::step_element(&mut self.walk);
        }
        let (value, past) = T::read_element(&mut self.walk);
        self.behind = !past;
        if self.walk.bad || self.walk.pos > self.walk.bytes.len() {
            self.walk.bad = true;
            self.left = 0;
            self.behind = false;
        } else if M::LAZY && T::STRUCT && past && self.left == 0 {
            // The last element, stepped over as it was handed out: the array is walked.
            self.walked();
        }
        Some(M::finish(self.walk.origin, !self.walk.bad, value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        // A lazy iterator's last element, when unstepped, may still be followed by an error.
        let error = usize::from(M::LAZY && self.behind && self.left == 0);
        (self.left, Some(self.left + error))
    }
}

impl<'a, M: ViewMode, T: ViewValue<'a, M>> ViewIter<'a, T, M> {
    /// A lazy iterator asked past its last element, which it handed out unstepped: the step
    /// over it now, so that a read that reaches the end of an array has checked all its
    /// bytes (those of the last element that nobody read, and its tagged section); an error
    /// there is one more item.
    #[inline]
    fn past_last(&mut self) -> Option<M::Out<T>> {
        self.behind = false;
        T::step_element(&mut self.walk);
        if self.walk.bad || self.walk.pos > self.walk.bytes.len() {
            self.walk.bad = true;
            return M::failed(self.walk.origin);
        }
        if T::STRUCT {
            self.walked();
        }
        None
    }

    /// Keeps where this array ends, every element stepped over ([`ArrayEnd`]).
    #[inline]
    fn walked(&self) {
        M::set_array_end(self.walk.origin, ArrayEnd::pack(self.start, self.walk.pos));
    }
}

impl<'a, T: ViewValue<'a, Checked>> ExactSizeIterator for ViewIter<'a, T, Checked> {}
impl<'a, M: ViewMode, T: ViewValue<'a, M>> std::iter::FusedIterator for ViewIter<'a, T, M> {}

impl<'a, M: ViewMode, T> ViewValue<'a, M> for ViewIter<'a, T, M> {
    #[inline]
    fn read(walk: &mut Walk<'a, M>) -> Self {
        let value = Self::read_nullable(walk);
        walk.bad |= value.is_none();
        value.unwrap_or_else(|| Self::empty(walk.origin))
    }
}

impl<'a, M: ViewMode, T> ViewNullable<'a, M> for ViewIter<'a, T, M> {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a, M>) -> Option<Self> {
        let start = walk.pos;
        let count = walk.len(false)?;
        if walk.limits().is_some_and(|l| count > l.max_array_len) {
            walk.bad = true;
        }
        Some(ViewIter {
            walk: *walk,
            // A checked count never exceeds the input; the bound keeps any walk finite.
            left: count.min(walk.bytes.len()),
            behind: false,
            start,
            element: PhantomData,
        })
    }
}

/// The owned value of a checked view's value.
pub trait IntoOwned<'a> {
    /// The owned type (the owned struct's field type).
    type Owned;
    /// The owned value; strings and bytes share `buf` (no copy).
    fn into_owned(self, buf: &'a Bytes) -> Self::Owned;
}

macro_rules! owned_as_is {
    ($($ty:ty),*) => {$(
        impl<'a> IntoOwned<'a> for $ty {
            type Owned = $ty;
            #[inline]
            fn into_owned(self, _: &'a Bytes) -> $ty {
                self
            }
        }
    )*};
}
owned_as_is!(bool, i8, i16, u16, i32, u32, i64, f64, Uuid);

impl<'a> IntoOwned<'a> for &'a str {
    type Owned = Utf8Bytes;
    #[inline]
    fn into_owned(self, buf: &'a Bytes) -> Utf8Bytes {
        Utf8Bytes::from_str_in(buf, self)
    }
}

impl<'a> IntoOwned<'a> for &'a [u8] {
    type Owned = Bytes;
    #[inline]
    fn into_owned(self, buf: &'a Bytes) -> Bytes {
        share(buf, self)
    }
}

impl<'a, T: IntoOwned<'a>> IntoOwned<'a> for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self, buf: &'a Bytes) -> Self::Owned {
        self.map(|value| value.into_owned(buf))
    }
}

/// How an array's elements become the owned struct's field: a `PrimitiveArray` for
/// fixed-width numbers and uuids, a `Vec` for the rest.
pub trait OwnedArray<'a>: Sized {
    /// The owned array type.
    type Array;
    #[doc(hidden)]
    fn collect(elements: &mut ViewIter<'a, Self, Checked>, buf: &'a Bytes) -> Self::Array;
}

macro_rules! primitive_arrays {
    ($($ty:ty),*) => {$(
        impl<'a> OwnedArray<'a> for $ty {
            type Array = PrimitiveArray<$ty>;
            fn collect(elements: &mut ViewIter<'a, Self, Checked>, _: &'a Bytes) -> Self::Array {
                elements.collect()
            }
        }
    )*};
}
primitive_arrays!(i8, i16, u16, i32, u32, i64, f64, Uuid);

macro_rules! vec_arrays {
    ($($ty:ty),*) => {$(
        impl<'a> OwnedArray<'a> for $ty {
            type Array = Vec<<$ty as IntoOwned<'a>>::Owned>;
            fn collect(elements: &mut ViewIter<'a, Self, Checked>, buf: &'a Bytes) -> Self::Array {
                elements.map(|element| element.into_owned(buf)).collect()
            }
        }
    )*};
}
vec_arrays!(bool, &'a str, &'a [u8]);

impl<'a, T: OwnedArray<'a> + ViewValue<'a, Checked>> IntoOwned<'a> for ViewIter<'a, T, Checked> {
    type Owned = T::Array;
    fn into_owned(mut self, buf: &'a Bytes) -> T::Array {
        T::collect(&mut self, buf)
    }
}

/// The impls every generated view shares, written once: as a field or array element, as an
/// owned value, and [`StructView`].
#[macro_export]
#[doc(hidden)]
macro_rules! view_struct {
    ($view:ident, $owned:ident) => {
        impl<'a, M: $crate::wire::view::ViewMode> $crate::wire::view::ViewValue<'a, M>
            for $view<'a, M>
        {
            const STRUCT: bool = true;
            #[inline]
            fn read(walk: &mut $crate::wire::view::Walk<'a, M>) -> Self {
                $crate::wire::view::read_struct(walk)
            }
            #[inline]
            fn read_element(walk: &mut $crate::wire::view::Walk<'a, M>) -> (Self, bool) {
                if <$view<'a, M>>::VIEW_DEFER {
                    ($crate::wire::view::struct_at(walk), false)
                } else {
                    ($crate::wire::view::read_struct(walk), true)
                }
            }
            #[inline]
            fn step_element(walk: &mut $crate::wire::view::Walk<'a, M>) {
                $view::view_step(walk)
            }
        }
        impl<'a, M: $crate::wire::view::ViewMode> $crate::wire::view::ViewNullable<'a, M>
            for $view<'a, M>
        {
            #[inline]
            fn read_nullable(walk: &mut $crate::wire::view::Walk<'a, M>) -> Option<Self> {
                $crate::wire::view::read_nullable_struct(walk)
            }
        }
        impl<'a> $crate::wire::view::IntoOwned<'a> for $view<'a, $crate::wire::view::Checked> {
            type Owned = $owned;
            #[inline]
            fn into_owned(self, _: &'a $crate::bytes::Bytes) -> $owned {
                self.to_owned()
            }
        }
        impl<'a> $crate::wire::view::OwnedArray<'a> for $view<'a, $crate::wire::view::Checked> {
            type Array = Vec<$owned>;
            #[inline]
            fn collect(
                elements: &mut $crate::wire::view::ViewIter<'a, Self, $crate::wire::view::Checked>,
                _: &'a $crate::bytes::Bytes,
            ) -> Vec<$owned> {
                elements.map(|element| element.to_owned()).collect()
            }
        }
        impl<'a> $crate::wire::view::OwnedViaAccessors for $view<'a, $crate::wire::view::Lazy> {
            type Owned = $owned;
            #[inline]
            fn to_owned_via_accessors(self) -> Result<$owned, $crate::wire::DecodeError> {
                $view::to_owned_via_accessors(self)
            }
            #[inline]
            fn read_via_accessors(self) -> Result<$owned, $crate::wire::DecodeError> {
                $view::read_via_accessors(self)
            }
        }
        impl<'a, M: $crate::wire::view::ViewMode> $crate::wire::view::OwnedViaFields
            for $view<'a, M>
        {
            type Owned = $owned;
            #[inline]
            fn to_owned_via_fields(self) -> Result<$owned, $crate::wire::DecodeError> {
                $view::to_owned_via_fields(self)
            }
        }
        impl $crate::wire::view::Viewable for $owned {
            type View<'a> = $view<'a, $crate::wire::view::Checked>;
            type LazyView<'a> = $view<'a, $crate::wire::view::Lazy>;
        }
        impl<'a, M: $crate::wire::view::ViewMode> $crate::wire::view::StructView<'a>
            for $view<'a, M>
        {
            #[inline]
            fn check(
                d: &mut $crate::wire::Decoder<'_>,
                version: i16,
            ) -> Result<(), $crate::wire::DecodeError> {
                $view::<$crate::wire::view::Checked>::view_check(d, version)
            }
            type Mode = M;
            #[inline]
            fn skip(walk: &mut $crate::wire::view::Walk<'a, M>) -> $crate::wire::view::ViewMark {
                $view::view_skip(walk)
            }
            #[inline]
            fn step(walk: &mut $crate::wire::view::Walk<'a, M>) {
                $view::view_step(walk)
            }
            type Owned = $owned;
            #[inline]
            fn from_cursor(cursor: $crate::wire::view::ViewCursor<'a, M>) -> Self {
                $view(cursor)
            }
            #[inline]
            fn to_owned_struct(&self) -> <M as $crate::wire::view::ViewMode>::Out<$owned> {
                $view::to_owned(*self)
            }
            #[inline]
            fn walk_struct<V: $crate::wire::view::ViewVisitor<'a> + ?Sized>(
                &self,
                visitor: &mut V,
            ) -> <M as $crate::wire::view::ViewMode>::Out<()> {
                $view::walk(self, visitor)
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Every field of a struct in one pass (the generated `fields()` and `XxxFields` structs)

/// An array of fixed-width numbers or uuids in a struct's fields (`fields()`): its bytes on
/// the wire, read whole in one step; iterating it reads each value from them and cannot fail.
#[derive(Clone, Copy)]
pub struct ViewArray<'a, T> {
    bytes: &'a [u8],
    element: PhantomData<T>,
}

impl<T> Default for ViewArray<'_, T> {
    #[inline]
    fn default() -> Self {
        ViewArray {
            bytes: &[],
            element: PhantomData,
        }
    }
}

impl<'a, T: FixedWidth> ViewArray<'a, T> {
    /// How many values it holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / T::WIDTH
    }

    /// Whether it holds none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Its values' bytes as on the wire (big-endian, `T::WIDTH` each).
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The value at `index`, if there is one.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        let at = index.checked_mul(T::WIDTH)?;
        self.bytes
            .get(at..at.checked_add(T::WIDTH)?)
            .map(T::from_be_slice)
    }

    /// Its values in order.
    #[inline]
    pub fn iter(&self) -> ViewArrayIter<'a, T> {
        ViewArrayIter::over(self.bytes)
    }
}

impl<'a, T: FixedWidth> IntoIterator for ViewArray<'a, T> {
    type Item = T;
    type IntoIter = ViewArrayIter<'a, T>;
    #[inline]
    fn into_iter(self) -> ViewArrayIter<'a, T> {
        self.iter()
    }
}

impl<T: FixedWidth + std::fmt::Debug> std::fmt::Debug for ViewArray<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The values of a [`ViewArray`]: the same iterator as a
/// [`PrimitiveArray`](crate::PrimitiveArray)'s.
pub type ViewArrayIter<'a, T> = super::array::Iter<'a, T>;

impl<'a, T: FixedWidth> IntoOwned<'a> for ViewArray<'a, T> {
    type Owned = PrimitiveArray<T>;
    /// As the owned decoder makes it: inline when short, else sharing `buf`.
    #[inline]
    fn into_owned(self, buf: &'a Bytes) -> PrimitiveArray<T> {
        if self.bytes.len() <= INLINE_CAPACITY {
            PrimitiveArray::from_be_slice(self.bytes)
        } else {
            PrimitiveArray::from_be_bytes(share(buf, self.bytes))
        }
        .unwrap_or_default()
    }
}

/// The tagged section of a struct read by `fields()` (empty in versions before the message's
/// flexible ones): any tagged field, known or not, by tag.
#[derive(Clone, Copy)]
pub struct TaggedSection<'a, M: ViewMode> {
    /// The section's bytes (its count, then its fields), found once by `fields()`; empty where
    /// the struct has none. A slice rather than the walk that read it: a fields struct is
    /// copied with every array element, and two words copy faster than a walk's eight.
    bytes: &'a [u8],
    mode: PhantomData<M>,
}

impl<M: ViewMode> std::fmt::Debug for TaggedSection<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaggedSection").finish_non_exhaustive()
    }
}

impl<'a, M: ViewMode> TaggedSection<'a, M> {
    /// No section (a version before the flexible ones, or a struct the version lacks).
    #[doc(hidden)]
    #[inline]
    pub fn none() -> Self {
        TaggedSection {
            bytes: &[],
            mode: PhantomData,
        }
    }

    /// A walk over the section's bytes alone, which `fields()` read whole (every entry's size
    /// within them), so no read of it can fail; `buf` is what its values share.
    #[inline]
    fn walk(&self, buf: &'a Bytes) -> Walk<'a, Checked> {
        Walk {
            buf,
            frame: self.bytes,
            bytes: self.bytes,
            pos: 0,
            version: 0,
            compact: false,
            bad: false,
            origin: (),
        }
    }

    /// The raw bytes of tagged field `tag`, if the section has it (the section was read whole
    /// by `fields()`, so this cannot fail).
    #[inline]
    pub fn raw(&self, tag: u32) -> Option<&'a [u8]> {
        if self.bytes.is_empty() {
            return None;
        }
        self.walk(&EMPTY).raw_tagged(tag)
    }

    /// The tagged fields `known` does not know, as the owned decoder keeps them (sharing
    /// `buf`, the input the section is part of).
    #[doc(hidden)]
    pub fn unknown(&self, buf: &'a Bytes, known: impl Fn(u32) -> bool) -> TaggedFields {
        if self.bytes.is_empty() {
            return TaggedFields::new();
        }
        self.walk(buf).unknown_tagged(known)
    }
}

impl<'a, M: ViewMode> Walk<'a, M> {
    /// What reports this walk's errors.
    #[doc(hidden)]
    #[inline]
    pub fn origin(&self) -> M::Origin<'a> {
        self.origin
    }

    /// Marks the walk bad if a step (which does not check) went past its bytes: what a read
    /// of every field ends with, so that its value is never made of bytes cut short.
    #[doc(hidden)]
    #[inline]
    pub fn check_within(&mut self) {
        self.bad |= self.pos > self.bytes.len();
    }

    /// An array's elements as an iterator that reads them as it goes, the walk stepped past
    /// them with `skip` (one element each); `None` for null where `nullable`.
    #[doc(hidden)]
    #[inline]
    pub fn read_array_then<T>(
        &mut self,
        compact: bool,
        nullable: bool,
        mut skip: impl FnMut(&mut Self),
    ) -> Option<ViewIter<'a, T, M>> {
        self.compact = compact;
        let elements = if nullable {
            ViewIter::<T, M>::read_nullable(self)?
        } else {
            ViewIter::<T, M>::read(self)
        };
        for _ in 0..elements.left {
            skip(self);
        }
        Some(elements)
    }

    /// The next `N` bytes, with one bounds check, and the walk past them: a run of
    /// consecutive fixed-width fields (`fields()` reads each from it at a constant offset);
    /// `None` where fewer are left, and the walk stays (its fields are then read one by one,
    /// which marks the walk bad where they run short).
    #[doc(hidden)]
    #[inline]
    pub fn fixed_run<const N: usize>(&mut self) -> Option<&'a [u8; N]> {
        let run = self.bytes.get(self.pos..)?.first_chunk::<N>()?;
        self.pos += N;
        Some(run)
    }

    /// Like [`Walk::fixed_run`], for a run that ends a struct in a flexible version: the
    /// run's `N` bytes and the tagged section after them when it is empty (the zero byte;
    /// `M` = `N` + 1 bytes), with one bounds check. `None` (too few bytes, or tagged fields to
    /// read) leaves the walk as it was.
    #[doc(hidden)]
    #[inline]
    pub fn fixed_run_untagged<const N: usize, const S: usize>(
        &mut self,
    ) -> Option<(&'a [u8; N], TaggedSection<'a, M>)> {
        const { assert!(S == N + 1, "the run and one count byte") };
        let bytes = self.bytes.get(self.pos..)?.first_chunk::<S>()?;
        let (run, section @ [0]) = bytes.split_first_chunk::<N>()? else {
            return None;
        };
        self.pos += S;
        Some((
            run,
            TaggedSection {
                bytes: section,
                mode: PhantomData,
            },
        ))
    }

    /// An array of fixed-width values, read whole in one step; `None` for null where
    /// `nullable` (a null where it cannot be marks the walk bad).
    #[doc(hidden)]
    #[inline]
    pub fn read_fixed_array<T: FixedWidth>(
        &mut self,
        compact: bool,
        nullable: bool,
    ) -> Option<ViewArray<'a, T>> {
        // Nearly every such array (a replica list) is compact and short: a one-byte count.
        let count = match self.bytes.get(self.pos) {
            Some(&count) if compact && count < 0x80 => {
                self.pos += 1;
                usize::from(count).checked_sub(1)
            }
            _ => {
                self.compact = compact;
                self.len(false)
            }
        };
        let Some(count) = count else {
            // Null: `None` where the field may be null, else the walk is bad.
            self.bad |= !nullable;
            return (!nullable).then(ViewArray::default);
        };
        if self.limits().is_some_and(|l| count > l.max_array_len) {
            self.bad = true;
        }
        let bytes = self.slice(count.saturating_mul(T::WIDTH));
        Some(ViewArray {
            bytes,
            element: PhantomData,
        })
    }

    /// A nested struct read by `read`, after its marker where `nullable` (`None` for null).
    #[doc(hidden)]
    #[inline]
    pub fn read_struct_with<T>(
        &mut self,
        nullable: bool,
        read: impl FnOnce(&mut Self) -> T,
    ) -> Option<T> {
        if nullable && (self.take::<1>()[0] as i8) < 0 {
            return None;
        }
        Some(read(self))
    }

    /// The struct's tagged section, read once: `each` reads each field's value (a walk bounded
    /// by it) by its tag; the walk ends past the section.
    #[doc(hidden)]
    #[inline]
    pub fn read_tagged_section(
        &mut self,
        mut each: impl FnMut(u32, &mut Walk<'a, M>),
    ) -> TaggedSection<'a, M> {
        let start = self.pos;
        // Nearly every section is empty: the zero byte.
        if let Some(empty @ [0]) = self.bytes.get(start..).and_then(<[u8]>::first_chunk::<1>) {
            self.pos += 1;
            return TaggedSection {
                bytes: empty,
                mode: PhantomData,
            };
        }
        let count = self.uvarint();
        // A lazy view refuses the count the owned decoder refuses, as reading the unknown
        // fields through its accessors does (`read_unknown_tagged`), so that its walk fails
        // wherever they do.
        if self
            .limits()
            .is_some_and(|l| count > l.max_array_len as u64)
        {
            self.bad = true;
        }
        let count = count.min(self.bytes.len() as u64);
        for _ in 0..count {
            let tag = self.uvarint() as u32;
            let size = self.uvarint() as usize;
            let at = self.pos;
            self.slice(size);
            if self.bad {
                break;
            }
            let mut value = Walk {
                pos: at,
                bytes: self.bytes.get(..self.pos).unwrap_or_default(),
                ..*self
            };
            each(tag, &mut value);
            self.bad |= value.bad;
        }
        TaggedSection {
            bytes: self.bytes.get(start..self.pos).unwrap_or_default(),
            mode: PhantomData,
        }
    }
}

/// The owned values of an array of a struct's fields (`fields()`), each converted by
/// `convert`.
#[doc(hidden)]
pub fn collect_fields<'a, T, O, M: ViewMode>(
    elements: ViewIter<'a, T, M>,
    mut convert: impl FnMut(T) -> Result<O, DecodeError>,
) -> Result<Vec<O>, DecodeError>
where
    T: ViewValue<'a, M>,
{
    let mut owned = Vec::with_capacity(elements.remaining().min(VIA_ACCESSORS_RESERVE));
    for element in elements {
        owned.push(convert(M::result(element)?)?);
    }
    Ok(owned)
}

/// The owned values of an array of strings, `bytes` or booleans in a struct's fields.
#[doc(hidden)]
pub fn collect_values<'a, T, M: ViewMode>(
    elements: ViewIter<'a, T, M>,
    buf: &'a Bytes,
) -> Result<Vec<T::Owned>, DecodeError>
where
    T: ViewValue<'a, M> + IntoOwned<'a>,
{
    collect_fields(elements, |value: T| Ok(value.into_owned(buf)))
}

// ---------------------------------------------------------------------------------------------
// Every field in wire order (the generated `walk`)

/// What a view's `walk` hands every field of the message to, in the order the fields lie on
/// the wire: each byte is read once, and a struct's later fields are read after its arrays'
/// elements, where the walk already is (a fields struct, `fields()`, must step over an array
/// to reach the fields after it, and its elements are then read again).
///
/// `field` is the field's name in Kafka's schema (`"TopicName"`). A nested struct comes as
/// [`begin_struct`](Self::begin_struct), its fields, [`end_struct`](Self::end_struct); an
/// array of structs, strings, bytes or booleans as [`begin_array`](Self::begin_array) with its
/// length, each element (a struct as above, a value named by the array's field), then
/// [`end_array`](Self::end_array); an array of numbers or uuids whole as a [`ViewArray`]. A
/// struct's tagged fields come at the end of its fields, in the order of its tagged section;
/// tagged fields the schema does not know as [`unknown_tagged`](Self::unknown_tagged). Fields
/// the version lacks do not come at all. Every method does nothing unless overridden.
///
/// A checked view's walk cannot fail. A lazy view's walk returns the owned decoder's error
/// where the bytes are bad, but only at its end: the visitor may have been handed values read
/// past the fault (zeros, empty strings) before it; keep what it collected only on `Ok`.
#[allow(unused_variables)]
pub trait ViewVisitor<'a> {
    /// A `bool`.
    #[inline]
    fn bool(&mut self, field: &'static str, value: bool) {}
    /// An `int8`.
    #[inline]
    fn i8(&mut self, field: &'static str, value: i8) {}
    /// An `int16`.
    #[inline]
    fn i16(&mut self, field: &'static str, value: i16) {}
    /// A `uint16`.
    #[inline]
    fn u16(&mut self, field: &'static str, value: u16) {}
    /// An `int32`.
    #[inline]
    fn i32(&mut self, field: &'static str, value: i32) {}
    /// A `uint32`.
    #[inline]
    fn u32(&mut self, field: &'static str, value: u32) {}
    /// An `int64`.
    #[inline]
    fn i64(&mut self, field: &'static str, value: i64) {}
    /// A `float64`.
    #[inline]
    fn f64(&mut self, field: &'static str, value: f64) {}
    /// A `uuid`.
    #[inline]
    fn uuid(&mut self, field: &'static str, value: Uuid) {}
    /// A `string` (`None` for null), checked UTF-8.
    #[inline]
    fn string(&mut self, field: &'static str, value: Option<&'a str>) {}
    /// A `bytes` value (`None` for null).
    #[inline]
    fn bytes(&mut self, field: &'static str, value: Option<&'a [u8]>) {}
    /// A `records` value (`None` for null): [`bytes`](Self::bytes) unless overridden.
    #[inline]
    fn records(&mut self, field: &'static str, value: Option<&'a [u8]>) {
        self.bytes(field, value);
    }
    /// An array of numbers or uuids, whole (`None` for null).
    #[inline]
    fn fixed_array<T: ViewScalar>(
        &mut self,
        field: &'static str,
        values: Option<ViewArray<'a, T>>,
    ) {
    }
    /// The start of an array of `len` structs, strings, bytes or booleans.
    #[inline]
    fn begin_array(&mut self, field: &'static str, len: usize) {}
    /// The end of the array [`begin_array`](Self::begin_array) started.
    #[inline]
    fn end_array(&mut self, field: &'static str) {}
    /// The start of a struct: a struct field, or an element of an array of structs.
    #[inline]
    fn begin_struct(&mut self, field: &'static str) {}
    /// The end of the struct [`begin_struct`](Self::begin_struct) started.
    #[inline]
    fn end_struct(&mut self, field: &'static str) {}
    /// A null array or struct.
    #[inline]
    fn null(&mut self, field: &'static str) {}
    /// A tagged field the schema does not know at the version: its tag and raw value.
    #[inline]
    fn unknown_tagged(&mut self, tag: u32, value: &'a [u8]) {}
}

/// A value an array of numbers or uuids holds ([`ViewVisitor::fixed_array`]).
pub trait ViewScalar: FixedWidth + sealed::Sealed {
    /// Hands the value to the visitor's method of its type.
    fn visit<'a, V: ViewVisitor<'a> + ?Sized>(self, field: &'static str, visitor: &mut V);
}

macro_rules! view_scalars {
    ($($ty:ty => $method:ident;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl ViewScalar for $ty {
            #[inline]
            fn visit<'a, V: ViewVisitor<'a> + ?Sized>(self, field: &'static str, visitor: &mut V) {
                visitor.$method(field, self);
            }
        }
    )*};
}

view_scalars! {
    i8 => i8;
    i16 => i16;
    u16 => u16;
    i32 => i32;
    u32 => u32;
    i64 => i64;
    f64 => f64;
    Uuid => uuid;
}

impl<'a, M: ViewMode> Walk<'a, M> {
    /// An array's count for `walk` (0 past the input, so that any walk stays finite); `None`
    /// for null where `nullable` (a null where it cannot be marks the walk bad).
    #[doc(hidden)]
    #[inline]
    pub fn visit_count(&mut self, compact: bool, nullable: bool) -> Option<usize> {
        self.compact = compact;
        let Some(count) = self.len(false) else {
            self.bad |= !nullable;
            return (!nullable).then_some(0);
        };
        if self.limits().is_some_and(|l| count > l.max_array_len) {
            self.bad = true;
        }
        Some(count.min(self.bytes.len()))
    }

    /// Whether a nullable struct is there (its marker byte), for `walk`.
    #[doc(hidden)]
    #[inline]
    pub fn struct_present(&mut self) -> bool {
        self.take::<1>()[0] as i8 >= 0
    }

    /// The bytes left to this walk (a tagged field's value, inside its section).
    #[doc(hidden)]
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }
}

#[cfg(test)]
mod utf8_tests {
    use super::utf8;

    #[test]
    fn utf8_agrees_with_str_from_utf8() {
        let mut cases: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        cases.extend((0..=255u8).map(|b| vec![b'a', b, b'z', b'0', b'1', b'2', b'3', b'4', b'5']));
        cases.push(b"topic-42".to_vec());
        cases.push("h\u{e9}llo \u{1f600}".as_bytes().to_vec());
        cases.push(vec![0xe2, 0x82]);
        cases.push(vec![0xed, 0xa0, 0x80]);
        cases.push(Vec::new());
        for case in cases {
            assert_eq!(
                utf8(&case).ok(),
                std::str::from_utf8(&case).ok(),
                "{case:02x?}"
            );
        }
    }
}
