//! A stopped broker fenced once the broker session timeout passes, as Kafka's KRaft
//! controller fences a broker whose heartbeats stopped (`broker.session.timeout.ms`): it
//! leaves Metadata's and DescribeCluster's brokers and every ISR, the partitions it led move
//! to a replica left in the ISR or go offline, its groups move; restarted, it is unfenced.
//! New topics are placed over the brokers usable at the time (added ones included, fenced
//! ones left out), as Kafka's replica placer places them.
//! In memory, on a current-thread runtime with the clock paused: the 9 s cost no wall time.

use crate::support;

use kafka_codec::messages::describe_cluster_response::DescribeClusterResponse;
use kafka_codec::messages::elect_leaders_request::TopicPartitions;
use kafka_codec::messages::metadata_response::MetadataResponsePartition;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::{
    DescribeClusterRequest, ElectLeadersRequest, FindCoordinatorRequest, MetadataRequest,
    MetadataResponse, OffsetCommitRequest,
};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::control::OperationError;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::pipe::{paused, paused_cluster, PipeClient as Client};

trait FencingCalls {
    async fn metadata(&mut self, version: i16) -> MetadataResponse;
    async fn describe_cluster(&mut self, version: i16, fenced: bool) -> DescribeClusterResponse;
    async fn coordinator(&mut self, group: &str) -> i32;
    async fn produce(&mut self, topic: &str, partition: i32) -> i16;
    async fn create(&mut self, name: &str, partitions: i32, replicas: i16) -> i16;
}

impl FencingCalls for Client {
    async fn metadata(&mut self, version: i16) -> MetadataResponse {
        // v0's empty list is every topic (null is v1+).
        let all = if version == 0 { Some(Vec::new()) } else { None };
        match self
            .call(version, MetadataRequest::default().with_topics(all))
            .await
        {
            Response::Metadata(body) => body,
            other => panic!("not Metadata: {other:?}"),
        }
    }

    async fn describe_cluster(&mut self, version: i16, fenced: bool) -> DescribeClusterResponse {
        let request = DescribeClusterRequest::default()
            .with_endpoint_type(1)
            .with_include_fenced_brokers(fenced);
        match self.call(version, request).await {
            Response::DescribeCluster(body) => body,
            other => panic!("not DescribeCluster: {other:?}"),
        }
    }

    async fn coordinator(&mut self, group: &str) -> i32 {
        let request = FindCoordinatorRequest::default().with_key(group.into());
        match self.call(3, request).await {
            Response::FindCoordinator(found) => {
                assert_eq!(found.error_code, 0);
                found.node_id
            }
            other => panic!("not FindCoordinator: {other:?}"),
        }
    }

    async fn produce(&mut self, topic: &str, partition: i32) -> i16 {
        let request = support::produce(topic, partition, support::one_record());
        match self.call(9, request).await {
            Response::Produce(p) => p.responses[0].partition_responses[0].error_code,
            other => panic!("not Produce: {other:?}"),
        }
    }

    /// Creates `name`: its error code.
    async fn create(&mut self, name: &str, partitions: i32, replicas: i16) -> i16 {
        let request = support::create_topics(&[name], partitions, replicas);
        match self.call(7, request).await {
            Response::CreateTopics(created) => created.topics[0].error_code,
            other => panic!("not CreateTopics: {other:?}"),
        }
    }
}

/// Three brokers; topic "r" of 3 partitions with 2 replicas (`[p, p+1]`), "s" of 3 with 1.
async fn cluster() -> (Cluster, Client) {
    let cluster = paused_cluster(3, 30).build().await.expect("cluster");
    let mut client = Client::connect(&cluster, 0);
    for (name, replicas) in [("r", 2), ("s", 1)] {
        assert_eq!(client.create(name, 3, replicas).await, 0);
    }
    (cluster, client)
}

fn brokers(metadata: &MetadataResponse) -> Vec<i32> {
    metadata.brokers.iter().map(|b| b.node_id).collect()
}

fn partition<'a>(
    metadata: &'a MetadataResponse,
    topic: &str,
    index: i32,
) -> &'a MetadataResponsePartition {
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some(topic))
        .expect("topic listed");
    &topic.partitions[index as usize]
}

