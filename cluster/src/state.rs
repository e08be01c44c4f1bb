//! The cluster's state: topics, their partitions and each partition's log, in memory. The
//! handlers change it; nothing here knows of connections or the wire.
//!
//! A log is a queue of whole record batches. A produced batch is kept as it arrived, a slice
//! of its request's frame (no copy while producing), and its base offset and partition
//! leader epoch, fields outside the batch's CRC, are written as a Fetch copies it out
//! ([`StoredBatch::write_to`]); a batch the cluster writes (a transaction marker, a
//! compacted batch) is stored as written. Retention is
//! by bytes, as Kafka's `retention.bytes` drops whole segments: when a partition or the
//! cluster holds more than its cap, the oldest batches go and the log start moves past them.

mod cleaner;
mod elr;
mod fencing;
mod placement;
mod reassign;
mod rebalance;

pub use cleaner::Cleaned;
pub use elr::{Change, Partition};
pub use fencing::{replicas_among, ReplicaView};
pub use reassign::{check_assignment, Ongoing, Refused};
pub use rebalance::MAX_ELECTIONS_PER_PASS;

use crate::configs::Overrides;
use crate::producers::{PartitionProducers, ProducerIds};
use crate::transactions::{PartitionTxns, Transactions};
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::Uuid;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, VecDeque};
use std::hash::{BuildHasher, Hasher};

/// Caps on what the logs hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Bytes one partition's log holds before its oldest batches are dropped.
    pub partition_bytes: usize,
    /// Bytes all logs together hold before the oldest batches of the fullest partition are
    /// dropped.
    pub cluster_bytes: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            partition_bytes: 256 << 20,
            cluster_bytes: 1 << 30,
        }
    }
}

/// One stored batch.
#[derive(Debug, Clone)]
pub struct StoredBatch {
    /// Offset of its first record.
    pub base_offset: i64,
    /// One past the offset of its last record.
    pub next_offset: i64,
    /// The batch: as the cluster wrote it, or as its producer sent it (`stamp`).
    bytes: Bytes,
    /// For a batch kept as its producer sent it: the partition leader epoch that, with
    /// `base_offset`, is written over the producer's as the batch is read.
    stamp: Option<i32>,
    /// Its largest record timestamp.
    pub max_timestamp: i64,
}

/// Where a v2 batch keeps its partition leader epoch (after base offset and length).
const LEADER_EPOCH_AT: usize = 12;

impl StoredBatch {
    /// Its size.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether it has no bytes (never, for a batch a handler stored).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The batch as a Fetch returns it (a copy, for a batch kept as its producer sent it).
    pub fn bytes(&self) -> Bytes {
        if self.stamp.is_none() {
            return self.bytes.clone();
        }
        let mut out = BytesMut::with_capacity(self.len());
        self.write_to(&mut out);
        out.freeze()
    }

    /// Appends the batch as a Fetch returns it to `out`.
    pub fn write_to(&self, out: &mut BytesMut) {
        let start = out.len();
        out.extend_from_slice(&self.bytes);
        // A stored v2 batch is at least its 61-byte header (the produce handler checked).
        if let Some(epoch) = self.stamp.filter(|_| self.len() >= LEADER_EPOCH_AT + 4) {
            let header = &mut out[start..start + LEADER_EPOCH_AT + 4];
            header[..8].copy_from_slice(&self.base_offset.to_be_bytes());
            header[LEADER_EPOCH_AT..].copy_from_slice(&epoch.to_be_bytes());
        }
    }

    /// `batches` one after the other, as a Fetch returns them: a batch the cluster wrote,
    /// alone, as it is; otherwise a copy into this thread's answer buffer
    /// (`ANSWER_BUFFER`), whose pages stay mapped from one answer to the next.
    pub fn concat(batches: &[StoredBatch]) -> Bytes {
        let len = batches.iter().map(StoredBatch::len).sum();
        match batches {
            [] => Bytes::new(),
            [one] if one.stamp.is_none() => one.bytes.clone(),
            many => ANSWER_BUFFER.with_borrow_mut(|buffer| {
                // Takes back the whole allocation once the answers cut from it are gone
                // (written and dropped); while one is still held, a new allocation.
                buffer.reserve(len);
                for batch in many {
                    batch.write_to(buffer);
                }
                let answer = buffer.split().freeze();
                if buffer.capacity() + answer.len() > ANSWER_BUFFER_KEPT {
                    // An unusually large answer: its memory goes with it.
                    *buffer = BytesMut::new();
                }
                answer
            }),
        }
    }
}

