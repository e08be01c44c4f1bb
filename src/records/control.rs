//! Control records: transaction markers and KRaft control records, read and written with the
//! crate's generated data schemas.
//!
//! A control record's key is `version: int16` followed by [`ControlRecordTypeSchema`] (the
//! type id); its value depends on the type: a transaction marker is `version: int16`
//! followed by [`EndTxnMarker`], the KRaft records are their message at schema version 0.

use super::{Record, RecordsErrorKind};
use crate::message::DecodeFields;
use crate::messages::{
    ControlRecordTypeSchema, EndTxnMarker, KRaftVersionRecord, LeaderChangeMessage,
    SnapshotFooterRecord, SnapshotHeaderRecord, VotersRecord,
};
use crate::Message;
use bytes::{BufMut, Bytes, BytesMut};

/// The type of a control record, from its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// 0: transaction abort marker.
    Abort,
    /// 1: transaction commit marker.
    Commit,
    /// 2: `LeaderChangeMessage`, the first record of every KRaft leader epoch.
    LeaderChange,
    /// 3: `SnapshotHeaderRecord`.
    SnapshotHeader,
    /// 4: `SnapshotFooterRecord`.
    SnapshotFooter,
    /// 5: `KRaftVersionRecord`.
    KRaftVersion,
    /// 6: `VotersRecord`.
    KRaftVoters,
    /// Any other type id; Kafka's readers ignore it.
    Unknown(i16),
}

impl ControlRecordType {
    /// The type id written in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KRaftVersion => 5,
            ControlRecordType::KRaftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    /// The type for an id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KRaftVersion,
            6 => ControlRecordType::KRaftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// Kafka's name of the type (`ABORT`, `COMMIT`, `LEADER_CHANGE`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KRaftVersion => "KRAFT_VERSION",
            ControlRecordType::KRaftVoters => "KRAFT_VOTERS",
            ControlRecordType::Unknown(_) => "UNKNOWN",
        }
    }

    /// Reads the type from a control record's key. A key shorter than four bytes or with a
    /// negative version is corrupt; any other version is read the same way (the type always
    /// follows the version), as Kafka does.
    pub fn from_key(key: &[u8]) -> Result<Self, RecordsErrorKind> {
        let corrupt = || {
            RecordsErrorKind::InvalidControlRecord(format!(
                "key of {} bytes is not a control record key",
                key.len()
            ))
        };
        if key.len() < 4 || i16::from_be_bytes([key[0], key[1]]) < 0 {
            return Err(corrupt());
        }
        let mut rest = Bytes::copy_from_slice(&key[2..4]);
        let schema = ControlRecordTypeSchema::decode(&mut rest, CONTROL_KEY_VERSION)
            .map_err(|e| RecordsErrorKind::InvalidControlRecord(e.to_string()))?;
        Ok(ControlRecordType::from_id(schema.r#type))
    }

    /// The key of a control record of this type (key version 0).
    pub fn key(self) -> Bytes {
        let schema = ControlRecordTypeSchema {
            r#type: self.id(),
            ..Default::default()
        };
        let mut key = BytesMut::with_capacity(4);
        key.put_i16(CONTROL_KEY_VERSION);
        schema
            .encode(&mut key, CONTROL_KEY_VERSION)
            .expect("an int16 always encodes");
        key.freeze()
    }
}

/// Version of the control record key Kafka writes.
const CONTROL_KEY_VERSION: i16 = 0;
/// Version of the transaction marker value Kafka writes.
const END_TXN_MARKER_VERSION: i16 = 0;
/// Schema version of the KRaft control record values.
const KRAFT_VALUE_VERSION: i16 = 0;

/// A decoded control record.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRecord {
    /// Transaction abort marker.
    Abort(EndTxnMarker),
    /// Transaction commit marker.
    Commit(EndTxnMarker),
    /// KRaft leader change.
    LeaderChange(LeaderChangeMessage),
    /// Start of a KRaft snapshot.
    SnapshotHeader(SnapshotHeaderRecord),
    /// End of a KRaft snapshot.
    SnapshotFooter(SnapshotFooterRecord),
    /// The `kraft.version` feature level.
    KRaftVersion(KRaftVersionRecord),
    /// The KRaft voter set.
    KRaftVoters(VotersRecord),
    /// A type this crate does not know; its value is kept as is.
    Unknown {
        /// The type id.
        type_id: i16,
        /// The value, `None` for null.
        value: Option<Bytes>,
    },
}

fn invalid(e: impl std::fmt::Display) -> RecordsErrorKind {
    RecordsErrorKind::InvalidControlRecord(e.to_string())
}

fn decode_exact<M: Message + DecodeFields>(value: &[u8]) -> Result<M, RecordsErrorKind> {
    M::decode_exact(Bytes::copy_from_slice(value), KRAFT_VALUE_VERSION).map_err(invalid)
}

impl ControlRecord {
    /// The record's type.
    pub fn record_type(&self) -> ControlRecordType {
        match self {
            ControlRecord::Abort(_) => ControlRecordType::Abort,
            ControlRecord::Commit(_) => ControlRecordType::Commit,
            ControlRecord::LeaderChange(_) => ControlRecordType::LeaderChange,
            ControlRecord::SnapshotHeader(_) => ControlRecordType::SnapshotHeader,
            ControlRecord::SnapshotFooter(_) => ControlRecordType::SnapshotFooter,
            ControlRecord::KRaftVersion(_) => ControlRecordType::KRaftVersion,
            ControlRecord::KRaftVoters(_) => ControlRecordType::KRaftVoters,
            ControlRecord::Unknown { type_id, .. } => ControlRecordType::Unknown(*type_id),
        }
    }

