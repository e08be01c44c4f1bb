//! Legacy message sets (magic 0 and 1): plain messages and compressed wrappers.
//!
//! An entry is `offset: int64, size: int32` and a message: `crc: uint32` (CRC-32 of the rest),
//! `magic: int8`, `attributes: int8`, `timestamp: int64` (magic 1 only), then key and value
//! as int32-length-prefixed nullable bytes. A compressed message (a wrapper) holds a whole
//! inner message set, compressed, as its value: for magic 1 the inner offsets are relative
//! and the wrapper's offset is the absolute offset of the last inner message.

use super::compression::{compress, decompress};
use super::{
    BatchHeader, Compression, Record, RecordBatch, RecordsError, RecordsErrorKind, TimestampType,
    COMPRESSION_MASK, LOG_OVERHEAD, TIMESTAMP_TYPE_BIT,
};
use crate::wire::DecodeLimits;
use bytes::Bytes;

const CRC_OFFSET: usize = LOG_OVERHEAD;
const MAGIC_OFFSET: usize = LOG_OVERHEAD + 4;

/// The smallest message size (after the log overhead) of a magic: crc, magic, attributes,
/// timestamp (magic 1), key and value lengths.
pub(super) const fn min_message_size(magic: i8) -> i32 {
    if magic == 0 {
        14
    } else {
        22
    }
}

/// Reads the header of an entry whose size was checked to be at least
/// [`min_message_size`].
pub(super) fn parse_header(bytes: &[u8]) -> BatchHeader {
    let magic = bytes[MAGIC_OFFSET] as i8;
    let attributes = bytes[MAGIC_OFFSET + 1] as i8;
    let timestamp = if magic == 0 {
        -1
    } else {
        i64::from_be_bytes(bytes[18..26].try_into().expect("checked size"))
    };
    BatchHeader {
        base_offset: i64::from_be_bytes(bytes[0..8].try_into().expect("checked size")),
        batch_length: i32::from_be_bytes(bytes[8..12].try_into().expect("checked size")),
        partition_leader_epoch: -1,
        magic,
        crc: u32::from_be_bytes(bytes[12..16].try_into().expect("checked size")),
        attributes: i16::from(attributes),
        last_offset_delta: 0,
        base_timestamp: timestamp,
        max_timestamp: timestamp,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records_count: if i16::from(attributes) & COMPRESSION_MASK == 0 {
            1
        } else {
            -1
        },
    }
}

pub(super) fn verify_crc(bytes: &[u8], header: &BatchHeader) -> Result<(), RecordsError> {
    let computed = crc32fast::hash(&bytes[MAGIC_OFFSET..]);
    if computed != header.crc {
        return Err(RecordsError::new(
            RecordsErrorKind::CrcMismatch {
                stored: header.crc,
                computed,
            },
            CRC_OFFSET,
        ));
    }
    Ok(())
}

/// A message's fields after the log overhead.
struct Message {
    crc: u32,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<Bytes>,
    value: Option<Bytes>,
}

