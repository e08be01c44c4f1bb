//! Whole frames: request header + body, response header + body, and the 4-byte size prefix.
//!
//! Sans-IO: these functions take and return buffers; reading from a socket is the caller's
//! business. A typical server loop feeds received bytes into a `BytesMut` and calls
//! [`split_frame`] until it returns `None`.

//!
//! Which halves exist follows the cargo features: a client (`client`) encodes request frames
//! and decodes response frames, a broker (`broker`) the reverse; `json` adds the JSON form.

use crate::api::{ApiKey, Request, Response};
#[cfg(feature = "json")]
use crate::error::{JsonError, JsonErrorKind};
#[cfg(feature = "json")]
use crate::json::{JsonOptions, JsonSink, Part, ValueSink};
use crate::messages::{RequestHeader, ResponseHeader};
#[cfg(any(feature = "client", feature = "broker"))]
use crate::wire::Decoder;
#[cfg(any(feature = "client", feature = "broker"))]
use crate::wire::Segments;
use crate::wire::Utf8Bytes;
use crate::wire::{DecodeError, DecodeErrorKind, DecodeLimits, EncodeError, EncodeErrorKind};
#[cfg(feature = "json")]
use crate::JsonFields;

/// A frame's JSON value that must be there.
#[cfg(feature = "json")]
fn required<'a>(part: Option<Part<'a>>, key: &'static str) -> Result<Part<'a>, JsonError> {
    part.ok_or_else(|| JsonError::new(JsonErrorKind::MissingField).at(key))
}

/// The keys of a request frame's JSON object.
#[cfg(feature = "json")]
const REQUEST_KEYS: [&str; 2] = ["header", "body"];
/// The keys of a response frame's JSON object.
#[cfg(feature = "json")]
const RESPONSE_KEYS: [&str; 4] = ["apiKey", "apiVersion", "header", "body"];
#[cfg(any(feature = "client", feature = "broker", feature = "json"))]
use crate::Message;
use bytes::{Buf, BufMut, Bytes, BytesMut};
#[cfg(feature = "json")]
use serde_json::Value;

/// What to do with bytes left after a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingBytes {
    /// Refuse the frame with [`DecodeErrorKind::TrailingBytes`] (the default: a frame that does
    /// not fill its size exactly is malformed).
    #[default]
    Reject,
    /// Ignore them, as Kafka's brokers do (some librdkafka versions send a few).
    Allow,
}

/// How frames are decoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Size and count bounds.
    pub limits: DecodeLimits,
    /// Strict or lenient about what follows the body.
    pub trailing_bytes: TrailingBytes,
}

/// The most [`split_frame`] reserves ahead of bytes that have arrived.
const READ_AHEAD: usize = 64 * 1024;

/// Takes one size-prefixed frame off the front of `buf`, without its prefix.
///
/// Returns `Ok(None)` until the whole frame has arrived. A negative size, or one above
/// [`DecodeLimits::max_frame_size`], is an error: the connection should be closed.
///
/// ```
/// use kafka_codec::bytes::BytesMut;
/// use kafka_codec::{frame::split_frame, DecodeLimits};
/// let mut buf = BytesMut::from(&[0, 0, 0, 2, 0xaa][..]);
/// assert!(split_frame(&mut buf, &DecodeLimits::default()).unwrap().is_none());
/// buf.extend_from_slice(&[0xbb, 0xcc]);
/// let frame = split_frame(&mut buf, &DecodeLimits::default()).unwrap().unwrap();
/// assert_eq!(&frame[..], [0xaa, 0xbb]);
/// assert_eq!(&buf[..], [0xcc]);
/// ```
pub fn split_frame(
    buf: &mut BytesMut,
    limits: &DecodeLimits,
) -> Result<Option<Bytes>, DecodeError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let Ok(size) = usize::try_from(size) else {
        return Err(DecodeError::new(DecodeErrorKind::InvalidFrameSize(size), 0));
    };
    check_frame_size(size, limits)?;
    if buf.len() < 4 + size {
        // Make room for the next read, but never more than READ_AHEAD at a time: the size is
        // only a claim, and four bytes from a peer must not reserve 100 MiB. The buffer grows
        // geometrically as the bytes really arrive.
        buf.reserve((4 + size - buf.len()).min(READ_AHEAD));
        return Ok(None);
    }
    buf.advance(4);
    Ok(Some(buf.split_to(size).freeze()))
}

