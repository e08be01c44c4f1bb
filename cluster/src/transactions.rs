//! Transactions: the transaction coordinator's state of each transactional id and, per
//! partition, what a transaction leaves in the log (the first offset of each open
//! transaction, which holds the last stable offset back, and the index of aborted ones that
//! `read_committed` fetches return). The handlers of InitProducerId, AddPartitionsToTxn,
//! AddOffsetsToTxn, EndTxn, TxnOffsetCommit and Produce call in here under the state lock;
//! nothing here knows the wire.
//!
//! As Kafka's coordinator runs them: a transaction is `Empty` after InitProducerId,
//! `Ongoing` once a partition or a group is added, and `CompleteCommit` or `CompleteAbort`
//! once EndTxn wrote its markers (a control batch holding one COMMIT or ABORT record, in
//! every partition of the transaction). Markers are written at once (every append is
//! committed at once here), so the `Prepare*` states are never seen.
//!
//! Transaction versions: a client that uses transaction version 2 (KIP-890) says so by the
//! versions it sends, as Kafka 4 decides: Produce v12+ adds its partition to the
//! transaction itself, TxnOffsetCommit v5+ its group, and EndTxn v5+ bumps the producer
//! epoch (the markers are written at the new epoch, and the answer names it). Older
//! versions are transaction version 1: a partition must have been added by
//! AddPartitionsToTxn (else INVALID_TXN_STATE, as Kafka's partition verification answers;
//! the handlers name it TRANSACTION_ABORTABLE at the versions Kafka 4.4 does) and the epoch
//! stays.
//!
//! Coordinator: Kafka keeps a transactional id in partition `abs(hashCode(id)) % 50` of
//! `__transaction_state` (`transaction.state.log.num.partitions`), whose leader
//! coordinates it; as for groups, that is broker `(abs(hashCode(id)) % 50) % N` here.
//!
//! Bounded: at most [`TxnLimits::max_transactions`] transactional ids (InitProducerId of a
//! new one past it: POLICY_VIOLATION) and [`TxnLimits::max_members`] partitions, groups and
//! pending offsets of all transactions together (an AddPartitionsToTxn, AddOffsetsToTxn,
//! TxnOffsetCommit or Produce past it: POLICY_VIOLATION), so that a client cannot grow the
//! coordinator without bound. Each partition's aborted-transaction index shrinks with its
//! log (retention and DeleteRecords drop the entries wholly before the log start).

use crate::groups::Committed;
use crate::producers::Allocated;
use crate::state::State;
use crate::Shared;
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::EndTxnMarker;
use kafka_codec::records::{Compression, ControlRecord, RecordBatchBuilder};
use kafka_codec::ErrorCode;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Kafka's `transaction.state.log.num.partitions` default: the coordinator rule hashes
/// over it (the same count, and the same hash, as groups').
pub const TRANSACTION_STATE_PARTITIONS: i32 = 50;

/// The broker coordinating `transactional_id` among `brokers` brokers (see the module docs).
pub fn coordinator(transactional_id: &str, brokers: usize) -> i32 {
    const _: () = assert!(TRANSACTION_STATE_PARTITIONS == crate::groups::OFFSETS_TOPIC_PARTITIONS);
    crate::groups::coordinator(transactional_id, brokers)
}

/// Kafka's `transaction.max.timeout.ms` default (15 minutes): InitProducerId refuses a
/// longer transaction timeout.
pub const MAX_TRANSACTION_TIMEOUT_MS: i32 = 15 * 60 * 1000;

/// A transaction's state, as Kafka names them (DescribeTransactions, ListTransactions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TxnState {
    /// No partition added since InitProducerId or the last EndTxn.
    Empty,
    /// Partitions or groups added, not ended.
    Ongoing,
    /// Ending: never seen here (markers are written at once).
    PrepareCommit,
    /// Ending: never seen here.
    PrepareAbort,
    /// Committed, markers written.
    CompleteCommit,
    /// Aborted, markers written.
    CompleteAbort,
    /// Expired: never seen here (transactional ids are kept).
    Dead,
    /// Fenced by the coordinator: never seen here.
    PrepareEpochFence,
}

