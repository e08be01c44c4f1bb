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
/// A group, by id (Kafka 4.0+; `crate::group_configs`).
pub const GROUP: i8 = 32;

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
    /// A group's own override (`crate::group_configs`).
    pub const GROUP_CONFIG: i8 = 8;
    /// A client metrics subscription's own value.
    pub const CLIENT_METRICS_CONFIG: i8 = 7;
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
    pub(crate) fn parse(text: &str) -> Option<Kind> {
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
    /// Per group id, its overrides (`crate::group_configs`).
    pub groups: BTreeMap<String, BTreeMap<String, String>>,
    /// Every broker's static settings (as its `server.properties` gives them), those of
    /// [`STATIC_SETTINGS`] that `ClusterBuilder::broker_config` set; DescribeConfigs shows
    /// them as STATIC_BROKER_CONFIG.
    pub statics: BTreeMap<String, String>,
}

/// The static broker settings the cluster follows: Metadata's topic auto-creation, the
/// partitions and replicas a topic gets when CreateTopics (or auto-creation) names none, the
/// automatic leader rebalance (`control/rebalance.rs`) and how long an unfenced broker takes
/// to rejoin the ISRs (`control/fencing.rs`), the delegation tokens' key and lifetimes
/// (`crate::tokens`), the replicas of the coordinators' internal partitions (who takes over a
/// fenced coordinator, `control/fencing.rs`). Others are refused rather than taken and ignored.
pub const STATIC_SETTINGS: [&str; 12] = [
    "auto.create.topics.enable",
    "num.partitions",
    "default.replication.factor",
    "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds",
    "replica.fetch.wait.max.ms",
    // Delegation tokens (`crate::tokens`).
    crate::tokens::SECRET_KEY,
    crate::tokens::MAX_LIFETIME_MS,
    crate::tokens::EXPIRY_TIME_MS,
    crate::tokens::CHECK_INTERVAL_MS,
    OFFSETS_REPLICATION_FACTOR,
    TRANSACTIONS_REPLICATION_FACTOR,
];

/// The replicas of each `__consumer_offsets` partition (Kafka's default 3).
pub const OFFSETS_REPLICATION_FACTOR: &str = "offsets.topic.replication.factor";
/// The replicas of each `__transaction_state` partition (Kafka's default 3). The cluster
/// places both internal topics alike (the same partition count and hash), so the two must be
/// set alike.
pub const TRANSACTIONS_REPLICATION_FACTOR: &str = "transaction.state.log.replication.factor";

/// Checks a static broker setting as a Kafka broker checks its `server.properties` at
/// start: one the cluster follows ([`STATIC_SETTINGS`]), of its type, the counts and the
/// rebalance interval at least 1, the fetch wait at least 0.
pub fn check_static_setting(name: &str, value: &str) -> Result<(), String> {
    if !STATIC_SETTINGS.contains(&name) {
        return Err(format!(
            "{name} is not a broker setting this cluster follows (it follows {})",
            STATIC_SETTINGS.join(", ")
        ));
    }
    let definition = &definitions().broker[name];
    if !definition.kind.accepts(value) {
        return Err(format!(
            "{value:?} is not a valid {:?} for {name}",
            definition.kind
        ));
    }
    let least = match name {
        "replica.fetch.wait.max.ms" => 0,
        _ => 1,
    };
    // A password is never parsed, nor repeated in an error.
    let numeric = !matches!(definition.kind, Kind::Boolean | Kind::Password);
    if numeric && value.trim().parse::<i64>().is_ok_and(|n| n < least) {
        return Err(format!(
            "{name} must be at least {least}, not {}",
            value.trim()
        ));
    }
    Ok(())
}

impl Overrides {
    /// The broker setting `name`: its static value, else Kafka's default.
    pub fn broker_setting(&self, name: &str) -> Option<String> {
        self.statics
            .get(name)
            .cloned()
            .or_else(|| definitions().broker.get(name)?.default.clone())
    }