/// Writes the 4-byte size prefix for a frame of `len` bytes.
pub fn put_size_prefix(buf: &mut impl BufMut, len: usize) -> Result<(), EncodeError> {
    let size =
        i32::try_from(len).map_err(|_| EncodeError::new(EncodeErrorKind::LengthTooLarge(len)))?;
    buf.put_i32(size);
    Ok(())
}

/// Refuses a frame larger than [`DecodeLimits::max_frame_size`], whether its size comes
/// from a prefix or from the buffer handed to a decoder.
pub(crate) fn check_frame_size(size: usize, limits: &DecodeLimits) -> Result<(), DecodeError> {
    if size > limits.max_frame_size {
        return Err(DecodeError::new(
            DecodeErrorKind::LimitExceeded {
                what: "frame size",
                value: size as u64,
                limit: limits.max_frame_size as u64,
            },
            0,
        ));
    }
    Ok(())
}

#[cfg(any(feature = "client", feature = "broker"))]
pub(crate) fn finish(decoder: &Decoder<'_>, options: &DecodeOptions) -> Result<(), DecodeError> {
    if options.trailing_bytes == TrailingBytes::Reject && decoder.remaining() != 0 {
        return Err(decoder.error(DecodeErrorKind::TrailingBytes(decoder.remaining())));
    }
    Ok(())
}

/// Takes one size-prefixed frame off the front of `buf`, which must hold all of it; unlike
/// [`split_frame`], a frame that has not fully arrived is an error. `buf` is advanced past
/// the frame only on success.
#[cfg(any(feature = "client", feature = "broker"))]
fn take_size_prefixed(buf: &mut Bytes, limits: &DecodeLimits) -> Result<Bytes, DecodeError> {
    let eof = |needed: usize, remaining: usize, offset: usize| {
        DecodeError::new(DecodeErrorKind::UnexpectedEof { needed, remaining }, offset)
    };
    if buf.len() < 4 {
        return Err(eof(4 - buf.len(), buf.len(), 0));
    }
    let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let Ok(size) = usize::try_from(size) else {
        return Err(DecodeError::new(DecodeErrorKind::InvalidFrameSize(size), 0));
    };
    check_frame_size(size, limits)?;
    let available = buf.len() - 4;
    if available < size {
        return Err(eof(size - available, available, buf.len()));
    }
    let frame = buf.slice(4..4 + size);
    buf.advance(4 + size);
    Ok(frame)
}

/// Encodes into a buffer of exactly `len` bytes.
#[cfg(any(feature = "client", feature = "broker"))]
fn encode_to_bytes(
    len: usize,
    encode: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::with_capacity(len);
    encode(&mut buf)?;
    Ok(buf.freeze())
}

/// The size prefix of a frame of `len` bytes, then the frame, as segments.
#[cfg(any(feature = "client", feature = "broker"))]
fn size_prefixed_segments(
    len: usize,
    encode: impl FnOnce(&mut Segments) -> Result<(), EncodeError>,
) -> Result<Segments, EncodeError> {
    let mut out = Segments::for_encoded_len(4 + len);
    put_size_prefix(&mut out, len)?;
    encode(&mut out)?;
    Ok(out)
}

/// A request as it travels: header, then the body the header's key and version select.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFrame {
    /// The header (its version follows from the API key and version it names).
    pub header: RequestHeader,
    /// The body.
    pub body: Request,
}

