//! ListPartitionReassignments (KIP-455): the reassignments under way (`state/reassign.rs`),
//! each partition's replicas (the target, then those being removed) and the replicas being
//! added and removed; null topics: every one, else those of the partitions named (a topic
//! or partition not held, or not being reassigned, is left out), as Kafka 4.4's controller
//! lists them. DESCRIBE on the cluster when ACLs are enforced.

use super::Context;
use kafka_codec::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use kafka_codec::messages::{
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
};
use kafka_codec::ApiKey;
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::ListPartitionReassignments;

pub fn handle(
    context: &Context<'_>,
    request: &ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsResponse {
    let state = context.shared.state();
    let listed = |topic: &str, partition: i32| {
        state.reassignment(topic, partition).map(|ongoing| {
            OngoingPartitionReassignment::default()
                .with_partition_index(partition)
                .with_replicas(ongoing.replicas.clone().into())
                .with_adding_replicas(ongoing.adding.clone().into())
                .with_removing_replicas(ongoing.removing.clone().into())
        })
    };
    let wanted: Vec<(String, Vec<i32>)> = match &request.topics {
        None => {
            let mut all: BTreeMap<String, Vec<i32>> = BTreeMap::new();
            for ((topic, partition), _) in state.reassignments() {
                all.entry(topic.clone()).or_default().push(*partition);
            }
            all.into_iter().collect()
        }
        Some(topics) => topics
            .iter()
            .map(|t| {
                (
                    t.name.as_str().to_owned(),
                    t.partition_indexes.iter().collect(),
                )
            })
            .collect(),
    };
    let topics = wanted
        .into_iter()
        .filter_map(|(topic, partitions)| {
            let partitions: Vec<_> = partitions
                .into_iter()
                .filter_map(|partition| listed(&topic, partition))
                .collect();
            (!partitions.is_empty()).then(|| {
                OngoingTopicReassignment::default()
                    .with_name(topic.into())
                    .with_partitions(partitions)
            })
        })
        .collect();
    ListPartitionReassignmentsResponse::default()
        .with_error_code(0)
        .with_error_message(None)
        .with_topics(topics)
}
