//! Responses the tap changes: `--rewrite-brokers` (the tap as every broker of a cluster),
//! `--clamp-versions` (ApiVersions narrowed to what this tool decodes, see [`clamp`]), and
//! for `--deny-api`/`--deny-topic` the broker's answers to split requests (merged with the
//! denied entries) and the place of the tap's own answers among the broker's ([`Rewrite`]'s
//! queue, in request order).
//!
//! Clients learn broker addresses from responses (Metadata, FindCoordinator,
//! DescribeCluster, and the new-leader endpoints of Produce, Fetch, ShareFetch and
//! ShareAcknowledge) and then connect to them directly. With rewriting on, the tap gives
//! every upstream address it finds in those responses a listener of its own (the bootstrap
//! address keeps `--listen`; any other gets a free port on the same interface, opened the
//! first time the address appears) and puts that listener's address in the response instead.
//! A Kafka connection does not say which broker it wants, so one listener per broker is the
//! only routing that works with unmodified clients.
//!
//! A response that may carry addresses is held until complete, decoded, rewritten and
//! encoded again; every other frame streams through untouched. Holding and decoding are
//! charged to the memory budget; a response the budget cannot take is forwarded as it is,
//! and the log says so.

use super::policy::{Merge, NAMED_TOPIC_VERSIONS};
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::RawRequestHeader;
use kafka_codec::messages::api_versions_response::ApiVersion;
use kafka_codec::serde_json::{json, Value};
use kafka_codec::Framing;
use kafka_codec::{
    ApiKey, DecodeLimits, DecodeOptions, ErrorCode, Response, ResponseFrame, Utf8Bytes,
};
use kafka_codec_server::budget::Budget;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// Starts serving a new broker listener: the listener, bound already, and the upstream it
/// stands for.
pub type OpenListener = Box<dyn Fn(TcpListener, String) + Send + Sync>;

/// Requests remembered per connection; past this, the oldest are forgotten (they can only
/// be requests that were never answered, such as Produce with `acks = 0`).
const MAX_AWAITING: usize = 4096;

/// Upstream broker address → the tap's listener for it, for the whole tap.
pub struct Brokers {
    /// The host written into rewritten responses.
    advertised_host: String,
    /// The interface new listeners bind.
    listen_ip: IpAddr,
    listeners: Mutex<HashMap<(String, i32), u16>>,
    open: OpenListener,
}

impl Brokers {
    /// `bootstrap` (the `--upstream` address) is already served by `listen`; `open` starts
    /// serving each listener opened later.
    pub fn new(
        advertised_host: String,
        listen: SocketAddr,
        bootstrap: &str,
        open: OpenListener,
    ) -> Self {
        let mut listeners = HashMap::new();
        if let Some((host, port)) = split_host_port(bootstrap) {
            listeners.insert((host, port), listen.port());
        }
        Brokers {
            advertised_host,
            listen_ip: listen.ip(),
            listeners: Mutex::new(listeners),
            open,
        }
    }

    /// The port of the listener for upstream `host:port`, opened now if there is none yet.
    fn port_for(&self, host: &str, port: i32) -> std::io::Result<u16> {
        let mut listeners = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&local) = listeners.get(&(host.to_owned(), port)) {
            return Ok(local);
        }
        let listener = TcpListener::bind((self.listen_ip, 0))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        (self.open)(listener, join_host_port(host, port));
        listeners.insert((host.to_owned(), port), local.port());
        Ok(local.port())
    }
}

/// Distinct addresses (and errors) a note lists; the rest are counted, so that a response
/// naming a thousand brokers still makes a short line.
const NOTE_ENTRIES: usize = 24;

/// What one rewritten response had, and what it became: broker addresses, the API version
/// ranges of an ApiVersions response (`--clamp-versions`, the `--deny-topic` cap), or the
/// denial merged into it (or the tap's own answer).
#[derive(Debug, Clone, Default)]
pub struct Note {
    pub changes: Vec<(String, String)>,
    pub errors: Vec<String>,
    pub versions: Option<Clamped>,
    /// The denial this response carries (`--deny-api`/`--deny-topic`): merged into the
    /// broker's answer, or the tap's own answer.
    pub denied: Option<Value>,
}

