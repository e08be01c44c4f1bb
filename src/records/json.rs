//! The JSON form of record batches.
//!
//! Written token by token into a [`JsonSink`]: [`write_raw_batch`] straight from a batch's
//! bytes, record by record, holding no record after it is written (a `JsonWriter` over
//! stdout holds no part of the document either); [`write_batch`] from a decoded
//! [`RecordBatch`], which also serializes through [`serde::Serialize`] to the same text.
//! Read from a [`serde_json::Value`] by [`batch_from_json`] and [`batches_from_json`]. For
//! uncompressed, canonical input, bytes → JSON → bytes gives the same bytes.
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

use super::batch::RecordView;
use super::{
    Compression, ControlRecord, Header, RawBatch, Record, RecordBatch, RecordsError, TimestampType,
};
use crate::json::{self as kjson, JsonSink, ValueSink};
use crate::json::{JsonError, JsonErrorKind};
use crate::Utf8Bytes;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// Writes the batch fields of the form, all but `records`, into an open object.
fn write_fields(batch: &RecordBatch, out: &mut dyn JsonSink) {
    out.key("baseOffset");
    out.i64(batch.base_offset);
    out.key("partitionLeaderEpoch");
    out.i64(batch.partition_leader_epoch.into());
    out.key("magic");
    out.i64(batch.magic.into());
    out.key("crc");
    out.u64(batch.crc.into());
    out.key("compression");
    out.str(batch.compression.name());
    out.key("timestampType");
    out.str(batch.timestamp_type.name());
    out.key("isTransactional");
    out.bool(batch.is_transactional);
    out.key("isControl");
    out.bool(batch.is_control);
    out.key("hasDeleteHorizon");
    out.bool(batch.has_delete_horizon);
    out.key("lastOffsetDelta");
    out.i64(batch.last_offset_delta.into());
    out.key("baseTimestamp");
    out.i64(batch.base_timestamp);
    out.key("maxTimestamp");
    out.i64(batch.max_timestamp);
    out.key("producerId");
    out.i64(batch.producer_id);
    out.key("producerEpoch");
    out.i64(batch.producer_epoch.into());
    out.key("baseSequence");
    out.i64(batch.base_sequence.into());
}

fn write_nullable(out: &mut dyn JsonSink, value: Option<&[u8]>) {
    match value {
        Some(bytes) => out.bytes(bytes),
        None => out.null(),
    }
}

/// Writes one record; `control`: its batch is a control batch, so its decoded control
/// record is shown too. An error only if headers read in place turn out unreadable, which
/// the check made when the record was read rules out.
fn write_record(
    out: &mut dyn JsonSink,
    record: RecordView<'_>,
    control: bool,
) -> Result<(), RecordsError> {
    out.begin_object();
    out.key("offset");
    out.i64(record.offset);
    out.key("timestamp");
    out.i64(record.timestamp);
    if record.attributes != 0 {
        out.key("attributes");
        out.i64(record.attributes.into());
    }
    out.key("key");
    write_nullable(out, record.key);
    out.key("value");
    write_nullable(out, record.value);
    out.key("headers");
    out.begin_array();
    for header in record.headers {
        let (key, value) = header?;
        out.begin_object();
        out.key("key");
        out.str(key);
        out.key("value");
        write_nullable(out, value);
        out.end_object();
    }
    out.end_array();
    // A control record that does not decode is shown without its decoded form; key and
    // value above still carry it.
    if control {
        if let Ok(control) = ControlRecord::decode(record.key, record.value) {
            out.key("control");
            out.begin_object();
            out.key("type");
            out.str(control.record_type().name());
            out.key("value");
            // The control schemas have no floats, so their JSON cannot fail; if it ever
            // did, the value shows as null (the record's key and value still carry it).
            out.value(&control.value_json().unwrap_or(Value::Null));
            out.end_object();
        }
    }
    out.end_object();
    Ok(())
}

/// Writes a decoded batch in the JSON form.
pub fn write_batch(batch: &RecordBatch, out: &mut dyn JsonSink) {
    out.begin_object();
    write_fields(batch, out);
    out.key("records");
    out.begin_array();
    for record in &batch.records {
        write_record(out, RecordView::of(record), batch.is_control)
            .expect("decoded headers are always readable");
    }
    out.end_array();
    out.end_object();
}

/// Writes a batch in the JSON form straight from its bytes, record by record: the same text
/// as [`write_batch`] of [`RawBatch::decode`], but no record is held after it is written (a
/// compressed batch is decompressed once, within the cap, and read from that buffer; a
/// record's headers are read from its bytes as they are written).
///
/// A batch that turns out malformed ends the writing with its error, the JSON unfinished:
/// check the batch first ([`RawBatch::reencoding`] reads every record) if nothing should
/// be written then.
pub fn write_raw_batch(batch: &RawBatch, out: &mut dyn JsonSink) -> Result<(), RecordsError> {
    let (fields, mut records) = batch.open()?;
    out.begin_object();
    write_fields(&fields, out);
    out.key("records");
    out.begin_array();
    while let Some(record) = records.next_view() {
        write_record(out, record?, fields.is_control)?;
    }
    out.end_array();
    out.end_object();
    Ok(())
}

/// The JSON of what `write` writes, as a [`Value`] (for serde, one record at a time).
fn value_of(write: impl FnOnce(&mut dyn JsonSink)) -> Value {
    let mut sink = ValueSink::new();
    write(&mut sink);
    sink.finish()
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        value_of(|out| {
            out.begin_object();
            out.key("key");
            out.str(self.key.as_str());
            out.key("value");
            write_nullable(out, self.value.as_deref());
            out.end_object();
        })
        .serialize(serializer)
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        value_of(|out| {
            write_record(out, RecordView::of(self), false)
                .expect("decoded headers are always readable")
        })
        .serialize(serializer)
    }
}

/// A batch's records, serialized one at a time.
struct RecordsJson<'a>(&'a RecordBatch);

impl Serialize for RecordsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.records.len()))?;
        for record in &self.0.records {
            seq.serialize_element(&value_of(|out| {
                write_record(out, RecordView::of(record), self.0.is_control)
                    .expect("decoded headers are always readable")
            }))?;
        }
        seq.end()
    }
}

/// Through serde, the same text as [`write_batch`]: the fields, then the records one at a
/// time, each built as a small [`Value`] first.
impl Serialize for RecordBatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = value_of(|out| {
            out.begin_object();
            write_fields(self, out);
            out.end_object();
        });
        let fields = fields.as_object().map(|fields| fields.iter());
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in fields.into_iter().flatten() {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("records", &RecordsJson(self))?;
        map.end()
    }
}

/// The batch as a [`serde_json::Value`] (prefer writing it straight into a sink:
/// [`write_batch`]).
pub fn batch_to_json(batch: &RecordBatch) -> Value {
    value_of(|out| write_batch(batch, out))
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
