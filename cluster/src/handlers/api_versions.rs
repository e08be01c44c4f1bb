//! ApiVersions: the APIs this node serves, each at every version the crate knows (a
//! controller's set is its own, `controllers::advertised`).

use super::Context;
use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::ApiVersions;

pub fn handle(context: &Context<'_>, _request: &ApiVersionsRequest) -> ApiVersionsResponse {
    ApiVersionsResponse::default()
        .with_api_keys(context.shared.advertised_on(context.node_id).to_api_keys())
}
