//! RecordBatch v2 (magic 2): header, records, encoding.

use super::budget::Budget;
use super::compression::{compress, compressed_difference, decompress};
use super::legacy::LegacyRecords;
use super::{
    first_difference, BatchHeader, Compression, Header, Record, RecordBatch, RecordsError,
    RecordsErrorKind, Reencoding, TimestampType, COMPRESSION_MASK, CONTROL_BIT, DELETE_HORIZON_BIT,
    LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT,
};
use crate::wire::{varint_len, varlong_len, DecodeLimits};
use crate::DecodeErrorKind;
use crate::Utf8Bytes;
use bytes::buf::UninitSlice;
use bytes::Bytes;

/// Offset of the CRC field in a v2 batch; the CRC covers everything after it.
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;
const MAX_TIMESTAMP_OFFSET: usize = 35;
/// The smallest batch length of magic 2: the header after the length field.
pub(super) const MIN_BATCH_LENGTH: i32 = (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32;
/// The fewest bytes one record takes: length, attributes, timestamp and offset deltas, key
/// and value lengths, header count.
const MIN_RECORD_SIZE: usize = 7;

fn be<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes[at..at + N]
        .try_into()
        .expect("length checked by the caller")
}

/// Reads a v2 header from the first [`RECORD_BATCH_OVERHEAD`] bytes of `bytes`.
pub(super) fn parse_header(bytes: &[u8]) -> BatchHeader {
    BatchHeader {
        base_offset: i64::from_be_bytes(be(bytes, 0)),
        batch_length: i32::from_be_bytes(be(bytes, 8)),
        partition_leader_epoch: i32::from_be_bytes(be(bytes, 12)),
        magic: bytes[16] as i8,
        crc: u32::from_be_bytes(be(bytes, CRC_OFFSET)),
        attributes: i16::from_be_bytes(be(bytes, ATTRIBUTES_OFFSET)),
        last_offset_delta: i32::from_be_bytes(be(bytes, 23)),
        base_timestamp: i64::from_be_bytes(be(bytes, 27)),
        max_timestamp: i64::from_be_bytes(be(bytes, MAX_TIMESTAMP_OFFSET)),
        producer_id: i64::from_be_bytes(be(bytes, 43)),
        producer_epoch: i16::from_be_bytes(be(bytes, 51)),
        base_sequence: i32::from_be_bytes(be(bytes, 53)),
        records_count: i32::from_be_bytes(be(bytes, 57)),
    }
}

/// A copy of the v2 batch `bytes` stamped with a log append time, as Kafka's log validator
/// stamps a batch appended to a topic whose `message.timestamp.type` is LogAppendTime: the
/// timestamp type attribute set, the max timestamp `append_time_ms`, the CRC recomputed;
/// the records (and their deltas from the base timestamp) as they were, since a reader takes
/// every record's timestamp from the max timestamp then.
pub(super) fn with_log_append_time(bytes: &[u8], append_time_ms: i64) -> Bytes {
    let mut out = bytes.to_vec();
    let attributes = i16::from_be_bytes(be(&out, ATTRIBUTES_OFFSET)) | super::TIMESTAMP_TYPE_BIT;
    out[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2].copy_from_slice(&attributes.to_be_bytes());
    out[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8]
        .copy_from_slice(&append_time_ms.to_be_bytes());
    let crc = crc32c::crc32c(&out[ATTRIBUTES_OFFSET..]);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(out)
}

/// Checks the CRC-32C of a whole v2 batch (`bytes` from its base offset to its end).
pub(super) fn verify_crc(bytes: &[u8], header: &BatchHeader) -> Result<(), RecordsError> {
    let computed = crc32c::crc32c(&bytes[ATTRIBUTES_OFFSET..]);
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

/// The records of a v2 batch, decompressed if need be, with the offset of the records area
/// (for error positions) and whether they were decompressed.
fn records_data(
    bytes: &Bytes,
    header: &BatchHeader,
    limits: &DecodeLimits,
) -> Result<(Bytes, bool), RecordsError> {
    let area = bytes.slice(RECORD_BATCH_OVERHEAD..);
    let id = (header.attributes & COMPRESSION_MASK) as u8;
    let compression = Compression::from_id(id).ok_or_else(|| {
        RecordsError::new(RecordsErrorKind::UnknownCompression(id), ATTRIBUTES_OFFSET)
    })?;
    if compression == Compression::None {
        return Ok((area, false));
    }
    let data = decompress(compression, 2, &area, limits.max_decompressed_batch_size)
        .map_err(|kind| RecordsError::new(kind, RECORD_BATCH_OVERHEAD))?;
    Ok((Bytes::from(data), true))
}

/// Iterates the records of a batch lazily: each record is read when asked for.
///
/// Keys, values and header values are slices of the batch (uncompressed) or of its one
/// decompressed buffer; a legacy wrapper's inner messages are read one at a time from its
/// decompressed buffer too. After the last record of a magic 2 batch it checks that no bytes
/// are left, and yields that error if there are. Made by
/// [`RawBatch::records`](super::RawBatch::records).
pub struct RecordIter(pub(super) Inner);

pub(super) enum Inner {
    V2(V2Records),
    Legacy(LegacyRecords),
}

pub(super) struct V2Records {
    data: Bytes,
    pos: usize,
    index: usize,
    count: usize,
    base_offset: i64,
    base_timestamp: i64,
    /// Where the records start in the batch, if they were decompressed (errors then point
    /// into the decompressed bytes); `None` for records read in place.
    decompressed_at: Option<usize>,
    batch_start: usize,
    done: bool,
    /// What the records' headers may reserve: unlimited when they are handed out one at a
    /// time, the decode's budget when they are collected.
    budget: Budget,
}

/// One record of a magic 2 batch read in place and checked, nothing allocated: its fields,
/// and where its key, value and headers are in the records' bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct RecordParts {
    /// Where the record starts (its length) and ends in the records' bytes.
    pub start: usize,
    pub end: usize,
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<(usize, usize)>,
    pub value: Option<(usize, usize)>,
    pub header_count: usize,
    /// Where the headers start.
    pub headers_at: usize,
}

/// A record as the JSON form shows it: its fields, and its headers read one at a time
/// (from the bytes when the record was read in place, so that a record of millions of
/// headers holds none of them in memory).
#[cfg(feature = "json")]
pub(super) struct RecordView<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub attributes: i8,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: HeaderViews<'a>,
}

/// Headers read one at a time: a decoded record's, or from a record's bytes.
pub(super) enum HeaderViews<'a> {
    #[cfg(feature = "json")]
    Decoded(std::slice::Iter<'a, Header>),
    /// `count` headers from `pos` in `data`, already checked by [`read_record_parts`].
    InPlace {
        data: &'a [u8],
        pos: usize,
        count: usize,
    },
}

