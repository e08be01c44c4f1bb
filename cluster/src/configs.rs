//! Topic and broker configs: Kafka's defaults (`config-defaults.tsv`, read from the pinned
//! Kafka's ConfigDefs by `tools/config-defaults/run.sh`), the overrides AlterConfigs and
//! IncrementalAlterConfigs set, and what DescribeConfigs answers from both.
//!
//! A value is checked against its config's type as Kafka parses it (a number of the type's
//! width, `true`/`false`, a comma-separated list); Kafka's range and enumeration validators
//! (such as `min.insync.replicas >= 1`) are not applied. Of the overrides, `cleanup.policy`,
//! `retention.ms`, `retention.bytes` and `delete.retention.ms` change what the cluster does
//! (`state/cleaner.rs`); the others change nothing else.

use crate::state::State;
use crate::BrokerAddress;
use kafka_codec::ErrorCode;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("../config-defaults.tsv");

/// Kafka's `ConfigResource.Type` codes the cluster answers for.
pub const TOPIC: i8 = 2;
/// A broker (resource name: its id; empty: the cluster-wide dynamic defaults).
pub const BROKER: i8 = 4;

/// Kafka's `DescribeConfigsResponse.ConfigSource` codes.
pub mod source {
    /// A topic's own override.
    pub const TOPIC_CONFIG: i8 = 1;
    /// A dynamic override of one broker.
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    /// A dynamic override for every broker.
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    /// A broker's own setting (its id).
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    /// Kafka's default.
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// A config's type, as Kafka's ConfigDef types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` or `false`.
    Boolean,
    /// Any text.
    String,
    /// A 32-bit integer.
    Int,
    /// A 16-bit integer.
    Short,
    /// A 64-bit integer.
    Long,
    /// A floating-point number.
    Double,
    /// Comma-separated values.
    List,
    /// A class name.
    Class,
    /// A secret, never described.
    Password,
}

impl Kind {
    fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "BOOLEAN" => Kind::Boolean,
            "STRING" => Kind::String,
            "INT" => Kind::Int,
            "SHORT" => Kind::Short,
            "LONG" => Kind::Long,
            "DOUBLE" => Kind::Double,
            "LIST" => Kind::List,
            "CLASS" => Kind::Class,
            "PASSWORD" => Kind::Password,
            _ => return None,
        })
    }

    /// Kafka's `DescribeConfigsResponse.ConfigType` code (v3+).
    pub fn code(self) -> i8 {
        match self {
            Kind::Boolean => 1,
            Kind::String => 2,
            Kind::Int => 3,
            Kind::Short => 4,
            Kind::Long => 5,
            Kind::Double => 6,
            Kind::List => 7,
            Kind::Class => 8,
            Kind::Password => 9,
        }
    }

    /// Whether `value` parses as this type, as Kafka's `ConfigDef.parseType` would take it.
    pub fn accepts(self, value: &str) -> bool {
        let value = value.trim();
        match self {
            Kind::Boolean => {
                value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false")
            }
            Kind::Int => value.parse::<i32>().is_ok(),
            Kind::Short => value.parse::<i16>().is_ok(),
            Kind::Long => value.parse::<i64>().is_ok(),
            Kind::Double => value.parse::<f64>().is_ok(),
            Kind::Class => !value.is_empty(),
            Kind::String | Kind::List | Kind::Password => true,
        }
    }
}

/// One config as Kafka defines it.
#[derive(Debug, Clone)]
pub struct Definition {
    /// Its type.
    pub kind: Kind,
    /// The value a broker with default settings gives it (`None`: none).
    pub default: Option<String>,
    /// Whether its value is secret (never described).
    pub sensitive: bool,
    /// Whether a running broker cannot change it (broker configs only).
    pub read_only: bool,
    /// A topic config's primary broker synonym (`log.retention.ms` for `retention.ms`), the
    /// one DescribeConfigs names when it has a value.
    pub synonym: Option<String>,
}

/// Every topic config and every broker config.
#[derive(Debug, Default)]
pub struct Definitions {
    /// Topic configs by name.
    pub topic: BTreeMap<String, Definition>,
    /// Broker configs by name.
    pub broker: BTreeMap<String, Definition>,
}

