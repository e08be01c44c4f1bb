//! OffsetCommit: a group's committed offsets, by Kafka's rules (see
//! [`Groups::validate_commit`](crate::groups::Groups::validate_commit)): members commit in
//! their generation (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
//! REBALANCE_IN_PROGRESS otherwise); a commit with generation -1 and no member is a simple
//! commit, for a group with no members. Topics by name (v0-v9) or id (v10).

use super::Context;
use crate::groups::Committed;
use kafka_codec::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_codec::messages::{OffsetCommitRequest, OffsetCommitResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::OffsetCommit;

pub fn handle(context: &Context<'_>, request: &OffsetCommitRequest) -> OffsetCommitResponse {
    // Each topic's name and partition count as the request names it (by id at v10).
    let found: Vec<Option<(String, usize)>> = {
        let state = context.shared.state();
        request
            .topics
            .iter()
            .map(|topic| {
                if context.version >= 10 {
                    state
                        .topic_by_id(topic.topic_id)
                        .map(|(name, found)| (name.clone(), found.partitions.len()))
                } else {
                    state
                        .topics
                        .get(topic.name.as_str())
                        .map(|found| (topic.name.to_string(), found.partitions.len()))
                }
            })
            .collect()
    };
    let group_error = if !context.coordinates(&request.group_id) {
        ErrorCode::NOT_COORDINATOR
    } else if context.version == 0 {
        context
            .shared
            .groups()
            .validate_commit(&request.group_id, -1, "", None)
    } else {
        context.shared.groups().validate_commit(
            &request.group_id,
            request.generation_id_or_member_epoch,
            &request.member_id,
            request.group_instance_id.as_deref(),
        )
    };
    let unknown = if context.version >= 10 {
        ErrorCode::UNKNOWN_TOPIC_ID
    } else {
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
    };
    let topics = request
        .topics
        .iter()
        .zip(found)
        .map(|(topic, found)| {
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| {
                    let index = partition.partition_index;
                    let error = match &found {
                        Some((_, count)) if index < 0 || index as usize >= *count => {
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                        }
                        None => unknown,
                        _ if group_error != ErrorCode::NONE => group_error,
                        Some((name, _)) => context.shared.groups().commit(
                            &request.group_id,
                            name,
                            index,
                            Committed {
                                offset: partition.committed_offset,
                                leader_epoch: if context.version >= 6 {
                                    partition.committed_leader_epoch
                                } else {
                                    -1
                                },
                                metadata: partition
                                    .committed_metadata
                                    .as_deref()
                                    .unwrap_or_default()
                                    .to_string(),
                            },
                        ),
                    };
                    OffsetCommitResponsePartition::default()
                        .with_partition_index(index)
                        .with_error_code(error.code())
                })
                .collect();
            OffsetCommitResponseTopic::default()
                .with_name(topic.name.clone())
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    OffsetCommitResponse::default().with_topics(topics)
}
