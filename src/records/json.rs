//! The JSON form of record batches.
//!
//! Written through [`serde::Serialize`], so it streams into any serde writer (a
//! `serde_json::Serializer` over stdout never holds the whole document); read from a
//! [`serde_json::Value`] by [`batch_from_json`] and [`batches_from_json`]. For uncompressed,
//! canonical input, bytes → JSON → bytes gives the same bytes.
//!
//! A batch is an object with, in this order: `baseOffset`, `partitionLeaderEpoch`, `magic`,
//! `crc`, `compression` (`"none"`, `"gzip"`, `"snappy"`, `"lz4"`, `"zstd"`),
//! `timestampType` (`"CreateTime"`, `"LogAppendTime"`), `isTransactional`, `isControl`,
//! `hasDeleteHorizon`, `lastOffsetDelta`, `baseTimestamp`, `maxTimestamp`, `producerId`,
//! `producerEpoch`, `baseSequence` and `records`. A record has `offset` (absolute),
//! `timestamp`, `attributes` (only when not 0), `key` and `value` (standard base64 or
//! `null`) and `headers` (objects `{key: string, value: base64 or null}`); a record of a
//! control batch also shows `control`: its type and its value in Kafka's JSON form of the
//! value's schema.
//!
//! Magic 0/1 entries appear as batch-like objects with their messages as records.
//!
//! When read, only `records` is required. `crc` and `control` are accepted and not used
//! (the CRC is computed when the batch is written, the control value comes from the key and
//! value); any other key that is not part of the form is an error. Missing fields take the
//! defaults of [`RecordBatchBuilder`](super::RecordBatchBuilder): base offset 0, magic 2,
//! no compression, CreateTime, no producer state, base and max timestamps and last offset
//! delta from the records; a missing record offset is the next one.

use super::{Compression, ControlRecord, Header, Record, RecordBatch, TimestampType};
use crate::error::{JsonError, JsonErrorKind};
use crate::json as kjson;
use crate::Utf8Bytes;
use base64::display::Base64Display;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

struct Base64<'a>(Option<&'a [u8]>);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(bytes) => serializer.collect_str(&Base64Display::new(bytes, &STANDARD)),
            None => serializer.serialize_none(),
        }
    }
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_struct("Header", 2)?;
        map.serialize_field("key", self.key.as_str())?;
        map.serialize_field("value", &Base64(self.value.as_deref()))?;
        map.end()
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RecordJson {
            record: self,
            control: false,
        }
        .serialize(serializer)
    }
}

/// A record, and whether its batch is a control batch (then its decoded value is shown).
struct RecordJson<'a> {
    record: &'a Record,
    control: bool,
}

/// A control record's type and value, as JSON.
struct ControlJson<'a>(&'a ControlRecord);

impl Serialize for ControlJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", self.0.record_type().name())?;
        // The control schemas have no floats, so their JSON cannot fail; if it ever did,
        // the value shows as null (the record's key and value still carry it).
        let value = self.0.value_json().unwrap_or(Value::Null);
        map.serialize_entry("value", &value)?;
        map.end()
    }
}

impl Serialize for RecordJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let record = self.record;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("offset", &record.offset)?;
        map.serialize_entry("timestamp", &record.timestamp)?;
        if record.attributes != 0 {
            map.serialize_entry("attributes", &record.attributes)?;
        }
        map.serialize_entry("key", &Base64(record.key.as_deref()))?;
        map.serialize_entry("value", &Base64(record.value.as_deref()))?;
        map.serialize_entry("headers", &record.headers)?;
        if self.control {
            // A control record that does not decode is shown without its decoded form;
            // key and value above still carry it.
            if let Ok(control) =
                ControlRecord::decode(record.key.as_deref(), record.value.as_deref())
            {
                map.serialize_entry("control", &ControlJson(&control))?;
            }
        }
        map.end()
    }
}

struct RecordsJson<'a>(&'a RecordBatch);

impl Serialize for RecordsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.records.len()))?;
        for record in &self.0.records {
            seq.serialize_element(&RecordJson {
                record,
                control: self.0.is_control,
            })?;
        }
        seq.end()
    }
}

