//! Record batches without a broker or Java: round trips of every magic and codec, the JSON
//! form, zero copy, lazy headers, control records, and hostile input (wrong CRCs, lengths and
//! counts beyond the input, truncation at every byte). Compatibility with Kafka itself is
//! proven by `tests/live/oracle_diff.rs` (Java's `MemoryRecords`) and `tests/live/live_broker.rs`.

use bytes::Bytes;
use kafka_codec::messages::{
    EndTxnMarker, KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord,
    SnapshotHeaderRecord, VotersRecord,
};
use kafka_codec::records::{
    decode_batches, decode_batches_with, json, BatchReader, Compression, ControlRecord,
    ControlRecordType, Header, ReadOptions, Record, RecordBatch, RecordBatchBuilder,
    RecordsErrorKind, TimestampType,
};
use kafka_codec::{DecodeErrorKind, DecodeLimits};

const T0: i64 = 1_700_000_000_000;

fn b(text: &str) -> Option<Bytes> {
    Some(Bytes::copy_from_slice(text.as_bytes()))
}

/// A batch with a bit of everything the magic allows.
fn sample(magic: i8, compression: Compression, base_offset: i64) -> RecordBatch {
    let mut builder = RecordBatchBuilder::new(compression)
        .magic(magic)
        .base_offset(base_offset);
    if magic == 2 {
        builder = builder.producer(77, 3, 10).partition_leader_epoch(5);
    }
    let headers = |n: usize| {
        if magic < 2 {
            return Vec::new();
        }
        (0..n)
            .map(|i| Header::new(format!("h{i}"), if i % 2 == 0 { b("v") } else { None }))
            .collect()
    };
    builder.append_with_headers(T0, b("k0"), b("first"), headers(2));
    builder.append_with_headers(T0 + 7, None, b("second, n\u{e9}"), headers(0));
    builder.append_with_headers(T0 - 3, b(""), None, headers(1));
    builder.append_with_headers(
        T0 + 100_000,
        b("k3"),
        Some(Bytes::from(vec![7u8; 300])),
        headers(3),
    );
    builder.build()
}

fn enabled() -> impl Iterator<Item = Compression> {
    Compression::ALL.into_iter().filter(|c| c.is_enabled())
}

fn magics_for(compression: Compression) -> &'static [i8] {
    if compression == Compression::Zstd {
        &[2]
    } else {
        &[0, 1, 2]
    }
}

#[test]
fn every_magic_and_codec_round_trips() {
    for compression in enabled() {
        for &magic in magics_for(compression) {
            let batch = sample(magic, compression, 1000);
            let bytes = batch.encode_to_bytes().unwrap();
            let decoded =
                decode_batches(&bytes).unwrap_or_else(|e| panic!("{compression} v{magic}: {e}"));
            let records: Vec<&Record> = decoded.iter().flat_map(|b| &b.records).collect();
            assert_eq!(records.len(), 4, "{compression} v{magic}");
            for (got, want) in records.iter().zip(&batch.records) {
                assert_eq!(*got, want, "{compression} v{magic}");
            }
            for batch in &decoded {
                assert_eq!(batch.magic, magic);
                assert_eq!(batch.compression, compression);
            }
            if magic == 2 {
                let mut again = decoded[0].clone();
                again.crc = batch.crc;
                assert_eq!(again, batch, "{compression}: header fields");
            }
            // Written again, the batch reads back the same (compressed bytes may differ).
            let mut rewritten = Vec::new();
            for batch in &decoded {
                batch.encode_to_vec(&mut rewritten).unwrap();
            }
            if compression == Compression::None {
                assert_eq!(
                    rewritten, bytes,
                    "v{magic}: uncompressed bytes are canonical"
                );
            }
            assert_eq!(decode_batches(&Bytes::from(rewritten)).unwrap(), decoded);
        }
    }
}

