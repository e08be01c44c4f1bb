//! What the server commands (`tap`, `quorum serve`) count, in one place: requests and
//! responses by API and version, bytes each way, latency per API, frames not decoded, secrets
//! replaced in the log, requests denied by a policy, connections, and the memory budget.
//! [`super::scrape`] serves them to Prometheus (`--metrics-listen`).
//!
//! Counting sits on the forwarding path, so it takes no lock: every series an input can
//! reach is an atomic in a table made at start, indexed by API key and version. The table
//! holds the APIs and versions this build knows, and one "other" slot for the rest, so a
//! peer that sends every key and version it can think of adds no series (a label per
//! unknown key or version would let it grow the scrape, and the memory behind it, without
//! bound). Denials are the exception: rare, labelled by the policy's own reason names, they
//! use a `prometheus-client` family.

use super::budget::{Budget, Charge};
use kafka_codec::conn::{Direction, RawRequestHeader};
use kafka_codec::ApiKey;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The label of requests of an API key this build does not know, and of responses that
/// answer no request the tap saw.
const UNKNOWN_API: &str = "unknown";
/// The version label of a version outside the API's known range.
const OTHER_VERSION: &str = "other";

/// Upper bounds of the latency histogram's buckets, in seconds: from a fast local answer to a
/// Fetch that waits out a long `max.wait.ms`.
const LATENCY_BUCKETS: [f64; 17] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0,
];

/// Why a frame was not decoded for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecoded {
    /// It did not decode (its bytes are not the message its header names).
    Error,
    /// Larger than `--max-frame`.
    TooLarge,
    /// The connection's logger was behind by `--max-frame`.
    Backlog,
    /// `--memory-budget` had no room to keep it.
    MemoryBudget,
}

impl Undecoded {
    const ALL: [Undecoded; 4] = [
        Undecoded::Error,
        Undecoded::TooLarge,
        Undecoded::Backlog,
        Undecoded::MemoryBudget,
    ];

    fn label(self) -> &'static str {
        match self {
            Undecoded::Error => "decode_error",
            Undecoded::TooLarge => "too_large",
            Undecoded::Backlog => "backlog",
            Undecoded::MemoryBudget => "memory_budget",
        }
    }
}

/// Why the tool closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evicted {
    /// `--max-connections` were open when another came.
    ConnectionCap,
    /// `--memory-budget` was spent.
    MemoryBudget,
    /// Nothing passed for `--idle-timeout`.
    IdleTimeout,
}

impl Evicted {
    const ALL: [Evicted; 3] = [
        Evicted::ConnectionCap,
        Evicted::MemoryBudget,
        Evicted::IdleTimeout,
    ];

    fn label(self) -> &'static str {
        match self {
            Evicted::ConnectionCap => "connection_cap",
            Evicted::MemoryBudget => "memory_budget",
            Evicted::IdleTimeout => "idle_timeout",
        }
    }
}

impl From<super::registry::Eviction> for Evicted {
    fn from(eviction: super::registry::Eviction) -> Self {
        match eviction {
            super::registry::Eviction::ConnectionCap => Evicted::ConnectionCap,
            super::registry::Eviction::MemoryBudget => Evicted::MemoryBudget,
        }
    }
}

/// How a request to the metrics endpoint ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scrape {
    /// Answered with the metrics (GET or HEAD /metrics).
    Served,
    /// Answered 404 or 405: another path or method.
    NotFound,
    /// Not an HTTP request, or a request head over the size limit: answered 400 or 431.
    BadRequest,
    /// The request did not arrive (or the answer could not be written) in time.
    TimedOut,
    /// Closed to make room for another scraper (the cap on scraper connections).
    Evicted,
    /// `--memory-budget` had no room for the answer: answered 503.
    NoMemory,
}

impl Scrape {
    const ALL: [Scrape; 6] = [
        Scrape::Served,
        Scrape::NotFound,
        Scrape::BadRequest,
        Scrape::TimedOut,
        Scrape::Evicted,
        Scrape::NoMemory,
    ];

