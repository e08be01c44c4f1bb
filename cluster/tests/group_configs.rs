//! A group's configs (ConfigResource type 32, GROUP) through this crate's own client:
//! DescribeConfigs at every version, IncrementalAlterConfigs and AlterConfigs with Kafka's
//! checks and messages, overrides kept when the group is deleted, and `--as-version` 3.9,
//! which has no such resource. The expected answers are those a real Kafka 4.4 broker gave to
//! the same requests; the ignored tests compare the Java AdminClient's view of both
//! (`ClusterGroupConfigs`, run by `bash tools/ci-live.sh cluster_configs`):
//!
//! ```text
//! KAFKA_BROKER=HOST:PORT KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored group_configs::
//! ```

use crate::support;

use kafka_codec::messages::describe_configs_response::DescribeConfigsResult;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::{
    ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, OffsetCommitRequest,
};
use kafka_codec::{ApiKey, ErrorCode, Response};
use kafka_codec_cluster::configs::{source, GROUP};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use support::configs::Op;
use support::Client;

const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;

impl Client {
    async fn describe_group(
        &mut self,
        version: i16,
        group: &str,
        keys: Option<&[&str]>,
    ) -> DescribeConfigsResult {
        self.describe_configs(version, GROUP, group, keys).await
    }

    /// (error code, message) of an IncrementalAlterConfigs of `group`.
    async fn alter_group(
        &mut self,
        group: &str,
        configs: &[Op<'_>],
        validate_only: bool,
    ) -> (i16, Option<String>) {
        self.incremental_alter_configs(1, GROUP, group, configs, validate_only)
            .await
    }

    /// (error code, message) of a legacy AlterConfigs of `group`.
    async fn replace_group(
        &mut self,
        version: i16,
        group: &str,
        configs: &[(&str, &str)],
    ) -> (i16, Option<String>) {
        self.alter_configs(version, GROUP, group, configs).await
    }
}

type Synonyms = Vec<(String, Option<String>, i8)>;

/// (value, source, type, synonyms) of `name` in a describe result.
fn entry(result: &DescribeConfigsResult, name: &str) -> (Option<String>, i8, i8, Synonyms) {
    let config = result
        .configs
        .iter()
        .find(|c| c.name.as_str() == name)
        .unwrap_or_else(|| panic!("{name} not described"));
    assert!(!config.read_only && !config.is_sensitive, "{name}");
    let synonyms = config
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
    (
        config.value.as_ref().map(|v| v.as_str().to_owned()),
        config.config_source,
        config.config_type,
        synonyms,
    )
}

fn synonym(name: &str, value: &str, level: i8) -> (String, Option<String>, i8) {
    (name.to_owned(), Some(value.to_owned()), level)
}

async fn cluster() -> (Cluster, Client) {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let client = Client::connect(cluster.brokers()[0].address, "group-configs-test").await;
    (cluster, client)
}

fn versions(api: ApiKey) -> std::ops::RangeInclusive<i16> {
    let range = kafka_codec_cluster::handlers::advertised()
        .get(api.key())
        .unwrap_or_else(|| panic!("{api} is not served"));
    range.min..=range.max
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_describes_kafkas_configs_at_every_version() {
    let (_cluster, mut client) = cluster().await;
    // Any group id, held or not: the 21 configs Kafka does not keep internal.
    for version in versions(ApiKey::DescribeConfigs) {
        let result = client.describe_group(version, "no-such-group", None).await;
        assert_eq!(result.error_code, 0, "v{version}");
        assert_eq!(result.configs.len(), 21, "v{version}");
        let names: Vec<&str> = result.configs.iter().map(|c| c.name.as_str()).collect();
        assert!(!names.contains(&"consumer.assignor.offload.enable"));
        let lock = result
            .configs
            .iter()
            .find(|c| c.name.as_str() == "share.record.lock.duration.ms")
            .expect("described");
        assert_eq!(lock.value.as_ref().map(|v| v.as_str()), Some("30000"));
        if version == 0 {
            assert!(lock.is_default);
            continue;
        }
        // As a Kafka 4.4 broker answers (its values, sources, types and synonyms).
        let (value, from, _, synonyms) = entry(&result, "share.record.lock.duration.ms");
        assert_eq!(
            (value.as_deref(), from),
            (Some("30000"), source::DEFAULT_CONFIG)
        );
        assert_eq!(
            synonyms,
            [synonym(
                "group.share.record.lock.duration.ms",
                "30000",
                source::DEFAULT_CONFIG
            )]
        );
        let (value, _, _, synonyms) = entry(&result, "share.auto.offset.reset");
        assert_eq!(value.as_deref(), Some("latest"));
        assert_eq!(
            synonyms,
            [synonym(
                "share.auto.offset.reset",
                "latest",
                source::DEFAULT_CONFIG
            )]
        );
        let (value, _, _, synonyms) = entry(&result, "streams.assignor.name");
        assert_eq!(value.as_deref(), Some("sticky"));
        assert_eq!(
            synonyms,
            [synonym(
                "group.streams.assignors",
                "sticky",
                source::DEFAULT_CONFIG
            )]
        );
        let (value, _, _, _) = entry(&result, "errors.deadletterqueue.topic.name");
        assert_eq!(value.as_deref(), Some(""));
        if version >= 3 {
            let types: Vec<i8> = [
                "consumer.session.timeout.ms",
                "share.isolation.level",
                "share.renew.acknowledge.enable",
                "streams.rack.aware.assignment.tags",
            ]
            .iter()
            .map(|name| entry(&result, name).2)
            .collect();
            // INT, STRING, BOOLEAN, LIST.
            assert_eq!(types, [3, 2, 1, 7], "v{version}");
        }
    }
    let keys = client
        .describe_group(4, "g", Some(&["share.isolation.level"]))
        .await;
    assert_eq!(keys.configs.len(), 1);
    let empty = client.describe_group(4, "", None).await;
    assert_eq!(
        (
            empty.error_code,
            empty.error_message.as_ref().map(|m| m.as_str())
        ),
        (
            ErrorCode::INVALID_REQUEST.code(),
            Some("Group name must not be empty")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overrides_are_set_deleted_and_described_as_kafka_does() {
    let (_cluster, mut client) = cluster().await;
    let set = [
        ("share.auto.offset.reset", SET, Some("earliest")),
        ("share.record.lock.duration.ms", SET, Some("15000")),
        ("consumer.session.timeout.ms", SET, Some("50000")),
        ("share.isolation.level", SET, Some("read_committed")),
    ];
    // validate_only changes nothing.
    assert_eq!(client.alter_group("g", &set, true).await.0, 0);
    let (_, from, _, _) = entry(
        &client.describe_group(4, "g", None).await,
        "share.isolation.level",
    );
    assert_eq!(from, source::DEFAULT_CONFIG);
    assert_eq!(client.alter_group("g", &set, false).await.0, 0);
    let described = client.describe_group(4, "g", None).await;
    assert_eq!(described.configs.len(), 21);
    let (value, from, _, synonyms) = entry(&described, "share.record.lock.duration.ms");
    assert_eq!(
        (value.as_deref(), from),
        (Some("15000"), source::GROUP_CONFIG)
    );
    assert_eq!(
        synonyms,
        [
            synonym(
                "share.record.lock.duration.ms",
                "15000",
                source::GROUP_CONFIG
            ),
            synonym(
                "group.share.record.lock.duration.ms",
                "30000",
                source::DEFAULT_CONFIG
            ),
        ]
    );
    let (_, _, _, synonyms) = entry(&described, "share.auto.offset.reset");
    assert_eq!(
        synonyms,
        [
            synonym("share.auto.offset.reset", "earliest", source::GROUP_CONFIG),
            synonym("share.auto.offset.reset", "latest", source::DEFAULT_CONFIG),
        ]
    );
    // v0 has no source: IsDefault.
    let v0 = client
        .describe_group(0, "g", Some(&["share.isolation.level"]))
        .await;
    assert!(!v0.configs[0].is_default);

    // An internal config is taken and then described; a DELETE goes back to the default.
    let internal = [("consumer.assignor.offload.enable", SET, Some("false"))];
    assert_eq!(client.alter_group("g", &internal, false).await.0, 0);
    let delete = [("share.record.lock.duration.ms", DELETE, None)];
    assert_eq!(client.alter_group("g", &delete, false).await.0, 0);
    let described = client.describe_group(4, "g", None).await;
    assert_eq!(described.configs.len(), 22);
    let (value, from, _, _) = entry(&described, "share.record.lock.duration.ms");
    assert_eq!(
        (value.as_deref(), from),
        (Some("30000"), source::DEFAULT_CONFIG)
    );
    let (value, from, _, _) = entry(&described, "consumer.assignor.offload.enable");
    assert_eq!(
        (value.as_deref(), from),
        (Some("false"), source::GROUP_CONFIG)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_values_are_refused_with_kafkas_errors_and_change_nothing() {
    let (_cluster, mut client) = cluster().await;
    let invalid_config = ErrorCode::INVALID_CONFIG.code();
    // Each answer as a Kafka 4.4 broker gave it.
    let cases: [(&[Op], i16, &str); 9] = [
        (
            &[("no.such.config", SET, Some("1"))],
            invalid_config,
            "Unknown group config name: no.such.config",
        ),
        (
            &[("share.record.lock.duration.ms", SET, Some("1000"))],
            invalid_config,
            "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive.",
        ),
        (
            &[("consumer.session.timeout.ms", SET, Some("70000"))],
            invalid_config,
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            &[("share.heartbeat.interval.ms", SET, Some("16000"))],
            invalid_config,
            "share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            &[("share.delivery.count.limit", SET, Some("11"))],
            invalid_config,
            "share.delivery.count.limit must be in the range 2 to 10 inclusive.",
        ),
        (
            &[("share.delivery.count.limit", SET, Some("1"))],
            invalid_config,
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2",
        ),
        (
            &[("share.auto.offset.reset", SET, Some("sometimes"))],
            invalid_config,
            "Invalid value sometimes for configuration share.auto.offset.reset: Invalid value `sometimes` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
        ),
        (
            &[("streams.rack.aware.assignment.tags", APPEND, Some("zone"))],
            invalid_config,
            "Can't APPEND to key streams.rack.aware.assignment.tags because its type is not LIST.",
        ),
        // All or none: the good one is not kept.
        (
            &[
                ("share.delivery.count.limit", SET, Some("3")),
                ("share.session.timeout.ms", SET, Some("1")),
            ],
            invalid_config,
            "share.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
    ];
    for (configs, code, message) in cases {
        assert_eq!(
            client.alter_group("g", configs, false).await,
            (code, Some(message.to_owned())),
            "{configs:?}"
        );
    }
    let (_, from, _, _) = entry(
        &client.describe_group(4, "g", None).await,
        "share.delivery.count.limit",
    );
    assert_eq!(from, source::DEFAULT_CONFIG);
    assert_eq!(
        client
            .alter_group("", &[("share.delivery.count.limit", SET, Some("3"))], false)
            .await,
        (
            ErrorCode::INVALID_REQUEST.code(),
            Some("Default group resources are not allowed.".to_owned())
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_alter_configs_replaces_a_groups_overrides_as_kafka_does() {
    let (_cluster, mut client) = cluster().await;
    for version in versions(ApiKey::AlterConfigs) {
        let group = format!("legacy-{version}");
        let answer = client
            .replace_group(version, &group, &[("share.delivery.count.limit", "3")])
            .await;
        assert_eq!(answer, (0, None), "v{version}");
        assert_eq!(
            client
                .replace_group(version, &group, &[("no.such", "3")])
                .await,
            (
                ErrorCode::INVALID_CONFIG.code(),
                Some("Unknown group config name: no.such".to_owned())
            )
        );
        let described = client.describe_group(4, &group, None).await;
        let (value, from, _, _) = entry(&described, "share.delivery.count.limit");
        assert_eq!((value.as_deref(), from), (Some("3"), source::GROUP_CONFIG));
        // The whole set is replaced: the delivery-count limit goes back to its default.
        let answer = client
            .replace_group(
                version,
                &group,
                &[("share.record.lock.duration.ms", "20000")],
            )
            .await;
        assert_eq!(answer.0, 0);
        let described = client.describe_group(4, &group, None).await;
        assert_eq!(
            entry(&described, "share.delivery.count.limit").1,
            source::DEFAULT_CONFIG
        );
        assert_eq!(
            entry(&described, "share.record.lock.duration.ms")
                .0
                .as_deref(),
            Some("20000")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_groups_configs_outlive_the_group() {
    let (_cluster, mut client) = cluster().await;
    support::make_topic(&mut client, 5, "t", 1, 1).await;
    let set = [("consumer.session.timeout.ms", SET, Some("50000"))];
    assert_eq!(client.alter_group("g", &set, false).await.0, 0);
    let commit = OffsetCommitRequest::default()
        .with_group_id("g".into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name("t".into())
            .with_partitions(vec![
                OffsetCommitRequestPartition::default().with_committed_offset(0)
            ])]);
    let Response::OffsetCommit(committed) = client.call(8, commit).await else {
        panic!("not OffsetCommit")
    };
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);
    let Response::DeleteGroups(deleted) = client
        .call(
            2,
            DeleteGroupsRequest::default().with_groups_names(vec!["g".into()]),
        )
        .await
    else {
        panic!("not DeleteGroups")
    };
    assert_eq!(deleted.results[0].error_code, 0);
    // As on Kafka 4.4, whose group configs are not the group coordinator's.
    let (value, from, _, _) = entry(
        &client.describe_group(4, "g", None).await,
        "consumer.session.timeout.ms",
    );
    assert_eq!(
        (value.as_deref(), from),
        (Some("50000"), source::GROUP_CONFIG)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kip_848_member_is_told_its_groups_heartbeat_interval() {
    let (_cluster, mut client) = cluster().await;
    let set = [("consumer.heartbeat.interval.ms", SET, Some("6000"))];
    assert_eq!(client.alter_group("own", &set, false).await.0, 0);
    let mut intervals = Vec::new();
    for group in ["own", "usual"] {
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(format!("{group}-member").as_str().into())
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(60_000)
            .with_subscribed_topic_names(Some(vec!["t".into()]))
            .with_topic_partitions(Some(Vec::new()));
        let Response::ConsumerGroupHeartbeat(joined) = client.call(1, request).await else {
            panic!("not ConsumerGroupHeartbeat")
        };
        assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
        intervals.push(joined.heartbeat_interval_ms);
    }
    assert_eq!(intervals, [6000, 5000]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_has_no_group_config_resource_and_4_0_has() {
    for (release, code) in [("3.9", ErrorCode::INVALID_REQUEST.code()), ("4.0", 0)] {
        let cluster = Cluster::builder()
            .as_version(Release::parse(release).expect("a release"))
            .build()
            .await
            .expect("cluster");
        let mut client = Client::connect(cluster.brokers()[0].address, "old").await;
        let described = client.describe_group(2, "g", None).await;
        assert_eq!(described.error_code, code, "{release}");
        let set = [("share.delivery.count.limit", SET, Some("3"))];
        assert_eq!(
            client.alter_group("g", &set, false).await.0,
            code,
            "{release}"
        );
    }
}

/// `ClusterGroupConfigs` (Java AdminClient) against the cluster and against a real Kafka 4.4
/// broker: the same lines from both (every config described, fresh, overridden, after a
/// delete and after the group's deletion; each refusal's exception and message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker (KAFKA_BROKER=HOST:PORT) and java (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh)); bash tools/ci-live.sh cluster_configs"]
async fn the_java_admin_client_sees_the_same_group_configs_as_on_a_real_broker() {
    let broker = support::live_bootstrap();
    let nanos = support::nanos();
    let (group, topic) = (
        format!("group-configs-{nanos}"),
        format!("group-configs-{nanos}-t"),
    );
    let program = "kafkacodec.clients.ClusterGroupConfigs";
    let real = support::java_program(program, &[&broker, &group, &topic]).await;
    let cluster = Cluster::builder().build().await.expect("cluster");
    let ours = support::java_program(program, &[&cluster.bootstrap(), &group, &topic]).await;
    assert!(real.lines().count() > 80, "{real}");
    for (line, (real, ours)) in real.lines().zip(ours.lines()).enumerate() {
        assert_eq!(ours, real, "line {}", line + 1);
    }
    assert_eq!(ours.lines().count(), real.lines().count());
}
