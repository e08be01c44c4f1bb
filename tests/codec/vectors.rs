//! Hand-derived byte vectors for headers and whole frames. Each vector is written out from the
//! byte layouts Kafka documents (`int16` big-endian, compact lengths as uvarint n+1, …), with a
//! comment per field; none was produced by this crate's encoder.

use crate::support::annotated_hex as hex;
use bytes::Bytes;
use kafka_codec::messages::describe_quorum_response::{
    DescribeQuorumResponse, Listener, Node, PartitionData, ReplicaState, TopicData,
};
use kafka_codec::messages::{ApiVersionsRequest, RequestHeader, ResponseHeader};
use kafka_codec::Framing;
use kafka_codec::MessageCodec;
use kafka_codec::{ApiKey, Message, Request, RequestFrame, Response, ResponseFrame, Uuid};

fn assert_round_trip<M: MessageCodec>(bytes: Bytes, version: i16, expected: &M) {
    let decoded = M::decode_exact(bytes.clone(), version).unwrap();
    assert_eq!(&decoded, expected);
    assert_eq!(expected.encode_to_bytes(version).unwrap(), bytes);
    assert_eq!(expected.encoded_len(version).unwrap(), bytes.len());
}

#[test]
fn request_header_v1_classic_client_id() {
    let bytes = hex("00 03       # api key 3 (Metadata)
         00 08       # api version 8
         00 00 00 2a # correlation id 42
         00 03 63 6c 69  # client id: int16 length 3, \"cli\"");
    let header = RequestHeader::default()
        .with_request_api_key(3)
        .with_request_api_version(8)
        .with_correlation_id(42)
        .with_client_id(Some("cli".into()));
    assert_round_trip(bytes, 1, &header);
}

#[test]
fn request_header_v1_null_client_id() {
    let bytes = hex("00 03 00 08 00 00 00 2a   ff ff  # client id null: int16 -1");
    let header = RequestHeader::default()
        .with_request_api_key(3)
        .with_request_api_version(8)
        .with_correlation_id(42)
        .with_client_id(None);
    assert_round_trip(bytes, 1, &header);
}

#[test]
fn request_header_v2_keeps_classic_client_id_and_adds_tags() {
    let bytes = hex(
        "00 37 00 02 00 00 00 07   # key 55, version 2, correlation 7
         00 01 63                  # client id: still int16 length (field is never flexible)
         00                        # tagged fields: none",
    );
    let header = RequestHeader::default()
        .with_request_api_key(55)
        .with_request_api_version(2)
        .with_correlation_id(7)
        .with_client_id(Some("c".into()));
    assert_round_trip(bytes, 2, &header);
}

#[test]
fn request_header_v2_with_an_unknown_tag_round_trips() {
    let bytes = hex("00 37 00 02 00 00 00 07 00 01 63
         01          # one tagged field
         05 02 ab cd # tag 5, size 2, data abcd");
    let header = RequestHeader::decode_exact(bytes.clone(), 2).unwrap();
    assert_eq!(header.unknown_tagged_fields.len(), 1);
    assert_eq!(header.unknown_tagged_fields[0].tag, 5);
    assert_eq!(&header.unknown_tagged_fields[0].data[..], [0xab, 0xcd]);
    assert_eq!(header.encode_to_bytes(2).unwrap(), bytes);
}

/// Request header v0 (no client id) serves only ControlledShutdown v0, which Kafka 4 removed
/// and Kafka 3.9 still reads: key, version and correlation id, nothing more. A client id has no
/// place in it and is dropped, as Kafka's writer drops it (the field is ignorable).
#[test]
fn request_header_v0_has_no_client_id() {
    let bytes = hex("00 07 00 00 00 00 00 01   # key 7, version 0, correlation 1");
    let header = RequestHeader::decode_exact(bytes.clone(), 0).unwrap();
    assert_eq!(
        (
            header.request_api_key,
            header.request_api_version,
            header.correlation_id
        ),
        (7, 0, 1)
    );
    assert_eq!(header.client_id, RequestHeader::default().client_id);
    assert_eq!(header.encode_to_bytes(0).unwrap(), bytes);
    let with_id = header.with_client_id(Some("broker-1".into()));
    assert_eq!(with_id.encode_to_bytes(0).unwrap(), bytes);
    assert_eq!(ApiKey::from_key(7), Some(ApiKey::ControlledShutdown));
    assert_eq!(ApiKey::ControlledShutdown.request_header_version(0), 0);
}

#[test]
fn response_header_v0_and_v1() {
    let header = ResponseHeader::default().with_correlation_id(7);
    assert_round_trip(hex("00 00 00 07  # correlation id"), 0, &header);
    assert_round_trip(
        hex("00 00 00 07 00  # correlation id, no tagged fields"),
        1,
        &header,
    );
}

#[test]
fn header_versions_follow_flexibility_with_the_api_versions_exception() {
    assert_eq!(ApiKey::ApiVersions.request_header_version(2), 1);
    assert_eq!(ApiKey::ApiVersions.request_header_version(3), 2);
    for version in 0..=4 {
        assert_eq!(ApiKey::ApiVersions.response_header_version(version), 0);
    }
    assert_eq!(ApiKey::SaslHandshake.request_header_version(1), 1);
    assert_eq!(ApiKey::SaslHandshake.response_header_version(1), 0);
    assert_eq!(ApiKey::Fetch.response_header_version(11), 0);
    assert_eq!(ApiKey::Fetch.response_header_version(12), 1);
}

/// ApiVersionsRequest v3 in a full frame (wire-encoding notes, example 1).
#[test]
fn api_versions_request_v3_frame() {
    let frame = hex(
        "00 12 00 03 00 00 00 01   # key 18, version 3, correlation 1
         00 03 63 6c 69            # client id \"cli\" (classic)
         00                        # header tags
         02 61                     # ClientSoftwareName: compact length 1+1, \"a\"
         02 31                     # ClientSoftwareVersion: \"1\"
         00                        # body tags",
    );
    let decoded = RequestFrame::decode(frame.clone()).unwrap();
    let Request::ApiVersions(body) = &decoded.body else {
        panic!("not ApiVersions: {decoded:?}");
    };
    assert_eq!(
        body,
        &ApiVersionsRequest::default()
            .with_client_software_name("a".into())
            .with_client_software_version("1".into())
    );
    assert_eq!(decoded.encode_to_bytes().unwrap(), frame);
    let mut prefixed = Vec::new();
    decoded
        .encode(&mut prefixed, Framing::SizePrefixed)
        .unwrap();
    assert_eq!(&prefixed[..4], [0, 0, 0, 0x13]);
}

/// DescribeQuorumRequest v2 in a full frame (example 2).
#[test]
fn describe_quorum_request_v2_frame() {
    let frame = hex("00 37 00 02 00 00 00 07 00 01 63 00
         02                                      # Topics: 1
         13 5f5f636c75737465725f6d65746164617461 # TopicName (18 bytes)
         02 00 00 00 00 00                       # Partitions: 1, index 0, tags
         00                                      # topic tags
         00                                      # body tags");
    let decoded = RequestFrame::decode(frame.clone()).unwrap();
    assert_eq!(decoded.api_key(), Some(ApiKey::DescribeQuorum));
    let Request::DescribeQuorum(body) = &decoded.body else {
        panic!("wrong body");
    };
    assert_eq!(&*body.topics[0].topic_name, "__cluster_metadata");
    assert_eq!(decoded.encode_to_bytes().unwrap(), frame);
}

/// DescribeQuorumResponse v2 in a full frame (example 4), decoded and rebuilt from values.
#[test]
fn describe_quorum_response_v2_frame() {
    let frame = hex(
        "00 00 00 07 00                 # response header v1: correlation 7, tags
         00 00 00                       # ErrorCode 0, ErrorMessage null
         02 13 5f5f636c75737465725f6d65746164617461
         02 00 00 00 00 00 00 00        # partition 0, ErrorCode 0, ErrorMessage null
         00 00 00 01 00 00 00 05        # LeaderId 1, LeaderEpoch 5
         00 00 00 00 00 00 00 0a        # HighWatermark 10
         02 00 00 00 01                 # CurrentVoters: 1, ReplicaId 1
         01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10
         00 00 00 00 00 00 00 0a        # LogEndOffset 10
         00 00 01 8b cf e5 68 00        # LastFetchTimestamp
         00 00 01 8b cf e5 68 00        # LastCaughtUpTimestamp
         00 01 00 00                    # replica tags, Observers: 0, partition tags, topic tags
         02 00 00 00 01                 # Nodes: 1, NodeId 1
         02 0b 434f4e54524f4c4c4552 0a 6c6f63616c686f7374 23 85 00
         00 00                          # node tags, body tags",
    );
    let now = 1_700_000_000_000;
    // A nullable string with no schema default defaults to "", as in Kafka: null is explicit.
    let expected = DescribeQuorumResponse::default()
        .with_error_message(None)
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_error_message(None)
                .with_leader_id(1)
                .with_leader_epoch(5)
                .with_high_watermark(10)
                .with_current_voters(vec![ReplicaState::default()
                    .with_replica_id(1)
                    .with_replica_directory_id(Uuid::from_bytes([
                        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                    ]))
                    .with_log_end_offset(10)
                    .with_last_fetch_timestamp(now)
                    .with_last_caught_up_timestamp(now)])])])
        .with_nodes(vec![Node::default().with_node_id(1).with_listeners(vec![
            Listener::default()
                .with_name("CONTROLLER".into())
                .with_host("localhost".into())
                .with_port(9093),
        ])]);
    let decoded = ResponseFrame::decode(frame.clone(), ApiKey::DescribeQuorum, 2).unwrap();
    assert_eq!(decoded.header.correlation_id, 7);
    assert_eq!(decoded.body, Response::DescribeQuorum(expected.clone()));
    assert_eq!(decoded.encode_to_bytes().unwrap(), frame);
    assert_eq!(expected.encoded_len(2).unwrap(), 128);
    // The same data at v1 is 79 bytes: no error messages, no directory id, no Nodes, and
    // Nodes (not ignorable) must be emptied first.
    assert!(expected.encode_to_vec(1).is_err());
    let mut v1 = expected;
    v1.nodes.clear();
    assert_eq!(v1.encoded_len(1).unwrap(), 79);
}

