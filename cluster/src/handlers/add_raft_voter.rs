//! AddRaftVoter (controllers, and brokers, which forward it to the leader, when the cluster
//! has controllers): the leader model's checks in Kafka's order (see
//! `LeaderState::handle_add_raft_voter`), the new voter probed as Kafka's leader probes it
//! (a controller of this cluster with exactly that id and directory id answers), then the
//! new voter set is appended and the answer waits until the high watermark passes it (or
//! `VOTER_CHANGE_TIMEOUT_MS`: REQUEST_TIMED_OUT); v1's `AckWhenCommitted = false` is
//! answered at once. A controller that does not lead: NOT_LEADER_OR_FOLLOWER.

use super::Context;
use crate::controllers::{change_voters, VOTER_CHANGE_TIMEOUT_MS};
use crate::quorum::LISTENER;
use kafka_codec::messages::{AddRaftVoterRequest, AddRaftVoterResponse};
use kafka_codec::quorum::ReplicaKey;
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::AddRaftVoter;

pub async fn handle(context: &Context<'_>, request: &AddRaftVoterRequest) -> AddRaftVoterResponse {
    let outcome = change_voters(
        context.shared,
        context.node_id,
        |quorum, cluster_id, now| {
            let key = ReplicaKey::from_wire(request.voter_id, request.voter_directory_id);
            let probe = quorum.probe(&key);
            quorum.leader_mut().handle_add_raft_voter(
                request,
                cluster_id,
                LISTENER,
                probe,
                now,
                VOTER_CHANGE_TIMEOUT_MS,
            )
        },
    )
    .await;
    match outcome {
        // Kafka leaves the message null on success.
        Ok(()) => AddRaftVoterResponse::default().with_error_message(None),
        Err(error) => error.to_add_raft_voter_response(),
    }
}
