//! StreamsGroupTopologyDescriptionUpdate (KIP-1071's topology descriptions, key 93): a Kafka
//! Streams member sends the description of its topology (nodes, stores, successors) for
//! StreamsGroupDescribe to show. Kafka 4.4 lists it (v0) in ApiVersions but keeps
//! descriptions only in a broker plugin (`group.streams.topology.description.plugin.class`),
//! which its default configuration lacks; without one, `GroupCoordinatorService` refuses
//! every update before it looks at the group, member or epoch: UNSUPPORTED_VERSION with the
//! message below. The cluster has no such plugin, so it answers as a default Kafka 4.4 does
//! (READ on the group is checked first, by the authorizer, as `KafkaApis` does);
//! StreamsGroupDescribe v1 then shows no description (null, status 0) and heartbeats never
//! ask for one (`TopologyDescriptionRequired` false). Proved against a real broker:
//! `tests/streams_topology_kafka.rs`.

use super::Context;
use kafka_codec::messages::{
    StreamsGroupTopologyDescriptionUpdateRequest, StreamsGroupTopologyDescriptionUpdateResponse,
};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::StreamsGroupTopologyDescriptionUpdate;

/// Kafka 4.4's refusal when no topology description plugin is configured.
pub const NO_PLUGIN: &str =
    "The broker has no streams group topology description plugin configured.";

pub fn handle(
    _context: &Context<'_>,
    _request: &StreamsGroupTopologyDescriptionUpdateRequest,
) -> StreamsGroupTopologyDescriptionUpdateResponse {
    StreamsGroupTopologyDescriptionUpdateResponse::default()
        .with_error_code(ErrorCode::UNSUPPORTED_VERSION.code())
        .with_error_message(Some(NO_PLUGIN.into()))
}
