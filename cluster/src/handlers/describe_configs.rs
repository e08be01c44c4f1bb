//! DescribeConfigs: a topic's configs (its overrides, else the defaults a Kafka broker with
//! default settings gives them, from `config-defaults.tsv`) and a broker's (its dynamic
//! overrides, else its static settings, `ClusterBuilder::broker_config` and its id, else
//! Kafka's defaults). Sources, read-only flags,
//! types (v3+) and synonyms (v1+, when asked: the levels that give the config a value, for a
//! topic its override, then its primary broker synonym's default) as Kafka reports them; sensitive values are never shown; no
//! documentation is returned. A group's configs (resource type 32, from `--as-version 4.0`;
//! `crate::group_configs`): each not internal and each the group sets, its override (source
//! GROUP_CONFIG) or its broker synonym's value, any group id. An unknown topic is
//! UNKNOWN_TOPIC_OR_PARTITION; another resource type, a broker id not in the cluster, or an
//! empty group id, INVALID_REQUEST.

use super::Context;
use crate::configs::{self, definitions, source, Definition, BROKER, GROUP, TOPIC};
use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
use kafka_codec::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_codec::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::DescribeConfigs;

/// The broker configs that hold a broker's id, which a broker reports as its own setting.
const ID_CONFIGS: [&str; 2] = ["broker.id", "node.id"];

pub fn handle(context: &Context<'_>, request: &DescribeConfigsRequest) -> DescribeConfigsResponse {
    let results = request
        .resources
        .iter()
        .map(|resource| {
            let answer = DescribeConfigsResult::default()
                .with_resource_type(resource.resource_type)
                .with_resource_name(resource.resource_name.clone());
            match describe(context, request.include_synonyms, resource) {
                Ok(configs) => answer.with_configs(configs),
                Err((error, message)) => answer
                    .with_error_code(error.code())
                    .with_error_message(Some(message.as_str().into())),
            }
        })
        .collect();
    DescribeConfigsResponse::default().with_results(results)
}

type Failure = (ErrorCode, String);

