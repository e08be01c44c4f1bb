//! One scenario per edge case of the committed voter set (design notes §7), plus the
//! worked log of §6.1 in both variants. Each step asserts the leader's full DescribeQuorum v3
//! response; `assert_describe` also checks the v0–v2 answers and round trips.

use crate::common::*;
use kafka_codec::messages::describe_quorum_request::{self, DescribeQuorumRequest};
use kafka_codec::messages::describe_quorum_response::{PartitionData, TopicData};
use kafka_codec::messages::DescribeQuorumResponse;
use kafka_codec::quorum::{
    not_leader_response, CommittedVoterSource, ControlRecordStateMachine, Endpoints, LeaderState,
    LocalReplica, LogRecord, QuorumError, ReplicaKey, VoterNode, VoterSet,
};
use kafka_codec::{Message, Uuid};

/// Leader 1 of {1, 2, 3}, epoch 5, with voter 2 (and, if asked, 3) caught up at offset 3 at
/// `T0 + 100`, so the high watermark is 3 and the bootstrap voters are committed.
fn three_voters_committed(with_three: bool) -> LeaderState {
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    assert!(leader.update_replica_state(key(2), T0 + 100, 3).unwrap());
    if with_three {
        leader.update_replica_state(key(3), T0 + 100, 3).unwrap();
    }
    assert_eq!(leader.high_watermark(), Some(3));
    leader
}

// ---------------------------------------------------------------------------------------
// §7 case 1: no high watermark yet.

#[test]
fn case_01_no_high_watermark_means_null_committed_voters() {
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    assert_describe(
        &mut leader,
        T0,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: -1,
            current: vec![live(1, 3, T0, T0), sentinel(2), sentinel(3)],
            committed: None,
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );

    // Voter 2 fetches from 0: the LeaderChange at offset 0 is on two of three voters only
    // once 2 reaches offset 1, and the rule asks for more than the epoch start offset (0).
    assert!(!leader.update_replica_state(key(2), T0 + 100, 0).unwrap());
    assert_eq!(leader.high_watermark(), None);
    assert_describe(
        &mut leader,
        T0 + 150,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: -1,
            current: vec![
                live(1, 3, T0 + 150, T0 + 150),
                live(2, 0, T0 + 100, -1),
                sentinel(3),
            ],
            committed: None,
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );

    // Voter 2 reaches the leader's end: HW 3, and the bootstrap voters are committed.
    assert!(leader.update_replica_state(key(2), T0 + 200, 3).unwrap());
    let current = vec![
        live(1, 3, T0 + 250, T0 + 250),
        live(2, 3, T0 + 200, T0 + 200),
        sentinel(3),
    ];
    assert_describe(
        &mut leader,
        T0 + 250,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 3,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
}

// ---------------------------------------------------------------------------------------
// §7 case 2: a voter added but not committed.

#[test]
fn case_02_added_voter_is_current_but_not_committed() {
    let mut leader = three_voters_committed(false);
    // Controller 4 catches up as an observer, then AddVoter(4) is appended at offset 3.
    leader.update_replica_state(key(4), T0 + 150, 3).unwrap();
    assert_eq!(leader.add_voter(node(4)).unwrap(), 3);
    assert_eq!(leader.high_watermark(), Some(3));
    assert_describe(
        &mut leader,
        T0 + 200,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 3,
            current: vec![
                live(1, 4, T0 + 200, T0 + 200),
                live(2, 3, T0 + 100, T0 + 100),
                sentinel(3),
                live(4, 3, T0 + 150, T0 + 150),
            ],
            committed: Some(vec![
                live(1, 4, T0 + 200, T0 + 200),
                live(2, 3, T0 + 100, T0 + 100),
                sentinel(3),
            ]),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3), wire_node(4)],
        },
    );

    // 2 of the 4 voters have offset 3: not a majority of the new set.
    assert!(!leader.update_replica_state(key(2), T0 + 300, 4).unwrap());
    // 3 of 4: the VotersRecord at 3 commits and 4 joins the committed set.
    assert!(leader.update_replica_state(key(4), T0 + 300, 4).unwrap());
    let current = vec![
        live(1, 4, T0 + 400, T0 + 400),
        live(2, 4, T0 + 300, T0 + 300),
        sentinel(3),
        live(4, 4, T0 + 300, T0 + 300),
    ];
    assert_describe(
        &mut leader,
        T0 + 400,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 4,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3), wire_node(4)],
        },
    );
}

// ---------------------------------------------------------------------------------------
// §7 case 3: a voter removed but not committed.

#[test]
fn case_03_removed_voter_stays_committed_with_its_observer_entry_then_sentinels() {
    let mut leader = three_voters_committed(true);
    assert_eq!(leader.remove_voter(&key(3)).unwrap(), 3);
    let expected_at = |now: i64, three: Option<(i64, i64, i64)>| Expected {
        leader: 1,
        epoch: 5,
        high_watermark: 3,
        current: vec![live(1, 4, now, now), live(2, 3, T0 + 100, T0 + 100)],
        committed: Some(vec![
            live(1, 4, now, now),
            live(2, 3, T0 + 100, T0 + 100),
            three.map_or(sentinel(3), |(leo, f, c)| live(3, leo, f, c)),
        ]),
        observers: three
            .map(|(leo, f, c)| live(3, leo, f, c))
            .into_iter()
            .collect(),
        // Voter 3 has left CurrentVoters, but as a committed voter it keeps its address.
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    assert_describe(
        &mut leader,
        T0 + 200,
        &expected_at(T0 + 200, Some((3, T0 + 100, T0 + 100))),
    );
    // Its observer entry has no listeners: observers never carry endpoints.
    assert!(leader
        .observer_states()
        .all(|state| state.listeners().is_empty()));

    // It keeps fetching as an observer; the committed entry follows the live one.
    assert!(!leader.update_replica_state(key(3), T0 + 1_000, 4).unwrap());
    assert_describe(
        &mut leader,
        T0 + 2_000,
        &expected_at(T0 + 2_000, Some((4, T0 + 1_000, T0 + 1_000))),
    );

    // It stops fetching: still listed just before the session timeout, gone at it.
    let last = T0 + 1_000;
    assert_describe(
        &mut leader,
        last + 299_999,
        &expected_at(last + 299_999, Some((4, last, last))),
    );
    assert_describe(
        &mut leader,
        last + 300_000,
        &expected_at(last + 300_000, None),
    );

    // The removal commits: 3 is neither committed nor current any more.
    assert!(leader
        .update_replica_state(key(2), last + 300_001, 4)
        .unwrap());
    let now = last + 300_002;
    let current = vec![
        live(1, 4, now, now),
        live(2, 4, last + 300_001, last + 300_001),
    ];
    assert_describe(
        &mut leader,
        now,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 4,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2)],
        },
    );
}

