//! Share groups (KIP-932: ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
//! ShareAcknowledge): members join a group as KIP-848 members do, but a partition may go to
//! several members at once, and the records, not the partitions, are handed out: each
//! ShareFetch acquires records for its member under a lock of its own, which the member
//! accepts, releases (delivered again, its delivery count one higher) or rejects; a lock
//! not acknowledged within its timeout is released as a release would, and a record
//! delivered as often as the delivery-count limit is archived instead.
//!
//! Each (group, partition) keeps its share-partition start offset (the first record not
//! yet done with: before it everything is accepted, rejected or archived) and the state of
//! every record from there to the next one never acquired; at most
//! [`ShareConfig::max_record_locks`] such records, so the memory is bounded whatever the
//! log holds. The start is set by the first ShareFetch of the partition, where the group's
//! `share.auto.offset.reset` says (the log end by default, as Kafka's `latest`; `earliest`:
//! the log start; `by_duration:D`: the first record stamped at most D ago, else the log end).
//!
//! A group's configs (`crate::group_configs`) override the cluster-wide lock duration and
//! delivery-count limit for that group, and `share.isolation.level=read_committed` acquires
//! only to the last stable offset, the records of aborted transactions archived unseen.
//!
//! The group's partitions are assigned as Kafka 4.4's `simple` assignor assigns them
//! ([`simple`]), at once whenever the group epoch moves on.
//!
//! Share sessions: a member's ShareFetch at session epoch 0 opens a session (replacing its
//! old one) naming the partitions it fetches; each following request names the next
//! epoch and adds or forgets partitions; epoch -1 closes it, releasing what the member
//! still holds. The lock of [`Shared`](crate::Shared) is taken before the state's when a
//! request needs both.

use crate::consumer_groups::kafka_uniform::{self, contents, JavaAssignment};
use crate::consumer_groups::{Assignment, Subscriber, TopicsByName};
use crate::group_configs::{GroupSettings, ShareReset};
use crate::group_members::{self, Membership};
use crate::groups::GroupLimits;
use crate::state::{PartitionLog, StoredBatch};
use kafka_codec::{ErrorCode, Uuid};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub mod simple;

/// The only assignor of share groups (Kafka's `group.share.assignors`).
pub const ASSIGNOR: &str = "simple";
/// The member epoch of a member leaving.
pub const LEAVE_EPOCH: i32 = group_members::LEAVE_EPOCH;
/// The share session epoch that opens a session.
pub const INITIAL_EPOCH: i32 = 0;
/// The share session epoch that closes one.
pub const FINAL_EPOCH: i32 = -1;
/// Kafka's message for an acknowledgement of offsets its share partition has no record of
/// in flight (INVALID_RECORD_STATE; tests/leaderless_coordinator_groups_kafka.rs).
pub const NOT_IN_FLIGHT: &str =
    "Batch record not found. The request batch offsets are not found in the cache.";
/// Records a ShareFetch v0 (which has no `MaxRecords`) acquires at most: the Java client's
/// `max.poll.records` default.
pub const DEFAULT_MAX_RECORDS: usize = 500;

/// What a share group's coordinator and share-partition leaders are configured with, each
/// Kafka's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareConfig {
    /// How long an acquired record stays locked to its member
    /// (`group.share.record.lock.duration.ms`, 30 s).
    pub lock_timeout: Duration,
    /// Deliveries of one record before it is archived (`group.share.delivery.count.limit`, 5).
    pub delivery_count_limit: i16,
    /// Records in flight (acquired, or released and waiting) per share partition
    /// (`group.share.partition.max.record.locks`, 2000).
    pub max_record_locks: usize,
    /// A member's session (`group.share.session.timeout.ms`, 45 s).
    pub session_timeout: Duration,
    /// How often a member is told to heartbeat (`group.share.heartbeat.interval.ms`, 5 s).
    pub heartbeat_interval: Duration,
    /// Share sessions held at once, over all members (`group.share.max.share.sessions`, 2000).
    pub max_sessions: usize,
    /// Partitions one share session may name (10,000; Kafka has no such cap): a session's
    /// memory is bounded whatever its requests add.
    pub max_session_partitions: usize,
}

impl Default for ShareConfig {
    fn default() -> Self {
        ShareConfig {
            lock_timeout: Duration::from_secs(30),
            delivery_count_limit: 5,
            max_record_locks: 2000,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(5),
            max_sessions: 2000,
            max_session_partitions: 10_000,
        }
    }
}

/// An acknowledgement's type, as the request's `AcknowledgeTypes` number them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckType {
    /// An offset with no record (compacted away, or a transaction marker): done with.
    Gap,
    /// Processed: done with.
    Accept,
    /// Not processed: delivered again (to any member).
    Release,
    /// Unprocessable: never delivered again.
    Reject,
    /// Still being processed: the lock starts again (v2, `IsRenewAck`).
    Renew,
}

impl AckType {
    /// The type numbered `code` (Renew only from v2), or `None`.
    pub fn from_code(code: i8, version: i16) -> Option<AckType> {
        Some(match code {
            0 => AckType::Gap,
            1 => AckType::Accept,
            2 => AckType::Release,
            3 => AckType::Reject,
            4 if version >= 2 => AckType::Renew,
            _ => return None,
        })
    }
}

/// One acknowledgement batch: `first..=last` with one type for all or one per offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckBatch {
    /// Its first offset.
    pub first: i64,
    /// Its last offset.
    pub last: i64,
    /// One type for the whole range, or one per offset.
    pub types: Vec<AckType>,
}

/// Where a record stands in its share partition.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RecordState {
    /// Waiting to be acquired (again).
    Available,
    /// Locked to a member until the deadline.
    Acquired { member: Arc<str>, until: Instant },
    /// Accepted or a gap: done with.
    Acknowledged,
    /// Rejected, or delivered as often as the limit allows: done with.
    Archived,
}

#[derive(Debug, Clone)]
struct InFlight {
    state: RecordState,
    delivery_count: i16,
}

/// A partition as one share group consumes it.
#[derive(Debug, Clone, Default)]
pub struct SharePartition {
    /// The share-partition start offset: every record before it is done with.
    start: i64,
    /// The first offset never acquired.
    end: i64,
    /// Every offset in `start..end`.
    records: BTreeMap<i64, InFlight>,
    /// The start offset as Kafka last persisted it (DescribeShareGroupOffsets reports it):
    /// Kafka writes a share partition's state with the start offset from before the change
    /// written, so an acknowledgement that moves the start is seen at the next write.
    persisted_start: i64,
}