    /// [`broker_setting`](Self::broker_setting) parsed as `T` (`None`: a config without a
    /// value, or one that does not parse).
    pub fn static_or_default<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.broker_setting(name)?
            .trim()
            .to_ascii_lowercase()
            .parse()
            .ok()
    }

    /// Whether Metadata creates the topics it is asked for (`auto.create.topics.enable`).
    pub fn auto_create_topics(&self) -> bool {
        self.broker_setting("auto.create.topics.enable")
            .is_some_and(|value| value.trim().eq_ignore_ascii_case("true"))
    }

    /// The replicas of each coordinator's internal partition
    /// ([`OFFSETS_REPLICATION_FACTOR`], equal to [`TRANSACTIONS_REPLICATION_FACTOR`]): the
    /// coordinator and the brokers after it, as many as there are.
    pub fn coordinator_replication_factor(&self) -> i16 {
        self.broker_setting(OFFSETS_REPLICATION_FACTOR)
            .and_then(|value| value.trim().parse::<i16>().ok())
            .unwrap_or(3)
    }

    /// The partitions (`num.partitions`) and replication factor
    /// (`default.replication.factor`) of a topic created without its own.
    pub fn topic_defaults(&self) -> (i32, i16) {
        let number = |name: &str| {
            self.broker_setting(name)
                .and_then(|value| value.trim().parse::<i64>().ok())
                .unwrap_or(1)
        };
        let partitions = i32::try_from(number("num.partitions")).unwrap_or(i32::MAX);
        let factor = i16::try_from(number("default.replication.factor")).unwrap_or(i16::MAX);
        (partitions, factor)
    }
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
/// Checks a topic's configs as Kafka 4.4's controller checks those a CreateTopics,
/// AlterConfigs or IncrementalAlterConfigs gives (`ControllerConfigurationValidator`, then
/// `LogConfig`'s ConfigDef): every name must be a topic config, no value null, and each value
/// of its type and within its validator. The message is Kafka's (compared byte for byte with
/// a real broker's CreateTopics answers by `tools/clients/cluster_create_topics_vs_broker.py`).
/// Kafka parses the values in its own definition order and names the first bad one; here
/// they are checked in the order given.
pub fn check_topic_configs<'a>(
    configs: impl IntoIterator<Item = (&'a str, Option<&'a str>)> + Clone,
) -> Result<(), String> {
    let topic = &definitions().topic;
    for (name, _) in configs.clone() {
        if !topic.contains_key(name) {
            return Err(format!("Unknown topic config name: {name}"));
        }
    }
    for (name, value) in configs.clone() {
        if value.is_none() {
            return Err(format!(
                "Null value not supported for topic configs: {name}"
            ));
        }
    }
    for (name, value) in configs {
        let (Some(definition), Some(value)) = (topic.get(name), value) else {
            continue;
        };
        check_topic_value(name, definition.kind, value).map_err(|(shown, why)| {
            format!("Invalid value {shown} for configuration {name}: {why}")
        })?;
        if name == "remote.storage.enable" && value.trim().eq_ignore_ascii_case("true") {
            // The cluster has no remote storage, as a broker without
            // `remote.log.storage.system.enable`.
            return Err(
                "Tiered Storage functionality is disabled in the broker. Topic cannot be \
                        configured with remote log storage."
                    .to_owned(),
            );
        }
    }
    Ok(())
}

/// What Kafka's validator of a topic config takes, beyond its type: facts read from a Kafka
/// 4.4 broker's refusals (each config given values outside and at its bounds).
enum Rule {
    /// At least this.
    AtLeast(i64),
    /// Within these bounds, both included.
    Between(i64, i64),
    /// Within these bounds, or this one value (the gzip level's -1).
    BetweenOr(i64, i64, i64),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A list each of whose items is one of these.
    ListOf(&'static [&'static str]),
    /// `*`, or a list of `partition:broker` pairs (the throttled replica lists).
    Replicas,
}

fn topic_rule(name: &str) -> Option<Rule> {
    use Rule::*;
    Some(match name {
        "cleanup.policy" => ListOf(&["compact", "delete"]),
        "compression.gzip.level" => BetweenOr(1, 9, -1),
        "compression.lz4.level" => Between(1, 17),
        "compression.type" => OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
        "compression.zstd.level" => Between(-131_072, 22),
        "message.timestamp.type" => OneOf(&["CreateTime", "LogAppendTime"]),
        "max.decompressed.message.bytes" => Between(1, 2_147_483_639),
        "min.cleanable.dirty.ratio" => Between(0, 1),
        "follower.replication.throttled.replicas" | "leader.replication.throttled.replicas" => {
            Replicas
        }
        "delete.retention.ms"
        | "file.delete.delay.ms"
        | "flush.ms"
        | "index.interval.bytes"
        | "max.message.bytes"
        | "message.timestamp.after.max.ms"
        | "message.timestamp.before.max.ms"
        | "min.compaction.lag.ms"
        | "segment.jitter.ms" => AtLeast(0),
        "flush.messages" | "max.compaction.lag.ms" | "min.insync.replicas" | "segment.ms" => {
            AtLeast(1)
        }
        "local.retention.bytes" | "local.retention.ms" => AtLeast(-2),
        "remote.copy.lag.bytes" | "remote.copy.lag.ms" | "retention.ms" => AtLeast(-1),
        "segment.bytes" => AtLeast(1_048_576),
        "segment.index.bytes" => AtLeast(4),
        _ => return None,
    })
}

/// A parsed number, shown as Java shows it in Kafka's message.
#[derive(Clone, Copy)]
enum Number {
    Integral(i64),
    Double(f64),
}

impl Number {
    fn below(self, bound: i64) -> bool {
        match self {
            Number::Integral(n) => n < bound,
            Number::Double(d) => d < bound as f64,
        }
    }

    fn above(self, bound: i64) -> bool {
        match self {
            Number::Integral(n) => n > bound,
            Number::Double(d) => d > bound as f64,
        }
    }

