//! Wire primitives: the [`Decoder`] over a shared [`Bytes`](bytes::Bytes) input, and
//! [`Segments`], the encode output that shares large values instead of copying them.
//!
//! Generated message code calls these; the decoder is public so that tools which frame or
//! inspect Kafka bytes by hand (record batches, metadata logs) can share it. Every read checks
//! a length or count against the bytes that remain before reserving anything. The writers
//! generated code calls are not part of the documented API (they are reached through the
//! hidden `codegen` module and may change in any release).
//!
//! This is the bottom layer: it knows nothing of messages. Nested structs are read and written
//! through callbacks (`decoder.read_struct(|d| ...)`), and errors carry the message's name
//! only as text added by the caller. The value types, errors and limits are documented at the
//! crate root (`kafka_codec::Uuid`, `kafka_codec::DecodeError`, `kafka_codec::DecodeLimits`).

mod array;
mod decoder;
mod encoder;
mod error;
mod limits;
mod run;
mod segments;
mod tagged;
mod values;
// The runtime generated views call (feature `views`); `ViewIter`, what array accessors
// return, is documented at the crate root.
#[cfg(feature = "views")]
#[doc(hidden)]
pub mod view;

#[doc(hidden)]
pub use array::PrimitiveArray;
pub use array::{FixedWidth, IntoIter as PrimitiveArrayIntoIter, Iter as PrimitiveArrayIter};
#[doc(hidden)]
pub use decoder::bool_from_byte;
pub use decoder::Decoder;
// The writers generated `encode` code calls: reachable for it (through `codegen`), not
// documented; a tool that writes Kafka bytes by hand encodes messages, or uses `Segments`.
#[doc(hidden)]
pub use encoder::*;
#[cfg(feature = "json")]
pub(crate) use error::{located_error, Location};
// The value types and errors are documented where a user meets them, at the crate root
// (`kafka_codec::Uuid`); this path stays for the crate's own code and generated code.
#[doc(hidden)]
pub use error::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSegment,
};
#[doc(hidden)]
pub use limits::DecodeLimits;
#[doc(hidden)]
pub use run::{read_at, write_at};
pub use segments::{Segments, DEFAULT_SHARE_THRESHOLD};
#[doc(hidden)]
pub use tagged::TaggedFields;
#[doc(hidden)]
pub use values::{ParseUuidError, RawTaggedField, Utf8Bytes, Uuid};

/// Kafka's limit on the UTF-8 byte length of a string, in classic and compact form.
pub const MAX_STRING_LEN: usize = i16::MAX as usize;