// What reaches a body's codec is `#[inline]` (here, in `ResponseFrame` and in the generated
// dispatch): the library then generates no message codec of its own, and a dependent
// generates those it calls.
impl RequestFrame {
    /// A frame for `body` at `version`: the header's API key and version come from the
    /// body and `version`, so they cannot disagree. The client id is the schema's default,
    /// empty; see [`RequestFrame::with_client_id`].
    ///
    /// ```
    /// use kafka_codec::messages::MetadataRequest;
    /// use kafka_codec::{ApiKey, RequestFrame};
    ///
    /// let frame = RequestFrame::new(MetadataRequest::default(), 12, 7).with_client_id("admin");
    /// assert_eq!(frame.api_key(), Some(ApiKey::Metadata));
    /// assert_eq!(frame.header.request_api_version, 12);
    /// let bytes = frame.encode_to_bytes().unwrap();
    /// assert_eq!(RequestFrame::decode(bytes).unwrap(), frame);
    /// ```
    pub fn new(body: impl Into<Request>, version: i16, correlation_id: i32) -> Self {
        let body = body.into();
        RequestFrame {
            header: RequestHeader {
                request_api_key: body.api_key().key(),
                request_api_version: version,
                correlation_id,
                ..RequestHeader::default()
            },
            body,
        }
    }

    /// Sets the header's client id (Kafka's clients always send one).
    pub fn with_client_id(mut self, client_id: impl Into<Utf8Bytes>) -> Self {
        self.header.client_id = Some(client_id.into());
        self
    }

    /// The API the header names, if this crate knows it.
    pub fn api_key(&self) -> Option<ApiKey> {
        ApiKey::from_key(self.header.request_api_key)
    }

    /// The body's version, from the header.
    pub fn api_version(&self) -> i16 {
        self.header.request_api_version
    }

    /// Reads the API key and version from the first four bytes of a request frame, checking
    /// that this crate can decode them. Useful to answer an unsupported ApiVersions request
    /// the way Kafka does.
    pub fn peek_api(frame: &[u8]) -> Result<(ApiKey, i16), DecodeError> {
        if frame.len() < 4 {
            return Err(DecodeError::new(
                DecodeErrorKind::UnexpectedEof {
                    needed: 4,
                    remaining: frame.len(),
                },
                0,
            ));
        }
        let key = i16::from_be_bytes([frame[0], frame[1]]);
        let version = i16::from_be_bytes([frame[2], frame[3]]);
        let api = ApiKey::from_key(key)
            .ok_or_else(|| DecodeError::new(DecodeErrorKind::UnknownApiKey(key), 0))?;
        if !api.valid_versions().contains(version) {
            return Err(DecodeError::new(
                DecodeErrorKind::UnsupportedVersion {
                    version,
                    valid: api.valid_versions().to_string(),
                },
                2,
            )
            .in_message(api.name(), version));
        }
        Ok((api, version))
    }

