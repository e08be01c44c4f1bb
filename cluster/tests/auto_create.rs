//! Metadata's topic auto-creation (`auto.create.topics.enable`, on by default as in Kafka):
//! a topic named that does not exist is created with `num.partitions` and
//! `default.replication.factor` when the request allows it (v4+), or always (v0-v3). The
//! first answer is UNKNOWN_TOPIC_OR_PARTITION without partitions, as a real Kafka 4.4 broker
//! (auto-creation on) answered Metadata v12 and v1 here; a name Kafka cannot hold is
//! INVALID_TOPIC_EXCEPTION, an internal topic's name is answered as internal. With ACLs, a
//! caller without CREATE (on the cluster or the topic) creates nothing.

use crate::support;

use kafka_codec::messages::create_acls_request::AclCreation;
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::metadata_response::MetadataResponseTopic;
use kafka_codec::messages::*;
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
use kafka_codec_cluster::Cluster;
use support::Client;

const UNKNOWN: i16 = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code();

async fn metadata(
    client: &mut Client,
    version: i16,
    names: &[&str],
    allow: bool,
) -> Vec<MetadataResponseTopic> {
    let request = MetadataRequest::default()
        .with_topics(Some(
            names
                .iter()
                .map(|name| MetadataRequestTopic::default().with_name(Some((*name).into())))
                .collect(),
        ))
        .with_allow_auto_topic_creation(allow);
    let Response::Metadata(answer) = client.call(version, request).await else {
        panic!("not Metadata")
    };
    answer.topics
}

