//! The runtime of zero-copy views (feature `views`): the walk over checked bytes that the
//! generated views read with, their iterators and values, and the helpers their generated
//! checks call.
//!
//! Each generated view (`codegen/src/emit/view.rs`) has, per struct, straight-line code for
//! every version as the owned decoder has: `view_check`, which checks the struct's bytes once
//! when a view is made; `view_skip_to`, which steps over its first fields to the one an
//! accessor reads (fixed-width fields are constant steps the compiler folds); and
//! `view_read_owned`, which reads the whole struct in one pass for `to_owned`.
//!
//! **The contract.** `view_check` uses the owned decoder's own readers
//! (`Decoder::read_str`, `read_array_count`, `read_tagged_fields`, ...) and charges the
//! memory budget as the owned decode reserves, so it refuses what the owned decoder refuses:
//! lengths and counts past the input, the `DecodeLimits`, invalid UTF-8, tagged sections out
//! of order or of the wrong size, nesting. After it has passed, the accessors read with
//! [`Walk`], which never fails: every read is bounds-checked (`get`) and a read that could
//! only fail on bytes the check refused yields a zero or an empty value rather than a panic.
//! No `unsafe` here: strings are checked as UTF-8 again when read (`str::from_utf8`, a fast
//! pass over bytes already known to be valid), so no walk, even a wrong one, can make a
//! `&str` of bytes that are not UTF-8.

use super::array::{FixedWidth, INLINE_CAPACITY};
use super::{DecodeError, Decoder, TaggedFields, Utf8Bytes, Uuid};
use super::{PrimitiveArray, RawTaggedField};
use bytes::Bytes;
use std::marker::PhantomData;

// ---------------------------------------------------------------------------------------------
// Checking, once, when a view is made (called by the generated `view_check`)

/// A generated `view_check`: a struct's bytes at a version, checked from the decoder's
/// position.
pub type ViewCheck = fn(&mut Decoder<'_>, i16) -> Result<(), DecodeError>;

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
// Reading, after the check

/// A position in checked bytes, read without failing: see the module's contract.
#[derive(Clone, Copy)]
pub struct Walk<'a> {
    buf: &'a Bytes,
    pos: usize,
    version: i16,
    compact: bool,
}