thread_local! {
    /// Where Fetch answers are copied on this thread. A fresh buffer per answer (about
    /// 1 MiB at a consumer's default limits, above glibc's mmap threshold, which
    /// `kafka-codec cluster` fixes at 128 KiB) is a fresh mapping: the kernel faults in and
    /// zeroes every page, and unmaps them when the answer is dropped, which cost more CPU
    /// than the copy itself (benches/README.md). One buffer per thread rather than per
    /// connection: the memory kept is bounded by the runtime's threads, not the clients.
    static ANSWER_BUFFER: std::cell::RefCell<BytesMut> =
        std::cell::RefCell::new(BytesMut::new());
}

/// The largest answer buffer a thread keeps between answers.
const ANSWER_BUFFER_KEPT: usize = 4 << 20;

/// A batch being appended to a log.
#[derive(Debug)]
pub enum NewBatch {
    /// Written by the cluster with the base offset it was given.
    Written(Bytes),
    /// As its producer sent it: the base offset it gets and `leader_epoch` are written over
    /// the producer's as it is read, so that it is not copied.
    Received { batch: Bytes, leader_epoch: i32 },
}

impl From<Bytes> for NewBatch {
    fn from(bytes: Bytes) -> Self {
        NewBatch::Written(bytes)
    }
}

/// One partition's log.
#[derive(Debug, Default)]
pub struct PartitionLog {
    batches: VecDeque<StoredBatch>,
    log_start: i64,
    high_watermark: i64,
    bytes: usize,
    /// The idempotent producers that wrote here: their epochs and last batches.
    pub producers: PartitionProducers,
    /// Open transactions' first offsets and the aborted transactions' index.
    pub txns: PartitionTxns,
}

impl PartitionLog {
    /// The first offset still held.
    pub fn log_start(&self) -> i64 {
        self.log_start
    }

    /// The offset the next record gets (every append is committed at once: one replica).
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// The last stable offset: the first offset of the oldest open transaction, else the
    /// high watermark; `read_committed` consumers read up to it.
    pub fn last_stable_offset(&self) -> i64 {
        self.txns
            .first_unstable()
            .map_or(self.high_watermark, |first| first.max(self.log_start))
    }

    /// Bytes of the batches held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Stores a batch of `records` records, `make` writing it with the base offset it is
    /// given (or handing it over as received); the base offset.
    pub fn append<B: Into<NewBatch>>(
        &mut self,
        records: i64,
        max_timestamp: i64,
        make: impl FnOnce(i64) -> B,
    ) -> i64 {
        let base_offset = self.high_watermark;
        let (bytes, stamp) = match make(base_offset).into() {
            NewBatch::Written(bytes) => (bytes, None),
            NewBatch::Received {
                batch,
                leader_epoch,
            } => (batch, Some(leader_epoch)),
        };
        self.high_watermark = base_offset + records;
        self.bytes += bytes.len();
        self.batches.push_back(StoredBatch {
            base_offset,
            next_offset: self.high_watermark,
            bytes,
            stamp,
            max_timestamp,
        });
        base_offset
    }

    /// Drops the oldest batch; the bytes freed (0 when the log is empty).
    fn drop_oldest(&mut self) -> usize {
        let Some(batch) = self.batches.pop_front() else {
            return 0;
        };
        self.bytes -= batch.bytes.len();
        self.log_start = batch.next_offset;
        self.txns.trim(self.log_start);
        batch.bytes.len()
    }

    /// Moves the log start up to `offset` (DeleteRecords), dropping the batches wholly
    /// before it; a batch holding `offset` stays, as Kafka keeps the segment holding the new
    /// log start, and a fetch below the new start is out of range. The bytes freed.
    fn delete_before(&mut self, offset: i64) -> usize {
        let mut freed = 0;
        while self
            .batches
            .front()
            .is_some_and(|batch| batch.next_offset <= offset)
        {
            freed += self.drop_oldest();
        }
        self.log_start = self.log_start.max(offset);
        self.txns.trim(self.log_start);
        freed
    }