fn describe(
    context: &Context<'_>,
    include_synonyms: bool,
    resource: &DescribeConfigsResource,
) -> Result<Vec<DescribeConfigsResourceResult>, Failure> {
    let name = resource.resource_name.as_str();
    let state = context.shared.state();
    // Null or empty keys: every config (Kafka's `ConfigHelper`, as a 4.4 broker answers an
    // empty list for a client metrics subscription).
    let wanted = |config: &str| {
        resource
            .configuration_keys
            .as_ref()
            .is_none_or(|keys| keys.is_empty() || keys.iter().any(|key| key.as_str() == config))
    };
    let describer = Describer {
        version: context.version,
        include_synonyms,
    };
    match resource.resource_type {
        TOPIC => {
            if !state.topics.contains_key(name) {
                return Err((
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("no topic {name:?}"),
                ));
            }
            let overrides = state.configs.topics.get(name);
            let brokers = [
                state.configs.brokers.get(&context.node_id.to_string()),
                state.configs.brokers.get(""),
                Some(&state.configs.statics),
            ];
            Ok(definitions()
                .topic
                .iter()
                .filter(|(config, _)| wanted(config))
                .map(|(config, definition)| {
                    let set = overrides.and_then(|o| o.get(config));
                    describer.topic(config, definition, set, brokers)
                })
                .collect())
        }
        BROKER => {
            let none = BTreeMap::new();
            let defaults = state.configs.brokers.get("").unwrap_or(&none);
            if name.is_empty() {
                // The cluster-wide dynamic defaults: only those set.
                return Ok(defaults
                    .iter()
                    .filter(|(config, _)| wanted(config))
                    .filter_map(|(config, value)| {
                        let definition = definitions().broker.get(config)?;
                        Some(describer.entry(
                            config,
                            definition,
                            Some(value.clone()),
                            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
                            Vec::new(),
                        ))
                    })
                    .collect());
            }
            let id: i32 = name
                .parse()
                .ok()
                .filter(|id| context.shared.brokers().iter().any(|b| b.node_id == *id))
                .ok_or_else(|| {
                    (
                        ErrorCode::INVALID_REQUEST,
                        format!("{name:?} is not a broker id of this cluster"),
                    )
                })?;
            let own = state.configs.brokers.get(name).unwrap_or(&none);
            Ok(definitions()
                .broker
                .iter()
                .filter(|(config, _)| wanted(config))
                .map(|(config, definition)| {
                    // The levels that give it a value, the first winning, as Kafka lists
                    // them: this broker's dynamic override, the cluster-wide one, its static
                    // setting (the builder's, or its id), Kafka's default.
                    let id_config = ID_CONFIGS
                        .contains(&config.as_str())
                        .then(|| id.to_string());
                    let levels = [
                        (own.get(config).cloned(), source::DYNAMIC_BROKER_CONFIG),
                        (
                            defaults.get(config).cloned(),
                            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
                        ),
                        (
                            id_config.or_else(|| state.configs.statics.get(config).cloned()),
                            source::STATIC_BROKER_CONFIG,
                        ),
                        (definition.default.clone(), source::DEFAULT_CONFIG),
                    ];
                    let synonyms: Vec<(&str, Option<String>, i8)> = levels
                        .into_iter()
                        .filter(|(value, _)| value.is_some())
                        .map(|(value, level)| (config.as_str(), value, level))
                        .collect();
                    let (value, source) = synonyms
                        .first()
                        .map_or((None, source::DEFAULT_CONFIG), |(_, value, level)| {
                            (value.clone(), *level)
                        });
                    describer.entry(config, definition, value, source, synonyms)
                })
                .collect())
        }
        crate::client_metrics::RESOURCE_TYPE
            if crate::client_metrics::offered(context.shared.release) =>
        {
            if name.is_empty() {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    "Client metrics subscription name must not be empty".to_owned(),
                ));
            }
            drop(state);
            // Every config, set or at its default (Kafka describes a subscription that does
            // not exist as all defaults), its own value as the one synonym.
            let set = context.shared.client_metrics().configs(name);
            Ok(crate::client_metrics::CONFIGS
                .iter()
                .filter(|(config, _)| wanted(config))
                .map(|&(config, default)| {
                    let definition = Definition {
                        kind: if config == crate::client_metrics::INTERVAL_MS {
                            configs::Kind::Int
                        } else {
                            configs::Kind::List
                        },
                        default: Some(default.to_owned()),
                        sensitive: false,
                        read_only: false,
                        synonym: None,
                    };
                    match set.get(config) {
                        Some(value) => describer.entry(
                            config,
                            &definition,
                            Some(value.clone()),
                            source::CLIENT_METRICS_CONFIG,
                            vec![(config, Some(value.clone()), source::CLIENT_METRICS_CONFIG)],
                        ),
                        None => describer.entry(
                            config,
                            &definition,
                            Some(default.to_owned()),
                            source::DEFAULT_CONFIG,
                            Vec::new(),
                        ),
                    }
                })
                .collect())
        }
        GROUP if crate::group_configs::offered(context.shared.release) => {
            if name.is_empty() {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    "Group name must not be empty".to_owned(),
                ));
            }
            let brokers = [
                state.configs.brokers.get(&context.node_id.to_string()),
                state.configs.brokers.get(""),
            ];
            Ok(
                crate::group_configs::describe(state.configs.groups.get(name), brokers)
                    .into_iter()
                    .filter(|described| wanted(&described.definition.name))
                    .map(|described| {
                        let synonyms = described
                            .synonyms
                            .iter()
                            .map(|(name, value, level)| (name.as_str(), value.clone(), *level))
                            .collect();
                        describer.entry(
                            &described.definition.name,
                            &described.definition.as_definition(),
                            described.value,
                            described.source,
                            synonyms,
                        )
                    })
                    .collect(),
            )
        }
        other => Err((
            ErrorCode::INVALID_REQUEST,
            format!("resource type {other} is not described by this cluster"),
        )),
    }
}