impl<'a> Walk<'a> {
    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.buf.as_ref()
    }

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

    /// Whether the next value's lengths are compact (set before each read).
    #[inline]
    pub fn set_compact(&mut self, compact: bool) {
        self.compact = compact;
    }

    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let bytes = self.bytes();
        let value = bytes
            .get(self.pos..)
            .and_then(|rest| rest.first_chunk::<N>())
            .copied()
            .unwrap_or([0; N]);
        self.pos = self.pos.saturating_add(N);
        value
    }

    #[inline]
    fn slice(&mut self, len: usize) -> &'a [u8] {
        let bytes = self.bytes();
        let start = self.pos;
        self.pos = start.saturating_add(len);
        bytes.get(start..self.pos).unwrap_or(&[])
    }

    #[inline]
    fn uvarint(&mut self) -> u64 {
        let bytes = self.bytes();
        // Nearly every varint here is one byte (a short length, an empty tagged section);
        // a records length of up to 2 MiB is three.
        if let Some(&[a, b, c]) = bytes.get(self.pos..).and_then(|rest| rest.first_chunk()) {
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
        self.uvarint_long()
    }

    #[inline(never)]
    fn uvarint_long(&mut self) -> u64 {
        let bytes = self.bytes();
        let mut value = 0u64;
        for shift in 0..10 {
            let byte = bytes.get(self.pos).copied().unwrap_or(0);
            self.pos = self.pos.saturating_add(1);
            value |= u64::from(byte & 0x7f) << (7 * shift);
            if byte & 0x80 == 0 {
                break;
            }
        }
        value
    }

    /// A length prefix; `None` for null (negative).
    #[inline]
    fn len(&mut self, classic_i16: bool) -> Option<usize> {
        let len = if self.compact {
            self.uvarint() as i64 - 1
        } else if classic_i16 {
            i64::from(i16::from_be_bytes(self.take()))
        } else {
            i64::from(i32::from_be_bytes(self.take()))
        };
        usize::try_from(len).ok()
    }

    /// Steps over `len` bytes (fixed-width fields).
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

    /// An array's count (0 for null), bounded by the input so that a wrong walk stays finite.
    #[inline]
    pub fn count(&mut self, compact: bool) -> usize {
        self.compact = compact;
        self.len(false).unwrap_or(0).min(self.bytes().len())
    }

    /// Steps over an array of fixed-width values `width` bytes each.
    #[inline]
    pub fn skip_fixed_array(&mut self, compact: bool, width: usize) {
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

    /// Steps over an array of structs.
    #[inline]
    pub fn skip_struct_array<V: StructView<'a>>(&mut self, compact: bool) {
        for _ in 0..self.count(compact) {
            V::skip(self);
        }
    }

    /// Steps over a struct (after its marker where `nullable`).
    #[inline]
    pub fn skip_struct<V: StructView<'a>>(&mut self, nullable: bool) {
        if !nullable || self.take::<1>()[0] as i8 >= 0 {
            V::skip(self);
        }
    }

    /// Steps over a tagged section.
    #[inline]
    pub fn skip_tagged(&mut self) {
        // Nearly every section is empty: the zero byte.
        if self.bytes().get(self.pos) == Some(&0) {
            self.pos += 1;
            return;
        }
        self.skip_tagged_entries();
    }

    #[inline(never)]
    fn skip_tagged_entries(&mut self) {
        let count = self.uvarint();
        for _ in 0..count.min(self.bytes().len() as u64) {
            self.uvarint();
            let size = self.uvarint();
            self.skip(size as usize);
        }
    }

    /// The tagged section's entries as (tag, where the value starts, value); the walk is at
    /// the section.
    fn tagged_entries(mut self) -> impl Iterator<Item = (u32, usize, &'a [u8])> {
        let count = self.uvarint().min(self.bytes().len() as u64);
        (0..count).map(move |_| {
            let tag = self.uvarint() as u32;
            let size = self.uvarint() as usize;
            let at = self.pos;
            (tag, at, self.slice(size))
        })
    }

    /// The walk at tagged field `tag`'s value, if the section (the walk is at it) has it.
    #[inline]
    pub fn tagged(self, tag: u32) -> Option<Walk<'a>> {
        let (_, at, _) = self.tagged_entries().find(|&(t, _, _)| t == tag)?;
        Some(Walk { pos: at, ..self })
    }

    /// The raw value of tagged field `tag` in the section (the walk is at it).
    #[inline]
    pub fn raw_tagged(self, tag: u32) -> Option<&'a [u8]> {
        self.tagged_entries()
            .find(|&(t, _, _)| t == tag)
            .map(|(_, _, value)| value)
    }

    /// The tagged fields of the section (the walk is at it) that `known` does not know, as
    /// the owned decoder keeps them.
    pub fn unknown_tagged(self, known: impl Fn(u32) -> bool) -> TaggedFields {
        // Nearly every section is empty: its count is the zero byte.
        if self.bytes().get(self.pos) == Some(&0) {
            return TaggedFields::new();
        }
        let buf = self.buf;
        self.tagged_entries()
            .filter(|&(tag, _, _)| !known(tag))
            .map(|(tag, _, value)| RawTaggedField {
                tag,
                data: share(buf, value),
            })
            .collect()
    }

    /// A value of `T`, read as nullable where `nullable`.
    #[inline]
    pub fn read<T: ViewNullable<'a>>(&mut self, compact: bool, nullable: bool) -> Option<T> {
        self.compact = compact;
        if nullable {
            T::read_nullable(self)
        } else {
            Some(T::read(self))
        }
    }

    /// A value of `T` that is never null on the wire.
    #[inline]
    pub fn read_value<T: ViewValue<'a>>(&mut self, compact: bool) -> T {
        self.compact = compact;
        T::read(self)
    }

    /// An array of numbers, strings, bytes or booleans, converted to its owned type; the walk
    /// ends past the array.
    #[inline]
    pub fn read_owned_array<T: OwnedArray<'a> + ViewValue<'a>>(
        &mut self,
        compact: bool,
        nullable: bool,
    ) -> Option<T::Array> {
        self.compact = compact;
        let mut elements = if nullable {
            ViewIter::<T>::read_nullable(self)?
        } else {
            ViewIter::<T>::read(self)
        };
        let array = T::collect(&mut elements, self.buf);
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
        mut read: impl FnMut(&mut Walk<'a>) -> T,
    ) -> Option<Vec<T>> {
        self.compact = compact;
        let count = self.len(false);
        if count.is_none() && nullable {
            return None;
        }
        let count = count.unwrap_or(0).min(self.bytes().len());
        Some((0..count).map(|_| read(self)).collect())
    }

    /// A struct converted by `read`, after its marker where `nullable` (`None` for null).
    #[inline]
    pub fn read_owned_struct<T>(
        &mut self,
        nullable: bool,
        read: impl FnOnce(&mut Walk<'a>) -> T,
    ) -> Option<T> {
        if nullable && (self.take::<1>()[0] as i8) < 0 {
            return None;
        }
        Some(read(self))
    }
}

/// Where a struct starts in checked bytes, and the version it was written at; or a struct the
/// version does not have, whose fields all read as their defaults.
#[derive(Clone, Copy)]
pub struct ViewCursor<'a> {
    buf: &'a Bytes,
    at: Option<usize>,
    version: i16,
}