/// Records acquired by a ShareFetch: the ranges (first, last, delivery count) and the
/// stored batches holding them.
#[derive(Debug, Clone, Default)]
pub struct Acquired {
    /// Contiguous ranges with one delivery count each, in offset order.
    pub ranges: Vec<(i64, i64, i16)>,
    /// The batches holding them, whole, in offset order.
    pub batches: Vec<StoredBatch>,
}

impl SharePartition {
    /// A share partition starting at `offset`.
    fn starting_at(offset: i64) -> Self {
        SharePartition {
            start: offset,
            end: offset,
            records: BTreeMap::new(),
            persisted_start: offset,
        }
    }

    /// The share-partition start offset.
    pub fn start_offset(&self) -> i64 {
        self.start
    }

    /// The start offset as last persisted, which DescribeShareGroupOffsets reports (see
    /// `persisted_start`).
    pub fn persisted_start_offset(&self) -> i64 {
        self.persisted_start
    }

    /// Records past the start already done with (accepted, rejected or archived): what a
    /// share group's lag leaves out besides the records before the start.
    pub fn done_past_start(&self) -> i64 {
        self.records
            .values()
            .filter(|r| matches!(r.state, RecordState::Acknowledged | RecordState::Archived))
            .count() as i64
    }

    /// Releases the locks past their deadline (a record at its delivery limit is archived).
    fn expire(&mut self, now: Instant, limit: i16) {
        let mut written = false;
        for record in self.records.values_mut() {
            if matches!(&record.state, RecordState::Acquired { until, .. } if *until <= now) {
                record.state = released(record.delivery_count, limit);
                written = true;
            }
        }
        if written {
            self.persisted_start = self.start;
        }
        self.advance();
    }

    /// Releases every lock `member` holds (its session or membership ended).
    fn release_member(&mut self, member: &str, limit: i16) {
        let mut written = false;
        for record in self.records.values_mut() {
            if matches!(&record.state, RecordState::Acquired { member: m, .. } if &**m == member) {
                record.state = released(record.delivery_count, limit);
                written = true;
            }
        }
        if written {
            self.persisted_start = self.start;
        }
        self.advance();
    }

    /// Moves the start past the records done with.
    fn advance(&mut self) {
        while let Some(entry) = self.records.first_entry() {
            if matches!(
                entry.get().state,
                RecordState::Acknowledged | RecordState::Archived
            ) {
                entry.remove();
                self.start += 1;
            } else {
                break;
            }
        }
        if self.records.is_empty() {
            self.start = self.end;
        }
    }

    /// The next expiry of a lock held here.
    fn next_deadline(&self) -> Option<Instant> {
        self.records
            .values()
            .filter_map(|record| match &record.state {
                RecordState::Acquired { until, .. } => Some(*until),
                _ => None,
            })
            .min()
    }

    /// Moves the start to `offset` (AlterShareGroupOffsets, or a log start that passed it):
    /// what lay before is dropped.
    fn reset(&mut self, offset: i64) {
        self.records.retain(|at, _| *at >= offset);
        self.start = offset;
        self.persisted_start = offset;
        self.end = self.end.max(offset);
        self.advance();
    }

    /// Acquires for `member` up to `max_records` records of `log` (whole batches unless
    /// `strict`), the ones released before first, then new ones, within `max_bytes` of
    /// batches (the first batch whole whatever its size).
    #[allow(clippy::too_many_arguments)]
    fn acquire(
        &mut self,
        log: &PartitionLog,
        member: &Arc<str>,
        max_records: usize,
        strict: bool,
        max_bytes: usize,
        config: &ShareConfig,
        read_committed: bool,
        now: Instant,
    ) -> Acquired {
        if log.log_start() > self.start {
            self.reset(log.log_start());
        }
        let until = now + config.lock_timeout;
        let mut offsets: Vec<(i64, i16)> = Vec::new();
        for (offset, record) in self.records.range_mut(self.start..) {
            if offsets.len() >= max_records {
                break;
            }
            if record.state == RecordState::Available {
                record.delivery_count = record.delivery_count.saturating_add(1);
                record.state = RecordState::Acquired {
                    member: Arc::clone(member),
                    until,
                };
                offsets.push((*offset, record.delivery_count));
            }
        }
        // New records, batch by batch, from the first never acquired on.
        let mut bytes = 0usize;
        let mut batches: Vec<StoredBatch> = Vec::new();
        // read_committed: only what is stable (Kafka's share partition reads to the LSO).
        let high_watermark = if read_committed {
            log.last_stable_offset()
        } else {
            log.high_watermark()
        };
        self.end = self.end.max(log.log_start());
        for batch in log.batches_from(self.end) {
            let in_flight = (self.end - self.start) as usize;
            if read_committed && batch.next_offset <= high_watermark && aborted(log, batch) {
                // Never delivered: archived, as Kafka 4.4 archives an aborted transaction's
                // records for a read_committed share group.
                for offset in self.end.max(batch.base_offset)..batch.next_offset {
                    self.records.insert(
                        offset,
                        InFlight {
                            state: RecordState::Archived,
                            delivery_count: 0,
                        },
                    );
                }
                self.end = batch.next_offset;
                continue;
            }
            if offsets.len() >= max_records
                || in_flight >= config.max_record_locks
                || self.end >= high_watermark
                || (bytes > 0 && bytes + batch.len() > max_bytes)
            {
                break;
            }
            let room = (max_records - offsets.len()).min(config.max_record_locks - in_flight);
            let last = if strict {
                batch.next_offset.min(self.end + room as i64)
            } else {
                batch.next_offset
            };
            for offset in self.end..last {
                self.records.insert(
                    offset,
                    InFlight {
                        state: RecordState::Acquired {
                            member: Arc::clone(member),
                            until,
                        },
                        delivery_count: 1,
                    },
                );
                offsets.push((offset, 1));
            }
            self.end = last;
            bytes += batch.len();
            batches.push(batch.clone());
        }
        offsets.sort_unstable();
        let mut ranges: Vec<(i64, i64, i16)> = Vec::new();
        for (offset, count) in offsets {
            match ranges.last_mut() {
                Some((_, last, c)) if *last + 1 == offset && *c == count => *last = offset,
                _ => ranges.push((offset, offset, count)),
            }
        }
        // The batches of the records acquired again, before the new ones, each once.
        let mut again: Vec<StoredBatch> = Vec::new();
        let mut seen = BTreeSet::new();
        for (first, last, count) in &ranges {
            if *count == 1 {
                continue;
            }
            for batch in log.batches_from(*first) {
                if batch.base_offset > *last {
                    break;
                }
                if seen.insert(batch.base_offset) {
                    again.push(batch.clone());
                }
            }
        }
        again.extend(batches);
        Acquired {
            ranges,
            batches: again,
        }
    }

