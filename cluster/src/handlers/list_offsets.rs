//! ListOffsets: the earliest (-2, and -4, earliest local: the same with no tiered storage)
//! and latest (-1) offsets, the record with the largest timestamp (-3), and the first
//! record at or after a timestamp. With a consumer's `read_committed` (v2+) the latest
//! offset is the last stable offset. Off the leader, a follower answers the debugging
//! replica id only (as recorded from Kafka 4.4: `tests/offsets_off_leader_kafka.rs`).

use super::Context;
use crate::state::{PartitionLog, State};
use kafka_codec::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_codec::messages::{ListOffsetsRequest, ListOffsetsResponse};
use kafka_codec::records::BatchReader;
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ListOffsets;

const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;

/// The replica ids a ListOffsets names: a consumer's, and the debugging one, which a follower
/// answers too (a broker's own id, as a follower sends it, is answered by the leader only).
const CONSUMER_REPLICA: i32 = -1;
const DEBUGGING_REPLICA: i32 = -2;

pub fn handle(context: &Context<'_>, request: &ListOffsetsRequest) -> ListOffsetsResponse {
    // The brokers listed, read before the state is locked (as everywhere).
    let brokers = context.broker_ids();
    let state = context.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let found = state.topics.get(topic.name.as_str());
            let partitions = topic
                .partitions
                .iter()
                .map(|wanted| {
                    let answer = ListOffsetsPartitionResponse::default()
                        .with_partition_index(wanted.partition_index);
                    let log = found.and_then(|topic| topic.partition(wanted.partition_index));
                    let Some(log) = log else {
                        return answer
                            .with_error_code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code());
                    };
                    let led = state.leader(
                        &topic.name,
                        wanted.partition_index,
                        context.shared.placement_brokers,
                    );
                    // v4+ names the leader epoch the client knows, as Fetch does; a follower
                    // answers the debugging replica id only.
                    let theirs = super::named_epoch(wanted.current_leader_epoch)
                        .filter(|_| context.version >= 4);
                    if let Some(error) = context.partition_refusal(
                        &state,
                        (&topic.name, wanted.partition_index),
                        &brokers,
                        led,
                        theirs,
                        request.replica_id == DEBUGGING_REPLICA,
                    ) {
                        return answer.with_error_code(error.code());
                    }
                    // A consumer's read_committed (v2+): the latest offset is the last stable
                    // one. Kafka applies the isolation level to a consumer (replica id -1)
                    // only: a broker or the debugging id reads to the log end.
                    let committed = context.version >= 2
                        && request.replica_id == CONSUMER_REPLICA
                        && request.isolation_level == super::fetch::READ_COMMITTED;
                    let (offset, timestamp, epoch) = if committed && wanted.timestamp == LATEST {
                        (log.last_stable_offset(), -1, led.1)
                    } else {
                        lookup(
                            &state,
                            (&topic.name, wanted.partition_index),
                            log,
                            led.1,
                            wanted.timestamp,
                        )
                    };
                    if context.version == 0 {
                        // v0 answers a list of offsets; here one (or none, when not found).
                        let offsets: Vec<i64> = if offset >= 0 {
                            vec![offset]
                        } else {
                            Vec::new()
                        };
                        return answer.with_old_style_offsets(offsets.into());
                    }
                    let answer = answer.with_offset(offset).with_timestamp(timestamp);
                    // The leader epoch is in v4+ only (and not ignorable before).
                    if context.version >= 4 && offset >= 0 {
                        return answer.with_leader_epoch(epoch);
                    }
                    answer
                })
                .collect();
            ListOffsetsTopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    ListOffsetsResponse::default().with_topics(topics)
}

/// The offset, timestamp and leader epoch answered for `timestamp` of `log` (at epoch
/// `current`), as Kafka's log answers them: the latest offset names the current epoch, the
/// earliest the epoch its offset began in (the leader epoch cache's), a record found the
/// leader epoch of its batch; (-1, -1, -1) when no record matches.
fn lookup(
    state: &State,
    (topic, partition): (&str, i32),
    log: &PartitionLog,
    current: i32,
    timestamp: i64,
) -> (i64, i64, i32) {
    match timestamp {
        LATEST => (log.high_watermark(), -1, current),
        EARLIEST | EARLIEST_LOCAL => {
            let start = log.log_start();
            (start, -1, state.epoch_at(topic, partition, start))
        }
        MAX_TIMESTAMP => {
            let mut best = (-1, -1, -1);
            for (offset, at, epoch) in records(log) {
                if at > best.1 {
                    best = (offset, at, epoch);
                }
            }
            best
        }
        wanted if wanted >= 0 => records(log)
            .find(|&(_, at, _)| at >= wanted)
            .unwrap_or((-1, -1, -1)),
        _ => (-1, -1, -1),
    }
}

/// Every record's offset, timestamp and batch leader epoch, oldest first (batches that do
/// not decode, which Produce never stores, are skipped).
fn records(log: &PartitionLog) -> impl Iterator<Item = (i64, i64, i32)> + '_ {
    log.batches().flat_map(|stored| {
        let batch = BatchReader::new(stored.bytes()).next().and_then(Result::ok);
        let decoded = batch.and_then(|batch| batch.decode().ok());
        decoded
            .map(|batch| {
                batch
                    .records
                    .iter()
                    .map(|record| {
                        let at = batch.record_timestamp(record);
                        (record.offset, at, batch.partition_leader_epoch)
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    })
}
