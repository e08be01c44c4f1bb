//! Control records and [`ControlRecordStateMachine`], which follows them through the log.

use super::{LogHistory, QuorumError, VoterSet, VoterSetHistory};
use crate::message::EncodeFields;
use crate::messages::{KRaftVersionRecord, LeaderChangeMessage, VotersRecord};
pub use crate::records::ControlRecordType;
use crate::Message;
use bytes::Bytes;

/// Schema version of the KRaft control record values (`VotersRecord` and friends).
const CONTROL_VALUE_VERSION: i16 = 0;

/// One control record as stored in a control batch: key and value bytes.
///
/// The key is `version: int16` followed by the `ControlRecordTypeSchema` struct (the type id,
/// read and written by [`ControlRecordType`]); the value is the record's message encoded at
/// schema version 0. Both are produced and read with the crate's generated types, never by
/// hand. (To read the control records of a batch, see
/// [`records::ControlRecord`](crate::records::ControlRecord).)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlRecord {
    key: Bytes,
    value: Bytes,
}

impl ControlRecord {
    /// A control record from raw key and value bytes (as read from a batch).
    pub fn from_parts(key: Bytes, value: Bytes) -> Self {
        ControlRecord { key, value }
    }

    /// Encodes `message` as the value of a control record of type `record_type`.
    pub fn encode<M: Message + EncodeFields>(
        record_type: ControlRecordType,
        message: &M,
    ) -> Result<Self, QuorumError> {
        let value = message.encode_to_bytes(CONTROL_VALUE_VERSION)?;
        Ok(ControlRecord {
            key: record_type.key(),
            value,
        })
    }

    /// A `KRaftVoters` control record.
    pub fn voters(record: &VotersRecord) -> Result<Self, QuorumError> {
        ControlRecord::encode(ControlRecordType::KRaftVoters, record)
    }

    /// A `LeaderChange` control record.
    pub fn leader_change(message: &LeaderChangeMessage) -> Result<Self, QuorumError> {
        ControlRecord::encode(ControlRecordType::LeaderChange, message)
    }

    /// A `KRaftVersion` control record.
    pub fn kraft_version(record: &KRaftVersionRecord) -> Result<Self, QuorumError> {
        ControlRecord::encode(ControlRecordType::KRaftVersion, record)
    }

    /// The key bytes.
    pub fn key(&self) -> &Bytes {
        &self.key
    }

    /// The value bytes.
    pub fn value(&self) -> &Bytes {
        &self.value
    }

    /// The record type read from the key. A key shorter than four bytes or with a negative
    /// version is corrupt; a key version other than 0 is read the same way (the type always
    /// follows the version).
    pub fn record_type(&self) -> Result<ControlRecordType, QuorumError> {
        ControlRecordType::from_key(&self.key)
            .map_err(|_| QuorumError::CorruptControlKey(self.key.clone()))
    }

    /// The value decoded as a `VotersRecord`; fails if this is another type.
    pub fn decode_voters(&self) -> Result<VotersRecord, QuorumError> {
        self.expect_type(ControlRecordType::KRaftVoters)?;
        Ok(VotersRecord::decode_exact(
            self.value.clone(),
            CONTROL_VALUE_VERSION,
        )?)
    }

    /// The value decoded as a `KRaftVersionRecord`; fails if this is another type.
    pub fn decode_kraft_version(&self) -> Result<KRaftVersionRecord, QuorumError> {
        self.expect_type(ControlRecordType::KRaftVersion)?;
        Ok(KRaftVersionRecord::decode_exact(
            self.value.clone(),
            CONTROL_VALUE_VERSION,
        )?)
    }

    /// The value decoded as a `LeaderChangeMessage`; fails if this is another type.
    pub fn decode_leader_change(&self) -> Result<LeaderChangeMessage, QuorumError> {
        self.expect_type(ControlRecordType::LeaderChange)?;
        Ok(LeaderChangeMessage::decode_exact(
            self.value.clone(),
            CONTROL_VALUE_VERSION,
        )?)
    }

    fn expect_type(&self, expected: ControlRecordType) -> Result<(), QuorumError> {
        let found = self.record_type()?;
        if found == expected {
            Ok(())
        } else {
            Err(QuorumError::UnexpectedControlRecord { expected, found })
        }
    }
}

