//! [`LeaderState`]: what the quorum leader knows about every replica, its high watermark, and
//! the committed voter set derived from them.

use super::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LogRecord, QuorumError, Rejection,
    ReplicaKey, VoterNode, VoterSet,
};
use crate::messages::{leader_change_message, KRaftVersionRecord, LeaderChangeMessage};
use std::collections::BTreeMap;

/// An observer that has not fetched for this long (ms) is dropped when observers are listed.
pub const OBSERVER_SESSION_TIMEOUT_MS: i64 = 300_000;

/// The leader's view of one replica (voter or observer).
///
/// Times are wall-clock milliseconds on the leader; `None` means "never" (reported as `-1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaState {
    key: ReplicaKey,
    listeners: Endpoints,
    end_offset: Option<i64>,
    last_fetch_timestamp: Option<i64>,
    last_fetch_leader_log_end_offset: Option<i64>,
    last_caught_up_timestamp: Option<i64>,
    has_acknowledged_leader: bool,
}

impl ReplicaState {
    fn new(key: ReplicaKey, listeners: Endpoints) -> Self {
        ReplicaState {
            key,
            listeners,
            end_offset: None,
            last_fetch_timestamp: None,
            last_fetch_leader_log_end_offset: None,
            last_caught_up_timestamp: None,
            has_acknowledged_leader: false,
        }
    }

    /// The replica's key. For a voter this is the key from the voter set.
    pub fn key(&self) -> ReplicaKey {
        self.key
    }

    /// Listeners: the voter set's endpoints for a voter, empty for an observer.
    pub fn listeners(&self) -> &Endpoints {
        &self.listeners
    }

    /// The replica's log end offset as last reported (its last fetch offset; for the leader,
    /// its own log end offset).
    pub fn end_offset(&self) -> Option<i64> {
        self.end_offset
    }

    /// When the replica last fetched.
    pub fn last_fetch_timestamp(&self) -> Option<i64> {
        self.last_fetch_timestamp
    }

    /// The latest time at which the replica was known to have everything the leader had.
    pub fn last_caught_up_timestamp(&self) -> Option<i64> {
        self.last_caught_up_timestamp
    }

    /// The leader's log end offset at the replica's previous fetch.
    pub fn last_fetch_leader_log_end_offset(&self) -> Option<i64> {
        self.last_fetch_leader_log_end_offset
    }

    /// Whether the replica has fetched in this epoch (or is the leader).
    pub fn has_acknowledged_leader(&self) -> bool {
        self.has_acknowledged_leader
    }

    /// Whether a replica presenting `key` is this one (this entry's key is the stored side).
    pub fn matches_key(&self, key: &ReplicaKey) -> bool {
        self.key.matches(key)
    }

    /// A follower fetched at `fetch_offset` at time `now_ms`; `leader_end_offset` is the
    /// leader's log end offset at that moment.
    fn update_follower_state(
        &mut self,
        now_ms: i64,
        fetch_offset: i64,
        leader_end_offset: Option<i64>,
    ) {
        // The caught-up time is updated before the fetch time so that the previous fetch time
        // can be credited: a replica that now reached the leader's end offset as of its
        // previous fetch was caught up at the moment of that previous fetch.
        if let Some(leader_end) = leader_end_offset {
            if fetch_offset >= leader_end {
                self.last_caught_up_timestamp = self.last_caught_up_timestamp.max(Some(now_ms));
            } else if self
                .last_fetch_leader_log_end_offset
                .is_some_and(|previous| previous > 0)
                && Some(fetch_offset) >= self.last_fetch_leader_log_end_offset
            {
                self.last_caught_up_timestamp =
                    self.last_caught_up_timestamp.max(self.last_fetch_timestamp);
            }
            self.last_fetch_leader_log_end_offset = Some(leader_end);
        }
        self.last_fetch_timestamp = self.last_fetch_timestamp.max(Some(now_ms));
        // May move backwards (the follower truncated); the leader just records it.
        self.end_offset = Some(fetch_offset);
        self.has_acknowledged_leader = true;
    }
}

/// Where the live state reported for a committed voter comes from (§6 of the design).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommittedVoterSource<'a> {
    /// A current voter entry that matches the committed voter's key.
    CurrentVoter(&'a ReplicaState),
    /// An observer entry with exactly the committed voter's key.
    Observer(&'a ReplicaState),
    /// No live entry: reported with `-1` sentinels.
    Absent,
}

/// One member of the committed voter set with the live state reported for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommittedVoterState<'a> {
    /// The voter as the committed voter set lists it (key and endpoints).
    pub node: &'a VoterNode,
    /// The live entry it is reported with.
    pub source: CommittedVoterSource<'a>,
}

