//! GetTelemetrySubscriptions (KIP-714): the client's instance id (assigned when it sends the
//! zero id), its subscription id, the metrics it is subscribed to and how often to push them,
//! as Kafka 4.4's `ClientMetricsManager` answers (`crate::client_metrics`). Served only with
//! `ClusterBuilder::client_telemetry`, as Kafka only with a client telemetry receiver.

use super::Context;
use kafka_codec::messages::{GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::GetTelemetrySubscriptions;

pub fn handle(
    context: &Context<'_>,
    request: &GetTelemetrySubscriptionsRequest,
    client_id: &str,
) -> GetTelemetrySubscriptionsResponse {
    let max_bytes = super::push_telemetry::max_bytes(context);
    // Made before the client metrics are locked: the two locks are never held together.
    let candidate = context.shared.state().new_id();
    let answer = context.shared.client_metrics().get_subscriptions(
        request.client_instance_id,
        client_id,
        context.peer,
        candidate,
    );
    match answer {
        Ok(subscribed) => GetTelemetrySubscriptionsResponse::default()
            .with_client_instance_id(subscribed.client_instance_id)
            .with_subscription_id(subscribed.subscription_id)
            .with_accepted_compression_types(
                crate::client_metrics::ACCEPTED_COMPRESSION_TYPES
                    .into_iter()
                    .collect(),
            )
            .with_push_interval_ms(subscribed.push_interval_ms)
            .with_telemetry_max_bytes(max_bytes)
            .with_delta_temporality(true)
            .with_requested_metrics(
                subscribed
                    .requested_metrics
                    .into_iter()
                    .map(|metric| metric.as_str().into())
                    .collect(),
            ),
        // Kafka's error response: the error and every other field at its default.
        Err(error) => GetTelemetrySubscriptionsResponse::default().with_error_code(error.code()),
    }
}
