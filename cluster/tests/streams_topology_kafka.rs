//! StreamsGroupTopologyDescriptionUpdate (key 93) and the streams group answers around it,
//! compared with Kafka 4.4. `data/streams-topology-kafka-4.4.txt` holds what a real broker
//! (`tools/kafka-broker/broker.sh`, its default configuration) answered: the streams APIs
//! its ApiVersions lists; every version of StreamsGroupTopologyDescriptionUpdate for a
//! member of a streams group, a stale topology epoch, an unknown member, an unknown group,
//! a consumer group, an empty member or group id and an empty description; what
//! StreamsGroupDescribe then shows of the topology description; and every version of
//! StreamsGroupHeartbeat for an unknown member, a fenced member epoch and an unknown group.
//! `data/streams-not-coordinator-kafka-4.4.txt` holds what the broker that does not
//! coordinate the group answered (`tools/kafka-broker/cluster.sh`: a controller, two
//! brokers; not in CI, its three JVMs take about 25 s): a join, an update and a describe.
//! Each answer is the body as Kafka's JSON, the names as placeholders. The plain tests send
//! the same requests to the cluster on tokio's paused clock and compare; the ignored ones
//! compare a live broker with the files (`KAFKA_CODEC_RECORD=1` rewrites them).

use crate::support;

use kafka_codec::messages::consumer_group_heartbeat_request::ConsumerGroupHeartbeatRequest;
use kafka_codec::messages::streams_group_heartbeat_request::{
    Subtopology as RequestSubtopology, Topology as RequestTopology,
};
use kafka_codec::messages::streams_group_topology_description_update_request::{
    TopologyDescription, TopologyDescriptionNode, TopologyDescriptionSubtopology,
};
use kafka_codec::messages::{
    ApiVersionsRequest, StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest,
    StreamsGroupTopologyDescriptionUpdateRequest,
};
use kafka_codec::{ApiKey, Request, Response, ResponseFrame};
use support::pipe::{paused, PipeClient};
use support::Calls;

/// Where the recorded answers are.
fn fixture_path() -> std::path::PathBuf {
    data("streams-topology-kafka-4.4.txt")
}

/// The answers of the broker that does not coordinate the group.
fn not_coordinator_path() -> std::path::PathBuf {
    data("streams-not-coordinator-kafka-4.4.txt")
}

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The member of the streams group (Kafka Streams members choose their own ids).
const MEMBER: &str = "streams-member-0000001";
/// The member of the consumer group.
const CONSUMER: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// What the requests name: a streams group, a consumer group, a group nobody made, and the
/// source topic.
struct Names {
    streams: String,
    consumer: String,
    unknown: String,
    topic: String,
}

impl Names {
    fn with_suffix(suffix: &str) -> Names {
        Names {
            streams: format!("streams-app{suffix}"),
            consumer: format!("consumer-app{suffix}"),
            unknown: format!("no-app{suffix}"),
            topic: format!("streams-input{suffix}"),
        }
    }
}

/// The cases compared, per API.
const UPDATE_CASES: [&str; 8] = [
    "member",
    "stale-topology-epoch",
    "unknown-member",
    "unknown-group",
    "consumer-group",
    "empty-member",
    "empty-group",
    "empty-description",
];
const HEARTBEAT_CASES: [&str; 3] = ["unknown-member", "fenced-epoch", "unknown-group"];
const DESCRIBE_CASES: [&str; 1] = ["streams-group"];

/// The streams APIs and their cases.
const APIS: [(ApiKey, &[&str]); 3] = [
    (ApiKey::StreamsGroupTopologyDescriptionUpdate, &UPDATE_CASES),
    (ApiKey::StreamsGroupDescribe, &DESCRIBE_CASES),
    (ApiKey::StreamsGroupHeartbeat, &HEARTBEAT_CASES),
];

/// A stateless topology: subtopology "0" reads the topic.
fn topology(names: &Names) -> RequestTopology {
    RequestTopology::default()
        .with_epoch(0)
        .with_subtopologies(vec![RequestSubtopology::default()
            .with_subtopology_id("0".into())
            .with_source_topics(vec![names.topic.as_str().into()])])
}

