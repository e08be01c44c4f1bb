//! Versions Kafka 4.0 removed, read and written as Kafka 3.9 does (issue 18): the API table
//! against `schemas/releases.tsv` (facts of the kafka-clients jars), negotiation with an older
//! broker's table, ControlledShutdown v0's header without a client id, and Produce v0-v2 and
//! Fetch v0-v3 carrying Kafka's magic 0 and 1 message sets through frames, JSON and
//! connections. The bytes come from Kafka: the golden corpus (Kafka 3.9.1's classes answered
//! for these cells) and the record batches Kafka's MemoryRecordsBuilder wrote
//! (`tests/golden/records/java.jsonl`).

use crate::support::{golden_dir, unhex};
use bytes::{Bytes, BytesMut};
use kafka_codec::conn::{Direction, Observed, Observer, ServerConnection, SupportedVersions};
use kafka_codec::json::{transcode_request, transcode_response, JsonOptions, JsonWriter};
use kafka_codec::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{
    ControlledShutdownRequest, ControlledShutdownResponse, FetchResponse, ProduceRequest,
    RequestHeader,
};
use kafka_codec::records::decode_batches;
use kafka_codec::{
    ApiKey, DecodeOptions, Message, Request, RequestFrame, Response, ResponseFrame, VersionRange,
};
use kafka_codec_codegen::releases::{parse_releases, Cell};
use serde_json::Value;

/// Kafka's JSON of a request frame, written straight from its bytes.
fn transcoded_request(frame: &Bytes) -> Value {
    let mut text = Vec::new();
    let mut writer = JsonWriter::compact(&mut text);
    transcode_request(
        frame,
        &DecodeOptions::default(),
        &JsonOptions::default(),
        &mut writer,
    )
    .unwrap();
    writer.finish().unwrap();
    serde_json::from_slice(&text).unwrap()
}

/// The same for a response frame.
fn transcoded_response(frame: &Bytes, api: ApiKey, version: i16) -> Value {
    let mut text = Vec::new();
    let mut writer = JsonWriter::compact(&mut text);
    transcode_response(
        frame,
        api,
        version,
        &DecodeOptions::default(),
        &JsonOptions::default(),
        &mut writer,
    )
    .unwrap();
    writer.finish().unwrap();
    serde_json::from_slice(&text).unwrap()
}

