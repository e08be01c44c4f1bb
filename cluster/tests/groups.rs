//! Classic consumer groups through this crate's own client connection, over TCP: the
//! coordinator rule, the rebalance state machine (member ids, the join barrier, leader and
//! protocol choice, SyncGroup, heartbeats, leaving, session expiry), static membership,
//! offset commits and fetches with Kafka's generation checks, the admin APIs of groups, the
//! caps, and every version of every group API. The expected error codes are Kafka's for
//! each case (the librdkafka run in `tests/librdkafka.rs` drives the same paths with a real
//! client).

use crate::support;

use kafka_codec::bytes::{BufMut, Bytes, BytesMut};
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_codec::messages::leave_group_request::MemberIdentity;
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::offset_delete_request::{
    OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
use kafka_codec::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_codec::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_codec::messages::{
    ConsumerProtocolSubscription, CreateTopicsRequest, DeleteGroupsRequest, DescribeGroupsRequest,
    FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    ListGroupsRequest, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
    SyncGroupRequest,
};
use kafka_codec::messages::{DeleteTopicsRequest, MetadataRequest};
use kafka_codec::{ApiKey, ErrorCode, Message, Response, Uuid};
use kafka_codec_cluster::groups::{coordinator, GroupLimits};
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use std::time::Duration;
use support::{live_broker, Client, GUARD};

impl Client {
    async fn commit(
        &mut self,
        version: i16,
        group: &str,
        generation: i32,
        member: &str,
        topic: &str,
        offset: i64,
    ) -> i16 {
        let request = OffsetCommitRequest::default()
            .with_group_id(group.into())
            .with_generation_id_or_member_epoch(generation)
            .with_member_id(member.into())
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(topic.into())
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(offset)
                    .with_committed_metadata(Some("meta".into()))])]);
        match self.call(version, request).await {
            Response::OffsetCommit(body) => body.topics[0].partitions[0].error_code,
            other => panic!("not OffsetCommit: {other:?}"),
        }
    }

    /// The committed offset and metadata of partition 0 of `topic` (OffsetFetch v1-v7).
    async fn fetch_offset(&mut self, version: i16, group: &str, topic: &str) -> (i64, String) {
        let request = OffsetFetchRequest::default()
            .with_group_id(group.into())
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(topic.into())
                .with_partition_indexes(vec![0].into())]));
        match self.call(version, request).await {
            Response::OffsetFetch(body) => {
                let partition = &body.topics[0].partitions[0];
                assert_eq!(partition.error_code, 0, "OffsetFetch v{version}");
                (
                    partition.committed_offset,
                    partition
                        .metadata
                        .as_deref()
                        .unwrap_or_default()
                        .to_string(),
                )
            }
            other => panic!("not OffsetFetch: {other:?}"),
        }
    }

    async fn state(&mut self, group: &str) -> String {
        let request = DescribeGroupsRequest::default().with_groups(vec![group.into()]);
        match self.call(5, request).await {
            Response::DescribeGroups(body) => body.groups[0].group_state.to_string(),
            other => panic!("not DescribeGroups: {other:?}"),
        }
    }
}

/// The consumer protocol's subscription to `topics`, with its version header, as a
/// consumer's JoinGroup carries it.
fn subscription(topics: &[&str]) -> Bytes {
    let body = ConsumerProtocolSubscription::default()
        .with_topics(topics.iter().map(|t| (*t).into()).collect())
        .encode_to_bytes(0)
        .expect("subscription");
    let mut out = BytesMut::new();
    out.put_i16(0);
    out.extend_from_slice(&body);
    out.freeze()
}

fn join_request(
    group: &str,
    member: &str,
    protocols: &[&str],
    timeout_ms: i32,
) -> JoinGroupRequest {
    JoinGroupRequest::default()
        .with_group_id(group.into())
        .with_session_timeout_ms(timeout_ms)
        .with_rebalance_timeout_ms(timeout_ms)
        .with_member_id(member.into())
        .with_protocol_type("consumer".into())
        .with_protocols(
            protocols
                .iter()
                .map(|name| {
                    JoinGroupRequestProtocol::default()
                        .with_name((*name).into())
                        .with_metadata(subscription(&["topic"]))
                })
                .collect(),
        )
}

/// A SyncGroup of the "range" protocol (v5+ must name the protocol type and name).
fn sync_request(
    group: &str,
    generation: i32,
    member: &str,
    assignments: &[(&str, &[u8])],
) -> SyncGroupRequest {
    SyncGroupRequest::default()
        .with_protocol_type(Some("consumer".into()))
        .with_protocol_name(Some("range".into()))
        .with_group_id(group.into())
        .with_generation_id(generation)
        .with_member_id(member.into())
        .with_assignments(
            assignments
                .iter()
                .map(|(member, assignment)| {
                    SyncGroupRequestAssignment::default()
                        .with_member_id((*member).into())
                        .with_assignment(Bytes::copy_from_slice(assignment))
                })
                .collect(),
        )
}

/// A cluster of 3 brokers with `limits`, a topic `topic` of 1 partition, and the
/// coordinator of `group`.
async fn cluster_for(group: &str, limits: GroupLimits) -> (Cluster, SocketAddr) {
    cluster_of(3, group, limits).await
}

async fn cluster_of(brokers: usize, group: &str, limits: GroupLimits) -> (Cluster, SocketAddr) {
    let cluster = Cluster::builder()
        .brokers(brokers)
        .group_limits(limits)
        .build()
        .await
        .expect("cluster");
    let address = prepare(cluster.brokers()[0].address, group).await;
    (cluster, address)
}