impl<'a> Iterator for HeaderViews<'a> {
    type Item = Result<(&'a str, Option<&'a [u8]>), RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            #[cfg(feature = "json")]
            HeaderViews::Decoded(headers) => headers
                .next()
                .map(|h| Ok((h.key.as_str(), h.value.as_deref()))),
            HeaderViews::InPlace { data, pos, count } => {
                if *count == 0 {
                    return None;
                }
                *count -= 1;
                // Checked when the record was read: these reads cannot fail, but say so
                // rather than panic if they ever did.
                let at = *pos;
                let key = varint_at(data, at).and_then(|(len, key_at)| {
                    let end = key_at.checked_add(usize::try_from(len).ok()?)?;
                    Some((std::str::from_utf8(data.get(key_at..end)?).ok()?, end))
                });
                let header = key.and_then(|(key, value_at)| {
                    let (len, value_at) = varint_at(data, value_at)?;
                    if len == -1 {
                        return Some(((key, None), value_at));
                    }
                    let end = value_at.checked_add(usize::try_from(len).ok()?)?;
                    Some(((key, Some(data.get(value_at..end)?)), end))
                });
                match header {
                    Some((header, next)) => {
                        *pos = next;
                        Some(Ok(header))
                    }
                    None => {
                        *count = 0;
                        Some(Err(RecordsError::new(
                            RecordsErrorKind::InvalidHeaderKey,
                            at,
                        )))
                    }
                }
            }
        }
    }
}

#[cfg(feature = "json")]
impl RecordView<'_> {
    /// A decoded record's view.
    pub(super) fn of(record: &Record) -> RecordView<'_> {
        RecordView {
            offset: record.offset,
            timestamp: record.timestamp,
            attributes: record.attributes,
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            headers: HeaderViews::Decoded(record.headers.iter()),
        }
    }
}

impl RecordIter {
    /// Records not read yet, as announced by the header (magic 2) or counted when the
    /// wrapper was opened (magic 0/1).
    pub fn remaining(&self) -> usize {
        match &self.0 {
            Inner::V2(r) => r.count - r.index,
            Inner::Legacy(r) => r.remaining(),
        }
    }

    /// The next record, read in place without allocating (the same records and errors as
    /// [`Iterator::next`]).
    #[cfg(feature = "json")]
    pub(super) fn next_view(&mut self) -> Option<Result<RecordView<'_>, RecordsError>> {
        match &mut self.0 {
            Inner::V2(records) => {
                let parts = match records.next_parts()? {
                    Ok(parts) => parts,
                    Err(e) => return Some(Err(e)),
                };
                let data: &[u8] = &records.data;
                let range = |r: Option<(usize, usize)>| r.map(|(start, end)| &data[start..end]);
                Some(Ok(RecordView {
                    offset: records
                        .base_offset
                        .wrapping_add(i64::from(parts.offset_delta)),
                    timestamp: records.base_timestamp.wrapping_add(parts.timestamp_delta),
                    attributes: parts.attributes,
                    key: range(parts.key),
                    value: range(parts.value),
                    headers: HeaderViews::InPlace {
                        data: &data[..parts.end],
                        pos: parts.headers_at,
                        count: parts.header_count,
                    },
                }))
            }
            Inner::Legacy(records) => {
                let message = match records.next_message()? {
                    Ok(message) => message,
                    Err(e) => return Some(Err(e)),
                };
                let data: &[u8] = records.data();
                let range = |r: Option<(usize, usize)>| r.map(|(start, end)| &data[start..end]);
                Some(Ok(RecordView {
                    offset: message.offset,
                    timestamp: message.timestamp,
                    attributes: message.attributes,
                    key: range(message.key),
                    value: range(message.value),
                    headers: HeaderViews::Decoded([].iter()),
                }))
            }
        }
    }
}

impl Iterator for RecordIter {
    type Item = Result<Record, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Inner::V2(records) => records.next(),
            Inner::Legacy(records) => records.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Inner::V2(r) if r.done => (0, Some(0)),
            // One more item (an error) may follow the announced records.
            Inner::V2(r) => (0, Some(r.count - r.index + 1)),
            Inner::Legacy(r) => (0, Some(r.remaining() + 1)),
        }
    }
}

impl V2Records {
    fn fail(&mut self, error: RecordsError) -> Option<Result<Record, RecordsError>> {
        self.done = true;
        Some(Err(error.placed(self.batch_start, self.decompressed_at)))
    }

    /// The records' bytes (decompressed for a compressed batch).
    pub(super) fn data(&self) -> &Bytes {
        &self.data
    }

    /// The next record when it is well formed; `None` when there is none or it needs a
    /// closer look ([`V2Records::next_checked`] then reads it again and names the error).
    #[inline(always)]
    fn next_fast(&mut self) -> Option<Record> {
        if self.done || self.index == self.count {
            return None;
        }
        let (record, end) = read_record_fast(
            &self.data,
            self.pos,
            self.base_offset,
            self.base_timestamp,
            self.budget.left(),
        )?;
        // `read_record_fast` kept the headers within what was left.
        self.budget
            .take(record.headers.len() * std::mem::size_of::<Header>());
        self.pos = end;
        self.index += 1;
        Some(record)
    }

    fn next(&mut self) -> Option<Result<Record, RecordsError>> {
        match self.next_fast() {
            Some(record) => Some(Ok(record)),
            None => self.next_checked(),
        }
    }

    /// After the last record: the error for bytes left over, if there are any.
    fn end(&mut self) -> Option<RecordsError> {
        self.done = true;
        let left = self.data.len() - self.pos;
        (left != 0).then(|| {
            RecordsError::new(RecordsErrorKind::TrailingBytes(left), self.pos)
                .in_batch(self.base_offset)
                .placed(self.batch_start, self.decompressed_at)
        })
    }

    /// The next record read field by field with every check, or the error that ends the
    /// records (one that does not fill its length, bytes after the last one).
    #[cold]
    fn next_checked(&mut self) -> Option<Result<Record, RecordsError>> {
        if self.done {
            return None;
        }
        if self.index == self.count {
            return self.end().map(Err);
        }
        let mut cursor = Cursor {
            data: &self.data,
            pos: self.pos,
        };
        match read_record(
            &mut cursor,
            self.base_offset,
            self.base_timestamp,
            &mut self.budget,
        ) {
            Ok(record) => {
                self.pos = cursor.pos;
                self.index += 1;
                Some(Ok(record))
            }
            Err(error) => {
                let error = error.in_batch(self.base_offset).at_record(self.index);
                self.fail(error)
            }
        }
    }

    /// The next record read in place (the checked reader, allocating nothing), or the
    /// error that ends the records: the same records and errors as [`V2Records::next`].
    pub(super) fn next_parts(&mut self) -> Option<Result<RecordParts, RecordsError>> {
        if self.done {
            return None;
        }
        if self.index == self.count {
            return self.end().map(Err);
        }
        let mut cursor = Cursor {
            data: &self.data,
            pos: self.pos,
        };
        match read_record_parts(&mut cursor, None) {
            Ok(parts) => {
                self.pos = cursor.pos;
                self.index += 1;
                Some(Ok(parts))
            }
            Err(error) => {
                let error = error.in_batch(self.base_offset).at_record(self.index);
                self.done = true;
                Some(Err(error.placed(self.batch_start, self.decompressed_at)))
            }
        }
    }
}