    /// Decodes a whole request frame (without its size prefix), strictly.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode(frame: Bytes) -> Result<Self, DecodeError> {
        Self::decode_with(frame, &DecodeOptions::default())
    }

    /// Decodes a whole request frame with explicit options.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode_with(frame: Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        check_frame_size(frame.len(), &options.limits)?;
        let (api, version) = Self::peek_api(&frame)?;
        let mut decoder = Decoder::with_limits(&frame, options.limits);
        let header = RequestHeader::decode_from(&mut decoder, api.request_header_version(version))?;
        let body = Request::decode_from(api, &mut decoder, version)?;
        finish(&decoder, options)?;
        Ok(RequestFrame { header, body })
    }

    /// Reads one frame that starts with its 4-byte size, as
    /// [`RequestFrame::encode_size_prefixed`] writes it, from the front of `buf`, and
    /// advances `buf` past it (bytes after the frame stay in `buf`). The whole frame must be
    /// there: to wait for bytes still arriving, use [`split_frame`]. Error offsets count
    /// from the start of `buf`, size prefix included.
    ///
    /// ```
    /// use kafka_codec::bytes::BytesMut;
    /// use kafka_codec::messages::ApiVersionsRequest;
    /// use kafka_codec::RequestFrame;
    ///
    /// let frame = RequestFrame::new(ApiVersionsRequest::default(), 3, 1);
    /// let mut buf = BytesMut::new();
    /// frame.encode_size_prefixed(&mut buf).unwrap();
    /// let mut bytes = buf.freeze();
    /// assert_eq!(RequestFrame::decode_size_prefixed(&mut bytes).unwrap(), frame);
    /// assert!(bytes.is_empty());
    /// ```
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode_size_prefixed(buf: &mut Bytes) -> Result<Self, DecodeError> {
        Self::decode_size_prefixed_with(buf, &DecodeOptions::default())
    }

    /// [`RequestFrame::decode_size_prefixed`] with explicit options; `trailing_bytes`
    /// applies to bytes after the body inside the frame.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode_size_prefixed_with(
        buf: &mut Bytes,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let mut rest = buf.clone();
        let frame = take_size_prefixed(&mut rest, &options.limits)?;
        let decoded = Self::decode_with(frame, options).map_err(|e| e.shifted(4))?;
        *buf = rest;
        Ok(decoded)
    }

    /// The header and body versions; refuses a header that names another API than the body.
    #[cfg(any(feature = "client", feature = "json"))]
    fn header_version(&self) -> Result<(i16, i16), EncodeError> {
        let api = self.body.api_key();
        if self.header.request_api_key != api.key() {
            return Err(EncodeError::new(EncodeErrorKind::ApiKeyMismatch {
                header: self.header.request_api_key,
                body: api.key(),
                body_name: api.name(),
            }));
        }
        let version = self.api_version();
        Ok((api.request_header_version(version), version))
    }

    /// Exactly the bytes [`RequestFrame::encode`] writes (no size prefix).
    #[cfg(feature = "client")]
    #[inline]
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        let (header_version, version) = self.header_version()?;
        Ok(self.header.encoded_len(header_version)? + self.body.encoded_len(version)?)
    }

    /// Writes header and body (no size prefix). Refuses a header whose API key is not the
    /// body's ([`EncodeErrorKind::ApiKeyMismatch`]); [`RequestFrame::new`] cannot build one.
    #[cfg(feature = "client")]
    #[inline]
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        let (header_version, version) = self.header_version()?;
        self.header.encode(buf, header_version)?;
        self.body.encode(buf, version)
    }

    /// Encodes into a new buffer (no size prefix).
    #[cfg(feature = "client")]
    #[inline]
    pub fn encode_to_bytes(&self) -> Result<Bytes, EncodeError> {
        encode_to_bytes(self.encoded_len()?, |buf| self.encode(buf))
    }

    /// Writes the 4-byte size prefix, then the frame.
    #[cfg(feature = "client")]
    #[inline]
    pub fn encode_size_prefixed(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        put_size_prefix(buf, self.encoded_len()?)?;
        self.encode(buf)
    }

    /// The size prefix and the frame as [`Segments`], ready for a vectored write: large
    /// `bytes`/`records` values (a Produce request's records) are the body's own `Bytes`,
    /// not copies (see [`Message::encode_segments`]).
    #[cfg(feature = "client")]
    #[inline]
    pub fn encode_size_prefixed_segments(&self) -> Result<Segments, EncodeError> {
        size_prefixed_segments(self.encoded_len()?, |out| self.encode(out))
    }

    /// `{"header": …, "body": …}` in Kafka's JSON form.
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json(&self) -> Result<Value, EncodeError> {
        self.to_json_with(&JsonOptions::default())
    }

    /// [`RequestFrame::to_json`] with `options` (a hook for `records` fields).
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json_with(&self, options: &JsonOptions<'_>) -> Result<Value, EncodeError> {
        ValueSink::collect(|sink| self.write_json(options, sink))
    }

    /// Empties every unknown tagged field of the header and the body: the frame becomes what
    /// its JSON form reads back as, without building that JSON.
    #[cfg(feature = "json")]
    #[inline]
    pub fn clear_unknown_tagged_fields(&mut self) {
        self.header.clear_unknown_tagged_fields();
        self.body.clear_unknown_tagged_fields();
    }

    /// [`RequestFrame::to_json_with`] written token by token to `out`; with a
    /// [`crate::json::JsonWriter`] the text streams without a tree. On an error `out` holds a
    /// partial value.
    #[cfg(feature = "json")]
    #[inline]
    pub fn write_json(
        &self,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError> {
        let (header_version, version) = self.header_version()?;
        out.begin_object();
        out.key("header");
        self.header.write_json_with(header_version, options, out)?;
        out.key("body");
        self.body.write_json_with(version, options, out)?;
        out.end_object();
        Ok(())
    }

    /// Reads `{"header": …, "body": …}`; the header's API key and version select the body.
    /// Strict: a key the form does not have is an error (see [`crate::json`]).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json(value: &Value) -> Result<Self, JsonError> {
        Self::from_json_with(value, &JsonOptions::default())
    }

    /// [`RequestFrame::from_json`] with `options` (lenient reading, a hook for `records`).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_with(value: &Value, options: &JsonOptions<'_>) -> Result<Self, JsonError> {
        crate::json::frame_parts_of_value(value, REQUEST_KEYS, options)
            .and_then(|parts| Self::from_json_parts(parts, options))
            .map_err(JsonError::place_duplicate)
    }

    /// [`RequestFrame::from_json_with`] from JSON text, read token by token: no
    /// [`serde_json::Value`] tree of the body is built. The header may come before or after
    /// the body: the top-level object is first split into the text of its values (borrowed
    /// from `text`, nothing copied), then the header is read, then the body at its version.
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_slice(text: &[u8], options: &JsonOptions<'_>) -> Result<Self, JsonError> {
        crate::json::frame_parts_of_text(text, REQUEST_KEYS, options)
            .and_then(|parts| Self::from_json_parts(parts, options))
            .map_err(JsonError::place_duplicate)
    }

    #[cfg(feature = "json")]
    #[inline]
    fn from_json_parts(
        [header, body]: [Option<Part<'_>>; 2],
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        let header = required(header, "header")?;
        // The header version depends on the API, which the header names: read the header as
        // a tree first (it is small), take the two fields, then read it at its version.
        let header_json = header
            .read(|source| crate::json::value_tree_of(source, options))
            .map_err(|e| e.at("header"))?;
        let key_and_version = |name: &'static str| {
            crate::json::expect_object(&header_json)
                .and_then(|h| {
                    h.get(name)
                        .ok_or_else(|| JsonError::new(JsonErrorKind::MissingField))
                })
                .and_then(crate::json::read_i16)
                .map_err(|e| e.at(name).at("header"))
        };
        let key = key_and_version("requestApiKey")?;
        let version = key_and_version("requestApiVersion")?;
        let api = ApiKey::from_key(key)
            .ok_or_else(|| JsonError::new(JsonErrorKind::UnknownApiKey(key)))?;
        let header_version = api.request_header_version(version);
        let header = crate::json::from_value(&header_json, |source| {
            RequestHeader::read_json_message(source, header_version, options)
        })
        .map_err(|e| e.at("header"))?;
        drop(header_json);
        let body = required(body, "body")?
            .read(|source| Request::read_json(api, source, version, options))
            .map_err(|e| e.at("body"))?;
        Ok(RequestFrame { header, body })
    }
}

