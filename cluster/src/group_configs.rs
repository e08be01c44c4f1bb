//! Per-group configs (Kafka's `ConfigResource` type GROUP, from Kafka 4.0): the 27 configs of
//! Kafka's `GroupConfig` (`group-configs.tsv`, read from the pinned Kafka's jars by
//! `tools/config-defaults/run.sh`), the overrides IncrementalAlterConfigs and AlterConfigs
//! set for a group (kept in [`Overrides::groups`](crate::configs::Overrides), by group id,
//! whether or not such a group exists, and kept when the group is deleted, as Kafka keeps
//! them), what DescribeConfigs answers for them, and Kafka's checks of a group's configs:
//! unknown names, each value's type and validator, then the bounds the broker's `group.*`
//! min/max configs set, in the order Kafka checks them, with its messages.
//!
//! The share group configs take effect through [`GroupSettings`].

use crate::configs::{source, Definition, Kind};
use kafka_codec::ErrorCode;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

const TABLE: &str = include_str!("../group-configs.tsv");

/// The most groups that can hold configs at once: the cluster's own bound on what clients
/// can make it keep (Kafka has none).
pub const MAX_CONFIGURED_GROUPS: usize = 10_000;

/// A config's ConfigDef validator, as the table names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validator {
    /// None.
    None,
    /// `ConfigDef.Range.atLeast`.
    AtLeast(i64),
    /// `ConfigDef.ValidString.in`: one of these, exactly.
    OneOf(Vec<String>),
    /// The share auto-offset-reset strategy's: `earliest`, `latest` or `by_duration:` and a
    /// non-negative ISO-8601 duration.
    ShareReset,
    /// `ConfigDef.ValidList`: any list (duplicates are refused by the group check).
    List,
}

/// One per-group config as Kafka's `GroupConfig` defines it.
#[derive(Debug, Clone)]
pub struct GroupDefinition {
    /// Its name.
    pub name: String,
    /// Its type.
    pub kind: Kind,
    /// Its own default (`None`: none).
    pub default: Option<String>,
    /// Whether Kafka keeps it internal: described only once set, but settable.
    pub internal: bool,
    /// The broker config it takes its value from when not set, with that config's default.
    pub synonym: Option<(String, Option<String>)>,
    /// Its validator.
    pub validator: Validator,
    /// The broker config bounding it from below, and its value.
    pub min: Option<(String, i64)>,
    /// The broker config bounding it from above, and its value.
    pub max: Option<(String, i64)>,
}

impl GroupDefinition {
    /// The value a group that does not set it has (its broker synonym's default, else its
    /// own).
    pub fn default_value(&self) -> Option<String> {
        match &self.synonym {
            Some((_, value)) => value.clone(),
            None => self.default.clone(),
        }
    }

    /// As a [`Definition`], for DescribeConfigs' entry writer.
    pub fn as_definition(&self) -> Definition {
        Definition {
            kind: self.kind,
            default: self.default_value(),
            sensitive: false,
            read_only: false,
            synonym: None,
        }
    }
}

/// The committed table, parsed once, in the order Kafka defines (and parses) the configs.
pub fn group_definitions() -> &'static [GroupDefinition] {
    static PARSED: OnceLock<Vec<GroupDefinition>> = OnceLock::new();
    // Part of the crate and checked by its tests: a parse failure is a build defect.
    PARSED.get_or_init(|| parse(TABLE).expect("group-configs.tsv is well formed"))
}

/// The definition of `name`.
pub fn definition(name: &str) -> Option<&'static GroupDefinition> {
    group_definitions().iter().find(|d| d.name == name)
}

