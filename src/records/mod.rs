//! Record batches: what a `records` field of Produce, Fetch, FetchSnapshot and friends holds.
//!
//! The generated messages carry a `records` field as plain [`Bytes`]; this module reads and
//! writes what is inside:
//!
//! - **RecordBatch v2** (magic 2) with every header field, CRC-32C checked on read and
//!   written on write, records with their varint fields, nullable keys, values and header
//!   values;
//! - **legacy message sets** (magic 0 and 1), plain and compressed (wrapper messages, with
//!   magic 1's relative inner offsets), CRC-32 checked; written too, for mock brokers that
//!   serve old clients;
//! - **control batches**: transaction markers and KRaft control records, decoded with the
//!   crate's generated data schemas ([`ControlRecord`]);
//! - **compression**: gzip, snappy (xerial-framed and raw), lz4 and zstd, each behind its own
//!   cargo feature; decompression is streamed and stops at
//!   [`DecodeLimits::max_decompressed_batch_size`] with a typed error;
//! - a **JSON form** (see [`json`]) written straight from a batch's bytes, record by record,
//!   into a [`JsonSink`](crate::json::JsonSink), that reads back to the same bytes;
//! - a **memory budget**: [`RawBatch::decode`] and [`decode_batches`] charge every record
//!   (headers included) to [`DecodeLimits::memory_budget`] before reserving it;
//! - **conversion between magics** ([`up_convert`], [`down_convert`]), as a broker serves
//!   producers and consumers of another age;
//! - a **re-encoding check** ([`RawBatch::reencoding`]): would writing the batch again give
//!   back its bytes, and from where not, found record by record.
//!
//! It is a feature (`records`, on by default) of this crate rather than a crate of its own
//! because control batches decode with this crate's generated data schemas and the
//! decompression cap lives in [`DecodeLimits`]; a separate crate would only duplicate both.
//! With the feature off it costs nothing. The generated messages never import it.
//!
//! [`DecodeLimits`]: crate::DecodeLimits
//! [`DecodeLimits::max_decompressed_batch_size`]: crate::DecodeLimits::max_decompressed_batch_size
//!
//! # Reading
//!
//! ```
//! use kafka_codec::bytes::Bytes;
//! use kafka_codec::records::{BatchReader, Compression, Header, RecordBatch, RecordBatchBuilder};
//!
//! // Two batches, as a Produce request or a Fetch response would carry them.
//! let mut field = Vec::new();
//! for (base, codec) in [(0, Compression::None), (2, Compression::Gzip)] {
//!     let mut builder = RecordBatchBuilder::new(codec).base_offset(base);
//!     builder.append(1_700_000_000_000, Some(Bytes::from("k")), Some(Bytes::from("v1")));
//!     builder.append_with_headers(
//!         1_700_000_000_001,
//!         None,
//!         Some(Bytes::from("v2")),
//!         vec![Header::new("trace", Some(Bytes::from("x")))],
//!     );
//!     builder.build().encode_to_vec(&mut field).unwrap();
//! }
//! let field = Bytes::from(field);
//!
//! for batch in BatchReader::new(field.clone()) {
//!     let batch = batch.unwrap();
//!     // The header is read without touching the records: a proxy can route on it.
//!     let header = batch.header();
//!     assert_eq!(header.records_count, 2);
//!     let decoded: RecordBatch = batch.decode().unwrap();
//!     assert_eq!(decoded.records[1].offset, header.base_offset + 1);
//! }
//! let all = kafka_codec::records::decode_batches(&field).unwrap();
//! assert_eq!(all[1].compression, Compression::Gzip);
//! assert_eq!(all[1].records[1].headers[0].key, "trace");
//! ```
//!
//! Records of an uncompressed batch are slices of the input (keys, values and header values
//! share its storage); those of a compressed batch (and a legacy wrapper's inner messages) are
//! slices of one decompressed buffer, read one at a time by [`RawBatch::records`].
//!
//! [`DecodeLimits::memory_budget`]: crate::DecodeLimits::memory_budget
//!
//! A Fetch response may end with a partial batch (the broker cuts at `max_bytes`).
//! [`BatchReader::fetch`] tolerates it, as Kafka's consumers do, and reports it through
//! [`BatchReader::truncated_tail`]; [`BatchReader::new`] refuses it.

