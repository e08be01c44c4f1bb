//! Produce: each partition's record batch appended to its log, with offsets assigned as
//! Kafka assigns them: the batch's base offset field reads as the log's end (and its
//! partition leader epoch as the leader's), fields outside the batch's CRC, so the records
//! and the CRC are stored as the producer sent them; the batch itself is kept uncopied and
//! the two fields are written as it is fetched (`state::StoredBatch`). A legacy message set
//! (v0-v2) is converted to one v2 batch first (`legacy::up_convert_message_set`). A topic
//! whose `message.timestamp.type` is LogAppendTime gets each batch stamped with the time it
//! is appended (timestamp type attribute, max timestamp, CRC: a copy of the batch), answered
//! in `LogAppendTimeMs` (v2+), as Kafka stamps and answers it.

use super::Context;
use crate::legacy;
use crate::producers::Check;
use crate::state::NewBatch;
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::produce_request::PartitionProduceData;
use kafka_codec::messages::produce_response::{
    BatchIndexAndErrorMessage, LeaderIdAndEpoch, NodeEndpoint, PartitionProduceResponse,
    TopicProduceResponse,
};
use kafka_codec::messages::{ProduceRequest, ProduceResponse};
use kafka_codec::records::BatchReader;
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::Produce;

/// Transaction version 2 (KIP-890) from this version: a transactional batch adds its
/// partition to the transaction.
const IMPLICIT_ADD_FROM: i16 = 12;

/// A NOT_LEADER_OR_FOLLOWER names the current leader, and the response its endpoint, from
/// this version (KIP-951).
const CURRENT_LEADER_FROM: i16 = 10;

/// TRANSACTION_ABORTABLE from this version (KIP-890).
const ABORTABLE_FROM: i16 = 11;

pub fn handle(context: &Context<'_>, request: &ProduceRequest) -> ProduceResponse {
    // Transactional records need the request's transactional id (v3+), or Kafka refuses the
    // whole request as unauthorized for it.
    let refused = request.transactional_id.is_none() && has_transactional_records(request);
    let request_bytes = request
        .topic_data
        .iter()
        .flat_map(|topic| &topic.partition_data)
        .filter_map(|partition| partition.records.as_ref().map(Bytes::len))
        .sum();
    let responses = request
        .topic_data
        .iter()
        .map(|topic| {
            // v13+ names a topic by id only.
            let name = if context.version >= 13 {
                context
                    .shared
                    .state()
                    .topic_by_id(topic.topic_id)
                    .map(|(name, _)| name.clone())
            } else {
                Some(topic.name.as_str().to_owned())
            };
            let partitions = topic
                .partition_data
                .iter()
                .map(|partition| {
                    if refused {
                        return PartitionProduceResponse::default()
                            .with_index(partition.index)
                            .with_error_code(
                                ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code(),
                            )
                            .with_base_offset(-1);
                    }
                    produce(
                        context,
                        request.acks,
                        name.as_deref(),
                        partition,
                        request_bytes,
                    )
                })
                .collect();
            TopicProduceResponse::default()
                .with_name(topic.name.clone())
                .with_topic_id(topic.topic_id)
                .with_partition_responses(partitions)
        })
        .collect::<Vec<_>>();
    // The endpoints of the leaders NOT_LEADER_OR_FOLLOWER answers name (v10+).
    let leaders: std::collections::BTreeSet<i32> = responses
        .iter()
        .flat_map(|topic| &topic.partition_responses)
        .filter(|p| p.error_code == ErrorCode::NOT_LEADER_OR_FOLLOWER.code())
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
    ProduceResponse::default()
        .with_responses(responses)
        .with_node_endpoints(endpoints)
}

