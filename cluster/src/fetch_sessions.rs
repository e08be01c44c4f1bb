//! Fetch sessions (KIP-227), one cache per broker, kept as Kafka's `FetchSessionCache` keeps
//! them: a full fetch (epoch 0) opens a session when there is room, an incremental fetch
//! (the session's id at its next epoch) names only the partitions that changed and is
//! answered with only the partitions that have news, and epoch -1 closes the session.
//!
//! The cache is bounded twice: by its slots (Kafka's
//! `max.incremental.fetch.session.cache.slots`, 1000) and by the memory all its sessions
//! hold, each partition counted with its topic name ([`FetchSessions::max_bytes`], the
//! cluster's own cap: Kafka has none, but a test cluster must not let clients' requests
//! grow it without end).

use kafka_codec::messages::fetch_request::ForgottenTopic;
use kafka_codec::messages::FetchRequest;
use kafka_codec::{ErrorCode, Uuid};
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Sessions a broker keeps by default (Kafka's `max.incremental.fetch.session.cache.slots`).
pub const DEFAULT_SLOTS: usize = 1000;

/// Bytes all of a broker's sessions hold together by default (the cluster's cap): some
/// 300,000 partitions of short topic names.
pub const DEFAULT_MAX_BYTES: usize = 32 << 20;

/// How long a session must go unused before any new one may take its slot, and how old it
/// must be before a larger one may (Kafka's `MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS`).
pub const EVICTION: Duration = Duration::from_secs(120);

/// The session id that names no session.
pub const INVALID_SESSION_ID: i32 = 0;
/// The epoch of a full fetch that opens a session.
pub const INITIAL_EPOCH: i32 = 0;
/// The epoch of a full fetch that opens none (and closes the one it names).
pub const FINAL_EPOCH: i32 = -1;

/// The epoch after `epoch`: 1 after the last, never 0 or -1 again.
pub fn next_epoch(epoch: i32) -> i32 {
    if epoch < 0 {
        FINAL_EPOCH
    } else if epoch == i32::MAX {
        1
    } else {
        epoch + 1
    }
}

/// One partition to read, as a request names it or a session remembers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The topic's name (up to v12; empty from v13).
    pub topic: String,
    /// The topic's id (from v13; zero before).
    pub topic_id: Uuid,
    /// The partition.
    pub partition: i32,
    /// Where to read from.
    pub fetch_offset: i64,
    /// The leader epoch the client knows (-1: none).
    pub current_leader_epoch: i32,
    /// At most this many bytes from the partition.
    pub max_bytes: i32,
}

impl Wanted {
    /// What the partition costs a session to hold.
    fn cost(&self) -> usize {
        std::mem::size_of::<SessionPartition>() + self.topic.len()
    }

    fn key(&self) -> (Uuid, &str, i32) {
        (self.topic_id, self.topic.as_str(), self.partition)
    }

    /// Every partition of `request`, in its order.
    pub fn all_of(request: &FetchRequest) -> Vec<Wanted> {
        request
            .topics
            .iter()
            .flat_map(|topic| {
                topic.partitions.iter().map(|partition| Wanted {
                    // Copied: a slice would hold the whole request's buffer for the session's life.
                    topic: topic.topic.as_str().to_owned(),
                    topic_id: topic.topic_id,
                    partition: partition.partition,
                    fetch_offset: partition.fetch_offset,
                    current_leader_epoch: partition.current_leader_epoch,
                    max_bytes: partition.partition_max_bytes,
                })
            })
            .collect()
    }
}

/// What a session remembers of a partition's last answer: the partition is left out of an
/// incremental answer while these stay the same and it has no records and no error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// The high watermark answered (-1 after an error, so the partition is sent again).
    pub high_watermark: i64,
    /// The log start offset answered.
    pub log_start: i64,
}

#[derive(Debug)]
struct SessionPartition {
    wanted: Wanted,
    answered: Answered,
}

/// One session.
#[derive(Debug)]
struct Session {
    /// A follower's (replica id 0 or more): only another privileged one may evict it while
    /// it is young.
    privileged: bool,
    uses_topic_ids: bool,
    created: Instant,
    last_used: Instant,
    /// The epoch the next incremental fetch must carry.
    epoch: i32,
    /// What its partitions cost, topic names included.
    bytes: usize,
    /// In the order read: a partition that returned records moves to the end, so that the
    /// response limit serves every partition in turn.
    partitions: Vec<SessionPartition>,
}

