//! AddRaftVoter and RemoveRaftVoter through the leader model: each refusal in Kafka's order
//! with its error code, and an accepted change answered only once its `VotersRecord`
//! commits (or times out, or at once for AddRaftVoter v1 without `AckWhenCommitted`).

use crate::common::*;
use kafka_codec::messages::add_raft_voter_request::{AddRaftVoterRequest, Listener};
use kafka_codec::messages::RemoveRaftVoterRequest;
use kafka_codec::quorum::{
    ControlRecordStateMachine, LeaderState, NewVoterProbe, PendingVoterChange, ReplicaKey,
    VoterChangeError,
};
use kafka_codec::ErrorCode;
use kafka_codec::Uuid;

const CLUSTER: &str = "c0d3c0d3c0d3c0d3c0d3cA";
const TIMEOUT: i64 = 10_000;

fn remove(id: i32, directory: Uuid) -> RemoveRaftVoterRequest {
    RemoveRaftVoterRequest::default()
        .with_cluster_id(None)
        .with_voter_id(id)
        .with_voter_directory_id(directory)
}

fn add(id: i32, directory: Uuid) -> AddRaftVoterRequest {
    AddRaftVoterRequest::default()
        .with_cluster_id(None)
        .with_timeout_ms(30_000)
        .with_voter_id(id)
        .with_voter_directory_id(directory)
        .with_listeners(vec![Listener::default()
            .with_name("CONTROLLER".into())
            .with_host(format!("c{id}").into())
            .with_port(9093)])
}

/// Leader 1 of {1, 2, 3} with the bootstrap set committed (HW 3) and controller 4 caught
/// up as an observer.
fn committed_leader() -> LeaderState {
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    leader.update_replica_state(key(2), T0 + 100, 3).unwrap();
    leader.update_replica_state(key(4), T0 + 100, 3).unwrap();
    assert_eq!(leader.high_watermark(), Some(3));
    leader
}

fn code(result: Result<PendingVoterChange, VoterChangeError>) -> ErrorCode {
    result.expect_err("refused").code
}

fn remove_now(leader: &mut LeaderState, request: &RemoveRaftVoterRequest) -> ErrorCode {
    code(leader.handle_remove_raft_voter(request, CLUSTER, T0 + 200, TIMEOUT))
}

fn add_now(
    leader: &mut LeaderState,
    request: &AddRaftVoterRequest,
    probe: NewVoterProbe,
) -> ErrorCode {
    code(leader.handle_add_raft_voter(request, CLUSTER, "CONTROLLER", probe, T0 + 200, TIMEOUT))
}

#[test]
fn remove_is_answered_once_the_record_commits() {
    let mut leader = committed_leader();
    let pending = leader
        .handle_remove_raft_voter(&remove(3, dir(3)), CLUSTER, T0 + 200, TIMEOUT)
        .unwrap();
    assert_eq!(pending.offset(), 3);
    assert_eq!(pending.deadline_ms(), T0 + 200 + TIMEOUT);
    assert_eq!(leader.current_voter_set(), &voters(&[1, 2]));
    // Appended, current, not committed: no answer yet.
    assert_eq!(pending.poll(&leader, T0 + 300), None);
    // A second change waits for the first.
    assert_eq!(
        remove_now(&mut leader, &remove(2, dir(2))),
        ErrorCode::REQUEST_TIMED_OUT
    );
    // Voter 2 reaches offset 3: HW 3 is not past the record at 3 yet.
    leader.update_replica_state(key(2), T0 + 400, 3).unwrap();
    assert_eq!(pending.poll(&leader, T0 + 400), None);
    leader.update_replica_state(key(2), T0 + 500, 4).unwrap();
    assert_eq!(leader.high_watermark(), Some(4));
    assert_eq!(pending.poll(&leader, T0 + 500), Some(Ok(())));
}

#[test]
fn an_uncommitted_change_times_out_but_stays_in_the_log() {
    let mut leader = committed_leader();
    let pending = leader
        .handle_remove_raft_voter(&remove(3, dir(3)), CLUSTER, T0 + 200, TIMEOUT)
        .unwrap();
    assert_eq!(pending.poll(&leader, T0 + 200 + TIMEOUT - 1), None);
    let timed_out = pending
        .poll(&leader, T0 + 200 + TIMEOUT)
        .unwrap()
        .unwrap_err();
    assert_eq!(timed_out.code, ErrorCode::REQUEST_TIMED_OUT);
    let response = timed_out.to_remove_raft_voter_response();
    assert_eq!(response.error_code, ErrorCode::REQUEST_TIMED_OUT.code());
    assert!(response.error_message.is_some());
    assert_eq!(leader.current_voter_set(), &voters(&[1, 2]));
}