fn produce(
    context: &Context<'_>,
    acks: i16,
    topic: Option<&str>,
    data: &PartitionProduceData,
    request_bytes: usize,
) -> PartitionProduceResponse {
    let answer = PartitionProduceResponse::default().with_index(data.index);
    // Kafka answers a refused partition with base offset -1 (`PartitionResponse(error)`,
    // `LogAppendInfo.UNKNOWN_LOG_APPEND_INFO`), not the schema's default 0.
    let fail = |error: ErrorCode| {
        answer
            .clone()
            .with_error_code(error.code())
            .with_base_offset(-1)
    };
    if !matches!(acks, -1..=1) {
        return fail(ErrorCode::INVALID_REQUIRED_ACKS);
    }
    let unknown = if context.version >= 13 {
        ErrorCode::UNKNOWN_TOPIC_ID
    } else {
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
    };
    let Some(topic) = topic else {
        return fail(unknown);
    };
    let partition = match usize::try_from(data.index) {
        Ok(index) => match context.shared.state().topics.get(topic) {
            Some(t) if index < t.partitions.len() => index,
            _ => return fail(unknown),
        },
        Err(_) => return fail(unknown),
    };
    let (leader, epoch) = context.leader(topic, data.index);
    if leader != context.node_id {
        // v10+ (KIP-951) names the leader the broker knows, and its epoch (-1 and the
        // epoch when the partition has none), as a Kafka 4.4 broker answers.
        let refused = fail(ErrorCode::NOT_LEADER_OR_FOLLOWER);
        if context.version < CURRENT_LEADER_FROM {
            return refused;
        }
        return refused.with_current_leader(
            LeaderIdAndEpoch::default()
                .with_leader_id(leader)
                .with_leader_epoch(epoch),
        );
    }
    // v3+ carries exactly one v2 batch; v0-v2 a magic 0/1 message set, which is stored as
    // one v2 batch (legacy.rs), as a Kafka whose log format is newer than the producer's does.
    let records = data.records.clone().unwrap_or_default();
    let records = if context.version < 3 {
        match legacy::up_convert_message_set(&records) {
            Ok(stored) => stored,
            Err(error) => return fail(error),
        }
    } else {
        records
    };
    let mut batches = BatchReader::new(records);
    let batch = match (batches.next(), batches.next()) {
        (Some(Ok(batch)), None) => batch,
        (Some(Err(_)), _) => return fail(ErrorCode::CORRUPT_MESSAGE),
        _ => return fail(ErrorCode::INVALID_RECORD),
    };
    let header = *batch.header();
    if header.magic != 2 {
        return fail(ErrorCode::INVALID_RECORD);
    }
    if batch.verify_crc().is_err() {
        return fail(ErrorCode::CORRUPT_MESSAGE);
    }
    // As Kafka's validator: the offset range the header claims must be positive and match
    // its record count, so a batch cannot move the log's end by more than it holds.
    let records = i64::from(header.last_offset_delta) + 1;
    if records <= 0 || i64::from(header.records_count) != records {
        return fail(ErrorCode::INVALID_RECORD);
    }
    // Also refused by Kafka's validator: control batches from a client, and a producer id
    // without a sequence.
    if header.is_control() || (header.producer_id >= 0 && header.base_sequence < 0) {
        return fail(ErrorCode::INVALID_RECORD);
    }
    // -1 unless the topic's timestamps are its log's append times.
    let mut append_time = -1;
    let (base_offset, log_start) = {
        let mut state = context.shared.state();
        // The topic may have gone (or come back smaller) since it was looked up: a
        // DeleteTopics in between.
        let there = state.topics.get(topic).map(|t| t.partitions.len());
        if there.is_none_or(|partitions| partition >= partitions) {
            return fail(unknown);
        }
        // The topic's `max.message.bytes` bounds a batch as sent (Kafka's log refuses a
        // larger one before validating it), and with acks=all its `min.insync.replicas`
        // the ISR (Kafka's leader refuses to append then).
        let max_bytes = state.topic_config_number(topic, "max.message.bytes");
        if max_bytes.is_some_and(|max| batch.as_bytes().len() as i64 > max) {
            return fail(ErrorCode::MESSAGE_TOO_LARGE);
        }
        if acks == -1 {
            let min_isr = state.topic_config_number(topic, "min.insync.replicas");
            let nodes = context.broker_ids();
            let view =
                state.replica_view(topic, data.index, &nodes, context.shared.placement_brokers);
            if min_isr.is_some_and(|min| (view.isr.len() as i64) < min) {
                return fail(ErrorCode::NOT_ENOUGH_REPLICAS);
            }
        }
        // An idempotent producer's batch: a retry of one of its last five is answered with
        // the original's offset, and its epoch and sequence must follow on (producers.rs).
        let idempotent = header.producer_id >= 0;
        if idempotent
            && state
                .producer_ids
                .is_fenced(header.producer_id, header.producer_epoch)
        {
            return fail(ErrorCode::INVALID_PRODUCER_EPOCH);
        }
        // A transactional batch: its producer's transaction must hold the partition (added
        // by AddPartitionsToTxn, or now: Produce v12+ is transaction version 2).
        if header.is_transactional() {
            if let Err(error) = state.check_transactional_batch(
                header.producer_id,
                header.producer_epoch,
                topic,
                data.index,
                context.version >= IMPLICIT_ADD_FROM,
                crate::clock::now(),
            ) {
                // A partition not in the transaction: v11+ (KIP-890) names it
                // TRANSACTION_ABORTABLE, as Kafka 4.4 answers (compared in
                // tests/transactions.rs).
                if error == ErrorCode::INVALID_TXN_STATE && context.version >= ABORTABLE_FROM {
                    return fail(ErrorCode::TRANSACTION_ABORTABLE);
                }
                return fail(error);
            }
        }
        // A CreateTime topic's timestamp bounds, checked where Kafka's log validator checks
        // them: after the transaction's, before the producer state's.
        if !log_append_time(&state, topic) {
            let bound = |name| state.topic_config_number(topic, name).unwrap_or(i64::MAX);
            let bounds = (
                bound("message.timestamp.before.max.ms"),
                bound("message.timestamp.after.max.ms"),
            );
            let errors = timestamp_errors(&batch, crate::state::now_ms(), bounds);
            if !errors.is_empty() {
                let errors = if context.version >= RECORD_ERRORS_FROM {
                    errors
                } else {
                    Vec::new()
                };
                let log_start = state.topics[topic].partitions[partition].log_start();
                return fail(ErrorCode::INVALID_TIMESTAMP)
                    .with_base_offset(-1)
                    .with_log_start_offset(log_start)
                    .with_error_message(Some(
                        "One or more records have been rejected due to invalid timestamp".into(),
                    ))
                    .with_record_errors(errors);
            }
        }
        if idempotent {
            let log = &state.topics[topic].partitions[partition];
            match log.producers.check(&header) {
                Ok(Check::Append) => {}
                Ok(Check::Duplicate { base_offset }) => {
                    return answer
                        .with_base_offset(base_offset)
                        .with_log_start_offset(log.log_start());
                }
                Err(error) => return fail(error),
            }
        }
        // The batch is a slice of its request's frame, which the connection read into a
        // buffer of its own (broker.rs): kept as it is when it is most of the request, so
        // that storing it copies nothing, else copied, so that a small batch does not hold
        // a large request's memory once the rest of it is gone.
        let sent = batch.as_bytes();
        // A LogAppendTime topic's batch is stamped with the append time (a copy, its CRC
        // recomputed), as Kafka's log validator stamps it.
        let stamped = if log_append_time(&state, topic) {
            let now = crate::state::now_ms();
            batch
                .with_log_append_time(now)
                .map(|stamped| (stamped, now))
        } else {
            None
        };
        let (kept, max_timestamp) = match stamped {
            Some((stamped, now)) => {
                append_time = now;
                (stamped, now)
            }
            None if sent.len().saturating_mul(2) >= request_bytes => {
                (sent.clone(), header.max_timestamp)
            }
            None => (Bytes::copy_from_slice(sent), header.max_timestamp),
        };
        let appended = state.append(topic, partition, records, max_timestamp, |_| {
            NewBatch::Received {
                batch: kept,
                leader_epoch: epoch,
            }
        });
        if idempotent {
            if let Some(log) = state.topics.get_mut(topic) {
                let log = &mut log.partitions[partition];
                log.producers.record(&header, appended.0);
                if header.is_transactional() {
                    log.txns.appended(header.producer_id, appended.0);
                }
            }
        }
        appended
    };
    context.shared.appended.notify_waiters();
    if header.is_transactional() {
        // It may have begun a transaction (Produce v12+): its timeout starts.
        context.shared.transactions_changed.notify_one();
    }
    answer
        .with_base_offset(base_offset)
        .with_log_start_offset(log_start)
        .with_log_append_time_ms(append_time)
}