/// Error, leader, epoch, replicas, ISR, offline replicas.
type Shown = (i16, i32, i32, Vec<i32>, Vec<i32>, Vec<i32>);

fn shown(metadata: &MetadataResponse, topic: &str, index: i32) -> Shown {
    let p = partition(metadata, topic, index);
    (
        p.error_code,
        p.leader_id,
        p.leader_epoch,
        p.replica_nodes.iter().collect(),
        p.isr_nodes.iter().collect(),
        p.offline_replicas.iter().collect(),
    )
}

/// A group id that broker `node` coordinates, and a simple commit that creates the group.
async fn group_at(cluster: &Cluster, client: &mut Client, node: i32) -> String {
    for n in 0.. {
        let group = format!("group-{n}");
        if client.coordinator(&group).await != node {
            continue;
        }
        let commit = OffsetCommitRequest::default()
            .with_group_id(group.as_str().into())
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name("r".into())
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(1)])]);
        let mut at = Client::connect(cluster, node);
        let Response::OffsetCommit(committed) = at.call(8, commit).await else {
            panic!("not OffsetCommit")
        };
        assert_eq!(committed.topics[0].partitions[0].error_code, 0);
        return group;
    }
    unreachable!()
}

#[test]
fn a_stopped_broker_is_fenced_after_the_session_timeout_and_unfenced_when_back() {
    paused().block_on(async {
        let (cluster, mut client) = cluster().await;
        let control = cluster.control();
        let group = group_at(&cluster, &mut client, 1).await;
        let before = client.metadata(12).await;
        assert_eq!(
            shown(&before, "r", 1),
            (0, 1, 0, vec![1, 2], vec![1, 2], vec![])
        );

        control.stop_broker(1).expect("stop");
        // Within the session: still listed, still leading (clients wait for it).
        tokio::time::sleep(Duration::from_millis(8_990)).await;
        assert!(!control.is_fenced(1));
        let waiting = client.metadata(12).await;
        assert_eq!(brokers(&waiting), [0, 1, 2]);
        assert_eq!(shown(&waiting, "r", 1), shown(&before, "r", 1));

        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(control.is_fenced(1));
        let fenced = client.metadata(12).await;
        assert_eq!(brokers(&fenced), [0, 2], "a fenced broker is not listed");
        // Led by 1 with 2 in the ISR: 2 leads at the next epoch, 1 out of the ISR.
        assert_eq!(
            shown(&fenced, "r", 1),
            (0, 2, 1, vec![1, 2], vec![2], vec![1])
        );
        // 1 a follower: out of the ISR, the leader and epoch stay.
        assert_eq!(
            shown(&fenced, "r", 0),
            (0, 0, 0, vec![0, 1], vec![0], vec![1])
        );
        // 1 the only replica: offline, its ISR empty, as Kafka 4.4 leaves it with eligible
        // leader replicas on (1 is its ELR; `tests/elr.rs`).
        let offline = ErrorCode::LEADER_NOT_AVAILABLE.code();
        assert_eq!(
            shown(&fenced, "s", 1),
            (offline, -1, 1, vec![1], vec![], vec![1])
        );
        assert_eq!(shown(&fenced, "s", 2), (0, 2, 0, vec![2], vec![2], vec![]));
        // v0 lists the live replicas only, and says some are missing.
        let v0 = client.metadata(0).await;
        let r1 = partition(&v0, "r", 1);
        assert_eq!(r1.error_code, ErrorCode::REPLICA_NOT_AVAILABLE.code());
        assert_eq!(r1.replica_nodes.iter().collect::<Vec<_>>(), [2]);
        // DescribeCluster: left out, or listed as fenced when asked (v2).
        let described = client.describe_cluster(1, false).await;
        let ids: Vec<i32> = described.brokers.iter().map(|b| b.broker_id).collect();
        assert_eq!(ids, [0, 2]);
        let described = client.describe_cluster(2, true).await;
        let listed: Vec<(i32, bool)> = described
            .brokers
            .iter()
            .map(|b| (b.broker_id, b.is_fenced))
            .collect();
        assert_eq!(listed, [(0, false), (1, true), (2, false)]);
        // The group went to the next unfenced broker, and a new leader takes produce.
        assert_eq!(client.coordinator(&group).await, 2);
        let mut at_two = Client::connect(&cluster, 2);
        assert_eq!(at_two.produce("r", 1).await, 0);
        assert_eq!(
            at_two.produce("s", 1).await,
            ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
        );

        // Back: listed, leading its offline partition at the next epoch, and in each ISR
        // again once caught up on that partition; the partition it handed over stays with 2
        // (until the automatic rebalance, tests/rebalance.rs, or ElectLeaders), and so does
        // the group.
        control.restart_broker(1).expect("restart");
        assert!(!control.is_fenced(1));
        let back = client.metadata(12).await;
        assert_eq!(brokers(&back), [0, 1, 2]);
        assert_eq!(shown(&back, "r", 1), (0, 2, 1, vec![1, 2], vec![2], vec![]));
        // Each partition on its own: after one fetch round (`replica.fetch.wait.max.ms`,
        // 500 ms) r-0, which took no record while 1 was away; r-1, which took one, a round
        // later, once that round's fetch brought it. Each rejoin bumps the partition epoch,
        // not the leader epoch.
        let epoch = |p| control.partition("r", p).expect("r").partition_epoch;
        let (r0, r1) = (epoch(0), epoch(1));
        // Just past each round (a timer due at the same simulated instant may run after).
        tokio::time::sleep(Duration::from_millis(501)).await;
        let round = client.metadata(12).await;
        assert_eq!(
            shown(&round, "r", 0),
            (0, 0, 0, vec![0, 1], vec![0, 1], vec![])
        );
        assert_eq!(
            shown(&round, "r", 1),
            (0, 2, 1, vec![1, 2], vec![2], vec![])
        );
        assert_eq!((epoch(0), epoch(1)), (r0 + 1, r1));
        assert!(control.is_catching_up(1));
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!control.is_catching_up(1));
        assert_eq!((epoch(0), epoch(1)), (r0 + 1, r1 + 1));
        let back = client.metadata(12).await;
        assert_eq!(
            shown(&back, "r", 1),
            (0, 2, 1, vec![1, 2], vec![1, 2], vec![])
        );
        assert_eq!(shown(&back, "s", 1), (0, 1, 2, vec![1], vec![1], vec![]));
        assert_eq!(client.coordinator(&group).await, 2);
        let mut at_one = Client::connect(&cluster, 1);
        assert_eq!(at_one.produce("s", 1).await, 0);
    });
}

