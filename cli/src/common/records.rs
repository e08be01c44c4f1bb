//! A `records` field as JSON and back: the batches it holds, in the records layer's JSON form
//! (`kafka_codec::records::json`).
//!
//! `records decode|encode` use these on a whole input. Expanding the records fields of a
//! message in place (`decode --records`) needs nothing more per field: [`check_records`] on
//! the field's bytes, then the [`CheckedRecords`] serialized where the field's value was, and
//! [`records_from_json`] on the way back.

use kafka_codec::bytes::Bytes;
use kafka_codec::json::{JsonSink, RecordsJson};
use kafka_codec::records::{
    json, BatchReader, Compression, RawBatch, ReadOptions, RecordBatch, RecordsError,
};
use kafka_codec::serde_json::{Map, Value};
use kafka_codec::DecodeLimits;
use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};
use std::cell::RefCell;

/// A records field that read whole, ready to be shown as a JSON array of batches.
///
/// It serializes by decoding its batches again, one at a time as each is written, so that
/// memory stays at one decompressed batch however many the field holds.
pub struct CheckedRecords {
    field: Bytes,
    options: ReadOptions,
    /// Why `records encode` of the JSON would not give back the field's bytes, one line
    /// each (none when it would), the partial last batch apart.
    pub warnings: Vec<String>,
    /// The length of an incomplete last batch left out (with `allow_truncated_tail`).
    pub truncated_tail: Option<usize>,
}

impl CheckedRecords {
    /// The warning for a partial last batch that the JSON leaves out, if there is one.
    pub fn tail_warning(&self) -> Option<String> {
        self.truncated_tail.map(|tail| {
            format!(
                "{tail} bytes of an incomplete last batch, from byte offset {}, are not in the \
                 JSON; encode will not write them",
                self.field.len() - tail
            )
        })
    }

    /// The bytes of the partial last batch, if there is one.
    pub fn tail(&self) -> Option<Bytes> {
        self.truncated_tail
            .map(|tail| self.field.slice(self.field.len() - tail..))
    }
}

/// Reads every batch of `field`, records included, decompressing each within the cap of
/// `options` and dropping it before the next, so that nothing of a malformed field is shown.
///
/// Also writes each batch again as `records encode` would and notes in
/// [`CheckedRecords::warnings`] which ones would not come back as they are: batches not in
/// the canonical form Kafka writes, compressed batches whose codec output differs from ours
/// (their records are the same), and a partial last batch left out (with
/// `allow_truncated_tail`).
pub fn check_records(field: Bytes, options: ReadOptions) -> Result<CheckedRecords, RecordsError> {
    let mut reader = BatchReader::with_options(field.clone(), options);
    // The first batch that would not come back as it is, and how many do not.
    let mut first: Option<String> = None;
    let mut differing = 0usize;
    for raw in &mut reader {
        let raw = raw?;
        let batch = raw.decode()?;
        if let Some(why) = round_trip_problem(&raw, &batch) {
            differing += 1;
            first.get_or_insert(why);
        }
    }
    let mut warnings = Vec::new();
    if let Some(first) = first {
        warnings.push(match differing {
            1 => first,
            n => format!("{first} (and {} more batches)", n - 1),
        });
    }
    Ok(CheckedRecords {
        field,
        options,
        warnings,
        truncated_tail: reader.truncated_tail(),
    })
}

/// Why writing `batch` again, as `records encode` does, would not give back the bytes it
/// was read from, if it would not.
fn round_trip_problem(raw: &RawBatch, batch: &RecordBatch) -> Option<String> {
    let input = raw.as_bytes();
    let place = format!(
        "the batch at base offset {} (byte offset {})",
        batch.base_offset,
        raw.position()
    );
    let again = match batch.encode_to_bytes() {
        Ok(again) if again == *input => return None,
        Ok(again) => again,
        Err(e) => return Some(format!("{place} does not encode again: {}", e.kind())),
    };
    let same = input.iter().zip(again.iter()).take_while(|(a, b)| a == b);
    let at = raw.position() + same.count();
    let why = if batch.compression == Compression::None {
        "it is not in the canonical form Kafka writes".to_owned()
    } else {
        format!(
            "encode compresses its records again with {}, to other bytes; the records stay \
             the same",
            batch.compression
        )
    };
    Some(format!(
        "encode will not give back the bytes of {place}, from byte offset {at}: {why}"
    ))
}

impl Serialize for CheckedRecords {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for raw in BatchReader::with_options(self.field.clone(), self.options) {
            // The same reads as in `check_records`, so they succeed again.
            let batch = raw.and_then(|raw| raw.decode()).map_err(S::Error::custom)?;
            seq.serialize_element(&batch)?;
        }
        seq.end()
    }
}

/// The bytes of a records field from its JSON form: an array of batches, written in order
/// (uncompressed ones exactly as Kafka writes them, compressed ones compressed again with
/// the codec they name).
///
/// `crc` is recomputed. `control` (shown for the records of a control batch) is checked
/// against the record's key and value, which are what is written: a `control` that was
/// edited would otherwise be dropped without a word.
pub fn records_from_json(value: &Value) -> Result<Vec<u8>, String> {
    let batches = json::batches_from_json(value).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (index, batch) in batches.iter().enumerate() {
        let place = || format!("batch [{index}] (base offset {})", batch.base_offset);
        check_control(&value[index], batch).map_err(|e| format!("{}: {e}", place()))?;
        batch
            .encode_to_vec(&mut out)
            .map_err(|e| format!("{}: {}", place(), e.kind()))?;
    }
    Ok(out)
}

