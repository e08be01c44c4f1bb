//! `--rewrite-brokers`: the tap as every broker of a cluster.
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

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::RawRequestHeader;
use kafka_codec::serde_json::{json, Value};
use kafka_codec::Framing;
use kafka_codec::{ApiKey, DecodeLimits, DecodeOptions, Response, ResponseFrame, Utf8Bytes};
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

/// The addresses one rewritten response had, and what they became.
#[derive(Debug, Clone, Default)]
pub struct Note {
    pub changes: Vec<(String, String)>,
    pub errors: Vec<String>,
}

impl Note {
    pub fn json(&self) -> Value {
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

/// One connection's rewriting: the requests whose responses may carry addresses.
pub struct Rewrite {
    brokers: Arc<Brokers>,
    budget: Arc<Budget>,
    options: DecodeOptions,
    awaiting: Mutex<VecDeque<(i32, ApiKey, i16)>>,
}

impl Rewrite {
    pub fn new(brokers: Arc<Brokers>, budget: Arc<Budget>, options: DecodeOptions) -> Self {
        Rewrite {
            brokers,
            budget,
            options,
            awaiting: Mutex::new(VecDeque::new()),
        }
    }

    fn awaiting(&self) -> std::sync::MutexGuard<'_, VecDeque<(i32, ApiKey, i16)>> {
        self.awaiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A request passed toward the server: remember it if its response may carry addresses.
    pub fn request(&self, header: RawRequestHeader) {
        let Some(api) = header.api() else { return };
        if !carries_addresses(api, header.api_version) {
            return;
        }
        let mut awaiting = self.awaiting();
        if awaiting.len() == MAX_AWAITING {
            awaiting.pop_front();
        }
        awaiting.push_back((header.correlation_id, api, header.api_version));
    }

    /// Whether the response with this correlation id may carry addresses (so it is held).
    pub fn awaits(&self, correlation_id: i32) -> bool {
        self.awaiting().iter().any(|(id, ..)| *id == correlation_id)
    }

    /// The response frame (without size prefix) with its addresses rewritten, size prefix
    /// included, and what changed; `None` to forward it unchanged (nothing to rewrite, or
    /// it does not decode, which the log reports).
    pub fn response(&self, frame: Bytes) -> Option<(Bytes, Note)> {
        let id = i32::from_be_bytes(frame.get(..4)?.try_into().ok()?);
        let (api, version) = {
            let mut awaiting = self.awaiting();
            let at = awaiting.iter().position(|(seen, ..)| *seen == id)?;
            // Kafka answers in order: anything older was never going to be answered.
            let (_, api, version) = awaiting.drain(..=at).next_back()?;
            (api, version)
        };
        // What decoding may take, charged first: the default budget for the frame, as far as
        // the process budget has room.
        let want = DecodeLimits::default().memory_budget_for(frame.len());
        let Some(charge) = self.budget.try_reserve_optional(want) else {
            let mut note = Note::default();
            note.errors.push(format!(
                "not rewritten: decoding this {}-byte response could take {want} bytes, more                  than --memory-budget has free; forwarded as it is",
                frame.len()
            ));
            return Some((size_prefixed(&frame), note));
        };
        let mut options = self.options;
        options.limits.memory_budget = Some(charge.bytes());
        let mut response = ResponseFrame::decode_with(frame, api, version, &options).ok()?;
        let brokers = &self.brokers;
        let mut note = Note::default();
        for (host, port) in addresses(&mut response.body, version) {
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
        if note.changes.is_empty() && note.errors.is_empty() {
            return None;
        }
        let mut out = BytesMut::new();
        response.encode(&mut out, Framing::SizePrefixed).ok()?;
        Some((out.freeze(), note))
    }
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
