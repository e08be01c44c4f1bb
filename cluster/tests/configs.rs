//! DescribeConfigs, AlterConfigs and IncrementalAlterConfigs through this crate's own
//! client connection, each at every version served. The expected defaults are the ones the
//! committed `config-defaults.tsv` holds (read from Kafka's ConfigDefs by
//! `tools/config-defaults/run.sh`, checked against the jars in CI).

use crate::support;

use kafka_codec::messages::describe_configs_response::DescribeConfigsResult;
use kafka_codec::messages::DeleteTopicsRequest;
use kafka_codec::{ApiKey, ErrorCode, Response};
use kafka_codec_cluster::configs::{definitions, source, BROKER, TOPIC};
use kafka_codec_cluster::Cluster;
use support::Client;

trait ConfigsCalls {
    async fn describe(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        keys: Option<&[&str]>,
    ) -> DescribeConfigsResult;
    async fn alter(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[(&str, &str)],
    ) -> i16;
    async fn incremental(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[(&str, i8, Option<&str>)],
    ) -> i16;
}

impl ConfigsCalls for Client {
    async fn describe(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        keys: Option<&[&str]>,
    ) -> DescribeConfigsResult {
        self.describe_configs(version, resource_type, name, keys)
            .await
    }

    async fn alter(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[(&str, &str)],
    ) -> i16 {
        self.alter_configs(version, resource_type, name, configs)
            .await
            .0
    }

    async fn incremental(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[(&str, i8, Option<&str>)],
    ) -> i16 {
        self.incremental_alter_configs(version, resource_type, name, configs, false)
            .await
            .0
    }
}

fn versions(api: ApiKey) -> std::ops::RangeInclusive<i16> {
    let range = kafka_codec_cluster::handlers::advertised()
        .get(api.key())
        .unwrap_or_else(|| panic!("{api} is not served"));
    range.min..=range.max
}

async fn cluster_with_topic(name: &str) -> (Cluster, Client) {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "configs-test").await;
    support::make_topic(&mut client, 5, name, 1, 1).await;
    (cluster, client)
}

/// (value, source) of `name` in a describe result.
fn entry(result: &DescribeConfigsResult, name: &str) -> (Option<String>, i8) {
    let config = result
        .configs
        .iter()
        .find(|c| c.name.as_str() == name)
        .unwrap_or_else(|| panic!("{name} not described"));
    (
        config.value.as_ref().map(|v| v.as_str().to_owned()),
        config.config_source,
    )
}

