//! The client side of a connection, sans-IO: requests out, responses in.

use super::decode::decode_response;
use super::error::{ConnError, InFlight};
use crate::frame::{put_size_prefix, split_frame};
use crate::messages::RequestHeader;
use crate::wire::Segments;
use crate::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeOptions, EncodeError, Message, Request,
    ResponseFrame, Utf8Bytes,
};
use bytes::{BufMut, Bytes, BytesMut};
use std::collections::VecDeque;

/// What [`ClientConnection::send`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The correlation id the request carries.
    pub correlation_id: i32,
    /// Whether a response will come (false only for Produce with `acks = 0`); only then is
    /// the request in flight.
    pub expects_response: bool,
}

/// The client side of one Kafka connection, without I/O.
///
/// It writes requests into a buffer the caller sends, and reads responses from a buffer the
/// caller fills. It numbers requests with correlation ids, remembers the API and version of
/// each one awaiting an answer, so that responses decode themselves, and checks that
/// responses arrive in the order the requests left (Kafka answers in order on one
/// connection). Any number of requests may be in flight (pipelining). A Produce with
/// `acks = 0` gets no answer from Kafka and is not awaited.
///
/// ```
/// use kafka_codec::bytes::BytesMut;
/// use kafka_codec::conn::ClientConnection;
/// use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse, ResponseHeader};
/// use kafka_codec::{Framing, Request, Response, ResponseFrame};
///
/// let mut client = ClientConnection::new().with_client_id("doc");
/// let mut to_server = BytesMut::new();
/// let sent = client
///     .send(3, &Request::from(ApiVersionsRequest::default()), &mut to_server)
///     .unwrap();
///
/// // ... `to_server` goes out on a socket; the answer comes back, perhaps in pieces:
/// let answer = ResponseFrame {
///     api_version: 3,
///     header: ResponseHeader::default().with_correlation_id(sent.correlation_id),
///     body: Response::ApiVersions(ApiVersionsResponse::default()),
/// };
/// let mut wire = BytesMut::new();
/// answer.encode(&mut wire, Framing::SizePrefixed).unwrap();
/// let mut from_server = BytesMut::new();
/// from_server.extend_from_slice(&wire[..5]);
/// assert_eq!(client.receive(&mut from_server).unwrap(), None);
/// from_server.extend_from_slice(&wire[5..]);
/// assert_eq!(client.receive(&mut from_server).unwrap(), Some(answer));
/// assert_eq!(client.in_flight().len(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct ClientConnection {
    client_id: Option<Utf8Bytes>,
    options: DecodeOptions,
    next_correlation_id: i32,
    in_flight: VecDeque<InFlight>,
}

impl Default for ClientConnection {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientConnection {
    /// A connection with no requests yet: correlation ids from 0, the header's default client
    /// id (the empty string), default [`DecodeOptions`].
    pub fn new() -> Self {
        ClientConnection {
            client_id: RequestHeader::default().client_id,
            options: DecodeOptions::default(),
            next_correlation_id: 0,
            in_flight: VecDeque::new(),
        }
    }

