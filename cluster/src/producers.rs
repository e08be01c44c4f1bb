//! Idempotent producers: the producer ids InitProducerId hands out, and per partition the
//! state Kafka keeps for each producer that wrote to it (its epoch and its last five
//! batches' sequence ranges), against which every batch with a producer id is checked
//! before it is appended:
//!
//! - a batch whose epoch and first and last sequence match one of the five is a retry of a
//!   batch already in the log: it is not appended again, and the answer is a success naming
//!   the original batch's offset;
//! - an epoch older than the producer's: INVALID_PRODUCER_EPOCH (since Kafka 2.7, KIP-588,
//!   the code of what was ProducerFencedException before, so every version gets it);
//! - a newer epoch must start at sequence 0; the same epoch must continue where the last
//!   batch ended (wrapping after `i32::MAX`); else OUT_OF_ORDER_SEQUENCE_NUMBER;
//! - a producer the partition has never seen may start at any sequence (Kafka accepts it, as
//!   its state may have been removed with the log).

use kafka_codec::records::BatchHeader;
use kafka_codec::ErrorCode;
use std::collections::{HashMap, VecDeque};

/// How many batches per producer and partition Kafka remembers for duplicate detection
/// (`ProducerStateEntry.NUM_BATCHES_TO_RETAIN`); the Java producer keeps at most as many in
/// flight per partition for the same reason.
pub const BATCHES_RETAINED: usize = 5;

/// Hands out producer ids, and remembers each transactional id's producer id and epoch.
#[derive(Debug, Default)]
pub struct ProducerIds {
    next: i64,
    transactional: HashMap<String, (i64, i16)>,
    /// Producers fenced by the control surface: the first epoch still accepted.
    fenced: HashMap<i64, i16>,
}

/// What InitProducerId gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocated {
    /// The producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub epoch: i16,
}

impl ProducerIds {
    /// A fresh producer id, epoch 0 (an idempotent producer's InitProducerId, whatever id it
    /// names: Kafka hands such a producer a new id every time).
    pub fn allocate(&mut self) -> Allocated {
        let producer_id = self.next;
        self.next += 1;
        Allocated {
            producer_id,
            epoch: 0,
        }
    }

    /// A transactional producer's id: the first time, a fresh id at epoch 0; after that the
    /// same id at the next epoch, which fences the previous instance (a fresh id once the
    /// epoch is exhausted). `current` is what a v3+ request names (`None`: -1/-1): it must be
    /// the id and epoch last handed out, or the request is from a fenced or unknown instance
    /// (PRODUCER_FENCED, which InitProducerId answers below v4 as INVALID_PRODUCER_EPOCH).
    pub fn allocate_transactional(
        &mut self,
        transactional_id: &str,
        current: Option<(i64, i16)>,
    ) -> Result<Allocated, ErrorCode> {
        let known = self.transactional.get(transactional_id).copied();
        if let (Some((id, epoch)), Some((named_id, named_epoch))) = (known, current) {
            if named_id != id {
                return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
            }
            if named_epoch != epoch {
                return Err(ErrorCode::PRODUCER_FENCED);
            }
        } else if known.is_none() && current.is_some() {
            return Err(ErrorCode::INVALID_PRODUCER_ID_MAPPING);
        }
        let allocated = match known {
            // `i16::MAX - 1`: Kafka keeps the last epoch for the coordinator's own fencing.
            Some((id, epoch)) if epoch < i16::MAX - 1 => Allocated {
                producer_id: id,
                epoch: epoch + 1,
            },
            _ => self.allocate(),
        };
        self.transactional.insert(
            transactional_id.to_owned(),
            (allocated.producer_id, allocated.epoch),
        );
        Ok(allocated)
    }

    /// The producer id and epoch `transactional_id` holds.
    pub fn transactional(&self, transactional_id: &str) -> Option<(i64, i16)> {
        self.transactional.get(transactional_id).copied()
    }