impl Serialize for RecordBatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut batch = serializer.serialize_struct("RecordBatch", 16)?;
        batch.serialize_field("baseOffset", &self.base_offset)?;
        batch.serialize_field("partitionLeaderEpoch", &self.partition_leader_epoch)?;
        batch.serialize_field("magic", &self.magic)?;
        batch.serialize_field("crc", &self.crc)?;
        batch.serialize_field("compression", self.compression.name())?;
        batch.serialize_field("timestampType", self.timestamp_type.name())?;
        batch.serialize_field("isTransactional", &self.is_transactional)?;
        batch.serialize_field("isControl", &self.is_control)?;
        batch.serialize_field("hasDeleteHorizon", &self.has_delete_horizon)?;
        batch.serialize_field("lastOffsetDelta", &self.last_offset_delta)?;
        batch.serialize_field("baseTimestamp", &self.base_timestamp)?;
        batch.serialize_field("maxTimestamp", &self.max_timestamp)?;
        batch.serialize_field("producerId", &self.producer_id)?;
        batch.serialize_field("producerEpoch", &self.producer_epoch)?;
        batch.serialize_field("baseSequence", &self.base_sequence)?;
        batch.serialize_field("records", &RecordsJson(self))?;
        batch.end()
    }
}

/// The batch as a [`serde_json::Value`] (prefer serializing it straight into a writer).
pub fn batch_to_json(batch: &RecordBatch) -> Value {
    serde_json::to_value(batch).expect("record batches always serialize")
}

const BATCH_KEYS: &[&str] = &[
    "baseOffset",
    "partitionLeaderEpoch",
    "magic",
    "crc",
    "compression",
    "timestampType",
    "isTransactional",
    "isControl",
    "hasDeleteHorizon",
    "lastOffsetDelta",
    "baseTimestamp",
    "maxTimestamp",
    "producerId",
    "producerEpoch",
    "baseSequence",
    "records",
];
const RECORD_KEYS: &[&str] = &[
    "offset",
    "timestamp",
    "attributes",
    "key",
    "value",
    "headers",
    "control",
];
const HEADER_KEYS: &[&str] = &["key", "value"];

fn object<'a>(value: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>, JsonError> {
    let object = kjson::expect_object(value)?;
    if let Some(unknown) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(JsonError::new(JsonErrorKind::UnknownField(unknown.clone())));
    }
    Ok(object)
}

/// Reads an optional field with `read`, adding the field's name to an error's path.
fn field<T>(
    object: &Map<String, Value>,
    name: &'static str,
    read: impl FnOnce(&Value) -> Result<T, JsonError>,
) -> Result<Option<T>, JsonError> {
    object
        .get(name)
        .map(|value| read(value).map_err(|e| e.at(name)))
        .transpose()
}

fn bytes(value: &Value) -> Result<Option<Bytes>, JsonError> {
    kjson::read_nullable(value, |value| {
        let text = value.as_str().ok_or_else(|| {
            JsonError::new(JsonErrorKind::WrongType {
                expected: "a base64 string or null",
                found: "another value",
            })
        })?;
        STANDARD
            .decode(text)
            .map(Bytes::from)
            .map_err(|_| JsonError::new(JsonErrorKind::InvalidBase64))
    })
}

