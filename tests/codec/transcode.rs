//! The transcoder (`json::transcode_request`, `transcode_response`, `transcode_message`):
//! Kafka's JSON written straight from wire bytes is, byte for byte, the text of decoding the
//! bytes and writing the message's JSON, and bytes that decoding refuses are refused with the
//! same error (kind, offset, path, message). The one allowed difference is the memory budget,
//! which charges what a decode allocates; the transcoder allocates no arrays.
//!
//! The expected side is always the decoder and the JSON writer, which `roundtrip.rs` and
//! `golden_replay.rs` hold to Kafka's own answers.

use crate::support::{corpus_file, direction, golden_dir, unhex};
use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::json::{
    transcode_message, transcode_request, transcode_response, JsonOptions, JsonSink, JsonWriter,
    RecordsJson, TranscodeError,
};
use kafka_codec::messages::{
    create_topics_response, fetch_request, fetch_response, fetch_snapshot_response,
    CreateTopicsResponse, FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse,
    RequestHeader, ResponseHeader,
};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::wire::Decoder;
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeLimits, DecodeOptions, EncodeErrorKind, Message,
    MessageCodec, MessageKind, MessageVisitor, RandomMessageVisitor, Request, RequestFrame,
    Response, ResponseFrame, TrailingBytes,
};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use serde_json::Value;
use std::path::Path;

/// What a transcode (or decode and write) gives: the text and the trailing bytes let through.
type Outcome = Result<(Vec<u8>, usize), TranscodeError>;

/// Shows `records` as their length, and refuses some (one length in four), so that both the
/// hook and a refusal mid-message are compared.
struct Hook;

impl RecordsJson for Hook {
    fn write_records_json(&self, records: &Bytes, out: &mut dyn JsonSink) -> Result<(), String> {
        if records.len() % 4 == 3 {
            return Err(format!("{} bytes refused", records.len()));
        }
        out.begin_object();
        out.key("length");
        out.u64(records.len() as u64);
        out.end_object();
        Ok(())
    }

    fn records_from_json(&self, _: &Value) -> Result<Bytes, String> {
        Err("not read here".into())
    }
}

/// Refuses every `records` field.
struct Refuse;

impl RecordsJson for Refuse {
    fn write_records_json(&self, _: &Bytes, _: &mut dyn JsonSink) -> Result<(), String> {
        Err("refused".into())
    }

    fn records_from_json(&self, _: &Value) -> Result<Bytes, String> {
        Err("not read here".into())
    }
}

/// The text `write` writes, compact or pretty, with what it returns.
fn text<T, E>(
    pretty: bool,
    write: impl FnOnce(&mut dyn JsonSink) -> Result<T, E>,
) -> Result<(Vec<u8>, T), E> {
    let mut text = Vec::new();
    let mut writer = if pretty {
        JsonWriter::pretty(&mut text)
    } else {
        JsonWriter::compact(&mut text)
    };
    let value = write(&mut writer)?;
    writer.finish().expect("a Vec takes every write");
    Ok((text, value))
}

/// How `M` at `version` is written from `input` by decoding it first: `decode_exact`'s error
/// for trailing bytes under `Reject`.
fn decoded_message<M: MessageCodec>(
    input: &Bytes,
    version: i16,
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    let mut decoder = Decoder::with_limits(input, options.limits);
    let message = M::decode_from(&mut decoder, version)?;
    let trailing = decoder.remaining();
    if options.trailing_bytes == TrailingBytes::Reject && trailing != 0 {
        return Err(decoder
            .error(DecodeErrorKind::TrailingBytes(trailing))
            .in_message(M::NAME, version)
            .into());
    }
    let (text, ()) = text(pretty, |out| message.write_json_with(version, json, out))?;
    Ok((text, trailing))
}

fn transcoded_message<M: MessageCodec>(
    input: &Bytes,
    version: i16,
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    text(pretty, |out| {
        transcode_message::<M>(input, version, options, json, out)
    })
    .map(|(text, done)| (text, done.trailing_bytes))
}

