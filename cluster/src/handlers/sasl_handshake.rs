//! SaslHandshake: the client names a mechanism; the broker lists those it serves and, if
//! the named one is among them, takes SaslAuthenticate requests next (v1) or raw SASL tokens
//! (v0, each a size-prefixed frame with no header). A mechanism not served is
//! UNSUPPORTED_SASL_MECHANISM and the connection closes once that is answered. On a
//! listener without SASL, or once authenticated (no re-authentication: sessions report a
//! lifetime of 0), the answer is ILLEGAL_SASL_STATE, as Kafka's `KafkaApis` gives it.

use super::Context;
use crate::sasl::{Mechanism, Session};
use kafka_codec::messages::{SaslHandshakeRequest, SaslHandshakeResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::SaslHandshake;

pub fn handle(
    context: &Context<'_>,
    request: &SaslHandshakeRequest,
    session: &mut Session,
) -> SaslHandshakeResponse {
    if !session.awaits_handshake() {
        return SaslHandshakeResponse::default()
            .with_error_code(ErrorCode::ILLEGAL_SASL_STATE.code());
    }
    let mechanisms = Mechanism::ALL
        .iter()
        .map(|mechanism| mechanism.name().into())
        .collect();
    let answer = SaslHandshakeResponse::default().with_mechanisms(mechanisms);
    match Mechanism::from_name(&request.mechanism) {
        Some(mechanism) => {
            session.choose(mechanism, context.version == 0);
            answer
        }
        None => {
            session.fail();
            answer.with_error_code(ErrorCode::UNSUPPORTED_SASL_MECHANISM.code())
        }
    }
}
