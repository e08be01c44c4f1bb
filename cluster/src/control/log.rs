//! The request log: every request the brokers received, with who sent it, when, what it
//! asked (decoded) and what the cluster did, for a test's assertions. Bounded: the newest
//! `capacity` entries are kept, the per-API counts cover every request.

use kafka_codec::conn::IncomingRequest;
use kafka_codec::ApiKey;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// One logged request.
#[derive(Debug, Clone)]
pub struct LoggedRequest {
    /// Its place in the log: 0, 1, … over the cluster's life.
    pub sequence: u64,
    /// The API.
    pub api: ApiKey,
    /// Its version.
    pub version: i16,
    /// Its correlation id.
    pub correlation_id: i32,
    /// The header's client id.
    pub client_id: Option<String>,
    /// The broker that received it.
    pub node_id: i32,
    /// The connection it came on.
    pub connection: u64,
    /// When it was received, since the cluster started.
    pub at: Duration,
    /// When it was received, by the wall clock.
    pub time: SystemTime,
    /// The request as decoded.
    pub request: Arc<IncomingRequest>,
    /// What was done: `answered`, `no answer` (acks 0), `closed: why`, or the rule's doing
    /// (`rule 3: error NOT_LEADER_OR_FOLLOWER`).
    pub outcome: String,
}

/// The log of one cluster.
#[derive(Debug)]
pub struct RequestLog {
    inner: Mutex<Inner>,
    started: Instant,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    entries: VecDeque<LoggedRequest>,
    counts: BTreeMap<&'static str, u64>,
}

impl RequestLog {
    pub(crate) fn new(capacity: usize) -> Self {
        RequestLog {
            inner: Mutex::default(),
            started: Instant::now(),
            capacity,
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn record(
        &self,
        caller: &super::Caller,
        request: &IncomingRequest,
        received: Instant,
        outcome: String,
    ) {
        let mut inner = self.inner();
        let sequence = inner.next;
        inner.next += 1;
        *inner.counts.entry(request.api_key().name()).or_default() += 1;
        if self.capacity == 0 {
            return;
        }
        if inner.entries.len() == self.capacity {
            inner.entries.pop_front();
        }
        let at = received.saturating_duration_since(self.started);
        inner.entries.push_back(LoggedRequest {
            sequence,
            api: request.api_key(),
            version: request.api_version,
            correlation_id: request.correlation_id(),
            client_id: request.header.client_id.as_deref().map(str::to_owned),
            node_id: caller.node_id,
            connection: caller.connection,
            at,
            time: SystemTime::now() - Instant::now().saturating_duration_since(received),
            request: Arc::new(request.clone()),
            outcome,
        });
    }

    /// The entries held, oldest first.
    pub fn entries(&self) -> Vec<LoggedRequest> {
        self.inner().entries.iter().cloned().collect()
    }

    /// The entries of `api`, oldest first.
    pub fn of(&self, api: ApiKey) -> Vec<LoggedRequest> {
        self.inner()
            .entries
            .iter()
            .filter(|entry| entry.api == api)
            .cloned()
            .collect()
    }

    /// Requests of `api` received so far (all of them, not only those held).
    pub fn count(&self, api: ApiKey) -> u64 {
        self.inner().counts.get(api.name()).copied().unwrap_or(0)
    }

    /// Requests received so far, by API name.
    pub fn counts(&self) -> BTreeMap<&'static str, u64> {
        self.inner().counts.clone()
    }

    /// Forgets the entries and the counts.
    pub fn clear(&self) {
        let mut inner = self.inner();
        inner.entries.clear();
        inner.counts.clear();
    }
}