/// The bytes a request frame's header and body take, read as `RequestFrame::decode_with`
/// reads them (for the trailing count, which the frame does not report).
fn request_len(frame: &Bytes, options: &DecodeOptions) -> Result<usize, DecodeError> {
    let (api, version) = RequestFrame::peek_api(frame)?;
    let mut decoder = Decoder::with_limits(frame, options.limits);
    RequestHeader::decode_from(&mut decoder, api.request_header_version(version))?;
    Request::decode_from(api, &mut decoder, version)?;
    Ok(decoder.position())
}

fn response_len(
    frame: &Bytes,
    api: ApiKey,
    version: i16,
    options: &DecodeOptions,
) -> Result<usize, DecodeError> {
    let mut decoder = Decoder::with_limits(frame, options.limits);
    ResponseHeader::decode_from(&mut decoder, api.response_header_version(version))?;
    Response::decode_from(api, &mut decoder, version)?;
    Ok(decoder.position())
}

fn decoded_request(
    frame: &Bytes,
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    let decoded = RequestFrame::decode_with(frame.clone(), options)?;
    let trailing = frame.len() - request_len(frame, options)?;
    let (text, ()) = text(pretty, |out| decoded.write_json(json, out))?;
    Ok((text, trailing))
}

fn transcoded_request(
    frame: &Bytes,
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    text(pretty, |out| transcode_request(frame, options, json, out))
        .map(|(text, done)| (text, done.trailing_bytes))
}

fn decoded_response(
    frame: &Bytes,
    (api, version): (ApiKey, i16),
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    let decoded = ResponseFrame::decode_with(frame.clone(), api, version, options)?;
    let trailing = frame.len() - response_len(frame, api, version, options)?;
    let (text, ()) = text(pretty, |out| decoded.write_json(json, out))?;
    Ok((text, trailing))
}

fn transcoded_response(
    frame: &Bytes,
    (api, version): (ApiKey, i16),
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
    pretty: bool,
) -> Outcome {
    text(pretty, |out| {
        transcode_response(frame, api, version, options, json, out)
    })
    .map(|(text, done)| (text, done.trailing_bytes))
}

/// Where the two outcomes differ, if they do.
fn differ(expected: &Outcome, got: &Outcome) -> Option<String> {
    match (expected, got) {
        (Ok(a), Ok(b)) if a == b => None,
        // Debug text too: a NaN in an error is not equal to itself.
        (Err(a), Err(b)) if a == b || format!("{a:?}") == format!("{b:?}") => None,
        (Ok((a, at)), Ok((b, bt))) => Some(format!(
            "text or trailing bytes differ:\n  decoded    ({at}) {}\n  transcoded ({bt}) {}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b)
        )),
        (a, b) => Some(format!(
            "decoded {:?}\n  transcoded {:?}",
            a.as_ref().map(|(t, n)| (String::from_utf8_lossy(t), n)),
            b.as_ref().map(|(t, n)| (String::from_utf8_lossy(t), n)),
        )),
    }
}

/// Whether a decode was refused for the memory budget alone, where the transcoder, which
/// allocates no arrays, may go on.
fn over_budget(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Err(TranscodeError::Decode(e))
            if matches!(e.kind(), DecodeErrorKind::LimitExceeded { what: "memory budget", .. })
    )
}

