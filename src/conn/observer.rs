//! Watching a conversation between a client and a server from the side, as a proxy or a
//! packet capture sees it: both byte streams, nothing sent.

use super::decode::{decode_request, decode_response};
use super::error::RawRequestHeader;
use super::incoming::IncomingRequest;
use crate::frame::split_frame;
use crate::{DecodeError, DecodeErrorKind, DecodeOptions, ResponseFrame};
use bytes::{Bytes, BytesMut};
use std::collections::{HashMap, VecDeque};

/// Which way bytes travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to server: requests.
    ToServer,
    /// Server to client: responses.
    ToClient,
}

/// A request seen on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedRequest {
    /// The frame, without size prefix.
    pub frame: Bytes,
    /// Key, version and correlation id (`None` if the frame is shorter than 8 bytes).
    pub header: Option<RawRequestHeader>,
    /// The request, or why it does not decode.
    pub decoded: Result<IncomingRequest, DecodeError>,
    /// Whether a response is expected: false for a Produce with `acks = 0`. A request that
    /// does not decode is assumed to expect one.
    pub expects_response: bool,
}

/// A response seen on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedResponse {
    /// The frame, without size prefix.
    pub frame: Bytes,
    /// Its correlation id (`None` if the frame is shorter than 4 bytes).
    pub correlation_id: Option<i32>,
    /// The request it answers: the request seen earlier with its correlation id.
    pub request: Option<RawRequestHeader>,
    /// Requests seen before `request` that expected a response and got none: the server
    /// answered a later one first. Kafka does not do that; a request that did not decode, so
    /// that an `acks = 0` Produce could not be recognised, is the likely cause.
    pub unanswered: Vec<RawRequestHeader>,
    /// The response, or why it does not decode. `None` when `request` is `None`: without the
    /// request, the response's API and version are unknown.
    pub decoded: Option<Result<ResponseFrame, DecodeError>>,
}

/// What the observer saw in one direction. (Boxed: a decoded request is several hundred bytes.)
#[derive(Debug, Clone, PartialEq)]
pub enum Observed {
    /// A request frame.
    Request(Box<ObservedRequest>),
    /// A response frame.
    Response(Box<ObservedResponse>),
    /// The stream cannot be split into frames any more: a size prefix is negative or above
    /// [`DecodeLimits::max_frame_size`](crate::DecodeLimits). Reported once; the rest of that
    /// direction is ignored (a proxy keeps forwarding it).
    Unframeable(DecodeError),
}

#[derive(Debug, Default, Clone)]
struct Stream {
    buf: BytesMut,
    broken: bool,
}

/// Follows a conversation between a Kafka client and server from the bytes each sends:
/// splits frames, decodes requests, remembers each request's API and version by correlation
/// id, and decodes the responses with them. It never fails: a frame it cannot decode is
/// returned with the error and its bytes, and the conversation goes on.
///
/// This is what a tap (a logging proxy) needs: feed each direction's bytes as they pass
/// through, and log what [`Observer::next`] returns. Feed a request's bytes before
/// forwarding them, so that its response cannot be seen first.
///
/// ```
/// use kafka_codec::bytes::BytesMut;
/// use kafka_codec::conn::{ClientConnection, Direction, Observed, Observer, ServerConnection};
/// use kafka_codec::messages::{MetadataRequest, MetadataResponse};
/// use kafka_codec::Request;
///
/// let (mut client, mut server) = (ClientConnection::new(), ServerConnection::new());
/// let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
/// client.send(12, &Request::from(MetadataRequest::default()), &mut to_server).unwrap();
///
/// let mut tap = Observer::new();
/// tap.feed(Direction::ToServer, &to_server);
/// let Some(Observed::Request(request)) = tap.next(Direction::ToServer) else { panic!() };
/// assert!(request.decoded.is_ok());
///
/// let incoming = server.receive(&mut to_server).unwrap().unwrap();
/// server.send(&incoming.respond(MetadataResponse::default()), &mut to_client).unwrap();
/// tap.feed(Direction::ToClient, &to_client);
/// let Some(Observed::Response(response)) = tap.next(Direction::ToClient) else { panic!() };
/// assert_eq!(response.request, request.header);
/// assert_eq!(response.decoded.clone().unwrap().unwrap().api_version, 12);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Observer {
    options: DecodeOptions,
    /// Requests that expect a response, in the order they were seen.
    awaiting: VecDeque<RawRequestHeader>,
    /// How many entries of `awaiting` carry each correlation id, so that a response nobody
    /// asked for is recognised without a scan: a peer sending many of them must not cost time
    /// in proportion to the requests outstanding.
    awaiting_ids: HashMap<i32, usize>,
    to_server: Stream,
    to_client: Stream,
}

