//! Legacy message sets (magic 0 and 1): plain messages and compressed wrappers.
//!
//! An entry is `offset: int64, size: int32` and a message: `crc: uint32` (CRC-32 of the rest),
//! `magic: int8`, `attributes: int8`, `timestamp: int64` (magic 1 only), then key and value
//! as int32-length-prefixed nullable bytes. A compressed message (a wrapper) holds a whole
//! inner message set, compressed, as its value: for magic 1 the inner offsets are relative
//! and the wrapper's offset is the absolute offset of the last inner message.

use super::budget::Budget;
use super::compression::{compress, compressed_difference, decompress};
use super::{
    first_difference, BatchHeader, Compression, Record, RecordBatch, RecordsError,
    RecordsErrorKind, Reencoding, TimestampType, COMPRESSION_MASK, LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
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

/// A message's fields after the log overhead; its key and value as ranges of the bytes it
/// was read from.
struct Message {
    crc: u32,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<(usize, usize)>,
    value: Option<(usize, usize)>,
}

fn read_i32(bytes: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// An int32-length-prefixed nullable byte string at `*at` in `entry`, where it is.
fn read_nullable(
    entry: &[u8],
    at: &mut usize,
    what: &'static str,
) -> Result<Option<(usize, usize)>, RecordsError> {
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
    let value = (*at, end);
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
fn read_message(entry: &[u8], verify: bool) -> Result<Message, RecordsError> {
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

/// One message of a message set: its offset as written, and where it ends.
struct Entry {
    offset: i64,
    message: Message,
    end: usize,
}

/// The entry at `pos` of a message set whose messages must all be plain and of `magic` (a
/// wrapper's inner set, or a plain message itself); errors are positioned from `pos`.
fn read_entry(data: &[u8], pos: usize, magic: i8, verify: bool) -> Result<Entry, RecordsError> {
    let rest = &data[pos..];
    if rest.len() < LOG_OVERHEAD {
        return Err(truncated(LOG_OVERHEAD, rest.len()));
    }
    let size = i32::from_be_bytes(rest[8..12].try_into().expect("12 bytes"));
    if size < min_message_size(magic) {
        return Err(RecordsError::new(
            RecordsErrorKind::InvalidBatchLength {
                length: size,
                minimum: min_message_size(magic),
                magic,
            },
            8,
        ));
    }
    let end = LOG_OVERHEAD + size as usize;
    if end > rest.len() {
        return Err(truncated(end, rest.len()));
    }
    let entry = &rest[..end];
    if entry[MAGIC_OFFSET] as i8 != magic {
        return Err(RecordsError::new(
            RecordsErrorKind::InvalidWrapper("an inner message of another magic"),
            MAGIC_OFFSET,
        ));
    }
    let mut message = read_message(entry, verify)?;
    if i16::from(message.attributes) & COMPRESSION_MASK != 0 {
        return Err(RecordsError::new(
            RecordsErrorKind::InvalidWrapper("a compressed inner message"),
            MAGIC_OFFSET + 1,
        ));
    }
    let shift = |range: Option<(usize, usize)>| range.map(|(start, end)| (pos + start, pos + end));
    message.key = shift(message.key);
    message.value = shift(message.value);
    Ok(Entry {
        offset: i64::from_be_bytes(entry[0..8].try_into().expect("checked size")),
        message,
        end: pos + end,
    })
}

/// The messages of a legacy entry, read one at a time: the entry itself when it is plain,
/// the inner messages of its one decompressed buffer when it is a wrapper.
pub(super) struct LegacyRecords {
    data: Bytes,
    pos: usize,
    index: usize,
    count: usize,
    magic: i8,
    /// Added to each inner offset (magic 1: the wrapper's offset minus the last inner one).
    shift: i64,
    /// For errors: the entry's base offset, where its value starts (a wrapper), where it
    /// is in the input.
    base_offset: i64,
    value_at: Option<usize>,
    batch_start: usize,
}

/// One message as [`LegacyRecords`] reads it: key and value as ranges of its data.
pub(super) struct LegacyMessage {
    pub offset: i64,
    pub timestamp: i64,
    pub attributes: i8,
    pub key: Option<(usize, usize)>,
    pub value: Option<(usize, usize)>,
    /// Where the whole entry is.
    pub entry: (usize, usize),
}

impl LegacyRecords {
    pub(super) fn remaining(&self) -> usize {
        self.count - self.index
    }

    /// The bytes the messages are read from (a wrapper's decompressed inner set).
    pub(super) fn data(&self) -> &Bytes {
        &self.data
    }

    /// The next message, in place. Every message was checked when the entry was opened, so
    /// this reads without checking the CRC again.
    pub(super) fn next_message(&mut self) -> Option<Result<LegacyMessage, RecordsError>> {
        if self.index == self.count {
            return None;
        }
        let entry = match read_entry(&self.data, self.pos, self.magic, false) {
            Ok(entry) => entry,
            Err(e) => {
                let e = e.at_record(self.index).placed(self.pos, None);
                self.index = self.count;
                let e = match self.value_at {
                    Some(value_at) => e.in_batch(self.base_offset).placed(0, Some(value_at)),
                    None => e.in_batch(self.base_offset),
                };
                return Some(Err(e.placed(self.batch_start, None)));
            }
        };
        let start = std::mem::replace(&mut self.pos, entry.end);
        self.index += 1;
        Some(Ok(LegacyMessage {
            entry: (start, entry.end),
            offset: entry.offset.wrapping_add(self.shift),
            timestamp: entry.message.timestamp,
            attributes: entry.message.attributes,
            key: entry.message.key,
            value: entry.message.value,
        }))
    }

    pub(super) fn next(&mut self) -> Option<Result<Record, RecordsError>> {
        let message = match self.next_message()? {
            Ok(message) => message,
            Err(e) => return Some(Err(e)),
        };
        let slice = |range: Option<(usize, usize)>| range.map(|(s, e)| self.data.slice(s..e));
        Some(Ok(Record {
            offset: message.offset,
            timestamp: message.timestamp,
            attributes: message.attributes,
            key: slice(message.key),
            value: slice(message.value),
            headers: Vec::new(),
        }))
    }
}

/// What opening an entry found: its fields as a batch without records, its messages, and
/// for a wrapper where its value (the compressed inner set) starts.
pub(super) struct Opened {
    pub fields: RecordBatch,
    pub records: LegacyRecords,
    pub value_at: Option<usize>,
    /// The entry's own message attributes and key, as read (a wrapper's are written anew).
    attributes: i8,
    key: Option<(usize, usize)>,
}

/// Opens one entry (`bytes`: the whole entry, at `batch_start` in the input): its message
/// is read and checked; a wrapper's value is decompressed within the cap and every inner
/// message checked, one at a time, so that the messages can then be read lazily with the
/// errors an eager read would have given, in the same order.
pub(super) fn open(
    bytes: &Bytes,
    header: &BatchHeader,
    limits: &DecodeLimits,
    verify: bool,
    batch_start: usize,
) -> Result<Opened, RecordsError> {
    let placed = |e: RecordsError| e.placed(batch_start, None);
    let in_batch = |e: RecordsError| placed(e.in_batch(header.base_offset));
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
    let mut fields = RecordBatch {
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
    let mut records = LegacyRecords {
        data: bytes.clone(),
        pos: 0,
        index: 0,
        count: 1,
        magic: message.magic,
        shift: 0,
        base_offset: header.base_offset,
        value_at: None,
        batch_start,
    };
    if compression == Compression::None {
        return Ok(Opened {
            fields,
            records,
            value_at: None,
            attributes: message.attributes,
            key: message.key,
        });
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
    let value_at = message.value.map_or(bytes.len(), |(start, _)| start);
    let Some((start, end)) = message.value else {
        return Err(in_batch(RecordsError::new(
            RecordsErrorKind::InvalidWrapper("a compressed message without a value"),
            value_at,
        )));
    };
    let data = decompress(
        compression,
        message.magic,
        &bytes[start..end],
        limits.max_decompressed_batch_size,
    )
    .map_err(|kind| in_batch(RecordsError::new(kind, value_at)))?;
    let data = Bytes::from(data);
    // Every inner message, checked in order as an eager read would; nothing is kept but
    // the first and last offsets, the first timestamp and the count.
    let mut pos = 0;
    let mut count = 0;
    let mut first: Option<(i64, i64)> = None;
    let mut last = 0;
    while pos < data.len() {
        let entry = read_entry(&data, pos, message.magic, verify).map_err(|e| {
            placed(
                e.at_record(count)
                    .placed(pos, None)
                    .in_batch(header.base_offset)
                    .placed(0, Some(value_at)),
            )
        })?;
        first.get_or_insert((entry.offset, entry.message.timestamp));
        last = entry.offset;
        count += 1;
        pos = entry.end;
    }
    let Some((first_offset, first_timestamp)) = first else {
        return Err(in_batch(RecordsError::new(
            RecordsErrorKind::InvalidWrapper("a compressed message with no inner messages"),
            value_at,
        )));
    };
    // Magic 1: inner offsets are relative; the wrapper holds the last one's absolute offset.
    let shift = if message.magic == 1 {
        header.base_offset.wrapping_sub(last)
    } else {
        0
    };
    let first_offset = first_offset.wrapping_add(shift);
    fields.base_offset = first_offset;
    fields.base_timestamp = first_timestamp;
    fields.last_offset_delta =
        i32::try_from(last.wrapping_add(shift).wrapping_sub(first_offset)).unwrap_or(-1);
    records.data = data;
    records.count = count;
    records.shift = shift;
    records.value_at = Some(value_at);
    Ok(Opened {
        fields,
        records,
        value_at: Some(value_at),
        attributes: message.attributes,
        key: message.key,
    })
}

/// Decodes one entry (`bytes`: the whole entry) into a batch; a wrapper's inner messages
/// become its records, charged to `budget` before they are reserved.
pub(super) fn decode(
    bytes: &Bytes,
    header: &BatchHeader,
    limits: &DecodeLimits,
    verify: bool,
    batch_start: usize,
    budget: &mut Budget,
) -> Result<RecordBatch, RecordsError> {
    let Opened {
        mut fields,
        mut records,
        value_at,
        ..
    } = open(bytes, header, limits, verify, batch_start)?;
    budget.add_records(records.data.len());
    budget
        .charge(
            records.count.saturating_mul(std::mem::size_of::<Record>()),
            value_at.unwrap_or(0),
        )
        .map_err(|e| e.in_batch(header.base_offset).placed(batch_start, None))?;
    fields.records.reserve_exact(records.count);
    while let Some(record) = records.next() {
        fields.records.push(record?);
    }
    Ok(fields)
}

/// How writing the entry again, as [`RecordBatch::encode_to_vec`] does, compares with its
/// bytes; the records are read (and checked) one at a time.
pub(super) fn reencoding(
    bytes: &Bytes,
    header: &BatchHeader,
    limits: &DecodeLimits,
    verify: bool,
    batch_start: usize,
) -> Result<Reencoding, RecordsError> {
    let Opened {
        fields,
        mut records,
        value_at,
        attributes,
        key,
    } = open(bytes, header, limits, verify, batch_start)?;
    let at = |offset: usize| batch_start + offset;
    let crc = || {
        let computed = crc32fast::hash(&bytes[MAGIC_OFFSET..]);
        (computed != header.crc).then(|| Reencoding::NotCanonical {
            at: at(CRC_OFFSET
                + first_difference(&computed.to_be_bytes(), &header.crc.to_be_bytes())
                    .unwrap_or(0)),
            decompressed_at: None,
        })
    };
    let Some(value_at) = value_at else {
        // A plain message is written back as read, its CRC recomputed.
        return Ok(crc().filter(|_| !verify).unwrap_or(Reencoding::Same));
    };
    // The wrapper is written anew: the last inner message's offset, the codec and
    // (magic 1) timestamp-type bits, the timestamp, no key, the compressed inner set.
    let magic = fields.magic;
    let mut last_offset = fields.base_offset;
    let mut inner_difference = None;
    while let Some(message) = records.next_message() {
        let message = message?;
        last_offset = message.offset;
        if inner_difference.is_some() {
            continue;
        }
        // An inner message is written back as read but for its offset (magic 1: relative
        // to the first) and its CRC.
        let (start, end) = message.entry;
        let written = if magic == 1 {
            message.offset.wrapping_sub(fields.base_offset)
        } else {
            message.offset
        };
        let read = &records.data()[start..start + 8];
        inner_difference = first_difference(&written.to_be_bytes(), read).map(|i| start + i);
        if inner_difference.is_none() && !verify {
            let entry = &records.data()[start..end];
            let stored = u32::from_be_bytes(
                entry[CRC_OFFSET..MAGIC_OFFSET]
                    .try_into()
                    .expect("checked size"),
            );
            let computed = crc32fast::hash(&entry[MAGIC_OFFSET..]);
            inner_difference = first_difference(&computed.to_be_bytes(), &stored.to_be_bytes())
                .map(|i| start + CRC_OFFSET + i);
        }
    }
    let timestamp_bit = if magic > 0 && fields.timestamp_type == TimestampType::LogAppendTime {
        TIMESTAMP_TYPE_BIT as i8
    } else {
        0
    };
    let written_attributes = fields.compression.id() as i8 | timestamp_bit;
    let key_at = MAGIC_OFFSET + 2 + if magic == 0 { 0 } else { 8 };
    let wrapper_difference = first_difference(&last_offset.to_be_bytes(), &bytes[..8])
        .or_else(|| (written_attributes != attributes).then_some(MAGIC_OFFSET + 1))
        .or_else(|| {
            key.map(|(start, end)| {
                let len = (end - start) as i32;
                key_at + first_difference(&(-1i32).to_be_bytes(), &len.to_be_bytes()).unwrap_or(0)
            })
        });
    if let Some(offset) = wrapper_difference {
        return Ok(Reencoding::NotCanonical {
            at: at(offset),
            decompressed_at: None,
        });
    }
    if let Some(offset) = inner_difference {
        return Ok(Reencoding::NotCanonical {
            at: at(value_at),
            decompressed_at: Some(offset),
        });
    }
    let value = &bytes[value_at..];
    match compressed_difference(fields.compression, magic, records.data(), value) {
        Ok(Some(offset)) => Ok(Reencoding::Recompressed {
            at: at(value_at + offset),
        }),
        Ok(None) => Ok(crc().filter(|_| !verify).unwrap_or(Reencoding::Same)),
        Err(kind) => Ok(Reencoding::Unwritable(
            RecordsError::new(kind, 0).in_batch(header.base_offset),
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::super::reader::BatchReader;
    use super::super::ReadOptions;
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// The eager reader this module had before its messages were read lazily, kept as the
    /// oracle of `lazy_reading_gives_the_records_and_errors_of_the_eager_one`.
    mod eager {
        use super::super::super::compression::decompress;
        use super::super::super::{
            BatchHeader, Compression, Record, RecordBatch, RecordsError, RecordsErrorKind,
            TimestampType, COMPRESSION_MASK, LOG_OVERHEAD, TIMESTAMP_TYPE_BIT,
        };
        use super::super::{min_message_size, parse_header, verify_crc, MAGIC_OFFSET};
        use crate::wire::DecodeLimits;
        use bytes::Bytes;

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
                        RecordsErrorKind::InvalidWrapper(
                            "a compressed message with no inner messages",
                        ),
                        value_at,
                    )))
                }
            };
            batch.base_offset = first.offset;
            batch.base_timestamp = first.timestamp;
            batch.last_offset_delta =
                i32::try_from(last.offset.wrapping_sub(first.offset)).unwrap_or(-1);
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
    }

    fn bytes(rng: &mut SmallRng) -> Option<Bytes> {
        match rng.gen_range(0..8) {
            0 => None,
            1 => Some(Bytes::new()),
            2 => Some(Bytes::from(vec![b'x'; rng.gen_range(100..600)])),
            _ => Some(Bytes::from(
                (0..rng.gen_range(1..20))
                    .map(|_| rng.gen())
                    .collect::<Vec<u8>>(),
            )),
        }
    }

    /// A legacy entry of random messages, then maybe damaged: a byte of the wrapper or of its
    /// inner set changed, the inner set cut or extended, inner CRCs fixed or not, the
    /// wrapper's CRC fixed (so that the damage is what the reader meets).
    fn entry(rng: &mut SmallRng) -> Vec<u8> {
        let magic = rng.gen_range(0..2);
        let codecs: Vec<Compression> = Compression::ALL[..4]
            .iter()
            .copied()
            .filter(|c| c.is_enabled())
            .collect();
        let compression = codecs[rng.gen_range(0..codecs.len())];
        let mut builder = super::super::RecordBatchBuilder::new(compression)
            .magic(magic)
            .base_offset(rng.gen_range(0..1000));
        if magic == 1 && rng.gen_bool(0.3) {
            builder = builder.log_append_time(1_700_000_000_999);
        }
        for i in 0..rng.gen_range(1..8) {
            builder.append(1_700_000_000_000 + i, bytes(rng), bytes(rng));
        }
        let mut out = Vec::new();
        builder.build().encode_to_vec(&mut out).unwrap();
        if rng.gen_bool(0.3) {
            return out;
        }
        let header = parse_header(&out);
        let fix_crc = |entry: &mut Vec<u8>| {
            let crc = crc32fast::hash(&entry[MAGIC_OFFSET..]);
            entry[CRC_OFFSET..MAGIC_OFFSET].copy_from_slice(&crc.to_be_bytes());
        };
        if compression == Compression::None || rng.gen_bool(0.3) {
            let at = rng.gen_range(0..out.len());
            out[at] = rng.gen();
            if rng.gen_bool(0.8) {
                fix_crc(&mut out);
            }
            return out;
        }
        let message = read_message(&out, true).unwrap();
        let (start, end) = message.value.unwrap();
        let mut inner = decompress(compression, magic, &out[start..end], usize::MAX).unwrap();
        match rng.gen_range(0..4) {
            0 => inner.truncate(rng.gen_range(0..inner.len())),
            1 => inner.extend((0..rng.gen_range(1..30)).map(|_| rng.gen::<u8>())),
            _ => {
                let at = rng.gen_range(0..inner.len());
                inner[at] = rng.gen();
                if rng.gen_bool(0.7) {
                    // Fix every inner CRC that can be found, so the damage itself shows.
                    let mut pos = 0;
                    while pos + LOG_OVERHEAD <= inner.len() {
                        let size = i32::from_be_bytes(inner[pos + 8..pos + 12].try_into().unwrap());
                        let Ok(size) = usize::try_from(size) else {
                            break;
                        };
                        let end = pos + LOG_OVERHEAD + size;
                        if size < 14 || end > inner.len() {
                            break;
                        }
                        let crc = crc32fast::hash(&inner[pos + MAGIC_OFFSET..end]);
                        inner[pos + CRC_OFFSET..pos + MAGIC_OFFSET]
                            .copy_from_slice(&crc.to_be_bytes());
                        pos = end;
                    }
                }
            }
        }
        let mut value = Vec::new();
        compress(compression, magic, &inner, &mut value).unwrap();
        let mut rebuilt = Vec::new();
        write_entry(
            &mut rebuilt,
            header.base_offset,
            magic,
            header.attributes as i8,
            header.base_timestamp,
            None,
            Some(&value),
        )
        .unwrap();
        rebuilt
    }

    /// Lazy reading gives the records and the errors (kind, byte offset, batch, record
    /// index, decompressed offset) the eager reader gave, whether the records are iterated
    /// or decoded whole, with CRCs checked or not; and `reencoding` says "same" exactly
    /// when encoding the decoded batch gives the entry's bytes back.
    #[test]
    fn lazy_reading_gives_the_records_and_errors_of_the_eager_one() {
        let mut rng = SmallRng::seed_from_u64(20);
        let (mut accepted, mut refused, mut differing) = (0, 0, 0);
        for _ in 0..1500 {
            let mut field = vec![0u8; 0];
            // Another entry before it, so that positions in the field are tested too.
            if rng.gen_bool(0.5) {
                let mut plain = super::super::RecordBatchBuilder::new(Compression::None).magic(1);
                plain.append(5, None, bytes(&mut rng));
                plain.build().encode_to_vec(&mut field).unwrap();
            }
            let position = field.len();
            field.extend(entry(&mut rng));
            let field = Bytes::from(field);
            for verify_crc in [true, false] {
                let options = ReadOptions {
                    verify_crc,
                    ..ReadOptions::default()
                };
                let Some(raw) = BatchReader::with_options(field.clone(), options)
                    .nth(usize::from(position > 0))
                else {
                    continue;
                };
                let Ok(raw) = raw else { continue };
                let expected = eager::decode(
                    &raw.as_bytes().clone(),
                    raw.header(),
                    &DecodeLimits::default(),
                    verify_crc,
                )
                .map_err(|e| e.placed(position, None));
                let lazy: Result<Vec<Record>, RecordsError> =
                    raw.records().and_then(|records| records.collect());
                let decoded = raw.decode();
                match &expected {
                    Ok(batch) => {
                        accepted += 1;
                        assert_eq!(lazy.as_ref(), Ok(&batch.records));
                        assert_eq!(decoded.as_ref(), Ok(batch));
                        // The re-encoding check agrees with encoding the decoded batch.
                        let again = batch.encode_to_bytes().unwrap();
                        match raw.reencoding().unwrap() {
                            Reencoding::Same => assert_eq!(&again, raw.as_bytes()),
                            Reencoding::NotCanonical { at, .. }
                            | Reencoding::Recompressed { at } => {
                                assert_ne!(&again, raw.as_bytes());
                                assert!((position..field.len()).contains(&at), "{at}");
                                differing += 1;
                            }
                            other => panic!("{other:?}"),
                        }
                    }
                    Err(error) => {
                        refused += 1;
                        assert_eq!(lazy.as_ref().err(), Some(error));
                        assert_eq!(decoded.as_ref().err(), Some(error));
                    }
                }
            }
        }
        assert!(
            accepted > 500 && refused > 500 && differing > 100,
            "{accepted} {refused} {differing}"
        );
    }
}
