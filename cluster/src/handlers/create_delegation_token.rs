//! CreateDelegationToken: a token for the caller, or for the owner it names, as Kafka 4.4's
//! broker (`KafkaApis.handleCreateTokenRequest`) checks and its controller
//! (`DelegationTokenControlManager`) makes it (see [`crate::tokens`]). The broker's refusals,
//! answered with timestamps -1, no id and no HMAC: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over
//! a connection that did not log in with SASL or logged in with a token;
//! DELEGATION_TOKEN_AUTHORIZATION_FAILED for another owner without CREATE_TOKENS on the
//! `User` resource naming it; INVALID_PRINCIPAL_TYPE for a renewer not of type `User`. The
//! controller's (timestamps 0): DELEGATION_TOKEN_AUTH_DISABLED without a secret key.

use super::Context;
use crate::acls::{operation, resource_type};
use crate::authorizer::{Authority, Need};
use crate::sasl::Session;
use crate::tokens::Principal;
use kafka_codec::messages::{CreateDelegationTokenRequest, CreateDelegationTokenResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::CreateDelegationToken;

pub fn handle(
    context: &Context<'_>,
    request: &CreateDelegationTokenRequest,
    session: &Session,
) -> CreateDelegationTokenResponse {
    let requester = caller(session);
    let owner = match request.owner_principal_name.as_deref() {
        Some(name) if !name.is_empty() => Principal {
            kind: request
                .owner_principal_type
                .as_deref()
                .unwrap_or_default()
                .to_owned(),
            name: name.to_owned(),
        },
        _ => requester.clone(),
    };
    let answer = |error: ErrorCode| {
        let response = CreateDelegationTokenResponse::default()
            .with_error_code(error.code())
            .with_principal_type(owner.kind.as_str().into())
            .with_principal_name(owner.name.as_str().into());
        // The requester is a v3 field: absent, it cannot be written.
        if context.version < 3 {
            return response;
        }
        response
            .with_token_requester_principal_type(requester.kind.as_str().into())
            .with_token_requester_principal_name(requester.name.as_str().into())
    };
    let refused = |error| {
        answer(error)
            .with_issue_timestamp_ms(-1)
            .with_expiry_timestamp_ms(-1)
            .with_max_timestamp_ms(-1)
    };
    if !allows_token_requests(session) {
        return refused(ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    }
    if owner != requester {
        let authority = Authority::new(context.shared, session.user(), context.peer.ip());
        let need = Need {
            resource_type: resource_type::USER,
            name: owner.to_string(),
            operation: operation::CREATE_TOKENS,
        };
        if !authority.may(&need) {
            return refused(ErrorCode::DELEGATION_TOKEN_AUTHORIZATION_FAILED);
        }
    }
    let renewers: Vec<Principal> = request
        .renewers
        .iter()
        .map(|renewer| Principal {
            kind: renewer.principal_type.to_string(),
            name: renewer.principal_name.to_string(),
        })
        .collect();
    if renewers.iter().any(|renewer| renewer.kind != "User") {
        return refused(ErrorCode::INVALID_PRINCIPAL_TYPE);
    }
    let id = context.shared.state().new_id().to_string();
    let mut users = context.shared.users();
    match users.tokens.create(
        crate::state::now_ms(),
        id,
        owner.clone(),
        requester.clone(),
        renewers,
        request.max_lifetime_ms,
    ) {
        Ok(token) => answer(ErrorCode::NONE)
            .with_issue_timestamp_ms(token.issue_ms)
            .with_expiry_timestamp_ms(token.expiry_ms)
            .with_max_timestamp_ms(token.max_ms)
            .with_token_id(token.id.as_str().into())
            .with_hmac(token.hmac.clone().into()),
        Err(error) => answer(error),
    }
}

/// The connection's principal: `User:` and its SASL user, else Kafka's `User:ANONYMOUS`.
pub(super) fn caller(session: &Session) -> Principal {
    Principal::user(session.user().unwrap_or("ANONYMOUS"))
}

/// Kafka's `KafkaApis.allowTokenRequests`: not over PLAINTEXT or SSL (here: a connection
/// that has not logged in with SASL), not by a principal that logged in with a token.
pub(super) fn allows_token_requests(session: &Session) -> bool {
    session.user().is_some() && !session.token_authenticated()
}