fn parse(text: &str) -> Result<Vec<GroupDefinition>, String> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("name\t") || line.is_empty() {
            continue;
        }
        let at = |what: &str| format!("line {}: {what}", index + 1);
        let columns: Vec<&str> = line.split('\t').collect();
        let [name, kind, default, internal, synonym, synonym_default, validator, min_config, min, max_config, max] =
            columns[..]
        else {
            return Err(at("not 11 columns"));
        };
        let value = |text: &str| (text != "\\N").then(|| text.to_owned());
        let bound = |config: &str, value: &str| -> Result<Option<(String, i64)>, String> {
            if config == "-" {
                return Ok(None);
            }
            let value = value.parse().map_err(|_| at("a bound not a number"))?;
            Ok(Some((config.to_owned(), value)))
        };
        let validator = match validator.split_once(':') {
            None if validator == "-" => Validator::None,
            None if validator == "list" => Validator::List,
            None if validator == "share-reset" => Validator::ShareReset,
            Some(("at-least", min)) => {
                Validator::AtLeast(min.parse().map_err(|_| at("at-least not a number"))?)
            }
            Some(("one-of", values)) => {
                Validator::OneOf(values.split(',').map(str::to_owned).collect())
            }
            _ => return Err(at(&format!("validator {validator}"))),
        };
        out.push(GroupDefinition {
            name: name.to_owned(),
            kind: Kind::parse(kind).ok_or_else(|| at(&format!("type {kind}")))?,
            default: value(default),
            internal: internal == "true",
            synonym: (synonym != "-").then(|| (synonym.to_owned(), value(synonym_default))),
            validator,
            min: bound(min_config, min)?,
            max: bound(max_config, max)?,
        });
    }
    Ok(out)
}

/// An error code and its message.
pub type Failure = (ErrorCode, String);

/// Whether the cluster answers for group configs: from Kafka 4.0 (a 3.x broker has no
/// GROUP config resource: the resource type is refused as any other it does not know).
pub fn offered(release: Option<crate::release::Release>) -> bool {
    release.is_none_or(|release| {
        crate::release::Release::parse("4.0").is_ok_and(|first| release >= first)
    })
}

fn invalid(message: String) -> Failure {
    (ErrorCode::INVALID_CONFIG, message)
}

