//! Conversations with Kafka software: version negotiation, and a connection without I/O (in
//! the manner of `h2` and `quinn-proto`) for both sides and for an observer. Kafka's error
//! table is [`ErrorCode`](crate::ErrorCode), at the crate root: `quorum` needs it too.
//!
//! - [`SupportedVersions`]: what a peer supports, read from its `ApiVersionsResponse`;
//!   [`SupportedVersions::negotiate`] picks the highest version both sides speak, never an
//!   unstable one unless asked; [`ApiVersionsReply`] handles the ApiVersions fallback.
//! - [`ClientConnection`]: writes requests, numbers them, and reads the responses in order,
//!   each decoded at the API and version of the request it answers.
//! - [`ServerConnection`]: reads requests (ApiVersions at an unknown version as Kafka does)
//!   and writes responses in order with the right header version.
//! - [`Observer`]: follows both directions of a conversation it only watches (a tap).
//!
//! All of them work on `BytesMut` buffers the caller reads into and writes from, frame with
//! [`split_frame`](crate::split_frame) and enforce the [`DecodeLimits`](crate::DecodeLimits)
//! of their [`DecodeOptions`](crate::DecodeOptions). The `tokio` feature adds
//! `tokio_util::codec` implementations on top (the `conn::tokio` module).
//!
//! The methods that decode or encode a body are `#[inline]`, as the frames and the
//! generated dispatch under them are: the codecs of every compiled API are then generated in
//! the program that uses a connection, not in this library for every dependent.
//!
//! ```
//! use kafka_codec::bytes::BytesMut;
//! use kafka_codec::conn::{ApiVersionsReply, ClientConnection, ServerConnection, SupportedVersions};
//! use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse};
//! use kafka_codec::{ApiKey, Request, Response};
//!
//! let mut client = ClientConnection::new().with_client_id("example");
//! let mut server = ServerConnection::new();
//! let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
//!
//! // The client asks what the server speaks, at the newest ApiVersions it knows.
//! let version = ApiVersionsReply::first_version();
//! client.send(version, &Request::from(ApiVersionsRequest::default()), &mut to_server).unwrap();
//!
//! // The server answers with the stable versions of the APIs it serves.
//! let request = server.receive(&mut to_server).unwrap().unwrap();
//! let ours = SupportedVersions::stable([ApiKey::ApiVersions, ApiKey::Metadata]);
//! let answer = request.respond(ApiVersionsResponse::default().with_api_keys(ours.to_api_keys()));
//! server.send(&answer, &mut to_client).unwrap();
//!
//! // The client reads the table and negotiates.
//! let response = client.receive(&mut to_client).unwrap().unwrap();
//! let Response::ApiVersions(body) = &response.body else { unreachable!() };
//! let ApiVersionsReply::Supported(peer) = ApiVersionsReply::read(body, response.api_version).unwrap()
//! else { unreachable!() };
//! assert_eq!(peer.negotiate(ApiKey::Metadata), Ok(ApiKey::Metadata.valid_versions().max));
//! assert!(peer.negotiate(ApiKey::Fetch).is_err());
//! ```

//!
//! What is here follows the cargo features: version negotiation always;
//! the client connection with `client`, the server connection with `broker`, the observer
//! with both.

#[cfg(feature = "client")]
mod client;
#[cfg(any(feature = "client", feature = "broker"))]
mod decode;
mod error;
#[cfg(feature = "broker")]
mod incoming;
#[cfg(all(feature = "client", feature = "broker"))]
mod observer;
#[cfg(feature = "broker")]
mod server;
#[cfg(feature = "tokio")]
pub mod tokio;
mod versions;

#[cfg(feature = "client")]
pub use client::{ClientConnection, Sent};
#[cfg(feature = "broker")]
pub use decode::decode_request;
#[cfg(feature = "client")]
pub use decode::decode_response;
pub use error::{ConnError, InFlight, RawRequestHeader};
#[cfg(feature = "broker")]
pub use incoming::IncomingRequest;
#[cfg(all(feature = "client", feature = "broker"))]
pub use observer::{Direction, Observed, ObservedRequest, ObservedResponse, Observer};
#[cfg(feature = "broker")]
pub use server::ServerConnection;
pub use versions::{ApiVersionsReply, NegotiationError, SupportedVersions};
