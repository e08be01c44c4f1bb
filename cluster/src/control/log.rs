//! The request log: every request the brokers received, with who sent it, when, what it
//! asked (decoded) and what the cluster did, for a test's assertions. Bounded: the newest
//! entries are kept, at most `capacity` of them and at most `byte_cap` bytes of requests (as
//! encoded: a produced batch held by the log is memory the retention caps do not see); the
//! per-API counts cover every request.

use kafka_codec::conn::IncomingRequest;
use kafka_codec::ApiKey;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};
// tokio's clock: paused in a deterministic test, so `at` is simulated time.
use tokio::time::Instant;

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
    /// When it was received, since the cluster started, by tokio's clock (simulated when the
    /// clock is paused).
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
    byte_cap: usize,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    /// Each entry with its request's encoded size.
    entries: VecDeque<(LoggedRequest, usize)>,
    /// The sizes of the entries held.
    bytes: usize,
    counts: BTreeMap<&'static str, u64>,
}

impl RequestLog {
    pub(crate) fn new(capacity: usize, byte_cap: usize) -> Self {
        RequestLog {
            inner: Mutex::default(),
            started: Instant::from_std(crate::clock::now()),
            capacity,
            byte_cap,
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
        let size = request.body.encoded_len(request.api_version).unwrap_or(0);
        while !inner.entries.is_empty()
            && (inner.entries.len() >= self.capacity || inner.bytes + size > self.byte_cap)
        {
            if let Some((_, gone)) = inner.entries.pop_front() {
                inner.bytes -= gone;
            }
        }
        inner.bytes += size;
        let at = received.saturating_duration_since(self.started);
        inner.entries.push_back((
            LoggedRequest {
                sequence,
                api: request.api_key(),
                version: request.api_version,
                correlation_id: request.correlation_id(),
                client_id: request.header.client_id.as_deref().map(str::to_owned),
                node_id: caller.node_id,
                connection: caller.connection,
                at,
                time: SystemTime::now()
                    - Instant::from_std(crate::clock::now()).saturating_duration_since(received),
                request: Arc::new(request.clone()),
                outcome,
            },
            size,
        ));
    }

    /// The entries held, oldest first.
    pub fn entries(&self) -> Vec<LoggedRequest> {
        self.inner()
            .entries
            .iter()
            .map(|(entry, _)| entry.clone())
            .collect()
    }

    /// The entries of `api`, oldest first.
    pub fn of(&self, api: ApiKey) -> Vec<LoggedRequest> {
        self.inner()
            .entries
            .iter()
            .filter(|(entry, _)| entry.api == api)
            .map(|(entry, _)| entry.clone())
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
        inner.bytes = 0;
        inner.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::messages::{MetadataRequest, RequestHeader};

    fn request(correlation_id: i32) -> IncomingRequest {
        IncomingRequest {
            header: RequestHeader::default().with_correlation_id(correlation_id),
            body: MetadataRequest::default().into(),
            api_version: 12,
        }
    }

    #[test]
    fn the_log_keeps_the_newest_within_its_caps_and_counts_everything() {
        let caller = crate::control::Caller {
            node_id: 0,
            connection: 1,
            peer: "127.0.0.1:1".parse().unwrap(),
        };
        let size = request(0).body.encoded_len(12).unwrap();
        // Room for three by count, two by bytes.
        let log = RequestLog::new(3, 2 * size);
        for id in 0..5 {
            log.record(
                &caller,
                &request(id),
                Instant::from_std(crate::clock::now()),
                "answered".into(),
            );
        }
        let held: Vec<i32> = log.entries().iter().map(|e| e.correlation_id).collect();
        assert_eq!(held, [3, 4]);
        assert_eq!(log.count(ApiKey::Metadata), 5);
        let by_count = RequestLog::new(3, usize::MAX);
        for id in 0..5 {
            by_count.record(
                &caller,
                &request(id),
                Instant::from_std(crate::clock::now()),
                "answered".into(),
            );
        }
        let held: Vec<u64> = by_count.entries().iter().map(|e| e.sequence).collect();
        assert_eq!(held, [2, 3, 4]);
        by_count.clear();
        assert!(by_count.entries().is_empty());
        assert_eq!(by_count.count(ApiKey::Metadata), 0);
    }
}
