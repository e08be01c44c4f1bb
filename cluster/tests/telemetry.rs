//! Client telemetry (KIP-714) compared with a real Kafka 4.4 broker, and the ACLs on the
//! APIs Kafka authorizes on the cluster resource.
//!
//! The comparison (ignored; `bash tools/ci-live.sh cluster_reassign`, with a broker that
//! broker.sh started with KAFKA_TELEMETRY=1) sends one sequence to the broker and to a
//! cluster with `client_telemetry(true)`: subscriptions set, refused and described, then
//! GetTelemetrySubscriptions and PushTelemetry through every check (a good push, too early,
//! an unknown subscription id, bad compression, too large, terminating, after terminating,
//! reserved ids), every field of every answer compared. The client instance ids are the
//! test's own, the same at both, except the ones the servers assign, which are compared by
//! their relation: each server gives the other's assigned id the subscription id it gave.
//! And librdkafka (ignored, needs `KAFKA_CLIENTS_PYTHON`) pushes its metrics to the cluster,
//! which keeps them (`tools/clients/cluster_telemetry_librdkafka.py`).
//!
//! The ACLs, read from Kafka 4.4's jar: UpdateFeatures and UnregisterBroker need ALTER on
//! the cluster (`ControllerApis`, to which a broker forwards them), ListConfigResources
//! DESCRIBE_CONFIGS (`KafkaApis`), each refused with CLUSTER_AUTHORIZATION_FAILED;
//! GetTelemetrySubscriptions and PushTelemetry need nothing (`KafkaApis` asks no ACL).

use crate::support;

use kafka_codec::messages::create_acls_request::AclCreation;
use kafka_codec::messages::update_features_request::FeatureUpdateKey;
use kafka_codec::messages::*;
use kafka_codec::{ErrorCode, Response, Uuid};
use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
use kafka_codec_cluster::Cluster;
use support::Client;

const CLUSTER: i8 = 4;
const LITERAL: i8 = 3;
const ALTER: i8 = 7;
const DESCRIBE_CONFIGS: i8 = 10;
const ALLOW: i8 = 3;
const DENIED: i16 = ErrorCode::CLUSTER_AUTHORIZATION_FAILED.code();

async fn cluster() -> Cluster {
    Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
        .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
        .super_user("User:admin")
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster")
}

/// The error codes of UpdateFeatures (validate only), UnregisterBroker (of a broker the
/// cluster runs) and ListConfigResources, as `client` gets them.
async fn cluster_scoped(client: &mut Client, broker_id: i32) -> [i16; 3] {
    let update = UpdateFeaturesRequest::default()
        .with_timeout_ms(1000)
        .with_validate_only(true)
        .with_feature_updates(vec![FeatureUpdateKey::default()
            .with_feature("group.version".into())
            .with_max_version_level(1)
            .with_upgrade_type(1)]);
    let Response::UpdateFeatures(updated) = client.call(1, update).await else {
        panic!("not UpdateFeatures")
    };
    let unregister = UnregisterBrokerRequest::default().with_broker_id(broker_id);
    let Response::UnregisterBroker(unregistered) = client.call(0, unregister).await else {
        panic!("not UnregisterBroker")
    };
    let Response::ListConfigResources(listed) =
        client.call(1, ListConfigResourcesRequest::default()).await
    else {
        panic!("not ListConfigResources")
    };
    if updated.error_code == DENIED {
        // As Kafka's `UpdateFeaturesResponse.createWithErrors`: the top level only.
        assert!(updated.results.is_empty());
    }
    [
        updated.error_code,
        unregistered.error_code,
        listed.error_code,
    ]
}

fn grant(operation: i8) -> AclCreation {
    AclCreation::default()
        .with_resource_type(CLUSTER)
        .with_resource_name("kafka-cluster".into())
        .with_resource_pattern_type(LITERAL)
        .with_principal("User:alice".into())
        .with_host("*".into())
        .with_operation(operation)
        .with_permission_type(ALLOW)
}