#[test]
fn case_03_removed_voter_that_never_fetched_expires_at_the_first_listing() {
    let mut leader = three_voters_committed(false);
    leader.remove_voter(&key(3)).unwrap();
    // Demoted with no fetch this epoch (last fetch "-1"): dropped at once.
    assert_eq!(leader.observer_states().count(), 1);
    assert_describe(
        &mut leader,
        T0 + 200,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 3,
            current: vec![
                live(1, 4, T0 + 200, T0 + 200),
                live(2, 3, T0 + 100, T0 + 100),
            ],
            committed: Some(vec![
                live(1, 4, T0 + 200, T0 + 200),
                live(2, 3, T0 + 100, T0 + 100),
                sentinel(3),
            ]),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
    assert_eq!(leader.observer_states().count(), 0);
}

// ---------------------------------------------------------------------------------------
// §7 cases 4 and 13: the leader removes itself; the "now" rule goes by id.

#[test]
fn case_04_leader_removing_itself_is_an_observer_and_still_committed() {
    let mut leader = three_voters_committed(true);
    assert_eq!(leader.remove_voter(&key(1)).unwrap(), 3);
    assert!(!leader.must_resign());
    let expected_at = |now: i64, leader_leo: i64| Expected {
        leader: 1,
        epoch: 5,
        high_watermark: 3,
        current: vec![
            live(2, 3, T0 + 100, T0 + 100),
            live(3, 3, T0 + 100, T0 + 100),
        ],
        committed: Some(vec![
            live(1, leader_leo, now, now),
            live(2, 3, T0 + 100, T0 + 100),
            live(3, 3, T0 + 100, T0 + 100),
        ]),
        observers: vec![live(1, leader_leo, now, now)],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    assert_describe(&mut leader, T0 + 200, &expected_at(T0 + 200, 4));

    // The leader's own log no longer counts: with voters {2, 3} at 5 and 3 the HW would be
    // 5 if it did (leader at 5 too); it is the second of two voters, 3.
    assert_eq!(leader.append_data(1).unwrap(), 4);
    assert!(!leader.update_replica_state(key(2), T0 + 300, 5).unwrap());
    assert_eq!(leader.high_watermark(), Some(3));
    // The leader is never expired from the observers, however long it runs.
    assert_describe(&mut leader, T0 + 900_000, &{
        let mut e = expected_at(T0 + 900_000, 5);
        e.current[0] = live(2, 5, T0 + 300, T0 + 300);
        e.committed.as_mut().unwrap()[1] = live(2, 5, T0 + 300, T0 + 300);
        e
    });

    // Voter 3 reaches offset 4: the removal (offset 3) commits, the leader must resign.
    assert!(leader
        .update_replica_state(key(3), T0 + 900_100, 4)
        .unwrap());
    assert_eq!(leader.high_watermark(), Some(4));
    assert!(leader.must_resign());
    let now = T0 + 900_200;
    // Voter 3 is behind the leader (5) but past the leader's end at its previous fetch (3),
    // so it is credited as caught up at that previous fetch.
    let current = vec![
        live(2, 5, T0 + 300, T0 + 300),
        live(3, 4, T0 + 900_100, T0 + 100),
    ];
    assert_describe(
        &mut leader,
        now,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 4,
            current: current.clone(),
            committed: Some(current),
            observers: vec![live(1, 5, now, now)],
            nodes: vec![wire_node(2), wire_node(3)],
        },
    );

    // After resigning, the node answers NOT_LEADER_OR_FOLLOWER, with no committed voters.
    let answer = not_leader_response();
    let partition = &answer.topics[0].partitions[0];
    assert_eq!(answer.topics[0].topic_name, "__cluster_metadata");
    assert_eq!(
        (
            partition.error_code,
            partition.leader_id,
            partition.leader_epoch,
            partition.high_watermark
        ),
        (6, 0, 0, 0)
    );
    assert!(partition.current_voters.is_empty() && partition.observers.is_empty());
    assert_eq!(partition.committed_voters, None);
    for version in 0..=3 {
        round_trips(&answer, version);
    }
}

#[test]
fn case_13_the_leader_id_gets_now_timestamps_in_every_list() {
    let mut leader = three_voters_committed(true);
    leader.remove_voter(&key(1)).unwrap();
    for now in [T0 + 200, T0 + 5_000, T0 + 400_000] {
        let answer = leader.describe_quorum(now, 3).unwrap();
        let partition = &answer.topics[0].partitions[0];
        let observer = &partition.observers[0];
        let committed = &partition.committed_voters.as_ref().unwrap()[0];
        assert_eq!(
            (
                observer.replica_id,
                observer.last_fetch_timestamp,
                observer.last_caught_up_timestamp
            ),
            (1, now, now)
        );
        assert_eq!(committed, observer);
    }
    // No other replica may fetch with the leader's id, whatever its directory.
    let impostor = ReplicaKey::new(1, Some(Uuid::from_bytes([0xee; 16])));
    assert!(matches!(
        leader.update_replica_state(impostor, T0, 0),
        Err(QuorumError::FetchFromLeader(_))
    ));
    // Consumer-style fetches (negative id) are ignored.
    assert!(!leader
        .update_replica_state(ReplicaKey::without_directory(-1), T0, 0)
        .unwrap());
}

// ---------------------------------------------------------------------------------------
// §7 case 5: a committed voter that is now an observer.

#[test]
fn case_05_committed_voter_found_among_observers_is_the_live_entry() {
    let mut leader = three_voters_committed(true);
    leader.remove_voter(&key(2)).unwrap();
    let sources = |leader: &LeaderState| -> Vec<(i32, &'static str)> {
        leader
            .committed_voter_states()
            .unwrap()
            .iter()
            .map(|c| {
                let kind = match c.source {
                    CommittedVoterSource::CurrentVoter(_) => "voter",
                    CommittedVoterSource::Observer(_) => "observer",
                    CommittedVoterSource::Absent => "absent",
                };
                (c.node.key().id(), kind)
            })
            .collect()
    };
    assert_eq!(
        sources(&leader),
        [(1, "voter"), (2, "observer"), (3, "voter")]
    );

    // The entry is read at response time, not copied: a later fetch shows up at once.
    leader.update_replica_state(key(2), T0 + 500, 2).unwrap();
    let expected = |now: i64| Expected {
        leader: 1,
        epoch: 5,
        high_watermark: 3,
        current: vec![live(1, 4, now, now), live(3, 3, T0 + 100, T0 + 100)],
        committed: Some(vec![
            live(1, 4, now, now),
            live(2, 2, T0 + 500, T0 + 100),
            live(3, 3, T0 + 100, T0 + 100),
        ]),
        observers: vec![live(2, 2, T0 + 500, T0 + 100)],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    assert_describe(&mut leader, T0 + 600, &expected(T0 + 600));
    assert_eq!(
        sources(&leader),
        [(1, "voter"), (2, "observer"), (3, "voter")]
    );

    // Expired: the committed voter is reported with sentinels.
    assert_describe(&mut leader, T0 + 500 + 300_000, &{
        let mut e = expected(T0 + 500 + 300_000);
        e.observers.clear();
        e.committed.as_mut().unwrap()[1] = sentinel(2);
        e
    });
    assert_eq!(
        sources(&leader),
        [(1, "voter"), (2, "absent"), (3, "voter")]
    );
}

// ---------------------------------------------------------------------------------------
// §7 case 6: truncation of an uncommitted suffix after a leader change.

/// Leader 1 (epoch 5) appends AddVoter(4) at offset 3; voter 2 replicates it, voter 3 does
/// not, and leader 1 fails before it commits. Returns leader 1's log.
fn old_epoch_with_uncommitted_addition() -> ControlRecordStateMachine {
    let mut old = three_voters_committed(true);
    old.add_voter(node(4)).unwrap();
    old.update_replica_state(key(2), T0 + 200, 4).unwrap();
    assert_eq!(old.high_watermark(), Some(3));
    old.log().clone()
}

#[test]
fn case_06_new_leader_holding_the_uncommitted_record_commits_it_in_its_epoch() {
    let mut log = old_epoch_with_uncommitted_addition();
    log.truncate_to(4).unwrap(); // node 2's log ends at 4: it has the record
    let t1 = T0 + 10_000;
    let mut leader = LeaderState::new(local(2), 6, log).unwrap();
    assert_eq!(
        (leader.epoch_start_offset(), leader.log_end_offset()),
        (4, 5)
    );
    // The old-epoch record is the current set at once; nothing is committed yet.
    assert_describe(
        &mut leader,
        t1,
        &Expected {
            leader: 2,
            epoch: 6,
            high_watermark: -1,
            current: vec![sentinel(1), live(2, 5, t1, t1), sentinel(3), sentinel(4)],
            committed: None,
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3), wire_node(4)],
        },
    );
    // Voter 3 catches up (it lacked offset 3), then voter 4: three of four voters hold the
    // LeaderChange at 4, so HW = 5 and the addition at 3 commits with it.
    leader.update_replica_state(key(3), t1 + 100, 3).unwrap();
    assert!(!leader.update_replica_state(key(3), t1 + 200, 5).unwrap());
    assert!(leader.update_replica_state(key(4), t1 + 300, 5).unwrap());
    let current = vec![
        sentinel(1),
        live(2, 5, t1 + 400, t1 + 400),
        live(3, 5, t1 + 200, t1 + 200),
        live(4, 5, t1 + 300, t1 + 300),
    ];
    assert_describe(
        &mut leader,
        t1 + 400,
        &Expected {
            leader: 2,
            epoch: 6,
            high_watermark: 5,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3), wire_node(4)],
        },
    );
}