fn default_of(name: &str) -> Option<String> {
    definitions().topic[name].default.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_describes_kafkas_defaults_at_every_version() {
    let (_cluster, mut client) = cluster_with_topic("t").await;
    for version in versions(ApiKey::DescribeConfigs) {
        let result = client.describe(version, TOPIC, "t", None).await;
        assert_eq!(result.error_code, 0, "v{version}");
        assert_eq!(
            result.configs.len(),
            definitions().topic.len(),
            "v{version}"
        );
        let retention = result
            .configs
            .iter()
            .find(|c| c.name.as_str() == "retention.ms")
            .expect("retention.ms");
        assert_eq!(
            retention.value.as_ref().map(|v| v.as_str().to_owned()),
            default_of("retention.ms")
        );
        assert!(!retention.read_only);
        if version == 0 {
            assert!(retention.is_default);
        } else {
            assert_eq!(retention.config_source, source::DEFAULT_CONFIG);
            // The primary broker synonym, when it has a default: cleanup.policy's
            // log.cleanup.policy does; retention.ms's log.retention.ms does not (its default
            // comes from log.retention.hours), so it lists none, as a real broker does.
            for name in ["cleanup.policy", "retention.ms"] {
                let config = result
                    .configs
                    .iter()
                    .find(|c| c.name.as_str() == name)
                    .expect("described");
                let synonyms: Vec<_> = config
                    .synonyms
                    .iter()
                    .map(|s| {
                        (
                            s.name.as_str().to_owned(),
                            s.value.as_ref().map(|v| v.as_str().to_owned()),
                            s.source,
                        )
                    })
                    .collect();
                let primary = definitions().topic[name]
                    .synonym
                    .clone()
                    .expect("a synonym");
                let expected: Vec<_> = definitions().broker[&primary]
                    .default
                    .clone()
                    .map(|value| (primary.clone(), Some(value), source::DEFAULT_CONFIG))
                    .into_iter()
                    .collect();
                assert_eq!(synonyms, expected, "{name} v{version}");
            }
            assert!(!retention
                .synonyms
                .iter()
                .any(|s| s.name.as_str() == "log.retention.hours"));
        }
        if version >= 3 {
            // LONG.
            assert_eq!(retention.config_type, 5);
        }
    }
    // Only the keys asked for; an unknown topic.
    let some = client
        .describe(2, TOPIC, "t", Some(&["cleanup.policy", "no.such.config"]))
        .await;
    assert_eq!(some.configs.len(), 1);
    let unknown = client.describe(2, TOPIC, "missing", None).await;
    assert_eq!(
        unknown.error_code,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_configs_replaces_a_topics_overrides() {
    let (_cluster, mut client) = cluster_with_topic("t").await;
    for version in versions(ApiKey::AlterConfigs) {
        assert_eq!(
            client
                .alter(
                    version,
                    TOPIC,
                    "t",
                    &[("retention.ms", "1000"), ("cleanup.policy", "compact")]
                )
                .await,
            0,
            "v{version}"
        );
        let result = client.describe(1, TOPIC, "t", None).await;
        assert_eq!(
            entry(&result, "retention.ms"),
            (Some("1000".into()), source::TOPIC_CONFIG)
        );
        // AlterConfigs replaces the whole set: retention.ms goes back to its default.
        assert_eq!(
            client
                .alter(version, TOPIC, "t", &[("cleanup.policy", "delete")])
                .await,
            0
        );
        let result = client.describe(1, TOPIC, "t", None).await;
        assert_eq!(
            entry(&result, "retention.ms"),
            (default_of("retention.ms"), source::DEFAULT_CONFIG)
        );
        assert_eq!(
            entry(&result, "cleanup.policy"),
            (Some("delete".into()), source::TOPIC_CONFIG)
        );
    }
    let invalid = ErrorCode::INVALID_CONFIG.code();
    assert_eq!(
        client
            .alter(1, TOPIC, "t", &[("no.such.config", "1")])
            .await,
        invalid
    );
    assert_eq!(
        client
            .alter(1, TOPIC, "t", &[("retention.ms", "soon")])
            .await,
        invalid
    );
    assert_eq!(
        client
            .alter(1, TOPIC, "missing", &[("retention.ms", "1")])
            .await,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
    );
    // Nothing of a refused request is applied.
    let result = client.describe(1, TOPIC, "t", None).await;
    assert_eq!(entry(&result, "retention.ms").1, source::DEFAULT_CONFIG);
    // A deleted topic's overrides go with it.
    let Response::DeleteTopics(_) = client
        .call(
            4,
            DeleteTopicsRequest::default().with_topic_names(vec!["t".into()]),
        )
        .await
    else {
        panic!("not DeleteTopics")
    };
    let (_other, mut fresh) = cluster_with_topic("t").await;
    let result = fresh.describe(1, TOPIC, "t", None).await;
    assert_eq!(entry(&result, "cleanup.policy").1, source::DEFAULT_CONFIG);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_alter_configs_sets_deletes_appends_and_subtracts() {
    const SET: i8 = 0;
    const DELETE: i8 = 1;
    const APPEND: i8 = 2;
    const SUBTRACT: i8 = 3;
    let (_cluster, mut client) = cluster_with_topic("t").await;
    for version in versions(ApiKey::IncrementalAlterConfigs) {
        assert_eq!(
            client
                .incremental(version, TOPIC, "t", &[("retention.ms", SET, Some("5000"))])
                .await,
            0
        );
        // APPEND to the default list, then SUBTRACT what was there.
        assert_eq!(
            client
                .incremental(
                    version,
                    TOPIC,
                    "t",
                    &[("cleanup.policy", APPEND, Some("compact"))]
                )
                .await,
            0
        );
        let result = client.describe(1, TOPIC, "t", None).await;
        let appended = format!("{},compact", default_of("cleanup.policy").unwrap());
        assert_eq!(entry(&result, "cleanup.policy").0, Some(appended));
        assert_eq!(entry(&result, "retention.ms").0, Some("5000".into()));
        assert_eq!(
            client
                .incremental(
                    version,
                    TOPIC,
                    "t",
                    &[
                        (
                            "cleanup.policy",
                            SUBTRACT,
                            default_of("cleanup.policy").as_deref()
                        ),
                        ("retention.ms", DELETE, None)
                    ]
                )
                .await,
            0
        );
        let result = client.describe(1, TOPIC, "t", None).await;
        assert_eq!(entry(&result, "cleanup.policy").0, Some("compact".into()));
        assert_eq!(
            entry(&result, "retention.ms"),
            (default_of("retention.ms"), source::DEFAULT_CONFIG)
        );
        assert_eq!(
            client
                .incremental(version, TOPIC, "t", &[("cleanup.policy", DELETE, None)])
                .await,
            0
        );
    }
    let invalid = ErrorCode::INVALID_CONFIG.code();
    // APPEND to a config that is not a list; SET without a value; a bad value.
    assert_eq!(
        client
            .incremental(1, TOPIC, "t", &[("retention.ms", APPEND, Some("1"))])
            .await,
        invalid
    );
    assert_eq!(
        client
            .incremental(1, TOPIC, "t", &[("retention.ms", SET, None)])
            .await,
        invalid
    );
    assert_eq!(
        client
            .incremental(1, TOPIC, "t", &[("segment.bytes", SET, Some("4GiB"))])
            .await,
        invalid
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brokers_describe_their_defaults_and_take_dynamic_overrides() {
    let (_cluster, mut client) = cluster_with_topic("t").await;
    let result = client.describe(4, BROKER, "1", None).await;
    assert_eq!(result.error_code, 0);
    assert_eq!(result.configs.len(), definitions().broker.len());
    assert_eq!(
        entry(&result, "node.id"),
        (Some("1".into()), source::STATIC_BROKER_CONFIG)
    );
    assert_eq!(
        entry(&result, "log.retention.hours"),
        (
            definitions().broker["log.retention.hours"].default.clone(),
            source::DEFAULT_CONFIG
        )
    );
    // A config that needs a restart cannot change; a dynamic one can, for one broker or all.
    let needs_restart = definitions()
        .broker
        .iter()
        .find(|(_, d)| d.read_only)
        .map(|(name, _)| name.as_str())
        .expect("a read-only broker config");
    assert_eq!(
        client.alter(1, BROKER, "1", &[(needs_restart, "1")]).await,
        ErrorCode::INVALID_CONFIG.code()
    );
    assert!(!definitions().broker["log.retention.ms"].read_only);
    assert_eq!(
        client
            .alter(1, BROKER, "1", &[("log.retention.ms", "1000")])
            .await,
        0
    );
    // AlterConfigs replaces the cluster-wide overrides whole: leaving out the
    // min.insync.replicas a formatted Kafka 4 cluster holds removes it, which Kafka's
    // controller refuses while eligible leader replicas are on.
    assert_eq!(
        client
            .alter(1, BROKER, "", &[("log.retention.ms", "2000")])
            .await,
        ErrorCode::INVALID_CONFIG.code()
    );
    assert_eq!(
        client
            .alter(
                1,
                BROKER,
                "",
                &[("log.retention.ms", "2000"), ("min.insync.replicas", "1")]
            )
            .await,
        0
    );
    let one = client.describe(1, BROKER, "1", None).await;
    assert_eq!(
        entry(&one, "log.retention.ms"),
        (Some("1000".into()), source::DYNAMIC_BROKER_CONFIG)
    );
    let other = client.describe(1, BROKER, "0", None).await;
    assert_eq!(
        entry(&other, "log.retention.ms"),
        (Some("2000".into()), source::DYNAMIC_DEFAULT_BROKER_CONFIG)
    );
    let defaults = client.describe(1, BROKER, "", None).await;
    assert_eq!(defaults.configs.len(), 2);
    assert_eq!(
        client.describe(1, BROKER, "7", None).await.error_code,
        ErrorCode::INVALID_REQUEST.code()
    );
}
