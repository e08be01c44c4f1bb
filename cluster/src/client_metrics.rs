//! Client metrics (KIP-714), as Kafka 4.4's `ClientMetricsManager` serves them: subscriptions
//! are config resources of type CLIENT_METRICS (`metrics`, `interval.ms`, `match`, checked as
//! `ClientMetricsConfigs` checks them), GetTelemetrySubscriptions assigns a client instance id
//! and answers the subscribed metrics of the subscriptions whose `match` patterns all match
//! the client, and PushTelemetry takes the metrics at the pushed interval.
//!
//! Kafka advertises the two APIs only when a metrics reporter that receives client telemetry
//! is configured; the cluster likewise serves them only when built with
//! [`ClusterBuilder::client_telemetry`](crate::ClusterBuilder::client_telemetry), so a Java
//! client (which pushes by default) sees what it sees on a default broker otherwise. The
//! pushes are the receiver here: the last ones are kept, bounded, for
//! [`Cluster::telemetry_pushes`](crate::Cluster::telemetry_pushes).

use kafka_codec::{ErrorCode, Uuid};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// `ClientMetricsConfigs`' names, defaults and bounds.
pub const METRICS: &str = "metrics";
pub const INTERVAL_MS: &str = "interval.ms";
pub const MATCH: &str = "match";
const INTERVAL_MS_DEFAULT: i32 = 300_000;
const MIN_INTERVAL_MS: i32 = 100;
const MAX_INTERVAL_MS: i32 = 3_600_000;
/// The metrics name that subscribes to every metric.
const ALL_METRICS: &str = "*";
/// The client attributes a `match` pattern may name.
const MATCH_KEYS: [&str; 6] = [
    "client_instance_id",
    "client_id",
    "client_software_name",
    "client_software_version",
    "client_source_address",
    "client_source_port",
];
/// `ClientMetricsManager.SUPPORTED_COMPRESSION_TYPES`: zstd, lz4, gzip, snappy, in that order.
pub const ACCEPTED_COMPRESSION_TYPES: [i8; 4] = [4, 3, 1, 2];
/// The instances Kafka's LRU cache keeps.
const INSTANCE_CAPACITY: usize = 16_384;
/// Kafka forgets an instance after the larger of this and three push intervals unused.
const INSTANCE_EXPIRY_MS: u64 = 60_000;
/// The pushes kept for tests, and the bytes they may hold together.
const PUSHES_KEPT: usize = 64;
const PUSH_BYTES_KEPT: usize = 8 << 20;
/// The most a pushed payload may decompress to, per byte `telemetry.max.bytes` allows (the
/// cluster's own bound; Kafka has none).
const DECOMPRESSED_PER_BYTE: usize = 32;
/// Software names and versions kept per client address (ApiVersions v3+ sends them).
const SOFTWARE_KEPT: usize = 16_384;

/// The config names of a CLIENT_METRICS resource, in the order DescribeConfigs lists them
/// (Kafka's `HashMap` order of `interval.ms`, `match`, `metrics`), with their defaults.
pub const CONFIGS: [(&str, &str); 3] = [(INTERVAL_MS, "300000"), (MATCH, ""), (METRICS, "")];

/// An error code and its message.
pub type Failure = (ErrorCode, String);

/// Kafka's `ConfigResource.Type` id of a client metrics subscription.
pub const RESOURCE_TYPE: i8 = 16;

/// Whether the cluster has client metrics resources: from Kafka 3.7 (KIP-714); an older
/// release refuses the resource type as any other it does not know.
pub fn offered(release: Option<crate::release::Release>) -> bool {
    release.is_none_or(|release| {
        crate::release::Release::parse("3.7").is_ok_and(|first| release >= first)
    })
}

/// One subscription, checked.
#[derive(Debug, Clone)]
struct Subscription {
    /// As set (the resource's configs).
    configs: BTreeMap<String, String>,
    /// Kafka's `HashSet` of the metrics list, in its iteration order.
    metrics: Vec<String>,
    interval_ms: i32,
    matches: Vec<(String, regex::Regex)>,
}

