//! OffsetForLeaderEpoch: the end offset of a leader epoch, as Kafka's leader epoch cache
//! answers it (`State::epoch_end`). A partition starts at epoch 0 from offset 0, and every
//! leader move (the control surface's) begins the next epoch at the high watermark. A
//! current leader epoch (v2+) other than the partition's is fenced (older) or unknown
//! (newer), as a leader checks it.

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
/// "No current leader epoch given" (below v2, and a client that does not know it).
const NO_CURRENT_EPOCH: i32 = -1;

pub fn handle(
    context: &Context<'_>,
    request: &OffsetForLeaderEpochRequest,
) -> OffsetForLeaderEpochResponse {
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| end_offset(context, topic.topic.as_str(), partition))
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
    let (leader, current) = state.leader(topic, wanted.partition, context.shared.placement_brokers);
    if leader != context.node_id {
        return fail(super::fetch::not_leader_error(
            context,
            &state,
            (topic, wanted.partition),
            true,
            wanted.current_leader_epoch,
            current,
        ));
    }
    match wanted.current_leader_epoch {
        NO_CURRENT_EPOCH => {}
        epoch if epoch < current => return fail(ErrorCode::FENCED_LEADER_EPOCH),
        epoch if epoch > current => return fail(ErrorCode::UNKNOWN_LEADER_EPOCH),
        _ => {}
    }
    let (epoch, end) = state.epoch_end(topic, wanted.partition, wanted.leader_epoch);
    answer.with_leader_epoch(epoch).with_end_offset(end)
}
