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
//! reader drops it silently, so a misspelled field would vanish) and a key given twice in one
//! object (a JSON object model keeps only the last one). [`JsonOptions::lenient`]
//! restores Kafka's tolerance. A key of a field that exists in other versions of the struct
//! follows Kafka's rules either way: refused where Kafka refuses it, dropped where Kafka drops
//! it. Error paths use the JSON's own keys (`topics[3].partitionIndex`), and an error quotes
//! at most [`MAX_QUOTED_CHARS`] characters of what the input held.
//!
//! **Straight from wire bytes.** [`transcode_request`], [`transcode_response`] and
//! [`transcode_message`] write a frame's or message's JSON without decoding it first: they
//! read the bytes with the decoder's own reads, in the same order, and write each value to a
//! [`JsonSink`] as soon as it is read. Strings, bytes and arrays of numbers are slices of the
//! input, and an array of structs is written element by element where it lies, so the memory
//! to show a frame is what the sink keeps (a [`JsonWriter`] keeps one `bool` per open
//! container) plus the values of the known tagged fields, which are decoded whole: the wire
//! puts them at the end of their struct, the JSON in schema order. A dense frame of millions
//! of tiny elements costs no more than an empty one. The text is exactly what decoding and
//! then writing the message's JSON gives, and bytes that decoding refuses are refused with the
//! same [`DecodeError`](crate::DecodeError) (kind, offset, path), a decode error anywhere
//! taking precedence over a JSON error ([`TranscodeError`]). One difference: the memory
//! budget ([`DecodeLimits::memory_budget`](crate::DecodeLimits::memory_budget)) charges what
//! a decode allocates for its arrays; a transcode allocates none, so only the tagged values it
//! decodes are charged, and bytes a decode refuses for the budget alone may transcode.

use crate::wire::{EncodeError, EncodeErrorKind, FixedWidth, PrimitiveArray, Utf8Bytes, Uuid};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use serde_json::{Map, Value};
use std::fmt;
use std::io;

mod error;
mod read;
pub mod redact;
mod transcode;
// Documented at the crate root, beside `DecodeError` and `EncodeError`.
#[doc(hidden)]
pub use error::{JsonError, JsonErrorKind};
// The readers generated `from_json` code calls: reachable for it (through `codegen`), not
// documented, so the module's page shows what a user calls. `parse` is the user's.
pub use read::parse;
#[doc(hidden)]
pub use read::*;
#[cfg(feature = "broker")]
pub use transcode::transcode_request;
#[cfg(feature = "client")]
pub use transcode::transcode_response;
#[doc(hidden)]
pub use transcode::JsonOut;
pub use transcode::{transcode_message, TranscodeError, Transcoded};

/// How Kafka's JSON form is read and written.
#[derive(Clone, Copy, Default)]
pub struct JsonOptions<'a> {
    /// Accept keys the struct has in no version (dropped) and keys given twice (the last
    /// wins), as Kafka's own reader does. Off by default: both are errors.
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

/// Kafka's JSON form as a frame's `from_json` reads it: a parsed [`Value`], or JSON text,
/// read token by token so that no `Value` tree of the body is built. Every `&Value`, `&str`,
/// `&String`, `&[u8]`, `&[u8; N]` and `&Vec<u8>` converts into one.
#[derive(Debug, Clone, Copy)]
pub enum JsonInput<'a> {
    /// A parsed value.
    Value(&'a Value),
    /// UTF-8 JSON text (refused keys given twice unless lenient; see [`JsonOptions`]).
    Text(&'a [u8]),
}

impl<'a> From<&'a Value> for JsonInput<'a> {
    fn from(value: &'a Value) -> Self {
        JsonInput::Value(value)
    }
}

impl<'a> From<&'a [u8]> for JsonInput<'a> {
    fn from(text: &'a [u8]) -> Self {
        JsonInput::Text(text)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for JsonInput<'a> {
    fn from(text: &'a [u8; N]) -> Self {
        JsonInput::Text(text)
    }
}

impl<'a> From<&'a Vec<u8>> for JsonInput<'a> {
    fn from(text: &'a Vec<u8>) -> Self {
        JsonInput::Text(text)
    }
}

