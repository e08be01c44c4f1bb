//! DeleteShareGroupOffsets (KIP-932): forgets a share group's share state of whole topics
//! (`kafka-share-groups --delete-offsets`); each partition then starts again where
//! `share.auto.offset.reset` says. As Kafka 4.4: only for an existing share group without
//! members (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP for the whole request); a topic not held,
//! or with no share state in the group, is UNKNOWN_TOPIC_OR_PARTITION, listed after the
//! topics deleted.

use super::Context;
use kafka_codec::messages::delete_share_group_offsets_response::DeleteShareGroupOffsetsResponseTopic as Topic;
use kafka_codec::messages::{DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::DeleteShareGroupOffsets;

/// The whole request refused (no message: the field's default, as for NOT_COORDINATOR).
fn refused(error: ErrorCode, message: Option<String>) -> DeleteShareGroupOffsetsResponse {
    let answer = DeleteShareGroupOffsetsResponse::default().with_error_code(error.code());
    match message {
        Some(message) => answer.with_error_message(Some(message.into())),
        None => answer,
    }
}

pub fn handle(
    context: &Context<'_>,
    request: &DeleteShareGroupOffsetsRequest,
) -> DeleteShareGroupOffsetsResponse {
    let group_id = request.group_id.as_str();
    if let Some((error, message)) = super::share_fetch::offsets_group_refusal(context, group_id) {
        return refused(error, message);
    }
    let ids: BTreeMap<String, Uuid> = {
        let state = context.shared.state();
        request
            .topics
            .iter()
            .filter_map(|topic| {
                let name = topic.topic_name.as_str();
                Some((name.to_string(), state.topics.get(name)?.id))
            })
            .collect()
    };
    let mut share = context.shared.share_groups();
    if let Err((error, message)) = share.without_members(group_id, false) {
        return refused(error, Some(message));
    }
    let mut deleted = Vec::new();
    let mut failed = Vec::new();
    for topic in &request.topics {
        let name = topic.topic_name.clone();
        match ids.get(name.as_str()) {
            Some(&id) if share.forget_topic(group_id, id) => {
                deleted.push(Topic::default().with_topic_name(name).with_topic_id(id));
            }
            known => {
                let message = if known.is_some() {
                    "The group has no share state of this topic."
                } else {
                    "The topic is not held."
                };
                failed.push(
                    Topic::default()
                        .with_topic_name(name)
                        .with_error_code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code())
                        .with_error_message(Some(message.into())),
                );
            }
        }
    }
    deleted.extend(failed);
    DeleteShareGroupOffsetsResponse::default().with_responses(deleted)
}
