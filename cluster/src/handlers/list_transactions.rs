//! ListTransactions: the transactions this broker coordinates (clients ask every broker),
//! filtered by state (a name Kafka does not know is listed back in
//! `unknown_state_filters` and filters nothing), producer id, how long they have run
//! (v1+: at least `duration_filter` ms) and transactional id pattern (v2+: a regular
//! expression the whole id matches; an invalid one is INVALID_REGULAR_EXPRESSION).
//! `Dead` transactions are never listed, as Kafka leaves them out.

use super::Context;
use crate::transactions::{now_ms, TxnState};
use kafka_codec::messages::list_transactions_response::TransactionState;
use kafka_codec::messages::{ListTransactionsRequest, ListTransactionsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ListTransactions;

pub fn handle(
    context: &Context<'_>,
    request: &ListTransactionsRequest,
) -> ListTransactionsResponse {
    let mut states = Vec::new();
    let mut unknown = Vec::new();
    for name in &request.state_filters {
        match TxnState::from_name(name) {
            Some(state) => states.push(state),
            None => unknown.push(name.clone()),
        }
    }
    let pattern = match request.transactional_id_pattern.as_deref() {
        Some(pattern) if context.version >= 2 && !pattern.is_empty() => {
            match regex::Regex::new(&format!("^(?:{pattern})$")) {
                Ok(pattern) => Some(pattern),
                Err(_) => {
                    return ListTransactionsResponse::default()
                        .with_error_code(ErrorCode::INVALID_REGULAR_EXPRESSION.code())
                }
            }
        }
        _ => None,
    };
    let producers: Vec<i64> = request.producer_id_filters.iter().collect();
    let duration = if context.version >= 1 {
        request.duration_filter
    } else {
        -1
    };
    let now = now_ms();
    let state = context.shared.state();
    let listed = state
        .transactions
        .by_id
        .iter()
        .filter(|(id, txn)| {
            txn.state != TxnState::Dead
                && context.coordinates_transaction_in(&state, id)
                && (states.is_empty() || states.contains(&txn.state))
                && (producers.is_empty() || producers.contains(&txn.producer_id))
                && (duration < 0 || now - txn.started.map_or(-1, |(_, at)| at) >= duration)
                && pattern.as_ref().is_none_or(|pattern| pattern.is_match(id))
        })
        .map(|(id, txn)| {
            TransactionState::default()
                .with_transactional_id(id.as_str().into())
                .with_producer_id(txn.producer_id)
                .with_transaction_state(txn.state.name().into())
        })
        .collect();
    ListTransactionsResponse::default()
        .with_unknown_state_filters(unknown)
        .with_transaction_states(listed)
}