impl<'a> From<&'a str> for JsonInput<'a> {
    fn from(text: &'a str) -> Self {
        JsonInput::Text(text.as_bytes())
    }
}

impl<'a> From<&'a String> for JsonInput<'a> {
    fn from(text: &'a String) -> Self {
        JsonInput::Text(text.as_bytes())
    }
}

/// Another JSON form for `records` fields (the core does not know record batches; the
/// records layer or a tool implements this).
pub trait RecordsJson {
    /// Writes the JSON shown for a `records` field's bytes to `out` (one value), or says why
    /// they cannot be shown (the message is then not written whole).
    fn write_records_json(&self, records: &Bytes, out: &mut dyn JsonSink) -> Result<(), String>;

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

/// Writes a `records` field: base64, or what the [`RecordsJson`] hook shows.
#[doc(hidden)]
pub fn write_records(
    out: &mut dyn JsonSink,
    value: &Bytes,
    options: &JsonOptions<'_>,
) -> Result<(), EncodeError> {
    match options.records {
        None => {
            out.bytes(value);
            Ok(())
        }
        Some(hook) => hook
            .write_records_json(value, out)
            .map_err(|e| EncodeError::new(EncodeErrorKind::RecordsNotShown(e))),
    }
}

/// Writes a `float64`; JSON has no NaN or infinity.
#[doc(hidden)]
pub fn write_f64(out: &mut dyn JsonSink, value: f64) -> Result<(), EncodeError> {
    if !value.is_finite() {
        return Err(EncodeError::new(EncodeErrorKind::NonFiniteFloat(value)));
    }
    out.f64(value);
    Ok(())
}

/// Writes a `uuid` in Kafka's text form.
#[doc(hidden)]
pub fn write_uuid(out: &mut dyn JsonSink, value: &Uuid) {
    out.uuid(value);
}

/// Writes `bytes` as standard base64 with padding.
#[doc(hidden)]
pub fn write_bytes(out: &mut dyn JsonSink, value: &Bytes) {
    out.bytes(value);
}

/// Writes a string.
#[doc(hidden)]
pub fn write_string(out: &mut dyn JsonSink, value: &Utf8Bytes) {
    out.str(value.as_str());
}

/// Writes a boolean.
#[doc(hidden)]
pub fn write_bool(out: &mut dyn JsonSink, value: &bool) {
    out.bool(*value);
}

macro_rules! integer_writers {
    ($($name:ident: $ty:ty => $method:ident, $wide:ty;)*) => {$(
        #[doc = concat!("Writes an `", stringify!($ty), "` as a JSON number.")]
        #[doc(hidden)]
        pub fn $name(out: &mut dyn JsonSink, value: &$ty) {
            out.$method(<$wide>::from(*value));
        }
    )*};
}

integer_writers! {
    write_i8: i8 => i64, i64;
    write_i16: i16 => i64, i64;
    write_u16: u16 => u64, u64;
    write_i32: i32 => i64, i64;
    write_u32: u32 => u64, u64;
    write_i64: i64 => i64, i64;
}

/// Writes a JSON array of `values`, each written by `write` (`[]int32`, `[]string`, ...).
#[doc(hidden)]
pub fn write_array<T>(out: &mut dyn JsonSink, values: &[T], write: fn(&mut dyn JsonSink, &T)) {
    out.begin_array();
    for value in values {
        write(out, value);
    }
    out.end_array();
}

/// Writes a JSON array of fixed-width values held as their wire bytes (`[]int32`, ...).
#[doc(hidden)]
pub fn write_primitive_array<T: FixedWidth>(
    out: &mut dyn JsonSink,
    values: &PrimitiveArray<T>,
    write: fn(&mut dyn JsonSink, &T),
) {
    out.begin_array();
    for value in values {
        write(out, &value);
    }
    out.end_array();
}

/// Writes a JSON array of `float64`s.
#[doc(hidden)]
pub fn write_f64_array(
    out: &mut dyn JsonSink,
    values: &PrimitiveArray<f64>,
) -> Result<(), EncodeError> {
    out.begin_array();
    for (index, value) in values.iter().enumerate() {
        write_f64(out, value).map_err(|e| e.at_index(index))?;
    }
    out.end_array();
    Ok(())
}

/// The JSON for `bytes` and `records`: standard base64 with padding.
pub fn bytes_to_json(value: &[u8]) -> Value {
    Value::String(STANDARD.encode(value))
}

/// Where generated code writes a struct's JSON, one token at a time: text on an
/// [`io::Write`] ([`JsonWriter`]) or a [`Value`] tree ([`ValueSink`]), from the same generated
/// code, so the two forms cannot differ.
///
/// Not generic on purpose: each struct's writer is compiled once, not once per sink. The
/// methods cannot fail; a sink that can (an [`io::Write`]) keeps its first error for its owner
/// to collect. Callers write well-formed JSON: `key` only directly inside an object, then one
/// value; a float only when finite ([`write_f64`] checks).
pub trait JsonSink {
    /// `{`.
    fn begin_object(&mut self);
    /// The key of the next value of the current object.
    fn key(&mut self, key: &str);
    /// `}`.
    fn end_object(&mut self);
    /// `[`.
    fn begin_array(&mut self);
    /// `]`.
    fn end_array(&mut self);
    /// `null`.
    fn null(&mut self);
    /// `true` or `false`.
    fn bool(&mut self, value: bool);
    /// A signed integer.
    fn i64(&mut self, value: i64);
    /// An unsigned integer.
    fn u64(&mut self, value: u64);
    /// A finite float.
    fn f64(&mut self, value: f64);
    /// A string.
    fn str(&mut self, value: &str);
    /// Bytes as standard base64 with padding.
    fn bytes(&mut self, value: &[u8]) {
        self.str(&STANDARD.encode(value));
    }
    /// A UUID in Kafka's text form.
    fn uuid(&mut self, value: &Uuid) {
        self.str(&value.to_string());
    }
    /// A whole [`Value`] (what a [`RecordsJson`] hook built, for example).
    fn value(&mut self, value: &Value) {
        write_value(self, value);
    }
}

/// Writes `value` to `out` token by token: what [`JsonSink::value`] does unless a sink knows
/// better (a sink that wraps another calls it for the values it passes through as they are).
pub fn write_value(out: &mut (impl JsonSink + ?Sized), value: &Value) {
    match value {
        Value::Null => out.null(),
        Value::Bool(b) => out.bool(*b),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                out.u64(n);
            } else if let Some(n) = n.as_i64() {
                out.i64(n);
            } else if let Some(n) = n.as_f64() {
                out.f64(n);
            }
        }
        Value::String(s) => out.str(s),
        Value::Array(values) => {
            out.begin_array();
            for value in values {
                out.value(value);
            }
            out.end_array();
        }
        Value::Object(object) => {
            out.begin_object();
            for (key, value) in object {
                out.key(key);
                out.value(value);
            }
            out.end_object();
        }
    }
}