/// Checks a subscription's configs as `ClientMetricsConfigs.validate` does: the name set,
/// known config names, `interval.ms` an int within 100..=3600000, `match` a list of
/// `attribute=regex` with a known attribute.
fn check(name: &str, configs: &BTreeMap<String, String>) -> Result<Subscription, Failure> {
    let invalid_request = |message: String| (ErrorCode::INVALID_REQUEST, message);
    let invalid_config = |message: String| (ErrorCode::INVALID_CONFIG, message);
    if name.is_empty() {
        return Err(invalid_request("Subscription name can't be empty".into()));
    }
    if let Some(unknown) = configs
        .keys()
        .find(|key| !CONFIGS.iter().any(|(known, _)| known == key))
    {
        return Err(invalid_request(format!(
            "Unknown client metrics configuration: {unknown}"
        )));
    }
    let interval_ms = match configs.get(INTERVAL_MS) {
        None => INTERVAL_MS_DEFAULT,
        Some(text) => {
            let value: i32 = text.trim().parse().map_err(|_| {
                invalid_config(format!(
                    "Invalid value {text} for configuration interval.ms: Not a number of type INT"
                ))
            })?;
            if !(MIN_INTERVAL_MS..=MAX_INTERVAL_MS).contains(&value) {
                return Err(invalid_request(format!(
                    "Invalid value {value} for interval.ms, interval must be between 100 and \
                     3600000 (1 hour)"
                )));
            }
            value
        }
    };
    let mut matches: Vec<(String, regex::Regex)> = Vec::new();
    for pattern in list(configs.get(MATCH)) {
        let illegal = || invalid_config(format!("Illegal client matching pattern: {pattern}"));
        let parts: Vec<&str> = pattern.split('=').collect();
        let [key, regex] = parts[..] else {
            return Err(illegal());
        };
        let key = key.trim();
        if !MATCH_KEYS.contains(&key) {
            return Err(illegal());
        }
        // Java's `Matcher.matches`: the whole value.
        let compiled =
            regex::Regex::new(&format!("^(?:{})$", regex.trim())).map_err(|_| illegal())?;
        // A later pattern for the same attribute replaces the earlier (Kafka's map).
        matches.retain(|(k, _)| k != key);
        matches.push((key.to_owned(), compiled));
    }
    let metrics = java_hash_set(list(configs.get(METRICS)).map(str::to_owned));
    Ok(Subscription {
        configs: configs.clone(),
        metrics,
        interval_ms,
        matches,
    })
}

/// A LIST config's items, as Kafka's `ConfigDef` splits them (trimmed, empty list for "").
fn list(value: Option<&String>) -> impl Iterator<Item = &str> {
    let value = value.map(|v| v.trim()).unwrap_or_default();
    value
        .split(',')
        .map(str::trim)
        .filter(move |_| !value.is_empty())
}

