//! ListOffsets: the earliest (-2, and -4, earliest local: the same with no tiered storage)
//! and latest (-1) offsets, the record with the largest timestamp (-3), and the first
//! record at or after a timestamp. With `read_committed` (v2+) the latest offset is the
//! last stable offset.

use super::Context;
use crate::state::PartitionLog;
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

pub fn handle(context: &Context<'_>, request: &ListOffsetsRequest) -> ListOffsetsResponse {
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
                    let (leader, epoch) = state.leader(
                        &topic.name,
                        wanted.partition_index,
                        context.shared.placement_brokers,
                    );
                    if leader != context.node_id {
                        let error = super::fetch::not_leader_error(
                            context,
                            &state,
                            (&topic.name, wanted.partition_index),
                            context.version >= 4,
                            wanted.current_leader_epoch,
                            epoch,
                        );
                        return answer.with_error_code(error.code());
                    }
                    // v4+ names the leader epoch the client knows, as Fetch does.
                    if let Some(error) = super::fetch::epoch_error(
                        context.version >= 4,
                        wanted.current_leader_epoch,
                        epoch,
                    ) {
                        return answer.with_error_code(error.code());
                    }
                    // v2+ read_committed: the latest offset is the last stable one.
                    let committed = context.version >= 2
                        && request.isolation_level == super::fetch::READ_COMMITTED;
                    let (offset, timestamp) = if committed && wanted.timestamp == LATEST {
                        (log.last_stable_offset(), -1)
                    } else {
                        lookup(log, wanted.timestamp)
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

/// The offset and timestamp answered for `timestamp`; (-1, -1) when no record matches.
fn lookup(log: &PartitionLog, timestamp: i64) -> (i64, i64) {
    match timestamp {
        LATEST => (log.high_watermark(), -1),
        EARLIEST | EARLIEST_LOCAL => (log.log_start(), -1),
        MAX_TIMESTAMP => {
            let mut best = (-1, -1);
            for (offset, at) in records(log) {
                if at > best.1 {
                    best = (offset, at);
                }
            }
            best
        }
        wanted if wanted >= 0 => records(log)
            .find(|&(_, at)| at >= wanted)
            .unwrap_or((-1, -1)),
        _ => (-1, -1),
    }
}

/// Every record's offset and timestamp, oldest first (batches that do not decode, which
/// Produce never stores, are skipped).
fn records(log: &PartitionLog) -> impl Iterator<Item = (i64, i64)> + '_ {
    log.batches().flat_map(|stored| {
        let batch = BatchReader::new(stored.bytes()).next().and_then(Result::ok);
        let decoded = batch.and_then(|batch| batch.decode().ok());
        decoded
            .map(|batch| {
                batch
                    .records
                    .iter()
                    .map(|record| (record.offset, batch.record_timestamp(record)))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    })
}
