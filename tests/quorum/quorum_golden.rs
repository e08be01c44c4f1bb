//! Golden vectors for DescribeQuorum with committed voters, written by hand from the layout
//! rules (files in `tests/golden/`, one line per field: hex, then `#` and what it is). Each
//! vector is decoded, compared with the message it describes, re-encoded byte for byte, and
//! compared with what the reference leader model sends in the same situation.

use crate::common::*;
use bytes::{Bytes, BytesMut};
use kafka_codec::messages::describe_quorum_request::{self, DescribeQuorumRequest};
use kafka_codec::messages::describe_quorum_response::{PartitionData, TopicData};
use kafka_codec::messages::{DescribeQuorumResponse, RequestHeader, ResponseHeader};
use kafka_codec::quorum::LeaderState;
use kafka_codec::Framing;
use kafka_codec::{ApiKey, Message, Request, RequestFrame, Response, ResponseFrame, Uuid};

/// The bytes of a golden file: hex, with `#` comments.
fn golden(text: &str) -> Bytes {
    Bytes::from(kafka_codec_hexdump::decode(text.as_bytes()).expect("golden file is hex"))
}

/// Splits off and checks the size prefix.
fn frame(bytes: &Bytes) -> Bytes {
    let size = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(size, bytes.len() - 4, "size prefix");
    bytes.slice(4..)
}

const REQUEST_V3: &str = include_str!("../golden/describe_quorum_request_v3.txt");
const RESPONSE_V0: &str = include_str!("../golden/describe_quorum_response_v0.txt");
const RESPONSE_V1: &str = include_str!("../golden/describe_quorum_response_v1.txt");
const RESPONSE_V2: &str = include_str!("../golden/describe_quorum_response_v2.txt");
const RESPONSE_V3: &str = include_str!("../golden/describe_quorum_response_v3.txt");
const RESPONSE_V3_NO_HW: &str =
    include_str!("../golden/describe_quorum_response_v3_no_high_watermark.txt");
const RESPONSE_V3_UPSTREAM_DRAFT: &str =
    include_str!("../golden/describe_quorum_response_v3_upstream_draft.txt");

#[test]
fn request_v3_decodes_and_reencodes() {
    let bytes = golden(REQUEST_V3);
    let decoded = RequestFrame::decode(frame(&bytes)).unwrap();
    let expected = RequestFrame {
        header: RequestHeader::default()
            .with_request_api_key(55)
            .with_request_api_version(3)
            .with_correlation_id(7)
            .with_client_id(Some("c".into())),
        body: Request::DescribeQuorum(DescribeQuorumRequest::default().with_topics(
            vec![describe_quorum_request::TopicData::default()
    .with_topic_name("__cluster_metadata".into())
    .with_partitions(vec![describe_quorum_request::PartitionData::default()
    .with_partition_index(0)])],
        )),
    };
    assert_eq!(decoded, expected);
    let mut again = BytesMut::new();
    decoded.encode(&mut again, Framing::SizePrefixed).unwrap();
    assert_eq!(again.freeze(), bytes);
    // The body is the same at every version; only the header's version differs.
    let Request::DescribeQuorum(body) = &decoded.body else {
        unreachable!()
    };
    for version in 0..=3 {
        assert_eq!(body.encode_to_bytes(version).unwrap(), bytes.slice(16..));
    }
}

/// The response a vector holds, checked: decode, re-encode, and the body.
fn response(text: &str, version: i16) -> DescribeQuorumResponse {
    let bytes = golden(text);
    let decoded = ResponseFrame::decode(frame(&bytes), ApiKey::DescribeQuorum, version).unwrap();
    assert_eq!(
        decoded.header,
        ResponseHeader::default().with_correlation_id(7)
    );
    let mut again = BytesMut::new();
    decoded.encode(&mut again, Framing::SizePrefixed).unwrap();
    assert_eq!(again.freeze(), bytes, "v{version} re-encoded");
    let Response::DescribeQuorum(body) = decoded.body else {
        unreachable!()
    };
    body
}

