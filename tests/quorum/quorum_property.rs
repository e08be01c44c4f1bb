//! Property test of the committed voter set over random operation sequences: fetches from
//! voters and observers (including a replica with a stray directory id), data appends,
//! AddVoter/RemoveVoter (the leader removing itself included), time passing (observers
//! expiring), and leader changes with truncation of the uncommitted suffix.
//!
//! After every step:
//! * the committed set equals the voter set in force at `HW − 1` according to a shadow log the
//!   test keeps itself (null while the HW is unknown, never empty otherwise);
//! * every committed entry equals the live entry the response shows for that replica in
//!   `CurrentVoters`/`Observers`, or carries the `-1` sentinels when there is none;
//! * the HW never decreases (within an epoch, and a new leader's known HW is never below an
//!   earlier one);
//! * the v3 answer survives bytes and JSON;
//! * the answers at v2, v1, v0 equal what a leader without committed voters builds, byte for
//!   byte, and equal the v3 answer written at that version (committed voters dropped by the
//!   encoder; `Nodes` and directory ids adjusted as the version requires).
//!
//! The history is a list of operations drawn by `proptest`, so a failure shrinks to a short
//! history (fewer steps, smaller choices) instead of a 60-step random walk.

use crate::common::*;
use kafka_codec::messages::describe_quorum_response::{self, Node, PartitionData, TopicData};
use kafka_codec::messages::DescribeQuorumResponse;
use kafka_codec::quorum::{LeaderState, QuorumError, ReplicaKey};
use kafka_codec::{Message, Uuid};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

const SEQUENCES: u32 = 160;
/// Histories hold 1 to 2 × this many steps: 60 on average.
const STEPS: usize = 60;
const IDS: std::ops::RangeInclusive<i32> = 1..=6;
/// How long time passes in a `Tick`: from nothing to past the 5-minute observer expiry.
const TICKS: [i64; 6] = [1, 50, 1_000, 60_000, 150_000, 310_000];

/// One step of a history. Choices that depend on the state at the time (which voter to
/// remove, which candidate takes over, how far a fetch goes) are numbers taken modulo what
/// is there, so that any list of operations is a valid history and shrinks to another.
#[derive(Debug, Clone)]
enum Op {
    /// A fetch by voter candidate `id`, or by the replica with a stray directory id. It
    /// advances up to 3 records past what the replica had, or (`stale`) jumps to any offset
    /// up to the log end: a follower that truncated, or a late fetch.
    Fetch {
        id: i32,
        stray: bool,
        advance: i64,
        stale: Option<u32>,
        wait: i64,
    },
    /// The leader appends 1 to 3 data records.
    Append(usize),
    AddVoter(i32),
    /// RemoveVoter of the leader itself, or of the `pick`th current voter.
    RemoveVoter {
        own: bool,
        pick: usize,
    },
    /// Time passes: `TICKS[index]` ms.
    Tick(usize),
    /// A voter holding every committed record takes over (the `pick`th that can).
    ChangeLeader {
        pick: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let fetch = (
        IDS,
        proptest::bool::weighted(1.0 / 12.0),
        0..=3_i64,
        proptest::option::weighted(0.1, any::<u32>()),
        0..=20_i64,
    )
        .prop_map(|(id, stray, advance, stale, wait)| Op::Fetch {
            id,
            stray,
            advance,
            stale,
            wait,
        });
    prop_oneof![
        50 => fetch,
        10 => (1..=3_usize).prop_map(Op::Append),
        10 => IDS.prop_map(Op::AddVoter),
        10 => (proptest::bool::weighted(0.25), any::<usize>())
            .prop_map(|(own, pick)| Op::RemoveVoter { own, pick }),
        18 => (0..TICKS.len()).prop_map(Op::Tick),
        2 => any::<usize>().prop_map(|pick| Op::ChangeLeader { pick }),
    ]
}

fn stray() -> ReplicaKey {
    ReplicaKey::new(2, Some(Uuid::from_bytes([0x22; 16])))
}

struct Run {
    now: i64,
    leader: LeaderState,
    /// VotersRecords the test appended (or bootstrapped), by offset: its own record of the log.
    shadow: BTreeMap<i64, BTreeSet<ReplicaKey>>,
    /// Each replica's log end offset as the test drives it.
    ends: BTreeMap<ReplicaKey, i64>,
    epoch_hw: Option<i64>,
    max_hw: i64,
    stats: Stats,
}

#[derive(Default, Debug)]
struct Stats {
    steps: usize,
    committed_differs_from_current: usize,
    committed_from_observer: usize,
    committed_sentinel: usize,
    unknown_hw: usize,
    self_removals: usize,
    leader_changes: usize,
    truncated_voter_sets: usize,
}

impl Run {
    fn new() -> Self {
        let leader = bootstrapped_leader(&[1, 2, 3], 1, 1);
        let mut shadow = BTreeMap::new();
        let three: BTreeSet<_> = [key(1), key(2), key(3)].into();
        shadow.insert(-1, three.clone());
        shadow.insert(2, three); // the first leader rewrites the bootstrap voters at offset 2
        Run {
            now: T0,
            leader,
            shadow,
            ends: BTreeMap::new(),
            epoch_hw: None,
            max_hw: 0,
            stats: Stats::default(),
        }
    }

