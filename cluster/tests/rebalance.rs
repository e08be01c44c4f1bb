//! Kafka 4.4's automatic leader rebalance (`auto.leader.rebalance.enable`, every
//! `leader.imbalance.check.interval.seconds` from the controller's start: a partition
//! whose preferred replica is in its ISR and unfenced moves back to it), a running broker
//! fenced (heartbeats lost, listener up) answering as a follower, and an unfenced broker
//! rejoining the ISRs a follower fetch round (`replica.fetch.wait.max.ms`) later, its
//! partition epochs bumped and leader epochs kept. In memory, on a current-thread runtime
//! with the clock paused: the minutes cost no wall time.

use crate::support;

use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_codec::messages::{
    DescribeConfigsRequest, FetchRequest, ListOffsetsRequest, MetadataRequest, MetadataResponse,
};
use kafka_codec::serde_json::json;
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::control::OperationError;
use kafka_codec_cluster::{Cluster, ClusterBuilder};
use std::time::Duration;
use support::pipe::{paused, paused_cluster, PipeClient as Client};
use tokio::time::Instant;

trait RebalanceCalls {
    async fn create(&mut self, name: &str, partitions: i32, replicas: i16);
    async fn metadata(&mut self) -> MetadataResponse;
    async fn produce(&mut self, topic: &str, partition: i32) -> i16;
    /// A consumer's Fetch v10 naming `epoch`: its error code. v10, the last version a
    /// follower refuses at the current epoch (from v11 it serves the read, KIP-392).
    async fn fetch(&mut self, topic: &str, partition: i32, epoch: i32) -> i16;
    async fn list_offsets(&mut self, topic: &str, partition: i32, epoch: i32) -> i16;
}

impl RebalanceCalls for Client {
    async fn create(&mut self, name: &str, partitions: i32, replicas: i16) {
        support::make_topic(self, 7, name, partitions, replicas).await;
    }

    async fn metadata(&mut self) -> MetadataResponse {
        match self
            .call(12, MetadataRequest::default().with_topics(None))
            .await
        {
            Response::Metadata(body) => body,
            other => panic!("not Metadata: {other:?}"),
        }
    }

    async fn produce(&mut self, topic: &str, partition: i32) -> i16 {
        let request = support::produce(topic, partition, support::one_record());
        match self.call(9, request).await {
            Response::Produce(p) => p.responses[0].partition_responses[0].error_code,
            other => panic!("not Produce: {other:?}"),
        }
    }

    /// A Fetch v12 of `topic`'s `partition` naming `epoch`: its error code.
    async fn fetch(&mut self, topic: &str, partition: i32, epoch: i32) -> i16 {
        let request = FetchRequest::default()
            .with_max_wait_ms(0)
            .with_max_bytes(1 << 20)
            .with_topics(vec![FetchTopic::default()
                .with_topic(topic.into())
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(partition)
                    .with_current_leader_epoch(epoch)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20)])]);
        match self.call(10, request).await {
            Response::Fetch(f) => f.responses[0].partitions[0].error_code,
            other => panic!("not Fetch: {other:?}"),
        }
    }

    /// A ListOffsets v7 (latest) of `topic`'s `partition` naming `epoch`: its error code.
    async fn list_offsets(&mut self, topic: &str, partition: i32, epoch: i32) -> i16 {
        let request = ListOffsetsRequest::default()
            .with_replica_id(-1)
            .with_topics(vec![ListOffsetsTopic::default()
                .with_name(topic.into())
                .with_partitions(vec![ListOffsetsPartition::default()
                    .with_partition_index(partition)
                    .with_current_leader_epoch(epoch)
                    .with_timestamp(-1)])]);
        match self.call(7, request).await {
            Response::ListOffsets(l) => l.topics[0].partitions[0].error_code,
            other => panic!("not ListOffsets: {other:?}"),
        }
    }
}

fn three_brokers() -> ClusterBuilder {
    paused_cluster(3, 31)
}

/// Leader, leader epoch, partition epoch, ISR, as the control surface shows them.
fn shown(cluster: &Cluster, topic: &str, partition: i32) -> (i32, i32, i32, Vec<i32>) {
    let view = cluster
        .control()
        .partition(topic, partition)
        .expect("a partition");
    (view.leader.0, view.leader.1, view.partition_epoch, view.isr)
}

const NOT_LEADER: i16 = ErrorCode::NOT_LEADER_OR_FOLLOWER.code();
const FENCED_EPOCH: i16 = ErrorCode::FENCED_LEADER_EPOCH.code();
const UNKNOWN_EPOCH: i16 = ErrorCode::UNKNOWN_LEADER_EPOCH.code();