impl Observer {
    /// An observer with default [`DecodeOptions`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the limits and strictness frames are decoded with.
    pub fn with_options(mut self, options: DecodeOptions) -> Self {
        self.options = options;
        self
    }

    fn stream(&mut self, direction: Direction) -> &mut Stream {
        match direction {
            Direction::ToServer => &mut self.to_server,
            Direction::ToClient => &mut self.to_client,
        }
    }

    /// Adds bytes seen travelling in `direction`.
    pub fn feed(&mut self, direction: Direction, data: &[u8]) {
        let stream = self.stream(direction);
        if !stream.broken {
            stream.buf.extend_from_slice(data);
        }
    }

    /// The next whole frame seen in `direction`, decoded; `None` until one has arrived.
    #[inline]
    pub fn next(&mut self, direction: Direction) -> Option<Observed> {
        let limits = self.options.limits;
        let stream = self.stream(direction);
        if stream.broken {
            return None;
        }
        let frame = match split_frame(&mut stream.buf, &limits) {
            Ok(frame) => frame?,
            Err(error) => {
                stream.broken = true;
                stream.buf = BytesMut::new();
                return Some(Observed::Unframeable(error));
            }
        };
        Some(match direction {
            Direction::ToServer => Observed::Request(Box::new(self.observe_request(frame))),
            Direction::ToClient => Observed::Response(Box::new(self.observe_response(frame))),
        })
    }

    /// Bytes of an incomplete frame held for `direction`: what is left over when a peer
    /// disconnects in the middle of a frame.
    pub fn buffered(&self, direction: Direction) -> usize {
        match direction {
            Direction::ToServer => self.to_server.buf.len(),
            Direction::ToClient => self.to_client.buf.len(),
        }
    }

    /// Decodes one request frame (without size prefix), framed by the caller, and remembers
    /// it if it expects a response.
    #[inline]
    pub fn observe_request(&mut self, frame: Bytes) -> ObservedRequest {
        let header = RawRequestHeader::peek(&frame);
        let decoded = decode_request(frame.clone(), &self.options);
        let expects_response = decoded
            .as_ref()
            .map_or(true, IncomingRequest::expects_response);
        if let (Some(header), true) = (header, expects_response) {
            self.awaiting.push_back(header);
            *self.awaiting_ids.entry(header.correlation_id).or_default() += 1;
        }
        ObservedRequest {
            frame,
            header,
            decoded,
            expects_response,
        }
    }

    /// Decodes one response frame (without size prefix), framed by the caller, as the answer
    /// to the request seen with its correlation id.
    #[inline]
    pub fn observe_response(&mut self, frame: Bytes) -> ObservedResponse {
        let correlation_id = frame
            .get(..4)
            .map(|id| i32::from_be_bytes([id[0], id[1], id[2], id[3]]));
        let mut request = None;
        let mut unanswered = Vec::new();
        if let Some(id) = correlation_id.filter(|id| self.awaiting_ids.contains_key(id)) {
            // Every request taken off here is taken off once: linear in requests overall.
            while let Some(oldest) = self.awaiting.pop_front() {
                match self.awaiting_ids.get_mut(&oldest.correlation_id) {
                    Some(count) if *count > 1 => *count -= 1,
                    _ => {
                        self.awaiting_ids.remove(&oldest.correlation_id);
                    }
                }
                if oldest.correlation_id == id {
                    request = Some(oldest);
                    break;
                }
                unanswered.push(oldest);
            }
        }
        let decoded = request.map(|request| match request.api() {
            Some(api) => decode_response(frame.clone(), api, request.api_version, &self.options),
            None => Err(DecodeError::new(
                DecodeErrorKind::UnknownApiKey(request.api_key),
                0,
            )),
        });
        ObservedResponse {
            frame,
            correlation_id,
            request,
            unanswered,
            decoded,
        }
    }
}