#[test]
fn a_broker_restarted_within_the_session_is_never_fenced() {
    paused().block_on(async {
        let (cluster, mut client) = cluster().await;
        let control = cluster.control();
        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(5)).await;
        control.restart_broker(1).expect("restart");
        // Stopped again: the session starts over.
        tokio::time::sleep(Duration::from_secs(1)).await;
        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(8)).await;
        assert!(!control.is_fenced(1));
        control.restart_broker(1).expect("restart");
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!control.is_fenced(1));
        let metadata = client.metadata(12).await;
        assert_eq!(brokers(&metadata), [0, 1, 2]);
        assert_eq!(
            shown(&metadata, "r", 1),
            (0, 1, 0, vec![1, 2], vec![1, 2], vec![])
        );
    });
}

#[test]
fn the_session_timeout_is_the_builders_and_fencing_by_hand_needs_a_stopped_broker() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .broker_session_timeout(Duration::from_millis(500))
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        assert_eq!(control.fence_broker(0), Err(OperationError::Up(0)));
        assert_eq!(
            control.fence_broker(7),
            Err(OperationError::NoSuchBroker(7))
        );
        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_millis(490)).await;
        assert!(!control.is_fenced(1));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(control.is_fenced(1));
        // Fencing it again moves nothing.
        let again = control.fence_broker(1).expect("fenced");
        assert!(again.moved_leaders.is_empty());
        // The last unfenced broker stopped and fenced by hand: nowhere to move its groups.
        control.stop_broker(0).expect("stop");
        let last = control.fence_broker(0).expect("fenced");
        assert_eq!(last.stand_in, None);
    });
}

