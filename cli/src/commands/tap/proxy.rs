//! The running tap's shared state: what its listeners and connections share. A module of its
//! own, below both `tap` (which builds it) and `connection` (which reads it), so that imports
//! within the tap point one way.

use super::config::Config;
use super::log::Log;
use super::policy::Rules;
use super::rewrite::{Brokers, Rewrite, Settings};
use kafka_codec_server::budget::Budget;
use kafka_codec_server::metrics::Metrics;
use kafka_codec_server::registry::Registry;
use kafka_codec_server::stream::Resolver;
use kafka_codec_server::tls;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// The running tap: what its listeners and connections share.
pub struct Proxy {
    pub(super) config: Arc<Config>,
    pub(super) log: Option<Arc<Log>>,
    pub(super) brokers: Option<Arc<Brokers>>,
    /// `--deny-api`, `--deny-topic`.
    pub(super) rules: Arc<Rules>,
    pub(super) budget: Arc<Budget>,
    pub(super) registry: Arc<Registry>,
    /// What is counted for `--metrics-listen` (counted whether or not it is served).
    pub(super) metrics: Arc<Metrics>,
    pub(super) resolver: Arc<Resolver>,
    pub(super) listen_tls: Option<tls::Acceptor>,
    pub(super) upstream_tls: Option<tls::Client>,
    /// The decoding threads, where loggers run.
    pub(super) decode: tokio::runtime::Handle,
    pub(super) idle_timeout: Option<Duration>,
    pub(super) next_connection: AtomicU64,
    /// `--upstream`.
    pub(super) upstream: String,
}

impl Proxy {
    pub(super) fn rewrite(&self) -> Option<Rewrite> {
        let settings = Settings {
            brokers: self.brokers.clone(),
            clamp_versions: self.config.clamp_versions,
            cap_topic_versions: self.rules.has_topic_rules(),
            answers: !self.rules.is_empty(),
        };
        let changes = settings.brokers.is_some()
            || settings.clamp_versions
            || settings.cap_topic_versions
            || settings.answers;
        changes.then(|| Rewrite::new(settings, Arc::clone(&self.budget), self.config.options))
    }
}