/// The description of that topology, as Kafka Streams sends it: a source and a sink node.
fn description(names: &Names) -> TopologyDescription {
    TopologyDescription::default().with_subtopologies(vec![
        TopologyDescriptionSubtopology::default()
            .with_subtopology_id("0".into())
            .with_nodes(vec![
                TopologyDescriptionNode::default()
                    .with_name("KSTREAM-SOURCE-0000000000".into())
                    .with_node_type(0)
                    .with_source_topics(vec![names.topic.as_str().into()])
                    .with_successors(vec!["KSTREAM-SINK-0000000001".into()]),
                TopologyDescriptionNode::default()
                    .with_name("KSTREAM-SINK-0000000001".into())
                    .with_node_type(2)
                    .with_sink_topic(Some("streams-output".into())),
            ]),
    ])
}

/// The first heartbeat of a member of the streams group.
fn join(names: &Names) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest::default()
        .with_group_id(names.streams.as_str().into())
        .with_member_id(MEMBER.into())
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(300_000)
        .with_topology(Some(topology(names)))
        .with_active_tasks(Some(Vec::new()))
        .with_standby_tasks(Some(Vec::new()))
        .with_warmup_tasks(Some(Vec::new()))
        .with_process_id(Some("11111111-2222-3333-4444-555555555555".into()))
}

/// The request a fixture line names.
fn request(api: ApiKey, case: &str, names: &Names) -> Request {
    match api {
        ApiKey::StreamsGroupTopologyDescriptionUpdate => {
            let (group, member, epoch) = match case {
                "stale-topology-epoch" => (names.streams.as_str(), MEMBER, 5),
                "unknown-member" => (names.streams.as_str(), "no-such-member", 0),
                "unknown-group" => (names.unknown.as_str(), MEMBER, 0),
                "consumer-group" => (names.consumer.as_str(), CONSUMER, 0),
                "empty-member" => (names.streams.as_str(), "", 0),
                "empty-group" => ("", MEMBER, 0),
                _ => (names.streams.as_str(), MEMBER, 0),
            };
            let description = if case == "empty-description" {
                TopologyDescription::default()
            } else {
                description(names)
            };
            StreamsGroupTopologyDescriptionUpdateRequest::default()
                .with_group_id(group.into())
                .with_member_id(member.into())
                .with_topology_epoch(epoch)
                .with_topology_description(description)
                .into()
        }
        ApiKey::StreamsGroupDescribe => StreamsGroupDescribeRequest::default()
            .with_group_ids(vec![names.streams.as_str().into()])
            .into(),
        ApiKey::StreamsGroupHeartbeat => {
            let (group, member, epoch) = match case {
                "unknown-member" => (names.streams.as_str(), "no-such-member", 1),
                "fenced-epoch" => (names.streams.as_str(), MEMBER, 99),
                "join" => return join(names).into(),
                _ => (names.unknown.as_str(), MEMBER, 1),
            };
            StreamsGroupHeartbeatRequest::default()
                .with_group_id(group.into())
                .with_member_id(member.into())
                .with_member_epoch(epoch)
                .with_active_tasks(Some(Vec::new()))
                .with_standby_tasks(Some(Vec::new()))
                .with_warmup_tasks(Some(Vec::new()))
                .into()
        }
        other => panic!("{other:?} is not compared"),
    }
}

/// The answer as one line, the names as placeholders. Of a describe, the group's error and
/// what it says of the topology description (its members carry the client's address).
fn line(api: ApiKey, version: i16, case: &str, answer: Response, names: &Names) -> String {
    let mut frame = ResponseFrame::new(answer, version, 0)
        .to_json()
        .expect("json");
    let mut body = frame["body"].take();
    if api == ApiKey::StreamsGroupDescribe {
        let group = &mut body["groups"][0];
        let mut kept = kafka_codec::serde_json::Map::new();
        for key in [
            "errorCode",
            "groupId",
            "topologyDescription",
            "topologyDescriptionStatus",
        ] {
            if let Some(value) = group.get_mut(key) {
                kept.insert(key.to_owned(), value.take());
            }
        }
        body = kept.into();
    }
    let json = placeholders(&body.to_string(), names);
    format!("{api:?} v{version} {case}\t{json}")
}

