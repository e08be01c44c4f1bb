//! Retention and compaction by a topic's configs, as Kafka's log manager and log cleaner
//! apply them, run on demand (the control surface) and, for retention, after every append.
//!
//! - Retention (`cleanup.policy` holding `delete`): the oldest batches go while the
//!   partition holds more than `retention.bytes`, and those whose newest timestamp is older
//!   than `retention.ms` before now; -1 is no limit. A batch stands for Kafka's segment, and
//!   the newest batch always stays, as Kafka keeps the active segment. A batch with no
//!   timestamp (-1: magic 0 messages) is never old: Kafka falls back to the segment file's
//!   time, which this in-memory log does not have.
//! - Compaction (`cleanup.policy` holding `compact`): of each key only the newest record
//!   stays; a tombstone (a null value) that is the newest of its key stays until
//!   `delete.retention.ms` after its timestamp, then goes too. Offsets never change; a batch
//!   left with no record goes (the log start stays where it was, as after Kafka's cleaning);
//!   a keyless record stays (Kafka refuses them on compacted topics). Unlike Kafka, the
//!   newest batch is compacted too: "on demand" means the whole log, now.

use super::{PartitionLog, State, StoredBatch};
use crate::configs::definitions;
use kafka_codec::bytes::Bytes;
use kafka_codec::records::{BatchReader, ReadOptions, RecordBatch};
use std::collections::{HashMap, VecDeque};

/// What cleaning one partition did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cleaned {
    /// Its index.
    pub partition: i32,
    /// Batches dropped whole (retention) or left empty (compaction).
    pub batches_removed: usize,
    /// Records removed by compaction (superseded values and expired tombstones).
    pub records_removed: usize,
    /// Its log start and high watermark afterwards.
    pub log_start: i64,
    /// The offset the next record gets.
    pub high_watermark: i64,
}

impl State {
    /// `name`'s value for `topic`: its override, else Kafka's default.
    pub fn topic_config(&self, topic: &str, name: &str) -> Option<String> {
        self.configs
            .topics
            .get(topic)
            .and_then(|overrides| overrides.get(name).cloned())
            .or_else(|| definitions().topic.get(name)?.default.clone())
    }

    /// `name`'s value for `topic` as a number: its override, else the cluster-wide dynamic
    /// value of its broker synonym (`min.insync.replicas` is one from the start), else
    /// Kafka's default; `None` when it has none or it does not parse.
    pub fn topic_config_number(&self, topic: &str, name: &str) -> Option<i64> {
        let own = self.configs.topics.get(topic).and_then(|o| o.get(name));
        let cluster_wide = || {
            let synonym = definitions().topic.get(name)?.synonym.as_ref()?;
            self.configs.brokers.get("")?.get(synonym)
        };
        match own.or_else(cluster_wide) {
            Some(value) => value.trim().parse().ok(),
            None => self.topic_config(topic, name)?.trim().parse().ok(),
        }
    }

    fn topic_config_i64(&self, topic: &str, name: &str) -> i64 {
        self.topic_config(topic, name)
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(-1)
    }

    fn has_policy(&self, topic: &str, policy: &str) -> bool {
        self.topic_config(topic, "cleanup.policy")
            .is_some_and(|value| value.split(',').any(|p| p.trim() == policy))
    }

    /// Applies `topic`'s retention (`retention.ms`, `retention.bytes`) at `now_ms` to
    /// `partition`, or to every partition; `None` when the topic does not exist.
    pub fn apply_retention(
        &mut self,
        topic: &str,
        partition: Option<usize>,
        now_ms: i64,
    ) -> Option<Vec<Cleaned>> {
        self.retain(topic, partition, now_ms, true)
    }

    /// What an append applies: the topic's own `retention.ms` and `retention.bytes`
    /// overrides only. Kafka checks retention every 5 minutes
    /// (`log.retention.check.interval.ms`); applying the 7-day default on every append
    /// would drop at once what a test produces with fixed old timestamps, which a broker
    /// keeps until its next check.
    pub(super) fn apply_retention_overrides(&mut self, topic: &str, partition: usize, now_ms: i64) {
        self.retain(topic, Some(partition), now_ms, false);
    }

    fn retain(
        &mut self,
        topic: &str,
        partition: Option<usize>,
        now_ms: i64,
        defaults: bool,
    ) -> Option<Vec<Cleaned>> {
        let overridden = |name: &str| {
            defaults
                || self
                    .configs
                    .topics
                    .get(topic)
                    .is_some_and(|overrides| overrides.contains_key(name))
        };
        let limit = |name: &str| {
            if overridden(name) {
                self.topic_config_i64(topic, name)
            } else {
                -1
            }
        };
        let (max_bytes, max_age) = (limit("retention.bytes"), limit("retention.ms"));
        let deletes = self.has_policy(topic, "delete");
        let logs = &mut self.topics.get_mut(topic)?.partitions;
        let mut freed = 0;
        let mut out = Vec::new();
        for (index, log) in logs.iter_mut().enumerate() {
            if partition.is_some_and(|p| p != index) {
                continue;
            }
            let mut removed = 0;
            while deletes && log.batches.len() > 1 {
                let oldest = &log.batches[0];
                let too_big = max_bytes >= 0 && log.bytes > max_bytes as usize;
                let too_old = max_age >= 0
                    && oldest.max_timestamp >= 0
                    && oldest.max_timestamp < now_ms.saturating_sub(max_age);
                if !(too_big || too_old) {
                    break;
                }
                freed += log.drop_oldest();
                removed += 1;
            }
            out.push(cleaned(index, log, removed, 0));
        }
        self.bytes -= freed;
        Some(out)
    }

