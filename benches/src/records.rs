//! Fixtures for the `records` benchmark: a batch of 1,000 small records, uncompressed and
//! with each codec, as both crates see it.
//!
//! Decoding is compared on the same bytes: [`RecordsCase::new`] writes the batch with
//! kafka-codec and requires that kafka-protocol reads those bytes to the same records.
//! Encoding is compared on the same records; the compressed outputs differ (each crate has its
//! own codec libraries and framing), so the encode comparison includes the compressor's work.

use bytes::Bytes;
use kafka_codec::records::{decode_batches, Compression, RecordBatch, RecordBatchBuilder};
use kafka_protocol::records as kp;

/// Records per batch.
pub const RECORDS: usize = 1000;

/// One benchmarked batch.
pub struct RecordsCase {
    /// The benchmark group's name, e.g. `records_1000_lz4`.
    pub name: String,
    /// Our batch.
    pub batch: RecordBatch,
    /// The same records as kafka-protocol's type.
    pub theirs: Vec<kp::Record>,
    /// kafka-protocol's codec and options.
    pub options: kp::RecordEncodeOptions,
    /// Our encoding, which kafka-protocol has been checked to read to the same records.
    pub bytes: Bytes,
}

fn their_compression(compression: Compression) -> kp::Compression {
    match compression {
        Compression::None => kp::Compression::None,
        Compression::Gzip => kp::Compression::Gzip,
        Compression::Snappy => kp::Compression::Snappy,
        Compression::Lz4 => kp::Compression::Lz4,
        Compression::Zstd => kp::Compression::Zstd,
    }
}

/// Small records as a service might log them: a short key, a value of 60-100 bytes of
/// semi-repetitive text, consecutive timestamps, no headers.
fn build(compression: Compression) -> RecordBatch {
    let mut builder = RecordBatchBuilder::new(compression).base_offset(1_000_000);
    for i in 0..RECORDS {
        let value = format!(
            "{{\"user\":{},\"event\":\"page_view\",\"path\":\"/items/{}\",\"ms\":{}}}",
            i * 7919 % 100_000,
            i * 31 % 977,
            i % 250
        );
        builder.append(
            1_700_000_000_000 + i as i64,
            Some(Bytes::from(format!("user-{}", i * 7919 % 100_000))),
            Some(Bytes::from(value)),
        );
    }
    builder.build()
}

impl RecordsCase {
    /// Builds the case and checks that kafka-protocol reads our bytes to the same records.
    pub fn new(compression: Compression) -> Self {
        let batch = build(compression);
        let bytes = batch.encode_to_bytes().expect("encode");
        assert_eq!(
            decode_batches(&bytes).expect("we read our bytes")[0].records,
            batch.records
        );
        let mut input = bytes.clone();
        let set = kp::RecordBatchDecoder::decode(&mut input).unwrap_or_else(|e| {
            panic!("{compression}: kafka-protocol cannot read our batch: {e:#}")
        });
        assert!(input.is_empty(), "{compression}: kafka-protocol left bytes");
        assert_eq!(set.records.len(), batch.records.len());
        for (theirs, ours) in set.records.iter().zip(&batch.records) {
            assert_eq!(
                (theirs.offset, theirs.timestamp, &theirs.key, &theirs.value),
                (ours.offset, ours.timestamp, &ours.key, &ours.value),
                "{compression}: kafka-protocol reads another record"
            );
        }
        let theirs = set.records;
        RecordsCase {
            name: format!("records_{RECORDS}_{}", compression.name()),
            batch,
            theirs,
            options: kp::RecordEncodeOptions {
                version: 2,
                compression: their_compression(compression),
            },
            bytes,
        }
    }
}

/// Every codec, uncompressed first.
pub fn records_cases() -> Vec<RecordsCase> {
    Compression::ALL.into_iter().map(RecordsCase::new).collect()
}