impl<'a> CommittedVoterState<'a> {
    /// The live replica state, if any.
    pub fn state(&self) -> Option<&'a ReplicaState> {
        match self.source {
            CommittedVoterSource::CurrentVoter(state) | CommittedVoterSource::Observer(state) => {
                Some(state)
            }
            CommittedVoterSource::Absent => None,
        }
    }
}

/// The local replica that won the election.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalReplica {
    /// Its key (with its directory id, if it has one).
    pub key: ReplicaKey,
    /// Its own listeners (what it would write into a `VotersRecord` about itself).
    pub listeners: Endpoints,
    /// The `kraft.version` range it supports.
    pub supported_kraft_versions: (i16, i16),
}

/// The quorum leader's state for one epoch: the log it appends to, every replica's progress,
/// the high watermark, and the current and committed voter sets.
///
/// Sans-IO and deterministic: the caller passes the clock (`now_ms`) and drives fetches and
/// appends; replicas are kept in [`ReplicaKey`] order. See the [module documentation](super)
/// for the semantics.
#[derive(Debug, Clone)]
pub struct LeaderState {
    local: LocalReplica,
    epoch: i32,
    epoch_start_offset: i64,
    high_watermark: Option<i64>,
    voter_states: BTreeMap<i32, ReplicaState>,
    observer_states: BTreeMap<ReplicaKey, ReplicaState>,
    log: ControlRecordStateMachine,
}

impl LeaderState {
    /// The local replica becomes leader of `epoch` with the log `log` (everything it has
    /// read, committed or not).
    ///
    /// Every voter of the log's last voter set (or the static set) gets an entry; the epoch
    /// starts at the log end offset and the high watermark is unknown — a new leader never
    /// reuses the one it knew as a follower. The leader then appends the start-of-epoch
    /// control batch at the epoch start offset: a `LeaderChangeMessage` and, when
    /// `kraft.version ≥ 1` and either the voter set is known only from the bootstrap
    /// checkpoint or the leader's own entry differs from `local`, a `KRaftVersionRecord` and a
    /// `VotersRecord` with the leader's entry brought up to date.
    ///
    /// Fails if there is no voter set at all, if `local` is not one of the voters, or if
    /// `kraft.version ≥ 1` and the log holds no `VotersRecord`.
    pub fn new(
        local: LocalReplica,
        epoch: i32,
        log: ControlRecordStateMachine,
    ) -> Result<Self, QuorumError> {
        let voters = log.last_voter_set().ok_or(QuorumError::NoVoterSet)?.clone();
        if !voters.is_voter(&local.key) {
            return Err(QuorumError::NotAVoter(local.key));
        }
        let kraft_version = log.kraft_version();
        let mut start_batch = vec![ControlRecord::leader_change(&LeaderChangeMessage {
            version: 0,
            leader_id: local.key.id(),
            voters: voters
                .voter_ids()
                .map(|id| leader_change_message::Voter {
                    voter_id: id,
                    ..Default::default()
                })
                .collect(),
            // The model does not simulate the vote; it records the leader's own vote.
            granting_voters: vec![leader_change_message::Voter {
                voter_id: local.key.id(),
                ..Default::default()
            }],
            ..Default::default()
        })?];
        if kraft_version >= 1 {
            let last_offset = log
                .last_voter_set_offset()
                .ok_or(QuorumError::NoVotersRecord)?;
            let own = voters.node(local.key.id()).expect("the leader is a voter");
            let current_self = VoterNode::new(
                own.key(),
                local.listeners.clone(),
                local.supported_kraft_versions,
            );
            if last_offset == -1 || *own != current_self {
                let updated = voters.with_updated_voter(current_self)?;
                start_batch.push(ControlRecord::kraft_version(&KRaftVersionRecord {
                    version: 0,
                    k_raft_version: kraft_version,
                    ..Default::default()
                })?);
                start_batch.push(ControlRecord::voters(&updated.to_voters_record())?);
            }
        }

        let mut voter_states = BTreeMap::new();
        for node in voters.nodes() {
            let mut state = ReplicaState::new(node.key(), node.listeners().clone());
            if node.is_voter(&local.key) {
                state.has_acknowledged_leader = true;
            }
            voter_states.insert(node.key().id(), state);
        }
        let mut leader = LeaderState {
            local,
            epoch,
            epoch_start_offset: log.next_offset(),
            high_watermark: None,
            voter_states,
            observer_states: BTreeMap::new(),
            log,
        };
        leader.append(start_batch.into_iter().map(LogRecord::Control).collect())?;
        Ok(leader)
    }

