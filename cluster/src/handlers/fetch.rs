//! Fetch: the batches from each partition's fetch offset on, within the request's byte
//! limits, waiting up to `MaxWaitMs` for `MinBytes` to arrive (woken by every append).
//! `read_committed` (v4+) reads up to the last stable offset and names the aborted
//! transactions of the range read, so the consumer drops their records; `read_uncommitted`
//! reads to the high watermark and names none (null, as Kafka writes it).
//! No fetch sessions yet: the answer's session id is 0, which tells a client the broker keeps
//! none, so it sends full fetch requests (as Kafka does when its session cache is full).
//! v0-v3 get the stored v2 batches converted to magic 0 or 1 (`legacy`), as Kafka 3.x did.

use super::Context;
use crate::legacy;
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, PartitionData,
};
use kafka_codec::messages::{FetchRequest, FetchResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::time::Duration;
use tokio::time::Instant;

pub const API: ApiKey = ApiKey::Fetch;

/// Fetch's and ListOffsets' isolation level `READ_COMMITTED`.
pub(super) const READ_COMMITTED: i8 = 1;

pub async fn handle(context: &Context<'_>, request: &FetchRequest) -> FetchResponse {
    let wait = Duration::from_millis(request.max_wait_ms.max(0) as u64);
    let deadline = Instant::now() + wait;
    let min_bytes = request.min_bytes.max(0) as usize;
    loop {
        // Registered before the state is read, so an append in between is not missed.
        let appended = context.shared.appended.notified();
        let (response, bytes, errors) = read(context, request);
        if bytes >= min_bytes || errors || Instant::now() >= deadline {
            return response;
        }
        if tokio::time::timeout_at(deadline, appended).await.is_err() {
            return read(context, request).0;
        }
    }
}

/// The response as the logs stand, its record bytes, and whether a partition failed.
fn read(context: &Context<'_>, request: &FetchRequest) -> (FetchResponse, usize, bool) {
    let state = context.shared.state();
    // v3+ caps the whole response; before, only each partition.
    let mut budget = if context.version >= 3 {
        request.max_bytes.max(0) as usize
    } else {
        usize::MAX
    };
    let mut total = 0;
    let mut errors = false;
    let committed = context.version >= 4 && request.isolation_level == READ_COMMITTED;
    let responses = request
        .topics
        .iter()
        .map(|wanted| {
            let found = if context.version >= 13 {
                state.topic_by_id(wanted.topic_id)
            } else {
                state.topics.get_key_value(wanted.topic.as_str())
            };
            let name = found.map(|(name, _)| name.as_str());
            let found = found.map(|(_, topic)| topic);
            let partitions = wanted
                .partitions
                .iter()
                .map(|partition| {
                    let answer = PartitionData::default().with_partition_index(partition.partition);
                    let log = found.and_then(|topic| topic.partition(partition.partition));
                    let Some(log) = log else {
                        errors = true;
                        let error = if context.version >= 13 {
                            ErrorCode::UNKNOWN_TOPIC_ID
                        } else {
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                        };
                        return answer.with_error_code(error.code());
                    };
                    let answer = answer
                        .with_high_watermark(log.high_watermark())
                        .with_last_stable_offset(log.last_stable_offset())
                        .with_log_start_offset(log.log_start());
                    let (leader, epoch) = state.leader(
                        name.unwrap_or_default(),
                        partition.partition,
                        context.shared.placement_brokers,
                    );
                    if leader != context.node_id {
                        errors = true;
                        return answer.with_error_code(ErrorCode::NOT_LEADER_OR_FOLLOWER.code());
                    }
                    if let Some(error) =
                        epoch_error(context.version >= 9, partition.current_leader_epoch, epoch)
                    {
                        errors = true;
                        return answer.with_error_code(error.code());
                    }
                    let offset = partition.fetch_offset;
                    if offset < log.log_start() || offset > log.high_watermark() {
                        errors = true;
                        return answer.with_error_code(ErrorCode::OFFSET_OUT_OF_RANGE.code());
                    }
                    let limit = (partition.partition_max_bytes.max(0) as usize).min(budget);
                    // Kafka returns the first batch whole even over the limits, so that a
                    // consumer always moves on; a spent response budget returns nothing.
                    let end = if committed {
                        log.last_stable_offset()
                    } else {
                        i64::MAX
                    };
                    let (batches, next) = if budget == 0 {
                        (Vec::new(), offset)
                    } else {
                        log.read_below(offset, limit, end)
                    };
                    let aborted = committed.then(|| {
                        log.txns
                            .aborted_between(offset, next)
                            .into_iter()
                            .map(|txn| {
                                AbortedTransaction::default()
                                    .with_producer_id(txn.producer_id)
                                    .with_first_offset(txn.first_offset)
                            })
                            .collect()
                    });
                    // v0-v3 read no v2 batch: each is converted down (legacy.rs).
                    let batches = match legacy::fetch_magic(context.version) {
                        None => batches,
                        Some(magic) => {
                            match batches
                                .iter()
                                .filter_map(|batch| {
                                    legacy::down_convert_stored(batch, magic, offset).transpose()
                                })
                                .collect::<Result<Vec<_>, _>>()
                            {
                                Ok(converted) => converted,
                                Err(error) => {
                                    errors = true;
                                    return answer.with_error_code(error.code());
                                }
                            }
                        }
                    };
                    let bytes = concat(&batches);
                    budget = budget.saturating_sub(bytes.len());
                    total += bytes.len();
                    answer
                        .with_aborted_transactions(aborted)
                        .with_records(Some(bytes))
                })
                .collect();
            FetchableTopicResponse::default()
                .with_topic(wanted.topic.clone())
                .with_topic_id(wanted.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    (
        FetchResponse::default().with_responses(responses),
        total,
        errors,
    )
}

/// The error for a request naming leader epoch `theirs` (where the version has the field;
/// -1: none named) of a partition at epoch `ours`, as Kafka checks it: an older epoch is
/// fenced, a newer one not yet known here.
pub(super) fn epoch_error(has_field: bool, theirs: i32, ours: i32) -> Option<ErrorCode> {
    if !has_field || theirs < 0 || theirs == ours {
        None
    } else if theirs < ours {
        Some(ErrorCode::FENCED_LEADER_EPOCH)
    } else {
        Some(ErrorCode::UNKNOWN_LEADER_EPOCH)
    }
}

pub(super) fn concat(batches: &[Bytes]) -> Bytes {
    match batches {
        [] => Bytes::new(),
        [one] => one.clone(),
        many => {
            let mut out = BytesMut::with_capacity(many.iter().map(Bytes::len).sum());
            for batch in many {
                out.extend_from_slice(batch);
            }
            out.freeze()
        }
    }
}