    /// The batches from the one holding `offset` on, up to `max_bytes` (the first batch is
    /// returned whole whatever its size, as Kafka does so that a consumer always moves on).
    pub fn read(&self, offset: i64, max_bytes: usize) -> Vec<StoredBatch> {
        self.read_below(offset, max_bytes, i64::MAX).0
    }

    /// [`read`](Self::read), stopping before the batch holding offset `end` (the last
    /// stable offset, for `read_committed`); also the offset after the last batch read.
    pub fn read_below(&self, offset: i64, max_bytes: usize, end: i64) -> (Vec<StoredBatch>, i64) {
        let first = self
            .batches
            .partition_point(|batch| batch.next_offset <= offset);
        let mut out = Vec::new();
        let mut total = 0;
        let mut next = offset;
        for batch in self.batches.range(first..) {
            if batch.next_offset > end || (!out.is_empty() && total + batch.len() > max_bytes) {
                break;
            }
            total += batch.len();
            next = batch.next_offset;
            out.push(batch.clone());
        }
        (out, next)
    }

    /// The stored batches from the one holding `offset` on (share groups acquire records
    /// batch by batch).
    pub fn batches_from(&self, offset: i64) -> impl Iterator<Item = &StoredBatch> {
        let first = self
            .batches
            .partition_point(|batch| batch.next_offset <= offset);
        self.batches.range(first..)
    }

    /// The stored batches, oldest first.
    pub fn batches(&self) -> impl Iterator<Item = &StoredBatch> {
        self.batches.iter()
    }
}

/// A topic.
#[derive(Debug)]
pub struct Topic {
    /// Its id (Metadata v10+, Fetch v13+, Produce v13+).
    pub id: Uuid,
    /// Its partitions, by index.
    pub partitions: Vec<PartitionLog>,
    /// Replicas per partition, as created.
    pub replication_factor: i16,
    /// The brokers it was placed over (`placement.rs`); `None`: the cluster's first ones.
    pub placement: Option<Vec<i32>>,
    /// Partitions added later (CreatePartitions), each run with the brokers it was placed
    /// over: the first partition of the run and those brokers.
    pub grown: Vec<(i32, Vec<i32>)>,
}

impl Topic {
    /// Partition `index` as a request names it (a negative or unknown one: `None`).
    pub fn partition(&self, index: i32) -> Option<&PartitionLog> {
        self.partitions.get(usize::try_from(index).ok()?)
    }
}

/// Everything the brokers share.
#[derive(Debug)]
pub struct State {
    /// Topics by name.
    pub topics: BTreeMap<String, Topic>,
    retention: Retention,
    bytes: usize,
    ids: RandomState,
    /// The producer ids InitProducerId hands out.
    pub producer_ids: ProducerIds,
    /// The transaction coordinator's state.
    pub transactions: Transactions,
    /// Topic and broker config overrides.
    pub configs: Overrides,
    /// With a seed, ids are derived from it and a counter rather than at random.
    seed: Option<(u64, std::sync::atomic::AtomicU64)>,
    /// Partitions whose leader was moved (`Control::move_leader`): the leader and its epoch.
    /// The others are led by broker `p mod N` at epoch 0.
    moved: BTreeMap<(String, i32), (i32, i32)>,
    /// Of each removed broker, the broker that leads the partitions the placement rule
    /// gives it (`p mod N`) created after its removal (those before were moved, their
    /// epochs bumped); the same as `Control`'s successors, kept here for `State::leader`,
    /// which runs under this lock alone.
    successors: BTreeMap<i32, i32>,
    /// Of a moved partition, where each epoch after 0 began (its high watermark when the
    /// leader moved), as Kafka's leader epoch cache records it.
    epoch_starts: BTreeMap<(String, i32), Vec<(i32, i64)>>,
    /// Fenced brokers and what fencing them changed (`fencing.rs`).
    fencing: fencing::Fencing,
    /// Eligible leader replicas (KIP-966) where kept (`elr.rs`).
    eligible_leaders: elr::EligibleLeaders,
    /// Partition reassignments and explicit replica lists (`reassign.rs`).
    reassignments: reassign::Reassignments,
    /// How many topics were created so far: KIP-848 regexes resolve again after a creation.
    pub topics_created: u64,
}