impl TxnState {
    /// Every state, in Kafka's order.
    pub const ALL: [TxnState; 8] = [
        TxnState::Empty,
        TxnState::Ongoing,
        TxnState::PrepareCommit,
        TxnState::PrepareAbort,
        TxnState::CompleteCommit,
        TxnState::CompleteAbort,
        TxnState::Dead,
        TxnState::PrepareEpochFence,
    ];

    /// Its name, as Kafka's `TransactionState` writes it.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// The state named `name` (exactly, as Kafka matches ListTransactions' filters).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.name() == name)
    }
}

/// Caps on the coordinator's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnLimits {
    /// Transactional ids held (default 10,000).
    pub max_transactions: usize,
    /// Partitions, groups and pending offsets of all transactions together (default
    /// 100,000).
    pub max_members: usize,
}

impl Default for TxnLimits {
    fn default() -> Self {
        TxnLimits {
            max_transactions: 10_000,
            max_members: 100_000,
        }
    }
}

/// One transactional id's transaction.
#[derive(Debug, Clone)]
pub struct Transaction {
    /// The producer id InitProducerId gave it.
    pub producer_id: i64,
    /// Its state.
    pub state: TxnState,
    /// The transaction timeout InitProducerId named.
    pub timeout_ms: i32,
    /// When it became `Ongoing` (monotonic, for the timeout; wall clock in ms, for
    /// DescribeTransactions), `None` when not ongoing.
    pub started: Option<(Instant, i64)>,
    /// When the last transaction began (wall clock, ms), kept once it ends, as Kafka's
    /// coordinator keeps it for DescribeTransactions; -1 before the first (after
    /// InitProducerId).
    pub start_time_ms: i64,
    /// The partitions added, by topic.
    pub partitions: BTreeSet<(String, i32)>,
    /// The groups added (AddOffsetsToTxn, or TxnOffsetCommit v5+).
    pub groups: BTreeSet<String>,
    /// Offsets committed in the transaction, visible to OffsetFetch once it commits.
    pub offsets: BTreeMap<(String, String, i32), Committed>,
    /// The epoch before the last bump by EndTxn (transaction version 2), so that a retried
    /// EndTxn naming it is answered as the first was.
    pub previous_epoch: Option<i16>,
}

impl Transaction {
    fn members(&self) -> usize {
        self.partitions.len() + self.groups.len() + self.offsets.len()
    }
}

/// The coordinator's state: every transactional id's transaction.
#[derive(Debug, Default)]
pub struct Transactions {
    /// By transactional id.
    pub by_id: BTreeMap<String, Transaction>,
    /// Transactional id by producer id.
    by_producer: HashMap<i64, String>,
    limits: TxnLimits,
    /// Partitions, groups and offsets held by all transactions.
    members: usize,
}

/// One aborted transaction in a partition: the producer, its first offset there and the
/// offset of its ABORT marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The producer id.
    pub producer_id: i64,
    /// The transaction's first offset in the partition.
    pub first_offset: i64,
    /// The offset of its marker.
    pub last_offset: i64,
}

/// What transactions left in one partition.
#[derive(Debug, Default)]
pub struct PartitionTxns {
    /// Open transactions: producer id and its first offset here.
    ongoing: BTreeMap<i64, i64>,
    /// Aborted transactions, by marker offset.
    aborted: VecDeque<AbortedTxn>,
}

impl PartitionTxns {
    /// Notes a transactional batch of `producer_id` appended at `offset`.
    pub fn appended(&mut self, producer_id: i64, offset: i64) {
        self.ongoing.entry(producer_id).or_insert(offset);
    }

    /// The first offset of the oldest open transaction.
    pub fn first_unstable(&self) -> Option<i64> {
        self.ongoing.values().min().copied()
    }

    /// The first offset of `producer_id`'s open transaction here.
    pub fn open_since(&self, producer_id: i64) -> Option<i64> {
        self.ongoing.get(&producer_id).copied()
    }

    /// Ends `producer_id`'s transaction here with the marker at `marker_offset`.
    fn complete(&mut self, producer_id: i64, commit: bool, marker_offset: i64) {
        if let Some(first_offset) = self.ongoing.remove(&producer_id) {
            if !commit {
                self.aborted.push_back(AbortedTxn {
                    producer_id,
                    first_offset,
                    last_offset: marker_offset,
                });
            }
        }
    }

