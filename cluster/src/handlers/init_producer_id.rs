//! InitProducerId: a producer id and epoch for an idempotent producer (a fresh id each
//! time), or for a transactional one from its coordinator (the same id at the next epoch,
//! fencing the previous instance; an ongoing transaction of the id is aborted first and
//! the answer is CONCURRENT_TRANSACTIONS, which the client retries, as Kafka answers).

use super::Context;
use kafka_codec::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::InitProducerId;

use crate::transactions::MAX_TRANSACTION_TIMEOUT_MS;

pub fn handle(context: &Context<'_>, request: &InitProducerIdRequest) -> InitProducerIdResponse {
    let answer = InitProducerIdResponse::default();
    let fail = |error: ErrorCode| {
        // PRODUCER_FENCED came with v4 (KIP-588); older clients get INVALID_PRODUCER_EPOCH.
        let error = if error == ErrorCode::PRODUCER_FENCED && context.version < 4 {
            ErrorCode::INVALID_PRODUCER_EPOCH
        } else {
            error
        };
        answer
            .clone()
            .with_error_code(error.code())
            .with_producer_id(-1)
            .with_producer_epoch(-1)
    };
    let mut state = context.shared.state();
    let allocated = match request.transactional_id.as_deref() {
        // An idempotent producer: a fresh id whatever it names (v3+ ids included).
        None => state.producer_ids.allocate(),
        Some(transactional_id) => {
            if transactional_id.is_empty() {
                return fail(ErrorCode::INVALID_REQUEST);
            }
            if !context.coordinates_transaction_in(&state, transactional_id) {
                return fail(ErrorCode::NOT_COORDINATOR);
            }
            if !(1..=MAX_TRANSACTION_TIMEOUT_MS).contains(&request.transaction_timeout_ms) {
                return fail(ErrorCode::INVALID_TRANSACTION_TIMEOUT);
            }
            let current = (request.producer_id >= 0 || request.producer_epoch >= 0)
                .then_some((request.producer_id, request.producer_epoch));
            let outcome = state.init_transactional(
                transactional_id,
                request.transaction_timeout_ms,
                current,
                context.shared.placement_brokers,
            );
            match outcome {
                Ok(allocated) => allocated,
                Err(error) => {
                    drop(state);
                    // An aborted transaction's markers, for fetches waiting on them.
                    context.shared.appended.notify_waiters();
                    return fail(error);
                }
            }
        }
    };
    answer
        .with_producer_id(allocated.producer_id)
        .with_producer_epoch(allocated.epoch)
}