/// Java's `String.hashCode`.
fn java_hash(text: &str) -> i32 {
    text.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// The items in the order a Java `HashSet` that received them in this order iterates them
/// (duplicates dropped): by bucket of the spread hash in the table the set grew to, ties in
/// insertion order. Kafka prints the set to compute a subscription id and lists it in
/// GetTelemetrySubscriptions, so the order is part of the answer.
fn java_hash_set(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut unique: Vec<String> = Vec::new();
    for item in items {
        if !unique.contains(&item) {
            unique.push(item);
        }
    }
    let mut capacity = 16usize;
    while unique.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |item: &String| {
        let h = java_hash(item) as u32;
        ((h ^ (h >> 16)) as usize) & (capacity - 1)
    };
    unique.sort_by_key(bucket);
    unique
}

/// A client's attributes `match` patterns test.
#[derive(Debug, Clone)]
struct Client {
    attributes: [(&'static str, String); 6],
}

impl Client {
    fn matches(&self, patterns: &[(String, regex::Regex)]) -> bool {
        patterns.iter().all(|(key, regex)| {
            self.attributes
                .iter()
                .find(|(name, _)| name == key)
                .is_some_and(|(_, value)| regex.is_match(value))
        })
    }
}

/// One client instance, as `ClientMetricsInstance` keeps it.
#[derive(Debug, Clone)]
struct Instance {
    client: Client,
    subscription_id: i32,
    subscription_version: u64,
    metrics: Vec<String>,
    push_interval_ms: i32,
    last_get: Option<Instant>,
    last_push: Option<Instant>,
    terminating: bool,
    last_error: ErrorCode,
    last_used: Instant,
}

/// One accepted PushTelemetry, as the cluster's receiver keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push {
    /// The client instance that pushed.
    pub client_instance_id: Uuid,
    /// The subscription id it pushed for.
    pub subscription_id: i32,
    /// Whether it was the client's last push.
    pub terminating: bool,
    /// Its compression type (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
    pub compression_type: i8,
    /// The metrics as pushed (OTLP `MetricsData`, compressed as said).
    pub metrics: Vec<u8>,
}

/// What GetTelemetrySubscriptions answers on success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscribed {
    /// The client's instance id (assigned when it sent none).
    pub client_instance_id: Uuid,
    /// The id of the metrics and interval it is subscribed to.
    pub subscription_id: i32,
    /// The metrics' name prefixes (`*`: all).
    pub requested_metrics: Vec<String>,
    /// How often to push.
    pub push_interval_ms: i32,
}

/// The cluster's subscriptions and client instances.
#[derive(Debug)]
pub struct ClientMetrics {
    subscriptions: BTreeMap<String, Subscription>,
    /// Bumped at every subscription change: an instance made before is re-evaluated.
    version: u64,
    instances: HashMap<Uuid, Instance>,
    software: HashMap<SocketAddr, (String, String)>,
    pushes: VecDeque<Push>,
    push_bytes: usize,
}

impl Default for ClientMetrics {
    fn default() -> Self {
        ClientMetrics::new()
    }
}

impl ClientMetrics {
    /// No subscriptions, no instances.
    pub fn new() -> ClientMetrics {
        ClientMetrics {
            subscriptions: BTreeMap::new(),
            version: 0,
            instances: HashMap::new(),
            software: HashMap::new(),
            pushes: VecDeque::new(),
            push_bytes: 0,
        }
    }

    /// The subscriptions' names, in name order (ListConfigResources).
    pub fn names(&self) -> impl Iterator<Item = &String> {
        self.subscriptions.keys()
    }

    /// The configs set on subscription `name` (none if it does not exist).
    pub fn configs(&self, name: &str) -> BTreeMap<String, String> {
        self.subscriptions
            .get(name)
            .map(|s| s.configs.clone())
            .unwrap_or_default()
    }

    /// Makes `configs` subscription `name`'s configs after Kafka's checks (unless
    /// `validate_only`); no configs at all deletes the subscription.
    pub fn replace(
        &mut self,
        name: &str,
        configs: BTreeMap<String, String>,
        validate_only: bool,
    ) -> Result<(), Failure> {
        let subscription = check(name, &configs)?;
        if validate_only {
            return Ok(());
        }
        if configs.is_empty() {
            self.subscriptions.remove(name);
        } else {
            self.subscriptions.insert(name.to_owned(), subscription);
        }
        self.version += 1;
        Ok(())
    }

    /// Remembers the software name and version a client at `peer` sent in ApiVersions.
    pub fn software(&mut self, peer: SocketAddr, name: &str, version: &str) {
        if self.software.len() >= SOFTWARE_KEPT && !self.software.contains_key(&peer) {
            // Bounded: forget some other connection's (it reads as "unknown" then).
            if let Some(other) = self.software.keys().next().copied() {
                self.software.remove(&other);
            }
        }
        self.software
            .insert(peer, (name.to_owned(), version.to_owned()));
    }

    fn client(&self, id: Uuid, client_id: &str, peer: SocketAddr) -> Client {
        let (name, version) = self
            .software
            .get(&peer)
            .cloned()
            .unwrap_or_else(|| ("unknown".into(), "unknown".into()));
        Client {
            attributes: [
                ("client_instance_id", id.to_string()),
                ("client_id", client_id.to_owned()),
                ("client_software_name", name),
                ("client_software_version", version),
                ("client_source_address", peer.ip().to_string()),
                ("client_source_port", peer.port().to_string()),
            ],
        }
    }

    /// `createClientInstance`: the union of the matching subscriptions' metrics (just `*`
    /// if one has it), the smallest of their intervals, and the id computed from both.
    fn evaluate(&self, id: Uuid, client: Client, now: Instant) -> Instance {
        let mut interval = INTERVAL_MS_DEFAULT;
        let mut all = false;
        let mut metrics = Vec::new();
        // Kafka iterates a ConcurrentHashMap by subscription name: bucket order too.
        let names = java_hash_set(self.subscriptions.keys().cloned());
        for name in names {
            let subscription = &self.subscriptions[&name];
            if client.matches(&subscription.matches) {
                all |= subscription.metrics.iter().any(|m| m == ALL_METRICS);
                metrics.extend(subscription.metrics.iter().cloned());
                interval = interval.min(subscription.interval_ms);
            }
        }
        let metrics = if all {
            vec![ALL_METRICS.to_owned()]
        } else {
            java_hash_set(metrics)
        };
        Instance {
            client,
            subscription_id: subscription_id(&metrics, interval, id),
            subscription_version: self.version,
            metrics,
            push_interval_ms: interval,
            last_get: None,
            last_push: None,
            terminating: false,
            last_error: ErrorCode::NONE,
            last_used: now,
        }
    }

    /// `clientInstance`: the cached instance, re-evaluated if the subscriptions changed
    /// since, or a new one (also for one unused longer than Kafka's cache keeps it).
    fn instance(
        &mut self,
        id: Uuid,
        client_id: &str,
        peer: SocketAddr,
        now: Instant,
    ) -> &mut Instance {
        let fresh = match self.instances.get(&id) {
            Some(instance) => {
                let expiry = INSTANCE_EXPIRY_MS.max(3 * instance.push_interval_ms as u64);
                if now.saturating_duration_since(instance.last_used) > Duration::from_millis(expiry)
                {
                    Some(self.evaluate(id, self.client(id, client_id, peer), now))
                } else if instance.subscription_version < self.version {
                    Some(self.evaluate(id, instance.client.clone(), now))
                } else {
                    None
                }
            }
            None => Some(self.evaluate(id, self.client(id, client_id, peer), now)),
        };
        if let Some(instance) = fresh {
            if self.instances.len() >= INSTANCE_CAPACITY && !self.instances.contains_key(&id) {
                // Kafka's LRU cache: the least recently used goes.
                if let Some(oldest) = self
                    .instances
                    .iter()
                    .min_by_key(|(_, i)| i.last_used)
                    .map(|(k, _)| *k)
                {
                    self.instances.remove(&oldest);
                }
            }
            self.instances.insert(id, instance);
        }
        let instance = self.instances.get_mut(&id).expect("just inserted");
        instance.last_used = now;
        instance
    }

    /// GetTelemetrySubscriptions: `candidate` (a random id) is the client's instance id
    /// when it sent none.
    pub fn get_subscriptions(
        &mut self,
        id: Uuid,
        client_id: &str,
        peer: SocketAddr,
        candidate: Uuid,
    ) -> Result<Subscribed, ErrorCode> {
        let now = crate::clock::now();
        let id = if id.is_zero() {
            self.new_instance_id(candidate)
        } else {
            id
        };
        let instance = self.instance(id, client_id, peer, now);
        // `maybeUpdateGetRequestTimestamp`: one request per push interval, unless the
        // last push was refused for its subscription id or compression type.
        let last = instance.last_get.max(instance.last_push);
        let elapsed_ok = last.is_none_or(|last| elapsed(now, last, instance.push_interval_ms));
        if elapsed_ok {
            instance.last_get = Some(now);
        } else if instance.last_error != ErrorCode::UNKNOWN_SUBSCRIPTION_ID
            && instance.last_error != ErrorCode::UNSUPPORTED_COMPRESSION_TYPE
        {
            return Err(ErrorCode::THROTTLING_QUOTA_EXCEEDED);
        }
        instance.last_error = ErrorCode::NONE;
        Ok(Subscribed {
            client_instance_id: id,
            subscription_id: instance.subscription_id,
            requested_metrics: instance.metrics.clone(),
            push_interval_ms: instance.push_interval_ms,
        })
    }

    /// `generateNewClientId`: random, never a reserved id nor one in use (the candidate
    /// moved on until it is neither).
    fn new_instance_id(&self, candidate: Uuid) -> Uuid {
        let mut id = candidate;
        loop {
            let reserved = id.is_zero() || id == Uuid::from_halves(0, 1);
            if !reserved && !self.instances.contains_key(&id) {
                return id;
            }
            let (most, least) = id.halves();
            id = Uuid::from_halves(most, least.wrapping_add(1));
        }
    }

    /// PushTelemetry, as `processPushTelemetryRequest` takes it: the first failed check's
    /// error, or the push kept.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        id: Uuid,
        client_id: &str,
        peer: SocketAddr,
        subscription_id: i32,
        terminating: bool,
        compression_type: i8,
        metrics: &[u8],
        max_bytes: i32,
    ) -> Result<(), ErrorCode> {
        if id.is_zero() || id == Uuid::from_halves(0, 1) {
            return Err(ErrorCode::INVALID_REQUEST);
        }
        let now = crate::clock::now();
        let instance = self.instance(id, client_id, peer, now);
        let checked = check_push(
            instance,
            now,
            subscription_id,
            terminating,
            compression_type,
            metrics.len(),
            max_bytes,
        );
        instance.terminating = terminating;
        if let Err(error) = checked {
            instance.last_error = error;
            return Err(error);
        }
        // The receiver's turn (`ClientTelemetryExporterPlugin`): it decompresses the metrics,
        // and a failure is INVALID_RECORD. Kafka does not bound the output; here it is at most
        // `DECOMPRESSED_PER_BYTE` times `telemetry.max.bytes`.
        if !metrics.is_empty() {
            let cap = (max_bytes.max(0) as usize).saturating_mul(DECOMPRESSED_PER_BYTE);
            let codec = kafka_codec::records::Compression::from_id(compression_type as u8);
            if codec.is_none_or(|codec| codec.decompress_payload(metrics, cap).is_err()) {
                instance.last_error = ErrorCode::INVALID_RECORD;
                return Err(ErrorCode::INVALID_RECORD);
            }
        }
        instance.last_error = ErrorCode::NONE;
        if !metrics.is_empty() {
            self.keep(Push {
                client_instance_id: id,
                subscription_id,
                terminating,
                compression_type,
                metrics: metrics.to_vec(),
            });
        }
        Ok(())
    }

    fn keep(&mut self, push: Push) {
        self.push_bytes += push.metrics.len();
        self.pushes.push_back(push);
        while self.pushes.len() > PUSHES_KEPT || self.push_bytes > PUSH_BYTES_KEPT {
            let Some(old) = self.pushes.pop_front() else {
                break;
            };
            self.push_bytes -= old.metrics.len();
        }
    }

    /// The pushes kept (the last 64, at most 8 MiB together), oldest first.
    pub fn pushes(&self) -> Vec<Push> {
        self.pushes.iter().cloned().collect()
    }
}

