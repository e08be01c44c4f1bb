//! A reference model of the KRaft quorum leader, down to the **committed voter set** that
//! DescribeQuorum v3 reports.
//!
//! Everything here is in memory and sans-IO: the caller feeds appends, fetches and the clock,
//! and reads back states and `DescribeQuorumResponse`s built with the crate's generated types.
//! Replicas are kept in [`ReplicaKey`] order and listeners in name order, so the same inputs
//! always give the same bytes. Type names follow Kafka's `raft` module in Rust style.
//!
//! # Terms
//!
//! * **HW**, the high watermark, is exclusive: records at offsets `< HW` are committed.
//!   **LEO** is the log end offset, the offset the next record gets.
//! * The **current voter set** is the newest `VotersRecord` in the leader's log, committed or
//!   not (or the static `controller.quorum.voters` set when the log has none). A leader
//!   applies a membership change the moment it *appends* it: from then on the high watermark
//!   is computed over the new set, and `CurrentVoters` and `Nodes` show it.
//! * The **committed voter set** is the voter set in force at offset `HW − 1`: the last
//!   `VotersRecord` at an offset below the HW, or the static set when there is none that old.
//!   It is unknown while the HW is (a new leader learns its HW only once the first record of
//!   its epoch is on a majority).
//!
//! # Pieces
//!
//! * [`ReplicaKey`], [`Endpoints`], [`VoterNode`], [`VoterSet`]: who votes and where they
//!   listen; [`VoterSet::has_overlapping_majority`] is the rule that lets one voter change at
//!   a time.
//! * [`VoterSetHistory`] (on a generic [`LogHistory`]): voter sets by log offset, with
//!   lookups "at or before" an offset and truncation at both ends.
//! * [`ControlRecordStateMachine`]: reads every appended control record; `VotersRecord` and
//!   `KRaftVersionRecord` values are decoded with the generated message types
//!   ([`ControlRecord`]) and feed the histories.
//! * [`LeaderState`]: the leader's per-replica [`ReplicaState`]s (current voters and
//!   observers), its appends, [`LeaderState::update_replica_state`] for fetches, the HW rule,
//!   [`LeaderState::committed_voter_states`] and [`LeaderState::describe_quorum`].
//! * [`PendingVoterChange`], [`VoterChangeError`], [`NewVoterProbe`]: AddRaftVoter and
//!   RemoveRaftVoter requests answered by the leader.
//!
//! # What `CommittedVoters` reports
//!
//! One entry per member of the committed voter set, in id order. Each entry is *the same
//! live state* the response shows elsewhere, taken at response time:
//!
//! 1. the current voter entry with the same id, if its key [agrees](ReplicaKey::agrees_with)
//!    with the committed key (same directory id, or either side has none) — rendered exactly
//!    as in `CurrentVoters`. A committed key without a directory id (a static voter) thus
//!    finds its replica even after an upgrade to `kraft.version` 1 wrote the directory ids
//!    into a `VotersRecord` that is not committed yet;
//! 2. else the observer entry with exactly the committed key (a voter whose removal is not
//!    committed yet keeps fetching as an observer) — rendered exactly as in `Observers`;
//! 3. else **sentinels**: `ReplicaId` and `ReplicaDirectoryId` from the committed key,
//!    `LogEndOffset = −1`, `LastFetchTimestamp = −1`, `LastCaughtUpTimestamp = −1`. The
//!    replica is a committed voter the leader has no live state for (for example a removed
//!    voter that stopped fetching and expired from the observers).
//!
//! The leader's own entry shows the current time as both timestamps wherever it appears,
//! including in `CommittedVoters` while it is an observer removing itself. `CommittedVoters`
//! is `null` while the HW is unknown; with a known HW it is never empty.
//!
//! # Why the committed set is derived at `HW − 1`, not copied when the HW moves
//!
//! An alternative reading of the proposal keeps a second map and overwrites it with a copy
//! of the current voter entries whenever the HW advances. That is wrong in three ways:
//!
//! * **The current set is not committed.** Take voters {1, 2, 3}, leader 1, epoch start 15,
//!   HW 18, and AddVoter(4) appended as a `VotersRecord` at offset 20. The leader counts
//!   voter 4 at once; a fetch by voter 2 at 20 moves the HW to 19. A copy taken then reports
//!   {1, 2, 3, 4} as committed although offset 20 is not committed; the lookup at `HW − 1 =
//!   18` correctly finds {1, 2, 3}, and voter 4 becomes committed only when the HW passes
//!   20. The mirror case (RemoveVoter(3) appended at 20) is the same: the copy drops voter 3
//!   early, the lookup keeps it — shown with its observer entry — until the removal commits.
//! * **Copies go stale.** The next fetch changes the live entry but not the copy, while the
//!   proposal promises entries identical to the live ones.
//! * **Nothing refreshes a copy** when membership changes while the HW stands still, and
//!   before the first HW advance of an epoch there is nothing to copy.
//!
//! Looking up `HW − 1` rather than `HW` matters: a `VotersRecord` sitting exactly at the HW
//! is not committed yet.
//!
//! # Compatibility, and where this stands upstream
//!
//! DescribeQuorum v3 is **provisional**: this crate's implementation of a change Apache
//! Kafka has not released. Kafka 4.4.0 speaks DescribeQuorum v0–v2. What was found upstream:
//!
//! * [KIP-1204] "MetadataQuorumCommand describe to include CommittedVoters" is a *draft*
//!   (JIRA [KAFKA-17243]).
//! * [apache/kafka#20712] ("(WIP) KAFKA-17243", opened 2025-10-16) is open, not merged; an
//!   earlier attempt, [apache/kafka#17871], was closed.
//! * Their first commit, [`420d331`] ("Add new field `CommittedVoters` in
//!   DescribeQuorumResponse.json", on the `KAFKA-17243` branch), raises the response's
//!   `validVersions` to 0–3 and adds to `PartitionData`, **between `CurrentVoters` and
//!   `Observers`**: `CommittedVoters`, `[]ReplicaState`, versions 3+, nullable 3+, ignorable,
//!   not tagged, no explicit default. The request stays 0–2 in that commit (a later commit of
//!   the pull request is said to raise it too).
//!
//! This crate follows that draft: v3 adds `CommittedVoters` (`[]ReplicaState`, nullable,
//! ignorable) right after `CurrentVoters`, so a controller running the draft and this crate
//! read the same bytes alike (`tests/golden/describe_quorum_response_v3_upstream_draft.txt`,
//! written by hand from the draft schema, checks that). Two choices of ours on top: the
//! default is `null`, meaning "the committed set is unknown" (the draft leaves the
//! generator's default, an empty list, which a real committed set never is), and the request
//! also goes to v3 with an unchanged body, so a v3 request says "I can read committed
//! voters".
//!
//! Because the version is in development, the request schema is marked
//! `latestVersionUnstable` (Kafka's marker, which its generator accepts on requests only;
//! the response is answered at the request's version, so the mark covers both, and
//! [`ApiKey::latest_version_unstable`](crate::ApiKey::latest_version_unstable) reports it
//! for the API). [`SupportedVersions::negotiate`](crate::conn::SupportedVersions::negotiate)
//! therefore never picks v3 unless the caller opts in with `negotiate_within`, and
//! [`SupportedVersions::stable`](crate::conn::SupportedVersions::stable) does not advertise
//! it. If upstream changes the layout before it lands, v3 here changes with it.
//!
//! Because the field is ignorable, a response that carries committed voters can be written
//! at v0–v2 and they are dropped silently. The leader builds each response for the version
//! asked, so clients of v0–v2 get exactly the bytes they got before v3 existed (Kafka's own
//! `kafka-metadata-quorum` reads `kafka-codec quorum serve` at v2; see the CLI's
//! `tests/quorum_live.rs`). At v3 `Nodes` also lists committed voters that are no longer
//! current voters (with the committed set's endpoints), so that every voter named in the
//! response has an address; for this reason a *v3-built* response written at v2 may carry
//! such extra nodes, and a server must build per version (as this model does) rather than
//! downgrade a v3 response. At v0/v1 there are no directory ids and no `Nodes`.
//!
//! [KIP-1204]: https://cwiki.apache.org/confluence/display/KAFKA/KIP-1204%3A+MetadataQuorumCommand+describe+to+include+CommittedVoters
//! [KAFKA-17243]: https://issues.apache.org/jira/browse/KAFKA-17243
//! [apache/kafka#20712]: https://github.com/apache/kafka/pull/20712
//! [apache/kafka#17871]: https://github.com/apache/kafka/pull/17871
//! [`420d331`]: https://github.com/peterxcli/kafka/commit/420d3317f01f7e6fc4e17ae84ac0762995043c84
//!
//! # Voter changes over the wire
//!
//! [`LeaderState::handle_add_raft_voter`] and [`LeaderState::handle_remove_raft_voter`]
//! answer AddRaftVoter and RemoveRaftVoter as Kafka's leader does: the same checks in the
//! same order with the same error codes ([`VoterChangeError`]), and an accepted change
//! answered only once its `VotersRecord` commits ([`PendingVoterChange`]). Between the append
//! and that answer the change is current but not committed, which is the window
//! `CommittedVoters` exists to show.
//!
//! # Cost
//!
//! No I/O: the voter-set history and the HW are in memory. Computing the committed set is
//! one ordered-map lookup in the history plus one lookup per committed voter; building a
//! response is linear in voters + observers (plus those lookups).
//!
//! # Example
//!
//! ```
//! use kafka_codec::messages::KRaftVersionRecord;
//! use kafka_codec::quorum::{
//!     ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, ReplicaKey,
//!     VoterNode, VoterSet,
//! };
//! use kafka_codec::Uuid;
//!
//! let node = |id: u8| {
//!     let key = ReplicaKey::new(i32::from(id), Some(Uuid::from_bytes([id; 16])));
//!     VoterNode::new(key, Endpoints::single("CONTROLLER", &format!("c{id}"), 9093), (0, 1))
//! };
//! let key = |id: u8| node(id).key();
//!
//! // A log bootstrapped with kraft.version 1 and voters {1, 2, 3} (entries at offset -1).
//! let mut log = ControlRecordStateMachine::new(None);
//! log.load_snapshot(0, &[
//!     ControlRecord::kraft_version(&KRaftVersionRecord::default().with_k_raft_version(1))?,
//!     ControlRecord::voters(&VoterSet::new([node(1), node(2), node(3)])?.to_voters_record())?,
//! ])?;
//!
//! // Node 1 wins epoch 1 and writes its start-of-epoch batch at offsets 0..=2.
//! let me = LocalReplica { key: key(1), listeners: node(1).listeners().clone(), supported_kraft_versions: (0, 1) };
//! let mut leader = LeaderState::new(me, 1, log)?;
//! assert_eq!(leader.high_watermark(), None);
//! assert!(leader.committed_voter_set().is_none()); // CommittedVoters: null
//!
//! leader.update_replica_state(key(2), 1_000, 3)?; // voter 2 has everything
//! assert_eq!(leader.high_watermark(), Some(3));
//!
//! // AddVoter(4): the VotersRecord at offset 3 is current at once, committed only later.
//! leader.update_replica_state(key(4), 1_000, 3)?; // 4 fetches as an observer first
//! assert_eq!(leader.add_voter(node(4))?, 3);
//! assert_eq!(leader.current_voter_set().len(), 4);
//! assert_eq!(leader.committed_voter_set().unwrap().len(), 3);
//!
//! leader.update_replica_state(key(2), 2_000, 4)?;
//! leader.update_replica_state(key(4), 2_000, 4)?; // 3 of 4 voters have offset 3
//! assert_eq!(leader.high_watermark(), Some(4));
//! assert_eq!(leader.committed_voter_set().unwrap().len(), 4);
//!
//! let response = leader.describe_quorum(2_000, 3)?;
//! let partition = &response.topics[0].partitions[0];
//! let committed = partition.committed_voters.as_ref().unwrap();
//! assert_eq!(committed, &partition.current_voters); // same live entries
//! assert_eq!(committed[2].log_end_offset, -1); // voter 3 never fetched
//! # Ok::<(), kafka_codec::quorum::QuorumError>(())
//! ```

