//! A `records` field as JSON and back: the batches it holds, in the records layer's JSON form
//! (`kafka_codec::records::json`).
//!
//! `records decode|encode` use these on a whole input. Expanding the records fields of a
//! message in place (`decode --records`) needs nothing more per field: [`check_records`] on
//! the field's bytes, then [`CheckedRecords::write_json`] where the field's value was, and
//! [`records_from_json`] on the way back.
//!
//! Both passes stream: the check reads every batch record by record, the writing decodes
//! each batch again as it writes it, so memory stays at the input and one decompressed
//! batch however many batches and records the field holds.

use kafka_codec::bytes::Bytes;
use kafka_codec::json::{JsonSink, RecordsJson};
use kafka_codec::records::{
    json, BatchReader, RawBatch, ReadOptions, RecordBatch, RecordsError, Reencoding,
};
use kafka_codec::serde_json::Value;
use kafka_codec::DecodeLimits;
use std::cell::{Cell, RefCell};

/// A records field that read whole, ready to be written as a JSON array of batches.
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

    /// Writes the batches as a JSON array, decoding each again as it is written, record by
    /// record (the reads that [`check_records`] made, so they succeed again).
    pub fn write_json(&self, out: &mut dyn JsonSink) -> Result<(), RecordsError> {
        out.begin_array();
        write_batches(&self.field, self.options, out)?;
        out.end_array();
        Ok(())
    }
}

/// Writes the batches of `field`, each decoded again as it is written.
fn write_batches(
    field: &Bytes,
    options: ReadOptions,
    out: &mut dyn JsonSink,
) -> Result<(), RecordsError> {
    for raw in BatchReader::with_options(field.clone(), options) {
        json::write_raw_batch(&raw?, out)?;
    }
    Ok(())
}

