//! What a connection's pumps tell its logger, in the order things happened on the wire: a
//! request is handed over before its bytes are forwarded, so the logger sees it before the
//! server can have answered it.

use super::framing::Frame;
use super::rewrite::Note;
use super::stats::Stats;
use kafka_codec::conn::Direction;
use kafka_codec_server::budget::Charge;
use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

/// Bytes an event costs on the memory budget beyond the frame bytes it carries: the event, its
/// queue slot, and the logger's record of an unanswered request.
pub const EVENT_COST: usize = 256;

pub enum Event {
    /// The upstream connection is up (or could not be made: `error`).
    Connect(Box<ConnectEvent>),
    /// A whole frame passed (boxed: the queue's slots are the size of the smallest event).
    Frame(Box<FrameEvent>),
    /// A negative size prefix: no frames any more in this direction.
    Unframeable {
        direction: Direction,
        size: i32,
        at: SystemTime,
    },
    /// A request denied by `--deny-api`/`--deny-topic` (its log line's fields).
    Denied {
        denial: kafka_codec::serde_json::Value,
        at: SystemTime,
    },
    /// Both directions ended; `closed_by` says why if the tool closed the connection.
    Closed(Box<ClosedEvent>),
}

pub struct ConnectEvent {
    /// When it happened: the clock for the tap, the packet's time for a capture.
    pub at: (Instant, SystemTime),
    pub client: SocketAddr,
    pub listener: SocketAddr,
    pub upstream: String,
    pub upstream_address: Option<SocketAddr>,
    /// The subject of the certificate the client presented (`--listen-tls-client-ca`).
    pub client_subject: Option<String>,
    pub error: Option<String>,
}

pub struct FrameEvent {
    pub direction: Direction,
    /// When its last byte was read.
    pub seen: (Instant, SystemTime),
    pub frame: Frame,
    /// The broker addresses replaced in it, if it was rewritten.
    pub rewritten: Option<Note>,
    /// The event's own cost ([`EVENT_COST`]).
    pub charge: Charge,
}

pub struct ClosedEvent {
    /// When it happened, as [`ConnectEvent::at`].
    pub at: (Instant, SystemTime),
    pub to_server: Stats,
    pub to_client: Stats,
    /// The peer that ended the connection first (a clean EOF or a reset), if the tool did
    /// not.
    pub ended_first: Option<Ending>,
    pub closed_by: Option<String>,
}

/// Which peer ended a connection first, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    pub peer: Peer,
    /// A reset or a failed read or write rather than a clean end of stream: a peer that
    /// closes with bytes unread resets, which is still that peer hanging up.
    pub reset: bool,
}

/// One end of a tapped connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Client,
    Server,
}