#[test]
fn encoded_len_is_exact_for_uncompressed_batches() {
    for magic in [0, 1, 2] {
        for compression in enabled() {
            if !magics_for(compression).contains(&magic) {
                continue;
            }
            let batch = sample(magic, compression, 0);
            let plain = RecordBatch {
                compression: Compression::None,
                ..batch.clone()
            };
            let mut builder = RecordBatchBuilder::new(compression).magic(magic);
            for r in &batch.records {
                builder.append_record(r.clone());
            }
            let plain_len = plain.encode_to_bytes().unwrap().len();
            if compression == Compression::None {
                assert_eq!(builder.uncompressed_len(), plain_len, "v{magic}");
            } else if magic == 2 {
                // The records part before compression, plus the header.
                assert_eq!(
                    batch.uncompressed_len(),
                    plain_len,
                    "v{magic} {compression}"
                );
            }
        }
    }
}

#[test]
fn json_form_round_trips_to_the_same_bytes() {
    let mut field = Vec::new();
    for (i, compression) in enabled().enumerate() {
        for &magic in magics_for(compression) {
            sample(magic, compression, 100 * i as i64 + i64::from(magic) * 10)
                .encode_to_vec(&mut field)
                .unwrap();
        }
    }
    let field = Bytes::from(field);
    let batches = decode_batches(&field).unwrap();
    // Streamed through serde straight into a writer.
    let mut text = Vec::new();
    serde_json::to_writer(&mut text, &batches).unwrap();
    let value: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let first = &value[0];
    for key in [
        "baseOffset",
        "magic",
        "compression",
        "isTransactional",
        "isControl",
        "producerId",
        "producerEpoch",
        "baseSequence",
        "records",
    ] {
        assert!(first.get(key).is_some(), "{key} missing");
    }
    assert_eq!(first["records"][0]["key"], "azA=");
    assert_eq!(first["records"][1]["key"], serde_json::Value::Null);
    let back = json::batches_from_json(&value).unwrap();
    assert_eq!(back, batches);
    let mut again = Vec::new();
    for batch in &back {
        batch.encode_to_vec(&mut again).unwrap();
    }
    // Compressed bytes depend on the codec library, so compare what they hold; the
    // uncompressed batches must come back byte for byte.
    assert_eq!(
        decode_batches(&Bytes::from(again.clone())).unwrap(),
        batches
    );
    let plain: Vec<u8> = batches
        .iter()
        .filter(|b| b.compression == Compression::None)
        .flat_map(|b| b.encode_to_bytes().unwrap())
        .collect();
    let plain_back: Vec<u8> = back
        .iter()
        .filter(|b| b.compression == Compression::None)
        .flat_map(|b| b.encode_to_bytes().unwrap())
        .collect();
    assert_eq!(plain, plain_back);
}

#[test]
fn json_reading_fills_defaults_and_refuses_unknown_keys() {
    let value = serde_json::json!({
        "baseOffset": 5,
        "records": [
            {"timestamp": 10, "key": null, "value": "aGk=", "headers": [{"key": "a", "value": null}]},
            {"timestamp": 12, "value": "aGk="}
        ]
    });
    let batch = json::batch_from_json(&value).unwrap();
    assert_eq!(batch.records[1].offset, 6);
    assert_eq!(
        (
            batch.base_timestamp,
            batch.max_timestamp,
            batch.last_offset_delta
        ),
        (10, 12, 1)
    );
    assert_eq!(batch.magic, 2);
    let bytes = batch.encode_to_bytes().unwrap();
    assert_eq!(decode_batches(&bytes).unwrap()[0].records, batch.records);

    let typo = serde_json::json!({"baseOffset": 0, "records": [{"vlaue": "aGk="}]});
    let error = json::batch_from_json(&typo).unwrap_err();
    assert_eq!(error.to_string(), "unknown field \"vlaue\" at records[0]");
    let codec = serde_json::json!({"compression": "brotli", "records": []});
    assert!(json::batch_from_json(&codec).is_err());
    let base64 = serde_json::json!({"records": [{"value": "not base64!"}]});
    assert!(json::batch_from_json(&base64).is_err());
}

