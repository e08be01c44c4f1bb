//! The captured TCP connections: each one's two directions put back in order, told apart as
//! Kafka (by port, or by a first frame that reads as a Kafka request), TLS or HTTP (one
//! line), or something else (not logged), and a Kafka connection's frames handed to the
//! tap's logger as the tap hands them, with the capture's time stamps.
//!
//! Memory is bounded whatever the capture: connections tracked are capped (the one idle the
//! longest in the capture is closed for a new one), bytes held out of order are capped per
//! direction and charged to the memory budget with the frames kept for the log, and the
//! requests awaiting responses are capped as the tap caps them.

use super::packets::Segment;
use super::reassembly::{Delivery, Reassembler};
use crate::commands::tap::config::Config;
use crate::commands::tap::events::{
    ClosedEvent, ConnectEvent, Ending, Event, FrameEvent, Peer, EVENT_COST,
};
use crate::commands::tap::framing::{Content, Framer, Piece, Policy, Skipped};
use crate::commands::tap::log::{self, Log, Logger};
use crate::commands::tap::stats::{CaptureGaps, Stats};
use crate::common::OtherProtocol;
use kafka_codec::bytes::Bytes;
use kafka_codec::conn::{Direction, RawRequestHeader};
use kafka_codec::serde_json::json;
use kafka_codec::ApiKey;
use kafka_codec_server::budget::{Budget, Charge};
use kafka_codec_server::metrics::Metrics;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Bytes of a direction's start kept to tell what the connection is.
const CLASSIFY: usize = 512;
/// The longest client id a frame start is believed to carry when looking for a frame.
const MAX_CLIENT_ID: usize = 256;

/// What the streams are told by the command line.
pub struct Settings {
    /// Kafka's ports: the server is the side on one of them.
    pub ports: Vec<u16>,
    pub max_connections: usize,
    /// Bytes each direction may hold out of order before the missing bytes are declared lost.
    pub max_reorder: usize,
    pub config: Arc<Config>,
}

/// What the capture held, for the summary line.
#[derive(Debug, Default)]
pub struct Counts {
    pub connections: u64,
    pub kafka: u64,
    pub tls: u64,
    pub http: u64,
    pub other: u64,
    pub empty: u64,
    pub evicted: u64,
}

/// Capture times as the logger's clock: an `Instant` that runs with the capture's time
/// stamps (latencies, durations), and the time stamps themselves.
struct Clock {
    base: Instant,
    first: Option<SystemTime>,
}

impl Clock {
    fn at(&mut self, time: SystemTime) -> (Instant, SystemTime) {
        let first = *self.first.get_or_insert(time);
        let since = time.duration_since(first).unwrap_or(Duration::ZERO);
        (self.base.checked_add(since).unwrap_or(self.base), time)
    }
}

/// A connection's two endpoints, the lower first, so that both directions find it.
type Key = (SocketAddr, SocketAddr);

