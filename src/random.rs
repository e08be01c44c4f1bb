//! Random messages that are valid for a given version (feature `arbitrary`).
//!
//! Property tests and the structure-aware fuzzer draw messages from an
//! [`arbitrary::Unstructured`]: every field the version has gets a value (integers lean towards
//! their boundaries, strings towards empty and non-ASCII text, arrays hold zero to three
//! elements), nulls appear only where the version allows them, and fields the version lacks
//! keep their defaults, so every generated message encodes without error.

use crate::wire::{FixedWidth, PrimitiveArray, RawTaggedField, TaggedFields, Utf8Bytes, Uuid};
use arbitrary::{Arbitrary, Result, Unstructured};

/// The `arbitrary` crate, so that generated code needs no dependency of its own on it.
pub use arbitrary;
use bytes::Bytes;

/// Options for random generation.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomOptions {
    /// Add unknown tagged fields (above the known tags) in flexible versions.
    pub unknown_tagged_fields: bool,
}

/// A struct that can be generated at random for a version.
pub trait Random: Sized {
    /// A random value valid at `version`.
    fn random(u: &mut Unstructured<'_>, version: i16, options: &RandomOptions) -> Result<Self>;
}

/// Integer types with boundary values worth trying.
pub trait Boundaries: Copy + for<'a> Arbitrary<'a> {
    /// Values at and around the type's edges.
    const EDGES: [Self; 5];
}

macro_rules! boundaries {
    ($($ty:ty),*) => {$(
        impl Boundaries for $ty {
            const EDGES: [Self; 5] = [0, 1, <$ty>::MAX, <$ty>::MIN, <$ty>::MAX / 2];
        }
    )*};
}
boundaries!(i8, i16, u16, i32, u32, i64);

/// An integer, one time in three at a boundary.
pub fn int<T: Boundaries>(u: &mut Unstructured<'_>) -> Result<T> {
    if u.ratio(1, 3)? {
        Ok(*u.choose(&T::EDGES)?)
    } else {
        T::arbitrary(u)
    }
}

/// A finite float (JSON cannot carry NaN or infinities).
pub fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    let value = f64::arbitrary(u)?;
    Ok(if value.is_finite() { value } else { 0.5 })
}

/// A UUID, often the zero UUID.
pub fn uuid(u: &mut Unstructured<'_>) -> Result<Uuid> {
    if u.ratio(1, 3)? {
        Ok(Uuid::ZERO)
    } else {
        Ok(Uuid(u.arbitrary()?))
    }
}

const SAMPLES: [&str; 6] = [
    "",
    "a",
    "__cluster_metadata",
    "héllo wörld",
    "日本語",
    "🦀 kafka",
];

/// A string: empty, ASCII, multi-byte, or random characters; at most a few dozen bytes.
pub fn string(u: &mut Unstructured<'_>) -> Result<Utf8Bytes> {
    if u.ratio(1, 2)? {
        return Ok(Utf8Bytes::from_static(u.choose(&SAMPLES)?));
    }
    let len = u.int_in_range(0..=12)?;
    let mut text = String::new();
    for _ in 0..len {
        text.push(char::arbitrary(u)?);
    }
    Ok(Utf8Bytes::from(text))
}

/// Bytes: zero to 32 random bytes (fewer when the input runs out, so that a short input still
/// makes a message, as with every other value here).
pub fn bytes(u: &mut Unstructured<'_>) -> Result<Bytes> {
    let len = u.int_in_range(0..=32)?.min(u.len());
    Ok(Bytes::copy_from_slice(u.bytes(len)?))
}

/// Zero to three elements.
pub fn vec<T>(
    u: &mut Unstructured<'_>,
    mut element: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let len = u.int_in_range(0..=3)?;
    (0..len).map(|_| element(u)).collect()
}

/// Zero to three fixed-width elements.
pub fn primitive_array<T: FixedWidth>(
    u: &mut Unstructured<'_>,
    element: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<PrimitiveArray<T>> {
    vec(u, element).map(PrimitiveArray::from)
}

/// `None` one time in four where the version allows null, else a value.
pub fn maybe_null<T>(
    u: &mut Unstructured<'_>,
    nullable: bool,
    value: impl FnOnce(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Option<T>> {
    if nullable && u.ratio(1, 4)? {
        Ok(None)
    } else {
        value(u).map(Some)
    }
}

/// Zero to two unknown tagged fields with tags at or above `first_free_tag`, ascending.
pub fn unknown_tagged_fields(
    u: &mut Unstructured<'_>,
    first_free_tag: u32,
) -> Result<TaggedFields> {
    let count = u.int_in_range(0..=2)?;
    let mut tag = first_free_tag;
    let mut fields = Vec::with_capacity(count);
    for _ in 0..count {
        tag += u.int_in_range(0..=200)?;
        fields.push(RawTaggedField {
            tag,
            data: bytes(u)?,
        });
        tag += 1;
    }
    Ok(fields.into())
}

/// A boolean.
pub fn boolean(u: &mut Unstructured<'_>) -> Result<bool> {
    u.arbitrary()
}
