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
//! let body = DescribeQuorumRequest::default().with_topics(vec![
//!     TopicData::default()
//!         .with_topic_name("__cluster_metadata".into())
//!         .with_partitions(vec![PartitionData::default().with_partition_index(0)]),
//! ]);
//! // The header takes its API key from the body and its version from here.
//! let frame = RequestFrame::new(body, 2, 7).with_client_id("c");
//! assert_eq!(frame.api_key(), Some(ApiKey::DescribeQuorum));
//! let bytes = frame.encode_to_bytes().unwrap();
//! assert_eq!(bytes.len(), 40);
//! assert_eq!(RequestFrame::decode(bytes).unwrap(), frame);
//! ```
//!
//! # A map of the crate
//!
//! Each area below says what it holds, the cargo feature that compiles it (the default
//! features turn all of them on except `tokio` and `arbitrary`; the README's feature table
//! has the rest), and where to start reading.
//!
//! **Messages and frames** (always; each API behind its own feature, `describe-quorum`,
//! `all-apis` for every one). [`messages`] holds one module per schema, every request,
//! response, header and data schema as plain structs; [`Message`] is the trait they share
//! (encode, decode, JSON at a version). [`ApiKey`] is Kafka's API table (versions, header
//! rules, which listener serves an API), and [`Request`]/[`Response`] dispatch a body by key.
//! [`RequestFrame`] and [`ResponseFrame`] are whole frames, header and body: decode with
//! `decode`, or `decode_with` and [`DecodeOptions`] (limits, [`TrailingBytes`], the size
//! prefix as [`Framing`]); encode with `encode_to_bytes`, `encode` or `encode_segments`.
//! [`split_frame`] cuts size-prefixed frames out of a buffer a socket fills. Decoding a
//! request needs `broker` and encoding one `client`; responses the other way round.
//! **Start here**: [`RequestFrame::new`], then the example below.
//!
//! **Conversations** ([`conn`]; the client with `client`, the server with `broker`, the
//! observer with both). Sans-IO connections that number requests, match responses to them and
//! pick each response's header version; version negotiation from an ApiVersions answer
//! ([`conn::SupportedVersions`]); an observer for a tap. The `tokio` feature adds
//! `conn::tokio`, `tokio_util` codecs over the same connections. Kafka's error table is
//! [`ErrorCode`].
//!
//! **Record batches** (`records`, and one feature per codec: `gzip`, `snappy`, `lz4`,
//! `zstd`). The `records` module reads and writes what a Produce or Fetch `records` field
//! holds: RecordBatch v2, legacy magic 0/1 message sets, control batches, compression, with a
//! decompression cap and a memory budget from [`DecodeLimits`].
//!
//! **JSON** (`json`). The `json` module documents Kafka's JSON form, which every message
//! speaks through [`Message`] and the frames (`to_json`, `from_json`, strict by default, a
//! misspelled key answered with the one meant); `json::transcode_request` and friends write a
//! frame's JSON straight from its bytes, and `json::redact` keeps secrets out of logs.
//!
//! **The quorum model** (`quorum`, which turns on `records`, `broker` and the three quorum
//! APIs). The `quorum` module is a reference KRaft leader that computes the committed voter
//! set and answers DescribeQuorum, AddRaftVoter and RemoveRaftVoter.
//!
//! **Limits and errors** (always). [`DecodeLimits`] bounds what untrusted bytes may cost
//! (frame size, array and string lengths, nesting, a memory budget). Failures are
//! [`DecodeError`], [`EncodeError`] and, for JSON, `JsonError`, each with a kind and the
//! [`FieldPath`] of the field that failed. [`wire`] has the [`wire::Decoder`] for tools
//! that read Kafka bytes by hand, and [`wire::Segments`], the encode output that shares large
//! `bytes`/`records` values instead of copying them (for vectored writes).
//!
//! **Zero-copy views** (`views`, off by default: it doubles the CPU time of a client-only
//! dependent's clean release build, measured in `benches/README.md`; requests with `broker`,
//! responses with `client`, as decoding). `RequestFrameView` and `ResponseFrameView` read a frame in place;
//! each struct has a `<Struct>View` beside it (`ProduceRequestView`), whose accessors read
//! fields from the frame's bytes on demand. `LazyRequestFrame`, `LazyResponseFrame` and
//! `LazyMessage` give the same views in their lazy mode (`ProduceRequestView<'_, Lazy>`).
//! See the next section for when to use them.
//!
//! **Random messages** (`arbitrary`). The `random` module generates messages valid at a
//! version, for property tests and structure-aware fuzzing.
//!
//! # Views or owned messages: when to use which
//!
//! An **owned message** (`RequestFrame::decode`, `Message::decode`) is plain data: every field
//! a struct field, arrays `Vec`s, strings and bytes slices sharing the input. Use it to keep a
//! message, change it, encode it again, hand it to another thread without the input, or read
//! most of its fields several times. Its decode allocates the arrays.
//!
//! A **view** (`RequestFrameView::new`, feature `views`) builds nothing: making one checks the
//! whole frame once, exactly as the owned decoder does (same limits, same memory budget, and
//! a refused frame gets the owned decoder's own error), and then each accessor reads its field
//! from the bytes when called, arrays as iterators (`ViewIter`, an `ExactSizeIterator`) that
//! read an element per step. It suits a path that reads a few fields and forwards the bytes
//! (a proxy or router that needs the topics of a Produce request, an auditor that needs the
//! error codes of a response) where allocation matters. Accessors cannot fail: strings were checked as UTF-8 when
//! the view was made (and are checked again, in safe code, when read), and a field the version
//! lacks reads as its default. A view borrows its input (`&Bytes`); `to_owned()` on any view
//! gives the owned struct, equal to the owned decode, its strings and bytes sharing the input.
//!
//! What a view costs: making it walks the body once to check it (generated straight-line
//! code per struct and version, as the owned decoder is), and reading field `n` of a struct
//! steps over the fields before it (fixed-width ones at a constant offset). A routing read
//! (view + the few fields a router needs) allocates nothing and runs at about the owned
//! decode's speed; `to_owned()` runs the owned decoder on the view's bytes (under no
//! limits: they were checked), so it costs the owned decode, on top of the check
//! (`benches/README.md`). An array's iterator hands out each element's view at its start and
//! steps over it only when asked for the next element (a lazy iterator over the last one
//! when asked past it; a checked one need not), so a router that iterates an element's
//! inner array does not pay for a step over it first. But an element with a
//! `bytes`/`records` field (a Produce or Fetch partition) is stepped over as it is handed
//! out: its records are then read without reading their length again or stepping again
//! over what lies before them (a Fetch partition's aborted transactions), and the step
//! marks where its variable-width fields end, so its other accessors start there.
//! `marked()` on any other view (a message's root, such an element) gives the same to a
//! reader of fields after a large array, for one step over the struct.
//!
//! To read **every field** of a struct, call `fields()` on its view: one pass over the struct
//! reads them all into a plain generated struct (`ProduceRequestFields` for
//! `ProduceRequestView`: values, `&str`, `&[u8]`, nested structs as their own fields, arrays
//! of structs as iterators of their elements' fields, each element read in one pass as the
//! iterator goes, arrays of numbers as `ViewArray`s, tagged fields read with the
//! section in the same pass, any tagged field by tag from `tagged_section`). It costs one
//! walk and, on a lazy view, one `Result` per struct, where the accessors take one per field.
//! A full walk of every field this way builds nothing; it takes 0.7× the owned decode's
//! instructions on Produce, 0.9× on Fetch, 1.15× on Metadata and 1.3× on DescribeQuorum,
//! against 2.0–2.3× through the accessors there (`benches/README.md`). `fields()` reads each
//! run of consecutive fixed-width fields with one bounds check (the runs the owned decoder
//! reads as one array, with the empty tagged section after a run that ends the struct), and
//! holds the tagged section as the slice it found; what is left above the owned decode is
//! that each level of nesting is stepped over once per level above it (a fields struct
//! holds the fields after an array, so the array is stepped over to reach them).
//!
//! To read every field of a **whole message once, in wire order**, call `walk(&mut
//! visitor)` on its view with a `ViewVisitor`: each field is handed over as it lies on the
//! wire (`visitor.i32("LeaderId", 7)`, `string`, `bytes`, a `ViewArray` for an array of
//! numbers, `begin_struct`/`end_struct` around nested structs and array elements,
//! `begin_array`/`end_array` around arrays, unknown tagged fields by tag), so each byte is
//! read once and a struct's later fields are read where its arrays' elements ended. Nothing
//! is allocated; the visitor's methods default to doing nothing and are inlined into the
//! generated walk. A lazy view's walk returns the owned decoder's error at its end (values
//! read past a fault may have been handed over before it). Where it pays against `fields()`:
//! messages with nested arrays (Metadata, DescribeQuorum); `benches/README.md`, branch
//! `walk11`.
//!
//! A **lazy view** (`LazyRequestFrame::new`, `LazyResponseFrame::new`, `LazyMessage::new`;
//! the same generated view types in mode `Lazy`) checks only the framing and the header
//! when made, so it skips the check's pass over the body. Each accessor then returns a
//! `Result`: it steps over the fields before its own (reading only their lengths and counts,
//! bounded by the frame), reads its value and checks that (a string's UTF-8 and length,
//! bytes' and arrays' lengths against the `DecodeLimits`); array iterators yield `Result`s
//! and stop at the first error. An iterator reports an element's bad bytes that its reader
//! did not read when it is asked for the next element, and the last element's when it is
//! asked past it (one more item, the error, then the end): a read that takes an array to
//! its end (a `for` loop, `collect`) has checked all of it and fails where the owned decoder
//! does, but a read that stops sooner (the first topic's name, or a loop that counts
//! `remaining()` elements and never asks past the last) leaves the rest of the element it
//! stopped in unchecked. A lazy iterator that took an array of structs to its end remembers
//! where it ends (one word in the frame's origin), so that the step over the struct that
//! holds it starts there instead of walking the elements again. When what it reads or
//! steps over is bad (cut short, a length
//! past the frame, invalid UTF-8), the accessor's error is the owned decoder's error for the
//! whole frame, kind, offset and field path alike (the owned decoder reads the frame again
//! to say it: errors are rare). What no accessor reads is never checked, so a lazy view may
//! read the good parts of a frame the owned decoder refuses (a limit or tagged-section
//! order broken elsewhere); `to_owned()` of a lazy view runs the owned decoder on the
//! struct's bytes (one pass), and so equals the owned decode and costs what it costs. It allocates nothing either, and its routing reads are the fastest way
//! here to a few fields (`benches/README.md` has the numbers).
//!
//! Choose: an owned message where you read most fields or keep them; a checked view where a
//! bad frame must be refused before anything is read from it; a lazy view on a hot path that
//! reads a few fields and forwards the bytes. `examples/route_by_topic.rs` routes Produce
//! requests by topic with a lazy view and no heap allocation.
//!
//! Not API: the `codegen` module, which the generated code calls, is hidden from these pages
//! and may change in any release.