mod batch;
mod budget;
mod builder;
mod compression;
mod control;
mod convert;
mod error;
#[cfg(feature = "json")]
pub mod json;
mod legacy;
mod reader;

use crate::Utf8Bytes;
use bytes::Bytes;

pub use batch::RecordIter;
pub use builder::RecordBatchBuilder;
pub use control::{ControlRecord, ControlRecordType};
pub use convert::{down_convert, up_convert};
pub use error::{RecordsError, RecordsErrorKind};
pub use reader::{decode_batches, decode_batches_with, BatchReader, RawBatch, ReadOptions};

/// Bytes before a batch's own length is known: base offset (8) and batch length (4).
pub const LOG_OVERHEAD: usize = 12;
/// Size of a RecordBatch v2 header, up to and including the record count.
pub const RECORD_BATCH_OVERHEAD: usize = 61;

/// Attribute bit of the timestamp type (LogAppendTime when set).
const TIMESTAMP_TYPE_BIT: i16 = 0x08;
const TRANSACTIONAL_BIT: i16 = 0x10;
const CONTROL_BIT: i16 = 0x20;
const DELETE_HORIZON_BIT: i16 = 0x40;
const COMPRESSION_MASK: i16 = 0x07;

/// A compression codec of Kafka's record batches (attribute bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// 0: uncompressed.
    #[default]
    None,
    /// 1: gzip.
    Gzip,
    /// 2: snappy.
    Snappy,
    /// 3: lz4 (the LZ4 frame format).
    Lz4,
    /// 4: zstd (magic 2 only).
    Zstd,
}

/// What a record's timestamp means (attribute bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Set by the producer.
    #[default]
    CreateTime,
    /// Set by the broker when it appended the batch; the batch's `max_timestamp` holds it.
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's name: `CreateTime` or `LogAppendTime`.
    pub const fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }

    /// The type of a name (see [`TimestampType::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "CreateTime" => Some(TimestampType::CreateTime),
            "LogAppendTime" => Some(TimestampType::LogAppendTime),
            _ => None,
        }
    }
}

/// A record header: a UTF-8 key and a nullable value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    /// The key (never null).
    pub key: Utf8Bytes,
    /// The value, `None` for null.
    pub value: Option<Bytes>,
}

/// One record with its absolute offset and timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// Absolute offset (batch base offset + the record's offset delta).
    pub offset: i64,
    /// The record's own timestamp (base timestamp + delta); `-1` in magic 0. For a
    /// LogAppendTime batch Kafka reports the batch's `max_timestamp` instead: see
    /// [`RecordBatch::record_timestamp`].
    pub timestamp: i64,
    /// The record's attribute byte: unused (0) in magic 2; in magic 0/1 the message's own
    /// attributes (timestamp type bit).
    pub attributes: i8,
    /// The key, `None` for null.
    pub key: Option<Bytes>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<Bytes>,
    /// Headers, in order (magic 2 only).
    pub headers: Vec<Header>,
}

/// How writing a decoded batch again ([`RecordBatch::encode_to_vec`], what `records encode`
/// does) compares with the bytes it was read from: see [`RawBatch::reencoding`].
///
/// Positions are byte offsets in the records field given to the reader. The batch length
/// and CRC fields follow from the rest and are not compared themselves (but for a CRC that
/// was not checked and is wrong): a position names the first other byte that would differ.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reencoding {
    /// The same bytes come back.
    Same,
    /// A field, or a record, is not written as Kafka writes it (a varint longer than it
    /// needs, attribute bits Kafka does not define, a legacy wrapper's key or inner offsets,
    /// a CRC that was not checked and is wrong). In a compressed batch, `decompressed_at`
    /// is the offset in its decompressed records and `at` where its compressed records
    /// start.
    NotCanonical {
        /// Byte offset of the difference.
        at: usize,
        /// For a difference inside compressed records: its offset in the decompressed bytes.
        decompressed_at: Option<usize>,
    },
    /// The records are as Kafka writes them, but compressing them again gives other bytes
    /// (another codec implementation or level wrote them) from `at` on.
    Recompressed {
        /// Byte offset of the first compressed byte that differs.
        at: usize,
    },
    /// The decoded batch cannot be written.
    Unwritable(RecordsError),
}

