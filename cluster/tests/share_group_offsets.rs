//! A share group's offsets (KIP-932: DescribeShareGroupOffsets v0-v1,
//! AlterShareGroupOffsets, DeleteShareGroupOffsets) through this crate's own client
//! connection: a start offset moved while the group is empty is where the next member's
//! records start; describing reports start offsets and lag, -1 for a partition with no share
//! state; a group with members cannot be altered; deleting a topic's state forgets it. The
//! scenario runs, each assertion as written, against a real Kafka 4.4 broker too (`bash
//! tools/ci-live.sh cluster_groups`), which passes.

use crate::support;

use kafka_codec::messages::alter_share_group_offsets_request::{
    AlterShareGroupOffsetsRequestPartition, AlterShareGroupOffsetsRequestTopic,
};
use kafka_codec::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
use kafka_codec::messages::describe_share_group_offsets_request::{
    DescribeShareGroupOffsetsRequestGroup, DescribeShareGroupOffsetsRequestTopic,
};
use kafka_codec::messages::share_acknowledge_request::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatch,
};
use kafka_codec::messages::share_fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::{
    AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, ApiVersionsRequest,
    DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsRequest, ListGroupsRequest, ShareAcknowledgeRequest,
    ShareFetchRequest, ShareGroupHeartbeatRequest,
};
use kafka_codec::{ApiKey, ErrorCode, Response, Uuid};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use support::{batch, coordinator_ready, create_topic, produce, Client};

/// A partition as DescribeShareGroupOffsets answers it: index, start offset, lag, error.
type Described = (i32, i64, i64, i16);

/// A topic as DescribeShareGroupOffsets answers it: name, whether it has an id, partitions.
type DescribedTopic = (String, bool, Vec<Described>);

trait ShareOffsetsCalls {
    async fn describe_offsets(
        &mut self,
        version: i16,
        group: &str,
        topics: Option<&[(&str, &[i32])]>,
    ) -> (i16, Vec<DescribedTopic>);
    async fn alter_offsets(
        &mut self,
        group: &str,
        offsets: &[(&str, i32, i64)],
    ) -> AlterShareGroupOffsetsResponse;
    async fn delete_offsets(
        &mut self,
        group: &str,
        topics: &[&str],
    ) -> DeleteShareGroupOffsetsResponse;
    async fn share_heartbeat(&mut self, group: &str, member: &str, epoch: i32, topic: &str) -> i32;
}

impl ShareOffsetsCalls for Client {
    /// DescribeShareGroupOffsets at `version` of `group`'s `topics` (`None`: every one).
    async fn describe_offsets(
        &mut self,
        version: i16,
        group: &str,
        topics: Option<&[(&str, &[i32])]>,
    ) -> (i16, Vec<DescribedTopic>) {
        let topics = topics.map(|topics| {
            topics
                .iter()
                .map(|(name, partitions)| {
                    DescribeShareGroupOffsetsRequestTopic::default()
                        .with_topic_name((*name).into())
                        .with_partitions(partitions.to_vec().into())
                })
                .collect()
        });
        let request = DescribeShareGroupOffsetsRequest::default().with_groups(vec![
            DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(group.into())
                .with_topics(topics),
        ]);
        let Response::DescribeShareGroupOffsets(answer) = self.call(version, request).await else {
            panic!("not DescribeShareGroupOffsets")
        };
        assert_eq!(answer.groups.len(), 1);
        let group = &answer.groups[0];
        let mut topics: Vec<DescribedTopic> = group
            .topics
            .iter()
            .map(|topic| {
                let partitions = topic
                    .partitions
                    .iter()
                    .map(|p| (p.partition_index, p.start_offset, p.lag, p.error_code))
                    .collect();
                (
                    topic.topic_name.to_string(),
                    topic.topic_id != Uuid::default(),
                    partitions,
                )
            })
            .collect();
        topics.sort();
        (group.error_code, topics)
    }

