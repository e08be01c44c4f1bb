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
use crate::json::{JsonError, JsonErrorKind};
#[cfg(feature = "json")]
use crate::json::{JsonInput, JsonOptions, JsonSink, Part, ValueSink};
#[cfg(feature = "json")]
use crate::message::JsonFields;
use crate::messages::{RequestHeader, ResponseHeader};
#[cfg(any(feature = "client", feature = "broker"))]
use crate::wire::Decoder;
#[cfg(any(feature = "client", feature = "broker"))]
use crate::wire::Segments;
use crate::wire::Utf8Bytes;
use crate::wire::{DecodeError, DecodeErrorKind, DecodeLimits, EncodeError, EncodeErrorKind};

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

/// How a frame's bytes are laid out: alone, or after Kafka's 4-byte size prefix. The one
/// choice the frames' `decode_with` (through [`DecodeOptions::framing`]), `encode` and
/// `encode_segments` take, in place of a method of each per layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// Header and body alone, as [`split_frame`] hands a frame out (the default).
    #[default]
    Bare,
    /// The 4-byte big-endian size, then the frame: what travels on the socket.
    SizePrefixed,
}

/// How frames are decoded.
///
/// ```
/// use kafka_codec::{DecodeOptions, Framing, TrailingBytes};
/// let options = DecodeOptions::default().with_framing(Framing::SizePrefixed);
/// assert_eq!(options.trailing_bytes, TrailingBytes::Reject);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Size and count bounds.
    pub limits: DecodeLimits,
    /// Strict or lenient about what follows the body (and, size-prefixed, the frame).
    pub trailing_bytes: TrailingBytes,
    /// Whether the bytes handed to `decode_with` start with the size prefix. The connections
    /// and the transcoder are handed bare frames ([`split_frame`] takes the prefix off), so
    /// they read bare frames whatever this says.
    pub framing: Framing,
}

impl DecodeOptions {
    /// These options with `framing`.
    pub fn with_framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }
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
/// use kafka_codec::{split_frame, DecodeLimits};
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

// The halves both frame types share: each type's methods say only what differs (the
// header's version, a request's peeked API), so the framing, the options and the JSON
// input are handled once.

/// Decodes `input` as `options.framing` lays it out: `decode` reads a bare frame. Error
/// offsets count from the start of `input`, size prefix included.
#[cfg(any(feature = "client", feature = "broker"))]
#[inline]
fn decode_framed<T>(
    input: Bytes,
    options: &DecodeOptions,
    decode: impl FnOnce(Bytes) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    match options.framing {
        Framing::Bare => decode(input),
        Framing::SizePrefixed => {
            let mut rest = input;
            let frame = take_size_prefixed(&mut rest, &options.limits)?;
            let end = 4 + frame.len();
            let decoded = decode(frame).map_err(|e| e.shifted(4))?;
            if options.trailing_bytes == TrailingBytes::Reject && !rest.is_empty() {
                let kind = DecodeErrorKind::TrailingBytes(rest.len());
                return Err(DecodeError::new(kind, end));
            }
            Ok(decoded)
        }
    }
}

