//! ShareGroupDescribe (KIP-932): each share group's state, epochs, assignor and members
//! with their assignments. A group not held, or one of another kind: GROUP_ID_NOT_FOUND.

use super::Context;
use crate::share_groups::ASSIGNOR;
use kafka_codec::messages::share_group_describe_response::{
    Assignment as Described, DescribedGroup, Member, TopicPartitions,
};
use kafka_codec::messages::{ShareGroupDescribeRequest, ShareGroupDescribeResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ShareGroupDescribe;

pub fn handle(
    context: &Context<'_>,
    request: &ShareGroupDescribeRequest,
) -> ShareGroupDescribeResponse {
    let (names, available) = {
        let state = context.shared.state();
        (
            state.topic_names_by_id(),
            context.coordinator_available_in(&state),
        )
    };
    let other_kind: Vec<bool> = {
        let groups = context.shared.groups();
        request
            .group_ids
            .iter()
            .map(|id| groups.groups.contains_key(id.as_str()))
            .collect()
    };
    let share = context.shared.share_groups();
    let described = request
        .group_ids
        .iter()
        .zip(other_kind)
        .map(|(group_id, other_kind)| {
            let answer = DescribedGroup::default().with_group_id(group_id.clone());
            let found = share.groups.get(group_id.as_str());
            let group =
                match context.group_to_describe(group_id, "share", found, other_kind, available) {
                    Ok(group) => group,
                    Err((code, message)) => {
                        // Unlike the other describes, Kafka's share group describe names
                        // NOT_COORDINATOR with the error's own message
                        // (tests/leaderless_coordinator_groups_kafka.rs).
                        let message = if code == ErrorCode::NOT_COORDINATOR.code() {
                            Some("This is not the correct coordinator.".to_owned())
                        } else {
                            message
                        };
                        return answer
                            .with_error_code(code)
                            .with_error_message(message.map(Into::into));
                    }
                };
            let members = group
                .members
                .values()
                .map(|member| {
                    let assignment = Described::default().with_topic_partitions(
                        member
                            .assigned
                            .iter()
                            .map(|(topic_id, partitions)| {
                                TopicPartitions::default()
                                    .with_topic_id(*topic_id)
                                    .with_topic_name(
                                        names.get(topic_id).cloned().unwrap_or_default().into(),
                                    )
                                    .with_partitions(
                                        partitions.iter().copied().collect::<Vec<i32>>().into(),
                                    )
                            })
                            .collect(),
                    );
                    Member::default()
                        .with_member_id(member.id.clone().into())
                        .with_rack_id(member.rack_id.clone().map(Into::into))
                        .with_member_epoch(member.epoch)
                        .with_client_id(member.client_id.clone().into())
                        .with_client_host(member.client_host.clone().into())
                        .with_subscribed_topic_names(
                            member
                                .subscribed_names
                                .iter()
                                .map(|n| n.clone().into())
                                .collect(),
                        )
                        .with_assignment(assignment)
                })
                .collect();
            answer
                .with_group_state(group.state_name().into())
                .with_group_epoch(group.epoch)
                .with_assignment_epoch(group.assignment_epoch)
                .with_assignor_name(ASSIGNOR.into())
                .with_members(members)
        })
        .collect();
    ShareGroupDescribeResponse::default().with_groups(described)
}
