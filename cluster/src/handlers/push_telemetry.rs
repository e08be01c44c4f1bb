//! PushTelemetry (KIP-714): a client's metrics, checked as Kafka 4.4's `ClientMetricsManager`
//! checks them (`crate::client_metrics`: a reserved instance id, a push after the client said
//! it was terminating, one before its interval, an unknown subscription id or compression
//! type, more than `telemetry.max.bytes`; then metrics that do not decompress) and kept for
//! `Cluster::telemetry_pushes`.

use super::Context;
use kafka_codec::messages::{PushTelemetryRequest, PushTelemetryResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::PushTelemetry;

/// The broker's `telemetry.max.bytes` (default 1 MiB).
pub(super) fn max_bytes(context: &Context<'_>) -> i32 {
    context
        .shared
        .state()
        .configs
        .static_or_default("telemetry.max.bytes")
        .unwrap_or(1_048_576)
}

pub fn handle(
    context: &Context<'_>,
    request: &PushTelemetryRequest,
    client_id: &str,
) -> PushTelemetryResponse {
    let max_bytes = max_bytes(context);
    let pushed = context.shared.client_metrics().push(
        request.client_instance_id,
        client_id,
        context.peer,
        request.subscription_id,
        request.terminating,
        request.compression_type,
        &request.metrics,
        max_bytes,
    );
    let error = pushed.err().map_or(0, |error| error.code());
    PushTelemetryResponse::default().with_error_code(error)
}