fn placeholders(text: &str, names: &Names) -> String {
    let mut text = text.to_owned();
    for (name, placeholder) in [
        (&names.streams, "<streams-group>"),
        (&names.consumer, "<consumer-group>"),
        (&names.unknown, "<unknown-group>"),
        (&names.topic, "<topic>"),
    ] {
        text = text.replace(name.as_str(), placeholder);
    }
    text
}

/// ApiVersions v3 as a client sends it (Kafka refuses an empty software name).
fn api_versions() -> ApiVersionsRequest {
    ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec".into())
        .with_client_software_version("1.0".into())
}

/// The versions `versions` lists of `api`.
fn listed(
    versions: &kafka_codec::messages::ApiVersionsResponse,
    api: ApiKey,
) -> std::ops::RangeInclusive<i16> {
    let range = versions
        .api_keys
        .iter()
        .find(|k| k.api_key == api.key())
        .unwrap_or_else(|| panic!("{api:?} is listed"));
    range.min_version..=range.max_version
}

/// In record mode (`KAFKA_CODEC_RECORD`) writes `got` under `header` to `path`; otherwise
/// compares `got` with the lines there.
fn record_or_compare(path: &std::path::Path, header: &str, got: &[String]) {
    if std::env::var_os("KAFKA_CODEC_RECORD").is_some() {
        let mut text = header.to_owned();
        for line in got {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(path, text).expect("write the fixture");
        return;
    }
    let (_, want) = read_fixture(path);
    support::assert_same_lines(got, &want, "live");
}

/// What ApiVersions lists of the streams APIs, as a line.
async fn advertised(client: &mut impl Calls) -> String {
    let Response::ApiVersions(versions) = client.call(3, api_versions()).await else {
        panic!("not ApiVersions")
    };
    let listed: Vec<String> = APIS
        .iter()
        .map(|(api, _)| {
            let range = versions.api_keys.iter().find(|k| k.api_key == api.key());
            match range {
                Some(range) => format!("{api:?} {}-{}", range.min_version, range.max_version),
                None => format!("{api:?} -"),
            }
        })
        .collect();
    format!("ApiVersions v3 streams\t{}", listed.join(", "))
}

/// Makes the topic, the streams group (one member) and the consumer group.
async fn setup(client: &mut impl Calls, names: &Names) {
    support::make_topic(client, 7, &names.topic, 2, 1).await;
    let Response::StreamsGroupHeartbeat(joined) = client.call(0, join(names)).await else {
        panic!("not StreamsGroupHeartbeat")
    };
    assert_eq!(joined.error_code, 0, "joined: {joined:?}");
    let consumer = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(names.consumer.as_str().into())
        .with_member_id(CONSUMER.into())
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(300_000)
        .with_subscribed_topic_names(Some(vec![names.topic.as_str().into()]))
        .with_topic_partitions(Some(Vec::new()));
    let Response::ConsumerGroupHeartbeat(joined) = client.call(1, consumer).await else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(joined.error_code, 0, "joined: {joined:?}");
}

/// What ApiVersions lists, then the answers to what each `(api, version, case)` names, as
/// lines.
async fn answers(
    client: &mut impl Calls,
    requests: &[(ApiKey, i16, String)],
    names: &Names,
) -> Vec<String> {
    let mut lines = vec![advertised(client).await];
    lines.extend(answers_only(client, requests, names).await);
    lines
}

/// The fixture's requests and lines (its first line: what ApiVersions lists).
fn fixture() -> (Vec<(ApiKey, i16, String)>, Vec<String>) {
    read_fixture(&fixture_path())
}

fn read_fixture(path: &std::path::Path) -> (Vec<(ApiKey, i16, String)>, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("the fixture");
    let mut requests = Vec::new();
    let mut lines = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        lines.push(line.to_owned());
        let (label, _) = line.split_once('\t').expect("label<TAB>answer");
        let words: Vec<&str> = label.split(' ').collect();
        let [api, version, case] = words[..] else {
            panic!("bad label {label}")
        };
        if api == "ApiVersions" {
            continue;
        }
        let api = APIS
            .iter()
            .map(|(api, _)| *api)
            .find(|key| format!("{key:?}") == api)
            .unwrap_or_else(|| panic!("unknown API {api}"));
        let version = version[1..].parse().expect("version");
        requests.push((api, version, case.to_owned()));
    }
    (requests, lines)
}