fn releases_table() -> (Vec<String>, std::collections::BTreeMap<String, Vec<Cell>>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/releases.tsv");
    parse_releases(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A release's versions without its draft (its latest, when unstable there).
fn stable(cell: &Cell) -> Option<VersionRange> {
    let v = cell.versions;
    let max = if cell.latest_unstable {
        v.max - 1
    } else {
        v.max
    };
    (!v.is_empty() && max >= v.min).then(|| VersionRange::new(v.min, max))
}

#[test]
fn the_api_table_says_what_each_release_speaks() {
    let (names, cells) = releases_table();
    assert_eq!(
        names.last().map(String::as_str),
        Some(kafka_codec::KAFKA_VERSION)
    );
    for &api in ApiKey::ALL {
        let row = &cells[&format!("{}Request", api.name())];
        let releases = api.releases();
        assert_eq!(releases.len(), names.len(), "{api}");
        for ((release, cell), name) in releases.iter().zip(row).zip(&names) {
            assert_eq!(release.release, name);
            let expected = (!cell.versions.is_empty())
                .then(|| VersionRange::new(cell.versions.min, cell.versions.max));
            assert_eq!(release.versions, expected, "{api} in {name}");
            assert_eq!(
                release.latest_unstable, cell.latest_unstable,
                "{api} in {name}"
            );
            // Every version a release defines is one this crate reads.
            if let Some(range) = release.versions {
                assert!(api.valid_versions().contains(range.min), "{api}");
                assert!(api.valid_versions().contains(range.max), "{api}");
            }
        }
        // Removed: stable in an older release, not in the newest.
        let newest = row.last().unwrap().versions;
        let removed: Vec<i16> = row[..row.len() - 1]
            .iter()
            .filter_map(stable)
            .flat_map(|range| range.min..=range.max)
            .filter(|&v| !newest.contains(v))
            .collect();
        let expected = removed
            .iter()
            .min()
            .map(|&min| VersionRange::new(min, *removed.iter().max().unwrap()));
        assert_eq!(api.removed_versions(), expected, "{api}");
    }
    // What Kafka 4.0 took away, as the jars say: whole ZooKeeper-era APIs, and the oldest
    // versions of others, which Kafka 3.9.1 marks deprecated.
    assert_eq!(
        ApiKey::LeaderAndIsr.removed_versions(),
        Some(ApiKey::LeaderAndIsr.valid_versions())
    );
    for &api in ApiKey::ALL {
        if let (Some(removed), Some(deprecated)) =
            (api.removed_versions(), api.deprecated_versions())
        {
            assert_eq!(removed, deprecated, "{api}");
        }
    }
}

#[test]
fn an_older_broker_gets_its_own_highest_versions() {
    let (names, cells) = releases_table();
    let older = &names[0];
    // The table a broker of the older release advertises (its stable versions).
    let broker = SupportedVersions::from_ranges(ApiKey::ALL.iter().filter_map(|&api| {
        let cell = &cells[&format!("{}Request", api.name())][0];
        Some((api.key(), stable(cell)?))
    }));
    let mut checked = 0;
    for &api in ApiKey::ALL {
        let cell = &cells[&format!("{}Request", api.name())][0];
        if let Some(range) = stable(cell) {
            assert_eq!(
                broker.negotiate(api),
                Ok(range.max),
                "{api} against {older}"
            );
            checked += 1;
        }
    }
    assert!(checked > 70, "{checked}");
    assert_eq!(broker.negotiate(ApiKey::Produce), Ok(11));
    assert_eq!(broker.negotiate(ApiKey::LeaderAndIsr), Ok(7));
}

/// Kafka's encodings of (schema, version) from the golden corpus: (JSON, bytes) per case.
fn golden(file: &str, schema_kind: &str, version: i16) -> Vec<(Value, Bytes)> {
    let text = std::fs::read_to_string(golden_dir().join(file)).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| {
            line[0] == version && line[1] == schema_kind && line.as_array().unwrap().len() == 4
        })
        .map(|line| {
            let bytes = Bytes::from(unhex(line[3].as_str().unwrap()).unwrap());
            (line[2].clone(), bytes)
        })
        .collect()
}

#[test]
fn controlled_shutdown_v0_has_a_header_without_client_id() {
    assert_eq!(ApiKey::ControlledShutdown.request_header_version(0), 0);
    assert_eq!(ApiKey::ControlledShutdown.request_header_version(1), 1);
    assert_eq!(ApiKey::ControlledShutdown.request_header_version(3), 2);
    let bodies = golden("ControlledShutdown.jsonl", "request", 0);
    assert!(bodies.len() >= 25);
    for (index, (json, body)) in bodies.into_iter().enumerate() {
        // Header v0: key, version, correlation id; no client id.
        let correlation_id = 1000 + index as i32;
        let mut frame = Vec::new();
        frame.extend_from_slice(&7i16.to_be_bytes());
        frame.extend_from_slice(&0i16.to_be_bytes());
        frame.extend_from_slice(&correlation_id.to_be_bytes());
        frame.extend_from_slice(&body);
        let frame = Bytes::from(frame);

        let decoded = RequestFrame::decode(frame.clone()).unwrap();
        assert_eq!(decoded.header.correlation_id, correlation_id);
        // Not on the wire: the field keeps its default, as Kafka's reader leaves it.
        assert_eq!(decoded.header.client_id, RequestHeader::default().client_id);
        let expected = ControlledShutdownRequest::decode_exact(body.clone(), 0).unwrap();
        assert_eq!(decoded.body, Request::from(expected.clone()));
        assert_eq!(decoded.encode_to_bytes().unwrap(), frame);
        // A client id has no place in header v0: dropped, as Kafka's writer drops it.
        let with_id = decoded.clone().with_client_id("broker-1");
        assert_eq!(with_id.encode_to_bytes().unwrap(), frame);
        // JSON straight from the bytes, and through the decoded frame, are Kafka's body JSON.
        let transcoded = transcoded_request(&frame);
        assert_eq!(transcoded, decoded.to_json().unwrap());
        assert_eq!(transcoded["body"], json);
        assert!(
            transcoded["header"].get("clientId").is_none(),
            "{transcoded}"
        );

        // A server reads it off the wire and answers with response header v0.
        let mut server = ServerConnection::new();
        let mut wire = BytesMut::from(&(frame.len() as u32).to_be_bytes()[..]);
        wire.extend_from_slice(&frame);
        let request = server.receive(&mut wire).unwrap().unwrap();
        assert_eq!(request.api_version, 0);
        let answer = request.respond(ControlledShutdownResponse::default());
        let mut sent = BytesMut::new();
        server.send(&answer, &mut sent).unwrap();
        // Size, correlation id, then the body (error code, empty partition array).
        assert_eq!(sent.len(), 4 + 4 + 2 + 4);
        assert_eq!(sent[4..8], correlation_id.to_be_bytes());
    }
}

/// Batches Kafka's MemoryRecordsBuilder wrote, by magic, uncompressed first.
fn kafka_batches(magic: i64) -> Vec<(Value, Bytes)> {
    let text = std::fs::read_to_string(golden_dir().join("records/java.jsonl")).unwrap();
    let mut batches: Vec<(Value, Bytes)> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["batch"]["magic"] == magic)
        .map(|line| {
            let bytes = Bytes::from(unhex(line["hex"].as_str().unwrap()).unwrap());
            (line["batch"].clone(), bytes)
        })
        .collect();
    batches.sort_by_key(|(batch, _)| batch["compression"] != "none");
    batches
}

