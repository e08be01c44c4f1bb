//! Writers on [`BufMut`] and the matching size functions.
//!
//! Each `put_*` has a `*_len` twin so that `encoded_len` is computed by the same rules the
//! writer follows. Length checks that Kafka makes on write (string length, prefix range)
//! return [`EncodeError`]; callers add the field path.

use super::segments::SharedBytes;
use super::{
    EncodeError, EncodeErrorKind, FixedWidth, PrimitiveArray, RawTaggedField, Utf8Bytes, Uuid,
    MAX_STRING_LEN,
};
use bytes::{BufMut, Bytes};

/// Bytes an unsigned varint of `value` takes.
#[inline]
pub fn unsigned_varint_len(value: u32) -> usize {
    match value {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// Writes an unsigned varint.
#[inline]
pub fn put_unsigned_varint(buf: &mut impl BufMut, mut value: u32) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// Writes a zigzag varint.
pub fn put_varint(buf: &mut impl BufMut, value: i32) {
    put_unsigned_varint(buf, ((value << 1) ^ (value >> 31)) as u32);
}

/// Bytes a zigzag varint takes.
pub fn varint_len(value: i32) -> usize {
    unsigned_varint_len(((value << 1) ^ (value >> 31)) as u32)
}

/// Writes a zigzag varlong.
pub fn put_varlong(buf: &mut impl BufMut, value: i64) {
    let mut raw = ((value << 1) ^ (value >> 63)) as u64;
    while raw >= 0x80 {
        buf.put_u8((raw as u8) | 0x80);
        raw >>= 7;
    }
    buf.put_u8(raw as u8);
}

/// Bytes a zigzag varlong takes.
pub fn varlong_len(value: i64) -> usize {
    let raw = ((value << 1) ^ (value >> 63)) as u64;
    (64 - raw.leading_zeros() as usize).max(1).div_ceil(7)
}

/// Writes a `bool` as 0 or 1.
#[inline]
pub fn put_bool(buf: &mut impl BufMut, value: bool) {
    buf.put_u8(u8::from(value));
}

/// Writes a `uuid`.
#[inline]
pub fn put_uuid(buf: &mut impl BufMut, value: &Uuid) {
    buf.put_slice(&value.0);
}

/// Writes a `float64`.
#[inline]
pub fn put_f64(buf: &mut impl BufMut, value: f64) {
    buf.put_f64(value);
}

#[inline]
fn length_prefix_len(len: usize, compact: bool, classic_width: usize) -> usize {
    if compact {
        unsigned_varint_len((len as u32).wrapping_add(1))
    } else {
        classic_width
    }
}

/// Bytes a string of `len` UTF-8 bytes takes (classic int16 or compact length).
#[inline]
pub fn string_len(value: &str, compact: bool) -> usize {
    length_prefix_len(value.len(), compact, 2) + value.len()
}

/// Bytes a nullable string takes.
#[inline]
pub fn nullable_string_len(value: Option<&str>, compact: bool) -> usize {
    match value {
        Some(value) => string_len(value, compact),
        None => length_prefix_len(0, compact, 2),
    }
}

/// Writes a string; Kafka refuses more than 32767 bytes.
#[inline]
pub fn put_string(buf: &mut impl BufMut, value: &str, compact: bool) -> Result<(), EncodeError> {
    let len = value.len();
    if len > MAX_STRING_LEN {
        return Err(EncodeError::new(EncodeErrorKind::StringTooLong(len)));
    }
    if compact {
        put_unsigned_varint(buf, len as u32 + 1);
    } else {
        buf.put_i16(len as i16);
    }
    buf.put_slice(value.as_bytes());
    Ok(())
}

/// Writes a nullable string.
pub fn put_nullable_string(
    buf: &mut impl BufMut,
    value: Option<&str>,
    compact: bool,
) -> Result<(), EncodeError> {
    match value {
        Some(value) => put_string(buf, value, compact),
        None => {
            put_null(buf, compact, true);
            Ok(())
        }
    }
}

/// Writes the null marker for a string (`short_prefix`), bytes or array.
#[inline]
pub fn put_null(buf: &mut impl BufMut, compact: bool, short_prefix: bool) {
    if compact {
        buf.put_u8(0);
    } else if short_prefix {
        buf.put_i16(-1);
    } else {
        buf.put_i32(-1);
    }
}

/// Bytes a `bytes`/`records` value takes.
#[inline]
pub fn bytes_len(value: &[u8], compact: bool) -> usize {
    length_prefix_len(value.len(), compact, 4) + value.len()
}

/// Bytes a nullable `bytes`/`records` value takes.
#[inline]
pub fn nullable_bytes_len(value: Option<&[u8]>, compact: bool) -> usize {
    match value {
        Some(value) => bytes_len(value, compact),
        None => length_prefix_len(0, compact, 4),
    }
}

/// Writes the length prefix of `bytes`, `records` or an array.
#[inline]
pub fn put_length(buf: &mut impl BufMut, len: usize, compact: bool) -> Result<(), EncodeError> {
    if compact {
        // Most compact lengths (0 to 126) are one byte: written here, inline in the caller;
        // the varint loop stays out of line.
        if len < 0x7f {
            buf.put_u8(len as u8 + 1);
            return Ok(());
        }
        put_long_compact_length(buf, len)
    } else {
        let Ok(prefix) = i32::try_from(len) else {
            return Err(EncodeError::new(EncodeErrorKind::LengthTooLarge(len)));
        };
        buf.put_i32(prefix);
        Ok(())
    }
}

/// [`put_length`] of a compact length of two bytes or more.
#[inline(never)]
fn put_long_compact_length(buf: &mut impl BufMut, len: usize) -> Result<(), EncodeError> {
    let Some(prefix) = u32::try_from(len).ok().and_then(|n| n.checked_add(1)) else {
        return Err(EncodeError::new(EncodeErrorKind::LengthTooLarge(len)));
    };
    put_unsigned_varint(buf, prefix);
    Ok(())
}

/// Writes `bytes` or `records`.
#[inline]
pub fn put_bytes(buf: &mut impl BufMut, value: &[u8], compact: bool) -> Result<(), EncodeError> {
    put_length(buf, value.len(), compact)?;
    buf.put_slice(value);
    Ok(())
}

/// Writes `bytes` or `records` held as [`Bytes`]: what a generated encoder calls. Into most
/// buffers it is copied as [`put_bytes`] copies it; [`Segments`](super::Segments) keeps a
/// large value as a segment of its own, a reference to `value`'s storage.
#[inline]
pub fn put_shared_bytes(
    buf: &mut impl BufMut,
    value: &Bytes,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, value.len(), compact)?;
    buf.put(SharedBytes::new(value));
    Ok(())
}

/// Writes nullable `bytes` or `records` held as [`Bytes`] (see [`put_shared_bytes`]).
pub fn put_nullable_shared_bytes(
    buf: &mut impl BufMut,
    value: Option<&Bytes>,
    compact: bool,
) -> Result<(), EncodeError> {
    match value {
        Some(value) => put_shared_bytes(buf, value, compact),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Writes nullable `bytes` or `records`.
pub fn put_nullable_bytes(
    buf: &mut impl BufMut,
    value: Option<&[u8]>,
    compact: bool,
) -> Result<(), EncodeError> {
    match value {
        Some(value) => put_bytes(buf, value, compact),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Bytes the length prefix of an array of `count` elements takes.
#[inline]
pub fn array_prefix_len(count: usize, compact: bool) -> usize {
    length_prefix_len(count, compact, 4)
}

/// Bytes the unknown tagged fields take inside a tagged section (tag, size and data each).
pub fn raw_tagged_fields_len(fields: &[RawTaggedField]) -> usize {
    fields
        .iter()
        .map(|field| {
            unsigned_varint_len(field.tag)
                + unsigned_varint_len(field.data.len() as u32)
                + field.data.len()
        })
        .sum()
}

/// Writes unknown tagged fields after the known ones. They must be strictly ascending and
/// above every tag the struct knows (`known_tags`), or the section would be malformed.
pub fn put_raw_tagged_fields(
    buf: &mut impl BufMut,
    fields: &[RawTaggedField],
    known_tags: u32,
) -> Result<(), EncodeError> {
    let mut floor = known_tags;
    for field in fields {
        if field.tag < floor {
            return Err(EncodeError::new(EncodeErrorKind::BadUnknownTag(field.tag)));
        }
        floor = field.tag.saturating_add(1);
        put_unsigned_varint(buf, field.tag);
        put_length_varint(buf, field.data.len())?;
        buf.put_slice(&field.data);
    }
    Ok(())
}

/// The tagged-field section of a struct that writes no known tagged field: the count, then
/// the unknown fields as they were read.
#[inline]
pub fn put_tagged_fields(
    buf: &mut impl BufMut,
    unknown: &[RawTaggedField],
    known_tags: u32,
) -> Result<(), EncodeError> {
    // Nearly every section is empty: a zero count, written here inline.
    if unknown.is_empty() {
        buf.put_u8(0);
        return Ok(());
    }
    put_unknown_tagged_section(buf, unknown, known_tags)
}

fn put_unknown_tagged_section(
    buf: &mut impl BufMut,
    unknown: &[RawTaggedField],
    known_tags: u32,
) -> Result<(), EncodeError> {
    put_length_varint(buf, unknown.len())?;
    put_raw_tagged_fields(buf, unknown, known_tags)
}

/// Bytes [`put_tagged_fields`] writes.
#[inline]
pub fn tagged_fields_len(unknown: &[RawTaggedField]) -> usize {
    if unknown.is_empty() {
        return 1;
    }
    unsigned_varint_len(unknown.len() as u32) + raw_tagged_fields_len(unknown)
}

/// At a version without tagged fields, unknown tagged fields cannot be written: refuses
/// them rather than dropping them.
#[inline]
pub fn refuse_tagged_fields(unknown: &[RawTaggedField]) -> Result<(), EncodeError> {
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(EncodeError::new(EncodeErrorKind::TaggedFieldsNotFlexible))
    }
}

/// Writes a length as a plain unsigned varint (tagged field sizes).
#[inline]
pub fn put_length_varint(buf: &mut impl BufMut, len: usize) -> Result<(), EncodeError> {
    let Ok(len) = u32::try_from(len) else {
        return Err(EncodeError::new(EncodeErrorKind::LengthTooLarge(len)));
    };
    put_unsigned_varint(buf, len);
    Ok(())
}

/// Bytes one known tagged field takes: tag, size and `value_len` bytes of value.
#[inline]
pub fn tagged_field_len(tag: u32, value_len: usize) -> usize {
    unsigned_varint_len(tag) + unsigned_varint_len(value_len as u32) + value_len
}

/// The value of an optional field that must not be null at this version.
#[inline]
pub fn non_null<T>(value: Option<T>) -> Result<T, EncodeError> {
    value.ok_or_else(|| EncodeError::new(EncodeErrorKind::NullNotAllowed))
}

/// Writes an array: its length, then each element with `write_element`.
#[inline]
pub fn put_array<B: BufMut, T>(
    buf: &mut B,
    elements: &[T],
    compact: bool,
    mut write_element: impl FnMut(&mut B, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_length(buf, elements.len(), compact)?;
    for (index, element) in elements.iter().enumerate() {
        write_element(buf, element).map_err(|e| e.at_index(index))?;
    }
    Ok(())
}

/// Writes a nullable array.
#[inline]
pub fn put_nullable_array<B: BufMut, T>(
    buf: &mut B,
    elements: Option<&[T]>,
    compact: bool,
    write_element: impl FnMut(&mut B, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match elements {
        Some(elements) => put_array(buf, elements, compact, write_element),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Bytes an array takes, given each element's size.
#[inline]
pub fn array_len<T>(elements: &[T], compact: bool, element_len: impl Fn(&T) -> usize) -> usize {
    array_prefix_len(elements.len(), compact) + elements.iter().map(element_len).sum::<usize>()
}

/// Writes an array of fixed-width values (`[]int32`, `[]uuid`, ...).
pub fn put_fixed_array<T: FixedWidth>(
    buf: &mut impl BufMut,
    elements: &[T],
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, elements.len(), compact)?;
    for element in elements {
        element.put(buf);
    }
    Ok(())
}

/// Writes a nullable array of fixed-width values.
pub fn put_nullable_fixed_array<T: FixedWidth>(
    buf: &mut impl BufMut,
    elements: Option<&[T]>,
    compact: bool,
) -> Result<(), EncodeError> {
    match elements {
        Some(elements) => put_fixed_array(buf, elements, compact),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Bytes an array of fixed-width values takes.
#[inline]
pub fn fixed_array_len<T: FixedWidth>(elements: &[T], compact: bool) -> usize {
    array_prefix_len(elements.len(), compact) + elements.len() * T::WIDTH
}

/// Bytes a nullable array of fixed-width values takes.
#[inline]
pub fn nullable_fixed_array_len<T: FixedWidth>(elements: Option<&[T]>, compact: bool) -> usize {
    elements.map_or(array_prefix_len(0, compact), |elements| {
        fixed_array_len(elements, compact)
    })
}

/// Writes an array of fixed-width values held as their wire bytes: the count, then the
/// bytes as they are (one copy, whether they came from a decode or from a `Vec`).
// Always inline: a call per array was half of Metadata's encode (three per partition), and
// the compiler stopped inlining it on its own once `PrimitiveArray` became an enum.
#[inline(always)]
pub fn put_primitive_array<T: FixedWidth>(
    buf: &mut impl BufMut,
    elements: &PrimitiveArray<T>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, elements.len(), compact)?;
    buf.put_slice(elements.as_be_bytes());
    Ok(())
}

/// Writes a nullable array of fixed-width values held as their wire bytes.
pub fn put_nullable_primitive_array<T: FixedWidth>(
    buf: &mut impl BufMut,
    elements: Option<&PrimitiveArray<T>>,
    compact: bool,
) -> Result<(), EncodeError> {
    match elements {
        Some(elements) => put_primitive_array(buf, elements, compact),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Bytes an array of fixed-width values held as their wire bytes takes.
#[inline]
pub fn primitive_array_len<T: FixedWidth>(elements: &PrimitiveArray<T>, compact: bool) -> usize {
    array_prefix_len(elements.len(), compact) + elements.as_be_bytes().len()
}

/// Bytes a nullable array of fixed-width values held as their wire bytes takes.
#[inline]
pub fn nullable_primitive_array_len<T: FixedWidth>(
    elements: Option<&PrimitiveArray<T>>,
    compact: bool,
) -> usize {
    elements.map_or(array_prefix_len(0, compact), |elements| {
        primitive_array_len(elements, compact)
    })
}

/// Writes an array of strings; the strings use the array's encoding.
pub fn put_string_array(
    buf: &mut impl BufMut,
    elements: &[Utf8Bytes],
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, elements.len(), compact)?;
    for (index, element) in elements.iter().enumerate() {
        put_string(buf, element, compact).map_err(|e| e.at_index(index))?;
    }
    Ok(())
}

/// Writes a nullable array of strings.
pub fn put_nullable_string_array(
    buf: &mut impl BufMut,
    elements: Option<&[Utf8Bytes]>,
    compact: bool,
) -> Result<(), EncodeError> {
    match elements {
        Some(elements) => put_string_array(buf, elements, compact),
        None => {
            put_null(buf, compact, false);
            Ok(())
        }
    }
}

/// Bytes an array of strings takes.
pub fn string_array_len(elements: &[Utf8Bytes], compact: bool) -> usize {
    let mut len = array_prefix_len(elements.len(), compact);
    for element in elements {
        len += string_len(element, compact);
    }
    len
}

/// Bytes a nullable array of strings takes.
pub fn nullable_string_array_len(elements: Option<&[Utf8Bytes]>, compact: bool) -> usize {
    elements.map_or(array_prefix_len(0, compact), |elements| {
        string_array_len(elements, compact)
    })
}

/// Writes a nullable struct: a marker byte (`-1` null, `1` present), then the struct's fields
/// with `write_fields`.
#[inline]
pub fn put_nullable_struct<B: BufMut, T>(
    buf: &mut B,
    value: Option<&T>,
    write_fields: impl FnOnce(&mut B, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match value {
        Some(value) => {
            buf.put_i8(1);
            write_fields(buf, value)
        }
        None => {
            buf.put_i8(-1);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Decoder;

    fn written(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut buf = Vec::new();
        f(&mut buf);
        buf
    }

    // Hand-derived vectors: each is worked out from the encoding rules, not produced by this code.
    #[test]
    fn unsigned_varint_vectors() {
        for (value, bytes) in [
            (0u32, &[0x00][..]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (16383, &[0xff, 0x7f]),
            (16384, &[0x80, 0x80, 0x01]),
            (u32::MAX, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            assert_eq!(written(|b| put_unsigned_varint(b, value)), bytes, "{value}");
            assert_eq!(unsigned_varint_len(value), bytes.len());
            let input = Bytes::copy_from_slice(bytes);
            assert_eq!(Decoder::new(&input).read_unsigned_varint().unwrap(), value);
        }
    }

    #[test]
    fn zigzag_vectors() {
        for (value, bytes) in [
            (0i32, &[0x00][..]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (-2, &[0x03]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ] {
            assert_eq!(written(|b| put_varint(b, value)), bytes, "{value}");
            assert_eq!(varint_len(value), bytes.len());
            let input = Bytes::copy_from_slice(bytes);
            assert_eq!(Decoder::new(&input).read_varint().unwrap(), value);
        }
        for (value, bytes) in [
            (0i64, &[0x00][..]),
            (-1, &[0x01]),
            (1_700_000_000_000, &[0x80, 0xa0, 0xab, 0xfe, 0xf9, 0x62]),
            (
                i64::MIN,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            assert_eq!(written(|b| put_varlong(b, value)), bytes, "{value}");
            assert_eq!(varlong_len(value), bytes.len());
            let input = Bytes::copy_from_slice(bytes);
            assert_eq!(Decoder::new(&input).read_varlong().unwrap(), value);
        }
    }

    // The one-byte fast path and the varint path meet at 126/127.
    #[test]
    fn compact_lengths_either_side_of_one_byte() {
        for len in [0usize, 1, 125, 126, 127, 128, 16382, 16383, 16384] {
            let prefix = written(|b| put_length(b, len, true).unwrap());
            let varint = written(|b| put_unsigned_varint(b, len as u32 + 1));
            assert_eq!(prefix, varint, "{len}");
            assert_eq!(prefix.len(), array_prefix_len(len, true), "{len}");
        }
        assert!(put_length(&mut Vec::new(), u32::MAX as usize, true).is_err());
    }

    #[test]
    fn string_and_bytes_vectors() {
        assert_eq!(
            written(|b| put_string(b, "ab", false).unwrap()),
            [0, 2, b'a', b'b']
        );
        assert_eq!(
            written(|b| put_string(b, "ab", true).unwrap()),
            [3, b'a', b'b']
        );
        assert_eq!(
            written(|b| put_nullable_string(b, None, false).unwrap()),
            [0xff, 0xff]
        );
        assert_eq!(
            written(|b| put_nullable_string(b, None, true).unwrap()),
            [0]
        );
        assert_eq!(
            written(|b| put_bytes(b, &[9], false).unwrap()),
            [0, 0, 0, 1, 9]
        );
        assert_eq!(written(|b| put_bytes(b, &[9], true).unwrap()), [2, 9]);
        assert_eq!(
            written(|b| put_nullable_bytes(b, None, false).unwrap()),
            [0xff, 0xff, 0xff, 0xff]
        );
        let long = "x".repeat(MAX_STRING_LEN + 1);
        assert!(put_string(&mut Vec::new(), &long, true).is_err());
        assert_eq!(string_len("ab", true), 3);
        assert_eq!(nullable_bytes_len(None, false), 4);
    }
}