/// A [`JsonSink`] that builds a [`Value`].
#[derive(Debug, Default)]
pub struct ValueSink {
    /// The objects and arrays begun and not yet ended, innermost last.
    open: Vec<Open>,
    /// The finished top-level value.
    done: Option<Value>,
}

#[derive(Debug)]
enum Open {
    Object(Map<String, Value>, Option<String>),
    Array(Vec<Value>),
}

impl ValueSink {
    /// The [`Value`] that `write` writes.
    pub fn collect<E>(write: impl FnOnce(&mut dyn JsonSink) -> Result<(), E>) -> Result<Value, E> {
        let mut sink = ValueSink::new();
        write(&mut sink)?;
        Ok(sink.finish())
    }

    /// An empty sink.
    pub fn new() -> Self {
        ValueSink::default()
    }

    /// The value written; `Value::Null` if none was.
    pub fn finish(self) -> Value {
        debug_assert!(self.open.is_empty(), "a container was not ended");
        self.done.unwrap_or(Value::Null)
    }

    fn push(&mut self, value: Value) {
        match self.open.last_mut() {
            None => self.done = Some(value),
            Some(Open::Array(values)) => values.push(value),
            Some(Open::Object(object, key)) => {
                let key = key.take().unwrap_or_default();
                object.insert(key, value);
            }
        }
    }
}