    /// The local replica.
    pub fn local(&self) -> &LocalReplica {
        &self.local
    }

    /// The leader's id.
    pub fn leader_id(&self) -> i32 {
        self.local.key.id()
    }

    /// The leader epoch.
    pub fn epoch(&self) -> i32 {
        self.epoch
    }

    /// The offset of the epoch's first record (the `LeaderChangeMessage`).
    pub fn epoch_start_offset(&self) -> i64 {
        self.epoch_start_offset
    }

    /// The leader's log end offset.
    pub fn log_end_offset(&self) -> i64 {
        self.log.next_offset()
    }

    /// The high watermark (exclusive: offsets below it are committed), once known.
    pub fn high_watermark(&self) -> Option<i64> {
        self.high_watermark
    }

    /// The control-record view of the leader's log.
    pub fn log(&self) -> &ControlRecordStateMachine {
        &self.log
    }

    /// The leader's latest voter set, committed or not (it takes effect when appended).
    pub fn current_voter_set(&self) -> &VoterSet {
        self.log
            .last_voter_set()
            .expect("a leader always has a voter set")
    }

    /// Entries of the current voters, in id order.
    pub fn voter_states(&self) -> impl Iterator<Item = &ReplicaState> {
        self.voter_states.values()
    }

    /// The current voter entry with this id, if any.
    pub fn voter_state(&self, id: i32) -> Option<&ReplicaState> {
        self.voter_states.get(&id)
    }

    /// Entries of the observers (including demoted voters and, while it removes itself, the
    /// leader), in key order. Expired observers are only dropped by
    /// [`LeaderState::expire_observers`] and [`LeaderState::describe_quorum`].
    pub fn observer_states(&self) -> impl Iterator<Item = &ReplicaState> {
        self.observer_states.values()
    }

    /// The voter set committed at the current high watermark: the last voter set written at
    /// an offset `< HW` (looked up at `HW - 1`, inclusive), or the static set when the log has
    /// none that old. `None` while the high watermark is unknown.
    pub fn committed_voter_set(&self) -> Option<&VoterSet> {
        let hw = self.high_watermark?;
        self.log
            .voter_set_at_offset(hw - 1)
            .expect("HW never exceeds the log end offset")
            .or(self.log.voter_set_history().static_voters())
    }

