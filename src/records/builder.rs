//! [`RecordBatchBuilder`]: appends records and fills in the batch header as Kafka's producer
//! does.

use super::{Compression, ControlRecord, Header, Record, RecordBatch, RecordsError, TimestampType};
use bytes::Bytes;

/// Builds a [`RecordBatch`]: records are appended at consecutive offsets from the base
/// offset, and [`RecordBatchBuilder::build`] fills in the base and max timestamps and the
/// last offset delta the way Kafka's `MemoryRecordsBuilder` does.
///
/// ```
/// use kafka_codec::bytes::Bytes;
/// use kafka_codec::records::{Compression, Header, RecordBatchBuilder};
///
/// let mut builder = RecordBatchBuilder::new(Compression::None)
///     .base_offset(100)
///     .producer(4000, 0, 7);
/// builder.append(1_700_000_000_000, Some(Bytes::from_static(b"key")), Some(Bytes::from_static(b"value")));
/// builder.append_with_headers(
///     1_700_000_000_005,
///     None,
///     None,
///     vec![Header::new("h", Some(Bytes::from_static(b"1")))],
/// );
/// // Exact size, known before anything is written (the uncompressed size for a compressed batch).
/// let size = builder.uncompressed_len();
/// let batch = builder.build();
/// assert_eq!(batch.max_timestamp, 1_700_000_000_005);
/// assert_eq!(batch.last_offset(), 101);
/// assert_eq!(batch.encode_to_bytes().unwrap().len(), size);
/// ```
#[derive(Debug, Clone)]
pub struct RecordBatchBuilder {
    batch: RecordBatch,
    log_append_time: Option<i64>,
    delete_horizon: Option<i64>,
}

impl Header {
    /// A header from a key and a nullable value.
    pub fn new(key: impl Into<crate::Utf8Bytes>, value: Option<Bytes>) -> Self {
        Header {
            key: key.into(),
            value,
        }
    }
}

impl RecordBatchBuilder {
    /// A magic 2 batch at base offset 0, CreateTime, no producer state.
    pub fn new(compression: Compression) -> Self {
        RecordBatchBuilder {
            batch: RecordBatch {
                compression,
                ..RecordBatch::default()
            },
            log_append_time: None,
            delete_horizon: None,
        }
    }

    /// The magic: 2 (the default), or 0/1 for a legacy message set.
    pub fn magic(mut self, magic: i8) -> Self {
        self.batch.magic = magic;
        self
    }

    /// The offset of the first record (the broker assigns real offsets on append).
    pub fn base_offset(mut self, base_offset: i64) -> Self {
        self.batch.base_offset = base_offset;
        self
    }

    /// LogAppendTime with the given append time (records keep their own timestamps in
    /// magic 2; Kafka reports the append time for all of them).
    pub fn log_append_time(mut self, append_time: i64) -> Self {
        self.batch.timestamp_type = TimestampType::LogAppendTime;
        self.log_append_time = Some(append_time);
        self
    }

    /// Producer id, epoch and the sequence of the first record (idempotent producers).
    pub fn producer(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.batch.producer_id = producer_id;
        self.batch.producer_epoch = producer_epoch;
        self.batch.base_sequence = base_sequence;
        self
    }

    /// Marks the batch as part of a transaction.
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.batch.is_transactional = transactional;
        self
    }

    /// Marks the batch as a control batch.
    pub fn control(mut self, control: bool) -> Self {
        self.batch.is_control = control;
        self
    }

    /// The partition leader epoch (the broker sets it on append; -1 by default).
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.batch.partition_leader_epoch = epoch;
        self
    }

    /// Sets the delete horizon (log compaction): it becomes the base timestamp.
    pub fn delete_horizon(mut self, delete_horizon_ms: i64) -> Self {
        self.batch.has_delete_horizon = true;
        self.delete_horizon = Some(delete_horizon_ms);
        self
    }

    /// Appends a record at the next offset.
    pub fn append(
        &mut self,
        timestamp: i64,
        key: Option<Bytes>,
        value: Option<Bytes>,
    ) -> &mut Self {
        self.append_with_headers(timestamp, key, value, Vec::new())
    }

    /// Appends a record with headers at the next offset.
    pub fn append_with_headers(
        &mut self,
        timestamp: i64,
        key: Option<Bytes>,
        value: Option<Bytes>,
        headers: Vec<Header>,
    ) -> &mut Self {
        let offset = self.next_offset();
        self.append_record(Record {
            offset,
            timestamp,
            attributes: 0,
            key,
            value,
            headers,
        })
    }

    /// Appends a control record (for a [control](RecordBatchBuilder::control) batch) at the
    /// next offset.
    pub fn append_control(
        &mut self,
        timestamp: i64,
        control: &ControlRecord,
    ) -> Result<&mut Self, RecordsError> {
        let record = control
            .to_record(self.next_offset(), timestamp)
            .map_err(|kind| RecordsError::new(kind, 0))?;
        Ok(self.append_record(record))
    }

    /// Appends a record as given, its offset included (offsets must rise, but may skip, as
    /// after compaction).
    pub fn append_record(&mut self, record: Record) -> &mut Self {
        self.batch.records.push(record);
        self
    }

    /// The offset the next appended record gets.
    pub fn next_offset(&self) -> i64 {
        self.batch
            .records
            .last()
            .map_or(self.batch.base_offset, |r| r.offset + 1)
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.batch.records.len()
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }

    /// Exactly the bytes the batch takes before compression (its size, when uncompressed).
    pub fn uncompressed_len(&self) -> usize {
        self.clone().build().uncompressed_len()
    }

    /// The batch, its header completed: base timestamp (first record's, or the delete
    /// horizon), max timestamp (largest, or the append time), last offset delta. In magic 0
    /// records have no timestamp (-1); in magic 1 with LogAppendTime every record takes the
    /// append time, as Kafka writes them.
    pub fn build(self) -> RecordBatch {
        let mut batch = self.batch;
        let legacy = batch.magic < 2;
        if legacy {
            let timestamp_bit = if batch.magic == 1 && self.log_append_time.is_some() {
                0x08
            } else {
                0
            };
            for record in &mut batch.records {
                if batch.magic == 0 {
                    record.timestamp = -1;
                } else if let Some(time) = self.log_append_time {
                    record.timestamp = time;
                }
                record.attributes = timestamp_bit;
            }
        }
        let first = batch.records.first();
        batch.base_timestamp = self
            .delete_horizon
            .or(first.map(|r| r.timestamp))
            .unwrap_or(-1);
        batch.max_timestamp = match self.log_append_time {
            Some(time) => time,
            None => batch
                .records
                .iter()
                .map(|r| r.timestamp)
                .max()
                .unwrap_or(-1),
        };
        batch.last_offset_delta = batch
            .records
            .last()
            .map_or(0, |r| r.offset.wrapping_sub(batch.base_offset) as i32);
        if legacy && !batch.records.is_empty() {
            // A legacy batch's base offset is its first record's.
            batch.base_offset = batch.records[0].offset;
        }
        batch
    }
}
