//! Typed errors for reading and writing bytes, and the field path they carry.
//!
//! Every error says what went wrong ([`DecodeErrorKind`], [`EncodeErrorKind`]), in which
//! message, at which version, along which field path and (for bytes) at which offset. The
//! details live behind a `Box` so that `Result<T, _>` stays one pointer wide on the hot path.
//! The readers and writers here build errors innermost first; the code that calls them (the
//! generated messages) adds field names, indexes and the message on the way out.

use std::fmt;

/// One step of a field path: a field (by its schema name) or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    /// A field, by its schema name (`Topics`, `ErrorMessage`).
    Field(&'static str),
    /// An element of an array.
    Index(usize),
    /// A tagged field, by tag number.
    Tag(u32),
}

/// A field path, outermost first, such as `Topics[0].Partitions[2].ErrorMessage`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(Vec<PathSegment>);

impl FieldPath {
    /// The segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = &PathSegment> {
        self.0.iter().rev()
    }

    /// Whether the path is empty (the error is about the message as a whole).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    // Errors are built innermost first, so segments are pushed as the error travels outwards
    // and stored in reverse.
    pub(crate) fn push_outer(&mut self, segment: PathSegment) {
        self.0.push(segment);
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for segment in self.segments() {
            match segment {
                PathSegment::Field(name) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathSegment::Index(i) => write!(f, "[{i}]")?,
                PathSegment::Tag(tag) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    write!(f, "<tag {tag}>")?
                }
            }
            first = false;
        }
        Ok(())
    }
}

/// What went wrong while decoding bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended before the value did.
    #[error("input ends early: {needed} more bytes needed, {remaining} remain")]
    UnexpectedEof {
        /// Bytes the value needs.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A length or count is larger than what is left of the input.
    #[error("declared length {declared} exceeds the {remaining} bytes that remain")]
    LengthExceedsInput {
        /// The declared length or element count.
        declared: u64,
        /// Bytes that were left.
        remaining: usize,
    },
    /// An array count that fits the input at one byte per element, but not at the fewest
    /// bytes its elements take.
    #[error(
        "array of {count} elements needs at least {min_element_size} bytes each, but {remaining} bytes remain"
    )]
    ArrayExceedsInput {
        /// The declared element count.
        count: u64,
        /// The fewest wire bytes of one element at this version.
        min_element_size: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A null marker where the field is not nullable at this version.
    #[error("null is not allowed here at this version")]
    UnexpectedNull,
    /// A negative length other than the null marker.
    #[error("negative length {0}")]
    NegativeLength(i64),
    /// A string longer than Kafka's limit of 32767 bytes.
    #[error("string of {0} bytes exceeds Kafka's limit of 32767")]
    StringTooLong(usize),
    /// A variable-length integer with too many bytes.
    #[error("variable-length integer longer than {max_bytes} bytes")]
    VarintTooLong {
        /// The most bytes the integer may have.
        max_bytes: usize,
    },
    /// String bytes that are not UTF-8.
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    /// A tag that is not greater than the one before it.
    #[error("tagged field {tag} follows tag {previous}: tags must be strictly ascending")]
    TagOutOfOrder {
        /// The offending tag.
        tag: u32,
        /// The tag before it.
        previous: u32,
    },
    /// A tag given twice.
    #[error("tagged field {0} appears twice")]
    DuplicateTag(u32),
    /// A known tagged field whose value did not fill exactly its declared size.
    #[error("tagged field {tag} declares {declared} bytes but its value used {used}")]
    TaggedFieldSize {
        /// The tag.
        tag: u32,
        /// The size on the wire.
        declared: usize,
        /// The bytes the value took.
        used: usize,
    },
    /// A known tag at a version where that field is not tagged.
    #[error("tag {0} is not valid at this version")]
    TagNotValidForVersion(u32),
    /// An API key this crate does not know.
    #[error("unknown API key {0}")]
    UnknownApiKey(i16),
    /// An API this crate knows but this build leaves out: its cargo feature is off.
    #[error("API {api} is not compiled in: enable kafka-codec's `{feature}` feature")]
    ApiNotCompiled {
        /// The API's name (`DescribeQuorum`).
        api: &'static str,
        /// The cargo feature that compiles it (`describe-quorum`).
        feature: &'static str,
    },
    /// A version outside the schema's valid versions.
    #[error("version {version} is not supported (valid: {valid})")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The valid range, as text.
        valid: String,
    },
    /// Bytes left after the message, when decoding strictly.
    #[error("{0} bytes left over after the message")]
    TrailingBytes(usize),
    /// A value beyond a configured [`DecodeLimits`](super::DecodeLimits) bound.
    #[error("{what} {value} exceeds the limit of {limit}")]
    LimitExceeded {
        /// Which limit.
        what: &'static str,
        /// The value found.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A frame size prefix that is negative.
    #[error("invalid frame size {0}")]
    InvalidFrameSize(i32),
}