    /// Compacts every partition of `topic` at `now_ms` when its `cleanup.policy` holds
    /// `compact` (else nothing changes); `None` when the topic does not exist.
    pub fn compact(&mut self, topic: &str, now_ms: i64) -> Option<Vec<Cleaned>> {
        let compacts = self.has_policy(topic, "compact");
        let tombstone_age = self.topic_config_i64(topic, "delete.retention.ms");
        let logs = &mut self.topics.get_mut(topic)?.partitions;
        let (mut before, mut after) = (0, 0);
        let mut out = Vec::new();
        for (index, log) in logs.iter_mut().enumerate() {
            if !compacts {
                out.push(cleaned(index, log, 0, 0));
                continue;
            }
            before += log.bytes;
            let (batches, records) = compact_log(log, tombstone_age, now_ms);
            after += log.bytes;
            out.push(cleaned(index, log, batches, records));
        }
        self.bytes = self.bytes + after - before;
        Some(out)
    }
}

fn cleaned(index: usize, log: &PartitionLog, batches: usize, records: usize) -> Cleaned {
    Cleaned {
        partition: index as i32,
        batches_removed: batches,
        records_removed: records,
        log_start: log.log_start,
        high_watermark: log.high_watermark,
    }
}

/// The stored batches of `log`, decoded one at a time (each within the crate's
/// decompression cap); a batch that does not decode is kept as it is.
fn decoded(stored: &StoredBatch) -> Option<Vec<RecordBatch>> {
    BatchReader::with_options(stored.bytes(), ReadOptions::default())
        .map(|batch| batch.and_then(|b| b.decode()).ok())
        .collect()
}

/// Compacts `log` in place; the batches and records removed.
fn compact_log(log: &mut PartitionLog, tombstone_age: i64, now_ms: i64) -> (usize, usize) {
    // The newest offset of each key (one pass, a batch decoded at a time).
    let mut newest: HashMap<Bytes, i64> = HashMap::new();
    for stored in &log.batches {
        for batch in decoded(stored).into_iter().flatten() {
            for record in &batch.records {
                if let Some(key) = &record.key {
                    newest.insert(key.clone(), record.offset);
                }
            }
        }
    }
    let mut kept = VecDeque::with_capacity(log.batches.len());
    let (mut batches_removed, mut records_removed) = (0, 0);
    let mut bytes = 0;
    for stored in std::mem::take(&mut log.batches) {
        // The log stores one v2 batch per entry (Produce takes exactly one).
        let mut batch = match decoded(&stored) {
            Some(mut batches) if batches.len() == 1 => batches.remove(0),
            _ => {
                bytes += stored.len();
                kept.push_back(stored);
                continue;
            }
        };
        let keep: Vec<bool> = batch
            .records
            .iter()
            .map(|record| match &record.key {
                None => true,
                Some(key) if newest.get(key) != Some(&record.offset) => false,
                Some(_) if record.value.is_none() => {
                    tombstone_age < 0
                        || batch.record_timestamp(record) >= now_ms.saturating_sub(tombstone_age)
                }
                Some(_) => true,
            })
            .collect();
        let count = batch.records.len();
        let mut flags = keep.into_iter();
        batch.records.retain(|_| flags.next().unwrap_or(true));
        let removed = count - batch.records.len();
        if removed == 0 {
            bytes += stored.len();
            kept.push_back(stored);
            continue;
        }
        if batch.records.is_empty() {
            records_removed += removed;
            batches_removed += 1;
            continue;
        }
        // Base offset, last offset delta and the producer fields stay: the batch keeps its
        // place and its offsets, as Kafka's cleaner writes it.
        match batch.encode_to_bytes() {
            Ok(rewritten) => {
                records_removed += removed;
                bytes += rewritten.len();
                kept.push_back(StoredBatch {
                    bytes: rewritten,
                    // Written with its base offset and leader epoch.
                    stamp: None,
                    ..stored
                });
            }
            Err(_) => {
                bytes += stored.len();
                kept.push_back(stored);
            }
        }
    }
    log.batches = kept;
    log.bytes = bytes;
    (batches_removed, records_removed)
}

#[cfg(test)]
mod tests {
    use super::super::Retention;
    use super::*;
    use kafka_codec::records::{decode_batches, Compression, RecordBatchBuilder};

    fn state_with_topic(overrides: &[(&str, &str)]) -> State {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 1, 1);
        state.configs.topics.insert(
            "t".into(),
            overrides
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        state
    }