/// Every config of a topic whose overrides are `overrides`, as DescribeConfigs v1 describes
/// them without synonyms: what CreateTopics v5+ returns for a topic it creates (or would).
pub(crate) fn topic_configs(
    state: &crate::state::State,
    node_id: i32,
    overrides: &BTreeMap<String, String>,
) -> Vec<DescribeConfigsResourceResult> {
    let describer = Describer {
        version: 1,
        include_synonyms: false,
    };
    let brokers = [
        state.configs.brokers.get(&node_id.to_string()),
        state.configs.brokers.get(""),
        Some(&state.configs.statics),
    ];
    definitions()
        .topic
        .iter()
        .map(|(config, definition)| {
            describer.topic(config, definition, overrides.get(config), brokers)
        })
        .collect()
}

struct Describer {
    version: i16,
    include_synonyms: bool,
}

impl Describer {
    /// A topic config: its override, else its primary broker synonym's value at the first
    /// level that has one (this broker's dynamic override, the cluster-wide one, Kafka's
    /// default), else the default the table gives it. Kafka lists, as synonyms, the override
    /// and then the primary synonym at every level that gives it a value (the broker
    /// synonyms from the primary one on): `retention.ms` takes its default from
    /// `log.retention.hours`, but its primary `log.retention.ms` has no default, so a broker
    /// with default settings lists no synonym for it.
    fn topic(
        &self,
        name: &str,
        definition: &Definition,
        set: Option<&String>,
        brokers: [Option<&BTreeMap<String, String>>; 3],
    ) -> DescribeConfigsResourceResult {
        let mut synonyms: Vec<(&str, Option<String>, i8)> = Vec::new();
        if let Some(value) = set {
            synonyms.push((name, Some(value.clone()), source::TOPIC_CONFIG));
        }
        if let Some(primary) = &definition.synonym {
            let [own, cluster, statics] = brokers;
            let levels = [
                (
                    own.and_then(|o| o.get(primary)).cloned(),
                    source::DYNAMIC_BROKER_CONFIG,
                ),
                (
                    cluster.and_then(|c| c.get(primary)).cloned(),
                    source::DYNAMIC_DEFAULT_BROKER_CONFIG,
                ),
                (
                    statics.and_then(|s| s.get(primary)).cloned(),
                    source::STATIC_BROKER_CONFIG,
                ),
                (
                    configs::definitions()
                        .broker
                        .get(primary)
                        .and_then(|d| d.default.clone()),
                    source::DEFAULT_CONFIG,
                ),
            ];
            for (value, level) in levels {
                if value.is_some() {
                    synonyms.push((primary.as_str(), value, level));
                }
            }
        }
        let (value, config_source) = match synonyms.first() {
            Some((_, value, level)) if *level != source::DEFAULT_CONFIG => (value.clone(), *level),
            _ => (definition.default.clone(), source::DEFAULT_CONFIG),
        };
        self.entry(name, definition, value, config_source, synonyms)
    }

    fn entry(
        &self,
        name: &str,
        definition: &Definition,
        value: Option<String>,
        config_source: i8,
        synonyms: Vec<(&str, Option<String>, i8)>,
    ) -> DescribeConfigsResourceResult {
        let shown = |value: Option<String>| {
            if definition.sensitive {
                None
            } else {
                value.map(|v| v.as_str().into())
            }
        };
        let synonyms = if self.include_synonyms && self.version >= 1 {
            synonyms
                .into_iter()
                .map(|(name, value, source)| {
                    DescribeConfigsSynonym::default()
                        .with_name(name.into())
                        .with_value(shown(value))
                        .with_source(source)
                })
                .collect()
        } else {
            Vec::new()
        };
        // Each field only at the versions that have it: `IsDefault` v0, `ConfigSource`
        // v1+ (its default otherwise), `ConfigType` v3+.
        let mut entry = DescribeConfigsResourceResult::default()
            .with_name(name.into())
            .with_value(shown(value))
            .with_read_only(definition.read_only)
            .with_is_sensitive(definition.sensitive)
            .with_synonyms(synonyms)
            .with_documentation(None);
        if self.version == 0 {
            entry = entry.with_is_default(config_source == source::DEFAULT_CONFIG);
        } else {
            entry = entry.with_config_source(config_source);
        }
        if self.version >= 3 {
            entry = entry.with_config_type(definition.kind.code());
        }
        entry
    }
}
