//! The runtime of zero-copy views (feature `views`): a description of each struct's layout
//! (`StructSpec`, one static per generated struct), the walk that checks a struct's bytes once
//! when a view is made, and the reads and iterators that the generated accessors call later.
//!
//! Why a table and not generated code: the checks and the skips are the same for every
//! struct, so one interpreter here serves them all and each generated struct adds only a table
//! of its fields and one short accessor per field (the crate's build time is part of its
//! worth).
//!
//! **The contract.** [`validate`] walks a struct with the owned decoder's own readers
//! (`Decoder::read_str`, `read_array_count`, `read_tagged_fields`, ...), so it refuses what
//! the owned decoder refuses: lengths and counts past the input, the `DecodeLimits`, invalid
//! UTF-8, tagged sections out of order or of the wrong size, nesting. After it has passed, the
//! accessors read with [`Walk`], which never fails: every read is bounds-checked (`get`) and a
//! read that could only fail on bytes `validate` refused yields a zero or an empty value
//! rather than a panic. No `unsafe` here: strings are checked as UTF-8 again when read
//! (`str::from_utf8`, a fast pass over bytes already known to be valid), so no walk, even a
//! wrong one, can make a `&str` of bytes that are not UTF-8.

use super::array::INLINE_CAPACITY;
use super::{DecodeError, DecodeErrorKind, Decoder, TaggedFields, Utf8Bytes, Uuid};
use super::{PrimitiveArray, RawTaggedField};
use bytes::Bytes;
use std::marker::PhantomData;

/// Versions `min..=max` (empty when `min > max`).
#[derive(Debug, Clone, Copy)]
pub struct Versions(pub i16, pub i16);

impl Versions {
    /// No version.
    pub const NONE: Versions = Versions(1, 0);

    #[inline]
    fn contains(self, version: i16) -> bool {
        self.0 <= version && version <= self.1
    }
}

/// What one value of a field is.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// One byte, any non-zero byte true.
    Bool,
    /// Fixed-width big-endian numbers and uuids, by their width in bytes.
    Fixed(usize),
    /// A string.
    String,
    /// `bytes` or `records`.
    Bytes,
    /// A nested struct.
    Struct(&'static StructSpec),
}

/// One field of a struct.
#[derive(Debug)]
pub struct FieldSpec {
    name: &'static str,
    kind: Kind,
    array: bool,
    /// Versions where the field sits in the struct's fixed part.
    positional: Versions,
    nullable: Versions,
    /// The field's tag, and the versions where it is tagged.
    tag: Option<(u32, Versions)>,
    /// The field's own flexible versions, where it overrides the struct's (strings).
    flexible: Option<Versions>,
}

impl FieldSpec {
    /// A field of `kind` in the fixed part at `positional` versions.
    pub const fn new(name: &'static str, kind: Kind, positional: Versions) -> Self {
        FieldSpec {
            name,
            kind,
            array: false,
            positional,
            nullable: Versions::NONE,
            tag: None,
            flexible: None,
        }
    }

    /// An array of `kind`.
    pub const fn array(mut self) -> Self {
        self.array = true;
        self
    }

    /// Null at `versions`.
    pub const fn nullable(mut self, versions: Versions) -> Self {
        self.nullable = versions;
        self
    }

    /// Tagged with `tag` at `versions`.
    pub const fn tagged(mut self, tag: u32, versions: Versions) -> Self {
        self.tag = Some((tag, versions));
        self
    }

    /// Compact at `versions`, whatever the struct says.
    pub const fn flexible(mut self, versions: Versions) -> Self {
        self.flexible = Some(versions);
        self
    }
}

/// A struct's layout: its fields in schema order.
#[derive(Debug)]
pub struct StructSpec {
    /// The struct's name, for errors.
    pub name: &'static str,
    /// The message's flexible versions (where the struct ends in a tagged section).
    pub flexible: Versions,
    /// `size_of` of the owned struct: what an owned decode reserves per array element, so that
    /// a view charges the memory budget as the owned decode does.
    pub owned_size: usize,
    /// The fewest wire bytes of the struct at a version (the owned decoder's count check).
    pub min_size: fn(i16) -> usize,
    /// The fields, in schema order.
    pub fields: &'static [FieldSpec],
}

