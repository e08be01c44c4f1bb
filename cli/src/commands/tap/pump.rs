//! One direction of a proxied connection: read a chunk, hand its finished frames to the
//! decoder (a queue push, no decoding), forward the chunk, repeat.
//!
//! Frames are handed over before the chunk that ends them is forwarded, so the decoder sees a
//! request before the server can have answered it. Only a response held for broker address
//! rewriting waits for anything: for its own last byte, then for the rewrite.

use super::connection::{Connection, Event};
use super::framing::{Content, Framer, Piece, Policy};
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::{Direction, RawRequestHeader};
use kafka_codec::serde_json::{json, Value};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Bytes asked of the socket per read.
const READ_SIZE: usize = 64 * 1024;

/// Byte count and CRC-32C of a stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum {
    pub bytes: u64,
    pub crc32c: u32,
}

impl Sum {
    fn add(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.crc32c = crc32c::crc32c_append(self.crc32c, data);
    }

    fn json(&self) -> Value {
        json!({"bytes": self.bytes, "crc32c": format!("{:08x}", self.crc32c)})
    }
}

/// What one direction saw, reported when it ends.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Everything read from the sender.
    pub received: Sum,
    /// Everything the receiver's socket accepted.
    pub forwarded: Sum,
    /// `forwarded`, with each rewritten frame counted as the frame it replaced.
    pub forwarded_as_received: Sum,
    /// What was read and never forwarded, because the receiver's socket failed (counted as
    /// received): `forwarded_as_received` followed by `dropped` is `received`.
    pub dropped: Sum,
    /// Frames replaced by broker address rewriting.
    pub rewritten: u64,
    /// Whole frames.
    pub frames: u64,
    /// Bytes of a frame the sender began and did not finish.
    pub partial: usize,
    /// How the direction ended: "eof", or the error.
    pub end: String,
}

impl Stats {
    pub fn json(&self) -> Value {
        json!({
            "received": self.received.json(),
            "forwarded": self.forwarded.json(),
            "forwardedAsReceived": self.forwarded_as_received.json(),
            "dropped": self.dropped.json(),
            "rewritten": self.rewritten,
            "frames": self.frames,
            "partialFrameBytes": self.partial,
            "end": self.end,
        })
    }
}

/// The decoder budget and, when rewriting, the requests whose responses may be held.
struct PumpPolicy<'a> {
    direction: Direction,
    connection: &'a Connection,
}

impl Policy for PumpPolicy<'_> {
    fn keep_whole(&mut self, size: usize) -> bool {
        self.connection.reserve(size)
    }

    fn hold(&mut self, head: &[u8]) -> bool {
        let id = <[u8; 4]>::try_from(head).map(i32::from_be_bytes);
        match (self.direction, &self.connection.rewrite, id) {
            (Direction::ToClient, Some(rewrite), Ok(id)) => rewrite.awaits(id),
            _ => false,
        }
    }
}

