//! The leaderless coordinator compared with Kafka 4.4: with one replica per internal
//! partition, a stopped broker leaves its `__consumer_offsets` and `__transaction_state`
//! partitions without a leader, and the live broker answers the coordinator APIs for the
//! groups and transactional ids placed there. `data/leaderless-coordinator-kafka-4.4.txt` holds
//! what a real cluster (one controller, two brokers: `tools/kafka-broker/cluster.sh`)
//! answered, every version of FindCoordinator, JoinGroup, OffsetCommit, OffsetFetch,
//! Heartbeat, ConsumerGroupHeartbeat and (transactional) InitProducerId, the whole body as
//! Kafka's JSON (keys and the topic id as placeholders); the plain test sends the same
//! requests to the cluster in the same state, on tokio's paused clock, and compares. The
//! ignored test compares a live Kafka with the file (`KAFKA_CODEC_RECORD=1` rewrites it).

use crate::support;

use kafka_codec::messages::consumer_group_heartbeat_request::ConsumerGroupHeartbeatRequest;
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_codec::messages::{
    ApiVersionsRequest, CreateTopicsRequest, FindCoordinatorRequest, HeartbeatRequest,
    InitProducerIdRequest, MetadataRequest, OffsetCommitRequest, OffsetFetchRequest,
};
use kafka_codec::{ApiKey, Request, Response, ResponseFrame, Uuid};
use kafka_codec_cluster::groups::coordinator;
use std::time::Duration;
use support::pipe::{paused, PipeClient};
use support::{classic_join, Calls};

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "leaderless-coordinator-kafka-4.4.txt";

/// What the requests name: a group and a transactional id on the stopped broker, and a topic.
pub(crate) struct Keys {
    pub(crate) group: String,
    /// A group the live broker coordinates (FindCoordinator's answer when it is found).
    pub(crate) live_group: String,
    pub(crate) transactional_id: String,
    pub(crate) topic_id: Uuid,
}

/// The first of `prefix0`, `prefix1`, ... Kafka's hash places in partition (or on broker)
/// `place` of `count`.
pub(crate) fn key_on(prefix: &str, place: i32, count: usize) -> String {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .find(|key| coordinator(key, count) == place)
        .expect("a key")
}

/// The APIs compared, with the key each names.
const APIS: [(ApiKey, &str); 9] = [
    (ApiKey::FindCoordinator, "group"),
    (ApiKey::FindCoordinator, "live-group"),
    (ApiKey::FindCoordinator, "transaction"),
    (ApiKey::JoinGroup, "group"),
    (ApiKey::OffsetCommit, "group"),
    (ApiKey::OffsetFetch, "group"),
    (ApiKey::Heartbeat, "group"),
    (ApiKey::ConsumerGroupHeartbeat, "group"),
    (ApiKey::InitProducerId, "transaction"),
];

/// The request a fixture line names.
fn request(api: ApiKey, version: i16, kind: &str, keys: &Keys) -> Request {
    let group = keys.group.as_str();
    match api {
        ApiKey::FindCoordinator => {
            let (key, key_type) = match kind {
                "group" => (group, 0),
                "live-group" => (keys.live_group.as_str(), 0),
                _ => (keys.transactional_id.as_str(), 1),
            };
            let request = FindCoordinatorRequest::default().with_key_type(key_type);
            if version >= 4 {
                request.with_coordinator_keys(vec![key.into()]).into()
            } else {
                request.with_key(key.into()).into()
            }
        }
        ApiKey::JoinGroup => classic_join(group).into(),
        ApiKey::OffsetCommit => OffsetCommitRequest::default()
            .with_group_id(group.into())
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name("events".into())
                .with_topic_id(keys.topic_id)
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(5)])])
            .into(),
        ApiKey::OffsetFetch if version >= 8 => OffsetFetchRequest::default()
            .with_groups(vec![OffsetFetchRequestGroup::default()
                .with_group_id(group.into())
                .with_topics(Some(vec![OffsetFetchRequestTopics::default()
                    .with_name("events".into())
                    .with_topic_id(keys.topic_id)
                    .with_partition_indexes(vec![0].into())]))])
            .into(),
        ApiKey::OffsetFetch => OffsetFetchRequest::default()
            .with_group_id(group.into())
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name("events".into())
                .with_partition_indexes(vec![0].into())]))
            .into(),
        ApiKey::Heartbeat => HeartbeatRequest::default()
            .with_group_id(group.into())
            .with_generation_id(1)
            .with_member_id("member-1".into())
            .into(),
        ApiKey::ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id("AAAAAAAAAAAAAAAAAAAAAA".into())
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(300_000)
            .with_subscribed_topic_names(Some(vec!["events".into()]))
            .with_topic_partitions(Some(Vec::new()))
            .into(),
        ApiKey::InitProducerId => InitProducerIdRequest::default()
            .with_transactional_id(Some(keys.transactional_id.as_str().into()))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(-1)
            .with_producer_epoch(-1)
            .into(),
        other => panic!("{other:?} is not compared"),
    }
}

