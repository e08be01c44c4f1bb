//! KIP-848 consumer groups through this crate's own client connection, over TCP: members
//! join with ConsumerGroupHeartbeat, the coordinator assigns (uniform), a partition moves
//! only after its owner revoked it, member epochs are checked (FENCED_MEMBER_EPOCH,
//! UNKNOWN_MEMBER_ID, one epoch of lag allowed), OffsetCommit and OffsetFetch check member
//! epochs (STALE_MEMBER_EPOCH), ListGroups and ConsumerGroupDescribe show the group, members
//! leave, and a static member comes back with its assignment; group epochs on a first join,
//! a subscription change and a regex subscription (resolved at a later heartbeat). The same
//! scenarios, each assertion as written, run against a real Kafka 4.4 broker
//! (`bash tools/ci-live.sh cluster_groups`).

use crate::support;

use kafka_codec::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_codec::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    CreateTopicsRequest, DescribeGroupsRequest, FindCoordinatorRequest, ListGroupsRequest,
    OffsetCommitRequest, OffsetFetchRequest,
};
use kafka_codec::{ErrorCode, Response, Uuid};
use kafka_codec_cluster::Cluster;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;
use support::{Client, GUARD};

/// ConsumerGroupHeartbeat's newest version (member ids chosen by the client).
const V: i16 = 1;

/// ConfigResource type GROUP.
const GROUP_RESOURCE: i8 = 32;

impl Client {
    async fn cg_heartbeat(
        &mut self,
        request: ConsumerGroupHeartbeatRequest,
    ) -> ConsumerGroupHeartbeatResponse {
        let Response::ConsumerGroupHeartbeat(answer) = self.call(V, request).await else {
            panic!("not ConsumerGroupHeartbeat")
        };
        answer
    }
}

/// A member joining (epoch 0) with a full request.
fn join(group: &str, member: &str, topic: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest::default()
        .with_group_id(group.into())
        .with_member_id(member.into())
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(30_000)
        .with_subscribed_topic_names(Some(vec![topic.into()]))
        .with_topic_partitions(Some(Vec::new()))
}

/// A heartbeat at `epoch`, naming what the member owns (`None`: unchanged).
fn beat(
    group: &str,
    member: &str,
    epoch: i32,
    owned: Option<(Uuid, &[i32])>,
) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest::default()
        .with_group_id(group.into())
        .with_member_id(member.into())
        .with_member_epoch(epoch)
        .with_topic_partitions(owned.map(|(topic, partitions)| {
            if partitions.is_empty() {
                Vec::new()
            } else {
                vec![TopicPartitions::default()
                    .with_topic_id(topic)
                    .with_partitions(partitions.to_vec().into())]
            }
        }))
}

/// The partitions of `topic` an answer assigns (`None`: no assignment in the answer).
fn assigned(answer: &ConsumerGroupHeartbeatResponse, topic: Uuid) -> Option<Vec<i32>> {
    answer.assignment.as_ref().map(|assignment| {
        let mut partitions: Vec<i32> = assignment
            .topic_partitions
            .iter()
            .inspect(|tp| assert_eq!(tp.topic_id, topic, "a partition of another topic"))
            .flat_map(|tp| tp.partitions.iter())
            .collect();
        partitions.sort_unstable();
        partitions
    })
}

fn ok(answer: &ConsumerGroupHeartbeatResponse) {
    assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
}

