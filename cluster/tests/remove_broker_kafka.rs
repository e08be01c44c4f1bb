//! Removing a broker compared with Kafka 4.4: a broker shut down (controlled: it is fenced at
//! once) and then unregistered (UnregisterBroker, as `kafka-cluster unregister` sends it).
//! `data/remove-broker-kafka-4.4.txt` holds what a real cluster (one controller, brokers a, b
//! and c: `tools/kafka-broker/cluster.sh --brokers 3`) showed, step by step: every partition
//! of topics "one" ([c], [a]), "two" ([c,a], [a,c]) and "three" ([c,a,b], [a,c,b]) as Metadata and
//! DescribeTopicPartitions list it (leader, leader epoch, replicas, ISR, ELR, last known ELR,
//! offline replicas, error code), the brokers Metadata lists and those registered
//! (DescribeCluster v2 with the fenced ones), what a Produce (acks all) of
//! each partition sent to a gets, and the UnregisterBroker answer, with node ids as letters;
//! then c is started again (`cluster.sh start-broker`: it registers anew, same id) and the
//! same is recorded once nothing changes any more.
//! The plain test replays the steps on the paused clock (`stop_broker` + `fence_broker`,
//! then the UnregisterBroker request alone; and `remove_broker` of the running broker at
//! once; then `restart_broker`) and compares; the
//! ignored one compares a live Kafka with the file (`KAFKA_CODEC_RECORD=1` rewrites it).
//!
//! `data/unregister-running-kafka-4.4.txt` holds the same cluster's answers to
//! UnregisterBroker of c while it runs (`running_steps`): c is fenced and unregistered as
//! if stopped first, keeps answering (from the same metadata: a Produce for a partition it
//! led is NOT_LEADER_OR_FOLLOWER naming the new leader), is not back 15 s later, and
//! registers anew once stopped and started again.

use crate::support;

use kafka_codec::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_codec::messages::{
    CreateTopicsRequest, DescribeClusterRequest, DescribeTopicPartitionsRequest, MetadataRequest,
    UnregisterBrokerRequest,
};
use kafka_codec::Response;
use std::time::Duration;
use support::pipe::{paused, paused_cluster, PipeClient};
use support::Calls;

/// The topics and their partitions' replicas, by role (Kafka takes one replication factor
/// per topic).
const TOPICS: [(&str, &[&[char]]); 3] = [
    ("one", &[&['c'], &['a']]),
    ("two", &[&['c', 'a'], &['a', 'c']]),
    ("three", &[&['c', 'a', 'b'], &['a', 'c', 'b']]),
];

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "remove-broker-kafka-4.4.txt";

/// One side of the comparison: the cluster on the paused clock, or a live Kafka.
#[allow(async_fn_in_trait)]
trait Side {
    fn client(&mut self) -> &mut impl Calls;
    /// The node id of broker `role`.
    fn node(&self, role: char) -> i32;
    /// Returns once every partition has its leader and full ISR.
    async fn created(&mut self);
    /// Stops broker `role` gracefully; returns once it is fenced.
    async fn stop(&mut self, role: char);
    /// Returns once the controller acted on the unregistration of `role` (`before`: the
    /// state lines before it).
    async fn unregistered(&mut self, role: char, before: &[String]);
    /// Starts unregistered broker `role` again; returns once it is registered and nothing
    /// changes any more.
    async fn restart(&mut self, role: char);
    /// The requests that follow go to broker `role` (to a at first).
    fn talk_to(&mut self, role: char);
    /// Lets `seconds` pass.
    async fn wait(&mut self, seconds: u64);
    /// Stops running broker `role` gracefully (it was unregistered: nothing to wait for).
    async fn stop_unregistered(&mut self, role: char);
}

/// Creates the topics; returns once every partition has its leader and full ISR.
async fn create(side: &mut impl Side) {
    let topics = TOPICS
        .iter()
        .map(|(name, partitions)| {
            let assignments = partitions
                .iter()
                .enumerate()
                .map(|(index, roles)| {
                    let ids: Vec<i32> = roles.iter().map(|&r| side.node(r)).collect();
                    CreatableReplicaAssignment::default()
                        .with_partition_index(index as i32)
                        .with_broker_ids(ids.into())
                })
                .collect();
            CreatableTopic::default()
                .with_name((*name).into())
                .with_num_partitions(-1)
                .with_replication_factor(-1)
                .with_assignments(assignments)
        })
        .collect();
    let request = CreateTopicsRequest::default().with_topics(topics);
    let Response::CreateTopics(created) = side.client().call(7, request).await else {
        panic!("not CreateTopics")
    };
    for topic in &created.topics {
        assert_eq!(topic.error_code, 0, "{topic:?}");
    }
    side.created().await;
}

