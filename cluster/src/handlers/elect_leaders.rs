//! ElectLeaders: moves a partition's leadership back to its preferred replica (election
//! type 0), or, when it has no leader, elects one (1, unclean), as Kafka's KRaft controller
//! elects them. A partition's replicas are those placed at creation
//! (`State::placed_replicas`); the first is the preferred one. A preferred move bumps the
//! leader epoch through the same `State::move_leader` as the control surface's moves; an
//! unclean one goes through the controller's partition change (`State::elect_unclean_leader`,
//! the periodic unclean election's path): the ISR first, then the ELR and the last known
//! leader, then any unfenced replica.
//!
//! Per partition: ELECTION_NOT_NEEDED when the preferred replica leads already (preferred)
//! or the partition has a leader (unclean: a stopped broker leads until it is fenced);
//! PREFERRED_LEADER_NOT_AVAILABLE when the preferred replica is fenced or out of the ISR (a
//! broker stopped but not fenced yet is elected, as Kafka's controller elects it);
//! ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica is unfenced; UNKNOWN_TOPIC_OR_PARTITION
//! for what the cluster does not hold. Null partitions mean every partition, and then, as
//! Kafka answers, only those where something happened (or failed other than
//! ELECTION_NOT_NEEDED) are listed. An unknown election type: INVALID_REQUEST.

use super::Context;
use kafka_codec::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_codec::messages::{ElectLeadersRequest, ElectLeadersResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ElectLeaders;

const PREFERRED: i8 = 0;
const UNCLEAN: i8 = 1;

pub fn handle(context: &Context<'_>, request: &ElectLeadersRequest) -> ElectLeadersResponse {
    // v0 has no election type and elects preferred leaders.
    let election = if context.version >= 1 {
        request.election_type
    } else {
        PREFERRED
    };
    if election != PREFERRED && election != UNCLEAN {
        return ElectLeadersResponse::default()
            .with_error_code(ErrorCode::INVALID_REQUEST.code())
            .with_replica_election_results(Vec::new());
    }
    // Before the state: the broker list's lock is never taken under the state's.
    let broker_ids = context.broker_ids();
    let mut state = context.shared.state();
    let wanted: Vec<(String, Vec<i32>)> = match &request.topic_partitions {
        Some(topics) => topics
            .iter()
            .map(|t| (t.topic.as_str().to_owned(), t.partitions.iter().collect()))
            .collect(),
        None => state
            .topics
            .iter()
            .map(|(name, topic)| (name.clone(), (0..topic.partitions.len() as i32).collect()))
            .collect(),
    };
    let every = request.topic_partitions.is_none();
    let brokers = context.shared.placement_brokers;
    let results = wanted
        .into_iter()
        .filter_map(|(topic, partitions)| {
            let results: Vec<PartitionResult> = partitions
                .into_iter()
                .filter_map(|partition| {
                    let error = elect(
                        &mut state,
                        (&topic, partition),
                        election,
                        (&broker_ids, brokers),
                    );
                    if every && matches!(&error, Some((ErrorCode::ELECTION_NOT_NEEDED, _))) {
                        return None;
                    }
                    let result = PartitionResult::default().with_partition_id(partition);
                    Some(match error {
                        None => result.with_error_code(0).with_error_message(None),
                        Some((error, message)) => result
                            .with_error_code(error.code())
                            .with_error_message(Some(message.into())),
                    })
                })
                .collect();
            (!results.is_empty()).then(|| {
                ReplicaElectionResult::default()
                    .with_topic(topic.into())
                    .with_partition_result(results)
            })
        })
        .collect();
    ElectLeadersResponse::default().with_replica_election_results(results)
}

/// Elects a leader for `topic`'s `partition`: `None` when it moved, else why not (with
/// the message Kafka's controller gives: its own for what is unknown, else the error's).
fn elect(
    state: &mut crate::state::State,
    (topic, partition): (&str, i32),
    election: i8,
    (broker_ids, brokers): (&[i32], usize),
) -> Option<(ErrorCode, String)> {
    let Some(found) = state.topics.get(topic) else {
        let message = format!("No such topic as {topic}");
        return Some((ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, message));
    };
    if found.partition(partition).is_none() {
        let message = format!("No such partition as {topic}-{partition}");
        return Some((ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, message));
    }
    let refuse = |error: ErrorCode| Some((error, message(error).to_owned()));
    if election == UNCLEAN {
        return state
            .elect_unclean_leader(topic, partition, broker_ids, brokers)
            .err()
            .and_then(refuse);
    }
    let preferred = state.placed_replicas(topic, partition, brokers)[0];
    let (leader, _) = state.leader(topic, partition, brokers);
    if leader == preferred {
        return refuse(ErrorCode::ELECTION_NOT_NEEDED);
    }
    // Kafka's controller elects the preferred replica when it is in the ISR and its broker
    // is unfenced: a broker stopped but not fenced yet (its session not timed out) is
    // elected (tests/elect_leaders_preferred_kafka.rs), and loses the leadership again when
    // it is fenced. (A leader the control surface moved off the replicas lists them from
    // itself, without the preferred one: then only fencing counts.)
    let view = state.replica_view(topic, partition, broker_ids, brokers);
    let out_of_isr = view.replicas.contains(&preferred) && !view.isr.contains(&preferred);
    if state.is_fenced(preferred) || out_of_isr {
        return refuse(ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE);
    }
    state.move_leader(topic, partition, preferred, brokers);
    None
}

/// The message of Kafka's `Errors` constant for `error`, which its controller sends.
fn message(error: ErrorCode) -> &'static str {
    match error {
        ErrorCode::ELECTION_NOT_NEEDED => "Leader election not needed for topic partition.",
        ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE => "The preferred leader was not available.",
        ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE => {
            "Eligible topic partition leaders are not available."
        }
        _ => "",
    }
}
