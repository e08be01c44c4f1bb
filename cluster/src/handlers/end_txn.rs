//! EndTxn: commits or aborts a transaction, writing a COMMIT or ABORT marker to each of
//! its partitions and handing the offsets it committed to the group coordinator (see
//! [`crate::transactions`]). v5+ is transaction version 2: the epoch is bumped and the
//! answer names the producer id and epoch to go on with.

use super::Context;
use crate::transactions::fenced_for;
use kafka_codec::messages::{EndTxnRequest, EndTxnResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::EndTxn;

/// PRODUCER_FENCED from this version (KIP-588).
const FENCED_FROM: i16 = 2;

/// Transaction version 2 from this version (KIP-890).
const BUMPS_FROM: i16 = 5;

pub fn handle(context: &Context<'_>, request: &EndTxnRequest) -> EndTxnResponse {
    let fail = |error: ErrorCode| {
        EndTxnResponse::default()
            .with_error_code(fenced_for(error, context.version, FENCED_FROM).code())
            .with_producer_id(-1)
            .with_producer_epoch(-1)
    };
    if !context.coordinates_transaction(&request.transactional_id) {
        return fail(ErrorCode::NOT_COORDINATOR);
    }
    let outcome = context.shared.state().end_txn(
        &request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        request.committed,
        context.version >= BUMPS_FROM,
        context.shared.placement_brokers,
    );
    let (allocated, ended) = match outcome {
        Ok(done) => done,
        Err(error) => return fail(error),
    };
    context.shared.appended.notify_waiters();
    if !ended.offsets.is_empty() {
        let mut groups = context.shared.groups();
        for (group, topic, partition, committed) in ended.offsets {
            // Past the groups' caps the offset is lost, as a commit past them would be
            // refused; the transaction itself has committed.
            groups.commit_transactional(&group, &topic, partition, committed);
        }
    }
    EndTxnResponse::default()
        .with_producer_id(allocated.producer_id)
        .with_producer_epoch(allocated.epoch)
}
