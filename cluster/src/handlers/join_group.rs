//! JoinGroup: a member joins (or rejoins) a classic group and waits until the rebalance
//! ends (every member rejoined, or the rebalance timeout passed); the leader's answer lists
//! the members. v4+: a new member is given its id with MEMBER_ID_REQUIRED first; v5+:
//! static members (`group.instance.id`). The state machine is in [`crate::groups`].

use super::Context;
use crate::groups::{Answer, JoinOutcome, JoinRequest};
use kafka_codec::messages::join_group_response::JoinGroupResponseMember;
use kafka_codec::messages::{JoinGroupRequest, JoinGroupResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::JoinGroup;

pub async fn handle(
    context: &Context<'_>,
    request: &JoinGroupRequest,
    client_id: &str,
) -> JoinGroupResponse {
    if !context.coordinates(&request.group_id) {
        let outcome = JoinOutcome {
            error: ErrorCode::NOT_COORDINATOR,
            generation: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id: request.member_id.to_string(),
            members: Vec::new(),
            skip_assignment: false,
        };
        return respond(context, outcome);
    }
    let join = JoinRequest {
        group_id: request.group_id.to_string(),
        member_id: request.member_id.to_string(),
        instance_id: request.group_instance_id.as_deref().map(str::to_string),
        client_id: client_id.to_string(),
        client_host: format!("/{}", context.peer.ip()),
        session_timeout_ms: request.session_timeout_ms,
        rebalance_timeout_ms: if context.version >= 1 {
            request.rebalance_timeout_ms
        } else {
            -1
        },
        protocol_type: request.protocol_type.to_string(),
        protocols: request
            .protocols
            .iter()
            .map(|protocol| (protocol.name.to_string(), protocol.metadata.clone()))
            .collect(),
        require_known_member_id: context.version >= 4,
        can_skip_assignment: context.version >= 9,
    };
    let answer = context.shared.groups().join(join, crate::clock::now());
    context.shared.groups_changed.notify_one();
    let outcome = match answer {
        Answer::Now(outcome) => outcome,
        Answer::Wait(receiver) => match receiver.await {
            Ok(outcome) => outcome,
            // The group went away while the member waited.
            Err(_) => JoinOutcome {
                error: ErrorCode::UNKNOWN_MEMBER_ID,
                generation: -1,
                protocol_type: None,
                protocol_name: None,
                leader: String::new(),
                member_id: request.member_id.to_string(),
                members: Vec::new(),
                skip_assignment: false,
            },
        },
    };
    respond(context, outcome)
}

fn respond(context: &Context<'_>, outcome: JoinOutcome) -> JoinGroupResponse {
    let members = outcome
        .members
        .into_iter()
        .map(|(id, instance, metadata)| {
            JoinGroupResponseMember::default()
                .with_member_id(id.into())
                .with_group_instance_id(instance.map(Into::into))
                .with_metadata(metadata)
        })
        .collect();
    // The protocol name is nullable from v7 only; before, an error carries "".
    let protocol_name = match outcome.protocol_name {
        Some(name) => Some(name.into()),
        None if context.version >= 7 => None,
        None => Some("".into()),
    };
    JoinGroupResponse::default()
        .with_error_code(outcome.error.code())
        .with_generation_id(outcome.generation)
        .with_protocol_type(outcome.protocol_type.map(Into::into))
        .with_protocol_name(protocol_name)
        .with_leader(outcome.leader.into())
        .with_skip_assignment(outcome.skip_assignment && context.version >= 9)
        .with_member_id(outcome.member_id.into())
        .with_members(members)
}