fn read_i32(bytes: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// An int32-length-prefixed nullable byte string at `*at` in `entry`.
fn read_nullable(
    entry: &Bytes,
    at: &mut usize,
    what: &'static str,
) -> Result<Option<Bytes>, RecordsError> {
    let start = *at;
    let Some(len) = read_i32(entry, start) else {
        return Err(truncated(start + 4, entry.len()));
    };
    *at += 4;
    if len < 0 {
        return if len == -1 {
            Ok(None)
        } else {
            Err(RecordsError::new(
                RecordsErrorKind::InvalidLength {
                    what,
                    value: i64::from(len),
                },
                start,
            ))
        };
    }
    let end = *at + len as usize;
    if end > entry.len() {
        return Err(truncated(end, entry.len()));
    }
    let value = entry.slice(*at..end);
    *at = end;
    Ok(Some(value))
}

fn truncated(needed: usize, remaining: usize) -> RecordsError {
    RecordsError::new(
        RecordsErrorKind::Truncated {
            needed: needed as u64,
            remaining,
        },
        remaining,
    )
}

/// Reads the message of one entry (`entry`: the whole entry, log overhead included, its size
/// already checked against the input and the magic's minimum).
fn read_message(entry: &Bytes, verify: bool) -> Result<Message, RecordsError> {
    let header = parse_header(entry);
    if verify {
        verify_crc(entry, &header)?;
    }
    let mut at = MAGIC_OFFSET + 2 + if header.magic == 0 { 0 } else { 8 };
    let key = read_nullable(entry, &mut at, "key length")?;
    let value = read_nullable(entry, &mut at, "value length")?;
    if at != entry.len() {
        return Err(RecordsError::new(
            RecordsErrorKind::TrailingBytes(entry.len() - at),
            at,
        ));
    }
    Ok(Message {
        crc: header.crc,
        magic: header.magic,
        attributes: header.attributes as i8,
        timestamp: header.base_timestamp,
        key,
        value,
    })
}

/// Decodes one entry (`bytes`: the whole entry) into a batch; a wrapper's inner messages
/// become its records.
pub(super) fn decode(
    bytes: &Bytes,
    header: &BatchHeader,
    limits: &DecodeLimits,
    verify: bool,
) -> Result<RecordBatch, RecordsError> {
    let in_batch = |e: RecordsError| e.in_batch(header.base_offset);
    let message = read_message(bytes, verify).map_err(in_batch)?;
    let id = (i16::from(message.attributes) & COMPRESSION_MASK) as u8;
    let compression = Compression::from_id(id).ok_or_else(|| {
        in_batch(RecordsError::new(
            RecordsErrorKind::UnknownCompression(id),
            MAGIC_OFFSET + 1,
        ))
    })?;
    let timestamp_type =
        if message.magic > 0 && i16::from(message.attributes) & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        };
    let mut batch = RecordBatch {
        base_offset: header.base_offset,
        partition_leader_epoch: -1,
        magic: message.magic,
        crc: message.crc,
        compression,
        timestamp_type,
        is_transactional: false,
        is_control: false,
        has_delete_horizon: false,
        last_offset_delta: 0,
        base_timestamp: message.timestamp,
        max_timestamp: message.timestamp,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records: Vec::new(),
    };
    if compression == Compression::None {
        batch.records.push(Record {
            offset: header.base_offset,
            timestamp: message.timestamp,
            attributes: message.attributes,
            key: message.key,
            value: message.value,
            headers: Vec::new(),
        });
        return Ok(batch);
    }
    if compression == Compression::Zstd {
        return Err(in_batch(RecordsError::new(
            RecordsErrorKind::CompressionNeedsMagic2 {
                compression,
                magic: message.magic,
            },
            MAGIC_OFFSET + 1,
        )));
    }
    let value_at = bytes.len() - message.value.as_ref().map_or(0, |v| v.len());
    let Some(value) = message.value else {
        return Err(in_batch(RecordsError::new(
            RecordsErrorKind::InvalidWrapper("a compressed message without a value"),
            value_at,
        )));
    };
    let data = decompress(
        compression,
        message.magic,
        &value,
        limits.max_decompressed_batch_size,
    )
    .map_err(|kind| in_batch(RecordsError::new(kind, value_at)))?;
    let data = Bytes::from(data);
    let inner = read_inner(&data, message.magic, verify)
        .map_err(|e| in_batch(e).placed(0, Some(value_at)))?;
    // Magic 1: inner offsets are relative; the wrapper holds the last one's absolute offset.
    let shift = match (message.magic, inner.last()) {
        (1, Some(last)) => header.base_offset.wrapping_sub(last.offset),
        _ => 0,
    };
    batch.records = inner;
    for record in &mut batch.records {
        record.offset = record.offset.wrapping_add(shift);
    }
    let (first, last) = match (batch.records.first(), batch.records.last()) {
        (Some(first), Some(last)) => (first, last),
        _ => {
            return Err(in_batch(RecordsError::new(
                RecordsErrorKind::InvalidWrapper("a compressed message with no inner messages"),
                value_at,
            )))
        }
    };
    batch.base_offset = first.offset;
    batch.base_timestamp = first.timestamp;
    batch.last_offset_delta = i32::try_from(last.offset.wrapping_sub(first.offset)).unwrap_or(-1);
    Ok(batch)
}

/// The inner messages of a decompressed wrapper, with their offsets as written.
fn read_inner(data: &Bytes, magic: i8, verify: bool) -> Result<Vec<Record>, RecordsError> {
    let mut records = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let index = records.len();
        let rest = &data[pos..];
        let at_record = |e: RecordsError| e.at_record(index).placed(pos, None);
        if rest.len() < LOG_OVERHEAD {
            return Err(at_record(truncated(LOG_OVERHEAD, rest.len())));
        }
        let size = i32::from_be_bytes(rest[8..12].try_into().expect("12 bytes"));
        if size < min_message_size(magic) {
            return Err(at_record(RecordsError::new(
                RecordsErrorKind::InvalidBatchLength {
                    length: size,
                    minimum: min_message_size(magic),
                    magic,
                },
                8,
            )));
        }
        let end = LOG_OVERHEAD + size as usize;
        if end > rest.len() {
            return Err(at_record(truncated(end, rest.len())));
        }
        let entry = data.slice(pos..pos + end);
        if entry[MAGIC_OFFSET] as i8 != magic {
            return Err(at_record(RecordsError::new(
                RecordsErrorKind::InvalidWrapper("an inner message of another magic"),
                MAGIC_OFFSET,
            )));
        }
        let message = read_message(&entry, verify).map_err(at_record)?;
        if i16::from(message.attributes) & COMPRESSION_MASK != 0 {
            return Err(at_record(RecordsError::new(
                RecordsErrorKind::InvalidWrapper("a compressed inner message"),
                MAGIC_OFFSET + 1,
            )));
        }
        records.push(Record {
            offset: i64::from_be_bytes(entry[0..8].try_into().expect("checked size")),
            timestamp: message.timestamp,
            attributes: message.attributes,
            key: message.key,
            value: message.value,
            headers: Vec::new(),
        });
        pos += end;
    }
    Ok(records)
}