/// A response as it travels: header, then body. The API key and version are not on the
/// wire; they come from the request it answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFrame {
    /// The version of the body (and of the request it answers).
    pub api_version: i16,
    /// The header.
    pub header: ResponseHeader,
    /// The body; it knows its API.
    pub body: Response,
}

impl ResponseFrame {
    /// A frame for `body` at `version`, answering the request with `correlation_id`.
    ///
    /// ```
    /// use kafka_codec::messages::MetadataResponse;
    /// use kafka_codec::{ApiKey, ResponseFrame};
    ///
    /// let frame = ResponseFrame::new(MetadataResponse::default(), 12, 7);
    /// let bytes = frame.encode_to_bytes().unwrap();
    /// assert_eq!(ResponseFrame::decode(bytes, ApiKey::Metadata, 12).unwrap(), frame);
    /// ```
    pub fn new(body: impl Into<Response>, version: i16, correlation_id: i32) -> Self {
        ResponseFrame {
            api_version: version,
            header: ResponseHeader {
                correlation_id,
                ..ResponseHeader::default()
            },
            body: body.into(),
        }
    }

    /// Decodes a whole response frame (without size prefix) of `api_key` at `version`.
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode(frame: Bytes, api_key: ApiKey, version: i16) -> Result<Self, DecodeError> {
        Self::decode_with(frame, api_key, version, &DecodeOptions::default())
    }