/// Both ways of writing `frame`'s JSON under every combination of layout and records hook.
fn compare_all(
    place: &str,
    failures: &mut Vec<String>,
    compare: impl Fn(&JsonOptions<'_>, bool) -> (Outcome, Outcome),
) {
    let hook = Hook;
    let with_hook = JsonOptions {
        lenient: false,
        records: Some(&hook),
    };
    for (json, pretty) in [
        (JsonOptions::default(), false),
        (with_hook, true),
        (with_hook, false),
    ] {
        let (expected, got) = compare(&json, pretty);
        if let Some(diff) = differ(&expected, &got) {
            failures.push(format!(
                "{place} (pretty {pretty}, hook {}): {diff}",
                json.records.is_some()
            ));
            return;
        }
    }
}

/// A request frame (header v1/v2 as the API and version require) around `body`.
fn request_frame(api: ApiKey, version: i16, body: &[u8]) -> Bytes {
    let mut frame = Vec::new();
    RequestHeader::default()
        .with_request_api_key(api.key())
        .with_request_api_version(version)
        .with_correlation_id(7)
        .with_client_id(Some("tap".into()))
        .encode(&mut frame, api.request_header_version(version))
        .unwrap();
    frame.extend_from_slice(body);
    Bytes::from(frame)
}

/// A response frame around `body`.
fn response_frame(api: ApiKey, version: i16, body: &[u8]) -> Bytes {
    let mut frame = Vec::new();
    ResponseHeader::default()
        .with_correlation_id(7)
        .encode(&mut frame, api.response_header_version(version))
        .unwrap();
    frame.extend_from_slice(body);
    Bytes::from(frame)
}

/// The frame around a body of `M` (a request or response), with its API and version.
fn frame_of<M: Message>(version: i16, body: &[u8]) -> Option<(Bytes, ApiKey)> {
    let api = ApiKey::from_key(M::API_KEY?)?;
    match M::KIND {
        MessageKind::Request => Some((request_frame(api, version, body), api)),
        MessageKind::Response => Some((response_frame(api, version, body), api)),
        _ => None,
    }
}

/// Compares both ways for a frame of `M`'s kind.
fn compare_frame<M: Message>(
    place: &str,
    failures: &mut Vec<String>,
    frame: &Bytes,
    api: ApiKey,
    version: i16,
    options: &DecodeOptions,
) {
    if M::KIND == MessageKind::Request {
        compare_all(place, failures, |json, pretty| {
            (
                decoded_request(frame, options, json, pretty),
                transcoded_request(frame, options, json, pretty),
            )
        });
    } else {
        compare_all(place, failures, |json, pretty| {
            (
                decoded_response(frame, (api, version), options, json, pretty),
                transcoded_response(frame, (api, version), options, json, pretty),
            )
        });
    }
}

const CASES_PER_VERSION: usize = 12;

struct RandomEquivalence {
    rng: SmallRng,
    cells: usize,
    failures: Vec<String>,
}

impl RandomMessageVisitor for RandomEquivalence {
    fn visit<M: MessageCodec + Random>(&mut self) {
        let strict = DecodeOptions::default();
        let lenient = DecodeOptions {
            trailing_bytes: TrailingBytes::Allow,
            ..DecodeOptions::default()
        };
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            self.cells += 1;
            let before = self.failures.len();
            for case in 0..CASES_PER_VERSION {
                let mut entropy = vec![0; 4096];
                self.rng.fill_bytes(&mut entropy);
                let options = RandomOptions {
                    unknown_tagged_fields: case % 2 == 1,
                };
                let message = M::random(&mut Unstructured::new(&entropy), version, &options)
                    .expect("random message");
                let body = message.encode_to_vec(version).expect("encode");
                let place = format!("{} v{version} case {case}", M::NAME);
                let failures = &mut self.failures;
                // The message alone; then with two bytes after it, which `Allow` lets
                // through and `Reject` refuses.
                let mut long = body.clone();
                long.extend_from_slice(&[0x5a, 0xa5]);
                for (input, options) in [
                    (Bytes::from(body.clone()), &strict),
                    (Bytes::from(long.clone()), &lenient),
                    (Bytes::from(long), &strict),
                ] {
                    compare_all(&place, failures, |json, pretty| {
                        (
                            decoded_message::<M>(&input, version, options, json, pretty),
                            transcoded_message::<M>(&input, version, options, json, pretty),
                        )
                    });
                }
                if let Some((frame, api)) = frame_of::<M>(version, &body) {
                    compare_frame::<M>(&place, failures, &frame, api, version, &strict);
                    let mut long = frame.to_vec();
                    long.push(0);
                    let long = Bytes::from(long);
                    compare_frame::<M>(&place, failures, &long, api, version, &lenient);
                }
                if self.failures.len() > before {
                    break;
                }
            }
        }
    }
}

