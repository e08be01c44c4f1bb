//! DeleteRecords: moves each partition's log start up to the given offset (-1: the high
//! watermark), dropping the batches wholly before it, and answers the new low watermark.
//! An offset below 0 (other than -1) or past the high watermark is OFFSET_OUT_OF_RANGE; a
//! log start already past the offset stays where it is, as Kafka's does. Only the leader
//! deletes (recorded from Kafka 4.4: `tests/offsets_off_leader_kafka.rs`).

use super::Context;
use kafka_codec::messages::delete_records_request::DeleteRecordsPartition;
use kafka_codec::messages::delete_records_response::{
    DeleteRecordsPartitionResult, DeleteRecordsTopicResult,
};
use kafka_codec::messages::{DeleteRecordsRequest, DeleteRecordsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DeleteRecords;

/// The offset that means "up to the high watermark".
const HIGH_WATERMARK: i64 = -1;

pub fn handle(context: &Context<'_>, request: &DeleteRecordsRequest) -> DeleteRecordsResponse {
    // The brokers listed, read before the state is locked (as everywhere).
    let brokers = context.broker_ids();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| delete(context, &brokers, topic.name.as_str(), partition))
                .collect();
            DeleteRecordsTopicResult::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    DeleteRecordsResponse::default().with_topics(topics)
}

fn delete(
    context: &Context<'_>,
    brokers: &[i32],
    topic: &str,
    wanted: &DeleteRecordsPartition,
) -> DeleteRecordsPartitionResult {
    let answer = DeleteRecordsPartitionResult::default()
        .with_partition_index(wanted.partition_index)
        .with_low_watermark(-1);
    let fail = |error: ErrorCode| answer.clone().with_error_code(error.code());
    let mut state = context.shared.state();
    let index = match usize::try_from(wanted.partition_index) {
        Ok(index)
            if state
                .topics
                .get(topic)
                .is_some_and(|t| index < t.partitions.len()) =>
        {
            index
        }
        _ => return fail(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
    };
    let led = state.leader(
        topic,
        wanted.partition_index,
        context.shared.placement_brokers,
    );
    // The leader only; the request names no leader epoch.
    let at = (topic, wanted.partition_index);
    if let Some(error) = context.partition_refusal(&state, at, brokers, led, None, false) {
        return fail(error);
    }
    let high_watermark = state.topics[topic].partitions[index].high_watermark();
    let offset = if wanted.offset == HIGH_WATERMARK {
        high_watermark
    } else {
        wanted.offset
    };
    if offset < 0 || offset > high_watermark {
        return fail(ErrorCode::OFFSET_OUT_OF_RANGE);
    }
    answer.with_low_watermark(state.delete_records(topic, index, offset))
}
