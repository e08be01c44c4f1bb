//! ACL refusals request by request, compared with Kafka 4.4's `StandardAuthorizer`.
//! `data/acl-refusals-kafka-4.4.txt` holds what a real 4.4 broker (`tools/kafka-broker/
//! broker.sh`: SASL_PLAINTEXT with PLAIN, `StandardAuthorizer`, its PLAINTEXT principal a
//! super user) answered to its PLAIN user (`sasl-users`), who may read, write and describe
//! topic `ok-<s>` and nothing else: the topic `t-<s>`, the topic to be created `n-<s>`, the
//! group `g-<s>`, the transactional id `x-<s>` and the cluster each carry an ACL for another
//! user (so that the broker's `allow.everyone.if.no.acl.found=true` does not apply, and both
//! sides refuse for the same reason). Produce and Fetch (by name and by topic id), Metadata
//! (named and listing: filtered, not refused), CreateTopics, DeleteTopics, DescribeConfigs,
//! AlterConfigs, IncrementalAlterConfigs, OffsetCommit, JoinGroup, InitProducerId
//! (transactional and idempotent), a Produce of plain records naming a transactional id,
//! DescribeAcls, CreateAcls and DeleteAcls, each at every version the broker serves: each
//! answer's body as Kafka's JSON, names, ids and node addresses as placeholders. The plain
//! test replays the requests against the cluster with the same users and ACLs, on tokio's
//! paused clock; the ignored one compares a live broker with the file (`KAFKA_CODEC_RECORD=1`
//! rewrites it) and removes what it made.

use crate::support;

use kafka_codec::messages::create_acls_request::AclCreation;
use kafka_codec::messages::delete_acls_request::DeleteAclsFilter;
use kafka_codec::messages::*;
use kafka_codec::serde_json::Value;
use kafka_codec::{ApiKey, Request, Response, ResponseFrame, Uuid};
use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
use std::time::Duration;
use support::pipe::{paused, PipeClient};
use support::Calls;

// Kafka's codes: resource types, pattern type, operations, permission.
const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const TRANSACTIONAL_ID: i8 = 5;
const LITERAL: i8 = 3;
const ALL: i8 = 2;
const READ: i8 = 3;
const WRITE: i8 = 4;
const ALLOW: i8 = 3;
const ANY: i8 = 1;
const BROKER: i8 = 4;

/// The other user, whose ACLs put the resources the user may not touch under ACLs.
const OTHER: &str = "User:kafka-codec-other";

/// The requests compared: a name, the API and the versions wanted (each one the live broker
/// serves is recorded).
const REQUESTS: &[(&str, ApiKey, i16, i16)] = &[
    ("metadata-named", ApiKey::Metadata, 0, 13),
    ("metadata-all", ApiKey::Metadata, 1, 13),
    ("produce", ApiKey::Produce, 3, 12),
    ("produce-by-id", ApiKey::Produce, 13, 13),
    ("fetch", ApiKey::Fetch, 0, 12),
    ("fetch-by-id", ApiKey::Fetch, 13, 18),
    ("create-topics", ApiKey::CreateTopics, 0, 7),
    ("delete-topic-names", ApiKey::DeleteTopics, 0, 5),
    ("delete-topics", ApiKey::DeleteTopics, 6, 6),
    ("delete-topics-by-id", ApiKey::DeleteTopics, 6, 6),
    ("describe-configs", ApiKey::DescribeConfigs, 0, 4),
    ("alter-configs", ApiKey::AlterConfigs, 0, 2),
    (
        "incremental-alter-configs",
        ApiKey::IncrementalAlterConfigs,
        0,
        1,
    ),
    ("offset-commit", ApiKey::OffsetCommit, 0, 9),
    ("join-group", ApiKey::JoinGroup, 0, 9),
    (
        "init-producer-id-transactional",
        ApiKey::InitProducerId,
        0,
        5,
    ),
    ("init-producer-id-idempotent", ApiKey::InitProducerId, 0, 5),
    ("describe-acls", ApiKey::DescribeAcls, 0, 3),
    ("create-acls", ApiKey::CreateAcls, 0, 3),
    ("delete-acls", ApiKey::DeleteAcls, 0, 3),
    ("produce-transactional", ApiKey::Produce, 3, 12),
];