/// Reads every batch of `field`, record by record (CRCs, decompression within the cap of
/// `options`, one batch at a time), so that nothing of a malformed field is shown.
///
/// Also notes in [`CheckedRecords::warnings`] which batches `records encode` would not give
/// back as they are ([`RawBatch::reencoding`]): batches not in the canonical form Kafka
/// writes, compressed batches whose codec output differs from ours (their records are the
/// same), and a partial last batch left out (with `allow_truncated_tail`).
pub fn check_records(field: Bytes, options: ReadOptions) -> Result<CheckedRecords, RecordsError> {
    let mut reader = BatchReader::with_options(field.clone(), options);
    // The first batch that would not come back as it is, and how many do not.
    let mut first: Option<String> = None;
    let mut differing = 0usize;
    for raw in &mut reader {
        let raw = raw?;
        let reencoding = raw.reencoding()?;
        if reencoding != Reencoding::Same {
            differing += 1;
            if first.is_none() {
                first = round_trip_problem(&raw, reencoding);
            }
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

/// Why writing `raw` again, as `records encode` does, would not give back its bytes, if it
/// would not.
fn round_trip_problem(raw: &RawBatch, reencoding: Reencoding) -> Option<String> {
    // The base offset the JSON shows: a legacy wrapper's is its first inner message's,
    // known once it is opened again (for the one batch a warning names).
    let base_offset = match raw.header().magic {
        2 => Some(raw.header().base_offset),
        _ => raw
            .records()
            .ok()
            .and_then(|mut records| records.next())
            .and_then(Result::ok)
            .map(|record| record.offset),
    };
    let place = format!(
        "the batch at base offset {} (byte offset {})",
        base_offset.unwrap_or(raw.header().base_offset),
        raw.position()
    );
    let (at, why) = match reencoding {
        Reencoding::Same => return None,
        Reencoding::Unwritable(e) => {
            return Some(format!("{place} does not encode again: {}", e.kind()))
        }
        Reencoding::NotCanonical {
            at,
            decompressed_at,
        } => (
            at,
            match decompressed_at {
                None => "it is not in the canonical form Kafka writes".to_owned(),
                Some(offset) => format!(
                    "its records are not in the canonical form Kafka writes (from byte \
                     {offset} of the decompressed records)"
                ),
            },
        ),
        Reencoding::Recompressed { at } => (
            at,
            format!(
                "encode compresses its records again with {}, to other bytes; the records \
                 stay the same",
                raw.header()
                    .compression()
                    .map_or("its codec", |codec| codec.name())
            ),
        ),
        // A kind this version does not know: say only that the bytes differ.
        _ => return Some(format!("encode will not give back the bytes of {place}")),
    };
    Some(format!(
        "encode will not give back the bytes of {place}, from byte offset {at}: {why}"
    ))
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
///
/// Each field is checked (read record by record) once, then written straight into the
/// sink, decoded again batch by batch: nothing of the field is held but one decompressed
/// batch. A caller that must know whether a message can be shown before writing any of it
/// makes a dry run first with [`ExpandRecords::check_only`]; the fields it checked are not
/// checked again.
pub struct ExpandRecords {
    options: ReadOptions,
    /// Keep a field that does not decode as base64 (with a warning) instead of failing.
    allow_invalid: bool,
    warnings: RefCell<Vec<String>>,
    /// Why fields kept as base64 (with `allow_invalid`) did not decode.
    refused: RefCell<Vec<String>>,
    /// Check fields without writing them (a dry run writes `null` for each).
    check_only: Cell<bool>,
    /// The fields checked so far, by where their bytes are (the same field of the same
    /// message in a second pass), and what was found.
    checked: RefCell<Vec<((usize, usize), Checked)>>,
}

/// What checking one records field found.
#[derive(Clone, Copy)]
enum Checked {
    /// It decodes; the length of a partial last batch, if there is one.
    Batches(Option<usize>),
    /// It does not, and is shown as base64 (with `allow_invalid`).
    Base64,
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
            check_only: Cell::new(false),
            checked: RefCell::new(Vec::new()),
        }
    }

    /// From now on, only check the fields (and collect warnings), writing `null` for each:
    /// a dry run that finds whether a message can be shown. Writing again afterwards does
    /// not check those fields again.
    pub fn check_only(&self, on: bool) {
        self.check_only.set(on);
    }

    /// The round-trip warnings collected so far, emptied.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    /// Why fields were kept as base64 (with `allow_invalid`), emptied.
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut self.refused.borrow_mut())
    }

    /// Checks one records field, or finds it checked already.
    fn check(&self, records: &Bytes) -> Result<Checked, String> {
        let key = (records.as_ptr() as usize, records.len());
        if let Some((_, checked)) = self.checked.borrow().iter().find(|(k, _)| *k == key) {
            return Ok(*checked);
        }
        let checked = match check_records(records.clone(), self.options) {
            Ok(checked) => {
                self.warnings.borrow_mut().extend(checked.warnings);
                Checked::Batches(checked.truncated_tail)
            }
            Err(e) if self.allow_invalid => {
                self.refused.borrow_mut().push(format!(
                    "a records field of {} bytes does not decode ({e}); shown as base64",
                    records.len()
                ));
                Checked::Base64
            }
            Err(e) => return Err(e.to_string()),
        };
        self.checked.borrow_mut().push((key, checked));
        Ok(checked)
    }
}

impl RecordsJson for ExpandRecords {
    fn write_records_json(&self, records: &Bytes, out: &mut dyn JsonSink) -> Result<(), String> {
        let checked = self.check(records)?;
        if self.check_only.get() {
            out.null();
            return Ok(());
        }
        let tail = match checked {
            Checked::Base64 => {
                out.bytes(records);
                return Ok(());
            }
            Checked::Batches(tail) => tail,
        };
        // The reads the check made, so they succeed again.
        out.begin_array();
        write_batches(records, self.options, out).map_err(|e| e.to_string())?;
        if let Some(tail) = tail.map(|tail| records.slice(records.len() - tail..)) {
            out.begin_object();
            out.key(TRUNCATED_TAIL_KEY);
            out.bytes(&tail);
            out.key("note");
            out.str(&format!(
                "the last {} bytes are an incomplete batch (a Fetch response may end with \
                 one); kept as base64",
                tail.len()
            ));
            out.end_object();
        }
        out.end_array();
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