    /// [`ResponseFrame::decode`] with explicit options.
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode_with(
        frame: Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        check_frame_size(frame.len(), &options.limits)?;
        let mut decoder = Decoder::with_limits(&frame, options.limits);
        let header =
            ResponseHeader::decode_from(&mut decoder, api_key.response_header_version(version))?;
        let body = Response::decode_from(api_key, &mut decoder, version)?;
        finish(&decoder, options)?;
        Ok(ResponseFrame {
            api_version: version,
            header,
            body,
        })
    }

    /// Reads one frame that starts with its 4-byte size from the front of `buf`, and advances
    /// `buf` past it; as [`RequestFrame::decode_size_prefixed`].
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode_size_prefixed(
        buf: &mut Bytes,
        api_key: ApiKey,
        version: i16,
    ) -> Result<Self, DecodeError> {
        Self::decode_size_prefixed_with(buf, api_key, version, &DecodeOptions::default())
    }

    /// [`ResponseFrame::decode_size_prefixed`] with explicit options.
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode_size_prefixed_with(
        buf: &mut Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let mut rest = buf.clone();
        let frame = take_size_prefixed(&mut rest, &options.limits)?;
        let decoded =
            Self::decode_with(frame, api_key, version, options).map_err(|e| e.shifted(4))?;
        *buf = rest;
        Ok(decoded)
    }

    /// The API of the body.
    pub fn api_key(&self) -> ApiKey {
        self.body.api_key()
    }

    #[cfg(any(feature = "broker", feature = "json"))]
    fn header_version(&self) -> i16 {
        self.api_key().response_header_version(self.api_version)
    }

