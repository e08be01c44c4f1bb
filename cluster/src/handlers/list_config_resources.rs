//! ListConfigResources (v0: ListClientMetricsResources, KIP-714; v1: KIP-1142): the config
//! resources of the types asked for, as Kafka 4.4's `KafkaApis` lists them: v0 knows only
//! client metrics resources, v1 groups (32), client metrics (16), broker loggers (8), brokers
//! (4) and topics (2); no types asked for means every type the version knows, and a type it
//! does not know is UNSUPPORTED_VERSION with nothing listed. Groups: those holding group
//! configs (name order); brokers and broker loggers: the unfenced brokers, by node id;
//! topics: every topic (name order; Kafka's hash set has no order); client metrics
//! subscriptions (`crate::client_metrics`) in name order. DESCRIBE_CONFIGS on the cluster when ACLs are enforced.

use super::Context;
use kafka_codec::messages::list_config_resources_response::ConfigResource;
use kafka_codec::messages::{ListConfigResourcesRequest, ListConfigResourcesResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ListConfigResources;

/// Kafka's `ConfigResource.Type` ids.
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const BROKER_LOGGER: i8 = 8;
const CLIENT_METRICS: i8 = 16;
const GROUP: i8 = 32;

pub fn handle(
    context: &Context<'_>,
    request: &ListConfigResourcesRequest,
) -> ListConfigResourcesResponse {
    // `ListConfigResourcesRequest.supportedResourceTypes`.
    let supported: &[i8] = if context.version == 0 {
        &[CLIENT_METRICS]
    } else {
        &[TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP]
    };
    let asked: Vec<i8> = if context.version >= 1 {
        request.resource_types.iter().collect()
    } else {
        Vec::new()
    };
    if asked.iter().any(|t| !supported.contains(t)) {
        return ListConfigResourcesResponse::default()
            .with_error_code(ErrorCode::UNSUPPORTED_VERSION.code())
            .with_config_resources(Vec::new());
    }
    let wanted = |t: i8| {
        if asked.is_empty() {
            supported.contains(&t)
        } else {
            asked.contains(&t)
        }
    };
    // Taken before the state: the two locks are never held together.
    let subscriptions: Vec<String> =
        if wanted(CLIENT_METRICS) && crate::client_metrics::offered(context.shared.release) {
            context.shared.client_metrics().names().cloned().collect()
        } else {
            Vec::new()
        };
    let state = context.shared.state();
    let resource = |name: String, kind: i8| {
        ConfigResource::default()
            .with_resource_name(name.into())
            .with_resource_type(kind)
    };
    let brokers: Vec<i32> = context
        .broker_ids()
        .into_iter()
        .filter(|node| !state.is_fenced(*node))
        .collect();
    let mut listed = Vec::new();
    // Kafka's order: groups, client metrics, broker loggers, brokers, topics.
    if wanted(GROUP) {
        listed.extend(
            state
                .configs
                .groups
                .keys()
                .map(|g| resource(g.clone(), GROUP)),
        );
    }
    listed.extend(
        subscriptions
            .into_iter()
            .map(|name| resource(name, CLIENT_METRICS)),
    );
    if wanted(BROKER_LOGGER) {
        listed.extend(
            brokers
                .iter()
                .map(|b| resource(b.to_string(), BROKER_LOGGER)),
        );
    }
    if wanted(BROKER) {
        listed.extend(brokers.iter().map(|b| resource(b.to_string(), BROKER)));
    }
    if wanted(TOPIC) {
        listed.extend(state.topics.keys().map(|t| resource(t.clone(), TOPIC)));
    }
    ListConfigResourcesResponse::default()
        .with_error_code(0)
        .with_config_resources(listed)
}