#[test]
fn random_messages_of_every_schema_and_version_transcode_as_they_decode() {
    let mut visitor = RandomEquivalence {
        rng: SmallRng::seed_from_u64(0x7a11),
        cells: 0,
        failures: Vec::new(),
    };
    kafka_codec::visit_random_messages(&mut visitor);
    assert!(visitor.cells > 400, "only {} cells", visitor.cells);
    assert!(
        visitor.failures.is_empty(),
        "{} failures:\n{}",
        visitor.failures.len(),
        visitor.failures.join("\n")
    );
}

/// Every case of the golden corpus (Kafka's own bytes, `tests/golden/`) that Kafka wrote.
struct Golden {
    cases: usize,
    failures: Vec<String>,
}

impl MessageVisitor for Golden {
    fn visit<M: MessageCodec>(&mut self) {
        let file = corpus_file(M::NAME, M::KIND, M::API_KEY);
        let Ok(text) = std::fs::read_to_string(golden_dir().join(&file)) else {
            return;
        };
        for (number, line) in text.lines().enumerate() {
            let Ok(Value::Array(items)) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            // Cases of this schema with Kafka's bytes: [version, direction, json, hex].
            let (Some(version), Some(kind), Some(Value::String(hex)), 4) = (
                items[0].as_i64(),
                items[1].as_str(),
                items.get(3),
                items.len(),
            ) else {
                continue;
            };
            if kind != direction(M::KIND) {
                continue;
            }
            let version = version as i16;
            let body = unhex(hex).expect("golden hex");
            let place = format!("{}:{} ({} v{version})", file, number + 1, M::NAME);
            self.cases += 1;
            let input = Bytes::from(body.clone());
            let strict = DecodeOptions::default();
            compare_all(&place, &mut self.failures, |json, pretty| {
                (
                    decoded_message::<M>(&input, version, &strict, json, pretty),
                    transcoded_message::<M>(&input, version, &strict, json, pretty),
                )
            });
            if let Some((frame, api)) = frame_of::<M>(version, &body) {
                compare_frame::<M>(&place, &mut self.failures, &frame, api, version, &strict);
            }
        }
    }
}

#[test]
fn every_golden_case_transcodes_as_it_decodes() {
    let mut golden = Golden {
        cases: 0,
        failures: Vec::new(),
    };
    kafka_codec::visit_messages(&mut golden);
    assert!(golden.cases > 10_000, "only {} golden cases", golden.cases);
    assert!(
        golden.failures.is_empty(),
        "{} failures:\n{}",
        golden.failures.len(),
        golden.failures.join("\n")
    );
}

/// One random frame of every API, version and direction.
fn random_frames() -> Vec<(Bytes, MessageKind, ApiKey, i16)> {
    struct Collect(Vec<(Bytes, MessageKind, ApiKey, i16)>, SmallRng);
    impl RandomMessageVisitor for Collect {
        fn visit<M: MessageCodec + Random>(&mut self) {
            for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
                let mut entropy = vec![0u8; 4096];
                self.1.fill_bytes(&mut entropy);
                let options = RandomOptions {
                    unknown_tagged_fields: version % 2 == 0,
                };
                let message =
                    M::random(&mut Unstructured::new(&entropy), version, &options).unwrap();
                let body = message.encode_to_vec(version).unwrap();
                if let Some((frame, api)) = frame_of::<M>(version, &body) {
                    self.0.push((frame, M::KIND, api, version));
                }
            }
        }
    }
    let mut collect = Collect(Vec::new(), SmallRng::seed_from_u64(11));
    kafka_codec::visit_random_messages(&mut collect);
    collect.0
}

