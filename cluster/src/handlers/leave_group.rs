//! LeaveGroup: members leave (one at v0-v2; a batch with instance ids at v3+) and the
//! group rebalances without them.

use super::Context;
use kafka_codec::messages::leave_group_response::MemberResponse;
use kafka_codec::messages::{LeaveGroupRequest, LeaveGroupResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::LeaveGroup;

pub fn handle(context: &Context<'_>, request: &LeaveGroupRequest) -> LeaveGroupResponse {
    if !context.coordinates(&request.group_id) {
        return LeaveGroupResponse::default().with_error_code(ErrorCode::NOT_COORDINATOR.code());
    }
    let leaving: Vec<(String, Option<String>)> = if context.version >= 3 {
        request
            .members
            .iter()
            .map(|member| {
                (
                    member.member_id.to_string(),
                    member.group_instance_id.as_deref().map(str::to_string),
                )
            })
            .collect()
    } else {
        vec![(request.member_id.to_string(), None)]
    };
    let (error, errors) =
        context
            .shared
            .groups()
            .leave(&request.group_id, &leaving, crate::clock::now());
    context.shared.groups_changed.notify_one();
    if context.version < 3 {
        // One member: its error is the response's.
        let error = errors
            .first()
            .copied()
            .filter(|_| error == ErrorCode::NONE)
            .unwrap_or(error);
        return LeaveGroupResponse::default().with_error_code(error.code());
    }
    let members = leaving
        .into_iter()
        .zip(errors)
        .map(|((member_id, instance), error)| {
            MemberResponse::default()
                .with_member_id(member_id.into())
                .with_group_instance_id(instance.map(Into::into))
                .with_error_code(error.code())
        })
        .collect();
    LeaveGroupResponse::default()
        .with_error_code(error.code())
        .with_members(members)
}