/// What Kafka was asked to write: each record's offset, timestamp, key and value.
fn records_of(batch: &Value) -> Vec<Value> {
    batch["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| serde_json::json!([r["offset"], r["timestamp"], r["key"], r["value"]]))
        .collect()
}

/// The same, as read from bytes by this crate.
fn records_read(field: &Bytes) -> Vec<Value> {
    let mut out = Vec::new();
    for batch in decode_batches(field).unwrap() {
        let batch = serde_json::to_value(&batch).unwrap();
        out.extend(records_of(&batch));
    }
    out
}

#[test]
fn old_produce_and_fetch_versions_carry_magic_0_and_1_message_sets() {
    for magic in [0, 1] {
        let batches = kafka_batches(magic);
        assert!(
            batches.iter().any(|(b, _)| b["compression"] == "none"),
            "magic {magic}"
        );
        assert!(
            batches.iter().any(|(b, _)| b["compression"] != "none"),
            "magic {magic}"
        );
        // One partition per batch, and one field of them all, as a log segment holds them.
        let mut fields: Vec<Bytes> = batches.iter().map(|(_, bytes)| bytes.clone()).collect();
        fields.push(Bytes::from(
            batches
                .iter()
                .flat_map(|(_, b)| b.to_vec())
                .collect::<Vec<u8>>(),
        ));
        let expected: Vec<Vec<Value>> = batches
            .iter()
            .map(|(batch, _)| records_of(batch))
            .chain([batches
                .iter()
                .flat_map(|(batch, _)| records_of(batch))
                .collect()])
            .collect();

        for version in 0..=2 {
            let body = ProduceRequest::default()
                .with_acks(1)
                .with_timeout_ms(1500)
                .with_topic_data(vec![TopicProduceData::default()
                    .with_name("legacy".into())
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
            let frame = RequestFrame::new(body, version, 42).with_client_id("kafka-python-1.4");
            let bytes = frame.encode_to_bytes().unwrap();
            let decoded = RequestFrame::decode(bytes.clone()).unwrap();
            assert_eq!(decoded, frame, "Produce v{version}");
            let Request::Produce(produce) = &decoded.body else {
                panic!("not a Produce");
            };
            for (partition, want) in produce.topic_data[0].partition_data.iter().zip(&expected) {
                let field = partition.records.as_ref().unwrap();
                assert_eq!(
                    &records_read(field),
                    want,
                    "Produce v{version} magic {magic}"
                );
            }
            json_round_trip_request(&decoded, &bytes);
        }

        for version in 0..=3 {
            let body =
                FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
                    .with_topic("legacy".into())
                    .with_partitions(
                        fields
                            .iter()
                            .enumerate()
                            .map(|(index, field)| {
                                PartitionData::default()
                                    .with_partition_index(index as i32)
                                    .with_high_watermark(1 << 40)
                                    .with_records(Some(field.clone()))
                            })
                            .collect(),
                    )]);
            let frame = ResponseFrame::new(body, version, 43);
            let bytes = frame.encode_to_bytes().unwrap();
            let decoded = ResponseFrame::decode(bytes.clone(), ApiKey::Fetch, version).unwrap();
            assert_eq!(decoded, frame, "Fetch v{version}");
            let Response::Fetch(fetch) = &decoded.body else {
                panic!("not a Fetch");
            };
            for (partition, want) in fetch.responses[0].partitions.iter().zip(&expected) {
                let field = partition.records.as_ref().unwrap();
                assert_eq!(&records_read(field), want, "Fetch v{version} magic {magic}");
            }
            let json = decoded.to_json().unwrap();
            assert_eq!(transcoded_response(&bytes, ApiKey::Fetch, version), json);
            let again = ResponseFrame::from_json(&json).unwrap();
            assert_eq!(again.encode_to_bytes().unwrap(), bytes, "Fetch v{version}");
        }
    }
}

/// JSON of the frame, from the frame and straight from its bytes, reads back to the same bytes.
fn json_round_trip_request(frame: &RequestFrame, bytes: &Bytes) {
    let json = frame.to_json().unwrap();
    assert_eq!(transcoded_request(bytes), json);
    let again = RequestFrame::from_json(&json).unwrap();
    assert_eq!(again.encode_to_bytes().unwrap(), *bytes);
}

#[test]
fn an_observer_follows_an_old_client_and_broker() {
    // A 0.10-era producer (Produce v2, magic 1) and a ZooKeeper controller's LeaderAndIsr v0,
    // each answered: the observer pairs every response with its request and version.
    let produce = golden("Produce.jsonl", "request", 2);
    let produce_answer = golden("Produce.jsonl", "response", 2);
    let leader_and_isr = golden("LeaderAndIsr.jsonl", "request", 0);
    let leader_and_isr_answer = golden("LeaderAndIsr.jsonl", "response", 0);
    let mut observer = Observer::new();
    let mut requests = Vec::new();
    let mut responses = Vec::new();
    for (id, (key, version, body, answer)) in [
        (0i16, 2i16, &produce[0].1, &produce_answer[0].1),
        (4, 0, &leader_and_isr[0].1, &leader_and_isr_answer[0].1),
    ]
    .into_iter()
    .enumerate()
    {
        let id = id as i32;
        let mut frame = Vec::new();
        frame.extend_from_slice(&key.to_be_bytes());
        frame.extend_from_slice(&version.to_be_bytes());
        frame.extend_from_slice(&id.to_be_bytes());
        frame.extend_from_slice(&(-1i16).to_be_bytes()); // null client id (header v1)
        frame.extend_from_slice(body);
        requests.extend_from_slice(&(frame.len() as u32).to_be_bytes());
        requests.extend_from_slice(&frame);
        let mut frame = id.to_be_bytes().to_vec();
        frame.extend_from_slice(answer);
        responses.extend_from_slice(&(frame.len() as u32).to_be_bytes());
        responses.extend_from_slice(&frame);
    }
    let mut seen = Vec::new();
    observer.feed(Direction::ToServer, &requests);
    while let Some(event) = observer.next(Direction::ToServer) {
        let Observed::Request(request) = event else {
            panic!("{event:?}");
        };
        let request = request.decoded.unwrap();
        seen.push((request.api_key(), request.api_version));
    }
    observer.feed(Direction::ToClient, &responses);
    while let Some(event) = observer.next(Direction::ToClient) {
        let Observed::Response(response) = event else {
            panic!("{event:?}");
        };
        let frame = response.decoded.unwrap().unwrap();
        seen.push((frame.api_key(), frame.api_version));
    }
    assert_eq!(
        seen,
        [
            (ApiKey::Produce, 2),
            (ApiKey::LeaderAndIsr, 0),
            (ApiKey::Produce, 2),
            (ApiKey::LeaderAndIsr, 0),
        ]
    );
}

#[test]
fn an_acks_0_produce_of_an_old_version_awaits_no_response() {
    // Produce v0-v2 have no transactional id: acks comes first. A proxy that peeks at a frame,
    // and a client that sends one, must both see that nothing will answer it.
    for version in 0..=2 {
        for acks in [0i16, 1, -1] {
            let body = ProduceRequest::default()
                .with_acks(acks)
                .with_timeout_ms(1000);
            let frame = RequestFrame::new(body.clone(), version, 5).with_client_id("old-client");
            let bytes = frame.encode_to_bytes().unwrap();
            assert_eq!(
                kafka_codec::conn::RawRequestHeader::expects_response(&bytes),
                Some(acks != 0),
                "Produce v{version} acks {acks}"
            );
            let mut client = kafka_codec::conn::ClientConnection::new();
            let sent = client
                .send(version, &Request::from(body), &mut BytesMut::new())
                .unwrap();
            assert_eq!(sent.expects_response, acks != 0);
        }
    }
}
