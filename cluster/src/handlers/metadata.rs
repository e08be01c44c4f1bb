//! Metadata: the brokers, the cluster id, and the topics asked for (all of them for a null
//! list, or an empty one at v0) with each partition's leader and replicas.

use super::Context;
use crate::state::{State, Topic};
use kafka_codec::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_codec::messages::{MetadataRequest, MetadataResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::Metadata;

pub fn handle(context: &Context<'_>, request: &MetadataRequest) -> MetadataResponse {
    let shared = context.shared;
    let brokers = shared
        .brokers()
        .iter()
        .map(|broker| {
            MetadataResponseBroker::default()
                .with_node_id(broker.node_id)
                .with_host(broker.address.ip().to_string().into())
                .with_port(i32::from(broker.address.port()))
        })
        .collect();
    let state = shared.state();
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
        request
            .topics
            .iter()
            .flatten()
            .map(|wanted| {
                let found = match &wanted.name {
                    Some(name) => state
                        .topics
                        .get(name.as_str())
                        .map(|topic| (name.as_str().to_owned(), topic)),
                    None => state
                        .topic_by_id(wanted.topic_id)
                        .map(|(name, topic)| (name.clone(), topic)),
                };
                match found {
                    Some((name, topic)) => describe(context, &state, &name, topic),
                    None => {
                        let error = if wanted.name.is_some() {
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                        } else {
                            ErrorCode::UNKNOWN_TOPIC_ID
                        };
                        MetadataResponseTopic::default()
                            .with_error_code(error.code())
                            .with_name(wanted.name.clone())
                            .with_topic_id(wanted.topic_id)
                    }
                }
            })
            .collect()
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
    let nodes = context.shared.brokers();
    let partitions = (0..topic.partitions.len() as i32)
        .map(|index| {
            let (leader, epoch) = state.leader(name, index, brokers);
            let replicas = Context::replicas(&nodes, leader, topic.replication_factor);
            // The leader epoch is in v7+ only.
            MetadataResponsePartition::default()
                .with_partition_index(index)
                .with_leader_id(leader)
                .with_leader_epoch(if context.version >= 7 { epoch } else { -1 })
                .with_replica_nodes(replicas.clone().into())
                .with_isr_nodes(replicas.into())
        })
        .collect();
    MetadataResponseTopic::default()
        .with_name(Some(name.into()))
        .with_topic_id(topic.id)
        .with_partitions(partitions)
}