/// Copies `from` to `to` until either side ends, then reports to the decoder.
pub fn pump(
    direction: Direction,
    mut from: TcpStream,
    mut to: TcpStream,
    connection: Arc<Connection>,
) {
    let config = &connection.config;
    let holding = direction == Direction::ToClient && connection.rewrite.is_some();
    let mut framer = Framer::new(config.max_frame, config.max_hex, holding);
    let mut stats = Stats::default();
    let mut buf = BytesMut::new();
    let end = loop {
        buf.resize(READ_SIZE, 0);
        let n = match from.read(&mut buf) {
            Ok(0) => break End::Eof,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => break End::ReadFailed(e),
        };
        buf.truncate(n);
        let chunk = buf.split().freeze();
        stats.received.add(&chunk);
        let seen = (Instant::now(), SystemTime::now());
        let mut policy = PumpPolicy {
            direction,
            connection: &connection,
        };
        let pieces = framer.push(chunk, &mut policy);
        // First every finished frame to the decoder (and, for a request, to the rewriter's
        // list), then the bytes to the peer.
        let mut out: Vec<Outgoing> = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match piece {
                Piece::Forward(bytes) => out.push(Outgoing::Same(bytes)),
                Piece::Unframeable(size) => connection.send(Event::Unframeable {
                    direction,
                    size,
                    at: seen.1,
                }),
                Piece::Frame(frame) => {
                    let mut rewritten = None;
                    if let (Some(rewrite), Some(held)) = (&connection.rewrite, &frame.held) {
                        match rewrite.response(held.slice(4..)) {
                            Some((bytes, note)) => {
                                out.push(Outgoing::Rewritten {
                                    bytes,
                                    original: held.clone(),
                                });
                                stats.rewritten += 1;
                                rewritten = Some(note);
                            }
                            None => out.push(Outgoing::Same(held.clone())),
                        }
                    } else if let Some(held) = &frame.held {
                        out.push(Outgoing::Same(held.clone()));
                    }
                    if let (Direction::ToServer, Some(rewrite)) = (direction, &connection.rewrite) {
                        let head = match &frame.content {
                            Content::Whole(bytes) => bytes,
                            Content::Head { head, .. } => head,
                        };
                        if let Some(header) = RawRequestHeader::peek(head) {
                            rewrite.request(header);
                        }
                    }
                    connection.send(Event::Frame {
                        direction,
                        seen,
                        frame,
                        rewritten,
                    });
                }
            }
        }
        if let Err(e) = forward(&mut to, out, &mut stats) {
            break End::WriteFailed(e);
        }
    };
    // Bytes kept back for a hold decision were sent by the peer: they go out as they are,
    // unless the receiver is gone.
    if let Some(held) = framer.take_held() {
        match end {
            End::WriteFailed(_) => stats.dropped.add(&held),
            End::Eof | End::ReadFailed(_) => {
                let _ = forward(&mut to, vec![Outgoing::Same(held)], &mut stats);
            }
        }
    }
    match &end {
        // A clean end of one direction is passed on as such: the other may still be busy.
        End::Eof => {
            let _ = to.shutdown(Shutdown::Write);
        }
        // Anything else ends the whole connection, so that the other direction's read or
        // write returns too.
        End::ReadFailed(_) | End::WriteFailed(_) => {
            let _ = to.shutdown(Shutdown::Both);
            let _ = from.shutdown(Shutdown::Both);
        }
    }
    connection.release(framer.reserved());
    stats.frames = framer.frames();
    stats.partial = framer.partial();
    stats.end = match end {
        End::Eof => "eof".to_owned(),
        End::ReadFailed(e) => format!("read failed: {e}"),
        End::WriteFailed(e) => format!("write failed: {e}"),
    };
    connection.send(Event::Closed { direction, stats });
}

enum End {
    Eof,
    ReadFailed(io::Error),
    WriteFailed(io::Error),
}

/// Bytes to write, and what they stand for in the stream that was read.
enum Outgoing {
    Same(Bytes),
    Rewritten { bytes: Bytes, original: Bytes },
}

/// Writes `out` in order. On failure, what was not written is added to `stats.dropped`.
fn forward(to: &mut TcpStream, out: Vec<Outgoing>, stats: &mut Stats) -> io::Result<()> {
    let mut out = out.into_iter();
    while let Some(piece) = out.next() {
        let (bytes, original) = match &piece {
            Outgoing::Same(bytes) => (bytes, None),
            Outgoing::Rewritten { bytes, original } => (bytes, Some(original)),
        };
        let mut written = 0;
        while written < bytes.len() {
            let error = match to.write(&bytes[written..]) {
                Ok(0) => io::Error::new(io::ErrorKind::WriteZero, "the peer accepts no more bytes"),
                Ok(n) => {
                    stats.forwarded.add(&bytes[written..written + n]);
                    if original.is_none() {
                        stats
                            .forwarded_as_received
                            .add(&bytes[written..written + n]);
                    }
                    written += n;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => e,
            };
            // A rewritten frame stands for its original, all of it dropped.
            stats
                .dropped
                .add(original.map_or(&bytes[written..], |original| &original[..]));
            for piece in out {
                stats.dropped.add(match &piece {
                    Outgoing::Same(bytes) => bytes,
                    Outgoing::Rewritten { original, .. } => original,
                });
            }
            return Err(error);
        }
        if let Some(original) = original {
            stats.forwarded_as_received.add(original);
        }
    }
    Ok(())
}
