//! CreatePartitions: more partitions for existing topics (never fewer), placed as
//! CreateTopics places a topic, over the brokers usable now (registered and unfenced, those
//! added at run time included: partition `p` led by the `p mod n`-th, its replicas the next
//! ones), as Kafka's controller runs its replica placer over the usable brokers for the new
//! partitions; an assignment in the request is checked, not followed. `validate_only` checks
//! without changing anything. Errors as Kafka's controller gives them:
//! UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (not an increase),
//! INVALID_REPLICA_ASSIGNMENT (a count or broker that does not fit),
//! INVALID_REPLICATION_FACTOR (more replicas than usable brokers), INVALID_REQUEST (a topic
//! named twice).

use super::Context;
use crate::state::PartitionLog;
use kafka_codec::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_codec::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_codec::messages::{CreatePartitionsRequest, CreatePartitionsResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::CreatePartitions;

pub fn handle(
    context: &Context<'_>,
    request: &CreatePartitionsRequest,
) -> CreatePartitionsResponse {
    let mut named = BTreeMap::<&str, usize>::new();
    for topic in &request.topics {
        *named.entry(topic.name.as_str()).or_default() += 1;
    }
    let results = request
        .topics
        .iter()
        .map(|topic| {
            let answer = CreatePartitionsTopicResult::default().with_name(topic.name.clone());
            let outcome = if named[topic.name.as_str()] > 1 {
                Err((
                    ErrorCode::INVALID_REQUEST,
                    "the topic is named more than once".to_owned(),
                ))
            } else {
                grow(context, topic, request.validate_only)
            };
            match outcome {
                Ok(()) => answer,
                Err((error, message)) => answer
                    .with_error_code(error.code())
                    .with_error_message(Some(message.as_str().into())),
            }
        })
        .collect();
    CreatePartitionsResponse::default().with_results(results)
}

fn grow(
    context: &Context<'_>,
    wanted: &CreatePartitionsTopic,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let mut state = context.shared.state();
    // Kafka's replica placer places over the unfenced brokers, those added included.
    let usable: Vec<i32> = context
        .broker_ids()
        .into_iter()
        .filter(|&node| !state.is_fenced(node))
        .collect();
    let Some(topic) = state.topics.get_mut(wanted.name.as_str()) else {
        return Err((
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            format!("no topic {:?}", wanted.name.as_str()),
        ));
    };
    let current = topic.partitions.len() as i32;
    if wanted.count <= current {
        return Err((
            ErrorCode::INVALID_PARTITIONS,
            format!(
                "the topic has {current} partition(s); {} is not an increase",
                wanted.count
            ),
        ));
    }
    let added = wanted.count - current;
    if let Some(assignments) = &wanted.assignments {
        if assignments.len() != added as usize {
            return Err((
                ErrorCode::INVALID_REPLICA_ASSIGNMENT,
                format!(
                    "{added} partition(s) added but {} assignment(s) given",
                    assignments.len()
                ),
            ));
        }
        for assignment in assignments {
            let replicas: Vec<i32> = assignment.broker_ids.iter().collect();
            let mut unique = replicas.clone();
            unique.sort_unstable();
            unique.dedup();
            if replicas.is_empty()
                || unique.len() != replicas.len()
                || replicas.iter().any(|&id| !context.shared.is_broker(id))
                || replicas.len() != topic.replication_factor as usize
            {
                return Err((
                    ErrorCode::INVALID_REPLICA_ASSIGNMENT,
                    format!(
                        "assignment {replicas:?} is not {} distinct broker(s) of this cluster",
                        topic.replication_factor
                    ),
                ));
            }
        }
    } else if topic.replication_factor as usize > usable.len() {
        return Err((
            ErrorCode::INVALID_REPLICATION_FACTOR,
            format!(
                "{} replica(s) of each new partition wanted, {} broker(s) usable",
                topic.replication_factor,
                usable.len()
            ),
        ));
    }
    if !validate_only {
        topic
            .partitions
            .extend((0..added).map(|_| PartitionLog::default()));
        state.place_partitions(wanted.name.as_str(), current, usable);
        // Assignments given are followed: each new partition on its replicas, the first
        // leading.
        for (offset, assignment) in wanted.assignments.iter().flatten().enumerate() {
            let replicas = assignment.broker_ids.iter().collect();
            state.assign_replicas(wanted.name.as_str(), current + offset as i32, replicas);
        }
    }
    Ok(())
}
