//! RemoveRaftVoter (controllers only): the leader model's checks in Kafka's order (see
//! `LeaderState::handle_remove_raft_voter`), then the voter set without the voter is
//! appended and the answer waits until the high watermark passes it (or
//! `VOTER_CHANGE_TIMEOUT_MS`: REQUEST_TIMED_OUT). The leader may remove itself: once that
//! commits it resigns and the first remaining voter leads. A controller that does not lead:
//! NOT_LEADER_OR_FOLLOWER.

use super::Context;
use crate::controllers::{now_ms, wait_for_commit, VOTER_CHANGE_TIMEOUT_MS};
use kafka_codec::messages::{RemoveRaftVoterRequest, RemoveRaftVoterResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::RemoveRaftVoter;

pub async fn handle(
    context: &Context<'_>,
    request: &RemoveRaftVoterRequest,
) -> RemoveRaftVoterResponse {
    let accepted = {
        let Some(mut quorum) = context.shared.quorum() else {
            return not_leader();
        };
        let now = now_ms();
        quorum.advance(now);
        if quorum.leader().leader_id() != context.node_id {
            return not_leader();
        }
        let cluster_id = quorum.cluster_id().to_owned();
        let accepted = quorum.leader_mut().handle_remove_raft_voter(
            request,
            &cluster_id,
            now,
            VOTER_CHANGE_TIMEOUT_MS,
        );
        quorum.after_request(now);
        accepted
    };
    context.shared.quorum_moved.notify_waiters();
    let outcome = match accepted {
        Ok(pending) => wait_for_commit(context.shared, pending).await,
        Err(error) => Err(error),
    };
    match outcome {
        // Kafka leaves the message null on success.
        Ok(()) => RemoveRaftVoterResponse::default().with_error_message(None),
        Err(error) => error.to_remove_raft_voter_response(),
    }
}

fn not_leader() -> RemoveRaftVoterResponse {
    RemoveRaftVoterResponse::default()
        .with_error_code(ErrorCode::NOT_LEADER_OR_FOLLOWER.code())
        .with_error_message(Some("this controller is not the quorum leader".into()))
}
