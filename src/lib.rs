//! # kafka-codec
//!
//! The Apache Kafka wire protocol, every API and every version, generated at build time from
//! Kafka's JSON message schemas (`schemas/`: those of `kafka-clients` 4.4.0 merged with those of
//! 3.9.1, so that the versions and APIs Kafka 4.0 removed are read and written too).
//!
//! ```
//! use kafka_codec::messages::describe_quorum_request::{DescribeQuorumRequest, PartitionData, TopicData};
//! use kafka_codec::{ApiKey, RequestFrame};
//!
//! let body = DescribeQuorumRequest {
//!     topics: vec![TopicData {
//!         topic_name: "__cluster_metadata".into(),
//!         partitions: vec![PartitionData { partition_index: 0, ..Default::default() }],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//! // The header takes its API key from the body and its version from here.
//! let frame = RequestFrame::new(body, 2, 7).with_client_id("c");
//! assert_eq!(frame.api_key(), Some(ApiKey::DescribeQuorum));
//! let bytes = frame.encode_to_bytes().unwrap();
//! assert_eq!(bytes.len(), 40);
//! assert_eq!(RequestFrame::decode(bytes).unwrap(), frame);
//! ```
//!
//! Crate layout: [`messages`] holds one module per schema; [`Message`] is the trait they
//! share; [`ApiKey`], [`Request`] and [`Response`] dispatch by API; [`RequestFrame`] and
//! [`ResponseFrame`] handle whole frames and the size prefix; [`wire`] has the primitives, and
//! [`wire::Segments`], the encode that shares large `bytes`/`records` values instead of
//! copying them (for vectored writes);
//! [`json`] documents Kafka's JSON form; [`conn`] holds conversations (error codes, version
//! negotiation, sans-IO connections); `records` (feature `records`, on by default) reads and
//! writes the record batches inside Produce and Fetch; `quorum` (feature `quorum`) is the
//! reference KRaft leader model that computes the committed voter set.

#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see Cargo.toml) labels each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The generated code names this crate `::kafka_codec`, as code generated into any other crate
// does (see `kafka_codec_codegen::Generator::crate_path`); this alias makes that path work
// here too, so the crate's own build proves the generated paths.
extern crate self as kafka_codec;

pub mod api;
pub mod codegen;
pub mod conn;
#[cfg(feature = "json")]
mod error;
pub mod frame;
#[cfg(feature = "json")]
pub mod json;
mod message;
#[cfg(feature = "quorum")]
pub mod quorum;
#[cfg(feature = "arbitrary")]
pub mod random;
#[cfg(feature = "records")]
pub mod records;
mod versions;
pub mod wire;

/// The buffer types of the API (`Bytes`, `BytesMut`, `Buf`, `BufMut`), so that users and
/// generated code need no `bytes` dependency of their own, or a mismatched one.
pub use bytes;
/// The JSON value type of [`Message::to_json`]/[`Message::from_json`].
#[cfg(feature = "json")]
pub use serde_json;

/// Every message: one module per schema file, the top-level struct re-exported here.
///
/// Requests and responses are compiled per API, by cargo feature (`describe-quorum`, ...);
/// headers and data schemas always. Each struct encodes, decodes and speaks JSON as the
/// features say (see [`Message`]).
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/messages.rs"));
}

#[cfg(all(feature = "client", feature = "broker", feature = "arbitrary"))]
pub use api::RandomMessageVisitor;
pub use api::{ApiKey, Listener, Request, Response};
#[cfg(all(feature = "client", feature = "broker"))]
pub use api::{MessageCodec, MessageVisitor};
#[cfg(feature = "json")]
pub use error::{JsonError, JsonErrorKind};
pub use frame::{DecodeOptions, RequestFrame, ResponseFrame, TrailingBytes};
pub use message::{DecodeFields, EncodeFields, Message, MessageKind};
#[cfg(feature = "json")]
pub use message::{JsonFields, TranscodeFields};
pub use versions::{ReleaseVersions, VersionRange};
pub use wire::{
    DecodeError, DecodeErrorKind, DecodeLimits, EncodeError, EncodeErrorKind, FieldPath,
    ParseUuidError, PathSegment, PrimitiveArray, RawTaggedField, TaggedFields, Utf8Bytes, Uuid,
};

// The README's example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The pinned Apache Kafka release: the newest whose schemas this crate merges. The versions it
/// no longer speaks come from Kafka 3.9.1 ([`ApiKey::releases`], [`ApiKey::removed_versions`]).
pub const KAFKA_VERSION: &str = "4.4.0";