async fn steps(side: &mut impl Side) -> Vec<String> {
    create(side).await;
    let mut lines = state_lines(side, "all up").await;
    lines.extend(produce_lines(side, "all up").await);
    side.stop('c').await;
    lines.extend(state_lines(side, "c stopped").await);
    lines.extend(produce_lines(side, "c stopped").await);
    let before = state_lines(side, "").await;
    let request = UnregisterBrokerRequest::default().with_broker_id(side.node('c'));
    let answer = side.client().call(0, request).await;
    let json = kafka_codec::ResponseFrame::new(answer, 0, 0)
        .to_json()
        .expect("json")["body"]
        .to_string();
    lines.push(format!("unregister c\t{json}"));
    side.unregistered('c', &before).await;
    lines.extend(state_lines(side, "c unregistered").await);
    lines.extend(produce_lines(side, "c unregistered").await);
    side.restart('c').await;
    lines.extend(state_lines(side, "c restarted").await);
    lines.extend(produce_lines(side, "c restarted").await);
    lines
}

/// UnregisterBroker of running broker c (sent to a): the state and a's Produce answers once
/// the controller acted on it (and the answer to a second UnregisterBroker of c), then what c itself answers (Metadata, DescribeTopicPartitions,
/// DescribeCluster and a Produce of each partition, sent to c), then the state again 15 s
/// later (c does not come back), then c stopped and started again.
async fn running_steps(side: &mut impl Side) -> Vec<String> {
    create(side).await;
    let mut lines = state_lines(side, "all up").await;
    let before = state_lines(side, "").await;
    let request = UnregisterBrokerRequest::default().with_broker_id(side.node('c'));
    let answer = side.client().call(0, request).await;
    let json = kafka_codec::ResponseFrame::new(answer, 0, 0)
        .to_json()
        .expect("json")["body"]
        .to_string();
    lines.push(format!("unregister running c\t{json}"));
    side.unregistered('c', &before).await;
    // Once more: no longer registered.
    let request = UnregisterBrokerRequest::default().with_broker_id(side.node('c'));
    let answer = side.client().call(0, request).await;
    let mut json = kafka_codec::ResponseFrame::new(answer, 0, 0)
        .to_json()
        .expect("json")["body"]
        .to_string();
    json = json.replace(&format!("ID {} ", side.node('c')), "ID <c> ");
    lines.push(format!("unregister running c again\t{json}"));
    lines.extend(state_lines(side, "c unregistered").await);
    lines.extend(produce_lines(side, "c unregistered").await);
    side.talk_to('c');
    lines.extend(state_lines(side, "asking c").await);
    lines.extend(produce_lines(side, "asking c").await);
    side.talk_to('a');
    side.wait(15).await;
    lines.extend(state_lines(side, "15 s later").await);
    side.stop_unregistered('c').await;
    lines.extend(state_lines(side, "c stopped").await);
    side.restart('c').await;
    lines.extend(state_lines(side, "c restarted").await);
    lines.extend(produce_lines(side, "c restarted").await);
    lines
}

/// A node id as a letter (`-` for -1).
fn letter(side: &impl Side, id: i32) -> String {
    match ['a', 'b', 'c'].into_iter().find(|&r| side.node(r) == id) {
        Some(role) => role.to_string(),
        None if id == -1 => "-".into(),
        None => format!("?{id}"),
    }
}

fn letters(side: &impl Side, ids: impl IntoIterator<Item = i32>) -> String {
    let ids: Vec<String> = ids.into_iter().map(|id| letter(side, id)).collect();
    format!("[{}]", ids.join(","))
}