    /// The aborted transactions a fetch of `[from, to)` must be told of: those whose range
    /// overlaps it, oldest first, as Kafka's `collectAbortedTxns`.
    pub fn aborted_between(&self, from: i64, to: i64) -> Vec<AbortedTxn> {
        self.aborted
            .iter()
            .filter(|txn| txn.last_offset >= from && txn.first_offset < to)
            .copied()
            .collect()
    }

    /// Forgets the aborted transactions whose marker is before `log_start` (gone with the
    /// log).
    pub fn trim(&mut self, log_start: i64) {
        while self
            .aborted
            .front()
            .is_some_and(|txn| txn.last_offset < log_start)
        {
            self.aborted.pop_front();
        }
    }
}

/// The producer a request names: its transactional id, producer id and epoch.
#[derive(Debug, Clone, Copy)]
pub struct TxnProducer<'a> {
    /// The transactional id.
    pub transactional_id: &'a str,
    /// The producer id.
    pub producer_id: i64,
    /// The epoch.
    pub epoch: i16,
}

/// What ending a transaction leaves to do outside the state lock: the offsets it
/// committed, for the group coordinator.
#[derive(Debug, Default)]
pub struct Ended {
    /// (group, topic, partition, offset), committed with the transaction.
    pub offsets: Vec<(String, String, i32, Committed)>,
}

/// The error an older client gets instead of PRODUCER_FENCED (KIP-588 added it at
/// InitProducerId v4, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v2, TxnOffsetCommit
/// v3): INVALID_PRODUCER_EPOCH, the same code's old name.
pub fn fenced_for(error: ErrorCode, version: i16, fenced_from: i16) -> ErrorCode {
    if error == ErrorCode::PRODUCER_FENCED && version < fenced_from {
        ErrorCode::INVALID_PRODUCER_EPOCH
    } else {
        error
    }
}

/// Milliseconds since the epoch, as Kafka stamps transaction start times and markers.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Transactions {
    /// An empty coordinator with these caps.
    pub fn new(limits: TxnLimits) -> Self {
        Transactions {
            limits,
            ..Transactions::default()
        }
    }

    /// The transactional id `producer_id` belongs to.
    pub fn of_producer(&self, producer_id: i64) -> Option<&str> {
        self.by_producer.get(&producer_id).map(String::as_str)
    }

    /// The soonest moment an ongoing transaction times out.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.by_id
            .values()
            .filter_map(|txn| {
                let (since, _) = txn.started?;
                Some(since + Duration::from_millis(txn.timeout_ms.max(0) as u64))
            })
            .min()
    }

    fn recount(&mut self) {
        self.members = self.by_id.values().map(Transaction::members).sum();
    }

    /// Whether `more` members fit under the cap.
    fn fits(&self, more: usize) -> bool {
        self.members + more <= self.limits.max_members
    }
}

impl State {
    /// The producer id and epoch of `transactional_id`, checked against what a request
    /// names: an unknown id or another producer id is INVALID_PRODUCER_ID_MAPPING, another
    /// epoch PRODUCER_FENCED.
    fn check_producer(
        &self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
    ) -> Result<(), ErrorCode> {
        let Some((id, current)) = self.producer_ids.transactional(transactional_id) else {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        };
        if !self.transactions.by_id.contains_key(transactional_id) || id != producer_id {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        }
        if epoch != current {
            return Err(ErrorCode::PRODUCER_FENCED);
        }
        Ok(())
    }