/// Where `a` and `b` first differ, or where the shorter ends if one is a prefix of the
/// other; `None` when they are equal.
pub(crate) fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(at) => Some(at),
        None => (a.len() != b.len()).then_some(a.len().min(b.len())),
    }
}

/// A batch's header, read without its records.
///
/// For magic 2 these are the RecordBatch header fields. A magic 0/1 entry has fewer: its
/// `base_offset` is the entry's offset, which for a compressed wrapper is the offset of its
/// *last* inner message; `partition_leader_epoch`, the producer fields and
/// `last_offset_delta` take their "none" values, the timestamps are the message's
/// timestamp (magic 1) or -1, and `records_count` is 1, or -1 for a wrapper (its count is
/// known only once decompressed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// Offset of the first record (magic 2), or the entry's offset (magic 0/1).
    pub base_offset: i64,
    /// Bytes after the length field (magic 2), or the message size (magic 0/1).
    pub batch_length: i32,
    /// Leader epoch of the partition when the batch was appended; -1 for none.
    pub partition_leader_epoch: i32,
    /// 0, 1 or 2.
    pub magic: i8,
    /// The stored CRC (CRC-32C for magic 2, CRC-32 for 0/1).
    pub crc: u32,
    /// The attribute bits (the message's attribute byte for magic 0/1).
    pub attributes: i16,
    /// Last offset − base offset.
    pub last_offset_delta: i32,
    /// Timestamp of the first record, or the delete horizon when that bit is set.
    pub base_timestamp: i64,
    /// Largest timestamp in the batch (the append time for LogAppendTime).
    pub max_timestamp: i64,
    /// Producer id; -1 for none.
    pub producer_id: i64,
    /// Producer epoch; -1 for none.
    pub producer_epoch: i16,
    /// Sequence number of the first record; -1 for none.
    pub base_sequence: i32,
    /// Number of records the header announces.
    pub records_count: i32,
}

impl BatchHeader {
    /// The codec, or `None` for the undefined ids 5-7.
    pub fn compression(&self) -> Option<Compression> {
        Compression::from_id((self.attributes & COMPRESSION_MASK) as u8)
    }

    /// The timestamp type (always CreateTime for magic 0).
    pub fn timestamp_type(&self) -> TimestampType {
        if self.magic > 0 && self.attributes & TIMESTAMP_TYPE_BIT != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Whether the batch belongs to a transaction.
    pub fn is_transactional(&self) -> bool {
        self.magic >= 2 && self.attributes & TRANSACTIONAL_BIT != 0
    }

    /// Whether the batch holds control records.
    pub fn is_control(&self) -> bool {
        self.magic >= 2 && self.attributes & CONTROL_BIT != 0
    }

    /// Whether `base_timestamp` holds the delete horizon.
    pub fn has_delete_horizon(&self) -> bool {
        self.magic >= 2 && self.attributes & DELETE_HORIZON_BIT != 0
    }

    /// Offset of the last record (for magic 0/1, the entry's offset).
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The whole batch's size on the wire, log overhead included.
    pub fn size(&self) -> usize {
        LOG_OVERHEAD + self.batch_length.max(0) as usize
    }
}

/// A decoded batch: every header field, and the records.
///
/// Writing it ([`RecordBatch::encode_to_vec`]) gives back the bytes it was read from when they were
/// uncompressed and canonical (as Kafka writes them): the CRC and lengths are recomputed,
/// everything else is taken from the fields. Records' offsets and timestamps are absolute;
/// their deltas are recomputed from `base_offset` and `base_timestamp`.
///
/// Magic 0/1 entries decode to batches too: an uncompressed message to a batch of one
/// record, a compressed wrapper to a batch of its inner messages. Then `base_offset` is the
/// first record's offset, `max_timestamp` the (wrapper) message's timestamp and `crc` the
/// (wrapper) message's CRC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Leader epoch of the partition when the batch was appended; -1 for none.
    pub partition_leader_epoch: i32,
    /// 0, 1 or 2.
    pub magic: i8,
    /// The CRC as read; recomputed on write.
    pub crc: u32,
    /// The codec.
    pub compression: Compression,
    /// What the timestamps mean.
    pub timestamp_type: TimestampType,
    /// Part of a transaction.
    pub is_transactional: bool,
    /// Holds control records (transaction markers, KRaft control records).
    pub is_control: bool,
    /// `base_timestamp` holds the delete horizon (set by log compaction).
    pub has_delete_horizon: bool,
    /// Last offset − base offset (may exceed the last record's delta after compaction).
    pub last_offset_delta: i32,
    /// Timestamp of the first record, or the delete horizon.
    pub base_timestamp: i64,
    /// Largest timestamp (the append time for LogAppendTime).
    pub max_timestamp: i64,
    /// Producer id; -1 for none.
    pub producer_id: i64,
    /// Producer epoch; -1 for none.
    pub producer_epoch: i16,
    /// Sequence of the first record; -1 for none.
    pub base_sequence: i32,
    /// The records, in order.
    pub records: Vec<Record>,
}