/// Creates the topic `topic` of 1 partition (if not there) through `bootstrap`, and finds
/// the coordinator of `group`.
async fn prepare(bootstrap: SocketAddr, group: &str) -> SocketAddr {
    let mut client = Client::connect(bootstrap, "setup").await;
    let created = client
        .call(
            7,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name("topic".into())
                .with_num_partitions(1)
                .with_replication_factor(1)]),
        )
        .await;
    let Response::CreateTopics(created) = created else {
        panic!("not CreateTopics")
    };
    let code = created.topics[0].error_code;
    assert!(
        code == 0 || code == ErrorCode::TOPIC_ALREADY_EXISTS.code(),
        "{code}"
    );
    // A real broker answers COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets;
    // clients retry, as this does (the guard stops it).
    let coordinator = tokio::time::timeout(GUARD, async {
        loop {
            let Response::FindCoordinator(found) = client
                .call(
                    6,
                    FindCoordinatorRequest::default().with_coordinator_keys(vec![group.into()]),
                )
                .await
            else {
                panic!("not FindCoordinator")
            };
            let coordinator = found.coordinators[0].clone();
            if coordinator.error_code != ErrorCode::COORDINATOR_NOT_AVAILABLE.code() {
                return coordinator;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a coordinator before the guard");
    assert_eq!(coordinator.error_code, 0);
    let address = tokio::net::lookup_host((coordinator.host.to_string(), coordinator.port as u16))
        .await
        .expect("the coordinator's host")
        .next()
        .expect("an address");
    // A fresh Kafka broker answers COORDINATOR_LOAD_IN_PROGRESS while it loads the group's
    // partition of __consumer_offsets; wait for it as clients do.
    let mut coordinator = Client::connect(address, "setup").await;
    tokio::time::timeout(GUARD, async {
        loop {
            let Response::DescribeGroups(described) = coordinator
                .call(
                    5,
                    DescribeGroupsRequest::default().with_groups(vec![group.into()]),
                )
                .await
            else {
                panic!("not DescribeGroups")
            };
            if described.groups[0].error_code != ErrorCode::COORDINATOR_LOAD_IN_PROGRESS.code() {
                assert_eq!(described.groups[0].error_code, 0);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the coordinator loaded before the guard");
    address
}

/// A group id not used before on a broker that keeps its groups.
fn fresh_group(prefix: &str) -> &'static str {
    let nanos = support::nanos();
    Box::leak(format!("{prefix}-{nanos}").into_boxed_str())
}

fn short_sessions() -> GroupLimits {
    GroupLimits {
        min_session_timeout: Duration::from_millis(1),
        ..GroupLimits::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_coordinator_hashes_the_group_id_as_kafka_places_it() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[1].address, "finder").await;
    // Java's "group".hashCode() is 98629247 (jshell): partition 47 of __consumer_offsets,
    // led by broker 47 mod 3 = 2.
    let coordinator = cluster.brokers()[2].address;
    for version in 0..=3 {
        let Response::FindCoordinator(found) = client
            .call(
                version,
                FindCoordinatorRequest::default().with_key("group".into()),
            )
            .await
        else {
            panic!("not FindCoordinator")
        };
        assert_eq!(found.error_code, 0, "v{version}");
        assert_eq!(found.node_id, 2, "v{version}");
        assert_eq!(found.port, i32::from(coordinator.port()), "v{version}");
        assert_eq!(found.host.as_str(), "127.0.0.1");
    }
    for version in 4..=ApiKey::FindCoordinator.valid_versions().max {
        let Response::FindCoordinator(found) = client
            .call(
                version,
                FindCoordinatorRequest::default()
                    .with_coordinator_keys(vec!["group".into(), "a".into()]),
            )
            .await
        else {
            panic!("not FindCoordinator")
        };
        // "a".hashCode() is 97: partition 47 too.
        let nodes: Vec<_> = found
            .coordinators
            .iter()
            .map(|c| (c.key.as_str().to_string(), c.node_id))
            .collect();
        assert_eq!(
            nodes,
            [("group".to_string(), 2), ("a".to_string(), 2)],
            "v{version}"
        );
    }
    // A transactional id by the same rule: "txn".hashCode() is 115306, partition 6, broker
    // 6 % 3 = 0 (tests/transactions.rs covers the transaction coordinator); an unknown key
    // type is an invalid request.
    let Response::FindCoordinator(found) = client
        .call(
            3,
            FindCoordinatorRequest::default()
                .with_key("txn".into())
                .with_key_type(1),
        )
        .await
    else {
        panic!("not FindCoordinator")
    };
    assert_eq!((found.error_code, found.node_id), (0, 0));
    let Response::FindCoordinator(found) = client
        .call(
            3,
            FindCoordinatorRequest::default()
                .with_key("x".into())
                .with_key_type(9),
        )
        .await
    else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.error_code, ErrorCode::INVALID_REQUEST.code());
    // Another broker is not the coordinator.
    let code = client.heartbeat(4, "group", 1, "m").await;
    assert_eq!(code, ErrorCode::NOT_COORDINATOR.code());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalance_runs_as_kafka_runs_it() {
    let group = "rebalance";
    let (_cluster, address) = cluster_for(group, short_sessions()).await;
    rebalance(address, group, 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same() {
    // The scenarios of the tests above, each assertion as written, against Kafka: what
    // they expect is what Kafka answers.
    let broker = live_broker().await;
    let group = fresh_group("rebalance");
    rebalance(prepare(broker, group).await, group, 1).await;
    let group = fresh_group("static");
    static_member(prepare(broker, group).await, group).await;
    let group = fresh_group("simple");
    simple_commits(prepare(broker, group).await, group, 2).await;
    let group = fresh_group("no-sync");
    never_syncs(prepare(broker, group).await, group).await;
    // Kafka's shortest session (group.min.session.timeout.ms): this one takes 6 s.
    let group = fresh_group("expiry");
    expiry(prepare(broker, group).await, group, 6_000).await;
}

/// A rebalance step by step at the coordinator `address` of `group`, in a cluster of
/// `brokers` brokers.
async fn rebalance(address: SocketAddr, group: &'static str, brokers: usize) {
    let mut a = Client::connect(address, "client-a").await;

    // v4+: a new member is given its id first.
    let first = a
        .join(9, join_request(group, "", &["range", "roundrobin"], 30_000))
        .await;
    assert_eq!(first.error_code, ErrorCode::MEMBER_ID_REQUIRED.code());
    assert!(
        first.member_id.starts_with("client-a-"),
        "{}",
        first.member_id
    );
    let a_id = first.member_id.to_string();
    // Alone, it completes the join at once: generation 1, it leads.
    let joined = a
        .join(
            9,
            join_request(group, &a_id, &["range", "roundrobin"], 30_000),
        )
        .await;
    assert_eq!(joined.error_code, 0);
    assert_eq!(joined.generation_id, 1);
    assert_eq!(joined.leader.as_str(), a_id);
    assert_eq!(joined.protocol_name.as_deref(), Some("range"));
    assert_eq!(joined.members.len(), 1);
    assert_eq!(a.state(group).await, "CompletingRebalance");
    let synced = a
        .sync(5, sync_request(group, 1, &a_id, &[(&a_id, b"all")]))
        .await;
    assert_eq!(synced.error_code, 0);
    assert_eq!(&synced.assignment[..], b"all");
    assert_eq!(synced.protocol_name.as_deref(), Some("range"));
    assert_eq!(a.state(group).await, "Stable");
    assert_eq!(a.heartbeat(4, group, 1, &a_id).await, 0);
    assert_eq!(
        a.heartbeat(4, group, 0, &a_id).await,
        ErrorCode::ILLEGAL_GENERATION.code()
    );
    assert_eq!(
        a.heartbeat(4, group, 1, "nobody").await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
    // A group this coordinator does not hold.
    let other = (0..)
        .map(|i| format!("no-group-{i}"))
        .find(|g| coordinator(g, brokers) == coordinator(group, brokers))
        .expect("one");
    assert_eq!(
        a.heartbeat(4, &other, 1, &a_id).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );

    // B joins, supporting only roundrobin: a rebalance starts and waits for A.
    let mut b = Client::connect(address, "client-b").await;
    let first = b
        .join(9, join_request(group, "", &["roundrobin"], 30_000))
        .await;
    assert_eq!(first.error_code, ErrorCode::MEMBER_ID_REQUIRED.code());
    let b_id = first.member_id.to_string();
    let b_join = {
        let b_id = b_id.clone();
        tokio::spawn(async move {
            let joined = b
                .join(9, join_request(group, &b_id, &["roundrobin"], 30_000))
                .await;
            (b, joined)
        })
    };
    // A learns of the rebalance by its heartbeat; its commits still count meanwhile.
    loop {
        let code = a.heartbeat(4, group, 1, &a_id).await;
        if code == ErrorCode::REBALANCE_IN_PROGRESS.code() {
            break;
        }
        assert_eq!(code, 0);
        tokio::task::yield_now().await;
    }
    assert_eq!(a.state(group).await, "PreparingRebalance");
    assert_eq!(a.commit(9, group, 1, &a_id, "topic", 5).await, 0);
    // A member that does not support a common protocol cannot join.
    let mut c = Client::connect(address, "client-c").await;
    let odd = c
        .join(5, join_request(group, "", &["sticky"], 30_000))
        .await;
    assert_eq!(
        odd.error_code,
        ErrorCode::INCONSISTENT_GROUP_PROTOCOL.code()
    );

    // A rejoins: the barrier lifts, generation 2, the one protocol both support.
    let joined = a
        .join(
            9,
            join_request(group, &a_id, &["range", "roundrobin"], 30_000),
        )
        .await;
    let (mut b, b_joined) = tokio::time::timeout(GUARD, b_join)
        .await
        .expect("guard")
        .expect("task");
    for response in [&joined, &b_joined] {
        assert_eq!(response.error_code, 0);
        assert_eq!(response.generation_id, 2);
        assert_eq!(response.leader.as_str(), a_id);
        assert_eq!(response.protocol_name.as_deref(), Some("roundrobin"));
        assert_eq!(response.protocol_type.as_deref(), Some("consumer"));
    }
    let mut members: Vec<_> = joined
        .members
        .iter()
        .map(|m| m.member_id.to_string())
        .collect();
    members.sort();
    let mut expected = [a_id.clone(), b_id.clone()];
    expected.sort();
    assert_eq!(members, expected);
    assert!(
        b_joined.members.is_empty(),
        "only the leader gets the members"
    );

    // Awaiting the assignment: commits are refused, an old generation is illegal.
    assert_eq!(
        b.commit(9, group, 2, &b_id, "topic", 1).await,
        ErrorCode::REBALANCE_IN_PROGRESS.code()
    );
    let unnamed = a
        .sync(
            5,
            sync_request(group, 2, &a_id, &[]).with_protocol_type(None),
        )
        .await;
    assert_eq!(
        unnamed.error_code,
        ErrorCode::INCONSISTENT_GROUP_PROTOCOL.code()
    );
    let stale = a
        .sync(
            5,
            sync_request(group, 1, &a_id, &[]).with_protocol_name(Some("roundrobin".into())),
        )
        .await;
    assert_eq!(stale.error_code, ErrorCode::ILLEGAL_GENERATION.code());
    // The follower's SyncGroup waits for the leader's.
    let b_sync = {
        let b_id = b_id.clone();
        tokio::spawn(async move {
            let request =
                sync_request(group, 2, &b_id, &[]).with_protocol_name(Some("roundrobin".into()));
            let synced = b.sync(5, request).await;
            (b, synced)
        })
    };
    // Either order must work; a moment's pause makes the follower-waits path the likely one.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let synced = a
        .sync(
            5,
            sync_request(group, 2, &a_id, &[(&a_id, b"p0"), (&b_id, b"p1")])
                .with_protocol_name(Some("roundrobin".into())),
        )
        .await;
    assert_eq!(&synced.assignment[..], b"p0");
    let (mut b, b_synced) = tokio::time::timeout(GUARD, b_sync)
        .await
        .expect("guard")
        .expect("task");
    assert_eq!(b_synced.error_code, 0);
    assert_eq!(&b_synced.assignment[..], b"p1");
    assert_eq!(a.state(group).await, "Stable");

    // Commits by Kafka's rules in a stable group.
    assert_eq!(b.commit(9, group, 2, &b_id, "topic", 7).await, 0);
    assert_eq!(
        b.commit(9, group, 1, &b_id, "topic", 7).await,
        ErrorCode::ILLEGAL_GENERATION.code()
    );
    assert_eq!(
        b.commit(9, group, 2, "nobody", "topic", 7).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
    // A simple commit (no generation, no member) to a group with members.
    assert_eq!(
        b.commit(9, group, -1, "", "topic", 7).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
    assert_eq!(
        b.commit(9, group, 2, &b_id, "no-such-topic", 7).await,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
    );
    assert_eq!(
        b.fetch_offset(7, group, "topic").await,
        (7, "meta".to_string())
    );

    // DescribeGroups: members with their metadata and assignment while stable.
    let Response::DescribeGroups(described) = a
        .call(
            5,
            DescribeGroupsRequest::default().with_groups(vec![group.into()]),
        )
        .await
    else {
        panic!("not DescribeGroups")
    };
    let described = &described.groups[0];
    assert_eq!(described.protocol_data.as_str(), "roundrobin");
    let mut assigned: Vec<_> = described
        .members
        .iter()
        .map(|m| {
            (
                m.client_id.to_string(),
                m.client_host.to_string(),
                m.member_assignment.to_vec(),
            )
        })
        .collect();
    assigned.sort();
    assert_eq!(
        assigned,
        [
            (
                "client-a".to_string(),
                "/127.0.0.1".to_string(),
                b"p0".to_vec()
            ),
            (
                "client-b".to_string(),
                "/127.0.0.1".to_string(),
                b"p1".to_vec()
            ),
        ]
    );
    // ListGroups at its coordinator, by state.
    let filters = [
        ("stable", "classic", true),
        ("Empty", "classic", false),
        ("Stable", "consumer", false),
    ];
    for (filter, kind, listed) in filters {
        let Response::ListGroups(groups) = a
            .call(
                5,
                ListGroupsRequest::default()
                    .with_states_filter(vec![filter.into()])
                    .with_types_filter(vec![kind.into()]),
            )
            .await
        else {
            panic!("not ListGroups")
        };
        let found = groups.groups.iter().any(|g| g.group_id.as_str() == group);
        assert_eq!(found, listed, "{filter} {kind}");
    }
    // A group with members is not deleted.
    let Response::DeleteGroups(deleted) = a
        .call(
            2,
            DeleteGroupsRequest::default().with_groups_names(vec![group.into()]),
        )
        .await
    else {
        panic!("not DeleteGroups")
    };
    assert_eq!(
        deleted.results[0].error_code,
        ErrorCode::NON_EMPTY_GROUP.code()
    );

    // B leaves (v3+: a batch; an unknown member is an error of its own).
    let Response::LeaveGroup(left) = b
        .call(
            5,
            LeaveGroupRequest::default()
                .with_group_id(group.into())
                .with_members(vec![
                    MemberIdentity::default().with_member_id(b_id.as_str().into()),
                    MemberIdentity::default().with_member_id("nobody".into()),
                ]),
        )
        .await
    else {
        panic!("not LeaveGroup")
    };
    let errors: Vec<_> = left.members.iter().map(|m| m.error_code).collect();
    assert_eq!(errors, [0, ErrorCode::UNKNOWN_MEMBER_ID.code()]);
    // A must rejoin; alone it completes generation 3 at once.
    assert_eq!(
        a.heartbeat(4, group, 2, &a_id).await,
        ErrorCode::REBALANCE_IN_PROGRESS.code()
    );
    let joined = a
        .join(
            9,
            join_request(group, &a_id, &["range", "roundrobin"], 30_000),
        )
        .await;
    assert_eq!((joined.error_code, joined.generation_id), (0, 3));
    assert_eq!(joined.protocol_name.as_deref(), Some("range"));

    // A leaves (v0): the group is empty and keeps its offsets; then it can be deleted.
    let Response::LeaveGroup(left) = a
        .call(
            0,
            LeaveGroupRequest::default()
                .with_group_id(group.into())
                .with_member_id(a_id.as_str().into()),
        )
        .await
    else {
        panic!("not LeaveGroup")
    };
    assert_eq!(left.error_code, 0);
    assert_eq!(a.state(group).await, "Empty");
    assert_eq!(
        a.fetch_offset(7, group, "topic").await,
        (7, "meta".to_string())
    );
    let Response::DeleteGroups(deleted) = a
        .call(
            2,
            DeleteGroupsRequest::default()
                .with_groups_names(vec![group.into(), other.as_str().into()]),
        )
        .await
    else {
        panic!("not DeleteGroups")
    };
    // Kafka keys the results by group (in no set order).
    let mut errors: Vec<_> = deleted
        .results
        .iter()
        .map(|r| (r.group_id.to_string(), r.error_code))
        .collect();
    errors.sort();
    let mut expected = [
        (group.to_string(), 0),
        (other.clone(), ErrorCode::GROUP_ID_NOT_FOUND.code()),
    ];
    expected.sort();
    assert_eq!(errors, expected);
    assert_eq!(a.state(group).await, "Dead");
    // From v6 a group not held is also an error.
    let Response::DescribeGroups(described) = a
        .call(
            6,
            DescribeGroupsRequest::default().with_groups(vec![group.into()]),
        )
        .await
    else {
        panic!("not DescribeGroups")
    };
    assert_eq!(
        described.groups[0].error_code,
        ErrorCode::GROUP_ID_NOT_FOUND.code()
    );
    assert_eq!(described.groups[0].group_state.as_str(), "Dead");
    assert_eq!(a.fetch_offset(7, group, "topic").await, (-1, String::new()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_removes_the_member_and_rebalances() {
    let group = "expiry";
    let (_cluster, address) = cluster_for(group, short_sessions()).await;
    expiry(address, group, 200).await;
}

/// A member whose session (of `session_ms`) expires, at the coordinator `address` of
/// `group`.
async fn expiry(address: SocketAddr, group: &'static str, session_ms: i32) {
    let mut a = Client::connect(address, "a").await;
    // v3: no MEMBER_ID_REQUIRED before v4. A short session, and no heartbeats after.
    let joined = a
        .join(3, join_request(group, "", &["range"], session_ms))
        .await;
    assert_eq!((joined.error_code, joined.generation_id), (0, 1));
    let a_id = joined.member_id.to_string();
    assert_eq!(
        a.sync(3, sync_request(group, 1, &a_id, &[]))
            .await
            .error_code,
        0
    );
    // B joins and waits: A never rejoins, so its session (or the rebalance timeout) ends
    // it, and B's join completes alone, as the leader of generation 2.
    let mut b = Client::connect(address, "b").await;
    let joined = b
        .join(3, join_request(group, "", &["range"], session_ms))
        .await;
    assert_eq!(joined.error_code, 0);
    assert_eq!(joined.generation_id, 2);
    assert_eq!(joined.leader, joined.member_id);
    assert_eq!(joined.members.len(), 1);
    assert_eq!(
        a.heartbeat(3, group, 1, &a_id).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_never_syncs_is_removed_at_the_rebalance_timeout() {
    let group = "no-sync";
    let (_cluster, address) = cluster_for(group, short_sessions()).await;
    never_syncs(address, group).await;
}

/// A member that sends no SyncGroup, at the coordinator `address` of `group`.
async fn never_syncs(address: SocketAddr, group: &'static str) {
    // Long sessions, short rebalance timeouts: what removes B is its missing SyncGroup.
    let request = |member: &str| {
        join_request(group, member, &["range"], 30_000).with_rebalance_timeout_ms(1_000)
    };
    let mut a = Client::connect(address, "a").await;
    let joined = a.join(3, request("")).await;
    let a_id = joined.member_id.to_string();
    assert_eq!(
        a.sync(3, sync_request(group, 1, &a_id, &[]))
            .await
            .error_code,
        0
    );
    let mut b = Client::connect(address, "b").await;
    let b_join = tokio::spawn(async move {
        let joined = b.join(3, request("")).await;
        (b, joined)
    });
    while a.heartbeat(3, group, 1, &a_id).await == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let joined = a.join(3, request(&a_id)).await;
    assert_eq!((joined.error_code, joined.generation_id), (0, 2));
    let (mut b, b_joined) = tokio::time::timeout(GUARD, b_join)
        .await
        .expect("guard")
        .expect("task");
    let b_id = b_joined.member_id.to_string();
    // The leader syncs; B never does, and is removed when the rebalance timeout passes.
    assert_eq!(
        a.sync(3, sync_request(group, 2, &a_id, &[]))
            .await
            .error_code,
        0
    );
    let code = tokio::time::timeout(GUARD, async {
        loop {
            let code = a.heartbeat(3, group, 2, &a_id).await;
            if code != 0 {
                return code;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("guard");
    // A is told to rejoin (or, had it been slower than its own rebalance timeout, is gone
    // too); either way B is no member any more.
    assert!(
        code == ErrorCode::REBALANCE_IN_PROGRESS.code()
            || code == ErrorCode::UNKNOWN_MEMBER_ID.code(),
        "{code}"
    );
    assert_eq!(
        b.heartbeat(3, group, 2, &b_id).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_rebalance_waits_for_more_members() {
    let group = "initial";
    let limits = GroupLimits {
        // Long enough for the second join to arrive within it on a busy machine; as in
        // Kafka, a member arriving during the wait extends it once more (2 s in all).
        initial_rebalance_delay: Duration::from_secs(1),
        ..GroupLimits::default()
    };
    let (_cluster, address) = cluster_for(group, limits).await;
    let mut a = Client::connect(address, "a").await;
    let a_join = tokio::spawn(async move {
        let joined = a.join(3, join_request(group, "", &["range"], 30_000)).await;
        (a, joined)
    });
    let mut b = Client::connect(address, "b").await;
    let b_joined = b.join(3, join_request(group, "", &["range"], 30_000)).await;
    let (_a, a_joined) = tokio::time::timeout(GUARD, a_join)
        .await
        .expect("guard")
        .expect("task");
    // One generation with both, not a generation of the first alone and then a rebalance.
    for joined in [&a_joined, &b_joined] {
        assert_eq!((joined.error_code, joined.generation_id), (0, 1));
    }
    let leader = if a_joined.leader == a_joined.member_id {
        &a_joined
    } else {
        &b_joined
    };
    assert_eq!(leader.members.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_members_keep_their_place_and_fence_the_old_id() {
    let group = "static";
    let (_cluster, address) = cluster_for(group, short_sessions()).await;
    static_member(address, group).await;
}

/// A static member's restart at the coordinator `address` of `group`.
async fn static_member(address: SocketAddr, group: &'static str) {
    let mut a = Client::connect(address, "a").await;
    let request = |member: &str| {
        join_request(group, member, &["range"], 30_000)
            .with_group_instance_id(Some("instance-1".into()))
    };
    // A static member needs no second JoinGroup for its id.
    let joined = a.join(9, request("")).await;
    assert_eq!((joined.error_code, joined.generation_id), (0, 1));
    let old_id = joined.member_id.to_string();
    assert!(old_id.starts_with("instance-1-"), "{old_id}");
    let sync = sync_request(group, 1, &old_id, &[(&old_id, b"mine")])
        .with_group_instance_id(Some("instance-1".into()));
    assert_eq!(&a.sync(5, sync).await.assignment[..], b"mine");
    // It restarts: a JoinGroup with no member id and the same instance id gets a new id
    // and the same generation, no rebalance; the leader may skip the assignment (v9).
    let rejoined = a.join(9, request("")).await;
    assert_eq!(rejoined.error_code, 0);
    assert_eq!(rejoined.generation_id, 1);
    assert_ne!(rejoined.member_id.as_str(), old_id);
    assert_eq!(rejoined.leader, rejoined.member_id);
    assert!(rejoined.skip_assignment);
    assert_eq!(rejoined.members.len(), 1);
    assert_eq!(a.state(group).await, "Stable");
    // The old id is fenced.
    let fenced = HeartbeatRequest::default()
        .with_group_id(group.into())
        .with_generation_id(1)
        .with_member_id(old_id.as_str().into())
        .with_group_instance_id(Some("instance-1".into()));
    let Response::Heartbeat(fenced) = a.call(4, fenced).await else {
        panic!("not Heartbeat")
    };
    assert_eq!(fenced.error_code, ErrorCode::FENCED_INSTANCE_ID.code());
    // The member leaves by its instance id alone (as an admin removes it).
    let Response::LeaveGroup(left) = a
        .call(
            4,
            LeaveGroupRequest::default()
                .with_group_id(group.into())
                .with_members(vec![MemberIdentity::default()
                    .with_member_id("".into())
                    .with_group_instance_id(Some("instance-1".into()))]),
        )
        .await
    else {
        panic!("not LeaveGroup")
    };
    assert_eq!(left.members[0].error_code, 0);
    assert_eq!(a.state(group).await, "Empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_commits_and_offset_admin() {
    let group = "simple";
    let (_cluster, address) = cluster_for(group, GroupLimits::default()).await;
    simple_commits(address, group, 0).await;
}

/// Simple commits from OffsetCommit `first_commit` (Kafka 4 serves v2+) to v9, read back,
/// and the offset admin APIs, at the coordinator `address` of `group`.
async fn simple_commits(address: SocketAddr, group: &'static str, first_commit: i16) {
    let mut client = Client::connect(address, "simple").await;
    // A member's commit to a group that does not exist: Kafka's ILLEGAL_GENERATION.
    assert_eq!(
        client.commit(8, group, 3, "m", "topic", 1).await,
        ErrorCode::ILLEGAL_GENERATION.code()
    );
    // Simple commits (generation -1, no member) create the group, at every version that
    // names topics; each is read back at every OffsetFetch version of one group.
    for version in first_commit..=9 {
        let offset = 100 + i64::from(version);
        assert_eq!(
            client.commit(version, group, -1, "", "topic", offset).await,
            0,
            "v{version}"
        );
        for fetch in 1..=7 {
            assert_eq!(
                client.fetch_offset(fetch, group, "topic").await,
                (offset, "meta".to_string()),
                "commit v{version}, fetch v{fetch}"
            );
        }
    }
    assert_eq!(client.state(group).await, "Empty");
    // v10 names topics by id, in the commit and in the fetch; an unknown id is its own error.
    let Response::Metadata(metadata) = client
        .call(
            12,
            MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some("topic".into()))
            ])),
        )
        .await
    else {
        panic!("not Metadata")
    };
    let topic_id = metadata.topics[0].topic_id;
    let by_id = |id: Uuid, offset: i64| {
        OffsetCommitRequest::default()
            .with_group_id(group.into())
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_topic_id(id)
                .with_partitions(vec![
                    OffsetCommitRequestPartition::default().with_committed_offset(offset)
                ])])
    };
    let mut codes = Vec::new();
    for id in [topic_id, Uuid([7; 16])] {
        let Response::OffsetCommit(committed) = client.call(10, by_id(id, 500)).await else {
            panic!("not OffsetCommit")
        };
        assert_eq!(committed.topics[0].topic_id, id);
        codes.push(committed.topics[0].partitions[0].error_code);
    }
    assert_eq!(codes, [0, ErrorCode::UNKNOWN_TOPIC_ID.code()]);
    let Response::OffsetFetch(fetched) = client
        .call(
            10,
            OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
                .with_group_id(group.into())
                .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                    .with_topic_id(topic_id)
                    .with_partition_indexes(vec![0].into())]))]),
        )
        .await
    else {
        panic!("not OffsetFetch")
    };
    let topic = &fetched.groups[0].topics[0];
    assert_eq!(topic.topic_id, topic_id);
    assert_eq!(topic.partitions[0].committed_offset, 500);
    assert_eq!(client.fetch_offset(7, group, "topic").await.0, 500);
    // Back to the offset the checks below expect.
    assert_eq!(client.commit(9, group, -1, "", "topic", 109).await, 0);
    // Metadata past offset.metadata.max.bytes.
    let big = OffsetCommitRequest::default()
        .with_group_id(group.into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name("topic".into())
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_committed_offset(1)
                .with_committed_metadata(Some("x".repeat(4097).into()))])]);
    let Response::OffsetCommit(big) = client.call(8, big).await else {
        panic!("not OffsetCommit")
    };
    assert_eq!(
        big.topics[0].partitions[0].error_code,
        ErrorCode::OFFSET_METADATA_TOO_LARGE.code()
    );
    // v8+: several groups at once; null topics: every committed one; an unknown group's
    // partitions are -1 with no error.
    let Response::OffsetFetch(fetched) = client
        .call(
            8,
            OffsetFetchRequest::default()
                .with_groups(vec![
                    OffsetFetchRequestGroup::default()
                        .with_group_id(group.into())
                        .with_topics(None),
                    OffsetFetchRequestGroup::default()
                        .with_group_id("none".into())
                        .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                            .with_name("topic".into())
                            .with_partition_indexes(vec![0].into())])),
                ])
                .with_require_stable(true),
        )
        .await
    else {
        panic!("not OffsetFetch")
    };
    let all = &fetched.groups[0];
    assert_eq!(all.topics[0].name.as_str(), "topic");
    assert_eq!(all.topics[0].partitions[0].committed_offset, 109);
    let none = &fetched.groups[1];
    // "none" may have another coordinator; here it is asked of this broker.
    if none.error_code == 0 {
        assert_eq!(none.topics[0].partitions[0].committed_offset, -1);
    } else {
        assert_eq!(none.error_code, ErrorCode::NOT_COORDINATOR.code());
    }
    // OffsetDelete in an empty group removes; an unknown partition is named.
    let Response::OffsetDelete(deleted) = client
        .call(
            0,
            OffsetDeleteRequest::default()
                .with_group_id(group.into())
                .with_topics(vec![OffsetDeleteRequestTopic::default()
                    .with_name("topic".into())
                    .with_partitions(vec![
                        OffsetDeleteRequestPartition::default().with_partition_index(0),
                        OffsetDeleteRequestPartition::default().with_partition_index(5),
                    ])]),
        )
        .await
    else {
        panic!("not OffsetDelete")
    };
    // Keyed by partition (in no set order, at Kafka).
    let mut errors: Vec<_> = deleted.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.error_code))
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        [(0, 0), (5, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code())]
    );
    assert_eq!(
        client.fetch_offset(7, group, "topic").await,
        (-1, String::new())
    );

    // A stable consumer group subscribed to the topic keeps its offsets.
    let joined = client
        .join(3, join_request(group, "", &["range"], 30_000))
        .await;
    let id = joined.member_id.to_string();
    assert_eq!(
        client
            .sync(3, sync_request(group, joined.generation_id, &id, &[]))
            .await
            .error_code,
        0
    );
    assert_eq!(
        client
            .commit(8, group, joined.generation_id, &id, "topic", 3)
            .await,
        0
    );
    let Response::OffsetDelete(deleted) = client
        .call(
            0,
            OffsetDeleteRequest::default()
                .with_group_id(group.into())
                .with_topics(vec![OffsetDeleteRequestTopic::default()
                    .with_name("topic".into())
                    .with_partitions(vec![OffsetDeleteRequestPartition::default()])]),
        )
        .await
    else {
        panic!("not OffsetDelete")
    };
    assert_eq!(
        deleted.topics[0].partitions[0].error_code,
        ErrorCode::GROUP_SUBSCRIBED_TO_TOPIC.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_topics_offsets_go_with_it() {
    let group = "deleted";
    let (cluster, address) = cluster_of(1, group, GroupLimits::default()).await;
    let mut client = Client::connect(address, "deleter").await;
    assert_eq!(client.commit(8, group, -1, "", "topic", 42).await, 0);
    assert_eq!(client.fetch_offset(7, group, "topic").await.0, 42);
    let before = cluster.shared().groups().bytes();
    let Response::DeleteTopics(deleted) = client
        .call(
            5,
            DeleteTopicsRequest::default().with_topic_names(vec!["topic".into()]),
        )
        .await
    else {
        panic!("not DeleteTopics")
    };
    assert_eq!(deleted.responses[0].error_code, 0);
    assert!(cluster.shared().groups().bytes() < before);
    // A topic of the same name later starts with nothing committed.
    prepare(address, group).await;
    assert_eq!(
        client.fetch_offset(7, group, "topic").await,
        (-1, String::new())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caps_answer_clear_errors() {
    let limits = GroupLimits {
        max_groups: 1,
        max_members: 1,
        ..GroupLimits::default()
    };
    let (_cluster, address) = cluster_for("capped", limits).await;
    let mut client = Client::connect(address, "capped").await;
    let joined = client
        .join(3, join_request("capped", "", &["range"], 30_000))
        .await;
    assert_eq!(joined.error_code, 0);
    // A second member of the group, then a second group.
    let second = client
        .join(3, join_request("capped", "", &["range"], 30_000))
        .await;
    assert_eq!(second.error_code, ErrorCode::GROUP_MAX_SIZE_REACHED.code());
    assert_eq!(
        client.commit(8, "capped-2", -1, "", "topic", 1).await,
        // "capped-2" may be coordinated elsewhere; either way it is refused.
        if coordinator("capped-2", 3) == coordinator("capped", 3) {
            ErrorCode::GROUP_MAX_SIZE_REACHED.code()
        } else {
            ErrorCode::NOT_COORDINATOR.code()
        }
    );
    // Session timeouts outside Kafka's bounds.
    let short = client
        .join(3, join_request("capped", "", &["range"], 10))
        .await;
    assert_eq!(short.error_code, ErrorCode::INVALID_SESSION_TIMEOUT.code());

    // The bytes all groups hold: member metadata past it is refused at the join, and a
    // commit past it with OFFSET_METADATA_TOO_LARGE.
    let limits = GroupLimits {
        max_bytes: 8 * 1024,
        ..GroupLimits::default()
    };
    // One broker: it coordinates every group.
    let (cluster, address) = cluster_of(1, "bytes", limits).await;
    let mut client = Client::connect(address, "bytes").await;
    let big = JoinGroupRequest::default()
        .with_group_id("bytes".into())
        .with_session_timeout_ms(30_000)
        .with_protocol_type("consumer".into())
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name("range".into())
            .with_metadata(Bytes::from(vec![0u8; 16 * 1024]))]);
    assert_eq!(
        client.join(3, big).await.error_code,
        ErrorCode::GROUP_MAX_SIZE_REACHED.code()
    );
    // 3,000 bytes of metadata a commit (under the 4096 of one commit), each in a group of
    // its own: the third does not fit in 8 KiB.
    let mut codes = Vec::new();
    for group in 0..4 {
        let request = OffsetCommitRequest::default()
            .with_group_id(format!("bytes-{group}").as_str().into())
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name("topic".into())
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_committed_offset(1)
                    .with_committed_metadata(Some("m".repeat(3000).into()))])]);
        let Response::OffsetCommit(committed) = client.call(8, request).await else {
            panic!("not OffsetCommit")
        };
        codes.push(committed.topics[0].partitions[0].error_code);
    }
    let too_large = ErrorCode::OFFSET_METADATA_TOO_LARGE.code();
    assert_eq!(codes, [0, 0, too_large, too_large]);
    assert!(cluster.shared().groups().bytes() <= 8 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_of_every_group_api_runs_a_generation() {
    // One broker: it coordinates every group.
    let (_cluster, address) = cluster_of(1, "versions", short_sessions()).await;
    let mut client = Client::connect(address, "versions").await;
    let joins = ApiKey::JoinGroup.valid_versions();
    for join in joins.min..=joins.max {
        // The other APIs at the version of their era (clamped to what each has).
        let sync = join.min(ApiKey::SyncGroup.valid_versions().max);
        let heartbeat = join.min(ApiKey::Heartbeat.valid_versions().max);
        let leave = join.min(ApiKey::LeaveGroup.valid_versions().max);
        // v0 commits carry no member: a simple commit, refused in a group with members.
        let commit = join.clamp(1, 9);
        let group = format!("versions-{join}");
        let group = group.as_str();
        let mut answer = client
            .join(join, join_request(group, "", &["range"], 30_000))
            .await;
        if join >= 4 {
            assert_eq!(
                answer.error_code,
                ErrorCode::MEMBER_ID_REQUIRED.code(),
                "v{join}"
            );
            let id = answer.member_id.to_string();
            answer = client
                .join(join, join_request(group, &id, &["range"], 30_000))
                .await;
        }
        assert_eq!(
            (answer.error_code, answer.generation_id),
            (0, 1),
            "JoinGroup v{join}"
        );
        let id = answer.member_id.to_string();
        let synced = client
            .sync(sync, sync_request(group, 1, &id, &[(&id, b"a")]))
            .await;
        assert_eq!(
            (synced.error_code, &synced.assignment[..]),
            (0, &b"a"[..]),
            "SyncGroup v{sync}"
        );
        assert_eq!(
            client.heartbeat(heartbeat, group, 1, &id).await,
            0,
            "Heartbeat v{heartbeat}"
        );
        assert_eq!(
            client.commit(commit, group, 1, &id, "topic", 9).await,
            0,
            "OffsetCommit v{commit}"
        );
        let leave_request = if leave >= 3 {
            LeaveGroupRequest::default()
                .with_group_id(group.into())
                .with_members(vec![
                    MemberIdentity::default().with_member_id(id.as_str().into())
                ])
        } else {
            LeaveGroupRequest::default()
                .with_group_id(group.into())
                .with_member_id(id.as_str().into())
        };
        let Response::LeaveGroup(left) = client.call(leave, leave_request).await else {
            panic!("not LeaveGroup")
        };
        assert_eq!(left.error_code, 0, "LeaveGroup v{leave}");
    }
    // The admin APIs at every version.
    for version in 0..=ApiKey::DescribeGroups.valid_versions().max {
        let Response::DescribeGroups(described) = client
            .call(
                version,
                DescribeGroupsRequest::default().with_groups(vec!["versions".into()]),
            )
            .await
        else {
            panic!("not DescribeGroups")
        };
        assert_eq!(
            described.groups[0].group_state.as_str(),
            "Dead",
            "v{version}"
        );
        let expected = if version >= 6 {
            ErrorCode::GROUP_ID_NOT_FOUND.code()
        } else {
            0
        };
        assert_eq!(described.groups[0].error_code, expected, "v{version}");
    }
    for version in 0..=ApiKey::ListGroups.valid_versions().max {
        let Response::ListGroups(listed) = client.call(version, ListGroupsRequest::default()).await
        else {
            panic!("not ListGroups")
        };
        assert_eq!(listed.error_code, 0, "v{version}");
        assert!(listed
            .groups
            .iter()
            .all(|g| g.protocol_type.as_str() == "consumer"));
    }
    for version in 0..=ApiKey::DeleteGroups.valid_versions().max {
        let Response::DeleteGroups(deleted) = client
            .call(
                version,
                DeleteGroupsRequest::default().with_groups_names(vec!["gone".into()]),
            )
            .await
        else {
            panic!("not DeleteGroups")
        };
        assert!(deleted.results[0].error_code != 0, "v{version}");
    }
    for version in 0..=ApiKey::OffsetFetch.valid_versions().max {
        let request = if version >= 8 {
            OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
                .with_group_id("versions".into())
                .with_topics(None)])
        } else {
            OffsetFetchRequest::default()
                .with_group_id("versions".into())
                .with_topics(if version >= 2 { None } else { Some(Vec::new()) })
        };
        assert!(
            matches!(
                client.call(version, request).await,
                Response::OffsetFetch(_)
            ),
            "v{version}"
        );
    }
}