#[test]
fn remove_refusals_come_in_kafkas_order() {
    // A cluster id that is given must match (checked first, even with no high watermark).
    let mut fresh = bootstrapped_leader(&[1, 2, 3], 1, 5);
    let mut request = remove(3, dir(3));
    request.cluster_id = Some("someone-else".into());
    assert_eq!(
        remove_now(&mut fresh, &request),
        ErrorCode::INCONSISTENT_CLUSTER_ID
    );
    request.cluster_id = Some(CLUSTER.into());
    // Then the key: a directory id is required.
    assert_eq!(
        remove_now(&mut fresh, &remove(3, Uuid::ZERO)),
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        remove_now(&mut fresh, &remove(-1, dir(3))),
        ErrorCode::INVALID_REQUEST
    );
    // Then the leader's state: no high watermark yet.
    assert_eq!(
        remove_now(&mut fresh, &request),
        ErrorCode::REQUEST_TIMED_OUT
    );

    // Static voters (kraft.version 0) cannot change.
    let log = ControlRecordStateMachine::new(Some(static_voters(&[1, 2, 3])));
    let mut static_leader = LeaderState::new(
        kafka_codec::quorum::LocalReplica {
            key: ReplicaKey::without_directory(1),
            ..local(1)
        },
        2,
        log,
    )
    .unwrap();
    static_leader.update_replica_state(key(2), T0, 1).unwrap();
    assert!(static_leader.high_watermark().is_some());
    assert_eq!(
        remove_now(&mut static_leader, &remove(3, dir(3))),
        ErrorCode::UNSUPPORTED_VERSION
    );

    // Then the voter: an exact key of the current set.
    let mut leader = committed_leader();
    assert_eq!(
        remove_now(&mut leader, &remove(3, Uuid::from_bytes([0x33; 16]))),
        ErrorCode::VOTER_NOT_FOUND
    );
    assert_eq!(
        remove_now(&mut leader, &remove(9, dir(9))),
        ErrorCode::VOTER_NOT_FOUND
    );
    // A matching cluster id is fine.
    assert!(leader
        .handle_remove_raft_voter(&request, CLUSTER, T0 + 200, TIMEOUT)
        .is_ok());
}

#[test]
fn add_needs_a_caught_up_controller_that_answers() {
    let mut leader = committed_leader();
    let supports = NewVoterProbe::Supports(0, 1);
    // The new voter must be reachable on the listener the request came in on.
    let mut other_listener = add(4, dir(4));
    other_listener.listeners[0].name = "OTHER".into();
    assert_eq!(
        add_now(&mut leader, &other_listener, supports),
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        add_now(&mut leader, &add(2, dir(2)), supports),
        ErrorCode::DUPLICATE_VOTER
    );
    assert_eq!(
        add_now(&mut leader, &add(4, dir(4)), NewVoterProbe::NoAnswer),
        ErrorCode::REQUEST_TIMED_OUT
    );
    assert_eq!(
        add_now(&mut leader, &add(4, dir(4)), NewVoterProbe::Supports(0, 0)),
        ErrorCode::INVALID_REQUEST
    );
    assert_eq!(
        add_now(&mut leader, &add(4, dir(4)), NewVoterProbe::NoKRaftVersion),
        ErrorCode::INVALID_REQUEST
    );
    // Controller 5 never fetched: not a caught-up observer.
    assert!(!leader.is_replica_caught_up(&key(5), T0 + 200));
    assert_eq!(
        add_now(&mut leader, &add(5, dir(5)), supports),
        ErrorCode::REQUEST_TIMED_OUT
    );
    // Nor is an observer last seen more than an hour ago.
    assert!(!leader.is_replica_caught_up(&key(4), T0 + 100 + 3_600_000));

    let pending = leader
        .handle_add_raft_voter(
            &add(4, dir(4)),
            CLUSTER,
            "controller",
            supports,
            T0 + 200,
            TIMEOUT,
        )
        .unwrap();
    assert!(pending.ack_when_committed());
    assert_eq!(leader.current_voter_set(), &voters(&[1, 2, 3, 4]));
    assert_eq!(pending.poll(&leader, T0 + 300), None);
    leader.update_replica_state(key(2), T0 + 400, 4).unwrap();
    leader.update_replica_state(key(4), T0 + 400, 4).unwrap();
    assert_eq!(leader.high_watermark(), Some(4));
    assert_eq!(pending.poll(&leader, T0 + 400), Some(Ok(())));
}

#[test]
fn add_without_ack_when_committed_is_answered_at_append() {
    let mut leader = committed_leader();
    let mut request = add(4, dir(4));
    request.ack_when_committed = false;
    let pending = leader
        .handle_add_raft_voter(
            &request,
            CLUSTER,
            "CONTROLLER",
            NewVoterProbe::Supports(0, 1),
            T0 + 200,
            TIMEOUT,
        )
        .unwrap();
    assert!(!pending.ack_when_committed());
    assert_eq!(pending.poll(&leader, T0 + 200), Some(Ok(())));
    assert_eq!(leader.committed_voter_set(), Some(&voters(&[1, 2, 3])));
}