/// The transcoder's outcome for a frame, and decoding's error, under `options`; `json` for
/// the transcoder (decoding writes nothing here).
fn refused(
    frame: &Bytes,
    kind: MessageKind,
    api: ApiKey,
    version: i16,
    options: &DecodeOptions,
    json: &JsonOptions<'_>,
) -> (Result<(), DecodeError>, Result<(), TranscodeError>) {
    let mut discard = std::io::sink();
    let mut sink = JsonWriter::compact(&mut discard);
    if kind == MessageKind::Request {
        (
            RequestFrame::decode_with(frame.clone(), options).map(drop),
            transcode_request(frame, options, json, &mut sink).map(drop),
        )
    } else {
        (
            ResponseFrame::decode_with(frame.clone(), api, version, options).map(drop),
            transcode_response(frame, api, version, options, json, &mut sink).map(drop),
        )
    }
}

#[test]
fn every_truncation_of_a_frame_of_every_api_is_refused_as_decoding_refuses_it() {
    let strict = DecodeOptions::default();
    let refuse = Refuse;
    // A hook that refuses every records field: decoding's error must still win wherever
    // the bytes are cut, though the transcoder meets the hook's refusal first.
    let refusing = JsonOptions {
        lenient: false,
        records: Some(&refuse),
    };
    let mut frames = random_frames();
    frames.extend(read_ahead_frames());
    let mut cuts = 0;
    let mut failures = Vec::new();
    for (frame, kind, api, version) in &frames {
        for cut in 0..frame.len() {
            let short = frame.slice(..cut);
            for json in [JsonOptions::default(), refusing] {
                let (decoded, transcoded) = refused(&short, *kind, *api, *version, &strict, &json);
                let decoded = decoded.expect_err("a cut frame");
                if transcoded != Err(TranscodeError::Decode(decoded.clone())) {
                    failures.push(format!(
                        "{} v{version} {kind:?} cut at {cut}: decoding gives {decoded:?}, transcoding {transcoded:?}",
                        api.name()
                    ));
                    break;
                }
            }
            cuts += 1;
        }
    }
    assert!(cuts > 50_000, "only {cuts} cuts");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// The version a fuzz input's selector byte picks (`tools/fuzz-oracle/src/lib.rs`'s `pick_version` with
/// versions out of range: `min - 1 ..= max + 1`).
fn pick_version(api: ApiKey, byte: u8) -> i16 {
    let range = api.valid_versions();
    let span = i32::from(range.max) - i32::from(range.min) + 3;
    (i32::from(range.min) - 1 + i32::from(byte) % span) as i16
}

/// The tracked seeds of a fuzz target (`fuzz/seeds/<target>/`, one input of each class the
/// campaigns' corpus held: see `tools/fuzz-oracle/src/bin/fuzz-seeds.rs`), at most about
/// `count` of them, spread over them.
fn corpus_sample(target: &str, count: usize) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("seeds")
        .join(target);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    names.sort();
    let step = (names.len() / count).max(1);
    names
        .into_iter()
        .step_by(step)
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

/// Limits that the fuzzed inputs reach (as the fuzz targets' `tight_limits`).
fn tight() -> DecodeLimits {
    DecodeLimits {
        max_frame_size: 4096,
        max_array_len: 8,
        max_string_len: 16,
        max_bytes_len: 16,
        max_nesting: 2,
        max_decompressed_batch_size: 16 * 1024,
        memory_budget: Some(16 * 1024),
    }
}

#[test]
fn fuzzed_frames_transcode_as_they_decode() {
    let all = [
        DecodeOptions::default(),
        DecodeOptions {
            trailing_bytes: TrailingBytes::Allow,
            ..DecodeOptions::default()
        },
        DecodeOptions {
            limits: tight(),
            ..DecodeOptions::default()
        },
    ];
    let mut inputs = 0;
    let (mut decoded_ok, mut decoded_err, mut budget_only) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut check = |place: String, expected: Outcome, got: Outcome| {
        inputs += 1;
        if over_budget(&expected) {
            budget_only += 1;
            return;
        }
        if expected.is_ok() {
            decoded_ok += 1;
        } else {
            decoded_err += 1;
        }
        if let Some(diff) = differ(&expected, &got) {
            failures.push(format!("{place}: {diff}"));
        }
    };
    let json = JsonOptions::default();
    for (name, input) in corpus_sample("request_frame", 600) {
        let frame = Bytes::from(input);
        for options in &all {
            check(
                format!("request_frame/{name} {:?}", options.trailing_bytes),
                decoded_request(&frame, options, &json, false),
                transcoded_request(&frame, options, &json, false),
            );
        }
    }
    for (name, input) in corpus_sample("response", 600) {
        let [api, version, frame @ ..] = &input[..] else {
            continue;
        };
        let api = ApiKey::ALL[usize::from(*api) % ApiKey::ALL.len()];
        let version = pick_version(api, *version);
        let frame = Bytes::copy_from_slice(frame);
        for options in &all {
            check(
                format!("response/{name} {} v{version}", api.name()),
                decoded_response(&frame, (api, version), options, &json, false),
                transcoded_response(&frame, (api, version), options, &json, false),
            );
        }
    }
    eprintln!(
        "{inputs} checks: {decoded_ok} decode, {decoded_err} are refused, {budget_only} only for the budget"
    );
    // The tracked seeds give 128 checks that decode and 1,072 that are refused: both kinds
    // must be there in numbers, or the comparison says little.
    assert!(
        decoded_ok > 100 && decoded_err > 800,
        "{decoded_ok} {decoded_err}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Frames of the five structs whose tagged fields come before regular ones in schema order,
/// with those tagged fields set: the transcoder reads their tagged section ahead.
fn read_ahead_frames() -> Vec<(Bytes, MessageKind, ApiKey, i16)> {
    let mut frames = Vec::new();
    let records = Bytes::from_static(b"record batches, as far as this test knows");
    for version in [12, 13, 16, 17] {
        let partition = fetch_response::PartitionData::default()
            .with_partition_index(3)
            .with_high_watermark(100)
            .with_diverging_epoch(
                fetch_response::EpochEndOffset::default()
                    .with_epoch(4)
                    .with_end_offset(90),
            )
            .with_current_leader(
                fetch_response::LeaderIdAndEpoch::default()
                    .with_leader_id(2)
                    .with_leader_epoch(5),
            )
            .with_snapshot_id(
                fetch_response::SnapshotId::default()
                    .with_end_offset(80)
                    .with_epoch(3),
            )
            .with_aborted_transactions(Some(vec![fetch_response::AbortedTransaction::default()
                .with_producer_id(9)
                .with_first_offset(10)]))
            .with_records(Some(records.clone()));
        let topic = fetch_response::FetchableTopicResponse::default()
            .with_topic("t".into())
            .with_topic_id(kafka_codec::Uuid([7; 16]))
            .with_partitions(vec![partition.clone(), partition]);
        let body = FetchResponse::default().with_responses(vec![topic]);
        frames.push((
            response_frame(
                ApiKey::Fetch,
                version,
                &body.encode_to_vec(version).unwrap(),
            ),
            MessageKind::Response,
            ApiKey::Fetch,
            version,
        ));
        let request = FetchRequest::default()
            .with_cluster_id(Some("cluster".into()))
            .with_replica_id(if version <= 14 { 1 } else { -1 })
            .with_replica_state(if version >= 15 {
                fetch_request::ReplicaState::default()
                    .with_replica_id(1)
                    .with_replica_epoch(2)
            } else {
                Default::default()
            })
            .with_max_wait_ms(500)
            .with_topics(vec![fetch_request::FetchTopic::default()
                .with_topic("t".into())
                .with_topic_id(kafka_codec::Uuid([7; 16]))
                .with_partitions(vec![fetch_request::FetchPartition::default()
                    .with_partition(1)
                    .with_fetch_offset(2)])])
            .with_rack_id("r".into());
        frames.push((
            request_frame(
                ApiKey::Fetch,
                version,
                &request.encode_to_vec(version).unwrap(),
            ),
            MessageKind::Request,
            ApiKey::Fetch,
            version,
        ));
    }
    for version in [0, 1] {
        let request = FetchSnapshotRequest::default()
            .with_cluster_id(Some("c".into()))
            .with_replica_id(1)
            .with_max_bytes(1000);
        frames.push((
            request_frame(
                ApiKey::FetchSnapshot,
                version,
                &request.encode_to_vec(version).unwrap(),
            ),
            MessageKind::Request,
            ApiKey::FetchSnapshot,
            version,
        ));
        let partition = fetch_snapshot_response::PartitionSnapshot::default()
            .with_index(2)
            .with_current_leader(
                fetch_snapshot_response::LeaderIdAndEpoch::default()
                    .with_leader_id(4)
                    .with_leader_epoch(6),
            )
            .with_size(10)
            .with_position(3)
            .with_unaligned_records(records.clone());
        let response = FetchSnapshotResponse::default().with_topics(vec![
            fetch_snapshot_response::TopicSnapshot::default()
                .with_name("t".into())
                .with_partitions(vec![partition]),
        ]);
        frames.push((
            response_frame(
                ApiKey::FetchSnapshot,
                version,
                &response.encode_to_vec(version).unwrap(),
            ),
            MessageKind::Response,
            ApiKey::FetchSnapshot,
            version,
        ));
    }
    for version in [5, 7] {
        let response = CreateTopicsResponse::default().with_topics(vec![
            create_topics_response::CreatableTopicResult::default()
                .with_name("t".into())
                .with_topic_config_error_code(42)
                .with_num_partitions(3)
                .with_replication_factor(2),
        ]);
        frames.push((
            response_frame(
                ApiKey::CreateTopics,
                version,
                &response.encode_to_vec(version).unwrap(),
            ),
            MessageKind::Response,
            ApiKey::CreateTopics,
            version,
        ));
    }
    frames
}

#[test]
fn tagged_fields_before_regular_ones_are_written_in_schema_order() {
    let strict = DecodeOptions::default();
    let mut failures = Vec::new();
    for (frame, kind, api, version) in read_ahead_frames() {
        let place = format!("{} v{version} {kind:?}", api.name());
        let json = JsonOptions::default();
        let transcoded = if kind == MessageKind::Request {
            compare_all(&place, &mut failures, |json, pretty| {
                (
                    decoded_request(&frame, &strict, json, pretty),
                    transcoded_request(&frame, &strict, json, pretty),
                )
            });
            transcoded_request(&frame, &strict, &json, false)
        } else {
            compare_all(&place, &mut failures, |json, pretty| {
                (
                    decoded_response(&frame, (api, version), &strict, json, pretty),
                    transcoded_response(&frame, (api, version), &strict, json, pretty),
                )
            });
            transcoded_response(&frame, (api, version), &strict, &json, false)
        };
        // The tagged field is shown, before the regular fields that follow it in the schema.
        let text = String::from_utf8(transcoded.unwrap().0).unwrap();
        let at = |key: &str| {
            text.find(&format!("\"{key}\""))
                .unwrap_or_else(|| panic!("{place}: no {key} in {text}"))
        };
        let order: &[&str] = match (api, kind) {
            (ApiKey::Fetch, MessageKind::Response) => &[
                "divergingEpoch",
                "currentLeader",
                "snapshotId",
                "abortedTransactions",
                "records",
            ],
            (ApiKey::Fetch, _) if version >= 15 => &["clusterId", "replicaState", "maxWaitMs"],
            (ApiKey::Fetch, _) => &["clusterId", "replicaId", "maxWaitMs"],
            (ApiKey::FetchSnapshot, MessageKind::Request) => &["clusterId", "replicaId"],
            (ApiKey::FetchSnapshot, _) => &["currentLeader", "size", "unalignedRecords"],
            _ => &["topicConfigErrorCode", "numPartitions"],
        };
        let places: Vec<usize> = order.iter().map(|key| at(key)).collect();
        assert!(
            places.windows(2).all(|pair| pair[0] < pair[1]),
            "{place}: {order:?} out of order in {text}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_json_error_is_reported_only_where_the_bytes_decode() {
    let strict = DecodeOptions::default();
    let refuse = Refuse;
    let refusing = JsonOptions {
        lenient: false,
        records: Some(&refuse),
    };
    let (frame, _, api, version) = read_ahead_frames().remove(0);
    // Whole: the hook's refusal, at the first partition's records, as writing the decoded
    // frame reports it.
    let got = transcoded_response(&frame, (api, version), &strict, &refusing, false);
    let Err(TranscodeError::Json(error)) = &got else {
        panic!("{got:?}");
    };
    assert!(
        matches!(error.kind(), EncodeErrorKind::RecordsNotShown(_)),
        "{error}"
    );
    assert_eq!(
        error.path().to_string(),
        "Responses[0].Partitions[0].Records"
    );
    assert_eq!(
        differ(
            &decoded_response(&frame, (api, version), &strict, &refusing, false),
            &got
        ),
        None
    );
    // Cut inside the second partition: the transcoder meets the refusal first, but the
    // bytes do not decode, and that is the error.
    let short = frame.slice(..frame.len() - 10);
    let got = transcoded_response(&short, (api, version), &strict, &refusing, false);
    let Err(TranscodeError::Decode(error)) = &got else {
        panic!("{got:?}");
    };
    assert!(
        error
            .path()
            .to_string()
            .starts_with("Responses[0].Partitions[1]"),
        "{error}"
    );
    // A float JSON cannot carry: refused when written, whichever way.
    use kafka_codec::messages::alter_client_quotas_request::{
        AlterClientQuotasRequest, EntityData, EntryData, OpData,
    };
    let request = AlterClientQuotasRequest::default().with_entries(vec![EntryData::default()
        .with_entity(vec![EntityData::default()])
        .with_ops(vec![OpData::default()
            .with_key("k".into())
            .with_value(f64::NAN)])]);
    let frame = request_frame(
        ApiKey::AlterClientQuotas,
        1,
        &request.encode_to_vec(1).unwrap(),
    );
    let json = JsonOptions::default();
    let got = transcoded_request(&frame, &strict, &json, false);
    assert!(
        matches!(&got, Err(TranscodeError::Json(e)) if matches!(e.kind(), EncodeErrorKind::NonFiniteFloat(_))),
        "{got:?}"
    );
    assert_eq!(
        differ(&decoded_request(&frame, &strict, &json, false), &got),
        None
    );
}

#[test]
fn trailing_bytes_are_counted_or_refused() {
    let (frame, _, api, version) = read_ahead_frames().remove(1);
    assert_eq!(api, ApiKey::Fetch);
    let mut long = frame.to_vec();
    long.extend_from_slice(&[1, 2, 3]);
    let long = Bytes::from(long);
    let lenient = DecodeOptions {
        trailing_bytes: TrailingBytes::Allow,
        ..DecodeOptions::default()
    };
    let json = JsonOptions::default();
    let (_, trailing) = transcoded_request(&long, &lenient, &json, false).unwrap();
    assert_eq!(trailing, 3);
    let (_, trailing) = transcoded_request(&frame, &lenient, &json, false).unwrap();
    assert_eq!(trailing, 0);
    let strict = transcoded_request(&long, &DecodeOptions::default(), &json, false);
    let Err(TranscodeError::Decode(error)) = strict else {
        panic!("{strict:?}");
    };
    assert_eq!(error.kind(), &DecodeErrorKind::TrailingBytes(3));
    assert_eq!(error.offset(), frame.len());
    let _ = version;
}
