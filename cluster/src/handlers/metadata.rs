//! Metadata: the brokers, the cluster id, and the topics asked for (all of them for a null
//! list, or an empty one at v0) with each partition's leader and replicas.
//!
//! Fenced brokers are left out of the brokers, as Kafka's `KRaftMetadataCache` lists only
//! unfenced ones; an offline partition (leader -1) is LEADER_NOT_AVAILABLE, and replicas on
//! fenced brokers are listed as offline (v5+). v0 lists only unfenced replicas, and a
//! partition missing some is REPLICA_NOT_AVAILABLE, as Kafka filters for v0.
//!
//! A topic named that does not exist is created when the brokers' `auto.create.topics.enable`
//! is on (Kafka's default) and the request allows it (v4+ `AllowAutoTopicCreation`; v0-v3
//! always), with `num.partitions` and `default.replication.factor`; that first answer is
//! UNKNOWN_TOPIC_OR_PARTITION with no partitions, as a Kafka 4.4 broker answers while its
//! creation is under way, and the next Metadata finds it. A name Kafka could never hold is
//! INVALID_TOPIC_EXCEPTION then; the internal topics' names are not created (Kafka would
//! create them; the cluster keeps their state elsewhere). When ACLs are enforced, the
//! authorizer leaves out of the creation the topics the caller may not CREATE
//! (`authorizer/per_entry.rs`).

use super::create_topics::{auto_create as auto_create_topic, invalid_name};
use super::Context;
use crate::state::{State, Topic};
use kafka_codec::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_codec::messages::{MetadataRequest, MetadataResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::Metadata;

/// Kafka's internal topics (`Topic.isInternal`), answered as internal and never created here.
const INTERNAL_TOPICS: [&str; 3] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

pub fn handle(context: &Context<'_>, request: &MetadataRequest) -> MetadataResponse {
    let shared = context.shared;
    let mut state = shared.state();
    let brokers = shared
        .brokers()
        .iter()
        .filter(|broker| !state.is_fenced(broker.node_id))
        .map(|broker| {
            MetadataResponseBroker::default()
                .with_node_id(broker.node_id)
                .with_host(broker.address.ip().to_string().into())
                .with_port(i32::from(broker.address.port()))
        })
        .collect();
    let everything = match &request.topics {
        None => true,
        Some(topics) => context.version == 0 && topics.is_empty(),
    };
    let topics = if everything {
        state
            .topics
            .iter()
            .map(|(name, topic)| describe(context, &state, name, topic))
            .collect()
    } else {
        let auto_create = state.configs.auto_create_topics()
            && (context.version < 4 || request.allow_auto_topic_creation);
        let mut answers = Vec::new();
        for wanted in request.topics.iter().flatten() {
            // By id when the name is null, or empty beside an id: Kafka's Java client asks
            // for its assigned topic ids so, the name left at its default "" (a KIP-848
            // consumer subscribed with a SubscriptionPattern).
            let by_name = wanted
                .name
                .as_deref()
                .filter(|name| !name.is_empty() || wanted.topic_id.is_zero());
            let found = match by_name {
                Some(name) => state.topics.get(name).map(|topic| (name.to_owned(), topic)),
                None => state
                    .topic_by_id(wanted.topic_id)
                    .map(|(name, topic)| (name.clone(), topic)),
            };
            if let Some((name, topic)) = found {
                answers.push(describe(context, &state, &name, topic));
                continue;
            }
            let mut error = if by_name.is_some() {
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
            } else {
                ErrorCode::UNKNOWN_TOPIC_ID
            };
            let internal = wanted
                .name
                .as_deref()
                .is_some_and(|name| INTERNAL_TOPICS.contains(&name));
            if let (true, Some(name)) = (auto_create, by_name) {
                if invalid_name(name).is_some() {
                    error = ErrorCode::INVALID_TOPIC_EXCEPTION;
                } else if !internal {
                    auto_create_topic(context, &mut state, name);
                }
            }
            answers.push(
                MetadataResponseTopic::default()
                    .with_error_code(error.code())
                    .with_name(wanted.name.clone())
                    .with_topic_id(wanted.topic_id)
                    .with_is_internal(internal),
            );
        }
        answers
    };
    MetadataResponse::default()
        .with_brokers(brokers)
        .with_cluster_id(Some(shared.cluster_id.as_str().into()))
        .with_controller_id(shared.controller_for_clients())
        .with_topics(topics)
}

fn describe(
    context: &Context<'_>,
    state: &State,
    name: &str,
    topic: &Topic,
) -> MetadataResponseTopic {
    let brokers = context.shared.placement_brokers;
    let nodes = context.broker_ids();
    let partitions = (0..topic.partitions.len() as i32)
        .map(|index| {
            let view = state.replica_view(name, index, &nodes, brokers);
            let (leader, epoch) = view.leader;
            let (mut replicas, mut isr) = (view.replicas, view.isr);
            let mut error = ErrorCode::NONE;
            if context.version == 0 {
                let listed = replicas.len() + isr.len();
                replicas.retain(|node| !view.offline.contains(node));
                isr.retain(|node| !view.offline.contains(node));
                if listed != replicas.len() + isr.len() {
                    error = ErrorCode::REPLICA_NOT_AVAILABLE;
                }
            }
            if leader < 0 {
                error = ErrorCode::LEADER_NOT_AVAILABLE;
            }
            let partition = MetadataResponsePartition::default()
                .with_error_code(error.code())
                .with_partition_index(index)
                .with_leader_id(leader)
                // The leader epoch is in v7+ only.
                .with_leader_epoch(if context.version >= 7 { epoch } else { -1 })
                .with_replica_nodes(replicas.into())
                .with_isr_nodes(isr.into());
            if context.version >= 5 {
                partition.with_offline_replicas(view.offline.into())
            } else {
                partition
            }
        })
        .collect();
    MetadataResponseTopic::default()
        .with_name(Some(name.into()))
        .with_topic_id(topic.id)
        .with_partitions(partitions)
}
