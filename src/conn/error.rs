//! [`ConnError`]: what can go wrong on a connection, and the small types errors name.

use crate::{ApiKey, DecodeError, EncodeError};
use bytes::Bytes;
use std::fmt;

/// The first eight bytes of every request frame (any header version): API key, version and
/// correlation id, readable even when the rest of the frame is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawRequestHeader {
    /// The API key, known to this crate or not.
    pub api_key: i16,
    /// The version the client asked for.
    pub api_version: i16,
    /// The correlation id the response will carry.
    pub correlation_id: i32,
}

impl RawRequestHeader {
    /// Reads the three fields from the start of a request frame (without size prefix);
    /// `None` if the frame is shorter than 8 bytes.
    pub fn peek(frame: &[u8]) -> Option<Self> {
        let bytes: &[u8; 8] = frame.get(..8)?.try_into().ok()?;
        Some(RawRequestHeader {
            api_key: i16::from_be_bytes([bytes[0], bytes[1]]),
            api_version: i16::from_be_bytes([bytes[2], bytes[3]]),
            correlation_id: i32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
        })
    }

    /// The API, if this crate knows the key.
    pub fn api(&self) -> Option<ApiKey> {
        ApiKey::from_key(self.api_key)
    }

    /// Whether the server answers the request that starts `frame` (without size prefix):
    /// every request but a Produce with `acks = 0`. Reads the header and, for Produce, the
    /// fields up to `acks`, so the first bytes of a frame are enough: a proxy that forwards a
    /// frame without keeping it can still count the responses it awaits. `None` if `frame`
    /// is cut before the answer is known.
    pub fn expects_response(frame: &Bytes) -> Option<bool> {
        let header = Self::peek(frame)?;
        if header.api() != Some(ApiKey::Produce)
            || !ApiKey::Produce
                .valid_versions()
                .contains(header.api_version)
        {
            // A Produce at a version no broker reads is answered with an error.
            return Some(true);
        }
        let version = header.api_version;
        let header_version = ApiKey::Produce.request_header_version(version);
        use crate::Message as _;
        let mut decoder = crate::wire::Decoder::new(frame);
        crate::messages::RequestHeader::decode_from(&mut decoder, header_version).ok()?;
        // Produce v3 and later start with the transactional id; acks comes next.
        if version >= 3 {
            decoder.read_nullable_string(header_version >= 2).ok()?;
        }
        let acks = decoder.read_i16().ok()?;
        Some(acks != 0)
    }
}

impl fmt::Display for RawRequestHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.api() {
            Some(api) => write!(f, "{api}")?,
            None => write!(f, "API key {}", self.api_key)?,
        }
        write!(
            f,
            " v{} (correlation id {})",
            self.api_version, self.correlation_id
        )
    }
}

/// A request that awaits its response: what the response will be decoded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InFlight {
    /// The correlation id the response must carry.
    pub correlation_id: i32,
    /// The API of the request, and so of the response.
    pub api: ApiKey,
    /// The version the response body is written at.
    pub version: i16,
}

impl fmt::Display for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} v{} (correlation id {})",
            self.api, self.version, self.correlation_id
        )
    }
}

/// What can go wrong on a connection.
///
/// [`ConnError::Framing`], [`ConnError::UnknownCorrelationId`] and [`ConnError::OutOfOrder`]
/// mean the byte stream can no longer be trusted: close the connection. After
/// [`ConnError::BadResponse`] or [`ConnError::BadRequest`] the framing is intact, but the
/// peer sent something this crate cannot read; Kafka closes the connection on a request it
/// cannot read. [`ConnError::Encode`] and [`ConnError::UnexpectedResponse`] are the caller's
/// mistakes; nothing was written and the connection is unchanged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnError {
    /// A size prefix that is negative or above
    /// [`DecodeLimits::max_frame_size`](crate::DecodeLimits::max_frame_size), or a frame too
    /// short for its header.
    #[error("unreadable frame: {0}")]
    Framing(DecodeError),
    /// A response whose correlation id belongs to no request in flight.
    #[error(
        "response with correlation id {correlation_id}, which no request in flight has ({})",
        match .expected {
            Some(id) => format!("the oldest awaits {id}"),
            None => "none awaits a response".to_string(),
        }
    )]
    UnknownCorrelationId {
        /// The correlation id in the response.
        correlation_id: i32,
        /// The correlation id of the oldest request in flight, if any.
        expected: Option<i32>,
    },
    /// A response to a request in flight that is not the oldest: Kafka answers the requests
    /// of one connection in the order it received them, so a response that overtakes another
    /// means the stream is broken.
    #[error(
        "response to correlation id {correlation_id} arrived before the response to \
         {expected}: Kafka answers in order"
    )]
    OutOfOrder {
        /// The correlation id in the response.
        correlation_id: i32,
        /// The correlation id of the oldest request in flight.
        expected: i32,
    },
    /// The response to a request in flight does not decode.
    #[error("the response to {request} does not decode: {error}")]
    BadResponse {
        /// The request it answers (taken off the in-flight list).
        request: InFlight,
        /// Why it does not decode.
        error: DecodeError,
        /// The whole frame, without size prefix, for logging.
        frame: Bytes,
    },
    /// A request frame that does not decode: an unknown API key, a version this crate cannot
    /// read (other than ApiVersions, which is read the way Kafka reads it), or a malformed
    /// header or body.
    #[error("request {} does not decode: {error}", match .header {
        Some(header) => header.to_string(),
        None => "(shorter than a header)".to_string(),
    })]
    BadRequest {
        /// Key, version and correlation id, when the frame has at least 8 bytes.
        header: Option<RawRequestHeader>,
        /// Why it does not decode.
        error: DecodeError,
        /// The whole frame, without size prefix, for logging.
        frame: Bytes,
    },
    /// A request or response that cannot be encoded; nothing was written.
    #[error("encoding failed, nothing written: {0}")]
    Encode(#[from] EncodeError),
    /// A response that does not answer the oldest request awaiting one (wrong correlation
    /// id, API or version, or no request awaits a response); nothing was written.
    #[error(
        "response {api} v{version} (correlation id {correlation_id}) does not answer {}",
        match .expected {
            Some(request) => request.to_string(),
            None => "anything: no request awaits a response".to_string(),
        }
    )]
    UnexpectedResponse {
        /// The response's correlation id.
        correlation_id: i32,
        /// The response's API.
        api: ApiKey,
        /// The response's version.
        version: i16,
        /// The oldest request awaiting a response, if any.
        expected: Option<InFlight>,
    },
}