/// Whether an interval of `interval_ms` passed from `last` to `now` (both on the cluster's
/// clock).
fn elapsed(now: Instant, last: Instant, interval_ms: i32) -> bool {
    now.saturating_duration_since(last) >= Duration::from_millis(interval_ms.max(0) as u64)
}

/// `validatePushRequest`'s checks, in its order.
fn check_push(
    instance: &mut Instance,
    now: Instant,
    subscription_id: i32,
    terminating: bool,
    compression_type: i8,
    len: usize,
    max_bytes: i32,
) -> Result<(), ErrorCode> {
    if instance.terminating {
        return Err(ErrorCode::INVALID_REQUEST);
    }
    // `maybeUpdatePushRequestTimestamp`: the first push after a GetTelemetrySubscriptions
    // is always in time (the client's jitter), later ones one interval apart.
    let accept = instance.last_get > instance.last_push
        || instance
            .last_push
            .is_none_or(|last| elapsed(now, last, instance.push_interval_ms));
    if accept {
        instance.last_push = Some(now);
    } else if !terminating {
        return Err(ErrorCode::THROTTLING_QUOTA_EXCEEDED);
    }
    if subscription_id != instance.subscription_id {
        return Err(ErrorCode::UNKNOWN_SUBSCRIPTION_ID);
    }
    // `CompressionType.forId`: none, gzip, snappy, lz4, zstd.
    if !(0..=4).contains(&compression_type) {
        return Err(ErrorCode::UNSUPPORTED_COMPRESSION_TYPE);
    }
    if len > max_bytes.max(0) as usize {
        return Err(ErrorCode::TELEMETRY_TOO_LARGE);
    }
    Ok(())
}

