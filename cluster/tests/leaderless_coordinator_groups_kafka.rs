//! The leaderless coordinator compared with Kafka 4.4 for the other group and transaction
//! APIs: share groups (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
//! ShareAcknowledge), streams groups (StreamsGroupHeartbeat, StreamsGroupDescribe),
//! ConsumerGroupDescribe, DescribeGroups, ListGroups, LeaveGroup, SyncGroup, OffsetDelete,
//! DeleteGroups, TxnOffsetCommit, AddOffsetsToTxn and EndTxn, every version Kafka 4.4
//! advertises (share and streams groups are on by default there: `share.version` 2 and
//! `streams.version` 1 are finalized when the cluster is formatted). The state is that of
//! `leaderless_coordinator_kafka.rs` (a group and a transactional id on a stopped broker
//! whose internal partitions have no other replica), plus a topic "shared" on the live
//! broker for the share fetches. `data/leaderless-coordinator-groups-kafka-4.4.txt` holds
//! what the real cluster answered; the plain test sends the same requests to the cluster on
//! tokio's paused clock and compares, the ignored one compares a live Kafka with the file
//! (`KAFKA_CODEC_RECORD=1` rewrites it).

use crate::leaderless_coordinator_kafka::{
    advertised, fixture_of, in_memory, line, live_leaderless, Keys,
};
use crate::support;

use kafka_codec::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_codec::messages::leave_group_request::MemberIdentity;
use kafka_codec::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_codec::messages::share_acknowledge_request::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatch,
};
use kafka_codec::messages::share_fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::streams_group_heartbeat_request::{Subtopology, Topology};
use kafka_codec::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_codec::messages::{
    AddOffsetsToTxnRequest, ConsumerGroupDescribeRequest, CreateTopicsRequest, DeleteGroupsRequest,
    DescribeGroupsRequest, EndTxnRequest, LeaveGroupRequest, ListGroupsRequest,
    OffsetDeleteRequest, ShareAcknowledgeRequest, ShareFetchRequest, ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest, StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest,
    SyncGroupRequest, TxnOffsetCommitRequest,
};
use kafka_codec::{ApiKey, Request, Response, Uuid};
use support::pipe::paused;
use support::Calls;

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "leaderless-coordinator-groups-kafka-4.4.txt";

/// The APIs compared, each with what it names: the group, the transactional id, or, for
/// the share session, an epoch the session is not at ("stale-epoch"), epoch 0
/// ("initial-epoch"), the final epoch of a member without a session ("no-session"), and for
/// TxnOffsetCommit v6+ the topic by its id ("topic-id"; "group" names the zero id there).
const APIS: [(ApiKey, &str); 22] = [
    (ApiKey::ShareGroupHeartbeat, "group"),
    (ApiKey::ShareGroupDescribe, "group"),
    (ApiKey::ShareFetch, "group"),
    (ApiKey::ShareAcknowledge, "group"),
    (ApiKey::ShareFetch, "stale-epoch"),
    (ApiKey::ShareAcknowledge, "stale-epoch"),
    (ApiKey::ShareAcknowledge, "initial-epoch"),
    (ApiKey::ShareFetch, "no-session"),
    (ApiKey::ShareAcknowledge, "no-session"),
    (ApiKey::StreamsGroupHeartbeat, "group"),
    (ApiKey::StreamsGroupDescribe, "group"),
    (ApiKey::ConsumerGroupDescribe, "group"),
    (ApiKey::DescribeGroups, "group"),
    (ApiKey::ListGroups, "group"),
    (ApiKey::LeaveGroup, "group"),
    (ApiKey::SyncGroup, "group"),
    (ApiKey::OffsetDelete, "group"),
    (ApiKey::DeleteGroups, "group"),
    (ApiKey::TxnOffsetCommit, "group"),
    (ApiKey::TxnOffsetCommit, "topic-id"),
    (ApiKey::AddOffsetsToTxn, "transaction"),
    (ApiKey::EndTxn, "transaction"),
];

/// A member id as Kafka's clients make them (a UUID in base64).
const MEMBER: &str = "AAAAAAAAAAAAAAAAAAAAAA";
/// A member that never opened a share session.
const SESSIONLESS: &str = "BBBBBBBBBBBBBBBBBBBBBB";
/// A producer id and epoch the transactional APIs name.
const PRODUCER: (i64, i16) = (1000, 0);

