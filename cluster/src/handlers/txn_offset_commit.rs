//! TxnOffsetCommit: offsets a transaction commits for a group, held with the transaction
//! and visible to OffsetFetch once it commits (until then `require_stable` answers
//! UNSTABLE_OFFSET_COMMIT); dropped if it aborts. The group's coordinator answers; v3+
//! members are checked as OffsetCommit checks them when they name a member or generation
//! (as Kafka's group coordinator does). The group must be in the transaction
//! (AddOffsetsToTxn; v5+, transaction version 2, adds it itself): else INVALID_TXN_STATE
//! (v4+: TRANSACTION_ABORTABLE).
//! Topics by name (v0-v5) or id (v6).

use super::Context;
use crate::groups::Committed;
use crate::transactions::TxnProducer;
use kafka_codec::messages::txn_offset_commit_response::{
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use kafka_codec::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::TxnOffsetCommit;

/// Transaction version 2 (the group added implicitly) from this version (KIP-890).
const IMPLICIT_FROM: i16 = 5;

/// TRANSACTION_ABORTABLE from this version (KIP-890).
const ABORTABLE_FROM: i16 = 4;

/// Kafka's `offset.metadata.max.bytes` default.
const MAX_METADATA_BYTES: usize = 4096;

pub fn handle(context: &Context<'_>, request: &TxnOffsetCommitRequest) -> TxnOffsetCommitResponse {
    let by_id = context.version >= 6;
    let group = request.group_id.as_str();
    let group_error = if !context.coordinates(group) {
        ErrorCode::NOT_COORDINATOR
    } else if group.is_empty() {
        ErrorCode::INVALID_GROUP_ID
    } else if context.version >= 3
        && (request.generation_id_or_member_epoch >= 0
            || !request.member_id.is_empty()
            || request.group_instance_id.is_some())
    {
        context.shared.groups().validate_commit(
            group,
            request.generation_id_or_member_epoch,
            &request.member_id,
            request.group_instance_id.as_deref(),
        )
    } else {
        ErrorCode::NONE
    };
    let mut state = context.shared.state();
    // Each partition's own error (unknown, metadata too large), and the offsets to stage.
    let mut errors: Vec<Vec<ErrorCode>> = Vec::new();
    // Topics the cluster does not hold: Kafka's `KafkaApis` answers them before it asks the
    // coordinator, so their error stands whatever the group's
    // (tests/leaderless_coordinator_groups_kafka.rs).
    let mut unknown_topics: Vec<bool> = Vec::new();
    let mut staged = Vec::new();
    for topic in &request.topics {
        let found = if by_id {
            state
                .topic_by_id(topic.topic_id)
                .map(|(name, t)| (name.clone(), t.partitions.len()))
        } else {
            state
                .topics
                .get(topic.name.as_str())
                .map(|t| (topic.name.to_string(), t.partitions.len()))
        };
        unknown_topics.push(found.is_none());
        let mut topic_errors = Vec::new();
        for partition in &topic.partitions {
            let metadata = partition.committed_metadata.as_deref().unwrap_or_default();
            let error = match &found {
                None if by_id => ErrorCode::UNKNOWN_TOPIC_ID,
                None => ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                Some((_, count))
                    if usize::try_from(partition.partition_index)
                        .map_or(true, |index| index >= *count) =>
                {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                }
                _ if metadata.len() > MAX_METADATA_BYTES => ErrorCode::OFFSET_METADATA_TOO_LARGE,
                Some((name, _)) => {
                    staged.push((
                        name.clone(),
                        partition.partition_index,
                        Committed {
                            offset: partition.committed_offset,
                            leader_epoch: if context.version >= 2 {
                                partition.committed_leader_epoch
                            } else {
                                -1
                            },
                            metadata: metadata.to_owned(),
                        },
                    ));
                    ErrorCode::NONE
                }
            };
            topic_errors.push(error);
        }
        errors.push(topic_errors);
    }
    let shared_error = if group_error != ErrorCode::NONE {
        group_error
    } else if staged.is_empty() {
        ErrorCode::NONE
    } else {
        state
            .stage_offsets(
                TxnProducer {
                    transactional_id: &request.transactional_id,
                    producer_id: request.producer_id,
                    epoch: request.producer_epoch,
                },
                group,
                staged,
                context.version >= IMPLICIT_FROM,
                crate::clock::now(),
            )
            .err()
            .unwrap_or(ErrorCode::NONE)
    };
    // A group not in the transaction: v4+ (KIP-890) names it TRANSACTION_ABORTABLE.
    let shared_error =
        if shared_error == ErrorCode::INVALID_TXN_STATE && context.version >= ABORTABLE_FROM {
            ErrorCode::TRANSACTION_ABORTABLE
        } else {
            shared_error
        };
    drop(state);
    context.shared.transactions_changed.notify_one();
    let topics = request
        .topics
        .iter()
        .zip(errors)
        .zip(unknown_topics)
        .map(|((topic, errors), unknown)| {
            let partitions = topic
                .partitions
                .iter()
                .zip(errors)
                .map(|(partition, error)| {
                    let error = if unknown {
                        error
                    } else if error == ErrorCode::NONE || group_error != ErrorCode::NONE {
                        shared_error
                    } else {
                        error
                    };
                    TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(partition.partition_index)
                        .with_error_code(error.code())
                })
                .collect();
            TxnOffsetCommitResponseTopic::default()
                .with_name(topic.name.clone())
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    TxnOffsetCommitResponse::default().with_topics(topics)
}
