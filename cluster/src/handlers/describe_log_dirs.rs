//! DescribeLogDirs: the broker's one log directory (in memory, named `in-memory`) and the
//! replicas it holds, each with its size in bytes and no lag (every append is committed on
//! every replica at once). A broker holds the replicas Metadata names it for
//! (`State::replica_view`: the leader and the next brokers it was placed over, as many as
//! the replication factor). Null topics: every
//! replica; named topics: those of them it holds. Total and usable bytes (v4+) are the
//! cluster's retention cap and what is left of it.

use super::Context;
use crate::state::State;
use kafka_codec::messages::describe_log_dirs_response::{
    DescribeLogDirsPartition, DescribeLogDirsResult, DescribeLogDirsTopic,
};
use kafka_codec::messages::{DescribeLogDirsRequest, DescribeLogDirsResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::DescribeLogDirs;

/// The name the one log directory is listed under.
pub const LOG_DIR: &str = "in-memory";

pub fn handle(context: &Context<'_>, request: &DescribeLogDirsRequest) -> DescribeLogDirsResponse {
    let state = context.shared.state();
    let brokers = context.shared.placement_brokers;
    let nodes = context.broker_ids();
    let held = |name: &str, index: i32| -> Option<DescribeLogDirsPartition> {
        let log = state.topics.get(name)?.partition(index)?;
        let view = state.replica_view(name, index, &nodes, brokers);
        view.replicas.contains(&context.node_id).then(|| {
            DescribeLogDirsPartition::default()
                .with_partition_index(index)
                .with_partition_size(log.bytes() as i64)
        })
    };
    let topics: Vec<DescribeLogDirsTopic> = match &request.topics {
        None => state
            .topics
            .iter()
            .map(|(name, topic)| (name.as_str(), (0..topic.partitions.len() as i32).collect()))
            .collect::<Vec<(&str, Vec<i32>)>>(),
        Some(wanted) => wanted
            .iter()
            .map(|topic| (topic.topic.as_str(), topic.partitions.iter().collect()))
            .collect(),
    }
    .into_iter()
    .filter_map(|(name, indexes)| {
        let partitions: Vec<_> = indexes.into_iter().filter_map(|i| held(name, i)).collect();
        (!partitions.is_empty()).then(|| {
            DescribeLogDirsTopic::default()
                .with_name(name.into())
                .with_partitions(partitions)
        })
    })
    .collect();
    let (total, usable) = capacity(&state);
    DescribeLogDirsResponse::default().with_results(vec![DescribeLogDirsResult::default()
        .with_log_dir(LOG_DIR.into())
        .with_topics(topics)
        .with_total_bytes(total)
        .with_usable_bytes(usable)])
}

/// The cluster's byte cap, and what of it is free.
fn capacity(state: &State) -> (i64, i64) {
    let cap = state.retention().cluster_bytes;
    (cap as i64, cap.saturating_sub(state.bytes()) as i64)
}
