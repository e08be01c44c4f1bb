//! RemoveRaftVoter (controllers, and brokers, which forward it to the leader, when the
//! cluster has controllers): the leader model's checks in Kafka's order (see
//! `LeaderState::handle_remove_raft_voter`), then the voter set without the voter is
//! appended and the answer waits until the high watermark passes it (or
//! `VOTER_CHANGE_TIMEOUT_MS`: REQUEST_TIMED_OUT). The leader may remove itself: once that
//! commits it resigns and the first remaining voter leads. A controller that does not lead:
//! NOT_LEADER_OR_FOLLOWER.

use super::Context;
use crate::controllers::{change_voters, VOTER_CHANGE_TIMEOUT_MS};
use kafka_codec::messages::{RemoveRaftVoterRequest, RemoveRaftVoterResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::RemoveRaftVoter;

pub async fn handle(
    context: &Context<'_>,
    request: &RemoveRaftVoterRequest,
) -> RemoveRaftVoterResponse {
    let outcome = change_voters(
        context.shared,
        context.node_id,
        |quorum, cluster_id, now| {
            quorum.leader_mut().handle_remove_raft_voter(
                request,
                cluster_id,
                now,
                VOTER_CHANGE_TIMEOUT_MS,
            )
        },
    )
    .await;
    match outcome {
        // Kafka leaves the message null on success.
        Ok(()) => RemoveRaftVoterResponse::default().with_error_message(None),
        Err(error) => error.to_remove_raft_voter_response(),
    }
}
