//! Converting record batches between magics, as a broker does for clients of another age.
//!
//! - [`up_convert`]: the magic 0/1 message set of a Produce v0-v2 becomes one magic 2 batch
//!   (what Kafka's log validator writes when the log's format is newer than the producer's):
//!   every message of every entry, wrappers opened, in order, at offsets from 0 (the broker
//!   assigns the real ones), the producer's codec kept, CreateTime, no timestamp (-1) for
//!   magic 0 messages.
//! - [`down_convert`]: a stored batch rewritten for a Fetch that reads only `magic` 0 or 1
//!   (Kafka 0.11 to 3.x did this for Fetch v0-v3): the records at or after the fetch offset,
//!   offsets and (magic 1) timestamps and timestamp type kept, headers and producer state
//!   dropped (the old formats have neither), compressed with the batch's codec as one
//!   wrapper; control batches vanish, as old clients never saw markers.

use super::{Compression, Record, RecordBatch, RecordBatchBuilder, RecordsError, RecordsErrorKind};

/// One magic 2 batch holding every message of `legacy` (decoded magic 0/1 entries, as
/// [`decode_batches`](super::decode_batches) gives them), at offsets 0, 1, …; its codec is
/// the last compressed entry's (none when no entry is compressed).
///
/// Errors: a batch that is already magic 2 (Kafka refuses a message set mixing formats).
pub fn up_convert(legacy: &[RecordBatch]) -> Result<RecordBatch, RecordsError> {
    if let Some(index) = legacy.iter().position(|batch| batch.magic >= 2) {
        return Err(RecordsError::new(
            RecordsErrorKind::Unwritable(format!(
                "entry {index} is magic 2 in a legacy message set"
            )),
            0,
        ));
    }
    let compression = legacy
        .iter()
        .rev()
        .map(|batch| batch.compression)
        .find(|codec| *codec != Compression::None)
        .unwrap_or(Compression::None);
    let mut builder = RecordBatchBuilder::new(compression);
    for batch in legacy {
        for record in &batch.records {
            let timestamp = if batch.magic == 0 {
                -1
            } else {
                batch.record_timestamp(record)
            };
            builder.append(timestamp, record.key.clone(), record.value.clone());
        }
    }
    Ok(builder.build())
}