    /// Exactly the bytes [`ResponseFrame::encode`] writes.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        Ok(self.header.encoded_len(self.header_version())?
            + self.body.encoded_len(self.api_version)?)
    }

    /// Writes header and body (no size prefix).
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        self.header.encode(buf, self.header_version())?;
        self.body.encode(buf, self.api_version)
    }

    /// Encodes into a new buffer (no size prefix).
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encode_to_bytes(&self) -> Result<Bytes, EncodeError> {
        encode_to_bytes(self.encoded_len()?, |buf| self.encode(buf))
    }

    /// Writes the 4-byte size prefix, then the frame.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encode_size_prefixed(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        put_size_prefix(buf, self.encoded_len()?)?;
        self.encode(buf)
    }

    /// The size prefix and the frame as [`Segments`], ready for a vectored write: large
    /// `bytes`/`records` values (a Fetch response's records) are the body's own `Bytes`, not
    /// copies (see [`Message::encode_segments`]).
    ///
    /// ```
    /// use kafka_codec::bytes::Bytes;
    /// use kafka_codec::messages::{fetch_response, FetchResponse};
    /// use kafka_codec::ResponseFrame;
    ///
    /// let records = Bytes::from(vec![0u8; 100_000]); // record batches the server holds
    /// let partition = fetch_response::PartitionData { records: Some(records.clone()), ..Default::default() };
    /// let topic = fetch_response::FetchableTopicResponse { partitions: vec![partition], ..Default::default() };
    /// let frame = ResponseFrame::new(FetchResponse { responses: vec![topic], ..Default::default() }, 17, 5);
    ///
    /// let segments = frame.encode_size_prefixed_segments().unwrap();
    /// // The prefix, header and fields before the records; the records; what follows them.
    /// assert_eq!(segments.chunks().count(), 3);
    /// assert_eq!(segments.chunks().nth(1).unwrap().as_ptr(), records.as_ptr());
    /// let mut plain = Vec::new();
    /// frame.encode_size_prefixed(&mut plain).unwrap();
    /// assert_eq!(segments.into_bytes(), plain);
    /// ```
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encode_size_prefixed_segments(&self) -> Result<Segments, EncodeError> {
        size_prefixed_segments(self.encoded_len()?, |out| self.encode(out))
    }

    /// `{"apiKey": K, "apiVersion": V, "header": …, "body": …}`: the key and version make
    /// the JSON self-contained, since a response frame does not carry them.
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json(&self) -> Result<Value, EncodeError> {
        self.to_json_with(&JsonOptions::default())
    }

    /// [`ResponseFrame::to_json`] with `options` (a hook for `records` fields).
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json_with(&self, options: &JsonOptions<'_>) -> Result<Value, EncodeError> {
        ValueSink::collect(|sink| self.write_json(options, sink))
    }

    /// Empties every unknown tagged field of the header and the body: the frame becomes what
    /// its JSON form reads back as, without building that JSON.
    #[cfg(feature = "json")]
    #[inline]
    pub fn clear_unknown_tagged_fields(&mut self) {
        self.header.clear_unknown_tagged_fields();
        self.body.clear_unknown_tagged_fields();
    }

    /// [`ResponseFrame::to_json_with`] written token by token to `out`; with a
    /// [`crate::json::JsonWriter`] the text streams without a tree. On an error `out` holds a
    /// partial value.
    #[cfg(feature = "json")]
    #[inline]
    pub fn write_json(
        &self,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError> {
        out.begin_object();
        out.key("apiKey");
        out.i64(self.api_key().key().into());
        out.key("apiVersion");
        out.i64(self.api_version.into());
        out.key("header");
        self.header
            .write_json_with(self.header_version(), options, out)?;
        out.key("body");
        self.body.write_json_with(self.api_version, options, out)?;
        out.end_object();
        Ok(())
    }

    /// Reads the form [`ResponseFrame::to_json`] writes, strictly (see [`crate::json`]).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json(value: &Value) -> Result<Self, JsonError> {
        Self::from_json_with(value, &JsonOptions::default())
    }

    /// [`ResponseFrame::from_json`] with `options` (lenient reading, a hook for `records`).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_with(value: &Value, options: &JsonOptions<'_>) -> Result<Self, JsonError> {
        crate::json::frame_parts_of_value(value, RESPONSE_KEYS, options)
            .and_then(|parts| Self::from_json_parts(parts, options))
            .map_err(JsonError::place_duplicate)
    }

    /// [`ResponseFrame::from_json_with`] from JSON text, read token by token (see
    /// [`RequestFrame::from_json_slice`]): `apiKey` and `apiVersion` may come anywhere.
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_slice(text: &[u8], options: &JsonOptions<'_>) -> Result<Self, JsonError> {
        crate::json::frame_parts_of_text(text, RESPONSE_KEYS, options)
            .and_then(|parts| Self::from_json_parts(parts, options))
            .map_err(JsonError::place_duplicate)
    }

    #[cfg(feature = "json")]
    #[inline]
    fn from_json_parts(
        [api_key, api_version, header, body]: [Option<Part<'_>>; 4],
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        let small = |part: Option<Part<'_>>, name: &'static str| {
            required(part, name)?
                .read(|source| crate::json::value_of(source, crate::json::as_i16))
                .map_err(|e| e.at(name))
        };
        let key = small(api_key, "apiKey")?;
        let version = small(api_version, "apiVersion")?;
        let api = ApiKey::from_key(key)
            .ok_or_else(|| JsonError::new(JsonErrorKind::UnknownApiKey(key)).at("apiKey"))?;
        let header_version = api.response_header_version(version);
        let header = required(header, "header")?
            .read(|source| ResponseHeader::read_json_message(source, header_version, options))
            .map_err(|e| e.at("header"))?;
        let body = required(body, "body")?
            .read(|source| Response::read_json(api, source, version, options))
            .map_err(|e| e.at("body"))?;
        Ok(ResponseFrame {
            api_version: version,
            header,
            body,
        })
    }
}