/// Kafka's check of a group's configs (`props`: all the group would hold after the change),
/// in its order: names, duplicate rack tags, each value's type and validator (in definition
/// order), then the broker's bounds and the rules between configs.
pub fn validate(props: &BTreeMap<String, String>) -> Result<(), Failure> {
    for name in props.keys() {
        if definition(name).is_none() {
            return Err(invalid(format!("Unknown group config name: {name}")));
        }
    }
    const TAGS: &str = "streams.rack.aware.assignment.tags";
    if let Some(tags) = props.get(TAGS) {
        let tags: Vec<&str> = list(tags);
        let unique: std::collections::BTreeSet<&str> = tags.iter().copied().collect();
        if unique.len() != tags.len() {
            return Err(invalid(format!(
                "{TAGS} must not contain duplicate tag keys."
            )));
        }
    }
    let mut numbers: BTreeMap<&str, i64> = BTreeMap::new();
    for definition in group_definitions() {
        let Some(value) = props.get(&definition.name) else {
            continue;
        };
        let refused = |why: &str| {
            invalid(format!(
                "Invalid value {value} for configuration {}: {why}",
                definition.name
            ))
        };
        let trimmed = value.trim();
        let number = match definition.kind {
            Kind::Int => Some(
                trimmed
                    .parse::<i32>()
                    .map_err(|_| refused("Not a number of type INT"))? as i64,
            ),
            Kind::Long => Some(
                trimmed
                    .parse::<i64>()
                    .map_err(|_| refused("Not a number of type LONG"))?,
            ),
            Kind::Boolean => {
                if !trimmed.eq_ignore_ascii_case("true") && !trimmed.eq_ignore_ascii_case("false") {
                    return Err(refused("Expected value to be either true or false"));
                }
                None
            }
            _ => None,
        };
        match &definition.validator {
            Validator::AtLeast(min) => {
                if number.is_some_and(|n| n < *min) {
                    return Err(refused(&format!("Value must be at least {min}")));
                }
            }
            Validator::OneOf(values) => {
                if !values.iter().any(|v| v == trimmed) {
                    return Err(refused(&format!(
                        "String must be one of: {}",
                        values.join(", ")
                    )));
                }
            }
            Validator::ShareReset => {
                if ShareReset::parse(trimmed).is_none() {
                    return Err(refused(&format!(
                        "Invalid value `{trimmed}` for configuration {}. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
                        definition.name
                    )));
                }
            }
            Validator::None | Validator::List => {}
        }
        if let Some(number) = number {
            numbers.insert(definition.name.as_str(), number);
        }
    }
    // The broker's bounds, in the order Kafka checks them.
    const BOUNDED: [&str; 15] = [
        "consumer.heartbeat.interval.ms",
        "consumer.session.timeout.ms",
        "consumer.assignment.interval.ms",
        "share.heartbeat.interval.ms",
        "share.session.timeout.ms",
        "share.record.lock.duration.ms",
        "share.delivery.count.limit",
        "share.partition.max.record.locks",
        "share.assignment.interval.ms",
        "streams.heartbeat.interval.ms",
        "streams.session.timeout.ms",
        "streams.num.standby.replicas",
        "streams.assignment.interval.ms",
        "streams.task.offset.interval.ms",
        "streams.num.warmup.replicas",
    ];
    for name in BOUNDED {
        let (Some(value), Some(definition)) = (numbers.get(name), definition(name)) else {
            continue;
        };
        match (&definition.min, &definition.max) {
            (Some((_, min)), Some((_, max))) if value < min || value > max => {
                return Err(invalid(format!(
                    "{name} must be in the range {min} to {max} inclusive."
                )))
            }
            (None, Some((_, max))) if value > max => {
                return Err(invalid(format!(
                    "{name} must be less than or equal to {max}"
                )))
            }
            (Some((_, min)), None) if value < min => {
                return Err(invalid(format!(
                    "{name} must be greater than or equal to {min}"
                )))
            }
            _ => {}
        }
    }
    const ASSIGNOR: &str = "streams.assignor.name";
    if let (Some(name), Some(definition)) = (props.get(ASSIGNOR), definition(ASSIGNOR)) {
        let registered = definition.default_value().unwrap_or_default();
        let registered = list(&registered);
        if !registered.contains(&name.trim()) {
            return Err(invalid(format!(
                "{ASSIGNOR} '{}' is not a registered task assignor. Registered assignors are: [{}].",
                name.trim(),
                registered.join(", ")
            )));
        }
    }
    for kind in ["consumer", "share", "streams"] {
        let session = format!("{kind}.session.timeout.ms");
        let heartbeat = format!("{kind}.heartbeat.interval.ms");
        if !numbers.contains_key(session.as_str()) && !numbers.contains_key(heartbeat.as_str()) {
            continue;
        }
        let value = |name: &str| {
            numbers.get(name).copied().or_else(|| {
                definition(name)
                    .and_then(GroupDefinition::default_value)
                    .and_then(|v| v.parse().ok())
            })
        };
        if let (Some(s), Some(h)) = (value(&session), value(&heartbeat)) {
            if s <= h {
                return Err(invalid(format!(
                    "{session} must be greater than {heartbeat}"
                )));
            }
        }
    }
    const DLQ: &str = "errors.deadletterqueue.topic.name";
    if props
        .get(DLQ)
        .is_some_and(|name| name.trim().starts_with("__"))
    {
        return Err(invalid(format!(
            "{DLQ}: DLQ topic name must not start with '__'"
        )));
    }
    Ok(())
}

/// A list value's items, as Kafka splits it (commas with any space around them).
fn list(value: &str) -> Vec<&str> {
    let value = value.trim();
    if value.is_empty() {
        return Vec::new();
    }
    value.split(',').map(str::trim).collect()
}

/// `share.auto.offset.reset`: where a share partition with no state starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareReset {
    /// At the log start.
    Earliest,
    /// At the log end (Kafka's default).
    Latest,
    /// At the first record whose timestamp is at most this long ago.
    ByDuration(Duration),
}

