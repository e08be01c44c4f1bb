//! DescribeUserScramCredentials: each user's SCRAM mechanisms and iterations (never the
//! salt or keys), as KRaft's `ScramImage.describe` answers: no users named (null or empty)
//! lists every user with a credential; a user named twice is DUPLICATE_RESOURCE, one with
//! no credential RESOURCE_NOT_FOUND, each with Kafka's message naming the user.

use super::Context;
use kafka_codec::messages::describe_user_scram_credentials_response::{
    CredentialInfo, DescribeUserScramCredentialsResult,
};
use kafka_codec::messages::{
    DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse,
};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeUserScramCredentials;

pub fn handle(
    context: &Context<'_>,
    request: &DescribeUserScramCredentialsRequest,
) -> DescribeUserScramCredentialsResponse {
    let users = context.shared.users();
    let described: Vec<(String, Vec<(crate::sasl::Mechanism, i32)>)> = users
        .scram_users()
        .map(|(name, credentials)| (name.to_owned(), credentials))
        .collect();
    let infos = |credentials: &[(crate::sasl::Mechanism, i32)]| {
        credentials
            .iter()
            .filter_map(|(mechanism, iterations)| {
                Some(
                    CredentialInfo::default()
                        .with_mechanism(mechanism.scram_type()?)
                        .with_iterations(*iterations),
                )
            })
            .collect()
    };
    let named: Vec<&str> = request
        .users
        .iter()
        .flatten()
        .map(|user| &*user.name)
        .collect();
    let results = if named.is_empty() {
        described
            .iter()
            .map(|(name, credentials)| {
                DescribeUserScramCredentialsResult::default()
                    .with_user(name.as_str().into())
                    .with_credential_infos(infos(credentials))
            })
            .collect()
    } else {
        let mut results: Vec<DescribeUserScramCredentialsResult> = Vec::new();
        for (index, name) in named.iter().enumerate() {
            if named[..index].contains(name) {
                continue;
            }
            let result = DescribeUserScramCredentialsResult::default().with_user((*name).into());
            let result = if named[index + 1..].contains(name) {
                result
                    .with_error_code(ErrorCode::DUPLICATE_RESOURCE.code())
                    .with_error_message(Some(
                        format!(
                            "Cannot describe SCRAM credentials for the same user twice in a \
                             single request: {name}"
                        )
                        .as_str()
                        .into(),
                    ))
            } else {
                match described.iter().find(|(user, _)| user == name) {
                    Some((_, credentials)) => result.with_credential_infos(infos(credentials)),
                    None => result
                        .with_error_code(ErrorCode::RESOURCE_NOT_FOUND.code())
                        .with_error_message(Some(
                            format!(
                                "Attempt to describe a user credential that does not exist: \
                                 {name}"
                            )
                            .as_str()
                            .into(),
                        )),
                }
            };
            results.push(result);
        }
        results
    };
    DescribeUserScramCredentialsResponse::default().with_results(results)
}