/// The recorded answers, in `tests/data`.
const FIXTURE: &str = "acl-refusals-kafka-4.4.txt";

/// What the requests name: the suffix of this run's resources, the topics' ids, the
/// broker's node id and the user's principal.
struct Names {
    suffix: String,
    ok_id: Uuid,
    t_id: Uuid,
    node: i32,
    principal: String,
}

impl Names {
    fn name(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.suffix)
    }
}

fn binding(principal: &str, resource_type: i8, name: &str, operation: i8) -> AclCreation {
    AclCreation::default()
        .with_resource_type(resource_type)
        .with_resource_name(name.into())
        .with_resource_pattern_type(LITERAL)
        .with_principal(principal.into())
        .with_host("*".into())
        .with_operation(operation)
        .with_permission_type(ALLOW)
}

/// The ACLs of the comparison.
fn acls(names: &Names) -> Vec<AclCreation> {
    vec![
        binding(OTHER, TOPIC, &names.name("t"), ALL),
        binding(OTHER, TOPIC, &names.name("n"), ALL),
        binding(OTHER, GROUP, &names.name("g"), ALL),
        binding(OTHER, TRANSACTIONAL_ID, &names.name("x"), ALL),
        binding(OTHER, CLUSTER, "kafka-cluster", ALL),
        binding(&names.principal, TOPIC, &names.name("ok"), READ),
        binding(&names.principal, TOPIC, &names.name("ok"), WRITE),
    ]
}

/// As the super user: makes topics `ok-<s>` and `t-<s>` and the ACLs; the topics' ids.
async fn set_up(admin: &mut impl Calls, names: &mut Names) {
    let topics = [names.name("ok"), names.name("t")];
    let request = support::create_topics(&[&topics[0], &topics[1]], 1, 1);
    let Response::CreateTopics(created) = admin.call(7, request).await else {
        panic!("not CreateTopics")
    };
    for topic in &created.topics {
        assert_eq!(topic.error_code, 0, "{:?}", topic.error_message);
    }
    names.ok_id = created.topics[0].topic_id;
    names.t_id = created.topics[1].topic_id;
    let Response::CreateAcls(granted) = admin
        .call(3, CreateAclsRequest::default().with_creations(acls(names)))
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
}

/// As the super user: removes the ACLs and the topics.
async fn tear_down(admin: &mut impl Calls, names: &Names) {
    let filters = acls(names)
        .into_iter()
        .map(|acl| {
            DeleteAclsFilter::default()
                .with_resource_type_filter(acl.resource_type)
                .with_resource_name_filter(Some(acl.resource_name))
                .with_pattern_type_filter(LITERAL)
                .with_principal_filter(Some(acl.principal))
                .with_host_filter(Some(acl.host))
                .with_operation(acl.operation)
                .with_permission_type(acl.permission_type)
        })
        .collect();
    let request = DeleteAclsRequest::default().with_filters(filters);
    let Response::DeleteAcls(deleted) = admin.call(3, request).await else {
        panic!("not DeleteAcls")
    };
    assert!(deleted.filter_results.iter().all(|r| r.error_code == 0));
    let request = DeleteTopicsRequest::default()
        .with_topic_names(vec![names.name("ok").into(), names.name("t").into()])
        .with_timeout_ms(5000);
    let Response::DeleteTopics(_) = admin.call(5, request).await else {
        panic!("not DeleteTopics")
    };
}

fn metadata(version: i16, topics: Option<&[String]>) -> MetadataRequest {
    use kafka_codec::messages::metadata_request::MetadataRequestTopic;
    MetadataRequest::default()
        .with_topics(topics.map(|topics| {
            topics
                .iter()
                .map(|name| MetadataRequestTopic::default().with_name(Some(name.as_str().into())))
                .collect()
        }))
        // A field of v4+; older versions never create.
        .with_allow_auto_topic_creation(version < 4)
}

