//! ConsumerGroupDescribe (KIP-848): each consumer group's state, epochs, assignor and
//! members with their current and target assignments. A group not held, or a classic one:
//! GROUP_ID_NOT_FOUND.

use super::Context;
use crate::consumer_groups::Assignment;
use kafka_codec::messages::consumer_group_describe_response::{
    Assignment as Described, DescribedGroup, Member, TopicPartitions,
};
use kafka_codec::messages::{ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse};
use kafka_codec::{ApiKey, Uuid};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::ConsumerGroupDescribe;

/// Kafka's `MemberType` of a member on the consumer protocol (v1+).
const CONSUMER_MEMBER: i8 = 1;

fn described(assignment: &Assignment, names: &BTreeMap<Uuid, String>) -> Described {
    Described::default().with_topic_partitions(
        assignment
            .iter()
            .map(|(topic_id, partitions)| {
                TopicPartitions::default()
                    .with_topic_id(*topic_id)
                    .with_topic_name(names.get(topic_id).cloned().unwrap_or_default().into())
                    .with_partitions(partitions.iter().copied().collect::<Vec<i32>>().into())
            })
            .collect(),
    )
}

pub fn handle(
    context: &Context<'_>,
    request: &ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    let (names, available) = {
        let state = context.shared.state();
        (
            state.topic_names_by_id(),
            context.coordinator_available_in(&state),
        )
    };
    let groups = context.shared.groups();
    let described_groups = request
        .group_ids
        .iter()
        .map(|group_id| {
            let answer = DescribedGroup::default().with_group_id(group_id.clone());
            let group = groups.groups.get(group_id.as_str());
            let found = group.and_then(|group| group.consumer.as_ref());
            let consumer = match context.group_to_describe(
                group_id,
                "consumer",
                found,
                group.is_some(),
                available,
            ) {
                Ok(consumer) => consumer,
                Err((code, message)) => {
                    return answer
                        .with_error_code(code)
                        .with_error_message(message.map(Into::into))
                }
            };
            let members = consumer
                .members
                .values()
                .map(|member| {
                    let target = consumer
                        .targets
                        .get(&member.id)
                        .cloned()
                        .unwrap_or_default();
                    Member::default()
                        .with_member_id(member.id.clone().into())
                        .with_instance_id(member.instance_id.clone().map(Into::into))
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
                        // Kafka answers an empty string, not null, for no regex.
                        .with_subscribed_topic_regex(Some(
                            member.subscribed_regex.clone().unwrap_or_default().into(),
                        ))
                        .with_assignment(described(&member.assigned, &names))
                        .with_target_assignment(described(&target, &names))
                        .with_member_type(CONSUMER_MEMBER)
                })
                .collect();
            answer
                .with_group_state(consumer.state_name().into())
                .with_group_epoch(consumer.epoch)
                .with_assignment_epoch(consumer.assignment_epoch)
                .with_assignor_name(consumer.assignor().into())
                .with_members(members)
        })
        .collect();
    ConsumerGroupDescribeResponse::default().with_groups(described_groups)
}
