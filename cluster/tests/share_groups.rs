//! Share groups (KIP-932) through this crate's own client connection, over TCP: two
//! members share one partition (ShareGroupHeartbeat, ShareGroupDescribe), records are
//! acquired per member with delivery counts (ShareFetch), accepted, released (delivered
//! again with delivery count 2) and rejected (never again), piggybacked on a ShareFetch or
//! sent with ShareAcknowledge; a lock not acknowledged in time is released, a record
//! released as often as the delivery-count limit is archived; the share session epochs'
//! errors; ListGroups type `share`, DeleteGroups; and the APIs advertised only by the
//! releases that served them. The two-member scenario and the epochs' errors also run, each
//! assertion as written, against a real Kafka 4.4 broker (`bash tools/ci-live.sh
//! cluster_groups`; with the group's `share.assignment.interval.ms` at 0), which passes.

use crate::support;

use kafka_codec::messages::share_acknowledge_request::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatch,
};
use kafka_codec::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic,
};
use kafka_codec::messages::{
    ApiVersionsRequest, ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, ListGroupsRequest,
    ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareFetchRequest, ShareFetchResponse,
    ShareGroupDescribeRequest, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse,
};
use kafka_codec::records::decode_batches;
use kafka_codec::{ApiKey, ErrorCode, Response, Uuid};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::share_groups::ShareConfig;
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use std::time::Duration;
use support::{batch, coordinator_ready, create_topic, produce, Client};

/// ConfigResource type GROUP.
const GROUP_RESOURCE: i8 = 32;
const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;

impl Client {
    async fn share_heartbeat(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
        topics: Option<&[&str]>,
    ) -> ShareGroupHeartbeatResponse {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(member.into())
            .with_member_epoch(epoch)
            .with_subscribed_topic_names(
                topics.map(|names| names.iter().map(|n| (*n).into()).collect()),
            );
        let Response::ShareGroupHeartbeat(answer) = self.call(1, request).await else {
            panic!("not ShareGroupHeartbeat")
        };
        answer
    }

    async fn share_fetch(&mut self, request: ShareFetchRequest) -> ShareFetchResponse {
        let Response::ShareFetch(answer) = self.call(1, request).await else {
            panic!("not ShareFetch")
        };
        answer
    }

    async fn share_ack(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
        topic: Uuid,
        acks: &[(i64, i64, &[i8])],
    ) -> ShareAcknowledgeResponse {
        let request = ShareAcknowledgeRequest::default()
            .with_group_id(Some(group.into()))
            .with_member_id(Some(member.into()))
            .with_share_session_epoch(epoch)
            .with_topics(vec![AcknowledgeTopic::default()
                .with_topic_id(topic)
                .with_partitions(vec![AcknowledgePartition::default()
                    .with_partition_index(0)
                    .with_acknowledgement_batches(
                        acks.iter()
                            .map(|(first, last, types)| {
                                AckBatch::default()
                                    .with_first_offset(*first)
                                    .with_last_offset(*last)
                                    .with_acknowledge_types(types.to_vec().into())
                            })
                            .collect(),
                    )])]);
        let Response::ShareAcknowledge(answer) = self.call(1, request).await else {
            panic!("not ShareAcknowledge")
        };
        answer
    }
}

/// A ShareFetch of partition 0 of `topic` by `member` of `group` at session `epoch`, at
/// most `max_records`, waiting up to `wait_ms`, carrying `acks`.
fn fetch(
    group: &str,
    member: &str,
    epoch: i32,
    topic: Uuid,
    max_records: i32,
    wait_ms: i32,
    acks: &[(i64, i64, &[i8])],
) -> ShareFetchRequest {
    ShareFetchRequest::default()
        .with_group_id(Some(group.into()))
        .with_member_id(Some(member.into()))
        .with_share_session_epoch(epoch)
        .with_max_wait_ms(wait_ms)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_max_records(max_records)
        .with_batch_size(max_records)
        .with_topics(vec![FetchTopic::default()
            .with_topic_id(topic)
            .with_partitions(vec![FetchPartition::default()
                .with_partition_index(0)
                .with_acknowledgement_batches(
                    acks.iter()
                        .map(|(first, last, types)| {
                            AcknowledgementBatch::default()
                                .with_first_offset(*first)
                                .with_last_offset(*last)
                                .with_acknowledge_types(types.to_vec().into())
                        })
                        .collect(),
                )])])
}