#[test]
fn the_cluster_answers_streams_topology_updates_as_kafka_does() {
    let (requests, want) = fixture();
    paused().block_on(async {
        let cluster = support::pipe::paused_cluster(1, 93)
            .build()
            .await
            .expect("cluster");
        let mut client = PipeClient::connect(&cluster, 0);
        let names = Names::with_suffix("");
        setup(&mut client, &names).await;
        let got = answers(&mut client, &requests, &names).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

/// The real broker of `tools/kafka-broker/broker.sh` (`KAFKA_BROKER`): every version it
/// lists of each API, compared with the fixture.
#[test]
#[ignore = "needs a real Kafka 4.4 broker: tools/kafka-broker/broker.sh start (KAFKA_BROKER)"]
fn kafka_answers_streams_topology_updates_as_recorded() {
    tokio::runtime::Runtime::new()
        .expect("runtime")
        .block_on(live());
}

async fn live() {
    let address = support::live_broker().await;
    let mut client = support::Client::connect(address, "streams-topology-live").await;
    let names = Names::with_suffix(&format!("-{}", support::nanos()));
    support::coordinator_ready(&mut client, &names.streams).await;
    setup(&mut client, &names).await;
    let Response::ApiVersions(versions) = client.call(3, api_versions()).await else {
        panic!("not ApiVersions")
    };
    let mut requests = Vec::new();
    for (api, cases) in APIS {
        for case in cases {
            for version in listed(&versions, api) {
                requests.push((api, version, (*case).to_owned()));
            }
        }
    }
    let got = answers(&mut client, &requests, &names).await;
    record_or_compare(
        &fixture_path(),
        "# What Kafka 4.4 (tools/kafka-broker/broker.sh, default configuration) answered,\n\
             # recorded by KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test\n\
             # cluster -- --ignored streams_topology_kafka::. First line: the streams APIs\n\
             # ApiVersions lists; then one line per request: API, version, case <TAB> the\n\
             # answer's body as Kafka's JSON (of StreamsGroupDescribe, the group's error and\n\
             # topology description only).\n",
        &got,
    );
}

/// With ACLs on, READ on the group comes first, as Kafka 4.4's `KafkaApis` checks it before
/// the coordinator sees the request: denied, GROUP_AUTHORIZATION_FAILED with the message of
/// Kafka's `Errors.GROUP_AUTHORIZATION_FAILED`; allowed, the refusal of a broker without a
/// topology description plugin (as recorded above).
#[tokio::test]
async fn read_on_the_group_is_checked_before_the_update_is_refused() {
    use kafka_codec::messages::create_acls_request::AclCreation;
    use kafka_codec::messages::CreateAclsRequest;
    use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
    let cluster = kafka_codec_cluster::Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
        .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
        .super_user("User:admin")
        .build()
        .await
        .expect("cluster");
    let address = cluster.brokers()[0].address;
    let mut admin = support::login(address, "admin").await;
    // alice may READ group "ok-app" (group READ: Kafka's codes 3 and 3, LITERAL 3, ALLOW 3).
    let read = AclCreation::default()
        .with_resource_type(3)
        .with_resource_name("ok-app".into())
        .with_resource_pattern_type(3)
        .with_principal("User:alice".into())
        .with_host("*".into())
        .with_operation(3)
        .with_permission_type(3);
    let Response::CreateAcls(granted) = admin
        .call(3, CreateAclsRequest::default().with_creations(vec![read]))
        .await
    else {
        panic!("not CreateAcls")
    };
    assert_eq!(granted.results[0].error_code, 0);
    let mut alice = support::login(address, "alice").await;
    let names = Names::with_suffix("");
    for (group, code, message) in [
        ("no-app", 30, "Group authorization failed."),
        (
            "ok-app",
            35,
            "The broker has no streams group topology description plugin configured.",
        ),
    ] {
        let update = StreamsGroupTopologyDescriptionUpdateRequest::default()
            .with_group_id(group.into())
            .with_member_id(MEMBER.into())
            .with_topology_description(description(&names));
        let Response::StreamsGroupTopologyDescriptionUpdate(answer) = alice.call(0, update).await
        else {
            panic!("not StreamsGroupTopologyDescriptionUpdate")
        };
        assert_eq!(answer.error_code, code, "{group}");
        assert_eq!(answer.error_message.as_deref(), Some(message), "{group}");
    }
}

/// What the broker that does not coordinate a streams group answers: a member's join, a
/// topology description update and a describe, every version. `(api, case)` in order.
const NOT_COORDINATOR_CASES: [(ApiKey, &str); 3] = [
    (ApiKey::StreamsGroupHeartbeat, "join"),
    (ApiKey::StreamsGroupTopologyDescriptionUpdate, "member"),
    (ApiKey::StreamsGroupDescribe, "streams-group"),
];

/// The node FindCoordinator names for `group`.
async fn coordinator_of(client: &mut impl Calls, group: &str) -> i32 {
    let request = kafka_codec::messages::FindCoordinatorRequest::default()
        .with_coordinator_keys(vec![group.into()]);
    let Response::FindCoordinator(found) = client.call(6, request).await else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.coordinators[0].error_code, 0, "{found:?}");
    found.coordinators[0].node_id
}

/// Sends what each `(api, version, case)` names; the answers as lines.
async fn answers_only(
    client: &mut impl Calls,
    requests: &[(ApiKey, i16, String)],
    names: &Names,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (api, version, case) in requests {
        let answer = client.call(*version, request(*api, case, names)).await;
        lines.push(line(*api, *version, case, answer, names));
    }
    lines
}

#[test]
fn the_broker_that_does_not_coordinate_answers_as_kafka_does() {
    let (requests, want) = read_fixture(&not_coordinator_path());
    paused().block_on(async {
        let cluster = support::pipe::paused_cluster(2, 93)
            .build()
            .await
            .expect("cluster");
        let names = Names::with_suffix("");
        let mut zero = PipeClient::connect(&cluster, 0);
        let other = 1 - coordinator_of(&mut zero, &names.streams).await;
        let mut client = PipeClient::connect(&cluster, other);
        let got = answers_only(&mut client, &requests, &names).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

/// The real cluster of `tools/kafka-broker/cluster.sh` (a controller, two brokers): the
/// broker that does not coordinate the group, compared with the fixture.
#[test]
#[ignore = "starts a real Kafka cluster (three JVMs, ~25 s): tools/kafka-broker/cluster.sh"]
fn kafka_answers_for_a_group_it_does_not_coordinate_as_recorded() {
    support::with_kafka_cluster(2, |brokers| {
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(live_not_coordinator(brokers))
    });
}

async fn live_not_coordinator(brokers: Vec<(i32, std::net::SocketAddr)>) {
    let names = Names::with_suffix(&format!("-{}", support::nanos()));
    let mut first = support::Client::connect(brokers[0].1, "streams-topology-live").await;
    support::coordinator_ready(&mut first, &names.streams).await;
    let coordinator = coordinator_of(&mut first, &names.streams).await;
    let (_, other) = *brokers
        .iter()
        .find(|(node, _)| *node != coordinator)
        .expect("a broker that does not coordinate the group");
    let mut client = support::Client::connect(other, "streams-topology-live").await;
    let Response::ApiVersions(versions) = client.call(3, api_versions()).await else {
        panic!("not ApiVersions")
    };
    let mut requests = Vec::new();
    for (api, case) in NOT_COORDINATOR_CASES {
        for version in listed(&versions, api) {
            requests.push((api, version, case.to_owned()));
        }
    }
    let got = answers_only(&mut client, &requests, &names).await;
    record_or_compare(
        &not_coordinator_path(),
        "# What the Kafka 4.4 broker that does not coordinate a streams group answered\n\
             # (tools/kafka-broker/cluster.sh: a controller, two brokers), recorded by\n\
             # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
             # --ignored streams_topology_kafka::kafka_answers_for_a_group. One line per\n\
             # request: API, version, case <TAB> the answer's body as Kafka's JSON (of\n\
             # StreamsGroupDescribe, the group's error and topology description only).\n",
        &got,
    );
}
