//! ApiVersions: the APIs this cluster serves, each at every version the crate knows.

use super::Context;
use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::ApiVersions;

pub fn handle(context: &Context<'_>, _request: &ApiVersionsRequest) -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_api_keys(context.shared.advertised.to_api_keys())
}
