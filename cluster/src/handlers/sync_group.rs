//! SyncGroup: the leader hands in the assignment of the generation and every member gets
//! its own (followers wait for the leader's); from v5 the request names the protocol type and
//! name, else INCONSISTENT_GROUP_PROTOCOL. The state machine is in [`crate::groups`].

use super::Context;
use crate::groups::{Answer, SyncOutcome};
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::{SyncGroupRequest, SyncGroupResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::SyncGroup;

pub async fn handle(context: &Context<'_>, request: &SyncGroupRequest) -> SyncGroupResponse {
    // From v5 the protocol type and name are mandatory (Kafka's
    // `areMandatoryProtocolTypeAndNamePresent`).
    let unnamed = context.version >= 5
        && (request.protocol_type.is_none() || request.protocol_name.is_none());
    let outcome = if unnamed {
        failed(ErrorCode::INCONSISTENT_GROUP_PROTOCOL)
    } else if context.coordinates(&request.group_id) {
        let answer = context.shared.groups().sync(
            &request.group_id,
            request.generation_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            request.protocol_type.as_deref(),
            request.protocol_name.as_deref(),
            request
                .assignments
                .iter()
                .map(|given| (given.member_id.to_string(), given.assignment.clone()))
                .collect(),
            crate::clock::now(),
        );
        context.shared.groups_changed.notify_one();
        match answer {
            Answer::Now(outcome) => outcome,
            Answer::Wait(receiver) => receiver
                .await
                .unwrap_or_else(|_| failed(ErrorCode::UNKNOWN_MEMBER_ID)),
        }
    } else {
        failed(ErrorCode::NOT_COORDINATOR)
    };
    let response = SyncGroupResponse::default()
        .with_error_code(outcome.error.code())
        .with_assignment(outcome.assignment);
    if context.version >= 5 {
        response
            .with_protocol_type(outcome.protocol_type.map(Into::into))
            .with_protocol_name(outcome.protocol_name.map(Into::into))
    } else {
        response
    }
}

fn failed(error: ErrorCode) -> SyncOutcome {
    SyncOutcome {
        error,
        protocol_type: None,
        protocol_name: None,
        assignment: Bytes::new(),
    }
}