    /// InitProducerId of a transactional id (checked by the handler: not empty, timeout in
    /// bounds). An ongoing transaction is aborted first, at a bumped epoch that fences the
    /// instance that began it, and the answer is CONCURRENT_TRANSACTIONS, which the client
    /// retries, as Kafka's coordinator answers; a new id past the cap is POLICY_VIOLATION.
    pub fn init_transactional(
        &mut self,
        transactional_id: &str,
        timeout_ms: i32,
        current: Option<(i64, i16)>,
        brokers: usize,
    ) -> Result<Allocated, ErrorCode> {
        let known = self.transactions.by_id.get(transactional_id);
        if known.is_none()
            && self.transactions.by_id.len() >= self.transactions.limits.max_transactions
        {
            return Err(ErrorCode::POLICY_VIOLATION);
        }
        if known.is_some_and(|txn| txn.state == TxnState::Ongoing) {
            if let Some((id, epoch)) = current {
                self.check_producer(transactional_id, id, epoch)?;
            }
            self.end_transaction(transactional_id, false, true, brokers);
            return Err(ErrorCode::CONCURRENT_TRANSACTIONS);
        }
        let allocated = self
            .producer_ids
            .allocate_transactional(transactional_id, current)?;
        let txn = Transaction {
            producer_id: allocated.producer_id,
            state: TxnState::Empty,
            timeout_ms,
            started: None,
            start_time_ms: -1,
            partitions: BTreeSet::new(),
            groups: BTreeSet::new(),
            offsets: BTreeMap::new(),
            previous_epoch: None,
        };
        if let Some(old) = self
            .transactions
            .by_id
            .insert(transactional_id.to_owned(), txn)
        {
            self.transactions.by_producer.remove(&old.producer_id);
        }
        self.transactions
            .by_producer
            .insert(allocated.producer_id, transactional_id.to_owned());
        self.transactions.recount();
        Ok(allocated)
    }

    /// Adds partitions and groups to the transaction (AddPartitionsToTxn, AddOffsetsToTxn,
    /// and implicitly Produce v12+ and TxnOffsetCommit v5+), making it `Ongoing`.
    pub fn add_to_transaction(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        partitions: &[(String, i32)],
        groups: &[String],
        now: Instant,
    ) -> Result<(), ErrorCode> {
        self.check_producer(transactional_id, producer_id, epoch)?;
        let transactions = &mut self.transactions;
        let txn = &transactions.by_id[transactional_id];
        if matches!(
            txn.state,
            TxnState::PrepareCommit | TxnState::PrepareAbort | TxnState::PrepareEpochFence
        ) {
            return Err(ErrorCode::CONCURRENT_TRANSACTIONS);
        }
        let new = partitions
            .iter()
            .filter(|p| !txn.partitions.contains(*p))
            .count()
            + groups.iter().filter(|g| !txn.groups.contains(*g)).count();
        if !transactions.fits(new) {
            return Err(ErrorCode::POLICY_VIOLATION);
        }
        let txn = transactions
            .by_id
            .get_mut(transactional_id)
            .expect("checked above");
        if txn.state != TxnState::Ongoing {
            txn.state = TxnState::Ongoing;
            let at = now_ms();
            txn.started = Some((now, at));
            txn.start_time_ms = at;
            txn.partitions.clear();
            txn.groups.clear();
            txn.offsets.clear();
        }
        txn.partitions.extend(partitions.iter().cloned());
        txn.groups.extend(groups.iter().cloned());
        transactions.recount();
        Ok(())
    }

    /// Whether `transactional_id`'s ongoing transaction holds the partition, or the group
    /// (AddPartitionsToTxn's `verify_only`, Produce and TxnOffsetCommit of transaction
    /// version 1).
    pub fn in_transaction(
        &self,
        transactional_id: &str,
        partition: Option<(&str, i32)>,
        group: Option<&str>,
    ) -> bool {
        let Some(txn) = self.transactions.by_id.get(transactional_id) else {
            return false;
        };
        txn.state == TxnState::Ongoing
            && partition
                .is_none_or(|(topic, index)| txn.partitions.contains(&(topic.to_owned(), index)))
            && group.is_none_or(|group| txn.groups.contains(group))
    }

    /// The check of a transactional batch of `producer_id` at `epoch` to `topic`'s
    /// `partition`: its producer must hold a transactional id at that epoch (else
    /// INVALID_PRODUCER_ID_MAPPING or INVALID_PRODUCER_EPOCH, Produce's fencing error) and
    /// the partition must be in its transaction: added before (transaction version 1:
    /// INVALID_TXN_STATE otherwise) or added now (`implicit`, Produce v12+).
    pub fn check_transactional_batch(
        &mut self,
        producer_id: i64,
        epoch: i16,
        topic: &str,
        partition: i32,
        implicit: bool,
        now: Instant,
    ) -> Result<(), ErrorCode> {
        let Some(transactional_id) = self
            .transactions
            .of_producer(producer_id)
            .map(str::to_owned)
        else {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        };
        match self.check_producer(&transactional_id, producer_id, epoch) {
            Ok(()) => {}
            Err(ErrorCode::PRODUCER_FENCED) => return Err(ErrorCode::INVALID_PRODUCER_EPOCH),
            Err(error) => return Err(error),
        }
        if self.in_transaction(&transactional_id, Some((topic, partition)), None) {
            return Ok(());
        }
        if !implicit {
            return Err(ErrorCode::INVALID_TXN_STATE);
        }
        self.add_to_transaction(
            &transactional_id,
            producer_id,
            epoch,
            &[(topic.to_owned(), partition)],
            &[],
            now,
        )
    }

