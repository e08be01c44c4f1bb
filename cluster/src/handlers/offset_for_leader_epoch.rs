//! OffsetForLeaderEpoch: the end offset of a leader epoch, as Kafka's leader epoch cache
//! answers it. Every partition here has had one leader, at epoch 0 from offset 0, so the
//! cache holds one entry: epoch 0 ends at the log end; a later epoch is unknown (-1, -1); an
//! earlier one (negative, other than -1) ends where epoch 0 began. A current leader epoch
//! (v2+) other than 0 is fenced (older) or unknown (newer), as a leader checks it.

use super::Context;
use kafka_codec::messages::offset_for_leader_epoch_request::OffsetForLeaderPartition;
use kafka_codec::messages::offset_for_leader_epoch_response::{
    EpochEndOffset, OffsetForLeaderTopicResult,
};
use kafka_codec::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::OffsetForLeaderEpoch;

/// The one leader epoch every partition has.
const LEADER_EPOCH: i32 = 0;
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
    let log_end = {
        let state = context.shared.state();
        let log = usize::try_from(wanted.partition)
            .ok()
            .and_then(|index| state.topics.get(topic)?.partitions.get(index));
        match log {
            Some(log) => log.high_watermark(),
            None => return fail(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
        }
    };
    if context.leader_of(wanted.partition) != context.node_id {
        return fail(ErrorCode::NOT_LEADER_OR_FOLLOWER);
    }
    match wanted.current_leader_epoch {
        NO_CURRENT_EPOCH => {}
        epoch if epoch < LEADER_EPOCH => return fail(ErrorCode::FENCED_LEADER_EPOCH),
        epoch if epoch > LEADER_EPOCH => return fail(ErrorCode::UNKNOWN_LEADER_EPOCH),
        _ => {}
    }
    match wanted.leader_epoch {
        LEADER_EPOCH => answer
            .with_leader_epoch(LEADER_EPOCH)
            .with_end_offset(log_end),
        // Before the first epoch: it ends where the first began.
        epoch if epoch < LEADER_EPOCH && epoch != UNDEFINED_EPOCH => {
            answer.with_leader_epoch(epoch).with_end_offset(0)
        }
        _ => answer,
    }
}
