//! ApiVersions: the APIs this node serves, each at every version the crate knows (a
//! controller's set is its own, `controllers::advertised`), and from v3 the cluster's feature
//! levels (`crate::features`), on brokers and controllers alike, as Kafka's answer them.

use super::Context;
use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::ApiVersions;

pub fn handle(context: &Context<'_>, request: &ApiVersionsRequest) -> ApiVersionsResponse {
    // Client metrics subscriptions match on the software name and version (v3+).
    if context.version >= 3
        && context
            .shared
            .advertised
            .get(ApiKey::PushTelemetry.key())
            .is_some()
    {
        context.shared.client_metrics().software(
            context.peer,
            request.client_software_name.as_str(),
            request.client_software_version.as_str(),
        );
    }
    let response = ApiVersionsResponse::default()
        .with_api_keys(context.shared.advertised_on(context.node_id).to_api_keys());
    // The epoch: the metadata log's offset, as Kafka's (its metadata image's offset).
    let offset = context.shared.metadata_offset().unwrap_or(-1);
    context
        .shared
        .finalized_features()
        .at_least_epoch(offset)
        .write(response, context.version)
}
