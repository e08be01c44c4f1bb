//! Splitting a records field into batches: [`BatchReader`] and [`RawBatch`].

use super::batch::{self, Inner, RecordIter};
use super::budget::Budget;
use super::{
    legacy, BatchHeader, RecordBatch, RecordsError, RecordsErrorKind, Reencoding, LOG_OVERHEAD,
};
use crate::wire::DecodeLimits;
use bytes::Bytes;

/// How a [`BatchReader`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Limits; [`DecodeLimits::max_decompressed_batch_size`] bounds each batch's
    /// decompressed records.
    pub limits: DecodeLimits,
    /// Whether an incomplete last batch ends the iteration quietly (a Fetch response may end
    /// with one) instead of being an error.
    pub allow_truncated_tail: bool,
    /// Whether CRCs are checked when a batch's records are read (on by default).
    pub verify_crc: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: DecodeLimits::default(),
            allow_truncated_tail: false,
            verify_crc: true,
        }
    }
}

/// Iterates the batches of a records field, reading only their headers; each [`RawBatch`]
/// decodes its records on demand.
///
/// The batch format is chosen per batch by its magic byte (offset 16, where every format
/// has it). An error ends the iteration.
pub struct BatchReader {
    input: Bytes,
    pos: usize,
    options: ReadOptions,
    truncated_tail: Option<usize>,
    done: bool,
}

impl BatchReader {
    /// A strict reader, for a records field that must hold whole batches (a Produce
    /// request): an incomplete last batch is an error.
    pub fn new(input: Bytes) -> Self {
        Self::with_options(input, ReadOptions::default())
    }

    /// A reader for a Fetch response's records: an incomplete last batch (the broker cuts
    /// at the fetch size) ends the iteration, and [`BatchReader::truncated_tail`] says so.
    pub fn fetch(input: Bytes) -> Self {
        Self::with_options(
            input,
            ReadOptions {
                allow_truncated_tail: true,
                ..ReadOptions::default()
            },
        )
    }

    /// A reader with explicit options.
    pub fn with_options(input: Bytes, options: ReadOptions) -> Self {
        BatchReader {
            input,
            pos: 0,
            options,
            truncated_tail: None,
            done: false,
        }
    }

    /// Bytes of an incomplete last batch that the reader skipped, once it got there (only
    /// when truncated tails are allowed).
    pub fn truncated_tail(&self) -> Option<usize> {
        self.truncated_tail
    }

    /// Offset of the next batch in the input.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn fail(&mut self, error: RecordsError) -> Option<Result<RawBatch, RecordsError>> {
        self.done = true;
        Some(Err(error))
    }

    /// The input ends inside a batch that needs `needed` bytes.
    fn incomplete(&mut self, needed: usize) -> Option<Result<RawBatch, RecordsError>> {
        let remaining = self.input.len() - self.pos;
        if self.options.allow_truncated_tail {
            self.done = true;
            self.truncated_tail = Some(remaining);
            return None;
        }
        let mut error = RecordsError::new(
            RecordsErrorKind::Truncated {
                needed: needed as u64,
                remaining,
            },
            self.pos,
        );
        // The base offset comes first: name the batch once it is there.
        if let Some(base) = self.input.get(self.pos..self.pos + 8) {
            error = error.in_batch(i64::from_be_bytes(base.try_into().expect("8 bytes")));
        }
        self.fail(error)
    }
}