/// Reads a bare frame with `read` (header, then body), within `options`' limits and rules
/// for what follows the body.
#[cfg(any(feature = "client", feature = "broker"))]
#[inline]
fn decode_bare<T>(
    frame: &Bytes,
    options: &DecodeOptions,
    read: impl FnOnce(&mut Decoder<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    check_frame_size(frame.len(), &options.limits)?;
    let mut decoder = Decoder::with_limits(frame, options.limits);
    let decoded = read(&mut decoder)?;
    finish(&decoder, options)?;
    Ok(decoded)
}

/// Writes a frame of `len` bytes with `encode`, after its size prefix if `framing` says so.
#[cfg(any(feature = "client", feature = "broker"))]
#[inline]
fn encode_framed<B: BufMut>(
    buf: &mut B,
    framing: Framing,
    len: impl FnOnce() -> Result<usize, EncodeError>,
    encode: impl FnOnce(&mut B) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    if framing == Framing::SizePrefixed {
        put_size_prefix(buf, len()?)?;
    }
    encode(buf)
}

/// [`encode_framed`] into [`Segments`] sized for the whole frame.
#[cfg(any(feature = "client", feature = "broker"))]
#[inline]
fn encode_segments(
    len: usize,
    framing: Framing,
    encode: impl FnOnce(&mut Segments) -> Result<(), EncodeError>,
) -> Result<Segments, EncodeError> {
    let prefix = if framing == Framing::SizePrefixed {
        4
    } else {
        0
    };
    let mut out = Segments::for_encoded_len(prefix + len);
    encode_framed(&mut out, framing, || Ok(len), encode)?;
    Ok(out)
}

/// Encodes into a buffer of exactly `len` bytes.
#[cfg(any(feature = "client", feature = "broker"))]
#[inline]
fn encode_to_bytes(
    len: usize,
    encode: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::with_capacity(len);
    encode(&mut buf)?;
    Ok(buf.freeze())
}

/// Reads a frame's JSON object, a value or text, into its parts (the values of `keys`),
/// then the frame from them with `read`.
#[cfg(feature = "json")]
#[inline]
fn from_json_parts<'a, T, const N: usize>(
    input: JsonInput<'a>,
    keys: [&'static str; N],
    options: &JsonOptions<'_>,
    read: impl FnOnce([Option<Part<'a>>; N]) -> Result<T, JsonError>,
) -> Result<T, JsonError> {
    match input {
        JsonInput::Value(value) => crate::json::frame_parts_of_value(value, keys, options),
        JsonInput::Text(text) => crate::json::frame_parts_of_text(text, keys, options),
    }
    .and_then(read)
    .map_err(JsonError::place_duplicate)
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

    /// Decodes a whole request frame (without its size prefix), strictly:
    /// [`RequestFrame::decode_with`] with the default options.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode(frame: Bytes) -> Result<Self, DecodeError> {
        Self::decode_with(frame, &DecodeOptions::default())
    }

    /// Decodes a whole request frame with `options`: its limits, what may follow the body,
    /// and whether `input` starts with the 4-byte size prefix ([`Framing::SizePrefixed`]: the
    /// prefix must match the frame, error offsets count it, and bytes after the frame follow
    /// `trailing_bytes`). To read frames one after another from a buffer, take each off with
    /// [`split_frame`] and decode it bare.
    ///
    /// ```
    /// use kafka_codec::bytes::BytesMut;
    /// use kafka_codec::messages::ApiVersionsRequest;
    /// use kafka_codec::{DecodeOptions, Framing, RequestFrame};
    ///
    /// let frame = RequestFrame::new(ApiVersionsRequest::default(), 3, 1);
    /// let mut buf = BytesMut::new();
    /// frame.encode(&mut buf, Framing::SizePrefixed).unwrap();
    /// let options = DecodeOptions::default().with_framing(Framing::SizePrefixed);
    /// assert_eq!(RequestFrame::decode_with(buf.freeze(), &options).unwrap(), frame);
    /// ```
    #[cfg(feature = "broker")]
    #[inline]
    pub fn decode_with(input: Bytes, options: &DecodeOptions) -> Result<Self, DecodeError> {
        decode_framed(input, options, |frame| {
            let (api, version) = Self::peek_api(&frame)?;
            decode_bare(&frame, options, |decoder| {
                let header_version = api.request_header_version(version);
                let header = RequestHeader::decode_from(decoder, header_version)?;
                let body = Request::decode_from(api, decoder, version)?;
                Ok(RequestFrame { header, body })
            })
        })
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

    /// The bytes of header and body: what [`RequestFrame::encode`] writes after the size
    /// prefix, if any.
    #[cfg(feature = "client")]
    #[inline]
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        let (header_version, version) = self.header_version()?;
        Ok(self.header.encoded_len(header_version)? + self.body.encoded_len(version)?)
    }

    /// Writes header and body, after the 4-byte size prefix with [`Framing::SizePrefixed`].
    /// Refuses a header whose API key is not the body's ([`EncodeErrorKind::ApiKeyMismatch`]);
    /// [`RequestFrame::new`] cannot build one.
    #[cfg(feature = "client")]
    #[inline]
    pub fn encode(&self, buf: &mut impl BufMut, framing: Framing) -> Result<(), EncodeError> {
        encode_framed(
            buf,
            framing,
            || self.encoded_len(),
            |buf| {
                let (header_version, version) = self.header_version()?;
                self.header.encode(buf, header_version)?;
                self.body.encode(buf, version)
            },
        )
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

    /// Reads `{"header": …, "body": …}`, a [`Value`] or JSON text (see [`JsonInput`]); the
    /// header's API key and version select the body. Strict: a key the form does not have is
    /// an error (see [`crate::json`]).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json<'a>(input: impl Into<JsonInput<'a>>) -> Result<Self, JsonError> {
        Self::from_json_with(input, &JsonOptions::default())
    }

    /// [`RequestFrame::from_json`] with `options` (lenient reading, a hook for `records`).
    ///
    /// From text, no [`Value`] tree of the body is built, and the header may come before or
    /// after the body: the top-level object is first split into the text of its values
    /// (borrowed from the input, nothing copied), then the header is read, then the body at
    /// its version.
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_with<'a>(
        input: impl Into<JsonInput<'a>>,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        from_json_parts(input.into(), REQUEST_KEYS, options, |[header, body]| {
            let header = required(header, "header")?;
            // The header version depends on the API, which the header names: read the header
            // as a tree first (it is small), take the two fields, then read it at its version.
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
        })
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

    /// Decodes a whole response frame (without size prefix) of `api_key` at `version`,
    /// strictly: [`ResponseFrame::decode_with`] with the default options.
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode(frame: Bytes, api_key: ApiKey, version: i16) -> Result<Self, DecodeError> {
        Self::decode_with(frame, api_key, version, &DecodeOptions::default())
    }

    /// [`ResponseFrame::decode`] with `options`, as [`RequestFrame::decode_with`].
    #[cfg(feature = "client")]
    #[inline]
    pub fn decode_with(
        input: Bytes,
        api_key: ApiKey,
        version: i16,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        decode_framed(input, options, |frame| {
            decode_bare(&frame, options, |decoder| {
                let header_version = api_key.response_header_version(version);
                let header = ResponseHeader::decode_from(decoder, header_version)?;
                let body = Response::decode_from(api_key, decoder, version)?;
                Ok(ResponseFrame {
                    api_version: version,
                    header,
                    body,
                })
            })
        })
    }

    /// The API of the body.
    pub fn api_key(&self) -> ApiKey {
        self.body.api_key()
    }

    #[cfg(any(feature = "broker", feature = "json"))]
    fn header_version(&self) -> i16 {
        self.api_key().response_header_version(self.api_version)
    }

    /// The bytes of header and body: what [`ResponseFrame::encode`] writes after the size
    /// prefix, if any.
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encoded_len(&self) -> Result<usize, EncodeError> {
        Ok(self.header.encoded_len(self.header_version())?
            + self.body.encoded_len(self.api_version)?)
    }

    /// Writes header and body, after the 4-byte size prefix with [`Framing::SizePrefixed`].
    ///
    /// Or as [`Segments`] that share the large values (a Fetch response's records):
    ///
    /// ```
    /// use kafka_codec::bytes::Bytes;
    /// use kafka_codec::messages::{fetch_response, FetchResponse};
    /// use kafka_codec::{Framing, ResponseFrame};
    ///
    /// let records = Bytes::from(vec![0u8; 100_000]); // record batches the server holds
    /// let partition = fetch_response::PartitionData::default().with_records(Some(records.clone()));
    /// let topic = fetch_response::FetchableTopicResponse::default().with_partitions(vec![partition]);
    /// let frame = ResponseFrame::new(FetchResponse::default().with_responses(vec![topic]), 17, 5);
    ///
    /// let segments = frame.encode_segments(Framing::SizePrefixed).unwrap();
    /// // The prefix, header and fields before the records; the records; what follows them.
    /// assert_eq!(segments.chunks().count(), 3);
    /// assert_eq!(segments.chunks().nth(1).unwrap().as_ptr(), records.as_ptr());
    /// let mut plain = Vec::new();
    /// frame.encode(&mut plain, Framing::SizePrefixed).unwrap();
    /// assert_eq!(segments.into_bytes(), plain);
    /// ```
    #[cfg(feature = "broker")]
    #[inline]
    pub fn encode(&self, buf: &mut impl BufMut, framing: Framing) -> Result<(), EncodeError> {
        encode_framed(
            buf,
            framing,
            || self.encoded_len(),
            |buf| {
                self.header.encode(buf, self.header_version())?;
                self.body.encode(buf, self.api_version)
            },
        )
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

    /// Reads the form [`ResponseFrame::to_json`] writes, from a [`Value`] or JSON text (see
    /// [`JsonInput`]), strictly (see [`crate::json`]).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json<'a>(input: impl Into<JsonInput<'a>>) -> Result<Self, JsonError> {
        Self::from_json_with(input, &JsonOptions::default())
    }

    /// [`ResponseFrame::from_json`] with `options` (lenient reading, a hook for `records`);
    /// from text, `apiKey` and `apiVersion` may come anywhere (see
    /// [`RequestFrame::from_json_with`]).
    #[cfg(feature = "json")]
    #[inline]
    pub fn from_json_with<'a>(
        input: impl Into<JsonInput<'a>>,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        from_json_parts(
            input.into(),
            RESPONSE_KEYS,
            options,
            |[api_key, api_version, header, body]| {
                let small = |part: Option<Part<'_>>, name: &'static str| {
                    required(part, name)?
                        .read(|source| crate::json::value_of(source, crate::json::as_i16))
                        .map_err(|e| e.at(name))
                };
                let key = small(api_key, "apiKey")?;
                let version = small(api_version, "apiVersion")?;
                let api = ApiKey::from_key(key).ok_or_else(|| {
                    JsonError::new(JsonErrorKind::UnknownApiKey(key)).at("apiKey")
                })?;
                let header_version = api.response_header_version(version);
                let header = required(header, "header")?
                    .read(|source| {
                        ResponseHeader::read_json_message(source, header_version, options)
                    })
                    .map_err(|e| e.at("header"))?;
                let body = required(body, "body")?
                    .read(|source| Response::read_json(api, source, version, options))
                    .map_err(|e| e.at("body"))?;
                Ok(ResponseFrame {
                    api_version: version,
                    header,
                    body,
                })
            },
        )
    }
}

