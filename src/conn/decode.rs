//! Decoding frames the way Kafka does, shared by both sides of a connection and the observer:
//! an ApiVersions request at a version the reader does not know is read as version 0, and the
//! version-0 answer to it is read as such.

#[cfg(feature = "broker")]
use super::incoming::IncomingRequest;
#[cfg(feature = "broker")]
use crate::frame::check_frame_size;
#[cfg(feature = "broker")]
use crate::messages::RequestHeader;
#[cfg(feature = "broker")]
use crate::wire::Decoder;
#[cfg(feature = "client")]
use crate::ErrorCode;
use crate::{ApiKey, DecodeError, DecodeOptions, Framing};
#[cfg(feature = "broker")]
use crate::{Message, Request, RequestFrame};
#[cfg(feature = "client")]
use crate::{Response, ResponseFrame};
use bytes::Bytes;

/// Decodes a request frame (without size prefix).
///
/// An ApiVersions request at a version outside this crate's range is read the way a Kafka
/// broker reads it: the header at the version's header version, the body not at all (an
/// empty version-0 request), so that the server can answer with `UNSUPPORTED_VERSION` and
/// the versions it does support.
#[cfg(feature = "broker")]
#[inline]
pub fn decode_request(
    frame: Bytes,
    options: &DecodeOptions,
) -> Result<IncomingRequest, DecodeError> {
    // `frame` is bare, as `split_frame` hands it out, whatever framing the options name.
    let options = &options.with_framing(Framing::Bare);
    let api = ApiKey::ApiVersions;
    match super::RawRequestHeader::peek(&frame) {
        Some(raw)
            if raw.api_key == api.key() && !api.valid_versions().contains(raw.api_version) =>
        {
            check_frame_size(frame.len(), &options.limits)?;
            let mut decoder = Decoder::with_limits(&frame, options.limits);
            let header = RequestHeader::decode_from(
                &mut decoder,
                api.request_header_version(raw.api_version),
            )?;
            Ok(IncomingRequest {
                header,
                body: Request::ApiVersions(Default::default()),
                api_version: 0,
            })
        }
        _ => {
            let RequestFrame { header, body } = RequestFrame::decode_with(frame, options)?;
            Ok(IncomingRequest {
                api_version: header.request_api_version,
                header,
                body,
            })
        }
    }
}

/// Decodes a response frame (without size prefix) to a request of `api` at `version`.
///
/// The ApiVersions fallback, as Kafka's clients read it: when the answer to ApiVersions at
/// version `v > 0` does not decode at `v` but does at version 0 with `UNSUPPORTED_VERSION`,
/// it is the broker saying it cannot read `v`, and the frame is returned at version 0.
#[cfg(feature = "client")]
#[inline]
pub fn decode_response(
    frame: Bytes,
    api: ApiKey,
    version: i16,
    options: &DecodeOptions,
) -> Result<ResponseFrame, DecodeError> {
    // `frame` is bare, as `split_frame` hands it out, whatever framing the options name.
    let options = &options.with_framing(Framing::Bare);
    match ResponseFrame::decode_with(frame.clone(), api, version, options) {
        Err(error) if api == ApiKey::ApiVersions && version != 0 => {
            let fallback = ResponseFrame::decode_with(frame, api, 0, options);
            let refused = matches!(
                &fallback,
                Ok(ResponseFrame { body: Response::ApiVersions(body), .. })
                    if ErrorCode::from(body.error_code) == ErrorCode::UNSUPPORTED_VERSION
            );
            if refused {
                fallback
            } else {
                Err(error)
            }
        }
        decoded => decoded,
    }
}