/// Creates `topic` with 4 partitions through `bootstrap`; its id and the coordinator of
/// `group`, once that coordinator has loaded.
async fn prepare(bootstrap: SocketAddr, topic: &str, group: &str) -> (Uuid, SocketAddr) {
    let mut client = Client::connect(bootstrap, "setup").await;
    let Response::CreateTopics(created) = client
        .call(
            7,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name(topic.into())
                .with_num_partitions(4)
                .with_replication_factor(1)]),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    let topic_id = created.topics[0].topic_id;
    // A real broker answers COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets,
    // then COORDINATOR_LOAD_IN_PROGRESS while it loads the group's partition.
    let address = tokio::time::timeout(GUARD, async {
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
            let found = &found.coordinators[0];
            if found.error_code == 0 {
                let address = tokio::net::lookup_host((found.host.to_string(), found.port as u16))
                    .await
                    .expect("the coordinator's host")
                    .next()
                    .expect("an address");
                let mut coordinator = Client::connect(address, "setup").await;
                let Response::ConsumerGroupDescribe(described) = coordinator
                    .call(
                        1,
                        ConsumerGroupDescribeRequest::default().with_group_ids(vec![group.into()]),
                    )
                    .await
                else {
                    panic!("not ConsumerGroupDescribe")
                };
                if described.groups[0].error_code == ErrorCode::GROUP_ID_NOT_FOUND.code() {
                    return address;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a loaded coordinator before the guard");
    (topic_id, address)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_members_join_reconcile_commit_and_leave_as_kafka_runs_them() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let (topic, coordinator) = prepare(cluster.brokers()[0].address, "kip848", "kip848").await;
    scenario(coordinator, "kip848", "kip848", topic).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    let name = format!("kip848-{nanos}");
    unbatched(broker, &name).await;
    let (topic, coordinator) = prepare(broker, &name, &name).await;
    scenario(coordinator, &name, &name, topic).await;
}

/// Kafka 4.4 batches assignments (KIP-1263: at most one a second by default); the cluster
/// assigns at each heartbeat, as Kafka does with `group`'s interval at 0, which this sets.
async fn unbatched(broker: SocketAddr, group: &str) {
    let mut admin = Client::connect(broker, "admin").await;
    let set = [("consumer.assignment.interval.ms", 0, Some("0"))];
    let altered = admin
        .incremental_alter_configs(1, GROUP_RESOURCE, group, &set, false)
        .await;
    assert_eq!(altered.0, 0);
}

async fn scenario(address: SocketAddr, group: &str, topic_name: &str, topic: Uuid) {
    let mut a = Client::connect(address, "member-a").await;
    let mut b = Client::connect(address, "member-b").await;
    // v1: the client chooses its member id.
    let (a_id, b_id) = ("member-a-id", "member-b-id");

    // Refused before anything is looked at.
    let refused = a
        .cg_heartbeat(join(group, a_id, topic_name).with_rebalance_timeout_ms(-1))
        .await;
    assert_eq!(refused.error_code, ErrorCode::INVALID_REQUEST.code());
    let refused = a
        .cg_heartbeat(join(group, a_id, topic_name).with_server_assignor(Some("nope".into())))
        .await;
    assert_eq!(refused.error_code, ErrorCode::UNSUPPORTED_ASSIGNOR.code());
    let refused = a.cg_heartbeat(join(group, "", topic_name)).await;
    assert_eq!(refused.error_code, ErrorCode::INVALID_REQUEST.code());

    // Alone, a gets every partition. (The cluster assigns at once, at epoch 1; Kafka 4.4
    // first answers epoch 2 with nothing, and every partition at the next heartbeat, epoch
    // 3.) From there on the epochs are counted from a's, `e`.
    // With an empty regex beside the names, as librdkafka joins: an empty regex is none.
    let joined = a
        .cg_heartbeat(join(group, a_id, topic_name).with_subscribed_topic_regex(Some("".into())))
        .await;
    ok(&joined);
    assert_eq!(joined.member_id.as_deref(), Some(a_id));
    assert_eq!(joined.heartbeat_interval_ms, 5_000);
    let mut settled = joined;
    for _ in 0..50 {
        if assigned(&settled, topic) == Some(vec![0, 1, 2, 3]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        settled = a
            .cg_heartbeat(beat(group, a_id, settled.member_epoch, None))
            .await;
        ok(&settled);
    }
    assert_eq!(assigned(&settled, topic), Some(vec![0, 1, 2, 3]));
    let e = settled.member_epoch;

    // b joins: the next epoch, but its partitions are a's until a revokes them.
    let joined = b.cg_heartbeat(join(group, b_id, topic_name)).await;
    ok(&joined);
    assert_eq!(joined.member_epoch, e + 1);
    assert_eq!(assigned(&joined, topic), Some(vec![]));

    // a is told to give up two: it stays at its epoch until it has.
    let told = a
        .cg_heartbeat(beat(group, a_id, e, Some((topic, &[0, 1, 2, 3]))))
        .await;
    ok(&told);
    assert_eq!(told.member_epoch, e);
    let kept = assigned(&told, topic).expect("the assignment without the revoked ones");
    assert_eq!(kept.len(), 2);
    let given: Vec<i32> = (0..4).filter(|p| !kept.contains(p)).collect();
    // Still owning them, a stays where it is (no new assignment to send).
    let again = a.cg_heartbeat(beat(group, a_id, e, None)).await;
    ok(&again);
    assert_eq!(again.member_epoch, e);
    assert_eq!(assigned(&again, topic), None);
    // Revoked: a moves to epoch 2, its partitions unchanged (nothing sent).
    let revoked = a
        .cg_heartbeat(beat(group, a_id, e, Some((topic, &kept))))
        .await;
    ok(&revoked);
    assert_eq!(revoked.member_epoch, e + 1);
    assert_eq!(assigned(&revoked, topic), None);
    // Now b gets them.
    let released = b
        .cg_heartbeat(beat(group, b_id, e + 1, Some((topic, &[]))))
        .await;
    ok(&released);
    assert_eq!(released.member_epoch, e + 1);
    assert_eq!(assigned(&released, topic), Some(given.clone()));
    let settled = b
        .cg_heartbeat(beat(group, b_id, e + 1, Some((topic, &given))))
        .await;
    ok(&settled);
    assert_eq!(assigned(&settled, topic), None);

    let Response::ConsumerGroupDescribe(described) = a
        .call(
            1,
            ConsumerGroupDescribeRequest::default().with_group_ids(vec![group.into()]),
        )
        .await
    else {
        panic!("not ConsumerGroupDescribe")
    };
    let described = &described.groups[0];
    assert_eq!(described.error_code, 0);
    assert_eq!(described.group_state.as_str(), "Stable");
    assert_eq!(
        (described.group_epoch, described.assignment_epoch),
        (e + 1, e + 1)
    );
    assert_eq!(described.assignor_name.as_str(), "uniform");
    let members: BTreeSet<(String, i32, usize)> = described
        .members
        .iter()
        .map(|m| {
            let count = m
                .assignment
                .topic_partitions
                .iter()
                .map(|tp| tp.partitions.len())
                .sum();
            assert_eq!(m.member_type, 1, "a consumer-protocol member");
            assert_eq!(m.subscribed_topic_names.len(), 1);
            (m.member_id.to_string(), m.member_epoch, count)
        })
        .collect();
    assert_eq!(
        members,
        BTreeSet::from([(a_id.to_string(), e + 1, 2), (b_id.to_string(), e + 1, 2)])
    );

    // Epochs: ahead is fenced; one behind passes if it owns no more than it has; else fenced.
    let ahead = a.cg_heartbeat(beat(group, a_id, e + 2, None)).await;
    assert_eq!(ahead.error_code, ErrorCode::FENCED_MEMBER_EPOCH.code());
    let lagging = a
        .cg_heartbeat(beat(group, a_id, e, Some((topic, &kept))))
        .await;
    ok(&lagging);
    assert_eq!(lagging.member_epoch, e + 1);
    let lagging_more = a
        .cg_heartbeat(beat(group, a_id, e, Some((topic, &[0, 1, 2, 3]))))
        .await;
    assert_eq!(
        lagging_more.error_code,
        ErrorCode::FENCED_MEMBER_EPOCH.code()
    );
    let unknown = a.cg_heartbeat(beat(group, "nobody", e, None)).await;
    assert_eq!(unknown.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());

    // Commits and fetches at the member's epoch; an older one is stale.
    let commit = |member: &str, epoch: i32| {
        OffsetCommitRequest::default()
            .with_group_id(group.into())
            .with_member_id(member.into())
            .with_generation_id_or_member_epoch(epoch)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(topic_name.into())
                .with_topic_id(topic)
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(kept[0])
                    .with_committed_offset(7)])])
    };
    for (member, epoch, error) in [
        (a_id, e + 1, ErrorCode::NONE),
        // Kafka 4.4 (KIP-1251) also takes an older epoch at which the member already held
        // the partition (e here); the cluster does not. Before that, both refuse it.
        (a_id, e - 1, ErrorCode::STALE_MEMBER_EPOCH),
        ("nobody", e + 1, ErrorCode::UNKNOWN_MEMBER_ID),
    ] {
        let Response::OffsetCommit(committed) = a.call(9, commit(member, epoch)).await else {
            panic!("not OffsetCommit")
        };
        assert_eq!(
            committed.topics[0].partitions[0].error_code,
            error.code(),
            "commit by {member} at epoch {epoch}"
        );
    }
    let fetch = |epoch: i32| {
        OffsetFetchRequest::default().with_groups(vec![OffsetFetchRequestGroup::default()
            .with_group_id(group.into())
            .with_member_id(Some(a_id.into()))
            .with_member_epoch(epoch)
            .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                .with_name(topic_name.into())
                .with_partition_indexes(vec![kept[0]].into())]))])
    };
    let Response::OffsetFetch(fetched) = a.call(9, fetch(e + 1)).await else {
        panic!("not OffsetFetch")
    };
    assert_eq!(fetched.groups[0].error_code, 0);
    assert_eq!(
        fetched.groups[0].topics[0].partitions[0].committed_offset,
        7
    );
    let Response::OffsetFetch(fetched) = a.call(9, fetch(e - 1)).await else {
        panic!("not OffsetFetch")
    };
    assert_eq!(
        fetched.groups[0].error_code,
        ErrorCode::STALE_MEMBER_EPOCH.code()
    );

    // Listed as a consumer group; DescribeGroups (classic) does not describe it.
    let Response::ListGroups(listed) = a
        .call(
            5,
            ListGroupsRequest::default().with_types_filter(vec!["consumer".into()]),
        )
        .await
    else {
        panic!("not ListGroups")
    };
    let ours = listed
        .groups
        .iter()
        .find(|g| g.group_id.as_str() == group)
        .expect("the group is listed as a consumer group");
    assert_eq!(ours.group_type.as_str(), "consumer");
    assert_eq!(ours.group_state.as_str(), "Stable");
    assert_eq!(ours.protocol_type.as_str(), "consumer");
    let Response::DescribeGroups(classic) = a
        .call(
            5,
            DescribeGroupsRequest::default().with_groups(vec![group.into()]),
        )
        .await
    else {
        panic!("not DescribeGroups")
    };
    // Kafka 4.4 answers a KIP-848 group as one it does not hold (no error before v6).
    assert_eq!(classic.groups[0].error_code, 0);
    assert_eq!(classic.groups[0].group_state.as_str(), "Dead");

    // a leaves: b takes everything at the next epoch.
    let left = a.cg_heartbeat(beat(group, a_id, -1, None)).await;
    ok(&left);
    assert_eq!(left.member_epoch, -1);
    assert_eq!(left.member_id.as_deref(), Some(a_id));
    let everything = b.cg_heartbeat(beat(group, b_id, e + 1, None)).await;
    ok(&everything);
    assert_eq!(everything.member_epoch, e + 2);
    assert_eq!(assigned(&everything, topic), Some(vec![0, 1, 2, 3]));
    let gone = a.cg_heartbeat(beat(group, a_id, e + 1, None)).await;
    assert_eq!(gone.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());

    // A static member: its instance id is its own while it is in the group; it leaves for
    // now (-2) and comes back under a new member id with its assignment.
    let mut c = Client::connect(address, "member-c").await;
    let static_join =
        |member: &str| join(group, member, topic_name).with_instance_id(Some("instance-c".into()));
    let joined = c.cg_heartbeat(static_join("member-c-1")).await;
    ok(&joined);
    assert_eq!(joined.member_epoch, e + 3);
    let taken = c.cg_heartbeat(static_join("member-c-2")).await;
    assert_eq!(taken.error_code, ErrorCode::UNRELEASED_INSTANCE_ID.code());
    let _ = b.cg_heartbeat(beat(group, b_id, e + 2, None)).await;
    let _ = b
        .cg_heartbeat(beat(group, b_id, e + 2, Some((topic, &[0, 1, 2, 3]))))
        .await;
    let owned = b.cg_heartbeat(beat(group, b_id, e + 2, None)).await;
    ok(&owned);
    let c_now = c
        .cg_heartbeat(
            beat(group, "member-c-1", e + 3, Some((topic, &[])))
                .with_instance_id(Some("instance-c".into())),
        )
        .await;
    ok(&c_now);
    let c_partitions = assigned(&c_now, topic).unwrap_or_default();
    let away = c
        .cg_heartbeat(
            beat(group, "member-c-1", -2, None).with_instance_id(Some("instance-c".into())),
        )
        .await;
    ok(&away);
    assert_eq!(away.member_epoch, -2);
    let back = c.cg_heartbeat(static_join("member-c-2")).await;
    ok(&back);
    assert_eq!(back.member_id.as_deref(), Some("member-c-2"));
    assert_eq!(back.member_epoch, c_now.member_epoch);
    assert_eq!(assigned(&back, topic), Some(c_partitions));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_member_s_partitions_go_to_the_others() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let (topic, address) = prepare(cluster.brokers()[0].address, "expiry", "expiry").await;
    let mut a = Client::connect(address, "member-a").await;
    let mut b = Client::connect(address, "member-b").await;
    let joined = a.cg_heartbeat(join("expiry", "a", "expiry")).await;
    assert_eq!(assigned(&joined, topic), Some(vec![0, 1, 2, 3]));
    let joined = b.cg_heartbeat(join("expiry", "b", "expiry")).await;
    assert_eq!(assigned(&joined, topic), Some(vec![]));
    // a never revokes; its session ends (here at once, through the control surface).
    assert_eq!(cluster.control().expire_session("expiry", "a"), Ok(()));
    let taken = b
        .cg_heartbeat(beat("expiry", "b", joined.member_epoch, Some((topic, &[]))))
        .await;
    ok(&taken);
    assert_eq!(taken.member_epoch, joined.member_epoch + 1);
    assert_eq!(assigned(&taken, topic), Some(vec![0, 1, 2, 3]));
    let gone = a.cg_heartbeat(beat("expiry", "a", 1, None)).await;
    assert_eq!(gone.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_that_stops_heartbeating_is_removed_at_its_session_timeout() {
    let cluster = Cluster::builder()
        .brokers(1)
        .group_limits(kafka_codec_cluster::groups::GroupLimits {
            consumer_session_timeout: Duration::from_millis(100),
            ..Default::default()
        })
        .build()
        .await
        .expect("cluster");
    let (_, address) = prepare(cluster.brokers()[0].address, "silent", "silent").await;
    let mut a = Client::connect(address, "member-a").await;
    ok(&a.cg_heartbeat(join("silent", "a", "silent")).await);
    // The group's timer removes it; waited for with a hang guard, not timed.
    tokio::time::timeout(GUARD, async {
        loop {
            let Response::ConsumerGroupDescribe(described) = a
                .call(
                    1,
                    ConsumerGroupDescribeRequest::default().with_group_ids(vec!["silent".into()]),
                )
                .await
            else {
                panic!("not ConsumerGroupDescribe")
            };
            if described.groups[0].members.is_empty() {
                assert_eq!(described.groups[0].group_state.as_str(), "Empty");
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the member removed before the guard");
    let gone = a.cg_heartbeat(beat("silent", "a", 1, None)).await;
    assert_eq!(gone.error_code, ErrorCode::UNKNOWN_MEMBER_ID.code());
}

/// Every pattern of `tests/data/re2j.tsv` (what Kafka 4.4's own check and RE2J make of each
/// as a SubscribedTopicRegex, written by `tools/regex-reference/run.sh`) is refused with
/// Kafka's message, or matches the same topic names, here.
#[test]
fn every_pattern_is_read_as_kafka_s_re2j_reads_it() {
    let table = include_str!("data/re2j.tsv");
    let mut lines = table.lines().filter(|line| !line.starts_with('#'));
    let topics: Vec<&str> = lines.next().expect("the topics line").split(' ').collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in lines {
        let mut fields = line.splitn(3, '\t');
        let (pattern, outcome, detail) = (
            fields.next().expect("a pattern"),
            fields.next().expect("an outcome"),
            fields.next().unwrap_or_default(),
        );
        let got = match kafka_codec_cluster::consumer_groups::topic_regex::compile(pattern) {
            Ok(regex) => {
                let matched: Vec<&str> = topics
                    .iter()
                    .copied()
                    .filter(|t| regex.is_match(t))
                    .collect();
                format!("ok\t{}", matched.join(" "))
            }
            Err(message) => format!("invalid\t{message}"),
        };
        if got != format!("{outcome}\t{detail}") {
            wrong.push(format!(
                "{pattern}\n  kafka: {outcome}\t{detail}\n  here:  {got}"
            ));
        }
        checked += 1;
    }
    assert!(checked > 70, "{checked} patterns");
    assert!(
        wrong.is_empty(),
        "{} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// What an answer assigns, by topic name (`None`: no assignment in the answer).
fn by_name(
    answer: &ConsumerGroupHeartbeatResponse,
    names: &BTreeMap<Uuid, &str>,
) -> Option<BTreeMap<String, Vec<i32>>> {
    assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
    answer.assignment.as_ref().map(|assignment| {
        let mut by_name: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for tp in &assignment.topic_partitions {
            let name = names.get(&tp.topic_id).expect("a topic of the scenario");
            let partitions = by_name.entry(name.to_string()).or_default();
            partitions.extend(tp.partitions.iter());
            partitions.sort_unstable();
        }
        by_name
    })
}

/// A member as the scenario drives it: its id, epoch and what it owns (its last
/// assignment, acknowledged with each heartbeat as a client does).
struct Driven<'a> {
    client: Client,
    group: &'a str,
    id: &'static str,
    epoch: i32,
    owned: Vec<TopicPartitions>,
}

impl Driven<'_> {
    /// Sends `request` (a plain heartbeat at the member's epoch when `None`), naming what
    /// the member owns once it has joined.
    async fn beat(
        &mut self,
        request: Option<ConsumerGroupHeartbeatRequest>,
    ) -> ConsumerGroupHeartbeatResponse {
        let request = request.unwrap_or_else(|| {
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id(self.group.into())
                .with_member_id(self.id.into())
                .with_member_epoch(self.epoch)
        });
        let request = if request.member_epoch > 0 {
            request.with_topic_partitions(Some(self.owned.clone()))
        } else {
            request
        };
        let answer = self.client.cg_heartbeat(request).await;
        if answer.error_code == 0 {
            self.epoch = answer.member_epoch;
            if let Some(assignment) = &answer.assignment {
                self.owned = assignment
                    .topic_partitions
                    .iter()
                    .map(|tp| {
                        TopicPartitions::default()
                            .with_topic_id(tp.topic_id)
                            .with_partitions(tp.partitions.clone())
                    })
                    .collect();
            }
        }
        answer
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_epochs_subscriptions_and_regexes_move_as_kafka_4_4_moves_them() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    epochs_scenario(cluster.brokers()[0].address, "epochs").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same_group_epochs_subscriptions_and_regexes() {
    let broker = support::live_broker().await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    let group = format!("epochs-{nanos}");
    unbatched(broker, &group).await;
    epochs_scenario(broker, &group).await;
}

/// Topics `GROUP-t1` (4 partitions), `GROUP-t2` and `GROUP-rx1` (2 each); a member joins
/// by name, changes its subscription, a second joins and the first revokes, a third joins
/// with a regex: every epoch and assignment as a Kafka 4.4 broker answers them (its
/// group's assignment interval at 0).
async fn epochs_scenario(bootstrap: SocketAddr, group: &str) {
    let (t1, coordinator) = prepare(bootstrap, &format!("{group}-t1"), group).await;
    let mut names: BTreeMap<Uuid, &str> = BTreeMap::from([(t1, "t1")]);
    let mut admin = Client::connect(bootstrap, "admin").await;
    for (name, count) in [("t2", 2), ("rx1", 2)] {
        let request = support::create_topics(&[&format!("{group}-{name}")], count, 1);
        let Response::CreateTopics(created) = admin.call(7, request).await else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
        names.insert(created.topics[0].topic_id, name);
    }
    let (t1n, t2n, rxn) = (
        format!("{group}-t1"),
        format!("{group}-t2"),
        format!("{group}-rx1"),
    );
    // A real broker's group coordinator learns of new topics a moment after its request
    // handlers: another group's member is assigned all three before the scenario starts.
    let warm_group = format!("{group}-warm");
    let mut warm = Driven {
        client: Client::connect(coordinator, "warm").await,
        group: &warm_group,
        id: "warm",
        epoch: 0,
        owned: Vec::new(),
    };
    let all = Some(vec![
        t1n.as_str().into(),
        t2n.as_str().into(),
        rxn.as_str().into(),
    ]);
    let mut answer = warm
        .beat(Some(
            join(&warm_group, "warm", &t1n).with_subscribed_topic_names(all),
        ))
        .await;
    tokio::time::timeout(GUARD, async {
        while by_name(&answer, &names).is_none_or(|topics| topics.len() < 3) {
            tokio::time::sleep(Duration::from_millis(100)).await;
            answer = warm.beat(None).await;
        }
    })
    .await
    .expect("the coordinator knows the topics before the guard");
    let driven = |client, id| Driven {
        client,
        group,
        id,
        epoch: 0,
        owned: Vec::new(),
    };
    let mut a = driven(Client::connect(coordinator, "a").await, "a");
    let mut b = driven(Client::connect(coordinator, "b").await, "b");
    let mut c = driven(Client::connect(coordinator, "c").await, "c");
    let assignment = |pairs: &[(&str, &[i32])]| {
        Some(
            pairs
                .iter()
                .map(|(name, partitions)| (name.to_string(), partitions.to_vec()))
                .collect::<BTreeMap<_, _>>(),
        )
    };

    // The group's first member: epoch 2 (its first member and its subscription each move
    // a new group on), every partition at once, the default heartbeat interval.
    let joined = a.beat(Some(join(group, "a", &t1n))).await;
    assert_eq!(joined.member_epoch, 2);
    assert_eq!(joined.heartbeat_interval_ms, 5_000);
    assert_eq!(
        by_name(&joined, &names),
        assignment(&[("t1", &[0, 1, 2, 3])])
    );
    let same = a.beat(None).await;
    assert_eq!((same.member_epoch, by_name(&same, &names)), (2, None));

    // A new subscription: the next epoch, and the new topic's partitions, in that answer.
    let both = Some(vec![t1n.as_str().into(), t2n.as_str().into()]);
    let request = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(group.into())
        .with_member_id("a".into())
        .with_member_epoch(2)
        .with_subscribed_topic_names(both.clone());
    let resubscribed = a.beat(Some(request)).await;
    assert_eq!(resubscribed.member_epoch, 3);
    assert_eq!(
        by_name(&resubscribed, &names),
        assignment(&[("t1", &[0, 1, 2, 3]), ("t2", &[0, 1])])
    );

    // A second member with the same subscription: the next epoch, nothing until a revokes
    // half of its six partitions (which three is the assignor's choice).
    let joined = b
        .beat(Some(
            join(group, "b", &t1n).with_subscribed_topic_names(both),
        ))
        .await;
    assert_eq!(joined.member_epoch, 4);
    assert_eq!(by_name(&joined, &names), assignment(&[]));
    let told = a.beat(None).await;
    assert_eq!(told.member_epoch, 3);
    let kept = by_name(&told, &names).expect("what a keeps");
    assert_eq!(kept.values().map(Vec::len).sum::<usize>(), 3, "{kept:?}");
    let revoked = a.beat(None).await;
    assert_eq!((revoked.member_epoch, by_name(&revoked, &names)), (4, None));
    let given = b.beat(None).await;
    assert_eq!(given.member_epoch, 4);
    let mut everything = by_name(&given, &names).expect("b's partitions");
    for (topic, partitions) in &kept {
        everything
            .entry(topic.clone())
            .or_default()
            .extend(partitions);
    }
    everything.values_mut().for_each(|p| p.sort_unstable());
    assert_eq!(
        Some(everything),
        assignment(&[("t1", &[0, 1, 2, 3]), ("t2", &[0, 1])]),
        "each partition to one of them"
    );

    // A member subscribing with a regex alone: the group stays at its epoch, and the member
    // is at it with nothing; Kafka resolves the regex after answering, and the member gets
    // the matching topic, at the next epoch, at a later heartbeat.
    let request = join(group, "c", &t1n)
        .with_subscribed_topic_names(None)
        .with_subscribed_topic_regex(Some(format!("{group}-rx.*").into()));
    let joined = c.beat(Some(request)).await;
    assert_eq!(joined.member_epoch, 4);
    assert_eq!(by_name(&joined, &names), assignment(&[]));
    let mut resolved = c.beat(None).await;
    tokio::time::timeout(GUARD, async {
        while resolved.assignment.is_none() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            resolved = c.beat(None).await;
        }
    })
    .await
    .expect("the regex resolved before the guard");
    assert_eq!(resolved.member_epoch, 5);
    assert_eq!(by_name(&resolved, &names), assignment(&[("rx1", &[0, 1])]));
    for member in [&mut a, &mut b] {
        let moved = member.beat(None).await;
        assert_eq!((moved.member_epoch, by_name(&moved, &names)), (5, None));
    }
}
