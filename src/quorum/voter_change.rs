//! AddRaftVoter and RemoveRaftVoter as a KRaft leader answers them: the checks in Kafka's
//! order, the error code each refusal carries, and the wait for the `VotersRecord` to commit.
//!
//! A leader does not answer an accepted change at once: it appends the new voter set and
//! answers when the high watermark passes that record (or, for AddRaftVoter v1 with
//! `AckWhenCommitted = false`, right after the append), or with `REQUEST_TIMED_OUT` when its
//! request timeout (`controller.quorum.request.timeout.ms`) runs out first. The record stays
//! in the log either way. [`PendingVoterChange::poll`] tells the caller which of these holds.

use super::{Endpoints, LeaderState, QuorumError, Rejection, ReplicaKey, VoterNode, VoterSet};
use crate::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
};
use crate::ErrorCode;
use std::fmt;

/// A voter change the leader refuses: Kafka's error code and a message for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoterChangeError {
    /// The error code of the response.
    pub code: ErrorCode,
    /// The `ErrorMessage` of the response.
    pub message: String,
}

impl VoterChangeError {
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        VoterChangeError {
            code,
            message: message.into(),
        }
    }

    /// The refusal as an `AddRaftVoterResponse`.
    pub fn to_add_raft_voter_response(&self) -> AddRaftVoterResponse {
        AddRaftVoterResponse {
            error_code: self.code.code(),
            error_message: Some(self.message.as_str().into()),
            ..Default::default()
        }
    }

    /// The refusal as a `RemoveRaftVoterResponse`.
    pub fn to_remove_raft_voter_response(&self) -> RemoveRaftVoterResponse {
        RemoveRaftVoterResponse {
            error_code: self.code.code(),
            error_message: Some(self.message.as_str().into()),
            ..Default::default()
        }
    }

    /// What a rejection of [`LeaderState::check_reconfigurable`] answers.
    fn rejected(rejection: Rejection) -> Self {
        let code = match rejection {
            Rejection::StaticVoters => ErrorCode::UNSUPPORTED_VERSION,
            _ => ErrorCode::REQUEST_TIMED_OUT,
        };
        VoterChangeError::new(
            code,
            format!("the leader cannot change voters now: {rejection}"),
        )
    }

    /// The refusal for a model error met while applying an accepted change.
    fn from_quorum(error: QuorumError) -> Self {
        match error {
            QuorumError::ReconfigurationRejected(rejection) => Self::rejected(rejection),
            QuorumError::DuplicateVoter(id) => VoterChangeError::new(
                ErrorCode::DUPLICATE_VOTER,
                format!("voter id {id} is already a voter"),
            ),
            QuorumError::NotAVoter(key) => {
                VoterChangeError::new(ErrorCode::VOTER_NOT_FOUND, format!("{key} is not a voter"))
            }
            QuorumError::EmptyVoterSet => VoterChangeError::new(
                ErrorCode::VOTER_NOT_FOUND,
                "the last voter cannot be removed",
            ),
            other => VoterChangeError::new(ErrorCode::UNKNOWN_SERVER_ERROR, other.to_string()),
        }
    }
}

impl fmt::Display for VoterChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for VoterChangeError {}

/// A voter change the leader accepted and appended; its answer waits for
/// [`PendingVoterChange::poll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingVoterChange {
    offset: i64,
    deadline_ms: i64,
    ack_when_committed: bool,
}

impl PendingVoterChange {
    /// The offset of the `VotersRecord` that carries the change.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// When the leader gives up waiting for the commit and answers `REQUEST_TIMED_OUT`.
    pub fn deadline_ms(&self) -> i64 {
        self.deadline_ms
    }

    /// Whether the answer waits for the commit (always, except AddRaftVoter v1 with
    /// `AckWhenCommitted = false`).
    pub fn ack_when_committed(&self) -> bool {
        self.ack_when_committed
    }

