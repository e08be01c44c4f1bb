//! Share groups (KIP-932) through this crate's own client connection, over TCP: two
//! members share one partition (ShareGroupHeartbeat, ShareGroupDescribe), records are
//! acquired per member with delivery counts (ShareFetch), accepted, released (delivered
//! again with delivery count 2) and rejected (never again), piggybacked on a ShareFetch or
//! sent with ShareAcknowledge; a lock not acknowledged in time is released, a record
//! released as often as the delivery-count limit is archived; the share session epochs'
//! errors; ListGroups type `share`, DeleteGroups; and the APIs advertised only by the
//! releases that served them.

mod support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::share_acknowledge_request::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatch,
};
use kafka_codec::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic,
};
use kafka_codec::messages::{
    ApiVersionsRequest, ConsumerGroupHeartbeatRequest, CreateTopicsRequest, DeleteGroupsRequest,
    ListGroupsRequest, ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareFetchRequest,
    ShareFetchResponse, ShareGroupDescribeRequest, ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
};
use kafka_codec::records::decode_batches;
use kafka_codec::{ApiKey, ErrorCode, Response, Uuid};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::share_groups::ShareConfig;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::{batch, produce, Client};

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
        member: &str,
        epoch: i32,
        topic: Uuid,
        acks: &[(i64, i64, &[i8])],
    ) -> ShareAcknowledgeResponse {
        let request = ShareAcknowledgeRequest::default()
            .with_group_id(Some("share".into()))
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

/// A ShareFetch of partition 0 of `topic` by `member` of group `share` at session `epoch`,
/// at most `max_records`, waiting up to `wait_ms`, carrying `acks`.
fn fetch(
    member: &str,
    epoch: i32,
    topic: Uuid,
    max_records: i32,
    wait_ms: i32,
    acks: &[(i64, i64, &[i8])],
) -> ShareFetchRequest {
    ShareFetchRequest::default()
        .with_group_id(Some("share".into()))
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

async fn create_topic(client: &mut Client, name: &str) -> Uuid {
    let Response::CreateTopics(created) = client
        .call(
            7,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name(name.into())
                .with_num_partitions(1)
                .with_replication_factor(1)]),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    created.topics[0].topic_id
}

#[tokio::test]
async fn two_members_share_a_partitions_records() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let broker = cluster.brokers()[0].address;
    let mut a = Client::connect(broker, "member-a").await;
    let mut b = Client::connect(broker, "member-b").await;
    let topic = create_topic(&mut a, "shared").await;

    // Both members get the one partition.
    let joined = a.share_heartbeat("share", "a", 0, Some(&["shared"])).await;
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    assert_eq!(joined.member_epoch, 1);
    let joined_b = b.share_heartbeat("share", "b", 0, Some(&["shared"])).await;
    assert_eq!(joined_b.member_epoch, 2);
    for answer in [&joined, &joined_b] {
        let assignment = answer
            .assignment
            .as_ref()
            .expect("an assignment on joining");
        assert_eq!(assignment.topic_partitions[0].topic_id, topic);
        assert_eq!(assignment.topic_partitions[0].partitions.to_vec(), vec![0]);
    }
    let again = a.share_heartbeat("share", "a", 1, None).await;
    assert_eq!(again.member_epoch, 2);
    assert!(again.assignment.is_none(), "unchanged: not sent again");
    let Response::ShareGroupDescribe(described) = a
        .call(
            1,
            ShareGroupDescribeRequest::default().with_group_ids(vec!["share".into()]),
        )
        .await
    else {
        panic!("not ShareGroupDescribe")
    };
    let group = &described.groups[0];
    assert_eq!(group.error_code, 0);
    assert_eq!(group.group_state.as_str(), "Stable");
    assert_eq!(group.assignor_name.as_str(), "simple");
    assert_eq!(group.members.len(), 2);
    for member in &group.members {
        let assigned = &member.assignment.topic_partitions[0];
        assert_eq!(assigned.topic_name.as_str(), "shared");
        assert_eq!(assigned.partitions.to_vec(), vec![0]);
    }

    // Sessions open before anything is produced: the share partition starts at the log
    // end (`share.auto.offset.reset=latest`).
    assert_eq!(
        acquired(&a.share_fetch(fetch("a", 0, topic, 5, 0, &[])).await).0,
        []
    );
    assert_eq!(
        acquired(&b.share_fetch(fetch("b", 0, topic, 5, 0, &[])).await).0,
        []
    );
    a.call(9, produce("shared", 0, batch(0, 5))).await;
    a.call(9, produce("shared", 0, batch(5, 5))).await;

    // Each acquires a batch of its own.
    let (ranges, offsets) = acquired(&a.share_fetch(fetch("a", 1, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(0, 4, 1)]);
    assert_eq!(offsets, [0, 1, 2, 3, 4]);
    let (ranges, _) = acquired(&b.share_fetch(fetch("b", 1, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(5, 9, 1)]);

    // A accepts 0-1 and 4, releases 2, rejects 3.
    let acked = a
        .share_ack(
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
        .share_fetch(fetch("b", 2, topic, 5, 0, &[(5, 9, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), 0);
    let (ranges, offsets) = acquired(&answer);
    assert_eq!(ranges, [(2, 2, 2)]);
    assert_eq!(offsets, [2]);
    // A member cannot acknowledge what another holds, nor what is done with.
    let answer = a
        .share_fetch(fetch("a", 3, topic, 5, 0, &[(2, 2, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), ErrorCode::INVALID_RECORD_STATE.code());
    let answer = a
        .share_fetch(fetch("a", 4, topic, 5, 0, &[(3, 3, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), ErrorCode::INVALID_RECORD_STATE.code());
    // B accepts 2: every record is done with; the rejected one is never delivered again.
    let answer = b
        .share_fetch(fetch("b", 3, topic, 5, 0, &[(2, 2, &[ACCEPT])]))
        .await;
    assert_eq!(ack_error(&answer), 0);
    assert_eq!(acquired(&answer).0, []);
    assert_eq!(
        acquired(&a.share_fetch(fetch("a", 5, topic, 5, 0, &[])).await).0,
        []
    );

    // A record released as often as the limit (5 deliveries) is archived.
    a.call(9, produce("shared", 0, batch(10, 1))).await;
    let mut epoch = 6;
    for delivery in 1..=5 {
        let (ranges, _) = acquired(&a.share_fetch(fetch("a", epoch, topic, 5, 0, &[])).await);
        assert_eq!(ranges, [(10, 10, delivery)]);
        let released = a
            .share_ack("a", epoch + 1, topic, &[(10, 10, &[RELEASE])])
            .await;
        assert_eq!(released.responses[0].partitions[0].error_code, 0);
        epoch += 2;
    }
    assert_eq!(
        acquired(&b.share_fetch(fetch("b", 4, topic, 5, 0, &[])).await).0,
        []
    );

    // A member that closes its session gives back what it holds.
    a.call(9, produce("shared", 0, batch(11, 3))).await;
    let (ranges, _) = acquired(&a.share_fetch(fetch("a", epoch, topic, 5, 0, &[])).await);
    assert_eq!(ranges, [(11, 13, 1)]);
    let closed = a.share_ack("a", -1, topic, &[(11, 11, &[ACCEPT])]).await;
    assert_eq!(closed.error_code, 0);
    let (ranges, _) = acquired(&b.share_fetch(fetch("b", 5, topic, 5, 0, &[])).await);
    assert_eq!(
        ranges,
        [(12, 13, 2)],
        "11 accepted on closing, 12-13 released"
    );
    // Its session is gone.
    let gone = a.share_fetch(fetch("a", epoch + 1, topic, 5, 0, &[])).await;
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
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(listed.groups[0].group_id.as_str(), "share");
    assert_eq!(listed.groups[0].group_type.as_str(), "share");
    assert_eq!(listed.groups[0].group_state.as_str(), "Stable");
    let delete = || DeleteGroupsRequest::default().with_groups_names(vec!["share".into()]);
    let Response::DeleteGroups(refused) = a.call(2, delete()).await else {
        panic!("not DeleteGroups")
    };
    assert_eq!(
        refused.results[0].error_code,
        ErrorCode::NON_EMPTY_GROUP.code()
    );
    // Both leave; the group is empty and can go.
    let left = a.share_heartbeat("share", "a", 2, None).await;
    let left = a
        .share_heartbeat("share", "a", -1, None)
        .await
        .member_epoch
        .min(left.member_epoch);
    assert_eq!(left, -1);
    let epoch_b = b.share_heartbeat("share", "b", 2, None).await.member_epoch;
    assert_eq!(
        b.share_heartbeat("share", "b", epoch_b, None)
            .await
            .error_code,
        0
    );
    assert_eq!(
        b.share_heartbeat("share", "b", -1, None).await.member_epoch,
        -1
    );
    let Response::DeleteGroups(deleted) = a.call(2, delete()).await else {
        panic!("not DeleteGroups")
    };
    assert_eq!(deleted.results[0].error_code, 0);
}

#[tokio::test]
async fn a_lock_not_acknowledged_in_time_is_released() {
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
    a.share_heartbeat("share", "a", 0, Some(&["locks"])).await;
    b.share_heartbeat("share", "b", 0, Some(&["locks"])).await;
    a.share_fetch(fetch("a", 0, topic, 5, 0, &[])).await;
    b.share_fetch(fetch("b", 0, topic, 5, 0, &[])).await;
    a.call(9, produce("locks", 0, batch(0, 3))).await;
    let answer = a.share_fetch(fetch("a", 1, topic, 5, 0, &[])).await;
    assert_eq!(answer.acquisition_lock_timeout_ms, 100);
    assert_eq!(acquired(&answer).0, [(0, 2, 1)]);
    // B long-polls: nothing is available until A's lock runs out, which wakes it (the wait
    // of 30 s is a hang guard).
    let (ranges, offsets) = acquired(&b.share_fetch(fetch("b", 1, topic, 5, 30_000, &[])).await);
    assert_eq!(ranges, [(0, 2, 2)]);
    assert_eq!(offsets, [0, 1, 2]);
    // A's acknowledgement comes too late.
    let late = a.share_ack("a", 2, topic, &[(0, 2, &[ACCEPT])]).await;
    assert_eq!(
        late.responses[0].partitions[0].error_code,
        ErrorCode::INVALID_RECORD_STATE.code()
    );
}

#[tokio::test]
async fn session_and_member_epochs_are_checked() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let broker = cluster.brokers()[0].address;
    let mut client = Client::connect(broker, "member").await;
    let topic = create_topic(&mut client, "epochs").await;

    // Member epochs.
    let invalid = client.share_heartbeat("share", "m", 0, None).await;
    assert_eq!(invalid.error_code, ErrorCode::INVALID_REQUEST.code());
    let unknown = client.share_heartbeat("share", "m", 3, None).await;
    assert_eq!(unknown.error_code, ErrorCode::GROUP_ID_NOT_FOUND.code());
    assert_eq!(
        client
            .share_heartbeat("share", "m", 0, Some(&["epochs"]))
            .await
            .member_epoch,
        1
    );
    let stranger = client.share_heartbeat("share", "x", 1, None).await;
    assert_eq!(stranger.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());
    let fenced = client.share_heartbeat("share", "m", 7, None).await;
    assert_eq!(fenced.error_code, ErrorCode::FENCED_MEMBER_EPOCH.code());
    // A KIP-848 group's id is not a share group's.
    let Response::ConsumerGroupHeartbeat(consumer) = client
        .call(
            1,
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id("consumers".into())
                .with_member_id("c".into())
                .with_member_epoch(0)
                .with_rebalance_timeout_ms(30_000)
                .with_subscribed_topic_names(Some(vec!["epochs".into()]))
                .with_topic_partitions(Some(Vec::new())),
        )
        .await
    else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(consumer.error_code, 0);
    let other = client
        .share_heartbeat("consumers", "m", 0, Some(&["epochs"]))
        .await;
    assert_eq!(other.error_code, ErrorCode::GROUP_ID_NOT_FOUND.code());

    // Share session epochs.
    let none = client.share_fetch(fetch("m", 1, topic, 5, 0, &[])).await;
    assert_eq!(none.error_code, ErrorCode::SHARE_SESSION_NOT_FOUND.code());
    let acks_first = client
        .share_fetch(fetch("m", 0, topic, 5, 0, &[(0, 0, &[ACCEPT])]))
        .await;
    assert_eq!(acks_first.error_code, ErrorCode::INVALID_REQUEST.code());
    assert_eq!(
        client
            .share_fetch(fetch("m", 0, topic, 5, 0, &[]))
            .await
            .error_code,
        0
    );
    let behind = client
        .share_fetch(fetch("m", 0 + 3, topic, 5, 0, &[]))
        .await;
    assert_eq!(
        behind.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    assert_eq!(
        client
            .share_fetch(fetch("m", 1, topic, 5, 0, &[]))
            .await
            .error_code,
        0
    );
    let repeated = client.share_fetch(fetch("m", 1, topic, 5, 0, &[])).await;
    assert_eq!(
        repeated.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    let opening = client.share_ack("m", 0, topic, &[(0, 0, &[ACCEPT])]).await;
    assert_eq!(
        opening.error_code,
        ErrorCode::INVALID_SHARE_SESSION_EPOCH.code()
    );
    assert_eq!(client.share_ack("m", 2, topic, &[]).await.error_code, 0);
    assert_eq!(client.share_ack("m", -1, topic, &[]).await.error_code, 0);
    let closed = client.share_ack("m", -1, topic, &[]).await;
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
