//! Heartbeat: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin.

use super::Context;
use kafka_codec::messages::{HeartbeatRequest, HeartbeatResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::Heartbeat;

pub fn handle(context: &Context<'_>, request: &HeartbeatRequest) -> HeartbeatResponse {
    let error = if context.coordinates(&request.group_id) {
        let error = context.shared.groups().heartbeat(
            &request.group_id,
            request.generation_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            crate::clock::now(),
        );
        context.shared.groups_changed.notify_one();
        error
    } else {
        ErrorCode::NOT_COORDINATOR
    };
    HeartbeatResponse::default().with_error_code(error.code())
}