/// The Produce version from which an answer names the records it refused.
const RECORD_ERRORS_FROM: i16 = 8;

/// The records of `batch` stamped outside `[now - before, now + after]` (a record without a
/// timestamp, -1, passes), as Kafka's log validator names them: each record's index in the
/// batch and its message. The arithmetic wraps as Java's does. A record that cannot be
/// read ends the check (the batch is stored as sent, as before).
fn timestamp_errors(
    batch: &kafka_codec::records::RawBatch,
    now: i64,
    (before, after): (i64, i64),
) -> Vec<BatchIndexAndErrorMessage> {
    // Without a lower bound (Kafka's default `before.max.ms` is Long.MAX_VALUE) a batch whose
    // header puts its largest timestamp within the upper bound cannot hold a record out of
    // range, so its records (decompressed, for most producers) are not read: a producer's
    // header is trusted here, where Kafka's validator reads every record anyway.
    let newest = batch.header().max_timestamp;
    if before == i64::MAX && newest.checked_sub(now).is_some_and(|ahead| ahead <= after) {
        return Vec::new();
    }
    let Ok(records) = batch.records() else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    for (index, record) in records.map_while(Result::ok).enumerate() {
        let stamp = record.timestamp;
        let ago = now.wrapping_sub(stamp);
        if stamp != -1 && (ago > before || ago.wrapping_neg() > after) {
            errors.push(
                BatchIndexAndErrorMessage::default()
                    .with_batch_index(index as i32)
                    .with_batch_index_error_message(Some(
                        format!(
                            "Timestamp {stamp} of message with offset {} is out of range. The \
                             timestamp should be within [{}, {}]",
                            record.offset,
                            now.wrapping_sub(before),
                            now.wrapping_add(after)
                        )
                        .into(),
                    )),
            );
        }
    }
    errors
}

/// Whether `topic`'s `message.timestamp.type` is LogAppendTime.
fn log_append_time(state: &crate::state::State, topic: &str) -> bool {
    state
        .topic_config(topic, "message.timestamp.type")
        .is_some_and(|value| value.trim() == "LogAppendTime")
}

/// Whether a batch of the request is transactional (its first header says; a batch that
/// does not parse is refused later, per partition). The authorizer asks too: Kafka needs
/// WRITE on the transactional id only for transactional records.
pub(crate) fn has_transactional_records(request: &ProduceRequest) -> bool {
    request.topic_data.iter().any(|topic| {
        topic.partition_data.iter().any(|partition| {
            partition.records.as_ref().is_some_and(|records| {
                BatchReader::new(records.clone())
                    .next()
                    .and_then(Result::ok)
                    .is_some_and(|batch| batch.header().is_transactional())
            })
        })
    })
}
