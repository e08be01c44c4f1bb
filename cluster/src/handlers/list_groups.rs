//! ListGroups: the groups this broker coordinates (clients ask every broker), filtered by
//! state (v4+, case-insensitive as Kafka's) and type (v5+: "classic", or "consumer" for a
//! KIP-848 group, whose state is its own: Empty, Assigning, Reconciling, Stable).

use super::Context;
use kafka_codec::messages::list_groups_response::ListedGroup;
use kafka_codec::messages::{ListGroupsRequest, ListGroupsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::ListGroups;

const CLASSIC: &str = "classic";
const CONSUMER: &str = "consumer";

pub fn handle(context: &Context<'_>, request: &ListGroupsRequest) -> ListGroupsResponse {
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
        .filter(|(id, _)| context.coordinates(id))
        .map(|(id, group)| match &group.consumer {
            Some(consumer) => (id, group, consumer.state_name(), CONSUMER),
            None => (id, group, group.state.name(), CLASSIC),
        })
        .filter(|(_, _, state, _)| context.version < 4 || wanted(&request.states_filter, state))
        .filter(|(_, _, _, kind)| context.version < 5 || wanted(&request.types_filter, kind))
        .map(|(id, group, state, kind)| {
            ListedGroup::default()
                .with_group_id(id.clone().into())
                .with_protocol_type(group.protocol_type.clone().unwrap_or_default().into())
                .with_group_state(state.into())
                .with_group_type(kind.into())
        })
        .collect();
    ListGroupsResponse::default().with_groups(listed)
}
