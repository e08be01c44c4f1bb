//! Wire primitives: readers over a shared [`Bytes`](bytes::Bytes) input, and
//! writers on [`BufMut`](bytes::BufMut), with the value types and errors they use.
//!
//! Generated message code calls these; they are public so that tools which frame or inspect
//! Kafka bytes by hand (record batches, metadata logs) can share them. Every reader checks a
//! length or count against the bytes that remain before reserving anything.
//!
//! This is the bottom layer: it knows nothing of messages. Nested structs are read and written
//! through callbacks (`decoder.read_struct(|d| ...)`), and errors carry the message's name
//! only as text added by the caller. The value types and errors are re-exported at the crate
//! root (`kafka_codec::Uuid`, `kafka_codec::DecodeError`, ...).

mod array;
mod decoder;
mod encoder;
mod error;
mod limits;
mod run;
mod segments;
mod tagged;
mod values;

pub use array::{
    FixedWidth, IntoIter as PrimitiveArrayIntoIter, Iter as PrimitiveArrayIter, PrimitiveArray,
};
pub use decoder::{bool_from_byte, Decoder};
pub use encoder::*;
#[cfg(feature = "json")]
pub(crate) use error::{located_error, Location};
pub use error::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSegment,
};
pub use limits::DecodeLimits;
pub use run::{read_at, write_at};
pub use segments::{Segments, DEFAULT_SHARE_THRESHOLD};
pub use tagged::TaggedFields;
pub use values::{ParseUuidError, RawTaggedField, Utf8Bytes, Uuid};

/// Kafka's limit on the UTF-8 byte length of a string, in classic and compact form.
pub const MAX_STRING_LEN: usize = i16::MAX as usize;