/// The methods both frame types have to the letter, written once. `$encode` is the feature
/// that encodes the type (`client` for requests, `broker` for responses); `$json` what its
/// JSON form is.
macro_rules! shared_frame_methods {
    ($ty:ident, $encode:tt, $json:literal) => {
        impl $ty {
            /// Encodes into a new buffer, bare (no size prefix).
            #[cfg(feature = $encode)]
            #[inline]
            pub fn encode_to_bytes(&self) -> Result<Bytes, EncodeError> {
                encode_to_bytes(self.encoded_len()?, |buf| self.encode(buf, Framing::Bare))
            }

            /// The frame (after its size prefix, with [`Framing::SizePrefixed`]) as
            /// [`Segments`], ready for a vectored write: large `bytes`/`records` values are the
            /// body's own `Bytes`, not copies (see [`Message::encode_segments`]).
            #[cfg(feature = $encode)]
            #[inline]
            pub fn encode_segments(&self, framing: Framing) -> Result<Segments, EncodeError> {
                encode_segments(self.encoded_len()?, framing, |out| {
                    self.encode(out, Framing::Bare)
                })
            }

            #[doc = concat!($json, " in Kafka's JSON form.")]
            #[cfg(feature = "json")]
            #[inline]
            pub fn to_json(&self) -> Result<Value, EncodeError> {
                self.to_json_with(&JsonOptions::default())
            }

            /// `to_json` with `options` (a hook for `records` fields).
            #[cfg(feature = "json")]
            #[inline]
            pub fn to_json_with(&self, options: &JsonOptions<'_>) -> Result<Value, EncodeError> {
                ValueSink::collect(|sink| self.write_json(options, sink))
            }

            /// Empties every unknown tagged field of the header and the body: the frame
            /// becomes what its JSON form reads back as, without building that JSON.
            #[cfg(feature = "json")]
            #[inline]
            pub fn clear_unknown_tagged_fields(&mut self) {
                self.header.clear_unknown_tagged_fields();
                self.body.clear_unknown_tagged_fields();
            }
        }
    };
}

shared_frame_methods!(RequestFrame, "client", "`{\"header\": …, \"body\": …}`");
// The key and version make the JSON self-contained, since a response frame does not carry
// them.
shared_frame_methods!(
    ResponseFrame,
    "broker",
    "`{\"apiKey\": K, \"apiVersion\": V, \"header\": …, \"body\": …}`"
);