/// The committed table, parsed once.
pub fn definitions() -> &'static Definitions {
    static PARSED: OnceLock<Definitions> = OnceLock::new();
    // Part of the crate and checked by its tests: a parse failure is a build defect.
    PARSED.get_or_init(|| parse(TABLE).expect("config-defaults.tsv is well formed"))
}

fn parse(text: &str) -> Result<Definitions, String> {
    let mut out = Definitions::default();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("scope\t") || line.is_empty() {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        let [scope, name, kind, default, sensitive, read_only, synonym] = columns[..] else {
            return Err(format!("line {}: not 7 columns", index + 1));
        };
        let definition = Definition {
            kind: Kind::parse(kind).ok_or_else(|| format!("line {}: type {kind}", index + 1))?,
            default: (default != "\\N").then(|| default.to_owned()),
            sensitive: sensitive == "true",
            read_only: read_only == "true",
            synonym: (synonym != "-").then(|| synonym.to_owned()),
        };
        let scope = match scope {
            "topic" => &mut out.topic,
            "broker" => &mut out.broker,
            other => return Err(format!("line {}: scope {other}", index + 1)),
        };
        scope.insert(name.to_owned(), definition);
    }
    Ok(out)
}

/// The overrides set by AlterConfigs and IncrementalAlterConfigs.
#[derive(Debug, Default)]
pub struct Overrides {
    /// Per topic name, its overrides.
    pub topics: BTreeMap<String, BTreeMap<String, String>>,
    /// Per broker resource name (a broker id, or empty for every broker), its dynamic
    /// overrides.
    pub brokers: BTreeMap<String, BTreeMap<String, String>>,
    /// Every broker's static settings, as its `server.properties` gives them
    /// ([`ClusterBuilder::broker_config`](crate::ClusterBuilder::broker_config)).
    pub statics: BTreeMap<String, String>,
}

impl Overrides {
    /// A broker config's static setting, else Kafka's default, parsed as `T` (`None`: a
    /// config without a value, or one that does not parse).
    pub fn static_or_default<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        let value = match self.statics.get(name) {
            Some(value) => value.clone(),
            None => definitions().broker.get(name)?.default.clone()?,
        };
        value.trim().to_ascii_lowercase().parse().ok()
    }
}

/// Checks a static broker setting: a known broker config (read-only ones included: they
/// are set before the broker starts) and a value of its type.
pub fn check_static(name: &str, value: &str) -> Result<(), String> {
    let Some(definition) = definitions().broker.get(name) else {
        return Err(format!("unknown broker config {name:?}"));
    };
    if !definition.kind.accepts(value) {
        return Err(format!(
            "{value:?} is not a valid {:?} for {name}",
            definition.kind
        ));
    }
    Ok(())
}

impl Overrides {
    /// What a freshly formatted Kafka 4 cluster holds: the cluster-wide `min.insync.replicas`
    /// at its default, which `kafka-storage format` writes (for eligible leader replicas,
    /// KIP-966), so topics describe it as a dynamic cluster default as they do on Kafka.
    pub fn formatted() -> Overrides {
        let mut overrides = Overrides::default();
        if let Some(value) = definitions()
            .broker
            .get("min.insync.replicas")
            .and_then(|d| d.default.clone())
        {
            overrides
                .brokers
                .entry(String::new())
                .or_default()
                .insert("min.insync.replicas".to_owned(), value);
        }
        overrides
    }
}

/// Checks `name = value` against `definitions` (the topic or broker table): the name must be
/// known (and, for a broker, changeable while running) and the value of its type.
pub fn check(
    definitions: &BTreeMap<String, Definition>,
    name: &str,
    value: &str,
) -> Result<(), String> {
    let Some(definition) = definitions.get(name) else {
        return Err(format!("unknown config {name:?}"));
    };
    if definition.read_only {
        return Err(format!("{name} cannot be changed while the broker runs"));
    }
    if !definition.kind.accepts(value) {
        return Err(format!(
            "{value:?} is not a valid {:?} for {name}",
            definition.kind
        ));
    }
    Ok(())
}

/// The config eligible leader replicas are counted against.
const MIN_ISR: &str = "min.insync.replicas";

/// What an AlterConfigs or IncrementalAlterConfigs resource names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A topic, by name.
    Topic(String),
    /// A broker, by id (empty: every broker).
    Broker(String),
}

/// An error code and its message for one resource.
pub type Failure = (ErrorCode, String);