impl Default for RecordBatch {
    fn default() -> Self {
        RecordBatch {
            base_offset: 0,
            partition_leader_epoch: -1,
            magic: 2,
            crc: 0,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            is_transactional: false,
            is_control: false,
            has_delete_horizon: false,
            last_offset_delta: -1,
            base_timestamp: -1,
            max_timestamp: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: Vec::new(),
        }
    }
}

impl RecordBatch {
    /// The attribute bits these fields give.
    pub fn attributes(&self) -> i16 {
        let mut attributes = i16::from(self.compression.id());
        if self.timestamp_type == TimestampType::LogAppendTime {
            attributes |= TIMESTAMP_TYPE_BIT;
        }
        if self.is_transactional {
            attributes |= TRANSACTIONAL_BIT;
        }
        if self.is_control {
            attributes |= CONTROL_BIT;
        }
        if self.has_delete_horizon {
            attributes |= DELETE_HORIZON_BIT;
        }
        attributes
    }

    /// The timestamp Kafka reports for `record`: the batch's `max_timestamp` for a
    /// LogAppendTime batch, else the record's own.
    pub fn record_timestamp(&self, record: &Record) -> i64 {
        match self.timestamp_type {
            TimestampType::LogAppendTime => self.max_timestamp,
            TimestampType::CreateTime => record.timestamp,
        }
    }

    /// Offset of the last record: `base_offset + last_offset_delta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The control records of a control batch, decoded with the generated data schemas.
    pub fn control_records(
        &self,
    ) -> impl Iterator<Item = Result<ControlRecord, RecordsError>> + '_ {
        self.records.iter().enumerate().map(|(index, record)| {
            ControlRecord::decode(record.key.as_deref(), record.value.as_deref()).map_err(|kind| {
                RecordsError::new(kind, 0)
                    .in_batch(self.base_offset)
                    .at_record(index)
            })
        })
    }

    /// Writes the batch (magic 2: one RecordBatch; magic 0/1: one wrapper message when
    /// compressed, else one message per record) at the end of `out`.
    pub fn encode_to_vec(&self, out: &mut Vec<u8>) -> Result<(), RecordsError> {
        if self.magic >= 2 {
            batch::encode_v2(self, out)
        } else {
            legacy::encode(self, out)
        }
    }

    /// Writes the batch into a new buffer.
    pub fn encode_to_bytes(&self) -> Result<Bytes, RecordsError> {
        let mut out = Vec::with_capacity(self.uncompressed_len());
        self.encode_to_vec(&mut out)?;
        Ok(Bytes::from(out))
    }

    /// Exactly the bytes [`RecordBatch::encode_to_vec`] writes when the batch is
    /// uncompressed; for a compressed batch, what it would take uncompressed (the compressed
    /// size is known only after compressing).
    pub fn uncompressed_len(&self) -> usize {
        if self.magic >= 2 {
            batch::encoded_len_v2(self)
        } else {
            legacy::encoded_len(self)
        }
    }
}

/// The default of [`DecodeLimits::max_decompressed_batch_size`]: 64 MiB.
///
/// [`DecodeLimits::max_decompressed_batch_size`]: crate::DecodeLimits::max_decompressed_batch_size
pub const DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE: usize = 64 * 1024 * 1024;
