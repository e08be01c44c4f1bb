//! IncrementalAlterConfigs: changes a topic's overrides (or a broker's dynamic overrides;
//! the empty broker name: every broker's) one config at a time: SET, DELETE (back to the
//! default), APPEND and SUBTRACT (list configs only: a value added once, or removed, from the
//! current list). The result is checked as AlterConfigs checks it (INVALID_CONFIG), all or
//! none per resource; `validate_only` changes nothing. A group's configs (resource type 32,
//! from `--as-version 4.0`): SET and DELETE, checked as Kafka checks a group's configs
//! (`crate::group_configs`).

use super::Context;
use crate::configs::{Kind, Target, GROUP};
use kafka_codec::messages::incremental_alter_configs_request::AlterConfigsResource;
use kafka_codec::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_codec::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::IncrementalAlterConfigs;

/// Kafka's `AlterConfigOp.OpType` codes.
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

pub fn handle(
    context: &Context<'_>,
    request: &IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsResponse {
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
    IncrementalAlterConfigsResponse::default().with_responses(responses)
}

fn alter(
    context: &Context<'_>,
    resource: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    if resource.resource_type == GROUP && crate::group_configs::offered(context.shared.release) {
        return alter_group(context, resource, validate_only);
    }
    if resource.resource_type == crate::client_metrics::RESOURCE_TYPE
        && crate::client_metrics::offered(context.shared.release)
    {
        return alter_client_metrics(context, resource, validate_only);
    }
    let mut state = context.shared.state();
    let target = Target::resolve(
        &state,
        &context.shared.brokers(),
        resource.resource_type,
        resource.resource_name.as_str(),
    )?;
    let definitions = target.definitions();
    let mut overrides = target.overrides(&state);
    let invalid = |message: String| (ErrorCode::INVALID_CONFIG, message);
    for config in &resource.configs {
        let name = config.name.as_str();
        let definition = definitions
            .get(name)
            .ok_or_else(|| invalid(format!("unknown config {name:?}")))?;
        let value = config.value.as_ref().map(|v| v.as_str());
        match config.config_operation {
            SET => {
                let value = value.ok_or_else(|| invalid(format!("SET {name} without a value")))?;
                overrides.insert(name.to_owned(), value.to_owned());
            }
            DELETE => {
                overrides.remove(name);
            }
            APPEND | SUBTRACT => {
                if definition.kind != Kind::List {
                    return Err(invalid(format!("{name} is not a list")));
                }
                let current = overrides
                    .get(name)
                    .cloned()
                    .or_else(|| definition.default.clone())
                    .unwrap_or_default();
                let changed = change_list(
                    &current,
                    value.unwrap_or_default(),
                    config.config_operation == APPEND,
                );
                overrides.insert(name.to_owned(), changed);
            }
            other => {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("config operation {other} is not SET, DELETE, APPEND or SUBTRACT"),
                ))
            }
        }
    }
    let names_min_isr = resource
        .configs
        .iter()
        .any(|config| config.name.as_str() == "min.insync.replicas");
    target.replace_naming(&mut state, overrides, names_min_isr, validate_only)
}

/// A client metrics subscription's configs (`crate::client_metrics`): SET and DELETE
/// (APPEND and SUBTRACT refused, as Kafka's controller refuses them), then Kafka's check of
/// all it would hold; no configs left deletes the subscription.
fn alter_client_metrics(
    context: &Context<'_>,
    resource: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let name = resource.resource_name.as_str();
    let mut metrics = context.shared.client_metrics();
    let mut configs = metrics.configs(name);
    for config in &resource.configs {
        let key = config.name.as_str();
        let value = config.value.as_ref().map(|v| v.as_str());
        match config.config_operation {
            SET => {
                configs.insert(key.to_owned(), value.unwrap_or_default().to_owned());
            }
            DELETE => {
                configs.remove(key);
            }
            // Kafka's controller knows no config types for CLIENT_METRICS resources, so no
            // key is a LIST to it (a 4.4 broker refuses APPEND to `metrics` so).
            APPEND | SUBTRACT => {
                return Err(not_a_list(config.config_operation, key));
            }
            other => {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("config operation {other} is not SET, DELETE, APPEND or SUBTRACT"),
                ))
            }
        }
    }
    metrics.replace(name, configs, validate_only)
}

/// A group's configs (`crate::group_configs`): SET and DELETE on its overrides, then Kafka's
/// check of all it would hold; APPEND and SUBTRACT are refused as Kafka's controller refuses
/// them for a group (it knows no list type for group configs).
fn alter_group(
    context: &Context<'_>,
    resource: &AlterConfigsResource,
    validate_only: bool,
) -> Result<(), (ErrorCode, String)> {
    let group = resource.resource_name.as_str();
    let mut state = context.shared.state();
    let mut props = state.configs.groups.get(group).cloned().unwrap_or_default();
    for config in &resource.configs {
        let name = config.name.as_str();
        match (config.config_operation, &config.value) {
            (SET, Some(value)) => {
                props.insert(name.to_owned(), value.as_str().to_owned());
            }
            (SET, None) => {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("SET {name} without a value"),
                ))
            }
            (DELETE, _) => {
                props.remove(name);
            }
            (APPEND | SUBTRACT, _) => {
                return Err(not_a_list(config.config_operation, name));
            }
            (other, _) => {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    format!("config operation {other} is not SET, DELETE, APPEND or SUBTRACT"),
                ))
            }
        }
    }
    crate::group_configs::replace(&mut state.configs.groups, group, props, validate_only)?;
    drop(state);
    if !validate_only {
        crate::group_configs::apply(context.shared, group);
    }
    Ok(())
}

/// A LIST config's value after APPEND (`append`) or SUBTRACT of the comma-separated
/// `changes`: an item is appended once, and subtracting removes every copy.
fn change_list(current: &str, changes: &str, append: bool) -> String {
    let mut items: Vec<&str> = current
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    for change in changes.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        if append {
            if !items.contains(&change) {
                items.push(change);
            }
        } else {
            items.retain(|item| *item != change);
        }
    }
    items.join(",")
}

/// Kafka's refusal of APPEND or SUBTRACT on a key it knows no LIST type for.
fn not_a_list(operation: i8, key: &str) -> (ErrorCode, String) {
    let op = if operation == APPEND {
        "APPEND"
    } else {
        "SUBTRACT"
    };
    (
        ErrorCode::INVALID_CONFIG,
        format!("Can't {op} to key {key} because its type is not LIST."),
    )
}