impl JsonSink for ValueSink {
    fn begin_object(&mut self) {
        self.open.push(Open::Object(Map::new(), None));
    }
    fn key(&mut self, key: &str) {
        if let Some(Open::Object(_, pending)) = self.open.last_mut() {
            *pending = Some(key.to_owned());
        }
    }
    fn end_object(&mut self) {
        if let Some(Open::Object(object, _)) = self.open.pop() {
            self.push(Value::Object(object));
        }
    }
    fn begin_array(&mut self) {
        self.open.push(Open::Array(Vec::new()));
    }
    fn end_array(&mut self) {
        if let Some(Open::Array(values)) = self.open.pop() {
            self.push(Value::Array(values));
        }
    }
    fn null(&mut self) {
        self.push(Value::Null);
    }
    fn bool(&mut self, value: bool) {
        self.push(Value::Bool(value));
    }
    fn i64(&mut self, value: i64) {
        self.push(value.into());
    }
    fn u64(&mut self, value: u64) {
        self.push(value.into());
    }
    fn f64(&mut self, value: f64) {
        self.push(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number));
    }
    fn str(&mut self, value: &str) {
        self.push(Value::String(value.to_owned()));
    }
    fn value(&mut self, value: &Value) {
        self.push(value.clone());
    }
}

/// A [`JsonSink`] that writes JSON text, compact or pretty-printed exactly as
/// `serde_json::to_writer_pretty` prints the same [`Value`] (two-space indent).
///
/// Writes go straight to `out` (give it a buffered writer); the first I/O error stops the
/// writing and [`JsonWriter::finish`] returns it.
pub struct JsonWriter<'w> {
    out: &'w mut dyn io::Write,
    pretty: bool,
    /// Whether each open container is an array (else an object), innermost last.
    open: Vec<bool>,
    /// The innermost open container has no value yet.
    empty: bool,
    /// A key was written; its value comes next.
    after_key: bool,
    error: Option<io::Error>,
}

impl fmt::Debug for JsonWriter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonWriter")
            .field("pretty", &self.pretty)
            .field("depth", &self.open.len())
            .finish()
    }
}

impl<'w> JsonWriter<'w> {
    /// Compact JSON text on `out`.
    pub fn compact(out: &'w mut dyn io::Write) -> Self {
        Self::new(out, false)
    }

    /// Pretty-printed JSON text on `out`.
    pub fn pretty(out: &'w mut dyn io::Write) -> Self {
        Self::new(out, true)
    }

    fn new(out: &'w mut dyn io::Write, pretty: bool) -> Self {
        JsonWriter {
            out,
            pretty,
            open: Vec::new(),
            empty: true,
            after_key: false,
            error: None,
        }
    }

    /// The first I/O error, if writing failed.
    pub fn finish(self) -> io::Result<()> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn write(&mut self, text: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(text) {
                self.error = Some(e);
            }
        }
    }

    fn serialize<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        if self.error.is_none() {
            if let Err(e) = serde_json::to_writer(&mut self.out, value) {
                self.error = Some(e.into());
            }
        }
    }

    fn newline_and_indent(&mut self) {
        const SPACES: &[u8] = &[b' '; 64];
        self.write(b"\n");
        let mut left = self.open.len() * 2;
        while left > 0 {
            let n = left.min(SPACES.len());
            self.write(&SPACES[..n]);
            left -= n;
        }
    }

    /// What goes before a value: nothing after a key or at the top level, a separator and
    /// (pretty) a new line in an array.
    fn before_value(&mut self) {
        if std::mem::take(&mut self.after_key) {
            return;
        }
        if self.open.last() == Some(&true) {
            if !std::mem::replace(&mut self.empty, false) {
                self.write(b",");
            }
            if self.pretty {
                self.newline_and_indent();
            }
        }
    }

    fn begin(&mut self, array: bool, open: &[u8]) {
        self.before_value();
        self.write(open);
        self.open.push(array);
        self.empty = true;
    }

    fn end(&mut self, close: &[u8]) {
        let had_values = !self.empty;
        self.open.pop();
        if self.pretty && had_values {
            self.newline_and_indent();
        }
        self.write(close);
        // The container just closed is a value of its parent.
        self.empty = false;
    }
}