/// What a fetch request asks of its broker's sessions.
#[derive(Debug)]
pub enum Plan {
    /// Read these and answer with session id 0 (before v7, epoch -1, or a session that
    /// became empty).
    Sessionless(Vec<Wanted>),
    /// Read these, then open a session holding them if there is room.
    Full {
        wanted: Vec<Wanted>,
        privileged: bool,
        uses_topic_ids: bool,
    },
    /// Read the session's partitions; answer with those that have news.
    Incremental {
        session_id: i32,
        /// The epoch the session moved to.
        epoch: i32,
        wanted: Vec<Wanted>,
    },
}

/// One broker's fetch sessions.
#[derive(Debug)]
pub struct FetchSessions {
    slots: usize,
    max_bytes: usize,
    held: usize,
    sessions: HashMap<i32, Session>,
    ids: SessionIds,
    /// The broker's up switch (`Control::stop_broker`): any change since the last look
    /// means it was stopped, and a stopped broker forgets its sessions.
    switch: Option<watch::Receiver<bool>>,
}

impl FetchSessions {
    /// A cache of `slots` sessions holding at most `max_bytes` in all; session ids derived
    /// from `seed` when given (else at random).
    pub fn new(slots: usize, max_bytes: usize, seed: Option<u64>) -> Self {
        FetchSessions {
            slots,
            max_bytes,
            held: 0,
            sessions: HashMap::new(),
            ids: SessionIds::new(seed),
            switch: None,
        }
    }

    /// Forgets every session whenever `switch`, the broker's up switch, changes.
    pub fn follow(mut self, switch: watch::Receiver<bool>) -> Self {
        self.switch = Some(switch);
        self
    }

    /// Forgets every session if the broker was stopped since the last look; [`Shared`]
    /// looks each time it hands the cache out.
    pub(crate) fn forget_if_stopped(&mut self) {
        if let Some(switch) = &mut self.switch {
            if switch.has_changed().unwrap_or(false) {
                switch.borrow_and_update();
                self.clear();
            }
        }
    }

    /// Sessions held.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Bytes held by all sessions' partitions.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// The cap on [`held_bytes`](Self::held_bytes).
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Forgets every session, as a restarted broker has none.
    pub fn clear(&mut self) {
        self.sessions.clear();
        self.held = 0;
    }