impl<'a> ViewCursor<'a> {
    /// The struct at `at` in `buf`, which its `view_check` checked at `version`.
    #[inline]
    pub fn new(buf: &'a Bytes, at: usize, version: i16) -> Self {
        ViewCursor {
            buf,
            at: Some(at),
            version,
        }
    }

    /// A struct the version lacks: every field reads as its default.
    #[inline]
    pub fn absent(version: i16) -> Self {
        static EMPTY: Bytes = Bytes::from_static(&[]);
        ViewCursor {
            buf: &EMPTY,
            at: None,
            version,
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

    /// The walk at the struct's start; `None` for a struct the version lacks.
    #[inline]
    pub fn walk(&self) -> Option<Walk<'a>> {
        Some(Walk {
            buf: self.buf,
            pos: self.at?,
            version: self.version,
            compact: false,
        })
    }
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

/// A value a view's accessor returns, read from checked bytes.
pub trait ViewValue<'a>: Sized {
    #[doc(hidden)]
    fn read(walk: &mut Walk<'a>) -> Self;
}

/// A value that may be null on the wire (`Option<T>` of a nullable field).
pub trait ViewNullable<'a>: ViewValue<'a> {
    #[doc(hidden)]
    fn read_nullable(walk: &mut Walk<'a>) -> Option<Self>;
}

impl<'a, T: ViewNullable<'a>> ViewValue<'a> for Option<T> {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        T::read_nullable(walk)
    }
}

macro_rules! fixed_values {
    ($($ty:ty),*) => {$(
        impl<'a> ViewValue<'a> for $ty {
            #[inline]
            fn read(walk: &mut Walk<'a>) -> Self {
                <$ty>::from_be_bytes(walk.take())
            }
        }
    )*};
}
fixed_values!(i8, i16, u16, i32, u32, i64, f64);

impl<'a> ViewValue<'a> for bool {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        walk.take::<1>()[0] != 0
    }
}

impl<'a> ViewValue<'a> for Uuid {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        Uuid(walk.take())
    }
}

impl<'a> ViewValue<'a> for &'a str {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        Self::read_nullable(walk).unwrap_or("")
    }
}

impl<'a> ViewNullable<'a> for &'a str {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a>) -> Option<Self> {
        let len = walk.len(true)?;
        // Checked when the view was made; checked again here, in safe code (see the module).
        Some(std::str::from_utf8(walk.slice(len)).unwrap_or(""))
    }
}

impl<'a> ViewValue<'a> for &'a [u8] {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        Self::read_nullable(walk).unwrap_or(&[])
    }
}

impl<'a> ViewNullable<'a> for &'a [u8] {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a>) -> Option<Self> {
        let len = walk.len(false)?;
        Some(walk.slice(len))
    }
}

/// A generated view of a struct.
pub trait StructView<'a>: Copy {
    /// Checks the struct's bytes at `version` from the decoder's position (the caller has
    /// entered its nesting level), as the owned decoder would read them.
    #[doc(hidden)]
    fn check(d: &mut Decoder<'_>, version: i16) -> Result<(), DecodeError>;
    /// Steps over the whole struct, tagged section included.
    #[doc(hidden)]
    fn skip(walk: &mut Walk<'a>);
    /// The owned struct.
    type Owned;
    #[doc(hidden)]
    fn from_cursor(cursor: ViewCursor<'a>) -> Self;
    /// The owned struct, equal to what the owned decoder reads from the same bytes.
    fn to_owned_struct(&self) -> Self::Owned;
}

/// An owned struct that has a view: `M::View<'a>` names it generically.
pub trait Viewable: Sized {
    /// The struct's view.
    type View<'a>: StructView<'a, Owned = Self>;
}

/// A view of a struct as an array element or a field: generated per view.
#[doc(hidden)]
pub fn read_struct<'a, V: StructView<'a>>(walk: &mut Walk<'a>) -> V {
    let view = V::from_cursor(ViewCursor::new(walk.buf, walk.pos, walk.version));
    V::skip(walk);
    view
}

/// A nullable struct: its marker byte, then the struct.
#[doc(hidden)]
pub fn read_nullable_struct<'a, V: StructView<'a>>(walk: &mut Walk<'a>) -> Option<V> {
    (walk.take::<1>()[0] as i8 >= 0).then(|| read_struct(walk))
}

/// The elements of an array field: read one by one as the iterator goes, allocating nothing.
/// The count is known (an [`ExactSizeIterator`]).
pub struct ViewIter<'a, T> {
    walk: Walk<'a>,
    left: usize,
    element: PhantomData<T>,
}

impl<T> Clone for ViewIter<'_, T> {
    fn clone(&self) -> Self {
        ViewIter {
            walk: self.walk,
            left: self.left,
            element: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for ViewIter<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewIter").field("len", &self.left).finish()
    }
}

impl<'a, T> ViewIter<'a, T> {
    /// No elements (an array the version lacks).
    pub fn empty() -> Self {
        ViewIter {
            walk: Walk {
                buf: ViewCursor::absent(0).buf,
                pos: 0,
                version: 0,
                compact: false,
            },
            left: 0,
            element: PhantomData,
        }
    }
}

impl<'a, T: ViewValue<'a>> Iterator for ViewIter<'a, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(T::read(&mut self.walk))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a, T: ViewValue<'a>> ExactSizeIterator for ViewIter<'a, T> {}
impl<'a, T: ViewValue<'a>> std::iter::FusedIterator for ViewIter<'a, T> {}

impl<'a, T> ViewValue<'a> for ViewIter<'a, T> {
    #[inline]
    fn read(walk: &mut Walk<'a>) -> Self {
        Self::read_nullable(walk).unwrap_or_else(Self::empty)
    }
}

