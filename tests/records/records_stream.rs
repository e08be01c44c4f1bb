//! Record batches read without holding them (issue 20): the JSON form written straight from
//! a batch's bytes is the decoded batch's JSON; the re-encoding check agrees with encoding
//! the decoded batch; decoding whole batches charges every record to the memory budget.

use bytes::Bytes;
use kafka_codec::json::{JsonWriter, ValueSink};
use kafka_codec::records::{
    decode_batches_with, json, BatchReader, Compression, ControlRecord, Header, RawBatch,
    ReadOptions, Record, RecordBatch, RecordBatchBuilder, RecordsErrorKind, Reencoding,
};
use kafka_codec::DecodeLimits;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const T0: i64 = 1_700_000_000_000;

fn enabled() -> impl Iterator<Item = Compression> {
    Compression::ALL.into_iter().filter(|c| c.is_enabled())
}

fn bytes(rng: &mut SmallRng) -> Option<Bytes> {
    match rng.gen_range(0..8) {
        0 => None,
        1 => Some(Bytes::new()),
        2 => Some(Bytes::from(vec![b'x'; rng.gen_range(100..3000)])),
        _ => Some(Bytes::from(
            (0..rng.gen_range(1..30))
                .map(|_| rng.gen())
                .collect::<Vec<u8>>(),
        )),
    }
}

/// A records field of a few random batches of every magic and codec this build has, with
/// headers (some keys not ASCII), producer state, LogAppendTime and a control batch.
fn field(rng: &mut SmallRng) -> Bytes {
    let mut out = Vec::new();
    for index in 0..rng.gen_range(1..5) {
        let codecs: Vec<Compression> = enabled().collect();
        let compression = codecs[rng.gen_range(0..codecs.len())];
        let magic = if compression == Compression::Zstd {
            2
        } else {
            [0, 1, 2, 2][rng.gen_range(0..4)]
        };
        let mut builder = RecordBatchBuilder::new(compression)
            .magic(magic)
            .base_offset(index * 1000 + rng.gen_range(0..100));
        if magic == 2 && rng.gen_bool(0.3) {
            builder = builder.producer(9, 1, 3).partition_leader_epoch(4);
        }
        if magic > 0 && rng.gen_bool(0.2) {
            builder = builder.log_append_time(T0 + 999);
        }
        if magic == 2 && rng.gen_bool(0.15) {
            let mut control = builder.control(true).transactional(true);
            let marker = ControlRecord::decode(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 7]))
                .expect("a commit marker");
            control.append_control(T0, &marker).unwrap();
            control.build().encode_to_vec(&mut out).unwrap();
            continue;
        }
        for i in 0..rng.gen_range(1..10) {
            let headers = if magic == 2 {
                (0..rng.gen_range(0..4))
                    .map(|h| Header::new(["h", "ключ", ""][h % 3], bytes(rng)))
                    .collect()
            } else {
                Vec::new()
            };
            builder.append_with_headers(T0 + i, bytes(rng), bytes(rng), headers);
        }
        builder.build().encode_to_vec(&mut out).unwrap();
    }
    Bytes::from(out)
}