/// The request of `api` at `version` naming `kind`; `shared` is the topic on the live
/// broker.
fn request(api: ApiKey, version: i16, kind: &str, keys: &Keys, shared: Uuid) -> Request {
    let group = keys.group.as_str();
    // The share session's epoch and member: ShareFetch opens (0), ShareAcknowledge goes on.
    let (fetch_epoch, ack_epoch, member) = match kind {
        "stale-epoch" => (5, 5, MEMBER),
        "initial-epoch" => (0, 0, MEMBER),
        "no-session" => (-1, -1, SESSIONLESS),
        _ => (0, 1, MEMBER),
    };
    let transactional_id = keys.transactional_id.as_str();
    match api {
        ApiKey::ShareGroupHeartbeat => ShareGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(MEMBER.into())
            .with_member_epoch(0)
            .with_subscribed_topic_names(Some(vec!["shared".into()]))
            .into(),
        ApiKey::ShareGroupDescribe => ShareGroupDescribeRequest::default()
            .with_group_ids(vec![group.into()])
            .into(),
        ApiKey::ShareFetch => ShareFetchRequest::default()
            .with_group_id(Some(group.into()))
            .with_member_id(Some(member.into()))
            .with_share_session_epoch(fetch_epoch)
            .with_max_wait_ms(0)
            .with_min_bytes(1)
            .with_max_bytes(1 << 20)
            .with_max_records(10)
            .with_batch_size(10)
            .with_topics(vec![FetchTopic::default()
                .with_topic_id(shared)
                .with_partitions(vec![
                    FetchPartition::default().with_partition_index(0)
                ])])
            .into(),
        ApiKey::ShareAcknowledge => ShareAcknowledgeRequest::default()
            .with_group_id(Some(group.into()))
            .with_member_id(Some(member.into()))
            .with_share_session_epoch(ack_epoch)
            .with_topics(vec![AcknowledgeTopic::default()
                .with_topic_id(shared)
                .with_partitions(vec![AcknowledgePartition::default()
                    .with_partition_index(0)
                    .with_acknowledgement_batches(vec![AckBatch::default()
                        .with_first_offset(0)
                        .with_last_offset(0)
                        .with_acknowledge_types(vec![1].into())])])])
            .into(),
        ApiKey::StreamsGroupHeartbeat => StreamsGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(MEMBER.into())
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(300_000)
            .with_topology(Some(Topology::default().with_subtopologies(vec![
                Subtopology::default()
                    .with_subtopology_id("0".into())
                    .with_source_topics(vec!["events".into()]),
            ])))
            .with_active_tasks(Some(Vec::new()))
            .with_standby_tasks(Some(Vec::new()))
            .with_warmup_tasks(Some(Vec::new()))
            .with_process_id(Some("process-1".into()))
            .with_client_tags(Some(Vec::new()))
            .with_task_offsets(Some(Vec::new()))
            .with_task_end_offsets(Some(Vec::new()))
            .into(),
        ApiKey::StreamsGroupDescribe => StreamsGroupDescribeRequest::default()
            .with_group_ids(vec![group.into()])
            .into(),
        ApiKey::ConsumerGroupDescribe => ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![group.into()])
            .into(),
        ApiKey::DescribeGroups => DescribeGroupsRequest::default()
            .with_groups(vec![group.into()])
            .into(),
        ApiKey::ListGroups => ListGroupsRequest::default().into(),
        ApiKey::LeaveGroup if version >= 3 => LeaveGroupRequest::default()
            .with_group_id(group.into())
            .with_members(vec![
                MemberIdentity::default().with_member_id("member-1".into())
            ])
            .into(),
        ApiKey::LeaveGroup => LeaveGroupRequest::default()
            .with_group_id(group.into())
            .with_member_id("member-1".into())
            .into(),
        ApiKey::SyncGroup => SyncGroupRequest::default()
            .with_group_id(group.into())
            .with_generation_id(1)
            .with_member_id("member-1".into())
            .with_protocol_type(Some("consumer".into()))
            .with_protocol_name(Some("range".into()))
            .into(),
        ApiKey::OffsetDelete => OffsetDeleteRequest::default()
            .with_group_id(group.into())
            .with_topics(vec![OffsetDeleteRequestTopic::default()
                .with_name("events".into())
                .with_partitions(vec![
                    OffsetDeleteRequestPartition::default().with_partition_index(0)
                ])])
            .into(),
        ApiKey::DeleteGroups => DeleteGroupsRequest::default()
            .with_groups_names(vec![group.into()])
            .into(),
        ApiKey::TxnOffsetCommit => TxnOffsetCommitRequest::default()
            .with_transactional_id(transactional_id.into())
            .with_group_id(group.into())
            .with_producer_id(PRODUCER.0)
            .with_producer_epoch(PRODUCER.1)
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name("events".into())
                .with_topic_id(if kind == "topic-id" {
                    keys.topic_id
                } else {
                    Uuid::ZERO
                })
                .with_partitions(vec![TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(5)])])
            .into(),
        ApiKey::AddOffsetsToTxn => AddOffsetsToTxnRequest::default()
            .with_transactional_id(transactional_id.into())
            .with_producer_id(PRODUCER.0)
            .with_producer_epoch(PRODUCER.1)
            .with_group_id(group.into())
            .into(),
        ApiKey::EndTxn => EndTxnRequest::default()
            .with_transactional_id(transactional_id.into())
            .with_producer_id(PRODUCER.0)
            .with_producer_epoch(PRODUCER.1)
            .with_committed(true)
            .into(),
        other => panic!("{other:?} is not compared"),
    }
}