    async fn alter_offsets(
        &mut self,
        group: &str,
        offsets: &[(&str, i32, i64)],
    ) -> AlterShareGroupOffsetsResponse {
        let topics = offsets
            .iter()
            .map(|(name, partition, offset)| {
                AlterShareGroupOffsetsRequestTopic::default()
                    .with_topic_name((*name).into())
                    .with_partitions(vec![AlterShareGroupOffsetsRequestPartition::default()
                        .with_partition_index(*partition)
                        .with_start_offset(*offset)])
            })
            .collect();
        let request = AlterShareGroupOffsetsRequest::default()
            .with_group_id(group.into())
            .with_topics(topics);
        let Response::AlterShareGroupOffsets(answer) = self.call(0, request).await else {
            panic!("not AlterShareGroupOffsets")
        };
        answer
    }

    async fn delete_offsets(
        &mut self,
        group: &str,
        topics: &[&str],
    ) -> DeleteShareGroupOffsetsResponse {
        let request = DeleteShareGroupOffsetsRequest::default()
            .with_group_id(group.into())
            .with_topics(
                topics
                    .iter()
                    .map(|name| {
                        DeleteShareGroupOffsetsRequestTopic::default()
                            .with_topic_name((*name).into())
                    })
                    .collect(),
            );
        let Response::DeleteShareGroupOffsets(answer) = self.call(0, request).await else {
            panic!("not DeleteShareGroupOffsets")
        };
        answer
    }

    /// A ShareGroupHeartbeat of `member`: joining (epoch 0, subscribing to `topic`) or
    /// leaving (-1); the error and the epoch given.
    async fn share_heartbeat(&mut self, group: &str, member: &str, epoch: i32, topic: &str) -> i32 {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(member.into())
            .with_member_epoch(epoch)
            .with_subscribed_topic_names((epoch == 0).then(|| vec![topic.into()]));
        let Response::ShareGroupHeartbeat(answer) = self.call(1, request).await else {
            panic!("not ShareGroupHeartbeat")
        };
        assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
        answer.member_epoch
    }
}

/// The partition errors of an AlterShareGroupOffsets answer, by topic and partition.
fn altered(answer: &AlterShareGroupOffsetsResponse) -> Vec<(String, bool, i32, i16)> {
    assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
    let mut errors: Vec<(String, bool, i32, i16)> = answer
        .responses
        .iter()
        .flat_map(|topic| {
            topic.partitions.iter().map(|p| {
                (
                    topic.topic_name.to_string(),
                    topic.topic_id != Uuid::default(),
                    p.partition_index,
                    p.error_code,
                )
            })
        })
        .collect();
    errors.sort();
    errors
}

/// The topic errors of a DeleteShareGroupOffsets answer, in its order.
fn deleted(answer: &DeleteShareGroupOffsetsResponse) -> Vec<(String, bool, i16)> {
    assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
    answer
        .responses
        .iter()
        .map(|topic| {
            (
                topic.topic_name.to_string(),
                topic.topic_id != Uuid::default(),
                topic.error_code,
            )
        })
        .collect()
}

/// A ShareFetch of partition 0 of `topic` at session `epoch`, waiting up to 2 s.
fn fetch(group: &str, member: &str, epoch: i32, topic: Uuid) -> ShareFetchRequest {
    ShareFetchRequest::default()
        .with_group_id(Some(group.into()))
        .with_member_id(Some(member.into()))
        .with_share_session_epoch(epoch)
        .with_max_wait_ms(2000)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_max_records(10)
        .with_batch_size(10)
        .with_topics(vec![FetchTopic::default()
            .with_topic_id(topic)
            .with_partitions(vec![
                FetchPartition::default().with_partition_index(0)
            ])])
}

#[tokio::test]
async fn offsets_are_described_altered_and_deleted() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    scenario(cluster.brokers()[0].address, "offsets").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same_offsets() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    scenario(broker, &format!("offsets-{nanos}")).await;
}