impl Iterator for BatchReader {
    type Item = Result<RawBatch, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos == self.input.len() {
            return None;
        }
        let rest = &self.input[self.pos..];
        if rest.len() < LOG_OVERHEAD {
            return self.incomplete(LOG_OVERHEAD);
        }
        let base_offset = i64::from_be_bytes(rest[..8].try_into().expect("12 bytes"));
        let length = i32::from_be_bytes(rest[8..12].try_into().expect("12 bytes"));
        let invalid = |minimum: i32, magic: i8| {
            RecordsError::new(
                RecordsErrorKind::InvalidBatchLength {
                    length,
                    minimum,
                    magic,
                },
                self.pos + 8,
            )
            .in_batch(base_offset)
        };
        // Like Kafka, a length too small for any batch is corruption even in a Fetch tail.
        let smallest = legacy::min_message_size(0);
        if length < smallest {
            let magic = rest.get(16).map_or(0, |&m| m as i8);
            return self.fail(invalid(smallest, magic));
        }
        let needed = LOG_OVERHEAD + length as usize;
        if needed > rest.len() {
            return self.incomplete(needed);
        }
        let magic = rest[16] as i8;
        let minimum = match magic {
            0 | 1 => legacy::min_message_size(magic),
            2 => batch::MIN_BATCH_LENGTH,
            _ => {
                let error =
                    RecordsError::new(RecordsErrorKind::UnsupportedMagic(magic), self.pos + 16)
                        .in_batch(base_offset);
                return self.fail(error);
            }
        };
        if length < minimum {
            return self.fail(invalid(minimum, magic));
        }
        let bytes = self.input.slice(self.pos..self.pos + needed);
        let header = if magic == 2 {
            batch::parse_header(&bytes)
        } else {
            legacy::parse_header(&bytes)
        };
        let raw = RawBatch {
            header,
            bytes,
            position: self.pos,
            options: self.options,
        };
        self.pos += needed;
        Some(Ok(raw))
    }
}

/// One batch of a records field, its header read, its records not yet.
#[derive(Debug, Clone)]
pub struct RawBatch {
    header: BatchHeader,
    bytes: Bytes,
    position: usize,
    options: ReadOptions,
}

impl RawBatch {
    /// The header, read without touching the records.
    pub fn header(&self) -> &BatchHeader {
        &self.header
    }

    /// The whole batch as it was in the input, log overhead included (to forward it as is).
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Offset of the batch in the input.
    pub fn position(&self) -> usize {
        self.position
    }

    /// A copy of this batch stamped with `append_time_ms` as Kafka's broker stamps a batch
    /// appended to a LogAppendTime topic: the timestamp type attribute set, the max
    /// timestamp the append time, the CRC recomputed (the records untouched). `None` for a
    /// batch of magic 0 or 1, whose messages each carry their own timestamp.
    pub fn with_log_append_time(&self, append_time_ms: i64) -> Option<Bytes> {
        (self.header.magic == 2).then(|| batch::with_log_append_time(&self.bytes, append_time_ms))
    }

    /// Checks the CRC (CRC-32C for magic 2, CRC-32 for 0/1).
    pub fn verify_crc(&self) -> Result<(), RecordsError> {
        let result = if self.header.magic == 2 {
            batch::verify_crc(&self.bytes, &self.header)
        } else {
            legacy::verify_crc(&self.bytes, &self.header)
        };
        result.map_err(|e| {
            e.in_batch(self.header.base_offset)
                .placed(self.position, None)
        })
    }

    /// The records, read one by one as the iterator is advanced. The CRC is checked first
    /// unless the options turned that off; a compressed batch (a legacy wrapper) is
    /// decompressed here, once, within the limit, and its records are then read from that
    /// buffer one at a time. A legacy wrapper's inner messages are all checked here, in
    /// order, before the first is handed out (its offsets depend on the last one), so its
    /// errors come from this call, as from [`RawBatch::decode`].
    pub fn records(&self) -> Result<RecordIter, RecordsError> {
        if self.header.magic == 2 {
            if self.options.verify_crc {
                self.verify_crc()?;
            }
            batch::records(
                &self.bytes,
                &self.header,
                self.position,
                &self.options.limits,
            )
        } else {
            self.open_legacy()
                .map(|opened| RecordIter(Inner::Legacy(opened.records)))
        }
    }

