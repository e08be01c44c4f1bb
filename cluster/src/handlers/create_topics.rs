//! CreateTopics: new topics with empty logs, checked as Kafka checks them (name, partition
//! count, replication factor against the brokers there are).

use super::Context;
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::create_topics_response::CreatableTopicResult;
use kafka_codec::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::CreateTopics;

/// Kafka's `num.partitions` and `default.replication.factor` defaults, for -1.
const DEFAULT_PARTITIONS: i32 = 1;
const DEFAULT_REPLICATION_FACTOR: i16 = 1;

pub fn handle(context: &Context<'_>, request: &CreateTopicsRequest) -> CreateTopicsResponse {
    let topics = request
        .topics
        .iter()
        .map(|topic| create(context, topic, request.validate_only))
        .collect();
    CreateTopicsResponse::default().with_topics(topics)
}

fn create(
    context: &Context<'_>,
    wanted: &CreatableTopic,
    validate_only: bool,
) -> CreatableTopicResult {
    let name = wanted.name.as_str();
    let result = CreatableTopicResult::default().with_name(wanted.name.clone());
    let refuse = |error: ErrorCode, message: String| {
        result
            .clone()
            .with_error_code(error.code())
            .with_error_message(Some(message.into()))
    };
    if let Some(problem) = invalid_name(name) {
        return refuse(ErrorCode::INVALID_TOPIC_EXCEPTION, problem);
    }
    let (partitions, replication_factor) = if wanted.assignments.is_empty() {
        let partitions = match wanted.num_partitions {
            -1 => DEFAULT_PARTITIONS,
            n => n,
        };
        let factor = match wanted.replication_factor {
            -1 => DEFAULT_REPLICATION_FACTOR,
            n => n,
        };
        (partitions, factor)
    } else {
        let factor = wanted.assignments[0].broker_ids.len() as i16;
        (wanted.assignments.len() as i32, factor)
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
    if replication_factor as usize > brokers {
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
    let id = if validate_only {
        state.new_id()
    } else {
        let id = state.add_topic(name, partitions, replication_factor);
        state.place_topic(name, usable);
        id
    };
    result
        .with_topic_id(id)
        .with_num_partitions(partitions)
        .with_replication_factor(replication_factor)
        .with_configs(Some(Vec::new()))
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