    fn label(self) -> &'static str {
        match self {
            Scrape::Served => "served",
            Scrape::NotFound => "not_found",
            Scrape::BadRequest => "bad_request",
            Scrape::TimedOut => "timed_out",
            Scrape::Evicted => "evicted",
            Scrape::NoMemory => "no_memory",
        }
    }
}

fn direction_label(direction: Direction) -> &'static str {
    match direction {
        Direction::ToServer => "to_server",
        Direction::ToClient => "to_client",
    }
}

fn direction_index(direction: Direction) -> usize {
    match direction {
        Direction::ToServer => 0,
        Direction::ToClient => 1,
    }
}

/// A latency histogram on atomics: a count per bucket (not cumulative; the last is +Inf)
/// and the sum in nanoseconds.
#[derive(Debug)]
struct Latency {
    buckets: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Latency {
    fn new() -> Self {
        Latency {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_nanos: AtomicU64::new(0),
        }
    }

    fn observe(&self, latency: Duration) {
        let seconds = latency.as_secs_f64();
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The sum in seconds, the count, and each bucket's own count (the encoder adds them up
    /// into the text format's cumulative buckets). The count is the buckets' total, so that
    /// `+Inf` always equals it even while observations land during a scrape.
    fn snapshot(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let mut total = 0;
        let mut buckets = Vec::with_capacity(self.buckets.len());
        for (index, count) in self.buckets.iter().enumerate() {
            let count = count.load(Ordering::Relaxed);
            total += count;
            let bound = LATENCY_BUCKETS.get(index).copied().unwrap_or(f64::INFINITY);
            buckets.push((bound, count));
        }
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        (sum, total, buckets)
    }
}

/// One API's series: requests and responses per version (the last slot is every version
/// outside the known range), latency, secrets redacted.
#[derive(Debug)]
struct ApiSeries {
    name: &'static str,
    requests: Box<[AtomicU64]>,
    responses: Box<[AtomicU64]>,
    latency: Latency,
    redactions: AtomicU64,
}

impl ApiSeries {
    /// For versions `0..=max` (none for an API this build does not know).
    fn new(name: &'static str, max: Option<i16>) -> Self {
        let slots = max.map_or(0, |max| usize::try_from(max).unwrap_or(0) + 1) + 1;
        let counters = || (0..slots).map(|_| AtomicU64::new(0)).collect();
        ApiSeries {
            name,
            requests: counters(),
            responses: counters(),
            latency: Latency::new(),
            redactions: AtomicU64::new(0),
        }
    }

    fn slot(&self, version: i16) -> usize {
        let other = self.requests.len() - 1;
        usize::try_from(version)
            .ok()
            .filter(|&v| v < other)
            .unwrap_or(other)
    }

    fn version_label(&self, slot: usize) -> String {
        if slot + 1 == self.requests.len() {
            OTHER_VERSION.to_owned()
        } else {
            slot.to_string()
        }
    }
}

/// Where a request was counted: what its response is counted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    api: u16,
    version: i16,
}

/// The counters of one server command. Shared by every connection; every method is a few
/// atomic additions.
#[derive(Debug)]
pub struct Metrics {
    /// Indexed by API key; the last entry is every key this build does not know.
    apis: Box<[ApiSeries]>,
    /// Bytes read, per direction.
    bytes: [AtomicU64; 2],
    /// Per direction, per [`Undecoded`].
    undecoded: [[AtomicU64; Undecoded::ALL.len()]; 2],
    denied: Family<[(&'static str, &'static str); 2], Counter>,
    opened: AtomicU64,
    closed: AtomicU64,
    evicted: [AtomicU64; Evicted::ALL.len()],
    scrapes: [AtomicU64; Scrape::ALL.len()],
    budget: Arc<Budget>,
    max_connections: usize,
}

impl Metrics {
    /// Counters for a command whose connections share `budget`, at most `max_connections`
    /// at once.
    pub fn new(budget: Arc<Budget>, max_connections: usize) -> Arc<Metrics> {
        let top = ApiKey::ALL.iter().map(|api| api.key()).max().unwrap_or(0);
        let mut apis: Vec<ApiSeries> = (0..=top)
            .map(|key| match ApiKey::from_key(key) {
                Some(api) => ApiSeries::new(api.name(), Some(api.valid_versions().max)),
                // A gap in the key numbers: reached only through `unknown_api`.
                None => ApiSeries::new(UNKNOWN_API, None),
            })
            .collect();
        apis.push(ApiSeries::new(UNKNOWN_API, None));
        Arc::new(Metrics {
            apis: apis.into_boxed_slice(),
            bytes: Default::default(),
            undecoded: Default::default(),
            denied: Family::default(),
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            evicted: Default::default(),
            scrapes: Default::default(),
            budget,
            max_connections,
        })
    }