    /// Applies `member`'s acknowledgements: all or nothing, INVALID_RECORD_STATE when an
    /// offset is not acquired by it or a renewal is not `renew_allowed` (the group's
    /// `share.renew.acknowledge.enable`, checked after the state as Kafka's share partition
    /// checks it), INVALID_REQUEST for a malformed batch.
    fn acknowledge(
        &mut self,
        member: &str,
        batches: &[AckBatch],
        (config, renew_allowed): (&ShareConfig, bool),
        now: Instant,
    ) -> ErrorCode {
        let mut previous_last = i64::MIN;
        for batch in batches {
            let span = batch
                .last
                .checked_sub(batch.first)
                .and_then(|d| d.checked_add(1));
            let Some(span) = span.filter(|span| *span > 0) else {
                return ErrorCode::INVALID_REQUEST;
            };
            if batch.first <= previous_last
                || batch.types.is_empty()
                || (batch.types.len() != 1 && batch.types.len() as i64 != span)
            {
                return ErrorCode::INVALID_REQUEST;
            }
            previous_last = batch.last;
            // Every offset must be in flight and locked to this member.
            if batch.first < self.start || batch.last >= self.end {
                return ErrorCode::INVALID_RECORD_STATE;
            }
            let held = self.records.range(batch.first..=batch.last).all(|(_, r)| {
                matches!(&r.state, RecordState::Acquired { member: m, .. } if &**m == member)
            });
            if !held || (!renew_allowed && batch.types.contains(&AckType::Renew)) {
                return ErrorCode::INVALID_RECORD_STATE;
            }
        }
        self.persisted_start = self.start;
        for batch in batches {
            for (at, (_, record)) in self.records.range_mut(batch.first..=batch.last).enumerate() {
                let kind = if batch.types.len() == 1 {
                    batch.types[0]
                } else {
                    batch.types[at]
                };
                record.state = match kind {
                    AckType::Gap | AckType::Accept => RecordState::Acknowledged,
                    AckType::Reject => RecordState::Archived,
                    AckType::Release => {
                        released(record.delivery_count, config.delivery_count_limit)
                    }
                    AckType::Renew => RecordState::Acquired {
                        member: Arc::from(member),
                        until: now + config.lock_timeout,
                    },
                };
            }
        }
        self.advance();
        ErrorCode::NONE
    }
}

/// A released record's state: available again, or archived at the delivery limit.
/// Whether `batch` is a transactional data batch of a transaction that was aborted.
fn aborted(log: &PartitionLog, batch: &StoredBatch) -> bool {
    // A v2 batch's attributes and producer id, at their fixed places in its header.
    const ATTRIBUTES_AT: usize = 21;
    const PRODUCER_ID_AT: usize = 43;
    const TRANSACTIONAL: i16 = 0x10;
    const CONTROL: i16 = 0x20;
    let bytes = batch.bytes();
    let (Some(attributes), Some(producer_id)) = (
        bytes.get(ATTRIBUTES_AT..ATTRIBUTES_AT + 2),
        bytes.get(PRODUCER_ID_AT..PRODUCER_ID_AT + 8),
    ) else {
        return false;
    };
    let attributes = i16::from_be_bytes([attributes[0], attributes[1]]);
    if attributes & TRANSACTIONAL == 0 || attributes & CONTROL != 0 {
        return false;
    }
    let producer_id = i64::from_be_bytes(producer_id.try_into().unwrap_or([0xff; 8]));
    log.txns
        .aborted_between(batch.base_offset, batch.next_offset)
        .iter()
        .any(|txn| txn.producer_id == producer_id && txn.first_offset <= batch.base_offset)
}

/// Where a share partition with no state starts, by the group's reset strategy.
fn reset_offset(log: &PartitionLog, reset: ShareReset) -> i64 {
    match reset {
        ShareReset::Earliest => log.log_start(),
        ShareReset::Latest => log.high_watermark(),
        ShareReset::ByDuration(ago) => {
            let ago = i64::try_from(ago.as_millis()).unwrap_or(i64::MAX);
            let since = crate::state::now_ms().saturating_sub(ago);
            first_at_or_after(log, since).unwrap_or_else(|| log.high_watermark())
        }
    }
}

/// The offset of the first record stamped at or after `timestamp` (ms), as Kafka's
/// offset-for-timestamp lookup finds it.
fn first_at_or_after(log: &PartitionLog, timestamp: i64) -> Option<i64> {
    let batch = log
        .batches()
        .find(|batch| batch.max_timestamp >= timestamp)?;
    let decoded = kafka_codec::records::BatchReader::new(batch.bytes())
        .next()
        .and_then(Result::ok)
        .and_then(|batch| batch.decode().ok());
    let Some(decoded) = decoded else {
        return Some(batch.base_offset);
    };
    decoded
        .records
        .iter()
        .find(|record| decoded.record_timestamp(record) >= timestamp)
        .map(|record| record.offset)
        .or(Some(batch.next_offset))
}

/// `config` as `settings` (one group's configs) override it.
fn effective(config: ShareConfig, settings: Option<&GroupSettings>) -> ShareConfig {
    let mut config = config;
    if let Some(settings) = settings {
        if let Some(lock) = settings.record_lock_duration {
            config.lock_timeout = lock;
        }
        if let Some(limit) = settings.delivery_count_limit {
            config.delivery_count_limit = limit;
        }
        if let Some(timeout) = settings.share_session_timeout {
            config.session_timeout = timeout;
        }
        if let Some(interval) = settings.share_heartbeat_interval {
            config.heartbeat_interval = interval;
        }
        if let Some(locks) = settings.max_record_locks {
            config.max_record_locks = locks;
        }
    }
    config
}

