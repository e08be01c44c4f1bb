//! RenewDelegationToken: the token of an HMAC lives on, as Kafka 4.4's controller renews
//! it (see [`crate::tokens::Tokens::renew`]). Refused by the broker (expiry -1):
//! DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as for CreateDelegationToken; by the controller
//! (expiry 0): DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND,
//! DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_OWNER_MISMATCH.

use super::create_delegation_token::{allows_token_requests, caller};
use super::Context;
use crate::sasl::Session;
use kafka_codec::messages::{RenewDelegationTokenRequest, RenewDelegationTokenResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::RenewDelegationToken;

pub fn handle(
    context: &Context<'_>,
    request: &RenewDelegationTokenRequest,
    session: &Session,
) -> RenewDelegationTokenResponse {
    if !allows_token_requests(session) {
        return RenewDelegationTokenResponse::default()
            .with_error_code(ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code())
            .with_expiry_timestamp_ms(-1);
    }
    let renewed = context.shared.users().tokens.renew(
        crate::state::now_ms(),
        &request.hmac,
        &caller(session),
        request.renew_period_ms,
    );
    match renewed {
        Ok(expiry) => RenewDelegationTokenResponse::default().with_expiry_timestamp_ms(expiry),
        Err(error) => RenewDelegationTokenResponse::default().with_error_code(error.code()),
    }
}
