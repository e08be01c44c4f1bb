//! AlterPartitionReassignments (KIP-455): each partition given a target replica list is
//! reassigned to it, or, given null, has its reassignment cancelled, as Kafka 4.4's KRaft
//! controller does (`state/reassign.rs`): the replicas added are out of the ISR until they
//! have caught up (`replica.fetch.wait.max.ms`, as an unfenced broker's rejoin), then the
//! reassignment completes (a timer, [`run_timers`]). Per partition, with Kafka's messages:
//! UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (an empty list, a broker not
//! registered, a broker twice; a cancel that would need an unclean election),
//! INVALID_REPLICATION_FACTOR (v1's `AllowReplicationFactorChange = false` and another
//! number of replicas), NO_REASSIGNMENT_IN_PROGRESS (a cancel of none). ALTER on the
//! cluster when ACLs are enforced.

use super::Context;
use crate::state::Refused;
use crate::Shared;
use kafka_codec::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_codec::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse,
};
use kafka_codec::{ApiKey, ErrorCode};
use std::sync::Arc;
use tokio::sync::watch;
use tokio::time::Instant;

pub const API: ApiKey = ApiKey::AlterPartitionReassignments;

pub fn handle(
    context: &Context<'_>,
    request: &AlterPartitionReassignmentsRequest,
) -> AlterPartitionReassignmentsResponse {
    // v0 has no such field and allows any change.
    let allow_factor_change = context.version < 1 || request.allow_replication_factor_change;
    let brokers = context.broker_ids();
    let placement_brokers = context.shared.placement_brokers;
    let catch_up_at = Instant::from_std(crate::clock::now()) + context.shared.replica_catch_up;
    let mut state = context.shared.state();
    let responses = request
        .topics
        .iter()
        .map(|topic| {
            let name = topic.name.as_str();
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| {
                    let index = partition.partition_index;
                    let outcome = if !state.topics.contains_key(name) {
                        Err((
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                            format!("Unable to find a topic named {name}."),
                        ))
                    } else if state.topics[name].partition(index).is_none() {
                        Err((
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                            format!("Unable to find partition {name}:{index}."),
                        ))
                    } else {
                        match &partition.replicas {
                            None => {
                                state.cancel_reassignment(name, index, &brokers, placement_brokers)
                            }
                            Some(target) => {
                                let target: Vec<i32> = target.iter().collect();
                                state.reassign(
                                    name,
                                    index,
                                    &target,
                                    allow_factor_change,
                                    &brokers,
                                    placement_brokers,
                                    catch_up_at,
                                )
                            }
                        }
                        .map_err(refusal)
                    };
                    let response =
                        ReassignablePartitionResponse::default().with_partition_index(index);
                    match outcome {
                        Ok(()) => response.with_error_code(0).with_error_message(None),
                        Err((error, message)) => response
                            .with_error_code(error.code())
                            .with_error_message(Some(message.into())),
                    }
                })
                .collect();
            ReassignableTopicResponse::default()
                .with_name(name.into())
                .with_partitions(partitions)
        })
        .collect();
    drop(state);
    context.shared.reassignments_changed.notify_one();
    context.shared.appended.notify_waiters();
    AlterPartitionReassignmentsResponse::default()
        .with_allow_replication_factor_change(allow_factor_change)
        .with_error_code(0)
        .with_error_message(None)
        .with_responses(responses)
}

/// Kafka's error and message for a refusal.
fn refusal(refused: Refused) -> (ErrorCode, String) {
    match refused {
        Refused::InvalidAssignment(message) => (ErrorCode::INVALID_REPLICA_ASSIGNMENT, message),
        Refused::ReplicationFactorChanged(message) => {
            (ErrorCode::INVALID_REPLICATION_FACTOR, message)
        }
        Refused::NoReassignment => (
            ErrorCode::NO_REASSIGNMENT_IN_PROGRESS,
            "No partition reassignment is in progress.".to_owned(),
        ),
    }
}

/// Completes reassignments as their added replicas catch up, until the cluster stops:
/// sleeps until the next catch-up, woken early by every AlterPartitionReassignments
/// (`Shared::reassignments_changed`).
pub async fn run_timers(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    loop {
        let changed = shared.reassignments_changed.notified();
        let next = shared.state().next_catch_up();
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {
                let brokers: Vec<i32> = shared.brokers().iter().map(|b| b.node_id).collect();
                let completed = shared.state().reassignments_caught_up(
                    Instant::from_std(crate::clock::now()),
                    &brokers,
                    shared.placement_brokers,
                );
                if !completed.is_empty() {
                    shared.appended.notify_waiters();
                }
            }
            () = changed => {}
            _ = stop.changed() => return,
        }
    }
}
