//! Reading Kafka's JSON form token by token, from text or from a [`Value`].
//!
//! Generated readers see the input through [`JsonSource`]: one JSON value, handed over as a
//! [`Json`] token; an array or object token lends its elements or entries one at a time. The
//! trait is object-safe, so each struct's reader is compiled once; the serde adapter behind it
//! is compiled once per input kind (text, `&Value`). Reading text therefore builds the message
//! straight from the tokens, with no [`Value`] tree, and reading a [`Value`] is the same code.
//!
//! Errors are built innermost first, as everywhere in the crate: a reader returns a
//! [`JsonError`] and each enclosing field or index adds itself on the way out. serde only
//! carries a placeholder error through its own frames while the real one waits in a slot.

use super::{quote, JsonOptions, MAX_QUOTED_CHARS};
use crate::json::{JsonError, JsonErrorKind};
use crate::wire::{Utf8Bytes, Uuid};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use bytes::Bytes;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// One JSON token as a reader sees it. An array or object lends access to its contents, which
/// must be read to the end before the token's reader returns.
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A negative integer.
    I64(i64),
    /// A non-negative integer.
    U64(u64),
    /// A number with a fraction or exponent, or an integer beyond 64 bits.
    F64(f64),
    /// A string.
    Str(&'a str),
    /// An array: its elements.
    Array(&'a mut dyn JsonElements),
    /// An object: its entries, in the input's order.
    Object(&'a mut dyn JsonEntries),
}

/// One JSON value to read.
pub trait JsonSource {
    /// Reads the value and hands it to `visit` (once). An error from `visit` is returned as is;
    /// text that is not JSON is a [`JsonErrorKind::Syntax`] error.
    fn read(
        &mut self,
        visit: &mut dyn FnMut(Json<'_>) -> Result<(), JsonError>,
    ) -> Result<(), JsonError>;
}

/// The elements of an array being read.
pub trait JsonElements {
    /// Hands the next element to `read`; `false` once there are no more.
    fn next(
        &mut self,
        read: &mut dyn FnMut(&mut dyn JsonSource) -> Result<(), JsonError>,
    ) -> Result<bool, JsonError>;
}

/// The entries of an object being read.
pub trait JsonEntries {
    /// Hands the next key and its value to `read`; `false` once there are no more.
    fn next(
        &mut self,
        read: &mut dyn FnMut(&str, &mut dyn JsonSource) -> Result<(), JsonError>,
    ) -> Result<bool, JsonError>;
}

#[cold]
fn syntax(error: impl fmt::Display) -> JsonError {
    JsonError::new(JsonErrorKind::Syntax(error.to_string()))
}

/// A [`JsonSource`] over a serde deserializer (`serde_json` text, or a `&Value`).
struct Source<D>(Option<D>);

impl<'de, D: Deserializer<'de>> JsonSource for Source<D> {
    fn read(
        &mut self,
        visit: &mut dyn FnMut(Json<'_>) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        let Some(deserializer) = self.0.take() else {
            return Err(syntax("a value read twice"));
        };
        let mut failed = None;
        let result = deserializer.deserialize_any(TokenVisitor {
            visit,
            failed: &mut failed,
        });
        result.map_err(|e| failed.unwrap_or_else(|| syntax(e)))
    }
}

/// Hands serde's callbacks to a reader as [`Json`] tokens; the reader's error waits in
/// `failed` while serde unwinds with a placeholder.
struct TokenVisitor<'v, 'f> {
    visit: &'v mut dyn FnMut(Json<'_>) -> Result<(), JsonError>,
    failed: &'f mut Option<JsonError>,
}

impl TokenVisitor<'_, '_> {
    fn give<E: de::Error>(self, json: Json<'_>) -> Result<(), E> {
        (self.visit)(json).map_err(|e| {
            *self.failed = Some(e);
            E::custom("stopped by the reader")
        })
    }
}

impl<'de> Visitor<'de> for TokenVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.give(Json::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.give(Json::I64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.give(Json::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.give(Json::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.give(Json::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.give(Json::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.give(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let mut elements = Elements(seq);
        self.give(Json::Array(&mut elements))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let mut entries = Entries(map);
        self.give(Json::Object(&mut entries))
    }
}

struct Elements<A>(A);

impl<'de, A: SeqAccess<'de>> JsonElements for Elements<A> {
    fn next(
        &mut self,
        read: &mut dyn FnMut(&mut dyn JsonSource) -> Result<(), JsonError>,
    ) -> Result<bool, JsonError> {
        let mut failed = None;
        let result = self.0.next_element_seed(SourceSeed {
            read,
            failed: &mut failed,
        });
        result
            .map(|element| element.is_some())
            .map_err(|e| failed.unwrap_or_else(|| syntax(e)))
    }
}

struct Entries<A>(A);

impl<'de, A: MapAccess<'de>> JsonEntries for Entries<A> {
    fn next(
        &mut self,
        read: &mut dyn FnMut(&str, &mut dyn JsonSource) -> Result<(), JsonError>,
    ) -> Result<bool, JsonError> {
        let key = match self.0.next_key_seed(KeySeed) {
            Ok(Some(key)) => key,
            Ok(None) => return Ok(false),
            Err(e) => return Err(syntax(e)),
        };
        let mut failed = None;
        let result = self.0.next_value_seed(SourceSeed {
            read: &mut |source| read(key.as_ref(), source),
            failed: &mut failed,
        });
        result
            .map(|()| true)
            .map_err(|e| failed.unwrap_or_else(|| syntax(e)))
    }
}

/// Hands one element or entry value to a reader as a [`JsonSource`].
struct SourceSeed<'r, 'f> {
    read: &'r mut dyn FnMut(&mut dyn JsonSource) -> Result<(), JsonError>,
    failed: &'f mut Option<JsonError>,
}

impl<'de> DeserializeSeed<'de> for SourceSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        (self.read)(&mut Source(Some(deserializer))).map_err(|e| {
            *self.failed = Some(e);
            de::Error::custom("stopped by the reader")
        })
    }
}

/// An object key, borrowed from the input when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Reads a [`Value`] with `read` (the value is the source).
pub(crate) fn from_value<T>(
    value: &Value,
    read: impl FnOnce(&mut dyn JsonSource) -> Result<T, JsonError>,
) -> Result<T, JsonError> {
    read(&mut Source(Some(value)))
}

/// Reads JSON text with `read`: one value, then nothing but white space.
pub(crate) fn from_text<T>(
    text: &[u8],
    read: impl FnOnce(&mut dyn JsonSource) -> Result<T, JsonError>,
) -> Result<T, JsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let value = read(&mut Source(Some(&mut deserializer)))?;
    deserializer.end().map_err(syntax)?;
    Ok(value)
}

/// The value of `source` as `read` makes it of the token.
pub(crate) fn read_token<T>(
    source: &mut dyn JsonSource,
    read: impl FnOnce(Json<'_>) -> Result<T, JsonError>,
) -> Result<T, JsonError> {
    let mut read = Some(read);
    let mut out = None;
    source.read(&mut |json| {
        if let Some(read) = read.take() {
            out = Some(read(json)?);
        }
        Ok(())
    })?;
    out.ok_or_else(|| syntax("no value"))
}

/// A value that is not null, read by `read` (`json::as_i32`, ...).
pub fn value_of<T>(
    source: &mut dyn JsonSource,
    read: fn(Json<'_>) -> Result<T, JsonError>,
) -> Result<T, JsonError> {
    read_token(source, read)
}

/// `None` for null, else the value `read` reads.
pub fn nullable_of<T>(
    source: &mut dyn JsonSource,
    read: fn(Json<'_>) -> Result<T, JsonError>,
) -> Result<Option<T>, JsonError> {
    read_token(source, |json| match json {
        Json::Null => Ok(None),
        json => read(json).map(Some),
    })
}

/// An array of values that `read` reads (`[]int32`, `[]string`, ...).
pub fn array_of<T>(
    source: &mut dyn JsonSource,
    read: fn(Json<'_>) -> Result<T, JsonError>,
) -> Result<Vec<T>, JsonError> {
    read_token(source, |json| {
        collect(json, |element| value_of(element, read))
    })
}

/// A nullable array of values that `read` reads.
pub fn nullable_array_of<T>(
    source: &mut dyn JsonSource,
    read: fn(Json<'_>) -> Result<T, JsonError>,
) -> Result<Option<Vec<T>>, JsonError> {
    read_token(source, |json| match json {
        Json::Null => Ok(None),
        json => collect(json, |element| value_of(element, read)).map(Some),
    })
}

/// An array whose elements `read` reads (structs); `None` for null if `nullable`.
pub fn elements_of<T>(
    source: &mut dyn JsonSource,
    nullable: bool,
    read: impl FnMut(&mut dyn JsonSource) -> Result<T, JsonError>,
) -> Result<Option<Vec<T>>, JsonError> {
    read_token(source, |json| match json {
        Json::Null if nullable => Ok(None),
        json => collect(json, read).map(Some),
    })
}

/// The elements of an array token, each read by `read`; an error names its index.
fn collect<T>(
    json: Json<'_>,
    mut read: impl FnMut(&mut dyn JsonSource) -> Result<T, JsonError>,
) -> Result<Vec<T>, JsonError> {
    let elements = match json {
        Json::Array(elements) => elements,
        other => return Err(wrong_type("an array", &other)),
    };
    let mut values = Vec::new();
    loop {
        let index = values.len();
        let more = elements.next(&mut |element| {
            values.push(read(element).map_err(|e| e.at_index(index))?);
            Ok(())
        })?;
        if !more {
            return Ok(values);
        }
    }
}

/// Reads an object token's entries with `read` (a struct's fields).
pub fn fields_of(
    json: Json<'_>,
    read: &mut dyn FnMut(&str, &mut dyn JsonSource) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    match json {
        Json::Object(entries) => while entries.next(read)? {},
        other => return Err(wrong_type("an object", &other)),
    }
    Ok(())
}

/// Whether a struct field's value may be read: yes if it is the `first` for its `key` in
/// the object or the reader is lenient (the last value wins); else a key given twice.
pub fn first(first: bool, key: &'static str, options: &JsonOptions<'_>) -> Result<(), JsonError> {
    if first || options.lenient {
        Ok(())
    } else {
        Err(duplicate_key(key, String::new()))
    }
}

/// A key the struct has in no version: refused, naming the closest of the struct's `keys`
/// if one is close, or, lenient, its value skipped.
pub fn unknown_key(
    key: &str,
    keys: &'static [&'static str],
    source: &mut dyn JsonSource,
    options: &JsonOptions<'_>,
) -> Result<(), JsonError> {
    if options.lenient {
        skip(source)
    } else {
        Err(unknown_field(key, keys))
    }
}

/// [`JsonErrorKind::UnknownField`] for `key`, suggesting the closest of `keys`.
#[cold]
pub(crate) fn unknown_field(key: &str, keys: &[&'static str]) -> JsonError {
    JsonError::new(JsonErrorKind::UnknownField(quote(key))).suggest(did_you_mean(key, keys))
}

/// The key of `keys` that `key` was most likely meant to be: the fewest single-character
/// edits away (letter case aside, as `TopicName` for `topicName`), if that is at most a third
/// of its length (one edit for a short key), as rustc judges a misspelled name. The first of
/// equally close keys wins.
pub(crate) fn did_you_mean(key: &str, keys: &[&'static str]) -> Option<&'static str> {
    // A key longer than any field name by more than the bound cannot be close; this also
    // keeps a huge key from costing a long comparison.
    let key: Vec<char> = key.chars().flat_map(char::to_lowercase).collect();
    let bound = key.len().max(3) / 3;
    let mut best: Option<(usize, &'static str)> = None;
    for &candidate in keys {
        let other: Vec<char> = candidate.chars().flat_map(char::to_lowercase).collect();
        if other.len().abs_diff(key.len()) > bound {
            continue;
        }
        let distance = edit_distance(&key, &other);
        if distance <= bound && best.is_none_or(|(closest, _)| distance < closest) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Levenshtein distance: insertions, deletions and substitutions, one row at a time.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// `path` is where the object is below what the error's own path will name.
#[cold]
fn duplicate_key(key: &str, path: String) -> JsonError {
    JsonError::new(JsonErrorKind::DuplicateKey {
        key: quote(key),
        path,
    })
}

fn skip(source: &mut dyn JsonSource) -> Result<(), JsonError> {
    read_token(source, |json| {
        match json {
            Json::Array(elements) => while elements.next(&mut skip)? {},
            Json::Object(entries) => while entries.next(&mut |_, value| skip(value))? {},
            _ => {}
        }
        Ok(())
    })
}

/// A `records` field: base64 text, or, with a [`super::RecordsJson`] hook, any other form it
/// reads (handed to it as a [`Value`] of just that field).
pub fn records_of(
    source: &mut dyn JsonSource,
    options: &JsonOptions<'_>,
) -> Result<Bytes, JsonError> {
    read_token(source, |json| as_records(json, options))
}

/// A nullable `records` field.
pub fn nullable_records_of(
    source: &mut dyn JsonSource,
    options: &JsonOptions<'_>,
) -> Result<Option<Bytes>, JsonError> {
    read_token(source, |json| match json {
        Json::Null => Ok(None),
        json => as_records(json, options).map(Some),
    })
}

fn as_records(json: Json<'_>, options: &JsonOptions<'_>) -> Result<Bytes, JsonError> {
    match (json, options.records) {
        (json @ Json::Str(_), _) | (json, None) => as_bytes(json),
        (json, Some(hook)) => {
            let value = to_value(json, !options.lenient, &mut String::new())?;
            hook.records_from_json(&value)
                .map_err(|e| JsonError::new(JsonErrorKind::Records(e)))
        }
    }
}

/// The token as a [`Value`]. `strict` refuses a key given twice in one object; `path` is
/// where the token is (`topics[3]`), for that error.
fn to_value(json: Json<'_>, strict: bool, path: &mut String) -> Result<Value, JsonError> {
    use std::fmt::Write as _;
    Ok(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(b),
        Json::I64(n) => n.into(),
        Json::U64(n) => n.into(),
        Json::F64(n) => serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
        Json::Str(s) => Value::String(s.to_owned()),
        Json::Array(elements) => {
            let mut values = Vec::new();
            let base = path.len();
            loop {
                let _ = write!(path, "[{}]", values.len());
                let more = elements.next(&mut |element| {
                    values.push(read_token(element, |json| to_value(json, strict, path))?);
                    Ok(())
                })?;
                path.truncate(base);
                if !more {
                    break Value::Array(values);
                }
            }
        }
        Json::Object(entries) => {
            let mut object = Map::new();
            let base = path.len();
            while entries.next(&mut |key, value| {
                if strict && object.contains_key(key) {
                    return Err(duplicate_key(key, path.clone()));
                }
                if base > 0 {
                    path.push('.');
                }
                if key.len() <= MAX_QUOTED_CHARS {
                    path.push_str(key);
                } else {
                    path.push_str(&quote(key));
                }
                let value = read_token(value, |json| to_value(json, strict, path))?;
                path.truncate(base);
                object.insert(key.to_owned(), value);
                Ok(())
            })? {}
            Value::Object(object)
        }
    })
}

/// JSON text as a [`Value`]. Strict (the default) refuses a key given twice in one object,
/// naming it and its path; [`JsonOptions::lenient`] keeps the last value as serde_json does.
pub fn parse(text: &[u8], options: &JsonOptions<'_>) -> Result<Value, JsonError> {
    if options.lenient {
        return serde_json::from_slice(text).map_err(syntax);
    }
    from_text(text, |source| {
        read_token(source, |json| to_value(json, true, &mut String::new()))
    })
    .map_err(JsonError::place_duplicate)
}

/// One value of a frame's top-level object, still to be read.
pub(crate) enum Part<'a> {
    Value(&'a Value),
    /// The value's text, borrowed from the input.
    Raw(&'a RawValue),
}

impl Part<'_> {
    pub(crate) fn read<T>(
        &self,
        read: impl FnOnce(&mut dyn JsonSource) -> Result<T, JsonError>,
    ) -> Result<T, JsonError> {
        match self {
            Part::Value(value) => from_value(value, read),
            Part::Raw(raw) => from_text(raw.get().as_bytes(), read),
        }
    }
}

/// The values of a frame object's `keys` (`None` where missing): unknown keys and (from text)
/// keys given twice are refused unless `options` are lenient.
pub(crate) fn frame_parts_of_value<'a, const N: usize>(
    value: &'a Value,
    keys: [&'static str; N],
    options: &JsonOptions<'_>,
) -> Result<[Option<Part<'a>>; N], JsonError> {
    let object = expect_object(value)?;
    let mut parts = [(); N].map(|()| None);
    for (key, value) in object {
        match keys.iter().position(|known| known == key) {
            Some(index) => parts[index] = Some(Part::Value(value)),
            None if options.lenient => {}
            None => return Err(unknown_field(key, &keys)),
        }
    }
    Ok(parts)
}

/// [`frame_parts_of_value`] for text: the parts are the values' text, borrowed, so that the
/// body can be read once the header (wherever it is) has given its version.
pub(crate) fn frame_parts_of_text<'a, const N: usize>(
    text: &'a [u8],
    keys: [&'static str; N],
    options: &JsonOptions<'_>,
) -> Result<[Option<Part<'a>>; N], JsonError> {
    let mut failed = None;
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let parts = deserializer
        .deserialize_any(FramePartsVisitor {
            keys,
            options,
            failed: &mut failed,
        })
        .and_then(|parts| deserializer.end().map(|()| parts));
    match (parts, failed) {
        (_, Some(e)) => Err(e),
        (Ok(parts), None) => Ok(parts),
        (Err(e), None) => Err(syntax(e)),
    }
}

struct FramePartsVisitor<'o, 'f, const N: usize> {
    keys: [&'static str; N],
    options: &'o JsonOptions<'o>,
    failed: &'f mut Option<JsonError>,
}

impl<'de, const N: usize> Visitor<'de> for FramePartsVisitor<'_, '_, N> {
    type Value = [Option<Part<'de>>; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut parts = [(); N].map(|()| None);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value: &'de RawValue = map.next_value()?;
            let refuse = match self.keys.iter().position(|known| *known == key) {
                Some(index) if parts[index].is_none() || self.options.lenient => {
                    parts[index] = Some(Part::Raw(value));
                    None
                }
                Some(_) => Some(duplicate_key(&key, String::new())),
                None if self.options.lenient => None,
                None => Some(unknown_field(&key, &self.keys)),
            };
            if let Some(error) = refuse {
                *self.failed = Some(error);
                return Err(de::Error::custom("stopped by the reader"));
            }
        }
        Ok(parts)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        self.refuse("an array")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        self.refuse("a boolean")
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        self.refuse("a number")
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        self.refuse("a number")
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        self.refuse("a number")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        self.refuse("a string")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.refuse("null")
    }
}

impl<const N: usize> FramePartsVisitor<'_, '_, N> {
    fn refuse<T, E: de::Error>(self, found: &'static str) -> Result<T, E> {
        *self.failed = Some(JsonError::new(JsonErrorKind::WrongType {
            expected: "an object",
            found,
        }));
        Err(E::custom("stopped by the reader"))
    }
}

fn type_name(json: &Json<'_>) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::I64(_) | Json::U64(_) | Json::F64(_) => "a number",
        Json::Str(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cold]
fn wrong_type(expected: &'static str, found: &Json<'_>) -> JsonError {
    JsonError::new(JsonErrorKind::WrongType {
        expected,
        found: type_name(found),
    })
}

/// A JSON boolean.
pub fn as_bool(json: Json<'_>) -> Result<bool, JsonError> {
    match json {
        Json::Bool(b) => Ok(b),
        other => Err(wrong_type("a boolean", &other)),
    }
}

fn as_integer(json: Json<'_>, ty: &'static str, min: i128, max: i128) -> Result<i128, JsonError> {
    let n = match json {
        Json::I64(n) => i128::from(n),
        Json::U64(n) => i128::from(n),
        Json::F64(n) => {
            let value =
                serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string());
            return Err(JsonError::new(JsonErrorKind::OutOfRange { value, ty }));
        }
        other => return Err(wrong_type("an integer", &other)),
    };
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(JsonError::new(JsonErrorKind::OutOfRange {
            value: n.to_string(),
            ty,
        }))
    }
}

macro_rules! integers {
    ($($name:ident, $read:ident: $ty:ty, $label:literal;)*) => {$(
        #[doc = concat!("A JSON integer in the range of `", $label, "`.")]
        pub fn $name(json: Json<'_>) -> Result<$ty, JsonError> {
            as_integer(json, $label, i128::from(<$ty>::MIN), i128::from(<$ty>::MAX))
                .map(|n| n as $ty)
        }

        #[doc = concat!("A JSON integer in the range of `", $label, "`.")]
        pub fn $read(value: &Value) -> Result<$ty, JsonError> {
            from_value(value, |source| value_of(source, $name))
        }
    )*};
}

integers! {
    as_i8, read_i8: i8, "int8";
    as_i16, read_i16: i16, "int16";
    as_u16, read_u16: u16, "uint16";
    as_i32, read_i32: i32, "int32";
    as_u32, read_u32: u32, "uint32";
    as_i64, read_i64: i64, "int64";
}

/// A JSON number as `float64`.
pub fn as_f64(json: Json<'_>) -> Result<f64, JsonError> {
    match json {
        Json::I64(n) => Ok(n as f64),
        Json::U64(n) => Ok(n as f64),
        Json::F64(n) => Ok(n),
        other => Err(wrong_type("a number", &other)),
    }
}

/// A UUID in Kafka's text form.
pub fn as_uuid(json: Json<'_>) -> Result<Uuid, JsonError> {
    match json {
        Json::Str(text) => text
            .parse()
            .map_err(|_| JsonError::new(JsonErrorKind::InvalidUuid(quote(text)))),
        other => Err(wrong_type("a UUID string", &other)),
    }
}

/// A string; Kafka refuses more than 32767 UTF-8 bytes.
pub fn as_string(json: Json<'_>) -> Result<Utf8Bytes, JsonError> {
    match json {
        Json::Str(text) if text.len() > crate::wire::MAX_STRING_LEN => {
            Err(JsonError::new(JsonErrorKind::StringTooLong(text.len())))
        }
        Json::Str(text) => Ok(Utf8Bytes::from(text)),
        other => Err(wrong_type("a string", &other)),
    }
}

/// `bytes` or `records` as standard base64.
pub fn as_bytes(json: Json<'_>) -> Result<Bytes, JsonError> {
    let text = match json {
        Json::Str(text) => text,
        other => return Err(wrong_type("a base64 string", &other)),
    };
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

macro_rules! value_readers {
    ($($read:ident => $name:ident: $ty:ty;)*) => {$(
        #[doc = concat!("[`", stringify!($name), "`] of a [`Value`].")]
        pub fn $read(value: &Value) -> Result<$ty, JsonError> {
            from_value(value, |source| value_of(source, $name))
        }
    )*};
}

value_readers! {
    read_bool => as_bool: bool;
    read_f64 => as_f64: f64;
    read_uuid => as_uuid: Uuid;
    read_string => as_string: Utf8Bytes;
    read_bytes => as_bytes: Bytes;
}

#[cold]
fn value_wrong_type(expected: &'static str, value: &Value) -> JsonError {
    let found = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    JsonError::new(JsonErrorKind::WrongType { expected, found })
}

/// The object of a [`Value`].
pub fn expect_object(value: &Value) -> Result<&Map<String, Value>, JsonError> {
    value
        .as_object()
        .ok_or_else(|| value_wrong_type("an object", value))
}

/// The elements of an array [`Value`].
pub fn expect_array(value: &Value) -> Result<&[Value], JsonError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| value_wrong_type("an array", value))
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

/// A JSON array of [`Value`]s that `read` reads.
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

/// The value `source` holds as a [`Value`] (a frame's header, read before its version is
/// known); strict unless `options` are lenient.
pub(crate) fn value_tree_of(
    source: &mut dyn JsonSource,
    options: &JsonOptions<'_>,
) -> Result<Value, JsonError> {
    read_token(source, |json| {
        to_value(json, !options.lenient, &mut String::new())
    })
}
