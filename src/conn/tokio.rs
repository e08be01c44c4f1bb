//! `tokio_util::codec` implementations over the sans-IO connection (feature `tokio`).
//!
//! [`ClientCodec`] and [`ServerCodec`] wrap a [`ClientConnection`] and a [`ServerConnection`]:
//! the connection does the work, `Framed` does the I/O. Everything the sans-IO types check
//! (correlation ids, response order, limits) holds here too; their errors arrive as
//! [`CodecError::Conn`]. The client half needs the `client` feature, the server half
//! `broker`.
//!
//! ```
//! use futures_util::{SinkExt, StreamExt};
//! use kafka_codec::conn::tokio::{ClientCodec, CodecError, OutgoingRequest};
//! use kafka_codec::conn::ClientConnection;
//! use kafka_codec::messages::MetadataRequest;
//! use tokio::io::{AsyncRead, AsyncWrite};
//! use tokio_util::codec::Framed;
//!
//! // `socket` would be a `tokio::net::TcpStream` connected to a broker.
//! async fn cluster_id<S: AsyncRead + AsyncWrite + Unpin>(socket: S) -> Result<String, CodecError> {
//!     let mut framed = Framed::new(socket, ClientCodec::new(ClientConnection::new()));
//!     framed.send(OutgoingRequest::new(12, MetadataRequest::default())).await?;
//!     let response = framed.next().await.expect("an answer")?;
//!     let kafka_codec::Response::Metadata(metadata) = response.body else { unreachable!() };
//!     Ok(metadata.cluster_id.map(|id| id.to_string()).unwrap_or_default())
//! }
//! ```

#[cfg(feature = "client")]
use super::ClientConnection;
use super::ConnError;
#[cfg(feature = "broker")]
use super::{IncomingRequest, ServerConnection};
#[cfg(feature = "client")]
use crate::Request;
#[cfg(any(feature = "client", feature = "broker"))]
use crate::ResponseFrame;
#[cfg(any(feature = "client", feature = "broker"))]
use bytes::BytesMut;
#[cfg(any(feature = "client", feature = "broker"))]
use tokio_util::codec::{Decoder, Encoder};

/// An I/O error from the transport, or a connection error from the sans-IO core.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The transport failed, or closed in the middle of a frame.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The connection refused what it read or was asked to write.
    #[error(transparent)]
    Conn(#[from] ConnError),
}

#[cfg(feature = "client")]
/// A request for [`ClientCodec`] to send: the body and the version to write it at.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingRequest {
    /// The version (see [`SupportedVersions::negotiate`](super::SupportedVersions::negotiate)).
    pub version: i16,
    /// The body; its API names the request.
    pub body: Request,
}

#[cfg(feature = "client")]
impl OutgoingRequest {
    /// `body` at `version`.
    pub fn new(version: i16, body: impl Into<Request>) -> Self {
        OutgoingRequest {
            version,
            body: body.into(),
        }
    }
}

#[cfg(feature = "client")]
/// The client side as a `tokio_util` codec: encodes [`OutgoingRequest`]s, decodes
/// [`ResponseFrame`]s in the order the requests went out.
#[derive(Debug, Clone, Default)]
pub struct ClientCodec {
    connection: ClientConnection,
}

#[cfg(feature = "client")]
impl ClientCodec {
    /// Wraps a connection (set its client id and options first).
    pub fn new(connection: ClientConnection) -> Self {
        ClientCodec { connection }
    }

    /// The connection, e.g. to see which requests are in flight.
    pub fn connection(&self) -> &ClientConnection {
        &self.connection
    }

    /// The connection, to send requests it has no `OutgoingRequest` form for
    /// ([`ClientConnection::send_encoded`]).
    pub fn connection_mut(&mut self) -> &mut ClientConnection {
        &mut self.connection
    }
}

#[cfg(feature = "client")]
impl Encoder<OutgoingRequest> for ClientCodec {
    type Error = CodecError;

    #[inline]
    fn encode(&mut self, item: OutgoingRequest, dst: &mut BytesMut) -> Result<(), CodecError> {
        self.connection.send(item.version, &item.body, dst)?;
        Ok(())
    }
}

#[cfg(feature = "client")]
impl Decoder for ClientCodec {
    type Item = ResponseFrame;
    type Error = CodecError;

    #[inline]
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<ResponseFrame>, CodecError> {
        Ok(self.connection.receive(src)?)
    }
}

#[cfg(feature = "broker")]
/// The server side as a `tokio_util` codec: decodes [`IncomingRequest`]s, encodes the
/// [`ResponseFrame`]s that answer them ([`IncomingRequest::respond`]), in order.
#[derive(Debug, Clone, Default)]
pub struct ServerCodec {
    connection: ServerConnection,
}

#[cfg(feature = "broker")]
impl ServerCodec {
    /// Wraps a connection (set its options first).
    pub fn new(connection: ServerConnection) -> Self {
        ServerCodec { connection }
    }

    /// The connection, e.g. to see which requests await a response.
    pub fn connection(&self) -> &ServerConnection {
        &self.connection
    }
}

#[cfg(feature = "broker")]
impl Encoder<ResponseFrame> for ServerCodec {
    type Error = CodecError;

    #[inline]
    fn encode(&mut self, item: ResponseFrame, dst: &mut BytesMut) -> Result<(), CodecError> {
        self.connection.send(&item, dst)?;
        Ok(())
    }
}

#[cfg(feature = "broker")]
impl Decoder for ServerCodec {
    type Item = IncomingRequest;
    type Error = CodecError;

    #[inline]
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<IncomingRequest>, CodecError> {
        Ok(self.connection.receive(src)?)
    }
}