    /// Moves `transactional_id` on to its next epoch (a fresh producer id once the epoch is
    /// exhausted), as Kafka's coordinator bumps it when it aborts a transaction to fence
    /// its producer, and at every EndTxn of transaction version 2.
    pub fn bump(&mut self, transactional_id: &str) -> Option<Allocated> {
        let (id, epoch) = self.transactional(transactional_id)?;
        let allocated = if epoch < i16::MAX - 1 {
            Allocated {
                producer_id: id,
                epoch: epoch + 1,
            }
        } else {
            self.allocate()
        };
        self.transactional.insert(
            transactional_id.to_owned(),
            (allocated.producer_id, allocated.epoch),
        );
        Some(allocated)
    }

    /// Whether `producer_id` was handed out.
    pub fn allocated(&self, producer_id: i64) -> bool {
        (0..self.next).contains(&producer_id)
    }

    /// Fences every epoch of `producer_id` below `epoch` (the control surface's
    /// `fence_producer`): its batches at those epochs are refused, and a transactional id
    /// it holds moves on to `epoch`, as Kafka's coordinator bumps the epoch when it fences
    /// a producer, so that the fenced instance's InitProducerId is PRODUCER_FENCED.
    pub fn fence(&mut self, producer_id: i64, epoch: i16) {
        let fenced = self.fenced.entry(producer_id).or_default();
        *fenced = (*fenced).max(epoch);
        for (id, current) in self.transactional.values_mut() {
            if *id == producer_id && *current < epoch {
                *current = epoch;
            }
        }
    }

    /// The newest epoch of `producer_id` this cluster handed out or fenced up to (its
    /// transactional id's, else 0).
    pub fn epoch(&self, producer_id: i64) -> i16 {
        self.transactional
            .values()
            .filter(|(id, _)| *id == producer_id)
            .map(|(_, epoch)| *epoch)
            .chain(self.fenced.get(&producer_id).copied())
            .max()
            .unwrap_or(0)
    }

    /// Whether a batch of `producer_id` at `epoch` is from a fenced producer (Produce
    /// answers INVALID_PRODUCER_EPOCH, as for any older epoch).
    pub fn is_fenced(&self, producer_id: i64, epoch: i16) -> bool {
        self.fenced
            .get(&producer_id)
            .is_some_and(|first| epoch < *first)
    }
}

/// One appended batch, as remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Appended {
    first_sequence: i32,
    last_sequence: i32,
    base_offset: i64,
}

/// One producer's state in one partition.
#[derive(Debug, Clone)]
struct Producer {
    epoch: i16,
    /// The largest timestamp of its last batch (-1: none yet).
    last_timestamp: i64,
    /// The coordinator epoch of the last transaction marker (-1: none yet).
    coordinator_epoch: i32,
    /// The last batches appended at `epoch`, oldest first, at most [`BATCHES_RETAINED`].
    batches: VecDeque<Appended>,
}

impl Default for Producer {
    fn default() -> Self {
        Producer {
            epoch: 0,
            last_timestamp: -1,
            coordinator_epoch: -1,
            batches: VecDeque::new(),
        }
    }
}

/// One producer as DescribeProducers lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveProducer {
    /// Its id.
    pub producer_id: i64,
    /// Its epoch here.
    pub epoch: i16,
    /// The last sequence of its last batch (-1: none at this epoch).
    pub last_sequence: i32,
    /// The largest timestamp of its last batch (-1: none).
    pub last_timestamp: i64,
    /// The coordinator epoch of its last transaction marker (-1: none).
    pub coordinator_epoch: i32,
}

/// Every producer's state in one partition.
#[derive(Debug, Default)]
pub struct PartitionProducers {
    producers: HashMap<i64, Producer>,
}

/// What to do with a batch that carries a producer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Append it, then [`PartitionProducers::record`] it.
    Append,
    /// A retry of a batch in the log at this base offset: answer success, append nothing.
    Duplicate {
        /// The original batch's base offset.
        base_offset: i64,
    },
}

