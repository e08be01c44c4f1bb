//! DescribeProducers: the producers that wrote to each partition (this broker must lead
//! it: NOT_LEADER_OR_FOLLOWER otherwise; UNKNOWN_TOPIC_OR_PARTITION for one that does not
//! exist), with their epoch, last sequence and timestamp, the coordinator epoch of their
//! last marker and the first offset of their open transaction there (-1: none).

use super::Context;
use kafka_codec::messages::describe_producers_response::{
    PartitionResponse, ProducerState, TopicResponse,
};
use kafka_codec::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeProducers;

pub fn handle(
    context: &Context<'_>,
    request: &DescribeProducersRequest,
) -> DescribeProducersResponse {
    let state = context.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let found = state.topics.get(topic.name.as_str());
            let partitions = topic
                .partition_indexes
                .iter()
                .map(|index| {
                    let answer = PartitionResponse::default().with_partition_index(index);
                    let log = found.and_then(|topic| topic.partition(index));
                    let Some(log) = log else {
                        return answer
                            .with_error_code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code());
                    };
                    let (leader, _) =
                        state.leader(&topic.name, index, context.shared.placement_brokers);
                    if leader != context.node_id {
                        return answer.with_error_code(ErrorCode::NOT_LEADER_OR_FOLLOWER.code());
                    }
                    let producers = log
                        .producers
                        .active()
                        .into_iter()
                        .map(|producer| {
                            ProducerState::default()
                                .with_producer_id(producer.producer_id)
                                .with_producer_epoch(i32::from(producer.epoch))
                                .with_last_sequence(producer.last_sequence)
                                .with_last_timestamp(producer.last_timestamp)
                                .with_coordinator_epoch(producer.coordinator_epoch)
                                .with_current_txn_start_offset(
                                    log.txns.open_since(producer.producer_id).unwrap_or(-1),
                                )
                        })
                        .collect();
                    answer.with_active_producers(producers)
                })
                .collect();
            TopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions)
        })
        .collect();
    DescribeProducersResponse::default().with_topics(topics)
}
