//! `kafka-codec records decode|encode`, run as a binary: batches Kafka's Java code and real
//! clients wrote (`tests/golden/records/`), random batches of every magic and codec, every
//! flag, every error path, and the decompression cap refusing bombs.

use crate::support::{
    assert_malformed, assert_refused, assert_usage_error, batches_json, golden_records, json, ok,
    run, stderr, without_crc,
};
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::EndTxnMarker;
use kafka_codec::records::{
    Compression, ControlRecord, Header, Record, RecordBatch, RecordBatchBuilder,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec_hexdump::{decode as unhex, encode as hex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

const DECODE: [&str; 3] = ["records", "decode", "-"];
const ENCODE: [&str; 3] = ["records", "encode", "-"];
const T0: i64 = 1_700_000_000_000;

fn line_bytes(line: &Value) -> Vec<u8> {
    unhex(line["hex"].as_str().unwrap().as_bytes()).unwrap()
}

/// A file in the test's scratch directory holding `bytes`.
fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Fixes a v2 batch's length and CRC-32C after its bytes were changed.
fn reseal(batch: &mut [u8]) {
    let length = (batch.len() - 12) as i32;
    batch[8..12].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}

/// Runs a command that must succeed with warnings only; returns stdout and the warnings.
fn ok_with_warnings(args: &[&str], stdin: &[u8]) -> (Vec<u8>, Vec<String>) {
    let output = run(args, stdin);
    let message = stderr(&output);
    assert!(output.status.success(), "{args:?} failed: {message}");
    let warnings: Vec<String> = message.lines().map(str::to_owned).collect();
    for warning in &warnings {
        assert!(warning.starts_with("kafka-codec: warning: "), "{warning}");
    }
    (output.stdout, warnings)
}

// ---------------------------------------------------------------------------------------------
// Batches from Kafka's Java code and from real clients

#[test]
fn java_written_uncompressed_batches_come_back_byte_for_byte() {
    let lines = golden_records("java.jsonl");
    let mut field = Vec::new();
    let mut count = 0;
    for line in &lines {
        if line["batch"]["compression"] == "none" {
            field.extend(line_bytes(line));
            count += 1;
        }
    }
    assert!(count > 20, "{count} uncompressed batches in the corpus");
    // No warning: every one of them is canonical.
    let decoded = ok(&DECODE, &field);
    let value = json(&decoded);
    assert_eq!(value, batches_json(&field));
    assert_eq!(
        ok(&ENCODE, &decoded),
        field,
        "decode | encode of {count} batches"
    );
}

#[test]
fn java_written_compressed_batches_read_and_compress_again() {
    let lines = golden_records("java.jsonl");
    let mut field = Vec::new();
    for line in &lines {
        if line["batch"]["compression"] != "none" {
            field.extend(line_bytes(line));
        }
    }
    let (decoded, warnings) = ok_with_warnings(&DECODE, &field);
    let value = json(&decoded);
    assert_eq!(value, batches_json(&field));
    // Java's codecs and ours compress to other bytes: one line says so, naming the first
    // batch and how many more.
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("encode compresses its records again"),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("more batches)"), "{warnings:?}");
    let again = ok(&ENCODE, &decoded);
    // What we wrote reads as the same batches, and comes back from there byte for byte.
    let value_again = json(&ok(&DECODE, &again));
    assert_eq!(without_crc(value_again), without_crc(value));
    assert_eq!(ok(&ENCODE, &ok(&DECODE, &again)), again);
}

#[test]
fn real_clients_batches_decode_to_what_they_sent() {
    let lines = golden_records("clients.jsonl");
    assert_eq!(lines.len(), 15, "three clients, five codecs");
    for line in &lines {
        let what = format!("{} {}", line["client"], line["codec"]);
        let bytes = line_bytes(line);
        // From a file, as a user would run it.
        let path = scratch_file("client-batches.bin", &bytes);
        let path = path.to_str().unwrap();
        let (decoded, warnings) = ok_with_warnings(&["records", "decode", path], b"");
        let batches = json(&decoded);
        let mut records = Vec::new();
        for batch in batches.as_array().unwrap() {
            assert_eq!(batch["compression"], line["codec"], "{what}");
            assert_eq!(batch["magic"], 2, "{what}");
            records.extend(batch["records"].as_array().unwrap().iter().cloned());
        }
        // The client was given key, value, headers and timestamp (base64 in both forms).
        let sent = line["records"].as_array().unwrap();
        assert_eq!(records.len(), sent.len(), "{what}");
        for (got, sent) in records.iter().zip(sent) {
            for key in ["timestamp", "key", "value", "headers"] {
                assert_eq!(got[key], sent[key], "{what}: {key}");
            }
        }
        let again = ok(&ENCODE, &decoded);
        if line["codec"] == "none" {
            assert!(warnings.is_empty(), "{what}: {warnings:?}");
            assert_eq!(again, bytes, "{what}: byte for byte");
        } else {
            assert_eq!(
                without_crc(json(&ok(&DECODE, &again))),
                without_crc(batches),
                "{what}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random batches

fn random_bytes(rng: &mut ChaCha8Rng, max: usize) -> Option<Bytes> {
    if rng.gen_bool(0.15) {
        return None;
    }
    let len = rng.gen_range(0..=max);
    let bytes: Vec<u8> = if rng.gen_bool(0.3) {
        vec![rng.gen(); len]
    } else {
        (0..len).map(|_| rng.gen()).collect()
    };
    Some(Bytes::from(bytes))
}

/// A batch as a producer or a broker could write it, in every magic the codec allows.
fn random_batch(rng: &mut ChaCha8Rng, compression: Compression) -> RecordBatch {
    let magic = match compression {
        Compression::Zstd => 2,
        _ => [0, 1, 2, 2][rng.gen_range(0..4)],
    };
    let mut builder = RecordBatchBuilder::new(compression)
        .magic(magic)
        .base_offset(rng.gen_range(0..1i64 << 40));
    let control = magic == 2 && rng.gen_bool(0.15);
    if magic == 2 {
        builder = builder
            .control(control)
            .transactional(control || rng.gen_bool(0.3))
            .partition_leader_epoch(rng.gen_range(-1..1000));
        if control || rng.gen_bool(0.5) {
            builder = builder.producer(rng.gen_range(0..1 << 40), rng.gen_range(0..100), 0);
        }
        if rng.gen_bool(0.1) {
            builder = builder.delete_horizon(T0 + rng.gen_range(0..100_000));
        }
    }
    if magic >= 1 && rng.gen_bool(0.2) {
        builder = builder.log_append_time(T0 + rng.gen_range(0..1_000_000));
    }
    for _ in 0..rng.gen_range(1..12) {
        let timestamp = T0 + rng.gen_range(-1000..100_000);
        if control {
            let marker = EndTxnMarker::default().with_coordinator_epoch(rng.gen());
            let record = if rng.gen_bool(0.5) {
                ControlRecord::Commit(marker)
            } else {
                ControlRecord::Abort(marker)
            };
            builder.append_control(timestamp, &record).unwrap();
            continue;
        }
        let headers = match magic {
            2 => (0..rng.gen_range(0..3))
                .map(|i| {
                    let key = ["h", "trace-id", "n\u{e9}", "\u{1f600}", ""]
                        [(i + rng.gen_range(0..5)) % 5];
                    Header::new(key, random_bytes(rng, 8))
                })
                .collect(),
            _ => Vec::new(),
        };
        let gap = if rng.gen_bool(0.1) {
            rng.gen_range(1..4)
        } else {
            0
        };
        builder.append_record(Record {
            offset: builder.next_offset() + gap,
            timestamp,
            attributes: 0,
            key: random_bytes(rng, 16),
            value: random_bytes(rng, 200),
            headers,
        });
    }
    builder.build()
}

#[test]
fn random_batches_of_every_magic_and_codec_come_back_byte_for_byte() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7265_636f_7264_7332);
    let mut batches = 0;
    for compression in Compression::ALL {
        // Ten fields of eight batches per codec; our own compressed batches come back as
        // they are too, since encode compresses them the same way again.
        for _ in 0..10 {
            let mut field = Vec::new();
            for _ in 0..8 {
                random_batch(&mut rng, compression)
                    .encode_to_vec(&mut field)
                    .unwrap();
                batches += 1;
            }
            let decoded = ok(&DECODE, &field);
            assert_eq!(json(&decoded), batches_json(&field), "{compression}");
            assert_eq!(ok(&ENCODE, &decoded), field, "{compression}");
        }
    }
    assert_eq!(batches, 400);
}

#[test]
fn hex_in_and_out_and_files() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut field = Vec::new();
    for compression in [Compression::None, Compression::Lz4] {
        random_batch(&mut rng, compression)
            .encode_to_vec(&mut field)
            .unwrap();
    }
    let raw = ok(&DECODE, &field);
    // --hex reads the hex forms the frame commands read: plain, or annotated with `0x`
    // words and comments.
    let plain = hex(&field);
    assert_eq!(
        ok(&["records", "decode", "--hex", "-"], plain.as_bytes()),
        raw
    );
    let annotated: String = std::iter::once("# two batches\n".to_owned())
        .chain(field.chunks(8).map(|chunk| {
            let words: Vec<String> = chunk.iter().map(|b| format!("0x{b:02x},")).collect();
            format!("{}  # {} bytes\n", words.join(" "), chunk.len())
        }))
        .collect();
    assert_eq!(
        ok(&["records", "decode", "--hex", "-"], annotated.as_bytes()),
        raw
    );
    // --hex writes lowercase hex and a newline.
    let text = ok(&["records", "encode", "--hex", "-"], &raw);
    assert_eq!(String::from_utf8(text).unwrap(), format!("{plain}\n"));
    // FILE arguments for both.
    let bin = scratch_file("field.bin", &field);
    assert_eq!(ok(&["records", "decode", bin.to_str().unwrap()], b""), raw);
    let json_file = scratch_file("field.json", &raw);
    assert_eq!(
        ok(&["records", "encode", json_file.to_str().unwrap()], b""),
        field
    );
    // An empty field holds no batches.
    assert_eq!(json(&ok(&DECODE, b"")), serde_json::json!([]));
    assert_eq!(ok(&ENCODE, b"[]"), b"");
}

#[test]
fn encode_fills_in_what_the_json_leaves_out() {
    let minimal = serde_json::json!([
        {"records": [{"value": "dmFsdWU="}, {"key": "aw==", "timestamp": T0}]},
        {"baseOffset": 10, "magic": 1, "compression": "gzip", "records": [{"timestamp": T0}]},
    ]);
    let bytes = ok(&ENCODE, minimal.to_string().as_bytes());
    let batches = json(&ok(&DECODE, &bytes));
    assert_eq!(batches[0]["records"][1]["offset"], 1);
    assert_eq!(batches[0]["records"][0]["key"], Value::Null);
    assert_eq!(batches[0]["producerId"], -1);
    assert_eq!(batches[1]["magic"], 1);
    assert_eq!(batches[1]["compression"], "gzip");
    assert_eq!(batches[1]["records"][0]["offset"], 10);
}

// ---------------------------------------------------------------------------------------------
// Malformed input

fn one_batch(compression: Compression, base_offset: i64) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(compression).base_offset(base_offset);
    for (i, key) in ["k0", "k1", "k2"].into_iter().enumerate() {
        builder.append(
            T0 + i as i64,
            Some(Bytes::from(key)),
            Some(Bytes::from(vec![b'v'; 10])),
        );
    }
    builder.build().encode_to_bytes().unwrap().to_vec()
}

#[test]
fn malformed_batches_name_the_batch_the_record_and_the_byte() {
    let good = one_batch(Compression::None, 5);
    let mut field = good.clone();

    // A wrong CRC in the second batch of the field.
    let mut bad = one_batch(Compression::None, 40);
    bad[70] ^= 0xff;
    field.extend(&bad);
    let message = assert_malformed(&DECODE, &field, "CRC mismatch");
    assert!(message.contains("base offset 40"), "{message}");

    // A record whose key runs past its end (CRC valid): the record's index is named. The
    // second record starts after the 61-byte header and the first record (its length, one
    // byte, and what it counts); its key length sits after length, attributes, timestamp
    // delta and offset delta, one byte each.
    let mut bad = one_batch(Compression::None, 40);
    let second = 61 + 1 + usize::from(bad[61] / 2);
    assert_eq!(bad[second + 4], 4, "key length 2, zigzag");
    bad[second + 4] = 60;
    reseal(&mut bad);
    let mut field = good.clone();
    field.extend(&bad);
    let message = assert_malformed(&DECODE, &field, "base offset 40, record 1 (byte offset ");
    // The byte offset is the problem's, in the whole field: inside the second batch.
    let offset: usize = message
        .rsplit("byte offset ")
        .next()
        .unwrap()
        .trim_end()
        .trim_end_matches(')')
        .parse()
        .unwrap();
    assert!(
        (good.len() + second..field.len()).contains(&offset),
        "{message}"
    );

    // Corrupt compressed records: the offset in the decompressed bytes too.
    let mut bad = one_batch(Compression::Gzip, 7);
    let end = bad.len();
    bad[end - 6] ^= 0xff; // inside gzip's CRC-32 trailer
    reseal(&mut bad);
    assert_malformed(&DECODE, &bad, "gzip data is corrupt");

    // Cut short: refused, or left out with --allow-truncated-tail and a warning.
    let mut field = good.clone();
    field.extend(&one_batch(Compression::None, 8)[..30]);
    let message = assert_malformed(&DECODE, &field, "truncated");
    assert!(message.contains("base offset 8"), "{message}");
    let (out, warnings) = ok_with_warnings(
        &["records", "decode", "--allow-truncated-tail", "-"],
        &field,
    );
    assert_eq!(json(&out), batches_json(&good));
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains(&format!(
            "30 bytes of an incomplete last batch, from byte offset {}",
            good.len()
        )),
        "{warnings:?}"
    );

    // A magic no Kafka knows; a length below any batch's.
    let mut bad = good.clone();
    bad[16] = 3;
    assert_malformed(&DECODE, &bad, "unsupported magic 3");
    let mut bad = good.clone();
    bad[8..12].copy_from_slice(&5i32.to_be_bytes());
    assert_malformed(&DECODE, &bad, "invalid batch length 5");

    // Input that is not there or not hex.
    assert_refused(
        &["records", "decode", "/nonexistent/records.bin"],
        b"",
        "cannot read",
    );
    assert_refused(&["records", "decode", "--hex", "-"], b"00 0g", "line 1");
}