/// The records of a v2 batch (`bytes`: the whole batch; `batch_start`: its position in the
/// input, for errors), read with `budget`. The caller has checked the CRC if wanted.
pub(super) fn open(
    bytes: &Bytes,
    header: &BatchHeader,
    batch_start: usize,
    limits: &DecodeLimits,
    budget: Budget,
) -> Result<V2Records, RecordsError> {
    let in_batch = |e: RecordsError| e.in_batch(header.base_offset).placed(batch_start, None);
    let (data, decompressed) = records_data(bytes, header, limits).map_err(in_batch)?;
    let count = usize::try_from(header.records_count).map_err(|_| {
        in_batch(RecordsError::new(
            RecordsErrorKind::InvalidRecordCount(header.records_count),
            57,
        ))
    })?;
    // Every record takes at least a few bytes: a count the bytes cannot hold is refused
    // before anything is reserved for it.
    if count > data.len() / MIN_RECORD_SIZE + usize::from(data.len() % MIN_RECORD_SIZE != 0) {
        return Err(in_batch(RecordsError::new(
            RecordsErrorKind::RecordCountExceedsInput {
                declared: header.records_count,
                remaining: data.len(),
            },
            57,
        )));
    }
    Ok(V2Records {
        data,
        pos: 0,
        index: 0,
        count,
        base_offset: header.base_offset,
        base_timestamp: header.base_timestamp,
        decompressed_at: decompressed.then_some(RECORD_BATCH_OVERHEAD),
        batch_start: batch_start
            + if decompressed {
                0
            } else {
                RECORD_BATCH_OVERHEAD
            },
        done: false,
        budget,
    })
}

/// The records of a v2 batch, handed out one at a time.
pub(super) fn records(
    bytes: &Bytes,
    header: &BatchHeader,
    batch_start: usize,
    limits: &DecodeLimits,
) -> Result<RecordIter, RecordsError> {
    open(bytes, header, batch_start, limits, Budget::unlimited())
        .map(|records| RecordIter(Inner::V2(records)))
}

/// The header fields of a v2 batch as a [`RecordBatch`] without records.
pub(super) fn fields(header: &BatchHeader) -> Result<RecordBatch, RecordsError> {
    let id = (header.attributes & COMPRESSION_MASK) as u8;
    let compression = Compression::from_id(id).ok_or_else(|| {
        RecordsError::new(RecordsErrorKind::UnknownCompression(id), ATTRIBUTES_OFFSET)
    })?;
    Ok(RecordBatch {
        base_offset: header.base_offset,
        partition_leader_epoch: header.partition_leader_epoch,
        magic: header.magic,
        crc: header.crc,
        compression,
        timestamp_type: if header.attributes & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        },
        is_transactional: header.attributes & TRANSACTIONAL_BIT != 0,
        is_control: header.attributes & CONTROL_BIT != 0,
        has_delete_horizon: header.attributes & DELETE_HORIZON_BIT != 0,
        last_offset_delta: header.last_offset_delta,
        base_timestamp: header.base_timestamp,
        max_timestamp: header.max_timestamp,
        producer_id: header.producer_id,
        producer_epoch: header.producer_epoch,
        base_sequence: header.base_sequence,
        records: Vec::new(),
    })
}

/// Decodes a whole v2 batch (CRC already checked by the caller if wanted), charging the
/// records, headers included, to `budget` before reserving them.
pub(super) fn decode(
    bytes: &Bytes,
    header: &BatchHeader,
    batch_start: usize,
    limits: &DecodeLimits,
    budget: &mut Budget,
) -> Result<RecordBatch, RecordsError> {
    let mut v2 = open(bytes, header, batch_start, limits, *budget)?;
    v2.budget.add_records(v2.data.len());
    // `open` bounded the count by the bytes there are, so this reserves nothing a lying
    // header could inflate; the budget bounds it by what the caller allows.
    v2.budget
        .charge(v2.count.saturating_mul(std::mem::size_of::<Record>()), 57)
        .map_err(|e| e.in_batch(header.base_offset).placed(batch_start, None))?;
    let mut records = Vec::with_capacity(v2.count);
    loop {
        if let Some(record) = v2.next_fast() {
            records.push(record);
            continue;
        }
        match v2.next_checked() {
            Some(record) => records.push(record?),
            None => break,
        }
    }
    *budget = v2.budget;
    let mut batch = fields(header).expect("open() refused unknown codecs");
    batch.records = records;
    Ok(batch)
}

/// Where writing the record `parts` again, as [`RecordBatch::encode_to_vec`] does, would
/// first differ from its bytes in `data`, if it would: a varint that is not in its shortest
/// form (or carries bits Kafka drops), and then the record's length, which follows from the
/// rest. Every other byte is written back as read.
pub(super) fn record_difference(data: &[u8], parts: &RecordParts) -> Option<usize> {
    let record = &data[..parts.end];
    let nullable_len = |range: Option<(usize, usize)>| {
        range.map_or(1, |(start, end)| {
            varint_len((end - start) as i32) + end - start
        })
    };
    // The body Kafka would write: every varint in its shortest form.
    let mut body = 1
        + varlong_len(parts.timestamp_delta)
        + varint_len(parts.offset_delta)
        + nullable_len(parts.key)
        + nullable_len(parts.value)
        + varint_len(parts.header_count as i32);
    let mut headers = HeaderViews::InPlace {
        data: record,
        pos: parts.headers_at,
        count: parts.header_count,
    };
    for header in &mut headers {
        let (key, value) = header.ok()?;
        body += varint_len(key.len() as i32)
            + key.len()
            + value.map_or(1, |v| varint_len(v.len() as i32) + v.len());
    }
    // Until a first difference, the bytes written and the bytes read are at the same place.
    let mut pos = parts.start;
    let same = |value: u64, pos: &mut usize| -> Option<usize> {
        let mut canonical = [0u8; 10];
        let mut len = 0;
        let mut v = value;
        while v >= 0x80 {
            canonical[len] = v as u8 | 0x80;
            v >>= 7;
            len += 1;
        }
        canonical[len] = v as u8;
        len += 1;
        let read = &record[*pos..];
        match canonical[..len].iter().zip(read).position(|(a, b)| a != b) {
            Some(i) => Some(*pos + i),
            None if read.len() < len => Some(*pos + read.len()),
            None => {
                *pos += len;
                None
            }
        }
    };
    let zigzag = |v: i32| u64::from(((v << 1) ^ (v >> 31)) as u32);
    let zigzag_long = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    if let Some(at) = same(zigzag(body as i32), &mut pos) {
        return Some(at);
    }
    pos += 1; // attributes, written as read
    if let Some(at) = same(zigzag_long(parts.timestamp_delta), &mut pos) {
        return Some(at);
    }
    if let Some(at) = same(zigzag(parts.offset_delta), &mut pos) {
        return Some(at);
    }
    for range in [parts.key, parts.value] {
        let len = range.map_or(-1, |(start, end)| (end - start) as i32);
        if let Some(at) = same(zigzag(len), &mut pos) {
            return Some(at);
        }
        pos += len.max(0) as usize;
    }
    if let Some(at) = same(zigzag(parts.header_count as i32), &mut pos) {
        return Some(at);
    }
    for _ in 0..parts.header_count {
        for _ in 0..2 {
            let (len, _) = varint_at(record, pos)?;
            if let Some(at) = same(zigzag(len), &mut pos) {
                return Some(at);
            }
            pos += len.max(0) as usize;
        }
    }
    None
}

