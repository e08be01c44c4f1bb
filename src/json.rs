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

use crate::error::{JsonError, JsonErrorKind};
use crate::wire::{EncodeError, EncodeErrorKind, Utf8Bytes, Uuid};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Map, Value};

/// The JSON for a `uuid`.
pub fn uuid_to_json(value: &Uuid) -> Value {
    Value::String(value.to_string())
}

/// The JSON for `bytes` and `records`: standard base64 with padding.
pub fn bytes_to_json(value: &[u8]) -> Value {
    Value::String(STANDARD.encode(value))
}

/// The JSON for a string.
pub fn string_to_json(value: &Utf8Bytes) -> Value {
    Value::String(value.as_str().to_owned())
}

/// The JSON for an integer or a boolean.
pub fn number_to_json<T: Copy + Into<Value>>(value: &T) -> Value {
    (*value).into()
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

/// The elements of an array.
pub fn expect_array(value: &Value) -> Result<&[Value], JsonError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| wrong_type("an array", value))
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
    // Padding is optional, as in Kafka's reader (Java's basic decoder), but if present it
    // must be complete; leftover bits must be zero, so that one value has one text.
    let engine = if text.contains('=') {
        &STANDARD
    } else {
        &STANDARD_NO_PAD
    };
    engine
        .decode(text)
        .map(Bytes::from)
        .map_err(|_| JsonError::new(JsonErrorKind::InvalidBase64))
}

/// `None` for JSON null, else the value `read` reads.
pub fn read_nullable<T>(
    value: &Value,
    read: fn(&Value) -> Result<T, JsonError>,
) -> Result<Option<T>, JsonError> {
    if value.is_null() {
        Ok(None)
    } else {
        read(value).map(Some)
    }
}

/// A JSON array of values that `read` reads (`[]int32`, `[]string`, ...).
pub fn read_array<T>(
    value: &Value,
    read: fn(&Value) -> Result<T, JsonError>,
) -> Result<Vec<T>, JsonError> {
    let elements = expect_array(value)?;
    let mut values = Vec::with_capacity(elements.len());
    for (index, element) in elements.iter().enumerate() {
        values.push(read(element).map_err(|e| e.at_index(index))?);
    }
    Ok(values)
}

/// A nullable JSON array of values that `read` reads.
pub fn read_nullable_array<T>(
    value: &Value,
    read: fn(&Value) -> Result<T, JsonError>,
) -> Result<Option<Vec<T>>, JsonError> {
    if value.is_null() {
        Ok(None)
    } else {
        read_array(value, read).map(Some)
    }
}

/// A JSON array of `values`, each written by `write`.
pub fn array_to_json<T>(values: &[T], write: fn(&T) -> Value) -> Value {
    Value::Array(values.iter().map(write).collect())
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
            assert_eq!(bytes_to_json(plain.as_bytes()), Value::from(encoded));
            assert_eq!(read_bytes(&Value::from(encoded)).unwrap(), plain.as_bytes());
        }
        let read = |text: &str| read_bytes(&Value::from(text));
        assert_eq!(read("Zg").unwrap(), "f".as_bytes(), "padding is optional");
        assert!(read("Zg=").is_err(), "but not partial");
        assert!(read("Z").is_err());
        assert!(read("Zh==").is_err(), "leftover bits");
        assert!(read("Zm9v!").is_err());
        assert!(read("-_8").is_err(), "URL-safe alphabet is for UUIDs only");
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
