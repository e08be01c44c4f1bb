//! ConsumerGroupHeartbeat (KIP-848): a member joins, heartbeats, reconciles and leaves a
//! consumer group whose coordinator assigns the partitions (see
//! [`consumer_groups`](crate::consumer_groups)).

use super::Context;
use crate::acls::resource_type;
use crate::authorizer::{Authority, Need};
use crate::consumer_groups::{
    self, Assignment, Heartbeat, HeartbeatOutcome, TopicView, TopicsByName,
};
use crate::sasl::Session;
use kafka_codec::messages::consumer_group_heartbeat_response::{
    Assignment as Assigned, TopicPartitions,
};
use kafka_codec::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ConsumerGroupHeartbeat;

/// `AclOperation.DESCRIBE`.
const DESCRIBE: i8 = 8;

pub fn handle(
    context: &Context<'_>,
    request: &ConsumerGroupHeartbeatRequest,
    client_id: &str,
    session: &Session,
) -> ConsumerGroupHeartbeatResponse {
    let heartbeat = Heartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        instance_id: request.instance_id.as_deref().map(str::to_string),
        rack_id: request.rack_id.as_deref().map(str::to_string),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        subscribed_names: request
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|name| name.to_string()).collect()),
        subscribed_regex: request
            .subscribed_topic_regex
            .as_deref()
            .map(str::to_string),
        server_assignor: request.server_assignor.as_deref().map(str::to_string),
        owned: request.topic_partitions.as_ref().map(|topics| {
            let mut owned = Assignment::new();
            for topic in topics {
                owned
                    .entry(topic.topic_id)
                    .or_default()
                    .extend(topic.partitions.iter());
            }
            owned
        }),
        client_id: client_id.to_string(),
        // As Kafka writes the client's address (Java's `InetAddress.toString`).
        client_host: format!("/{}", context.peer.ip()),
    };
    let outcome = if let Err(refused) =
        consumer_groups::validate(&heartbeat, &request.group_id, context.version)
    {
        refused
    } else if !context.coordinates(&request.group_id) {
        // Kafka's group coordinator service answers NOT_COORDINATOR with no message
        // (tests/leaderless_coordinator_kafka.rs).
        HeartbeatOutcome {
            message: None,
            ..HeartbeatOutcome::error(ErrorCode::NOT_COORDINATOR, "")
        }
    } else {
        // Read before the groups are locked (the two locks are never held together).
        let (topics, created): (TopicsByName, u64) = {
            let state = context.shared.state();
            let topics = state
                .topics
                .iter()
                .map(|(name, topic)| (name.clone(), (topic.id, topic.partitions.len() as i32)))
                .collect();
            (topics, state.topics_created)
        };
        // A regex resolves to the topics this member may DESCRIBE (ACLs on), as Kafka
        // resolves with the heartbeat's request context. Only asked while resolving, with
        // the groups locked; the ACLs' lock is never taken the other way round.
        let authority = Authority::new(context.shared, session.user(), context.peer.ip());
        let may_describe = |name: &str| {
            authority.may(&Need {
                resource_type: resource_type::TOPIC,
                name: name.to_owned(),
                operation: DESCRIBE,
            })
        };
        let view = TopicView {
            created,
            may_describe: &may_describe,
        };
        let outcome = context.shared.groups().consumer_heartbeat(
            &request.group_id,
            &heartbeat,
            &topics,
            &view,
            crate::clock::now(),
        );
        context.shared.groups_changed.notify_one();
        outcome
    };
    // The group's own (`consumer.heartbeat.interval.ms`), else the coordinator's.
    let interval = context
        .shared
        .groups()
        .consumer_timeouts(&request.group_id)
        .1;
    let interval_ms = i32::try_from(interval.as_millis()).unwrap_or(i32::MAX);
    let response = ConsumerGroupHeartbeatResponse::default()
        .with_error_code(outcome.error.code())
        .with_error_message(outcome.message.map(Into::into));
    if outcome.error != ErrorCode::NONE {
        return response;
    }
    response
        .with_member_id(Some(outcome.member_id.into()))
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
