//! CreateTopics: new topics with empty logs, checked as Kafka checks them (name, configs,
//! partition count, replication factor against the brokers there are). The configs given
//! become the topic's overrides (what DescribeConfigs shows as TOPIC_CONFIG and what
//! retention, compaction and Produce follow); v5+ answers every config of the new topic as
//! DescribeConfigs would, with its partition count and replication factor. A refused topic
//! is answered as Kafka answers it: no id, -1 partitions and replicas, no configs.

use super::Context;
use crate::configs::check_topic_configs;
use crate::state::State;
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::create_topics_response::CreatableTopicConfigs;
use kafka_codec::messages::create_topics_response::CreatableTopicResult;
use kafka_codec::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::CreateTopics;

pub fn handle(context: &Context<'_>, request: &CreateTopicsRequest) -> CreateTopicsResponse {
    let topics = request
        .topics
        .iter()
        .map(|topic| create(context, topic, request.validate_only))
        .collect();
    CreateTopicsResponse::default().with_topics(topics)
}

/// Creates one topic as a CreateTopics of it would (the internal topics a streams group
/// asks for are created so, as Kafka's `AutoTopicCreationManager` sends a CreateTopics).
pub(crate) fn create_one(context: &Context<'_>, wanted: &CreatableTopic) -> CreatableTopicResult {
    create(context, wanted, false)
}

fn create(
    context: &Context<'_>,
    wanted: &CreatableTopic,
    validate_only: bool,
) -> CreatableTopicResult {
    let name = wanted.name.as_str();
    // A topic created has a null message (the schema's default is empty), as Kafka answers.
    let result = CreatableTopicResult::default()
        .with_name(wanted.name.clone())
        .with_error_message(None);
    let refuse = |error: ErrorCode, message: String| {
        result
            .clone()
            .with_error_code(error.code())
            .with_error_message(Some(message.into()))
            .with_configs(Some(Vec::new()))
    };
    if let Some(problem) = invalid_name(name) {
        return refuse(ErrorCode::INVALID_TOPIC_EXCEPTION, problem);
    }
    // Kafka checks the configs before the partition count and replication factor.
    let given = wanted.configs.iter().map(|config| {
        (
            config.name.as_str(),
            config.value.as_ref().map(|v| v.as_str()),
        )
    });
    if let Err(message) = check_topic_configs(given.clone()) {
        return refuse(ErrorCode::INVALID_CONFIG, message);
    }
    let overrides: BTreeMap<String, String> = given
        .filter_map(|(name, value)| Some((name.to_owned(), value?.to_owned())))
        .collect();
    let (partitions, replication_factor) = if wanted.assignments.is_empty() {
        // -1: the brokers' `num.partitions` and `default.replication.factor`.
        let (default_partitions, default_factor) = context.shared.state().configs.topic_defaults();
        let partitions = match wanted.num_partitions {
            -1 => default_partitions,
            n => n,
        };
        let factor = match wanted.replication_factor {
            -1 => default_factor,
            n => n,
        };
        (partitions, factor)
    } else {
        match check_assignments(context, wanted) {
            Ok(counts) => counts,
            Err((error, message)) => return refuse(error, message),
        }
    };
    if partitions <= 0 {
        return refuse(
            ErrorCode::INVALID_PARTITIONS,
            format!("Number of partitions must be positive, not {partitions}."),
        );
    }
    // Kafka's replica placer places over the unfenced brokers, those added included.
    let usable: Vec<i32> = {
        let state = context.shared.state();
        context
            .broker_ids()
            .into_iter()
            .filter(|&node| !state.is_fenced(node))
            .collect()
    };
    let brokers = usable.len();
    if replication_factor <= 0 {
        return refuse(
            ErrorCode::INVALID_REPLICATION_FACTOR,
            format!("Replication factor must be positive, not {replication_factor}."),
        );
    }
    // A manual assignment names its brokers itself (checked above).
    if replication_factor as usize > brokers && wanted.assignments.is_empty() {
        return refuse(
            ErrorCode::INVALID_REPLICATION_FACTOR,
            format!(
                "Replication factor {replication_factor} is larger than the {brokers} broker(s) \
                 in the cluster."
            ),
        );
    }
    let mut state = context.shared.state();
    if state.topics.contains_key(name) {
        return refuse(
            ErrorCode::TOPIC_ALREADY_EXISTS,
            format!("Topic '{name}' already exists."),
        );
    }
    let configs = super::describe_configs::topic_configs(&state, context.node_id, &overrides)
        .into_iter()
        .map(|entry| {
            CreatableTopicConfigs::default()
                .with_name(entry.name)
                .with_value(entry.value)
                .with_read_only(entry.read_only)
                .with_config_source(entry.config_source)
                .with_is_sensitive(entry.is_sensitive)
        })
        .collect();
    let id = if validate_only {
        state.new_id()
    } else {
        let id = state.add_topic(name, partitions, replication_factor);
        state.place_topic(name, usable);
        // A manual assignment is followed: its replicas, the first leading.
        for assignment in wanted.assignments.iter() {
            let replicas = assignment.broker_ids.iter().collect();
            state.assign_replicas(name, assignment.partition_index, replicas);
        }
        if !overrides.is_empty() {
            state.configs.topics.insert(name.to_owned(), overrides);
        }
        id
    };
    result
        .with_topic_id(id)
        .with_num_partitions(partitions)
        .with_replication_factor(replication_factor)
        .with_configs(Some(configs))
}