    /// Sets the client id every request header carries.
    pub fn with_client_id(mut self, client_id: impl Into<Utf8Bytes>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sends a null client id (Kafka accepts it; its logs show `null`).
    pub fn without_client_id(mut self) -> Self {
        self.client_id = None;
        self
    }

    /// Sets the limits and strictness responses are decoded with.
    pub fn with_options(mut self, options: DecodeOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the correlation id of the next request (later ones count up from it, wrapping
    /// from `i32::MAX` to 0).
    pub fn with_first_correlation_id(mut self, correlation_id: i32) -> Self {
        self.next_correlation_id = correlation_id;
        self
    }

    /// The options responses are decoded with.
    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    /// The requests awaiting a response, oldest first.
    pub fn in_flight(&self) -> impl ExactSizeIterator<Item = &InFlight> + '_ {
        self.in_flight.iter()
    }

    /// Writes `body` as a request at `version` (size prefix, header, body) to the end of
    /// `out`. On error nothing is written and no correlation id is used.
    #[inline]
    pub fn send(
        &mut self,
        version: i16,
        body: &Request,
        out: &mut BytesMut,
    ) -> Result<Sent, ConnError> {
        let body_len = body.encoded_len(version)?;
        let start = out.len();
        self.write_request(
            body.api_key(),
            version,
            body.expects_response(),
            out,
            body_len,
            |buf| body.encode(buf, version),
        )
        .inspect_err(|_| out.truncate(start))
    }

    /// [`ClientConnection::send`] for a vectored write: appends the request to `out` as
    /// [`Segments`], in which large `bytes`/`records` values (a Produce request's record
    /// batches) are the body's own `Bytes` rather than copies. On error nothing is appended
    /// and no correlation id is used.
    #[inline]
    pub fn send_segments(
        &mut self,
        version: i16,
        body: &Request,
        out: &mut Segments,
    ) -> Result<Sent, ConnError> {
        let body_len = body.encoded_len(version)?;
        let mut frame = Segments::new();
        let sent = self.write_request(
            body.api_key(),
            version,
            body.expects_response(),
            &mut frame,
            body_len,
            |buf| body.encode(buf, version),
        )?;
        out.append(frame);
        Ok(sent)
    }

    /// Writes a request whose body is already encoded, at any version: for versions this
    /// crate cannot encode (a newer peer's, or one a test wants refused). The header follows
    /// the usual rule for `api` at `version`. Its response is decoded at `version` when it
    /// comes (`expects_response`), so it must be a version this crate reads, except for
    /// ApiVersions, whose version-0 fallback answer is read at version 0.
    pub fn send_encoded(
        &mut self,
        api: ApiKey,
        version: i16,
        body: &[u8],
        expects_response: bool,
        out: &mut BytesMut,
    ) -> Result<Sent, ConnError> {
        let start = out.len();
        self.write_request(api, version, expects_response, out, body.len(), |buf| {
            buf.put_slice(body);
            Ok(())
        })
        .inspect_err(|_| out.truncate(start))
    }

    /// Writes the request and, on success, takes its correlation id; on error `out` may hold
    /// part of it, which the caller removes.
    fn write_request<B: BufMut>(
        &mut self,
        api: ApiKey,
        version: i16,
        expects_response: bool,
        out: &mut B,
        body_len: usize,
        write_body: impl FnOnce(&mut B) -> Result<(), EncodeError>,
    ) -> Result<Sent, ConnError> {
        let correlation_id = self.next_correlation_id;
        let header = RequestHeader {
            request_api_key: api.key(),
            request_api_version: version,
            correlation_id,
            client_id: self.client_id.clone(),
            ..Default::default()
        };
        let header_version = api.request_header_version(version);
        put_size_prefix(out, header.encoded_len(header_version)? + body_len)?;
        header.encode(out, header_version)?;
        write_body(out)?;
        self.next_correlation_id = correlation_id.checked_add(1).unwrap_or(0);
        if expects_response {
            self.in_flight.push_back(InFlight {
                correlation_id,
                api,
                version,
            });
        }
        Ok(Sent {
            correlation_id,
            expects_response,
        })
    }

    /// Takes the next whole response frame off the front of `buf` and decodes it as the
    /// answer to the oldest request in flight. `Ok(None)` until a whole frame has arrived;
    /// call again while it returns `Some`, since `buf` may hold several.
    #[inline]
    pub fn receive(&mut self, buf: &mut BytesMut) -> Result<Option<ResponseFrame>, ConnError> {
        match split_frame(buf, &self.options.limits).map_err(ConnError::Framing)? {
            Some(frame) => self.decode_response(frame).map(Some),
            None => Ok(None),
        }
    }

    /// Decodes one response frame (without its size prefix) framed by the caller, as
    /// [`ClientConnection::receive`] does.
    #[inline]
    pub fn decode_response(&mut self, frame: Bytes) -> Result<ResponseFrame, ConnError> {
        let Some(correlation_id) = frame
            .get(..4)
            .map(|id| i32::from_be_bytes([id[0], id[1], id[2], id[3]]))
        else {
            return Err(ConnError::Framing(DecodeError::new(
                DecodeErrorKind::UnexpectedEof {
                    needed: 4,
                    remaining: frame.len(),
                },
                0,
            )));
        };
        match self.in_flight.front() {
            Some(oldest) if oldest.correlation_id == correlation_id => {}
            Some(oldest) => {
                let expected = oldest.correlation_id;
                return Err(
                    if self
                        .in_flight
                        .iter()
                        .any(|r| r.correlation_id == correlation_id)
                    {
                        ConnError::OutOfOrder {
                            correlation_id,
                            expected,
                        }
                    } else {
                        ConnError::UnknownCorrelationId {
                            correlation_id,
                            expected: Some(expected),
                        }
                    },
                );
            }
            None => {
                return Err(ConnError::UnknownCorrelationId {
                    correlation_id,
                    expected: None,
                })
            }
        }
        let request = self.in_flight.pop_front().expect("checked above");
        decode_response(frame.clone(), request.api, request.version, &self.options).map_err(
            |error| ConnError::BadResponse {
                request,
                error,
                frame,
            },
        )
    }
}