#[test]
fn uncompressed_records_share_the_input() {
    let bytes = sample(2, Compression::None, 0).encode_to_bytes().unwrap();
    let range = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    let batch = &decode_batches(&bytes).unwrap()[0];
    let record = &batch.records[0];
    for slice in [
        record.key.as_ref().unwrap(),
        record.value.as_ref().unwrap(),
        record.headers[0].value.as_ref().unwrap(),
        record.headers[0].key.as_bytes(),
    ] {
        assert!(range.contains(&(slice.as_ptr() as usize)), "copied");
    }
}

#[test]
fn headers_are_read_without_the_records() {
    let batch = sample(2, Compression::None, 42);
    let mut bytes = batch.encode_to_vec_owned();
    // Ruin the records (and so the CRC): the header still reads.
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let mut reader = BatchReader::new(Bytes::from(bytes));
    let raw = reader.next().unwrap().unwrap();
    let header = raw.header();
    assert_eq!(header.base_offset, 42);
    assert_eq!(header.records_count, 4);
    assert_eq!(header.producer_id, 77);
    assert_eq!(header.last_offset(), 45);
    assert_eq!(header.compression(), Some(Compression::None));
    let error = raw.decode().unwrap_err();
    assert!(
        matches!(error.kind(), RecordsErrorKind::CrcMismatch { .. }),
        "{error}"
    );
    assert_eq!(error.batch_base_offset(), Some(42));
    assert_eq!(error.offset(), 17);
    assert!(error.to_string().contains("base offset 42"), "{error}");
}

trait Owned {
    fn encode_to_vec_owned(&self) -> Vec<u8>;
}
impl Owned for RecordBatch {
    fn encode_to_vec_owned(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to_vec(&mut out).unwrap();
        out
    }
}

fn three_batches() -> Vec<u8> {
    let mut out = Vec::new();
    for (i, compression) in [Compression::None, Compression::Gzip, Compression::None]
        .into_iter()
        .filter(|c| c.is_enabled())
        .enumerate()
    {
        sample(2, compression, 10 * i as i64)
            .encode_to_vec(&mut out)
            .unwrap();
    }
    sample(1, Compression::None, 100)
        .encode_to_vec(&mut out)
        .unwrap();
    out
}

#[test]
fn truncation_at_every_byte() {
    let whole = three_batches();
    let full = decode_batches(&Bytes::from(whole.clone())).unwrap();
    let mut ends = vec![0];
    let mut base_offsets = Vec::new();
    let mut reader = BatchReader::new(Bytes::from(whole.clone()));
    for raw in &mut reader {
        let raw = raw.unwrap();
        ends.push(raw.position() + raw.as_bytes().len());
        base_offsets.push(raw.header().base_offset);
    }
    for cut in 0..whole.len() {
        let input = Bytes::copy_from_slice(&whole[..cut]);
        // Strict: a cut inside a batch is an error, never a panic.
        let strict = decode_batches(&input);
        let whole_batches = ends.iter().filter(|&&end| end <= cut).count() - 1;
        if ends.contains(&cut) {
            assert_eq!(strict.unwrap(), full[..whole_batches], "cut at {cut}");
        } else {
            let error = strict.unwrap_err();
            assert!(
                matches!(error.kind(), RecordsErrorKind::Truncated { .. }),
                "cut at {cut}: {error}"
            );
            // The batch is named once its base offset is in the input.
            let start = ends[whole_batches];
            let named = (cut - start >= 8).then(|| base_offsets[whole_batches]);
            assert_eq!(error.batch_base_offset(), named, "cut at {cut}");
        }
        // Fetch: the whole batches before the cut, and the tail reported.
        let mut reader = BatchReader::fetch(input.clone());
        let batches: Vec<RecordBatch> = (&mut reader)
            .map(|b| b.unwrap().decode().unwrap())
            .collect();
        assert_eq!(batches, full[..whole_batches], "cut at {cut}");
        let tail = cut - ends[whole_batches];
        assert_eq!(
            reader.truncated_tail(),
            (tail > 0).then_some(tail),
            "cut at {cut}"
        );
    }
}

