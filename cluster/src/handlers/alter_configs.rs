//! AlterConfigs: replaces all of a topic's overrides (or a broker's dynamic overrides; the
//! empty broker name: every broker's) with the configs given, each checked by name and type
//! (INVALID_CONFIG), all or none; `validate_only` checks without changing anything. A broker
//! config that needs a restart is INVALID_CONFIG too.

use super::Context;
use crate::configs::Target;
use kafka_codec::messages::alter_configs_request::AlterConfigsResource;
use kafka_codec::messages::alter_configs_response::AlterConfigsResourceResponse;
use kafka_codec::messages::{AlterConfigsRequest, AlterConfigsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::AlterConfigs;

pub fn handle(context: &Context<'_>, request: &AlterConfigsRequest) -> AlterConfigsResponse {
    let responses = request
        .resources
        .iter()
        .map(|resource| {
            let answer = AlterConfigsResourceResponse::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name.clone());
            match alter(context, resource, request.validate_only) {
                Ok(()) => answer,
                Err((error, message)) => answer
                    .with_error_code(error.code())
                    .with_error_message(Some(message.as_str().into())),
            }
        })
        .collect();
    AlterConfigsResponse::default().with_responses(responses)
}

fn alter(
    context: &Context<'_>,
    resource: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let mut state = context.shared.state();
    let target = Target::resolve(
        &state,
        &context.shared.brokers(),
        resource.resource_type,
        resource.resource_name.as_str(),
    )?;
    let mut overrides = std::collections::BTreeMap::new();
    for config in &resource.configs {
        let Some(value) = &config.value else {
            return Err((
                ErrorCode::INVALID_REQUEST,
                format!("{} has a null value", config.name.as_str()),
            ));
        };
        overrides.insert(config.name.as_str().to_owned(), value.as_str().to_owned());
    }
    target.replace(&mut state, overrides, validate_only)
}
