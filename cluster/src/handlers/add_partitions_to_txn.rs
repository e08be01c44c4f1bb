//! AddPartitionsToTxn: partitions join a transaction (see [`crate::transactions`]). v0-v3
//! are a producer's (one transaction); v4+ a broker's batch of transactions, each either
//! added or, with `verify_only`, checked (NONE for a partition in the ongoing transaction,
//! TRANSACTION_ABORTABLE for one that is not), as Kafka's partition verification asks.
//! Unknown partitions are UNKNOWN_TOPIC_OR_PARTITION and the others of the request
//! OPERATION_NOT_ATTEMPTED; a producer id or epoch not the transaction's is
//! INVALID_PRODUCER_ID_MAPPING or PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2).

use super::Context;
use crate::transactions::fenced_for;
use kafka_codec::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_codec::messages::add_partitions_to_txn_response::{
    AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
};
use kafka_codec::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::AddPartitionsToTxn;

/// PRODUCER_FENCED from this version (KIP-588).
const FENCED_FROM: i16 = 2;

pub fn handle(
    context: &Context<'_>,
    request: &AddPartitionsToTxnRequest,
) -> AddPartitionsToTxnResponse {
    if context.version < 4 {
        let results = add(
            context,
            &request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            false,
            &request.v3_and_below_topics,
        );
        return AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(results);
    }
    let results = request
        .transactions
        .iter()
        .map(|txn| {
            AddPartitionsToTxnResult::default()
                .with_transactional_id(txn.transactional_id.clone())
                .with_topic_results(add(
                    context,
                    &txn.transactional_id,
                    txn.producer_id,
                    txn.producer_epoch,
                    txn.verify_only,
                    &txn.topics,
                ))
        })
        .collect();
    AddPartitionsToTxnResponse::default().with_results_by_transaction(results)
}

/// One transaction's topics, added or verified; each partition's error.
fn add(
    context: &Context<'_>,
    transactional_id: &str,
    producer_id: i64,
    epoch: i16,
    verify_only: bool,
    topics: &[AddPartitionsToTxnTopic],
) -> Vec<AddPartitionsToTxnTopicResult> {
    let wanted: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|topic| {
            topic
                .partitions
                .iter()
                .map(move |index| (topic.name.to_string(), index))
        })
        .collect();
    let mut state = context.shared.state();
    let unknown: Vec<bool> = wanted
        .iter()
        .map(|(topic, index)| {
            state
                .topics
                .get(topic)
                .is_none_or(|t| t.partition(*index).is_none())
        })
        .collect();
    let errors: Vec<ErrorCode> = if !context.coordinates_transaction_in(&state, transactional_id) {
        vec![ErrorCode::NOT_COORDINATOR; wanted.len()]
    } else if unknown.iter().any(|u| *u) {
        unknown
            .iter()
            .map(|&u| {
                if u {
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                } else {
                    ErrorCode::OPERATION_NOT_ATTEMPTED
                }
            })
            .collect()
    } else if verify_only {
        wanted
            .iter()
            .map(|(topic, index)| {
                let owner = state.producer_ids.transactional(transactional_id);
                if owner.is_none_or(|(id, _)| id != producer_id) {
                    ErrorCode::INVALID_PRODUCER_ID_MAPPING
                } else if owner.is_some_and(|(_, current)| current != epoch) {
                    ErrorCode::INVALID_PRODUCER_EPOCH
                } else if state.in_transaction(transactional_id, Some((topic, *index)), None) {
                    ErrorCode::NONE
                } else {
                    // As Kafka 4.4 answers (compared in tests/transactions.rs).
                    ErrorCode::TRANSACTION_ABORTABLE
                }
            })
            .collect()
    } else {
        let outcome = state.add_to_transaction(
            transactional_id,
            producer_id,
            epoch,
            &wanted,
            &[],
            crate::clock::now(),
        );
        let error = outcome.err().unwrap_or(ErrorCode::NONE);
        vec![fenced_for(error, context.version, FENCED_FROM); wanted.len()]
    };
    drop(state);
    context.shared.transactions_changed.notify_one();
    let mut errors = errors.into_iter();
    topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|index| {
                    AddPartitionsToTxnPartitionResult::default()
                        .with_partition_index(index)
                        .with_partition_error_code(errors.next().unwrap_or_default().code())
                })
                .collect();
            AddPartitionsToTxnTopicResult::default()
                .with_name(topic.name.clone())
                .with_results_by_partition(partitions)
        })
        .collect()
}