/// The acquired ranges (first, last, delivery count) of the answer's only partition, and
/// the offsets of the records it carries that fall in them.
fn acquired(answer: &ShareFetchResponse) -> (Vec<(i64, i64, i16)>, Vec<i64>) {
    assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
    let Some(partition) = answer.responses.first().and_then(|t| t.partitions.first()) else {
        return (Vec::new(), Vec::new());
    };
    assert_eq!(partition.error_code, 0);
    let ranges: Vec<(i64, i64, i16)> = partition
        .acquired_records
        .iter()
        .map(|r| (r.first_offset, r.last_offset, r.delivery_count))
        .collect();
    let records = partition.records.clone().unwrap_or_default();
    let offsets = decode_batches(&records)
        .expect("batches")
        .iter()
        .flat_map(|b| b.records.iter().map(|r| r.offset))
        .filter(|offset| ranges.iter().any(|(f, l, _)| f <= offset && offset <= l))
        .collect();
    (ranges, offsets)
}

fn ack_error(answer: &ShareFetchResponse) -> i16 {
    answer.responses[0].partitions[0].acknowledge_error_code
}

#[tokio::test]
async fn two_members_share_a_partitions_records() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    scenario(cluster.brokers()[0].address, "share", "shared").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    let name = format!("share-{nanos}");
    // Kafka 4.4 batches assignments (KIP-1263: at most one a second by default); the
    // cluster assigns at each heartbeat, as Kafka does with the interval at 0. And a fresh
    // broker may initialize the share partition only after the scenario's first produce,
    // so "latest" would start it past those records: "earliest" starts it where the
    // cluster's "latest" does here, at the empty log's end, whenever it is initialized.
    let mut admin = Client::connect(broker, "admin").await;
    let set = [
        ("share.assignment.interval.ms", 0, Some("0")),
        ("share.auto.offset.reset", 0, Some("earliest")),
    ];
    let altered = admin
        .incremental_alter_configs(1, GROUP_RESOURCE, &name, &set, false)
        .await;
    assert_eq!(altered.0, 0);
    scenario(broker, &name, &name).await;
}