impl State {
    /// An empty cluster.
    pub fn new(retention: Retention) -> Self {
        State {
            topics: BTreeMap::new(),
            retention,
            bytes: 0,
            ids: RandomState::new(),
            producer_ids: ProducerIds::default(),
            transactions: Transactions::default(),
            configs: Overrides::formatted(),
            moved: BTreeMap::new(),
            successors: BTreeMap::new(),
            epoch_starts: BTreeMap::new(),
            fencing: fencing::Fencing::default(),
            eligible_leaders: elr::EligibleLeaders::default(),
            reassignments: reassign::Reassignments::default(),
            seed: None,
            topics_created: 0,
        }
    }

    /// Fences `producer_id` at the newest epoch the cluster knows it at (handed out by
    /// InitProducerId or seen in a partition); the first epoch still accepted, or `None`
    /// when no such producer id was handed out. A transactional producer's ongoing
    /// transaction is aborted first, at the bumped epoch (`State::fence_transactional_id`).
    pub fn fence_producer(&mut self, producer_id: i64, brokers: usize) -> Option<i16> {
        if !self.producer_ids.allocated(producer_id) {
            return None;
        }
        if let Some(id) = self
            .transactions
            .of_producer(producer_id)
            .map(str::to_owned)
        {
            if let Some(now) = self.fence_transactional_id(&id, brokers) {
                self.producer_ids.fence(producer_id, now.epoch);
                return Some(now.epoch);
            }
        }
        let newest = self
            .topics
            .values()
            .flat_map(|topic| &topic.partitions)
            .filter_map(|log| log.producers.epoch(producer_id))
            .chain([self.producer_ids.epoch(producer_id)])
            .max()
            .unwrap_or(0);
        let first_accepted = newest.saturating_add(1);
        self.producer_ids.fence(producer_id, first_accepted);
        Some(first_accepted)
    }

    /// Derives every id from here on from `seed` (and how many were made before), so that
    /// two clusters with the same seed make the same ids in the same order.
    pub fn seed_ids(&mut self, seed: u64) {
        self.seed = Some((seed, std::sync::atomic::AtomicU64::new(0)));
    }

    /// A fresh random id (the hasher's seeds are random per process), or the next seeded
    /// one.
    pub fn new_id(&self) -> Uuid {
        let mut id = [0u8; 16];
        if let Some((seed, made)) = &self.seed {
            let n = made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for (i, half) in id.chunks_mut(8).enumerate() {
                // Fixed keys: the same on every run of a build.
                let mut hasher = std::hash::DefaultHasher::new();
                hasher.write_u64(*seed);
                hasher.write_u64(n);
                hasher.write_usize(i);
                half.copy_from_slice(&hasher.finish().to_be_bytes());
            }
            id[6] = (id[6] & 0x0f) | 0x40;
            id[8] = (id[8] & 0x3f) | 0x80;
            return Uuid(id);
        }
        for (i, half) in id.chunks_mut(8).enumerate() {
            let mut hasher = self.ids.build_hasher();
            hasher.write_usize(self.topics.len());
            hasher.write_usize(i);
            hasher.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            half.copy_from_slice(&hasher.finish().to_be_bytes());
        }
        // A version 4 UUID, as Kafka's `Uuid.randomUuid` makes.
        id[6] = (id[6] & 0x0f) | 0x40;
        id[8] = (id[8] & 0x3f) | 0x80;
        Uuid(id)
    }

    /// Adds topic `name` with `partitions` empty partitions (replacing any of that name), as
    /// CreateTopics does once its checks pass: the topic's new id.
    pub fn add_topic(&mut self, name: &str, partitions: i32, replication_factor: i16) -> Uuid {
        let id = self.new_id();
        self.topics_created += 1;
        self.topics.insert(
            name.to_owned(),
            Topic {
                id,
                partitions: (0..partitions).map(|_| PartitionLog::default()).collect(),
                replication_factor,
                placement: None,
                grown: Vec::new(),
            },
        );
        id
    }

