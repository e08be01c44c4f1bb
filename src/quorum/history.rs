//! [`LogHistory`] and [`VoterSetHistory`]: values indexed by the log offset that set them.

use super::{QuorumError, VoterSet};
use std::collections::BTreeMap;

/// Values keyed by the log offset of the record that produced them.
///
/// The value "in force" at offset `o` is the one recorded at the greatest offset `≤ o`.
/// Offsets must strictly increase; `-1` is allowed (values from the bootstrap checkpoint,
/// which sits before the first log record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHistory<T> {
    entries: BTreeMap<i64, T>,
}

impl<T> Default for LogHistory<T> {
    fn default() -> Self {
        LogHistory {
            entries: BTreeMap::new(),
        }
    }
}

impl<T> LogHistory<T> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `value` at `offset`; the offset must be `≥ -1` and above every recorded one.
    pub fn add_at(&mut self, offset: i64, value: T) -> Result<(), QuorumError> {
        if offset < -1 {
            return Err(QuorumError::InvalidOffset(offset));
        }
        if let Some((&last, _)) = self.entries.last_key_value() {
            if offset <= last {
                return Err(QuorumError::NonIncreasingOffset { last, offset });
            }
        }
        self.entries.insert(offset, value);
        Ok(())
    }

    /// The value recorded at the greatest offset `≤ offset`, if any.
    pub fn value_at_or_before(&self, offset: i64) -> Option<&T> {
        self.entry_at_or_before(offset).map(|(_, value)| value)
    }

    /// The entry (offset, value) recorded at the greatest offset `≤ offset`, if any.
    pub fn entry_at_or_before(&self, offset: i64) -> Option<(i64, &T)> {
        self.entries
            .range(..=offset)
            .next_back()
            .map(|(&at, value)| (at, value))
    }

    /// The newest entry.
    pub fn last_entry(&self) -> Option<(i64, &T)> {
        self.entries
            .last_key_value()
            .map(|(&at, value)| (at, value))
    }

    /// Drops every entry at an offset `≥ end` (the log was truncated to `end`).
    pub fn truncate_new_entries(&mut self, end: i64) {
        self.entries.split_off(&end);
    }

    /// Drops entries at offsets `≤ start`, except the newest of them, so that lookups at
    /// offsets `≥ start` still find the value in force (the log's start moved to `start`).
    pub fn truncate_old_entries(&mut self, start: i64) {
        let keep = self.entries.split_off(&(start.saturating_add(1)));
        let newest_old = self.entries.pop_last();
        self.entries = keep;
        if let Some((at, value)) = newest_old {
            self.entries.insert(at, value);
        }
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Entries in offset order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &T)> {
        self.entries.iter().map(|(&at, value)| (at, value))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The voter sets written to the log (and snapshots), by offset, plus the static voter set
/// that applies when the log holds none.
///
/// ```
/// use kafka_codec::quorum::{VoterSet, VoterSetHistory};
///
/// let three = VoterSet::from_static("CONTROLLER", [(1, "c1", 9093), (2, "c2", 9093), (3, "c3", 9093)]).unwrap();
/// let four = three.with_voter(VoterSet::static_node(4, "CONTROLLER", "c4", 9093)).unwrap();
/// let mut history = VoterSetHistory::new(None);
/// history.add_at(5, three.clone()).unwrap();
/// history.add_at(20, four.clone()).unwrap();
/// assert_eq!(history.value_at_or_before(19), Some(&three));
/// assert_eq!(history.value_at_or_before(20), Some(&four));
/// assert_eq!(history.value_at_or_before(4), None); // never the static set
/// history.truncate_new_entries(20);
/// assert_eq!(history.last_value(), Some(&three));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoterSetHistory {
    static_voters: Option<VoterSet>,
    history: LogHistory<VoterSet>,
}

impl VoterSetHistory {
    /// An empty history with an optional static voter set.
    pub fn new(static_voters: Option<VoterSet>) -> Self {
        VoterSetHistory {
            static_voters,
            history: LogHistory::new(),
        }
    }

    /// Records the voter set written at `offset`.
    ///
    /// Besides the ordering rules of [`LogHistory::add_at`], a set following one that came
    /// from the log or a snapshot (offset `≥ 0`) must have an overlapping majority with it;
    /// a set following a bootstrap entry (offset `-1`) need not.
    pub fn add_at(&mut self, offset: i64, voters: VoterSet) -> Result<(), QuorumError> {
        if let Some((at, last)) = self.history.last_entry() {
            if at >= 0 && !last.has_overlapping_majority(&voters) {
                return Err(QuorumError::NoOverlappingMajority { offset });
            }
        }
        self.history.add_at(offset, voters)
    }

    /// The voter set in force at `offset` (the last one written at or before it), never the
    /// static set.
    pub fn value_at_or_before(&self, offset: i64) -> Option<&VoterSet> {
        self.history.value_at_or_before(offset)
    }

    /// The newest voter set in the log, or the static set when the log has none.
    pub fn last_value(&self) -> Option<&VoterSet> {
        self.history
            .last_entry()
            .map(|(_, voters)| voters)
            .or(self.static_voters.as_ref())
    }

    /// The newest entry written to the log or a snapshot.
    pub fn last_entry(&self) -> Option<(i64, &VoterSet)> {
        self.history.last_entry()
    }

    /// The static voter set, if configured.
    pub fn static_voters(&self) -> Option<&VoterSet> {
        self.static_voters.as_ref()
    }

    /// See [`LogHistory::truncate_new_entries`].
    pub fn truncate_new_entries(&mut self, end: i64) {
        self.history.truncate_new_entries(end);
    }

    /// See [`LogHistory::truncate_old_entries`].
    pub fn truncate_old_entries(&mut self, start: i64) {
        self.history.truncate_old_entries(start);
    }

    /// Drops every log entry (a snapshot is about to be loaded); keeps the static set.
    pub fn clear(&mut self) {
        self.history.clear();
    }

    /// The log entries, in offset order.
    pub fn entries(&self) -> impl Iterator<Item = (i64, &VoterSet)> {
        self.history.iter()
    }
}
