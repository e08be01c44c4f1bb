//! ExpireDelegationToken: the token of an HMAC expires after the period given, or at once
//! (removed) for a negative one, as Kafka 4.4's controller expires it (see
//! [`crate::tokens::Tokens::expire`]). Refused by the broker (expiry -1):
//! DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as for CreateDelegationToken; by the controller
//! (expiry 0): DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND,
//! DELEGATION_TOKEN_OWNER_MISMATCH, DELEGATION_TOKEN_EXPIRED.

use super::create_delegation_token::{allows_token_requests, caller};
use super::Context;
use crate::sasl::Session;
use kafka_codec::messages::{ExpireDelegationTokenRequest, ExpireDelegationTokenResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::ExpireDelegationToken;

pub fn handle(
    context: &Context<'_>,
    request: &ExpireDelegationTokenRequest,
    session: &Session,
) -> ExpireDelegationTokenResponse {
    if !allows_token_requests(session) {
        return ExpireDelegationTokenResponse::default()
            .with_error_code(ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code())
            .with_expiry_timestamp_ms(-1);
    }
    let expired = context.shared.users().tokens.expire(
        crate::state::now_ms(),
        &request.hmac,
        &caller(session),
        request.expiry_time_period_ms,
    );
    match expired {
        Ok(expiry) => ExpireDelegationTokenResponse::default().with_expiry_timestamp_ms(expiry),
        Err(error) => ExpireDelegationTokenResponse::default().with_error_code(error.code()),
    }
}