    /// Stages offsets a transaction commits for `group` (TxnOffsetCommit): visible once it
    /// commits, dropped if it aborts. The group must be in the transaction (added before,
    /// or now when `implicit`, TxnOffsetCommit v5+: else INVALID_TXN_STATE); a producer not
    /// at the transaction's id or epoch is INVALID_PRODUCER_ID_MAPPING or
    /// INVALID_PRODUCER_EPOCH.
    pub fn stage_offsets(
        &mut self,
        producer: TxnProducer<'_>,
        group: &str,
        offsets: Vec<(String, i32, Committed)>,
        implicit: bool,
        now: Instant,
    ) -> Result<(), ErrorCode> {
        let TxnProducer {
            transactional_id,
            producer_id,
            epoch,
        } = producer;
        match self.check_producer(transactional_id, producer_id, epoch) {
            Ok(()) => {}
            Err(ErrorCode::PRODUCER_FENCED) => return Err(ErrorCode::INVALID_PRODUCER_EPOCH),
            Err(error) => return Err(error),
        }
        if !self.in_transaction(transactional_id, None, Some(group)) {
            if !implicit {
                return Err(ErrorCode::INVALID_TXN_STATE);
            }
            self.add_to_transaction(
                transactional_id,
                producer_id,
                epoch,
                &[],
                &[group.to_owned()],
                now,
            )?;
        }
        if !self.transactions.fits(offsets.len()) {
            return Err(ErrorCode::POLICY_VIOLATION);
        }
        let txn = self
            .transactions
            .by_id
            .get_mut(transactional_id)
            .expect("checked above");
        for (topic, partition, committed) in offsets {
            txn.offsets
                .insert((group.to_owned(), topic, partition), committed);
        }
        self.transactions.recount();
        Ok(())
    }

    /// The partitions of `group` with an offset an ongoing transaction holds, not yet
    /// committed (OffsetFetch's `require_stable`: UNSTABLE_OFFSET_COMMIT).
    pub fn pending_offsets(&self, group: &str) -> BTreeSet<(String, i32)> {
        self.transactions
            .by_id
            .values()
            .filter(|txn| txn.state == TxnState::Ongoing)
            .flat_map(|txn| txn.offsets.keys())
            .filter(|(g, _, _)| g == group)
            .map(|(_, topic, partition)| (topic.clone(), *partition))
            .collect()
    }

    /// EndTxn: checks the producer, then commits or aborts. Transaction version 1 (`bump`
    /// false): ending an ended transaction the same way again is a retry (NONE), another
    /// way or an empty one INVALID_TXN_STATE. Version 2 (`bump`): the epoch moves on with
    /// every EndTxn, an abort of an empty transaction is allowed, and a retry names the
    /// epoch before the bump. The producer id and epoch from here on, and what is left to
    /// do.
    pub fn end_txn(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        commit: bool,
        bump: bool,
        brokers: usize,
    ) -> Result<(Allocated, Ended), ErrorCode> {
        let outcome = if commit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        let current = self.producer_ids.transactional(transactional_id);
        let txn = self.transactions.by_id.get(transactional_id);
        // A version 2 retry: the epoch of before the bump, the same outcome.
        if let (true, Some(txn), Some((id, now_epoch))) = (bump, txn, current) {
            if id == producer_id && txn.previous_epoch == Some(epoch) && epoch != now_epoch {
                return if txn.state == outcome {
                    Ok((
                        Allocated {
                            producer_id: id,
                            epoch: now_epoch,
                        },
                        Ended::default(),
                    ))
                } else {
                    Err(ErrorCode::PRODUCER_FENCED)
                };
            }
        }
        self.check_producer(transactional_id, producer_id, epoch)?;
        let state = self.transactions.by_id[transactional_id].state;
        match state {
            TxnState::Ongoing => {}
            TxnState::PrepareCommit | TxnState::PrepareAbort | TxnState::PrepareEpochFence => {
                return Err(ErrorCode::CONCURRENT_TRANSACTIONS)
            }
            done if done == outcome && !bump => {
                return Ok((Allocated { producer_id, epoch }, Ended::default()))
            }
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
                if bump && !commit => {}
            _ => return Err(ErrorCode::INVALID_TXN_STATE),
        }
        let ended = self.end_transaction(transactional_id, commit, bump, brokers);
        let (producer_id, epoch) = self
            .producer_ids
            .transactional(transactional_id)
            .expect("checked above");
        Ok((Allocated { producer_id, epoch }, ended))
    }