fn key(a: SocketAddr, b: SocketAddr) -> Key {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// Every tracked connection.
pub struct Streams {
    settings: Settings,
    log: Arc<Log>,
    budget: Arc<Budget>,
    /// The tap's loggers count what they decode; a capture serves no metrics, so these
    /// counts are kept and never read.
    metrics: Arc<Metrics>,
    connections: HashMap<Key, Connection>,
    /// Connections by the capture time of their last packet, oldest first.
    idle: BTreeMap<(SystemTime, u64), Key>,
    next_id: u64,
    clock: Clock,
    pub counts: Counts,
    /// The time of the last packet read.
    pub last_time: Option<SystemTime>,
}

struct Connection {
    id: u64,
    /// `ends[0]` sent the first packet seen.
    ends: [SocketAddr; 2],
    opened: SystemTime,
    last: SystemTime,
    sides: [Reassembler; 2],
    /// The side on a Kafka port, if either is.
    server_by_port: Option<usize>,
    role: Role,
    ended: [Option<String>; 2],
    /// The side whose end came first, and whether it reset (RST) rather than finished (FIN).
    ended_first: Option<(usize, bool)>,
}

enum Role {
    /// Deliveries kept until the connection can be told (at most [`CLASSIFY`] bytes a side).
    Undecided([Vec<Delivery>; 2]),
    Kafka(Box<Kafka>),
    /// Not Kafka (or reported as TLS/HTTP): its bytes are read past.
    Ignored,
}

/// A Kafka connection as the tap's logger sees it.
struct Kafka {
    client: usize,
    logger: Logger,
    directions: [Flow; 2],
    /// Correlation ids of requests awaiting a response, oldest first: what a response found
    /// after a gap must answer.
    awaiting: VecDeque<i32>,
}

/// One direction of a Kafka connection.
struct Flow {
    framer: Framer,
    /// Frames of the framers replaced after gaps.
    frames_before: u64,
    stats: Stats,
    gaps: CaptureGaps,
    /// Looking for a frame's start (after a gap, or in a connection captured after it
    /// began): the bytes from the first offset not yet ruled out.
    seeking: Option<Vec<u8>>,
}

/// The framer's decisions in a capture: nothing waits for a decoder (the logger runs in
/// line), so a frame within --max-frame is kept whole if the memory budget has room.
struct CapturePolicy<'a> {
    budget: &'a Arc<Budget>,
}

impl Policy for CapturePolicy<'_> {
    fn keep_whole(&mut self, _: usize) -> Result<(), Skipped> {
        Ok(())
    }
    fn grow(&mut self, charge: &mut Charge, bytes: usize) -> bool {
        charge.try_grow_optional(bytes)
    }
    fn no_charge(&mut self) -> Charge {
        self.budget.none()
    }
    fn release(&mut self, _: usize) {}
    fn hold(&mut self, _: &[u8], _: usize) -> Option<Charge> {
        None
    }
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::ToServer => "toServer",
        Direction::ToClient => "toClient",
    }
}

impl Streams {
    pub fn new(settings: Settings, log: Arc<Log>, budget: Arc<Budget>) -> Self {
        let metrics = Metrics::new(Arc::clone(&budget), settings.max_connections);
        Streams {
            settings,
            log,
            budget,
            metrics,
            connections: HashMap::new(),
            idle: BTreeMap::new(),
            next_id: 1,
            clock: Clock {
                base: Instant::now(),
                first: None,
            },
            counts: Counts::default(),
            last_time: None,
        }
    }

    /// Takes one captured segment.
    pub fn segment(&mut self, segment: Segment) {
        self.last_time = Some(segment.time);
        let key = key(segment.source, segment.destination);
        let reused = self.connections.get(&key).is_some_and(|connection| {
            let side = usize::from(connection.ends[0] != segment.source);
            segment.syn && connection.sides[side].is_new_syn(segment.seq)
        });
        if reused {
            // The same ports opened another connection: the first one is over.
            if let Some(mut connection) = self.connections.remove(&key) {
                self.idle.remove(&(connection.last, connection.id));
                for end in &mut connection.ended {
                    end.get_or_insert_with(|| {
                        "not seen to end: the same ports opened another connection".to_owned()
                    });
                }
                self.close(connection, segment.time, None);
            }
        }
        if !self.connections.contains_key(&key) {
            // A segment without a SYN and without data opens nothing: the last ACKs of a
            // connection already closed, or keep-alives.
            if !segment.syn && segment.payload.is_empty() && segment.missing == 0 {
                return;
            }
            self.open(key, &segment);
        }
        let Some(mut connection) = self.connections.remove(&key) else {
            return;
        };
        self.idle.remove(&(connection.last, connection.id));
        connection.last = connection.last.max(segment.time);
        let side = usize::from(connection.ends[0] != segment.source);
        if let Some(ack) = segment.ack {
            // What the sender had received when it sent this, before what it sends.
            let mut out = Vec::new();
            connection.sides[1 - side].acknowledged(ack, &mut out);
            self.deliver(&mut connection, 1 - side, out, segment.time);
        }
        let mut out = Vec::new();
        connection.sides[side].push(
            segment.seq,
            segment.syn,
            segment.fin,
            segment.payload,
            segment.missing,
            &mut out,
        );
        self.deliver(&mut connection, side, out, segment.time);
        if segment.rst {
            if connection.ended.iter().all(Option::is_none) {
                connection.ended_first = Some((side, true));
            }
            let why = "reset (RST)".to_owned();
            connection.ended[side].get_or_insert(why.clone());
            connection.ended[1 - side].get_or_insert(why);
        }
        for side in 0..2 {
            if connection.sides[side].finished() && connection.ended[side].is_none() {
                if connection.ended.iter().all(Option::is_none) {
                    connection.ended_first = Some((side, false));
                }
                connection.ended[side] = Some("eof".to_owned());
            }
        }
        if connection.ended.iter().all(Option::is_some) {
            self.close(connection, segment.time, None);
        } else {
            self.idle.insert((connection.last, connection.id), key);
            self.connections.insert(key, connection);
        }
    }