    fn equals(self, value: i64) -> bool {
        match self {
            Number::Integral(n) => n == value,
            Number::Double(d) => d == value as f64,
        }
    }

    fn shown(self) -> String {
        match self {
            Number::Integral(n) => n.to_string(),
            Number::Double(d) => java_double(d),
        }
    }
}

/// `value` checked as Kafka's ConfigDef parses and validates it; on failure the value as
/// Kafka's message shows it and why.
fn check_topic_value(name: &str, kind: Kind, value: &str) -> Result<(), (String, String)> {
    let trimmed = value.trim();
    let not_a = |type_name: &str| {
        (
            value.to_owned(),
            format!("Not a number of type {type_name}"),
        )
    };
    let number = match kind {
        Kind::Boolean if !kind.accepts(value) => {
            return Err((
                value.to_owned(),
                "Expected value to be either true or false".to_owned(),
            ))
        }
        Kind::Int => Some(Number::Integral(
            trimmed.parse::<i32>().map_err(|_| not_a("INT"))?.into(),
        )),
        Kind::Short => Some(Number::Integral(
            trimmed.parse::<i16>().map_err(|_| not_a("SHORT"))?.into(),
        )),
        Kind::Long => Some(Number::Integral(
            trimmed.parse::<i64>().map_err(|_| not_a("LONG"))?,
        )),
        Kind::Double => Some(Number::Double(
            trimmed.parse::<f64>().map_err(|_| not_a("DOUBLE"))?,
        )),
        _ => None,
    };
    let Some(rule) = topic_rule(name) else {
        return Ok(());
    };
    let items = || {
        trimmed
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
    };
    match (rule, number) {
        (Rule::AtLeast(min), Some(n)) if n.below(min) => {
            Err((n.shown(), format!("Value must be at least {min}")))
        }
        (Rule::Between(min, _), Some(n)) if n.below(min) => {
            Err((n.shown(), format!("Value must be at least {min}")))
        }
        (Rule::Between(_, max), Some(n)) if n.above(max) => {
            Err((n.shown(), format!("Value must be no more than {max}")))
        }
        (Rule::BetweenOr(min, max, or), Some(n))
            if !n.equals(or) && (n.below(min) || n.above(max)) =>
        {
            Err((
                n.shown(),
                format!("Value must be between {min} and {max} or equal to {or}"),
            ))
        }
        (Rule::OneOf(allowed), _) if !allowed.contains(&trimmed) => Err((
            trimmed.to_owned(),
            format!("String must be one of: {}", allowed.join(", ")),
        )),
        (Rule::ListOf(allowed), _) => match items().find(|item| !allowed.contains(item)) {
            Some(bad) => Err((
                bad.to_owned(),
                format!("String must be one of: {}", allowed.join(", ")),
            )),
            None => Ok(()),
        },
        (Rule::Replicas, _) => {
            let items: Vec<&str> = items().collect();
            let pair = |item: &str| {
                item.split_once(':').is_some_and(|(partition, broker)| {
                    [partition, broker]
                        .iter()
                        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
            };
            if items == ["*"] || items.iter().all(|item| pair(item)) {
                Ok(())
            } else {
                Err((
                    format!("[{}]", items.join(", ")),
                    format!(
                        "{name} must be the literal '*' or a list of replicas in the following \
                         format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
                    ),
                ))
            }
        }
        _ => Ok(()),
    }
}

/// `value` as Java's `Double.toString` writes it: plain with at least one decimal from 10^-3
/// up to 10^7, else `d.dddE±n`, in both the shortest digits that read back the same.
fn java_double(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let magnitude = value.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let plain = format!("{value:?}");
        return if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        };
    }
    // `{:e}` gives the shortest digits as `d.ddde-n`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_owned()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exponent}")
}

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
        // AlterConfigs names every config it sets.
        let named = overrides.contains_key(MIN_ISR);
        self.replace_naming(state, overrides, named, validate_only)
    }

    /// [`replace`](Self::replace) for a request that named `min.insync.replicas`
    /// (`names_min_isr`) or not: Kafka's controller writes a config record for every config
    /// a request names on a broker resource, changed or not (only a topic's unchanged ones
    /// are skipped), and each `min.insync.replicas` record clears the ELRs.
    pub fn replace_naming(
        &self,
        state: &mut State,
        overrides: BTreeMap<String, String>,
        names_min_isr: bool,
        validate_only: bool,
    ) -> Result<(), Failure> {
        let invalid = |message| (ErrorCode::INVALID_CONFIG, message);
        if let Target::Topic(_) = self {
            check_topic_configs(
                overrides
                    .iter()
                    .map(|(n, v)| (n.as_str(), Some(v.as_str()))),
            )
            .map_err(invalid)?;
        }
        for (name, value) in &overrides {
            check(self.definitions(), name, value).map_err(invalid)?;
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
            let cluster_wide = matches!(self, Target::Broker(name) if name.is_empty());
            if min_isr_changed || (cluster_wide && names_min_isr) {
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
