//! `records decode` and `decode --records` stream batch by batch and record by record
//! (issue 20): on a records field whose records are as small as records get, peak memory is
//! the input, one decompressed batch and a constant, however many records there are.
//!
//! Three inputs, each built here with the crate's own encoder (no committed blobs):
//! - one zstd batch of 7-byte records (every record at the base offset and timestamp, so
//!   that each takes the fewest bytes a record can);
//! - one magic 0 gzip wrapper of empty messages (26 bytes each, all at offset 0);
//! - a Produce request of one partition whose records field is a zstd batch of 1 M 7-byte
//!   records, shown with `decode request --records`.
//!
//! The first two hold a quarter of what fits the default cap of 64 MiB (2.4 M records,
//! 0.65 M messages, 16.8 MB decompressed each): the full 9.6 M records take a debug build a
//! minute to print. The records are as small as at full size, so the number of records per
//! decompressed byte, which is what made the old decode's memory grow, is the same.
//!
//! Each peak is the maximum resident set size of the child, as `wait4` reports it (the
//! instrument of `memory.rs`), compared with the same command on the same kind of input
//! holding one record: that baseline is the binary, its libraries and the codecs' fixed
//! state, measured rather than guessed. The inputs are built by this test binary run again
//! as a child, so that this process never holds them decoded (a child started from a large
//! parent could inherit its high-water mark). This file holds one test, so that its
//! children are the only processes it waits for.

#![cfg(target_os = "linux")]

use crate::support::rss::peak_rss;
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{ProduceRequest, RequestHeader};
use kafka_codec::records::{Compression, Record, RecordBatch, DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE};
use kafka_codec::{Request, RequestFrame};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child that writes an input: `<case>:<count>:<file>`.
const BUILD_INPUT: &str = "KAFKA_CODEC_TEST_BUILD_RECORDS_INPUT";

/// The smallest record of magic 2: length, attributes, timestamp and offset deltas of 0,
/// null key and value, no headers.
const RECORD_BYTES: usize = 7;
/// The smallest message of magic 0: log overhead, CRC, magic, attributes, null key and value.
const MESSAGE_BYTES: usize = 26;

/// What every peak may take beyond its baseline, the input and one decompressed batch:
/// the codecs' state for a large frame rather than a one-record one (zstd's window at
/// level 3, 2 MiB, and its buffers; gzip's 32 KiB window), stdout's buffer, and the
/// allocator's slack around the decompression buffer as it doubles.
const SLACK: u64 = 8 << 20;

#[derive(Clone, Copy)]
enum Case {
    ZstdBatch,
    GzipLegacyWrapper,
    ProduceWithZstdRecords,
}

impl Case {
    const ALL: [Case; 3] = [
        Case::ZstdBatch,
        Case::GzipLegacyWrapper,
        Case::ProduceWithZstdRecords,
    ];

    fn name(self) -> &'static str {
        match self {
            Case::ZstdBatch => "zstd-batch",
            Case::GzipLegacyWrapper => "gzip-legacy-wrapper",
            Case::ProduceWithZstdRecords => "produce-zstd-records",
        }
    }

    fn from_name(name: &str) -> Case {
        Case::ALL
            .into_iter()
            .find(|case| case.name() == name)
            .expect("a case name")
    }

    /// Records (messages) in the large input: as many as fit a quarter of the cap.
    fn count(self) -> usize {
        let cap = DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE / 4;
        match self {
            Case::ZstdBatch => cap / RECORD_BYTES,
            Case::GzipLegacyWrapper => cap / MESSAGE_BYTES,
            Case::ProduceWithZstdRecords => 1_000_000,
        }
    }

    /// Bytes the records of `count` records take decompressed.
    fn decompressed(self, count: usize) -> usize {
        count
            * match self {
                Case::GzipLegacyWrapper => MESSAGE_BYTES,
                _ => RECORD_BYTES,
            }
    }

    fn input(self, count: usize) -> Vec<u8> {
        match self {
            Case::ZstdBatch => tiny_records(count, Compression::Zstd),
            Case::GzipLegacyWrapper => empty_messages(count),
            Case::ProduceWithZstdRecords => produce(tiny_records(count, Compression::Zstd)),
        }
    }

    fn command(self, input: &Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kafka-codec"));
        match self {
            Case::ZstdBatch | Case::GzipLegacyWrapper => command.args(["records", "decode"]),
            Case::ProduceWithZstdRecords => command.args(["decode", "request", "--records"]),
        };
        command.arg(input);
        command
    }
}