    /// Closes every connection still open at the end of the capture.
    pub fn finish(&mut self) {
        let at = self.last_time.unwrap_or(SystemTime::UNIX_EPOCH);
        let keys: Vec<Key> = self.idle.values().copied().collect();
        self.idle.clear();
        for key in keys {
            if let Some(connection) = self.connections.remove(&key) {
                self.close(connection, at, None);
            }
        }
    }

    fn open(&mut self, key: Key, segment: &Segment) {
        while self.connections.len() >= self.settings.max_connections {
            let Some((_, oldest)) = self.idle.pop_first() else {
                break;
            };
            if let Some(connection) = self.connections.remove(&oldest) {
                self.counts.evicted += 1;
                let why = format!(
                    "evicted: --max-connections ({}) connections were tracked, and this one \
                     had been idle the longest in the capture",
                    self.settings.max_connections
                );
                self.close(connection, segment.time, Some(why));
            }
        }
        let ports = &self.settings.ports;
        let on_port = |address: SocketAddr| ports.contains(&address.port());
        // The side sending to a Kafka port is the client; a SYN (without ACK, which the
        // segment does not say) is the client's more often than not, so the destination
        // is looked at first.
        let server_by_port = if on_port(segment.destination) {
            Some(1)
        } else if on_port(segment.source) {
            Some(0)
        } else {
            None
        };
        let charge = || self.budget.none();
        let reorder = self.settings.max_reorder;
        let connection = Connection {
            id: self.next_id,
            ends: [segment.source, segment.destination],
            opened: segment.time,
            last: segment.time,
            sides: [
                Reassembler::new(reorder, charge()),
                Reassembler::new(reorder, charge()),
            ],
            server_by_port,
            role: Role::Undecided([Vec::new(), Vec::new()]),
            ended: [None, None],
            ended_first: None,
        };
        self.next_id += 1;
        self.counts.connections += 1;
        self.idle.insert((connection.last, connection.id), key);
        self.connections.insert(key, connection);
    }

    /// Passes what a side delivered on, by what the connection is.
    fn deliver(
        &mut self,
        connection: &mut Connection,
        side: usize,
        out: Vec<Delivery>,
        time: SystemTime,
    ) {
        if out.is_empty() {
            return;
        }
        match &mut connection.role {
            Role::Ignored => {}
            Role::Kafka(kafka) => {
                for delivery in out {
                    self.kafka(connection.id, kafka, side, delivery, time);
                }
            }
            Role::Undecided(kept) => {
                kept[side].extend(out);
                self.classify(connection, false, time);
            }
        }
    }