/// `batch` as a magic `magic` (0 or 1) batch holding its records from `from_offset` on;
/// `None` when nothing is left to send (a control batch, or every record before
/// `from_offset`). A batch already at or below `magic` is returned as it is.
///
/// Errors: a zstd batch (no older format can carry zstd; Kafka answers such a fetch
/// UNSUPPORTED_COMPRESSION_TYPE), or `magic` not 0 or 1.
pub fn down_convert(
    batch: &RecordBatch,
    magic: i8,
    from_offset: i64,
) -> Result<Option<RecordBatch>, RecordsError> {
    if !(0..=1).contains(&magic) {
        return Err(RecordsError::new(
            RecordsErrorKind::UnsupportedMagic(magic),
            0,
        ));
    }
    if batch.magic <= magic {
        return Ok(Some(batch.clone()));
    }
    if batch.is_control {
        return Ok(None);
    }
    if batch.compression == Compression::Zstd {
        return Err(RecordsError::new(
            RecordsErrorKind::CompressionNeedsMagic2 {
                compression: batch.compression,
                magic,
            },
            0,
        )
        .in_batch(batch.base_offset));
    }
    let mut builder = RecordBatchBuilder::new(batch.compression).magic(magic);
    if batch.timestamp_type == super::TimestampType::LogAppendTime {
        builder = builder.log_append_time(batch.max_timestamp);
    }
    for record in batch.records.iter().filter(|r| r.offset >= from_offset) {
        builder.append_record(Record {
            offset: record.offset,
            timestamp: batch.record_timestamp(record),
            attributes: 0,
            key: record.key.clone(),
            value: record.value.clone(),
            headers: Vec::new(),
        });
    }
    if builder.is_empty() {
        return Ok(None);
    }
    Ok(Some(builder.build()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{decode_batches, Header, TimestampType};
    use bytes::Bytes;

    fn v2(compression: Compression, base: i64) -> RecordBatch {
        let mut builder = RecordBatchBuilder::new(compression).base_offset(base);
        builder.append(1_000, Some(Bytes::from("k0")), Some(Bytes::from("v0")));
        builder.append_with_headers(
            1_005,
            None,
            Some(Bytes::from("v1")),
            vec![Header::new("h", None)],
        );
        builder.append(1_002, Some(Bytes::from("k2")), None);
        builder.build()
    }

    fn codecs() -> Vec<Compression> {
        let mut all = vec![Compression::None];
        #[cfg(feature = "gzip")]
        all.push(Compression::Gzip);
        #[cfg(feature = "snappy")]
        all.push(Compression::Snappy);
        #[cfg(feature = "lz4")]
        all.push(Compression::Lz4);
        all
    }

    /// What a reader of the converted bytes sees: offset, timestamp, key, value.
    fn seen(bytes: &Bytes) -> Vec<(i64, i64, Option<Bytes>, Option<Bytes>)> {
        decode_batches(bytes)
            .unwrap()
            .iter()
            .flat_map(|batch| {
                batch.records.iter().map(|r| {
                    (
                        r.offset,
                        batch.record_timestamp(r),
                        r.key.clone(),
                        r.value.clone(),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn down_conversion_keeps_offsets_keys_values_and_magic_1_timestamps() {
        for codec in codecs() {
            let batch = v2(codec, 40);
            for magic in [0, 1] {
                let converted = down_convert(&batch, magic, 41).unwrap().unwrap();
                let bytes = converted.encode_to_bytes().unwrap();
                let read = decode_batches(&bytes).unwrap();
                assert!(read.iter().all(|b| b.magic == magic), "{codec:?} {magic}");
                // A compressed batch is one wrapper; a plain one a message per record.
                let entries = if codec == Compression::None { 2 } else { 1 };
                assert_eq!(read.len(), entries, "{codec:?} {magic}");
                let want_ts = |t: i64| if magic == 0 { -1 } else { t };
                assert_eq!(
                    seen(&bytes),
                    vec![
                        (41, want_ts(1_005), None, Some(Bytes::from("v1"))),
                        (42, want_ts(1_002), Some(Bytes::from("k2")), None),
                    ],
                    "{codec:?} {magic}"
                );
            }
        }
    }

    #[test]
    fn down_conversion_drops_control_batches_and_spent_batches_and_refuses_zstd() {
        let mut control = v2(Compression::None, 0);
        control.is_control = true;
        assert_eq!(down_convert(&control, 1, 0).unwrap(), None);
        assert_eq!(down_convert(&v2(Compression::None, 0), 1, 3).unwrap(), None);
        let mut zstd = v2(Compression::None, 0);
        zstd.compression = Compression::Zstd;
        assert!(matches!(
            down_convert(&zstd, 1, 0).unwrap_err().kind(),
            RecordsErrorKind::CompressionNeedsMagic2 { .. }
        ));
        assert!(down_convert(&v2(Compression::None, 0), 2, 0).is_err());
    }

    #[test]
    fn log_append_time_survives_down_conversion_to_magic_1() {
        let mut builder = RecordBatchBuilder::new(Compression::None).log_append_time(9_999);
        builder.append(5, None, Some(Bytes::from("v")));
        let converted = down_convert(&builder.build(), 1, 0).unwrap().unwrap();
        assert_eq!(converted.timestamp_type, TimestampType::LogAppendTime);
        let read = decode_batches(&converted.encode_to_bytes().unwrap()).unwrap();
        assert_eq!(read[0].timestamp_type, TimestampType::LogAppendTime);
        assert_eq!(read[0].record_timestamp(&read[0].records[0]), 9_999);
    }

    #[test]
    fn up_conversion_gathers_every_entry_into_one_batch_from_offset_0() {
        for codec in codecs() {
            for magic in [0, 1] {
                // Two entries as an old producer sends them, at offsets it chose.
                let mut set = Vec::new();
                for base in [7, 20] {
                    let legacy = down_convert(&v2(codec, base), magic, 0).unwrap().unwrap();
                    legacy.encode_to_vec(&mut set).unwrap();
                }
                let set = Bytes::from(set);
                let entries = decode_batches(&set).unwrap();
                let batch = up_convert(&entries).unwrap();
                assert_eq!(batch.magic, 2);
                assert_eq!(batch.compression, codec);
                let bytes = batch.encode_to_bytes().unwrap();
                let records = seen(&bytes);
                assert_eq!(records.len(), 6, "{codec:?} {magic}");
                let want_ts = |t: i64| if magic == 0 { -1 } else { t };
                for (i, (offset, timestamp, _, _)) in records.iter().enumerate() {
                    assert_eq!(*offset, i as i64);
                    assert_eq!(*timestamp, want_ts([1_000, 1_005, 1_002][i % 3]));
                }
                assert_eq!(records[3].2, Some(Bytes::from("k0")));
                assert_eq!(records[5].3, None);
            }
        }
        assert!(up_convert(&[v2(Compression::None, 0)]).is_err());
    }
}