/// Sends each `(api, version, kind)` to `client`; the answers as lines (the "shared"
/// topic's id as a placeholder too).
async fn answers(
    client: &mut impl Calls,
    requests: &[(ApiKey, i16, String)],
    keys: &Keys,
    shared: Uuid,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (api, version, kind) in requests {
        let answer = client
            .call(*version, request(*api, *version, kind, keys, shared))
            .await;
        let line = line(*api, *version, kind, answer, keys)
            .replace(&format!("\"{shared}\""), "\"<shared-topic-id>\"");
        lines.push(line);
    }
    lines
}

/// This file's fixture.
fn fixture() -> (Vec<(ApiKey, i16, String)>, Vec<String>) {
    fixture_of(FIXTURE, &APIS.map(|(api, _)| api))
}

/// Creates topic "shared", one partition on broker `on`; its id.
async fn create_shared(client: &mut impl Calls, on: i32) -> Uuid {
    let topic = CreatableTopic::default()
        .with_name("shared".into())
        .with_num_partitions(-1)
        .with_replication_factor(-1)
        .with_assignments(vec![CreatableReplicaAssignment::default()
            .with_partition_index(0)
            .with_broker_ids(vec![on].into())]);
    let Response::CreateTopics(created) = client
        .call(7, CreateTopicsRequest::default().with_topics(vec![topic]))
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0, "{:?}", created.topics[0]);
    created.topics[0].topic_id
}

#[test]
fn the_cluster_answers_the_group_apis_of_a_leaderless_coordinator_as_kafka_does() {
    let (requests, want) = fixture();
    paused().block_on(async {
        let (_cluster, mut zero, keys) = in_memory().await;
        let shared = create_shared(&mut zero, 0).await;
        let got = answers(&mut zero, &requests, &keys, shared).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

/// The real cluster of `tools/kafka-broker/cluster.sh`, as in
/// `leaderless_coordinator_kafka.rs`, then every version of each API compared.
#[test]
#[ignore = "starts a real Kafka cluster (three JVMs, ~30 s): tools/kafka-broker/cluster.sh"]
fn kafka_answers_the_group_apis_of_a_leaderless_coordinator_as_recorded() {
    support::with_kafka_cluster(2, |brokers| {
        let brokers = [brokers[0], brokers[1]];
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(async {
                let (mut client, keys, live_node) =
                    live_leaderless(support::KAFKA_CLUSTER_SCRIPT, brokers).await;
                let shared = create_shared(&mut client, live_node).await;
                let ranges = advertised(&mut client, APIS.map(|(api, _)| api)).await;
                let mut requests = Vec::new();
                for ((api, kind), range) in APIS.into_iter().zip(ranges) {
                    // By topic id from v6 only.
                    let low = if kind == "topic-id" {
                        6
                    } else {
                        *range.start()
                    };
                    for version in low..=*range.end() {
                        requests.push((api, version, kind.to_owned()));
                    }
                }
                let got = answers(&mut client, &requests, &keys, shared).await;
                record_or_compare(&got);
            })
    });
}

fn record_or_compare(got: &[String]) {
    let header = "# What Kafka 4.4 answered for a group and a transactional id whose internal\n\
                  # partitions have no leader (one replica each, on a stopped broker), recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # --ignored leaderless_coordinator_groups_kafka. One line per request: API,\n\
                  # version, key <TAB> the answer's body as Kafka's JSON.\n";
    if !support::recorded(FIXTURE, header, got) {
        let (_, want) = fixture();
        support::assert_same_lines(got, &want, "live");
    }
}
