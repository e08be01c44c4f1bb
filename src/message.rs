//! The [`Message`] trait every generated top-level message implements, and the
//! [`StructCodec`] trait shared by messages and their nested structs.

use crate::error::{JsonError, JsonErrorKind};
use crate::versions::VersionRange;
use crate::wire::{
    DecodeError, DecodeErrorKind, DecodeLimits, Decoder, EncodeError, EncodeErrorKind,
};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use serde_json::Value;

/// Encoding, decoding and JSON for one struct of a schema at a given version.
///
/// Generated for every message and nested struct. The version is always the top-level
/// message's version (nested fields are versioned by it). These methods do not check that the
/// version is valid; [`Message`] does.
pub trait StructCodec: Sized {
    /// Reads the struct's fields (and its tagged section, in flexible versions).
    fn decode_fields(decoder: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError>;
    /// Writes the struct's fields.
    fn encode_fields(&self, buf: &mut impl BufMut, version: i16) -> Result<(), EncodeError>;
    /// Exactly the number of bytes [`StructCodec::encode_fields`] writes.
    fn fields_len(&self, version: i16) -> usize;
    /// The struct as a JSON object in Kafka's form.
    fn to_json_value(&self, version: i16) -> Result<Value, EncodeError>;
    /// The struct from a JSON object in Kafka's form.
    fn from_json_value(value: &Value, version: i16) -> Result<Self, JsonError>;
}

/// Whether the top-level struct is a request, response, header or data schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A request body.
    Request,
    /// A response body.
    Response,
    /// A request or response header.
    Header,
    /// A payload carried inside other messages or logs (control records, consumer protocol).
    Data,
}

/// A top-level Kafka message: a request or response body, a header or a data schema.
///
/// ```
/// use bytes::Bytes;
/// use kafka_codec::messages::ApiVersionsRequest;
/// use kafka_codec::Message;
///
/// let request = ApiVersionsRequest {
///     client_software_name: "a".into(),
///     client_software_version: "1".into(),
///     ..Default::default()
/// };
/// let bytes = request.encode_to_bytes(3).unwrap();
/// assert_eq!(&bytes[..], [0x02, b'a', 0x02, b'1', 0x00]);
/// assert_eq!(request.encoded_len(3).unwrap(), bytes.len());
/// assert_eq!(ApiVersionsRequest::decode_exact(bytes, 3).unwrap(), request);
/// ```
pub trait Message: StructCodec + Default + Clone + std::fmt::Debug + PartialEq {
    /// The schema name, e.g. `DescribeQuorumResponse`.
    const NAME: &'static str;
    /// What kind of schema this is.
    const KIND: MessageKind;
    /// The API key of a request or response.
    const API_KEY: Option<i16>;
    /// The versions this crate can read and write.
    const VALID_VERSIONS: VersionRange;
    /// The first flexible version (compact encodings, tagged fields), if any.
    const FIRST_FLEXIBLE_VERSION: Option<i16>;

    /// Whether `version` uses the flexible encoding.
    fn is_flexible(version: i16) -> bool {
        Self::FIRST_FLEXIBLE_VERSION.is_some_and(|first| version >= first)
    }

    /// Writes the message at `version`.
    ///
    /// Fails if the version is not valid, if a field the version lacks holds a non-default
    /// value and is not ignorable, or if a value breaks a wire limit. On failure, part of the
    /// message may already be in `buf`; use [`Message::encode_to_bytes`] for all-or-nothing.
    fn encode(&self, buf: &mut impl BufMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_fields(buf, version)
            .map_err(|e| e.in_message(Self::NAME, version))
    }

    /// The exact number of bytes [`Message::encode`] writes at `version`.
    fn encoded_len(&self, version: i16) -> Result<usize, EncodeError> {
        check_encode_version::<Self>(version)?;
        Ok(self.fields_len(version))
    }

    /// Encodes into a new buffer of exactly the right size.
    fn encode_to_bytes(&self, version: i16) -> Result<Bytes, EncodeError> {
        let mut buf = BytesMut::with_capacity(self.encoded_len(version)?);
        self.encode(&mut buf, version)?;
        Ok(buf.freeze())
    }

    /// Encodes into a new `Vec`.
    fn encode_to_vec(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        let mut buf = Vec::with_capacity(self.encoded_len(version)?);
        self.encode(&mut buf, version)?;
        Ok(buf)
    }

    /// Reads the message at `version` from the front of `buf` and advances `buf` past it.
    ///
    /// Lenient about what follows: bytes after the message stay in `buf` (some clients send
    /// trailing bytes after a body). Strings, bytes and records in the result are slices of
    /// `buf`'s storage, not copies.
    fn decode(buf: &mut Bytes, version: i16) -> Result<Self, DecodeError> {
        Self::decode_with_limits(buf, version, DecodeLimits::default())
    }

    /// [`Message::decode`] with explicit limits.
    fn decode_with_limits(
        buf: &mut Bytes,
        version: i16,
        limits: DecodeLimits,
    ) -> Result<Self, DecodeError> {
        let mut decoder = Decoder::with_limits(buf, limits);
        let message = Self::decode_from(&mut decoder, version)?;
        let consumed = decoder.position();
        buf.advance(consumed);
        Ok(message)
    }

    /// Reads the message from a decoder positioned at its first byte.
    fn decode_from(decoder: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        if !Self::VALID_VERSIONS.contains(version) {
            return Err(decoder
                .error(DecodeErrorKind::UnsupportedVersion {
                    version,
                    valid: Self::VALID_VERSIONS.to_string(),
                })
                .in_message(Self::NAME, version));
        }
        Self::decode_fields(decoder, version).map_err(|e| e.in_message(Self::NAME, version))
    }

    /// Reads the message and requires that it fills `bytes` exactly.
    fn decode_exact(bytes: Bytes, version: i16) -> Result<Self, DecodeError> {
        let mut decoder = Decoder::new(&bytes);
        let message = Self::decode_from(&mut decoder, version)?;
        if decoder.remaining() != 0 {
            return Err(decoder
                .error(DecodeErrorKind::TrailingBytes(decoder.remaining()))
                .in_message(Self::NAME, version));
        }
        Ok(message)
    }

    /// The message in Kafka's JSON form for `version` (see [`crate::json`]).
    fn to_json(&self, version: i16) -> Result<Value, EncodeError> {
        check_encode_version::<Self>(version)?;
        self.to_json_value(version)
            .map_err(|e| e.in_message(Self::NAME, version))
    }

    /// Reads Kafka's JSON form for `version`.
    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError> {
        if !Self::VALID_VERSIONS.contains(version) {
            return Err(JsonError::new(JsonErrorKind::UnsupportedVersion {
                version,
                valid: Self::VALID_VERSIONS.to_string(),
            })
            .in_message(Self::NAME, version));
        }
        Self::from_json_value(value, version).map_err(|e| e.in_message(Self::NAME, version))
    }
}

fn check_encode_version<M: Message>(version: i16) -> Result<(), EncodeError> {
    if M::VALID_VERSIONS.contains(version) {
        Ok(())
    } else {
        Err(EncodeError::new(EncodeErrorKind::UnsupportedVersion {
            version,
            valid: M::VALID_VERSIONS.to_string(),
        })
        .in_message(M::NAME, version))
    }
}
