//! AddRaftVoter (controllers only): the leader model's checks in Kafka's order (see
//! `LeaderState::handle_add_raft_voter`), the new voter probed as Kafka's leader probes it
//! (a controller of this cluster with exactly that id and directory id answers), then the
//! new voter set is appended and the answer waits until the high watermark passes it (or
//! `VOTER_CHANGE_TIMEOUT_MS`: REQUEST_TIMED_OUT); v1's `AckWhenCommitted = false` is
//! answered at once. A controller that does not lead: NOT_LEADER_OR_FOLLOWER.

use super::Context;
use crate::controllers::{now_ms, wait_for_commit, VOTER_CHANGE_TIMEOUT_MS};
use crate::quorum::LISTENER;
use kafka_codec::messages::{AddRaftVoterRequest, AddRaftVoterResponse};
use kafka_codec::quorum::ReplicaKey;
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::AddRaftVoter;

pub async fn handle(context: &Context<'_>, request: &AddRaftVoterRequest) -> AddRaftVoterResponse {
    let accepted = {
        let Some(mut quorum) = context.shared.quorum() else {
            return not_leader();
        };
        let now = now_ms();
        quorum.advance(now);
        if quorum.leader().leader_id() != context.node_id {
            return not_leader();
        }
        let key = ReplicaKey::from_wire(request.voter_id, request.voter_directory_id);
        let probe = quorum.probe(&key);
        let cluster_id = quorum.cluster_id().to_owned();
        let accepted = quorum.leader_mut().handle_add_raft_voter(
            request,
            &cluster_id,
            LISTENER,
            probe,
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
        Ok(()) => AddRaftVoterResponse::default().with_error_message(None),
        Err(error) => error.to_add_raft_voter_response(),
    }
}

fn not_leader() -> AddRaftVoterResponse {
    AddRaftVoterResponse::default()
        .with_error_code(ErrorCode::NOT_LEADER_OR_FOLLOWER.code())
        .with_error_message(Some("this controller is not the quorum leader".into()))
}
