//! One proxied connection: its two pumps, what they share, and the thread that decodes
//! beside them.
//!
//! Three threads per connection: one pump per direction and the decoder, which turns the
//! frames the pumps hand over into log lines. The pumps never wait for the decoder: frames
//! go through an unbounded channel whose contents are bounded by a byte budget (a frame
//! that does not fit is handed over as its first bytes only, and logged as skipped).

use super::framing::Frame;
use super::log::{Decoder, Log};
use super::pump::{pump, Stats};
use super::rewrite::{Note, Rewrite};
use super::Config;
use kafka_codec::conn::Direction;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// What a pump tells the decoder.
pub enum Event {
    /// A whole frame passed.
    Frame {
        direction: Direction,
        /// When its last byte was read.
        seen: (Instant, SystemTime),
        frame: Frame,
        /// The broker addresses replaced in it, if it was rewritten.
        rewritten: Option<Note>,
    },
    /// A negative size prefix: no frames any more in this direction.
    Unframeable {
        direction: Direction,
        size: i32,
        at: SystemTime,
    },
    /// The direction ended.
    Closed { direction: Direction, stats: Stats },
}

/// What the pumps and the decoder of one connection share.
pub struct Connection {
    pub config: Arc<Config>,
    pub rewrite: Option<Rewrite>,
    events: Sender<Event>,
    /// Bytes of frames handed to the decoder (or being read whole for it) and not yet
    /// decoded.
    backlog: AtomicUsize,
}

impl Connection {
    /// Reserves `size` bytes of the decoder budget; `false` if they do not fit.
    pub fn reserve(&self, size: usize) -> bool {
        let budget = self.config.max_frame;
        self.backlog
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(size).filter(|&total| total <= budget)
            })
            .is_ok()
    }

    /// Gives back a reservation.
    pub fn release(&self, size: usize) {
        if size > 0 {
            self.backlog.fetch_sub(size, Ordering::AcqRel);
        }
    }

    /// Hands an event to the decoder. (If the decoder is gone, nothing is lost that
    /// forwarding needs.)
    pub fn send(&self, event: Event) {
        let _ = self.events.send(event);
    }
}

/// Proxies `client` to `upstream` until both directions end, logging as it goes. Runs on
/// the connection's own thread, which becomes its decoder.
pub fn serve(
    id: u64,
    client: TcpStream,
    listener: SocketAddr,
    upstream: String,
    config: Arc<Config>,
    log: Arc<Log>,
    rewrite: Option<Rewrite>,
) {
    let peer = client
        .peer_addr()
        .map_or_else(|_| "unknown".to_owned(), |a| a.to_string());
    let mut decoder = Decoder::new(id, &config, log);
    let server = match super::connect(&upstream) {
        Ok(server) => server,
        Err(e) => {
            decoder.refused(&peer, listener, &upstream, &e);
            return;
        }
    };
    decoder.connected(&peer, listener, &upstream, &server);
    let streams = (|| {
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        Ok::<_, std::io::Error>((client.try_clone()?, server.try_clone()?))
    })();
    let (client_out, server_out) = match streams {
        Ok(streams) => streams,
        Err(e) => {
            decoder.refused(&peer, listener, &upstream, &e);
            return;
        }
    };
    let (events, received) = channel();
    let connection = Arc::new(Connection {
        config,
        rewrite,
        events,
        backlog: AtomicUsize::new(0),
    });
    let pumps = [
        (Direction::ToServer, client, server_out),
        (Direction::ToClient, server, client_out),
    ]
    .map(|(direction, from, to)| {
        let connection = Arc::clone(&connection);
        std::thread::Builder::new()
            .name(format!("tap-{id}-{direction:?}"))
            .spawn(move || pump(direction, from, to, connection))
    });
    for pump in &pumps {
        if let Err(e) = pump {
            eprintln!("kafka-codec tap: connection {id}: cannot start a thread: {e}");
        }
    }
    decode(&connection, received, &mut decoder);
    for pump in pumps.into_iter().flatten() {
        let _ = pump.join();
    }
}

/// The decoder's loop: until both directions have closed.
fn decode(connection: &Connection, events: Receiver<Event>, decoder: &mut Decoder) {
    let mut closed: Vec<(Direction, Stats)> = Vec::new();
    while closed.len() < 2 {
        let Ok(event) = events.recv() else { break };
        match event {
            Event::Frame {
                direction,
                seen,
                frame,
                rewritten,
            } => {
                let reserved = match &frame.content {
                    super::framing::Content::Whole(bytes) => bytes.len(),
                    super::framing::Content::Head { .. } => 0,
                };
                decoder.frame(direction, seen, frame, rewritten);
                connection.release(reserved);
            }
            Event::Unframeable {
                direction,
                size,
                at,
            } => decoder.unframeable(direction, size, at),
            Event::Closed { direction, stats } => closed.push((direction, stats)),
        }
    }
    let stats = |wanted| {
        closed
            .iter()
            .find(|(direction, _)| *direction == wanted)
            .map(|(_, stats)| stats.clone())
            .unwrap_or_default()
    };
    decoder.closed(stats(Direction::ToServer), stats(Direction::ToClient));
}