    /// Decides what an undecided connection is, once its first bytes tell (or, with
    /// `last`, with whatever it has).
    fn classify(&mut self, connection: &mut Connection, last: bool, time: SystemTime) {
        let Role::Undecided(kept) = &connection.role else {
            return;
        };
        let first = |side: usize| -> (Vec<u8>, bool) {
            // The side's first bytes, and whether they are all it will have to go on (a gap
            // or enough bytes).
            let mut bytes = Vec::new();
            let mut done = false;
            for delivery in &kept[side] {
                match delivery {
                    Delivery::Data(data) => {
                        bytes.extend_from_slice(&data[..data.len().min(CLASSIFY - bytes.len())])
                    }
                    Delivery::Gap(_) => done = true,
                }
                if bytes.len() >= CLASSIFY || done {
                    done = true;
                    break;
                }
            }
            (bytes, done)
        };
        let max_frame = self.settings.config.max_frame;
        let decision = match connection.server_by_port {
            Some(server) => {
                let client = 1 - server;
                let (bytes, _) = first(client);
                let (other, _) = first(server);
                let from_start = connection.sides[client].from_start;
                if bytes.len() >= 8 || (last && !bytes.is_empty()) || !other.is_empty() {
                    match OtherProtocol::recognise(&bytes) {
                        Some(protocol) if from_start => Some(Err(Some((client, protocol)))),
                        _ => Some(Ok(client)),
                    }
                } else if last {
                    // Nothing from the client: a connection that carried nothing.
                    self.counts.empty += 1;
                    Some(Err(None))
                } else {
                    None
                }
            }
            None => {
                let mut decision = None;
                for side in 0..2 {
                    let (bytes, done) = first(side);
                    if bytes.is_empty() {
                        continue;
                    }
                    if !connection.sides[side].from_start {
                        // Begun before the capture, on no Kafka port: its first bytes say
                        // nothing, and it is not kept waiting.
                        decision = Some(Err(None));
                        break;
                    }
                    match frame_start(&bytes, max_frame, None) {
                        Start::Yes => decision = Some(Ok(side)),
                        Start::NeedMore if !(done || last) => {}
                        _ => decision = Some(Err(None)),
                    }
                    break;
                }
                if decision.is_none() && last {
                    decision = Some(Err(None));
                }
                if matches!(decision, Some(Err(None))) {
                    self.counts.other += 1;
                }
                decision
            }
        };
        let Some(decision) = decision else {
            return;
        };
        let Role::Undecided(kept) = std::mem::replace(&mut connection.role, Role::Ignored) else {
            return;
        };
        let client = match decision {
            Ok(client) => client,
            Err(None) => return,
            Err(Some((client, protocol))) => {
                match protocol {
                    OtherProtocol::Tls(_) => self.counts.tls += 1,
                    OtherProtocol::HttpRequest | OtherProtocol::HttpResponse => {
                        self.counts.http += 1
                    }
                    OtherProtocol::Ssh => self.counts.other += 1,
                }
                let note = if protocol.is_tls() {
                    "the client speaks TLS on this connection: its Kafka frames are encrypted \
                     and cannot be read from a capture"
                        .to_owned()
                } else {
                    format!(
                        "the client speaks {} on this connection, not Kafka",
                        protocol.name()
                    )
                };
                log::note(
                    &self.log,
                    &protocol.name().to_ascii_lowercase(),
                    connection.opened,
                    Some(connection.id),
                    &[
                        ("client", json!(connection.ends[client].to_string())),
                        ("server", json!(connection.ends[1 - client].to_string())),
                        ("note", json!(note)),
                    ],
                );
                return;
            }
        };
        self.counts.kafka += 1;
        let config = &self.settings.config;
        let flow = |side: usize| Flow {
            framer: Framer::new(config.max_frame, config.max_hex.max(64), false),
            frames_before: 0,
            stats: Stats {
                capture: Some(CaptureGaps::default()),
                ..Stats::default()
            },
            gaps: CaptureGaps::default(),
            seeking: (!connection.sides[side].from_start).then(Vec::new),
        };
        let mut kafka = Box::new(Kafka {
            client,
            logger: Logger::new(
                connection.id,
                Arc::clone(config),
                Arc::clone(&self.log),
                Arc::clone(&self.budget),
                Arc::clone(&self.metrics),
            ),
            directions: [flow(0), flow(1)],
            awaiting: VecDeque::new(),
        });
        let client_address = connection.ends[client];
        let server_address = connection.ends[1 - client];
        kafka.logger.event(Event::Connect(Box::new(ConnectEvent {
            at: self.clock.at(connection.opened),
            client: client_address,
            listener: server_address,
            upstream: server_address.to_string(),
            upstream_address: None,
            error: None,
            // TLS ends at the tap; a capture of the tap's plaintext side has no certificate.
            client_subject: None,
        })));
        // Requests first: a response is paired with a request the logger has seen.
        let [first_kept, second_kept] = kept;
        let mut by_side = [first_kept, second_kept];
        for side in [client, 1 - client] {
            for delivery in std::mem::take(&mut by_side[side]) {
                self.kafka(connection.id, &mut kafka, side, delivery, time);
            }
        }
        connection.role = Role::Kafka(kafka);
    }