    /// Every topic's name by its id (the describes name the topics of an assignment).
    pub fn topic_names_by_id(&self) -> BTreeMap<Uuid, String> {
        self.topics
            .iter()
            .map(|(name, topic)| (topic.id, name.clone()))
            .collect()
    }

    /// The topic with `id`, and its name.
    pub fn topic_by_id(&self, id: Uuid) -> Option<(&String, &Topic)> {
        self.topics.iter().find(|(_, topic)| topic.id == id)
    }

    /// The leader and leader epoch of `topic`'s `partition` among `brokers` brokers: the
    /// broker its placement gives it (`placement.rs`; `p mod N` over the first `brokers`
    /// when never placed) at epoch 0 until the leader is moved.
    pub fn leader(&self, topic: &str, partition: i32, brokers: usize) -> (i32, i32) {
        if let Some(&moved) = self.moved.get(&(topic.to_owned(), partition)) {
            return moved;
        }
        let mut leader = self.placed_leader(topic, partition, brokers);
        // A chain of removals ends at a broker still there; the bound is a guard.
        for _ in 0..self.successors.len() {
            match self.successors.get(&leader) {
                Some(&next) => leader = next,
                None => break,
            }
        }
        (leader, 0)
    }

    /// Broker `removed` goes: every partition it leads moves to one of `live` (spread by
    /// partition index, its epoch bumped as `move_leader` bumps it), and partitions the
    /// placement rule gives it from now on are led by `successor`. The partitions moved.
    pub fn remove_broker(
        &mut self,
        removed: i32,
        successor: i32,
        live: &[i32],
        brokers: usize,
    ) -> Vec<(String, i32, i32)> {
        let mut led = Vec::new();
        for (name, topic) in &self.topics {
            for index in 0..topic.partitions.len() as i32 {
                if self.leader(name, index, brokers).0 == removed {
                    led.push((name.clone(), index));
                }
            }
        }
        let mut moved = Vec::with_capacity(led.len());
        for (name, index) in led {
            let to = if live.is_empty() {
                successor
            } else {
                live[index.unsigned_abs() as usize % live.len()]
            };
            self.move_leader(&name, index, to, brokers);
            moved.push((name, index, to));
        }
        self.successors.insert(removed, successor);
        moved
    }

    /// Makes `leader` the leader of `topic`'s `partition` (which must exist), bumping the
    /// leader epoch as Kafka's controller does on every leader change; the new epoch.
    pub fn move_leader(&mut self, topic: &str, partition: i32, leader: i32, brokers: usize) -> i32 {
        let (_, epoch) = self.leader(topic, partition, brokers);
        let start = self
            .topics
            .get(topic)
            .and_then(|t| t.partition(partition))
            .map_or(0, |log| log.high_watermark());
        self.moved
            .insert((topic.to_owned(), partition), (leader, epoch + 1));
        if leader >= 0 {
            self.forget_offline(topic, Some(partition));
        }
        // An epoch that began where this one does wrote nothing: as in Kafka's leader epoch
        // cache (the new leader never held it), it is gone, and OffsetForLeaderEpoch answers
        // it with the epoch before (recorded: tests/offsets_off_leader_kafka.rs).
        let starts = self
            .epoch_starts
            .entry((topic.to_owned(), partition))
            .or_default();
        starts.retain(|&(_, begun)| begun < start);
        starts.push((epoch + 1, start));
        epoch + 1
    }