#[test]
fn a_fenced_leader_comes_back_at_the_first_check_after_it_caught_up() {
    paused().block_on(async {
        let cluster = three_brokers().build().await.expect("cluster");
        let start = Instant::now();
        let control = cluster.control();
        assert_eq!(
            control.leader_rebalance_interval(),
            Some(Duration::from_secs(300))
        );
        let mut client = Client::connect(&cluster, 0);
        // "r": partition p on [p, p+1].
        client.create("r", 3, 2).await;
        assert_eq!(shown(&cluster, "r", 1), (1, 0, 0, vec![1, 2]));

        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(control.is_fenced(1));
        // Led by 2 at epoch 1 (a leader change bumps both epochs); r-0 lost a follower, its
        // partition epoch alone moved.
        assert_eq!(shown(&cluster, "r", 1), (2, 1, 1, vec![2]));
        assert_eq!(shown(&cluster, "r", 0), (0, 0, 1, vec![0]));

        // Back at 20 s: unfenced at once, in the ISRs a follower fetch round (500 ms) later.
        tokio::time::sleep_until(start + Duration::from_secs(20)).await;
        control.restart_broker(1).expect("restart");
        assert!(!control.is_fenced(1));
        assert!(control.is_catching_up(1));
        tokio::time::sleep(Duration::from_millis(499)).await;
        assert_eq!(shown(&cluster, "r", 1), (2, 1, 1, vec![2]));
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert!(!control.is_catching_up(1));
        // The ISR expansion bumps the partition epoch, not the leader epoch.
        assert_eq!(shown(&cluster, "r", 1), (2, 1, 2, vec![1, 2]));
        assert_eq!(shown(&cluster, "r", 0), (0, 0, 2, vec![0, 1]));
        let metadata = client.metadata().await;
        let r1 = &metadata
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some("r"))
            .expect("r")
            .partitions[1];
        assert_eq!((r1.leader_id, r1.leader_epoch), (2, 1));
        assert_eq!(r1.isr_nodes.iter().collect::<Vec<_>>(), [1, 2]);

        // Still 2's until the controller's check, 300 s after it started.
        tokio::time::sleep_until(start + Duration::from_millis(299_990)).await;
        assert_eq!(control.leader("r", 1), (2, 1));
        tokio::time::sleep_until(start + Duration::from_millis(300_010)).await;
        assert_eq!(shown(&cluster, "r", 1), (1, 2, 3, vec![1, 2]));
        // The others were balanced: unchanged.
        assert_eq!(control.leader("r", 0), (0, 0));
        assert_eq!(control.leader("r", 2), (2, 0));

        // 2 is a follower at epoch 2 now: the old epoch is fenced, the current one is not its.
        let mut at_two = Client::connect(&cluster, 2);
        assert_eq!(at_two.produce("r", 1).await, NOT_LEADER);
        assert_eq!(at_two.fetch("r", 1, 1).await, FENCED_EPOCH);
        assert_eq!(at_two.fetch("r", 1, 2).await, NOT_LEADER);
        assert_eq!(at_two.fetch("r", 1, 3).await, UNKNOWN_EPOCH);
        assert_eq!(at_two.list_offsets("r", 1, 1).await, FENCED_EPOCH);
        // Broker 0 holds no replica of r-1: not its partition, whatever the epoch.
        let mut at_zero = Client::connect(&cluster, 0);
        assert_eq!(at_zero.fetch("r", 1, 1).await, NOT_LEADER);
        let mut at_one = Client::connect(&cluster, 1);
        assert_eq!(at_one.produce("r", 1).await, 0);
        assert_eq!(at_one.fetch("r", 1, 2).await, 0);
    });
}

