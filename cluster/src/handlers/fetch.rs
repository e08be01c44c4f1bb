//! Fetch: the batches from each partition's fetch offset on, within the request's byte
//! limits, waiting up to `MaxWaitMs` for `MinBytes` to arrive (woken by every append).
//! `read_committed` (v4+) reads up to the last stable offset and names the aborted
//! transactions of the range read, so the consumer drops their records; `read_uncommitted`
//! reads to the high watermark and names none (null, as Kafka writes it).
//! Fetch sessions (v7+, `fetch_sessions`): a full fetch opens one when the broker has room;
//! an incremental fetch reads every partition of its session and answers with those that
//! have news, and waits for `MinBytes` as a full one does.
//! v0-v3 get the stored v2 batches converted to magic 0 or 1 (`legacy`), as Kafka 3.x did.
//! A follower serves a consumer from v11 (KIP-392); refusals for leadership name the current
//! leader and its endpoint from v16 (KIP-951); every error answer has offsets -1 and an empty
//! record set: as recorded from Kafka 4.4 (`tests/fetch_current_leader_kafka.rs`).

use super::Context;
use crate::fetch_sessions::{Answered, Plan, Wanted, INVALID_SESSION_ID};
use crate::legacy;
use crate::state::StoredBatch;
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
};
use kafka_codec::messages::{FetchRequest, FetchResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::time::Duration;
use tokio::time::Instant;

pub const API: ApiKey = ApiKey::Fetch;

/// Fetch's and ListOffsets' isolation level `READ_COMMITTED`.
pub(super) const READ_COMMITTED: i8 = 1;

/// A follower serves a consumer's Fetch from this version (KIP-392); before, only the leader.
const FOLLOWER_READS_FROM: i16 = 11;

/// NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH name the current leader, and the response
/// its endpoint, from this version (KIP-951; Kafka 4.4 leaves v12-v15's field unset).
const CURRENT_LEADER_FROM: i16 = 16;

pub async fn handle(context: &Context<'_>, request: &FetchRequest) -> FetchResponse {
    with_leader_endpoints(context, answer(context, request).await)
}

async fn answer(context: &Context<'_>, request: &FetchRequest) -> FetchResponse {
    let plan = context.shared.fetch_sessions(context.node_id).plan(
        context.version,
        request,
        Instant::from_std(crate::clock::now()),
    );
    let plan = match plan {
        Ok(plan) => plan,
        Err(error) => {
            return FetchResponse::default()
                .with_error_code(error.code())
                .with_session_id(INVALID_SESSION_ID)
        }
    };
    let wanted = match &plan {
        Plan::Sessionless(wanted) | Plan::Full { wanted, .. } => wanted,
        Plan::Incremental { wanted, .. } => wanted,
    };
    let read = wait_and_read(context, request, wanted).await;
    match plan {
        Plan::Sessionless(wanted) => respond(&wanted, read, None, INVALID_SESSION_ID),
        Plan::Full {
            wanted,
            privileged,
            uses_topic_ids,
        } => {
            let partitions = wanted
                .iter()
                .cloned()
                .zip(read.iter().map(answered))
                .collect();
            let session_id = context.shared.fetch_sessions(context.node_id).open(
                partitions,
                privileged,
                uses_topic_ids,
                Instant::from_std(crate::clock::now()),
            );
            respond(&wanted, read, None, session_id)
        }
        Plan::Incremental {
            session_id,
            epoch,
            wanted,
        } => {
            let news: Vec<_> = read
                .iter()
                .map(|data| {
                    let records = data.records.as_ref().is_some_and(|r| !r.is_empty());
                    (answered(data), records, data.error_code != 0)
                })
                .collect();
            let included = context
                .shared
                .fetch_sessions(context.node_id)
                .answer_incremental(session_id, epoch, &news);
            match included {
                Some(included) => respond(&wanted, read, Some(&included), session_id),
                // Closed or evicted while this fetch waited: the client starts over.
                None => FetchResponse::default()
                    .with_error_code(ErrorCode::FETCH_SESSION_ID_NOT_FOUND.code())
                    .with_session_id(INVALID_SESSION_ID),
            }
        }
    }
}

/// Reads `wanted` until `MinBytes` are there, an error is, or `MaxWaitMs` passed (each
/// append wakes it to read again): each partition's answer, in order.
async fn wait_and_read(
    context: &Context<'_>,
    request: &FetchRequest,
    wanted: &[Wanted],
) -> Vec<PartitionData> {
    let wait = Duration::from_millis(request.max_wait_ms.max(0) as u64);
    let deadline = Instant::from_std(crate::clock::now()) + wait;
    let min_bytes = request.min_bytes.max(0) as usize;
    loop {
        // Registered before the state is read, so an append in between is not missed.
        let appended = context.shared.appended.notified();
        let (partitions, bytes, errors) = read(context, request, wanted);
        if bytes >= min_bytes || errors || Instant::from_std(crate::clock::now()) >= deadline {
            return partitions;
        }
        if tokio::time::timeout_at(deadline, appended).await.is_err() {
            return read(context, request, wanted).0;
        }
    }
}

/// What a session remembers of a partition's answer.
fn answered(data: &PartitionData) -> Answered {
    Answered {
        high_watermark: data.high_watermark,
        log_start: data.log_start_offset,
    }
}

/// The response: the partitions read (those `included`, if given), grouped by topic as
/// Kafka groups them (a new topic entry whenever the topic changes from the one before).
fn respond(
    wanted: &[Wanted],
    read: Vec<PartitionData>,
    included: Option<&[bool]>,
    session_id: i32,
) -> FetchResponse {
    let mut responses: Vec<FetchableTopicResponse> = Vec::new();
    for (i, (wanted, data)) in wanted.iter().zip(read).enumerate() {
        if included.is_some_and(|included| !included.get(i).copied().unwrap_or(true)) {
            continue;
        }
        match responses.last_mut() {
            Some(last)
                if last.topic.as_str() == wanted.topic && last.topic_id == wanted.topic_id =>
            {
                last.partitions.push(data)
            }
            _ => responses.push(
                FetchableTopicResponse::default()
                    .with_topic(wanted.topic.as_str().into())
                    .with_topic_id(wanted.topic_id)
                    .with_partitions(vec![data]),
            ),
        }
    }
    FetchResponse::default()
        .with_session_id(session_id)
        .with_responses(responses)
}

/// Each partition's answer as the logs stand, the record bytes, and whether one failed.
fn read(
    context: &Context<'_>,
    request: &FetchRequest,
    wanted: &[Wanted],
) -> (Vec<PartitionData>, usize, bool) {
    // The brokers listed, read before the state is locked (as everywhere).
    let brokers = context.broker_ids();
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
    // Consecutive partitions of one topic look it up once.
    let mut last: Option<(&Wanted, Option<(&String, &crate::state::Topic)>)> = None;
    let partitions = wanted
        .iter()
        .map(|partition| {
            let found = match last {
                Some((previous, found))
                    if previous.topic == partition.topic
                        && previous.topic_id == partition.topic_id =>
                {
                    found
                }
                _ => {
                    let found = if context.version >= 13 {
                        state.topic_by_id(partition.topic_id)
                    } else {
                        state.topics.get_key_value(partition.topic.as_str())
                    };
                    last = Some((partition, found));
                    found
                }
            };
            let name = found.map(|(name, _)| name.as_str());
            let found = found.map(|(_, topic)| topic);
            // An error's answer, as Kafka writes every one: offsets -1, records empty, not
            // null (librdkafka fails to parse a null record set).
            let failed = PartitionData::default()
                .with_partition_index(partition.partition)
                .with_high_watermark(-1)
                .with_last_stable_offset(-1)
                .with_log_start_offset(-1)
                .with_records(Some(Bytes::new()));
            let log = found.and_then(|topic| topic.partition(partition.partition));
            let Some(log) = log else {
                errors = true;
                let error = if context.version >= 13 {
                    ErrorCode::UNKNOWN_TOPIC_ID
                } else {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                };
                return failed.with_error_code(error.code());
            };
            let (leader, epoch) = state.leader(
                name.unwrap_or_default(),
                partition.partition,
                context.shared.placement_brokers,
            );
            // v9+ names the leader epoch the client knows; a negative one is none.
            let theirs = Some(partition.current_leader_epoch)
                .filter(|&epoch| context.version >= 9 && epoch >= 0);
            // From v11 (KIP-392: the request names the client's rack) a follower serves a
            // consumer's read itself, to the high watermark, as Kafka's replica manager does
            // when no replica selector is configured.
            let refusal = context.partition_refusal(
                &state,
                (name.unwrap_or_default(), partition.partition),
                &brokers,
                (leader, epoch),
                theirs,
                context.version >= FOLLOWER_READS_FROM,
            );
            if let Some(error) = refusal {
                errors = true;
                return refused(context.version, failed, error, (leader, epoch));
            }
            let answer = failed
                .clone()
                .with_high_watermark(log.high_watermark())
                .with_last_stable_offset(log.last_stable_offset())
                .with_log_start_offset(log.log_start());
            let offset = partition.fetch_offset;
            if offset < log.log_start() || offset > log.high_watermark() {
                errors = true;
                return failed.with_error_code(ErrorCode::OFFSET_OUT_OF_RANGE.code());
            }
            let limit = (partition.max_bytes.max(0) as usize).min(budget);
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
            let bytes = match legacy::fetch_magic(context.version) {
                None => StoredBatch::concat(&batches),
                Some(magic) => {
                    match batches
                        .iter()
                        .filter_map(|batch| {
                            legacy::down_convert_stored(&batch.bytes(), magic, offset).transpose()
                        })
                        .collect::<Result<Vec<_>, _>>()
                    {
                        Ok(converted) => concat(&converted),
                        Err(error) => {
                            errors = true;
                            return failed.with_error_code(error.code());
                        }
                    }
                }
            };
            budget = budget.saturating_sub(bytes.len());
            total += bytes.len();
            answer
                .with_aborted_transactions(aborted)
                .with_records(Some(bytes))
        })
        .collect();
    (partitions, total, errors)
}

/// A partition refused for leadership or its leader epoch (`failed`: the error answer
/// without its error): from v16 (KIP-951) on NOT_LEADER_OR_FOLLOWER and
/// FENCED_LEADER_EPOCH the leader and epoch this broker knows (-1 and the epoch when the
/// partition has none; not on UNKNOWN_LEADER_EPOCH), as a Kafka 4.4 broker answers
/// (recorded: `tests/fetch_current_leader_kafka.rs`). The field exists from v12, but Kafka
/// fills it from v16 only.
fn refused(
    version: i16,
    failed: PartitionData,
    error: ErrorCode,
    (leader, epoch): (i32, i32),
) -> PartitionData {
    let answer = failed.with_error_code(error.code());
    let names_leader = matches!(
        error,
        ErrorCode::NOT_LEADER_OR_FOLLOWER | ErrorCode::FENCED_LEADER_EPOCH
    );
    if version < CURRENT_LEADER_FROM || !names_leader {
        return answer;
    }
    answer.with_current_leader(
        LeaderIdAndEpoch::default()
            .with_leader_id(leader)
            .with_leader_epoch(epoch),
    )
}

/// The response's `NodeEndpoints` (v16+): the brokers its partitions name as leaders.
fn with_leader_endpoints(context: &Context<'_>, response: FetchResponse) -> FetchResponse {
    if context.version < CURRENT_LEADER_FROM {
        return response;
    }
    let leaders: std::collections::BTreeSet<i32> = response
        .responses
        .iter()
        .flat_map(|topic| &topic.partitions)
        .map(|p| p.current_leader.leader_id)
        .filter(|&leader| leader >= 0)
        .collect();
    let endpoints = context
        .endpoints(leaders)
        .into_iter()
        .map(|(node, host, port)| {
            NodeEndpoint::default()
                .with_node_id(node)
                .with_host(host.into())
                .with_port(port)
        })
        .collect();
    response.with_node_endpoints(endpoints)
}

fn concat(batches: &[Bytes]) -> Bytes {
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