/// `name` names the group and, with suffixes, the topics made at the broker at `address`
/// (which leads them and coordinates the group).
async fn scenario(address: SocketAddr, name: &str) {
    let group = name;
    let topic_name = format!("{name}-t");
    let missing = format!("{name}-missing");
    let t = topic_name.as_str();
    let mut client = Client::connect(address, "offsets").await;
    let topic = create_topic(&mut client, t).await;
    coordinator_ready(&mut client, group).await;
    client.call(9, produce(t, 0, batch(0, 5))).await;

    // No group yet: no share state, nothing to delete. A real broker's group coordinator
    // learns of a new topic from its own copy of the metadata image, a moment after the
    // broker's request handlers do; until then it answers with a zero topic id. Ask again
    // (at most 5 s) until it knows the topic, so the comparison is of settled answers.
    let mut tries = 0;
    let (error, topics) = loop {
        let answer = client
            .describe_offsets(1, group, Some(&[(t, &[0]), (&missing, &[0])]))
            .await;
        let settled = answer
            .1
            .iter()
            .any(|(name, has_id, _)| name == t && *has_id);
        tries += 1;
        if settled || tries == 50 {
            break answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(error, 0);
    assert_eq!(
        topics,
        [
            (missing.clone(), false, vec![(0, -1, -1, 0)]),
            (t.to_string(), true, vec![(0, -1, -1, 0)]),
        ]
    );
    assert_eq!(client.describe_offsets(1, group, None).await, (0, vec![]));
    let absent = client.delete_offsets(group, &[t]).await;
    assert_eq!(absent.error_code, ErrorCode::GROUP_ID_NOT_FOUND.code());
    for refused in [
        client.alter_offsets("", &[(t, 0, 1)]).await.error_code,
        client.delete_offsets("", &[t]).await.error_code,
    ] {
        assert_eq!(refused, ErrorCode::INVALID_GROUP_ID.code());
    }

    // Altering makes the group, empty: partition 0 starts at offset 2; an unknown topic
    // (listed first) or partition is refused alone.
    let answer = client
        .alter_offsets(group, &[(t, 0, 2), (&missing, 0, 0)])
        .await;
    let errors: Vec<(String, bool, i32, i16)> = answer
        .responses
        .iter()
        .flat_map(|topic| {
            topic.partitions.iter().map(|p| {
                let has_id = topic.topic_id != Uuid::default();
                (
                    topic.topic_name.to_string(),
                    has_id,
                    p.partition_index,
                    p.error_code,
                )
            })
        })
        .collect();
    assert_eq!(
        errors,
        [
            (
                missing.clone(),
                false,
                0,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
            ),
            (t.to_string(), true, 0, 0),
        ]
    );
    let answer = client.alter_offsets(group, &[(t, 3, 0)]).await;
    assert_eq!(
        altered(&answer),
        [(
            t.to_string(),
            true,
            3,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
        )]
    );
    let Response::ListGroups(listed) = client.call(5, ListGroupsRequest::default()).await else {
        panic!("not ListGroups")
    };
    let listed: Vec<(&str, &str)> = listed
        .groups
        .iter()
        .filter(|g| g.group_id.as_str() == group)
        .map(|g| (g.group_type.as_str(), g.group_state.as_str()))
        .collect();
    assert_eq!(listed, [("share", "Empty")]);
    // v1 has the lag (5 records, from 2), v0 not.
    let (_, topics) = client.describe_offsets(1, group, Some(&[(t, &[0])])).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, 2, 3, 0)])]);
    let (_, topics) = client.describe_offsets(0, group, None).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, 2, -1, 0)])]);

    // The next member's records start there.
    let epoch = client.share_heartbeat(group, "m2", 0, t).await;
    // The session's first fetch may acquire them already.
    let mut session = 0;
    let acquired = tokio::time::timeout(support::GUARD, async {
        loop {
            let Response::ShareFetch(answer) =
                client.call(1, fetch(group, "m2", session, topic)).await
            else {
                panic!("not ShareFetch")
            };
            session += 1;
            assert_eq!(answer.error_code, 0);
            let ranges: Vec<(i64, i64)> = answer
                .responses
                .iter()
                .flat_map(|t| &t.partitions)
                .flat_map(|p| &p.acquired_records)
                .map(|r| (r.first_offset, r.last_offset))
                .collect();
            if !ranges.is_empty() {
                return ranges;
            }
        }
    })
    .await
    .expect("records acquired");
    assert_eq!(acquired, [(2, 4)]);
    // Not while it has a member.
    let busy = client.alter_offsets(group, &[(t, 0, 0)]).await;
    assert_eq!(busy.error_code, ErrorCode::NON_EMPTY_GROUP.code());
    let busy = client.delete_offsets(group, &[t]).await;
    assert_eq!(busy.error_code, ErrorCode::NON_EMPTY_GROUP.code());
    // Accepted, the session closed and the member gone.
    let close = ShareAcknowledgeRequest::default()
        .with_group_id(Some(group.into()))
        .with_member_id(Some("m2".into()))
        .with_share_session_epoch(-1)
        .with_topics(vec![AcknowledgeTopic::default()
            .with_topic_id(topic)
            .with_partitions(vec![AcknowledgePartition::default()
                .with_partition_index(0)
                .with_acknowledgement_batches(vec![AckBatch::default()
                    .with_first_offset(2)
                    .with_last_offset(4)
                    .with_acknowledge_types(vec![1].into())])])]);
    let Response::ShareAcknowledge(closed) = client.call(1, close).await else {
        panic!("not ShareAcknowledge")
    };
    assert_eq!(closed.error_code, 0);
    assert_eq!(closed.responses[0].partitions[0].error_code, 0);
    assert_eq!(client.share_heartbeat(group, "m2", -1, t).await, -1);
    assert!(epoch > 0);
    // Kafka persists a share partition's state with the start offset from before the change
    // it writes: the acknowledgement that moved the start to 5 was written at 2. The lag
    // leaves out what is acknowledged.
    let (_, topics) = client.describe_offsets(1, group, Some(&[(t, &[0])])).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, 2, 0, 0)])]);

    // A start past the log end lags negatively; -1 is no share state.
    assert_eq!(
        altered(&client.alter_offsets(group, &[(t, 0, 9)]).await),
        [(t.to_string(), true, 0, 0)]
    );
    let (_, topics) = client.describe_offsets(1, group, Some(&[(t, &[0])])).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, 9, -4, 0)])]);
    assert_eq!(
        altered(&client.alter_offsets(group, &[(t, 0, -1)]).await),
        [(t.to_string(), true, 0, 0)]
    );
    let (_, topics) = client.describe_offsets(1, group, Some(&[(t, &[0])])).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, -1, -1, 0)])]);
    assert_eq!(
        altered(&client.alter_offsets(group, &[(t, 0, 1)]).await),
        [(t.to_string(), true, 0, 0)]
    );

    // Deleted: the topic's share state is gone; deleting again finds none.
    let answer = client.delete_offsets(group, &[&missing, t]).await;
    assert_eq!(
        deleted(&answer),
        [
            (t.to_string(), true, 0),
            (
                missing.clone(),
                false,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
            ),
        ]
    );
    let answer = client.delete_offsets(group, &[t]).await;
    assert_eq!(
        deleted(&answer),
        [(
            t.to_string(),
            false,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
        )]
    );
    let (_, topics) = client.describe_offsets(1, group, Some(&[(t, &[0])])).await;
    assert_eq!(topics, [(t.to_string(), true, vec![(0, -1, -1, 0)])]);
}

#[tokio::test]
async fn the_offsets_apis_are_advertised_by_the_releases_that_served_them() {
    // cluster/release-api-versions.tsv: 4.2 and later list DescribeShareGroupOffsets 0-1,
    // 4.1 its v0; AlterShareGroupOffsets and DeleteShareGroupOffsets v0 from 4.1; 4.0 (share
    // groups in early access) none of them.
    for (release, describe) in [
        ("4.4", Some(1)),
        ("4.2", Some(1)),
        ("4.1", Some(0)),
        ("4.0", None),
    ] {
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
        let listed = |api: ApiKey| {
            versions
                .api_keys
                .iter()
                .find(|k| k.api_key == api.key())
                .map(|k| (k.min_version, k.max_version))
        };
        assert_eq!(
            listed(ApiKey::DescribeShareGroupOffsets),
            describe.map(|max| (0, max)),
            "{release}"
        );
        for api in [
            ApiKey::AlterShareGroupOffsets,
            ApiKey::DeleteShareGroupOffsets,
        ] {
            assert_eq!(listed(api), describe.map(|_| (0, 0)), "{api} at {release}");
        }
    }
}