/// (name, error, partitions) of each topic answered.
fn summary(topics: &[MetadataResponseTopic]) -> Vec<(String, i16, usize)> {
    topics
        .iter()
        .map(|t| {
            (
                t.name.as_deref().unwrap_or_default().to_owned(),
                t.error_code,
                t.partitions.len(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_creates_an_unknown_topic_when_allowed() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "auto-create").await;

    // v12 allowing it: the first answer has no partitions, the next finds the topic.
    let first = metadata(&mut client, 12, &["orders"], true).await;
    assert_eq!(summary(&first), vec![("orders".into(), UNKNOWN, 0)]);
    assert!(!first[0].is_internal);
    let next = metadata(&mut client, 12, &["orders"], false).await;
    assert_eq!(summary(&next), vec![("orders".into(), 0, 1)]);

    // v12 and v4 not allowing it: nothing is created.
    for version in [12, 4] {
        let name = format!("not-created-v{version}");
        metadata(&mut client, version, &[&name], false).await;
        let again = metadata(&mut client, 12, &[&name], false).await;
        assert_eq!(summary(&again), vec![(name, UNKNOWN, 0)]);
    }

    // v0-v3 have no flag (left at its default to encode): always created.
    let first = metadata(&mut client, 1, &["legacy"], true).await;
    assert_eq!(summary(&first), vec![("legacy".into(), UNKNOWN, 0)]);
    let next = metadata(&mut client, 12, &["legacy"], false).await;
    assert_eq!(summary(&next), vec![("legacy".into(), 0, 1)]);

    // A name Kafka cannot hold, and the internal topics: never created.
    let answers = metadata(
        &mut client,
        12,
        &["bad name!", "__consumer_offsets", "__transaction_state"],
        true,
    )
    .await;
    assert_eq!(
        summary(&answers),
        vec![
            (
                "bad name!".into(),
                ErrorCode::INVALID_TOPIC_EXCEPTION.code(),
                0
            ),
            ("__consumer_offsets".into(), UNKNOWN, 0),
            ("__transaction_state".into(), UNKNOWN, 0),
        ]
    );
    assert_eq!(
        answers.iter().map(|t| t.is_internal).collect::<Vec<_>>(),
        vec![false, true, true]
    );
    let state = cluster.shared().state();
    let mut names: Vec<&String> = state.topics.keys().collect();
    names.sort();
    assert_eq!(names, vec!["legacy", "orders"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_release_auto_creates_too() {
    let release = kafka_codec_cluster::release::Release::parse("0.10").expect("release");
    let cluster = Cluster::builder()
        .as_version(release)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "auto-create").await;
    let first = metadata(&mut client, 1, &["old"], true).await;
    assert_eq!(summary(&first), vec![("old".into(), UNKNOWN, 0)]);
    let next = metadata(&mut client, 1, &["old"], true).await;
    assert_eq!(summary(&next), vec![("old".into(), 0, 1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_settings_turn_it_off_and_size_new_topics() {
    let off = Cluster::builder()
        .auto_create_topics(false)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(off.brokers()[0].address, "auto-create").await;
    metadata(&mut client, 1, &["never"], true).await;
    metadata(&mut client, 12, &["never"], true).await;
    assert!(off.shared().state().topics.is_empty());

    let sized = Cluster::builder()
        .brokers(3)
        .broker_config("num.partitions", "3")
        .broker_config("default.replication.factor", "2")
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(sized.brokers()[0].address, "auto-create").await;
    metadata(&mut client, 12, &["sized"], true).await;
    let found = metadata(&mut client, 12, &["sized"], false).await;
    assert_eq!(found[0].partitions.len(), 3);
    assert!(found[0]
        .partitions
        .iter()
        .all(|p| p.replica_nodes.len() == 2));
    // CreateTopics' -1 takes the same settings.
    let Response::CreateTopics(created) = client
        .call(
            7,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name("defaults".into())
                .with_num_partitions(-1)
                .with_replication_factor(-1)]),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(
        (
            created.topics[0].num_partitions,
            created.topics[0].replication_factor
        ),
        (3, 2)
    );
    // DescribeConfigs shows them as the broker's static settings.
    let request =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name("0".into())
            .with_configuration_keys(Some(vec![
                "auto.create.topics.enable".into(),
                "num.partitions".into(),
            ]))]);
    let Response::DescribeConfigs(described) = client.call(4, request).await else {
        panic!("not DescribeConfigs")
    };
    let described: Vec<(String, Option<String>, i8)> = described.results[0]
        .configs
        .iter()
        .map(|c| {
            (
                c.name.as_str().to_owned(),
                c.value.as_ref().map(|v| v.as_str().to_owned()),
                c.config_source,
            )
        })
        .collect();
    // ConfigSource: 4 STATIC_BROKER_CONFIG, 5 DEFAULT_CONFIG.
    assert_eq!(
        described,
        vec![
            ("auto.create.topics.enable".into(), Some("true".into()), 5),
            ("num.partitions".into(), Some("3".into()), 4),
        ]
    );

    // Settings the cluster does not follow, or bad values, are refused at build.
    for (name, value) in [
        ("log.retention.hours", "1"),
        ("num.partitions", "0"),
        ("auto.create.topics.enable", "yes"),
    ] {
        let built = Cluster::builder().broker_config(name, value).build().await;
        assert_eq!(
            built.err().map(|e| e.kind()),
            Some(std::io::ErrorKind::InvalidInput),
            "{name}={value}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_acls_only_a_caller_allowed_to_create_creates() {
    const TOPIC: i8 = 2;
    const LITERAL: i8 = 3;
    const PREFIXED: i8 = 4;
    const CREATE: i8 = 5;
    const DESCRIBE: i8 = 8;
    const ALLOW: i8 = 3;
    let cluster = Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
        .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
        .super_user("User:admin")
        .build()
        .await
        .expect("cluster");
    let address = cluster.brokers()[0].address;
    let mut admin = support::login(address, "admin").await;
    let acl = |name: &str, pattern: i8, operation: i8| {
        AclCreation::default()
            .with_resource_type(TOPIC)
            .with_resource_name(name.into())
            .with_resource_pattern_type(pattern)
            .with_principal("User:alice".into())
            .with_host("*".into())
            .with_operation(operation)
            .with_permission_type(ALLOW)
    };
    // alice may describe every topic prefixed `t-`, and create those prefixed `t-ok`.
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![
                acl("t-", PREFIXED, DESCRIBE),
                acl("t-ok", PREFIXED, CREATE),
                acl("x-create-only", LITERAL, CREATE),
            ]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    let mut alice = support::login(address, "alice").await;
    let answers = metadata(&mut alice, 12, &["t-no", "x-create-only", "t-ok-1"], true).await;
    // The one she may create first, then those refused creation, then those refused
    // description, as Kafka orders them.
    assert_eq!(
        summary(&answers),
        vec![
            ("t-ok-1".into(), UNKNOWN, 0),
            (
                "t-no".into(),
                ErrorCode::TOPIC_AUTHORIZATION_FAILED.code(),
                0
            ),
            (
                "x-create-only".into(),
                ErrorCode::TOPIC_AUTHORIZATION_FAILED.code(),
                0
            ),
        ]
    );
    let created: Vec<String> = cluster.shared().state().topics.keys().cloned().collect();
    assert_eq!(created, vec!["t-ok-1"]);
    // The super user creates any.
    metadata(&mut admin, 12, &["anything"], true).await;
    assert!(cluster.shared().state().topics.contains_key("anything"));
}