    /// Decodes a control record from its key and value.
    pub fn decode(key: Option<&[u8]>, value: Option<&[u8]>) -> Result<Self, RecordsErrorKind> {
        let record_type = ControlRecordType::from_key(key.unwrap_or_default())?;
        if let ControlRecordType::Unknown(type_id) = record_type {
            return Ok(ControlRecord::Unknown {
                type_id,
                value: value.map(Bytes::copy_from_slice),
            });
        }
        let value = value.ok_or_else(|| invalid("a null value"))?;
        Ok(match record_type {
            ControlRecordType::Abort | ControlRecordType::Commit => {
                // The marker's own version comes first; newer versions may add fields after
                // the ones version 0 has, which are then left unread, as Kafka does.
                if value.len() < 2 || i16::from_be_bytes([value[0], value[1]]) < 0 {
                    return Err(invalid("transaction marker without a valid version"));
                }
                let version = i16::from_be_bytes([value[0], value[1]]);
                let mut body = Bytes::copy_from_slice(&value[2..]);
                let marker = if version == END_TXN_MARKER_VERSION {
                    EndTxnMarker::decode_exact(body, END_TXN_MARKER_VERSION)
                } else {
                    EndTxnMarker::decode(&mut body, END_TXN_MARKER_VERSION)
                }
                .map_err(invalid)?;
                if record_type == ControlRecordType::Abort {
                    ControlRecord::Abort(marker)
                } else {
                    ControlRecord::Commit(marker)
                }
            }
            ControlRecordType::LeaderChange => ControlRecord::LeaderChange(decode_exact(value)?),
            ControlRecordType::SnapshotHeader => {
                ControlRecord::SnapshotHeader(decode_exact(value)?)
            }
            ControlRecordType::SnapshotFooter => {
                ControlRecord::SnapshotFooter(decode_exact(value)?)
            }
            ControlRecordType::KRaftVersion => ControlRecord::KRaftVersion(decode_exact(value)?),
            ControlRecordType::KRaftVoters => ControlRecord::KRaftVoters(decode_exact(value)?),
            ControlRecordType::Unknown(_) => unreachable!("handled above"),
        })
    }

    /// The value bytes, as Kafka writes them.
    pub fn value(&self) -> Result<Option<Bytes>, RecordsErrorKind> {
        let encode = |m: &dyn Fn() -> Result<Bytes, crate::EncodeError>| m().map_err(invalid);
        Ok(Some(match self {
            ControlRecord::Abort(marker) | ControlRecord::Commit(marker) => {
                let mut value = BytesMut::with_capacity(6);
                value.put_i16(END_TXN_MARKER_VERSION);
                marker
                    .encode(&mut value, END_TXN_MARKER_VERSION)
                    .map_err(invalid)?;
                value.freeze()
            }
            ControlRecord::LeaderChange(m) => encode(&|| m.encode_to_bytes(KRAFT_VALUE_VERSION))?,
            ControlRecord::SnapshotHeader(m) => encode(&|| m.encode_to_bytes(KRAFT_VALUE_VERSION))?,
            ControlRecord::SnapshotFooter(m) => encode(&|| m.encode_to_bytes(KRAFT_VALUE_VERSION))?,
            ControlRecord::KRaftVersion(m) => encode(&|| m.encode_to_bytes(KRAFT_VALUE_VERSION))?,
            ControlRecord::KRaftVoters(m) => encode(&|| m.encode_to_bytes(KRAFT_VALUE_VERSION))?,
            ControlRecord::Unknown { value, .. } => return Ok(value.clone()),
        }))
    }

    /// A record (for a control batch) holding this control record.
    pub fn to_record(&self, offset: i64, timestamp: i64) -> Result<Record, RecordsErrorKind> {
        Ok(Record {
            offset,
            timestamp,
            attributes: 0,
            key: Some(self.record_type().key()),
            value: self.value()?,
            headers: Vec::new(),
        })
    }

    /// The value in Kafka's JSON form of its schema (`null` for an unknown type).
    #[cfg(feature = "json")]
    pub fn value_json(&self) -> Result<serde_json::Value, crate::EncodeError> {
        match self {
            ControlRecord::Abort(m) | ControlRecord::Commit(m) => m.to_json(END_TXN_MARKER_VERSION),
            ControlRecord::LeaderChange(m) => m.to_json(KRAFT_VALUE_VERSION),
            ControlRecord::SnapshotHeader(m) => m.to_json(KRAFT_VALUE_VERSION),
            ControlRecord::SnapshotFooter(m) => m.to_json(KRAFT_VALUE_VERSION),
            ControlRecord::KRaftVersion(m) => m.to_json(KRAFT_VALUE_VERSION),
            ControlRecord::KRaftVoters(m) => m.to_json(KRAFT_VALUE_VERSION),
            ControlRecord::Unknown { .. } => Ok(serde_json::Value::Null),
        }
    }
}