#[tokio::test]
async fn update_features_unregister_broker_and_list_config_resources_need_the_cluster() {
    let cluster = cluster().await;
    let broker = &cluster.brokers()[0];
    let mut admin = support::login(broker.address, "admin").await;
    let mut alice = support::login(broker.address, "alice").await;
    assert_eq!(
        cluster_scoped(&mut alice, broker.node_id).await,
        [DENIED; 3],
        "no ACL: every one refused"
    );
    assert_eq!(
        cluster_scoped(&mut admin, broker.node_id).await,
        [0; 3],
        "a super user"
    );
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![grant(ALTER)]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    assert_eq!(
        cluster_scoped(&mut alice, broker.node_id).await,
        [0, 0, DENIED],
        "ALTER does not imply DESCRIBE_CONFIGS"
    );
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![grant(DESCRIBE_CONFIGS)]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    assert_eq!(cluster_scoped(&mut alice, broker.node_id).await, [0; 3]);
}

#[tokio::test]
async fn telemetry_needs_no_acl() {
    let cluster = cluster().await;
    let mut alice = support::login(cluster.brokers()[0].address, "alice").await;
    let Response::GetTelemetrySubscriptions(subscribed) = alice
        .call(0, GetTelemetrySubscriptionsRequest::default())
        .await
    else {
        panic!("not GetTelemetrySubscriptions")
    };
    assert_eq!(subscribed.error_code, 0);
    assert_ne!(subscribed.client_instance_id, Uuid::ZERO);
    // A terminating push with the id and subscription just given: accepted.
    let push = PushTelemetryRequest::default()
        .with_client_instance_id(subscribed.client_instance_id)
        .with_subscription_id(subscribed.subscription_id)
        .with_terminating(true)
        .with_metrics(Vec::new().into());
    let Response::PushTelemetry(pushed) = alice.call(0, push).await else {
        panic!("not PushTelemetry")
    };
    assert_eq!(pushed.error_code, 0);
}

const CLIENT_METRICS: i8 = 16;
const BROKER_CONFIGS: i8 = 4;
/// `AlterConfigOp.OpType` codes.
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
/// broker.sh's receiver (tools/kafka-broker/telemetry/TelemetryLog.java).
const RECEIVER: &str = "kafkacodec.TelemetryLog";

fn alter(
    resource_type: i8,
    name: &str,
    configs: &[(&str, i8, Option<&str>)],
) -> IncrementalAlterConfigsRequest {
    use kafka_codec::messages::incremental_alter_configs_request::*;
    IncrementalAlterConfigsRequest::default().with_resources(vec![AlterConfigsResource::default()
        .with_resource_type(resource_type)
        .with_resource_name(name.into())
        .with_configs(
            configs
                .iter()
                .map(|(key, op, value)| {
                    AlterableConfig::default()
                        .with_name((*key).into())
                        .with_config_operation(*op)
                        .with_value(value.map(Into::into))
                })
                .collect(),
        )])
}