#[test]
fn batches_encode_would_change_are_named() {
    // A record's null key length written in two bytes (0x81 0x00) instead of one (0x01):
    // Kafka's reader takes it, and so do we, but encode writes the canonical byte.
    let mut builder = RecordBatchBuilder::new(Compression::None).base_offset(3);
    builder.append(T0, None, Some(Bytes::from_static(b"v")));
    let canonical = builder.build().encode_to_bytes().unwrap().to_vec();
    let record = 61;
    assert_eq!(
        &canonical[record + 4..record + 6],
        &[0x01, 0x02],
        "null key, 1-byte value"
    );
    let mut odd = canonical[..record + 4].to_vec();
    odd[record] += 2; // the record's length, zigzag: one byte more
    odd.extend([0x81, 0x00]);
    odd.extend(&canonical[record + 5..]);
    reseal(&mut odd);
    let (out, warnings) = ok_with_warnings(&DECODE, &odd);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("the batch at base offset 3 (byte offset 0), from byte offset"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("not in the canonical form"),
        "{warnings:?}"
    );
    assert_eq!(ok(&ENCODE, &out), canonical);
}

#[test]
fn malformed_json_is_one_line_naming_the_place() {
    let record = |extra: &str| format!(r#"[{{"records": [{{"value": "eA=="{extra}}}]}}]"#);
    for (input, expected) in [
        ("[".to_owned(), "invalid JSON"),
        ("{}".to_owned(), "expected an array"),
        (
            r#"[{"baseOffset": 1}]"#.to_owned(),
            "required field is missing at [0].records",
        ),
        (
            record(r#", "kee": null"#),
            "unknown field \"kee\" at [0].records[0]",
        ),
        (
            record(r#", "key": "!!""#),
            "invalid base64 at [0].records[0].key",
        ),
        (record(r#", "offset": "x""#), "[0].records[0].offset"),
        (
            r#"[{"compression": "brotli", "records": []}]"#.to_owned(),
            "[0].compression",
        ),
        (
            r#"[{"magic": 0, "records": [{"headers": [{"key": "h", "value": null}]}]}]"#.to_owned(),
            "batch [0] (base offset 0): cannot write the batch",
        ),
        (
            r#"[{"magic": 1, "compression": "zstd", "records": [{}]}]"#.to_owned(),
            "zstd compression needs magic 2",
        ),
    ] {
        assert_refused(&ENCODE, input.as_bytes(), expected);
    }
}

#[test]
fn an_edited_control_value_is_refused_not_dropped() {
    let mut builder = RecordBatchBuilder::new(Compression::None)
        .control(true)
        .transactional(true)
        .producer(9, 1, -1);
    let marker = EndTxnMarker::default().with_coordinator_epoch(12);
    builder
        .append_control(T0, &ControlRecord::Commit(marker))
        .unwrap();
    let bytes = builder.build().encode_to_bytes().unwrap().to_vec();
    let mut batches = json(&ok(&DECODE, &bytes));
    let control = &mut batches[0]["records"][0]["control"];
    assert_eq!(control["type"], "COMMIT");
    assert_eq!(control["value"]["coordinatorEpoch"], 12);
    // Unchanged, or left out: the key and value are written as they are.
    assert_eq!(ok(&ENCODE, batches.to_string().as_bytes()), bytes);
    let mut without = batches.clone();
    without[0]["records"][0]
        .as_object_mut()
        .unwrap()
        .remove("control");
    assert_eq!(ok(&ENCODE, without.to_string().as_bytes()), bytes);
    // Edited: refused, since it is not what gets written.
    let control_json = batches[0]["records"][0]["control"].clone();
    batches[0]["records"][0]["control"]["value"]["coordinatorEpoch"] = 13.into();
    assert_refused(
        &ENCODE,
        batches.to_string().as_bytes(),
        "batch [0] (base offset 0): records[0].control is not what the record's key and value hold",
    );
    // Nor can a record of an ordinary batch carry one.
    let ordinary = serde_json::json!([{"records": [{"value": "eA==", "control": control_json}]}]);
    assert_refused(
        &ENCODE,
        ordinary.to_string().as_bytes(),
        "records[0].control is not what the record's key and value hold",
    );
}

// ---------------------------------------------------------------------------------------------
// The decompression cap

/// A v2 batch of one record whose compressed records area is `area`, CRC and length fixed
/// up, so that only decompressing can refuse it.
fn batch_with_area(compression: Compression, area: &[u8]) -> Vec<u8> {
    let mut bytes = one_batch(Compression::None, 0)[..61].to_vec();
    bytes[57..61].copy_from_slice(&1i32.to_be_bytes());
    bytes[21..23].copy_from_slice(&i16::from(compression.id()).to_be_bytes());
    bytes.extend(area);
    reseal(&mut bytes);
    bytes
}

/// Our compressed form of `len` zero bytes, as a batch's records area.
fn compressed_zeros(compression: Compression, len: usize) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(compression);
    builder.append(0, None, Some(Bytes::from(vec![0u8; len])));
    builder.build().encode_to_bytes().unwrap()[61..].to_vec()
}

#[test]
fn the_cap_flag_refuses_a_bomb() {
    // About 200 bytes of gzip that inflate to 100 kB.
    let mut builder = RecordBatchBuilder::new(Compression::Gzip).base_offset(77);
    builder.append(T0, None, Some(Bytes::from(vec![0u8; 100_000])));
    let bomb = builder.build().encode_to_bytes().unwrap().to_vec();
    assert!(bomb.len() < 250, "{} bytes", bomb.len());
    let message = assert_malformed(
        &[
            "records",
            "decode",
            "--max-decompressed-bytes",
            "16384",
            "-",
        ],
        &bomb,
        "decompressed records exceed the limit of 16384 bytes in the batch at base offset 77",
    );
    assert!(message.contains("byte offset 61"), "{message}");
    // Under the default cap (64 MiB) the same batch is fine.
    let out = ok(&DECODE, &bomb);
    assert_eq!(json(&out)[0]["records"][0]["offset"], 77);
    assert!(
        ok(
            &[
                "records",
                "decode",
                "--max-decompressed-bytes",
                "100100",
                "-"
            ],
            &bomb
        )
        .len()
            > 100_000
    );

    // zstd frames of 1 MiB of zeros, 80 of them (a few kB): beyond the default cap.
    let frame = compressed_zeros(Compression::Zstd, 1 << 20);
    let bomb = batch_with_area(Compression::Zstd, &frame.repeat(80));
    assert!(bomb.len() < 10_000, "{} bytes", bomb.len());
    assert_malformed(
        &DECODE,
        &bomb,
        "exceed the limit of 67108864 bytes in the batch at base offset 0",
    );
}

// ---------------------------------------------------------------------------------------------
// The command line

#[test]
fn help_names_every_flag() {
    let help = |args: &[&str]| String::from_utf8(ok(args, b"")).unwrap();
    let records = help(&["records", "--help"]);
    for word in ["decode", "encode", "baseOffset", "magic 0 and 1"] {
        assert!(records.contains(word), "{word}: {records}");
    }
    let decode = help(&["records", "decode", "--help"]);
    for flag in [
        "FILE|-",
        "--hex",
        "--max-decompressed-bytes",
        "[default: 67108864]",
        "--allow-truncated-tail",
        "xxd",
    ] {
        assert!(decode.contains(flag), "{flag}: {decode}");
    }
    assert!(!decode.contains("--size-prefixed"));
    let encode = help(&["records", "encode", "--help"]);
    assert!(
        encode.contains("FILE|-") && encode.contains("--hex"),
        "{encode}"
    );
    assert!(!encode.contains("--max-decompressed-bytes"));
    assert!(help(&["--help"]).contains("records"));
    assert!(help(&["records", "decode", "-h"]).contains("--max-decompressed-bytes"));
}

#[test]
fn usage_errors() {
    for args in [
        &["records"][..],
        &["records", "decode"],
        &["records", "frobnicate", "-"],
        &["records", "decode", "--max-decompressed-bytes", "-5", "-"],
        &[
            "records",
            "decode",
            "--max-decompressed-bytes",
            "64MiB",
            "-",
        ],
        &["records", "decode", "--size-prefixed", "-"],
        &["records", "encode", "--allow-truncated-tail", "-"],
        &["records", "encode", "--max-decompressed-bytes", "1", "-"],
        &["records", "encode", "-", "extra"],
    ] {
        assert_usage_error(args);
    }
}

#[test]
fn the_readme_example_is_what_the_tool_prints() {
    let example =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/records/batch-v2.hex");
    let example = example.to_str().unwrap();
    let printed = ok(&["records", "decode", "--hex", example], b"");
    let bytes = unhex(&std::fs::read(example).unwrap()).unwrap();
    assert_eq!(json(&printed), batches_json(&bytes));
    // cli/README.md shows that output and the hex `encode` gives back, verbatim.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let shown = |command: &str| -> String {
        let start = readme
            .find(command)
            .unwrap_or_else(|| panic!("README lacks {command}"));
        let block = &readme[start + command.len()..];
        block[..block.find("```").unwrap()]
            .trim_start_matches('\n')
            .to_owned()
    };
    let decode = "$ kafka-codec records decode --hex examples/records/batch-v2.hex\n";
    assert_eq!(shown(decode), String::from_utf8(printed.clone()).unwrap());
    let encode = "| kafka-codec records encode --hex -\n";
    assert_eq!(shown(encode), format!("{}\n", hex(&bytes)));
    assert_eq!(
        ok(&["records", "encode", "--hex", "-"], &printed),
        shown(encode).as_bytes()
    );
}