/// The brokers Metadata lists, then each partition (Metadata v12 and
/// DescribeTopicPartitions v0), node ids as letters.
async fn state_lines(side: &mut impl Side, step: &str) -> Vec<String> {
    use kafka_codec::messages::describe_topic_partitions_request::TopicRequest;
    use kafka_codec::messages::metadata_request::MetadataRequestTopic;
    let names = || TOPICS.iter().map(|(name, _)| *name);
    let request = MetadataRequest::default()
        .with_topics(Some(
            names()
                .map(|name| MetadataRequestTopic::default().with_name(Some(name.into())))
                .collect(),
        ))
        .with_allow_auto_topic_creation(false);
    let Response::Metadata(metadata) = side.client().call(12, request).await else {
        panic!("not Metadata")
    };
    let request = DescribeTopicPartitionsRequest::default()
        .with_topics(
            names()
                .map(|name| TopicRequest::default().with_name(name.into()))
                .collect(),
        )
        .with_response_partition_limit(10);
    let Response::DescribeTopicPartitions(described) = side.client().call(0, request).await else {
        panic!("not DescribeTopicPartitions")
    };
    let mut brokers: Vec<i32> = metadata.brokers.iter().map(|b| b.node_id).collect();
    brokers.sort_unstable();
    let mut lines = vec![format!("brokers {step}\t{}", letters(side, brokers))];
    // The brokers registered, fenced ones too (DescribeCluster v2).
    let request = DescribeClusterRequest::default().with_include_fenced_brokers(true);
    let Response::DescribeCluster(cluster) = side.client().call(2, request).await else {
        panic!("not DescribeCluster")
    };
    let mut registered: Vec<(i32, bool)> = cluster
        .brokers
        .iter()
        .map(|b| (b.broker_id, b.is_fenced))
        .collect();
    registered.sort_unstable();
    let registered: Vec<String> = registered
        .into_iter()
        .map(|(id, fenced)| {
            let fenced = if fenced { " fenced" } else { "" };
            format!("{}{fenced}", letter(side, id))
        })
        .collect();
    lines.push(format!("registered {step}\t[{}]", registered.join(",")));
    let list = |list: &Option<kafka_codec::wire::PrimitiveArray<i32>>| -> Vec<i32> {
        list.as_ref()
            .map(|l| l.iter().collect())
            .unwrap_or_default()
    };
    for name in names() {
        let topic = metadata
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
            .expect("in Metadata");
        let topic_described = described
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
            .expect("described");
        let mut partitions: Vec<_> = topic.partitions.iter().collect();
        partitions.sort_by_key(|p| p.partition_index);
        for p in partitions {
            let d = topic_described
                .partitions
                .iter()
                .find(|d| d.partition_index == p.partition_index)
                .expect("described");
            lines.push(format!(
                "metadata {step}\t{name}-{} error={} leader={} epoch={} replicas={} isr={} \
                 offline={}",
                p.partition_index,
                p.error_code,
                letter(side, p.leader_id),
                p.leader_epoch,
                letters(side, p.replica_nodes.iter()),
                letters(side, p.isr_nodes.iter()),
                letters(side, p.offline_replicas.iter()),
            ));
            lines.push(format!(
                "describe {step}\t{name}-{} error={} leader={} epoch={} replicas={} isr={} \
                 elr={} last_known_elr={} offline={}",
                d.partition_index,
                d.error_code,
                letter(side, d.leader_id),
                d.leader_epoch,
                letters(side, d.replica_nodes.iter()),
                letters(side, d.isr_nodes.iter()),
                letters(side, list(&d.eligible_leader_replicas)),
                letters(side, list(&d.last_known_elr)),
                letters(side, d.offline_replicas.iter()),
            ));
        }
    }
    if step.is_empty() {
        // For comparing before and after: the partitions only.
        lines.remove(0);
    }
    lines
}

/// A Produce v12 (acks all) of one record to each partition, sent to broker a: its
/// error code, current leader and the brokers it names.
async fn produce_lines(side: &mut impl Side, step: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let partitions = TOPICS
        .iter()
        .flat_map(|(name, partitions)| (0..partitions.len() as i32).map(move |p| (*name, p)));
    for (name, partition) in partitions {
        let request = support::produce(name, partition, support::batch(0, 1));
        let Response::Produce(produced) = side.client().call(12, request).await else {
            panic!("not Produce")
        };
        let p = &produced.responses[0].partition_responses[0];
        let endpoints: Vec<i32> = produced.node_endpoints.iter().map(|n| n.node_id).collect();
        lines.push(format!(
            "produce {step}\t{name}-{partition} error={} base_offset={} current_leader={} \
             current_epoch={} node_endpoints={}",
            p.error_code,
            p.base_offset,
            letter(side, p.current_leader.leader_id),
            p.current_leader.leader_epoch,
            letters(side, endpoints),
        ));
    }
    lines
}