impl ShareReset {
    /// Parses Kafka's value (lower case, as its validator takes it).
    pub fn parse(value: &str) -> Option<ShareReset> {
        match value {
            "earliest" => Some(ShareReset::Earliest),
            "latest" => Some(ShareReset::Latest),
            _ => iso_duration(value.strip_prefix("by_duration:")?).map(ShareReset::ByDuration),
        }
    }
}

/// A non-negative ISO-8601 duration as Java's `Duration.parse` reads it (`PnDTnHnMn.nS`,
/// upper or lower case, each part optional but at least one, each number optionally
/// signed); `None` for anything else or a negative total.
fn iso_duration(text: &str) -> Option<Duration> {
    let upper = text.to_ascii_uppercase();
    let (negative, rest) = match upper.as_bytes().first()? {
        b'-' => (true, &upper[1..]),
        b'+' => (false, &upper[1..]),
        _ => (false, &upper[..]),
    };
    let rest = rest.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((days, time)) => {
            if time.is_empty() {
                return None;
            }
            (days, Some(time))
        }
        None => (rest, None),
    };
    let mut nanos: i128 = 0;
    let mut parts = 0;
    if !days.is_empty() {
        let count = days.strip_suffix('D')?;
        nanos += whole(count)? * 86_400_000_000_000;
        parts += 1;
    }
    if let Some(mut time) = time {
        for (unit, scale) in [('H', 3_600_000_000_000i128), ('M', 60_000_000_000)] {
            if let Some((count, after)) = time.split_once(unit) {
                nanos += whole(count)? * scale;
                time = after;
                parts += 1;
            }
        }
        if !time.is_empty() {
            let seconds = time.strip_suffix('S')?;
            let (whole_part, fraction) = match seconds.split_once(['.', ',']) {
                Some((w, f)) => (w, f),
                None => (seconds, ""),
            };
            if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let sign = if whole_part.starts_with('-') { -1 } else { 1 };
            let mut fraction_nanos: i128 = 0;
            if !fraction.is_empty() {
                fraction_nanos = format!("{fraction:0<9}").parse().ok()?;
            }
            nanos += whole(whole_part)? * 1_000_000_000 + sign * fraction_nanos;
            parts += 1;
        }
    }
    if parts == 0 {
        return None;
    }
    if negative {
        nanos = -nanos;
    }
    let nanos = u64::try_from(nanos).ok()?;
    Some(Duration::from_nanos(nanos))
}

/// A signed decimal count, as Java's duration parser reads one.
fn whole(text: &str) -> Option<i128> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The configs DescribeConfigs lists for a group: each not internal, and each the group sets,
/// in name order, with (value, source, synonyms). `brokers` are the broker-level dynamic
/// overrides (this broker's, then the cluster-wide ones), which a broker synonym's value
/// comes from before its default.
pub fn describe<'a>(
    overrides: Option<&'a BTreeMap<String, String>>,
    brokers: [Option<&'a BTreeMap<String, String>>; 2],
) -> Vec<Described> {
    let mut described: Vec<Described> = group_definitions()
        .iter()
        .filter(|d| !d.internal || overrides.is_some_and(|o| o.contains_key(&d.name)))
        .map(|definition| {
            let mut synonyms = Vec::new();
            if let Some(value) = overrides.and_then(|o| o.get(&definition.name)) {
                synonyms.push((
                    definition.name.clone(),
                    Some(value.clone()),
                    source::GROUP_CONFIG,
                ));
            }
            match &definition.synonym {
                Some((broker, default)) => {
                    let [own, cluster] = brokers;
                    let levels = [
                        (
                            own.and_then(|o| o.get(broker)).cloned(),
                            source::DYNAMIC_BROKER_CONFIG,
                        ),
                        (
                            cluster.and_then(|c| c.get(broker)).cloned(),
                            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
                        ),
                        (default.clone(), source::DEFAULT_CONFIG),
                    ];
                    for (value, level) in levels {
                        if value.is_some() {
                            synonyms.push((broker.clone(), value, level));
                        }
                    }
                }
                None => {
                    if definition.default.is_some() {
                        synonyms.push((
                            definition.name.clone(),
                            definition.default.clone(),
                            source::DEFAULT_CONFIG,
                        ));
                    }
                }
            }
            let (value, config_source) = match synonyms.first() {
                Some((_, value, level)) => (value.clone(), *level),
                None => (definition.default.clone(), source::DEFAULT_CONFIG),
            };
            Described {
                definition,
                value,
                source: config_source,
                synonyms,
            }
        })
        .collect();
    described.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
    described
}

