//! The server side of a connection, sans-IO: requests in, responses out.

use super::decode::decode_request;
use super::error::{ConnError, InFlight, RawRequestHeader};
use super::IncomingRequest;
use crate::frame::split_frame;
use crate::wire::Segments;
use crate::Framing;
use crate::{ApiKey, DecodeOptions, ResponseFrame};
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;

/// The server side of one Kafka connection, without I/O.
///
/// It reads requests from a buffer the caller fills and writes responses into a buffer the
/// caller sends. Responses must go out in the order the requests came (Kafka's clients rely
/// on it): [`ServerConnection::send`] refuses any other, and any response to a request that
/// expects none (Produce with `acks = 0`). The header version of each response follows from
/// its API and version, with ApiVersions' header-version-0 exception.
///
/// ```
/// use kafka_codec::bytes::BytesMut;
/// use kafka_codec::conn::{ClientConnection, ServerConnection};
/// use kafka_codec::messages::{MetadataRequest, MetadataResponse};
/// use kafka_codec::Request;
///
/// let mut client = ClientConnection::new();
/// let mut server = ServerConnection::new();
/// let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
/// client.send(12, &Request::from(MetadataRequest::default()), &mut to_server).unwrap();
///
/// let request = server.receive(&mut to_server).unwrap().expect("a whole frame");
/// let answer = request.respond(MetadataResponse::default().with_cluster_id(Some("c1".into())));
/// server.send(&answer, &mut to_client).unwrap();
///
/// assert_eq!(client.receive(&mut to_client).unwrap(), Some(answer));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ServerConnection {
    options: DecodeOptions,
    awaiting: VecDeque<InFlight>,
}

impl ServerConnection {
    /// A connection with default [`DecodeOptions`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the limits and strictness requests are decoded with.
    pub fn with_options(mut self, options: DecodeOptions) -> Self {
        self.options = options;
        self
    }

    /// The options requests are decoded with.
    pub fn options(&self) -> &DecodeOptions {
        &self.options
    }

    /// The requests awaiting a response, oldest first.
    pub fn awaiting(&self) -> impl ExactSizeIterator<Item = &InFlight> + '_ {
        self.awaiting.iter()
    }

    /// Takes the next whole request frame off the front of `buf` and decodes it. `Ok(None)`
    /// until a whole frame has arrived; call again while it returns `Some`.
    #[inline]
    pub fn receive(&mut self, buf: &mut BytesMut) -> Result<Option<IncomingRequest>, ConnError> {
        match split_frame(buf, &self.options.limits).map_err(ConnError::Framing)? {
            Some(frame) => self.decode_request(frame).map(Some),
            None => Ok(None),
        }
    }

    /// Decodes one request frame (without its size prefix) framed by the caller, as
    /// [`ServerConnection::receive`] does. A request that expects a response joins the
    /// queue of requests awaiting one.
    #[inline]
    pub fn decode_request(&mut self, frame: Bytes) -> Result<IncomingRequest, ConnError> {
        let request = decode_request(frame.clone(), &self.options).map_err(|error| {
            ConnError::BadRequest {
                header: RawRequestHeader::peek(&frame),
                error,
                frame,
            }
        })?;
        if request.expects_response() {
            self.awaiting.push_back(InFlight {
                correlation_id: request.correlation_id(),
                api: request.api_key(),
                version: request.api_version,
            });
        }
        Ok(request)
    }

    /// Writes `response` (size prefix, header, body) to the end of `out`. It must answer the
    /// oldest request awaiting a response: same correlation id, API and version. On error
    /// nothing is written.
    #[inline]
    pub fn send(&mut self, response: &ResponseFrame, out: &mut BytesMut) -> Result<(), ConnError> {
        self.check_answers(response)?;
        let start = out.len();
        if let Err(error) = response.encode(out, Framing::SizePrefixed) {
            out.truncate(start);
            return Err(error.into());
        }
        self.awaiting.pop_front();
        Ok(())
    }

    /// [`ServerConnection::send`] for a vectored write: appends `response` to `out` as
    /// [`Segments`], in which large `bytes`/`records` values (a Fetch response's record
    /// batches) are the response's own `Bytes` rather than copies. `out` is a write queue:
    /// responses appended in order, drained from the front by `write_vectored` (or
    /// `tokio::io::AsyncWriteExt::write_all_buf`). On error nothing is appended.
    ///
    /// ```
    /// use kafka_codec::bytes::{Buf, BytesMut};
    /// use kafka_codec::conn::{ClientConnection, ServerConnection};
    /// use kafka_codec::messages::{FetchRequest, FetchResponse};
    /// use kafka_codec::wire::Segments;
    /// use kafka_codec::Request;
    ///
    /// let (mut client, mut server) = (ClientConnection::new(), ServerConnection::new());
    /// let mut to_server = BytesMut::new();
    /// client.send(17, &Request::from(FetchRequest::default()), &mut to_server).unwrap();
    /// let request = server.receive(&mut to_server).unwrap().unwrap();
    ///
    /// let mut queue = Segments::new();
    /// server.send_segments(&request.respond(FetchResponse::default()), &mut queue).unwrap();
    /// // A socket would take `queue.chunks_vectored(..)`; here the bytes go to the client.
    /// let mut to_client = BytesMut::new();
    /// to_client.extend_from_slice(&queue.copy_to_bytes(queue.remaining()));
    /// assert!(client.receive(&mut to_client).unwrap().is_some());
    /// ```
    #[inline]
    pub fn send_segments(
        &mut self,
        response: &ResponseFrame,
        out: &mut Segments,
    ) -> Result<(), ConnError> {
        self.check_answers(response)?;
        out.append(response.encode_segments(Framing::SizePrefixed)?);
        self.awaiting.pop_front();
        Ok(())
    }

    /// Refuses a response that does not answer the oldest request awaiting one.
    fn check_answers(&self, response: &ResponseFrame) -> Result<(), ConnError> {
        let expected = self.awaiting.front().copied();
        let answers = expected.is_some_and(|request| {
            request.correlation_id == response.header.correlation_id
                && request.api == response.api_key()
                && (request.version == response.api_version
                    // Kafka answers an ApiVersions request newer than it serves at v0
                    // (`IncomingRequest::unsupported_api_versions_response`), which is all an
                    // older server can say and all a client reads then.
                    || (request.api == ApiKey::ApiVersions && response.api_version == 0))
        });
        if answers {
            return Ok(());
        }
        Err(ConnError::UnexpectedResponse {
            correlation_id: response.header.correlation_id,
            api: response.api_key(),
            version: response.api_version,
            expected,
        })
    }
}
