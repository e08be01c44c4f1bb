//! [`IncomingRequest`]: a request as the receiving side reads it, and the responses that
//! answer it.

use crate::messages::api_versions_response::{ApiVersion, ApiVersionsResponse};
use crate::messages::{RequestHeader, ResponseHeader};
use crate::ErrorCode;
use crate::{ApiKey, Request, Response, ResponseFrame, VersionRange};
#[cfg(feature = "json")]
use crate::{EncodeError, Message};

/// A request as a server reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingRequest {
    /// The header as sent; `request_api_version` is the version the client asked for.
    pub header: RequestHeader,
    /// The body.
    pub body: Request,
    /// The version the body was read at, and the version to answer at. It equals the
    /// header's version, except for an ApiVersions request at a version this crate cannot
    /// read: Kafka reads that as an empty version-0 request and answers at version 0
    /// ([`IncomingRequest::is_unsupported_api_versions`]).
    pub api_version: i16,
}

impl IncomingRequest {
    /// The API.
    pub fn api_key(&self) -> ApiKey {
        self.body.api_key()
    }

    /// The correlation id its response must carry.
    pub fn correlation_id(&self) -> i32 {
        self.header.correlation_id
    }

    /// Whether the client waits for a response (all but Produce with `acks = 0`).
    pub fn expects_response(&self) -> bool {
        self.body.expects_response()
    }

    /// Whether this is an ApiVersions request at a version this crate cannot read. Kafka
    /// answers it with [`IncomingRequest::unsupported_api_versions_response`], so that the
    /// client retries at a version both sides know.
    pub fn is_unsupported_api_versions(&self) -> bool {
        self.api_key() == ApiKey::ApiVersions && self.header.request_api_version != self.api_version
    }

    /// `{"header": …, "body": …}` in Kafka's JSON form, as [`RequestFrame::to_json`] writes it
    /// (the body at [`IncomingRequest::api_version`]).
    ///
    /// [`RequestFrame::to_json`]: crate::RequestFrame::to_json
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json(&self) -> Result<serde_json::Value, EncodeError> {
        self.to_json_with(&crate::json::JsonOptions::default())
    }

    /// [`IncomingRequest::to_json`] with `options` (a hook for `records` fields).
    #[cfg(feature = "json")]
    #[inline]
    pub fn to_json_with(
        &self,
        options: &crate::json::JsonOptions<'_>,
    ) -> Result<serde_json::Value, EncodeError> {
        crate::json::ValueSink::collect(|sink| self.write_json(options, sink))
    }

    /// [`IncomingRequest::to_json_with`] written token by token to `out` (a
    /// [`crate::json::JsonWriter`] streams the text with no tree). On an error `out` holds a
    /// partial value.
    #[cfg(feature = "json")]
    #[inline]
    pub fn write_json(
        &self,
        options: &crate::json::JsonOptions<'_>,
        out: &mut dyn crate::json::JsonSink,
    ) -> Result<(), EncodeError> {
        let header_version = self
            .api_key()
            .request_header_version(self.header.request_api_version);
        out.begin_object();
        out.key("header");
        self.header.write_json_with(header_version, options, out)?;
        out.key("body");
        self.body.write_json_with(self.api_version, options, out)?;
        out.end_object();
        Ok(())
    }

    /// The response frame carrying `body`: this request's correlation id and answer version.
    pub fn respond(&self, body: impl Into<Response>) -> ResponseFrame {
        ResponseFrame {
            api_version: self.api_version,
            header: ResponseHeader {
                correlation_id: self.correlation_id(),
                ..Default::default()
            },
            body: body.into(),
        }
    }

    /// Kafka's answer to an ApiVersions request it cannot read: a version-0 body with
    /// `UNSUPPORTED_VERSION` that lists only ApiVersions itself, at the versions the server
    /// speaks (`supported`).
    pub fn unsupported_api_versions_response(&self, supported: VersionRange) -> ResponseFrame {
        let mut frame = self.respond(ApiVersionsResponse {
            error_code: ErrorCode::UNSUPPORTED_VERSION.code(),
            api_keys: vec![ApiVersion {
                api_key: ApiKey::ApiVersions.key(),
                min_version: supported.min,
                max_version: supported.max,
                ..Default::default()
            }],
            ..Default::default()
        });
        frame.api_version = 0;
        frame
    }
}