struct InMemory {
    cluster: kafka_codec_cluster::Cluster,
    client: PipeClient,
    /// A client of broker c, and whether the requests go to it.
    client_c: PipeClient,
    asking_c: bool,
    /// Remove broker c while it runs, without stopping it first.
    remove_running: bool,
}

impl Side for InMemory {
    fn client(&mut self) -> &mut impl Calls {
        if self.asking_c {
            &mut self.client_c
        } else {
            &mut self.client
        }
    }
    fn talk_to(&mut self, role: char) {
        self.asking_c = role == 'c';
    }
    async fn wait(&mut self, seconds: u64) {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    async fn stop_unregistered(&mut self, role: char) {
        self.cluster
            .control()
            .stop_broker(self.node(role))
            .expect("stop");
    }
    fn node(&self, role: char) -> i32 {
        role as i32 - 'a' as i32
    }
    async fn created(&mut self) {}
    async fn stop(&mut self, role: char) {
        if self.remove_running {
            // Removed while it runs, instead of stopped: the UnregisterBroker request that
            // follows finds it gone.
            self.cluster
                .control()
                .remove_broker(self.node(role))
                .expect("remove");
            return;
        }
        let control = self.cluster.control();
        control.stop_broker(self.node(role)).expect("stop");
        control.fence_broker(self.node(role)).expect("fence");
    }
    async fn unregistered(&mut self, _: char, _: &[String]) {
        // The UnregisterBroker request acted at once.
    }
    async fn restart(&mut self, role: char) {
        self.cluster
            .control()
            .restart_broker(self.node(role))
            .expect("an unregistered broker registers again");
        // Its catch-up (a follower fetch round) on the paused clock.
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
}

fn in_memory_side(cluster: kafka_codec_cluster::Cluster, remove_running: bool) -> InMemory {
    let client = PipeClient::connect(&cluster, 0);
    let client_c = PipeClient::connect(&cluster, 2);
    InMemory {
        cluster,
        client,
        client_c,
        asking_c: false,
        remove_running,
    }
}

fn in_memory(remove_running: bool) -> Vec<String> {
    paused().block_on(async {
        let cluster = paused_cluster(3, 41).build().await.expect("cluster");
        steps(&mut in_memory_side(cluster, remove_running)).await
    })
}

#[test]
fn removing_a_broker_answers_as_kafka_recorded() {
    let got = in_memory(false);
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "cluster");
}

/// Removing a running broker (`remove_broker`, where the others stop it) ends as removing
/// one stopped and fenced first (the Produce answers aside: their offsets count the records
/// produced while c was stopped).
#[test]
fn removing_a_running_broker_ends_as_removing_a_stopped_one() {
    let want = support::fixture_lines(FIXTURE);
    let got = in_memory(true);
    let ended = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|line| line.contains(" c unregistered\t") && !line.starts_with("produce"))
            .cloned()
            .collect()
    };
    support::assert_same_lines(&ended(&got), &ended(&want), "removed running");
}

/// The brokers DescribeCluster v2 lists, fenced ones included.
async fn registered(client: &mut impl Calls) -> Vec<i32> {
    let request = DescribeClusterRequest::default().with_include_fenced_brokers(true);
    let Response::DescribeCluster(described) = client.call(2, request).await else {
        panic!("not DescribeCluster")
    };
    described.brokers.iter().map(|b| b.broker_id).collect()
}

/// UnregisterBroker of a broker stopped but not fenced yet (its session running): fenced
/// and gone at once, as Kafka's controller unregisters it, and registered again (same id)
/// when restarted; of a running broker: fenced and gone too while it keeps running, and
/// registered again when restarted (stopped first or not).
#[test]
fn unregister_broker_takes_a_stopped_or_running_broker_out() {
    paused().block_on(async {
        let cluster = paused_cluster(3, 42).build().await.expect("cluster");
        let control = cluster.control();
        let mut client = PipeClient::connect(&cluster, 0);
        control.stop_broker(2).expect("stop");
        assert!(!control.is_fenced(2));
        let request = UnregisterBrokerRequest::default().with_broker_id(2);
        let Response::UnregisterBroker(answer) = client.call(0, request).await else {
            panic!("not UnregisterBroker")
        };
        assert_eq!(answer.error_code, 0);
        assert_eq!(registered(&mut client).await, [0, 1]);
        control.restart_broker(2).expect("registers again");
        assert_eq!(registered(&mut client).await, [0, 1, 2]);
        assert!(control.is_up(2));
        let request = UnregisterBrokerRequest::default().with_broker_id(1);
        let Response::UnregisterBroker(answer) = client.call(0, request).await else {
            panic!("not UnregisterBroker")
        };
        assert_eq!(answer.error_code, 0);
        assert_eq!(registered(&mut client).await, [0, 2]);
        assert!(control.is_up(1) && control.is_fenced(1));
        // Unregistered already: Kafka's controller no longer knows the id.
        let request = UnregisterBrokerRequest::default().with_broker_id(1);
        let Response::UnregisterBroker(answer) = client.call(0, request).await else {
            panic!("not UnregisterBroker")
        };
        assert_eq!(answer.error_code, 102, "BROKER_ID_NOT_REGISTERED");
        control.restart_broker(1).expect("registers again");
        assert_eq!(registered(&mut client).await, [0, 1, 2]);
        assert!(control.is_up(1) && !control.is_fenced(1));
        let mut to_1 = PipeClient::connect(&cluster, 1);
        assert_eq!(registered(&mut to_1).await, [0, 1, 2]);
    });
}