impl StructSpec {
    /// The layout of a struct (see the fields).
    pub const fn new(
        name: &'static str,
        flexible: Versions,
        owned_size: usize,
        min_size: fn(i16) -> usize,
        fields: &'static [FieldSpec],
    ) -> Self {
        StructSpec {
            name,
            flexible,
            owned_size,
            min_size,
            fields,
        }
    }

    fn known_tag(&self, tag: u32) -> Option<&FieldSpec> {
        self.fields
            .iter()
            .find(|f| matches!(f.tag, Some((t, _)) if t == tag))
    }
}

fn compact(spec: &StructSpec, field: &FieldSpec, version: i16) -> bool {
    field.flexible.unwrap_or(spec.flexible).contains(version)
}

// ---------------------------------------------------------------------------------------------
// Checking, once, when a view is made

/// Checks the struct `spec` at `version` from the decoder's position, as the owned decoder
/// reads it (same readers, same limits, the same memory budget charges), without building
/// anything. The caller has entered the struct's nesting level.
pub fn validate(d: &mut Decoder<'_>, spec: &StructSpec, version: i16) -> Result<(), DecodeError> {
    for field in spec.fields {
        if field.positional.contains(version) {
            validate_field(d, spec, field, version).map_err(|e| e.at(field.name))?;
        }
    }
    if spec.flexible.contains(version) {
        // Unknown fields are kept (and charged) exactly as the owned decoder keeps them; the
        // common empty section allocates nothing.
        d.read_tagged_fields(|d, tag| match spec.known_tag(tag) {
            Some(field) => match field.tag {
                Some((_, versions)) if versions.contains(version) => {
                    validate_field(d, spec, field, version).map_err(|e| e.at(field.name))?;
                    Ok(true)
                }
                _ => Err(d.error(DecodeErrorKind::TagNotValidForVersion(tag))),
            },
            None => Ok(false),
        })?;
    }
    Ok(())
}

fn validate_field(
    d: &mut Decoder<'_>,
    spec: &StructSpec,
    field: &FieldSpec,
    version: i16,
) -> Result<(), DecodeError> {
    let compact = compact(spec, field, version);
    let nullable = field.nullable.contains(version);
    if field.array {
        let min = match field.kind {
            Kind::Bool => 1,
            Kind::Fixed(width) => width,
            Kind::String => 1 + usize::from(!compact),
            Kind::Bytes => 1 + 3 * usize::from(!compact),
            Kind::Struct(s) => (s.min_size)(version),
        };
        let count = if nullable {
            match d.read_array_len(compact, min)? {
                Some(count) => count,
                None => return Ok(()),
            }
        } else {
            d.read_array_count(compact, min)?
        };
        return validate_elements(d, field.kind, count, compact, version);
    }
    match field.kind {
        Kind::Bool => d.skip(1),
        Kind::Fixed(width) => d.skip(width),
        Kind::String if nullable => d.read_nullable_str(compact).map(drop),
        Kind::String => d.read_str(compact).map(drop),
        Kind::Bytes if nullable => d.read_nullable_byte_slice(compact).map(drop),
        Kind::Bytes => d.read_byte_slice(compact).map(drop),
        Kind::Struct(s) => {
            if nullable && !d.read_struct_marker()? {
                return Ok(());
            }
            d.enter()?;
            validate(d, s, version)?;
            d.leave();
            Ok(())
        }
    }
}