    /// One delivery of a Kafka connection's side.
    fn kafka(
        &mut self,
        id: u64,
        kafka: &mut Kafka,
        side: usize,
        delivery: Delivery,
        time: SystemTime,
    ) {
        let direction = if side == kafka.client {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        let max_frame = self.settings.config.max_frame;
        let flow = &mut kafka.directions[side];
        let data = match delivery {
            Delivery::Gap(bytes) => {
                flow.gaps.lost += bytes;
                if flow.seeking.is_none() {
                    flow.gaps.gaps += 1;
                    log::note(
                        &self.log,
                        "gap",
                        time,
                        Some(id),
                        &[
                            ("direction", json!(direction_name(direction))),
                            ("lostBytes", json!(bytes)),
                            ("partialFrameBytes", json!(flow.framer.partial())),
                            (
                                "note",
                                json!(
                                    "the capture does not hold these bytes (a lost segment, or \
                                     packets cut by the snap length); decoding resumes at the \
                                     next frame that reads as one"
                                ),
                            ),
                        ],
                    );
                    flow.frames_before += flow.framer.frames();
                    flow.framer = Framer::new(
                        self.settings.config.max_frame,
                        self.settings.config.max_hex.max(64),
                        false,
                    );
                    flow.seeking = Some(Vec::new());
                }
                return;
            }
            Delivery::Data(data) => data,
        };
        flow.stats.received.add(&data);
        flow.stats.forwarded.add(&data);
        flow.stats.forwarded_as_received.add(&data);
        let chunk = match &mut flow.seeking {
            None => data,
            Some(buffer) => {
                buffer.extend_from_slice(&data);
                let awaiting = (direction == Direction::ToClient).then_some(&kafka.awaiting);
                let mut at = 0;
                let found = loop {
                    if at >= buffer.len() {
                        break None;
                    }
                    match frame_start(&buffer[at..], max_frame, awaiting) {
                        Start::Yes => break Some(at),
                        Start::NeedMore => break None,
                        Start::No => at += 1,
                    }
                };
                flow.gaps.skipped += at as u64;
                match found {
                    Some(at) => {
                        let rest = Bytes::copy_from_slice(&buffer[at..]);
                        flow.seeking = None;
                        rest
                    }
                    None => {
                        buffer.drain(..at);
                        return;
                    }
                }
            }
        };
        let mut policy = CapturePolicy {
            budget: &self.budget,
        };
        let (pieces, _) = flow.framer.push_frames(chunk, &mut policy, usize::MAX);
        let seen = self.clock.at(time);
        for piece in pieces {
            let event = match piece {
                Piece::Forward(_) => continue,
                Piece::Unframeable(size) => Event::Unframeable {
                    direction,
                    size,
                    at: time,
                },
                Piece::Frame(frame) => {
                    let head = match &frame.content {
                        Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes,
                    };
                    match direction {
                        Direction::ToServer => {
                            if let (Some(header), Some(true)) = (
                                RawRequestHeader::peek(head),
                                RawRequestHeader::expects_response(head),
                            ) {
                                kafka.awaiting.push_back(header.correlation_id);
                                if kafka.awaiting.len() > self.settings.config.max_in_flight {
                                    kafka.awaiting.pop_front();
                                }
                            }
                        }
                        Direction::ToClient => {
                            let id = head
                                .get(..4)
                                .map(|id| i32::from_be_bytes(id.try_into().expect("4 bytes")));
                            if let Some(at) = kafka.awaiting.iter().position(|&a| Some(a) == id) {
                                kafka.awaiting.drain(..=at);
                            }
                        }
                    }
                    let charge = self
                        .budget
                        .try_reserve_optional(EVENT_COST)
                        .unwrap_or_else(|| self.budget.none());
                    Event::Frame(Box::new(FrameEvent {
                        direction,
                        seen,
                        frame,
                        rewritten: None,
                        charge,
                    }))
                }
            };
            kafka.logger.event(event);
        }
        kafka
            .logger
            .cap_awaiting(self.settings.config.max_in_flight);
    }

    /// Ends a connection: what its sides hold is delivered, and a Kafka connection's
    /// `close` line written.
    fn close(&mut self, mut connection: Connection, at: SystemTime, closed_by: Option<String>) {
        for side in 0..2 {
            let mut out = Vec::new();
            connection.sides[side].flush(&mut out);
            self.deliver(&mut connection, side, out, at);
        }
        if matches!(connection.role, Role::Undecided(_)) {
            self.classify(&mut connection, true, at);
        }
        let Role::Kafka(mut kafka) = std::mem::replace(&mut connection.role, Role::Ignored) else {
            return;
        };
        let mut stats = [Stats::default(), Stats::default()];
        for (side, flow) in kafka.directions.iter_mut().enumerate() {
            let mut gaps = flow.gaps;
            if let Some(buffer) = flow.seeking.take() {
                gaps.skipped += buffer.len() as u64;
            }
            flow.stats.frames = flow.frames_before + flow.framer.frames();
            flow.stats.partial = flow.framer.partial();
            flow.stats.end = connection.ended[side]
                .clone()
                .unwrap_or_else(|| "the capture ends before the connection does".to_owned());
            flow.stats.capture = Some(gaps);
            stats[side] = std::mem::take(&mut flow.stats);
        }
        let [first, second] = stats;
        let (to_server, to_client) = if kafka.client == 0 {
            (first, second)
        } else {
            (second, first)
        };
        kafka.logger.event(Event::Closed(Box::new(ClosedEvent {
            at: self.clock.at(at),
            to_server,
            to_client,
            ended_first: connection.ended_first.map(|(side, reset)| Ending {
                peer: if side == kafka.client {
                    Peer::Client
                } else {
                    Peer::Server
                },
                reset,
            }),
            closed_by,
        })));
    }
}

/// Whether bytes start a frame.
#[derive(Debug, PartialEq, Eq)]
enum Start {
    Yes,
    No,
    NeedMore,
}

/// Whether `bytes` start a Kafka frame: a request (a size within `max_frame`, a known API
/// at a version it has, a client id of printable characters), or with `awaiting`, a
/// response to one of those correlation ids.
fn frame_start(bytes: &[u8], max_frame: usize, awaiting: Option<&VecDeque<i32>>) -> Start {
    let int = |at: usize| -> Option<i32> {
        Some(i32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let short = |at: usize| -> Option<i16> {
        Some(i16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    let Some(size) = int(0) else {
        return Start::NeedMore;
    };
    let Ok(size) = usize::try_from(size) else {
        return Start::No;
    };
    if let Some(awaiting) = awaiting {
        if size < 4 || size > max_frame {
            return Start::No;
        }
        return match int(4) {
            None => Start::NeedMore,
            Some(id) if awaiting.contains(&id) => Start::Yes,
            Some(_) => Start::No,
        };
    }
    if !(8..=max_frame).contains(&size) {
        return Start::No;
    }
    let (Some(key), Some(version)) = (short(4), short(6)) else {
        return Start::NeedMore;
    };
    let Some(api) = ApiKey::from_key(key) else {
        return Start::No;
    };
    // Clients ask for ApiVersions at the newest version they know, which may be past ours.
    let known = if api == ApiKey::ApiVersions {
        (0..=ApiKey::ApiVersions.valid_versions().max + 16).contains(&version)
    } else {
        api.valid_versions().contains(version)
    };
    if !known {
        return Start::No;
    }
    if api.request_header_version(version.min(api.valid_versions().max)) < 1 {
        return if size >= 8 { Start::Yes } else { Start::No };
    }
    let Some(length) = short(12) else {
        return Start::NeedMore;
    };
    if length == -1 {
        return if size >= 10 { Start::Yes } else { Start::No };
    }
    let Ok(length) = usize::try_from(length) else {
        return Start::No;
    };
    if length > MAX_CLIENT_ID || 10 + length > size {
        return Start::No;
    }
    let Some(client_id) = bytes.get(14..14 + length) else {
        return Start::NeedMore;
    };
    if client_id.iter().all(|b| (0x20..0x7f).contains(b)) {
        Start::Yes
    } else {
        Start::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(key: i16, version: i16, client_id: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&key.to_be_bytes());
        body.extend_from_slice(&version.to_be_bytes());
        body.extend_from_slice(&7i32.to_be_bytes());
        body.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
        body.extend_from_slice(client_id);
        body.extend_from_slice(&[0; 6]);
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend(body);
        frame
    }

    #[test]
    fn a_request_start_is_recognised_and_other_bytes_are_not() {
        let metadata = request(ApiKey::Metadata.key(), 12, b"rdkafka");
        assert_eq!(frame_start(&metadata, 1 << 20, None), Start::Yes);
        assert_eq!(frame_start(&metadata[..13], 1 << 20, None), Start::NeedMore);
        // An API key no Kafka has, a version Metadata never had, control characters in the
        // client id, TLS and HTTP.
        assert_eq!(
            frame_start(&request(999, 0, b"x"), 1 << 20, None),
            Start::No
        );
        assert_eq!(frame_start(&request(3, 99, b"x"), 1 << 20, None), Start::No);
        assert_eq!(
            frame_start(&request(3, 12, b"a\x01"), 1 << 20, None),
            Start::No
        );
        assert_eq!(
            frame_start(
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                1 << 20,
                None
            ),
            Start::No
        );
        assert_eq!(frame_start(b"GET / HTTP/1.1\r\n", 1 << 20, None), Start::No);
        // Too large for --max-frame.
        assert_eq!(frame_start(&metadata, 16, None), Start::No);
    }

    #[test]
    fn a_response_start_must_answer_a_request_awaiting() {
        let awaiting: VecDeque<i32> = [5, 9].into();
        let mut response = 8u32.to_be_bytes().to_vec();
        response.extend_from_slice(&9i32.to_be_bytes());
        assert_eq!(frame_start(&response, 1 << 20, Some(&awaiting)), Start::Yes);
        response[7] = 8;
        assert_eq!(frame_start(&response, 1 << 20, Some(&awaiting)), Start::No);
        assert_eq!(
            frame_start(&response[..6], 1 << 20, Some(&awaiting)),
            Start::NeedMore
        );
    }
}
