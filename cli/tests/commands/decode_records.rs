//! `kafka-codec decode request|response --records`: every `records` field of a Produce
//! request and a Fetch response shown as the batches it holds (real clients' and Kafka's
//! Java batches from `tests/golden/records/`, every codec, and the magic 0 and 1 message sets
//! of Produce v0-v2 and Fetch v0-v3), read back by `encode`.

use crate::support::{
    assert_refused, batches_json, golden_records, json, ok, run, stderr, without_crc,
};
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{FetchResponse, ProduceRequest, RequestHeader, ResponseHeader};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::{Request, RequestFrame, Response, ResponseFrame};
use kafka_codec_hexdump::decode as unhex;

const PRODUCE_VERSION: i16 = 9;
const FETCH_VERSION: i16 = 12;

fn line_bytes(line: &Value) -> Bytes {
    Bytes::from(unhex(line["hex"].as_str().unwrap().as_bytes()).unwrap())
}

/// A Produce request whose partition `i` carries `fields[i]`.
fn produce_frame(fields: &[Bytes]) -> Vec<u8> {
    produce_frame_at(PRODUCE_VERSION, fields)
}

/// The same at `version`.
fn produce_frame_at(version: i16, fields: &[Bytes]) -> Vec<u8> {
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(
                fields
                    .iter()
                    .enumerate()
                    .map(|(index, field)| {
                        PartitionProduceData::default()
                            .with_index(index as i32)
                            .with_records(Some(field.clone()))
                    })
                    .collect(),
            )]);
    let frame = RequestFrame {
        header: RequestHeader::default()
            .with_request_api_key(0)
            .with_request_api_version(version)
            .with_correlation_id(7)
            .with_client_id(Some("decode-records-test".into())),
        body: Request::from(body),
    };
    frame.encode_to_bytes().unwrap().to_vec()
}

fn fetch_frame(field: Bytes) -> Vec<u8> {
    fetch_frame_at(FETCH_VERSION, field)
}

/// A Fetch response at `version` whose one partition carries `field`.
fn fetch_frame_at(version: i16, field: Bytes) -> Vec<u8> {
    let body = FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic("t".into())
        .with_partitions(vec![PartitionData::default()
            .with_partition_index(0)
            .with_high_watermark(10)
            .with_records(Some(field))])]);
    let frame = ResponseFrame {
        api_version: version,
        header: ResponseHeader::default().with_correlation_id(9),
        body: Response::from(body),
    };
    frame.encode_to_bytes().unwrap().to_vec()
}

const DECODE_PRODUCE: [&str; 5] = ["decode", "request", "--records", "--hex", "-"];
const DECODE_FETCH: [&str; 9] = [
    "decode",
    "response",
    "--api-key",
    "1",
    "--api-version",
    "12",
    "--records",
    "--hex",
    "-",
];

fn hex(bytes: &[u8]) -> Vec<u8> {
    kafka_codec_hexdump::encode(bytes).into_bytes()
}

#[test]
fn produce_records_of_real_clients_expand_in_place_and_encode_back() {
    let lines = golden_records("clients.jsonl");
    assert_eq!(lines.len(), 15, "three clients, five codecs");
    let (plain, compressed): (Vec<&Value>, Vec<&Value>) =
        lines.iter().partition(|line| line["codec"] == "none");
    assert_eq!(plain.len(), 3);

    // Uncompressed: the frame comes back byte for byte, silently.
    let fields: Vec<Bytes> = plain.iter().map(|line| line_bytes(line)).collect();
    let frame = produce_frame(&fields);
    let shown = json(&ok(&DECODE_PRODUCE, &hex(&frame)));
    let partitions = shown["body"]["topicData"][0]["partitionData"]
        .as_array()
        .unwrap();
    for (partition, field) in partitions.iter().zip(&fields) {
        assert_eq!(partition["records"], batches_json(field));
    }
    let text = serde_json::to_vec(&shown).unwrap();
    assert_eq!(ok(&["encode", "request", "-"], &text), frame);
    // Without --records the same field is base64, as before.
    let plain_json = json(&ok(&["decode", "request", "--hex", "-"], &hex(&frame)));
    assert!(plain_json["body"]["topicData"][0]["partitionData"][0]["records"].is_string());

    // Every codec: the records shown are the client's; encode compresses again.
    let fields: Vec<Bytes> = compressed.iter().map(|line| line_bytes(line)).collect();
    let frame = produce_frame(&fields);
    let output = run(&DECODE_PRODUCE, &hex(&frame));
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = json(&output.stdout);
    let partitions = shown["body"]["topicData"][0]["partitionData"]
        .as_array()
        .unwrap();
    for ((partition, field), line) in partitions.iter().zip(&fields).zip(&compressed) {
        assert_eq!(partition["records"], batches_json(field));
        let batch = &partition["records"][0];
        assert_eq!(batch["compression"], line["codec"]);
        let sent = line["records"].as_array().unwrap();
        let got = batch["records"].as_array().unwrap();
        assert_eq!(got.len(), sent.len());
        for (got, sent) in got.iter().zip(sent) {
            for key in ["timestamp", "key", "value", "headers"] {
                assert_eq!(
                    got[key], sent[key],
                    "{} {}: {key}",
                    line["client"], line["codec"]
                );
            }
        }
    }
    let text = serde_json::to_vec(&shown).unwrap();
    let again = ok(&["encode", "request", "-"], &text);
    let reshown = json(&ok(&DECODE_PRODUCE, &hex(&again)));
    for (a, b) in reshown["body"]["topicData"][0]["partitionData"]
        .as_array()
        .unwrap()
        .iter()
        .zip(partitions)
    {
        assert_eq!(
            without_crc(a["records"].clone()),
            without_crc(b["records"].clone())
        );
    }
}