impl Note {
    pub fn json(&self) -> Value {
        let mut value = if self.changes.is_empty() && self.errors.is_empty() {
            json!({})
        } else {
            self.addresses_json()
        };
        if let Some(clamped) = &self.versions {
            value["clampedVersions"] = clamped.json();
        }
        if let Some(denied) = &self.denied {
            value["denied"] = denied.clone();
        }
        if value.as_object().is_some_and(|fields| fields.is_empty()) {
            value = self.addresses_json();
        }
        value
    }

    fn addresses_json(&self) -> Value {
        let mut changes = self.changes.clone();
        changes.sort();
        changes.dedup();
        let listed: Vec<Value> = changes
            .iter()
            .take(NOTE_ENTRIES)
            .map(|(from, to)| json!({"from": from, "to": to}))
            .collect();
        let mut value = json!({ "addresses": listed });
        if changes.len() > NOTE_ENTRIES {
            value["moreAddresses"] = json!(changes.len() - NOTE_ENTRIES);
        }
        if !self.errors.is_empty() {
            let errors: Vec<&String> = self.errors.iter().take(NOTE_ENTRIES).collect();
            value["errors"] = json!(errors);
            if self.errors.len() > NOTE_ENTRIES {
                value["moreErrors"] = json!(self.errors.len() - NOTE_ENTRIES);
            }
        }
        value
    }
}

/// One connection's rewriting: the requests whose responses may carry addresses
/// (`--rewrite-brokers`) or API versions (`--clamp-versions`, and the cap `--deny-topic`
/// puts on topic-id versions) or are merged with denied entries (`--deny-topic`); and, with
/// `--deny-api`/`--deny-topic`, every request awaiting a response, so that the tap's own
/// answers go to the client in request order among the broker's.
pub struct Rewrite {
    brokers: Option<Arc<Brokers>>,
    clamp_versions: bool,
    /// With topic rules: ApiVersions capped at the versions that name their topics.
    cap_topic_versions: bool,
    /// Whether the tap answers requests itself (so every request is queued).
    answers: bool,
    budget: Arc<Budget>,
    options: DecodeOptions,
    queue: Mutex<VecDeque<Queued>>,
}

/// A request awaiting its response, in request order.
enum Queued {
    /// Forwarded to the broker.
    Forwarded {
        id: i32,
        api: Option<ApiKey>,
        version: i16,
        /// Its response is held and changed.
        held: bool,
        merge: Option<Merge>,
    },
    /// Answered by the tap: its response goes to the client once the broker has answered
    /// everything before it, and once the logger has seen the request (`ready`).
    Answer {
        response: Bytes,
        note: Note,
        ready: bool,
    },
}

/// What decides which responses are held.
pub struct Settings {
    pub brokers: Option<Arc<Brokers>>,
    pub clamp_versions: bool,
    pub cap_topic_versions: bool,
    pub answers: bool,
}