    /// The table index of API key `key`.
    fn api_index(&self, key: i16) -> usize {
        let unknown = self.apis.len() - 1;
        match ApiKey::from_key(key) {
            Some(api) => usize::try_from(api.key()).unwrap_or(unknown).min(unknown),
            None => unknown,
        }
    }

    /// Bytes read from a client (`ToServer`) or from the upstream (`ToClient`).
    pub fn bytes(&self, direction: Direction, n: usize) {
        self.bytes[direction_index(direction)].fetch_add(n as u64, Ordering::Relaxed);
    }

    /// A request of API `key` at `version` passed; what its response is to be counted
    /// under.
    pub fn request(&self, key: i16, version: i16) -> Counted {
        let api = self.api_index(key);
        let series = &self.apis[api];
        series.requests[series.slot(version)].fetch_add(1, Ordering::Relaxed);
        Counted {
            api: u16::try_from(api).unwrap_or(u16::MAX),
            version,
        }
    }

    /// The response to a request counted as `request` passed, `latency` after it.
    pub fn response(&self, request: Counted, latency: Duration) {
        let Some(series) = self.apis.get(usize::from(request.api)) else {
            return;
        };
        series.responses[series.slot(request.version)].fetch_add(1, Ordering::Relaxed);
        series.latency.observe(latency);
    }

    /// A response that answers no request seen (its correlation id matched none).
    pub fn unmatched_response(&self) {
        let series = &self.apis[self.apis.len() - 1];
        series.responses[series.slot(-1)].fetch_add(1, Ordering::Relaxed);
    }

    /// A frame going `direction` was not decoded for the log.
    pub fn undecoded(&self, direction: Direction, why: Undecoded) {
        let reason = Undecoded::ALL.iter().position(|&u| u == why).unwrap_or(0);
        self.undecoded[direction_index(direction)][reason].fetch_add(1, Ordering::Relaxed);
    }

    /// `values` secrets of a message of `api` were replaced by markers in the log.
    pub fn redacted(&self, api: ApiKey, values: usize) {
        let series = &self.apis[self.api_index(api.key())];
        series
            .redactions
            .fetch_add(values as u64, Ordering::Relaxed);
    }

    /// A request of `api` was denied by a policy and answered by the tool, not forwarded.
    /// `reason` names the rule (`"deny_api"`, `"deny_topic"`): a fixed name from the code,
    /// never text from the peer, so the series stay few.
    #[allow(dead_code)] // Called by the policies (`--deny-api`, `--deny-topic`).
    pub fn denied(&self, api: ApiKey, reason: &'static str) {
        self.denied
            .get_or_create(&[("api", api.name()), ("reason", reason)])
            .inc();
    }

    /// A connection was accepted; it counts as open until the returned guard is dropped.
    pub fn connection(self: &Arc<Self>) -> OpenConnection {
        self.opened.fetch_add(1, Ordering::Relaxed);
        OpenConnection {
            metrics: Arc::clone(self),
        }
    }