#[test]
fn new_topics_are_placed_over_the_brokers_usable_now() {
    paused().block_on(async {
        let (cluster, mut client) = cluster().await;
        let control = cluster.control();
        assert_eq!(control.add_broker(None).expect("added").node_id, 3);
        // Over 0-3: broker 3 leads partition 3, and is a replica after 2.
        assert_eq!(client.create("after-add", 4, 2).await, 0);
        let metadata = client.metadata(12).await;
        let placed: Vec<(i32, Vec<i32>)> = (0..4)
            .map(|p| {
                let (_, leader, _, replicas, _, _) = shown(&metadata, "after-add", p);
                (leader, replicas)
            })
            .collect();
        assert_eq!(
            placed,
            [
                (0, vec![0, 1]),
                (1, vec![1, 2]),
                (2, vec![2, 3]),
                (3, vec![3, 0])
            ]
        );
        let mut at_three = Client::connect(&cluster, 3);
        assert_eq!(at_three.produce("after-add", 3).await, 0);
        // The topics before it stay where they were.
        assert_eq!(shown(&metadata, "r", 2).3, [2, 0]);

        // Broker 1 fenced: left out of new topics, and counted out of the replicas.
        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(control.is_fenced(1));
        assert_eq!(
            client.create("too-many", 1, 4).await,
            ErrorCode::INVALID_REPLICATION_FACTOR.code()
        );
        assert_eq!(client.create("after-fence", 3, 3).await, 0);
        let metadata = client.metadata(12).await;
        let placed: Vec<(i32, Vec<i32>, Vec<i32>)> = (0..3)
            .map(|p| {
                let (_, leader, _, replicas, isr, _) = shown(&metadata, "after-fence", p);
                (leader, replicas, isr)
            })
            .collect();
        assert_eq!(
            placed,
            [
                (0, vec![0, 2, 3], vec![0, 2, 3]),
                (2, vec![2, 3, 0], vec![2, 3, 0]),
                (3, vec![3, 0, 2], vec![3, 0, 2]),
            ]
        );

        // The placed leader is the preferred one: moved away, ElectLeaders brings it back.
        control.restart_broker(1).expect("restart");
        control.elect_leader("after-add", 3, 0).expect("moved");
        let request = ElectLeadersRequest::default()
            .with_election_type(0)
            .with_topic_partitions(Some(vec![TopicPartitions::default()
                .with_topic("after-add".into())
                .with_partitions(vec![3].into())]));
        let Response::ElectLeaders(elected) = client.call(2, request).await else {
            panic!("not ElectLeaders")
        };
        let result = &elected.replica_election_results[0].partition_result[0];
        assert_eq!(result.error_code, 0, "{:?}", result.error_message);
        assert_eq!(control.leader("after-add", 3), (3, 2));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_over_http() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    let mut client = support::Client::connect(cluster.brokers()[0].address, "fencing").await;
    support::make_topic(&mut client, 7, "t", 2, 2).await;
    let control = support::serve_control(&cluster).await;
    let (status, answer) = support::http(control, "POST", "/brokers/1/fence", None).await;
    assert_eq!(status, 409, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("broker 1 is up"));
    let (status, _) = support::http(control, "POST", "/brokers/1/stop", None).await;
    assert_eq!(status, 200);
    let (status, answer) = support::http(control, "POST", "/brokers/1/fence", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        kafka_codec::serde_json::json!({"id": 1, "standIn": 0, "movedGroups": [],
            "movedLeaders": [{"topic": "t", "partition": 1, "leader": 0}]})
    );
    let (_, brokers) = support::http(control, "GET", "/brokers", None).await;
    assert_eq!(brokers[1]["fenced"], true);
    assert_eq!(brokers[0]["fenced"], false);
    let (status, answer) = support::http(control, "POST", "/brokers/1/restart", None).await;
    assert_eq!(
        (status, &answer["fenced"]),
        (200, &kafka_codec::serde_json::json!(false))
    );
    let (status, _) = support::http(control, "POST", "/brokers/9/fence", None).await;
    assert_eq!(status, 404);
    let (status, _) = support::http(control, "GET", "/brokers/1/fence", None).await;
    assert_eq!(status, 405);
}