    fn open_legacy(&self) -> Result<legacy::Opened, RecordsError> {
        legacy::open(
            &self.bytes,
            &self.header,
            &self.options.limits,
            self.options.verify_crc,
            self.position,
        )
    }

    /// The batch's fields (a [`RecordBatch`] without records) and its records, one at a
    /// time: what [`RawBatch::decode`] gives, without holding the records.
    #[cfg(feature = "json")]
    pub(super) fn open(&self) -> Result<(RecordBatch, RecordIter), RecordsError> {
        if self.header.magic == 2 {
            let records = self.records()?;
            let fields = batch::fields(&self.header).map_err(|e| {
                e.in_batch(self.header.base_offset)
                    .placed(self.position, None)
            })?;
            Ok((fields, records))
        } else {
            let opened = self.open_legacy()?;
            Ok((opened.fields, RecordIter(Inner::Legacy(opened.records))))
        }
    }

    /// Decodes the whole batch. Its records (headers included) are charged to the memory
    /// budget of the options' limits before they are reserved: [`DecodeLimits::memory_budget`],
    /// or by default [`DecodeLimits::MEMORY_PER_INPUT_BYTE`] per byte of the records as read
    /// (decompressed, for a compressed batch) plus [`DecodeLimits::MEMORY_BUDGET_BASE`], which
    /// every honest batch fits. Past it: `LimitExceeded` ("memory budget"), naming the batch.
    pub fn decode(&self) -> Result<RecordBatch, RecordsError> {
        self.decode_within(&mut Budget::new(&self.options.limits))
    }

    fn decode_within(&self, budget: &mut Budget) -> Result<RecordBatch, RecordsError> {
        if self.header.magic == 2 {
            if self.options.verify_crc {
                self.verify_crc()?;
            }
            batch::decode(
                &self.bytes,
                &self.header,
                self.position,
                &self.options.limits,
                budget,
            )
        } else {
            legacy::decode(
                &self.bytes,
                &self.header,
                &self.options.limits,
                self.options.verify_crc,
                self.position,
                budget,
            )
        }
    }

    /// Reads every record, as [`RawBatch::records`] does (the same errors), and tells
    /// whether writing the decoded batch again ([`RecordBatch::encode_to_vec`]) would give
    /// back these bytes, and if not, from where.
    ///
    /// Nothing is held but the batch's decompressed records: each record is compared with
    /// its canonical encoding in place, and a compressed batch whose records are canonical
    /// is compressed again into a comparison with its compressed bytes that stops at the
    /// first difference. (zstd is the exception: its one-shot output, what encode writes,
    /// differs from its streamed output, so it is produced whole; that copy takes the
    /// batch's own compressed size when it comes back the same.)
    pub fn reencoding(&self) -> Result<Reencoding, RecordsError> {
        if self.header.magic == 2 {
            if self.options.verify_crc {
                self.verify_crc()?;
            }
            batch::reencoding(
                &self.bytes,
                &self.header,
                self.position,
                &self.options.limits,
                self.options.verify_crc,
            )
        } else {
            legacy::reencoding(
                &self.bytes,
                &self.header,
                &self.options.limits,
                self.options.verify_crc,
                self.position,
            )
        }
    }
}

/// Decodes every batch of a records field that must hold whole batches.
pub fn decode_batches(input: &Bytes) -> Result<Vec<RecordBatch>, RecordsError> {
    decode_batches_with(input, &ReadOptions::default())
}

/// [`decode_batches`] with explicit options; with `allow_truncated_tail`, an incomplete
/// last batch is left out. The memory budget of the options' limits (see
/// [`RawBatch::decode`]) covers all the batches together.
pub fn decode_batches_with(
    input: &Bytes,
    options: &ReadOptions,
) -> Result<Vec<RecordBatch>, RecordsError> {
    let mut budget = Budget::new(&options.limits);
    BatchReader::with_options(input.clone(), *options)
        .map(|batch| batch?.decode_within(&mut budget))
        .collect()
}