/// The sequence after `sequence` plus `delta`, wrapping as Kafka's sequences wrap.
fn add_sequence(sequence: i32, delta: i32) -> i32 {
    let sum = i64::from(sequence) + i64::from(delta);
    if sum > i64::from(i32::MAX) {
        (sum - i64::from(i32::MAX) - 1) as i32
    } else {
        sum as i32
    }
}

/// The last sequence of a batch.
fn last_sequence(header: &BatchHeader) -> i32 {
    add_sequence(header.base_sequence, header.last_offset_delta)
}

impl PartitionProducers {
    /// How many producers wrote to the partition.
    pub fn len(&self) -> usize {
        self.producers.len()
    }

    /// Whether no producer with an id wrote to the partition.
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty()
    }

    /// The epoch the partition knows `producer_id` at.
    pub fn epoch(&self, producer_id: i64) -> Option<i16> {
        self.producers
            .get(&producer_id)
            .map(|producer| producer.epoch)
    }

    /// Every producer that wrote here, by id.
    pub fn active(&self) -> Vec<ActiveProducer> {
        let mut all: Vec<ActiveProducer> = self
            .producers
            .iter()
            .map(|(id, producer)| ActiveProducer {
                producer_id: *id,
                epoch: producer.epoch,
                last_sequence: producer.batches.back().map_or(-1, |b| b.last_sequence),
                last_timestamp: producer.last_timestamp,
                coordinator_epoch: producer.coordinator_epoch,
            })
            .collect();
        all.sort_by_key(|producer| producer.producer_id);
        all
    }

    /// A transaction marker of `producer_id` at `epoch` was written: a newer epoch (the
    /// coordinator's bump) becomes the producer's, fencing the older one here.
    pub fn marked(&mut self, producer_id: i64, epoch: i16) {
        let producer = self.producers.entry(producer_id).or_default();
        producer.coordinator_epoch = 0;
        if epoch > producer.epoch {
            producer.epoch = epoch;
            producer.batches.clear();
        }
    }

    /// Checks a batch with a producer id (`header.producer_id >= 0`) against the producer's
    /// state.
    pub fn check(&self, header: &BatchHeader) -> Result<Check, ErrorCode> {
        let Some(producer) = self.producers.get(&header.producer_id) else {
            return Ok(Check::Append);
        };
        let epoch = header.producer_epoch;
        if epoch < producer.epoch {
            return Err(ErrorCode::INVALID_PRODUCER_EPOCH);
        }
        if epoch > producer.epoch {
            return if header.base_sequence == 0 {
                Ok(Check::Append)
            } else {
                Err(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER)
            };
        }
        let last = last_sequence(header);
        if let Some(original) = producer.batches.iter().find(|batch| {
            batch.first_sequence == header.base_sequence && batch.last_sequence == last
        }) {
            return Ok(Check::Duplicate {
                base_offset: original.base_offset,
            });
        }
        match producer.batches.back() {
            Some(newest) if add_sequence(newest.last_sequence, 1) != header.base_sequence => {
                Err(ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER)
            }
            _ => Ok(Check::Append),
        }
    }

    /// Remembers a batch appended at `base_offset` (after [`Check::Append`]).
    pub fn record(&mut self, header: &BatchHeader, base_offset: i64) {
        let producer = self.producers.entry(header.producer_id).or_default();
        if header.producer_epoch != producer.epoch {
            producer.epoch = header.producer_epoch;
            producer.batches.clear();
        }
        producer.last_timestamp = header.max_timestamp;
        if producer.batches.len() == BATCHES_RETAINED {
            producer.batches.pop_front();
        }
        producer.batches.push_back(Appended {
            first_sequence: header.base_sequence,
            last_sequence: last_sequence(header),
            base_offset,
        });
    }
}
