//! DescribeDelegationToken: the tokens the caller may see, as Kafka 4.4's broker lists them
//! (`KafkaApis.handleDescribeTokensRequest`, `DelegationTokenManager.filterToken`): owners
//! null lists every token, an empty list none; a token is listed when its owner, requester
//! or a renewer is among the owners asked for, and the caller is its owner, requester or a
//! renewer, or may DESCRIBE the `DelegationToken` resource of its id, or DESCRIBE_TOKENS on
//! the `User` resource of its owner. DELEGATION_TOKEN_REQUEST_NOT_ALLOWED as for
//! CreateDelegationToken; DELEGATION_TOKEN_AUTH_DISABLED without a secret key. Tokens in id
//! order (Kafka's cache has none); an expired one is listed until the sweep removes it.

use super::create_delegation_token::{allows_token_requests, caller};
use super::Context;
use crate::acls::{operation, resource_type};
use crate::authorizer::{Authority, Need};
use crate::sasl::Session;
use crate::tokens::Principal;
use kafka_codec::messages::describe_delegation_token_response::{
    DescribedDelegationToken, DescribedDelegationTokenRenewer,
};
use kafka_codec::messages::{DescribeDelegationTokenRequest, DescribeDelegationTokenResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeDelegationToken;

pub fn handle(
    context: &Context<'_>,
    request: &DescribeDelegationTokenRequest,
    session: &Session,
) -> DescribeDelegationTokenResponse {
    let refused =
        |error: ErrorCode| DescribeDelegationTokenResponse::default().with_error_code(error.code());
    if !allows_token_requests(session) {
        return refused(ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    }
    let mut users = context.shared.users();
    if !users.tokens.enabled() {
        return refused(ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED);
    }
    let owners: Option<Vec<Principal>> = request.owners.as_ref().map(|owners| {
        owners
            .iter()
            .map(|owner| Principal {
                kind: owner.principal_type.to_string(),
                name: owner.principal_name.to_string(),
            })
            .collect()
    });
    if owners.as_ref().is_some_and(Vec::is_empty) {
        return DescribeDelegationTokenResponse::default();
    }
    let me = caller(session);
    let authority = Authority::new(context.shared, session.user(), context.peer.ip());
    let may = |resource_type, name: String, operation| {
        authority.may(&Need {
            resource_type,
            name,
            operation,
        })
    };
    let tokens = users
        .tokens
        .all(crate::state::now_ms())
        .filter(|token| {
            owners
                .as_ref()
                .is_none_or(|owners| owners.iter().any(|owner| token.owner_or_renewer(owner)))
        })
        .filter(|token| {
            token.owner_or_renewer(&me)
                || may(
                    resource_type::DELEGATION_TOKEN,
                    token.id.clone(),
                    operation::DESCRIBE,
                )
                || may(
                    resource_type::USER,
                    token.owner.to_string(),
                    operation::DESCRIBE_TOKENS,
                )
        })
        .map(|token| {
            let described = DescribedDelegationToken::default()
                .with_principal_type(token.owner.kind.as_str().into())
                .with_principal_name(token.owner.name.as_str().into());
            // The requester is a v3 field: absent, it cannot be written.
            let described = if context.version >= 3 {
                described
                    .with_token_requester_principal_type(token.requester.kind.as_str().into())
                    .with_token_requester_principal_name(token.requester.name.as_str().into())
            } else {
                described
            };
            described
                .with_issue_timestamp(token.issue_ms)
                .with_expiry_timestamp(token.expiry_ms)
                .with_max_timestamp(token.max_ms)
                .with_token_id(token.id.as_str().into())
                .with_hmac(token.hmac.clone().into())
                .with_renewers(
                    token
                        .renewers
                        .iter()
                        .map(|renewer| {
                            DescribedDelegationTokenRenewer::default()
                                .with_principal_type(renewer.kind.as_str().into())
                                .with_principal_name(renewer.name.as_str().into())
                        })
                        .collect(),
                )
        })
        .collect();
    DescribeDelegationTokenResponse::default().with_tokens(tokens)
}