fn released(delivery_count: i16, limit: i16) -> RecordState {
    if delivery_count >= limit {
        RecordState::Archived
    } else {
        RecordState::Available
    }
}

/// One member of a share group.
#[derive(Debug, Clone)]
pub struct ShareMember {
    /// Who it is (its id chosen by the client, no instance id), its epochs and session.
    pub membership: Membership,
    /// The topics it subscribes to, sorted.
    pub subscribed_names: Vec<String>,
    /// Its assignment.
    pub assigned: Assignment,
    /// The assignment it was last sent.
    sent: Option<Assignment>,
}

group_members::impl_member!(ShareMember);

impl Subscriber for ShareMember {
    fn subscription(&self) -> &[String] {
        &self.subscribed_names
    }
}

/// A share group.
#[derive(Debug, Clone, Default)]
pub struct ShareGroup {
    /// The group epoch.
    pub epoch: i32,
    /// The epoch of the assignment.
    pub assignment_epoch: i32,
    /// Members by id.
    pub members: BTreeMap<String, ShareMember>,
    /// The subscribed topics the assignment saw.
    subscribed_topics: TopicsByName,
    /// Each member's target as Kafka's coordinator reads it back, in its hash order, which
    /// the next assignment walks ([`simple`]); one whose contents no longer match the
    /// member's assignment is rebuilt from them.
    java_targets: BTreeMap<String, JavaAssignment>,
    /// The partitions its members fetched, by topic id and index.
    pub partitions: BTreeMap<(Uuid, i32), SharePartition>,
}

impl ShareGroup {
    /// Kafka's share group states: `Empty` without members, else `Stable` (members take
    /// their assignment at once: nothing to revoke when partitions are shared).
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    fn subscribed(&self, topics: &TopicsByName) -> TopicsByName {
        topics
            .iter()
            .filter(|(name, _)| {
                self.members
                    .values()
                    .any(|member| member.subscribed_names.contains(name))
            })
            .map(|(name, topic)| (name.clone(), *topic))
            .collect()
    }

    /// Assigns at the group epoch as Kafka 4.4's `simple` assignor does ([`simple`]), from
    /// each member's previous target.
    fn assign(&mut self, topics: &TopicsByName) {
        self.subscribed_topics = self.subscribed(topics);
        let known = std::mem::take(&mut self.java_targets);
        let previous: BTreeMap<&str, JavaAssignment> = self
            .members
            .iter()
            .filter(|(_, member)| !member.assigned.is_empty() || known.contains_key(&member.id))
            .map(|(id, member)| {
                let same = known
                    .get(id)
                    .filter(|java| contents(java) == member.assigned)
                    .cloned();
                let java = same.unwrap_or_else(|| kafka_uniform::from_contents(&member.assigned));
                (id.as_str(), java)
            })
            .collect();
        let order = kafka_uniform::member_order(self.members.keys().map(String::as_str));
        let first = self.members.values().next().map(|m| &m.subscribed_names);
        let homogeneous = self
            .members
            .values()
            .all(|member| Some(&member.subscribed_names) == first);
        let members: Vec<simple::Member<'_>> = order
            .iter()
            .map(|id| simple::Member {
                id,
                topics: kafka_uniform::topic_ids(&self.members[*id].subscribed_names, |name| {
                    self.subscribed_topics.get(name).map(|(topic, _)| *topic)
                }),
                previous: previous.get(id),
            })
            .collect();
        let partitions: BTreeMap<Uuid, i32> = topics.values().copied().collect();
        for (id, java) in simple::assign(&members, &partitions, homogeneous) {
            let java = kafka_uniform::replayed(&java);
            if let Some(member) = self.members.get_mut(&id) {
                member.assigned = contents(&java);
            }
            self.java_targets.insert(id, java);
        }
        self.assignment_epoch = self.epoch;
    }

    /// Removes members whose session ended; their locks are released.
    fn expire(&mut self, now: Instant, topics: &TopicsByName, limit: i16) {
        let due = group_members::due(&self.members, now);
        if due.is_empty() {
            return;
        }
        for id in &due {
            self.remove(id, limit);
        }
        self.epoch += 1;
        self.assign(topics);
    }

    fn remove(&mut self, id: &str, limit: i16) {
        self.members.remove(id);
        for partition in self.partitions.values_mut() {
            partition.release_member(id, limit);
        }
    }