/// The body bytes of a response vector (after size prefix and 5-byte header).
fn body_bytes(text: &str) -> Bytes {
    golden(text).slice(9..)
}

/// The removal-pending quorum all the v0–v3 vectors describe, as the v3 message.
fn removal_pending_v3() -> DescribeQuorumResponse {
    let one = live(1, 4, T0 + 200, T0 + 200);
    let two = live(2, 3, T0 + 100, T0 + 100);
    let three = live(3, 3, T0 + 100, T0 + 100);
    DescribeQuorumResponse::default()
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_leader_id(1)
                .with_leader_epoch(5)
                .with_high_watermark(3)
                .with_current_voters(vec![one.clone(), two.clone()])
                .with_committed_voters(Some(vec![one, two, three.clone()]))
                .with_observers(vec![three])])])
        .with_nodes(vec![wire_node(1), wire_node(2), wire_node(3)])
}

/// The model in the same state: voters 2 and 3 at offset 3 at T0 + 100, RemoveVoter(3)
/// appended at offset 3.
fn removal_pending_leader() -> LeaderState {
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    leader.update_replica_state(key(2), T0 + 100, 3).unwrap();
    leader.update_replica_state(key(3), T0 + 100, 3).unwrap();
    assert_eq!(leader.remove_voter(&key(3)).unwrap(), 3);
    leader
}

#[test]
fn response_v3_carries_committed_voters_and_their_nodes() {
    let v3 = response(RESPONSE_V3, 3);
    assert_eq!(v3, removal_pending_v3());
    let mut leader = removal_pending_leader();
    assert_eq!(leader.describe_quorum(T0 + 200, 3).unwrap(), v3);
    // JSON form of the same message survives the round trip too.
    let json = v3.to_json(3).unwrap();
    assert_eq!(DescribeQuorumResponse::from_json(&json, 3).unwrap(), v3);
    assert_eq!(
        json["topics"][0]["partitions"][0]["committedVoters"][2]["replicaId"],
        3
    );
}

#[test]
fn response_v2_is_the_v3_data_with_committed_voters_dropped() {
    let v2 = response(RESPONSE_V2, 2);
    let mut expected = removal_pending_v3();
    expected.topics[0].partitions[0].committed_voters = None;
    expected.nodes.truncate(2);
    assert_eq!(v2, expected);
    assert_eq!(
        removal_pending_leader()
            .describe_quorum(T0 + 200, 2)
            .unwrap(),
        v2
    );
    // The v3 message, committed voters still in it, written at v2: they vanish (ignorable).
    // Only Nodes must be cut to the current voters, as a v2 leader reports them.
    let mut data = removal_pending_v3();
    data.nodes.truncate(2);
    assert!(data.topics[0].partitions[0].committed_voters.is_some());
    assert_eq!(data.encode_to_bytes(2).unwrap(), body_bytes(RESPONSE_V2));
}