    fn step(&mut self, op: &Op) {
        if self.leader.must_resign() {
            self.change_leader(true, 0);
            return;
        }
        match *op {
            Op::Fetch {
                id,
                stray: is_stray,
                advance,
                stale,
                wait,
            } => {
                let key = if is_stray { stray() } else { key(id) };
                self.fetch(key, advance, stale, wait);
            }
            Op::Append(count) => {
                self.leader.append_data(count).unwrap();
            }
            Op::AddVoter(id) => self.add_voter(id),
            Op::RemoveVoter { own, pick } => self.remove_voter(own, pick),
            Op::Tick(index) => self.now += TICKS[index],
            Op::ChangeLeader { pick } => self.change_leader(false, pick),
        }
    }

    fn fetch(&mut self, key: ReplicaKey, advance: i64, stale: Option<u32>, wait: i64) {
        if key.id() == self.leader.leader_id() {
            return;
        }
        let leo = self.leader.log_end_offset();
        let known = self.ends.get(&key).copied().unwrap_or(0).min(leo);
        let offset = match stale {
            Some(pick) => i64::from(pick) % (leo + 1),
            None => (known + advance).min(leo),
        };
        self.now += wait;
        self.leader
            .update_replica_state(key, self.now, offset)
            .unwrap();
        self.ends.insert(key, offset);
    }

    fn add_voter(&mut self, id: i32) {
        let before = self.leader.log_end_offset();
        match self.leader.add_voter(node(id)) {
            Ok(offset) => {
                assert_eq!(offset, before);
                let mut next = self.shadow_last().clone();
                next.insert(key(id));
                self.shadow.insert(offset, next);
            }
            Err(QuorumError::ReconfigurationRejected(_) | QuorumError::DuplicateVoter(_)) => {
                assert_eq!(self.leader.log_end_offset(), before);
            }
            Err(other) => panic!("add voter {id}: {other}"),
        }
    }

    fn remove_voter(&mut self, own: bool, pick: usize) {
        let voters: Vec<ReplicaKey> = self
            .leader
            .current_voter_set()
            .voter_keys()
            .into_iter()
            .collect();
        let target = if own {
            self.leader.local().key
        } else {
            voters[pick % voters.len()]
        };
        let before = self.leader.log_end_offset();
        match self.leader.remove_voter(&target) {
            Ok(offset) => {
                let mut next = self.shadow_last().clone();
                next.remove(&target);
                self.shadow.insert(offset, next);
                if target == self.leader.local().key {
                    self.stats.self_removals += 1;
                }
            }
            Err(
                QuorumError::ReconfigurationRejected(_)
                | QuorumError::EmptyVoterSet
                | QuorumError::NotAVoter(_),
            ) => assert_eq!(self.leader.log_end_offset(), before),
            Err(other) => panic!("remove voter {target}: {other}"),
        }
    }