/// Where an error happened: the field path and, once known, the message and version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) path: FieldPath,
    pub(crate) message: Option<&'static str>,
    pub(crate) version: Option<i16>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(message) = self.message {
            write!(f, " in {message}")?;
            if let Some(version) = self.version {
                write!(f, " v{version}")?;
            }
        }
        if !self.path.is_empty() {
            write!(f, " at {}", self.path)?;
        }
        Ok(())
    }
}

/// The accessors and path-building methods every error type with a [`Location`] shares
/// (these two, and the crate's `JsonError`). Errors are built innermost first: each enclosing
/// field, index or message adds itself on the way out.
macro_rules! located_error {
    ($error:ident, $kind:ident) => {
        impl $error {
            /// What went wrong.
            pub fn kind(&self) -> &$kind {
                &self.0.kind
            }

            /// The field path (schema field names), outermost first.
            pub fn path(&self) -> &$crate::wire::FieldPath {
                &self.0.location.path
            }

            /// The message (schema name), when known.
            pub fn message(&self) -> Option<&'static str> {
                self.0.location.message
            }

            /// The message version, when known.
            pub fn version(&self) -> Option<i16> {
                self.0.location.version
            }

            /// Adds an enclosing field to the path.
            #[doc(hidden)]
            #[cold]
            pub fn at(mut self, field: &'static str) -> Self {
                self.0
                    .location
                    .path
                    .push_outer($crate::wire::PathSegment::Field(field));
                self
            }

            /// Adds an enclosing array index to the path.
            #[doc(hidden)]
            #[cold]
            pub fn at_index(mut self, index: usize) -> Self {
                self.0
                    .location
                    .path
                    .push_outer($crate::wire::PathSegment::Index(index));
                self
            }

            /// Adds an enclosing tag to the path.
            #[doc(hidden)]
            #[cold]
            pub fn at_tag(mut self, tag: u32) -> Self {
                self.0
                    .location
                    .path
                    .push_outer($crate::wire::PathSegment::Tag(tag));
                self
            }

            /// Records the message and version, unless an inner message already did.
            #[doc(hidden)]
            #[cold]
            pub fn in_message(mut self, message: &'static str, version: i16) -> Self {
                if self.0.location.message.is_none() {
                    self.0.location.message = Some(message);
                    self.0.location.version = Some(version);
                }
                self
            }
        }

        impl std::fmt::Debug for $error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({self})", stringify!($error))
            }
        }

        impl std::error::Error for $error {}
    };
}
#[cfg(feature = "json")]
pub(crate) use located_error;

#[derive(Clone, PartialEq, Eq)]
struct DecodeErrorDetail {
    kind: DecodeErrorKind,
    offset: usize,
    location: Location,
}

/// Decoding failed: the input is not a valid encoding of the message at that version.
///
/// ```
/// use kafka_codec::bytes::Bytes;
/// use kafka_codec::{messages::DescribeQuorumRequest, DecodeErrorKind, Message};
/// // A topics array that claims 0x7fffffff elements in a 5-byte body.
/// let mut body = Bytes::from_static(&[0x7f, 0xff, 0xff, 0xff, 0x00]);
/// let err = DescribeQuorumRequest::decode(&mut body, 0).unwrap_err();
/// assert!(matches!(err.kind(), DecodeErrorKind::LengthExceedsInput { .. }));
/// assert_eq!(err.path().to_string(), "Topics");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError(Box<DecodeErrorDetail>);