mod control;
mod describe;
mod endpoints;
mod history;
mod leader;
mod replica_key;
mod voter_change;
mod voter_set;

pub use control::{ControlRecord, ControlRecordStateMachine, ControlRecordType, LogRecord};
pub use describe::{
    is_metadata_partition_request, not_leader_response, unknown_partition_response,
    COMMITTED_VOTERS_VERSION, ERROR_NONE, ERROR_NOT_LEADER_OR_FOLLOWER,
    ERROR_UNKNOWN_TOPIC_OR_PARTITION, METADATA_PARTITION, METADATA_TOPIC,
};
pub use endpoints::{Address, Endpoints};
pub use history::{LogHistory, VoterSetHistory};
pub use leader::{
    CommittedVoterSource, CommittedVoterState, LeaderState, LocalReplica, ReplicaState,
    OBSERVER_SESSION_TIMEOUT_MS,
};
pub use replica_key::ReplicaKey;
pub use voter_change::{NewVoterProbe, PendingVoterChange, VoterChangeError};
pub use voter_set::{VoterNode, VoterSet};

use crate::{DecodeError, EncodeError};

/// What can go wrong in the quorum model.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum QuorumError {
    /// A voter set would name the same id twice.
    #[error("voter {0} appears twice in the voter set")]
    DuplicateVoter(i32),
    /// A voter set would be empty.
    #[error("a voter set cannot be empty")]
    EmptyVoterSet,
    /// The key is not a voter (of the set an operation needs it in).
    #[error("replica {0} is not a voter")]
    NotAVoter(ReplicaKey),
    /// Neither the log nor the configuration provides a voter set.
    #[error("no voter set: the log has no VotersRecord and no static voters are configured")]
    NoVoterSet,
    /// `kraft.version ≥ 1` requires a `VotersRecord` in the log or a snapshot.
    #[error("kraft.version is at least 1 but the log holds no VotersRecord")]
    NoVotersRecord,
    /// An offset below `-1` (or a negative log position).
    #[error("invalid offset {0}")]
    InvalidOffset(i64),
    /// History offsets must strictly increase.
    #[error("offset {offset} is not after the last recorded offset {last}")]
    NonIncreasingOffset {
        /// The newest recorded offset.
        last: i64,
        /// The offended offset.
        offset: i64,
    },
    /// A voter set in the log differs from the previous one by more than one voter each way.
    #[error("the voter set at offset {offset} has no overlapping majority with the previous one")]
    NoOverlappingMajority {
        /// Offset of the rejected `VotersRecord`.
        offset: i64,
    },
    /// A lookup at an offset the state machine has not read.
    #[error("offset {offset} has not been read (next offset {next_offset})")]
    OffsetNotRead {
        /// The offset asked for.
        offset: i64,
        /// The next offset to be read.
        next_offset: i64,
    },
    /// A control record key shorter than 4 bytes or with a negative version.
    #[error("corrupt control record key {0:?}")]
    CorruptControlKey(bytes::Bytes),
    /// A control record of another type than the one asked for.
    #[error("expected a {expected:?} control record, found {found:?}")]
    UnexpectedControlRecord {
        /// The type asked for.
        expected: ControlRecordType,
        /// The type in the key.
        found: ControlRecordType,
    },
    /// A control record value did not decode.
    #[error("control record: {0}")]
    Decode(#[from] DecodeError),
    /// A message did not encode.
    #[error("encoding: {0}")]
    Encode(#[from] EncodeError),
    /// A fetch claiming to come from the leader itself.
    #[error("replica {0} fetched with the leader's own id")]
    FetchFromLeader(ReplicaKey),
    /// A fetch offset outside `0..=log end offset`.
    #[error("fetch offset {offset} is outside 0..={log_end_offset}")]
    InvalidFetchOffset {
        /// The fetch offset.
        offset: i64,
        /// The leader's log end offset.
        log_end_offset: i64,
    },
    /// An Add/Remove/UpdateVoter request the leader must refuse now.
    #[error("reconfiguration rejected: {0}")]
    ReconfigurationRejected(Rejection),
    /// A DescribeQuorum version this crate does not know.
    #[error("DescribeQuorum version {0} is not supported")]
    UnsupportedVersion(i16),
}

/// Why a leader cannot start a voter change now ([`LeaderState::check_reconfigurable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The high watermark of this epoch is not known yet, so earlier changes are not fenced.
    HighWatermarkUnknown,
    /// `kraft.version` 0: the voters are the static `controller.quorum.voters` set.
    StaticVoters,
    /// `kraft.version ≥ 1` but the log holds no `VotersRecord`.
    NoVotersRecord,
    /// The newest `VotersRecord` (at `offset`) is not committed: one change at a time.
    UncommittedVoterChange {
        /// Its offset.
        offset: i64,
    },
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::HighWatermarkUnknown => f.write_str("the high watermark is not known yet"),
            Rejection::StaticVoters => {
                f.write_str("kraft.version 0 (static voters) does not support reconfiguration")
            }
            Rejection::NoVotersRecord => f.write_str("the log holds no VotersRecord"),
            Rejection::UncommittedVoterChange { offset } => write!(
                f,
                "the previous voter set change (offset {offset}) is not committed yet"
            ),
        }
    }
}