/// The output of `args`, which must be silent when `quiet` (else it may warn that a
/// compressed batch will be compressed again to other bytes).
fn shown_quietly_if(quiet: bool, args: &[&str], input: &[u8]) -> Vec<u8> {
    if quiet {
        return ok(args, input);
    }
    let output = run(args, input);
    assert!(output.status.success(), "{}", stderr(&output));
    output.stdout
}

/// Produce v0-v2 and Fetch v0-v3, which Kafka 4.0 removed, carry the message sets of magic 0
/// and 1 that clients of that time wrote (here as Kafka's MemoryRecordsBuilder writes them):
/// shown as batches with Kafka's records, and written back.
#[test]
fn old_produce_and_fetch_versions_show_magic_0_and_1_message_sets() {
    let lines = golden_records("java.jsonl");
    for magic in [0, 1] {
        let batches: Vec<&Value> = lines
            .iter()
            .filter(|line| line["batch"]["magic"] == magic)
            .collect();
        let (plain, compressed): (Vec<&Value>, Vec<&Value>) = batches
            .iter()
            .partition(|line| line["batch"]["compression"] == "none");
        assert!(!plain.is_empty() && !compressed.is_empty(), "magic {magic}");
        // Uncompressed, each message of magic 0 or 1 is an entry of its own; compressed, a
        // wrapper holds them. Either way the records are Kafka's, in order.
        let check = |shown: &Value, lines: &[&Value]| {
            let shown = shown.as_array().unwrap();
            assert!(shown.iter().all(|batch| batch["magic"] == magic));
            let got: Vec<&Value> = shown
                .iter()
                .flat_map(|batch| batch["records"].as_array().unwrap())
                .collect();
            let sent: Vec<&Value> = lines
                .iter()
                .flat_map(|line| line["batch"]["records"].as_array().unwrap())
                .collect();
            assert_eq!(got.len(), sent.len());
            for (got, sent) in got.iter().zip(sent) {
                for key in ["offset", "timestamp", "key", "value"] {
                    assert_eq!(got[key], sent[key], "magic {magic}: {key}");
                }
            }
        };
        for (lines, exact) in [(&plain, true), (&compressed, false)] {
            let field = Bytes::from(
                lines
                    .iter()
                    .flat_map(|l| line_bytes(l).to_vec())
                    .collect::<Vec<u8>>(),
            );
            for version in 0..=2 {
                let frame = produce_frame_at(version, std::slice::from_ref(&field));
                let shown = json(&shown_quietly_if(exact, &DECODE_PRODUCE, &hex(&frame)));
                assert_eq!(shown["header"]["requestApiVersion"], version);
                let records = &shown["body"]["topicData"][0]["partitionData"][0]["records"];
                check(records, lines);
                let again = ok(
                    &["encode", "request", "-"],
                    &serde_json::to_vec(&shown).unwrap(),
                );
                if exact {
                    assert_eq!(again, frame, "Produce v{version}, magic {magic}");
                } else {
                    let reshown = json(&shown_quietly_if(false, &DECODE_PRODUCE, &hex(&again)));
                    let records_again =
                        &reshown["body"]["topicData"][0]["partitionData"][0]["records"];
                    assert_eq!(
                        without_crc(records_again.clone()),
                        without_crc(records.clone())
                    );
                }
            }
            for version in 0..=3 {
                let frame = fetch_frame_at(version, field.clone());
                let args = [
                    "decode",
                    "response",
                    "--api-key",
                    "1",
                    "--api-version",
                    &version.to_string(),
                    "--records",
                    "--hex",
                    "-",
                ];
                let shown = json(&shown_quietly_if(exact, &args, &hex(&frame)));
                let records = &shown["body"]["responses"][0]["partitions"][0]["records"];
                check(records, lines);
                let again = ok(
                    &["encode", "response", "-"],
                    &serde_json::to_vec(&shown).unwrap(),
                );
                if exact {
                    assert_eq!(again, frame, "Fetch v{version}, magic {magic}");
                } else {
                    let reshown = json(&shown_quietly_if(false, &args, &hex(&again)));
                    let records_again =
                        &reshown["body"]["responses"][0]["partitions"][0]["records"];
                    assert_eq!(
                        without_crc(records_again.clone()),
                        without_crc(records.clone())
                    );
                }
            }
        }
    }
}

