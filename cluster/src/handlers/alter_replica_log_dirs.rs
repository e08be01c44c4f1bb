//! AlterReplicaLogDirs: moves replicas between a broker's log directories, as Kafka 4.4's
//! `ReplicaManager.alterReplicaLogDirs` answers. Each broker here has one log directory,
//! `in-memory` (DescribeLogDirs' name), so there is never anything to move: per partition,
//! in Kafka's order, a topic name too long for a future log directory is
//! INVALID_TOPIC_EXCEPTION, a directory other than `in-memory` LOG_DIR_NOT_FOUND (Kafka's
//! `isLogDirOnline` of a directory not in its config), a topic or partition the cluster does
//! not hold UNKNOWN_TOPIC_OR_PARTITION, one it holds without a replica on this broker
//! REPLICA_NOT_AVAILABLE (Kafka's NOT_LEADER_OR_FOLLOWER, converted), and a replica this
//! broker holds, already in that directory, NONE. A partition named twice is answered once,
//! for the last directory naming it, as Kafka's map keeps it. ALTER on the cluster when ACLs
//! are enforced.

use super::describe_log_dirs::LOG_DIR;
use super::Context;
use kafka_codec::messages::alter_replica_log_dirs_response::{
    AlterReplicaLogDirPartitionResult, AlterReplicaLogDirTopicResult,
};
use kafka_codec::messages::{AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::AlterReplicaLogDirs;

/// Kafka's `LocalLog.logFutureDirName`: `topic-partition.<32 hex digits>-future`, which a
/// file system entry holds at most 255 bytes of.
fn future_dir_name_len(topic: &str, partition: i32) -> usize {
    topic.len() + 1 + partition.to_string().len() + 1 + 32 + "-future".len()
}

pub fn handle(
    context: &Context<'_>,
    request: &AlterReplicaLogDirsRequest,
) -> AlterReplicaLogDirsResponse {
    // Topic and partition to the directory asked for (the last one naming it), in the order
    // first named.
    // (Indexed, so that a request naming many partitions costs n log n, not n².)
    let mut wanted: Vec<((String, i32), String)> = Vec::new();
    let mut position: BTreeMap<(String, i32), usize> = BTreeMap::new();
    for dir in request.dirs.iter() {
        for topic in dir.topics.iter() {
            for partition in topic.partitions.iter() {
                let key = (topic.name.as_str().to_owned(), partition);
                let path = dir.path.as_str().to_owned();
                match position.get(&key) {
                    Some(&at) => wanted[at].1 = path,
                    None => {
                        position.insert(key.clone(), wanted.len());
                        wanted.push((key, path));
                    }
                }
            }
        }
    }
    let state = context.shared.state();
    let nodes = context.broker_ids();
    let brokers = context.shared.placement_brokers;
    let error = |topic: &str, partition: i32, path: &str| -> ErrorCode {
        if future_dir_name_len(topic, partition) > 255 {
            return ErrorCode::INVALID_TOPIC_EXCEPTION;
        }
        if path != LOG_DIR {
            return ErrorCode::LOG_DIR_NOT_FOUND;
        }
        if state
            .topics
            .get(topic)
            .and_then(|t| t.partition(partition))
            .is_none()
        {
            return ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
        }
        let view = state.replica_view(topic, partition, &nodes, brokers);
        if view.replicas.contains(&context.node_id) {
            ErrorCode::NONE
        } else {
            ErrorCode::REPLICA_NOT_AVAILABLE
        }
    };
    // Grouped by topic, in the order first named.
    let mut topics: Vec<(&str, Vec<AlterReplicaLogDirPartitionResult>)> = Vec::new();
    let mut topic_at: BTreeMap<&str, usize> = BTreeMap::new();
    for ((topic, partition), path) in &wanted {
        let result = AlterReplicaLogDirPartitionResult::default()
            .with_partition_index(*partition)
            .with_error_code(error(topic, *partition, path).code());
        let at = *topic_at.entry(topic.as_str()).or_insert_with(|| {
            topics.push((topic.as_str(), Vec::new()));
            topics.len() - 1
        });
        topics[at].1.push(result);
    }
    let results = topics
        .into_iter()
        .map(|(topic, partitions)| {
            AlterReplicaLogDirTopicResult::default()
                .with_topic_name(topic.into())
                .with_partitions(partitions)
        })
        .collect();
    AlterReplicaLogDirsResponse::default().with_results(results)
}