    /// The answer, once there is one: `Some(Ok(()))` when the record is committed (the high
    /// watermark is past it) or the request did not ask to wait, `Some(Err(..))` with
    /// `REQUEST_TIMED_OUT` once `now_ms` reaches the deadline first, `None` while waiting.
    pub fn poll(&self, leader: &LeaderState, now_ms: i64) -> Option<Result<(), VoterChangeError>> {
        let committed = leader.high_watermark().is_some_and(|hw| hw > self.offset);
        if committed || !self.ack_when_committed {
            Some(Ok(()))
        } else if now_ms >= self.deadline_ms {
            Some(Err(VoterChangeError::new(
                ErrorCode::REQUEST_TIMED_OUT,
                format!(
                    "the voter change at offset {} was not committed in time (high watermark {})",
                    self.offset,
                    leader.high_watermark().unwrap_or(-1)
                ),
            )))
        } else {
            None
        }
    }
}

/// What the new voter answered to the leader's ApiVersions request, which Kafka's leader
/// sends to the address the AddRaftVoter request names before it adds the voter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewVoterProbe {
    /// It answered, supporting this `kraft.version` range (min, max).
    Supports(i16, i16),
    /// It answered without a `kraft.version` feature (a node that cannot be a dynamic voter).
    NoKRaftVersion,
    /// It did not answer (unreachable, or an error).
    NoAnswer,
}

impl LeaderState {
    /// Answers a RemoveRaftVoter request the way Kafka's leader does, in its order: a
    /// `ClusterId` that is given must be `cluster_id` (`INCONSISTENT_CLUSTER_ID`); the voter
    /// needs an id ≥ 0 and a directory id (`INVALID_REQUEST`); the leader must be able to
    /// change voters ([`LeaderState::check_reconfigurable`]: `REQUEST_TIMED_OUT`, or
    /// `UNSUPPORTED_VERSION` for static voters); the key must be a voter and not the last one
    /// (`VOTER_NOT_FOUND`). Then the new voter set is appended and the returned change is
    /// answered when [`PendingVoterChange::poll`] says so, at the latest at
    /// `now_ms + timeout_ms`. The leader may remove itself: it then resigns once the change
    /// commits ([`LeaderState::must_resign`]).
    pub fn handle_remove_raft_voter(
        &mut self,
        request: &RemoveRaftVoterRequest,
        cluster_id: &str,
        now_ms: i64,
        timeout_ms: i64,
    ) -> Result<PendingVoterChange, VoterChangeError> {
        check_cluster_id(request.cluster_id.as_deref(), cluster_id)?;
        let key = voter_key(request.voter_id, request.voter_directory_id, "remove")?;
        self.check_reconfigurable()
            .map_err(VoterChangeError::from_quorum)?;
        let voters = kafka_voter_keys(self.current_voter_set());
        let offset = self.remove_voter(&key).map_err(|error| match error {
            // Kafka 4.4's wording (recorded: cluster/tests/data/combined-quorum-kafka-4.4.txt).
            QuorumError::NotAVoter(key) => VoterChangeError::new(
                ErrorCode::VOTER_NOT_FOUND,
                format!(
                    "Cannot remove voter {} from the set of voters {voters}",
                    kafka_key(&key)
                ),
            ),
            other => VoterChangeError::from_quorum(other),
        })?;
        Ok(PendingVoterChange {
            offset,
            deadline_ms: now_ms.saturating_add(timeout_ms),
            ack_when_committed: true,
        })
    }

