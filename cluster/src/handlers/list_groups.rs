//! ListGroups: the groups this broker coordinates (clients ask every broker), filtered by
//! state (v4+, case-insensitive as Kafka's) and type (v5+: "classic", or "consumer" for a
//! KIP-848 group, whose state is its own: Empty, Assigning, Reconciling, Stable; "share"
//! for a share group: Empty or Stable).

use super::Context;
use kafka_codec::messages::list_groups_response::ListedGroup;
use kafka_codec::messages::{ListGroupsRequest, ListGroupsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::ListGroups;

const CLASSIC: &str = "classic";
const CONSUMER: &str = "consumer";
/// A streams group's type (KIP-1071): its states Empty, NotReady, Assigning, Reconciling,
/// Stable.
const STREAMS: &str = "streams";
/// A share group's type and protocol type.
const SHARE: &str = "share";

pub fn handle(context: &Context<'_>, request: &ListGroupsRequest) -> ListGroupsResponse {
    // Read before the groups are locked (the two locks are never held together).
    let available = context.coordinator_available();
    // Share groups first: the two locks are never held together.
    let share: Vec<(String, &'static str)> = context
        .shared
        .share_groups()
        .groups
        .iter()
        .filter(|(id, _)| context.coordinates_if(id, available))
        .map(|(id, group)| (id.clone(), group.state_name()))
        .collect();
    let groups = context.shared.groups();
    let wanted = |filter: &[_], value: &str| {
        filter.is_empty()
            || filter
                .iter()
                .any(|f: &kafka_codec::Utf8Bytes| f.eq_ignore_ascii_case(value))
    };
    let listed = groups
        .groups
        .iter()
        .filter(|(id, _)| context.coordinates_if(id, available))
        .map(|(id, group)| match (&group.consumer, &group.streams) {
            (Some(consumer), _) => (
                id.clone(),
                group.protocol_type.clone().unwrap_or_default(),
                consumer.state_name(),
                CONSUMER,
            ),
            (_, Some(streams)) => (
                id.clone(),
                group.protocol_type.clone().unwrap_or_default(),
                streams.state_name(),
                STREAMS,
            ),
            (None, None) => (
                id.clone(),
                group.protocol_type.clone().unwrap_or_default(),
                group.state.name(),
                CLASSIC,
            ),
        })
        .chain(
            share
                .into_iter()
                .map(|(id, state)| (id, SHARE.to_string(), state, SHARE)),
        )
        .filter(|(_, _, state, _)| context.version < 4 || wanted(&request.states_filter, state))
        .filter(|(_, _, _, kind)| context.version < 5 || wanted(&request.types_filter, kind))
        .map(|(id, protocol_type, state, kind)| {
            ListedGroup::default()
                .with_group_id(id.into())
                .with_protocol_type(protocol_type.into())
                .with_group_state(state.into())
                .with_group_type(kind.into())
        })
        .collect();
    ListGroupsResponse::default().with_groups(listed)
}