    /// The tool closed a connection, for `why`.
    pub fn evicted(&self, why: Evicted) {
        let index = Evicted::ALL.iter().position(|&e| e == why).unwrap_or(0);
        self.evicted[index].fetch_add(1, Ordering::Relaxed);
    }

    /// A request to the metrics endpoint ended as `how`.
    pub fn scrape(&self, how: Scrape) {
        let index = Scrape::ALL.iter().position(|&s| s == how).unwrap_or(0);
        self.scrapes[index].fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition (format 0.0.4) of every metric.
    pub fn render(self: &Arc<Self>) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Arc::clone(self)));
        let mut text = String::new();
        // Writing to a String cannot fail, and the collector only fails when the writer does.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &registry);
        text
    }

    /// The `Content-Type` of [`Metrics::render`]'s text.
    pub const CONTENT_TYPE: &'static str =
        prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
}

/// A connection counted as open; counted as closed when dropped.
#[derive(Debug)]
pub struct OpenConnection {
    metrics: Arc<Metrics>,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.metrics.closed.fetch_add(1, Ordering::Relaxed);
    }
}

/// The requests of one proxied connection that await their responses, oldest first: what
/// each response is counted under, and when its request was seen. Read from the frames' first
/// bytes only, so it works with `--no-log`, which decodes nothing.
#[derive(Debug)]
pub struct Awaiting {
    queue: VecDeque<(i32, Counted, Instant)>,
    /// What `queue`'s capacity holds, on the memory budget. Bounded by `--max-in-flight`:
    /// the tap stops reading requests at that many unanswered.
    charge: Charge,
}

/// Bytes a request awaiting its response costs.
const AWAITING_ENTRY: usize = std::mem::size_of::<(i32, Counted, Instant)>();

impl Awaiting {
    pub fn new(budget: &Arc<Budget>) -> Self {
        Awaiting {
            queue: VecDeque::new(),
            charge: budget.none(),
        }
    }

    /// Counts the request frame that starts with `head` (without size prefix), seen whole
    /// at `seen`, and remembers it if it is `answered` (it expects a response:
    /// `RawRequestHeader::expects_response`). One the budget has no room to remember is
    /// counted, and its response counted as answering no request.
    pub fn request(&mut self, metrics: &Metrics, head: &[u8], answered: bool, seen: Instant) {
        let Some(header) = RawRequestHeader::peek(head) else {
            // Shorter than a request header.
            metrics.request(-1, -1);
            return;
        };
        let counted = metrics.request(header.api_key, header.api_version);
        if !answered {
            return;
        }
        if self.queue.len() == self.queue.capacity() {
            let capacity = (self.queue.capacity() * 2).max(8);
            if !self.charge.try_grow_optional(capacity * AWAITING_ENTRY) {
                return;
            }
            self.queue.reserve_exact(capacity - self.queue.len());
        }
        self.queue.push_back((header.correlation_id, counted, seen));
    }

    /// Counts the response frame that starts with `head`, seen whole at `seen`. Kafka answers
    /// in order: requests before the one it answers will not be answered, and are forgotten.
    pub fn response(&mut self, metrics: &Metrics, head: &[u8], seen: Instant) {
        let id = head.first_chunk::<4>().map(|id| i32::from_be_bytes(*id));
        let at = id.and_then(|id| self.queue.iter().position(|(awaited, ..)| *awaited == id));
        let Some(at) = at else {
            metrics.unmatched_response();
            return;
        };
        self.queue.drain(..at);
        if let Some((_, counted, requested)) = self.queue.pop_front() {
            metrics.response(counted, seen.saturating_duration_since(requested));
        }
    }
}

fn counter(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (Vec<(&'static str, String)>, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in series {
        ConstCounter::new(value).encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}

fn gauge(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    let metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX)).encode(metric)
}