#[test]
fn lengths_and_counts_beyond_the_input() {
    let batch = sample(2, Compression::None, 9).encode_to_vec_owned();
    // Batch length beyond the input.
    let mut long = batch.clone();
    long[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    let error = decode_batches(&Bytes::from(long)).unwrap_err();
    assert!(
        matches!(error.kind(), RecordsErrorKind::Truncated { .. }),
        "{error}"
    );
    // Batch length below the header's size.
    let mut short = batch.clone();
    short[8..12].copy_from_slice(&20i32.to_be_bytes());
    let error = decode_batches(&Bytes::from(short)).unwrap_err();
    assert!(
        matches!(error.kind(), RecordsErrorKind::InvalidBatchLength { .. }),
        "{error}"
    );
    // A record count the bytes cannot hold, with a valid CRC.
    for count in [i32::MAX, 5, -1] {
        let mut lying = batch.clone();
        lying[57..61].copy_from_slice(&count.to_be_bytes());
        let crc = crc32c::crc32c(&lying[21..]);
        lying[17..21].copy_from_slice(&crc.to_be_bytes());
        let error = decode_batches(&Bytes::from(lying)).unwrap_err();
        assert_eq!(error.batch_base_offset(), Some(9));
        match count {
            i32::MAX => assert!(
                matches!(
                    error.kind(),
                    RecordsErrorKind::RecordCountExceedsInput { .. }
                ),
                "{error}"
            ),
            5 => {
                assert_eq!(error.record_index(), Some(4), "{error}");
                assert!(
                    matches!(
                        error.kind(),
                        RecordsErrorKind::Malformed(DecodeErrorKind::UnexpectedEof { .. })
                    ),
                    "{error}"
                );
            }
            _ => assert!(
                matches!(error.kind(), RecordsErrorKind::InvalidRecordCount(-1)),
                "{error}"
            ),
        }
    }
    // Fewer records than the bytes hold.
    let mut fewer = batch.clone();
    fewer[57..61].copy_from_slice(&3i32.to_be_bytes());
    let crc = crc32c::crc32c(&fewer[21..]);
    fewer[17..21].copy_from_slice(&crc.to_be_bytes());
    let error = decode_batches(&Bytes::from(fewer)).unwrap_err();
    assert!(
        matches!(error.kind(), RecordsErrorKind::TrailingBytes(_)),
        "{error}"
    );
}

#[test]
fn wrong_crc_is_refused_in_every_magic() {
    for magic in [0, 1, 2] {
        for compression in [Compression::None, Compression::Gzip] {
            if !compression.is_enabled() {
                continue;
            }
            let mut bytes = sample(magic, compression, 3).encode_to_vec_owned();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            let error = decode_batches(&Bytes::from(bytes.clone())).unwrap_err();
            assert!(
                matches!(error.kind(), RecordsErrorKind::CrcMismatch { .. }),
                "v{magic}: {error}"
            );
            // Unchecked, the same bytes still read (gzip has a checksum of its own).
            let options = ReadOptions {
                verify_crc: false,
                ..ReadOptions::default()
            };
            let unchecked = decode_batches_with(&Bytes::from(bytes), &options);
            if compression == Compression::None {
                assert!(unchecked.is_ok(), "v{magic}");
            }
        }
    }
}

#[test]
fn control_batches_decode_with_the_generated_schemas() {
    let controls = vec![
        ControlRecord::Commit(EndTxnMarker::default().with_coordinator_epoch(17)),
        ControlRecord::Abort(EndTxnMarker::default()),
        ControlRecord::LeaderChange(LeaderChangeMessage::default().with_leader_id(3)),
        ControlRecord::SnapshotHeader(
            SnapshotHeaderRecord::default().with_last_contained_log_timestamp(T0),
        ),
        ControlRecord::SnapshotFooter(SnapshotFooterRecord::default()),
        ControlRecord::KRaftVersion(KRaftVersionRecord::default().with_k_raft_version(1)),
        ControlRecord::KRaftVoters(VotersRecord::default()),
    ];
    let mut builder = RecordBatchBuilder::new(Compression::None)
        .control(true)
        .transactional(true)
        .producer(5, 1, -1);
    for control in &controls {
        builder.append_control(T0, control).unwrap();
    }
    let bytes = builder.build().encode_to_bytes().unwrap();
    let batch = &decode_batches(&bytes).unwrap()[0];
    assert!(batch.is_control && batch.is_transactional);
    let decoded: Vec<ControlRecord> = batch.control_records().map(Result::unwrap).collect();
    assert_eq!(decoded, controls);
    // The transaction marker value is version 0 then the coordinator epoch.
    assert_eq!(
        &batch.records[0].value.as_ref().unwrap()[..],
        [0, 0, 0, 0, 0, 17]
    );
    assert_eq!(&batch.records[0].key.as_ref().unwrap()[..], [0, 0, 0, 1]);
    let json = json::batch_to_json(batch);
    assert_eq!(json["records"][0]["control"]["type"], "COMMIT");
    assert_eq!(
        json["records"][0]["control"]["value"]["coordinatorEpoch"],
        17
    );
    assert_eq!(
        ControlRecordType::from_key(&[0, 0, 0, 9]).unwrap(),
        ControlRecordType::Unknown(9)
    );
    assert!(ControlRecordType::from_key(&[0xff, 0xff, 0, 1]).is_err());
    assert!(ControlRecordType::from_key(&[0, 0, 0]).is_err());
}

#[test]
fn legacy_wrappers_use_relative_offsets_in_magic_1() {
    for magic in [0i8, 1] {
        for compression in enabled().filter(|c| *c != Compression::None && *c != Compression::Zstd)
        {
            let batch = sample(magic, compression, 500);
            let bytes = batch.encode_to_bytes().unwrap();
            // The wrapper's offset is the last inner message's absolute offset.
            assert_eq!(i64::from_be_bytes(bytes[..8].try_into().unwrap()), 503);
            let decoded = decode_batches(&bytes).unwrap();
            assert_eq!(decoded.len(), 1);
            let offsets: Vec<i64> = decoded[0].records.iter().map(|r| r.offset).collect();
            assert_eq!(offsets, [500, 501, 502, 503], "v{magic} {compression}");
            let header = *BatchReader::new(bytes).next().unwrap().unwrap().header();
            assert_eq!((header.base_offset, header.records_count), (503, -1));
        }
    }
}

#[test]
fn legacy_batches_refuse_what_needs_magic_2() {
    let mut with_headers = sample(2, Compression::None, 0);
    with_headers.magic = 1;
    with_headers.producer_id = -1;
    with_headers.producer_epoch = -1;
    with_headers.base_sequence = -1;
    with_headers.partition_leader_epoch = -1;
    let error = with_headers.encode_to_bytes().unwrap_err();
    assert!(
        matches!(error.kind(), RecordsErrorKind::Unwritable(_)),
        "{error}"
    );
    if Compression::Zstd.is_enabled() {
        let zstd = sample(1, Compression::None, 0);
        let zstd = RecordBatch {
            compression: Compression::Zstd,
            ..zstd
        };
        let error = zstd.encode_to_bytes().unwrap_err();
        assert!(
            matches!(
                error.kind(),
                RecordsErrorKind::CompressionNeedsMagic2 { .. }
            ),
            "{error}"
        );
    }
}

#[test]
fn log_append_time_reports_the_append_time() {
    let mut builder = RecordBatchBuilder::new(Compression::None).log_append_time(T0 + 999);
    builder.append(T0, None, b("x"));
    let batch = builder.build();
    let decoded = &decode_batches(&batch.encode_to_bytes().unwrap()).unwrap()[0];
    assert_eq!(decoded.timestamp_type, TimestampType::LogAppendTime);
    assert_eq!(decoded.records[0].timestamp, T0);
    assert_eq!(decoded.record_timestamp(&decoded.records[0]), T0 + 999);
}

#[test]
fn unknown_codec_ids_and_magics_are_typed_errors() {
    let mut bytes = sample(2, Compression::None, 0).encode_to_vec_owned();
    bytes[22] |= 0x07;
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    let error = decode_batches(&Bytes::from(bytes.clone())).unwrap_err();
    assert_eq!(error.kind(), &RecordsErrorKind::UnknownCompression(7));
    bytes[16] = 3;
    let error = decode_batches(&Bytes::from(bytes)).unwrap_err();
    assert_eq!(error.kind(), &RecordsErrorKind::UnsupportedMagic(3));
}

/// With a codec's feature off, a batch naming it is a typed error (CI runs this file with
/// `--no-default-features --features records,gzip` too).
#[test]
fn codecs_compiled_out_are_typed_errors() {
    let disabled: Vec<Compression> = Compression::ALL
        .into_iter()
        .filter(|c| !c.is_enabled())
        .collect();
    for compression in disabled {
        let mut batch = sample(2, Compression::None, 0);
        batch.compression = compression;
        let error = batch.encode_to_bytes().unwrap_err();
        assert_eq!(
            error.kind(),
            &RecordsErrorKind::CodecNotEnabled(compression)
        );
        // A batch someone else compressed: flip the codec bits of a valid batch.
        let mut bytes = sample(2, Compression::None, 0).encode_to_vec_owned();
        bytes[22] |= compression.id();
        let crc = crc32c::crc32c(&bytes[21..]);
        bytes[17..21].copy_from_slice(&crc.to_be_bytes());
        let error = decode_batches(&Bytes::from(bytes)).unwrap_err();
        assert_eq!(
            error.kind(),
            &RecordsErrorKind::CodecNotEnabled(compression)
        );
        eprintln!("{compression}: {error}");
    }
}

#[test]
fn corrupt_compressed_data_is_a_typed_error() {
    for compression in enabled().filter(|c| *c != Compression::None) {
        let mut bytes = sample(2, compression, 0).encode_to_vec_owned();
        // Garble the compressed records (keep the CRC valid so decompression is reached).
        for byte in &mut bytes[61..] {
            *byte = byte.wrapping_mul(31).wrapping_add(7);
        }
        let crc = crc32c::crc32c(&bytes[21..]);
        bytes[17..21].copy_from_slice(&crc.to_be_bytes());
        let error = decode_batches(&Bytes::from(bytes)).unwrap_err();
        assert_eq!(error.batch_base_offset(), Some(0), "{compression}: {error}");
    }
}

#[test]
fn decompression_stops_at_the_limit() {
    for compression in enabled().filter(|c| *c != Compression::None) {
        let mut builder = RecordBatchBuilder::new(compression);
        for _ in 0..100 {
            builder.append(T0, None, Some(Bytes::from(vec![0u8; 1000])));
        }
        let bytes = builder.build().encode_to_bytes().unwrap();
        let options = |limit| ReadOptions {
            limits: DecodeLimits {
                max_decompressed_batch_size: limit,
                ..DecodeLimits::default()
            },
            ..ReadOptions::default()
        };
        let error = decode_batches_with(&bytes, &options(50_000)).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                RecordsErrorKind::DecompressedTooLarge { limit: 50_000 }
                    | RecordsErrorKind::ZstdWindowTooLarge { .. }
            ),
            "{compression}: {error}"
        );
        assert!(
            decode_batches_with(&bytes, &options(200_000)).is_ok(),
            "{compression}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Batches Kafka's own code wrote, replayed without Java or a broker: `tests/golden/records/`
// (`java.jsonl` from the oracle's MemoryRecordsBuilder, `clients.jsonl` from real clients).

fn golden_lines(file: &str) -> Vec<serde_json::Value> {
    let path = format!("{}/tests/golden/records/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert!(!lines.is_empty(), "{path} is empty");
    lines
}

fn golden_bytes(line: &serde_json::Value) -> Bytes {
    let text = line["hex"].as_str().expect("hex");
    Bytes::from(kafka_codec_hexdump::decode(text.as_bytes()).expect("hex"))
}

/// A record as a consumer sees it: offset, timestamp (the append time under LogAppendTime),
/// key, value, headers.
type Consumed = (
    i64,
    i64,
    Option<Bytes>,
    Option<Bytes>,
    Vec<(String, Option<Bytes>)>,
);

fn consumed(batches: &[RecordBatch]) -> Vec<Consumed> {
    batches
        .iter()
        .flat_map(|batch| {
            batch.records.iter().map(move |r| {
                let headers = r.headers.iter();
                (
                    r.offset,
                    batch.record_timestamp(r),
                    r.key.clone(),
                    r.value.clone(),
                    headers
                        .map(|h| (h.key.to_string(), h.value.clone()))
                        .collect(),
                )
            })
        })
        .collect()
}

/// Decodes a golden records field of `codec`; `None` when this build leaves the codec out,
/// after checking that the field is refused for it with the typed error.
fn decode_golden(bytes: &Bytes, codec: Compression, what: &str) -> Option<Vec<RecordBatch>> {
    if !codec.is_enabled() {
        let error = decode_batches(bytes).unwrap_err();
        assert_eq!(
            error.kind(),
            &RecordsErrorKind::CodecNotEnabled(codec),
            "{what}"
        );
        return None;
    }
    Some(decode_batches(bytes).unwrap_or_else(|e| panic!("{what}: {e}")))
}

#[test]
fn batches_written_by_kafkas_memory_records_builder() {
    let (mut read, mut identical) = (0, 0);
    for (index, line) in golden_lines("java.jsonl").iter().enumerate() {
        let spec = json::batch_from_json(&line["batch"]).expect("our JSON form");
        let bytes = golden_bytes(line);
        let what = format!(
            "java.jsonl line {}: magic {} {}",
            index + 1,
            spec.magic,
            spec.compression
        );
        let Some(decoded) = decode_golden(&bytes, spec.compression, &what) else {
            continue;
        };
        assert_eq!(
            consumed(&decoded),
            consumed(std::slice::from_ref(&spec)),
            "{what}"
        );
        for batch in &decoded {
            assert_eq!(
                (batch.magic, batch.compression),
                (spec.magic, spec.compression),
                "{what}"
            );
        }
        if spec.magic == 2 {
            let header = |batch: &RecordBatch| {
                let mut json = json::batch_to_json(batch);
                let object = json.as_object_mut().unwrap();
                object.remove("crc");
                object.remove("records");
                json
            };
            assert_eq!(header(&decoded[0]), header(&spec), "{what}");
        }
        if spec.compression == Compression::None {
            assert_eq!(spec.encode_to_bytes().unwrap(), bytes, "{what}: our bytes");
            identical += 1;
        }
        read += 1;
    }
    eprintln!(
        "{read} of Kafka's batches read as written, {identical} uncompressed ones byte-identical"
    );
    assert!(identical > 0);
}

#[test]
fn batches_written_by_real_clients() {
    let mut read = 0;
    for line in golden_lines("clients.jsonl") {
        let codec = Compression::from_name(line["codec"].as_str().unwrap()).unwrap();
        let what = format!("{} {codec}", line["client"]);
        let Some(decoded) = decode_golden(&golden_bytes(&line), codec, &what) else {
            continue;
        };
        assert!(decoded.iter().all(|b| b.compression == codec), "{what}");
        // What the client was given (key, value, headers, timestamp), in the JSON form's
        // terms: base64 or null.
        let sent = line["records"].as_array().unwrap();
        let got: Vec<serde_json::Value> = decoded
            .iter()
            .flat_map(|batch| {
                json::batch_to_json(batch)["records"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .collect();
        assert_eq!(got.len(), sent.len(), "{what}");
        for (got, sent) in got.iter().zip(sent) {
            let fields = |r: &serde_json::Value| {
                ["timestamp", "key", "value", "headers"].map(|k| r[k].clone())
            };
            assert_eq!(fields(got), fields(sent), "{what}");
        }
        read += 1;
    }
    eprintln!("{read} real clients' records fields read as sent");
}
