//! OffsetForLeaderEpoch: the end offset of a leader epoch, as Kafka's leader epoch cache
//! answers it (`State::epoch_end`). A partition starts at epoch 0 from offset 0, and every
//! leader move (the control surface's) begins the next epoch at the high watermark. A
//! current leader epoch (v2+) other than the partition's is fenced (older) or unknown
//! (newer), as a leader checks it; off the leader, as `Context::partition_refusal` says
//! (recorded from Kafka 4.4: `tests/offsets_off_leader_kafka.rs`).

use super::Context;
use kafka_codec::messages::offset_for_leader_epoch_request::OffsetForLeaderPartition;
use kafka_codec::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_codec::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::OffsetForLeaderEpoch;

/// Kafka's `UNDEFINED_EPOCH` and `UNDEFINED_EPOCH_OFFSET`.
const UNDEFINED_EPOCH: i32 = -1;
const UNDEFINED_OFFSET: i64 = -1;

pub fn handle(
    context: &Context<'_>,
    request: &OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    // The brokers listed, read before the state is locked (as everywhere).
    let brokers = context.broker_ids();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| end_offset(context, &brokers, topic.topic.as_str(), partition))
                .collect();
            OffsetForLeaderTopicResult::default()
                .with_topic(topic.topic.clone())
                .with_partitions(partitions)
        })
        .collect();
    OffsetForLeaderEpochResponse::default().with_topics(topics)
}

fn end_offset(
    context: &Context<'_>,
    brokers: &[i32],
    topic: &str,
    wanted: &OffsetForLeaderPartition,
) -> EpochEndOffset {
    let answer = EpochEndOffset::default()
        .with_partition(wanted.partition)
        .with_leader_epoch(UNDEFINED_EPOCH)
        .with_end_offset(UNDEFINED_OFFSET);
    let fail = |error: ErrorCode| answer.clone().with_error_code(error.code());
    let state = context.shared.state();
    let exists = state
        .topics
        .get(topic)
        .and_then(|topic| topic.partition(wanted.partition))
        .is_some();
    if !exists {
        return fail(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    }
    let led = state.leader(topic, wanted.partition, context.shared.placement_brokers);
    // The leader answers, a consumer and a follower alike.
    let theirs = super::named_epoch(wanted.current_leader_epoch);
    if let Some(error) = context.partition_refusal(
        &state,
        (topic, wanted.partition),
        brokers,
        led,
        theirs,
        false,
    ) {
        return fail(error);
    }
    let (epoch, end) = state.epoch_end(topic, wanted.partition, wanted.leader_epoch);
    answer.with_leader_epoch(epoch).with_end_offset(end)
}