/// One config of a group as DescribeConfigs answers it.
#[derive(Debug)]
pub struct Described {
    /// Its definition.
    pub definition: &'static GroupDefinition,
    /// Its value.
    pub value: Option<String>,
    /// Where the value comes from.
    pub source: i8,
    /// The levels that give it a value, the one in effect first: (name, value, source).
    pub synonyms: Vec<(String, Option<String>, i8)>,
}

/// Makes `props` the group's overrides once [`validate`] takes them (all or none; nothing
/// changes with `validate_only`). An empty group id is Kafka's INVALID_REQUEST.
pub fn replace(
    groups: &mut BTreeMap<String, BTreeMap<String, String>>,
    group: &str,
    props: BTreeMap<String, String>,
    validate_only: bool,
) -> Result<(), Failure> {
    if group.is_empty() {
        return Err((
            ErrorCode::INVALID_REQUEST,
            "Default group resources are not allowed.".to_owned(),
        ));
    }
    validate(&props)?;
    if !groups.contains_key(group) && !props.is_empty() && groups.len() >= MAX_CONFIGURED_GROUPS {
        return Err(invalid(format!(
            "at most {MAX_CONFIGURED_GROUPS} groups can hold configs in this cluster"
        )));
    }
    if !validate_only {
        if props.is_empty() {
            groups.remove(group);
        } else {
            groups.insert(group.to_owned(), props);
        }
    }
    Ok(())
}

/// The share group configs that change what a share group does, as one group holds them
/// (each unset one: the cluster-wide value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSettings {
    /// `share.auto.offset.reset`.
    pub share_reset: ShareReset,
    /// `share.record.lock.duration.ms`.
    pub record_lock_duration: Option<Duration>,
    /// `share.delivery.count.limit`.
    pub delivery_count_limit: Option<i16>,
    /// `share.isolation.level` is `read_committed`.
    pub read_committed: bool,
    /// `share.session.timeout.ms`.
    pub share_session_timeout: Option<Duration>,
    /// `share.heartbeat.interval.ms`.
    pub share_heartbeat_interval: Option<Duration>,
    /// `share.partition.max.record.locks`.
    pub max_record_locks: Option<usize>,
    /// `share.renew.acknowledge.enable` (true unless set false, as Kafka's default): whether
    /// a renew acknowledgement is taken.
    pub renew_acknowledge: bool,
    /// `consumer.session.timeout.ms`.
    pub consumer_session_timeout: Option<Duration>,
    /// `consumer.heartbeat.interval.ms`.
    pub consumer_heartbeat_interval: Option<Duration>,
}

impl Default for GroupSettings {
    /// A group that sets none of them.
    fn default() -> Self {
        GroupSettings::of(None)
    }
}

/// Hands `group`'s configs, as they are now, to the share groups and the KIP-848 groups
/// (the config APIs call it after a change; the share groups' lock before the state's, as
/// everywhere, and the groups' never with the state's).
pub fn apply(shared: &crate::Shared, group: &str) {
    let settings = {
        let mut share = shared.share_groups();
        let state = shared.state();
        let settings = GroupSettings::of(state.configs.groups.get(group));
        share.set_settings(group, settings);
        settings
    };
    shared.groups().set_consumer_timeouts(
        group,
        settings.consumer_session_timeout,
        settings.consumer_heartbeat_interval,
    );
}