fn golden_fields() -> Vec<Bytes> {
    ["clients.jsonl", "java.jsonl"]
        .iter()
        .flat_map(|file| {
            let path = format!("{}/tests/golden/records/{file}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            text.lines()
                .map(|line| {
                    let line: serde_json::Value = serde_json::from_str(line).unwrap();
                    let hex = line["hex"].as_str().expect("hex");
                    Bytes::from(kafka_codec_hexdump::decode(hex.as_bytes()).unwrap())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn raw_batches(field: &Bytes) -> Vec<RawBatch> {
    BatchReader::new(field.clone())
        .collect::<Result<_, _>>()
        .unwrap()
}

fn text(write: impl FnOnce(&mut JsonWriter<'_>), pretty: bool) -> String {
    let mut out = Vec::new();
    let mut writer = if pretty {
        JsonWriter::pretty(&mut out)
    } else {
        JsonWriter::compact(&mut out)
    };
    write(&mut writer);
    writer.finish().unwrap();
    String::from_utf8(out).unwrap()
}

/// Written from the batch's bytes record by record, the JSON form is the text serde writes
/// for the decoded batch (compact and pretty) and the tree `batch_to_json` builds.
#[test]
fn json_written_from_the_bytes_is_the_decoded_batchs() {
    let mut rng = SmallRng::seed_from_u64(20);
    let fields = golden_fields()
        .into_iter()
        .chain((0..150).map(|_| field(&mut rng)));
    let mut batches = 0;
    for field in fields {
        for raw in raw_batches(&field) {
            if raw.header().compression().is_some_and(|c| !c.is_enabled()) {
                continue;
            }
            let decoded = raw.decode().unwrap();
            for pretty in [false, true] {
                let streamed = text(|out| json::write_raw_batch(&raw, out).unwrap(), pretty);
                let serde = if pretty {
                    serde_json::to_string_pretty(&decoded).unwrap()
                } else {
                    serde_json::to_string(&decoded).unwrap()
                };
                assert_eq!(streamed, serde);
                let from_decoded = text(|out| json::write_batch(&decoded, out), pretty);
                assert_eq!(from_decoded, serde);
            }
            let mut tree = ValueSink::new();
            json::write_raw_batch(&raw, &mut tree).unwrap();
            assert_eq!(tree.finish(), json::batch_to_json(&decoded));
            batches += 1;
        }
    }
    assert!(batches > 300, "{batches}");
}

/// `reencoding` says "same" exactly when encoding the decoded batch gives its bytes back:
/// on batches real clients and Kafka's Java code wrote (other compressors, other choices),
/// and on this crate's own.
#[test]
fn reencoding_agrees_with_encoding_the_decoded_batch() {
    let mut rng = SmallRng::seed_from_u64(21);
    let fields = golden_fields()
        .into_iter()
        .chain((0..100).map(|_| field(&mut rng)));
    let (mut same, mut differing) = (0, 0);
    for field in fields {
        for raw in raw_batches(&field) {
            if raw.header().compression().is_some_and(|c| !c.is_enabled()) {
                continue;
            }
            let again = raw.decode().unwrap().encode_to_bytes().unwrap();
            match raw.reencoding().unwrap() {
                Reencoding::Same => {
                    assert_eq!(&again, raw.as_bytes());
                    same += 1;
                }
                Reencoding::NotCanonical { at, .. } | Reencoding::Recompressed { at } => {
                    assert_ne!(&again, raw.as_bytes());
                    let batch = raw.position()..raw.position() + raw.as_bytes().len();
                    assert!(batch.contains(&at), "{at} outside {batch:?}");
                    differing += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(same > 200 && differing > 10, "{same} {differing}");
}

fn budget(limit: usize) -> ReadOptions {
    ReadOptions {
        limits: DecodeLimits {
            memory_budget: Some(limit),
            ..DecodeLimits::default()
        },
        ..ReadOptions::default()
    }
}

fn only_batch(field: &[u8], options: ReadOptions) -> RawBatch {
    let mut reader = BatchReader::with_options(Bytes::copy_from_slice(field), options);
    let raw = reader.next().unwrap().unwrap();
    assert!(reader.next().is_none());
    raw
}

/// The records a batch decodes to, headers included, are charged before they are reserved:
/// a budget one byte short of them is refused with `LimitExceeded` ("memory budget") naming
/// the batch (and for headers, the record), and exactly enough is accepted. Lazy iteration
/// is not charged: its records are the caller's to keep or drop.
#[test]
fn decoding_charges_every_record_and_header_to_the_memory_budget() {
    const RECORD: usize = std::mem::size_of::<Record>();
    const HEADER: usize = std::mem::size_of::<Header>();
    for compression in enabled() {
        for magic in [0i8, 1, 2] {
            if magic < 2 && compression == Compression::Zstd {
                continue;
            }
            let mut builder = RecordBatchBuilder::new(compression)
                .magic(magic)
                .base_offset(40);
            for i in 0..100 {
                builder.append(T0 + i, None, Some(Bytes::from_static(b"v")));
            }
            let plain_entries = magic < 2 && compression == Compression::None;
            let field = builder.build().encode_to_bytes().unwrap();
            // A plain legacy message set is one batch per message, of one record each; a
            // legacy wrapper is named by its own offset, the last inner message's.
            let (cost, base) = match (plain_entries, magic) {
                (true, _) => (RECORD, 40),
                (false, 2) => (100 * RECORD, 40),
                (false, _) => (100 * RECORD, 139),
            };
            let raw = only_batch_or_first(&field, budget(cost));
            assert!(raw.decode().is_ok(), "{compression} {magic}");
            let raw = only_batch_or_first(&field, budget(cost - 1));
            let error = raw.decode().unwrap_err();
            assert_eq!(
                error.kind(),
                &RecordsErrorKind::LimitExceeded {
                    what: "memory budget",
                    value: cost as u64,
                    limit: cost as u64 - 1,
                },
                "{compression} {magic}"
            );
            assert_eq!(
                error.batch_base_offset(),
                Some(base),
                "{compression} {magic}"
            );
            assert_eq!(error.record_index(), None);
            // Handed out one at a time, records are not charged.
            let lazy: Vec<Record> = raw.records().unwrap().map(Result::unwrap).collect();
            assert_eq!(lazy.len(), if plain_entries { 1 } else { 100 });
        }
    }

    // Headers: the second record's 1000 are refused, before they are reserved.
    for compression in enabled() {
        let mut builder = RecordBatchBuilder::new(compression).base_offset(7);
        builder.append(T0, None, None);
        let headers = (0..1000).map(|_| Header::new("", None)).collect();
        builder.append_with_headers(T0, None, None, headers);
        let field = builder.build().encode_to_bytes().unwrap();
        let cost = 2 * RECORD + 1000 * HEADER;
        assert!(only_batch(&field, budget(cost)).decode().is_ok());
        let error = only_batch(&field, budget(cost - 1)).decode().unwrap_err();
        assert_eq!(
            error.kind(),
            &RecordsErrorKind::LimitExceeded {
                what: "memory budget",
                value: cost as u64,
                limit: cost as u64 - 1,
            },
            "{compression}"
        );
        assert_eq!(error.batch_base_offset(), Some(7));
        assert_eq!(error.record_index(), Some(1));
    }

    // `decode_batches` has one budget for all its batches: the second batch does not fit
    // what the first left.
    let mut field = Vec::new();
    for base in [0, 10] {
        let mut builder = RecordBatchBuilder::new(Compression::None).base_offset(base);
        for i in 0..10 {
            builder.append(T0 + i, None, None);
        }
        builder.build().encode_to_vec(&mut field).unwrap();
    }
    let field = Bytes::from(field);
    assert!(decode_batches_with(&field, &budget(20 * RECORD)).is_ok());
    let error = decode_batches_with(&field, &budget(20 * RECORD - 1)).unwrap_err();
    assert_eq!(error.batch_base_offset(), Some(10));
    assert!(matches!(
        error.kind(),
        RecordsErrorKind::LimitExceeded {
            what: "memory budget",
            ..
        }
    ));
}

fn only_batch_or_first(field: &[u8], options: ReadOptions) -> RawBatch {
    BatchReader::with_options(Bytes::copy_from_slice(field), options)
        .next()
        .unwrap()
        .unwrap()
}

/// The default budget, measured against the records' bytes as read, takes the densest
/// honest batches: records of 7 bytes (16 bytes of memory each byte), headers of 2 bytes
/// (32 each), decompressed from a few kilobytes of zstd or gzip.
#[test]
fn the_default_budget_takes_the_densest_honest_batches() {
    // The densities the default budget is set against.
    assert!(std::mem::size_of::<Record>() / 7 <= DecodeLimits::MEMORY_PER_INPUT_BYTE);
    assert!(std::mem::size_of::<Header>() / 2 <= DecodeLimits::MEMORY_PER_INPUT_BYTE);
    for compression in enabled() {
        // 300,000 records of 7 bytes: 2.1 MB of records, 34 MB of memory.
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
                300_000
            ],
            ..RecordBatch::default()
        };
        let field = batch.encode_to_bytes().unwrap();
        let decoded = only_batch(&field, ReadOptions::default()).decode().unwrap();
        assert_eq!(decoded.records.len(), 300_000);
        // One record of 500,000 headers of 2 bytes: 1 MB of records, 32 MB of memory.
        let batch = RecordBatch {
            compression,
            base_timestamp: 0,
            records: vec![Record {
                headers: vec![Header::new("", None); 500_000],
                ..Record::default()
            }],
            ..RecordBatch::default()
        };
        let field = batch.encode_to_bytes().unwrap();
        let decoded = only_batch(&field, ReadOptions::default()).decode().unwrap();
        assert_eq!(decoded.records[0].headers.len(), 500_000);
    }
}
