//! InitProducerId: a producer id and epoch for an idempotent producer (a fresh id each
//! time), or for a transactional one (the same id at the next epoch, fencing the previous
//! instance). Transactions themselves (AddPartitionsToTxn, EndTxn, markers) are not served
//! yet; see the README.

use super::Context;
use kafka_codec::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::InitProducerId;

/// Kafka's `transaction.max.timeout.ms` default (15 minutes): a longer transaction timeout is
/// refused.
const MAX_TRANSACTION_TIMEOUT_MS: i32 = 15 * 60 * 1000;

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
            if !(1..=MAX_TRANSACTION_TIMEOUT_MS).contains(&request.transaction_timeout_ms) {
                return fail(ErrorCode::INVALID_TRANSACTION_TIMEOUT);
            }
            let current = (request.producer_id >= 0 || request.producer_epoch >= 0)
                .then_some((request.producer_id, request.producer_epoch));
            match state
                .producer_ids
                .allocate_transactional(transactional_id, current)
            {
                Ok(allocated) => allocated,
                Err(error) => return fail(error),
            }
        }
    };
    answer
        .with_producer_id(allocated.producer_id)
        .with_producer_epoch(allocated.epoch)
}