/// Kafka's checks of a manual assignment (`ReplicationControlManager.createTopic`), in its
/// order and with its messages: the counts left at -1, each partition once, each replica
/// list valid (`state::check_assignment`) and as long as the first, some replica of each
/// unfenced, the partitions 0 to n-1. The partition count and replication factor.
fn check_assignments(
    context: &Context<'_>,
    wanted: &CreatableTopic,
) -> Result<(i32, i16), (ErrorCode, String)> {
    let invalid = |message: String| Err((ErrorCode::INVALID_REPLICA_ASSIGNMENT, message));
    if wanted.replication_factor != -1 {
        return Err((
            ErrorCode::INVALID_REQUEST,
            "A manual partition assignment was specified, but replication factor was not set to -1.".into(),
        ));
    }
    if wanted.num_partitions != -1 {
        return Err((
            ErrorCode::INVALID_REQUEST,
            "A manual partition assignment was specified, but numPartitions was not set to -1."
                .into(),
        ));
    }
    let registered = context.broker_ids();
    let state = context.shared.state();
    let mut seen = std::collections::BTreeSet::new();
    let mut factor: Option<usize> = None;
    for assignment in wanted.assignments.iter() {
        let index = assignment.partition_index;
        if !seen.insert(index) {
            return invalid(format!(
                "Found multiple manual partition assignments for partition {index}"
            ));
        }
        let replicas: Vec<i32> = assignment.broker_ids.iter().collect();
        if let Err(message) = crate::state::check_assignment(&replicas, &registered) {
            return invalid(message);
        }
        if let Some(previous) = factor.filter(|&f| f != replicas.len()) {
            return invalid(format!(
                "The manual partition assignment includes a partition with {} replica(s), but \
                 this is not consistent with previous partitions, which have {previous} replica(s).",
                replicas.len()
            ));
        }
        factor = Some(replicas.len());
        if replicas.iter().all(|&r| state.is_fenced(r)) {
            return invalid(format!(
                "All brokers specified in the manual partition assignment for partition {index} \
                 are fenced or in controlled shutdown."
            ));
        }
    }
    if seen.iter().copied().ne(0..seen.len() as i32) {
        return invalid("partitions should be a consecutive 0-based integer sequence".into());
    }
    Ok((seen.len() as i32, factor.unwrap_or(0) as i16))
}

/// Creates `name` as Metadata's auto-creation does (Kafka's `AutoTopicCreationManager`
/// sends a CreateTopics of it): the brokers' `num.partitions` and
/// `default.replication.factor`, placed over the unfenced brokers as CreateTopics places.
/// False when it cannot be (more replicas than unfenced brokers), as Kafka's creation fails.
pub(crate) fn auto_create(context: &Context<'_>, state: &mut State, name: &str) -> bool {
    let (partitions, factor) = state.configs.topic_defaults();
    let usable: Vec<i32> = context
        .broker_ids()
        .into_iter()
        .filter(|&node| !state.is_fenced(node))
        .collect();
    if partitions < 1 || factor < 1 || factor as usize > usable.len() {
        return false;
    }
    state.add_topic(name, partitions, factor);
    state.place_topic(name, usable);
    true
}

/// Why Kafka would refuse `name` as a topic name, if it would.
pub fn invalid_name(name: &str) -> Option<String> {
    const MAX_LENGTH: usize = 249;
    if name.is_empty() {
        return Some("Topic name is empty.".into());
    }
    if name == "." || name == ".." {
        return Some(format!("Topic name cannot be \"{name}\"."));
    }
    if name.len() > MAX_LENGTH {
        return Some(format!(
            "Topic name is {} characters long; at most {MAX_LENGTH} are allowed.",
            name.len()
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Some(format!(
            "Topic name \"{name}\" holds a character other than ASCII alphanumerics, '.', '_' \
             and '-'."
        ));
    }
    None
}