/// Kafka's JSON form for the same response (schema-dialect notes §11).
#[test]
fn describe_quorum_response_v2_json() {
    let frame = hex(
        "00 00 00 02 13 5f5f636c75737465725f6d65746164617461 02 00 00 00 00 00 00 00
         00 00 00 01 00 00 00 05 00 00 00 00 00 00 00 0a 02 00 00 00 01
         01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 00 00 00 00 00 00 00 0a
         00 00 01 8b cf e5 68 00 00 00 01 8b cf e5 68 00 00 01 00 00
         02 00 00 00 01 02 0b 434f4e54524f4c4c4552 0a 6c6f63616c686f7374 23 85 00 00 00",
    );
    let body = DescribeQuorumResponse::decode_exact(frame, 2).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        r#"{"errorCode":0,"errorMessage":null,"topics":[{"topicName":"__cluster_metadata","partitions":[
 {"partitionIndex":0,"errorCode":0,"errorMessage":null,"leaderId":1,"leaderEpoch":5,
  "highWatermark":10,"currentVoters":[{"replicaId":1,"replicaDirectoryId":"AQIDBAUGBwgJCgsMDQ4PEA",
  "logEndOffset":10,"lastFetchTimestamp":1700000000000,"lastCaughtUpTimestamp":1700000000000}],
  "observers":[]}]}],
 "nodes":[{"nodeId":1,"listeners":[{"name":"CONTROLLER","host":"localhost","port":9093}]}]}"#,
    )
    .unwrap();
    assert_eq!(body.to_json(2).unwrap(), expected);
    assert_eq!(
        DescribeQuorumResponse::from_json(&expected, 2).unwrap(),
        body
    );
}

/// Strings, bytes and records decoded from `Bytes` are slices of the input, not copies.
#[test]
fn decoding_shares_the_input_buffer() {
    use kafka_codec::messages::produce_request::{
        PartitionProduceData, ProduceRequest, TopicProduceData,
    };
    let records = Bytes::from(vec![7u8; 4096]);
    let request = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("orders".into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let input = request.encode_to_bytes(11).unwrap();
    let range = input.as_ptr() as usize..input.as_ptr() as usize + input.len();
    let decoded = ProduceRequest::decode_exact(input.clone(), 11).unwrap();
    let topic = &decoded.topic_data[0];
    let payload = topic.partition_data[0].records.as_ref().unwrap();
    assert_eq!(payload.len(), 4096);
    assert!(
        range.contains(&(payload.as_ptr() as usize)),
        "records were copied"
    );
    assert!(
        range.contains(&(topic.name.as_ptr() as usize)),
        "string was copied"
    );
}
