//! What a connection's pumps tell its logger, in the order things happened on the wire: a
//! request is handed over before its bytes are forwarded, so the logger sees it before the
//! server can have answered it.

use super::framing::Frame;
use super::rewrite::Note;
use super::stats::Stats;
use crate::net::budget::Charge;
use kafka_codec::conn::Direction;
use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

/// Bytes an event costs on the memory budget beyond the frame bytes it carries: the event, its
/// queue slot, and the logger's record of an unanswered request.
pub const EVENT_COST: usize = 256;

pub enum Event {
    /// The upstream connection is up (or could not be made: `error`).
    Connect {
        client: SocketAddr,
        listener: SocketAddr,
        upstream: String,
        upstream_address: Option<SocketAddr>,
        error: Option<String>,
    },
    /// A whole frame passed.
    Frame {
        direction: Direction,
        /// When its last byte was read.
        seen: (Instant, SystemTime),
        frame: Frame,
        /// The broker addresses replaced in it, if it was rewritten.
        rewritten: Option<Note>,
        /// The event's own cost ([`EVENT_COST`]).
        charge: Charge,
    },
    /// A negative size prefix: no frames any more in this direction.
    Unframeable {
        direction: Direction,
        size: i32,
        at: SystemTime,
    },
    /// Both directions ended; `closed_by` says why if the tool closed the connection.
    Closed {
        to_server: Stats,
        to_client: Stats,
        closed_by: Option<String>,
    },
}