impl GroupSettings {
    /// What `overrides` (a group's) set.
    pub fn of(overrides: Option<&BTreeMap<String, String>>) -> GroupSettings {
        let get = |name: &str| overrides.and_then(|o| o.get(name)).map(|v| v.trim());
        let millis = |name: &str| {
            get(name)
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_millis)
        };
        GroupSettings {
            share_reset: get("share.auto.offset.reset")
                .and_then(ShareReset::parse)
                .unwrap_or(ShareReset::Latest),
            record_lock_duration: millis("share.record.lock.duration.ms"),
            delivery_count_limit: get("share.delivery.count.limit").and_then(|v| v.parse().ok()),
            read_committed: get("share.isolation.level") == Some("read_committed"),
            share_session_timeout: millis("share.session.timeout.ms"),
            share_heartbeat_interval: millis("share.heartbeat.interval.ms"),
            max_record_locks: get("share.partition.max.record.locks").and_then(|v| v.parse().ok()),
            // Kafka reads the boolean case-insensitively, as its validator takes it.
            renew_acknowledge: !get("share.renew.acknowledge.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("false")),
            consumer_session_timeout: millis("consumer.session.timeout.ms"),
            consumer_heartbeat_interval: millis("consumer.heartbeat.interval.ms"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn message(pairs: &[(&str, &str)]) -> String {
        validate(&props(pairs)).expect_err("refused").1
    }

    #[test]
    fn the_committed_table_has_kafkas_27_group_configs() {
        let definitions = group_definitions();
        assert_eq!(definitions.len(), 27);
        assert_eq!(definitions.iter().filter(|d| d.internal).count(), 6);
        let lock = definition("share.record.lock.duration.ms").expect("defined");
        assert_eq!(lock.kind, Kind::Int);
        assert_eq!(lock.validator, Validator::AtLeast(1000));
        assert_eq!(
            lock.min,
            Some(("group.share.min.record.lock.duration.ms".to_owned(), 15000))
        );
        assert_eq!(lock.default_value().as_deref(), Some("30000"));
    }

    // The messages below are those a Kafka 4.4 broker answered to the same values
    // (tools/clients/java ClusterGroupConfigs against a real broker).
    #[test]
    fn values_are_checked_as_kafka_checks_them() {
        assert_eq!(
            message(&[("no.such.config", "1")]),
            "Unknown group config name: no.such.config"
        );
        assert!(validate(&props(&[("consumer.assignor.offload.enable", "false")])).is_ok());
        assert_eq!(
            message(&[("share.record.lock.duration.ms", "1000")]),
            "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."
        );
        assert_eq!(
            message(&[("consumer.session.timeout.ms", "70000")]),
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."
        );
        assert_eq!(
            message(&[("share.delivery.count.limit", "1")]),
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"
        );
        assert_eq!(
            message(&[("share.session.timeout.ms", "soon")]),
            "Invalid value soon for configuration share.session.timeout.ms: Not a number of type INT"
        );
        assert_eq!(
            message(&[("share.auto.offset.reset", "by_duration:-PT1H")]),
            "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value `by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
        );
        assert!(validate(&props(&[("share.auto.offset.reset", "by_duration:PT1H")])).is_ok());
        assert!(validate(&props(&[("share.isolation.level", "read_committed")])).is_ok());
        assert!(validate(&props(&[("share.isolation.level", "READ_COMMITTED")])).is_err());
    }

    #[test]
    fn a_kip_848_groups_session_timeout_is_its_own() {
        use crate::consumer_groups::Heartbeat;
        use crate::groups::{GroupLimits, Groups};
        let mut groups = Groups::new(GroupLimits::default());
        let settings = GroupSettings::of(Some(&props(&[
            ("consumer.session.timeout.ms", "50000"),
            ("consumer.heartbeat.interval.ms", "6000"),
        ])));
        groups.set_consumer_timeouts(
            "long",
            settings.consumer_session_timeout,
            settings.consumer_heartbeat_interval,
        );
        assert_eq!(
            groups.consumer_timeouts("long"),
            (Duration::from_secs(50), Duration::from_secs(6))
        );
        assert_eq!(
            groups.consumer_timeouts("usual"),
            (Duration::from_secs(45), Duration::from_secs(5))
        );
        let topics = crate::consumer_groups::TopicsByName::new();
        let now = crate::clock::now();
        for group in ["long", "usual"] {
            let join = Heartbeat {
                member_id: format!("{group}-member"),
                member_epoch: 0,
                instance_id: None,
                rack_id: None,
                rebalance_timeout_ms: 60_000,
                subscribed_names: Some(vec!["t".to_owned()]),
                subscribed_regex: None,
                server_assignor: None,
                owned: None,
                client_id: "c".to_owned(),
                client_host: "/127.0.0.1".to_owned(),
            };
            let view = crate::consumer_groups::TopicView {
                created: 0,
                may_describe: &|_| true,
            };
            let joined = groups.consumer_heartbeat(group, &join, &topics, &view, now);
            assert_eq!(joined.error, ErrorCode::NONE, "{joined:?}");
        }
        let members = |groups: &Groups, group: &str| {
            groups.groups[group]
                .consumer
                .as_ref()
                .map_or(0, |c| c.members.len())
        };
        // 46 s on: the usual group's member is gone, the long one's is not.
        groups.expire(now + Duration::from_secs(46));
        assert_eq!(
            (members(&groups, "long"), members(&groups, "usual")),
            (1, 0)
        );
        groups.expire(now + Duration::from_secs(51));
        assert_eq!(members(&groups, "long"), 0);
    }

    #[test]
    fn a_share_groups_session_timeout_is_its_own() {
        use crate::share_groups::{Heartbeat, ShareConfig, ShareGroups};
        let mut share = ShareGroups::new(
            ShareConfig::default(),
            crate::groups::GroupLimits::default(),
        );
        share.set_settings(
            "long",
            GroupSettings::of(Some(&props(&[("share.session.timeout.ms", "50000")]))),
        );
        assert_eq!(
            share.config_of("long").session_timeout,
            Duration::from_secs(50)
        );
        let topics = crate::consumer_groups::TopicsByName::new();
        let now = crate::clock::now();
        for group in ["long", "usual"] {
            let join = Heartbeat {
                member_id: format!("{group}-member"),
                member_epoch: 0,
                rack_id: None,
                subscribed_names: Some(vec!["t".to_owned()]),
                client_id: "c".to_owned(),
                client_host: "/127.0.0.1".to_owned(),
            };
            let joined = share.heartbeat(group, &join, &topics, now);
            assert_eq!(joined.error, ErrorCode::NONE, "{joined:?}");
        }
        let members = |share: &ShareGroups, group: &str| share.groups[group].members.len();
        // 46 s on: the usual group's member (45 s) is gone, the long one's (50 s) is not.
        share.expire(now + Duration::from_secs(46), &topics);
        assert_eq!((members(&share, "long"), members(&share, "usual")), (1, 0));
        share.expire(now + Duration::from_secs(51), &topics);
        assert_eq!(members(&share, "long"), 0);
    }

    #[test]
    fn durations_are_read_as_java_reads_them() {
        let parse = |text: &str| iso_duration(text).map(|d| d.as_millis());
        assert_eq!(parse("PT1H"), Some(3_600_000));
        assert_eq!(parse("P1DT0.5S"), Some(86_400_500));
        assert_eq!(parse("pt2m"), Some(120_000));
        assert_eq!(parse("PT-1S"), None);
        assert_eq!(parse("-PT1H"), None);
        assert_eq!(parse("P"), None);
        assert_eq!(parse("PT"), None);
        assert_eq!(parse("PT1.0000000001S"), None);
        assert_eq!(parse("1H"), None);
    }
}