fn produce(version: i16, topics: &[(&str, Uuid)], first: usize) -> ProduceRequest {
    use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5000)
        .with_topic_data(
            topics
                .iter()
                .map(|&(name, id)| {
                    let topic = TopicProduceData::default();
                    // By topic id from v13.
                    let topic = if version >= 13 {
                        topic.with_topic_id(id)
                    } else {
                        topic.with_name(name.into())
                    };
                    topic.with_partition_data(vec![PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(support::batch(first, 1)))])
                })
                .collect(),
        )
}

fn fetch(version: i16, topics: &[(&str, Uuid)]) -> FetchRequest {
    use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
    let request = FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(
            topics
                .iter()
                .map(|&(name, id)| {
                    let topic = FetchTopic::default();
                    // By topic id from v13.
                    let topic = if version >= 13 {
                        topic.with_topic_id(id)
                    } else {
                        topic.with_topic(name.into())
                    };
                    topic.with_partitions(vec![FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(0)
                        .with_partition_max_bytes(1 << 20)])
                })
                .collect(),
        );
    // Sessions are v7+: a full fetch without one.
    if version >= 7 {
        request.with_session_epoch(-1)
    } else {
        request
    }
}

/// The request a line names.
fn request(name: &str, version: i16, names: &Names) -> Request {
    let ok = names.name("ok");
    let t = names.name("t");
    let n = names.name("n");
    let g = names.name("g");
    let both = [(ok.as_str(), names.ok_id), (t.as_str(), names.t_id)];
    match name {
        "metadata-named" => metadata(version, Some(&[ok.clone(), t.clone()])).into(),
        "metadata-all" => metadata(version, None).into(),
        "produce" | "produce-by-id" => produce(version, &both, 1).into(),
        "fetch" | "fetch-by-id" => fetch(version, &both).into(),
        "create-topics" => support::create_topics(&[&n, &t], 1, 1)
            .with_timeout_ms(5000)
            .into(),
        "delete-topic-names" => DeleteTopicsRequest::default()
            .with_topic_names(vec![t.as_str().into(), ok.as_str().into()])
            .with_timeout_ms(5000)
            .into(),
        "delete-topics" => DeleteTopicsRequest::default()
            .with_topics(vec![
                delete_topics_request::DeleteTopicState::default()
                    .with_name(Some(t.as_str().into())),
                delete_topics_request::DeleteTopicState::default()
                    .with_name(Some(ok.as_str().into())),
            ])
            .with_timeout_ms(5000)
            .into(),
        "delete-topics-by-id" => DeleteTopicsRequest::default()
            .with_topics(vec![
                delete_topics_request::DeleteTopicState::default().with_topic_id(names.t_id),
                delete_topics_request::DeleteTopicState::default().with_topic_id(names.ok_id),
            ])
            .with_timeout_ms(5000)
            .into(),
        "describe-configs" => {
            use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
            let resource = |kind: i8, name: &str| {
                DescribeConfigsResource::default()
                    .with_resource_type(kind)
                    .with_resource_name(name.into())
                    .with_configuration_keys(Some(vec!["cleanup.policy".into()]))
            };
            DescribeConfigsRequest::default()
                .with_resources(vec![
                    resource(TOPIC, &t),
                    resource(TOPIC, &ok),
                    DescribeConfigsResource::default()
                        .with_resource_type(BROKER)
                        .with_resource_name(names.node.to_string().into())
                        .with_configuration_keys(Some(vec!["log.retention.ms".into()])),
                ])
                .into()
        }
        "alter-configs" => {
            use kafka_codec::messages::alter_configs_request::{
                AlterConfigsResource, AlterableConfig,
            };
            let resource = |kind: i8, name: &str, key: &str| {
                AlterConfigsResource::default()
                    .with_resource_type(kind)
                    .with_resource_name(name.into())
                    .with_configs(vec![AlterableConfig::default()
                        .with_name(key.into())
                        .with_value(Some("86400000".into()))])
            };
            AlterConfigsRequest::default()
                .with_resources(vec![
                    resource(TOPIC, &t, "retention.ms"),
                    resource(TOPIC, &ok, "retention.ms"),
                    resource(BROKER, &names.node.to_string(), "log.retention.ms"),
                ])
                .with_validate_only(true)
                .into()
        }
        "offset-commit" => {
            use kafka_codec::messages::offset_commit_request::*;
            let request = OffsetCommitRequest::default()
                .with_group_id(g.as_str().into())
                .with_generation_id_or_member_epoch(-1);
            // Retention is a field of v2-v4.
            let request = if version <= 4 {
                request.with_retention_time_ms(-1)
            } else {
                request
            };
            request
                .with_topics(vec![OffsetCommitRequestTopic::default()
                    .with_name(ok.as_str().into())
                    .with_partitions(vec![OffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(1)])])
                .into()
        }
        "join-group" => support::classic_join(&g).into(),
        "init-producer-id-transactional" => InitProducerIdRequest::default()
            .with_transactional_id(Some(names.name("x").into()))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(-1)
            .with_producer_epoch(-1)
            .into(),
        "init-producer-id-idempotent" => InitProducerIdRequest::default()
            .with_transactional_id(None)
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(-1)
            .with_producer_epoch(-1)
            .into(),
        "describe-acls" => DescribeAclsRequest::default()
            .with_resource_type_filter(ANY)
            .with_resource_name_filter(None)
            .with_principal_filter(None)
            .with_host_filter(None)
            .with_pattern_type_filter(ANY)
            .with_operation(ANY)
            .with_permission_type(ANY)
            .into(),
        "create-acls" => CreateAclsRequest::default()
            .with_creations(vec![binding(&names.principal, GROUP, &g, READ)])
            .into(),
        "delete-acls" => DeleteAclsRequest::default()
            .with_filters(vec![DeleteAclsFilter::default()
                .with_resource_type_filter(GROUP)
                .with_resource_name_filter(Some(g.as_str().into()))
                .with_pattern_type_filter(LITERAL)
                .with_principal_filter(None)
                .with_host_filter(None)
                .with_operation(ANY)
                .with_permission_type(ANY)])
            .into(),
        "incremental-alter-configs" => {
            use kafka_codec::messages::incremental_alter_configs_request::{
                AlterConfigsResource, AlterableConfig,
            };
            let resource = |kind: i8, name: &str, key: &str| {
                AlterConfigsResource::default()
                    .with_resource_type(kind)
                    .with_resource_name(name.into())
                    .with_configs(vec![AlterableConfig::default()
                        .with_name(key.into())
                        .with_config_operation(0)
                        .with_value(Some("86400000".into()))])
            };
            IncrementalAlterConfigsRequest::default()
                .with_resources(vec![
                    resource(TOPIC, &t, "retention.ms"),
                    resource(TOPIC, &ok, "retention.ms"),
                    resource(BROKER, &names.node.to_string(), "log.retention.ms"),
                ])
                .with_validate_only(true)
                .into()
        }
        "produce-transactional" => produce(version, &both[..1], 1)
            .with_transactional_id(Some(names.name("x").into()))
            .into(),
        other => panic!("{other} is not compared"),
    }
}

