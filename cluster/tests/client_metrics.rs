//! Client metrics (KIP-714) through this crate's own client: subscriptions as CLIENT_METRICS
//! config resources (set, appended to, described, listed, refused as Kafka refuses them),
//! GetTelemetrySubscriptions' instance id and subscription, PushTelemetry's checks in
//! Kafka's order, and the pushes kept. The push interval of a client no subscription
//! matches is Kafka's default of 5 minutes, so "too early" needs no clock.

use crate::support;

use kafka_codec::messages::{
    ApiVersionsRequest, GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse,
    ListConfigResourcesRequest, PushTelemetryRequest,
};
use kafka_codec::{ApiKey, ErrorCode, Response, Uuid};
use kafka_codec_cluster::Cluster;
use support::Client;

const CLIENT_METRICS: i8 = 16;

async fn subscriptions(client: &mut Client, id: Uuid) -> GetTelemetrySubscriptionsResponse {
    let request = GetTelemetrySubscriptionsRequest::default().with_client_instance_id(id);
    let Response::GetTelemetrySubscriptions(answer) = client.call(0, request).await else {
        panic!("not GetTelemetrySubscriptions")
    };
    answer
}

async fn push(
    client: &mut Client,
    id: Uuid,
    subscription: i32,
    compression: i8,
    metrics: &[u8],
    terminating: bool,
) -> i16 {
    let request = PushTelemetryRequest::default()
        .with_client_instance_id(id)
        .with_subscription_id(subscription)
        .with_compression_type(compression)
        .with_terminating(terminating)
        .with_metrics(metrics.to_vec().into());
    let Response::PushTelemetry(answer) = client.call(0, request).await else {
        panic!("not PushTelemetry")
    };
    answer.error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn telemetry_is_served_only_when_asked_for() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "plain").await;
    let Response::ApiVersions(versions) = client.call(3, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    let keys: Vec<i16> = versions.api_keys.iter().map(|k| k.api_key).collect();
    assert!(!keys.contains(&ApiKey::GetTelemetrySubscriptions.key()));
    assert!(!keys.contains(&ApiKey::PushTelemetry.key()));

    let cluster = Cluster::builder()
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "plain").await;
    let Response::ApiVersions(versions) = client.call(3, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    let keys: Vec<i16> = versions.api_keys.iter().map(|k| k.api_key).collect();
    assert!(keys.contains(&ApiKey::GetTelemetrySubscriptions.key()));
    assert!(keys.contains(&ApiKey::PushTelemetry.key()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_config_resources_and_pushes_are_checked() {
    let cluster = Cluster::builder()
        .client_telemetry(true)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "metrics-client").await;

    // No subscription: Kafka's defaults, a new instance id, no metrics.
    let first = subscriptions(&mut client, Uuid::ZERO).await;
    assert_eq!(first.error_code, 0);
    assert!(!first.client_instance_id.is_zero());
    assert_eq!(first.push_interval_ms, 300_000);
    assert_eq!(first.telemetry_max_bytes, 1_048_576);
    assert!(first.delta_temporality);
    assert_eq!(
        first.accepted_compression_types.iter().collect::<Vec<i8>>(),
        [4, 3, 1, 2]
    );
    assert!(first.requested_metrics.is_empty());
    let id = first.client_instance_id;
    // Again before the interval: throttled, every other field at its default.
    let early = subscriptions(&mut client, id).await;
    assert_eq!(
        early.error_code,
        ErrorCode::THROTTLING_QUOTA_EXCEEDED.code()
    );
    assert!(early.client_instance_id.is_zero());

    // Pushes, in Kafka's order of checks: the zero id is invalid; an unknown subscription
    // id is refused and lets the client ask again at once (the push's time was taken, so
    // pushing again waits an interval, as on Kafka).
    assert_eq!(
        push(&mut client, Uuid::ZERO, 0, 0, b"x", false).await,
        ErrorCode::INVALID_REQUEST.code()
    );
    assert_eq!(
        push(&mut client, id, first.subscription_id ^ 1, 0, b"x", false).await,
        ErrorCode::UNKNOWN_SUBSCRIPTION_ID.code()
    );
    let again = subscriptions(&mut client, id).await;
    assert_eq!(again.error_code, 0);
    assert_eq!(again.subscription_id, first.subscription_id);
    assert_eq!(
        push(&mut client, id, first.subscription_id, 0, b"x", false).await,
        ErrorCode::THROTTLING_QUOTA_EXCEEDED.code()
    );
    // A compression type Kafka does not know.
    let second = subscriptions(&mut client, Uuid::ZERO).await;
    assert_eq!(
        push(
            &mut client,
            second.client_instance_id,
            second.subscription_id,
            9,
            b"x",
            false
        )
        .await,
        ErrorCode::UNSUPPORTED_COMPRESSION_TYPE.code()
    );
    // The first push after a subscription is in time, the next one too early; a
    // terminating push is taken whenever it comes, and nothing after it.
    let third = subscriptions(&mut client, Uuid::ZERO).await;
    let (id, subscription) = (third.client_instance_id, third.subscription_id);
    assert_eq!(
        push(&mut client, id, subscription, 0, b"metrics", false).await,
        0
    );
    assert_eq!(
        push(&mut client, id, subscription, 0, b"metrics", false).await,
        ErrorCode::THROTTLING_QUOTA_EXCEEDED.code()
    );
    assert_eq!(
        push(&mut client, id, subscription, 0, b"last", true).await,
        0
    );
    assert_eq!(
        push(&mut client, id, subscription, 0, b"more", true).await,
        ErrorCode::INVALID_REQUEST.code()
    );
    let kept = cluster.telemetry_pushes();
    assert_eq!(
        kept.iter()
            .map(|p| (p.client_instance_id, p.metrics.as_slice(), p.terminating))
            .collect::<Vec<_>>(),
        [(id, &b"metrics"[..], false), (id, &b"last"[..], true)]
    );

    // A subscription matching this client id: set, then set again with more metrics
    // (APPEND is refused: Kafka's controller knows no LIST type for client metrics configs,
    // as a Kafka 4.4 broker answered in cluster/tests/telemetry.rs).
    let set = client
        .incremental_alter_configs(
            1,
            CLIENT_METRICS,
            "producers",
            &[
                ("metrics", 0, Some("org.apache.kafka.producer.")),
                ("interval.ms", 0, Some("1000")),
                ("match", 0, Some("client_id=metrics-.*")),
            ],
            false,
        )
        .await;
    assert_eq!(set, (0, None));
    let appended = client
        .incremental_alter_configs(
            1,
            CLIENT_METRICS,
            "producers",
            &[("metrics", 2, Some("org.apache.kafka.consumer.fetch,b,a"))],
            false,
        )
        .await;
    assert_eq!(
        appended,
        (
            ErrorCode::INVALID_CONFIG.code(),
            Some("Can't APPEND to key metrics because its type is not LIST.".into())
        )
    );
    let set = client
        .incremental_alter_configs(
            1,
            CLIENT_METRICS,
            "producers",
            &[(
                "metrics",
                0,
                Some("org.apache.kafka.producer.,org.apache.kafka.consumer.fetch,b,a"),
            )],
            false,
        )
        .await;
    assert_eq!(set, (0, None));
    // Refusals: Kafka's codes and messages (`ClientMetricsConfigs.validate`).
    let refused = client
        .incremental_alter_configs(
            1,
            CLIENT_METRICS,
            "producers",
            &[("interval.ms", 0, Some("50"))],
            false,
        )
        .await;
    assert_eq!(
        refused,
        (
            ErrorCode::INVALID_REQUEST.code(),
            Some(
                "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 \
                 (1 hour)"
                    .into()
            )
        )
    );
    let refused = client
        .alter_configs(0, CLIENT_METRICS, "other", &[("match", "foo=bar")])
        .await;
    assert_eq!(
        refused,
        (
            ErrorCode::INVALID_CONFIG.code(),
            Some("Illegal client matching pattern: foo=bar".into())
        )
    );

    // Described: every config, the set ones as the subscription's own.
    let described = client
        .describe_configs(4, CLIENT_METRICS, "producers", None)
        .await;
    assert_eq!(described.error_code, 0);
    let configs: Vec<(String, Option<String>, i8)> = described
        .configs
        .iter()
        .map(|c| {
            (
                c.name.to_string(),
                c.value.as_ref().map(|v| v.to_string()),
                c.config_source,
            )
        })
        .collect();
    assert_eq!(
        configs,
        [
            ("interval.ms".into(), Some("1000".into()), 7),
            ("match".into(), Some("client_id=metrics-.*".into()), 7),
            (
                "metrics".into(),
                Some("org.apache.kafka.producer.,org.apache.kafka.consumer.fetch,b,a".into()),
                7
            ),
        ]
    );
    let Response::ListConfigResources(listed) =
        client.call(0, ListConfigResourcesRequest::default()).await
    else {
        panic!("not ListConfigResources")
    };
    let names: Vec<String> = listed
        .config_resources
        .iter()
        .map(|r| r.resource_name.to_string())
        .collect();
    assert_eq!(names, ["producers"]);

    // The changed subscriptions re-evaluate the instance at once: the metrics in Kafka's
    // `HashSet` order and the id Kafka computes for them (`subscription_ids_are_kafkas`).
    let fresh = subscriptions(&mut client, Uuid::ZERO).await;
    assert_eq!(fresh.error_code, 0);
    assert_eq!(fresh.push_interval_ms, 1000);
    assert_eq!(
        fresh
            .requested_metrics
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>(),
        [
            "org.apache.kafka.producer.",
            "a",
            "b",
            "org.apache.kafka.consumer.fetch"
        ]
    );
    // Another client id matches no subscription.
    let mut other = Client::connect(cluster.brokers()[0].address, "someone-else").await;
    let unmatched = subscriptions(&mut other, Uuid::ZERO).await;
    assert_eq!(unmatched.push_interval_ms, 300_000);
    assert!(unmatched.requested_metrics.is_empty());

    // Deleting every config deletes the subscription.
    let deleted = client
        .incremental_alter_configs(
            1,
            CLIENT_METRICS,
            "producers",
            &[
                ("metrics", 1, None),
                ("interval.ms", 1, None),
                ("match", 1, None),
            ],
            false,
        )
        .await;
    assert_eq!(deleted.0, 0);
    let Response::ListConfigResources(listed) =
        client.call(0, ListConfigResourcesRequest::default()).await
    else {
        panic!("not ListConfigResources")
    };
    assert!(listed.config_resources.is_empty());
}