/// A record appended to the metadata log, as far as the quorum model cares: either ordinary
/// data (contents irrelevant) or a control record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRecord {
    /// A data record (metadata); only its offset matters here.
    Data,
    /// A control record.
    Control(ControlRecord),
}

/// What one control record changes.
enum Update {
    Voters(VoterSet),
    KRaftVersion(i16),
}

/// Follows the control records of the local log (and snapshot) and keeps, by offset, the
/// voter sets and `kraft.version` values they carry.
///
/// Every appended record, committed or not, is read: a `VotersRecord` becomes the
/// [last voter set](ControlRecordStateMachine::last_voter_set) as soon as it is appended.
/// `VotersRecord` values are decoded with the crate's generated [`VotersRecord`] type.
/// Offsets are implicit: records are appended at [`ControlRecordStateMachine::next_offset`],
/// one offset per record.
///
/// ```
/// use kafka_codec::quorum::{ControlRecord, ControlRecordStateMachine, LogRecord, VoterSet};
///
/// let three = VoterSet::from_static("CONTROLLER", [(1, "c1", 9093), (2, "c2", 9093), (3, "c3", 9093)]).unwrap();
/// let four = three.with_voter(VoterSet::static_node(4, "CONTROLLER", "c4", 9093)).unwrap();
/// let mut log = ControlRecordStateMachine::new(Some(three.clone()));
/// log.append(&[LogRecord::Data, LogRecord::Data]).unwrap(); // offsets 0, 1
/// assert_eq!(log.last_voter_set(), Some(&three)); // static fallback
/// let voters = ControlRecord::voters(&four.to_voters_record()).unwrap();
/// log.append(&[LogRecord::Control(voters)]).unwrap(); // offset 2
/// assert_eq!(log.last_voter_set(), Some(&four));
/// assert_eq!(log.voter_set_at_offset(1).unwrap(), None);
/// assert_eq!(log.voter_set_at_offset(2).unwrap(), Some(&four));
/// assert!(log.voter_set_at_offset(3).is_err()); // not appended yet
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlRecordStateMachine {
    voter_sets: VoterSetHistory,
    kraft_versions: LogHistory<i16>,
    next_offset: i64,
}

impl ControlRecordStateMachine {
    /// The state of an empty log, with the static voter set if one is configured.
    pub fn new(static_voters: Option<VoterSet>) -> Self {
        ControlRecordStateMachine {
            voter_sets: VoterSetHistory::new(static_voters),
            kraft_versions: LogHistory::new(),
            next_offset: 0,
        }
    }

    /// Replaces everything read so far with a snapshot that ends at `end_offset` (exclusive):
    /// its control records take effect at `end_offset - 1`, and reading continues at
    /// `end_offset`. The bootstrap checkpoint written by `kafka-storage format
    /// --standalone/--initial-controllers` is the snapshot ending at 0, so its voter set sits
    /// at offset `-1`.
    pub fn load_snapshot(
        &mut self,
        end_offset: i64,
        records: &[ControlRecord],
    ) -> Result<(), QuorumError> {
        if end_offset < 0 {
            return Err(QuorumError::InvalidOffset(end_offset));
        }
        let at = end_offset - 1;
        // Several records of one kind in a snapshot: the last one wins.
        let mut voters = None;
        let mut kraft = None;
        for record in records {
            match Self::read(record)? {
                Some(Update::Voters(set)) => voters = Some(set),
                Some(Update::KRaftVersion(v)) => kraft = Some(v),
                None => {}
            }
        }
        let mut next = self.clone();
        next.voter_sets.clear();
        next.kraft_versions.clear();
        if let Some(set) = voters {
            next.voter_sets.add_at(at, set)?;
        }
        if let Some(v) = kraft {
            next.kraft_versions.add_at(at, v)?;
        }
        next.next_offset = end_offset;
        *self = next;
        Ok(())
    }