/// How writing a v2 batch again compares with its bytes (the caller checked the CRC if
/// `verified`); every record is read and checked in place, one at a time.
pub(super) fn reencoding(
    bytes: &Bytes,
    header: &BatchHeader,
    batch_start: usize,
    limits: &DecodeLimits,
    verified: bool,
) -> Result<Reencoding, RecordsError> {
    let mut records = open(bytes, header, batch_start, limits, Budget::unlimited())?;
    let fields = fields(header).expect("open() refused unknown codecs");
    let mut record_difference_at = None;
    while let Some(parts) = records.next_parts() {
        let parts = parts?;
        if record_difference_at.is_none() {
            record_difference_at = record_difference(records.data(), &parts);
        }
    }
    let at = |offset: usize| batch_start + offset;
    // Attribute bits Kafka does not define are not written again.
    let attributes = fields.attributes().to_be_bytes();
    if let Some(i) = first_difference(&attributes, &header.attributes.to_be_bytes()) {
        return Ok(Reencoding::NotCanonical {
            at: at(ATTRIBUTES_OFFSET + i),
            decompressed_at: None,
        });
    }
    let compressed = fields.compression != Compression::None;
    if let Some(offset) = record_difference_at {
        return Ok(if compressed {
            Reencoding::NotCanonical {
                at: at(RECORD_BATCH_OVERHEAD),
                decompressed_at: Some(offset),
            }
        } else {
            Reencoding::NotCanonical {
                at: at(RECORD_BATCH_OVERHEAD + offset),
                decompressed_at: None,
            }
        });
    }
    if compressed {
        let area = &bytes[RECORD_BATCH_OVERHEAD..];
        match compressed_difference(fields.compression, 2, records.data(), area) {
            Ok(None) => {}
            Ok(Some(offset)) => {
                return Ok(Reencoding::Recompressed {
                    at: at(RECORD_BATCH_OVERHEAD + offset),
                })
            }
            Err(kind) => {
                return Ok(Reencoding::Unwritable(
                    RecordsError::new(kind, 0).in_batch(header.base_offset),
                ))
            }
        }
    }
    if !verified {
        let computed = crc32c::crc32c(&bytes[ATTRIBUTES_OFFSET..]);
        if let Some(i) = first_difference(&computed.to_be_bytes(), &header.crc.to_be_bytes()) {
            return Ok(Reencoding::NotCanonical {
                at: at(CRC_OFFSET + i),
                decompressed_at: None,
            });
        }
    }
    Ok(Reencoding::Same)
}

fn invalid_length(what: &'static str, value: i64, at: usize) -> RecordsError {
    RecordsError::new(RecordsErrorKind::InvalidLength { what, value }, at)
}

/// A cursor over a batch's (possibly decompressed) records, for the record fields: zigzag
/// varints with a one-byte fast path, and keys and values as shared slices of `data`.
///
/// The varints follow Kafka's `ByteUtils` like the wire decoder's: at most 5 bytes (varlong:
/// 10), bits above the width in the last byte dropped.
pub(super) struct Cursor<'a> {
    data: &'a Bytes,
    pos: usize,
}

#[cold]
fn eof(at: usize, needed: usize, remaining: usize) -> RecordsError {
    RecordsError::new(
        RecordsErrorKind::Malformed(DecodeErrorKind::UnexpectedEof { needed, remaining }),
        at,
    )
}

impl Cursor<'_> {
    fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    #[inline]
    fn i8(&mut self) -> Result<i8, RecordsError> {
        let byte = *self.data.get(self.pos).ok_or_else(|| eof(self.pos, 1, 0))?;
        self.pos += 1;
        Ok(byte as i8)
    }

    /// An unsigned varint of at most `max_bytes` bytes.
    #[inline]
    fn unsigned(&mut self, max_bytes: usize) -> Result<u64, RecordsError> {
        let start = self.pos;
        // One and two bytes cover nearly every length, delta and count in a record.
        if let Some(&[first, second]) = self.data.get(start..start + 2) {
            if first < 0x80 {
                self.pos += 1;
                return Ok(u64::from(first));
            }
            if second < 0x80 {
                self.pos += 2;
                return Ok(u64::from(first & 0x7f) | u64::from(second) << 7);
            }
        } else if let Some(&byte) = self.data.get(start) {
            if byte < 0x80 {
                self.pos += 1;
                return Ok(u64::from(byte));
            }
        }
        self.unsigned_long(max_bytes)
    }

    #[inline(never)]
    fn unsigned_long(&mut self, max_bytes: usize) -> Result<u64, RecordsError> {
        let start = self.pos;
        let mut value = 0u64;
        for i in 0..max_bytes {
            let Some(&byte) = self.data.get(start + i) else {
                return Err(eof(start, i + 1, self.data.len() - start));
            };
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.pos = start + i + 1;
                return Ok(value);
            }
        }
        Err(RecordsError::new(
            RecordsErrorKind::Malformed(DecodeErrorKind::VarintTooLong { max_bytes }),
            start,
        ))
    }

    #[inline]
    fn varint(&mut self) -> Result<i32, RecordsError> {
        // Kafka keeps the low 32 bits of a five-byte varint.
        let raw = self.unsigned(5)? as u32;
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    #[inline]
    fn varlong(&mut self) -> Result<i64, RecordsError> {
        let raw = self.unsigned(10)?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// Where the next `len` bytes are, once they are known to be there.
    #[inline]
    fn range(&mut self, len: usize, at: usize) -> Result<(usize, usize), RecordsError> {
        if len > self.remaining() {
            return Err(RecordsError::new(
                RecordsErrorKind::Malformed(DecodeErrorKind::LengthExceedsInput {
                    declared: len as u64,
                    remaining: self.remaining(),
                }),
                at,
            ));
        }
        let range = (self.pos, self.pos + len);
        self.pos += len;
        Ok(range)
    }

    /// A varint-length-prefixed nullable byte string, where it is: -1 is null.
    #[inline]
    fn nullable_range(
        &mut self,
        what: &'static str,
    ) -> Result<Option<(usize, usize)>, RecordsError> {
        let at = self.pos;
        let len = self.varint()?;
        if len < 0 {
            return if len == -1 {
                Ok(None)
            } else {
                Err(invalid_length(what, i64::from(len), at))
            };
        }
        self.range(len as usize, at).map(Some)
    }
}

/// An unsigned varint of at most `max_bytes` bytes at `pos`, and the position after it;
/// `None` when it runs past `bytes` or is too long. The same value as [`Cursor::unsigned`]
/// gives (bits above 64 dropped; the caller keeps the low 32 of a varint).
#[inline(always)]
fn unsigned_at(bytes: &[u8], pos: usize, max_bytes: usize) -> Option<(u64, usize)> {
    let first = *bytes.get(pos)?;
    if first < 0x80 {
        return Some((u64::from(first), pos + 1));
    }
    let second = *bytes.get(pos + 1)?;
    if second < 0x80 {
        return Some((u64::from(first & 0x7f) | u64::from(second) << 7, pos + 2));
    }
    unsigned_tail(bytes, pos, max_bytes)
}

#[inline(never)]
fn unsigned_tail(bytes: &[u8], pos: usize, max_bytes: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for i in 0..max_bytes {
        let byte = *bytes.get(pos + i)?;
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            return Some((value, pos + i + 1));
        }
    }
    None
}

