//! Wire primitives: readers built on `nom` over a shared [`Bytes`](bytes::Bytes) input, and
//! writers on [`BufMut`](bytes::BufMut).
//!
//! Generated message code calls these; they are public so that tools which frame or inspect
//! Kafka bytes by hand (record batches, metadata logs) can share them. Every reader checks a
//! length or count against the bytes that remain before reserving anything.

mod decoder;
mod encoder;
mod limits;

pub use decoder::Decoder;
pub use encoder::*;
pub use limits::DecodeLimits;

/// Kafka's limit on the UTF-8 byte length of a string, in classic and compact form.
pub const MAX_STRING_LEN: usize = i16::MAX as usize;