#[test]
fn response_v1_and_v0_drop_committed_voters_directory_ids_and_nodes() {
    let mut data = removal_pending_v3();
    data.nodes.clear();
    let partition = &mut data.topics[0].partitions[0];
    for replica in partition
        .current_voters
        .iter_mut()
        .chain(partition.observers.iter_mut())
        .chain(partition.committed_voters.iter_mut().flatten())
    {
        replica.replica_directory_id = Uuid::ZERO;
    }
    // Committed voters still in the message: dropped at v1 and v0.
    assert_eq!(data.encode_to_bytes(1).unwrap(), body_bytes(RESPONSE_V1));
    assert_eq!(data.encode_to_bytes(0).unwrap(), body_bytes(RESPONSE_V0));

    let mut expected_v1 = data.clone();
    expected_v1.topics[0].partitions[0].committed_voters = None;
    let v1 = response(RESPONSE_V1, 1);
    assert_eq!(v1, expected_v1);
    let mut leader = removal_pending_leader();
    assert_eq!(leader.describe_quorum(T0 + 200, 1).unwrap(), v1);

    // At v0 the timestamps are not on the wire: they decode as -1.
    let v0 = response(RESPONSE_V0, 0);
    let mut expected_v0 = expected_v1.clone();
    let partition = &mut expected_v0.topics[0].partitions[0];
    for replica in partition
        .current_voters
        .iter_mut()
        .chain(partition.observers.iter_mut())
    {
        replica.last_fetch_timestamp = -1;
        replica.last_caught_up_timestamp = -1;
    }
    assert_eq!(v0, expected_v0);
    let built = leader.describe_quorum(T0 + 200, 0).unwrap();
    assert_eq!(built.encode_to_bytes(0).unwrap(), body_bytes(RESPONSE_V0));
}

#[test]
fn response_v3_without_high_watermark_has_null_committed_voters() {
    let v3 = response(RESPONSE_V3_NO_HW, 3);
    let expected = DescribeQuorumResponse::default()
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_leader_id(1)
                .with_leader_epoch(5)
                .with_high_watermark(-1)
                .with_current_voters(vec![live(1, 3, T0, T0), sentinel(2), sentinel(3)])
                .with_committed_voters(None)
                .with_observers(vec![])])])
        .with_nodes(vec![wire_node(1), wire_node(2), wire_node(3)]);
    assert_eq!(v3, expected);
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    assert_eq!(leader.describe_quorum(T0, 3).unwrap(), v3);
    // Null and empty are different on the wire: 00 versus 01.
    let mut empty = v3.clone();
    empty.topics[0].partitions[0].committed_voters = Some(vec![]);
    let bytes = empty.encode_to_bytes(3).unwrap();
    assert_eq!(bytes.len(), body_bytes(RESPONSE_V3_NO_HW).len());
    assert_ne!(bytes, body_bytes(RESPONSE_V3_NO_HW));
}

/// Bytes laid out as upstream's draft schema has it (`CommittedVoters` between
/// `CurrentVoters` and `Observers`), written by hand from that schema: they decode to the
/// lists the annotations name and re-encode unchanged.
#[test]
fn response_v3_in_upstream_draft_order_decodes() {
    const T: i64 = 1_760_000_000_000;
    let replica = |id: i32, dir: u8, leo: i64, fetch: i64, caught_up: i64| {
        entry(id, Uuid::from_bytes([dir; 16]), leo, fetch, caught_up)
    };
    let one = replica(1, 0xa1, 57, T - 300, T - 300);
    let two = replica(2, 0xa2, 60, T, T);
    let three = replica(3, 0xa3, 55, T - 100, T - 700);
    let broker = replica(100, 0x64, 60, T - 50, T - 50);
    let node = |id: i32| wire_node_with(id, &[("CONTROLLER", &format!("controller-{id}"), 9093)]);
    let expected = DescribeQuorumResponse::default()
        .with_error_message(None)
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_leader_id(2)
                .with_leader_epoch(4)
                .with_high_watermark(57)
                .with_current_voters(vec![one.clone(), two.clone(), three])
                .with_committed_voters(Some(vec![one, two]))
                .with_observers(vec![broker])])])
        .with_nodes(vec![node(1), node(2), node(3)]);
    assert_eq!(response(RESPONSE_V3_UPSTREAM_DRAFT, 3), expected);

    // Kafka's JSON form lists the fields in wire order too.
    let json = expected.to_json(3).unwrap();
    let keys: Vec<&str> = json["topics"][0]["partitions"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let at = |name: &str| keys.iter().position(|key| *key == name).unwrap();
    assert_eq!(at("currentVoters") + 1, at("committedVoters"));
    assert_eq!(at("committedVoters") + 1, at("observers"));
}
