//! ShareGroupHeartbeat (KIP-932): a member joins, heartbeats and leaves a share group, whose
//! coordinator assigns it partitions it may share with other members (see
//! [`share_groups`](crate::share_groups)).

use super::Context;
use crate::share_groups::{self, Heartbeat, HeartbeatOutcome};
use kafka_codec::messages::share_group_heartbeat_response::{
    Assignment as Assigned, TopicPartitions,
};
use kafka_codec::messages::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ShareGroupHeartbeat;

pub fn handle(
    context: &Context<'_>,
    request: &ShareGroupHeartbeatRequest,
    client_id: &str,
) -> ShareGroupHeartbeatResponse {
    let heartbeat = Heartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        rack_id: request.rack_id.as_deref().map(str::to_string),
        subscribed_names: request
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|name| name.to_string()).collect()),
        client_id: client_id.to_string(),
        // As Kafka writes the client's address (Java's `InetAddress.toString`).
        client_host: format!("/{}", context.peer.ip()),
    };
    let group_id = request.group_id.as_str();
    let outcome = if let Err(refused) = share_groups::validate(group_id, &heartbeat) {
        refused
    } else if !context.coordinates(group_id) {
        // Kafka's group coordinator service answers NOT_COORDINATOR with no message
        // (tests/leaderless_coordinator_groups_kafka.rs).
        HeartbeatOutcome {
            message: None,
            ..HeartbeatOutcome::error(ErrorCode::NOT_COORDINATOR, "")
        }
    } else if context.shared.groups().groups.contains_key(group_id) {
        // One namespace for every kind of group, as Kafka's coordinator keeps them.
        HeartbeatOutcome::error(
            ErrorCode::GROUP_ID_NOT_FOUND,
            format!("Group {group_id} is not a share group."),
        )
    } else {
        let topics = share_groups::topics_by_name(&context.shared.state());
        let outcome = context.shared.share_groups().heartbeat(
            group_id,
            &heartbeat,
            &topics,
            crate::clock::now(),
        );
        // A new member's session may end before the timer's next wake.
        context.shared.share_groups_changed.notify_one();
        outcome
    };
    let interval = context
        .shared
        .share_groups()
        .config_of(group_id)
        .heartbeat_interval;
    let interval_ms = i32::try_from(interval.as_millis()).unwrap_or(i32::MAX);
    let response = ShareGroupHeartbeatResponse::default()
        .with_error_code(outcome.error.code())
        .with_error_message(outcome.message.map(Into::into));
    if outcome.error != ErrorCode::NONE {
        return response;
    }
    response
        .with_member_id(outcome.member_id.map(Into::into))
        .with_member_epoch(outcome.member_epoch)
        .with_heartbeat_interval_ms(interval_ms)
        .with_assignment(outcome.assignment.map(|assignment| {
            Assigned::default().with_topic_partitions(
                assignment
                    .into_iter()
                    .map(|(topic_id, partitions)| {
                        TopicPartitions::default()
                            .with_topic_id(topic_id)
                            .with_partitions(partitions.into_iter().collect::<Vec<i32>>().into())
                    })
                    .collect(),
            )
        }))
}