    fn bytes(&self) -> usize {
        64 + self
            .members
            .values()
            .map(|m| {
                128 + m.id.len()
                    + m.client_id.len()
                    + m.client_host.len()
                    + m.subscribed_names
                        .iter()
                        .map(|n| 16 + n.len())
                        .sum::<usize>()
                    + 8 * m.assigned.values().map(BTreeSet::len).sum::<usize>()
            })
            .sum::<usize>()
            + self
                .partitions
                .values()
                .map(|p| 64 + 48 * p.records.len())
                .sum::<usize>()
            // The targets as Kafka reads them back: a table per topic, an entry per partition.
            + self
                .java_targets
                .iter()
                .map(|(id, target)| {
                    64 + id.len()
                        + target
                            .iter()
                            .map(|(_, set)| 64 + 16 * set.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// A ShareGroupHeartbeat, as read from the request.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    /// The member id (chosen by the client).
    pub member_id: String,
    /// 0 to join, -1 to leave, else the member's epoch.
    pub member_epoch: i32,
    /// Its rack (null: unchanged).
    pub rack_id: Option<String>,
    /// Its subscription (null: unchanged).
    pub subscribed_names: Option<Vec<String>>,
    /// The client id of the request.
    pub client_id: String,
    /// The peer's host.
    pub client_host: String,
}

/// A heartbeat's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatOutcome {
    /// The error.
    pub error: ErrorCode,
    /// Why, for an error.
    pub message: Option<String>,
    /// The member's id.
    pub member_id: Option<String>,
    /// Its epoch.
    pub member_epoch: i32,
    /// Its assignment, when it changed or it joined.
    pub assignment: Option<Assignment>,
}

impl HeartbeatOutcome {
    /// An error answer.
    pub fn error(error: ErrorCode, message: impl Into<String>) -> Self {
        HeartbeatOutcome {
            error,
            message: Some(message.into()),
            member_id: None,
            member_epoch: 0,
            assignment: None,
        }
    }
}

/// The request checks of Kafka's share group heartbeat, before any state is looked at.
pub fn validate(group_id: &str, request: &Heartbeat) -> Result<(), HeartbeatOutcome> {
    let invalid = |message: &str| Err(HeartbeatOutcome::error(ErrorCode::INVALID_REQUEST, message));
    if group_id.is_empty() {
        return invalid("GroupId can't be empty.");
    }
    if request.member_id.is_empty() {
        return invalid("MemberId can't be empty.");
    }
    if request.rack_id.as_deref() == Some("") {
        return invalid("RackId can't be empty.");
    }
    match request.member_epoch {
        0 if request
            .subscribed_names
            .as_ref()
            .is_none_or(|names| names.is_empty()) =>
        {
            invalid("SubscribedTopicNames cannot be null or empty when MemberEpoch is zero.")
        }
        epoch if epoch < LEAVE_EPOCH => invalid(&format!("MemberEpoch is invalid: {epoch}.")),
        _ => Ok(()),
    }
}

/// The share session of one member.
#[derive(Debug, Clone)]
struct Session {
    /// The epoch its next request must name.
    next_epoch: i32,
    /// The partitions it fetches.
    partitions: BTreeSet<(Uuid, i32)>,
}

/// A ShareFetch or ShareAcknowledge's session, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOutcome {
    /// The partitions to fetch from (a ShareAcknowledge fetches none).
    Open(BTreeSet<(Uuid, i32)>),
    /// The session closed (epoch -1): nothing is fetched.
    Closed,
}

/// Every share group of the cluster, their share partitions and share sessions.
#[derive(Debug)]
pub struct ShareGroups {
    /// Groups by id.
    pub groups: BTreeMap<String, ShareGroup>,
    sessions: BTreeMap<(String, String), Session>,
    /// The timeouts and limits.
    pub config: ShareConfig,
    limits: GroupLimits,
    /// Per group id, what its configs set (`crate::group_configs`), kept in step by the
    /// config APIs.
    settings: BTreeMap<String, GroupSettings>,
}

impl ShareGroups {
    /// None yet.
    pub fn new(config: ShareConfig, limits: GroupLimits) -> Self {
        ShareGroups {
            groups: BTreeMap::new(),
            sessions: BTreeMap::new(),
            config,
            limits,
            settings: BTreeMap::new(),
        }
    }

    /// Takes `group_id`'s configs as its group configs now set them.
    pub fn set_settings(&mut self, group_id: &str, settings: GroupSettings) {
        if settings == GroupSettings::default() {
            self.settings.remove(group_id);
        } else {
            self.settings.insert(group_id.to_owned(), settings);
        }
    }

    /// The timeouts and limits of `group_id`: the cluster's, as its configs override them.
    pub fn config_of(&self, group_id: &str) -> ShareConfig {
        effective(self.config, self.settings.get(group_id))
    }

    /// Bytes held, for the coordinator's cap.
    pub fn bytes(&self) -> usize {
        self.groups
            .iter()
            .map(|(id, group)| id.len() + group.bytes())
            .sum::<usize>()
            + self
                .sessions
                .iter()
                .map(|((g, m), s)| 64 + g.len() + m.len() + 24 * s.partitions.len())
                .sum::<usize>()
    }

    /// ShareGroupHeartbeat (the request checked by [`validate`]), `topics` being every
    /// topic of the cluster.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        request: &Heartbeat,
        topics: &TopicsByName,
        now: Instant,
    ) -> HeartbeatOutcome {
        let joining = request.member_epoch == 0;
        let limit = self.config_of(group_id).delivery_count_limit;
        if !self.groups.contains_key(group_id) {
            if !joining {
                return HeartbeatOutcome::error(
                    ErrorCode::GROUP_ID_NOT_FOUND,
                    format!("Group {group_id} not found."),
                );
            }
            if self.groups.len() >= self.limits.max_groups || self.bytes() >= self.limits.max_bytes
            {
                return HeartbeatOutcome::error(
                    ErrorCode::GROUP_MAX_SIZE_REACHED,
                    "The coordinator holds as many share groups as it may.",
                );
            }
        }
        // Sessions that ended and the timer has not reached yet end first.
        self.expire(now, topics);
        let group = self.groups.entry(group_id.into()).or_default();
        let id = request.member_id.clone();
        let mut bump = false;
        match (group.members.get(&id), request.member_epoch) {
            (None, LEAVE_EPOCH) | (None, 1..) => {
                return HeartbeatOutcome::error(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    format!("Member {id} is not a member of group {group_id}."),
                );
            }
            (Some(_), LEAVE_EPOCH) => {
                group.remove(&id, limit);
                group.epoch += 1;
                group.assign(topics);
                self.sessions.retain(|(g, m), _| g != group_id || *m != id);
                return HeartbeatOutcome {
                    error: ErrorCode::NONE,
                    message: None,
                    member_id: Some(id),
                    member_epoch: LEAVE_EPOCH,
                    assignment: None,
                };
            }
            // Ahead of the coordinator, or behind it other than by the one epoch it may
            // not have heard of yet: fenced (Kafka's messages).
            (Some(member), epoch) if epoch != 0 => {
                let checked = group_members::check_epoch(member, epoch, true, "share", true);
                if let Err((error, message)) = checked {
                    return HeartbeatOutcome::error(error, message);
                }
            }
            (None, _) => {
                if group.members.len() >= self.limits.max_members {
                    return HeartbeatOutcome::error(
                        ErrorCode::GROUP_MAX_SIZE_REACHED,
                        format!(
                            "The share group has reached its maximum capacity of {} members.",
                            self.limits.max_members
                        ),
                    );
                }
                group.members.insert(
                    id.clone(),
                    ShareMember {
                        membership: Membership::new(id.clone(), None, now),
                        subscribed_names: Vec::new(),
                        assigned: Assignment::new(),
                        sent: None,
                    },
                );
                bump = true;
            }
            (Some(_), _) => {}
        }
        let member = group.members.get_mut(&id).expect("inserted or found above");
        let session = effective(self.config, self.settings.get(group_id)).session_timeout;
        member.heard(&request.client_id, &request.client_host, now + session);
        if let Some(rack) = &request.rack_id {
            member.rack_id = Some(rack.clone());
        }
        if joining {
            // A (re)join is sent its assignment whatever it was sent before.
            member.sent = None;
        }
        if let Some(names) = &request.subscribed_names {
            let mut names = names.clone();
            names.sort();
            names.dedup();
            if names != member.subscribed_names {
                member.subscribed_names = names;
                bump = true;
            }
        }
        if bump || group.subscribed(topics) != group.subscribed_topics {
            group.epoch += 1;
            group.assign(topics);
        }
        let assignment_epoch = group.assignment_epoch;
        let member = group.members.get_mut(&id).expect("still a member");
        member.advance_to(assignment_epoch);
        let changed = member.sent.as_ref() != Some(&member.assigned);
        if changed {
            member.sent = Some(member.assigned.clone());
        }
        HeartbeatOutcome {
            error: ErrorCode::NONE,
            message: None,
            member_id: Some(id),
            member_epoch: member.epoch,
            assignment: changed.then(|| member.assigned.clone()),
        }
    }

    /// The earliest end of a member's session in any group.
    pub fn next_session_deadline(&self) -> Option<Instant> {
        self.groups
            .values()
            .filter_map(|group| group_members::next_deadline(&group.members))
            .min()
    }

    /// Removes the members whose session ended by `now` (their locks released, their
    /// groups assigned again over `topics`, every topic of the cluster), and their share
    /// sessions.
    pub fn expire(&mut self, now: Instant, topics: &TopicsByName) {
        let mut gone: Vec<(String, String)> = Vec::new();
        for (group_id, group) in &mut self.groups {
            let limit = effective(self.config, self.settings.get(group_id)).delivery_count_limit;
            let before: Vec<String> = group.members.keys().cloned().collect();
            group.expire(now, topics, limit);
            gone.extend(
                before
                    .into_iter()
                    .filter(|id| !group.members.contains_key(id))
                    .map(|id| (group_id.clone(), id)),
            );
        }
        for key in gone {
            self.sessions.remove(&key);
        }
    }

    /// Removes `member_id` of `group_id` as its session's end would (the control surface's
    /// `expire_session`): its records and share session released, the group assigned again
    /// over `topics` at its next epoch. GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID.
    pub fn expire_member(
        &mut self,
        group_id: &str,
        member_id: &str,
        topics: &TopicsByName,
    ) -> Result<(), ErrorCode> {
        let limit = self.config_of(group_id).delivery_count_limit;
        let group = self
            .groups
            .get_mut(group_id)
            .ok_or(ErrorCode::GROUP_ID_NOT_FOUND)?;
        if !group.members.contains_key(member_id) {
            return Err(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        group.remove(member_id, limit);
        group.epoch += 1;
        group.assign(topics);
        self.sessions
            .remove(&(group_id.to_string(), member_id.to_string()));
        Ok(())
    }

    /// Whether `member_id` of `group_id` has a share session.
    pub fn has_session(&self, group_id: &str, member_id: &str) -> bool {
        self.sessions
            .contains_key(&(group_id.to_string(), member_id.to_string()))
    }

    /// Checks and moves on `member_id`'s share session for a request at `epoch` naming
    /// `added` and `forgotten` partitions (a ShareAcknowledge names none), as Kafka's
    /// share session cache: epoch 0 opens a session (replacing the member's last), -1
    /// closes it (releasing the member's locks), any other must be the session's next.
    /// A session may name a group not held (it makes no group: its fetches are answered
    /// UNKNOWN_SERVER_ERROR, see [`ShareGroups::holds`]); more partitions than a session may
    /// name: INVALID_REQUEST.
    pub fn session(
        &mut self,
        group_id: &str,
        member_id: &str,
        epoch: i32,
        added: &[(Uuid, i32)],
        forgotten: &[(Uuid, i32)],
    ) -> Result<SessionOutcome, ErrorCode> {
        let key = (group_id.to_string(), member_id.to_string());
        match epoch {
            INITIAL_EPOCH => {
                if !self.sessions.contains_key(&key)
                    && self.sessions.len() >= self.config.max_sessions
                {
                    return Err(ErrorCode::SHARE_SESSION_LIMIT_REACHED);
                }
                let partitions: BTreeSet<(Uuid, i32)> = added.iter().copied().collect();
                if partitions.len() > self.config.max_session_partitions {
                    return Err(ErrorCode::INVALID_REQUEST);
                }
                self.sessions.insert(
                    key,
                    Session {
                        next_epoch: 1,
                        partitions: partitions.clone(),
                    },
                );
                Ok(SessionOutcome::Open(partitions))
            }
            FINAL_EPOCH => {
                if self.sessions.remove(&key).is_none() {
                    return Err(ErrorCode::SHARE_SESSION_NOT_FOUND);
                }
                let limit = self.config_of(group_id).delivery_count_limit;
                if let Some(group) = self.groups.get_mut(group_id) {
                    for partition in group.partitions.values_mut() {
                        partition.release_member(member_id, limit);
                    }
                }
                Ok(SessionOutcome::Closed)
            }
            _ => {
                let Some(session) = self.sessions.get_mut(&key) else {
                    return Err(ErrorCode::SHARE_SESSION_NOT_FOUND);
                };
                if session.next_epoch != epoch {
                    return Err(ErrorCode::INVALID_SHARE_SESSION_EPOCH);
                }
                let fresh: Vec<(Uuid, i32)> = added
                    .iter()
                    .filter(|partition| !session.partitions.contains(partition))
                    .copied()
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                let gone = forgotten
                    .iter()
                    .filter(|partition| session.partitions.contains(partition))
                    .count();
                if (session.partitions.len() + fresh.len()).saturating_sub(gone)
                    > self.config.max_session_partitions
                {
                    // Kafka has no such cap; the session stays as it was.
                    return Err(ErrorCode::INVALID_REQUEST);
                }
                // After i32::MAX comes 1, as Kafka's session epochs wrap.
                session.next_epoch = if epoch == i32::MAX { 1 } else { epoch + 1 };
                for partition in forgotten {
                    session.partitions.remove(partition);
                }
                session.partitions.extend(fresh);
                Ok(SessionOutcome::Open(session.partitions.clone()))
            }
        }
    }

    /// Whether `group_id` is a share group held here (a member heartbeated, or
    /// AlterShareGroupOffsets made it): Kafka's share coordinator holds no state for
    /// another, and its share-partition leader answers each partition fetched in it
    /// UNKNOWN_SERVER_ERROR (compared with Kafka 4.4 in `tests/share_fetch_unknown_group.rs`).
    pub fn holds(&self, group_id: &str) -> bool {
        self.groups.contains_key(group_id)
    }

    /// The share partition of `group_id` for `partition`, made where `reset` says on first
    /// use (`share.auto.offset.reset`); the group is made if it was not (the ShareFetch
    /// handler acquires only in a group [`held`](ShareGroups::holds)).
    fn partition(
        &mut self,
        group_id: &str,
        partition: (Uuid, i32),
        log: &PartitionLog,
        reset: ShareReset,
    ) -> &mut SharePartition {
        self.groups
            .entry(group_id.into())
            .or_default()
            .partitions
            .entry(partition)
            .or_insert_with(|| SharePartition::starting_at(reset_offset(log, reset)))
    }

    /// Acquires records of `log` for `member_id`; see [`SharePartition`].
    #[allow(clippy::too_many_arguments)]
    pub fn acquire(
        &mut self,
        group_id: &str,
        member_id: &str,
        partition: (Uuid, i32),
        log: &PartitionLog,
        max_records: usize,
        strict: bool,
        max_bytes: usize,
        now: Instant,
    ) -> Acquired {
        let config = self.config_of(group_id);
        let settings = self.settings.get(group_id).copied().unwrap_or_default();
        let member: Arc<str> = Arc::from(member_id);
        let share = self.partition(group_id, partition, log, settings.share_reset);
        share.expire(now, config.delivery_count_limit);
        let read_committed = settings.read_committed;
        share.acquire(
            log,
            &member,
            max_records,
            strict,
            max_bytes,
            &config,
            read_committed,
            now,
        )
    }

    /// Applies `member_id`'s acknowledgements of `partition` (a partition never fetched by
    /// the group has nothing acquired: INVALID_RECORD_STATE), with Kafka's message when an
    /// offset acknowledged is not in flight at all ([`NOT_IN_FLIGHT`]).
    pub fn acknowledge(
        &mut self,
        group_id: &str,
        member_id: &str,
        partition: (Uuid, i32),
        batches: &[AckBatch],
        now: Instant,
    ) -> (ErrorCode, Option<&'static str>) {
        let config = self.config_of(group_id);
        let Some(share) = self
            .groups
            .get_mut(group_id)
            .and_then(|group| group.partitions.get_mut(&partition))
        else {
            return (ErrorCode::INVALID_RECORD_STATE, Some(NOT_IN_FLIGHT));
        };
        share.expire(now, config.delivery_count_limit);
        let renew_allowed = self
            .settings
            .get(group_id)
            .is_none_or(|settings| settings.renew_acknowledge);
        let error = share.acknowledge(member_id, batches, (&config, renew_allowed), now);
        let outside = batches
            .iter()
            .any(|batch| batch.first < share.start || batch.last >= share.end);
        let message =
            (error == ErrorCode::INVALID_RECORD_STATE && outside).then_some(NOT_IN_FLIGHT);
        (error, message)
    }

    /// The earliest lock deadline of `group_id`'s partitions among `partitions`: a ShareFetch
    /// waiting for records wakes then, when released records may be acquired again.
    pub fn next_lock_deadline(
        &self,
        group_id: &str,
        partitions: &BTreeSet<(Uuid, i32)>,
    ) -> Option<Instant> {
        let group = self.groups.get(group_id)?;
        partitions
            .iter()
            .filter_map(|p| group.partitions.get(p))
            .filter_map(SharePartition::next_deadline)
            .min()
    }

    /// Starts `group_id`'s share partition `partition` afresh at `offset`
    /// (AlterShareGroupOffsets, which Kafka allows only for a group without members: the
    /// share state is initialized again, what was in flight forgotten).
    pub fn set_start(&mut self, group_id: &str, partition: (Uuid, i32), offset: i64) {
        self.groups
            .entry(group_id.into())
            .or_default()
            .partitions
            .insert(partition, SharePartition::starting_at(offset));
    }

    /// The check AlterShareGroupOffsets and DeleteShareGroupOffsets make of their group, as
    /// Kafka 4.4: a share group without members. A group not held is made when `make`
    /// (AlterShareGroupOffsets, within the cap on groups: GROUP_MAX_SIZE_REACHED), else
    /// GROUP_ID_NOT_FOUND; one with members NON_EMPTY_GROUP; each with Kafka's message.
    pub fn without_members(
        &mut self,
        group_id: &str,
        make: bool,
    ) -> Result<(), (ErrorCode, String)> {
        if make {
            self.make_group(group_id)
                .map_err(|error| (error, "Too many groups.".to_owned()))?;
        }
        match self.groups.get(group_id) {
            None => Err((
                ErrorCode::GROUP_ID_NOT_FOUND,
                format!("Group {group_id} not found."),
            )),
            Some(group) if !group.members.is_empty() => Err((
                ErrorCode::NON_EMPTY_GROUP,
                format!("Group {group_id} is not empty."),
            )),
            Some(_) => Ok(()),
        }
    }

    /// Makes `group_id` an empty share group if it is none yet (AlterShareGroupOffsets on a
    /// group not held, as Kafka 4.4 does), within the cap on groups (GROUP_MAX_SIZE_REACHED).
    pub fn make_group(&mut self, group_id: &str) -> Result<(), ErrorCode> {
        if !self.groups.contains_key(group_id) {
            if self.groups.len() >= self.limits.max_groups {
                return Err(ErrorCode::GROUP_MAX_SIZE_REACHED);
            }
            self.groups.insert(group_id.into(), ShareGroup::default());
        }
        Ok(())
    }

    /// Forgets `group_id`'s share partitions of `topic` (DeleteShareGroupOffsets): each
    /// starts again where `share.auto.offset.reset` says at its next fetch. Whether the group
    /// held any.
    pub fn forget_topic(&mut self, group_id: &str, topic: Uuid) -> bool {
        let Some(group) = self.groups.get_mut(group_id) else {
            return false;
        };
        let before = group.partitions.len();
        group.partitions.retain(|(id, _), _| *id != topic);
        group.partitions.len() != before
    }

    /// Forgets `group_id`'s share partition `partition` (AlterShareGroupOffsets to -1, the
    /// uninitialized start: it starts again where `share.auto.offset.reset` says).
    pub fn forget_partition(&mut self, group_id: &str, partition: (Uuid, i32)) {
        if let Some(group) = self.groups.get_mut(group_id) {
            group.partitions.remove(&partition);
        }
    }

    /// Removes `group_id` and its sessions (DeleteGroups): refused with NON_EMPTY_GROUP
    /// while it has members, GROUP_ID_NOT_FOUND if there is none.
    pub fn delete(&mut self, group_id: &str) -> ErrorCode {
        match self.groups.get(group_id) {
            None => ErrorCode::GROUP_ID_NOT_FOUND,
            Some(group) if !group.members.is_empty() => ErrorCode::NON_EMPTY_GROUP,
            Some(_) => {
                self.groups.remove(group_id);
                self.sessions.retain(|(g, _), _| g != group_id);
                ErrorCode::NONE
            }
        }
    }
}

/// Every topic of `state` as the assignors see it.
pub(crate) fn topics_by_name(state: &crate::state::State) -> TopicsByName {
    state
        .topics
        .iter()
        .map(|(name, topic)| (name.clone(), (topic.id, topic.partitions.len() as i32)))
        .collect()
}

/// Removes share group members at the end of their session (45 s without a heartbeat), until
/// the cluster stops; woken early by `Shared::share_groups_changed` when a member joins.
pub async fn run_timers(shared: Arc<crate::Shared>, mut stop: watch::Receiver<()>) {
    loop {
        let changed = shared.share_groups_changed.notified();
        let next = shared.share_groups().next_session_deadline();
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {
                // Read before the share groups are locked (never the state's lock inside).
                let topics = topics_by_name(&shared.state());
                shared.share_groups().expire(crate::clock::now(), &topics);
            }
            () = changed => {}
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, topics: &[&str]) -> (String, ShareMember) {
        let member = ShareMember {
            membership: Membership::new(id.into(), None, crate::clock::now()),
            subscribed_names: topics.iter().map(|t| t.to_string()).collect(),
            assigned: Assignment::new(),
            sent: None,
        };
        (id.into(), member)
    }

    #[test]
    fn more_members_than_partitions_share_them() {
        let topics: TopicsByName = [("a".to_string(), (Uuid([1; 16]), 2))].into();
        let mut group = ShareGroup {
            members: ["m1", "m2", "m3"]
                .iter()
                .map(|id| member(id, &["a"]))
                .collect(),
            ..ShareGroup::default()
        };
        group.assign(&topics);
        let mut holders: BTreeMap<i32, usize> = BTreeMap::new();
        for member in group.members.values() {
            let mine = &member.assigned[&Uuid([1; 16])];
            assert!(!mine.is_empty(), "{} has no partition", member.id);
            for p in mine {
                *holders.entry(*p).or_default() += 1;
            }
        }
        assert_eq!(holders.len(), 2, "both partitions assigned: {holders:?}");
    }

    #[test]
    fn malformed_acknowledgements_are_refused_whole() {
        let mut share = SharePartition::starting_at(0);
        let config = ShareConfig::default();
        let now = crate::clock::now();
        share.end = 3;
        for offset in 0..3 {
            share.records.insert(
                offset,
                InFlight {
                    state: RecordState::Acquired {
                        member: Arc::from("m"),
                        until: now + config.lock_timeout,
                    },
                    delivery_count: 1,
                },
            );
        }
        let batch = |first, last, types: &[AckType]| AckBatch {
            first,
            last,
            types: types.to_vec(),
        };
        // Backwards, overlapping, types of the wrong length: nothing applied.
        for bad in [
            vec![batch(2, 1, &[AckType::Accept])],
            vec![
                batch(0, 1, &[AckType::Accept]),
                batch(1, 2, &[AckType::Accept]),
            ],
            vec![batch(0, 2, &[AckType::Accept, AckType::Reject])],
        ] {
            assert_eq!(
                share.acknowledge("m", &bad, (&config, true), now),
                ErrorCode::INVALID_REQUEST
            );
        }
        // Another member's records, or offsets past those acquired.
        assert_eq!(
            share.acknowledge(
                "other",
                &[batch(0, 0, &[AckType::Accept])],
                (&config, true),
                now
            ),
            ErrorCode::INVALID_RECORD_STATE
        );
        assert_eq!(
            share.acknowledge(
                "m",
                &[batch(2, 3, &[AckType::Accept])],
                (&config, true),
                now
            ),
            ErrorCode::INVALID_RECORD_STATE
        );
        assert_eq!(share.start_offset(), 0, "nothing was applied");
        let mixed = [AckType::Accept, AckType::Release, AckType::Reject];
        assert_eq!(
            share.acknowledge("m", &[batch(0, 2, &mixed)], (&config, true), now),
            ErrorCode::NONE
        );
        assert_eq!(share.start_offset(), 1, "offset 1 was released, 0 accepted");
        assert_eq!(share.records[&1].state, RecordState::Available);
        assert_eq!(share.records[&2].state, RecordState::Archived);
    }

    #[test]
    fn sessions_are_capped_and_make_no_group() {
        let config = ShareConfig {
            max_session_partitions: 2,
            ..ShareConfig::default()
        };
        let limits = GroupLimits {
            max_groups: 1,
            ..GroupLimits::default()
        };
        let mut share = ShareGroups::new(config, limits);
        let topic = Uuid([7; 16]);
        let two = [(topic, 0), (topic, 1)];
        assert_eq!(
            share.session("g", "m", INITIAL_EPOCH, &two, &[]),
            Ok(SessionOutcome::Open(two.into_iter().collect()))
        );
        // A third partition is refused and the session stays as it was, at its epoch.
        assert_eq!(
            share.session("g", "m", 1, &[(topic, 2)], &[]),
            Err(ErrorCode::INVALID_REQUEST)
        );
        assert_eq!(
            share.session("g", "m", 1, &[(topic, 2)], &[(topic, 0)]),
            Ok(SessionOutcome::Open(
                [(topic, 1), (topic, 2)].into_iter().collect()
            ))
        );
        // A session in a group not held makes no group.
        assert_eq!(
            share.session("other", "m", INITIAL_EPOCH, &[], &[]),
            Ok(SessionOutcome::Open(BTreeSet::new()))
        );
        assert!(!share.holds("other") && !share.holds("g"));
    }
}