    /// The leader epoch cache's answer for `wanted` (OffsetForLeaderEpoch): the largest epoch
    /// at or below it and where that epoch ended (the next one's start, or the log end for
    /// the current epoch); a later epoch than the current is unknown (-1, -1), and one before
    /// the first (0) ends where the first began.
    pub fn epoch_end(&self, topic: &str, partition: i32, wanted: i32) -> (i32, i64) {
        const UNDEFINED: (i32, i64) = (-1, -1);
        let key = (topic.to_owned(), partition);
        let Some(log) = self.topics.get(topic).and_then(|t| t.partition(partition)) else {
            return UNDEFINED;
        };
        let mut epochs = vec![(0, 0)];
        epochs.extend(self.epoch_starts.get(&key).into_iter().flatten().copied());
        if wanted == -1 {
            return UNDEFINED;
        }
        match epochs.iter().position(|&(epoch, _)| epoch > wanted) {
            // At or after the current epoch: the current one ends at the log end.
            None => match epochs.last() {
                Some(&(current, _)) if current == wanted => (current, log.high_watermark()),
                _ => UNDEFINED,
            },
            Some(0) => (wanted, epochs[0].1),
            Some(next) => (epochs[next - 1].0, epochs[next].1),
        }
    }

    /// The leader epoch `offset` of `topic`'s `partition` falls in, as the leader epoch
    /// cache answers it (ListOffsets' earliest offset): the latest epoch begun at or before
    /// it (epoch 0 from offset 0; of epochs begun at one offset, the last).
    pub fn epoch_at(&self, topic: &str, partition: i32, offset: i64) -> i32 {
        self.epoch_starts
            .get(&(topic.to_owned(), partition))
            .into_iter()
            .flatten()
            .rev()
            .find(|&&(_, start)| start <= offset)
            .map_or(0, |&(epoch, _)| epoch)
    }

    /// Removes a topic and its logs.
    pub fn remove_topic(&mut self, name: &str) {
        self.configs.topics.remove(name);
        self.moved.retain(|(topic, _), _| topic != name);
        self.epoch_starts.retain(|(topic, _), _| topic != name);
        self.forget_offline(name, None);
        self.forget_reassignments(name);
        if let Some(topic) = self.topics.remove(name) {
            self.bytes -= topic
                .partitions
                .iter()
                .map(PartitionLog::bytes)
                .sum::<usize>();
        }
    }

    /// Moves the log start of `topic`'s `partition` (which must exist) up to `offset`, at
    /// most its high watermark (DeleteRecords); the new log start.
    pub fn delete_records(&mut self, topic: &str, partition: usize, offset: i64) -> i64 {
        let log = &mut self
            .topics
            .get_mut(topic)
            .expect("the handler found the topic")
            .partitions[partition];
        let offset = offset.min(log.high_watermark());
        self.bytes -= log.delete_before(offset);
        log.log_start()
    }

    /// The retention caps.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    /// Bytes held by all logs.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends to `topic`'s `partition` (which must exist) and enforces retention; the base
    /// offset and the log start after retention.
    pub fn append<B: Into<NewBatch>>(
        &mut self,
        topic: &str,
        partition: usize,
        records: i64,
        max_timestamp: i64,
        make: impl FnOnce(i64) -> B,
    ) -> (i64, i64) {
        let log = &mut self
            .topics
            .get_mut(topic)
            .expect("the handler found the topic")
            .partitions[partition];
        let before = log.bytes();
        let base = log.append(records, max_timestamp, make);
        self.bytes += log.bytes() - before;
        // The partition's cap; the newest batch always stays, so a producer's batch is
        // readable at least until the next one.
        while log.bytes() > self.retention.partition_bytes && log.batches.len() > 1 {
            self.bytes -= log.drop_oldest();
        }
        // The topic's own retention.bytes and retention.ms (cleaner.rs).
        self.apply_retention_overrides(topic, partition, now_ms());
        let log = &self
            .topics
            .get(topic)
            .expect("the handler found the topic")
            .partitions[partition];
        let log_start = log.log_start();
        self.enforce_cluster_cap();
        let log_start = self
            .topics
            .get(topic)
            .map_or(log_start, |t| t.partitions[partition].log_start());
        (base, log_start)
    }

    /// Drops the oldest batches of the fullest partitions until the cluster is under its cap.
    fn enforce_cluster_cap(&mut self) {
        while self.bytes > self.retention.cluster_bytes {
            let fullest = self
                .topics
                .values_mut()
                .flat_map(|topic| topic.partitions.iter_mut())
                .filter(|log| log.batches.len() > 1)
                .max_by_key(|log| log.bytes());
            let Some(log) = fullest else { return };
            self.bytes -= log.drop_oldest();
        }
    }
}