#[test]
fn the_interval_and_the_off_switch_are_broker_configs() {
    paused().block_on(async {
        // Every 5 s: a leader moved by hand goes back to its preferred replica, in the ISR.
        let cluster = three_brokers()
            .broker_config("leader.imbalance.check.interval.seconds", "5")
            .build()
            .await
            .expect("cluster");
        let start = Instant::now();
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 0);
        client.create("t", 3, 3).await;
        tokio::time::sleep_until(start + Duration::from_secs(6)).await;
        assert_eq!(control.elect_leader("t", 0, 1).expect("moved"), 1);
        tokio::time::sleep_until(start + Duration::from_millis(9_990)).await;
        assert_eq!(control.leader("t", 0), (1, 1));
        tokio::time::sleep_until(start + Duration::from_millis(10_010)).await;
        assert_eq!(control.leader("t", 0), (0, 2));
        // DescribeConfigs: the setting as a static broker config, the switch at its default.
        let described = describe(&mut client, "0").await;
        assert_eq!(
            described,
            [
                ("auto.leader.rebalance.enable".into(), "true".into(), 5),
                (
                    "leader.imbalance.check.interval.seconds".into(),
                    "5".into(),
                    4
                ),
            ]
        );

        // Off: never moved back.
        let cluster = three_brokers()
            .broker_config("auto.leader.rebalance.enable", "false")
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        assert_eq!(control.leader_rebalance_interval(), None);
        let mut client = Client::connect(&cluster, 0);
        client.create("t", 3, 3).await;
        control.elect_leader("t", 0, 1).expect("moved");
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(control.leader("t", 0), (1, 1));
        assert_eq!(
            describe(&mut client, "2").await[0],
            ("auto.leader.rebalance.enable".into(), "false".into(), 4)
        );
        // The check by hand does what the timer would.
        assert_eq!(control.rebalance_leaders(), [("t".to_owned(), 0, 0)]);
        assert_eq!(control.leader("t", 0), (0, 2));

        // Unknown names, bad values and an interval Kafka refuses fail the build.
        for (name, value) in [
            ("leader.imbalance.per.broker.percentage", "10"),
            ("auto.leader.rebalance.enable", "yes"),
            ("leader.imbalance.check.interval.seconds", "0"),
        ] {
            let Err(error) = three_brokers().broker_config(name, value).build().await else {
                panic!("{name} = {value} taken")
            };
            assert!(error.to_string().contains(name), "{error}");
        }
    });
}

/// The two rebalance configs of broker `id` as DescribeConfigs v4 gives them: name, value,
/// source.
async fn describe(client: &mut Client, id: &str) -> Vec<(String, String, i8)> {
    let request =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(id.into())
            .with_configuration_keys(Some(vec![
                "auto.leader.rebalance.enable".into(),
                "leader.imbalance.check.interval.seconds".into(),
            ]))]);
    let Response::DescribeConfigs(described) = client.call(4, request).await else {
        panic!("not DescribeConfigs")
    };
    assert_eq!(described.results[0].error_code, 0);
    described.results[0]
        .configs
        .iter()
        .map(|c| {
            (
                c.name.as_str().to_owned(),
                c.value.as_deref().unwrap_or_default().to_owned(),
                c.config_source,
            )
        })
        .collect()
}

