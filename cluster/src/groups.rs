//! The group coordinator of classic consumer groups (the protocol of JoinGroup, SyncGroup,
//! Heartbeat and LeaveGroup), and the offsets groups commit. The handlers under
//! [`handlers`](crate::handlers) read their requests into calls on [`Groups`] and write its
//! answers at their version; nothing here knows the wire.
//!
//! The state machine is Kafka's: a group is `Empty`, `PreparingRebalance` (members rejoin
//! until all have or the rebalance timeout passes; the late ones are removed),
//! `CompletingRebalance` (the leader computes the assignment and sends it with its
//! SyncGroup) or `Stable`. A JoinGroup or SyncGroup that must wait holds a one-shot channel
//! here and the connection waits on it with the state unlocked; [`run_timers`] ends
//! rebalances at their deadline and removes members whose session expired.
//!
//! Coordinator: Kafka stores a group in partition `abs(hashCode(group id)) % 50` of
//! `__consumer_offsets` (`offsets.topic.num.partitions`) and its leader coordinates the
//! group; partition `p` of every topic here is led by broker `p mod N`, so the coordinator
//! of a group is broker `(abs(hashCode(id)) % 50) % N`, `hashCode` being Java's
//! `String.hashCode` over the id's UTF-16 code units ([`coordinator`]).
//!
//! Bounded: at most [`GroupLimits::max_groups`] groups (a new one past it:
//! GROUP_MAX_SIZE_REACHED), [`GroupLimits::max_members`] members a group (Kafka's
//! `group.max.size`: GROUP_MAX_SIZE_REACHED), [`GroupLimits::max_metadata_bytes`] of
//! committed offset metadata in one commit (Kafka's `offset.metadata.max.bytes`:
//! OFFSET_METADATA_TOO_LARGE), and [`GroupLimits::max_bytes`] held by all groups together
//! (member ids, protocol metadata, assignments and committed offsets): a join or sync past it
//! gets GROUP_MAX_SIZE_REACHED, a commit OFFSET_METADATA_TOO_LARGE.

use crate::consumer_groups::{
    self, ConsumerGroup, Heartbeat, HeartbeatOutcome, TopicView, TopicsByName,
};
use crate::streams_groups::{self, StreamsGroup};
use crate::Shared;
use kafka_codec::bytes::Bytes;
use kafka_codec::ErrorCode;
use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// Kafka's `offsets.topic.num.partitions` default: the coordinator rule hashes over it.
pub const OFFSETS_TOPIC_PARTITIONS: i32 = 50;

/// The broker coordinating `group_id` in a cluster of `brokers` brokers (see the module
/// docs).
pub fn coordinator(group_id: &str, brokers: usize) -> i32 {
    let hash = group_id.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    // Kafka's `Utils.abs`: MIN_VALUE maps to 0.
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    (abs % OFFSETS_TOPIC_PARTITIONS) % (brokers.max(1) as i32)
}

/// Caps and timeouts of the coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupLimits {
    /// Groups held at once (default 10,000).
    pub max_groups: usize,
    /// Members of one group, pending ones included (Kafka's `group.max.size`; default
    /// 1,000 here, Kafka's is unbounded).
    pub max_members: usize,
    /// Metadata bytes of one committed offset (Kafka's `offset.metadata.max.bytes`, 4096).
    pub max_metadata_bytes: usize,
    /// Bytes all groups hold together: ids, protocol metadata, assignments, offsets
    /// (default 64 MiB).
    pub max_bytes: usize,
    /// The shortest session timeout a member may ask for (Kafka's
    /// `group.min.session.timeout.ms`, 6 s).
    pub min_session_timeout: Duration,
    /// The longest (Kafka's `group.max.session.timeout.ms`, 30 min).
    pub max_session_timeout: Duration,
    /// How long the first rebalance of an empty group waits for more members, again while
    /// more come, up to the rebalance timeout (Kafka's `group.initial.rebalance.delay.ms`,
    /// whose default is 3 s; 0 here by default, as test setups of Kafka commonly set it, so
    /// a lone member's first join completes at once).
    pub initial_rebalance_delay: Duration,
    /// A KIP-848 member's session (Kafka's `group.consumer.session.timeout.ms`, 45 s).
    pub consumer_session_timeout: Duration,
    /// How often a KIP-848 member is told to heartbeat (Kafka's
    /// `group.consumer.heartbeat.interval.ms`, 5 s); it also heartbeats at once after
    /// revoking, so this bounds how long a member waits to learn of a new assignment.
    pub consumer_heartbeat_interval: Duration,
}

impl Default for GroupLimits {
    fn default() -> Self {
        GroupLimits {
            max_groups: 10_000,
            max_members: 1_000,
            max_metadata_bytes: 4096,
            max_bytes: 64 << 20,
            min_session_timeout: Duration::from_secs(6),
            max_session_timeout: Duration::from_secs(30 * 60),
            initial_rebalance_delay: Duration::ZERO,
            consumer_session_timeout: consumer_groups::SESSION_TIMEOUT,
            consumer_heartbeat_interval: consumer_groups::HEARTBEAT_INTERVAL,
        }
    }
}

/// A group's state, named as DescribeGroups and ListGroups name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// No members (offsets may remain).
    Empty,
    /// Members are rejoining.
    PreparingRebalance,
    /// The members joined; the leader's assignment is awaited.
    CompletingRebalance,
    /// Every member has its assignment.
    Stable,
}