struct Live {
    client: support::Client,
    /// A client of broker c, and whether the requests go to it.
    client_c: support::Client,
    asking_c: bool,
}

impl Live {
    /// Until `done` holds of the state lines, or `limit` passes (`Err`).
    async fn until(&mut self, limit: Duration, done: impl Fn(&[String]) -> bool) -> Result<(), ()> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let lines = state_lines(self, "now").await;
            if done(&lines) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Side for Live {
    fn client(&mut self) -> &mut impl Calls {
        if self.asking_c {
            &mut self.client_c
        } else {
            &mut self.client
        }
    }
    fn talk_to(&mut self, role: char) {
        self.asking_c = role == 'c';
    }
    async fn wait(&mut self, seconds: u64) {
        tokio::time::sleep(Duration::from_secs(seconds)).await;
    }
    async fn stop_unregistered(&mut self, role: char) {
        let node = self.node(role).to_string();
        let started = std::time::Instant::now();
        let done = std::process::Command::new("bash")
            .args([support::KAFKA_CLUSTER_SCRIPT, "stop-broker", &node])
            .status()
            .expect("cluster.sh");
        assert!(done.success(), "cluster.sh stop-broker {node}");
        eprintln!("{role} stopped in {:?}", started.elapsed());
    }
    fn node(&self, role: char) -> i32 {
        role as i32 - 'a' as i32 + 2
    }
    async fn created(&mut self) {
        let full = self
            .until(Duration::from_secs(30), |lines| {
                lines.iter().filter(|l| l.starts_with("describe")).all(|l| {
                    let replicas = l
                        .split(" replicas=")
                        .nth(1)
                        .and_then(|r| r.split(' ').next());
                    let isr = l.split(" isr=").nth(1).and_then(|r| r.split(' ').next());
                    !l.contains("leader=-") && replicas == isr
                })
            })
            .await;
        full.expect("every partition led, its ISR full, in 30 s");
        // A broker's metadata cache names it leader a moment before it acts as one (a
        // Produce then is NOT_LEADER_OR_FOLLOWER naming itself): until ListOffsets of each
        // partition a leads is answered without an error.
        use kafka_codec::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
        use kafka_codec::messages::ListOffsetsRequest;
        let led_by_a = TOPICS.iter().flat_map(|(name, partitions)| {
            partitions
                .iter()
                .enumerate()
                .filter(|(_, roles)| roles[0] == 'a')
                .map(move |(index, _)| (*name, index as i32))
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        for (name, index) in led_by_a {
            loop {
                let request = ListOffsetsRequest::default()
                    .with_replica_id(-1)
                    .with_topics(vec![ListOffsetsTopic::default()
                        .with_name(name.into())
                        .with_partitions(vec![ListOffsetsPartition::default()
                            .with_partition_index(index)
                            .with_timestamp(-1)])]);
                let Response::ListOffsets(listed) = self.client.call(8, request).await else {
                    panic!("not ListOffsets")
                };
                if listed.topics[0].partitions[0].error_code == 0 {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{name}-{index} led by a"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    async fn stop(&mut self, role: char) {
        let node = self.node(role).to_string();
        let done = std::process::Command::new("bash")
            .args([support::KAFKA_CLUSTER_SCRIPT, "stop-broker", &node])
            .status()
            .expect("cluster.sh");
        assert!(done.success(), "cluster.sh stop-broker {node}");
        let leader = format!("leader={role} ");
        let fenced = self
            .until(Duration::from_secs(60), |lines| {
                let listed = lines[0].split('\t').nth(1).unwrap_or_default();
                !listed.contains(role) && !lines.iter().any(|l| l.contains(&leader))
            })
            .await;
        fenced.expect("fenced in 60 s");
    }
    async fn unregistered(&mut self, _: char, before: &[String]) {
        // The controller's records reach the broker answering a moment later; no change
        // within 5 s: the unregistration changed nothing it shows.
        let changed = |lines: &[String]| {
            let now = lines.iter().skip(1).map(|l| l.replace(" now\t", " \t"));
            !now.eq(before.iter().cloned())
        };
        let _ = self.until(Duration::from_secs(5), changed).await;
        // And nothing more changes within the next 2 s.
        let settled = state_lines(self, "now").await;
        let _ = self
            .until(Duration::from_secs(2), |lines| lines != settled)
            .await;
    }
    async fn restart(&mut self, role: char) {
        let node = self.node(role).to_string();
        let started = std::time::Instant::now();
        let done = std::process::Command::new("bash")
            .args([support::KAFKA_CLUSTER_SCRIPT, "start-broker", &node])
            .status()
            .expect("cluster.sh");
        assert!(done.success(), "cluster.sh start-broker {node}");
        let listed = self
            .until(Duration::from_secs(60), |lines| {
                lines[0]
                    .split('\t')
                    .nth(1)
                    .unwrap_or_default()
                    .contains(role)
            })
            .await;
        listed.expect("listed again in 60 s");
        eprintln!("{role} listed {:?} after start-broker", started.elapsed());
        // Then until nothing changes for 5 s (its catch-up, the ISRs it rejoins).
        let limit = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut last = state_lines(self, "now").await;
        while tokio::time::Instant::now() < limit {
            let same = last.clone();
            if self
                .until(Duration::from_secs(5), |lines| lines != same)
                .await
                .is_err()
            {
                break;
            }
            last = state_lines(self, "now").await;
        }
        eprintln!("{role} settled {:?} after start-broker", started.elapsed());
    }
}

/// A live cluster's side (`brokers` as `with_kafka_cluster` gives them) in the steps of
/// `running` ones or the others.
fn live(brokers: &[(i32, std::net::SocketAddr)], running: bool) -> Vec<String> {
    let address = |id: i32| {
        brokers
            .iter()
            .find(|(node, _)| *node == id)
            .map(|(_, address)| *address)
            .expect("broker listed")
    };
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(async {
            let client = support::Client::connect(address(2), "remove-live").await;
            let client_c = support::Client::connect(address(4), "remove-live").await;
            let mut side = Live {
                client,
                client_c,
                asking_c: false,
            };
            if running {
                running_steps(&mut side).await
            } else {
                steps(&mut side).await
            }
        })
}

/// Kafka in the same steps (three brokers and a controller); `KAFKA_CODEC_RECORD=1`
/// rewrites the fixture.
///
/// Not in CI (`tools/ci-live.sh`): measured on 2026-12-07, load 13-17 on 2 cores, one
/// after another (`cargo test -p kafka-codec-cluster --test cluster -- --ignored MOD::`),
/// the live halves of the 3-node comparisons take 46 s (elect_leaders_unclean), 44 s
/// (elect_leaders_preferred_kafka), 23 s (remove_broker_kafka; 37 s since it restarts c,
/// measured twice at load 10-14) and 31 s (move_leader_kafka) wall, 158 s in all; each stops or restarts brokers of its own
/// cluster, and their steps alone pass 60 s even in one cluster start.
#[test]
#[ignore = "starts a real Kafka cluster (four JVMs): tools/kafka-broker/cluster.sh"]
fn kafka_removes_a_broker_as_recorded() {
    let got = support::with_kafka_cluster(3, |brokers| live(&brokers, false));
    let header = "# What Kafka 4.4 showed (one controller, brokers a=2, b=3, c=4), recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # --ignored remove_broker_kafka: topics one ([c], [a]), two ([c,a], [a,c])\n\
                  # and three ([c,a,b], [a,c,b]) as Metadata v12 and DescribeTopicPartitions\n\
                  # v0 list them, the brokers registered (DescribeCluster v2), and a Produce\n\
                  # v12 (acks all) of each partition sent to a, as c is stopped gracefully,\n\
                  # then unregistered (UnregisterBroker v0 sent to a), then started\n\
                  # again (cluster.sh start-broker) until nothing changed for 5 s.\n";
    if !support::recorded(FIXTURE, header, &got) {
        support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
    }
}

/// The recorded answers to UnregisterBroker of a running broker (`tests/data/`).
const RUNNING_FIXTURE: &str = "unregister-running-kafka-4.4.txt";

/// UnregisterBroker of running broker c answers as Kafka 4.4's cluster did.
#[test]
fn unregistering_a_running_broker_answers_as_kafka_recorded() {
    let got = paused().block_on(async {
        let cluster = paused_cluster(3, 43).build().await.expect("cluster");
        running_steps(&mut in_memory_side(cluster, false)).await
    });
    support::assert_same_lines(&got, &support::fixture_lines(RUNNING_FIXTURE), "cluster");
}

/// UnregisterBroker of a running broker on Kafka (three brokers and a controller), in
/// `running_steps`; `KAFKA_CODEC_RECORD=1` rewrites the fixture. 78-84 s wall (measured
/// 2026-12-08, load 2-9 on 2 cores: c's 15 s unwatched, its stop killed after 30 s, its
/// restart); not in CI, as the other 3-node comparisons.
#[test]
#[ignore = "starts a real Kafka cluster (four JVMs): tools/kafka-broker/cluster.sh; \
            cargo test -p kafka-codec-cluster --test cluster -- --ignored \
            remove_broker_kafka::kafka_unregisters_a_running_broker_as_recorded"]
fn kafka_unregisters_a_running_broker_as_recorded() {
    let got = support::with_kafka_cluster(3, |brokers| live(&brokers, true));
    let header = "# What Kafka 4.4 showed (one controller, brokers a=2, b=3, c=4), recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # --ignored remove_broker_kafka::kafka_unregisters_a_running: topics one\n\
                  # ([c], [a]), two ([c,a], [a,c]) and three ([c,a,b], [a,c,b]) as Metadata v12\n\
                  # and DescribeTopicPartitions v0 list them and the brokers registered\n\
                  # (DescribeCluster v2), sent to a unless the step says `asking c`, and a\n\
                  # Produce v12 (acks all) of each partition: UnregisterBroker v0 of c, running,\n\
                  # sent to a (and again once the controller acted on it, c's id as <c>); the\n\
                  # state then; what c answers; the state 15 s later; c stopped (cluster.sh\n\
                  # stop-broker: its controlled shutdown not over in 30 s, it is killed), then\n\
                  # started again (cluster.sh start-broker) until nothing changed for 5 s.\n";
    if !support::recorded(RUNNING_FIXTURE, header, &got) {
        support::assert_same_lines(&got, &support::fixture_lines(RUNNING_FIXTURE), "live");
    }
}

/// Over HTTP: `DELETE /brokers/ID` removes a broker as Kafka does (what it alone held goes
/// offline and stays so; no replicas list loses it); the last broker is refused; `POST
/// /brokers/ID/restart` registers a removed one again, listening on its old address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_over_http_removes_a_broker_as_kafka_does() {
    use kafka_codec::messages::MetadataRequest;
    let cluster = support::cluster_with_topic(3, 3, "remove-http").await;
    let control = support::serve_control(&cluster).await;
    // Of each partition of "events": leader, replica count, replicas.
    let leaders = |metadata: &kafka_codec::messages::MetadataResponse| {
        let mut partitions: Vec<(i32, i32, Vec<i32>)> = Vec::new();
        for p in &metadata.topics[0].partitions {
            let replicas: Vec<i32> = p.replica_nodes.iter().collect();
            partitions.push((p.partition_index, p.leader_id, replicas));
        }
        partitions.sort();
        let described: Vec<(i32, i32, Vec<i32>)> = partitions
            .into_iter()
            .map(|(_, leader, replicas)| (leader, replicas.len() as i32, replicas))
            .collect();
        described
    };
    let mut client = support::Client::connect(cluster.brokers()[0].address, "remove-http").await;
    let Response::Metadata(before) = client
        .call(12, MetadataRequest::default().with_topics(None))
        .await
    else {
        panic!("not Metadata")
    };
    let before = leaders(&before);
    let (gone, _, _) = before[2].clone();
    let address = cluster
        .brokers()
        .iter()
        .find(|b| b.node_id == gone)
        .map(|b| b.address)
        .expect("its address");
    let (status, answer) =
        support::http(control, "DELETE", &format!("/brokers/{gone}"), None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], gone);
    assert_eq!(
        answer["movedLeaders"],
        kafka_codec::serde_json::json!([{"topic": "events", "partition": 2, "leader": -1}])
    );
    let Response::Metadata(after) = client
        .call(12, MetadataRequest::default().with_topics(None))
        .await
    else {
        panic!("not Metadata")
    };
    assert!(!after.brokers.iter().any(|b| b.node_id == gone));
    let error = after.topics[0]
        .partitions
        .iter()
        .find(|p| p.partition_index == 2)
        .map(|p| p.error_code);
    assert_eq!(
        error,
        Some(kafka_codec::ErrorCode::LEADER_NOT_AVAILABLE.code())
    );
    let after = leaders(&after);
    assert_eq!(after[2], (-1, 1, vec![gone]), "offline, its replica kept");
    assert_eq!(after[..2], before[..2]);
    let (status, _) = support::http(control, "DELETE", &format!("/brokers/{gone}"), None).await;
    assert_eq!(status, 404);
    let (status, _) = support::http(control, "DELETE", "/brokers/1", None).await;
    assert_eq!(status, 200);
    let (status, answer) = support::http(control, "DELETE", "/brokers/0", None).await;
    assert_eq!(status, 409, "{answer}");
    // Restarted, a removed broker registers again on its old address.
    let (status, answer) =
        support::http(control, "POST", &format!("/brokers/{gone}/restart"), None).await;
    assert_eq!(status, 200, "{answer}");
    let (up, fenced) = (&answer["up"], &answer["fenced"]);
    assert_eq!((up.as_bool(), fenced.as_bool()), (Some(true), Some(false)));
    let mut back = support::Client::connect(address, "remove-http").await;
    let Response::Metadata(now) = back
        .call(12, MetadataRequest::default().with_topics(None))
        .await
    else {
        panic!("not Metadata")
    };
    let mut listed: Vec<i32> = now.brokers.iter().map(|b| b.node_id).collect();
    listed.sort_unstable();
    assert_eq!(listed, [0, gone]);
}

/// Over TCP: a broker unregistered while it runs keeps serving on its address (its
/// Metadata no longer lists it), refuses connections once removed (`remove_broker` shuts it
/// down), and restarted listens there again, registered (listed) again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_broker_unregistered_serves_until_stopped_and_registers_again() {
    use kafka_codec::messages::MetadataRequest;
    async fn listed(client: &mut support::Client) -> Vec<i32> {
        let Response::Metadata(metadata) = client
            .call(12, MetadataRequest::default().with_topics(None))
            .await
        else {
            panic!("not Metadata")
        };
        let mut listed: Vec<i32> = metadata.brokers.iter().map(|b| b.node_id).collect();
        listed.sort_unstable();
        listed
    }
    let cluster = support::cluster_with_topic(3, 3, "unregister-tcp").await;
    let control = cluster.control();
    let address = |id: i32| {
        cluster
            .brokers()
            .iter()
            .find(|b| b.node_id == id)
            .map(|b| b.address)
    };
    let gone = address(2).expect("broker 2");
    let mut client = support::Client::connect(address(0).expect("0"), "unregister-tcp").await;
    let request = UnregisterBrokerRequest::default().with_broker_id(2);
    let Response::UnregisterBroker(answer) = client.call(0, request).await else {
        panic!("not UnregisterBroker")
    };
    assert_eq!(answer.error_code, 0);
    assert_eq!(address(2), None, "unregistered");
    let mut to_gone = support::Client::connect(gone, "unregister-tcp").await;
    assert_eq!(listed(&mut to_gone).await, [0, 1]);
    // Removed (shut down: nothing more to move), then gone for good.
    let removed = control.remove_broker(2).expect("stops");
    assert!(removed.moved_leaders.is_empty(), "{removed:?}");
    assert!(control.remove_broker(2).is_err(), "removed already");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::net::TcpStream::connect(gone).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "still listening");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    control.restart_broker(2).expect("registers again");
    assert_eq!(address(2), Some(gone));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut back = loop {
        if let Ok(tcp) = tokio::net::TcpStream::connect(gone).await {
            drop(tcp);
            break support::Client::connect(gone, "unregister-tcp").await;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not listening again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(listed(&mut back).await, [0, 1, 2]);
    assert!(!control.is_fenced(2));
}
