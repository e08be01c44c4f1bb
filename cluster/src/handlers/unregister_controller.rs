//! UnregisterController (key 94, Kafka 4.4): the active controller removes a controller's
//! registration. Read from Kafka 4.4's `QuorumController` and `ClusterControlManager` and
//! compared with a live cluster of two controllers and a broker
//! (`tests/unregister_controller.rs`):
//!
//! - a broker forwards it to the active controller, so it answers as that controller does;
//! - a controller that is not active answers NOT_CONTROLLER (the write never reaches its
//!   quorum), whatever the id;
//! - the active controller's own id: INVALID_REQUEST, `Controller cannot unregister itself
//!   while it is active.`;
//! - an id that is not a registered controller (an unknown id, a broker's):
//!   CONTROLLER_ID_NOT_REGISTERED, `Controller ID N is not currently registered.`;
//! - a registered controller's (voter or not: Kafka does not look at the voter set): success.
//!   A running controller registers again as soon as it sees its registration gone, so
//!   nothing a client sees changes (DescribeCluster still lists it, DescribeQuorum's voters
//!   are the same). Here every served controller runs, and the modelled ones (no listener,
//!   not listed by DescribeCluster) are not registered.
//! - without controllers the leading broker is the active controller of a combined quorum:
//!   its own id is INVALID_REQUEST as above, as a live combined node answers
//!   (`tests/combined_quorum.rs`).
//!
//! ALTER on the cluster when ACLs are enforced (`ControllerApis` asks for it before the
//! controller looks at the id). Kafka also refuses it below `metadata.version` 33
//! (IBP_4_4_IV2); the releases that list the API finalize 33, and no downgrade is accepted.

use super::Context;
use kafka_codec::messages::{UnregisterControllerRequest, UnregisterControllerResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::UnregisterController;

pub fn handle(
    context: &Context<'_>,
    request: &UnregisterControllerRequest,
) -> UnregisterControllerResponse {
    let shared = context.shared;
    let active = shared.quorum().map(|quorum| quorum.leader().leader_id());
    let refused = |error: ErrorCode, message: String| {
        UnregisterControllerResponse::default()
            .with_error_code(error.code())
            .with_error_message(Some(message.as_str().into()))
    };
    if shared.is_controller(context.node_id) && active != Some(context.node_id) {
        return refused(ErrorCode::NOT_CONTROLLER, not_controller_message(active));
    }
    let id = request.controller_id;
    if active == Some(id) {
        return refused(
            ErrorCode::INVALID_REQUEST,
            "Controller cannot unregister itself while it is active.".into(),
        );
    }
    if !shared.is_controller(id) {
        return refused(
            ErrorCode::CONTROLLER_ID_NOT_REGISTERED,
            format!("Controller ID {id} is not currently registered."),
        );
    }
    // Kafka's success carries the schema's default message, an empty string (not null).
    UnregisterControllerResponse::default()
        .with_error_code(0)
        .with_error_message(Some("".into()))
}

/// What Kafka's `QuorumController` says when it is not the active controller.
fn not_controller_message(active: Option<i32>) -> String {
    match active {
        Some(id) if id >= 0 => format!("The active controller appears to be node {id}."),
        _ => "No controller appears to be active.".into(),
    }
}