/// `computeSubscriptionId`: the CRC32C of the metrics set as Java prints it followed by the
/// interval, xor the instance id's Java hash.
fn subscription_id(metrics: &[String], interval_ms: i32, id: Uuid) -> i32 {
    let text = format!("[{}]{interval_ms}", metrics.join(", "));
    let crc = crc32c::crc32c(text.as_bytes()) as i32;
    let (most, least) = id.halves();
    let hilo = most ^ least;
    crc ^ (((hilo >> 32) as i32) ^ (hilo as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The orders and messages below were printed by Kafka 4.4's own classes
    /// (`ClientMetricsConfigs.validate`, a `HashSet`'s `toString`).
    #[test]
    fn configs_are_checked_as_kafka_checks_them() {
        let refused = |pairs: &[(&str, &str)]| check("s", &configs(pairs)).unwrap_err();
        assert_eq!(
            refused(&[("interval.ms", "50")]),
            (
                ErrorCode::INVALID_REQUEST,
                "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)"
                    .into()
            )
        );
        for pattern in ["foo=bar", "client_id", "client_id=[a"] {
            assert_eq!(
                refused(&[("match", pattern)]),
                (
                    ErrorCode::INVALID_CONFIG,
                    format!("Illegal client matching pattern: {pattern}")
                )
            );
        }
        assert_eq!(
            refused(&[("x", "1")]),
            (
                ErrorCode::INVALID_REQUEST,
                "Unknown client metrics configuration: x".into()
            )
        );
        assert_eq!(
            refused(&[("interval.ms", "abc")]).0,
            ErrorCode::INVALID_CONFIG
        );
        assert_eq!(
            check("", &configs(&[])).unwrap_err().0,
            ErrorCode::INVALID_REQUEST
        );
        assert_eq!(
            java_hash_set(
                [
                    "org.apache.kafka.producer.",
                    "org.apache.kafka.consumer.fetch",
                    "b",
                    "a"
                ]
                .map(String::from)
            ),
            [
                "org.apache.kafka.producer.",
                "a",
                "b",
                "org.apache.kafka.consumer.fetch"
            ]
        );
    }

    /// Expected ids printed by Kafka 4.4's `ClientMetricsManager.computeSubscriptionId`
    /// (called by reflection on the jar's class).
    #[test]
    fn subscription_ids_are_kafkas() {
        let id = Uuid::from_halves(0x0123456789abcdef, 0xfedcba9876543210u64 as i64);
        assert_eq!(id.to_string(), "ASNFZ4mrze_-3LqYdlQyEA");
        assert_eq!(subscription_id(&[], 300_000, id), -725132322);
        let metrics = java_hash_set(
            [
                "org.apache.kafka.producer.",
                "org.apache.kafka.consumer.fetch",
                "b",
                "a",
            ]
            .map(String::from),
        );
        assert_eq!(subscription_id(&metrics, 1000, id), -221275402);
        assert_eq!(
            subscription_id(&["*".to_owned()], 100, Uuid::from_halves(0, 1)),
            899611808
        );
    }

    fn peer() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 50_000))
    }

    /// The interval rules on tokio's paused clock: one GetTelemetrySubscriptions per
    /// interval, the first push after it at once, later pushes an interval apart, and an
    /// instance re-evaluated when the subscriptions change.
    #[tokio::test(start_paused = true)]
    async fn pushes_wait_for_their_interval() {
        let mut metrics = ClientMetrics::new();
        metrics
            .replace(
                "all",
                configs(&[("metrics", "*"), ("interval.ms", "1000")]),
                false,
            )
            .unwrap();
        let id = Uuid::from_halves(7, 7);
        let got = metrics.get_subscriptions(id, "c", peer(), id).unwrap();
        assert_eq!(got.requested_metrics, ["*"]);
        assert_eq!(got.push_interval_ms, 1000);
        let sub = got.subscription_id;
        let push = |m: &mut ClientMetrics| m.push(id, "c", peer(), sub, false, 0, b"m", 10);
        assert_eq!(push(&mut metrics), Ok(()));
        tokio::time::advance(std::time::Duration::from_millis(999)).await;
        assert_eq!(
            push(&mut metrics),
            Err(ErrorCode::THROTTLING_QUOTA_EXCEEDED)
        );
        assert_eq!(
            metrics.get_subscriptions(id, "c", peer(), id),
            Err(ErrorCode::THROTTLING_QUOTA_EXCEEDED)
        );
        tokio::time::advance(std::time::Duration::from_millis(1)).await;
        assert_eq!(push(&mut metrics), Ok(()));
        tokio::time::advance(std::time::Duration::from_millis(1000)).await;
        assert_eq!(
            metrics.push(id, "c", peer(), sub, false, 4, b"too large", 4),
            Err(ErrorCode::TELEMETRY_TOO_LARGE)
        );
        // A changed subscription: a new instance, asked for again at once.
        metrics
            .replace("all", configs(&[("metrics", "a.")]), false)
            .unwrap();
        let got = metrics.get_subscriptions(id, "c", peer(), id).unwrap();
        assert_eq!(got.requested_metrics, ["a."]);
        assert_eq!(got.push_interval_ms, 300_000);
        assert_eq!(metrics.pushes().len(), 2);
    }

    #[test]
    fn matches_are_whole_values_of_known_attributes() {
        let mut metrics = ClientMetrics::new();
        metrics
            .replace(
                "s",
                configs(&[
                    ("metrics", "x."),
                    ("match", "client_id=app, client_source_address=127.0.0.1"),
                ]),
                false,
            )
            .unwrap();
        let id = Uuid::from_halves(1, 2);
        let got = metrics.get_subscriptions(id, "app", peer(), id).unwrap();
        assert_eq!(got.requested_metrics, ["x."]);
        let other = Uuid::from_halves(1, 3);
        let got = metrics
            .get_subscriptions(other, "app-2", peer(), other)
            .unwrap();
        assert!(got.requested_metrics.is_empty());
    }
}