    /// The committed voters with the live entry each is reported with, in id order; `None`
    /// while the high watermark is unknown.
    ///
    /// For each committed voter: the current voter entry with that id if the two keys
    /// [agree](ReplicaKey::agrees_with) (equal directory ids, or one side has none), else the
    /// observer entry with exactly that key, else nothing (reported with `-1` sentinels).
    /// Nothing is copied and nothing is read from the log: one history lookup plus one map
    /// lookup per committed voter.
    pub fn committed_voter_states(&self) -> Option<Vec<CommittedVoterState<'_>>> {
        let committed = self.committed_voter_set()?;
        Some(
            committed
                .nodes()
                .map(|node| {
                    let key = node.key();
                    let source = match self.voter_states.get(&key.id()) {
                        Some(state) if state.key().agrees_with(&key) => {
                            CommittedVoterSource::CurrentVoter(state)
                        }
                        _ => match self.observer_states.get(&key) {
                            Some(state) => CommittedVoterSource::Observer(state),
                            None => CommittedVoterSource::Absent,
                        },
                    };
                    CommittedVoterState { node, source }
                })
                .collect(),
        )
    }

    /// Whether the leader should resign: the newest voter set no longer contains it and that
    /// set is committed.
    pub fn must_resign(&self) -> bool {
        let Some(hw) = self.high_watermark else {
            return false;
        };
        !self.current_voter_set().is_voter(&self.local.key)
            && self.log.last_voter_set_offset().is_some_and(|at| at < hw)
    }

    /// Appends `count` data records; returns the first one's offset.
    pub fn append_data(&mut self, count: usize) -> Result<i64, QuorumError> {
        self.append(vec![LogRecord::Data; count])
    }

    /// Appends a control batch; returns its base offset. A `VotersRecord` in it changes the
    /// current voter set immediately (uncommitted). No reconfiguration rules are checked here
    /// beyond the log's own (overlapping majorities); see [`LeaderState::add_voter`].
    pub fn append_control(&mut self, records: Vec<ControlRecord>) -> Result<i64, QuorumError> {
        self.append(records.into_iter().map(LogRecord::Control).collect())
    }

    /// Appends a `VotersRecord` for `voters`; returns its offset.
    pub fn append_voter_set(&mut self, voters: &VoterSet) -> Result<i64, QuorumError> {
        self.append_control(vec![ControlRecord::voters(&voters.to_voters_record())?])
    }

    /// Accepts an AddVoter request: appends the current voter set plus `node`; returns the
    /// `VotersRecord`'s offset.
    ///
    /// Like Kafka, only one reconfiguration may be in flight: fails unless the high watermark
    /// is known, `kraft.version ≥ 1`, the log holds a `VotersRecord` and the newest one is
    /// committed. (Kafka also checks that the new voter is a caught-up observer; the model
    /// leaves that to the caller.)
    pub fn add_voter(&mut self, node: VoterNode) -> Result<i64, QuorumError> {
        let next = self.reconfigurable_voter_set()?.with_voter(node)?;
        self.append_voter_set(&next)
    }

    /// Accepts a RemoveVoter request for exactly `key` (same rules as
    /// [`LeaderState::add_voter`]). The leader may remove itself: it becomes an observer at
    /// once and resigns once the removal commits ([`LeaderState::must_resign`]).
    pub fn remove_voter(&mut self, key: &ReplicaKey) -> Result<i64, QuorumError> {
        let next = self.reconfigurable_voter_set()?.without_voter(key)?;
        self.append_voter_set(&next)
    }

    /// Accepts an UpdateVoter request: replaces the listeners and supported versions of the
    /// voter matching `node`'s key (same rules as [`LeaderState::add_voter`]).
    pub fn update_voter(&mut self, node: VoterNode) -> Result<i64, QuorumError> {
        let next = self.reconfigurable_voter_set()?.with_updated_voter(node)?;
        self.append_voter_set(&next)
    }

    fn reconfigurable_voter_set(&self) -> Result<VoterSet, QuorumError> {
        self.check_reconfigurable()?;
        Ok(self.current_voter_set().clone())
    }

    /// Whether a voter change may start now (Kafka's order of checks): the high watermark
    /// is known, `kraft.version ≥ 1`, the log holds a `VotersRecord` and the newest one is
    /// committed.
    pub fn check_reconfigurable(&self) -> Result<(), QuorumError> {
        let hw = self
            .high_watermark
            .ok_or(QuorumError::ReconfigurationRejected(
                Rejection::HighWatermarkUnknown,
            ))?;
        if self.log.kraft_version() < 1 {
            return Err(QuorumError::ReconfigurationRejected(
                Rejection::StaticVoters,
            ));
        }
        match self.log.last_voter_set_offset() {
            None => Err(QuorumError::ReconfigurationRejected(
                Rejection::NoVotersRecord,
            )),
            Some(offset) if offset >= hw => Err(QuorumError::ReconfigurationRejected(
                Rejection::UncommittedVoterChange { offset },
            )),
            Some(_) => Ok(()),
        }
    }

    /// Whether the replica with exactly this key may join the voters, by Kafka's rule: it
    /// is an observer that has caught up at least once and fetched within the last hour.
    pub fn is_replica_caught_up(&self, key: &ReplicaKey, now_ms: i64) -> bool {
        const AN_HOUR_MS: i64 = 3_600_000;
        self.observer_states.get(key).is_some_and(|state| {
            state.last_caught_up_timestamp.is_some_and(|t| t > 0)
                && state
                    .last_fetch_timestamp
                    .is_some_and(|t| t > 0 && t > now_ms - AN_HOUR_MS)
        })
    }

    /// A follower or observer fetched at `fetch_offset` at `now_ms`; returns whether the high
    /// watermark moved.
    ///
    /// Only valid fetch positions reach the leader's state (no divergence, no snapshot
    /// redirect), so `fetch_offset` must lie in `0..=log_end_offset`. A negative id (a
    /// consumer-style fetch) is ignored; the leader's own id is an error. The replica is
    /// matched to the current voter with its id if that voter's key
    /// [matches](ReplicaKey::matches), else to (or created as) the observer with exactly this
    /// key. Only a voter's fetch can move the high watermark.
    pub fn update_replica_state(
        &mut self,
        key: ReplicaKey,
        now_ms: i64,
        fetch_offset: i64,
    ) -> Result<bool, QuorumError> {
        if key.id() < 0 {
            return Ok(false);
        }
        if key.id() == self.local.key.id() {
            return Err(QuorumError::FetchFromLeader(key));
        }
        let end = self.log.next_offset();
        if !(0..=end).contains(&fetch_offset) {
            return Err(QuorumError::InvalidFetchOffset {
                offset: fetch_offset,
                log_end_offset: end,
            });
        }
        let leader_end = self.local_state().and_then(|state| state.end_offset);
        let is_voter = self
            .voter_states
            .get(&key.id())
            .is_some_and(|state| state.matches_key(&key));
        let state = if is_voter {
            self.voter_states.get_mut(&key.id()).expect("checked above")
        } else {
            self.observer_states
                .entry(key)
                .or_insert_with(|| ReplicaState::new(key, Endpoints::empty()))
        };
        state.update_follower_state(now_ms, fetch_offset, leader_end);
        Ok(is_voter && self.maybe_update_high_watermark())
    }

    /// Drops observers that have not fetched for [`OBSERVER_SESSION_TIMEOUT_MS`] (those that
    /// never fetched count as having fetched at time `-1`), except the leader itself.
    pub fn expire_observers(&mut self, now_ms: i64) {
        let local = self.local.key;
        self.observer_states.retain(|key, state| {
            *key == local
                || now_ms - state.last_fetch_timestamp.unwrap_or(-1) < OBSERVER_SESSION_TIMEOUT_MS
        });
    }

    /// The leader's own entry: its voter entry, or its observer entry while not a voter.
    fn local_state(&self) -> Option<&ReplicaState> {
        let key = self.local.key;
        match self.voter_states.get(&key.id()) {
            Some(state) if state.matches_key(&key) => Some(state),
            _ => self.observer_states.get(&key),
        }
    }

    fn append(&mut self, records: Vec<LogRecord>) -> Result<i64, QuorumError> {
        let base = self.log.append(&records)?;
        self.update_local_state();
        Ok(base)
    }

    /// After an append: record the leader's end offset, apply the newest voter set, and
    /// recompute the high watermark.
    fn update_local_state(&mut self) -> bool {
        let end = self.log.next_offset();
        let key = self.local.key;
        let state = match self.voter_states.get(&key.id()) {
            Some(state) if state.matches_key(&key) => {
                self.voter_states.get_mut(&key.id()).expect("present")
            }
            _ => self
                .observer_states
                .entry(key)
                .or_insert_with(|| ReplicaState::new(key, Endpoints::empty())),
        };
        // The leader's log only grows while it leads.
        debug_assert!(state.end_offset.is_none_or(|previous| previous <= end));
        state.end_offset = Some(end);
        self.update_voter_and_observer_states();
        self.maybe_update_high_watermark()
    }

    /// Makes the voter entries exactly the nodes of the newest voter set: nodes keep the
    /// state they had (as a voter or an observer) under their new key and endpoints; voters
    /// that left become observers with no listeners.
    fn update_voter_and_observer_states(&mut self) {
        let voters = self.current_voter_set().clone();
        let mut old_voters = std::mem::take(&mut self.voter_states);
        let mut new_voters = BTreeMap::new();
        for node in voters.nodes() {
            let key = node.key();
            let existing = match old_voters.get(&key.id()) {
                Some(state) if state.matches_key(&key) => old_voters.remove(&key.id()),
                _ => self.observer_states.get(&key).cloned(),
            };
            let mut state =
                existing.unwrap_or_else(|| ReplicaState::new(key, node.listeners().clone()));
            // A voter id that changed directory in one step: its old state is dropped, not
            // demoted, because demotion below is by id.
            old_voters.remove(&key.id());
            self.observer_states.remove(&key);
            // Only widens the key (a matched entry without a directory id learns it); an
            // entry found by exact key or a fresh one already has this key.
            state.key = key;
            state.listeners = node.listeners().clone();
            new_voters.insert(key.id(), state);
        }
        self.voter_states = new_voters;
        for (_, mut state) in old_voters {
            state.listeners = Endpoints::empty();
            self.observer_states.entry(state.key).or_insert(state);
        }
    }

    /// Moves the high watermark to the largest offset a majority of the current voters have
    /// reached, if that is past the epoch start offset and above the current high watermark.
    fn maybe_update_high_watermark(&mut self) -> bool {
        let mut states: Vec<&ReplicaState> = self.voter_states.values().collect();
        // Known end offsets descending, unknown last, ties by key.
        states.sort_by(|a, b| match (a.end_offset, b.end_offset) {
            (Some(x), Some(y)) if x != y => y.cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            _ => a.key.cmp(&b.key),
        });
        let Some(candidate) = states[states.len() / 2].end_offset else {
            return false;
        };
        if candidate <= self.epoch_start_offset {
            return false;
        }
        match self.high_watermark {
            Some(hw) if candidate <= hw => false,
            _ => {
                self.high_watermark = Some(candidate);
                true
            }
        }
    }
}