/// The answer as one line: Kafka's JSON of the body, the keys, the topic id and the live
/// broker's node id and port as placeholders.
pub(crate) fn line(api: ApiKey, version: i16, kind: &str, answer: Response, keys: &Keys) -> String {
    let mut frame = ResponseFrame::new(answer, version, 0)
        .to_json()
        .expect("json");
    let mut body = frame["body"].take();
    live_placeholders(&mut body);
    let json = body
        .to_string()
        .replace(&format!("\"{}\"", keys.group), "\"<group>\"")
        .replace(&format!("\"{}\"", keys.live_group), "\"<live-group>\"")
        .replace(
            &format!("\"{}\"", keys.transactional_id),
            "\"<transactional-id>\"",
        )
        .replace(&format!("\"{}\"", keys.topic_id), "\"<topic-id>\"");
    format!("{api:?} v{version} {kind}\t{json}")
}

/// Every `nodeId` and `port` that names a broker (not -1) becomes `"<live>"`.
fn live_placeholders(json: &mut kafka_codec::serde_json::Value) {
    use kafka_codec::serde_json::Value;
    match json {
        Value::Object(fields) => {
            for (name, value) in fields.iter_mut() {
                if (name == "nodeId" || name == "port") && value.as_i64() != Some(-1) {
                    *value = Value::String("<live>".into());
                } else {
                    live_placeholders(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(live_placeholders),
        _ => {}
    }
}

/// Sends what each `(api, version, kind)` names to `client`; the answers as lines.
async fn answers(
    client: &mut impl Calls,
    requests: &[(ApiKey, i16, String)],
    keys: &Keys,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (api, version, kind) in requests {
        let answer = client
            .call(*version, request(*api, *version, kind, keys))
            .await;
        lines.push(line(*api, *version, kind, answer, keys));
    }
    lines
}

/// The requests and lines of fixture `name`, whose APIs are among `apis`.
pub(crate) fn fixture_of(name: &str, apis: &[ApiKey]) -> (Vec<(ApiKey, i16, String)>, Vec<String>) {
    let mut requests = Vec::new();
    let mut lines = Vec::new();
    for line in support::fixture_lines(name) {
        let (label, _) = line.split_once('\t').expect("label<TAB>json");
        let mut words = label.split(' ');
        let (Some(api), Some(version), Some(kind)) = (words.next(), words.next(), words.next())
        else {
            panic!("bad label {label}")
        };
        let api = *apis
            .iter()
            .find(|key| format!("{key:?}") == api)
            .unwrap_or_else(|| panic!("unknown API {api}"));
        let version = version[1..].parse().expect("version");
        requests.push((api, version, kind.to_owned()));
        lines.push(line);
    }
    (requests, lines)
}

/// This file's fixture.
fn fixture() -> (Vec<(ApiKey, i16, String)>, Vec<String>) {
    fixture_of(FIXTURE, &APIS.map(|(api, _)| api))
}

#[test]
fn the_cluster_answers_a_leaderless_coordinator_as_kafka_does() {
    let (requests, want) = fixture();
    paused().block_on(async {
        let (_cluster, mut zero, keys) = in_memory().await;
        let got = answers(&mut zero, &requests, &keys).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

/// The cluster in the state the live test brings Kafka to (one replica per internal
/// partition, broker 1 stopped and fenced), on the paused clock: a client of broker 0 (the
/// live one), the keys.
pub(crate) async fn in_memory() -> (kafka_codec_cluster::Cluster, PipeClient, Keys) {
    let cluster = support::pipe::paused_cluster(2, 5)
        .broker_config("offsets.topic.replication.factor", "1")
        .broker_config("transaction.state.log.replication.factor", "1")
        .build()
        .await
        .expect("cluster");
    let mut zero = PipeClient::connect(&cluster, 0);
    let topic_id = create_events(&mut zero).await;
    let keys = Keys {
        group: key_on("group-", 1, 2),
        live_group: key_on("group-", 0, 2),
        transactional_id: key_on("txn-", 1, 2),
        topic_id,
    };
    // Broker 1 stops and is fenced once its session (9 s) ends.
    cluster.control().stop_broker(1).expect("stop");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(cluster.control().is_fenced(1));
    (cluster, zero, keys)
}

pub(crate) async fn create_events(client: &mut impl Calls) -> Uuid {
    let topic = CreatableTopic::default()
        .with_name("events".into())
        .with_num_partitions(1)
        .with_replication_factor(1);
    let Response::CreateTopics(created) = client
        .call(7, CreateTopicsRequest::default().with_topics(vec![topic]))
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    created.topics[0].topic_id
}

/// Leaders of the partitions of `topic`, by index, as broker `client` sees them.
async fn leaders(client: &mut impl Calls, topic: &str) -> Vec<i32> {
    let request = MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some(topic.into())),
    ]));
    let Response::Metadata(metadata) = client.call(12, request).await else {
        panic!("not Metadata")
    };
    let mut partitions: Vec<(i32, i32)> = metadata.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.leader_id))
        .collect();
    partitions.sort();
    partitions.into_iter().map(|(_, leader)| leader).collect()
}

/// The real cluster of `tools/kafka-broker/cluster.sh`: starts it, places a group and a
/// transactional id on the broker that leads `__consumer_offsets`-0, stops that broker, and
/// compares what the other answers with the fixture.
#[test]
#[ignore = "starts a real Kafka cluster (three JVMs, ~25 s): tools/kafka-broker/cluster.sh"]
fn kafka_answers_a_leaderless_coordinator_as_recorded() {
    support::with_kafka_cluster(2, |brokers| {
        let brokers = [brokers[0], brokers[1]];
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(live(support::KAFKA_CLUSTER_SCRIPT, brokers))
    });
}

async fn live(script: &str, brokers: [(i32, std::net::SocketAddr); 2]) {
    let (mut client, keys, _) = live_leaderless(script, brokers).await;
    // Every version the live broker supports.
    let ranges = advertised(&mut client, APIS.map(|(api, _)| api)).await;
    let mut requests = Vec::new();
    for ((api, kind), range) in APIS.into_iter().zip(ranges) {
        let low = if kind == "transaction" && api == ApiKey::FindCoordinator {
            (*range.start()).max(1)
        } else {
            *range.start()
        };
        for version in low..=*range.end() {
            requests.push((api, version, kind.to_owned()));
        }
    }
    let got = answers(&mut client, &requests, &keys).await;
    let header = "# What Kafka 4.4 answered for a group and a transactional id whose internal\n\
                  # partitions have no leader (one replica each, on a stopped broker), recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test\n\
                  # leaderless_coordinator_kafka -- --ignored. One line per request: API, version,\n\
                  # key <TAB> the answer's body as Kafka's JSON.\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    let (_, want) = fixture();
    support::assert_same_lines(&got, &want, "live");
}

/// Brings the real cluster of `script` to the state compared: a group and a transactional
/// id placed on the broker that leads `__consumer_offsets`-0, that broker stopped, and the
/// other knowing their partitions have no leader. A client of the live broker, the keys,
/// the live broker's node id.
pub(crate) async fn live_leaderless(
    script: &str,
    brokers: [(i32, std::net::SocketAddr); 2],
) -> (support::Client, Keys, i32) {
    let mut first = support::Client::connect(brokers[0].1, "leaderless-live").await;
    // The internal topics appear with the first FindCoordinator of each kind.
    for (kind, key) in [(0i8, "group-0"), (1, "txn-0")] {
        let request = FindCoordinatorRequest::default()
            .with_key_type(kind)
            .with_key(key.into());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let Response::FindCoordinator(found) = first.call(3, request.clone()).await else {
                panic!("not FindCoordinator")
            };
            if found.error_code == 0 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no coordinator for {key}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let topic_id = create_events(&mut first).await;
    let offsets = leaders(&mut first, "__consumer_offsets").await;
    let transactions = leaders(&mut first, "__transaction_state").await;
    // The broker that leads __consumer_offsets-0 goes; a transaction partition it leads.
    let gone = offsets[0];
    let txn_partition = transactions
        .iter()
        .position(|&leader| leader == gone)
        .expect("a transaction partition on the same broker") as i32;
    let live_partition = offsets
        .iter()
        .position(|&leader| leader != gone)
        .expect("a __consumer_offsets partition on the live broker")
        as i32;
    let keys = Keys {
        group: key_on("group-", 0, offsets.len()),
        live_group: key_on("group-", live_partition, offsets.len()),
        transactional_id: key_on("txn-", txn_partition, transactions.len()),
        topic_id,
    };
    let (live_node, live_address) = *brokers.iter().find(|(node, _)| *node != gone).unwrap();
    let stopped = std::process::Command::new("bash")
        .args([script, "stop-broker", &gone.to_string()])
        .status()
        .expect("cluster.sh");
    assert!(stopped.success());
    let mut client = support::Client::connect(live_address, "leaderless-live").await;
    // The live broker learns that the partitions have no leader.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while leaders(&mut client, "__consumer_offsets").await[0] != -1
        || leaders(&mut client, "__transaction_state").await[txn_partition as usize] != -1
    {
        assert!(tokio::time::Instant::now() < deadline, "still led");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    (client, keys, live_node)
}

/// The versions of each of `apis` broker `client` advertises, lowest first.
pub(crate) async fn advertised(
    client: &mut impl Calls,
    apis: impl IntoIterator<Item = ApiKey>,
) -> Vec<std::ops::RangeInclusive<i16>> {
    let Response::ApiVersions(versions) = client.call(2, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    apis.into_iter()
        .map(|api| {
            let range = versions
                .api_keys
                .iter()
                .find(|k| k.api_key == api as i16)
                .unwrap_or_else(|| panic!("{api:?} not supported"));
            range.min_version..=range.max_version
        })
        .collect()
}
