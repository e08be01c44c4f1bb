//! Kafka's JSON form: the helpers generated `to_json`/`from_json` code calls.
//!
//! The form is the one Apache Kafka's generated `*JsonConverter` classes write: keys are the
//! schema field names with the first letter lower-cased, in schema order; every integer
//! (including `int64` and `uint32`) is a JSON number; `bytes` are standard base64 with padding;
//! a `uuid` is Kafka's 22-character URL-safe base64; tagged fields appear only when they differ
//! from their default; unknown tagged fields are not shown.
//!
//! **One deliberate difference:** Kafka writes a `records` field as `""`, losing its content.
//! This crate writes `records` as standard base64 of the raw record bytes, so JSON → message →
//! bytes is lossless (the command-line tool depends on it).

use crate::error::{EncodeError, EncodeErrorKind, JsonError, JsonErrorKind};
use crate::types::{Utf8Bytes, Uuid};
use bytes::Bytes;
use serde_json::{Map, Value};

/// The two base64 alphabets Kafka uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base64 {
    /// `+/` with `=` padding: `bytes` and `records` values.
    Standard,
    /// `-_` without padding: UUIDs.
    UrlNoPad,
}

impl Base64 {
    fn alphabet(self) -> &'static [u8; 64] {
        match self {
            Base64::Standard => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            Base64::UrlNoPad => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        }
    }
}