impl GroupState {
    /// Kafka's name for it.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

/// What a JoinGroup is answered, whatever its version.
#[derive(Debug, Clone)]
pub struct JoinOutcome {
    /// The error.
    pub error: ErrorCode,
    /// The generation (-1 on error).
    pub generation: i32,
    /// The group's protocol type.
    pub protocol_type: Option<String>,
    /// The protocol chosen.
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// The member's id.
    pub member_id: String,
    /// For the leader: every member's id, instance id and metadata for the chosen protocol.
    pub members: Vec<(String, Option<String>, Bytes)>,
    /// A static leader rejoining a stable group keeps the assignment (v9+).
    pub skip_assignment: bool,
}

impl JoinOutcome {
    fn error(error: ErrorCode, member_id: &str) -> Self {
        JoinOutcome {
            error,
            generation: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id: member_id.into(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// What a SyncGroup is answered.
#[derive(Debug, Clone)]
pub struct SyncOutcome {
    /// The error.
    pub error: ErrorCode,
    /// The group's protocol type and chosen protocol (v5+).
    pub protocol_type: Option<String>,
    /// The protocol chosen.
    pub protocol_name: Option<String>,
    /// The member's assignment.
    pub assignment: Bytes,
}

impl SyncOutcome {
    fn error(error: ErrorCode) -> Self {
        SyncOutcome {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
        }
    }
}

/// An answer now, or one to wait for (the state unlocked).
#[derive(Debug)]
pub enum Answer<T> {
    /// Answer this.
    Now(T),
    /// Wait for the rebalance to get this far; a closed channel means the group went away.
    Wait(oneshot::Receiver<T>),
}

/// One member.
#[derive(Debug)]
pub struct Member {
    /// Its id.
    pub id: String,
    /// Its `group.instance.id` (static membership).
    pub instance_id: Option<String>,
    /// The client id of its JoinGroup.
    pub client_id: String,
    /// The host it joined from.
    pub client_host: String,
    /// Its session timeout.
    pub session_timeout: Duration,
    /// Its rebalance timeout.
    pub rebalance_timeout: Duration,
    /// Its protocols (name, metadata), in its order of preference.
    pub protocols: Vec<(String, Bytes)>,
    /// Its assignment of the current generation.
    pub assignment: Bytes,
    join_waiter: Option<oneshot::Sender<JoinOutcome>>,
    sync_waiter: Option<oneshot::Sender<SyncOutcome>>,
    /// Whether it has rejoined during the current rebalance (its JoinGroup may be gone).
    joined: bool,
    heartbeat_deadline: Instant,
}

impl Member {
    fn bytes(&self) -> usize {
        64 + self.id.len()
            + self.instance_id.as_ref().map_or(0, String::len)
            + self.client_id.len()
            + self.client_host.len()
            + self.assignment.len()
            + self
                .protocols
                .iter()
                .map(|(name, metadata)| name.len() + metadata.len())
                .sum::<usize>()
    }

    /// Its metadata for `protocol`.
    pub fn metadata(&self, protocol: &str) -> Bytes {
        self.protocols
            .iter()
            .find(|(name, _)| name == protocol)
            .map(|(_, metadata)| metadata.clone())
            .unwrap_or_default()
    }
}

/// One committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    /// The offset.
    pub offset: i64,
    /// Its leader epoch (-1: unknown).
    pub leader_epoch: i32,
    /// Its metadata.
    pub metadata: String,
}

/// One group.
#[derive(Debug)]
pub struct Group {
    /// Its state.
    pub state: GroupState,
    /// Its generation.
    pub generation: i32,
    /// Its protocol type (`consumer` for consumers).
    pub protocol_type: Option<String>,
    /// The protocol chosen for the current generation.
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader: Option<String>,
    /// Its members, in the order they joined.
    pub members: Vec<Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, until they join or expire.
    pending: BTreeMap<String, Instant>,
    /// Committed offsets by topic and partition.
    pub offsets: BTreeMap<String, BTreeMap<i32, Committed>>,
    rebalance_deadline: Option<Instant>,
    /// The first rebalance of an empty group waits this long for more members.
    initial_delay: Duration,
    initial: Option<InitialDelay>,
    /// Members of the new generation that have not sent their SyncGroup yet; past
    /// `sync_deadline` (the rebalance timeout) they are removed, as Kafka's pending-sync
    /// timeout does.
    pending_sync: Vec<String>,
    sync_deadline: Option<Instant>,
    bytes: usize,
    /// A KIP-848 consumer group's members and assignments (`None` for a classic group):
    /// such a group has no classic members, and shares the offsets above.
    pub consumer: Option<ConsumerGroup>,
    /// A KIP-1071 streams group's members, topology and assignments (`None` otherwise):
    /// such a group has no classic members, and shares the offsets above.
    pub streams: Option<StreamsGroup>,
}

/// The wait of an empty group's first rebalance (Kafka's `InitialDelayedJoin`).
#[derive(Debug, Clone, Copy)]
struct InitialDelay {
    /// When it ends (or is extended, if members joined meanwhile).
    until: Instant,
    /// Members when this wait began.
    members: usize,
    /// It never goes past the rebalance timeout.
    limit: Instant,
}

impl Group {
    fn new(initial_delay: Duration) -> Self {
        Group {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: Vec::new(),
            pending: BTreeMap::new(),
            offsets: BTreeMap::new(),
            rebalance_deadline: None,
            initial_delay,
            initial: None,
            pending_sync: Vec::new(),
            sync_deadline: None,
            bytes: 0,
            consumer: None,
            streams: None,
        }
    }

    fn member(&self, id: &str) -> Option<usize> {
        self.members.iter().position(|member| member.id == id)
    }

    fn by_instance(&self, instance: &str) -> Option<usize> {
        self.members
            .iter()
            .position(|member| member.instance_id.as_deref() == Some(instance))
    }

    /// Kafka's `isStaticMemberFenced`: the instance id is known under another member id.
    fn fenced(&self, member_id: &str, instance: Option<&str>) -> bool {
        instance
            .and_then(|instance| self.by_instance(instance))
            .is_some_and(|at| self.members[at].id != member_id)
    }

    /// UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID for a member that must be known.
    fn validate_member(&self, member_id: &str, instance: Option<&str>) -> Result<usize, ErrorCode> {
        if self.fenced(member_id, instance) {
            return Err(ErrorCode::FENCED_INSTANCE_ID);
        }
        let at = self.member(member_id).ok_or(ErrorCode::UNKNOWN_MEMBER_ID)?;
        if instance.is_some() && self.members[at].instance_id.as_deref() != instance {
            return Err(ErrorCode::FENCED_INSTANCE_ID);
        }
        Ok(at)
    }

    /// Whether a member with `protocol_type` and `protocols` can be in the group: the type
    /// matches and one protocol is supported by every member (Kafka's `supportsProtocols`).
    fn supports(
        &self,
        protocol_type: &str,
        protocols: &[(String, Bytes)],
        except: Option<usize>,
    ) -> bool {
        let others: Vec<&Member> = self
            .members
            .iter()
            .enumerate()
            .filter(|(at, _)| Some(*at) != except)
            .map(|(_, member)| member)
            .collect();
        if protocol_type.is_empty() || protocols.is_empty() {
            return false;
        }
        if others.is_empty() {
            return true;
        }
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols.iter().any(|(name, _)| {
                others
                    .iter()
                    .all(|member| member.protocols.iter().any(|(theirs, _)| theirs == name))
            })
    }

    /// Kafka's protocol vote: of the protocols every member supports, the one most members
    /// prefer (each votes for the first of its list that all support); ties go to the
    /// first member's preference.
    fn select_protocol(&self) -> Option<String> {
        let first = self.members.first()?;
        let candidates: Vec<&String> = first
            .protocols
            .iter()
            .map(|(name, _)| name)
            .filter(|name| {
                self.members
                    .iter()
                    .all(|member| member.protocols.iter().any(|(theirs, _)| theirs == *name))
            })
            .collect();
        let mut best: Option<(&String, usize)> = None;
        for candidate in &candidates {
            let votes = self
                .members
                .iter()
                .filter(|member| {
                    member
                        .protocols
                        .iter()
                        .map(|(name, _)| name)
                        .find(|name| candidates.contains(name))
                        == Some(candidate)
                })
                .count();
            if best.is_none_or(|(_, most)| votes > most) {
                best = Some((candidate, votes));
            }
        }
        best.map(|(name, _)| name.clone())
    }

    fn all_joined(&self) -> bool {
        self.pending.is_empty() && self.members.iter().all(|member| member.joined)
    }

    /// The current generation's join answer for member `at` (a leader gets the members).
    fn join_answer(&self, at: usize, with_members: bool) -> JoinOutcome {
        let protocol = self.protocol_name.clone().unwrap_or_default();
        JoinOutcome {
            error: ErrorCode::NONE,
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            leader: self.leader.clone().unwrap_or_default(),
            member_id: self.members[at].id.clone(),
            members: if with_members {
                self.members
                    .iter()
                    .map(|member| {
                        (
                            member.id.clone(),
                            member.instance_id.clone(),
                            member.metadata(&protocol),
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            },
            skip_assignment: false,
        }
    }

    fn sync_answer(&self, at: usize) -> SyncOutcome {
        SyncOutcome {
            error: ErrorCode::NONE,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            assignment: self.members[at].assignment.clone(),
        }
    }

    /// Starts a rebalance: pending syncs are told REBALANCE_IN_PROGRESS and the members have
    /// until the longest rebalance timeout to rejoin.
    fn prepare_rebalance(&mut self, now: Instant) {
        let empty = self.state == GroupState::Empty;
        self.pending_sync.clear();
        self.sync_deadline = None;
        if self.state == GroupState::CompletingRebalance {
            for member in &mut self.members {
                member.assignment = Bytes::new();
                if let Some(waiter) = member.sync_waiter.take() {
                    let _ = waiter.send(SyncOutcome::error(ErrorCode::REBALANCE_IN_PROGRESS));
                }
            }
        }
        if self.state != GroupState::PreparingRebalance {
            for member in &mut self.members {
                if member.join_waiter.is_none() {
                    member.joined = false;
                }
            }
        }
        let timeout = self
            .members
            .iter()
            .map(|member| member.rebalance_timeout)
            .max()
            .unwrap_or_default();
        self.state = GroupState::PreparingRebalance;
        self.rebalance_deadline = Some(now + timeout);
        if empty && !self.initial_delay.is_zero() {
            self.initial = Some(InitialDelay {
                until: now + self.initial_delay.min(timeout),
                members: self.members.len(),
                limit: now + timeout,
            });
        }
    }

    /// Ends the rebalance when every member has rejoined.
    fn try_complete_join(&mut self, now: Instant) {
        // The initial delay ends only at its deadline, as Kafka's.
        if self.state == GroupState::PreparingRebalance
            && self.initial.is_none()
            && self.all_joined()
        {
            self.complete_join(now);
        }
    }

    /// Ends the rebalance: members that did not rejoin are removed, the generation moves on,
    /// a protocol is chosen, and every waiting JoinGroup is answered.
    fn complete_join(&mut self, now: Instant) {
        self.members.retain(|member| member.joined);
        self.rebalance_deadline = None;
        self.initial = None;
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol_name = None;
            self.leader = None;
            return;
        }
        if self
            .leader
            .as_ref()
            .is_none_or(|leader| self.member(leader).is_none())
        {
            self.leader = Some(self.members[0].id.clone());
        }
        self.protocol_name = self.select_protocol();
        self.state = GroupState::CompletingRebalance;
        self.pending_sync = self
            .members
            .iter()
            .map(|member| member.id.clone())
            .collect();
        self.sync_deadline = self
            .members
            .iter()
            .map(|member| now + member.rebalance_timeout)
            .max();
        for at in 0..self.members.len() {
            let leader = self.leader.as_deref() == Some(self.members[at].id.as_str());
            let answer = self.join_answer(at, leader);
            let member = &mut self.members[at];
            member.heartbeat_deadline = now + member.session_timeout;
            if let Some(waiter) = member.join_waiter.take() {
                let _ = waiter.send(answer);
            }
        }
    }

    /// Removes member `at` and rebalances what remains.
    fn remove_member(&mut self, at: usize, now: Instant) {
        let member = self.members.remove(at);
        if let Some(waiter) = member.join_waiter {
            let _ = waiter.send(JoinOutcome::error(ErrorCode::UNKNOWN_MEMBER_ID, &member.id));
        }
        if let Some(waiter) = member.sync_waiter {
            let _ = waiter.send(SyncOutcome::error(ErrorCode::UNKNOWN_MEMBER_ID));
        }
        if self.leader.as_deref() == Some(member.id.as_str()) {
            self.leader = None;
        }
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(now);
                self.try_complete_join(now);
            }
            GroupState::PreparingRebalance => self.try_complete_join(now),
            GroupState::Empty => {}
        }
    }

    fn recount(&mut self) -> usize {
        self.bytes = 128
            + self.members.iter().map(Member::bytes).sum::<usize>()
            + self.pending.keys().map(|id| 32 + id.len()).sum::<usize>()
            + self
                .offsets
                .iter()
                .map(|(topic, partitions)| {
                    topic.len()
                        + partitions
                            .values()
                            .map(|committed| 32 + committed.metadata.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
            + self.consumer.as_ref().map_or(0, ConsumerGroup::bytes)
            + self.streams.as_ref().map_or(0, StreamsGroup::bytes);
        self.bytes
    }

    /// The earliest moment something is due: the rebalance deadline, a session expiry.
    fn next_deadline(&self) -> Option<Instant> {
        let sessions = self
            .members
            .iter()
            .filter(|member| member.join_waiter.is_none() && member.sync_waiter.is_none())
            .map(|member| member.heartbeat_deadline);
        sessions
            .chain(self.pending.values().copied())
            .chain(self.rebalance_deadline)
            .chain(self.initial.map(|initial| initial.until))
            .chain(self.sync_deadline)
            .chain(
                self.consumer
                    .as_ref()
                    .and_then(ConsumerGroup::next_deadline),
            )
            .chain(self.streams.as_ref().and_then(StreamsGroup::next_deadline))
            .min()
    }

    /// Does what is due at `now`.
    fn expire(&mut self, now: Instant) {
        if let Some(consumer) = &mut self.consumer {
            consumer.expire(now, None);
        }
        if let Some(streams) = &mut self.streams {
            streams.expire(now);
        }
        self.pending.retain(|_, deadline| *deadline > now);
        if self.sync_deadline.is_some_and(|deadline| deadline <= now) {
            self.sync_deadline = None;
            // Those that never sent their SyncGroup leave; the first removal starts a
            // rebalance, which clears the list.
            for id in std::mem::take(&mut self.pending_sync) {
                if let Some(at) = self.member(&id) {
                    self.remove_member(at, now);
                }
            }
        }
        while let Some(at) = self.members.iter().position(|member| {
            member.join_waiter.is_none()
                && member.sync_waiter.is_none()
                && member.heartbeat_deadline <= now
                && !(self.state == GroupState::PreparingRebalance && member.joined)
        }) {
            self.remove_member(at, now);
        }
        if let Some(initial) = self.initial.filter(|initial| initial.until <= now) {
            if self.members.len() > initial.members && now < initial.limit {
                // Members came during the wait: wait once more for the next ones.
                self.initial = Some(InitialDelay {
                    until: (now + self.initial_delay).min(initial.limit),
                    members: self.members.len(),
                    limit: initial.limit,
                });
                return;
            }
            self.initial = None;
            if self.state == GroupState::PreparingRebalance {
                self.complete_join(now);
            }
            return;
        }
        if self.state == GroupState::PreparingRebalance {
            if self
                .rebalance_deadline
                .is_some_and(|deadline| deadline <= now)
            {
                self.complete_join(now);
            } else {
                self.try_complete_join(now);
            }
        }
    }
}

/// A JoinGroup, read from any version.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    /// The group.
    pub group_id: String,
    /// The member id ("" for a new member).
    pub member_id: String,
    /// Its `group.instance.id` (v5+).
    pub instance_id: Option<String>,
    /// The request header's client id.
    pub client_id: String,
    /// The peer's host.
    pub client_host: String,
    /// The session timeout.
    pub session_timeout_ms: i32,
    /// The rebalance timeout (v0: the session timeout).
    pub rebalance_timeout_ms: i32,
    /// The protocol type.
    pub protocol_type: String,
    /// The protocols and their metadata.
    pub protocols: Vec<(String, Bytes)>,
    /// v4+: a new member gets its id with MEMBER_ID_REQUIRED and joins again with it.
    pub require_known_member_id: bool,
    /// v9+: a static leader rejoining a stable group may skip the assignment.
    pub can_skip_assignment: bool,
}

/// Every group this cluster's coordinators hold.
#[derive(Debug)]
pub struct Groups {
    /// Groups by id.
    pub groups: BTreeMap<String, Group>,
    /// The caps.
    pub limits: GroupLimits,
    bytes: usize,
    ids: RandomState,
    /// With a seed ([`Groups::seed_ids`]), member ids are derived from it and a counter.
    seed: Option<u64>,
    minted: u64,
    /// Per group id, the KIP-848 session timeout and heartbeat interval its configs set
    /// (`consumer.session.timeout.ms`, `consumer.heartbeat.interval.ms`;
    /// `crate::group_configs`), kept in step by the config APIs.
    consumer_timeouts: BTreeMap<String, (Option<Duration>, Option<Duration>)>,
}

impl Groups {
    /// No groups.
    pub fn new(limits: GroupLimits) -> Self {
        Groups {
            groups: BTreeMap::new(),
            limits,
            bytes: 0,
            ids: RandomState::new(),
            seed: None,
            minted: 0,
            consumer_timeouts: BTreeMap::new(),
        }
    }

    /// Derives the member ids minted from here on from `seed` (and how many were minted
    /// before), so that runs with the same seed name the same members.
    pub fn seed_ids(&mut self, seed: u64) {
        self.seed = Some(seed);
    }

    /// Takes `group_id`'s KIP-848 session timeout and heartbeat interval as its configs now
    /// set them (`None`: the coordinator's).
    pub fn set_consumer_timeouts(
        &mut self,
        group_id: &str,
        session: Option<Duration>,
        heartbeat: Option<Duration>,
    ) {
        if session.is_none() && heartbeat.is_none() {
            self.consumer_timeouts.remove(group_id);
        } else {
            self.consumer_timeouts
                .insert(group_id.to_owned(), (session, heartbeat));
        }
    }

    /// `group_id`'s KIP-848 session timeout and heartbeat interval: its configs', else the
    /// coordinator's ([`GroupLimits`]).
    pub fn consumer_timeouts(&self, group_id: &str) -> (Duration, Duration) {
        let own = self.consumer_timeouts.get(group_id);
        (
            own.and_then(|o| o.0)
                .unwrap_or(self.limits.consumer_session_timeout),
            own.and_then(|o| o.1)
                .unwrap_or(self.limits.consumer_heartbeat_interval),
        )
    }

    /// Bytes the groups hold, as counted against [`GroupLimits::max_bytes`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Counts `group`'s bytes again after a change.
    fn recount(&mut self, group_id: &str) {
        if let Some(group) = self.groups.get_mut(group_id) {
            let before = group.bytes;
            let after = group.recount();
            self.bytes = self.bytes + after - before;
        }
    }

    /// Whether `more` bytes still fit.
    fn fits(&self, more: usize) -> bool {
        self.bytes.saturating_add(more) <= self.limits.max_bytes
    }

    /// A member id as Kafka makes one: a prefix, a dash and a random UUID.
    fn mint_id(&mut self, prefix: &str) -> String {
        let id = self.mint_uuid();
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{prefix}-{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    }

    /// A random (version 4) UUID's bytes.
    fn mint_uuid(&mut self) -> [u8; 16] {
        self.minted += 1;
        let mut id = [0u8; 16];
        for (half, bytes) in id.chunks_mut(8).enumerate() {
            let mut hasher = match self.seed {
                // Fixed keys: the same on every run of a build.
                Some(seed) => {
                    let mut hasher = std::hash::DefaultHasher::new();
                    hasher.write_u64(seed);
                    hasher
                }
                None => self.ids.build_hasher(),
            };
            hasher.write_u64(self.minted);
            hasher.write_usize(half);
            bytes.copy_from_slice(&hasher.finish().to_be_bytes());
        }
        id[6] = (id[6] & 0x0f) | 0x40;
        id[8] = (id[8] & 0x3f) | 0x80;
        id
    }

    /// ConsumerGroupHeartbeat of `group_id` (the request checked by
    /// [`validate`](crate::consumer_groups::validate)), `topics` being every topic of the cluster: a KIP-848
    /// group is made by a member joining (epoch 0), and an empty classic group becomes
    /// one, keeping its offsets; a classic group with members is not a consumer group.
    pub fn consumer_heartbeat(
        &mut self,
        group_id: &str,
        request: &Heartbeat,
        topics: &TopicsByName,
        view: &TopicView<'_>,
        now: Instant,
    ) -> HeartbeatOutcome {
        let not_found = || {
            HeartbeatOutcome::error(
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Consumer group {group_id} not found."),
            )
        };
        let joining = request.member_epoch == 0;
        // What the member would hold: its ids and subscription (charged before it is kept).
        let incoming = 256
            + request.member_id.len()
            + request.instance_id.as_ref().map_or(0, String::len)
            + request
                .subscribed_names
                .iter()
                .flatten()
                .map(|name| 16 + name.len())
                .sum::<usize>();
        if (joining || request.subscribed_names.is_some()) && !self.fits(incoming) {
            return HeartbeatOutcome::error(
                ErrorCode::GROUP_MAX_SIZE_REACHED,
                "The coordinator holds as many bytes as it may.",
            );
        }
        match self.groups.get(group_id) {
            None if !joining => return not_found(),
            None => {
                if self.groups.len() >= self.limits.max_groups {
                    return HeartbeatOutcome::error(
                        ErrorCode::GROUP_MAX_SIZE_REACHED,
                        "The coordinator holds as many groups as it may.",
                    );
                }
                let group = Group::new(self.limits.initial_rebalance_delay);
                self.groups.insert(group_id.into(), group);
            }
            Some(group) if group.consumer.is_none() && !joining => return not_found(),
            Some(group) if group.consumer.is_none() && !group.members.is_empty() => {
                return HeartbeatOutcome::error(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Group {group_id} is not a consumer group."),
                );
            }
            Some(_) => {}
        }
        // Kafka's v0 member ids: a random UUID in its base64 form.
        let fresh = kafka_codec::Uuid(self.mint_uuid()).to_string();
        let max_members = self.limits.max_members;
        let session = self.consumer_timeouts(group_id).0;
        let group = self.groups.get_mut(group_id).expect("inserted above");
        if joining
            && group.consumer.as_ref().map_or(0, |c| c.members.len()) >= max_members
            && !group
                .consumer
                .as_ref()
                .is_some_and(|c| c.members.contains_key(&request.member_id))
        {
            return HeartbeatOutcome::error(
                ErrorCode::GROUP_MAX_SIZE_REACHED,
                format!(
                    "The consumer group has reached its maximum capacity of {max_members} members."
                ),
            );
        }
        if group.consumer.is_none() {
            group.protocol_type = Some("consumer".into());
        }
        let consumer = group.consumer.get_or_insert_with(ConsumerGroup::default);
        let outcome = consumer.heartbeat(request, topics, view, || fresh, session, now);
        self.recount(group_id);
        outcome
    }

    /// StreamsGroupHeartbeat of `group_id` (the request checked by
    /// [`validate`](crate::streams_groups::validate)), `topics` being every topic of the
    /// cluster with its partition count: a streams group is made by a member joining
    /// (epoch 0), and an empty classic or consumer group becomes one, keeping its offsets;
    /// a group of another kind with members is not a streams group (Kafka's
    /// `getOrCreateStreamsGroup` and `getStreamsGroupOrThrow`).
    pub fn streams_heartbeat(
        &mut self,
        group_id: &str,
        request: &streams_groups::Heartbeat,
        topics: &BTreeMap<String, i32>,
        settings: streams_groups::Settings,
        now: Instant,
    ) -> streams_groups::HeartbeatOutcome {
        use streams_groups::HeartbeatOutcome as Outcome;
        let joining = request.member_epoch == 0;
        let incoming = 512
            + request.member_id.len()
            + request.instance_id.as_ref().map_or(0, String::len)
            + request
                .topology
                .as_ref()
                .map_or(0, |t| 64 * t.subtopologies.len());
        if joining && !self.fits(incoming) {
            return Outcome::error(
                ErrorCode::GROUP_MAX_SIZE_REACHED,
                "The coordinator holds as many bytes as it may.",
            );
        }
        let other_kind = |group: &Group| {
            !group.members.is_empty()
                || group
                    .consumer
                    .as_ref()
                    .is_some_and(|consumer| !consumer.members.is_empty())
        };
        match self.groups.get(group_id) {
            None if !joining => {
                return Outcome::error(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Streams group {group_id} not found."),
                )
            }
            None => {
                if self.groups.len() >= self.limits.max_groups {
                    return Outcome::error(
                        ErrorCode::GROUP_MAX_SIZE_REACHED,
                        "The coordinator holds as many groups as it may.",
                    );
                }
                let group = Group::new(self.limits.initial_rebalance_delay);
                self.groups.insert(group_id.into(), group);
            }
            Some(group) if group.streams.is_none() && (!joining || other_kind(group)) => {
                return Outcome::error(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Group {group_id} is not a streams group."),
                );
            }
            Some(_) => {}
        }
        let max_members = self.limits.max_members;
        let group = self.groups.get_mut(group_id).expect("inserted above");
        if joining
            && group.streams.as_ref().map_or(0, |s| s.members.len()) >= max_members
            && !group
                .streams
                .as_ref()
                .is_some_and(|s| s.members.contains_key(&request.member_id))
        {
            return Outcome::error(
                ErrorCode::GROUP_MAX_SIZE_REACHED,
                format!(
                    "The streams group has reached its maximum capacity of {max_members} members."
                ),
            );
        }
        if group.streams.is_none() {
            // An empty classic or consumer group becomes a streams group, its offsets kept.
            group.consumer = None;
            group.protocol_type = Some("streams".into());
        }
        let streams = group.streams.get_or_insert_with(StreamsGroup::default);
        let outcome = streams.heartbeat(group_id, request, topics, settings, now);
        self.recount(group_id);
        outcome
    }

    /// The earliest deadline of any group.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.groups.values().filter_map(Group::next_deadline).min()
    }

    /// Ends rebalances past their deadline and removes members whose session expired.
    pub fn expire(&mut self, now: Instant) {
        let due: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, group)| group.next_deadline().is_some_and(|at| at <= now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            if let Some(group) = self.groups.get_mut(&id) {
                group.expire(now);
            }
            self.recount(&id);
        }
    }

    /// JoinGroup.
    pub fn join(&mut self, request: JoinRequest, now: Instant) -> Answer<JoinOutcome> {
        let answer = self.join_inner(&request, now);
        self.recount(&request.group_id);
        answer
    }

    fn join_inner(&mut self, request: &JoinRequest, now: Instant) -> Answer<JoinOutcome> {
        let fail = |error| Answer::Now(JoinOutcome::error(error, &request.member_id));
        if request.group_id.is_empty() {
            return fail(ErrorCode::INVALID_GROUP_ID);
        }
        let session = Duration::from_millis(request.session_timeout_ms.max(0) as u64);
        if request.session_timeout_ms < 0
            || session < self.limits.min_session_timeout
            || session > self.limits.max_session_timeout
        {
            return fail(ErrorCode::INVALID_SESSION_TIMEOUT);
        }
        let rebalance = if request.rebalance_timeout_ms < 0 {
            session
        } else {
            Duration::from_millis(request.rebalance_timeout_ms as u64)
        };
        let incoming = 64
            + request.member_id.len().max(80)
            + request
                .protocols
                .iter()
                .map(|(name, metadata)| name.len() + metadata.len())
                .sum::<usize>();
        if !self.fits(incoming) {
            return fail(ErrorCode::GROUP_MAX_SIZE_REACHED);
        }
        if !self.groups.contains_key(&request.group_id) {
            if !request.member_id.is_empty() {
                return fail(ErrorCode::UNKNOWN_MEMBER_ID);
            }
            if self.groups.len() >= self.limits.max_groups {
                return fail(ErrorCode::GROUP_MAX_SIZE_REACHED);
            }
            if request.protocol_type.is_empty() || request.protocols.is_empty() {
                return fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
            }
            let group = Group::new(self.limits.initial_rebalance_delay);
            self.groups.insert(request.group_id.clone(), group);
        }
        if let Some(group) = self.groups.get_mut(&request.group_id) {
            match &group.consumer {
                // Kafka: a classic member cannot join a consumer group that has members.
                Some(consumer) if !consumer.members.is_empty() => {
                    return fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
                }
                // An empty consumer group becomes a classic one, its offsets kept.
                Some(_) => group.consumer = None,
                None => {}
            }
            match &group.streams {
                // Likewise a streams group.
                Some(streams) if !streams.members.is_empty() => {
                    return fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
                }
                Some(_) => group.streams = None,
                None => {}
            }
        }
        let new_id = if request.member_id.is_empty() {
            let prefix = request
                .instance_id
                .clone()
                .unwrap_or_else(|| request.client_id.clone());
            Some(self.mint_id(&prefix))
        } else {
            None
        };
        let max_members = self.limits.max_members;
        let group = self.groups.get_mut(&request.group_id).expect("inserted");
        let make_member = |id: String| Member {
            id,
            instance_id: request.instance_id.clone(),
            client_id: request.client_id.clone(),
            client_host: request.client_host.clone(),
            session_timeout: session,
            rebalance_timeout: rebalance,
            protocols: request.protocols.clone(),
            assignment: Bytes::new(),
            join_waiter: None,
            sync_waiter: None,
            joined: false,
            heartbeat_deadline: now + session,
        };
        let known = group.member(&request.member_id);
        let static_at = request
            .instance_id
            .as_deref()
            .and_then(|instance| group.by_instance(instance));
        if !group.supports(
            &request.protocol_type,
            &request.protocols,
            known.or(static_at),
        ) {
            return fail(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
        }
        if let Some(new_id) = new_id {
            if let Some(at) = static_at {
                return rejoin_static(group, at, new_id, request, session, rebalance, now);
            }
            if group.members.len() + group.pending.len() >= max_members {
                return fail(ErrorCode::GROUP_MAX_SIZE_REACHED);
            }
            if request.require_known_member_id && request.instance_id.is_none() {
                group.pending.insert(new_id.clone(), now + session);
                return Answer::Now(JoinOutcome::error(ErrorCode::MEMBER_ID_REQUIRED, &new_id));
            }
            return add_member(group, make_member(new_id), &request.protocol_type, now);
        }
        if group.pending.remove(&request.member_id).is_some() {
            if group.members.len() >= max_members {
                return fail(ErrorCode::GROUP_MAX_SIZE_REACHED);
            }
            return add_member(
                group,
                make_member(request.member_id.clone()),
                &request.protocol_type,
                now,
            );
        }
        let at = match group.validate_member(&request.member_id, request.instance_id.as_deref()) {
            Ok(at) => at,
            Err(error) => return fail(error),
        };
        if group.state == GroupState::Empty {
            return fail(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        let same = group.members[at].protocols == request.protocols;
        let leader = group.leader.as_deref() == Some(request.member_id.as_str());
        match group.state {
            GroupState::CompletingRebalance if same => {
                return Answer::Now(group.join_answer(at, leader));
            }
            GroupState::Stable if same && !leader => {
                return Answer::Now(group.join_answer(at, false));
            }
            _ => {}
        }
        let member = &mut group.members[at];
        member.protocols = request.protocols.clone();
        member.session_timeout = session;
        member.rebalance_timeout = rebalance;
        await_join(group, at, now)
    }

    /// SyncGroup.
    #[allow(clippy::too_many_arguments)]
    pub fn sync(
        &mut self,
        group_id: &str,
        generation: i32,
        member_id: &str,
        instance_id: Option<&str>,
        protocol_type: Option<&str>,
        protocol_name: Option<&str>,
        assignments: Vec<(String, Bytes)>,
        now: Instant,
    ) -> Answer<SyncOutcome> {
        let incoming: usize = assignments.iter().map(|(id, a)| id.len() + a.len()).sum();
        let fits = self.fits(incoming);
        let Some(group) = self.groups.get_mut(group_id) else {
            return Answer::Now(SyncOutcome::error(ErrorCode::UNKNOWN_MEMBER_ID));
        };
        let at = match group.validate_member(member_id, instance_id) {
            Ok(at) => at,
            Err(error) => return Answer::Now(SyncOutcome::error(error)),
        };
        if generation != group.generation {
            return Answer::Now(SyncOutcome::error(ErrorCode::ILLEGAL_GENERATION));
        }
        if protocol_type.is_some_and(|t| Some(t) != group.protocol_type.as_deref())
            || protocol_name.is_some_and(|n| Some(n) != group.protocol_name.as_deref())
        {
            return Answer::Now(SyncOutcome::error(ErrorCode::INCONSISTENT_GROUP_PROTOCOL));
        }
        if matches!(
            group.state,
            GroupState::CompletingRebalance | GroupState::Stable
        ) {
            group.pending_sync.retain(|id| id != member_id);
            if group.pending_sync.is_empty() {
                group.sync_deadline = None;
            }
        }
        let answer = match group.state {
            GroupState::Empty => Answer::Now(SyncOutcome::error(ErrorCode::UNKNOWN_MEMBER_ID)),
            GroupState::PreparingRebalance => {
                Answer::Now(SyncOutcome::error(ErrorCode::REBALANCE_IN_PROGRESS))
            }
            GroupState::Stable => {
                let member = &mut group.members[at];
                member.heartbeat_deadline = now + member.session_timeout;
                Answer::Now(group.sync_answer(at))
            }
            GroupState::CompletingRebalance => {
                if !fits {
                    return Answer::Now(SyncOutcome::error(ErrorCode::GROUP_MAX_SIZE_REACHED));
                }
                let (sender, receiver) = oneshot::channel();
                group.members[at].sync_waiter = Some(sender);
                if group.leader.as_deref() == Some(member_id) {
                    let mut given: BTreeMap<String, Bytes> = assignments.into_iter().collect();
                    for member in &mut group.members {
                        member.assignment = given.remove(&member.id).unwrap_or_default();
                    }
                    group.state = GroupState::Stable;
                    for at in 0..group.members.len() {
                        let answer = group.sync_answer(at);
                        let member = &mut group.members[at];
                        member.heartbeat_deadline = now + member.session_timeout;
                        if let Some(waiter) = member.sync_waiter.take() {
                            let _ = waiter.send(answer);
                        }
                    }
                }
                Answer::Wait(receiver)
            }
        };
        self.recount(group_id);
        answer
    }

    /// Heartbeat: the error to answer.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        generation: i32,
        member_id: &str,
        instance_id: Option<&str>,
        now: Instant,
    ) -> ErrorCode {
        let Some(group) = self.groups.get_mut(group_id) else {
            return ErrorCode::UNKNOWN_MEMBER_ID;
        };
        let at = match group.validate_member(member_id, instance_id) {
            Ok(at) => at,
            Err(error) => return error,
        };
        if generation != group.generation {
            return ErrorCode::ILLEGAL_GENERATION;
        }
        let member = &mut group.members[at];
        member.heartbeat_deadline = now + member.session_timeout;
        match group.state {
            GroupState::Empty => ErrorCode::UNKNOWN_MEMBER_ID,
            GroupState::PreparingRebalance => ErrorCode::REBALANCE_IN_PROGRESS,
            GroupState::CompletingRebalance | GroupState::Stable => ErrorCode::NONE,
        }
    }

    /// LeaveGroup: the group's error, and each member's (member id or "" with an instance
    /// id).
    pub fn leave(
        &mut self,
        group_id: &str,
        leaving: &[(String, Option<String>)],
        now: Instant,
    ) -> (ErrorCode, Vec<ErrorCode>) {
        let Some(group) = self.groups.get_mut(group_id) else {
            return (ErrorCode::UNKNOWN_MEMBER_ID, Vec::new());
        };
        let mut errors = Vec::with_capacity(leaving.len());
        for (member_id, instance) in leaving {
            let found = match instance.as_deref() {
                Some(instance) if member_id.is_empty() => group
                    .by_instance(instance)
                    .ok_or(ErrorCode::UNKNOWN_MEMBER_ID),
                _ => group.validate_member(member_id, instance.as_deref()),
            };
            match found {
                Ok(at) => {
                    group.remove_member(at, now);
                    errors.push(ErrorCode::NONE);
                }
                Err(_) if instance.is_none() && group.pending.remove(member_id).is_some() => {
                    group.try_complete_join(now);
                    errors.push(ErrorCode::NONE);
                }
                Err(error) => errors.push(error),
            }
        }
        self.recount(group_id);
        (ErrorCode::NONE, errors)
    }

    /// Expires `member_id`'s session now, as its session timeout would (the control
    /// surface's `expire_session`): the member is removed and the group rebalances without
    /// it; a JoinGroup or SyncGroup it has waiting is answered UNKNOWN_MEMBER_ID. A member id
    /// handed out with MEMBER_ID_REQUIRED and not yet used is forgotten. GROUP_ID_NOT_FOUND
    /// or UNKNOWN_MEMBER_ID when there is no such group or member.
    pub fn expire_member(
        &mut self,
        group_id: &str,
        member_id: &str,
        now: Instant,
    ) -> Result<(), ErrorCode> {
        let group = self
            .groups
            .get_mut(group_id)
            .ok_or(ErrorCode::GROUP_ID_NOT_FOUND)?;
        let consumer_member = group
            .consumer
            .as_mut()
            .is_some_and(|consumer| consumer.remove_member(member_id))
            || group
                .streams
                .as_mut()
                .is_some_and(|streams| streams.remove_member(member_id, now));
        if consumer_member {
            // A KIP-848 member: gone, the group at its next epoch without it.
        } else if let Some(at) = group.member(member_id) {
            group.remove_member(at, now);
        } else if group.pending.remove(member_id).is_some() {
            group.try_complete_join(now);
        } else {
            return Err(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        self.recount(group_id);
        Ok(())
    }

    /// The group's coordinator moved away (the control surface's `move_coordinator`): as
    /// Kafka's coordinator answers the requests it holds when it unloads a group, a waiting
    /// JoinGroup or SyncGroup is answered NOT_COORDINATOR (the member then finds the new
    /// coordinator and joins again there). The group's state stays, a member whose join was
    /// answered so still counted as joined: the new coordinator reads the same state, as
    /// Kafka's reads the group back from its log. Whether the group exists.
    pub fn coordinator_moved(&mut self, group_id: &str) -> bool {
        let Some(group) = self.groups.get_mut(group_id) else {
            return false;
        };
        for member in &mut group.members {
            if let Some(waiter) = member.join_waiter.take() {
                let _ = waiter.send(JoinOutcome::error(ErrorCode::NOT_COORDINATOR, &member.id));
            }
            if let Some(waiter) = member.sync_waiter.take() {
                let _ = waiter.send(SyncOutcome::error(ErrorCode::NOT_COORDINATOR));
            }
        }
        true
    }

    /// Whether an OffsetCommit may commit, by Kafka's rules: a simple commit (generation -1,
    /// no member) only to a group with no members; a member's commit only in its generation
    /// and not while the group awaits its assignment. A simple commit creates the group.
    pub fn validate_commit(
        &mut self,
        group_id: &str,
        generation: i32,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> ErrorCode {
        if group_id.is_empty() {
            return ErrorCode::INVALID_GROUP_ID;
        }
        let Some(group) = self.groups.get(group_id) else {
            if generation >= 0 || !member_id.is_empty() || instance_id.is_some() {
                // Kafka's GROUP_ID_NOT_FOUND, which OffsetCommit answers as this.
                return ErrorCode::ILLEGAL_GENERATION;
            }
            if self.groups.len() >= self.limits.max_groups || !self.fits(256) {
                return ErrorCode::GROUP_MAX_SIZE_REACHED;
            }
            let group = Group::new(self.limits.initial_rebalance_delay);
            self.groups.insert(group_id.into(), group);
            self.recount(group_id);
            return ErrorCode::NONE;
        };
        if let Some(consumer) = &group.consumer {
            return consumer.validate_commit(member_id, generation);
        }
        if let Some(streams) = &group.streams {
            return streams.validate_commit(member_id, generation);
        }
        if generation >= 0 || !member_id.is_empty() || instance_id.is_some() {
            if let Err(error) = group.validate_member(member_id, instance_id) {
                return error;
            }
            if generation != group.generation {
                return ErrorCode::ILLEGAL_GENERATION;
            }
        } else if group.state != GroupState::Empty {
            return ErrorCode::UNKNOWN_MEMBER_ID;
        }
        if group.state == GroupState::CompletingRebalance {
            return ErrorCode::REBALANCE_IN_PROGRESS;
        }
        ErrorCode::NONE
    }

    /// Stores one committed offset of a group [`validate_commit`](Self::validate_commit)
    /// accepted; OFFSET_METADATA_TOO_LARGE past the caps.
    pub fn commit(
        &mut self,
        group_id: &str,
        topic: &str,
        partition: i32,
        committed: Committed,
    ) -> ErrorCode {
        if committed.metadata.len() > self.limits.max_metadata_bytes
            || !self.fits(32 + topic.len() + committed.metadata.len())
        {
            return ErrorCode::OFFSET_METADATA_TOO_LARGE;
        }
        let Some(group) = self.groups.get_mut(group_id) else {
            return ErrorCode::ILLEGAL_GENERATION;
        };
        group
            .offsets
            .entry(topic.into())
            .or_default()
            .insert(partition, committed);
        let before = group.bytes;
        let after = group.recount();
        self.bytes = self.bytes + after - before;
        ErrorCode::NONE
    }

    /// Stores an offset a transaction committed (EndTxn): the group is created if it is
    /// new, as Kafka's coordinator creates it for a transactional commit; past the caps the
    /// offset is not stored (GROUP_MAX_SIZE_REACHED or OFFSET_METADATA_TOO_LARGE).
    pub fn commit_transactional(
        &mut self,
        group_id: &str,
        topic: &str,
        partition: i32,
        committed: Committed,
    ) -> ErrorCode {
        if !self.groups.contains_key(group_id) {
            if self.groups.len() >= self.limits.max_groups || !self.fits(256) {
                return ErrorCode::GROUP_MAX_SIZE_REACHED;
            }
            let group = Group::new(self.limits.initial_rebalance_delay);
            self.groups.insert(group_id.into(), group);
            self.recount(group_id);
        }
        self.commit(group_id, topic, partition, committed)
    }

    /// DeleteGroups of one group.
    pub fn delete(&mut self, group_id: &str) -> ErrorCode {
        if group_id.is_empty() {
            return ErrorCode::INVALID_GROUP_ID;
        }
        match self.groups.get(group_id) {
            None => ErrorCode::GROUP_ID_NOT_FOUND,
            Some(group)
                if group.state != GroupState::Empty
                    || group
                        .consumer
                        .as_ref()
                        .is_some_and(|consumer| !consumer.members.is_empty())
                    || group
                        .streams
                        .as_ref()
                        .is_some_and(|streams| !streams.members.is_empty()) =>
            {
                ErrorCode::NON_EMPTY_GROUP
            }
            Some(_) => {
                if let Some(group) = self.groups.remove(group_id) {
                    self.bytes -= group.bytes;
                }
                ErrorCode::NONE
            }
        }
    }

    /// Removes every group's committed offsets of a deleted topic.
    pub fn remove_topic_offsets(&mut self, topic: &str) {
        let holding: Vec<String> = self
            .groups
            .iter()
            .filter(|(_, group)| group.offsets.contains_key(topic))
            .map(|(id, _)| id.clone())
            .collect();
        for id in holding {
            if let Some(group) = self.groups.get_mut(&id) {
                group.offsets.remove(topic);
            }
            self.recount(&id);
        }
    }

    /// Removes a committed offset (OffsetDelete, after its checks).
    pub fn delete_offset(&mut self, group_id: &str, topic: &str, partition: i32) {
        if let Some(group) = self.groups.get_mut(group_id) {
            if let Some(partitions) = group.offsets.get_mut(topic) {
                partitions.remove(&partition);
                if partitions.is_empty() {
                    group.offsets.remove(topic);
                }
            }
        }
        self.recount(group_id);
    }
}

/// Adds a new member and starts (or joins) a rebalance.
fn add_member(
    group: &mut Group,
    member: Member,
    protocol_type: &str,
    now: Instant,
) -> Answer<JoinOutcome> {
    // The first member sets the group's type (an empty group keeps its last one).
    if group.members.is_empty() {
        group.protocol_type = Some(protocol_type.into());
    }
    group.members.push(member);
    let at = group.members.len() - 1;
    await_join(group, at, now)
}

/// Member `at` waits for the rebalance, which starts now if it has not.
fn await_join(group: &mut Group, at: usize, now: Instant) -> Answer<JoinOutcome> {
    let (sender, receiver) = oneshot::channel();
    if group.state != GroupState::PreparingRebalance {
        group.prepare_rebalance(now);
    }
    let member = &mut group.members[at];
    if let Some(old) = member.join_waiter.replace(sender) {
        // A second JoinGroup of the same member: the first one is superseded.
        let _ = old.send(JoinOutcome::error(
            ErrorCode::REBALANCE_IN_PROGRESS,
            &member.id,
        ));
    }
    member.joined = true;
    group.try_complete_join(now);
    Answer::Wait(receiver)
}

/// A static member (known `group.instance.id`) joining with no member id: it takes a new
/// member id, fencing the old one's requests; in a stable group with unchanged protocols it
/// gets the current generation back without a rebalance, as Kafka does.
fn rejoin_static(
    group: &mut Group,
    at: usize,
    new_id: String,
    request: &JoinRequest,
    session: Duration,
    rebalance: Duration,
    now: Instant,
) -> Answer<JoinOutcome> {
    let member = &mut group.members[at];
    let old_id = std::mem::replace(&mut member.id, new_id);
    if let Some(waiter) = member.join_waiter.take() {
        let _ = waiter.send(JoinOutcome::error(ErrorCode::FENCED_INSTANCE_ID, &old_id));
    }
    if let Some(waiter) = member.sync_waiter.take() {
        let _ = waiter.send(SyncOutcome::error(ErrorCode::FENCED_INSTANCE_ID));
    }
    member.client_id = request.client_id.clone();
    member.client_host = request.client_host.clone();
    member.session_timeout = session;
    member.rebalance_timeout = rebalance;
    member.heartbeat_deadline = now + session;
    let same = member.protocols == request.protocols;
    let was_leader = group.leader.as_deref() == Some(old_id.as_str());
    let new_id = group.members[at].id.clone();
    for pending in &mut group.pending_sync {
        if *pending == old_id {
            pending.clone_from(&new_id);
        }
    }
    if was_leader {
        group.leader = Some(group.members[at].id.clone());
    }
    if group.state == GroupState::Stable && same {
        let skip = was_leader && request.can_skip_assignment;
        let mut answer = group.join_answer(at, skip);
        answer.skip_assignment = skip;
        return Answer::Now(answer);
    }
    group.members[at].protocols = request.protocols.clone();
    await_join(group, at, now)
}

/// Ends rebalances at their deadline and removes members whose session expired, until the
/// cluster stops. Woken early by `Shared::groups_changed` after every change.
pub async fn run_timers(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    loop {
        let changed = shared.groups_changed.notified();
        let next = shared.groups().next_deadline();
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => shared.groups().expire(crate::clock::now()),
            () = changed => {}
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinator_hashes_as_java_string_hash_code() {
        // Java: "".hashCode() == 0, "a".hashCode() == 97, "group".hashCode() == 98629247.
        assert_eq!(coordinator("", 3), 0);
        assert_eq!(coordinator("a", 1000), 97 % 50);
        assert_eq!(coordinator("group", 1000), 98_629_247 % 50);
        assert_eq!(coordinator("group", 3), (98_629_247 % 50) % 3);
    }
}