#[test]
fn a_running_broker_fenced_answers_as_a_follower_until_unfenced() {
    paused().block_on(async {
        let cluster = three_brokers()
            .broker_config("replica.fetch.wait.max.ms", "100")
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 0);
        client.create("r", 3, 2).await;
        let mut at_one = Client::connect(&cluster, 1);
        assert_eq!(at_one.produce("r", 1).await, 0);

        // Its heartbeats lost, its listener up: fenced now, no session to wait for.
        let fenced = control.fence_running_broker(1).expect("fenced");
        assert_eq!(fenced.moved_leaders, [("r".to_owned(), 1, 2)]);
        assert!(control.is_up(1) && control.is_fenced(1));
        // Still answering, on the same connection, as a follower at the new epoch.
        assert_eq!(at_one.produce("r", 1).await, NOT_LEADER);
        assert_eq!(at_one.fetch("r", 1, 0).await, FENCED_EPOCH);
        assert_eq!(at_one.list_offsets("r", 1, 0).await, FENCED_EPOCH);
        assert_eq!(at_one.fetch("r", 1, 1).await, NOT_LEADER);
        // Its Metadata lists the unfenced brokers, itself left out, and the new leader.
        let metadata = at_one.metadata().await;
        let brokers: Vec<i32> = metadata.brokers.iter().map(|b| b.node_id).collect();
        assert_eq!(brokers, [0, 2]);
        let mut at_two = Client::connect(&cluster, 2);
        assert_eq!(at_two.fetch("r", 1, 1).await, 0);

        // Heartbeats back: listed at once, in the ISRs 100 ms later; r-1 stays with 2
        // until the rebalance.
        control.unfence_broker(1).expect("unfenced");
        assert!(!control.is_fenced(1));
        assert_eq!(shown(&cluster, "r", 1), (2, 1, 1, vec![2]));
        tokio::time::sleep(Duration::from_millis(101)).await;
        assert_eq!(shown(&cluster, "r", 1), (2, 1, 2, vec![1, 2]));
        assert_eq!(control.rebalance_leaders(), [("r".to_owned(), 1, 1)]);
        assert_eq!(at_one.produce("r", 1).await, 0);

        // Fenced again and unfenced within the delay: the first timer does not count.
        control.fence_running_broker(1).expect("fenced");
        control.unfence_broker(1).expect("unfenced");
        tokio::time::sleep(Duration::from_millis(60)).await;
        control.fence_running_broker(1).expect("fenced");
        control.unfence_broker(1).expect("unfenced");
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(control.is_catching_up(1));
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(!control.is_catching_up(1));

        // A stopped broker sends no heartbeat: restart it instead.
        control.stop_broker(1).expect("stop");
        assert_eq!(control.unfence_broker(1), Err(OperationError::Stopped(1)));
        assert_eq!(
            control.unfence_broker(9),
            Err(OperationError::NoSuchBroker(9))
        );
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_a_running_broker_over_http() {
    let cluster = Cluster::builder()
        .brokers(2)
        .broker_config("replica.fetch.wait.max.ms", "0")
        .build()
        .await
        .expect("cluster");
    let mut client = support::Client::connect(cluster.brokers()[0].address, "rebalance").await;
    support::make_topic(&mut client, 7, "t", 2, 2).await;
    let control = support::serve_control(&cluster).await;
    let (status, answer) =
        support::http(control, "POST", "/brokers/1/fence?running=true", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"id": 1, "standIn": 0, "movedGroups": [],
            "movedLeaders": [{"topic": "t", "partition": 1, "leader": 0}]})
    );
    let (status, answer) = support::http(control, "POST", "/brokers/1/fence?up=1", None).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("\"up\""));
    let (status, _) = support::http(control, "POST", "/brokers/1/fence?running=maybe", None).await;
    assert_eq!(status, 400);
    let (_, brokers) = support::http(control, "GET", "/brokers", None).await;
    assert_eq!(
        (&brokers[1]["up"], &brokers[1]["fenced"]),
        (&json!(true), &json!(true))
    );
    let (_, partitions) = support::http(control, "GET", "/topics/t/partitions", None).await;
    assert_eq!(
        partitions["partitions"][1],
        json!({"partition": 1, "leader": 0, "leaderEpoch": 1, "partitionEpoch": 1,
            "replicas": [1, 0], "isr": [0], "offlineReplicas": [1]})
    );
    let (status, answer) = support::http(control, "POST", "/brokers/1/unfence", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["fenced"], json!(false));
    // Back in the ISR after the (here zero) catch-up delay; a hang guard only.
    let guard = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, brokers) = support::http(control, "GET", "/brokers", None).await;
        if brokers[1]["catchingUp"] == json!(false) {
            break;
        }
        assert!(Instant::now() < guard, "never caught up");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, answer) = support::http(control, "POST", "/leaders/rebalance", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"movedLeaders": [{"topic": "t", "partition": 1, "leader": 1}]})
    );
    // The ISR 1 rejoined in Kafka's expansion order (ascending for ids below 8), as Kafka
    // 4.4's c rejoined [a] of replicas [c,a] as [a,c] (`remove_broker_kafka.rs`).
    let (_, partitions) = support::http(control, "GET", "/topics/t/partitions", None).await;
    assert_eq!(
        partitions["partitions"][1],
        json!({"partition": 1, "leader": 1, "leaderEpoch": 2, "partitionEpoch": 3,
            "replicas": [1, 0], "isr": [0, 1], "offlineReplicas": []})
    );
    let (status, _) = support::http(control, "POST", "/brokers/1/stop", None).await;
    assert_eq!(status, 200);
    let (status, answer) = support::http(control, "POST", "/brokers/1/unfence", None).await;
    assert_eq!(status, 409, "{answer}");
    let (status, _) = support::http(control, "GET", "/topics/nope/partitions", None).await;
    assert_eq!(status, 404);
    let (status, _) = support::http(control, "GET", "/leaders/rebalance", None).await;
    assert_eq!(status, 405);
}