/// Whether the server at `client` advertises GetTelemetrySubscriptions.
async fn telemetry_advertised(client: &mut Client) -> bool {
    let Response::ApiVersions(versions) = client.call(2, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    versions
        .api_keys
        .iter()
        .any(|k| k.api_key == kafka_codec::ApiKey::GetTelemetrySubscriptions.key())
}

/// The test's client instance ids and the names it gives them in its lines.
struct Ids(Vec<(Uuid, String)>);

impl Ids {
    fn name(&self, id: Uuid) -> String {
        self.0
            .iter()
            .find(|(known, _)| *known == id)
            .map_or_else(|| format!("other {id}"), |(_, name)| name.clone())
    }
}

fn describe_lines(lines: &mut Vec<String>, keys: &str, described: &DescribeConfigsResponse) {
    for result in &described.results {
        lines.push(format!(
            "describe {keys}: {} {:?}",
            result.error_code, result.error_message
        ));
        for c in &result.configs {
            lines.push(format!(
                "  {} = {:?} read_only={} source={} sensitive={} type={}",
                c.name, c.value, c.read_only, c.config_source, c.is_sensitive, c.config_type
            ));
        }
    }
}

/// One server's answers to the sequence, as lines; and the instance id it assigned with the
/// subscription id it gave it.
async fn sequence(address: std::net::SocketAddr, run: u128) -> (Vec<String>, Uuid, i32) {
    let name = format!("kc-telemetry-{run}");
    let mut client = Client::connect(address, &name).await;
    let mut lines = Vec::new();
    let alter_line = |what: &str, answer: Response| {
        let Response::IncrementalAlterConfigs(answer) = answer else {
            panic!("not IncrementalAlterConfigs")
        };
        let r = &answer.responses[0];
        format!(
            "alter {what}: {} {:?} {:?}",
            r.error_code, r.error_message, r.resource_name
        )
    };
    let matching = format!("client_id={name}");
    for (what, configs) in [
        ("interval 50", vec![("interval.ms", SET, Some("50"))]),
        ("interval abc", vec![("interval.ms", SET, Some("abc"))]),
        ("match bad", vec![("match", SET, Some("client_id"))]),
        ("unknown name", vec![("x", SET, Some("1"))]),
        (
            "subscription",
            vec![
                ("metrics", SET, Some("org.apache.kafka.producer.,b,a")),
                ("interval.ms", SET, Some("60000")),
                ("match", SET, Some(matching.as_str())),
            ],
        ),
        (
            "append",
            vec![("metrics", APPEND, Some("org.apache.kafka.consumer.fetch"))],
        ),
    ] {
        let answer = client.call(1, alter(CLIENT_METRICS, &name, &configs)).await;
        lines.push(alter_line(what, answer));
    }
    // Every config (null keys), and an empty list of keys.
    for keys in [None, Some(Vec::new())] {
        let describe = DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(CLIENT_METRICS)
                .with_resource_name(name.as_str().into())
                .with_configuration_keys(keys.clone()),
        ]);
        let Response::DescribeConfigs(described) = client.call(4, describe).await else {
            panic!("not DescribeConfigs")
        };
        describe_lines(&mut lines, &format!("{keys:?}"), &described);
    }

    // The test's own ids: the same at both servers, new at every run (a broker keeps an
    // instance for a minute at least).
    let base = Uuid::from_halves((run >> 64) as i64 | 1 << 62, run as i64);
    let (most, least) = base.halves();
    let id = |n: i64| Uuid::from_halves(most, least.wrapping_add(n));
    let ids = Ids(vec![
        (Uuid::ZERO, "zero".into()),
        (Uuid::from_halves(0, 1), "reserved".into()),
        (id(0), "u".into()),
        (id(1), "v".into()),
        (id(2), "w".into()),
        (id(3), "x".into()),
        (id(4), "y".into()),
    ]);
    let get = async |client: &mut Client, instance: Uuid, what: &str| {
        let request = GetTelemetrySubscriptionsRequest::default().with_client_instance_id(instance);
        let Response::GetTelemetrySubscriptions(r) = client.call(0, request).await else {
            panic!("not GetTelemetrySubscriptions")
        };
        let line = format!(
            "get {what} ({}): {} throttle={} id={} sub={} compression={:?} interval={} \
             max_bytes={} delta={} metrics={:?}",
            ids.name(instance),
            r.error_code,
            r.throttle_time_ms,
            ids.name(r.client_instance_id),
            r.subscription_id,
            r.accepted_compression_types.iter().collect::<Vec<i8>>(),
            r.push_interval_ms,
            r.telemetry_max_bytes,
            r.delta_temporality,
            r.requested_metrics
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>(),
        );
        (line, r.subscription_id, r.client_instance_id)
    };
    let push = async |client: &mut Client,
                      instance: Uuid,
                      subscription: i32,
                      compression: i8,
                      metrics: Vec<u8>,
                      terminating: bool,
                      what: &str| {
        let request = PushTelemetryRequest::default()
            .with_client_instance_id(instance)
            .with_subscription_id(subscription)
            .with_compression_type(compression)
            .with_terminating(terminating)
            .with_metrics(metrics.into());
        let Response::PushTelemetry(r) = client.call(0, request).await else {
            panic!("not PushTelemetry")
        };
        format!(
            "push {what} ({}): {} throttle={}",
            ids.name(instance),
            r.error_code,
            r.throttle_time_ms
        )
    };
    let metrics = b"not OTLP, which Kafka does not read".to_vec();

    // u: a good push, one too early, the terminating one, and after it.
    let (line, sub, _) = get(&mut client, id(0), "first").await;
    lines.push(line);
    lines.push(get(&mut client, id(0), "again at once").await.0);
    for (what, terminating) in [
        ("good", false),
        ("too early", false),
        ("terminating", true),
        ("after terminating", false),
        ("terminating again", true),
    ] {
        let line = push(
            &mut client,
            id(0),
            sub,
            0,
            metrics.clone(),
            terminating,
            what,
        )
        .await;
        lines.push(line);
    }
    lines.push(get(&mut client, id(0), "after terminating").await.0);
    // v: an unknown subscription id, then asked again at once, then pushed again.
    let (line, sub) = {
        let (line, sub, _) = get(&mut client, id(1), "first").await;
        (line, sub)
    };
    lines.push(line);
    let wrong = sub.wrapping_add(1);
    let line = push(
        &mut client,
        id(1),
        wrong,
        0,
        metrics.clone(),
        false,
        "unknown sub",
    )
    .await;
    lines.push(line);
    lines.push(get(&mut client, id(1), "after unknown sub").await.0);
    let line = push(
        &mut client,
        id(1),
        sub,
        0,
        metrics.clone(),
        false,
        "right sub",
    )
    .await;
    lines.push(line);
    // w: a compression type Kafka does not know, then asked again at once.
    let (line, sub, _) = get(&mut client, id(2), "first").await;
    lines.push(line);
    let line = push(
        &mut client,
        id(2),
        sub,
        9,
        metrics.clone(),
        false,
        "compression 9",
    )
    .await;
    lines.push(line);
    lines.push(get(&mut client, id(2), "after compression 9").await.0);
    // x: zstd that is not zstd.
    let (line, sub, _) = get(&mut client, id(3), "first").await;
    lines.push(line);
    let line = push(
        &mut client,
        id(3),
        sub,
        4,
        metrics.clone(),
        false,
        "bad zstd",
    )
    .await;
    lines.push(line);
    // y: one byte more than telemetry.max.bytes (Kafka's default, 1 MiB).
    let (line, sub, _) = get(&mut client, id(4), "first").await;
    lines.push(line);
    let line = push(
        &mut client,
        id(4),
        sub,
        0,
        vec![0; (1 << 20) + 1],
        false,
        "too large",
    )
    .await;
    lines.push(line);
    // The reserved ids.
    for reserved in [Uuid::ZERO, Uuid::from_halves(0, 1)] {
        let line = push(
            &mut client,
            reserved,
            0,
            0,
            metrics.clone(),
            false,
            "reserved",
        )
        .await;
        lines.push(line);
    }
    // (A GetTelemetrySubscriptions with the reserved id 1 is taken as any id, and a broker
    // keeps that instance from one run to the next: not compared.)

    // The subscription deleted, then an id assigned (no subscription matches it then).
    let deleted = client
        .call(
            1,
            alter(
                CLIENT_METRICS,
                &name,
                &[
                    ("metrics", DELETE, None),
                    ("interval.ms", DELETE, None),
                    ("match", DELETE, None),
                ],
            ),
        )
        .await;
    lines.push(alter_line("deleted", deleted));
    let (line, sub, assigned) = get(&mut client, Uuid::ZERO, "assigned").await;
    assert!(!assigned.is_zero() && assigned != Uuid::from_halves(0, 1));
    // The line names the assigned id "other ID": left out of the comparison.
    lines.push(
        line.replace(&assigned.to_string(), "ASSIGNED")
            .replace(&format!("sub={sub}"), "sub=S"),
    );
    (lines, assigned, sub)
}