/// Node ids, hosts, ports, the cluster id and producer ids as placeholders; Metadata's
/// topics left to this run's.
fn scrub(json: &mut Value, names: &Names) {
    match json {
        Value::Object(fields) => {
            for (key, value) in fields.iter_mut() {
                match key.as_str() {
                    "nodeId" | "leaderId" | "controllerId" | "producerId"
                        if value.as_i64().is_some_and(|v| v >= 0) =>
                    {
                        *value = Value::String("<node>".into())
                    }
                    "host" | "port" | "clusterId" => *value = Value::String("<node>".into()),
                    "replicaNodes" | "isrNodes" => {
                        if let Value::Array(items) = value {
                            for item in items.iter_mut() {
                                *item = Value::String("<node>".into());
                            }
                        }
                    }
                    // Kafka prints the request object (connection ids, hash codes, buffer
                    // positions) into the ACL APIs' refusals.
                    "errorMessage"
                        if value
                            .as_str()
                            .is_some_and(|m| m.starts_with("Request Request(")) =>
                    {
                        let message = value.as_str().unwrap_or_default();
                        let needs = message.rfind(") needs ").map_or("", |i| &message[i + 1..]);
                        *value = Value::String(format!("Request <request>{needs}"));
                    }
                    "resourceName" if value.as_str() == Some(&names.node.to_string()) => {
                        *value = Value::String("<node>".into())
                    }
                    "topics" if fields_is_metadata(value) => {
                        if let Value::Array(items) = value {
                            items.retain(|t| {
                                t["name"]
                                    .as_str()
                                    .is_some_and(|n| n.ends_with(&names.suffix))
                            });
                            items.iter_mut().for_each(|item| scrub(item, names));
                        }
                    }
                    _ => scrub(value, names),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| scrub(item, names)),
        _ => {}
    }
}

/// Metadata's topic list (its entries have `isInternal`).
fn fields_is_metadata(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|items| items.iter().any(|t| t.get("isInternal").is_some()))
}

/// The answer as one line, this run's names and ids as placeholders.
fn line(name: &str, version: i16, answer: Response, names: &Names) -> String {
    let mut json = ResponseFrame::new(answer, version, 0)
        .to_json()
        .expect("json")["body"]
        .take();
    scrub(&mut json, names);
    // Kafka's controller answers DeleteTopics' refusals in the order of a `HashMap` keyed by
    // topic id: random ids, a random order from run to run. Compared sorted.
    if name.starts_with("delete-topic") {
        if let Some(Value::Array(responses)) = json.get_mut("responses") {
            responses.sort_by_key(|r| r.to_string());
        }
    }
    let text = json
        .to_string()
        .replace(&format!("\"{}\"", names.ok_id), "\"<ok-id>\"")
        .replace(&format!("\"{}\"", names.t_id), "\"<t-id>\"")
        .replace(&names.principal, "<user>")
        .replace(&format!("-{}", names.suffix), "-<s>");
    format!("{name} v{version}\t{text}")
}

/// Sends each `(name, version)` as the user; the answers as lines.
async fn answers(user: &mut impl Calls, requests: &[(String, i16)], names: &Names) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, version) in requests {
        let (name, version) = (name.as_str(), *version);
        // A fresh broker may still be loading what the request needs (its producer ids):
        // retried, as clients retry COORDINATOR_LOAD_IN_PROGRESS.
        let mut tries = 0;
        let answer = loop {
            let answer = user.call(version, request(name, version, names)).await;
            let loading = matches!(&answer, Response::InitProducerId(a) if a.error_code == 14);
            if !loading || tries == 50 {
                break answer;
            }
            tries += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        lines.push(line(name, version, answer, names));
    }
    lines
}