    /// Decides what `request` (at `version`) does, as Kafka's `FetchManager.newContext`
    /// decides it; an incremental fetch updates its session here. An error is answered with
    /// no partitions and session id 0.
    pub fn plan(
        &mut self,
        version: i16,
        request: &FetchRequest,
        now: Instant,
    ) -> Result<Plan, ErrorCode> {
        let wanted = Wanted::all_of(request);
        if version < 7 {
            return Ok(Plan::Sessionless(wanted));
        }
        let (id, epoch) = (request.session_id, request.session_epoch);
        if epoch == INITIAL_EPOCH || epoch == FINAL_EPOCH {
            // A full fetch closes the session it names.
            if id != INVALID_SESSION_ID {
                self.remove(id);
            }
            if epoch == FINAL_EPOCH {
                return Ok(Plan::Sessionless(wanted));
            }
            return Ok(Plan::Full {
                wanted,
                privileged: replica_id(version, request) >= 0,
                uses_topic_ids: version >= 13,
            });
        }
        let Some(session) = self.sessions.get_mut(&id) else {
            return Err(ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
        };
        if session.epoch != epoch {
            return Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH);
        }
        if session.uses_topic_ids != (version >= 13) {
            return Err(ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR);
        }
        let before = session.bytes;
        update(
            session,
            wanted.iter().cloned(),
            &request.forgotten_topics_data,
        );
        session.bytes = session.partitions.iter().map(|p| p.wanted.cost()).sum();
        self.held = self.held.saturating_sub(before) + session.bytes;
        if session.partitions.is_empty() {
            self.remove(id);
            return Ok(Plan::Sessionless(wanted));
        }
        if self.held > self.max_bytes {
            // The cluster's own bound: the client starts over with a full fetch, which gets a
            // session only if there is room.
            self.remove(id);
            return Err(ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
        }
        let Some(session) = self.sessions.get_mut(&id) else {
            return Err(ErrorCode::FETCH_SESSION_ID_NOT_FOUND);
        };
        session.last_used = now;
        session.epoch = next_epoch(session.epoch);
        Ok(Plan::Incremental {
            session_id: id,
            epoch: session.epoch,
            wanted: session
                .partitions
                .iter()
                .map(|p| p.wanted.clone())
                .collect(),
        })
    }

    /// Opens a session of `partitions` (each with its answer) after a full fetch, evicting
    /// one as Kafka's cache does when it is full: its id, or 0 when there is no room.
    pub fn open(
        &mut self,
        partitions: Vec<(Wanted, Answered)>,
        privileged: bool,
        uses_topic_ids: bool,
        now: Instant,
    ) -> i32 {
        let size = partitions.len();
        let bytes: usize = partitions.iter().map(|(wanted, _)| wanted.cost()).sum();
        if bytes > self.max_bytes {
            return INVALID_SESSION_ID;
        }
        while self.held + bytes > self.max_bytes {
            if !self.evict(privileged, size, now) {
                return INVALID_SESSION_ID;
            }
        }
        if self.sessions.len() >= self.slots && !self.evict(privileged, size, now) {
            return INVALID_SESSION_ID;
        }
        let id = loop {
            let id = self.ids.next();
            if id != INVALID_SESSION_ID && !self.sessions.contains_key(&id) {
                break id;
            }
        };
        self.held += bytes;
        self.sessions.insert(
            id,
            Session {
                privileged,
                uses_topic_ids,
                created: now,
                last_used: now,
                epoch: next_epoch(INITIAL_EPOCH),
                bytes,
                partitions: partitions
                    .into_iter()
                    .map(|(wanted, answered)| SessionPartition { wanted, answered })
                    .collect(),
            },
        );
        id
    }

    /// After an incremental fetch read the session's partitions (`read`, in the order
    /// planned, each with its answer and whether it must be sent: records or an error), which
    /// of them the answer carries, as Kafka's `IncrementalFetchContext` picks them: those
    /// with records, an error, or a high watermark or log start offset other than the last
    /// answered. The session remembers the new answers, and a partition that returned records
    /// moves to the end of its order. `None` when the session is gone or moved on meanwhile
    /// (the answer is then an error).
    pub fn answer_incremental(
        &mut self,
        session_id: i32,
        epoch: i32,
        read: &[(Answered, bool, bool)],
    ) -> Option<Vec<bool>> {
        let session = self.sessions.get_mut(&session_id)?;
        if session.epoch != epoch || session.partitions.len() != read.len() {
            return None;
        }
        let mut include = Vec::with_capacity(read.len());
        let mut moved = Vec::new();
        let mut kept = Vec::with_capacity(read.len());
        for (partition, &(answered, has_records, error)) in std::mem::take(&mut session.partitions)
            .into_iter()
            .zip(read)
        {
            let mut partition = partition;
            let changed = partition.answered != answered;
            include.push(has_records || error || changed);
            partition.answered = if error {
                Answered {
                    high_watermark: -1,
                    ..answered
                }
            } else {
                answered
            };
            if has_records {
                moved.push(partition);
            } else {
                kept.push(partition);
            }
        }
        kept.extend(moved);
        session.partitions = kept;
        Some(include)
    }

    fn remove(&mut self, id: i32) {
        if let Some(session) = self.sessions.remove(&id) {
            self.held = self.held.saturating_sub(session.bytes);
        }
    }

    /// Kafka's `tryEvict`: the least recently used session if it has gone unused for
    /// [`EVICTION`]; else the least valuable one (unprivileged before privileged, then the
    /// fewest partitions, then the lowest id) among those a new session of `size` partitions
    /// may take the place of (a privileged one: any unprivileged and old privileged ones; an
    /// unprivileged one: sessions older than [`EVICTION`]), if the new one is worth more.
    fn evict(&mut self, privileged: bool, size: usize, now: Instant) -> bool {
        let stale = self
            .sessions
            .iter()
            .min_by_key(|(id, s)| (s.last_used, **id))
            .filter(|(_, s)| now.saturating_duration_since(s.last_used) > EVICTION)
            .map(|(id, _)| *id);
        if let Some(id) = stale {
            self.remove(id);
            return true;
        }
        let old = |s: &Session| now.saturating_duration_since(s.created) > EVICTION;
        let candidate = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                if privileged {
                    !s.privileged || old(s)
                } else {
                    old(s)
                }
            })
            .map(|(id, s)| (s.privileged, s.partitions.len(), *id))
            .min();
        match candidate {
            // The new session's key has id 0, below every real id.
            Some((their_privilege, their_size, id))
                if (privileged, size, 0) >= (their_privilege, their_size, id) =>
            {
                self.remove(id);
                true
            }
            _ => false,
        }
    }
}

