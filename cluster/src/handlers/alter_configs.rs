//! AlterConfigs: replaces all of a topic's overrides (or a broker's dynamic overrides; the
//! empty broker name: every broker's) with the configs given, each checked by name and type
//! (INVALID_CONFIG), all or none; `validate_only` checks without changing anything. A broker
//! config that needs a restart is INVALID_CONFIG too. A group's configs (resource type 32,
//! from `--as-version 4.0`) are replaced the same way, checked as Kafka checks a group's
//! (`crate::group_configs`).

use super::Context;
use crate::configs::{Target, GROUP};
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
                // Kafka writes no message for a success (ApiError.NONE).
                Ok(()) => answer.with_error_message(None),
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
    if resource.resource_type == crate::client_metrics::RESOURCE_TYPE
        && crate::client_metrics::offered(context.shared.release)
    {
        // AlterConfigs replaces the subscription's configs with those named.
        let mut configs = std::collections::BTreeMap::new();
        for config in &resource.configs {
            let value = config.value.as_ref().map_or("", |v| v.as_str());
            configs.insert(config.name.as_str().to_owned(), value.to_owned());
        }
        return context.shared.client_metrics().replace(
            resource.resource_name.as_str(),
            configs,
            validate_only,
        );
    }
    let mut state = context.shared.state();
    let group =
        resource.resource_type == GROUP && crate::group_configs::offered(context.shared.release);
    let target = if group {
        None
    } else {
        Some(Target::resolve(
            &state,
            &context.shared.brokers(),
            resource.resource_type,
            resource.resource_name.as_str(),
        )?)
    };
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
    match target {
        Some(target) => target.replace(&mut state, overrides, validate_only),
        None => {
            let group = resource.resource_name.as_str();
            crate::group_configs::replace(
                &mut state.configs.groups,
                group,
                overrides,
                validate_only,
            )?;
            drop(state);
            if !validate_only {
                crate::group_configs::apply(context.shared, group);
            }
            Ok(())
        }
    }
}