#[inline(always)]
fn varint_at(bytes: &[u8], pos: usize) -> Option<(i32, usize)> {
    let (raw, pos) = unsigned_at(bytes, pos, 5)?;
    let raw = raw as u32;
    Some((((raw >> 1) as i32) ^ -((raw & 1) as i32), pos))
}

/// A nullable byte string of a record (`bytes` ends where the record does), sliced from
/// `data` without copying; `None` for a length other than -1 that is negative or too long.
#[inline(always)]
fn nullable_at(data: &Bytes, bytes: &[u8], pos: usize) -> Option<(Option<Bytes>, usize)> {
    let (len, pos) = varint_at(bytes, pos)?;
    if len == -1 {
        return Some((None, pos));
    }
    let end = pos.checked_add(usize::try_from(len).ok()?)?;
    if end > bytes.len() {
        return None;
    }
    Some((Some(data.slice(pos..end)), end))
}

/// One record at `pos` of `data` when it is well formed, and where it ends.
///
/// This is the common case without error bookkeeping: every field is bounded by the
/// record's own length, and anything unusual (a field past the record's end, a negative
/// length, a header key that is not UTF-8, fields that do not fill the length) gives
/// `None`. The caller then reads the record again with [`read_record`], which decides and
/// names the error; on input both accept, both give the same record.
#[inline(always)]
fn read_record_fast(
    data: &Bytes,
    pos: usize,
    base_offset: i64,
    base_timestamp: i64,
    header_budget: usize,
) -> Option<(Record, usize)> {
    let all: &[u8] = data;
    let (length, pos) = varint_at(all, pos)?;
    let end = pos.checked_add(usize::try_from(length).ok()?)?;
    let bytes = all.get(..end)?;
    let attributes = *bytes.get(pos)? as i8;
    let (timestamp_raw, pos) = unsigned_at(bytes, pos + 1, 10)?;
    let timestamp_delta = ((timestamp_raw >> 1) as i64) ^ -((timestamp_raw & 1) as i64);
    let (offset_delta, pos) = varint_at(bytes, pos)?;
    let (key, pos) = nullable_at(data, bytes, pos)?;
    let (value, pos) = nullable_at(data, bytes, pos)?;
    let (count, mut pos) = varint_at(bytes, pos)?;
    let count = usize::try_from(count).ok()?;
    let mut headers = Vec::new();
    if count > 0 {
        // Each header takes at least two bytes: the record's length bounds the reservation,
        // and the budget what the caller allows (the checked reader names the error).
        if count > (end - pos) / 2
            || count.saturating_mul(std::mem::size_of::<Header>()) > header_budget
        {
            return None;
        }
        headers.reserve_exact(count);
        for _ in 0..count {
            let (key_len, key_at) = varint_at(bytes, pos)?;
            let key_end = key_at.checked_add(usize::try_from(key_len).ok()?)?;
            if key_end > end {
                return None;
            }
            let key = Utf8Bytes::from_utf8(data.slice(key_at..key_end)).ok()?;
            let (value, next) = nullable_at(data, bytes, key_end)?;
            headers.push(Header { key, value });
            pos = next;
        }
    }
    if pos != end {
        return None;
    }
    let record = Record {
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: base_timestamp.wrapping_add(timestamp_delta),
        attributes,
        key,
        value,
        headers,
    };
    Some((record, end))
}

/// One record; errors are positioned in the cursor's data. Its headers are charged to
/// `budget` before they are reserved.
#[inline]
pub(super) fn read_record(
    c: &mut Cursor<'_>,
    base_offset: i64,
    base_timestamp: i64,
    budget: &mut Budget,
) -> Result<Record, RecordsError> {
    let mut headers = Vec::new();
    let parts = read_record_parts(c, Some((&mut headers, budget)))?;
    let slice = |range: Option<(usize, usize)>| range.map(|(start, end)| c.data.slice(start..end));
    Ok(Record {
        offset: base_offset.wrapping_add(i64::from(parts.offset_delta)),
        timestamp: base_timestamp.wrapping_add(parts.timestamp_delta),
        attributes: parts.attributes,
        key: slice(parts.key),
        value: slice(parts.value),
        headers,
    })
}

/// One record read with every check, its errors positioned in the cursor's data. With
/// `headers`, its headers are charged to the budget, then reserved and read into the `Vec`;
/// without, they are only checked, and nothing is allocated.
pub(super) fn read_record_parts(
    c: &mut Cursor<'_>,
    mut headers: Option<(&mut Vec<Header>, &mut Budget)>,
) -> Result<RecordParts, RecordsError> {
    let start = c.pos;
    let length = c.varint()?;
    let length = usize::try_from(length)
        .map_err(|_| invalid_length("record length", i64::from(length), start))?;
    if length > c.remaining() {
        return Err(RecordsError::new(
            RecordsErrorKind::Malformed(DecodeErrorKind::LengthExceedsInput {
                declared: length as u64,
                remaining: c.remaining(),
            }),
            start,
        ));
    }
    let body = c.pos;
    let attributes = c.i8()?;
    let timestamp_delta = c.varlong()?;
    let offset_delta = c.varint()?;
    let key = c.nullable_range("key length")?;
    let value = c.nullable_range("value length")?;
    let header_count_at = c.pos;
    let count = c.varint()?;
    let count = usize::try_from(count)
        .map_err(|_| invalid_length("header count", i64::from(count), header_count_at))?;
    let headers_at = c.pos;
    if count > 0 {
        // Each header takes at least two bytes (key and value lengths).
        if count > c.remaining() / 2 {
            return Err(RecordsError::new(
                RecordsErrorKind::Malformed(DecodeErrorKind::LengthExceedsInput {
                    declared: count as u64,
                    remaining: c.remaining(),
                }),
                header_count_at,
            ));
        }
        if let Some((headers, budget)) = &mut headers {
            budget.charge(
                count.saturating_mul(std::mem::size_of::<Header>()),
                header_count_at,
            )?;
            headers.reserve_exact(count);
        }
        for _ in 0..count {
            let key_at = c.pos;
            let key_len = c.varint()?;
            let key_len = usize::try_from(key_len)
                .map_err(|_| invalid_length("header key length", i64::from(key_len), key_at))?;
            let (key_start, key_end) = c.range(key_len, key_at)?;
            std::str::from_utf8(&c.data[key_start..key_end])
                .map_err(|_| RecordsError::new(RecordsErrorKind::InvalidHeaderKey, key_at))?;
            let value = c.nullable_range("header value length")?;
            if let Some((headers, _)) = &mut headers {
                // UTF-8 was checked just above.
                let key = Utf8Bytes::from_utf8(c.data.slice(key_start..key_end))
                    .map_err(|_| RecordsError::new(RecordsErrorKind::InvalidHeaderKey, key_at))?;
                let value = value.map(|(start, end)| c.data.slice(start..end));
                headers.push(Header { key, value });
            }
        }
    }
    let used = c.pos - body;
    if used != length {
        return Err(RecordsError::new(
            RecordsErrorKind::RecordSizeMismatch {
                declared: length,
                used,
            },
            start,
        ));
    }
    Ok(RecordParts {
        start,
        end: c.pos,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        header_count: count,
        headers_at,
    })
}