impl<'a, T> ViewNullable<'a> for ViewIter<'a, T> {
    #[inline]
    fn read_nullable(walk: &mut Walk<'a>) -> Option<Self> {
        let count = walk.len(false)?;
        Some(ViewIter {
            walk: *walk,
            // A checked count never exceeds the input; the bound keeps a wrong walk finite.
            left: count.min(walk.bytes().len()),
            element: PhantomData,
        })
    }
}

/// The owned value of a view's value.
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
    fn collect(elements: &mut ViewIter<'a, Self>, buf: &'a Bytes) -> Self::Array;
}

macro_rules! primitive_arrays {
    ($($ty:ty),*) => {$(
        impl<'a> OwnedArray<'a> for $ty {
            type Array = PrimitiveArray<$ty>;
            fn collect(elements: &mut ViewIter<'a, Self>, _: &'a Bytes) -> Self::Array {
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
            fn collect(elements: &mut ViewIter<'a, Self>, buf: &'a Bytes) -> Self::Array {
                elements.map(|element| element.into_owned(buf)).collect()
            }
        }
    )*};
}
vec_arrays!(bool, &'a str, &'a [u8]);

impl<'a, T: OwnedArray<'a> + ViewValue<'a>> IntoOwned<'a> for ViewIter<'a, T> {
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
        impl<'a> $crate::wire::view::ViewValue<'a> for $view<'a> {
            #[inline]
            fn read(walk: &mut $crate::wire::view::Walk<'a>) -> Self {
                $crate::wire::view::read_struct(walk)
            }
        }
        impl<'a> $crate::wire::view::ViewNullable<'a> for $view<'a> {
            #[inline]
            fn read_nullable(walk: &mut $crate::wire::view::Walk<'a>) -> Option<Self> {
                $crate::wire::view::read_nullable_struct(walk)
            }
        }
        impl<'a> $crate::wire::view::IntoOwned<'a> for $view<'a> {
            type Owned = $owned;
            #[inline]
            fn into_owned(self, _: &'a $crate::bytes::Bytes) -> $owned {
                self.to_owned()
            }
        }
        impl<'a> $crate::wire::view::OwnedArray<'a> for $view<'a> {
            type Array = Vec<$owned>;
            #[inline]
            fn collect(
                elements: &mut $crate::wire::view::ViewIter<'a, Self>,
                _: &'a $crate::bytes::Bytes,
            ) -> Vec<$owned> {
                elements.map(|element| element.to_owned()).collect()
            }
        }
        impl $crate::wire::view::Viewable for $owned {
            type View<'a> = $view<'a>;
        }
        impl<'a> $crate::wire::view::StructView<'a> for $view<'a> {
            #[inline]
            fn check(
                d: &mut $crate::wire::Decoder<'_>,
                version: i16,
            ) -> Result<(), $crate::wire::DecodeError> {
                $view::view_check(d, version)
            }
            #[inline]
            fn skip(walk: &mut $crate::wire::view::Walk<'a>) {
                $view::view_skip(walk)
            }
            type Owned = $owned;
            #[inline]
            fn from_cursor(cursor: $crate::wire::view::ViewCursor<'a>) -> Self {
                $view(cursor)
            }
            #[inline]
            fn to_owned_struct(&self) -> $owned {
                $view::to_owned(*self)
            }
        }
    };
}