/// Applies an incremental fetch to `session`: the partitions named are added or their fetch
/// position updated, then the forgotten ones removed.
fn update(
    session: &mut Session,
    named: impl Iterator<Item = Wanted>,
    forgotten: &[ForgottenTopic],
) {
    let mut index: HashMap<(Uuid, String, i32), usize> = session
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (id, topic, partition) = p.wanted.key();
            ((id, topic.to_owned(), partition), i)
        })
        .collect();
    for wanted in named {
        let (id, topic, partition) = wanted.key();
        let key = (id, topic.to_owned(), partition);
        match index.get(&key) {
            Some(&i) => session.partitions[i].wanted = wanted,
            None => {
                index.insert(key, session.partitions.len());
                session.partitions.push(SessionPartition {
                    wanted,
                    answered: Answered {
                        high_watermark: -1,
                        log_start: -1,
                    },
                });
            }
        }
    }
    let gone: HashSet<(Uuid, &str, i32)> = forgotten
        .iter()
        .flat_map(|topic| {
            topic
                .partitions
                .iter()
                .map(move |partition| (topic.topic_id, topic.topic.as_str(), partition))
        })
        .collect();
    if !gone.is_empty() {
        session
            .partitions
            .retain(|p| !gone.contains(&p.wanted.key()));
    }
}

/// The replica id of a fetch: a follower's node id, -1 for a consumer.
fn replica_id(version: i16, request: &FetchRequest) -> i32 {
    if version >= 15 {
        request.replica_state.replica_id
    } else {
        request.replica_id
    }
}

/// Random positive session ids, or a seeded sequence of them.
#[derive(Debug)]
struct SessionIds {
    seed: u64,
    counter: u64,
}

impl SessionIds {
    fn new(seed: Option<u64>) -> Self {
        let seed = seed.unwrap_or_else(|| {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u8(0);
            hasher.finish()
        });
        SessionIds { seed, counter: 0 }
    }

    /// The next id, positive (SplitMix64 over a counter).
    fn next(&mut self) -> i32 {
        self.counter = self.counter.wrapping_add(1);
        let mut z = self
            .seed
            .wrapping_add(self.counter.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z & 0x7fff_ffff) as i32
    }
}

/// One node's fetch sessions, held under the lock of every node's
/// ([`crate::Shared::fetch_sessions`]).
pub struct NodeSessions<'a> {
    nodes: std::sync::MutexGuard<'a, HashMap<i32, FetchSessions>>,
    node_id: i32,
}

impl<'a> NodeSessions<'a> {
    /// `node_id`'s sessions in `nodes`, which holds them.
    pub(crate) fn new(
        nodes: std::sync::MutexGuard<'a, HashMap<i32, FetchSessions>>,
        node_id: i32,
    ) -> Self {
        debug_assert!(nodes.contains_key(&node_id));
        NodeSessions { nodes, node_id }
    }
}

impl std::ops::Deref for NodeSessions<'_> {
    type Target = FetchSessions;

    fn deref(&self) -> &FetchSessions {
        // Inserted by `Shared::fetch_sessions` under the same guard, never removed.
        &self.nodes[&self.node_id]
    }
}