    /// A voter holding every committed record takes over with its own log: the old leader's
    /// log cut at that voter's end offset.
    fn change_leader(&mut self, must: bool, pick: usize) {
        let old_id = self.leader.leader_id();
        let mut candidates = Vec::new();
        for &voter in &self.leader.current_voter_set().voter_keys() {
            let Some(&end) = self.ends.get(&voter) else {
                continue;
            };
            if voter.id() == old_id || end < self.max_hw {
                continue;
            }
            let mut log = self.leader.log().clone();
            log.truncate_to(end).unwrap();
            if log.last_voter_set().is_some_and(|set| set.is_voter(&voter)) {
                candidates.push((voter, end, log));
            }
        }
        if candidates.is_empty() {
            if must {
                // Nobody can take over yet: let the other voters catch up a little.
                let others: Vec<ReplicaKey> = self
                    .leader
                    .current_voter_set()
                    .voter_keys()
                    .into_iter()
                    .filter(|voter| voter.id() != old_id)
                    .collect();
                for voter in others {
                    self.fetch(voter, 3, None, 5);
                }
            }
            return;
        }
        let (voter, end, log) = candidates.swap_remove(pick % candidates.len());
        let truncated = self.shadow.range(end..).count();
        self.stats.truncated_voter_sets += truncated;
        self.shadow.split_off(&end);
        let epoch = self.leader.epoch() + 1;
        self.leader = LeaderState::new(local(voter.id()), epoch, log).unwrap();
        if self.shadow_last_offset() == -1 {
            // Only the bootstrap checkpoint names the voters: the new leader writes them into
            // the log after its LeaderChange and KRaftVersion records.
            assert_eq!(self.leader.log_end_offset(), end + 3);
            let set = self.shadow_last().clone();
            self.shadow.insert(end + 2, set);
        } else {
            // Only the LeaderChange: the voter set is known from the log and unchanged.
            assert_eq!(self.leader.log_end_offset(), end + 1);
        }
        // Followers past the cut diverged and truncate to it; the new leader is at its end.
        for offset in self.ends.values_mut() {
            *offset = (*offset).min(end);
        }
        self.ends.remove(&voter);
        self.epoch_hw = None;
        self.stats.leader_changes += 1;
    }

    fn shadow_last_offset(&self) -> i64 {
        *self.shadow.keys().next_back().unwrap()
    }

    fn shadow_last(&self) -> &BTreeSet<ReplicaKey> {
        self.shadow.values().next_back().unwrap()
    }

    fn check(&mut self) {
        self.stats.steps += 1;
        let hw = self.leader.high_watermark();
        // HW monotonic within the epoch and across leaders once known.
        match (self.epoch_hw, hw) {
            (Some(old), Some(new)) => assert!(new >= old, "HW went from {old} to {new}"),
            (Some(old), None) => panic!("HW {old} became unknown"),
            (None, Some(new)) => assert!(
                new >= self.max_hw,
                "new leader HW {new} below {}",
                self.max_hw
            ),
            (None, None) => {}
        }
        self.epoch_hw = hw;
        if let Some(hw) = hw {
            self.max_hw = self.max_hw.max(hw);
        }

        let v3 = self.leader.describe_quorum(self.now, 3).unwrap();
        round_trips(&v3, 3);
        let partition = &v3.topics[0].partitions[0];
        assert_eq!(partition.high_watermark, hw.unwrap_or(-1));

        // Committed set: the shadow log's voter set at HW − 1.
        let committed = partition.committed_voters.as_ref();
        match hw {
            None => {
                assert!(committed.is_none());
                self.stats.unknown_hw += 1;
            }
            Some(hw) => {
                let (_, want) = self.shadow.range(..hw).next_back().unwrap();
                let committed = committed.expect("known HW, committed voters listed");
                assert!(!committed.is_empty());
                let keys: BTreeSet<ReplicaKey> =
                    self.leader.committed_voter_set().unwrap().voter_keys();
                assert_eq!(&keys, want, "committed set at HW {hw}");
                assert_eq!(committed.len(), want.len());
                let current_ids: Vec<i32> = partition
                    .current_voters
                    .iter()
                    .map(|r| r.replica_id)
                    .collect();
                if want.iter().map(ReplicaKey::id).collect::<Vec<_>>() != current_ids {
                    self.stats.committed_differs_from_current += 1;
                }
                for (entry, key) in committed.iter().zip(want) {
                    assert_eq!(entry.replica_id, key.id());
                    let agrees = |r: &&describe_quorum_response::ReplicaState| {
                        r.replica_id == key.id()
                            && (r.replica_directory_id == key.directory_id_or_zero()
                                || r.replica_directory_id.is_zero()
                                || key.directory_id().is_none())
                    };
                    let exact = |r: &&describe_quorum_response::ReplicaState| {
                        r.replica_id == key.id()
                            && r.replica_directory_id == key.directory_id_or_zero()
                    };
                    if let Some(live) = partition.current_voters.iter().find(agrees) {
                        assert_eq!(entry, live);
                    } else if let Some(live) = partition.observers.iter().find(exact) {
                        assert_eq!(entry, live);
                        self.stats.committed_from_observer += 1;
                    } else {
                        assert_eq!(entry, &entry_sentinel(key));
                        self.stats.committed_sentinel += 1;
                    }
                }
            }
        }

        // Older versions: exactly what a leader without committed voters writes.
        for version in 0..=2 {
            let built = self.leader.describe_quorum(self.now, version).unwrap();
            let bytes = built.encode_to_bytes(version).unwrap();
            assert_eq!(
                bytes,
                legacy_response(&self.leader, self.now, version)
                    .encode_to_bytes(version)
                    .unwrap()
            );
            let mut same = v3.clone(); // committed voters left in: the encoder drops them
            same.nodes.retain(|n| {
                partition
                    .current_voters
                    .iter()
                    .any(|r| r.replica_id == n.node_id)
            });
            if version < 2 {
                same.nodes.clear();
                let p = &mut same.topics[0].partitions[0];
                for r in p
                    .current_voters
                    .iter_mut()
                    .chain(p.observers.iter_mut())
                    .chain(p.committed_voters.iter_mut().flatten())
                {
                    r.replica_directory_id = Uuid::ZERO;
                }
            }
            assert_eq!(
                same.encode_to_bytes(version).unwrap(),
                bytes,
                "v3 answer written at v{version}"
            );
            if self.stats.steps % 8 == 0 {
                round_trips(&built, version); // bytes and JSON at old versions, now and then
            }
        }
    }
}

fn entry_sentinel(key: &ReplicaKey) -> describe_quorum_response::ReplicaState {
    entry(key.id(), key.directory_id_or_zero(), -1, -1, -1)
}

/// The DescribeQuorum answer as built before v3 existed, from the leader's replica states:
/// the model's current voters and observers only.
fn legacy_response(leader: &LeaderState, now: i64, version: i16) -> DescribeQuorumResponse {
    let render = |state: &kafka_codec::quorum::ReplicaState| {
        let is_leader = state.key().id() == leader.leader_id();
        describe_quorum_response::ReplicaState::default()
            .with_replica_id(state.key().id())
            .with_replica_directory_id(if version >= 2 {
                state.key().directory_id_or_zero()
            } else {
                Uuid::ZERO
            })
            .with_log_end_offset(state.end_offset().unwrap_or(-1))
            .with_last_fetch_timestamp(if is_leader {
                now
            } else {
                state.last_fetch_timestamp().unwrap_or(-1)
            })
            .with_last_caught_up_timestamp(if is_leader {
                now
            } else {
                state.last_caught_up_timestamp().unwrap_or(-1)
            })
    };
    DescribeQuorumResponse::default()
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_leader_id(leader.leader_id())
                .with_leader_epoch(leader.epoch())
                .with_high_watermark(leader.high_watermark().unwrap_or(-1))
                .with_current_voters(leader.voter_states().map(render).collect())
                .with_observers(
                    leader.observer_states().map(render).collect(),
                )])])
        .with_nodes(if version >= 2 {
            leader
                .voter_states()
                .map(|state| {
                    Node::default()
                        .with_node_id(state.key().id())
                        .with_listeners(state.listeners().to_describe_quorum_listeners())
                })
                .collect()
        } else {
            vec![]
        })
}

