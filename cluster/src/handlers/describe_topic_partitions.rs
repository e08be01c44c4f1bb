//! DescribeTopicPartitions (KIP-966; the Java AdminClient's `describeTopics` since 3.7):
//! topics and their partitions, paged as Kafka's KRaft brokers page them. Topics in name
//! order, from the cursor's topic on (and its partition on), at most
//! `min(2000, ResponsePartitionLimit)` partitions in all (Kafka's
//! `max.request.partition.size.limit`); where the limit cuts a topic the next cursor names
//! the first partition left out, and where it falls between topics, the next topic at 0. An
//! empty topic list asks for every topic; a named topic not held: UNKNOWN_TOPIC_OR_PARTITION
//! (INVALID_TOPIC_EXCEPTION for a name Kafka could never hold), counting nothing. A cursor
//! whose topic is not in the list asked for: INVALID_REQUEST for every topic named.

use super::Context;
use kafka_codec::messages::describe_topic_partitions_response::{
    Cursor, DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic,
};
use kafka_codec::messages::{DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};
use std::collections::BTreeSet;

pub const API: ApiKey = ApiKey::DescribeTopicPartitions;

/// Kafka's `max.request.partition.size.limit` default.
const MAX_PARTITIONS: i32 = 2000;

/// Kafka's `Topic.validate`: 1 to 249 characters of ASCII letters, digits, '.', '_', '-',
/// and neither "." nor "..".
fn valid_topic_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 249
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub fn handle(
    context: &Context<'_>,
    request: &DescribeTopicPartitionsRequest,
) -> DescribeTopicPartitionsResponse {
    let all = request.topics.is_empty();
    let cursor_topic = request
        .cursor
        .as_ref()
        .map(|cursor| cursor.topic_name.to_string())
        .unwrap_or_default();
    let state = context.shared.state();
    let names: BTreeSet<String> = if all {
        state.topics.keys().cloned().collect()
    } else {
        request
            .topics
            .iter()
            .map(|topic| topic.name.to_string())
            .collect()
    };
    // Topics before the cursor's are left out (Java's String order is the bytes' order for
    // the ASCII names Kafka allows).
    let names: Vec<String> = names
        .into_iter()
        .filter(|name| name.as_str() >= cursor_topic.as_str())
        .collect();
    if let Some(cursor) = &request.cursor {
        if !all && !names.iter().any(|name| *name == *cursor.topic_name) {
            let topics = request
                .topics
                .iter()
                .map(|topic| {
                    DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(ErrorCode::INVALID_REQUEST.code())
                        .with_name(Some(topic.name.clone()))
                })
                .collect();
            return DescribeTopicPartitionsResponse::default().with_topics(topics);
        }
    }
    let brokers = context.shared.placement_brokers;
    let mut remaining = MAX_PARTITIONS.min(request.response_partition_limit);
    let mut answer = DescribeTopicPartitionsResponse::default();
    for name in names {
        if remaining < 0 {
            break;
        }
        if remaining == 0 {
            // Every partition of the topics before is in; the next page starts here.
            answer = answer.with_next_cursor(Some(
                Cursor::default()
                    .with_topic_name(name.into())
                    .with_partition_index(0),
            ));
            break;
        }
        let Some(topic) = state.topics.get(&name) else {
            if !all {
                let error = if valid_topic_name(&name) {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                } else {
                    ErrorCode::INVALID_TOPIC_EXCEPTION
                };
                answer.topics.push(
                    DescribeTopicPartitionsResponseTopic::default()
                        .with_error_code(error.code())
                        .with_name(Some(name.into()))
                        .with_topic_id(Uuid::default()),
                );
            }
            continue;
        };
        let count = topic.partitions.len() as i32;
        let start = match &request.cursor {
            Some(cursor) if *cursor.topic_name == *name => cursor.partition_index,
            _ => 0,
        };
        let upper = count.min(start.saturating_add(remaining));
        // A negative cursor index takes its place in the range but names no partition, as
        // in Kafka (which skips the indexes it does not hold).
        let partitions: Vec<_> = (start..upper)
            .filter(|index| *index >= 0)
            .map(|index| partition(context, &state, &name, index, brokers))
            .collect();
        remaining -= partitions.len() as i32;
        answer.topics.push(
            DescribeTopicPartitionsResponseTopic::default()
                .with_name(Some(name.clone().into()))
                .with_topic_id(topic.id)
                .with_partitions(partitions),
        );
        if upper < count {
            answer = answer.with_next_cursor(Some(
                Cursor::default()
                    .with_topic_name(name.into())
                    .with_partition_index(upper),
            ));
            break;
        }
    }
    answer
}

fn partition(
    context: &Context<'_>,
    state: &crate::state::State,
    name: &str,
    index: i32,
    brokers: usize,
) -> DescribeTopicPartitionsResponsePartition {
    let view = state.replica_view(name, index, &context.broker_ids(), brokers);
    let (leader, epoch) = view.leader;
    let (eligible, last_known) = state.eligible_leaders(name, index);
    DescribeTopicPartitionsResponsePartition::default()
        .with_partition_index(index)
        .with_leader_id(leader)
        .with_leader_epoch(epoch)
        .with_replica_nodes(view.replicas.into())
        .with_isr_nodes(view.isr.into())
        // Replicas on fenced brokers, as Kafka lists them.
        .with_offline_replicas(view.offline.into())
        // Eligible leader replicas (KIP-966, `state/elr.rs`): empty lists, never null, when
        // there are none or ELR is off, as Kafka lists them.
        .with_eligible_leader_replicas(Some(eligible.into()))
        .with_last_known_elr(Some(last_known.into()))
}
