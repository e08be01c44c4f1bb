//! SaslAuthenticate (after a SaslHandshake v1): one token of the chosen mechanism each way.
//! PLAIN takes one token and answers an empty one; SCRAM takes the client's first message
//! (answered with the server's, salt and iterations included) and then its final one
//! (answered with the server's signature). A refused login is SASL_AUTHENTICATION_FAILED with
//! Kafka's message, and the connection closes once that is answered. A successful session's
//! lifetime (v1+) is 0: the cluster never asks clients to re-authenticate. Out of turn (no
//! handshake yet on a SASL listener, or SASL off, or already authenticated):
//! ILLEGAL_SASL_STATE.

use super::Context;
use crate::sasl::{Gate, Session};
use kafka_codec::messages::{SaslAuthenticateRequest, SaslAuthenticateResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::SaslAuthenticate;

pub fn handle(
    context: &Context<'_>,
    request: &SaslAuthenticateRequest,
    session: &mut Session,
) -> SaslAuthenticateResponse {
    if session.gate() != Gate::Authenticate {
        return SaslAuthenticateResponse::default()
            .with_error_code(ErrorCode::ILLEGAL_SASL_STATE.code())
            .with_error_message(Some(
                "SaslAuthenticate request received after successful authentication".into(),
            ));
    }
    let mut users = context.shared.users();
    match session.step(&mut users, &request.auth_bytes) {
        Ok(token) => SaslAuthenticateResponse::default()
            .with_auth_bytes(token.into())
            .with_session_lifetime_ms(0),
        Err(refused) => SaslAuthenticateResponse::default()
            .with_error_code(ErrorCode::SASL_AUTHENTICATION_FAILED.code())
            .with_error_message(Some(refused.message.as_str().into())),
    }
}