    /// Answers an AddRaftVoter request the way Kafka's leader does, in its order: the
    /// cluster id and voter key as for [`LeaderState::handle_remove_raft_voter`]; the
    /// listeners must include `listener`, the one the request came in on
    /// (`INVALID_REQUEST`); the leader must be able to change voters; the id must not be a
    /// voter already (`DUPLICATE_VOTER`); the new voter must have answered the leader's
    /// ApiVersions (`probe`; `REQUEST_TIMED_OUT` if not) with a `kraft.version` range that
    /// holds the current one (`INVALID_REQUEST`); and it must be a caught-up observer
    /// ([`LeaderState::is_replica_caught_up`]; `REQUEST_TIMED_OUT`). Then the voter set with
    /// the new voter (its listeners from the request, its range from the probe) is appended.
    pub fn handle_add_raft_voter(
        &mut self,
        request: &AddRaftVoterRequest,
        cluster_id: &str,
        listener: &str,
        probe: NewVoterProbe,
        now_ms: i64,
        timeout_ms: i64,
    ) -> Result<PendingVoterChange, VoterChangeError> {
        check_cluster_id(request.cluster_id.as_deref(), cluster_id)?;
        let key = voter_key(request.voter_id, request.voter_directory_id, "add")?;
        let listeners = Endpoints::from_add_raft_voter(&request.listeners);
        if listeners.address(listener).is_none() {
            // Kafka 4.4's wording, its listener map printed as Java prints it.
            let given: Vec<String> = (listeners.iter())
                .map(|(name, address)| {
                    format!(
                        "ListenerName({name})={}/<unresolved>:{}",
                        address.host, address.port
                    )
                })
                .collect();
            return Err(VoterChangeError::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Add voter request didn't include the endpoint (Endpoints(endpoints={{{}}})) \
                     for the default listener ListenerName({listener})",
                    given.join(", ")
                ),
            ));
        }
        self.check_reconfigurable()
            .map_err(VoterChangeError::from_quorum)?;
        if self.current_voter_set().node(key.id()).is_some() {
            return Err(VoterChangeError::new(
                ErrorCode::DUPLICATE_VOTER,
                format!(
                    "The voter id for {} is already part of the set of voters {}.",
                    kafka_key(&key),
                    kafka_voter_keys(self.current_voter_set())
                ),
            ));
        }
        let kraft_version = self.log().kraft_version();
        let supported = match probe {
            NewVoterProbe::Supports(min, max) if (min..=max).contains(&kraft_version) => (min, max),
            NewVoterProbe::Supports(min, max) => {
                return Err(VoterChangeError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "{key} supports kraft.version {min}-{max}, not the finalized \
                         {kraft_version}"
                    ),
                ))
            }
            NewVoterProbe::NoKRaftVersion => {
                return Err(VoterChangeError::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("{key} does not support kraft.version {kraft_version}"),
                ))
            }
            NewVoterProbe::NoAnswer => {
                // Kafka 4.4's answer when its first ApiVersions to the new voter finds
                // nobody there (a retry within the connection backoff says "New voter
                // ReplicaKey(..) is not ready to receive requests" instead).
                return Err(VoterChangeError::new(
                    ErrorCode::REQUEST_TIMED_OUT,
                    "Aborted add voter operation for since API_VERSIONS returned an error \
                     BROKER_NOT_AVAILABLE",
                ));
            }
        };
        if !self.is_replica_caught_up(&key, now_ms) {
            return Err(VoterChangeError::new(
                ErrorCode::REQUEST_TIMED_OUT,
                format!("{key} is not a caught-up observer"),
            ));
        }
        let offset = self
            .add_voter(VoterNode::new(key, listeners, supported))
            .map_err(VoterChangeError::from_quorum)?;
        Ok(PendingVoterChange {
            offset,
            deadline_ms: now_ms.saturating_add(timeout_ms),
            ack_when_committed: request.ack_when_committed,
        })
    }
}

/// `key` as Kafka prints a `ReplicaKey` in its messages.
fn kafka_key(key: &ReplicaKey) -> String {
    match key.directory_id() {
        Some(directory) => format!("ReplicaKey(id={}, directoryId={directory})", key.id()),
        None => format!("ReplicaKey(id={}, directoryId=<undefined>)", key.id()),
    }
}

/// The keys of `voters` as Kafka prints a set of them (here in node id order).
fn kafka_voter_keys(voters: &VoterSet) -> String {
    let keys: Vec<String> = voters.voter_keys().iter().map(kafka_key).collect();
    format!("[{}]", keys.join(", "))
}

/// A `ClusterId` left null is not checked; a given one must match.
fn check_cluster_id(given: Option<&str>, cluster_id: &str) -> Result<(), VoterChangeError> {
    match given {
        Some(given) if given != cluster_id => Err(VoterChangeError::new(
            ErrorCode::INCONSISTENT_CLUSTER_ID,
            format!("The given id \"{given}\" doesn't match the cluster id \"{cluster_id}\""),
        )),
        _ => Ok(()),
    }
}

/// The voter a request names: an id ≥ 0 and a directory id are required.
fn voter_key(
    id: i32,
    directory_id: crate::Uuid,
    what: &str,
) -> Result<ReplicaKey, VoterChangeError> {
    let key = ReplicaKey::from_wire(id, directory_id);
    if id < 0 || key.directory_id().is_none() {
        return Err(VoterChangeError::new(
            ErrorCode::INVALID_REQUEST,
            format!("a request to {what} a voter needs its id (≥ 0) and directory id"),
        ));
    }
    Ok(key)
}
