//! DescribeGroups: state, protocol and members of each group (member metadata and
//! assignments only when the group is Stable, as Kafka gives them). A group this cluster
//! does not hold is "Dead"; from v6 it also carries GROUP_ID_NOT_FOUND.

use super::Context;
use crate::groups::GroupState;
use kafka_codec::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_codec::messages::{DescribeGroupsRequest, DescribeGroupsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeGroups;

pub fn handle(context: &Context<'_>, request: &DescribeGroupsRequest) -> DescribeGroupsResponse {
    // Read before the groups are locked (the two locks are never held together).
    let available = context.coordinator_available();
    let groups = context.shared.groups();
    let described = request
        .groups
        .iter()
        .map(|group_id| {
            let answer = DescribedGroup::default().with_group_id(group_id.clone());
            if !context.coordinates_if(group_id, available) {
                return answer.with_error_code(ErrorCode::NOT_COORDINATOR.code());
            }
            // A KIP-848 group is described by ConsumerGroupDescribe (a streams group by
            // StreamsGroupDescribe); here, as Kafka, it is
            // not found (clients fall back from one API to the other on this error).
            let group = groups
                .groups
                .get(group_id.as_str())
                .filter(|group| group.consumer.is_none() && group.streams.is_none());
            let Some(group) = group else {
                let answer = answer.with_group_state("Dead".into());
                return if context.version >= 6 {
                    answer
                        .with_error_code(ErrorCode::GROUP_ID_NOT_FOUND.code())
                        .with_error_message(Some(format!("Group {group_id} not found.").into()))
                } else {
                    answer
                };
            };
            let stable = group.state == GroupState::Stable;
            let protocol = group.protocol_name.clone().unwrap_or_default();
            let members = group
                .members
                .iter()
                .map(|member| {
                    let described = DescribedGroupMember::default()
                        .with_member_id(member.id.clone().into())
                        .with_group_instance_id(member.instance_id.clone().map(Into::into))
                        .with_client_id(member.client_id.clone().into())
                        .with_client_host(member.client_host.clone().into());
                    if stable {
                        described
                            .with_member_metadata(member.metadata(&protocol))
                            .with_member_assignment(member.assignment.clone())
                    } else {
                        described
                    }
                })
                .collect();
            answer
                .with_group_state(group.state.name().into())
                .with_protocol_type(group.protocol_type.clone().unwrap_or_default().into())
                .with_protocol_data(if stable { protocol } else { String::new() }.into())
                .with_members(members)
        })
        .collect();
    DescribeGroupsResponse::default().with_groups(described)
}