/// The wall clock in milliseconds since the epoch, as Kafka's retention compares timestamps.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(len: usize) -> impl FnOnce(i64) -> Bytes {
        move |_| Bytes::from(vec![0u8; len])
    }

    #[test]
    fn offsets_follow_record_counts() {
        let mut log = PartitionLog::default();
        assert_eq!(log.append(3, 0, batch(10)), 0);
        assert_eq!(log.append(2, 0, batch(10)), 3);
        assert_eq!(log.high_watermark(), 5);
        // Offset 4 is inside the second batch, which is returned whole.
        assert_eq!(log.read(4, 1).len(), 1);
        assert_eq!(log.read(0, 15).len(), 1);
        assert_eq!(log.read(0, 20).len(), 2);
        assert!(log.read(5, 100).is_empty());
    }

    #[test]
    fn a_batch_kept_as_sent_reads_with_its_offset_and_epoch() {
        use kafka_codec::records::{decode_batches, BatchReader, Compression, RecordBatchBuilder};
        // As a producer sends it: base offset 0, no partition leader epoch (-1).
        let sent = |value: &'static str| {
            let mut builder = RecordBatchBuilder::new(Compression::None)
                .producer(7, 0, 0)
                .partition_leader_epoch(-1);
            builder.append(1_000, None, Some(Bytes::from(value)));
            builder.append(1_001, None, Some(Bytes::from(value)));
            builder.build().encode_to_bytes().unwrap()
        };
        let mut log = PartitionLog::default();
        log.append(3, 0, batch(10));
        let first = sent("a");
        let kept = first.clone();
        log.append(2, 0, |_| NewBatch::Received {
            batch: kept,
            leader_epoch: 5,
        });
        log.append(2, 0, |_| NewBatch::Received {
            batch: sent("b"),
            leader_epoch: 6,
        });
        let read = log.read(3, usize::MAX);
        assert_eq!(read.len(), 2);
        // One batch alone, and both written one after the other, as a Fetch returns them.
        let alone = read[0].bytes();
        let both = StoredBatch::concat(&read);
        assert_eq!(&both[..alone.len()], &alone[..]);
        let decoded = decode_batches(&both).unwrap();
        let offsets: Vec<i64> = decoded
            .iter()
            .flat_map(|batch| batch.records.iter().map(|record| record.offset))
            .collect();
        assert_eq!(offsets, [3, 4, 5, 6]);
        let epochs: Vec<i32> = decoded.iter().map(|b| b.partition_leader_epoch).collect();
        assert_eq!(epochs, [5, 6]);
        // The fields are outside the CRC, which still holds; the records are as sent, and
        // the producer's own bytes are left as they were.
        for batch in BatchReader::new(both) {
            batch.unwrap().verify_crc().unwrap();
        }
        assert_eq!(&alone[16..], &first[16..]);
        assert_eq!(&first[..8], &0i64.to_be_bytes());
        assert_eq!(&first[12..16], &(-1i32).to_be_bytes());
    }

    #[test]
    fn answers_reuse_the_threads_buffer_once_dropped() {
        use kafka_codec::records::{decode_batches, Compression, RecordBatchBuilder};
        let sent = |records: usize| {
            let mut builder = RecordBatchBuilder::new(Compression::None).producer(7, 0, 0);
            for i in 0..records {
                builder.append(i as i64, None, Some(Bytes::from(vec![b'v'; 100])));
            }
            builder.build().encode_to_bytes().unwrap()
        };
        let mut log = PartitionLog::default();
        for leader_epoch in 0..4 {
            log.append(100, 0, |_| NewBatch::Received {
                batch: sent(100),
                leader_epoch,
            });
        }
        let offsets = |answer: &Bytes| -> Vec<i64> {
            decode_batches(answer)
                .unwrap()
                .iter()
                .map(|batch| batch.base_offset)
                .collect()
        };
        let first = StoredBatch::concat(&log.read(0, usize::MAX));
        assert_eq!(offsets(&first), [0, 100, 200, 300]);
        let at = first.as_ptr();
        drop(first);
        // Once the answer is dropped, the next is written where it was.
        let second = StoredBatch::concat(&log.read(100, usize::MAX));
        assert_eq!(second.as_ptr(), at);
        assert_eq!(offsets(&second), [100, 200, 300]);
        // While one is held, the next goes elsewhere, and both stay as they were.
        let third = StoredBatch::concat(&log.read(0, usize::MAX));
        assert_ne!(third.as_ptr(), at);
        assert_eq!(offsets(&third), [0, 100, 200, 300]);
        assert_eq!(offsets(&second), [100, 200, 300]);
        // One stored batch the cluster wrote is the stored bytes themselves.
        let mut written = PartitionLog::default();
        written.append(1, 0, batch(10));
        let stored = written.read(0, usize::MAX);
        assert_eq!(
            StoredBatch::concat(&stored).as_ptr(),
            stored[0].bytes().as_ptr()
        );
    }

    #[test]
    fn retention_drops_the_oldest_batches_by_partition_and_cluster() {
        let mut state = State::new(Retention {
            partition_bytes: 25,
            cluster_bytes: 35,
        });
        for name in ["a", "b"] {
            state.add_topic(name, 1, 1);
        }
        for _ in 0..3 {
            state.append("a", 0, 1, 0, batch(10));
        }
        // 30 bytes > 25: the first batch went.
        assert_eq!(state.topics["a"].partitions[0].log_start(), 1);
        assert_eq!(state.bytes(), 20);
        state.append("b", 0, 1, 0, batch(10));
        assert_eq!(state.bytes(), 30);
        // 40 bytes is over the cluster's 35: of the two fullest partitions (20 bytes each)
        // the last in name order gives up its oldest batch.
        state.append("b", 0, 1, 0, batch(10));
        assert_eq!(state.bytes(), 30);
        assert_eq!(state.topics["a"].partitions[0].log_start(), 1);
        assert_eq!(state.topics["b"].partitions[0].log_start(), 1);
        assert_ne!(state.new_id(), state.new_id());
    }

    #[test]
    fn each_leader_move_begins_an_epoch_at_the_high_watermark() {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 1, 1);
        state.append("t", 0, 4, 0, batch(10));
        assert_eq!(state.epoch_end("t", 0, 0), (0, 4));
        assert_eq!(state.epoch_end("t", 0, 1), (-1, -1));
        assert_eq!(state.move_leader("t", 0, 1, 2), 1);
        state.append("t", 0, 3, 0, batch(10));
        assert_eq!(state.move_leader("t", 0, 0, 2), 2);
        state.append("t", 0, 2, 0, batch(10));
        // Epoch 0: offsets 0-3, epoch 1: 4-6, epoch 2 (current): from 7 to the log end.
        assert_eq!(state.leader("t", 0, 2), (0, 2));
        assert_eq!(state.epoch_end("t", 0, 0), (0, 4));
        assert_eq!(state.epoch_end("t", 0, 1), (1, 7));
        assert_eq!(state.epoch_end("t", 0, 2), (2, 9));
        assert_eq!(state.epoch_end("t", 0, 3), (-1, -1));
        assert_eq!(state.epoch_end("t", 0, -1), (-1, -1));
        assert_eq!(state.epoch_end("t", 0, -5), (-5, 0));
        // The epoch each offset falls in (ListOffsets' earliest).
        let epochs: Vec<i32> = (0..10)
            .map(|offset| state.epoch_at("t", 0, offset))
            .collect();
        assert_eq!(epochs, [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // Two moves with nothing appended between: epoch 3 wrote nothing, so it is gone,
        // answered as the epoch before it (2, ending where 4 began).
        state.move_leader("t", 0, 1, 2);
        state.move_leader("t", 0, 0, 2);
        assert_eq!(state.epoch_at("t", 0, 9), 4);
        assert_eq!(state.epoch_at("t", 0, 8), 2);
        assert_eq!(state.epoch_end("t", 0, 3), (2, 9));
        assert_eq!(state.epoch_end("t", 0, 4), (4, 9));
        state.remove_topic("t");
        assert_eq!(state.epoch_end("t", 0, 0), (-1, -1));
    }
}