fn unwritable(what: impl Into<String>) -> RecordsError {
    RecordsError::new(RecordsErrorKind::Unwritable(what.into()), 0)
}

#[inline]
fn nullable_len(value: Option<&[u8]>) -> usize {
    match value {
        Some(value) => varint_len(value.len() as i32) + value.len(),
        None => 1,
    }
}

fn check_len(len: usize, what: &str) -> Result<i32, RecordsError> {
    i32::try_from(len).map_err(|_| unwritable(format!("{what} of {len} bytes")))
}

/// Bytes of a record after its length prefix.
#[inline(always)]
fn record_body_len(record: &Record, offset_delta: i32, timestamp_delta: i64) -> usize {
    let mut len = 1
        + varlong_len(timestamp_delta)
        + varint_len(offset_delta)
        + nullable_len(record.key.as_deref())
        + nullable_len(record.value.as_deref())
        + varint_len(record.headers.len() as i32);
    for header in &record.headers {
        len += varint_len(header.key.len() as i32)
            + header.key.len()
            + nullable_len(header.value.as_deref());
    }
    len
}

fn deltas(record: &Record, batch: &RecordBatch) -> Result<(i32, i64), RecordsError> {
    let offset_delta =
        i32::try_from(record.offset.wrapping_sub(batch.base_offset)).map_err(|_| {
            unwritable(format!(
                "record offset {} is too far from base offset {}",
                record.offset, batch.base_offset
            ))
        })?;
    Ok((
        offset_delta,
        record.timestamp.wrapping_sub(batch.base_timestamp),
    ))
}

/// Writes one record into the spare capacity of the output `Vec`, reserved to the record's
/// size beforehand: no byte is zero-filled first, and the position stays in a register (a
/// `Vec::push` per byte reloads and stores the length each time).
struct RecordWriter<'a> {
    buf: &'a mut UninitSlice,
    /// Bytes written so far: every byte of `buf[..pos]` has been written, in order.
    pos: usize,
}

