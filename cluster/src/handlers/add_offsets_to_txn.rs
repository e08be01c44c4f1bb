//! AddOffsetsToTxn: a group joins a transaction, so that the offsets TxnOffsetCommit then
//! sends for it commit or abort with the transaction (Kafka adds the group's
//! `__consumer_offsets` partition). Errors as AddPartitionsToTxn's.

use super::Context;
use crate::transactions::fenced_for;
use kafka_codec::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::AddOffsetsToTxn;

/// PRODUCER_FENCED from this version (KIP-588).
const FENCED_FROM: i16 = 2;

pub fn handle(context: &Context<'_>, request: &AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse {
    let error = if !context.coordinates_transaction(&request.transactional_id) {
        ErrorCode::NOT_COORDINATOR
    } else if request.group_id.is_empty() {
        ErrorCode::INVALID_GROUP_ID
    } else {
        let outcome = context.shared.state().add_to_transaction(
            &request.transactional_id,
            request.producer_id,
            request.producer_epoch,
            &[],
            &[request.group_id.to_string()],
            crate::clock::now(),
        );
        context.shared.transactions_changed.notify_one();
        outcome.err().unwrap_or(ErrorCode::NONE)
    };
    AddOffsetsToTxnResponse::default()
        .with_error_code(fenced_for(error, context.version, FENCED_FROM).code())
}