    /// Ends `transactional_id`'s transaction: a COMMIT or ABORT marker in each of its
    /// partitions, at the epoch after a bump when `bump` (which fences the epoch before);
    /// its state `CompleteCommit` or `CompleteAbort`. The offsets it committed, to hand to
    /// the group coordinator (nothing when it aborts).
    pub fn end_transaction(
        &mut self,
        transactional_id: &str,
        commit: bool,
        bump: bool,
        brokers: usize,
    ) -> Ended {
        let Some(txn) = self.transactions.by_id.get_mut(transactional_id) else {
            return Ended::default();
        };
        let partitions = std::mem::take(&mut txn.partitions);
        let offsets = std::mem::take(&mut txn.offsets);
        txn.groups.clear();
        txn.started = None;
        txn.state = if commit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        let old_producer = txn.producer_id;
        if bump {
            let before = self.producer_ids.transactional(transactional_id);
            if let Some(bumped) = self.producer_ids.bump(transactional_id) {
                let txn = self
                    .transactions
                    .by_id
                    .get_mut(transactional_id)
                    .expect("found above");
                txn.previous_epoch = before.map(|(_, epoch)| epoch);
                if bumped.producer_id != old_producer {
                    txn.producer_id = bumped.producer_id;
                    self.transactions.by_producer.remove(&old_producer);
                    self.transactions
                        .by_producer
                        .insert(bumped.producer_id, transactional_id.to_owned());
                }
            }
        }
        self.transactions.recount();
        let (_, epoch) = self
            .producer_ids
            .transactional(transactional_id)
            .unwrap_or((old_producer, 0));
        // The markers are written for the producer id the transaction's batches carry.
        let marker_epoch = if self
            .producer_ids
            .transactional(transactional_id)
            .map(|(id, _)| id)
            == Some(old_producer)
        {
            epoch
        } else {
            // The epoch ran out and a new producer id was taken: the old one's markers at
            // its last epoch.
            i16::MAX - 1
        };
        for (topic, partition) in partitions {
            self.write_marker(
                &topic,
                partition,
                old_producer,
                marker_epoch,
                commit,
                brokers,
            );
        }
        Ended {
            offsets: if commit {
                offsets
                    .into_iter()
                    .map(|((group, topic, partition), committed)| {
                        (group, topic, partition, committed)
                    })
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// Appends a COMMIT or ABORT marker of `producer_id` at `epoch` to `topic`'s
    /// `partition` (if it still exists) and ends the producer's transaction there.
    fn write_marker(
        &mut self,
        topic: &str,
        partition: i32,
        producer_id: i64,
        epoch: i16,
        commit: bool,
        brokers: usize,
    ) {
        let Ok(index) = usize::try_from(partition) else {
            return;
        };
        if self
            .topics
            .get(topic)
            .is_none_or(|t| index >= t.partitions.len())
        {
            return;
        }
        let (_, leader_epoch) = self.leader(topic, partition, brokers);
        let marker = EndTxnMarker::default().with_coordinator_epoch(0);
        let marker = if commit {
            ControlRecord::Commit(marker)
        } else {
            ControlRecord::Abort(marker)
        };
        let timestamp = now_ms();
        let make = |base: i64| -> Bytes {
            let mut builder = RecordBatchBuilder::new(Compression::None)
                .base_offset(base)
                .producer(producer_id, epoch, -1)
                .transactional(true)
                .control(true)
                .partition_leader_epoch(leader_epoch);
            builder
                .append_control(timestamp, &marker)
                .expect("a transaction marker encodes");
            builder
                .build()
                .encode_to_bytes()
                .expect("a control batch encodes")
        };
        let (marker_offset, _) = self.append(topic, index, 1, timestamp, make);
        if let Some(log) = self
            .topics
            .get_mut(topic)
            .and_then(|t| t.partitions.get_mut(index))
        {
            log.txns.complete(producer_id, commit, marker_offset);
            log.producers.marked(producer_id, epoch);
        }
    }

    /// Aborts every ongoing transaction past its timeout at `now`, bumping its epoch as
    /// Kafka's coordinator does (the producer that began it is fenced); whether any was.
    pub fn abort_timed_out(&mut self, now: Instant, brokers: usize) -> bool {
        let expired: Vec<String> = self
            .transactions
            .by_id
            .iter()
            .filter(|(_, txn)| {
                txn.started.is_some_and(|(since, _)| {
                    now >= since + Duration::from_millis(txn.timeout_ms.max(0) as u64)
                })
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.end_transaction(id, false, true, brokers);
        }
        !expired.is_empty()
    }

    /// Fences `transactional_id` (the control surface): its ongoing transaction is aborted
    /// (markers written) and its epoch bumped either way, so the instance holding it gets
    /// INVALID_PRODUCER_EPOCH at Produce and PRODUCER_FENCED (by version) from the
    /// coordinator. The producer id and the epoch now current; `None` for an unknown id.
    pub fn fence_transactional_id(
        &mut self,
        transactional_id: &str,
        brokers: usize,
    ) -> Option<Allocated> {
        let txn = self.transactions.by_id.get(transactional_id)?;
        if txn.state == TxnState::Ongoing {
            self.end_transaction(transactional_id, false, true, brokers);
        } else if let Some(bumped) = self.producer_ids.bump(transactional_id) {
            let old = txn.producer_id;
            if bumped.producer_id != old {
                self.transactions.by_producer.remove(&old);
                self.transactions
                    .by_producer
                    .insert(bumped.producer_id, transactional_id.to_owned());
                if let Some(txn) = self.transactions.by_id.get_mut(transactional_id) {
                    txn.producer_id = bumped.producer_id;
                }
            }
        }
        self.producer_ids
            .transactional(transactional_id)
            .map(|(producer_id, epoch)| Allocated { producer_id, epoch })
    }
}

/// Aborts transactions at their timeout, until the cluster stops: sleeps until the next
/// deadline, woken early by every transaction that begins (`Shared::transactions_changed`).
pub async fn run_timers(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    loop {
        let changed = shared.transactions_changed.notified();
        let next = shared.state().transactions.next_deadline();
        let sleep = async {
            match next {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = sleep => {
                let aborted = shared
                    .state()
                    .abort_timed_out(crate::clock::now(), shared.placement_brokers);
                if aborted {
                    shared.appended.notify_waiters();
                }
            }
            () = changed => {}
            _ = stop.changed() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_round_trip() {
        for state in TxnState::ALL {
            assert_eq!(TxnState::from_name(state.name()), Some(state));
        }
        assert_eq!(TxnState::from_name("ongoing"), None);
    }

    #[test]
    fn aborted_index_overlaps_and_trims() {
        let mut txns = PartitionTxns::default();
        txns.appended(7, 3);
        txns.appended(7, 5);
        txns.appended(8, 4);
        assert_eq!(txns.first_unstable(), Some(3));
        txns.complete(7, false, 6);
        assert_eq!(txns.first_unstable(), Some(4));
        txns.complete(8, true, 7);
        assert_eq!(txns.first_unstable(), None);
        let one = AbortedTxn {
            producer_id: 7,
            first_offset: 3,
            last_offset: 6,
        };
        assert_eq!(txns.aborted_between(0, 3), vec![]);
        assert_eq!(txns.aborted_between(0, 4), vec![one]);
        assert_eq!(txns.aborted_between(6, 10), vec![one]);
        assert_eq!(txns.aborted_between(7, 10), vec![]);
        txns.trim(6);
        assert_eq!(txns.aborted_between(0, 10), vec![one]);
        txns.trim(7);
        assert_eq!(txns.aborted_between(0, 10), vec![]);
    }
}