    /// Appends a batch of (timestamp, key, value) records.
    fn append(state: &mut State, compression: Compression, records: &[(i64, &str, Option<&str>)]) {
        let max = records.iter().map(|r| r.0).max().unwrap_or(-1);
        let count = records.len() as i64;
        state.append("t", 0, count, max, |base| {
            let mut builder = RecordBatchBuilder::new(compression).base_offset(base);
            for (timestamp, key, value) in records {
                builder.append(
                    *timestamp,
                    Some(Bytes::from(key.to_string())),
                    value.map(|v| Bytes::from(v.to_string())),
                );
            }
            builder.build().encode_to_bytes().unwrap()
        });
    }

    fn records(state: &State) -> Vec<(i64, String, Option<String>)> {
        state.topics["t"].partitions[0]
            .batches()
            .flat_map(|b| decode_batches(&b.bytes()).unwrap())
            .flat_map(|b| b.records)
            .map(|r| {
                (
                    r.offset,
                    String::from_utf8(r.key.unwrap().to_vec()).unwrap(),
                    r.value.map(|v| String::from_utf8(v.to_vec()).unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn retention_by_bytes_and_age_keeps_the_newest_batch() {
        let now = 1_000_000;
        let mut state = state_with_topic(&[("retention.ms", "1000")]);
        append(
            &mut state,
            Compression::None,
            &[(now - 5_000, "a", Some("1"))],
        );
        append(
            &mut state,
            Compression::None,
            &[(now - 4_000, "b", Some("2"))],
        );
        append(&mut state, Compression::None, &[(now - 10, "c", Some("3"))]);
        // Appending checks against the wall clock: these are from 1970, so both old
        // batches went already.
        assert_eq!(state.topics["t"].partitions[0].log_start(), 2);
        let mut state = state_with_topic(&[("retention.ms", "-1")]);
        for (i, key) in ["a", "b", "c"].iter().enumerate() {
            append(
                &mut state,
                Compression::None,
                &[(now - 5_000 + i as i64, key, Some("v"))],
            );
        }
        let one = state.topics["t"].partitions[0].batches[0].bytes.len();
        state
            .configs
            .topics
            .get_mut("t")
            .unwrap()
            .insert("retention.bytes".into(), (one * 2).to_string());
        let cleaned = state.apply_retention("t", None, now).unwrap();
        assert_eq!(cleaned[0].batches_removed, 1);
        assert_eq!(cleaned[0].log_start, 1);
        assert_eq!(state.bytes(), one * 2);
        state
            .configs
            .topics
            .get_mut("t")
            .unwrap()
            .insert("retention.ms".into(), "1000".into());
        let cleaned = state.apply_retention("t", None, now).unwrap();
        // Both are old; the newest stays.
        assert_eq!((cleaned[0].batches_removed, cleaned[0].log_start), (1, 2));
        // cleanup.policy without delete: nothing goes.
        let mut state = state_with_topic(&[("cleanup.policy", "compact"), ("retention.ms", "1")]);
        append(&mut state, Compression::None, &[(1, "a", Some("1"))]);
        append(&mut state, Compression::None, &[(2, "a", Some("2"))]);
        assert_eq!(state.topics["t"].partitions[0].log_start(), 0);
        assert!(state.apply_retention("nope", None, now).is_none());
    }

    #[test]
    fn compaction_keeps_the_newest_of_each_key_and_drops_old_tombstones() {
        let now = 1_000_000;
        let mut state = state_with_topic(&[
            ("cleanup.policy", "compact"),
            ("delete.retention.ms", "1000"),
        ]);
        append(
            &mut state,
            Compression::Gzip,
            &[
                (now - 9_000, "a", Some("a1")),
                (now - 9_000, "b", Some("b1")),
            ],
        );
        append(
            &mut state,
            Compression::None,
            &[(now - 8_000, "a", Some("a2"))],
        );
        // b's tombstone is old, c's recent.
        append(
            &mut state,
            Compression::Lz4,
            &[
                (now - 5_000, "b", None),
                (now - 10, "c", Some("c1")),
                (now - 5, "c", None),
            ],
        );
        let before = state.bytes();
        let cleaned = state.compact("t", now).unwrap();
        assert_eq!(cleaned[0].records_removed, 4);
        assert_eq!(cleaned[0].batches_removed, 1);
        assert_eq!((cleaned[0].log_start, cleaned[0].high_watermark), (0, 6));
        assert_eq!(
            records(&state),
            vec![(2, "a".into(), Some("a2".into())), (5, "c".into(), None)]
        );
        assert!(state.bytes() < before);
        assert_eq!(
            state.bytes(),
            state.topics["t"].partitions[0].bytes(),
            "the cluster's count follows"
        );
        // A fetch from an offset of a removed batch reads on from the next one.
        assert_eq!(state.topics["t"].partitions[0].read(0, 1).len(), 1);
        // Not a compacted topic: nothing changes.
        let mut state = state_with_topic(&[("retention.ms", "-1")]);
        append(&mut state, Compression::None, &[(now, "a", Some("1"))]);
        append(&mut state, Compression::None, &[(now, "a", Some("2"))]);
        assert_eq!(state.compact("t", now).unwrap()[0].records_removed, 0);
        assert_eq!(records(&state).len(), 2);
    }
}