#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see Cargo.toml) labels each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The generated code names this crate `::kafka_codec`, as code generated into any other crate
// does (see `kafka_codec_codegen::Generator::crate_path`); this alias makes that path work
// here too, so the crate's own build proves the generated paths.
extern crate self as kafka_codec;

mod api;
#[doc(hidden)]
pub mod codegen;
pub mod conn;
mod error_code;
#[cfg(feature = "json")]
mod error_response;
mod frame;
#[cfg(feature = "views")]
mod frame_view;
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

#[cfg(all(feature = "client", feature = "broker"))]
pub use api::{visit_messages, MessageCodec, MessageVisitor};
#[cfg(all(feature = "client", feature = "broker", feature = "arbitrary"))]
pub use api::{visit_random_messages, RandomMessageVisitor};
#[cfg(all(
    feature = "client",
    feature = "broker",
    feature = "arbitrary",
    feature = "views"
))]
pub use api::{visit_viewable_messages, ViewableMessageVisitor};
pub use api::{ApiKey, Listener, Request, Response};
pub use error_code::ErrorCode;
#[cfg(feature = "json")]
pub use error_response::{error_response, ErrorResponseError};
pub use frame::{
    put_size_prefix, split_frame, DecodeOptions, Framing, RequestFrame, ResponseFrame,
    TrailingBytes,
};
#[cfg(feature = "views")]
pub use frame_view::{view_message, LazyMessage};
#[cfg(all(feature = "views", feature = "broker"))]
pub use frame_view::{LazyRequestFrame, RequestFrameView};
#[cfg(all(feature = "views", feature = "client"))]
pub use frame_view::{LazyResponseFrame, ResponseFrameView};
#[cfg(feature = "json")]
pub use json::{JsonError, JsonErrorKind};
pub use message::{Message, MessageKind};
pub use versions::{ReleaseVersions, VersionRange};
#[cfg(feature = "views")]
pub use wire::view::{Checked, Lazy, StructView, ViewIter, ViewMode, Viewable};
/// What a view's `fields()` holds: arrays of numbers, and the struct's tagged section.
#[cfg(feature = "views")]
pub use wire::view::{TaggedSection, ViewArray, ViewArrayIter};
/// What a view's `walk` hands every field to, in wire order.
#[cfg(feature = "views")]
pub use wire::view::{ViewScalar, ViewVisitor};
pub use wire::{
    DecodeError, DecodeErrorKind, DecodeLimits, EncodeError, EncodeErrorKind, FieldPath,
    ParseUuidError, PathSegment, PrimitiveArray, RawTaggedField, TaggedFields, Utf8Bytes, Uuid,
};

// The README's example is compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// So is the semver policy's example of what a dependent writes.
#[cfg(doctest)]
#[doc = include_str!("../docs/semver.md")]
struct SemverDoctests;

/// The pinned Apache Kafka release: the newest whose schemas this crate merges. The versions it
/// no longer speaks come from Kafka 3.9.1 ([`ApiKey::releases`], [`ApiKey::removed_versions`]).
pub const KAFKA_VERSION: &str = "4.4.0";