#[test]
fn case_06_new_leader_lacking_the_uncommitted_record_drops_it_everywhere() {
    let full = old_epoch_with_uncommitted_addition();
    // Node 3's log ends at 3: it never got the record.
    let mut log = full.clone();
    log.truncate_to(3).unwrap();
    assert_eq!(log.last_voter_set(), Some(&voters(&[1, 2, 3])));
    let t1 = T0 + 10_000;
    let mut leader = LeaderState::new(local(3), 6, log).unwrap();
    assert_eq!(
        (leader.epoch_start_offset(), leader.log_end_offset()),
        (3, 4)
    );
    assert_describe(
        &mut leader,
        t1,
        &Expected {
            leader: 3,
            epoch: 6,
            high_watermark: -1,
            current: vec![sentinel(1), sentinel(2), live(3, 4, t1, t1)],
            committed: None,
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
    // Node 2 diverged at offset 3 and truncates: its uncommitted voter set is gone too.
    let mut follower = full;
    assert_eq!(follower.last_voter_set(), Some(&voters(&[1, 2, 3, 4])));
    follower.truncate_to(3).unwrap();
    assert_eq!(follower.last_voter_set(), Some(&voters(&[1, 2, 3])));
    follower.append(&[LogRecord::Data]).unwrap(); // it copies the new LeaderChange
    leader.update_replica_state(key(2), t1 + 100, 3).unwrap();
    assert!(leader.update_replica_state(key(2), t1 + 200, 4).unwrap());
    let current = vec![
        sentinel(1),
        live(2, 4, t1 + 200, t1 + 200),
        live(3, 4, t1 + 300, t1 + 300),
    ];
    assert_describe(
        &mut leader,
        t1 + 300,
        &Expected {
            leader: 3,
            epoch: 6,
            high_watermark: 4,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
}

// ---------------------------------------------------------------------------------------
// §7 case 7: static voters (kraft.version 0), and the 0 → 1 upgrade.

#[test]
fn case_07_static_voters_are_the_committed_set() {
    let log = ControlRecordStateMachine::new(Some(static_voters(&[1, 2, 3])));
    let mut leader = LeaderState::new(local(1), 2, log).unwrap();
    assert_eq!(leader.log_end_offset(), 1); // LeaderChange only: kraft.version 0
                                            // Voter 2 fetches with its directory id; the static entry (no directory) matches it.
    assert!(leader.update_replica_state(key(2), T0 + 100, 1).unwrap());
    let zero = Uuid::ZERO;
    let current = vec![
        entry(1, zero, 1, T0 + 200, T0 + 200),
        entry(2, zero, 1, T0 + 100, T0 + 100),
        entry(3, zero, -1, -1, -1),
    ];
    let steady = Expected {
        leader: 1,
        epoch: 2,
        high_watermark: 1,
        current: current.clone(),
        committed: Some(current),
        observers: vec![],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    assert_describe(&mut leader, T0 + 200, &steady);
    assert!(matches!(
        leader.add_voter(node(4)),
        Err(QuorumError::ReconfigurationRejected(_))
    ));

    // Upgrade to kraft.version 1: the leader writes the voters with their directory ids.
    // Until that record commits the committed set is still the static one; its members
    // (no directory id) are shown with the live entries that now carry directory ids.
    assert_eq!(
        leader
            .append_control(vec![
                kraft_version_record(1),
                voters_record(&voters(&[1, 2, 3]))
            ])
            .unwrap(),
        1
    );
    assert_eq!(leader.high_watermark(), Some(1));
    assert_eq!(
        leader.committed_voter_set(),
        Some(&static_voters(&[1, 2, 3]))
    );
    let current = vec![
        live(1, 3, T0 + 300, T0 + 300),
        live(2, 1, T0 + 100, T0 + 100),
        sentinel(3),
    ];
    assert_describe(
        &mut leader,
        T0 + 300,
        &Expected {
            leader: 1,
            epoch: 2,
            high_watermark: 1,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
    assert!(leader.update_replica_state(key(2), T0 + 400, 3).unwrap());
    assert_eq!(leader.committed_voter_set(), Some(&voters(&[1, 2, 3])));
}

// ---------------------------------------------------------------------------------------
// §7 case 8: same id, different directory id.

#[test]
fn case_08_directory_id_mismatch_is_a_different_replica() {
    let other_dir = Uuid::from_bytes([0x22; 16]);
    let impostor = ReplicaKey::new(2, Some(other_dir));
    let mut leader = bootstrapped_leader(&[1, 2, 3], 1, 5);
    // (2, 0x22…) fetches: not voter (2, 0x02…), so an observer that cannot move the HW.
    assert!(!leader.update_replica_state(impostor, T0 + 100, 3).unwrap());
    assert!(leader.update_replica_state(key(3), T0 + 100, 3).unwrap());
    let observer = entry(2, other_dir, 3, T0 + 100, T0 + 100);
    let current = vec![
        live(1, 3, T0 + 200, T0 + 200),
        sentinel(2),
        live(3, 3, T0 + 100, T0 + 100),
    ];
    assert_describe(
        &mut leader,
        T0 + 200,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 3,
            current: current.clone(),
            // Voter (2, 0x02…) is reported with its own (never fetched) entry.
            committed: Some(current),
            observers: vec![observer.clone()],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );

    // A VotersRecord replacing (2, 0x02…) by (2, 0x22…) (one key out, one in) is appended.
    // The old voter's state is dropped, not demoted; the new voter takes over the
    // observer's state. Committed voter (2, 0x02…) has no live entry: sentinels carrying its
    // own directory id.
    let replaced = VoterSet::new([
        node(1),
        VoterNode::new(impostor, endpoints(2), (0, 1)),
        node(3),
    ])
    .unwrap();
    assert_eq!(leader.append_voter_set(&replaced).unwrap(), 3);
    let current = vec![
        live(1, 4, T0 + 300, T0 + 300),
        observer.clone(),
        live(3, 3, T0 + 100, T0 + 100),
    ];
    let mut expected = Expected {
        leader: 1,
        epoch: 5,
        high_watermark: 3,
        current: current.clone(),
        committed: Some(vec![current[0].clone(), sentinel(2), current[2].clone()]),
        observers: vec![],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    assert_describe(&mut leader, T0 + 300, &expected);

    // The old (2, 0x02…) fetches again: it is an observer, and the committed entry uses it.
    leader.update_replica_state(key(2), T0 + 400, 3).unwrap();
    let old = live(2, 3, T0 + 400, -1);
    expected.current[0] = live(1, 4, T0 + 500, T0 + 500);
    expected.observers = vec![old.clone()];
    expected.committed = Some(vec![
        expected.current[0].clone(),
        old,
        expected.current[2].clone(),
    ]);
    assert_describe(&mut leader, T0 + 500, &expected);
}

// ---------------------------------------------------------------------------------------
// §7 case 9: Nodes for committed voters outside the current set, and pending endpoint
// updates.

#[test]
fn case_09_nodes_cover_committed_only_voters_and_prefer_current_endpoints() {
    let mut leader = three_voters_committed(true);
    // UpdateVoter(2) with new listeners, appended at 3 and not committed.
    let moved = Endpoints::from_iter([
        ("CONTROLLER", "c2-new", 19093),
        ("REPLICATION", "c2-new", 19094),
    ]);
    leader
        .update_voter(VoterNode::new(key(2), moved, (0, 1)))
        .unwrap();
    let moved_node = wire_node_with(
        2,
        &[
            ("CONTROLLER", "c2-new", 19093),
            ("REPLICATION", "c2-new", 19094),
        ],
    );
    let current = vec![
        live(1, 4, T0 + 200, T0 + 200),
        live(2, 3, T0 + 100, T0 + 100),
        live(3, 3, T0 + 100, T0 + 100),
    ];
    assert_describe(
        &mut leader,
        T0 + 200,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 3,
            current: current.clone(),
            committed: Some(current),
            observers: vec![],
            nodes: vec![wire_node(1), moved_node.clone(), wire_node(3)],
        },
    );
    // The committed set still has the old address; Nodes shows the current one.
    let committed = leader.committed_voter_set().unwrap();
    assert_eq!(committed.node(2).unwrap().listeners(), &endpoints(2));

    // Commit it, then remove voter 3: until that commits, 3 is committed-only and its node
    // (address from the committed set) appears at v3 only.
    leader.update_replica_state(key(2), T0 + 300, 4).unwrap();
    assert_eq!(leader.high_watermark(), Some(4));
    assert_eq!(leader.remove_voter(&key(3)).unwrap(), 4);
    let v3 = leader.describe_quorum(T0 + 400, 3).unwrap();
    assert_eq!(
        v3.nodes,
        vec![wire_node(1), moved_node.clone(), wire_node(3)]
    );
    let v2 = leader.describe_quorum(T0 + 400, 2).unwrap();
    assert_eq!(v2.nodes, vec![wire_node(1), moved_node]);
}

// ---------------------------------------------------------------------------------------
// §7 case 10: steady state.

#[test]
fn case_10_steady_state_committed_equals_current() {
    let mut leader = three_voters_committed(true);
    leader.update_replica_state(key(9), T0 + 150, 1).unwrap(); // a broker observing
    assert_eq!(leader.append_data(5).unwrap(), 3);
    leader.update_replica_state(key(2), T0 + 200, 8).unwrap();
    leader.update_replica_state(key(3), T0 + 210, 6).unwrap();
    assert_eq!(leader.high_watermark(), Some(8));
    let current = vec![
        live(1, 8, T0 + 300, T0 + 300),
        live(2, 8, T0 + 200, T0 + 200),
        // 3 fetched from 6 < 8 but had reached 3, the leader's end at its previous fetch.
        live(3, 6, T0 + 210, T0 + 100),
    ];
    assert_describe(
        &mut leader,
        T0 + 300,
        &Expected {
            leader: 1,
            epoch: 5,
            high_watermark: 8,
            current: current.clone(),
            committed: Some(current),
            observers: vec![live(9, 1, T0 + 150, -1)],
            nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
        },
    );
}

// ---------------------------------------------------------------------------------------
// §7 case 11: old request versions.

#[test]
fn case_11_old_versions_never_carry_committed_voters() {
    let mut leader = three_voters_committed(true);
    leader.remove_voter(&key(3)).unwrap();
    let now = T0 + 200;
    let one = live(1, 4, now, now);
    let two = live(2, 3, T0 + 100, T0 + 100);
    let three = live(3, 3, T0 + 100, T0 + 100);
    let zeroed = |r: &kafka_codec::messages::describe_quorum_response::ReplicaState| {
        let mut r = r.clone();
        r.replica_directory_id = Uuid::ZERO;
        r
    };
    let response = |current, observers, committed, nodes| {
        DescribeQuorumResponse::default()
            .with_topics(vec![TopicData::default()
                .with_topic_name("__cluster_metadata".into())
                .with_partitions(vec![PartitionData::default()
                    .with_leader_id(1)
                    .with_leader_epoch(5)
                    .with_high_watermark(3)
                    .with_current_voters(current)
                    .with_observers(observers)
                    .with_committed_voters(committed)])])
            .with_nodes(nodes)
    };
    let v0_v1 = response(
        vec![zeroed(&one), zeroed(&two)],
        vec![zeroed(&three)],
        None,
        vec![],
    );
    let v2 = response(
        vec![one.clone(), two.clone()],
        vec![three.clone()],
        None,
        vec![wire_node(1), wire_node(2)],
    );
    let v3 = response(
        vec![one.clone(), two.clone()],
        vec![three.clone()],
        Some(vec![one, two, three]),
        vec![wire_node(1), wire_node(2), wire_node(3)],
    );
    assert_eq!(leader.describe_quorum(now, 0).unwrap(), v0_v1);
    assert_eq!(leader.describe_quorum(now, 1).unwrap(), v0_v1);
    assert_eq!(leader.describe_quorum(now, 2).unwrap(), v2);
    assert_eq!(leader.describe_quorum(now, 3).unwrap(), v3);
    assert!(matches!(
        leader.describe_quorum(now, 4),
        Err(QuorumError::UnsupportedVersion(4))
    ));

    // Written at v2, the v3 answer loses CommittedVoters silently (ignorable); its extra
    // node for the committed-only voter 3 is what remains different, which is why the
    // leader builds every answer for the version asked.
    let mut downgraded =
        DescribeQuorumResponse::decode_exact(v3.encode_to_bytes(2).unwrap(), 2).unwrap();
    assert_eq!(downgraded.topics, v2.topics);
    downgraded.nodes.pop();
    assert_eq!(downgraded, v2);
    // At v1 directory ids and Nodes are not ignorable: writing the v2/v3 answer fails.
    assert!(v2.encode_to_bytes(1).is_err());
    assert!(v0_v1.encode_to_bytes(0).is_ok());

    // The request is the same at every version; handle_describe_quorum checks its target.
    let request = |topic: &str, partition: i32| {
        DescribeQuorumRequest::default().with_topics(vec![
            describe_quorum_request::TopicData::default()
                .with_topic_name(topic.into())
                .with_partitions(vec![describe_quorum_request::PartitionData::default()
                    .with_partition_index(partition)]),
        ])
    };
    for version in 0..=3 {
        let good = leader
            .handle_describe_quorum(&request("__cluster_metadata", 0), now, version)
            .unwrap();
        assert_eq!(good, leader.describe_quorum(now, version).unwrap());
        let bad = leader
            .handle_describe_quorum(&request("__cluster_metadata", 1), now, version)
            .unwrap();
        let partition = &bad.topics[0].partitions[0];
        assert_eq!((partition.partition_index, partition.error_code), (1, 3));
        assert_eq!(partition.committed_voters, None);
        assert!(bad.nodes.is_empty());
        round_trips(&bad, version);
    }
}

// ---------------------------------------------------------------------------------------
// §7 case 12: ordering.

#[test]
fn case_12_replicas_sorted_by_key_and_listeners_by_name() {
    let negative = Uuid::from_halves(-5, 0); // first byte 0xff: sorts before zero
    let positive = Uuid::from_halves(5, 0);
    let mut leader = three_voters_committed(true);
    for (key, at) in [
        (ReplicaKey::new(7, Some(positive)), 100),
        (ReplicaKey::without_directory(7), 110),
        (ReplicaKey::new(6, Some(positive)), 120),
        (ReplicaKey::new(7, Some(negative)), 130),
    ] {
        leader.update_replica_state(key, T0 + at, 1).unwrap();
    }
    let answer = leader.describe_quorum(T0 + 200, 3).unwrap();
    let observers: Vec<(i32, Uuid)> = answer.topics[0].partitions[0]
        .observers
        .iter()
        .map(|r| (r.replica_id, r.replica_directory_id))
        .collect();
    assert_eq!(
        observers,
        [(6, positive), (7, negative), (7, Uuid::ZERO), (7, positive)]
    );

    // Listeners: given in reverse order, reported by name.
    let listeners = Endpoints::from_iter([
        ("zeta", "c2", 3),
        ("CONTROLLER", "c2", 1),
        ("alpha", "c2", 2),
    ]);
    leader
        .update_voter(VoterNode::new(key(2), listeners, (0, 1)))
        .unwrap();
    let answer = leader.describe_quorum(T0 + 300, 3).unwrap();
    let names: Vec<&str> = answer.nodes[1].listeners.iter().map(|l| &*l.name).collect();
    assert_eq!(names, ["ALPHA", "CONTROLLER", "ZETA"]);
    let ids: Vec<i32> = answer.topics[0].partitions[0]
        .committed_voters
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.replica_id)
        .collect();
    assert_eq!(ids, [1, 2, 3]);
}

// ---------------------------------------------------------------------------------------
// §6.1: the worked log, both variants, against the "copy on HW advance" reading.

/// Epoch 3 led by 1 over {1, 2, 3}: VotersRecord {1, 2, 3} at offset 5 (with
/// kraft.version 1 at 4), LeaderChange at 15, data at 16..=19; voter 2 at 18, voter 3 at
/// 17, observer 4 at 19, all fetched at `T0 + 10`; HW 18.
fn section_6_1_log() -> LeaderState {
    let mut log = ControlRecordStateMachine::new(None);
    log.append(&vec![LogRecord::Data; 4]).unwrap();
    log.append(&[
        LogRecord::Control(kraft_version_record(1)),
        LogRecord::Control(voters_record(&voters(&[1, 2, 3]))),
    ])
    .unwrap();
    log.append(&vec![LogRecord::Data; 9]).unwrap();
    let mut leader = LeaderState::new(
        LocalReplica {
            key: key(1),
            listeners: endpoints(1),
            supported_kraft_versions: (0, 1),
        },
        3,
        log,
    )
    .unwrap();
    assert_eq!(leader.epoch_start_offset(), 15);
    assert_eq!(leader.append_data(4).unwrap(), 16);
    leader.update_replica_state(key(2), T0 + 10, 18).unwrap();
    leader.update_replica_state(key(3), T0 + 10, 17).unwrap();
    leader.update_replica_state(key(4), T0 + 10, 19).unwrap();
    assert_eq!(leader.high_watermark(), Some(18));
    leader
}

/// The reading the design rejects: when the HW moves, copy the current voter entries.
#[derive(Default)]
struct CopyOnAdvance {
    hw: Option<i64>,
    copy: Option<Vec<kafka_codec::messages::describe_quorum_response::ReplicaState>>,
}

impl CopyOnAdvance {
    fn observe(&mut self, leader: &mut LeaderState, now: i64) {
        if leader.high_watermark() != self.hw {
            self.hw = leader.high_watermark();
            let answer = leader.describe_quorum(now, 3).unwrap();
            self.copy = Some(answer.topics[0].partitions[0].current_voters.clone());
        }
    }

    fn ids(&self) -> Vec<i32> {
        self.copy.iter().flatten().map(|r| r.replica_id).collect()
    }
}

#[test]
fn section_6_1_add_voter_4_is_committed_only_once_the_hw_passes_it() {
    let mut leader = section_6_1_log();
    let mut copy = CopyOnAdvance::default();
    copy.observe(&mut leader, T0 + 10);
    assert_eq!(leader.add_voter(node(4)).unwrap(), 20);
    let mut expected = Expected {
        leader: 1,
        epoch: 3,
        high_watermark: 18,
        current: vec![
            live(1, 21, T0 + 20, T0 + 20),
            live(2, 18, T0 + 10, -1),
            live(3, 17, T0 + 10, -1),
            live(4, 19, T0 + 10, -1),
        ],
        committed: None,
        observers: vec![],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3), wire_node(4)],
    };
    expected.committed = Some(expected.current[..3].to_vec());
    assert_describe(&mut leader, T0 + 20, &expected);

    // Voter 2 fetches at 20 (it had reached 20, the leader's end at its previous fetch, so
    // it was caught up then): ends 21, 20, 19, 17 → HW 19.
    assert!(leader.update_replica_state(key(2), T0 + 30, 20).unwrap());
    assert_eq!(leader.high_watermark(), Some(19));
    copy.observe(&mut leader, T0 + 30);
    expected.high_watermark = 19;
    expected.current[0] = live(1, 21, T0 + 40, T0 + 40);
    expected.current[1] = live(2, 20, T0 + 30, T0 + 10);
    expected.committed = Some(expected.current[..3].to_vec());
    assert_describe(&mut leader, T0 + 40, &expected);
    // The two readings differ here: the copy claims 4 is committed although offset 20 is not.
    assert_eq!(copy.ids(), [1, 2, 3, 4]);
    assert_eq!(leader.committed_voter_set(), Some(&voters(&[1, 2, 3])));

    // Voter 3 catches up: HW 20, offset 20 still not committed, 4 still not committed. The
    // copy, refreshed, still says 4; and between refreshes it went stale (3 at 17 vs 21).
    assert!(leader.update_replica_state(key(3), T0 + 50, 21).unwrap());
    assert_eq!(copy.copy.as_ref().unwrap()[2].log_end_offset, 17);
    copy.observe(&mut leader, T0 + 50);
    assert_eq!(leader.high_watermark(), Some(20));
    assert_eq!(copy.ids(), [1, 2, 3, 4]);
    expected.high_watermark = 20;
    expected.current[0] = live(1, 21, T0 + 60, T0 + 60);
    expected.current[2] = live(3, 21, T0 + 50, T0 + 50);
    expected.committed = Some(expected.current[..3].to_vec());
    assert_describe(&mut leader, T0 + 60, &expected);

    // Voter 4 reaches 21: HW 21 > 20, and 4 is committed.
    assert!(leader.update_replica_state(key(4), T0 + 70, 21).unwrap());
    expected.high_watermark = 21;
    expected.current[0] = live(1, 21, T0 + 80, T0 + 80);
    expected.current[3] = live(4, 21, T0 + 70, T0 + 70);
    expected.committed = Some(expected.current.clone());
    assert_describe(&mut leader, T0 + 80, &expected);
}

#[test]
fn section_6_1_remove_voter_3_keeps_it_committed_until_the_hw_passes_it() {
    let mut leader = section_6_1_log();
    let mut copy = CopyOnAdvance::default();
    copy.observe(&mut leader, T0 + 10);
    assert_eq!(leader.remove_voter(&key(3)).unwrap(), 20);
    let mut expected = Expected {
        leader: 1,
        epoch: 3,
        high_watermark: 18,
        current: vec![live(1, 21, T0 + 20, T0 + 20), live(2, 18, T0 + 10, -1)],
        committed: None,
        observers: vec![live(3, 17, T0 + 10, -1), live(4, 19, T0 + 10, -1)],
        nodes: vec![wire_node(1), wire_node(2), wire_node(3)],
    };
    expected.committed = Some(vec![
        expected.current[0].clone(),
        expected.current[1].clone(),
        expected.observers[0].clone(),
    ]);
    assert_describe(&mut leader, T0 + 20, &expected);

    // Voter 2 fetches at 19: with two voters the HW is the lower end, 19.
    assert!(leader.update_replica_state(key(2), T0 + 30, 19).unwrap());
    copy.observe(&mut leader, T0 + 30);
    assert_eq!(leader.high_watermark(), Some(19));
    // The readings differ: the copy has dropped 3, whose removal (offset 20) is uncommitted.
    assert_eq!(copy.ids(), [1, 2]);
    expected.high_watermark = 19;
    expected.current[0] = live(1, 21, T0 + 40, T0 + 40);
    expected.current[1] = live(2, 19, T0 + 30, -1);
    expected.committed = Some(vec![
        expected.current[0].clone(),
        expected.current[1].clone(),
        expected.observers[0].clone(),
    ]);
    assert_describe(&mut leader, T0 + 40, &expected);

    // Voter 2 reaches 21: the removal commits and both readings agree again.
    assert!(leader.update_replica_state(key(2), T0 + 50, 21).unwrap());
    copy.observe(&mut leader, T0 + 50);
    assert_eq!(copy.ids(), [1, 2]);
    expected.high_watermark = 21;
    expected.current[0] = live(1, 21, T0 + 60, T0 + 60);
    expected.current[1] = live(2, 21, T0 + 50, T0 + 50);
    expected.committed = Some(expected.current.clone());
    expected.nodes = vec![wire_node(1), wire_node(2)];
    assert_describe(&mut leader, T0 + 60, &expected);
}

// ---------------------------------------------------------------------------------------
// Control records are read with the generated types, all or nothing.

#[test]
fn a_corrupt_voters_record_changes_nothing() {
    let mut leader = three_voters_committed(true);
    let good = voters_record(&voters(&[1, 2, 3, 4]));
    let truncated = kafka_codec::quorum::ControlRecord::from_parts(
        good.key().clone(),
        good.value().slice(..good.value().len() - 1),
    );
    let before = leader.log().clone();
    assert!(matches!(
        leader.append_control(vec![kraft_version_record(1), truncated]),
        Err(QuorumError::Decode(_))
    ));
    assert_eq!(leader.log(), &before);
    // Two voters changed at once: no overlapping majority with {1, 2, 3}.
    assert!(matches!(
        leader.append_voter_set(&voters(&[1, 4, 5])),
        Err(QuorumError::NoOverlappingMajority { offset: 3 })
    ));
    assert_eq!(leader.log(), &before);
    // And the decoded record is the generated type's view of the bytes.
    assert_eq!(
        good.decode_voters().unwrap(),
        voters(&[1, 2, 3, 4]).to_voters_record()
    );
    assert_eq!(
        kafka_codec::messages::VotersRecord::decode_exact(good.value().clone(), 0).unwrap(),
        voters(&[1, 2, 3, 4]).to_voters_record()
    );
}

// ---------------------------------------------------------------------------------------
// Building blocks: histories, control record keys, snapshots.

#[test]
fn log_history_lookups_and_truncation() {
    use kafka_codec::quorum::LogHistory;
    let mut history = LogHistory::new();
    assert!(matches!(
        history.add_at(-2, 'x'),
        Err(QuorumError::InvalidOffset(-2))
    ));
    for (at, value) in [(-1, 'a'), (4, 'b'), (9, 'c'), (15, 'd')] {
        history.add_at(at, value).unwrap();
    }
    assert!(matches!(
        history.add_at(15, 'e'),
        Err(QuorumError::NonIncreasingOffset {
            last: 15,
            offset: 15
        })
    ));
    assert_eq!(history.value_at_or_before(-2), None);
    assert_eq!(history.value_at_or_before(-1), Some(&'a'));
    assert_eq!(history.value_at_or_before(8), Some(&'b'));
    assert_eq!(history.value_at_or_before(9), Some(&'c'));
    // The log now starts at 10: entries up to 10 go, except the one still in force there.
    history.truncate_old_entries(10);
    assert_eq!(history.iter().collect::<Vec<_>>(), [(9, &'c'), (15, &'d')]);
    assert_eq!(history.value_at_or_before(12), Some(&'c'));
    // The log is cut at 15: the entry at 15 goes.
    history.truncate_new_entries(15);
    assert_eq!(history.last_entry(), Some((9, &'c')));
}

#[test]
fn voter_set_history_checks_overlap_only_after_log_entries() {
    use kafka_codec::quorum::VoterSetHistory;
    let mut history = VoterSetHistory::new(Some(static_voters(&[1, 2, 3])));
    assert_eq!(history.last_value(), Some(&static_voters(&[1, 2, 3])));
    // After the bootstrap entry (-1) any set may follow; after a log entry only a set that
    // differs by at most one voter each way.
    history.add_at(-1, voters(&[1])).unwrap();
    history.add_at(3, voters(&[4, 5, 6])).unwrap();
    assert!(matches!(
        history.add_at(7, voters(&[4, 7, 8])),
        Err(QuorumError::NoOverlappingMajority { offset: 7 })
    ));
    history.add_at(7, voters(&[4, 5, 7])).unwrap();
    assert_eq!(history.value_at_or_before(6), Some(&voters(&[4, 5, 6])));
    history.clear();
    assert_eq!(history.last_value(), Some(&static_voters(&[1, 2, 3])));
}

#[test]
fn control_record_keys_and_types() {
    use bytes::Bytes;
    use kafka_codec::quorum::{ControlRecord, ControlRecordType};
    let record = voters_record(&voters(&[1]));
    // Key: version 0 (int16), then the type (int16) 6 = KRaftVoters.
    assert_eq!(&record.key()[..], [0, 0, 0, 6]);
    assert_eq!(
        record.record_type().unwrap(),
        ControlRecordType::KRaftVoters
    );
    let value = record.value().clone();
    let short = ControlRecord::from_parts(Bytes::from_static(&[0, 0, 6]), value.clone());
    assert!(matches!(
        short.record_type(),
        Err(QuorumError::CorruptControlKey(_))
    ));
    let negative =
        ControlRecord::from_parts(Bytes::from_static(&[0xff, 0xff, 0, 6]), value.clone());
    assert!(matches!(
        negative.record_type(),
        Err(QuorumError::CorruptControlKey(_))
    ));
    // A newer key version is read the same way.
    let newer = ControlRecord::from_parts(Bytes::from_static(&[0, 1, 0, 6]), value.clone());
    assert_eq!(
        newer.decode_voters().unwrap(),
        voters(&[1]).to_voters_record()
    );
    assert!(matches!(
        kraft_version_record(1).decode_voters(),
        Err(QuorumError::UnexpectedControlRecord {
            expected: ControlRecordType::KRaftVoters,
            found: ControlRecordType::KRaftVersion
        })
    ));
    // Unknown control types are skipped by the state machine.
    let unknown = ControlRecord::from_parts(Bytes::from_static(&[0, 0, 0, 42]), Bytes::new());
    assert_eq!(
        unknown.record_type().unwrap(),
        ControlRecordType::Unknown(42)
    );
    let mut log = ControlRecordStateMachine::new(None);
    log.append(&[LogRecord::Control(unknown)]).unwrap();
    assert_eq!((log.next_offset(), log.last_voter_set()), (1, None));
}

#[test]
fn snapshots_place_their_records_at_their_last_offset() {
    let mut log = bootstrapped_log(&[1, 2, 3]);
    assert_eq!(log.last_voter_set_offset(), Some(-1));
    log.append(&vec![LogRecord::Data; 5]).unwrap();
    log.load_snapshot(
        10,
        &[kraft_version_record(1), voters_record(&voters(&[1, 2, 4]))],
    )
    .unwrap();
    assert_eq!(log.next_offset(), 10);
    assert_eq!(log.last_voter_set_offset(), Some(9));
    assert_eq!(log.voter_set_at_offset(8).unwrap(), None); // history cleared by the load
    assert_eq!(
        log.voter_set_at_offset(9).unwrap(),
        Some(&voters(&[1, 2, 4]))
    );
    assert_eq!(log.kraft_version_at_offset(9).unwrap(), 1);
    assert!(matches!(
        log.voter_set_at_offset(10),
        Err(QuorumError::OffsetNotRead {
            offset: 10,
            next_offset: 10
        })
    ));
    assert!(matches!(
        log.truncate_to(11),
        Err(QuorumError::InvalidOffset(11))
    ));
}