impl Collector for Metrics {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        // Per API and version; a series appears once it is not zero (all of them at zero
        // would be thousands of lines per scrape).
        let by_version = |pick: fn(&ApiSeries) -> &[AtomicU64]| {
            let mut series = Vec::new();
            for api in self.apis.iter() {
                for (slot, counter) in pick(api).iter().enumerate() {
                    let value = load(counter);
                    if value > 0 {
                        let labels = vec![
                            ("api", api.name.to_owned()),
                            ("version", api.version_label(slot)),
                        ];
                        series.push((labels, value));
                    }
                }
            }
            series
        };
        counter(
            &mut encoder,
            "kafka_codec_requests",
            "Requests by API and version (from each request's header); version \"other\" is \
             one outside the versions this build knows, api \"unknown\" a key it does not know.",
            by_version(|api| &api.requests),
        )?;
        counter(
            &mut encoder,
            "kafka_codec_responses",
            "Responses by the API and version of the request they answer; api \"unknown\": \
             one that answers a request of an unknown key, or no request seen.",
            by_version(|api| &api.responses),
        )?;
        {
            let mut metric = encoder.encode_descriptor(
                "kafka_codec_latency_seconds",
                "Time from a request's last byte read to its response's last byte read (the \
                 tap) or written (quorum serve), by API.",
                None,
                MetricType::Histogram,
            )?;
            for api in self.apis.iter() {
                let (sum, count, buckets) = api.latency.snapshot();
                if count > 0 {
                    let labels = [("api", api.name)];
                    metric
                        .encode_family(&labels)?
                        .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
                }
            }
        }
        counter(
            &mut encoder,
            "kafka_codec_bytes",
            "Bytes read: from clients (to_server) and from the upstream or written to clients \
             (to_client).",
            [Direction::ToServer, Direction::ToClient].map(|direction| {
                (
                    vec![("direction", direction_label(direction).to_owned())],
                    load(&self.bytes[direction_index(direction)]),
                )
            }),
        )?;
        let mut undecoded = Vec::new();
        for direction in [Direction::ToServer, Direction::ToClient] {
            for (index, why) in Undecoded::ALL.iter().enumerate() {
                undecoded.push((
                    vec![
                        ("direction", direction_label(direction).to_owned()),
                        ("reason", why.label().to_owned()),
                    ],
                    load(&self.undecoded[direction_index(direction)][index]),
                ));
            }
        }
        counter(
            &mut encoder,
            "kafka_codec_undecoded_frames",
            "Frames forwarded but not decoded for the log, by direction and reason (none with \
             --no-log, which decodes nothing).",
            undecoded,
        )?;
        counter(
            &mut encoder,
            "kafka_codec_redactions",
            "Secret values replaced by a marker in the log, by API (none with --log-secrets).",
            self.apis.iter().filter_map(|api| {
                let value = load(&api.redactions);
                (value > 0).then(|| (vec![("api", api.name.to_owned())], value))
            }),
        )?;
        self.denied.encode(encoder.encode_descriptor(
            "kafka_codec_denied",
            "Requests denied by a policy and answered by the tool, by API and rule.",
            None,
            MetricType::Counter,
        )?)?;
        let opened = load(&self.opened);
        let closed = load(&self.closed);
        counter(
            &mut encoder,
            "kafka_codec_connections_opened",
            "Client connections accepted.",
            [(Vec::new(), opened)],
        )?;
        counter(
            &mut encoder,
            "kafka_codec_connections_closed",
            "Client connections ended, for any reason.",
            [(Vec::new(), closed)],
        )?;
        gauge(
            &mut encoder,
            "kafka_codec_connections_open",
            "Client connections open now.",
            opened.saturating_sub(closed),
        )?;
        gauge(
            &mut encoder,
            "kafka_codec_connections_max",
            "--max-connections: at this many, the connection longest without a request is \
             closed for a new one.",
            self.max_connections as u64,
        )?;
        counter(
            &mut encoder,
            "kafka_codec_connections_evicted",
            "Client connections the tool closed, by reason.",
            Evicted::ALL.iter().enumerate().map(|(index, why)| {
                (
                    vec![("reason", why.label().to_owned())],
                    load(&self.evicted[index]),
                )
            }),
        )?;
        gauge(
            &mut encoder,
            "kafka_codec_memory_budget_in_use_bytes",
            "Bytes charged to --memory-budget now.",
            self.budget.in_use() as u64,
        )?;
        gauge(
            &mut encoder,
            "kafka_codec_memory_budget_limit_bytes",
            "--memory-budget, in bytes.",
            self.budget.limit() as u64,
        )?;
        counter(
            &mut encoder,
            "kafka_codec_metrics_requests",
            "Requests to this metrics endpoint, by outcome.",
            Scrape::ALL.iter().enumerate().map(|(index, how)| {
                (
                    vec![("outcome", how.label().to_owned())],
                    load(&self.scrapes[index]),
                )
            }),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> Arc<Metrics> {
        Metrics::new(Budget::new(1 << 20), 10)
    }

    /// The value of the sample line that starts with `series` (name and labels).
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .map(|value| value.parse().unwrap())
    }

