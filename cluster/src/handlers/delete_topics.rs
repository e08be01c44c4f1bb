//! DeleteTopics: by name (v0-v5) or by name or id (v6+); the topic and its logs go at once,
//! and the offsets groups committed for it, as Kafka's coordinator drops them.

use super::Context;
use kafka_codec::messages::delete_topics_response::DeletableTopicResult;
use kafka_codec::messages::{DeleteTopicsRequest, DeleteTopicsResponse};
use kafka_codec::{ApiKey, ErrorCode, Utf8Bytes, Uuid};

pub const API: ApiKey = ApiKey::DeleteTopics;

pub fn handle(context: &Context<'_>, request: &DeleteTopicsRequest) -> DeleteTopicsResponse {
    let wanted: Vec<(Option<Utf8Bytes>, Uuid)> = if context.version >= 6 {
        request
            .topics
            .iter()
            .map(|topic| (topic.name.clone(), topic.topic_id))
            .collect()
    } else {
        request
            .topic_names
            .iter()
            .map(|name| (Some(name.clone()), Uuid::ZERO))
            .collect()
    };
    let mut state = context.shared.state();
    let mut deleted = Vec::new();
    let responses = wanted
        .into_iter()
        .map(|(name, id)| {
            let found = match &name {
                Some(name) => state
                    .topics
                    .get(name.as_str())
                    .map(|topic| (name.as_str().to_owned(), topic.id)),
                None => state
                    .topic_by_id(id)
                    .map(|(name, topic)| (name.clone(), topic.id)),
            };
            match found {
                Some((name, id)) => {
                    state.remove_topic(&name);
                    deleted.push(name.clone());
                    // Topic ids are in v6+ only.
                    let id = if context.version >= 6 { id } else { Uuid::ZERO };
                    DeletableTopicResult::default()
                        .with_name(Some(name.into()))
                        .with_topic_id(id)
                }
                None => {
                    let error = if name.is_some() {
                        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                    } else {
                        ErrorCode::UNKNOWN_TOPIC_ID
                    };
                    DeletableTopicResult::default()
                        .with_name(name)
                        .with_topic_id(id)
                        .with_error_code(error.code())
                }
            }
        })
        .collect();
    drop(state);
    let mut groups = context.shared.groups();
    for name in &deleted {
        groups.remove_topic_offsets(name);
    }
    DeleteTopicsResponse::default().with_responses(responses)
}
