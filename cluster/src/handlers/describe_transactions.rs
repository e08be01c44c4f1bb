//! DescribeTransactions: each transactional id's state, timeout, start time, producer id
//! and epoch and partitions, from its coordinator (NOT_COORDINATOR from the others); an
//! unknown id is TRANSACTIONAL_ID_NOT_FOUND.

use super::Context;
use kafka_codec::messages::describe_transactions_response::{TopicData, TransactionState};
use kafka_codec::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::DescribeTransactions;

pub fn handle(
    context: &Context<'_>,
    request: &DescribeTransactionsRequest,
) -> DescribeTransactionsResponse {
    let state = context.shared.state();
    let states = request
        .transactional_ids
        .iter()
        .map(|id| {
            let answer = TransactionState::default()
                .with_transactional_id(id.clone())
                .with_producer_id(-1)
                .with_producer_epoch(-1)
                .with_transaction_start_time_ms(-1);
            if !context.coordinates_transaction_in(&state, id) {
                return answer.with_error_code(ErrorCode::NOT_COORDINATOR.code());
            }
            let (Some(txn), Some((producer_id, epoch))) = (
                state.transactions.by_id.get(id.as_str()),
                state.producer_ids.transactional(id),
            ) else {
                return answer.with_error_code(ErrorCode::TRANSACTIONAL_ID_NOT_FOUND.code());
            };
            let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
            for (topic, partition) in &txn.partitions {
                topics.entry(topic).or_default().push(*partition);
            }
            let topics = topics
                .into_iter()
                .map(|(topic, partitions)| {
                    TopicData::default()
                        .with_topic(topic.into())
                        .with_partitions(partitions.into())
                })
                .collect();
            answer
                .with_transaction_state(txn.state.name().into())
                .with_transaction_timeout_ms(txn.timeout_ms)
                .with_transaction_start_time_ms(txn.start_time_ms)
                .with_producer_id(producer_id)
                .with_producer_epoch(epoch)
                .with_topics(topics)
        })
        .collect();
    DescribeTransactionsResponse::default().with_transaction_states(states)
}