/// Two members of `group` share the one partition of a new topic `topic_name` through the
/// broker at `address` (which leads it and coordinates the group).
async fn scenario(address: SocketAddr, group: &str, topic_name: &str) {
    let mut a = Client::connect(address, "member-a").await;
    let mut b = Client::connect(address, "member-b").await;
    let topic = create_topic(&mut a, topic_name).await;
    coordinator_ready(&mut a, group).await;

    // Both members get the one partition: the cluster at once, Kafka 4.4 once the share
    // partition's state is initialized, a heartbeat or two later. Each heartbeats at the
    // epoch it was last given until both hold it at one epoch; an assignment is sent only
    // when it changed.
    let subscription = [topic_name];
    let mut epochs = [0, 0];
    let mut held = [false, false];
    let settled = tokio::time::timeout(support::GUARD, async {
        loop {
            for (at, (client, member)) in [(&mut a, "a"), (&mut b, "b")].into_iter().enumerate() {
                let topics = (epochs[at] == 0).then_some(&subscription[..]);
                let answer = client
                    .share_heartbeat(group, member, epochs[at], topics)
                    .await;
                assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
                assert_eq!(answer.heartbeat_interval_ms, 5000);
                assert!(answer.member_epoch >= epochs[at], "epochs only move on");
                if let Some(assignment) = &answer.assignment {
                    let partitions: Vec<(Uuid, Vec<i32>)> = assignment
                        .topic_partitions
                        .iter()
                        .map(|tp| (tp.topic_id, tp.partitions.to_vec()))
                        .collect();
                    assert!(
                        !held[at],
                        "an unchanged assignment sent again: {partitions:?}"
                    );
                    held[at] = !partitions.is_empty();
                    if held[at] {
                        assert_eq!(partitions, [(topic, vec![0])]);
                    }
                }
                epochs[at] = answer.member_epoch;
            }
            if held == [true, true] && epochs[0] == epochs[1] {
                return epochs[0];
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("both members assigned the partition");
    // A heartbeat ahead of the coordinator is fenced.
    let fenced = a.share_heartbeat(group, "a", settled + 1, None).await;
    assert_eq!(fenced.error_code, ErrorCode::FENCED_MEMBER_EPOCH.code());
    let Response::ShareGroupDescribe(described) = a
        .call(
            1,
            ShareGroupDescribeRequest::default().with_group_ids(vec![group.into()]),
        )
        .await
    else {
        panic!("not ShareGroupDescribe")
    };
    let described = &described.groups[0];
    assert_eq!(described.error_code, 0);
    assert_eq!(described.group_state.as_str(), "Stable");
    assert_eq!(described.assignor_name.as_str(), "simple");
    assert_eq!(described.members.len(), 2);
    for member in &described.members {
        let assigned = &member.assignment.topic_partitions[0];
        assert_eq!(assigned.topic_name.as_str(), topic_name);
        assert_eq!(assigned.partitions.to_vec(), vec![0]);
    }

    // Sessions open before anything is produced: the share partition starts at the log
    // end (`share.auto.offset.reset=latest`).
    assert_eq!(
        acquired(&a.share_fetch(fetch(group, "a", 0, topic, 5, 0, &[])).await).0,
        []
    );
    assert_eq!(
        acquired(&b.share_fetch(fetch(group, "b", 0, topic, 5, 0, &[])).await).0,
        []
    );
    a.call(9, produce(topic_name, 0, batch(0, 5))).await;
    a.call(9, produce(topic_name, 0, batch(5, 5))).await;

    // Each acquires a batch of its own. A long poll: Kafka may make just-produced records
    // acquirable a moment after the produce is answered (the cluster answers at once).
    let wait = 10_000;
    let (ranges, offsets) = acquired(
        &a.share_fetch(fetch(group, "a", 1, topic, 5, wait, &[]))
            .await,
    );
    assert_eq!(ranges, [(0, 4, 1)]);
    assert_eq!(offsets, [0, 1, 2, 3, 4]);
    let (ranges, _) = acquired(
        &b.share_fetch(fetch(group, "b", 1, topic, 5, wait, &[]))
            .await,
    );
    assert_eq!(ranges, [(5, 9, 1)]);

    // A accepts 0-1 and 4, releases 2, rejects 3.
    let acked = a
        .share_ack(
            group,
            "a",
            2,
            topic,
            &[(0, 4, &[ACCEPT, ACCEPT, RELEASE, REJECT, ACCEPT])],
        )
        .await;
    assert_eq!(acked.error_code, 0);
    assert_eq!(acked.responses[0].partitions[0].error_code, 0);
    // B accepts its five in its next fetch, which acquires the released one, delivered twice.
    let answer = b
        .share_fetch(fetch(group, "b", 2, topic, 5, 0, &[(5, 9, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), 0);
    let (ranges, offsets) = acquired(&answer);
    assert_eq!(ranges, [(2, 2, 2)]);
    assert_eq!(offsets, [2]);
    // A member cannot acknowledge what another holds, nor what is done with.
    let answer = a
        .share_fetch(fetch(group, "a", 3, topic, 5, 0, &[(2, 2, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), ErrorCode::INVALID_RECORD_STATE.code());
    let answer = a
        .share_fetch(fetch(group, "a", 4, topic, 5, 0, &[(3, 3, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), ErrorCode::INVALID_RECORD_STATE.code());
    // B accepts 2: every record is done with; the rejected one is never delivered again.
    let answer = b
        .share_fetch(fetch(group, "b", 3, topic, 5, 0, &[(2, 2, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), 0);
    assert_eq!(acquired(&answer).0, []);
    assert_eq!(
        acquired(&a.share_fetch(fetch(group, "a", 5, topic, 5, 0, &[])).await).0,
        []
    );

    // A record released as often as the limit (5 deliveries) is archived.
    a.call(9, produce(topic_name, 0, batch(10, 1))).await;
    let mut epoch = 6;
    for delivery in 1..=5 {
        let (ranges, _) = acquired(
            &a.share_fetch(fetch(group, "a", epoch, topic, 5, 0, &[]))
                .await,
        );
        assert_eq!(ranges, [(10, 10, delivery)]);
        let released = a
            .share_ack(group, "a", epoch + 1, topic, &[(10, 10, &[RELEASE])])
            .await;
        assert_eq!(released.responses[0].partitions[0].error_code, 0);
        epoch += 2;
    }
    assert_eq!(
        acquired(&b.share_fetch(fetch(group, "b", 4, topic, 5, 0, &[])).await).0,
        []
    );

    // A member that closes its session gives back what it holds.
    a.call(9, produce(topic_name, 0, batch(11, 3))).await;
    let (ranges, _) = acquired(
        &a.share_fetch(fetch(group, "a", epoch, topic, 5, 0, &[]))
            .await,
    );
    assert_eq!(ranges, [(11, 13, 1)]);
    let closed = a
        .share_ack(group, "a", -1, topic, &[(11, 11, &[ACCEPT])])
        .await;
    assert_eq!(closed.error_code, 0);
    // Kafka may give them back a moment after another member's fetch is answered: b asks
    // again in its session until they come (the cluster answers the first time).
    let ranges = tokio::time::timeout(support::GUARD, async {
        let mut b_epoch = 5;
        loop {
            let (ranges, _) = acquired(
                &b.share_fetch(fetch(group, "b", b_epoch, topic, 5, 1_000, &[]))
                    .await,
            );
            if !ranges.is_empty() {
                return ranges;
            }
            b_epoch += 1;
        }
    })
    .await
    .expect("the released records reach the other member");
    assert_eq!(
        ranges,
        [(12, 13, 2)],
        "11 accepted on closing, 12-13 released"
    );
    // Its session is gone.
    let gone = a
        .share_fetch(fetch(group, "a", epoch + 1, topic, 5, 0, &[]))
        .await;
    assert_eq!(gone.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());

    // ListGroups lists it as a share group; it cannot be deleted while it has members.
    let Response::ListGroups(listed) = a
        .call(
            5,
            ListGroupsRequest::default().with_types_filter(vec!["share".into()]),
        )
        .await
    else {
        panic!("not ListGroups")
    };
    let listed = listed
        .groups
        .iter()
        .find(|listed| listed.group_id.as_str() == group)
        .expect("the group listed");
    assert_eq!(listed.group_type.as_str(), "share");
    assert_eq!(listed.protocol_type.as_str(), "share");
    assert_eq!(listed.group_state.as_str(), "Stable");
    let delete = || DeleteGroupsRequest::default().with_groups_names(vec![group.into()]);
    let Response::DeleteGroups(refused) = a.call(2, delete()).await else {
        panic!("not DeleteGroups")
    };
    assert_eq!(
        refused.results[0].error_code,
        ErrorCode::NON_EMPTY_GROUP.code()
    );
    // Both leave; the group is empty and can go.
    for (client, member) in [(&mut a, "a"), (&mut b, "b")] {
        let left = client.share_heartbeat(group, member, -1, None).await;
        assert_eq!(left.error_code, 0, "{:?}", left.error_message);
        assert_eq!(left.member_epoch, -1);
    }
    let Response::DeleteGroups(deleted) = a.call(2, delete()).await else {
        panic!("not DeleteGroups")
    };
    assert_eq!(deleted.results[0].error_code, 0);
}

#[tokio::test]
async fn a_lock_not_acknowledged_in_time_is_released() {
    let group = "share";
    let config = ShareConfig {
        lock_timeout: Duration::from_millis(100),
        ..ShareConfig::default()
    };
    let cluster = Cluster::builder()
        .share_config(config)
        .build()
        .await
        .expect("cluster");
    let broker = cluster.brokers()[0].address;
    let mut a = Client::connect(broker, "member-a").await;
    let mut b = Client::connect(broker, "member-b").await;
    let topic = create_topic(&mut a, "locks").await;
    a.share_heartbeat(group, "a", 0, Some(&["locks"])).await;
    b.share_heartbeat(group, "b", 0, Some(&["locks"])).await;
    a.share_fetch(fetch(group, "a", 0, topic, 5, 0, &[])).await;
    b.share_fetch(fetch(group, "b", 0, topic, 5, 0, &[])).await;
    a.call(9, produce("locks", 0, batch(0, 3))).await;
    let answer = a.share_fetch(fetch(group, "a", 1, topic, 5, 0, &[])).await;
    assert_eq!(answer.acquisition_lock_timeout_ms, 100);
    assert_eq!(acquired(&answer).0, [(0, 2, 1)]);
    // B long-polls: nothing is available until A's lock runs out, which wakes it (the wait
    // of 30 s is a hang guard).
    let (ranges, offsets) = acquired(
        &b.share_fetch(fetch(group, "b", 1, topic, 5, 30_000, &[]))
            .await,
    );
    assert_eq!(ranges, [(0, 2, 2)]);
    assert_eq!(offsets, [0, 1, 2]);
    // A's acknowledgement comes too late.
    let late = a
        .share_ack(group, "a", 2, topic, &[(0, 2, &[ACCEPT])])
        .await;
    assert_eq!(
        late.responses[0].partitions[0].error_code,
        ErrorCode::INVALID_RECORD_STATE.code()
    );
}

#[tokio::test]
async fn session_and_member_epochs_are_checked() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let broker = cluster.brokers()[0].address;
    epochs_scenario(broker, "share", "epochs", "consumers").await;
    // On the cluster, where epochs move at once: m joined at 1 above.
    let group = "share";
    let mut client = Client::connect(broker, "member").await;
    assert_eq!(
        client
            .share_heartbeat(group, "m", 1, None)
            .await
            .member_epoch,
        1
    );
    // Another joins (epoch 2): m may still name its previous epoch, the newcomer may not
    // name one it never had.
    let joined = client
        .share_heartbeat(group, "n", 0, Some(&["epochs"]))
        .await;
    assert_eq!(joined.member_epoch, 2);
    assert_eq!(
        client
            .share_heartbeat(group, "m", 1, None)
            .await
            .member_epoch,
        2
    );
    assert_eq!(
        client
            .share_heartbeat(group, "m", 1, None)
            .await
            .member_epoch,
        2
    );
    let behind = client.share_heartbeat(group, "n", 1, None).await;
    assert_eq!(behind.error_code, ErrorCode::FENCED_MEMBER_EPOCH.code());
    assert_eq!(
        behind.error_message.as_deref(),
        Some(
            "The share group member has a smaller member epoch (1) than the one known by the \
             group coordinator (2), and it does not match the previous member epoch (0). The \
             member must abandon all its partitions and rejoin."
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_checks_the_same_epochs() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    let name = format!("share-epochs-{nanos}");
    epochs_scenario(broker, &name, &name, &format!("consumers-{nanos}")).await;
}

/// Member and share session epochs' errors of `group`, with a topic `topic_name` made here
/// and a KIP-848 group `consumers`, through the broker at `address`.
async fn epochs_scenario(address: SocketAddr, group: &str, topic_name: &str, consumers: &str) {
    let mut client = Client::connect(address, "member").await;
    let topic = create_topic(&mut client, topic_name).await;
    coordinator_ready(&mut client, group).await;
    coordinator_ready(&mut client, consumers).await;

    // Member epochs.
    let invalid = client.share_heartbeat(group, "m", 0, None).await;
    assert_eq!(invalid.error_code, ErrorCode::INVALID_REQUEST.code());
    let unknown = client.share_heartbeat(group, "m", 3, None).await;
    assert_eq!(unknown.error_code, ErrorCode::GROUP_ID_NOT_FOUND.code());
    let joined = client
        .share_heartbeat(group, "m", 0, Some(&[topic_name]))
        .await;
    assert_eq!(joined.error_code, 0);
    let stranger = client.share_heartbeat(group, "x", 1, None).await;
    assert_eq!(stranger.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());
    let fenced = client.share_heartbeat(group, "m", 7, None).await;
    assert_eq!(fenced.error_code, ErrorCode::FENCED_MEMBER_EPOCH.code());
    // A KIP-848 group's id is not a share group's.
    let Response::ConsumerGroupHeartbeat(consumer) = client
        .call(
            1,
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id(consumers.into())
                .with_member_id("c".into())
                .with_member_epoch(0)
                .with_rebalance_timeout_ms(30_000)
                .with_subscribed_topic_names(Some(vec![topic_name.into()]))
                .with_topic_partitions(Some(Vec::new())),
        )
        .await
    else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(consumer.error_code, 0);
    let other = client
        .share_heartbeat(consumers, "m", 0, Some(&[topic_name]))
        .await;
    assert_eq!(other.error_code, ErrorCode::GROUP_ID_NOT_FOUND.code());

    // Share session epochs.
    let none = client
        .share_fetch(fetch(group, "m", 1, topic, 5, 0, &[]))
        .await;
    assert_eq!(none.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());
    let acks_first = client
        .share_fetch(fetch(group, "m", 0, topic, 5, 0, &[(0, 0, &[ACCEPT])]))
        .await;
    assert_eq!(acks_first.error_code, ErrorCode::INVALID_REQUEST.code());
    assert_eq!(
        client
            .share_fetch(fetch(group, "m", 0, topic, 5, 0, &[]))
            .await
            .error_code,
        0
    );
    let behind = client
        .share_fetch(fetch(group, "m", 3, topic, 5, 0, &[]))
        .await;
    assert_eq!(
        behind.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    assert_eq!(
        client
            .share_fetch(fetch(group, "m", 1, topic, 5, 0, &[]))
            .await
            .error_code,
        0
    );
    let repeated = client
        .share_fetch(fetch(group, "m", 1, topic, 5, 0, &[]))
        .await;
    assert_eq!(
        repeated.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    let opening = client
        .share_ack(group, "m", 0, topic, &[(0, 0, &[ACCEPT])])
        .await;
    assert_eq!(
        opening.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    assert_eq!(
        client.share_ack(group, "m", 2, topic, &[]).await.error_code,
        0
    );
    assert_eq!(
        client
            .share_ack(group, "m", -1, topic, &[])
            .await
            .error_code,
        0
    );
    let closed = client.share_ack(group, "m", -1, topic, &[]).await;
    assert_eq!(closed.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());
}

#[tokio::test]
async fn share_apis_are_advertised_by_the_releases_that_served_them() {
    // Kafka 4.0's share group APIs were unstable (early access), not listed.
    for (release, served) in [("4.4", true), ("4.1", true), ("4.0", false), ("3.9", false)] {
        let cluster = Cluster::builder()
            .as_version(Release::parse(release).expect("a release"))
            .build()
            .await
            .expect("cluster");
        let mut client = Client::connect(cluster.brokers()[0].address, "versions").await;
        let Response::ApiVersions(versions) = client.call(3, ApiVersionsRequest::default()).await
        else {
            panic!("not ApiVersions")
        };
        for api in [
            ApiKey::ShareGroupHeartbeat,
            ApiKey::ShareGroupDescribe,
            ApiKey::ShareFetch,
            ApiKey::ShareAcknowledge,
        ] {
            let listed = versions.api_keys.iter().find(|k| k.api_key == api.key());
            assert_eq!(listed.is_some(), served, "{api} at {release}");
            if let Some(listed) = listed {
                // v0 was 4.0's early-access version, never listed.
                assert_eq!(listed.min_version, 1, "{api} at {release}");
            }
        }
    }
}

#[tokio::test]
async fn version_0_is_served_without_a_release_limit() {
    // Every version this crate knows, as the cluster serves by default: v0 (Kafka 4.0's
    // early access) too, without v1's MaxRecords and AcquisitionLockTimeoutMs.
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "v0").await;
    let topic = create_topic(&mut client, "v0").await;
    let join = ShareGroupHeartbeatRequest::default()
        .with_group_id("v0".into())
        .with_member_id("m".into())
        .with_subscribed_topic_names(Some(vec!["v0".into()]));
    let Response::ShareGroupHeartbeat(joined) = client.call(0, join).await else {
        panic!("not ShareGroupHeartbeat")
    };
    assert_eq!(joined.error_code, 0);
    let open = fetch("v0", "m", 0, topic, 0, 0, &[]);
    let Response::ShareFetch(opened) = client.call(0, open).await else {
        panic!("not ShareFetch")
    };
    assert_eq!(opened.error_code, 0);
    client.call(9, produce("v0", 0, batch(0, 3))).await;
    let Response::ShareFetch(answer) = client.call(0, fetch("v0", "m", 1, topic, 0, 0, &[])).await
    else {
        panic!("not ShareFetch")
    };
    assert_eq!(acquired(&answer).0, [(0, 2, 1)]);
    let ack = ShareAcknowledgeRequest::default()
        .with_group_id(Some("v0".into()))
        .with_member_id(Some("m".into()))
        .with_share_session_epoch(2)
        .with_topics(vec![AcknowledgeTopic::default()
            .with_topic_id(topic)
            .with_partitions(vec![AcknowledgePartition::default()
                .with_partition_index(0)
                .with_acknowledgement_batches(vec![AckBatch::default()
                    .with_first_offset(0)
                    .with_last_offset(2)
                    .with_acknowledge_types(vec![ACCEPT].into())])])]);
    let Response::ShareAcknowledge(acked) = client.call(0, ack).await else {
        panic!("not ShareAcknowledge")
    };
    assert_eq!(acked.error_code, 0);
    assert_eq!(acked.responses[0].partitions[0].error_code, 0);
}

#[tokio::test]
async fn a_member_whose_session_ends_is_removed_and_its_records_released() {
    let config = ShareConfig {
        session_timeout: Duration::from_millis(200),
        ..ShareConfig::default()
    };
    let cluster = Cluster::builder()
        .share_config(config)
        .build()
        .await
        .expect("cluster");
    let broker = cluster.brokers()[0].address;
    let group = "share";
    let mut a = Client::connect(broker, "member-a").await;
    let topic = create_topic(&mut a, "expiry").await;
    a.share_heartbeat(group, "a", 0, Some(&["expiry"])).await;
    a.share_fetch(fetch(group, "a", 0, topic, 5, 0, &[])).await;
    a.call(9, produce("expiry", 0, batch(0, 2))).await;
    let (ranges, _) = acquired(&a.share_fetch(fetch(group, "a", 1, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(0, 1, 1)]);
    // A heartbeats no more: the timer removes it (the wait is a hang guard).
    tokio::time::timeout(support::GUARD, async {
        loop {
            let Response::ShareGroupDescribe(described) = a
                .call(
                    1,
                    ShareGroupDescribeRequest::default().with_group_ids(vec![group.into()]),
                )
                .await
            else {
                panic!("not ShareGroupDescribe")
            };
            if described.groups[0].members.is_empty() {
                assert_eq!(described.groups[0].group_state.as_str(), "Empty");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the member removed at its session's end");
    // Its session went with it, and its records go to the next member.
    let gone = a.share_fetch(fetch(group, "a", 2, topic, 5, 0, &[])).await;
    assert_eq!(gone.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());
    let mut b = Client::connect(broker, "member-b").await;
    b.share_heartbeat(group, "b", 0, Some(&["expiry"])).await;
    let (ranges, _) = acquired(&b.share_fetch(fetch(group, "b", 0, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(0, 1, 2)]);
}

#[tokio::test]
async fn the_control_surface_expires_a_share_members_session() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let broker = cluster.brokers()[0].address;
    let group = "expired";
    let mut a = Client::connect(broker, "member-a").await;
    let topic = create_topic(&mut a, "expired").await;
    let joined = a.share_heartbeat(group, "a", 0, Some(&["expired"])).await;
    assert_eq!(joined.error_code, 0);
    let opened = a.share_fetch(fetch(group, "a", 0, topic, 5, 0, &[])).await;
    assert_eq!(opened.error_code, 0);
    a.call(9, produce("expired", 0, batch(0, 2))).await;
    let (ranges, _) = acquired(&a.share_fetch(fetch(group, "a", 1, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(0, 1, 1)]);

    let control = cluster.control();
    assert!(control.expire_session(group, "nobody").is_err());
    assert!(control.expire_session("no-such-group", "a").is_err());
    control.expire_session(group, "a").expect("expired");
    // Gone from the group with its share session; its records go to the next member.
    let again = a
        .share_heartbeat(group, "a", joined.member_epoch, None)
        .await;
    assert_eq!(again.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());
    let gone = a.share_fetch(fetch(group, "a", 2, topic, 5, 0, &[])).await;
    assert_eq!(gone.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());
    let mut b = Client::connect(broker, "member-b").await;
    let b_joined = b.share_heartbeat(group, "b", 0, Some(&["expired"])).await;
    assert!(
        b_joined.member_epoch > joined.member_epoch,
        "the group moved on"
    );
    let (ranges, _) = acquired(&b.share_fetch(fetch(group, "b", 0, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(0, 1, 2)]);
}