located_error!(DecodeError, DecodeErrorKind);

impl DecodeError {
    /// An error of `kind` at byte `offset`.
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError(Box::new(DecodeErrorDetail {
            kind,
            offset,
            location: Location::default(),
        }))
    }

    /// Byte offset of the problem, from the start of the input given to the decoder.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// Shifts the offset, for an input that was a slice of a larger frame.
    #[doc(hidden)]
    pub fn shifted(mut self, by: usize) -> Self {
        self.0.offset += by;
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{} (byte offset {})",
            self.0.kind, self.0.location, self.0.offset
        )
    }
}

/// What went wrong while encoding a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A field that does not exist at this version holds a non-default value and is not
    /// ignorable, so writing the version would lose it.
    #[error("field is set but does not exist at this version and is not ignorable")]
    FieldNotInVersion,
    /// `None` in a field that is not nullable at this version.
    #[error("null is not allowed here at this version")]
    NullNotAllowed,
    /// A string longer than Kafka's limit of 32767 bytes.
    #[error("string of {0} bytes exceeds Kafka's limit of 32767")]
    StringTooLong(usize),
    /// A byte string or array too long for its length prefix.
    #[error("length {0} does not fit the length prefix")]
    LengthTooLarge(usize),
    /// Unknown tagged fields in a version without tagged fields.
    #[error("unknown tagged fields cannot be written at a version without tagged fields")]
    TaggedFieldsNotFlexible,
    /// Unknown tagged fields that are not strictly ascending, or that reuse a known tag.
    #[error("unknown tagged field {0} repeats or precedes another tag, or reuses a known tag")]
    BadUnknownTag(u32),
    /// A version outside the schema's valid versions.
    #[error("version {version} is not supported (valid: {valid})")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The valid range, as text.
        valid: String,
    },
    /// A request header that names another API than the body it carries.
    #[error(
        "the header names API key {header}, but the body is a {body_name} request (key {body})"
    )]
    ApiKeyMismatch {
        /// The key in the header.
        header: i16,
        /// The body's key.
        body: i16,
        /// The body's API name.
        body_name: &'static str,
    },
    /// A `records` field that a JSON hook cannot show (`kafka_codec::json::RecordsJson`).
    #[error("records field cannot be shown: {0}")]
    RecordsNotShown(String),
    /// A float that JSON cannot carry (NaN or infinite).
    #[error("{0} cannot be written as JSON")]
    NonFiniteFloat(f64),
}

#[derive(Clone, PartialEq)]
struct EncodeErrorDetail {
    kind: EncodeErrorKind,
    location: Location,
}

/// Encoding failed: the message cannot be written at that version.
///
/// ```
/// use kafka_codec::messages::describe_quorum_response::{DescribeQuorumResponse, Node};
/// use kafka_codec::{EncodeErrorKind, Message};
/// // `Nodes` exists from version 2 and is not ignorable.
/// let mut response = DescribeQuorumResponse::default();
/// response.nodes.push(Node::default().with_node_id(1));
/// let err = response.encode_to_vec(1).unwrap_err();
/// assert_eq!(err.kind(), &EncodeErrorKind::FieldNotInVersion);
/// assert_eq!(err.to_string(), "field is set but does not exist at this version and is not ignorable in DescribeQuorumResponse v1 at Nodes");
/// ```
#[derive(Clone, PartialEq)]
pub struct EncodeError(Box<EncodeErrorDetail>);

located_error!(EncodeError, EncodeErrorKind);

impl EncodeError {
    /// An error of `kind`.
    pub fn new(kind: EncodeErrorKind) -> Self {
        EncodeError(Box::new(EncodeErrorDetail {
            kind,
            location: Location::default(),
        }))
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0.kind, self.0.location)
    }
}