impl Target {
    /// The resource `resource_type`/`name` of this cluster: a topic that exists, a broker
    /// id of the cluster, or the empty name (every broker).
    pub fn resolve(
        state: &State,
        brokers: &[BrokerAddress],
        resource_type: i8,
        name: &str,
    ) -> Result<Target, Failure> {
        match resource_type {
            TOPIC if state.topics.contains_key(name) => Ok(Target::Topic(name.to_owned())),
            TOPIC => Err((
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                format!("no topic {name:?}"),
            )),
            BROKER
                if name.is_empty()
                    || name
                        .parse::<i32>()
                        .is_ok_and(|id| brokers.iter().any(|b| b.node_id == id)) =>
            {
                Ok(Target::Broker(name.to_owned()))
            }
            BROKER => Err((
                ErrorCode::INVALID_REQUEST,
                format!("{name:?} is not a broker id of this cluster"),
            )),
            other => Err((
                ErrorCode::INVALID_REQUEST,
                format!("resource type {other} cannot be altered in this cluster"),
            )),
        }
    }

    /// The configs this kind of resource has.
    pub fn definitions(&self) -> &'static BTreeMap<String, Definition> {
        match self {
            Target::Topic(_) => &definitions().topic,
            Target::Broker(_) => &definitions().broker,
        }
    }

    /// Its overrides now.
    pub fn overrides(&self, state: &State) -> BTreeMap<String, String> {
        let map = match self {
            Target::Topic(name) => state.configs.topics.get(name),
            Target::Broker(name) => state.configs.brokers.get(name),
        };
        map.cloned().unwrap_or_default()
    }

    /// Checks every override in `overrides`, then (unless `validate_only`) makes them the
    /// resource's overrides.
    pub fn replace(
        &self,
        state: &mut State,
        overrides: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Failure> {
        for (name, value) in &overrides {
            check(self.definitions(), name, value)
                .map_err(|message| (ErrorCode::INVALID_CONFIG, message))?;
        }
        // With eligible leader replicas on (KIP-966), Kafka's controller refuses a
        // per-broker min.insync.replicas and the removal of the cluster-wide one, and a
        // change of either clears the ELRs it covers.
        let min_isr_changed = self.overrides(state).get(MIN_ISR) != overrides.get(MIN_ISR);
        if min_isr_changed && state.eligible_leader_replicas_enabled() {
            match self {
                Target::Broker(name) if !name.is_empty() => {
                    return Err((
                        ErrorCode::INVALID_CONFIG,
                        "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
                            .to_owned(),
                    ))
                }
                Target::Broker(_) if !overrides.contains_key(MIN_ISR) => {
                    return Err((
                        ErrorCode::INVALID_CONFIG,
                        "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
                            .to_owned(),
                    ))
                }
                _ => {}
            }
        }
        if !validate_only {
            let map = match self {
                Target::Topic(name) => state.configs.topics.entry(name.clone()),
                Target::Broker(name) => state.configs.brokers.entry(name.clone()),
            };
            *map.or_default() = overrides;
            if min_isr_changed {
                match self {
                    Target::Topic(name) => state.clear_eligible_leaders(Some(name)),
                    Target::Broker(_) => state.clear_eligible_leaders(None),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_has_kafkas_topic_and_broker_configs() {
        let definitions = definitions();
        let retention = &definitions.topic["retention.ms"];
        assert_eq!(retention.kind, Kind::Long);
        assert_eq!(retention.synonym.as_deref(), Some("log.retention.ms"));
        assert!(definitions.broker.contains_key("log.retention.hours"));
        assert!(definitions.broker.len() > definitions.topic.len());
    }

    #[test]
    fn values_are_checked_by_type() {
        assert!(Kind::Int.accepts("12"));
        assert!(!Kind::Int.accepts("12x"));
        assert!(!Kind::Int.accepts("3000000000"));
        assert!(Kind::Long.accepts("3000000000"));
        assert!(Kind::Boolean.accepts("TRUE"));
        assert!(!Kind::Boolean.accepts("yes"));
        assert!(Kind::Double.accepts("0.5"));
        assert!(parse("topic\tx\tINT\t1\tfalse\tfalse\n").is_err());
        assert!(parse("topic\tx\tWEIRD\t1\tfalse\tfalse\t-\n").is_err());
    }
}
