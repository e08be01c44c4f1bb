//! The API table: every API key with its versions, header rules and listeners, and the
//! [`Request`]/[`Response`] enums that dispatch a body by key.
//!
//! The table itself is generated from the schemas; the header-version rules are here.

include!(concat!(env!("OUT_DIR"), "/api.rs"));

/// A [`Message`] with its codec in both directions and, with the `json` feature, its JSON
/// form (from a value, and straight from bytes): the messages [`visit_messages`] hands out.
/// Every message is one when the crate is built with `client` and `broker`.
///
/// [`Message`]: crate::Message
#[cfg(all(feature = "client", feature = "broker", feature = "json"))]
pub trait MessageCodec:
    crate::Message
    + crate::message::EncodeFields
    + crate::message::DecodeFields
    + crate::message::JsonFields
    + crate::message::TranscodeFields
{
}
#[cfg(all(feature = "client", feature = "broker", feature = "json"))]
impl<
        M: crate::Message
            + crate::message::EncodeFields
            + crate::message::DecodeFields
            + crate::message::JsonFields
            + crate::message::TranscodeFields,
    > MessageCodec for M
{
}

/// A [`Message`] with its codec in both directions and, with the `json` feature, its JSON
/// form: the messages [`visit_messages`] hands out. Every message is one when the crate is
/// built with `client` and `broker`.
///
/// [`Message`]: crate::Message
#[cfg(all(feature = "client", feature = "broker", not(feature = "json")))]
pub trait MessageCodec:
    crate::Message + crate::message::EncodeFields + crate::message::DecodeFields
{
}
#[cfg(all(feature = "client", feature = "broker", not(feature = "json")))]
impl<M: crate::Message + crate::message::EncodeFields + crate::message::DecodeFields> MessageCodec
    for M
{
}

/// Something done once per message type, generically (see [`visit_messages`]).
#[cfg(all(feature = "client", feature = "broker"))]
pub trait MessageVisitor {
    /// Called once for each message type.
    fn visit<M: MessageCodec>(&mut self);
}

/// Something done once per message type that can also be generated at random (see
/// [`visit_random_messages`]).
#[cfg(all(feature = "client", feature = "broker", feature = "arbitrary"))]
pub trait RandomMessageVisitor {
    /// Called once for each message type.
    fn visit<M: MessageCodec + crate::random::Random>(&mut self);
}

/// Something done once per message type that has a view and can be generated at random (see
/// [`visit_viewable_messages`]).
#[cfg(all(
    feature = "client",
    feature = "broker",
    feature = "arbitrary",
    feature = "views"
))]
pub trait ViewableMessageVisitor {
    /// Called once for each request, response and header.
    fn visit<M: MessageCodec + crate::random::Random + crate::wire::view::Viewable + 'static>(
        &mut self,
    );
}

/// A kind of Kafka listener that serves an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listener {
    /// A ZooKeeper-mode broker (Kafka 3.x and older; Kafka 4 has none).
    ZkBroker,
    /// A KRaft broker.
    Broker,
    /// A KRaft controller.
    Controller,
}

impl ApiKey {
    /// The error for a frame of this API when its feature is off.
    #[cfg(any(feature = "client", feature = "broker"))]
    pub(crate) fn not_compiled(self) -> crate::DecodeErrorKind {
        crate::DecodeErrorKind::ApiNotCompiled {
            api: self.name(),
            feature: self.feature().unwrap_or_default(),
        }
    }

    /// The error for JSON of this API when its feature is off.
    #[cfg(feature = "json")]
    pub(crate) fn not_compiled_json(self) -> crate::JsonErrorKind {
        crate::JsonErrorKind::ApiNotCompiled {
            api: self.name(),
            feature: self.feature().unwrap_or_default(),
        }
    }

    /// The request header version for a request of this API at `version`: what the
    /// schema's `headerVersions` say (Kafka 4.5 on); for a schema without them, 2 when the
    /// request body is flexible, else 1 — except where Kafka says otherwise
    /// (`schemas/header-versions.tsv`): ControlledShutdown v0, sent by Kafka 0.8 brokers,
    /// has header version 0, without a client id.
    ///
    /// ```
    /// use kafka_codec::ApiKey;
    /// assert_eq!(ApiKey::Metadata.request_header_version(8), 1);
    /// assert_eq!(ApiKey::Metadata.request_header_version(9), 2);
    /// assert_eq!(ApiKey::ControlledShutdown.request_header_version(0), 0);
    /// assert_eq!(ApiKey::ControlledShutdown.request_header_version(1), 1);
    /// ```
    pub const fn request_header_version(self, version: i16) -> i16 {
        self.request_header_table(version)
    }

    /// The response header version for a response of this API at `version`: what the
    /// schema's `headerVersions` say; for a schema without them, 1 when the response body
    /// is flexible, else 0 — except that ApiVersions responses always use header version 0,
    /// so a client can read the header before it knows what the broker supports (the
    /// generator refuses `headerVersions` that say otherwise).
    ///
    /// ```
    /// use kafka_codec::ApiKey;
    /// assert_eq!(ApiKey::DescribeQuorum.response_header_version(0), 1);
    /// assert_eq!(ApiKey::ApiVersions.response_header_version(4), 0);
    /// ```
    pub const fn response_header_version(self, version: i16) -> i16 {
        self.response_header_table(version)
    }
}

impl ApiKey {
    /// The versions a peer may use without opting in to unstable ones: the valid versions less
    /// the highest when the schema marks it `latestVersionUnstable` (Kafka advertises that
    /// version only when unstable versions are enabled). `None` if no version is stable.
    ///
    /// ```
    /// use kafka_codec::{ApiKey, VersionRange};
    /// assert_eq!(ApiKey::Metadata.stable_versions(), Some(ApiKey::Metadata.valid_versions()));
    /// assert!(ApiKey::InitProducerId.latest_version_unstable());
    /// let valid = ApiKey::InitProducerId.valid_versions();
    /// assert_eq!(
    ///     ApiKey::InitProducerId.stable_versions(),
    ///     Some(VersionRange::new(valid.min, valid.max - 1))
    /// );
    /// ```
    pub const fn stable_versions(self) -> Option<crate::VersionRange> {
        let valid = self.valid_versions();
        if !self.latest_version_unstable() {
            Some(valid)
        } else if valid.max > valid.min {
            Some(crate::VersionRange::new(valid.min, valid.max - 1))
        } else {
            None
        }
    }
}

impl Request {
    /// Whether the peer answers this request: every request gets a response except a Produce
    /// with `acks = 0`, which Kafka never answers.
    ///
    /// ```
    /// use kafka_codec::messages::ProduceRequest;
    /// use kafka_codec::Request;
    /// let fire_and_forget = Request::from(ProduceRequest::default().with_acks(0));
    /// assert!(!fire_and_forget.expects_response());
    /// let acked = Request::from(ProduceRequest::default().with_acks(-1));
    /// assert!(acked.expects_response());
    /// ```
    pub fn expects_response(&self) -> bool {
        match *self {
            #[cfg(feature = "produce")]
            Request::Produce(ref produce) => produce.acks != 0,
            _ => true,
        }
    }
}

impl std::fmt::Display for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