impl JsonSink for JsonWriter<'_> {
    fn begin_object(&mut self) {
        self.begin(false, b"{");
    }
    fn key(&mut self, key: &str) {
        if !std::mem::replace(&mut self.empty, false) {
            self.write(b",");
        }
        if self.pretty {
            self.newline_and_indent();
        }
        self.serialize(key);
        self.write(if self.pretty { b": " } else { b":" });
        self.after_key = true;
    }
    fn end_object(&mut self) {
        self.end(b"}");
    }
    fn begin_array(&mut self) {
        self.begin(true, b"[");
    }
    fn end_array(&mut self) {
        self.end(b"]");
    }
    fn null(&mut self) {
        self.before_value();
        self.write(b"null");
    }
    fn bool(&mut self, value: bool) {
        self.before_value();
        self.write(if value { b"true" } else { b"false" });
    }
    fn i64(&mut self, value: i64) {
        self.before_value();
        self.serialize(&value);
    }
    fn u64(&mut self, value: u64) {
        self.before_value();
        self.serialize(&value);
    }
    fn f64(&mut self, value: f64) {
        self.before_value();
        self.serialize(&value);
    }
    fn str(&mut self, value: &str) {
        self.before_value();
        self.serialize(value);
    }
    fn bytes(&mut self, value: &[u8]) {
        // Base64 in chunks of whole 3-byte groups, so no padding until the last one, and no
        // copy of the whole field.
        const CHUNK: usize = 3 * 1024;
        self.before_value();
        self.write(b"\"");
        let mut text = [0u8; CHUNK / 3 * 4];
        for chunk in value.chunks(CHUNK) {
            let n = STANDARD
                .encode_slice(chunk, &mut text)
                .expect("4 output bytes per 3 input bytes fit");
            self.write(&text[..n]);
        }
        self.write(b"\"");
    }
    fn uuid(&mut self, value: &Uuid) {
        self.before_value();
        self.write(b"\"");
        self.write(value.to_string().as_bytes());
        self.write(b"\"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelled_key_is_answered_with_the_closest_field() {
        let keys = &["topics", "topicName", "partitions", "partitionIndex"];
        assert_eq!(did_you_mean("topcs", keys), Some("topics"));
        assert_eq!(did_you_mean("partitionIdx", keys), Some("partitionIndex"));
        // Letter case is no edit: Kafka's schema names for its JSON keys.
        assert_eq!(did_you_mean("TopicName", keys), Some("topicName"));
        // Nothing close: no suggestion, rather than a wild one.
        assert_eq!(did_you_mean("replicas", keys), None);
        assert_eq!(did_you_mean("", keys), None);
        assert_eq!(did_you_mean("topcs", &[]), None);
        // A short key allows one edit only.
        assert_eq!(did_you_mean("ab", &["abc"]), Some("abc"));
        assert_eq!(did_you_mean("ab", &["abcd"]), None);
        // Equally close: the first, in schema order.
        assert_eq!(did_you_mean("ab", &["ax", "xb"]), Some("ax"));
    }

    #[cfg(feature = "describe-quorum")]
    #[test]
    fn an_unknown_key_names_its_path_and_the_key_meant() {
        use crate::messages::DescribeQuorumRequest;
        use crate::Message;
        let typo = serde_json::json!({"topcs": []});
        let error = DescribeQuorumRequest::from_json(&typo, 0).expect_err("refused");
        assert_eq!(error.suggestion(), Some("topics"));
        assert_eq!(
            error.to_string(),
            "unknown field \"topcs\" in DescribeQuorumRequest v0; did you mean \"topics\"?"
        );
        let nested = serde_json::json!({"topics": [{"topicName": "t", "partitons": []}]});
        let error = DescribeQuorumRequest::from_json(&nested, 0).expect_err("refused");
        assert_eq!(
            error.to_string(),
            "unknown field \"partitons\" in DescribeQuorumRequest v0 at topics[0]; \
             did you mean \"partitions\"?"
        );
        // Nothing close: the message as before.
        let far = serde_json::json!({"voters": []});
        let error = DescribeQuorumRequest::from_json(&far, 0).expect_err("refused");
        assert_eq!(error.suggestion(), None);
        assert_eq!(
            error.to_string(),
            "unknown field \"voters\" in DescribeQuorumRequest v0"
        );
    }

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