/// Every `control` given in a batch's JSON is what the record's key and value decode to (and
/// only records of a control batch have one).
fn check_control(given: &Value, batch: &RecordBatch) -> Result<(), String> {
    let Some(given) = given["records"].as_array() else {
        return Ok(());
    };
    if !given.iter().any(|record| record.get("control").is_some()) {
        return Ok(());
    }
    let shown = json::batch_to_json(batch);
    let shown = shown["records"].as_array().map_or(&[][..], Vec::as_slice);
    for (index, (given, shown)) in given.iter().zip(shown).enumerate() {
        let Some(control) = given.get("control") else {
            continue;
        };
        if Some(control) != shown.get("control") {
            return Err(format!(
                "records[{index}].control is not what the record's key and value hold (it is \
                 only shown, never written): edit the key and value, or leave control out"
            ));
        }
    }
    Ok(())
}

/// The key of the object that stands for a partial last batch at the end of an expanded
/// records field (`decode --records`): its bytes as standard base64.
pub const TRUNCATED_TAIL_KEY: &str = "truncatedTail";

/// Shows every `records` field of a message as the JSON array of its batches (the form
/// `records decode` prints) and reads that form back: the CLI's `--records`.
///
/// A partial last batch, which ends a Fetch response's records when the broker cut at the
/// fetch size, is shown as a last element `{"truncatedTail": base64, "note": ...}` and written
/// back as it was. Round-trip warnings (compressed batches that compress again to other
/// bytes, non-canonical batches) are collected for the caller to print.
pub struct ExpandRecords {
    options: ReadOptions,
    /// Keep a field that does not decode as base64 (with a warning) instead of failing.
    allow_invalid: bool,
    warnings: RefCell<Vec<String>>,
    /// Why fields kept as base64 (with `allow_invalid`) did not decode.
    refused: RefCell<Vec<String>>,
}

impl ExpandRecords {
    /// A hook reading batches with `limits`; `allow_invalid` keeps undecodable fields as
    /// base64.
    pub fn new(limits: DecodeLimits, allow_invalid: bool) -> Self {
        ExpandRecords {
            options: ReadOptions {
                limits,
                allow_truncated_tail: true,
                ..ReadOptions::default()
            },
            allow_invalid,
            warnings: RefCell::new(Vec::new()),
            refused: RefCell::new(Vec::new()),
        }
    }

    /// The round-trip warnings collected so far, emptied.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    /// Why fields were kept as base64 (with `allow_invalid`), emptied.
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut self.refused.borrow_mut())
    }

    /// The JSON of one records field: its batches, or base64 (with `allow_invalid`).
    fn records_to_json(&self, records: &Bytes) -> Result<Value, String> {
        let checked = match check_records(records.clone(), self.options) {
            Ok(checked) => checked,
            Err(e) if self.allow_invalid => {
                self.refused.borrow_mut().push(format!(
                    "a records field of {} bytes does not decode ({e}); shown as base64",
                    records.len()
                ));
                return Ok(kafka_codec::json::bytes_to_json(records));
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut value = kafka_codec::serde_json::to_value(&checked).map_err(|e| e.to_string())?;
        if let (Some(tail), Value::Array(batches)) = (checked.tail(), &mut value) {
            let mut object = Map::new();
            object.insert(
                TRUNCATED_TAIL_KEY.into(),
                kafka_codec::json::bytes_to_json(&tail),
            );
            object.insert(
                "note".into(),
                Value::String(format!(
                    "the last {} bytes are an incomplete batch (a Fetch response may end with \
                     one); kept as base64",
                    tail.len()
                )),
            );
            batches.push(Value::Object(object));
        }
        self.warnings.borrow_mut().extend(checked.warnings);
        Ok(value)
    }
}

impl RecordsJson for ExpandRecords {
    fn write_records_json(&self, records: &Bytes, out: &mut dyn JsonSink) -> Result<(), String> {
        // One records field's batches as a tree: bounded by the field, not the message.
        out.value(&self.records_to_json(records)?);
        Ok(())
    }

    fn records_from_json(&self, value: &Value) -> Result<Bytes, String> {
        let Some(elements) = value.as_array() else {
            return Err("expected base64 text or an array of batches".into());
        };
        let tail = match elements.last() {
            Some(Value::Object(last)) if last.contains_key(TRUNCATED_TAIL_KEY) => Some(last),
            _ => None,
        };
        let Some(tail) = tail else {
            return records_from_json(value).map(Bytes::from);
        };
        let batches = Value::Array(elements[..elements.len() - 1].to_vec());
        let mut bytes = records_from_json(&batches)?;
        if let Some(key) = tail
            .keys()
            .find(|key| *key != TRUNCATED_TAIL_KEY && *key != "note")
        {
            return Err(format!(
                "[{}]: unknown field {:?} next to {TRUNCATED_TAIL_KEY}",
                elements.len() - 1,
                kafka_codec::json::quote(key)
            ));
        }
        let raw = kafka_codec::json::read_bytes(&tail[TRUNCATED_TAIL_KEY])
            .map_err(|e| format!("[{}].{TRUNCATED_TAIL_KEY}: {e}", elements.len() - 1))?;
        bytes.extend_from_slice(&raw);
        Ok(Bytes::from(bytes))
    }
}