impl RecordWriter<'_> {
    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.buf.write_byte(self.pos, byte);
        self.pos += 1;
    }

    #[inline(always)]
    fn unsigned(&mut self, mut value: u64) {
        // One and two bytes cover nearly every length, delta and count in a record.
        if value < 0x80 {
            return self.byte(value as u8);
        }
        if value < 0x4000 {
            self.byte(value as u8 | 0x80);
            return self.byte((value >> 7) as u8);
        }
        while value >= 0x80 {
            self.byte(value as u8 | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    #[inline(always)]
    fn varint(&mut self, value: i32) {
        self.unsigned(u64::from(((value << 1) ^ (value >> 31)) as u32));
    }

    #[inline(always)]
    fn varlong(&mut self, value: i64) {
        self.unsigned(((value << 1) ^ (value >> 63)) as u64);
    }

    #[inline(always)]
    fn slice(&mut self, bytes: &[u8]) {
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }

    #[inline(always)]
    fn nullable(&mut self, value: Option<&[u8]>) {
        match value {
            Some(value) => {
                self.varint(value.len() as i32);
                self.slice(value);
            }
            None => self.byte(1), // zigzag(-1)
        }
    }
}

/// Most bytes the records of one uncompressed batch can take: its length field (an `i32`)
/// counts the header after it too.
const MAX_RECORDS_LEN: usize = i32::MAX as usize - (RECORD_BATCH_OVERHEAD - LOG_OVERHEAD);

/// Appends one record to `out`: its exact size is known before it is written (its length
/// prefix needs it), so the buffer grows to that and the record is written straight into
/// the spare capacity.
#[inline(always)]
fn append_record(
    out: &mut Vec<u8>,
    record: &Record,
    batch: &RecordBatch,
) -> Result<(), RecordsError> {
    let (offset_delta, timestamp_delta) = deltas(record, batch)?;
    let body = record_body_len(record, offset_delta, timestamp_delta);
    // Every length inside the record is at most the record's, so this one check covers
    // keys, values and headers too.
    let body_len = check_len(body, "record")?;
    // A no-op but for one comparison while the capacity lasts, as it does for a buffer
    // sized by `RecordBatch::uncompressed_len`; amortized growth otherwise.
    out.reserve(varint_len(body_len) + body);
    let mut writer = RecordWriter {
        buf: UninitSlice::uninit(out.spare_capacity_mut()),
        pos: 0,
    };
    writer.varint(body_len);
    writer.byte(record.attributes as u8);
    writer.varlong(timestamp_delta);
    writer.varint(offset_delta);
    writer.nullable(record.key.as_deref());
    writer.nullable(record.value.as_deref());
    writer.varint(record.headers.len() as i32);
    for header in &record.headers {
        writer.varint(header.key.len() as i32);
        writer.slice(header.key.as_bytes());
        writer.nullable(header.value.as_deref());
    }
    let written = writer.pos;
    debug_assert_eq!(written, varint_len(body_len) + body);
    // SAFETY: `set_len` needs the new length within the capacity and every byte up to it
    // initialised. `writer.buf` is the spare capacity, `out[len..capacity]`, and every write
    // through it is bounds-checked (`UninitSlice::write_byte`, its indexing and
    // `copy_from_slice` panic rather than write outside it), so `written <= capacity - len`.
    // The writer writes sequentially and advances `pos` only past bytes it has just written,
    // so `out[len..len + written]` is initialised. (`tests::spare_capacity_is_written_not_leaked`
    // checks that stale bytes in the spare capacity never reach the output.)
    unsafe { out.set_len(out.len() + written) };
    Ok(())
}

/// Writes the records of `batch`, uncompressed, at the end of `out`, each straight into the
/// buffer's spare capacity. On error `out` is as it was.
fn write_plain_records(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let start = out.len();
    let result = batch
        .records
        .iter()
        .enumerate()
        .try_for_each(|(index, record)| {
            append_record(out, record, batch).map_err(|error| error.at_record(index))?;
            // Stop as soon as an uncompressed batch is too long to be written, rather than
            // after writing all of it. (A compressed batch may still fit once compressed;
            // `encode_v2` checks the final size.)
            if batch.compression == Compression::None && out.len() - start > MAX_RECORDS_LEN {
                return Err(unwritable(format!(
                    "a batch of more than {} bytes",
                    out.len() - start + RECORD_BATCH_OVERHEAD
                ))
                .at_record(index));
            }
            Ok(())
        });
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Bytes the batch takes uncompressed.
pub(super) fn encoded_len_v2(batch: &RecordBatch) -> usize {
    RECORD_BATCH_OVERHEAD
        + batch
            .records
            .iter()
            .map(|record| {
                let offset_delta = record.offset.wrapping_sub(batch.base_offset) as i32;
                let body = record_body_len(
                    record,
                    offset_delta,
                    record.timestamp.wrapping_sub(batch.base_timestamp),
                );
                varint_len(body as i32) + body
            })
            .sum::<usize>()
}

/// Writes a v2 batch at the end of `out`, with its length and CRC-32C.
pub(super) fn encode_v2(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    let count = check_len(batch.records.len(), "record count").map_err(|_| {
        unwritable(format!(
            "{} records do not fit a batch",
            batch.records.len()
        ))
    })?;
    if batch.magic != 2 {
        return Err(RecordsError::new(
            RecordsErrorKind::UnsupportedMagic(batch.magic),
            16,
        ));
    }
    let start = out.len();
    out.reserve(RECORD_BATCH_OVERHEAD);
    out.extend_from_slice(&batch.base_offset.to_be_bytes());
    out.extend_from_slice(&[0; 4]); // batch length, patched below
    out.extend_from_slice(&batch.partition_leader_epoch.to_be_bytes());
    out.push(2);
    out.extend_from_slice(&[0; 4]); // CRC, patched below
    out.extend_from_slice(&batch.attributes().to_be_bytes());
    out.extend_from_slice(&batch.last_offset_delta.to_be_bytes());
    out.extend_from_slice(&batch.base_timestamp.to_be_bytes());
    out.extend_from_slice(&batch.max_timestamp.to_be_bytes());
    out.extend_from_slice(&batch.producer_id.to_be_bytes());
    out.extend_from_slice(&batch.producer_epoch.to_be_bytes());
    out.extend_from_slice(&batch.base_sequence.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    let result = write_records(batch, out);
    if let Err(error) = result {
        out.truncate(start);
        return Err(error.in_batch(batch.base_offset));
    }
    let Ok(length) = i32::try_from(out.len() - start - LOG_OVERHEAD) else {
        let size = out.len() - start;
        out.truncate(start);
        return Err(unwritable(format!("a batch of {size} bytes")).in_batch(batch.base_offset));
    };
    out[start + 8..start + 12].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&out[start + ATTRIBUTES_OFFSET..]);
    out[start + CRC_OFFSET..start + ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
    Ok(())
}

fn write_records(batch: &RecordBatch, out: &mut Vec<u8>) -> Result<(), RecordsError> {
    if batch.compression == Compression::None {
        return write_plain_records(batch, out);
    }
    // Sized exactly, so the records are written without the buffer growing as they go.
    let mut raw = Vec::with_capacity(encoded_len_v2(batch) - RECORD_BATCH_OVERHEAD);
    write_plain_records(batch, &mut raw)?;
    compress(batch.compression, 2, &raw, out).map_err(|kind| RecordsError::new(kind, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn a_log_append_time_stamp_changes_the_type_max_timestamp_and_crc_only() {
        use crate::records::{BatchReader, Compression, RecordBatchBuilder, TimestampType};
        for compression in [Compression::None, Compression::Gzip] {
            let mut builder = RecordBatchBuilder::new(compression);
            builder.append(1_000, Some(Bytes::from_static(b"a")), None);
            builder.append(1_007, None, Some(Bytes::from_static(b"b")));
            let sent = builder.build().encode_to_bytes().unwrap();
            let raw = BatchReader::new(sent.clone()).next().unwrap().unwrap();
            let stamped = raw.with_log_append_time(1_700_000_000_123).unwrap();
            let read = BatchReader::new(stamped.clone()).next().unwrap().unwrap();
            read.verify_crc().expect("the CRC is recomputed");
            let header = read.header();
            assert_eq!(header.max_timestamp, 1_700_000_000_123);
            assert_eq!(header.base_timestamp, 1_000);
            let decoded = read.decode().unwrap();
            assert_eq!(decoded.timestamp_type, TimestampType::LogAppendTime);
            let before = raw.decode().unwrap();
            assert_eq!(
                decoded
                    .records
                    .iter()
                    .map(|r| (&r.key, &r.value))
                    .collect::<Vec<_>>(),
                before
                    .records
                    .iter()
                    .map(|r| (&r.key, &r.value))
                    .collect::<Vec<_>>()
            );
            // Every byte but the CRC, the attributes' timestamp type bit and the max
            // timestamp is as sent.
            let differs: Vec<usize> = (0..sent.len()).filter(|&i| sent[i] != stamped[i]).collect();
            assert!(differs
                .iter()
                .all(|&i| (CRC_OFFSET..CRC_OFFSET + 4).contains(&i)
                    || i == ATTRIBUTES_OFFSET + 1
                    || (MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8).contains(&i)));
            assert_eq!(
                stamped[ATTRIBUTES_OFFSET + 1] ^ sent[ATTRIBUTES_OFFSET + 1],
                0x08
            );
        }
    }

    /// Records of every shape: null and empty keys and values, headers with null values,
    /// deltas and lengths whose varints take one to five (ten) bytes.
    fn records(rng: &mut SmallRng) -> Vec<Record> {
        let bytes = |rng: &mut SmallRng| -> Option<Bytes> {
            match rng.gen_range(0..20) {
                0..=2 => None,
                3 | 4 => Some(Bytes::new()),
                5 => Some(Bytes::from(vec![b'y'; rng.gen_range(8_000..20_000)])),
                6..=9 => Some(Bytes::from(vec![b'x'; rng.gen_range(60..300)])),
                _ => Some(Bytes::from(vec![b'z'; rng.gen_range(1..60)])),
            }
        };
        (0..40)
            .map(|i| {
                let headers = (0..rng.gen_range(0..3))
                    .map(|h| Header::new(format!("h{h}"), bytes(rng)))
                    .collect();
                Record {
                    offset: i * [1, 100, 100_000, 50_000_000][rng.gen_range(0..4)],
                    timestamp: rng.gen_range(-(1 << 40)..(1 << 40)),
                    attributes: 0,
                    key: bytes(rng),
                    value: bytes(rng),
                    headers,
                }
            })
            .collect()
    }

    /// The fast reader accepts only what the checked reader accepts, and reads it to the
    /// same record ending at the same byte: valid records, and every one-byte change and
    /// every cut of them.
    #[test]
    fn fast_reader_agrees_with_checked_reader() {
        let mut rng = SmallRng::seed_from_u64(8);
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..10 {
            let batch = RecordBatch {
                base_offset: 7,
                base_timestamp: 1_700_000_000_000,
                records: records(&mut rng),
                ..RecordBatch::default()
            };
            let mut encoded = Vec::new();
            write_plain_records(&batch, &mut encoded).unwrap();
            let valid = Bytes::from(encoded);
            let mut variants = vec![valid.clone()];
            for _ in 0..1000 {
                let mut changed = valid.to_vec();
                let at = rng.gen_range(0..changed.len());
                changed[at] = rng.gen();
                variants.push(Bytes::from(changed));
                variants.push(valid.slice(..rng.gen_range(0..valid.len())));
            }
            for data in variants {
                let mut pos = 0;
                loop {
                    let fast = read_record_fast(&data, pos, 7, 1_700_000_000_000, usize::MAX);
                    let mut cursor = Cursor { data: &data, pos };
                    let checked =
                        read_record(&mut cursor, 7, 1_700_000_000_000, &mut Budget::unlimited());
                    match fast {
                        Some((record, end)) => {
                            assert_eq!(checked.as_ref().ok(), Some(&record));
                            assert_eq!(cursor.pos, end);
                            accepted += 1;
                            pos = end;
                        }
                        None => {
                            refused += 1;
                            // The checked reader decides: on to the next record if it
                            // accepts, done if it does not.
                            if checked.is_err() {
                                break;
                            }
                            pos = cursor.pos;
                        }
                    }
                    if pos == data.len() {
                        break;
                    }
                }
            }
        }
        // Both paths were taken many times.
        assert!(accepted > 10_000 && refused > 1_000, "{accepted} {refused}");
    }

    /// A batch whose first record's key length takes two bytes where one does, rebuilt
    /// around it (records compressed again, length and CRC recomputed).
    fn with_a_long_varint(batch: &RecordBatch) -> Vec<u8> {
        let mut records = Vec::new();
        write_plain_records(batch, &mut records).unwrap();
        let data = Bytes::from(records.clone());
        let parts = read_record_parts(
            &mut Cursor {
                data: &data,
                pos: 0,
            },
            None,
        )
        .unwrap();
        let (key, _) = parts.key.unwrap();
        // Key length (one byte) and record length (one byte) both grow by the byte added.
        records[key - 1] |= 0x80;
        records.insert(key, 0);
        let (length, _) = varint_at(&records, 0).unwrap();
        records[0] = (((length + 1) << 1) ^ ((length + 1) >> 31)) as u8;
        let mut out = Vec::new();
        let mut canonical = batch.clone();
        canonical.records.clear();
        encode_v2(&canonical, &mut out).unwrap();
        out.truncate(RECORD_BATCH_OVERHEAD);
        compress(batch.compression, 2, &records, &mut out).unwrap();
        let length = (out.len() - LOG_OVERHEAD) as i32;
        out[8..12].copy_from_slice(&length.to_be_bytes());
        out[57..61].copy_from_slice(&(batch.records.len() as i32).to_be_bytes());
        let crc = crc32c::crc32c(&out[ATTRIBUTES_OFFSET..]);
        out[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        out
    }

    /// `reencoding` finds what encode would not write back: a varint longer than it needs
    /// (where it is, in the batch or in its decompressed records), attribute bits Kafka does
    /// not define, a wrong CRC that was not checked; and nothing in a batch encode wrote.
    #[test]
    fn reencoding_finds_what_encode_would_change() {
        use super::super::{RawBatch, ReadOptions};
        let raw = |bytes: Vec<u8>, verify_crc: bool| -> RawBatch {
            let options = ReadOptions {
                verify_crc,
                ..ReadOptions::default()
            };
            super::super::BatchReader::with_options(Bytes::from(bytes), options)
                .next()
                .unwrap()
                .unwrap()
        };
        let mut rng = SmallRng::seed_from_u64(12);
        for compression in Compression::ALL.into_iter().filter(|c| c.is_enabled()) {
            let batch = RecordBatch {
                compression,
                base_offset: 5,
                base_timestamp: 1_700_000_000_000,
                records: records(&mut rng),
                ..RecordBatch::default()
            };
            // A first record short enough for its length to take one byte.
            let mut batch = batch;
            batch.records[0] = Record {
                offset: 5,
                timestamp: 1_700_000_000_000,
                key: Some(Bytes::from_static(b"key")),
                value: Some(Bytes::from_static(b"v")),
                ..Record::default()
            };
            let canonical = batch.encode_to_bytes().unwrap().to_vec();
            assert_eq!(
                raw(canonical.clone(), true).reencoding(),
                Ok(Reencoding::Same)
            );

            let long = with_a_long_varint(&batch);
            let decoded = raw(long.clone(), true).decode().unwrap();
            assert_eq!(decoded.records, batch.records, "{compression}");
            // Encode writes the record a byte shorter: its length is the first byte that
            // differs, at the start of the records.
            let expected = Reencoding::NotCanonical {
                at: RECORD_BATCH_OVERHEAD,
                decompressed_at: (compression != Compression::None).then_some(0),
            };
            assert_eq!(raw(long, true).reencoding(), Ok(expected), "{compression}");

            let mut odd = canonical.clone();
            odd[ATTRIBUTES_OFFSET] |= 0x01; // bit 8 of the attributes
            let crc = crc32c::crc32c(&odd[ATTRIBUTES_OFFSET..]);
            odd[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
            let expected = Reencoding::NotCanonical {
                at: ATTRIBUTES_OFFSET,
                decompressed_at: None,
            };
            assert_eq!(raw(odd, true).reencoding(), Ok(expected), "{compression}");

            let mut wrong_crc = canonical;
            wrong_crc[CRC_OFFSET + 3] ^= 1;
            assert!(raw(wrong_crc.clone(), true).reencoding().is_err());
            let expected = Reencoding::NotCanonical {
                at: CRC_OFFSET + 3,
                decompressed_at: None,
            };
            assert_eq!(raw(wrong_crc, false).reencoding(), Ok(expected));
        }
    }

    /// The writer's bound holds for records at the limits of each varint width.
    #[test]
    fn written_size_is_the_exact_length() {
        let mut rng = SmallRng::seed_from_u64(9);
        for _ in 0..50 {
            let batch = RecordBatch {
                base_offset: 1 << 40,
                base_timestamp: -5,
                records: records(&mut rng)
                    .into_iter()
                    .map(|mut r| {
                        r.offset += 1 << 40;
                        r
                    })
                    .collect(),
                ..RecordBatch::default()
            };
            let mut out = vec![1, 2, 3];
            write_plain_records(&batch, &mut out).unwrap();
            assert_eq!(
                out.len() - 3 + RECORD_BATCH_OVERHEAD,
                encoded_len_v2(&batch)
            );
        }
    }

    #[test]
    fn spare_capacity_is_written_not_leaked() {
        // The records are written into `out`'s spare capacity without zero-filling it first:
        // stale bytes there must never reach the output, whatever the capacity was, and a
        // failed write must leave `out` as it was.
        let mut rng = SmallRng::seed_from_u64(11);
        for round in 0..50 {
            let batch = RecordBatch {
                records: records(&mut rng),
                ..RecordBatch::default()
            };
            let mut fresh = Vec::new();
            write_plain_records(&batch, &mut fresh).unwrap();
            let spare = [0, 1, 7, fresh.len() / 2, fresh.len(), 2 * fresh.len()][round % 6];
            let mut stale = vec![0xa5; 3 + fresh.len() + spare];
            stale.truncate(3);
            write_plain_records(&batch, &mut stale).unwrap();
            assert_eq!(&stale[..3], &[0xa5; 3]);
            assert_eq!(&stale[3..], &fresh[..]);
        }
        let mut batch = RecordBatch {
            records: records(&mut rng),
            ..RecordBatch::default()
        };
        batch.records[30].offset = 1 << 40; // its offset delta does not fit an i32
        let mut out = vec![0xa5; 1 << 20];
        out.truncate(5);
        let error = write_plain_records(&batch, &mut out).unwrap_err();
        assert!(matches!(error.kind(), RecordsErrorKind::Unwritable(_)));
        assert_eq!(out, [0xa5; 5]);
    }
}