#[test]
fn a_fetch_responses_partial_last_batch_is_shown_as_its_tail() {
    let lines = golden_records("java.jsonl");
    let complete: Vec<Bytes> = lines
        .iter()
        .filter(|line| line["batch"]["compression"] == "none" && line["batch"]["magic"] == 2)
        .take(4)
        .map(line_bytes)
        .collect();
    assert_eq!(complete.len(), 4);
    let mut field = complete.concat();
    let whole_len = field.len();
    let next = line_bytes(&lines[1]);
    field.extend_from_slice(&next[..next.len() / 2]);
    let frame = fetch_frame(Bytes::from(field.clone()));

    let shown = json(&ok(&DECODE_FETCH, &hex(&frame)));
    let records = shown["body"]["responses"][0]["partitions"][0]["records"]
        .as_array()
        .unwrap();
    assert_eq!(records.len(), 5, "four batches and the tail");
    assert_eq!(
        Value::Array(records[..4].to_vec()),
        batches_json(&field[..whole_len])
    );
    let tail = &records[4];
    assert_eq!(
        tail["truncatedTail"],
        kafka_codec::json::bytes_to_json(&field[whole_len..])
    );
    assert!(tail["note"].as_str().unwrap().contains("incomplete batch"));
    // Written back exactly, tail included.
    let text = serde_json::to_vec(&shown).unwrap();
    assert_eq!(ok(&["encode", "response", "-"], &text), frame);
}

#[test]
fn records_that_do_not_decode_fail_unless_allowed() {
    let lines = golden_records("clients.jsonl");
    let mut field = line_bytes(&lines[0]).to_vec();
    let last = field.len() - 1;
    field[last] ^= 0xff; // the CRC no longer matches
    let frame = produce_frame(&[Bytes::from(field.clone())]);
    let message = assert_refused(&DECODE_PRODUCE, &hex(&frame), "records");
    assert!(
        message.contains("CRC") || message.contains("crc"),
        "{message}"
    );

    let mut args = DECODE_PRODUCE.to_vec();
    args.insert(3, "--allow-invalid-records");
    let output = run(&args, &hex(&frame));
    assert!(output.status.success(), "{}", stderr(&output));
    let shown = json(&output.stdout);
    assert_eq!(
        shown["body"]["topicData"][0]["partitionData"][0]["records"],
        kafka_codec::json::bytes_to_json(&field)
    );
    let warning = stderr(&output);
    assert!(warning.contains("does not decode"), "{warning}");
    // And the base64 is written back as it was.
    let text = serde_json::to_vec(&shown).unwrap();
    assert_eq!(ok(&["encode", "request", "-"], &text), frame);
}

#[test]
fn max_frame_bytes_refuses_larger_frames_before_decoding() {
    let lines = golden_records("clients.jsonl");
    let frame = produce_frame(&[line_bytes(&lines[0])]);
    let limit = (frame.len() - 1).to_string();
    let args = [
        "decode",
        "request",
        "--max-frame-bytes",
        &limit,
        "--hex",
        "-",
    ];
    assert_refused(&args, &hex(&frame), "--max-frame-bytes");
    let text = ok(&["decode", "request", "--hex", "-"], &hex(&frame));
    let args = ["encode", "request", "--max-frame-bytes", &limit, "-"];
    assert_refused(&args, &text, "--max-frame-bytes");
    let exact = frame.len().to_string();
    assert_eq!(
        ok(
            &["encode", "request", "--max-frame-bytes", &exact, "-"],
            &text
        ),
        frame
    );
}
