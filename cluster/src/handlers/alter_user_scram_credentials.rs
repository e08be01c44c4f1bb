//! AlterUserScramCredentials: deletes and upserts SCRAM credentials, the ones a SCRAM login
//! checks, as KRaft's `ScramControlManager.alterCredentials` does: the client sends the salt,
//! iterations and `SaltedPassword`, and the cluster keeps the salt, iterations and the two
//! keys derived from it. Per user: named twice in the request, DUPLICATE_RESOURCE; an empty
//! name or too few (under 4096) or too many (over 16384) iterations, UNACCEPTABLE_CREDENTIAL;
//! an unknown mechanism, UNSUPPORTED_SASL_MECHANISM; deleting a credential that does not
//! exist, RESOURCE_NOT_FOUND. The users that pass are changed; the others are not.

use super::Context;
use crate::sasl::{Mechanism, ScramCredential, MAX_ITERATIONS, MIN_ITERATIONS};
use kafka_codec::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion;
use kafka_codec::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_codec::messages::{AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::AlterUserScramCredentials;

type Refusal = (ErrorCode, &'static str);

const TWICE: Refusal = (
    ErrorCode::DUPLICATE_RESOURCE,
    "A user credential cannot be altered twice in the same request",
);

fn name_and_mechanism(name: &str, mechanism: i8) -> Result<Mechanism, Refusal> {
    if name.is_empty() {
        return Err((
            ErrorCode::UNACCEPTABLE_CREDENTIAL,
            "Username must not be empty",
        ));
    }
    Mechanism::from_scram_type(mechanism).ok_or((
        ErrorCode::UNSUPPORTED_SASL_MECHANISM,
        "Unknown SCRAM mechanism",
    ))
}

/// A user changed: Kafka sets the message to null, not the schema's default "".
fn success(name: &str) -> AlterUserScramCredentialsResult {
    AlterUserScramCredentialsResult::default()
        .with_user(name.into())
        .with_error_message(None)
}

pub fn handle(
    context: &Context<'_>,
    request: &AlterUserScramCredentialsRequest,
) -> AlterUserScramCredentialsResponse {
    let mut users = context.shared.users();
    // In request order: what passed its checks, and the refusals.
    let mut deletions: Vec<(String, Mechanism)> = Vec::new();
    let mut upsertions: Vec<(String, Mechanism, &ScramCredentialUpsertion)> = Vec::new();
    let mut refused: Vec<(String, Refusal)> = Vec::new();
    let is_refused =
        |refused: &[(String, Refusal)], name: &str| refused.iter().any(|(n, _)| n == name);
    for deletion in &request.deletions {
        let name = &*deletion.name;
        if is_refused(&refused, name) {
            continue;
        }
        if let Some(at) = deletions.iter().position(|(n, _)| n == name) {
            deletions.remove(at);
            refused.push((name.to_owned(), TWICE));
            continue;
        }
        let checked = name_and_mechanism(name, deletion.mechanism).and_then(|mechanism| {
            users.scram(name, mechanism).map(|_| mechanism).ok_or((
                ErrorCode::RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            ))
        });
        match checked {
            Ok(mechanism) => deletions.push((name.to_owned(), mechanism)),
            Err(refusal) => refused.push((name.to_owned(), refusal)),
        }
    }
    for upsertion in &request.upsertions {
        let name = &*upsertion.name;
        if is_refused(&refused, name) {
            continue;
        }
        let deleted = deletions.iter().position(|(n, _)| n == name);
        let upserted = upsertions.iter().position(|(n, ..)| n == name);
        if deleted.is_some() || upserted.is_some() {
            if let Some(at) = deleted {
                deletions.remove(at);
            }
            if let Some(at) = upserted {
                upsertions.remove(at);
            }
            refused.push((name.to_owned(), TWICE));
            continue;
        }
        let checked = name_and_mechanism(name, upsertion.mechanism).and_then(|mechanism| {
            if upsertion.iterations < MIN_ITERATIONS {
                Err((ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too few iterations"))
            } else if upsertion.iterations > MAX_ITERATIONS {
                Err((ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too many iterations"))
            } else {
                Ok(mechanism)
            }
        });
        match checked {
            Ok(mechanism) => upsertions.push((name.to_owned(), mechanism, upsertion)),
            Err(refusal) => refused.push((name.to_owned(), refusal)),
        }
    }
    let mut results = Vec::new();
    for (name, mechanism) in deletions {
        users.remove_scram(&name, mechanism);
        results.push(success(&name));
    }
    for (name, mechanism, upsertion) in upsertions {
        if let Some(credential) = ScramCredential::from_salted_password(
            mechanism,
            upsertion.salt.to_vec(),
            upsertion.iterations,
            &upsertion.salted_password,
        ) {
            users.set_scram(&name, mechanism, credential);
        }
        results.push(success(&name));
    }
    for (name, (error, message)) in refused {
        results.push(
            AlterUserScramCredentialsResult::default()
                .with_user(name.as_str().into())
                .with_error_code(error.code())
                .with_error_message(Some(message.into())),
        );
    }
    AlterUserScramCredentialsResponse::default().with_results(results)
}