/// One magic 2 batch of `count` records of 7 bytes.
fn tiny_records(count: usize, compression: Compression) -> Vec<u8> {
    let batch = RecordBatch {
        compression,
        base_timestamp: 0,
        max_timestamp: 0,
        last_offset_delta: 0,
        records: vec![
            Record {
                offset: 0,
                timestamp: 0,
                ..Record::default()
            };
            count
        ],
        ..RecordBatch::default()
    };
    let bytes = batch.encode_to_bytes().unwrap().to_vec();
    assert_eq!(batch.uncompressed_len(), 61 + count * RECORD_BYTES);
    bytes
}

/// One magic 0 gzip wrapper of `count` messages with null keys and values, all at offset
/// 0 (magic 0 keeps inner offsets as written), so that they compress as well as they can.
fn empty_messages(count: usize) -> Vec<u8> {
    let batch = RecordBatch {
        magic: 0,
        compression: Compression::Gzip,
        base_offset: 0,
        base_timestamp: -1,
        max_timestamp: -1,
        last_offset_delta: 0,
        records: vec![
            Record {
                offset: 0,
                timestamp: -1,
                ..Record::default()
            };
            count
        ],
        ..RecordBatch::default()
    };
    // The wrapper (26 bytes and its value) around the inner set.
    assert_eq!(batch.uncompressed_len(), 26 + count * MESSAGE_BYTES);
    batch.encode_to_bytes().unwrap().to_vec()
}

/// A Produce request v9 of one partition holding `records`.
fn produce(records: Vec<u8>) -> Vec<u8> {
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(Bytes::from(records)))])]);
    let frame = RequestFrame {
        header: RequestHeader::default()
            .with_request_api_key(0)
            .with_request_api_version(9)
            .with_correlation_id(1)
            .with_client_id(Some("records-memory".into())),
        body: Request::from(body),
    };
    frame.encode_to_bytes().unwrap().to_vec()
}

/// Writes the input of `case` with `count` records to `path`, in a child of this test.
fn build_input(case: Case, count: usize, path: &Path) -> u64 {
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            // The test's name in the `memory` binary, as libtest names it.
            "records_memory::records_decode_peaks_at_the_input_and_one_decompressed_batch",
            "--exact",
            "--test-threads=1",
        ])
        .env(
            BUILD_INPUT,
            format!("{}:{count}:{}", case.name(), path.display()),
        )
        .status()
        .unwrap();
    assert!(status.success(), "building the {} input", case.name());
    std::fs::metadata(path).unwrap().len()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

#[test]
fn records_decode_peaks_at_the_input_and_one_decompressed_batch() {
    if let Ok(spec) = std::env::var(BUILD_INPUT) {
        let mut parts = spec.splitn(3, ':');
        let case = Case::from_name(parts.next().unwrap());
        let count = parts.next().unwrap().parse().unwrap();
        let path = PathBuf::from(parts.next().unwrap());
        std::fs::write(path, case.input(count)).unwrap();
        return;
    }
    let dir =
        std::env::temp_dir().join(format!("kafka-codec-records-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for case in Case::ALL {
        let small = dir.join(format!("{}-1.bin", case.name()));
        build_input(case, 1, &small);
        let baseline = peak_rss(case.command(&small), case.name());

        let count = case.count();
        let path = dir.join(format!("{}.bin", case.name()));
        let input = build_input(case, count, &path);
        let decompressed = case.decompressed(count) as u64;
        let peak = peak_rss(case.command(&path), case.name());
        let bound = baseline + input + decompressed + SLACK;
        eprintln!(
            "{}: {count} records, {input} bytes in, {:.1} MB decompressed: peak RSS {:.1} MB \
             (baseline {:.1} MB, bound {:.1} MB)",
            case.name(),
            mb(decompressed),
            mb(peak),
            mb(baseline),
            mb(bound)
        );
        if peak > bound {
            failures.push(format!(
                "{}: peak {:.1} MB > bound {:.1} MB",
                case.name(),
                mb(peak),
                mb(bound)
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(failures.is_empty(), "{failures:?}");
}