impl std::ops::DerefMut for NodeSessions<'_> {
    fn deref_mut(&mut self) -> &mut FetchSessions {
        self.nodes
            .get_mut(&self.node_id)
            .expect("inserted by Shared::fetch_sessions under the same guard, never removed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};

    fn wanted(partitions: i32) -> Vec<(Wanted, Answered)> {
        (0..partitions)
            .map(|partition| {
                let wanted = Wanted {
                    topic: "t".to_owned(),
                    topic_id: Uuid::default(),
                    partition,
                    fetch_offset: 0,
                    current_leader_epoch: -1,
                    max_bytes: 1,
                };
                let answered = Answered {
                    high_watermark: 0,
                    log_start: 0,
                };
                (wanted, answered)
            })
            .collect()
    }

    fn incremental(id: i32, epoch: i32, partitions: &[i32]) -> FetchRequest {
        FetchRequest::default()
            .with_session_id(id)
            .with_session_epoch(epoch)
            .with_topics(vec![FetchTopic::default()
                .with_topic("t".into())
                .with_partitions(
                    partitions
                        .iter()
                        .map(|&p| FetchPartition::default().with_partition(p))
                        .collect(),
                )])
    }

    #[test]
    fn a_full_cache_evicts_as_kafka_does() {
        let now = Instant::from_std(crate::clock::now());
        let mut cache = FetchSessions::new(2, 1000, Some(7));
        let small = cache.open(wanted(1), false, false, now);
        let large = cache.open(wanted(3), false, false, now);
        assert!(small > 0 && large > 0 && small != large);
        // Both young: a consumer's session evicts none, a follower's the smaller one.
        assert_eq!(cache.open(wanted(5), false, false, now), INVALID_SESSION_ID);
        let follower = cache.open(wanted(1), true, false, now);
        assert!(follower > 0);
        assert_eq!(cache.len(), 2);
        assert!(cache.plan(12, &incremental(small, 1, &[]), now).is_err());
        // Once older than EVICTION, a larger consumer session takes the smallest one's place
        // (the follower's, privileged, is worth more than the consumer's of 3).
        let later = now + EVICTION + Duration::from_millis(1);
        assert!(cache.plan(12, &incremental(large, 1, &[]), later).is_ok());
        assert!(cache
            .plan(12, &incremental(follower, 1, &[]), later)
            .is_ok());
        let later = later + Duration::from_millis(1);
        assert_eq!(
            cache.open(wanted(2), false, false, later),
            INVALID_SESSION_ID
        );
        let bigger = cache.open(wanted(4), false, false, later);
        assert!(bigger > 0);
        assert!(cache.plan(12, &incremental(large, 2, &[]), later).is_err());
        // A session unused for longer than EVICTION goes to anyone's new one, small or not.
        let stale = later + EVICTION + Duration::from_millis(2);
        assert!(cache.open(wanted(1), false, false, stale) > 0);
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn memory_held_is_bounded() {
        let now = Instant::from_std(crate::clock::now());
        let each = wanted(1)[0].0.cost();
        let mut cache = FetchSessions::new(10, 4 * each, None);
        assert_eq!(cache.open(wanted(5), false, false, now), INVALID_SESSION_ID);
        let id = cache.open(wanted(3), false, false, now);
        assert!(id > 0);
        assert_eq!(cache.held_bytes(), 3 * each);
        // Growing past the cap ends the session; the client starts over.
        assert_eq!(
            cache.plan(12, &incremental(id, 1, &[3, 4]), now).err(),
            Some(ErrorCode::FETCH_SESSION_ID_NOT_FOUND)
        );
        assert_eq!((cache.len(), cache.held_bytes()), (0, 0));
        // An incremental that leaves a session empty closes it and is answered sessionless.
        let id = cache.open(wanted(1), false, false, now);
        let forget =
            incremental(id, 1, &[]).with_forgotten_topics_data(vec![ForgottenTopic::default()
                .with_topic("t".into())
                .with_partitions(vec![0].into())]);
        assert!(matches!(
            cache.plan(12, &forget, now),
            Ok(Plan::Sessionless(_))
        ));
        assert_eq!((cache.len(), cache.held_bytes()), (0, 0));
    }

    #[test]
    fn epochs_wrap_past_the_largest_to_one() {
        assert_eq!(next_epoch(0), 1);
        assert_eq!(next_epoch(i32::MAX), 1);
        assert_eq!(next_epoch(-1), -1);
    }
}