    /// Appends one batch at [`ControlRecordStateMachine::next_offset`] and returns its base
    /// offset. All or nothing: if a control record cannot be decoded, or a voter set does not
    /// overlap the previous one, nothing changes.
    pub fn append(&mut self, records: &[LogRecord]) -> Result<i64, QuorumError> {
        let base = self.next_offset;
        let mut updates = Vec::new();
        for (index, record) in records.iter().enumerate() {
            if let LogRecord::Control(control) = record {
                if let Some(update) = Self::read(control)? {
                    updates.push((base + index as i64, update));
                }
            }
        }
        // Validate against the current newest entries before touching anything.
        let mut previous = self
            .voter_sets
            .last_entry()
            .map(|(at, set)| (at, set.clone()));
        for (offset, update) in &updates {
            if let Update::Voters(set) = update {
                if let Some((at, last)) = &previous {
                    if *at >= 0 && !last.has_overlapping_majority(set) {
                        return Err(QuorumError::NoOverlappingMajority { offset: *offset });
                    }
                }
                previous = Some((*offset, set.clone()));
            }
        }
        for (offset, update) in updates {
            match update {
                Update::Voters(set) => self.voter_sets.add_at(offset, set)?,
                Update::KRaftVersion(version) => self.kraft_versions.add_at(offset, version)?,
            }
        }
        self.next_offset = base + records.len() as i64;
        Ok(base)
    }

    /// Forgets everything at offsets `≥ end` (the log was truncated after a divergence).
    /// Fails if `end` is negative or beyond the records read.
    pub fn truncate_to(&mut self, end: i64) -> Result<(), QuorumError> {
        if end < 0 || end > self.next_offset {
            return Err(QuorumError::InvalidOffset(end));
        }
        self.voter_sets.truncate_new_entries(end);
        self.kraft_versions.truncate_new_entries(end);
        self.next_offset = end;
        Ok(())
    }

    /// The log start moved to `start` (older segments deleted after a snapshot): entries
    /// before it are dropped, except those still in force at `start`.
    pub fn truncate_old_entries(&mut self, start: i64) {
        self.voter_sets.truncate_old_entries(start);
        self.kraft_versions.truncate_old_entries(start);
    }

    /// The offset the next appended record gets (the log end offset).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The newest voter set, committed or not; the static set when the log has none.
    pub fn last_voter_set(&self) -> Option<&VoterSet> {
        self.voter_sets.last_value()
    }

    /// Offset of the newest voter set read from the log or a snapshot (`-1` for the
    /// bootstrap checkpoint), `None` if there is none.
    pub fn last_voter_set_offset(&self) -> Option<i64> {
        self.voter_sets.last_entry().map(|(at, _)| at)
    }

    /// The voter set in force at `offset` (inclusive) as written in the log or a snapshot,
    /// never the static set. Fails for offsets not read yet (`≥ next_offset`).
    pub fn voter_set_at_offset(&self, offset: i64) -> Result<Option<&VoterSet>, QuorumError> {
        self.check_read(offset)?;
        Ok(self.voter_sets.value_at_or_before(offset))
    }

    /// The newest `kraft.version`; 0 when the log has none.
    pub fn kraft_version(&self) -> i16 {
        self.kraft_versions.last_entry().map_or(0, |(_, &v)| v)
    }

    /// The `kraft.version` in force at `offset` (inclusive); 0 when none was written.
    pub fn kraft_version_at_offset(&self, offset: i64) -> Result<i16, QuorumError> {
        self.check_read(offset)?;
        Ok(self
            .kraft_versions
            .value_at_or_before(offset)
            .copied()
            .unwrap_or(0))
    }

    /// The voter-set history.
    pub fn voter_set_history(&self) -> &VoterSetHistory {
        &self.voter_sets
    }

    fn check_read(&self, offset: i64) -> Result<(), QuorumError> {
        if offset >= self.next_offset {
            Err(QuorumError::OffsetNotRead {
                offset,
                next_offset: self.next_offset,
            })
        } else {
            Ok(())
        }
    }

    /// Decodes what a control record changes, if anything.
    fn read(record: &ControlRecord) -> Result<Option<Update>, QuorumError> {
        Ok(match record.record_type()? {
            ControlRecordType::KRaftVoters => {
                let decoded = record.decode_voters()?;
                Some(Update::Voters(VoterSet::from_voters_record(&decoded)?))
            }
            ControlRecordType::KRaftVersion => Some(Update::KRaftVersion(
                record.decode_kraft_version()?.k_raft_version,
            )),
            _ => None,
        })
    }
}