/// Encodes `data` as base64.
pub fn base64_encode(data: &[u8], variant: Base64) -> String {
    let alphabet = variant.alphabet();
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let symbols = chunk.len() + 1;
        for i in 0..4 {
            if i < symbols {
                out.push(alphabet[((n >> (18 - 6 * i)) & 0x3f) as usize] as char);
            } else if variant == Base64::Standard {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes base64 in the given alphabet; padding is optional. `None` if malformed.
pub fn base64_decode(text: &str, variant: Base64) -> Option<Vec<u8>> {
    let alphabet = variant.alphabet();
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 || (text.len() != trimmed.len() && text.len() % 4 != 0) {
        return None;
    }
    if trimmed.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in trimmed.as_bytes() {
        let value = alphabet.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero, or two texts would decode to the same bytes.
    if acc != 0 {
        return None;
    }
    Some(out)
}

/// The JSON for a `uuid`.
pub fn uuid_to_json(value: &Uuid) -> Value {
    Value::String(value.to_string())
}

/// The JSON for `bytes` and `records`.
pub fn bytes_to_json(value: &[u8]) -> Value {
    Value::String(base64_encode(value, Base64::Standard))
}

/// The JSON for a string.
pub fn string_to_json(value: &str) -> Value {
    Value::String(value.to_owned())
}

/// The JSON for a `float64`; JSON has no NaN or infinity.
pub fn f64_to_json(value: f64) -> Result<Value, EncodeError> {
    serde_json::Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| EncodeError::new(EncodeErrorKind::NonFiniteFloat(value)))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cold]
fn wrong_type(expected: &'static str, found: &Value) -> JsonError {
    JsonError::new(JsonErrorKind::WrongType {
        expected,
        found: type_name(found),
    })
}

/// The object of a struct.
pub fn expect_object(value: &Value) -> Result<&Map<String, Value>, JsonError> {
    value
        .as_object()
        .ok_or_else(|| wrong_type("an object", value))
}

/// A JSON boolean.
pub fn read_bool(value: &Value) -> Result<bool, JsonError> {
    value
        .as_bool()
        .ok_or_else(|| wrong_type("a boolean", value))
}

fn read_integer(value: &Value, ty: &'static str, min: i128, max: i128) -> Result<i128, JsonError> {
    let Value::Number(number) = value else {
        return Err(wrong_type("an integer", value));
    };
    let parsed = number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from));
    match parsed {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(JsonError::new(JsonErrorKind::OutOfRange {
            value: number.to_string(),
            ty,
        })),
    }
}

macro_rules! integer_readers {
    ($($name:ident: $ty:ty, $label:literal;)*) => {$(
        #[doc = concat!("A JSON integer in the range of `", $label, "`.")]
        pub fn $name(value: &Value) -> Result<$ty, JsonError> {
            read_integer(value, $label, i128::from(<$ty>::MIN), i128::from(<$ty>::MAX))
                .map(|n| n as $ty)
        }
    )*};
}

integer_readers! {
    read_i8: i8, "int8";
    read_i16: i16, "int16";
    read_u16: u16, "uint16";
    read_i32: i32, "int32";
    read_u32: u32, "uint32";
    read_i64: i64, "int64";
}

/// A JSON number as `float64`.
pub fn read_f64(value: &Value) -> Result<f64, JsonError> {
    value.as_f64().ok_or_else(|| wrong_type("a number", value))
}

/// A UUID in Kafka's text form.
pub fn read_uuid(value: &Value) -> Result<Uuid, JsonError> {
    let text = value
        .as_str()
        .ok_or_else(|| wrong_type("a UUID string", value))?;
    text.parse()
        .map_err(|_| JsonError::new(JsonErrorKind::InvalidUuid(text.to_owned())))
}

/// A string; Kafka refuses more than 32767 UTF-8 bytes.
pub fn read_string(value: &Value) -> Result<Utf8Bytes, JsonError> {
    let text = value
        .as_str()
        .ok_or_else(|| wrong_type("a string", value))?;
    if text.len() > crate::wire::MAX_STRING_LEN {
        return Err(JsonError::new(JsonErrorKind::StringTooLong(text.len())));
    }
    Ok(Utf8Bytes::from(text))
}

/// `bytes` or `records` as standard base64.
pub fn read_bytes(value: &Value) -> Result<Bytes, JsonError> {
    let text = value
        .as_str()
        .ok_or_else(|| wrong_type("a base64 string", value))?;
    base64_decode(text, Base64::Standard)
        .map(Bytes::from)
        .ok_or_else(|| JsonError::new(JsonErrorKind::InvalidBase64))
}

/// `None` for JSON null, else the value read by `read`.
pub fn read_nullable<T>(
    value: &Value,
    read: impl FnOnce(&Value) -> Result<T, JsonError>,
) -> Result<Option<T>, JsonError> {
    if value.is_null() {
        Ok(None)
    } else {
        read(value).map(Some)
    }
}

/// A JSON array whose elements `read` converts.
pub fn read_array<T>(
    value: &Value,
    mut read: impl FnMut(&Value) -> Result<T, JsonError>,
) -> Result<Vec<T>, JsonError> {
    let elements = value
        .as_array()
        .ok_or_else(|| wrong_type("an array", value))?;
    elements
        .iter()
        .enumerate()
        .map(|(index, element)| read(element).map_err(|e| e.at_index(index)))
        .collect()
}

/// A JSON array built from `write` applied to each element.
pub fn write_array<T>(
    elements: &[T],
    mut write: impl FnMut(&T) -> Result<Value, EncodeError>,
) -> Result<Value, EncodeError> {
    elements
        .iter()
        .enumerate()
        .map(|(index, element)| write(element).map_err(|e| e.at_index(index)))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_vectors() {
        // RFC 4648 §10 test vectors.
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes(), Base64::Standard), encoded);
            assert_eq!(
                base64_decode(encoded, Base64::Standard).unwrap(),
                plain.as_bytes()
            );
        }
        assert_eq!(base64_encode(&[0xfb, 0xff], Base64::UrlNoPad), "-_8");
        assert!(base64_decode("Zg=", Base64::Standard).is_none());
        assert!(base64_decode("Z", Base64::Standard).is_none());
        assert!(base64_decode("Zh==", Base64::Standard).is_none());
        assert!(base64_decode("Zm9v!", Base64::Standard).is_none());
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(read_i8(&Value::from(-128)).unwrap(), -128);
        assert!(read_i8(&Value::from(128)).is_err());
        assert!(read_u16(&Value::from(-1)).is_err());
        assert_eq!(read_u32(&Value::from(4_294_967_295u64)).unwrap(), u32::MAX);
        assert!(read_i32(&Value::from(1.5)).is_err());
        assert!(read_i64(&Value::from("1")).is_err());
        assert_eq!(read_i64(&Value::from(i64::MIN)).unwrap(), i64::MIN);
    }
}
