//! OffsetDelete: removes committed offsets of a group, unless the group is active and its
//! members subscribe to the topic (GROUP_SUBSCRIBED_TO_TOPIC, read from the consumer
//! protocol's subscriptions as Kafka reads them, or a KIP-848 group's subscriptions); a
//! classic group rebalancing is NON_EMPTY_GROUP.

use super::Context;
use crate::groups::{Group, GroupState};
use kafka_codec::bytes::{Buf, Bytes};
use kafka_codec::messages::offset_delete_response::{
    OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
use kafka_codec::messages::{
    ConsumerProtocolSubscription, OffsetDeleteRequest, OffsetDeleteResponse,
};
use kafka_codec::{ApiKey, ErrorCode, Message};
use std::collections::BTreeSet;

pub const API: ApiKey = ApiKey::OffsetDelete;

/// The topics the members of a consumer group subscribe to.
fn subscribed(group: &Group) -> BTreeSet<String> {
    let protocol = group.protocol_name.clone().unwrap_or_default();
    let mut topics = BTreeSet::new();
    if group.protocol_type.as_deref() != Some("consumer") {
        return topics;
    }
    for member in &group.members {
        let mut metadata: Bytes = member.metadata(&protocol);
        if metadata.len() < 2 {
            continue;
        }
        // The consumer protocol's own version header; a newer version's extra fields
        // follow the ones known, as Kafka's reader allows.
        let version = metadata
            .get_i16()
            .min(ConsumerProtocolSubscription::VALID_VERSIONS.max);
        if let Ok(subscription) = ConsumerProtocolSubscription::decode(&mut metadata, version) {
            topics.extend(subscription.topics.iter().map(|t| t.to_string()));
        }
    }
    topics
}

pub fn handle(context: &Context<'_>, request: &OffsetDeleteRequest) -> OffsetDeleteResponse {
    if !context.coordinates(&request.group_id) {
        return OffsetDeleteResponse::default().with_error_code(ErrorCode::NOT_COORDINATOR.code());
    }
    let known: Vec<Option<usize>> = {
        let state = context.shared.state();
        request
            .topics
            .iter()
            .map(|topic| {
                state
                    .topics
                    .get(topic.name.as_str())
                    .map(|t| t.partitions.len())
            })
            .collect()
    };
    let mut groups = context.shared.groups();
    let Some(group) = groups.groups.get(request.group_id.as_str()) else {
        return OffsetDeleteResponse::default()
            .with_error_code(ErrorCode::GROUP_ID_NOT_FOUND.code());
    };
    let subscribed = match group.state {
        // A KIP-848 group: the topics its members subscribe to (names and what their
        // regexes resolved to), whatever its state.
        _ if group.consumer.is_some() => group
            .consumer
            .iter()
            .flat_map(|consumer| consumer.members.values())
            .flat_map(|member| member.subscribed_topics.iter().cloned())
            .collect(),
        GroupState::Empty => BTreeSet::new(),
        GroupState::Stable if group.protocol_type.as_deref() == Some("consumer") => {
            subscribed(group)
        }
        _ => {
            return OffsetDeleteResponse::default()
                .with_error_code(ErrorCode::NON_EMPTY_GROUP.code())
        }
    };
    let topics = request
        .topics
        .iter()
        .zip(known)
        .map(|(topic, known)| {
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| {
                    let index = partition.partition_index;
                    let error = match known {
                        Some(count) if index >= 0 && (index as usize) < count => {
                            if subscribed.contains(topic.name.as_str()) {
                                ErrorCode::GROUP_SUBSCRIBED_TO_TOPIC
                            } else {
                                groups.delete_offset(&request.group_id, &topic.name, index);
                                ErrorCode::NONE
                            }
                        }
                        _ => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    };
                    OffsetDeleteResponsePartition::default()
                        .with_partition_index(index)
                        .with_error_code(error.code())
                })
                .collect();
            OffsetDeleteResponseTopic::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    OffsetDeleteResponse::default().with_topics(topics)
}