    #[test]
    fn requests_and_responses_are_counted_by_api_and_version() {
        let metrics = metrics();
        for _ in 0..3 {
            let counted = metrics.request(ApiKey::Metadata.key(), 12);
            metrics.response(counted, Duration::from_millis(3));
        }
        metrics.request(ApiKey::Metadata.key(), i16::MAX);
        metrics.request(ApiKey::Metadata.key(), -5);
        metrics.request(31_000, 2);
        metrics.unmatched_response();
        let text = metrics.render();
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_requests_total{api="Metadata",version="12"}"#
            ),
            Some(3.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_requests_total{api="Metadata",version="other"}"#
            ),
            Some(2.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_requests_total{api="unknown",version="other"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_responses_total{api="unknown",version="other"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_latency_seconds_count{api="Metadata"}"#
            ),
            Some(3.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_latency_seconds_bucket{api="Metadata",le="0.0025"}"#
            ),
            Some(0.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_latency_seconds_bucket{api="Metadata",le="0.005"}"#
            ),
            Some(3.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_latency_seconds_bucket{api="Metadata",le="+Inf"}"#
            ),
            Some(3.0)
        );
        let sum = sample(&text, r#"kafka_codec_latency_seconds_sum{api="Metadata"}"#).unwrap();
        assert!((sum - 0.009).abs() < 1e-9, "{sum}");
        // Only series that happened are shown.
        assert!(!text.contains(r#"api="Produce""#), "{text}");
    }

    /// A request frame's first bytes: API key, version, correlation id, client id "c".
    fn request_head(api: ApiKey, version: i16, correlation_id: i32) -> Vec<u8> {
        let mut head = Vec::new();
        head.extend_from_slice(&api.key().to_be_bytes());
        head.extend_from_slice(&version.to_be_bytes());
        head.extend_from_slice(&correlation_id.to_be_bytes());
        head.extend_from_slice(&[0, 1, b'c']);
        head
    }

    #[test]
    fn responses_are_matched_to_requests_in_order() {
        let metrics = metrics();
        let budget = Budget::new(1 << 20);
        let mut awaiting = Awaiting::new(&budget);
        let start = Instant::now();
        awaiting.request(
            &metrics,
            &request_head(ApiKey::Metadata, 12, 1),
            true,
            start,
        );
        awaiting.request(
            &metrics,
            &request_head(ApiKey::ApiVersions, 3, 2),
            true,
            start,
        );
        awaiting.request(&metrics, &request_head(ApiKey::Fetch, 17, 3), true, start);
        // A Produce with acks = 0: counted, never awaited.
        awaiting.request(&metrics, &request_head(ApiKey::Produce, 9, 4), false, start);
        awaiting.request(&metrics, &[0, 1], true, start);
        assert!(budget.in_use() > 0, "what it remembers is charged");
        // The server skips correlation id 1 and answers 2: 1 is never answered.
        awaiting.response(
            &metrics,
            &2i32.to_be_bytes(),
            start + Duration::from_millis(2),
        );
        awaiting.response(&metrics, &1i32.to_be_bytes(), start);
        awaiting.response(
            &metrics,
            &3i32.to_be_bytes(),
            start + Duration::from_millis(20),
        );
        awaiting.response(&metrics, &[0, 0], start);
        let text = metrics.render();
        for (series, value) in [
            (
                r#"kafka_codec_requests_total{api="Metadata",version="12"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_requests_total{api="unknown",version="other"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_responses_total{api="ApiVersions",version="3"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_responses_total{api="Fetch",version="17"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_responses_total{api="unknown",version="other"}"#,
                2.0,
            ),
            (r#"kafka_codec_latency_seconds_sum{api="Fetch"}"#, 0.02),
        ] {
            assert_eq!(sample(&text, series), Some(value), "{series}:\n{text}");
        }
        assert_eq!(
            sample(
                &text,
                r#"kafka_codec_responses_total{api="Metadata",version="12"}"#
            ),
            None
        );
        drop(awaiting);
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn every_family_is_shown_from_the_start() {
        let text = metrics().render();
        for family in [
            "kafka_codec_requests_total counter",
            "kafka_codec_responses_total counter",
            "kafka_codec_latency_seconds histogram",
            "kafka_codec_bytes_total counter",
            "kafka_codec_undecoded_frames_total counter",
            "kafka_codec_redactions_total counter",
            "kafka_codec_denied_total counter",
            "kafka_codec_connections_opened_total counter",
            "kafka_codec_connections_closed_total counter",
            "kafka_codec_connections_open gauge",
            "kafka_codec_connections_max gauge",
            "kafka_codec_connections_evicted_total counter",
            "kafka_codec_memory_budget_in_use_bytes gauge",
            "kafka_codec_memory_budget_limit_bytes gauge",
            "kafka_codec_metrics_requests_total counter",
        ] {
            assert!(
                text.contains(&format!("# TYPE {family}\n")),
                "{family}:\n{text}"
            );
        }
        assert_eq!(
            sample(&text, "kafka_codec_memory_budget_limit_bytes"),
            Some(1048576.0)
        );
    }

    #[test]
    fn connections_denials_and_the_rest() {
        let metrics = metrics();
        let open = metrics.connection();
        drop(metrics.connection());
        metrics.evicted(Evicted::IdleTimeout);
        metrics.denied(ApiKey::Produce, "deny_api");
        metrics.denied(ApiKey::Produce, "deny_api");
        metrics.redacted(ApiKey::SaslAuthenticate, 2);
        metrics.bytes(Direction::ToServer, 10);
        metrics.bytes(Direction::ToServer, 5);
        metrics.undecoded(Direction::ToClient, Undecoded::TooLarge);
        metrics.scrape(Scrape::BadRequest);
        let text = metrics.render();
        for (series, value) in [
            ("kafka_codec_connections_opened_total", 2.0),
            ("kafka_codec_connections_closed_total", 1.0),
            ("kafka_codec_connections_open", 1.0),
            (
                r#"kafka_codec_connections_evicted_total{reason="idle_timeout"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_connections_evicted_total{reason="connection_cap"}"#,
                0.0,
            ),
            (
                r#"kafka_codec_denied_total{api="Produce",reason="deny_api"}"#,
                2.0,
            ),
            (
                r#"kafka_codec_redactions_total{api="SaslAuthenticate"}"#,
                2.0,
            ),
            (r#"kafka_codec_bytes_total{direction="to_server"}"#, 15.0),
            (r#"kafka_codec_bytes_total{direction="to_client"}"#, 0.0),
            (
                r#"kafka_codec_undecoded_frames_total{direction="to_client",reason="too_large"}"#,
                1.0,
            ),
            (
                r#"kafka_codec_metrics_requests_total{outcome="bad_request"}"#,
                1.0,
            ),
        ] {
            assert_eq!(sample(&text, series), Some(value), "{series}:\n{text}");
        }
        drop(open);
    }
}