fn name<T>(
    value: &Value,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, JsonError> {
    value.as_str().and_then(parse).ok_or_else(|| {
        JsonError::new(JsonErrorKind::WrongType {
            expected,
            found: "something else",
        })
    })
}

fn header_from_json(value: &Value) -> Result<Header, JsonError> {
    let object = object(value, HEADER_KEYS)?;
    let key = field(object, "key", |v| {
        v.as_str().map(Utf8Bytes::from).ok_or_else(|| {
            JsonError::new(JsonErrorKind::WrongType {
                expected: "a string",
                found: "another value",
            })
        })
    })?
    .ok_or_else(|| JsonError::new(JsonErrorKind::MissingField).at("key"))?;
    let value = field(object, "value", bytes)?.flatten();
    Ok(Header { key, value })
}

fn record_from_json(value: &Value, next_offset: i64) -> Result<Record, JsonError> {
    let object = object(value, RECORD_KEYS)?;
    Ok(Record {
        offset: field(object, "offset", kjson::read_i64)?.unwrap_or(next_offset),
        timestamp: field(object, "timestamp", kjson::read_i64)?.unwrap_or(-1),
        attributes: field(object, "attributes", kjson::read_i8)?.unwrap_or(0),
        key: field(object, "key", bytes)?.flatten(),
        value: field(object, "value", bytes)?.flatten(),
        headers: field(object, "headers", |v| {
            kjson::read_array(v, header_from_json)
        })?
        .unwrap_or_default(),
    })
}

/// Reads one batch from its JSON form.
pub fn batch_from_json(value: &Value) -> Result<RecordBatch, JsonError> {
    let o = object(value, BATCH_KEYS)?;
    let base_offset = field(o, "baseOffset", kjson::read_i64)?.unwrap_or(0);
    let records_json = o
        .get("records")
        .ok_or_else(|| JsonError::new(JsonErrorKind::MissingField).at("records"))?;
    let mut records = Vec::new();
    let mut next_offset = base_offset;
    let elements = records_json.as_array().ok_or_else(|| {
        JsonError::new(JsonErrorKind::WrongType {
            expected: "an array",
            found: "another value",
        })
        .at("records")
    })?;
    for (index, element) in elements.iter().enumerate() {
        let record =
            record_from_json(element, next_offset).map_err(|e| e.at_index(index).at("records"))?;
        next_offset = record.offset.wrapping_add(1);
        records.push(record);
    }
    let defaults = RecordBatch::default();
    Ok(RecordBatch {
        base_offset,
        partition_leader_epoch: field(o, "partitionLeaderEpoch", kjson::read_i32)?
            .unwrap_or(defaults.partition_leader_epoch),
        magic: field(o, "magic", kjson::read_i8)?.unwrap_or(defaults.magic),
        crc: field(o, "crc", kjson::read_u32)?.unwrap_or(0),
        compression: field(o, "compression", |v| {
            name(
                v,
                "\"none\", \"gzip\", \"snappy\", \"lz4\" or \"zstd\"",
                Compression::from_name,
            )
        })?
        .unwrap_or_default(),
        timestamp_type: field(o, "timestampType", |v| {
            name(
                v,
                "\"CreateTime\" or \"LogAppendTime\"",
                TimestampType::from_name,
            )
        })?
        .unwrap_or_default(),
        is_transactional: field(o, "isTransactional", kjson::read_bool)?.unwrap_or(false),
        is_control: field(o, "isControl", kjson::read_bool)?.unwrap_or(false),
        has_delete_horizon: field(o, "hasDeleteHorizon", kjson::read_bool)?.unwrap_or(false),
        last_offset_delta: field(o, "lastOffsetDelta", kjson::read_i32)?.unwrap_or_else(|| {
            records
                .last()
                .map_or(0, |r| r.offset.wrapping_sub(base_offset) as i32)
        }),
        base_timestamp: field(o, "baseTimestamp", kjson::read_i64)?
            .unwrap_or_else(|| records.first().map_or(-1, |r| r.timestamp)),
        max_timestamp: field(o, "maxTimestamp", kjson::read_i64)?
            .unwrap_or_else(|| records.iter().map(|r| r.timestamp).max().unwrap_or(-1)),
        producer_id: field(o, "producerId", kjson::read_i64)?.unwrap_or(defaults.producer_id),
        producer_epoch: field(o, "producerEpoch", kjson::read_i16)?
            .unwrap_or(defaults.producer_epoch),
        base_sequence: field(o, "baseSequence", kjson::read_i32)?.unwrap_or(defaults.base_sequence),
        records,
    })
}

/// Reads a JSON array of batches.
pub fn batches_from_json(value: &Value) -> Result<Vec<RecordBatch>, JsonError> {
    kjson::read_array(value, batch_from_json)
}