impl Stats {
    fn add(&mut self, s: &Stats) {
        self.steps += s.steps;
        self.committed_differs_from_current += s.committed_differs_from_current;
        self.committed_from_observer += s.committed_from_observer;
        self.committed_sentinel += s.committed_sentinel;
        self.unknown_hw += s.unknown_hw;
        self.self_removals += s.self_removals;
        self.leader_changes += s.leader_changes;
        self.truncated_voter_sets += s.truncated_voter_sets;
    }
}

/// Runs one history, checking the invariants after every step.
fn run_history(ops: &[Op]) -> Stats {
    let mut run = Run::new();
    run.check();
    for op in ops {
        run.step(op);
        run.check();
    }
    run.stats
}

#[test]
fn committed_voters_hold_their_invariants_over_random_histories() {
    let seed: u64 = std::env::var("KAFKA_CODEC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xc0_ffee);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: SEQUENCES,
        // The seed makes every run the same; nothing to remember between runs.
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let total = RefCell::new(Stats::default());
    let histories = proptest::collection::vec(op(), 1..=2 * STEPS);
    let result = runner.run(&histories, |ops| {
        total.borrow_mut().add(&run_history(&ops));
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, ops)) => panic!(
            "seed {seed}: a history of {} steps breaks an invariant: {reason}\n{ops:#?}",
            ops.len()
        ),
        Err(other) => panic!("seed {seed}: {other}"),
    }
    let total = total.into_inner();
    eprintln!("{total:?}");
    // The generator must reach the interesting states, not just the steady one.
    assert!(total.committed_differs_from_current > 100, "{total:?}");
    assert!(total.committed_from_observer > 20, "{total:?}");
    assert!(total.committed_sentinel > 20, "{total:?}");
    assert!(total.unknown_hw > 100, "{total:?}");
    assert!(total.self_removals > 10, "{total:?}");
    assert!(total.leader_changes > 50, "{total:?}");
    assert!(total.truncated_voter_sets > 0, "{total:?}");
}