/// The subscription id `address` gives instance `id` of a client no subscription matches.
async fn subscription_of(address: std::net::SocketAddr, run: u128, id: Uuid) -> i32 {
    let mut client = Client::connect(address, &format!("kc-telemetry-{run}")).await;
    let request = GetTelemetrySubscriptionsRequest::default().with_client_instance_id(id);
    let Response::GetTelemetrySubscriptions(r) = client.call(0, request).await else {
        panic!("not GetTelemetrySubscriptions")
    };
    assert_eq!(r.error_code, 0);
    r.subscription_id
}

#[tokio::test]
#[ignore = "needs a Kafka broker started with KAFKA_TELEMETRY=1: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_reassign)"]
async fn telemetry_is_answered_as_a_real_broker_answers() {
    let broker = support::live_broker().await;
    let mut admin = Client::connect(broker, "kc-telemetry-admin").await;
    if !telemetry_advertised(&mut admin).await {
        // broker.sh put the receiver on the classpath; it takes effect as a dynamic config
        // and stays until the broker stops.
        let answer = admin
            .call(
                1,
                alter(
                    BROKER_CONFIGS,
                    "",
                    &[("metric.reporters", APPEND, Some(RECEIVER))],
                ),
            )
            .await;
        let Response::IncrementalAlterConfigs(answer) = answer else {
            panic!("not IncrementalAlterConfigs")
        };
        assert_eq!(
            answer.responses[0].error_code, 0,
            "metric.reporters={RECEIVER}: {:?} (was the broker started with KAFKA_TELEMETRY=1?)",
            answer.responses[0].error_message
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !telemetry_advertised(&mut admin).await {
            assert!(
                std::time::Instant::now() < deadline,
                "the broker does not advertise GetTelemetrySubscriptions with {RECEIVER}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    let cluster = Cluster::builder()
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster");
    let ours = cluster.brokers()[0].address;
    let run = support::nanos();
    let (kafka, kafka_assigned, kafka_sub) = sequence(broker, run).await;
    let (cluster_lines, cluster_assigned, cluster_sub) = sequence(ours, run).await;
    for line in &kafka {
        println!("kafka: {line}");
    }
    assert_eq!(cluster_lines, kafka, "the cluster's lines, then Kafka's");
    // The assigned ids: each server's subscription id for the other's is the one the other
    // gave.
    assert_ne!(kafka_assigned, cluster_assigned);
    assert_eq!(subscription_of(ours, run, kafka_assigned).await, kafka_sub);
    assert_eq!(
        subscription_of(broker, run, cluster_assigned).await,
        cluster_sub
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_pushes_its_metrics_to_the_cluster() {
    let cluster = Cluster::builder()
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "setup").await;
    let Response::CreateTopics(created) = client
        .call(7, support::create_topics(&["pushed"], 1, 1))
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    let subscribe = alter(
        CLIENT_METRICS,
        "everything",
        &[
            ("metrics", SET, Some("*")),
            ("interval.ms", SET, Some("100")),
        ],
    );
    let Response::IncrementalAlterConfigs(subscribed) = client.call(1, subscribe).await else {
        panic!("not IncrementalAlterConfigs")
    };
    assert_eq!(subscribed.responses[0].error_code, 0);
    support::run_client_script(
        "cluster_telemetry_librdkafka.py",
        &[cluster.bootstrap(), "pushed".into()],
    )
    .await;
    // librdkafka pushes an interval (100 ms, jittered) after its subscription and again at
    // close (`terminating`) when no push is in flight then: at least one push, one instance,
    // metrics that decompress (else INVALID_RECORD and not kept), a terminating one last.
    let pushes = cluster.telemetry_pushes();
    let seen: Vec<(bool, i8, usize)> = pushes
        .iter()
        .map(|p| (p.terminating, p.compression_type, p.metrics.len()))
        .collect();
    assert!(!pushes.is_empty(), "no push kept");
    let instance = pushes[0].client_instance_id;
    assert!(pushes.iter().all(|p| p.client_instance_id == instance));
    assert!(pushes.iter().all(|p| !p.metrics.is_empty()), "{seen:?}");
    assert!(
        pushes[..pushes.len() - 1].iter().all(|p| !p.terminating),
        "nothing after a terminating push: {seen:?}"
    );
    println!("pushes (terminating, compression, bytes): {seen:?}");
}

/// What the comparison found a Kafka 4.4 broker answers, kept in plain `cargo test`: a push
/// whose metrics are not what their codec says is INVALID_RECORD (the receiver could not
/// decompress them), and APPEND to a subscription's `metrics` is refused.
#[tokio::test]
async fn metrics_that_do_not_decompress_and_appends_are_refused() {
    let cluster = Cluster::builder()
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "c").await;
    let Response::GetTelemetrySubscriptions(subscribed) = client
        .call(0, GetTelemetrySubscriptionsRequest::default())
        .await
    else {
        panic!("not GetTelemetrySubscriptions")
    };
    let push = PushTelemetryRequest::default()
        .with_client_instance_id(subscribed.client_instance_id)
        .with_subscription_id(subscribed.subscription_id)
        .with_compression_type(4)
        .with_metrics(b"not zstd".to_vec().into());
    let Response::PushTelemetry(pushed) = client.call(0, push).await else {
        panic!("not PushTelemetry")
    };
    assert_eq!(pushed.error_code, ErrorCode::INVALID_RECORD.code());
    assert!(cluster.telemetry_pushes().is_empty());
    let Response::IncrementalAlterConfigs(appended) = client
        .call(
            1,
            alter(CLIENT_METRICS, "s", &[("metrics", APPEND, Some("a."))]),
        )
        .await
    else {
        panic!("not IncrementalAlterConfigs")
    };
    let r = &appended.responses[0];
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (
            ErrorCode::INVALID_CONFIG.code(),
            Some("Can't APPEND to key metrics because its type is not LIST.")
        )
    );
}
