//! AlterShareGroupOffsets (KIP-932): moves a share group's share-partition start offsets,
//! as `kafka-share-groups --reset-offsets` does. As Kafka 4.4: a group not held is made
//! (empty); one with members is NON_EMPTY_GROUP, one of another kind GROUP_ID_NOT_FOUND,
//! for the whole request; a topic or partition not held is UNKNOWN_TOPIC_OR_PARTITION for
//! that partition, the unknown topics listed first. A start past the log end is kept (its
//! lag is negative); the uninitialized start offset (-1) makes the partition start again
//! where `share.auto.offset.reset` says.

use super::Context;
use kafka_codec::messages::alter_share_group_offsets_response::{
    AlterShareGroupOffsetsResponsePartition as Partition,
    AlterShareGroupOffsetsResponseTopic as Topic,
};
use kafka_codec::messages::{AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::AlterShareGroupOffsets;

/// The whole request refused (no message: the field's default, as for NOT_COORDINATOR).
fn refused(error: ErrorCode, message: Option<String>) -> AlterShareGroupOffsetsResponse {
    let answer = AlterShareGroupOffsetsResponse::default().with_error_code(error.code());
    match message {
        Some(message) => answer.with_error_message(Some(message.into())),
        None => answer,
    }
}

pub fn handle(
    context: &Context<'_>,
    request: &AlterShareGroupOffsetsRequest,
) -> AlterShareGroupOffsetsResponse {
    let group_id = request.group_id.as_str();
    if let Some((error, message)) = super::share_fetch::offsets_group_refusal(context, group_id) {
        return refused(error, message);
    }
    // Each topic's id and partition count.
    let held: BTreeMap<String, (Uuid, usize)> = {
        let state = context.shared.state();
        request
            .topics
            .iter()
            .filter_map(|topic| {
                let name = topic.topic_name.as_str();
                let found = state.topics.get(name)?;
                Some((name.to_string(), (found.id, found.partitions.len())))
            })
            .collect()
    };
    if context.shared.groups().groups.contains_key(group_id) {
        return refused(
            ErrorCode::GROUP_ID_NOT_FOUND,
            Some(format!("Group {group_id} is not a share group.")),
        );
    }
    let mut share = context.shared.share_groups();
    if let Err((error, message)) = share.without_members(group_id, true) {
        return refused(error, Some(message));
    }
    // The topics not held first, as Kafka answers them before asking its coordinator.
    let (unknown, known): (Vec<_>, Vec<_>) = request
        .topics
        .iter()
        .partition(|topic| !held.contains_key(topic.topic_name.as_str()));
    let responses = unknown
        .into_iter()
        .chain(known)
        .map(|topic| {
            let known = held.get(topic.topic_name.as_str()).copied();
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| {
                    let index = partition.partition_index;
                    let answer = Partition::default().with_partition_index(index);
                    match known {
                        Some((id, count)) if index >= 0 && (index as usize) < count => {
                            if partition.start_offset < 0 {
                                share.forget_partition(group_id, (id, index));
                            } else {
                                share.set_start(group_id, (id, index), partition.start_offset);
                            }
                            answer
                        }
                        _ => answer
                            .with_error_code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code())
                            .with_error_message(Some(
                                format!("{}-{index} is not held.", topic.topic_name).into(),
                            )),
                    }
                })
                .collect();
            Topic::default()
                .with_topic_name(topic.topic_name.clone())
                .with_topic_id(known.map_or(Uuid::default(), |(id, _)| id))
                .with_partitions(partitions)
        })
        .collect();
    AlterShareGroupOffsetsResponse::default().with_responses(responses)
}
