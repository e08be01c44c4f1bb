//! FindCoordinator: the broker that coordinates a group (the rule is in
//! [`crate::groups::coordinator`], unless the control surface moved it) or a transactional
//! id ([`crate::transactions::coordinator`], unless moved too), one key at v0-v3 and a batch of keys at v4+;
//! other key types are INVALID_REQUEST, as Kafka answers a type it does not know.

use super::Context;
use kafka_codec::messages::find_coordinator_response::Coordinator;
use kafka_codec::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::FindCoordinator;

const GROUP: i8 = 0;
const TRANSACTION: i8 = 1;

/// The node, host, port, error and message for one key.
fn find(
    context: &Context<'_>,
    key_type: i8,
    key: &str,
) -> (i32, String, i32, ErrorCode, Option<String>) {
    let error =
        |code: ErrorCode, message: &str| (-1, String::new(), -1, code, Some(message.to_string()));
    let brokers = context.shared.placement_brokers;
    let node = match key_type {
        GROUP => context.shared.control.coordinator(key, brokers),
        TRANSACTION => context.shared.control.transaction_coordinator(key, brokers),
        _ => return error(ErrorCode::INVALID_REQUEST, "unknown coordinator key type"),
    };
    // A coordinator is always a broker of the cluster now: a removed one's groups and
    // transactional ids went to its successor. A fenced one whose internal partitions no
    // other replica could take over has no leader there: Kafka's `KafkaApis` finds no live
    // leader and answers COORDINATOR_NOT_AVAILABLE.
    let available = {
        let state = context.shared.state();
        context.shared.control.coordinator_available(node, &state)
    };
    let address = context.shared.address(node).filter(|_| available);
    let Some(address) = address else {
        return error(
            ErrorCode::COORDINATOR_NOT_AVAILABLE,
            "The coordinator is not available.",
        );
    };
    (
        node,
        address.ip().to_string(),
        i32::from(address.port()),
        ErrorCode::NONE,
        // Kafka writes `Errors.message()`, which is "NONE" for no error.
        Some("NONE".into()),
    )
}

pub fn handle(context: &Context<'_>, request: &FindCoordinatorRequest) -> FindCoordinatorResponse {
    if context.version >= 4 {
        let coordinators = request
            .coordinator_keys
            .iter()
            .map(|key| {
                let (node, host, port, error, mut message) = find(context, request.key_type, key);
                if error != ErrorCode::INVALID_REQUEST {
                    // Kafka's batched answer sets no message, found or not (its old one is
                    // `Errors.message()`; tests/leaderless_coordinator_kafka.rs).
                    message = Some(String::new());
                }
                Coordinator::default()
                    .with_key(key.clone())
                    .with_node_id(node)
                    .with_host(host.into())
                    .with_port(port)
                    .with_error_code(error.code())
                    .with_error_message(message.map(Into::into))
            })
            .collect();
        return FindCoordinatorResponse::default().with_coordinators(coordinators);
    }
    let (node, host, port, error, message) = find(context, request.key_type, &request.key);
    let response = FindCoordinatorResponse::default()
        .with_node_id(node)
        .with_host(host.into())
        .with_port(port)
        .with_error_code(error.code());
    if context.version >= 1 {
        response.with_error_message(message.map(Into::into))
    } else {
        response
    }
}