/// The fixture's requests (`name vN` before the tab) and lines.
fn fixture() -> (Vec<(String, i16)>, Vec<String>) {
    let lines = support::fixture_lines(FIXTURE);
    let requests = lines
        .iter()
        .map(|line| {
            let label = line.split('\t').next().unwrap_or_default();
            let (name, version) = label.split_once(" v").expect("name vN");
            (name.to_owned(), version.parse().expect("a version"))
        })
        .collect();
    (requests, lines)
}

#[test]
fn the_cluster_refuses_as_kafkas_authorizer_does() {
    let (requests, want) = fixture();
    let (user, password) = support::tools_plain_user();
    paused().block_on(async {
        let cluster = support::pipe::paused_cluster(1, 29)
            .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
            .sasl(SaslUser::new(Mechanism::Plain, &user, &password))
            .super_user("User:admin")
            .auto_create_topics(false)
            .build()
            .await
            .expect("cluster");
        let mut admin = PipeClient::connect(&cluster, 0);
        support::plain_login(&mut admin, "admin", "admin-secret").await;
        let mut names = Names {
            suffix: "acl29".into(),
            ok_id: Uuid::default(),
            t_id: Uuid::default(),
            node: 0,
            principal: format!("User:{user}"),
        };
        set_up(&mut admin, &mut names).await;
        let mut client = PipeClient::connect(&cluster, 0);
        support::plain_login(&mut client, &user, &password).await;
        let got = answers(&mut client, &requests, &names).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 broker with an authorizer and SASL: KAFKA_BROKER, \
            KAFKA_BROKER_SASL_PLAINTEXT, KAFKA_NODE_ID (tools/kafka-broker/broker.sh)"]
async fn kafka_refuses_as_recorded() {
    let (user, password) = support::tools_plain_user();
    let env = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let mut admin = support::Client::connect(support::live_broker().await, "acl-admin").await;
    let mut names = Names {
        // The names fixed, as the cluster's replay uses them: Kafka answers some lists in
        // the order of a `HashSet` of the names.
        suffix: "acl29".into(),
        ok_id: Uuid::default(),
        t_id: Uuid::default(),
        node: env("KAFKA_NODE_ID").parse().expect("a node id"),
        principal: format!("User:{user}"),
    };
    // What a run that failed before its end left.
    tear_down(&mut admin, &names).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let Response::Metadata(known) = admin
            .call(12, metadata(12, Some(&[names.name("ok"), names.name("t")])))
            .await
        else {
            panic!("not Metadata")
        };
        if known.topics.iter().all(|t| t.error_code != 0) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "not deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    set_up(&mut admin, &mut names).await;
    // The broker learns the topics' leaders and the ACLs from its metadata log.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let Response::DescribeAcls(described) = admin
            .call(
                3,
                DescribeAclsRequest::default()
                    .with_resource_type_filter(ANY)
                    .with_resource_name_filter(None)
                    .with_principal_filter(None)
                    .with_host_filter(None)
                    .with_pattern_type_filter(ANY)
                    .with_operation(ANY)
                    .with_permission_type(ANY),
            )
            .await
        else {
            panic!("not DescribeAcls")
        };
        let ours = described
            .resources
            .iter()
            .filter(|r| r.resource_name.as_str().ends_with(&names.suffix))
            .map(|r| r.acls.len())
            .sum::<usize>();
        let Response::Metadata(known) = admin
            .call(12, metadata(12, Some(&[names.name("ok"), names.name("t")])))
            .await
        else {
            panic!("not Metadata")
        };
        let led = known
            .topics
            .iter()
            .all(|t| t.partitions.iter().all(|p| p.leader_id >= 0));
        if ours == 6 && led && known.topics.iter().all(|t| t.error_code == 0) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not propagated: {ours} ACLs, led {led}, {:?}",
            known
                .topics
                .iter()
                .map(|t| t.error_code)
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let address = tokio::net::lookup_host(env("KAFKA_BROKER_SASL_PLAINTEXT"))
        .await
        .expect("resolves")
        .next()
        .expect("an address");
    let mut client = support::Client::connect(address, "acl-user").await;
    support::plain_login(&mut client, &user, &password).await;
    // Every version wanted that the broker serves.
    let request = ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec".into())
        .with_client_software_version("0".into());
    let Response::ApiVersions(served) = client.call(3, request).await else {
        panic!("not ApiVersions")
    };
    let mut requests = Vec::new();
    for &(name, api, low, high) in REQUESTS {
        let range = served
            .api_keys
            .iter()
            .find(|k| k.api_key == api as i16)
            .expect("served");
        for version in low.max(range.min_version)..=high.min(range.max_version) {
            requests.push((name.to_owned(), version));
        }
    }
    let got = answers(&mut client, &requests, &names).await;
    tear_down(&mut admin, &names).await;
    let header = "# What Kafka 4.4 (StandardAuthorizer) answered to a SASL user who may read and\n\
             # write topic ok-<s> only, recorded by KAFKA_CODEC_RECORD=1 cargo test -p\n\
             # kafka-codec-cluster --test cluster -- acl_refusals:: --ignored (see\n\
             # acl_refusals.rs). One line per request: its name and version <TAB> the answer's\n\
             # body as Kafka's JSON.\n";
    if !support::recorded(FIXTURE, header, &got) {
        support::assert_same_lines(&got, &fixture().1, "live");
    }
}
