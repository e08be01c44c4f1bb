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
//! bytes is lossless (the command-line tool depends on it). A [`RecordsJson`] hook in
//! [`JsonOptions`] may show `records` fields in another form (the command-line tool's
//! `--records` shows the batches they hold); this module does not know the records layer.
//!
//! **Strict by default.** Reading refuses a key that no version of the struct has (Kafka's
//! reader drops it silently, so a misspelled field would vanish) and, in [`parse`], a key given
//! twice in one object (a JSON object model keeps only the last one). [`JsonOptions::lenient`]
//! restores Kafka's tolerance. A key of a field that exists in other versions of the struct
//! follows Kafka's rules either way: refused where Kafka refuses it, dropped where Kafka drops
//! it. Error paths use the JSON's own keys (`topics[3].partitionIndex`), and an error quotes
//! at most [`MAX_QUOTED_CHARS`] characters of what the input held.

use crate::error::{JsonError, JsonErrorKind};
use crate::wire::{EncodeError, EncodeErrorKind, Utf8Bytes, Uuid};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::fmt;

/// How Kafka's JSON form is read and written.
#[derive(Clone, Copy, Default)]
pub struct JsonOptions<'a> {
    /// Accept keys the struct has in no version (dropped) and, in [`parse`], keys given twice
    /// (the last wins), as Kafka's own reader does. Off by default: both are errors.
    pub lenient: bool,
    /// Shows and reads `records` fields; without it they are standard base64.
    pub records: Option<&'a dyn RecordsJson>,
}

impl fmt::Debug for JsonOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonOptions")
            .field("lenient", &self.lenient)
            .field("records", &self.records.map(|_| "RecordsJson"))
            .finish()
    }
}

impl JsonOptions<'_> {
    /// Kafka's reader's tolerance: unknown keys dropped, a repeated key's last value kept.
    pub fn lenient() -> Self {
        JsonOptions {
            lenient: true,
            records: None,
        }
    }
}

/// Another JSON form for `records` fields (the core does not know record batches; the
/// records layer or a tool implements this).
pub trait RecordsJson {
    /// The JSON shown for a `records` field's bytes, or why they cannot be shown (the message
    /// is then not written).
    fn records_to_json(&self, records: &Bytes) -> Result<Value, String>;

    /// The bytes of a `records` field from a JSON value that is not a string (a string is
    /// always base64, whatever the hook).
    fn records_from_json(&self, value: &Value) -> Result<Bytes, String>;
}

/// The most characters of a value from the input that an error message quotes.
pub const MAX_QUOTED_CHARS: usize = 64;

/// `text` for an error message: whole if short, else its first [`MAX_QUOTED_CHARS`]
/// characters, an ellipsis and its length, so that a huge value is never echoed.
pub fn quote(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}... ({} bytes)", &text[..end], text.len()),
    }
}

/// JSON text as a [`Value`]. Strict (the default) refuses a key given twice in one object,
/// naming it and its path; [`JsonOptions::lenient`] keeps the last value as serde_json does.
pub fn parse(text: &[u8], options: &JsonOptions<'_>) -> Result<Value, JsonError> {
    let syntax = |e: serde_json::Error| JsonError::new(JsonErrorKind::Syntax(e.to_string()));
    if options.lenient {
        return serde_json::from_slice(text).map_err(syntax);
    }
    use serde::de::DeserializeSeed;
    let mut path = String::new();
    let mut duplicate = None;
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let parsed = StrictValue {
        path: &mut path,
        duplicate: &mut duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    match (parsed, duplicate) {
        (_, Some(kind)) => Err(JsonError::new(kind)),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(syntax(e)),
    }
}

/// Reads one value, refusing an object key given twice; `path` is where the value is
/// (`header`, `topics[3]`), `duplicate` receives the error that stopped the read.
struct StrictValue<'p> {
    path: &'p mut String,
    duplicate: &'p mut Option<JsonErrorKind>,
}

impl<'de> serde::de::DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        let base = self.path.len();
        loop {
            use std::fmt::Write as _;
            let _ = write!(self.path, "[{}]", values.len());
            let element = seq.next_element_seed(StrictValue {
                path: &mut *self.path,
                duplicate: &mut *self.duplicate,
            })?;
            self.path.truncate(base);
            match element {
                Some(element) => values.push(element),
                None => return Ok(Value::Array(values)),
            }
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        let base = self.path.len();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let at = if self.path.is_empty() {
                    "the top level".to_owned()
                } else {
                    self.path.clone()
                };
                *self.duplicate = Some(JsonErrorKind::DuplicateKey {
                    key: quote(&key),
                    path: at,
                });
                return Err(serde::de::Error::custom("duplicate key"));
            }
            if base > 0 {
                self.path.push('.');
            }
            if key.len() <= MAX_QUOTED_CHARS {
                self.path.push_str(&key);
            } else {
                self.path.push_str(&quote(&key));
            }
            let value = map.next_value_seed(StrictValue {
                path: &mut *self.path,
                duplicate: &mut *self.duplicate,
            })?;
            self.path.truncate(base);
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Refuses (unless `options` are lenient) a key of `object` that is not in `known`: the keys
/// of every field the struct has in any version.
pub fn check_keys(
    object: &Map<String, Value>,
    known: &[&str],
    options: &JsonOptions<'_>,
) -> Result<(), JsonError> {
    if options.lenient {
        return Ok(());
    }
    match object.keys().find(|key| !known.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(unknown_key(key)),
    }
}

#[cold]
fn unknown_key(key: &str) -> JsonError {
    JsonError::new(JsonErrorKind::UnknownField(quote(key)))
}

/// A `records` field: base64 text, or, with a [`RecordsJson`] hook, any other form it reads.
pub fn read_records(value: &Value, options: &JsonOptions<'_>) -> Result<Bytes, JsonError> {
    match (value, options.records) {
        (Value::String(_), _) | (_, None) => read_bytes(value),
        (_, Some(hook)) => hook
            .records_from_json(value)
            .map_err(|e| JsonError::new(JsonErrorKind::Records(e))),
    }
}

/// A nullable `records` field.
pub fn read_nullable_records(
    value: &Value,
    options: &JsonOptions<'_>,
) -> Result<Option<Bytes>, JsonError> {
    if value.is_null() {
        Ok(None)
    } else {
        read_records(value, options).map(Some)
    }
}

/// The JSON of a `records` field: base64, or what the [`RecordsJson`] hook shows.
pub fn records_to_json(value: &Bytes, options: &JsonOptions<'_>) -> Result<Value, EncodeError> {
    match options.records {
        None => Ok(bytes_to_json(value)),
        Some(hook) => hook
            .records_to_json(value)
            .map_err(|e| EncodeError::new(EncodeErrorKind::RecordsNotShown(e))),
    }
}

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
        .map_err(|_| JsonError::new(JsonErrorKind::InvalidUuid(quote(text))))
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