impl Rewrite {
    pub fn new(settings: Settings, budget: Arc<Budget>, options: DecodeOptions) -> Self {
        Rewrite {
            brokers: settings.brokers,
            clamp_versions: settings.clamp_versions,
            cap_topic_versions: settings.cap_topic_versions,
            answers: settings.answers,
            budget,
            options,
            queue: Mutex::new(VecDeque::new()),
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<Queued>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request passed toward the server (`expects_response` unless a Produce with
    /// `acks = 0`): remember it if its response is changed, or if the tap answers requests
    /// (then every request that gets a response). `merge` is what a split request's
    /// response gets added.
    pub fn request(&self, header: RawRequestHeader, expects_response: bool, merge: Option<Merge>) {
        let api = header.api();
        let held = merge.is_some()
            || api.is_some_and(|api| {
                (self.brokers.is_some() && carries_addresses(api, header.api_version))
                    || ((self.clamp_versions || self.cap_topic_versions)
                        && api == ApiKey::ApiVersions)
            });
        if !(held || self.answers && expects_response) {
            return;
        }
        let mut queue = self.queue();
        if queue.len() >= MAX_AWAITING {
            // Only a forwarded request never answered can be this old; an answer of the
            // tap's is bounded by --max-in-flight.
            if let Some(at) = queue
                .iter()
                .position(|q| matches!(q, Queued::Forwarded { .. }))
            {
                queue.remove(at);
            }
        }
        queue.push_back(Queued::Forwarded {
            id: header.correlation_id,
            api,
            version: header.api_version,
            held,
            merge,
        });
    }

    /// A request the tap answers itself with `response` (size-prefixed); it goes out once
    /// [`Rewrite::release_answers`] says the logger has seen the request.
    pub fn answer(&self, response: Bytes, note: Note) {
        self.queue().push_back(Queued::Answer {
            response,
            note,
            ready: false,
        });
    }

    /// The requests of the tap's answers queued so far have been handed to the logger.
    pub fn release_answers(&self) {
        if !self.answers {
            return;
        }
        for queued in self.queue().iter_mut() {
            if let Queued::Answer { ready, .. } = queued {
                *ready = true;
            }
        }
    }

    /// The tap's answers due now: those at the front of the queue, with no forwarded
    /// request before them still awaiting the broker.
    pub fn due_answers(&self) -> Vec<(Bytes, Note)> {
        let mut queue = self.queue();
        let mut due = Vec::new();
        while let Some(Queued::Answer { ready: true, .. }) = queue.front() {
            if let Some(Queued::Answer { response, note, .. }) = queue.pop_front() {
                due.push((response, note));
            }
        }
        due
    }

    /// Whether the response with this correlation id is changed (so it is held).
    pub fn awaits(&self, correlation_id: i32) -> bool {
        self.queue()
            .iter()
            .any(|q| matches!(q, Queued::Forwarded { id, held: true, .. } if *id == correlation_id))
    }

    /// Takes the request the response with `id` answers off the queue: Kafka answers in
    /// order, so forwarded requests before it were never going to be answered (the tap's
    /// answers before it stay, and go out next).
    fn take(&self, id: i32) -> Option<(Option<ApiKey>, i16, bool, Option<Merge>)> {
        let mut queue = self.queue();
        let at = queue
            .iter()
            .position(|q| matches!(q, Queued::Forwarded { id: seen, .. } if *seen == id))?;
        let mut index = 0;
        let mut taken = None;
        queue.retain_mut(|q| {
            let keep = index > at || matches!(q, Queued::Answer { .. });
            if index == at {
                if let Queued::Forwarded {
                    api,
                    version,
                    held,
                    merge,
                    ..
                } = q
                {
                    taken = Some((*api, *version, *held, merge.take()));
                }
            }
            index += 1;
            keep
        });
        taken
    }

    /// A response passed unchanged (not held): its request leaves the queue.
    pub fn responded(&self, correlation_id: i32) {
        if self.answers {
            let _ = self.take(correlation_id);
        }
    }

    /// The response frame (without size prefix) with its addresses rewritten, size prefix
    /// included, and what changed; `None` to forward it unchanged (nothing to rewrite, or
    /// it does not decode, which the log reports).
    pub fn response(&self, frame: Bytes) -> Option<(Bytes, Note)> {
        let id = i32::from_be_bytes(frame.get(..4)?.try_into().ok()?);
        let (api, version, held, merge) = self.take(id)?;
        let api = api.filter(|_| held)?;
        let denied = merge.as_ref().map(|merge| merge.denial.clone());
        // What decoding may take, charged first: the default budget for the frame, as far as
        // the process budget has room.
        let want = DecodeLimits::default().memory_budget_for(frame.len());
        let Some(charge) = self.budget.try_reserve_optional(want) else {
            let mut note = Note::default();
            note.errors.push(format!(
                "not rewritten: decoding this {}-byte response could take {want} bytes, more \
                 than --memory-budget has free; forwarded as it is",
                frame.len()
            ));
            return Some((size_prefixed(&frame), note));
        };
        let mut options = self.options;
        options.limits.memory_budget = Some(charge.bytes());
        let mut response = if api == ApiKey::ApiVersions {
            decode_api_versions(frame, version, &options)?
        } else {
            ResponseFrame::decode_with(frame, api, version, &options).ok()?
        };
        let note = match (&mut response.body, merge) {
            (Response::ApiVersions(body), _) => {
                let caps: &[(ApiKey, i16)] = if self.cap_topic_versions {
                    NAMED_TOPIC_VERSIONS
                } else {
                    &[]
                };
                Note {
                    versions: Some(clamp(&mut body.api_keys, self.clamp_versions, caps)),
                    ..Note::default()
                }
            }
            (body, Some(merge)) => {
                merge.into_response(body);
                let mut note = self.rewrite_addresses(body, version).unwrap_or_default();
                note.denied = denied;
                note
            }
            (body, None) => self.rewrite_addresses(body, version)?,
        };
        let mut out = BytesMut::new();
        response.encode(&mut out, Framing::SizePrefixed).ok()?;
        Some((out.freeze(), note))
    }
}

impl Rewrite {
    /// Puts the tap's listeners in place of the broker addresses in `body`; `None` if there
    /// were none.
    fn rewrite_addresses(&self, body: &mut Response, version: i16) -> Option<Note> {
        let brokers = self.brokers.as_ref()?;
        let mut note = Note::default();
        for (host, port) in addresses(body, version) {
            // Error answers carry placeholders ("" / -1), not addresses.
            if host.is_empty() || *port < 0 {
                continue;
            }
            let from = join_host_port(host, *port);
            match brokers.port_for(host, *port) {
                Ok(local) => {
                    *host = Utf8Bytes::from(brokers.advertised_host.as_str());
                    *port = i32::from(local);
                    note.changes.push((from, join_host_port(host, *port)));
                }
                Err(e) => note.errors.push(format!("no listener for {from}: {e}")),
            }
        }
        (!note.changes.is_empty() || !note.errors.is_empty()).then_some(note)
    }
}

/// An ApiVersions response to a request at `version`. A broker that does not support that
/// version answers at version 0 with `UNSUPPORTED_VERSION` (and its own ranges, so that the
/// client can pick a version it has): such an answer is decoded, and re-encoded, at v0.
/// Response header v0 either way, so only the body differs.
fn decode_api_versions(
    frame: Bytes,
    version: i16,
    options: &DecodeOptions,
) -> Option<ResponseFrame> {
    // The error code is the body's first field at every version, right after the
    // correlation id.
    let error = frame.get(4..6).map(|b| i16::from_be_bytes([b[0], b[1]]))?;
    let version = if ErrorCode::from(error) == ErrorCode::UNSUPPORTED_VERSION {
        0
    } else {
        version
    };
    ResponseFrame::decode_with(frame, ApiKey::ApiVersions, version, options).ok()
}

/// An API's versions, lowest and highest.
type Range = (i16, i16);

/// What `--clamp-versions` changed in one ApiVersions response.
#[derive(Debug, Clone, Default)]
pub struct Clamped {
    /// API, the broker's range, the range the client sees.
    pub narrowed: Vec<(ApiKey, Range, Range)>,
    /// APIs removed: key, and the broker's range. A known key whose ranges do not meet is
    /// removed too.
    pub dropped: Vec<(i16, Range)>,
}

impl Clamped {
    fn json(&self) -> Value {
        let narrowed: Vec<Value> = self
            .narrowed
            .iter()
            .map(|(api, broker, client)| {
                json!({"api": api.name(), "broker": [broker.0, broker.1], "client": [client.0, client.1]})
            })
            .collect();
        let dropped: Vec<Value> = self
            .dropped
            .iter()
            .map(|(key, broker)| {
                let mut entry = json!({"apiKey": key, "broker": [broker.0, broker.1]});
                if let Some(api) = ApiKey::from_key(*key) {
                    entry["api"] = json!(api.name());
                }
                entry
            })
            .collect();
        json!({"narrowed": narrowed, "dropped": dropped})
    }
}

/// With `decoded`, narrows each advertised API to the versions this crate decodes, and drops
/// the APIs it does not know. The crate's whole valid range counts, including a version its
/// schema marks unstable (DescribeQuorum v3): the broker advertises such a version only
/// when it has unstable versions enabled, and the intersection never offers more than the
/// broker. `caps` lowers the highest version of the APIs it names.
pub fn clamp(api_keys: &mut Vec<ApiVersion>, decoded: bool, caps: &[(ApiKey, i16)]) -> Clamped {
    let mut clamped = Clamped::default();
    api_keys.retain_mut(|entry| {
        let broker = (entry.min_version, entry.max_version);
        let known = ApiKey::from_key(entry.api_key).filter(|api| api.is_enabled());
        let (api, mut ours) = match known {
            Some(api) if decoded => (api, api.valid_versions()),
            Some(api) => (api, kafka_codec::VersionRange::new(i16::MIN, i16::MAX)),
            None if decoded => {
                clamped.dropped.push((entry.api_key, broker));
                return false;
            }
            None => return true,
        };
        if let Some(&(_, cap)) = caps.iter().find(|(capped, _)| *capped == api) {
            ours = kafka_codec::VersionRange::new(ours.min, ours.max.min(cap));
        }
        let client = (broker.0.max(ours.min), broker.1.min(ours.max));
        if client.0 > client.1 {
            clamped.dropped.push((entry.api_key, broker));
            return false;
        }
        if client != broker {
            clamped.narrowed.push((api, broker, client));
            entry.min_version = client.0;
            entry.max_version = client.1;
        }
        true
    });
    clamped
}

/// `frame` with its size prefix again.
fn size_prefixed(frame: &Bytes) -> Bytes {
    let mut out = BytesMut::with_capacity(4 + frame.len());
    out.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    out.extend_from_slice(frame);
    out.freeze()
}

/// Whether responses of `api` at `version` can name brokers.
fn carries_addresses(api: ApiKey, version: i16) -> bool {
    match api {
        ApiKey::Metadata | ApiKey::FindCoordinator | ApiKey::DescribeCluster => true,
        // The new-leader endpoints of KIP-951.
        ApiKey::Produce => version >= 10,
        ApiKey::Fetch => version >= 16,
        ApiKey::ShareFetch | ApiKey::ShareAcknowledge => true,
        _ => false,
    }
}

/// Every (host, port) in a response body.
fn addresses(body: &mut Response, version: i16) -> Vec<(&mut Utf8Bytes, &mut i32)> {
    match body {
        Response::Metadata(r) => r
            .brokers
            .iter_mut()
            .map(|b| (&mut b.host, &mut b.port))
            .collect(),
        // One coordinator up to v3, a list of them (one per key) from v4.
        Response::FindCoordinator(r) => {
            if version < 4 {
                vec![(&mut r.host, &mut r.port)]
            } else {
                r.coordinators
                    .iter_mut()
                    .map(|c| (&mut c.host, &mut c.port))
                    .collect()
            }
        }
        Response::DescribeCluster(r) => r
            .brokers
            .iter_mut()
            .map(|b| (&mut b.host, &mut b.port))
            .collect(),
        Response::Produce(r) => r
            .node_endpoints
            .iter_mut()
            .map(|n| (&mut n.host, &mut n.port))
            .collect(),
        Response::Fetch(r) => r
            .node_endpoints
            .iter_mut()
            .map(|n| (&mut n.host, &mut n.port))
            .collect(),
        Response::ShareFetch(r) => r
            .node_endpoints
            .iter_mut()
            .map(|n| (&mut n.host, &mut n.port))
            .collect(),
        Response::ShareAcknowledge(r) => r
            .node_endpoints
            .iter_mut()
            .map(|n| (&mut n.host, &mut n.port))
            .collect(),
        _ => Vec::new(),
    }
}

/// `host:port`, with an IPv6 host in brackets.
pub fn join_host_port(host: &str, port: i32) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `host:port` (`[v6]:port`) split; `None` without a port.
pub fn split_host_port(address: &str) -> Option<(String, i32)> {
    let (host, port) = address.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_round_trip() {
        assert_eq!(join_host_port("127.0.0.1", 9092), "127.0.0.1:9092");
        assert_eq!(join_host_port("::1", 9092), "[::1]:9092");
        assert_eq!(split_host_port("[::1]:9092"), Some(("::1".into(), 9092)));
        assert_eq!(
            split_host_port("kafka-0.example:19092"),
            Some(("kafka-0.example".into(), 19092))
        );
        assert_eq!(split_host_port("nope"), None);
    }

    #[test]
    fn which_responses_can_name_brokers() {
        assert!(carries_addresses(ApiKey::Metadata, 0));
        assert!(carries_addresses(ApiKey::FindCoordinator, 6));
        assert!(!carries_addresses(ApiKey::Produce, 9));
        assert!(carries_addresses(ApiKey::Produce, 10));
        assert!(!carries_addresses(ApiKey::Fetch, 15));
        assert!(carries_addresses(ApiKey::Fetch, 16));
        assert!(!carries_addresses(ApiKey::ApiVersions, 3));
    }
}