#[test]
fn new_partitions_are_placed_over_the_brokers_usable_now() {
    use kafka_codec::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_codec::messages::CreatePartitionsRequest;
    paused().block_on(async {
        let cluster = three_brokers().build().await.expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 0);
        // Over 0-2: g-0 on [0, 1], g-1 on [1, 2].
        client.create("g", 2, 2).await;
        assert_eq!(control.add_broker(None).expect("added").node_id, 3);
        // Over 0-3: four replicas of its one partition.
        client.create("wide", 1, 4).await;
        control.stop_broker(1).expect("stop");
        control.fence_broker(1).expect("fenced");

        let grow = |name: &str, count: i32| {
            CreatePartitionsRequest::default()
                .with_timeout_ms(1000)
                .with_topics(vec![CreatePartitionsTopic::default()
                    .with_name(name.into())
                    .with_count(count)
                    .with_assignments(None)])
        };
        let Response::CreatePartitions(grown) = client.call(3, grow("g", 5)).await else {
            panic!("not CreatePartitions")
        };
        assert_eq!(grown.results[0].error_code, 0);
        // g-2..g-4 over the usable brokers [0, 2, 3], partition p led by the (p mod 3)-th;
        // the partitions before them stay where they were.
        let placed: Vec<(i32, Vec<i32>, Vec<i32>)> = (0..5)
            .map(|p| {
                let view = control.partition("g", p).expect("a partition");
                (view.leader.0, view.replicas, view.isr)
            })
            .collect();
        assert_eq!(
            placed,
            [
                (0, vec![0, 1], vec![0]),
                (2, vec![1, 2], vec![2]),
                (3, vec![3, 0], vec![3, 0]),
                (0, vec![0, 2], vec![0, 2]),
                (2, vec![2, 3], vec![2, 3]),
            ]
        );
        let mut at_three = Client::connect(&cluster, 3);
        assert_eq!(at_three.produce("g", 2).await, 0);
        // Four replicas a partition, three brokers usable: refused, nothing added.
        let Response::CreatePartitions(refused) = client.call(3, grow("wide", 2)).await else {
            panic!("not CreatePartitions")
        };
        assert_eq!(
            refused.results[0].error_code,
            ErrorCode::INVALID_REPLICATION_FACTOR.code()
        );
        assert!(control.partition("wide", 1).is_err());
        // Back (unfenced), 1 is usable again for the next ones: g-5 on [1, 2].
        control.restart_broker(1).expect("restart");
        let Response::CreatePartitions(grown) = client.call(3, grow("g", 6)).await else {
            panic!("not CreatePartitions")
        };
        assert_eq!(grown.results[0].error_code, 0);
        let view = control.partition("g", 5).expect("a partition");
        assert_eq!((view.leader.0, view.replicas), (1, vec![1, 2]));
    });
}

#[test]
fn coordinators_moved_by_a_fence_come_back_with_the_rebalance() {
    use kafka_codec::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use kafka_codec::messages::OffsetCommitRequest;
    paused().block_on(async {
        let cluster = three_brokers().build().await.expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 0);
        client.create("r", 1, 1).await;
        // Two group ids broker 1 coordinates by Kafka's rule: one with a commit before the
        // fence, one first seen while it is fenced.
        let mut ids = Vec::new();
        for n in 0.. {
            let group = format!("group-{n}");
            if coordinator(&mut client, &group).await == 1 {
                ids.push(group);
                if ids.len() == 2 {
                    break;
                }
            }
        }
        let commit = OffsetCommitRequest::default()
            .with_group_id(ids[0].as_str().into())
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name("r".into())
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(1)])]);
        let mut at_one = Client::connect(&cluster, 1);
        let Response::OffsetCommit(committed) = at_one.call(8, commit).await else {
            panic!("not OffsetCommit")
        };
        assert_eq!(committed.topics[0].partitions[0].error_code, 0);

        control.stop_broker(1).expect("stop");
        control.fence_broker(1).expect("fenced");
        assert_eq!(coordinator(&mut client, &ids[0]).await, 2);
        assert_eq!(coordinator(&mut client, &ids[1]).await, 2);
        // Back, and caught up: still the stand-in's until the rebalance's check, as the
        // leadership of their `__consumer_offsets` partitions stays moved until then.
        control.restart_broker(1).expect("restart");
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!control.is_catching_up(1));
        assert_eq!(coordinator(&mut client, &ids[0]).await, 2);
        assert_eq!(coordinator(&mut client, &ids[1]).await, 2);
        control.rebalance_leaders();
        assert_eq!(coordinator(&mut client, &ids[0]).await, 1);
        assert_eq!(coordinator(&mut client, &ids[1]).await, 1);
    });
}

/// The coordinator FindCoordinator v3 names for `group`.
async fn coordinator(client: &mut Client, group: &str) -> i32 {
    let request = kafka_codec::messages::FindCoordinatorRequest::default().with_key(group.into());
    let Response::FindCoordinator(found) = client.call(3, request).await else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.error_code, 0);
    found.node_id
}