/// `count` elements, charged to the memory budget as the owned decoder reserves them.
fn validate_elements(
    d: &mut Decoder<'_>,
    kind: Kind,
    count: usize,
    compact: bool,
    version: i16,
) -> Result<(), DecodeError> {
    match kind {
        // `Vec<bool>`: one byte each.
        Kind::Bool => {
            d.charge(count)?;
            d.skip(count)
        }
        // `PrimitiveArray`: inline when short, else one shared `Bytes` behind a box.
        Kind::Fixed(width) => {
            let len = count * width;
            if len > INLINE_CAPACITY {
                d.charge(std::mem::size_of::<Bytes>())?;
            }
            d.skip(len)
        }
        Kind::String => {
            d.charge(count.saturating_mul(std::mem::size_of::<Utf8Bytes>()))?;
            for index in 0..count {
                d.read_str(compact).map_err(|e| e.at_index(index))?;
            }
            Ok(())
        }
        Kind::Bytes => {
            d.charge(count.saturating_mul(std::mem::size_of::<Bytes>()))?;
            for index in 0..count {
                d.read_byte_slice(compact).map_err(|e| e.at_index(index))?;
            }
            Ok(())
        }
        Kind::Struct(s) => {
            d.charge(count.saturating_mul(s.owned_size))?;
            if count == 0 {
                return Ok(());
            }
            // One nesting level for every element, as the owned decoder counts it.
            d.enter().map_err(|e| e.at_index(0))?;
            for index in 0..count {
                validate(d, s, version).map_err(|e| e.at_index(index))?;
            }
            d.leave();
            Ok(())
        }
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

    /// Skips one value of `kind` (not an array).
    fn skip_value(&mut self, kind: Kind, nullable: bool) {
        match kind {
            Kind::Bool => self.pos = self.pos.saturating_add(1),
            Kind::Fixed(width) => self.pos = self.pos.saturating_add(width),
            Kind::String => {
                let len = self.len(true).unwrap_or(0);
                self.pos = self.pos.saturating_add(len);
            }
            Kind::Bytes => {
                let len = self.len(false).unwrap_or(0);
                self.pos = self.pos.saturating_add(len);
            }
            Kind::Struct(s) => {
                if !nullable || self.take::<1>()[0] as i8 >= 0 {
                    self.skip_struct(s);
                }
            }
        }
    }

    fn skip_field(&mut self, spec: &StructSpec, field: &FieldSpec) {
        self.compact = compact(spec, field, self.version);
        let nullable = field.nullable.contains(self.version);
        if !field.array {
            return self.skip_value(field.kind, nullable);
        }
        let count = self.len(false).unwrap_or(0);
        match field.kind {
            Kind::Bool => self.pos = self.pos.saturating_add(count),
            Kind::Fixed(width) => self.pos = self.pos.saturating_add(count.saturating_mul(width)),
            kind => {
                for _ in 0..count.min(self.bytes().len()) {
                    self.skip_value(kind, false);
                }
            }
        }
    }

    /// Skips a whole struct, tagged section included.
    fn skip_struct(&mut self, spec: &StructSpec) {
        for field in spec.fields {
            if field.positional.contains(self.version) {
                self.skip_field(spec, field);
            }
        }
        if spec.flexible.contains(self.version) {
            let count = self.uvarint();
            for _ in 0..count.min(self.bytes().len() as u64) {
                self.uvarint();
                let size = self.uvarint();
                self.pos = self.pos.saturating_add(size as usize);
            }
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
    /// The struct at `at` in `buf`, which [`validate`] checked at `version`.
    pub fn new(buf: &'a Bytes, at: usize, version: i16) -> Self {
        ViewCursor {
            buf,
            at: Some(at),
            version,
        }
    }

    /// A struct the version lacks: every field reads as its default.
    pub fn absent(version: i16) -> Self {
        static EMPTY: Bytes = Bytes::from_static(&[]);
        ViewCursor {
            buf: &EMPTY,
            at: None,
            version,
        }
    }

    /// The version the struct was written at.
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The input the struct is part of.
    pub fn buf(&self) -> &'a Bytes {
        self.buf
    }

    fn walk(&self, at: usize) -> Walk<'a> {
        Walk {
            buf: self.buf,
            pos: at,
            version: self.version,
            compact: false,
        }
    }

    /// The walk past the struct's fixed part, at its tagged section (flexible versions).
    fn tagged_section(&self, spec: &StructSpec) -> Option<Walk<'a>> {
        let mut walk = self.walk(self.at?);
        if !spec.flexible.contains(self.version) {
            return None;
        }
        for field in spec.fields {
            if field.positional.contains(self.version) {
                walk.skip_field(spec, field);
            }
        }
        Some(walk)
    }

    /// The walk at field `index`'s value, ready to read it; `None` where the version does not
    /// have the field (or a tagged field is not there).
    fn field(&self, spec: &StructSpec, index: usize) -> Option<Walk<'a>> {
        let field = spec.fields.get(index)?;
        let mut walk = if field.positional.contains(self.version) {
            let mut walk = self.walk(self.at?);
            for before in &spec.fields[..index] {
                if before.positional.contains(self.version) {
                    walk.skip_field(spec, before);
                }
            }
            walk
        } else {
            let (tag, versions) = field.tag?;
            if !versions.contains(self.version) {
                return None;
            }
            let section = self.tagged_section(spec)?;
            let (_, at, _) = section.tagged_entries().find(|&(t, _, _)| t == tag)?;
            self.walk(at)
        };
        walk.compact = compact(spec, field, self.version);
        Some(walk)
    }

    /// Field `index` as a `T`, `None` where the version lacks it.
    #[inline]
    pub fn get<T: ViewValue<'a>>(&self, spec: &StructSpec, index: usize) -> Option<T> {
        let mut walk = self.field(spec, index)?;
        Some(T::read(&mut walk))
    }

    /// Field `index` of an optional type: read as nullable where the version allows null,
    /// else as a value that is there (`Some`).
    #[inline]
    pub fn get_optional<T: ViewNullable<'a>>(
        &self,
        spec: &StructSpec,
        index: usize,
    ) -> Option<Option<T>> {
        let mut walk = self.field(spec, index)?;
        let nullable = spec.fields.get(index)?.nullable.contains(self.version);
        Some(if nullable {
            T::read_nullable(&mut walk)
        } else {
            Some(T::read(&mut walk))
        })
    }

    /// The raw value of tagged field `tag`, known or not, if the struct has it.
    pub fn raw_tagged(&self, spec: &StructSpec, tag: u32) -> Option<&'a [u8]> {
        let section = self.tagged_section(spec)?;
        section
            .tagged_entries()
            .find(|&(t, _, _)| t == tag)
            .map(|(_, _, value)| value)
    }

    /// The tagged fields the schema does not know, as the owned decoder keeps them.
    pub fn unknown_tagged(&self, spec: &StructSpec) -> TaggedFields {
        let Some(section) = self.tagged_section(spec) else {
            return TaggedFields::new();
        };
        section
            .tagged_entries()
            .filter(|&(tag, _, _)| spec.known_tag(tag).is_none())
            .map(|(tag, _, value)| RawTaggedField {
                tag,
                data: share(self.buf, value),
            })
            .collect()
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
    /// The struct's layout.
    #[doc(hidden)]
    fn spec() -> &'static StructSpec;
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
    walk.skip_struct(V::spec());
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
            walk: ViewCursor::absent(0).walk(0),
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
    fn into_owned(self, buf: &'a Bytes) -> Utf8Bytes {
        Utf8Bytes::from_utf8(share(buf, self.as_bytes())).unwrap_or_default()
    }
}

