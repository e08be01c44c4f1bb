//! [`RecordsError`]: what went wrong in a records field, in which batch, at which record and
//! at which byte.

use super::Compression;
use crate::{DecodeError, DecodeErrorKind};
use std::fmt;

/// What went wrong while reading or writing record batches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsErrorKind {
    /// A primitive (integer, varint, length-prefixed bytes) could not be read.
    #[error("{0}")]
    Malformed(DecodeErrorKind),
    /// The input ends inside a batch's log header or inside the batch it announces.
    #[error("batch is truncated: {needed} bytes announced, {remaining} remain")]
    Truncated {
        /// Bytes the batch needs (log overhead included).
        needed: u64,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A batch length (or legacy message size) too small for its own header, or negative.
    #[error("invalid batch length {length} (at least {minimum} for magic {magic})")]
    InvalidBatchLength {
        /// The length found.
        length: i32,
        /// The smallest valid length for the magic.
        minimum: i32,
        /// The magic byte.
        magic: i8,
    },
    /// A magic byte other than 0, 1 or 2.
    #[error("unsupported magic {0} (Kafka knows 0, 1 and 2)")]
    UnsupportedMagic(i8),
    /// The stored CRC does not match the bytes (CRC-32C for magic 2, CRC-32 for 0 and 1).
    #[error("CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch {
        /// The CRC in the batch.
        stored: u32,
        /// The CRC of the bytes.
        computed: u32,
    },
    /// A compression id Kafka does not define (5, 6 or 7).
    #[error("unknown compression codec id {0}")]
    UnknownCompression(u8),
    /// The batch is compressed with a codec this build leaves out (its cargo feature is off).
    #[error("{0} compression is not compiled in (enable the `{feature}` feature)", feature = .0.name())]
    CodecNotEnabled(Compression),
    /// zstd in a magic 0/1 message, which Kafka never allowed.
    #[error("{compression} compression needs magic 2, found magic {magic}")]
    CompressionNeedsMagic2 {
        /// The codec.
        compression: Compression,
        /// The magic byte.
        magic: i8,
    },
    /// The compressed data is corrupt.
    #[error("{compression} data is corrupt: {reason}")]
    Decompression {
        /// The codec.
        compression: Compression,
        /// What the codec said.
        reason: String,
    },
    /// Decompressing went past [`DecodeLimits::max_decompressed_batch_size`](crate::DecodeLimits).
    #[error("decompressed records exceed the limit of {limit} bytes")]
    DecompressedTooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// A zstd frame whose window is larger than the decompression limit allows.
    #[error("zstd window of the frame exceeds what the limit of {limit} bytes allows")]
    ZstdWindowTooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// A negative record count.
    #[error("invalid record count {0}")]
    InvalidRecordCount(i32),
    /// More records announced than the bytes could hold.
    #[error("{declared} records announced, only {remaining} bytes of records")]
    RecordCountExceedsInput {
        /// The count in the header.
        declared: i32,
        /// Bytes of records there are.
        remaining: usize,
    },
    /// A record whose fields did not fill exactly its declared length.
    #[error("record declares {declared} bytes but its fields take {used}")]
    RecordSizeMismatch {
        /// The record's length prefix.
        declared: usize,
        /// Bytes its fields took.
        used: usize,
    },
    /// A negative length other than the null marker -1, or a negative count.
    #[error("invalid {what} {value}")]
    InvalidLength {
        /// Which length.
        what: &'static str,
        /// The value.
        value: i64,
    },
    /// A header key that is not UTF-8 (Kafka substitutes U+FFFD; this crate refuses).
    #[error("header key is not valid UTF-8")]
    InvalidHeaderKey,
    /// Bytes left after the records a batch announces.
    #[error("{0} bytes left after the last record")]
    TrailingBytes(usize),
    /// A compressed legacy message whose inner messages are compressed again, or of another
    /// magic, or that has no value.
    #[error("invalid compressed legacy message: {0}")]
    InvalidWrapper(&'static str),
    /// A control record whose key or value does not decode.
    #[error("invalid control record: {0}")]
    InvalidControlRecord(String),
    /// Decoding went past a limit of [`DecodeLimits`](crate::DecodeLimits): `"memory budget"`
    /// when the records of [`RawBatch::decode`](super::RawBatch::decode) and
    /// [`decode_batches`](super::decode_batches) would take more memory than
    /// [`DecodeLimits::memory_budget`](crate::DecodeLimits::memory_budget) allows.
    #[error("{what} {value} exceeds the limit of {limit}")]
    LimitExceeded {
        /// Which limit.
        what: &'static str,
        /// What the input needed.
        value: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A batch cannot be written as asked (headers or producer state in magic 0/1, offsets
    /// that do not fit their deltas, lengths beyond their prefixes).
    #[error("cannot write the batch: {0}")]
    Unwritable(String),
}

#[derive(Clone, PartialEq, Eq)]
struct Detail {
    kind: RecordsErrorKind,
    offset: usize,
    batch: Option<i64>,
    record: Option<usize>,
    decompressed_offset: Option<usize>,
}

/// Reading or writing record batches failed.
///
/// Like [`DecodeError`], it says what went wrong and where: the byte offset in the records
/// field, the base offset of the batch and, inside a batch, the index of the record. For a
/// compressed batch the offset is that of its compressed records and
/// [`RecordsError::decompressed_offset`] points into the decompressed bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct RecordsError(Box<Detail>);

impl RecordsError {
    /// An error of `kind` at byte `offset`.
    #[cold]
    pub fn new(kind: RecordsErrorKind, offset: usize) -> Self {
        RecordsError(Box::new(Detail {
            kind,
            offset,
            batch: None,
            record: None,
            decompressed_offset: None,
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &RecordsErrorKind {
        &self.0.kind
    }

    /// Byte offset of the problem in the records field given to the reader.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// Base offset of the batch (the entry's offset for magic 0/1), once its header was read.
    pub fn batch_base_offset(&self) -> Option<i64> {
        self.0.batch
    }

    /// Index of the record inside its batch, when the error is about one record.
    pub fn record_index(&self) -> Option<usize> {
        self.0.record
    }

    /// For a compressed batch: the offset in its decompressed records.
    pub fn decompressed_offset(&self) -> Option<usize> {
        self.0.decompressed_offset
    }

    #[cold]
    pub(crate) fn in_batch(mut self, base_offset: i64) -> Self {
        self.0.batch.get_or_insert(base_offset);
        self
    }

    #[cold]
    pub(crate) fn at_record(mut self, index: usize) -> Self {
        self.0.record.get_or_insert(index);
        self
    }

    /// Moves an error found in a batch's own bytes (offset from the batch start), or in its
    /// decompressed records (`decompressed`), to the position of the batch in the input.
    #[cold]
    pub(crate) fn placed(mut self, batch_start: usize, decompressed: Option<usize>) -> Self {
        match decompressed {
            Some(records_start) => {
                self.0.decompressed_offset = Some(self.0.offset);
                self.0.offset = batch_start + records_start;
            }
            None => self.0.offset += batch_start,
        }
        self
    }

    #[cold]
    pub(crate) fn from_decode(error: DecodeError) -> Self {
        RecordsError::new(
            RecordsErrorKind::Malformed(error.kind().clone()),
            error.offset(),
        )
    }
}

impl From<DecodeError> for RecordsError {
    fn from(error: DecodeError) -> Self {
        RecordsError::from_decode(error)
    }
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.kind)?;
        if let Some(batch) = self.0.batch {
            write!(f, " in the batch at base offset {batch}")?;
        }
        if let Some(record) = self.0.record {
            write!(f, ", record {record}")?;
        }
        write!(f, " (byte offset {}", self.0.offset)?;
        if let Some(at) = self.0.decompressed_offset {
            write!(f, ", byte {at} of the decompressed records")?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordsError({self})")
    }
}

impl std::error::Error for RecordsError {}