fn unwritable(what: impl Into<String>) -> RecordsError {
    RecordsError::new(RecordsErrorKind::Unwritable(what.into()), 0)
}

fn nullable_len(value: Option<&Bytes>) -> usize {
    4 + value.map_or(0, |v| v.len())
}

fn entry_len(magic: i8, key: Option<&Bytes>, value: Option<&Bytes>) -> usize {
    LOG_OVERHEAD + min_message_size(magic) as usize - 8 + nullable_len(key) + nullable_len(value)
}

/// Bytes the batch takes uncompressed (for a wrapper: the wrapper around the plain inner set).
pub(super) fn encoded_len(batch: &RecordBatch) -> usize {
    let inner: usize = batch
        .records
        .iter()
        .map(|r| entry_len(batch.magic, r.key.as_ref(), r.value.as_ref()))
        .sum();
    if batch.compression == Compression::None {
        inner
    } else {
        LOG_OVERHEAD + min_message_size(batch.magic) as usize + inner
    }
}

fn put_nullable(out: &mut Vec<u8>, value: Option<&[u8]>) -> Result<(), RecordsError> {
    match value {
        Some(value) => {
            let len = i32::try_from(value.len())
                .map_err(|_| unwritable(format!("a key or value of {} bytes", value.len())))?;
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(value);
        }
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
    }
    Ok(())
}

fn write_entry(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<(), RecordsError> {
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // size and CRC, patched below
    out.push(magic as u8);
    out.push(attributes as u8);
    if magic > 0 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    put_nullable(out, key)?;
    put_nullable(out, value)?;
    let size = i32::try_from(out.len() - start - LOG_OVERHEAD)
        .map_err(|_| unwritable("a message over 2 GiB"))?;
    out[start + 8..start + 12].copy_from_slice(&size.to_be_bytes());
    let crc = crc32fast::hash(&out[start + MAGIC_OFFSET..]);
    out[start + CRC_OFFSET..start + MAGIC_OFFSET].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

/// Writes a magic 0/1 batch: one message per record, or one wrapper when compressed.
pub(super) fn encode(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let start = out.len();
    encode_inner(batch, out).map_err(|e| {
        out.truncate(start);
        e.in_batch(batch.base_offset)
    })
}

fn encode_inner(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let magic = batch.magic;
    if !(0..=1).contains(&magic) {
        return Err(RecordsError::new(
            RecordsErrorKind::UnsupportedMagic(magic),
            0,
        ));
    }
    if batch.is_transactional
        || batch.is_control
        || batch.has_delete_horizon
        || batch.producer_id != -1
        || batch.producer_epoch != -1
        || batch.base_sequence != -1
        || batch.partition_leader_epoch != -1
    {
        return Err(unwritable(
            "producer state, transactions, control records, delete horizons and leader \
             epochs need magic 2",
        ));
    }
    if let Some(index) = batch.records.iter().position(|r| !r.headers.is_empty()) {
        return Err(unwritable("record headers need magic 2").at_record(index));
    }
    if batch.compression == Compression::Zstd {
        return Err(RecordsError::new(
            RecordsErrorKind::CompressionNeedsMagic2 {
                compression: batch.compression,
                magic,
            },
            0,
        ));
    }
    let timestamp_bit = if magic > 0 && batch.timestamp_type == TimestampType::LogAppendTime {
        TIMESTAMP_TYPE_BIT as i8
    } else {
        0
    };
    if batch.compression == Compression::None {
        for record in &batch.records {
            // The batch decides codec and (magic 1) timestamp type; other bits of the
            // record's byte (unused by Kafka) are kept, so what was read is written back.
            let decided = if magic > 0 { 0x0f } else { 0x07 };
            let attributes = (record.attributes & !decided) | timestamp_bit;
            write_entry(
                out,
                record.offset,
                magic,
                attributes,
                record.timestamp,
                record.key.as_deref(),
                record.value.as_deref(),
            )?;
        }
        return Ok(());
    }
    let mut inner = Vec::with_capacity(encoded_len(batch));
    for record in &batch.records {
        let offset = if magic == 1 {
            record.offset.wrapping_sub(batch.base_offset)
        } else {
            record.offset
        };
        write_entry(
            &mut inner,
            offset,
            magic,
            record.attributes & !(COMPRESSION_MASK as i8),
            record.timestamp,
            record.key.as_deref(),
            record.value.as_deref(),
        )?;
    }
    let mut value = Vec::new();
    compress(batch.compression, magic, &inner, &mut value)
        .map_err(|kind| RecordsError::new(kind, 0))?;
    let last = batch.records.last().map_or(batch.base_offset, |r| r.offset);
    write_entry(
        out,
        last,
        magic,
        batch.compression.id() as i8 | timestamp_bit,
        batch.max_timestamp,
        None,
        Some(&value),
    )
}