impl<'a> IntoOwned<'a> for &'a [u8] {
    type Owned = Bytes;
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
    fn collect(elements: ViewIter<'a, Self>, buf: &'a Bytes) -> Self::Array;
}

macro_rules! primitive_arrays {
    ($($ty:ty),*) => {$(
        impl<'a> OwnedArray<'a> for $ty {
            type Array = PrimitiveArray<$ty>;
            fn collect(elements: ViewIter<'a, Self>, _: &'a Bytes) -> Self::Array {
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
            fn collect(elements: ViewIter<'a, Self>, buf: &'a Bytes) -> Self::Array {
                elements.map(|element| element.into_owned(buf)).collect()
            }
        }
    )*};
}
vec_arrays!(bool, &'a str, &'a [u8]);

impl<'a, T: OwnedArray<'a> + ViewValue<'a>> IntoOwned<'a> for ViewIter<'a, T> {
    type Owned = T::Array;
    fn into_owned(self, buf: &'a Bytes) -> T::Array {
        T::collect(self, buf)
    }
}

/// The impls every generated view shares, written once: as a field or array element, as an
/// owned value, and [`StructView`].
#[macro_export]
#[doc(hidden)]
macro_rules! view_struct {
    ($view:ident, $owned:ident, $spec:ident) => {
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
                elements: $crate::wire::view::ViewIter<'a, Self>,
                _: &'a $crate::bytes::Bytes,
            ) -> Vec<$owned> {
                elements.map(|element| element.to_owned()).collect()
            }
        }
        impl $crate::wire::view::Viewable for $owned {
            type View<'a> = $view<'a>;
        }
        impl<'a> $crate::wire::view::StructView<'a> for $view<'a> {
            // A function, not an associated const: a const may refer to a static only from
            // Rust 1.83, and the crate builds on 1.82.
            #[inline]
            fn spec() -> &'static $crate::wire::view::StructSpec {
                &$spec
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
