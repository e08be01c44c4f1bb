//! One direction of a proxied connection: read a chunk, hand its finished frames to the
//! logger, forward the chunk, repeat.
//!
//! Frames are handed over before the chunk that ends them is forwarded, so the logger sees a
//! request before the server can have answered it. Only a response held for broker address
//! rewriting waits for anything: for its own last byte, then for the rewrite.
//!
//! What the pumps hold lives in [`Link`], outside the pumps' own futures, so that when the
//! tool closes a connection (eviction, idle timeout) the `close` line can still account for
//! every byte: received, forwarded, and what was read and not written.

use super::config::Config;
use super::events::{Ending, Event, FrameEvent, Peer, EVENT_COST};
use super::framing::{Content, Frame, Framer, Piece, Policy, Skipped};
use super::policy::{Decision, Rules};
use super::rewrite::{Note, Rewrite};
use super::stats::Stats;
use kafka_codec::bytes::Bytes;
use kafka_codec::conn::{Direction, RawRequestHeader};
use kafka_codec_server::budget::{Budget, Charge};
use kafka_codec_server::metrics::{Awaiting, Metrics};
use kafka_codec_server::registry::Member;
use kafka_codec_server::stream::{peer_closed, PeerClosed, ReadHalf, WriteHalf};
use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, Notify};

/// Bytes to write, and what they stand for in the stream that was read.
enum Outgoing {
    Same(Bytes),
    Rewritten {
        bytes: Bytes,
        original: Bytes,
    },
    /// A response the tap made (a denial): nothing of the stream read.
    Made(Bytes),
}

impl Outgoing {
    fn bytes(&self) -> &Bytes {
        match self {
            Outgoing::Same(bytes) | Outgoing::Rewritten { bytes, .. } | Outgoing::Made(bytes) => {
                bytes
            }
        }
    }
}

/// One direction's state: its framer, its counts, and what it read and has not written yet.
struct Progress {
    framer: Framer,
    stats: Stats,
    unsent: VecDeque<Outgoing>,
    /// Bytes of `unsent`'s first piece already written.
    written: usize,
}

impl Progress {
    /// Everything read and not written is dropped: the receiver is gone.
    fn drop_unsent(&mut self) {
        let written = std::mem::take(&mut self.written);
        for (index, piece) in self.unsent.drain(..).enumerate() {
            let dropped = match &piece {
                Outgoing::Same(bytes) if index == 0 => &bytes[written..],
                Outgoing::Same(bytes) => &bytes[..],
                // A rewritten frame stands for its original, all of it dropped.
                Outgoing::Rewritten { original, .. } => &original[..],
                Outgoing::Made(_) => continue,
            };
            self.stats.dropped.add(dropped);
        }
    }
}

/// What the two pumps of a connection, its logger's queue and the connection's task share.
pub struct Link {
    pub config: Arc<Config>,
    budget: Arc<Budget>,
    metrics: Arc<Metrics>,
    /// Requests awaiting responses, for the metrics (the responses' API and latency).
    awaiting: Mutex<Awaiting>,
    rewrite: Option<Rewrite>,
    /// `--deny-api`, `--deny-topic`.
    rules: Arc<Rules>,
    /// Why a request the rules concern could not be held (then the connection ends).
    refused: Mutex<Option<String>>,
    /// The tap has answers of its own for the client.
    answers_due: Notify,
    member: Member,
    events: Option<mpsc::Sender<Event>>,
    /// Bytes of frames kept whole for the logger and not yet logged (bounded by
    /// `--max-frame` per connection).
    backlog: Arc<AtomicUsize>,
    /// Requests forwarded that await a response.
    in_flight: AtomicUsize,
    /// The client's socket, to notice it close while its requests wait (`--max-in-flight`);
    /// open as long as the pumps run, since they own it.
    client_fd: RawFd,
    answered: Notify,
    directions: [Mutex<Progress>; 2],
}

fn index(direction: Direction) -> usize {
    match direction {
        Direction::ToServer => 0,
        Direction::ToClient => 1,
    }
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: Arc<Config>,
        budget: Arc<Budget>,
        metrics: Arc<Metrics>,
        rewrite: Option<Rewrite>,
        rules: Arc<Rules>,
        member: Member,
        events: Option<mpsc::Sender<Event>>,
        client_fd: RawFd,
    ) -> Link {
        let progress = |holding: bool| {
            Mutex::new(Progress {
                framer: Framer::new(config.max_frame, head_bytes(&config), holding),
                stats: Stats::default(),
                unsent: VecDeque::new(),
                written: 0,
            })
        };
        let holding = rewrite.is_some();
        Link {
            directions: [progress(!rules.is_empty()), progress(holding)],
            config,
            awaiting: Mutex::new(Awaiting::new(&budget)),
            budget,
            metrics,
            rewrite,
            rules,
            refused: Mutex::new(None),
            answers_due: Notify::new(),
            member,
            events,
            backlog: Arc::new(AtomicUsize::new(0)),
            in_flight: AtomicUsize::new(0),
            client_fd,
            answered: Notify::new(),
        }
    }

    fn progress(&self, direction: Direction) -> MutexGuard<'_, Progress> {
        self.directions[index(direction)]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn awaiting(&self) -> MutexGuard<'_, Awaiting> {
        self.awaiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        self.member.touch();
    }

    pub fn member(&self) -> &Member {
        &self.member
    }

    /// Sends an event to the logger (none with `--no-log`), waiting while its queue is full.
    pub async fn send(&self, event: Event) {
        if let Some(events) = &self.events {
            // A logger that is gone has nothing more to log; forwarding goes on.
            let _ = events.send(event).await;
        }
    }

    /// Waits while the client has `--max-in-flight` requests unanswered. Not reading, the
    /// pump would not see the client go: it looks at the socket twice a second.
    async fn wait_in_flight(&self) -> Option<PeerClosed> {
        loop {
            if self.in_flight.load(Ordering::Acquire) < self.config.max_in_flight {
                return None;
            }
            tokio::select! {
                () = self.answered.notified() => {}
                () = tokio::time::sleep(Duration::from_millis(500)) => {
                    if let Some(closed) = peer_closed(self.client_fd) {
                        return Some(closed);
                    }
                }
            }
        }
    }

    /// Reports the bytes this connection holds, for eviction when memory is short.
    fn report_held(&self) {
        let held = self.progress(Direction::ToServer).framer.charged()
            + self.progress(Direction::ToClient).framer.charged();
        self.member.set_held(held);
    }

    /// Both directions' final counts; what was read and not written counts as dropped.
    pub fn finish(&self) -> (Stats, Stats) {
        let take = |direction: Direction| {
            let mut progress = self.progress(direction);
            progress.drop_unsent();
            if let Some(held) = progress.framer.take_held() {
                progress.stats.dropped.add(&held);
            }
            let reserved = progress.framer.reserved();
            if reserved > 0 {
                self.backlog.fetch_sub(reserved, Ordering::AcqRel);
            }
            progress.stats.frames = progress.framer.frames();
            progress.stats.partial = progress.framer.partial();
            if let Some(size) = progress.framer.current_size() {
                let prefix = u32::try_from(size).unwrap_or(u32::MAX).to_be_bytes();
                let protocol = crate::common::OtherProtocol::recognise(&prefix);
                progress.stats.not_kafka = protocol.map(|protocol| {
                    let fix = match (protocol.is_tls(), direction) {
                        (true, Direction::ToServer) => {
                            "the client speaks TLS: give the tap --listen-tls-cert and \
                             --listen-tls-key"
                        }
                        (true, Direction::ToClient) => {
                            "the upstream speaks TLS: give the tap --upstream-tls"
                        }
                        (false, Direction::ToServer) => "the client is not a Kafka client",
                        (false, Direction::ToClient) => "the upstream is not a Kafka broker",
                    };
                    format!(
                        "the unfinished frame's size prefix is {}: {fix}",
                        protocol.name()
                    )
                });
            }
            std::mem::take(&mut progress.stats)
        };
        (take(Direction::ToServer), take(Direction::ToClient))
    }
}

/// Bytes kept of a frame that is not kept whole: what the log shows in hex, and enough of a
/// request's start to tell whether it is answered (`RawRequestHeader::expects_response`).
fn head_bytes(config: &Config) -> usize {
    config.max_hex.max(64)
}

/// The framer's decisions for one direction.
struct PumpPolicy<'a> {
    direction: Direction,
    link: &'a Link,
}

impl Policy for PumpPolicy<'_> {
    fn keep_whole(&mut self, size: usize) -> Result<(), Skipped> {
        if !self.link.config.logging {
            return Err(Skipped::NotLogged);
        }
        let budget = self.link.config.max_frame;
        self.link
            .backlog
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(size).filter(|&total| total <= budget)
            })
            .map(|_| ())
            .map_err(|_| Skipped::Backlog)
    }

    fn grow(&mut self, charge: &mut Charge, bytes: usize) -> bool {
        charge.try_grow_optional(bytes)
    }

    fn no_charge(&mut self) -> Charge {
        self.link.budget.none()
    }

    fn release(&mut self, size: usize) {
        self.link.backlog.fetch_sub(size, Ordering::AcqRel);
    }

    fn hold(&mut self, head: &[u8], size: usize) -> Option<Charge> {
        let link = self.link;
        match (self.direction, &link.rewrite) {
            (Direction::ToServer, _) if link.rules.concerns(head) => {
                // A request the rules concern never streams through unseen: if it cannot be
                // held, the connection ends before the broker has it whole.
                let refused = if size > link.config.max_frame {
                    Some(format!(
                        "a {size}-byte request that --deny-api/--deny-topic concern is above                          --max-frame ({}); closing the connection rather than forwarding it                          unseen",
                        link.config.max_frame
                    ))
                } else {
                    None
                };
                let charge = match refused {
                    None => link.budget.try_reserve(4 + size),
                    Some(_) => None,
                };
                if charge.is_none() {
                    let why = refused.unwrap_or_else(|| {
                        format!(
                            "no room in --memory-budget to hold a {size}-byte request that                              --deny-api/--deny-topic concern; closing the connection rather                              than forwarding it unseen"
                        )
                    });
                    *link.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                }
                charge
            }
            (Direction::ToClient, Some(rewrite)) if size <= link.config.max_frame => {
                let id = <[u8; 4]>::try_from(head).map(i32::from_be_bytes).ok()?;
                if rewrite.awaits(id) {
                    link.budget.try_reserve_optional(4 + size)
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// How a direction ended.
pub enum End {
    Eof,
    ReadFailed(io::Error),
    WriteFailed(io::Error),
    /// The tool ended the connection (a request it could not check or hold).
    Refused(String),
}

impl End {
    pub fn describe(&self) -> String {
        match self {
            End::Eof => "eof".to_owned(),
            End::ReadFailed(e) => format!("read failed: {e}"),
            End::WriteFailed(e) => format!("write failed: {e}"),
            End::Refused(why) => format!("refused: {why}"),
        }
    }

    /// Which peer this end of a pump in `direction` came from, unless the tool caused it:
    /// a pump reads from one peer and writes to the other.
    pub fn ending(&self, direction: Direction) -> Option<Ending> {
        let (reader, writer) = match direction {
            Direction::ToServer => (Peer::Client, Peer::Server),
            Direction::ToClient => (Peer::Server, Peer::Client),
        };
        match self {
            End::Eof => Some(Ending {
                peer: reader,
                reset: false,
            }),
            End::ReadFailed(_) => Some(Ending {
                peer: reader,
                reset: true,
            }),
            End::WriteFailed(_) => Some(Ending {
                peer: writer,
                reset: true,
            }),
            End::Refused(_) => None,
        }
    }

    /// Why the tool ended the connection, when it did.
    pub fn refusal(&self) -> Option<String> {
        match self {
            End::Refused(why) => Some(why.clone()),
            _ => None,
        }
    }
}

/// Copies `from` to `to` until either side ends. On a clean end the receiver's write side is
/// shut (the other direction may still be busy); the caller closes everything otherwise.
pub async fn pump(direction: Direction, link: &Link, mut from: ReadHalf, mut to: WriteHalf) -> End {
    // Bytes read and not yet framed: what is left of a read when --max-in-flight stopped
    // the framing in the middle of it, and its charge.
    let mut unframed = Bytes::new();
    let mut held = None;
    let end = loop {
        if direction == Direction::ToServer {
            match link.wait_in_flight().await {
                None => {}
                Some(PeerClosed::Sending) => break End::Eof,
                Some(PeerClosed::Connection) => {
                    break End::ReadFailed(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "the client went away while its requests awaited responses",
                    ))
                }
            }
        }
        if unframed.is_empty() {
            let read = async {
                if direction == Direction::ToClient && !link.rules.is_empty() {
                    // The tap's own answers go out between the broker's responses. Answers
                    // due are looked at first: they were released before the requests after
                    // them were forwarded, so a response read now may answer one of those
                    // and must follow them (an unbiased select wrote it first, now and then).
                    tokio::select! {
                        biased;
                        () = link.answers_due.notified() => None,
                        read = from.read_chunk() => Some(read),
                    }
                } else {
                    Some(from.read_chunk().await)
                }
            };
            let chunk = match read.await {
                None => {
                    let events = due_answers(link);
                    send_frames(direction, link, events, (Instant::now(), SystemTime::now())).await;
                    if let Err(e) = write_unsent(direction, link, &mut to).await {
                        break End::WriteFailed(e);
                    }
                    continue;
                }
                Some(Ok(chunk)) if chunk.is_empty() => break End::Eof,
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => break End::ReadFailed(e),
            };
            link.touch();
            link.metrics.bytes(direction, chunk.len());
            link.progress(direction).stats.received.add(&chunk);
            // What was read is held until it is written: a needed charge, which waits when
            // the budget is spent (a read is far below the smallest budget, so it fits).
            held = link.budget.reserve(chunk.len()).await;
            unframed = chunk;
        }
        let seen = (Instant::now(), SystemTime::now());
        // Requests: no more frames than may still be in flight, so the bound is exact.
        let allowed = match direction {
            Direction::ToServer => link
                .config
                .max_in_flight
                .saturating_sub(link.in_flight.load(Ordering::Acquire))
                .max(1),
            Direction::ToClient => usize::MAX,
        };
        let (events, rest) = frame(
            direction,
            link,
            std::mem::take(&mut unframed),
            allowed,
            seen.0,
        );
        unframed = rest;
        send_frames(direction, link, events, seen).await;
        if direction == Direction::ToServer {
            if let Some(rewrite) = &link.rewrite {
                // The logger has the requests: their answers may go out.
                rewrite.release_answers();
                link.answers_due.notify_one();
            }
            let refused = link
                .refused
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if let Some(why) = refused {
                break End::Refused(why);
            }
        }
        link.report_held();
        if let Err(e) = write_unsent(direction, link, &mut to).await {
            break End::WriteFailed(e);
        }
        if unframed.is_empty() {
            held = None;
        }
    };
    drop(held);
    if !unframed.is_empty() {
        // Read, never framed nor forwarded: the connection is ending.
        link.progress(direction).stats.dropped.add(&unframed);
    }
    // The broker has answered all it will: the tap's answers still waiting go out now
    // (the logger has their requests: the request pump releases answers only after that).
    if direction == Direction::ToClient && matches!(end, End::Eof) {
        let events = due_answers(link);
        send_frames(direction, link, events, (Instant::now(), SystemTime::now())).await;
    }
    // Bytes kept back for a hold decision were sent by the peer: they go out as they are,
    // unless the receiver is gone.
    if matches!(end, End::Eof | End::ReadFailed(_) | End::Refused(_)) {
        {
            let mut progress = link.progress(direction);
            if let Some(held) = progress.framer.take_held() {
                progress.unsent.push_back(Outgoing::Same(held));
            }
        }
        let _ = write_unsent(direction, link, &mut to).await;
    }
    if matches!(end, End::Eof) {
        let _ = to.shutdown().await;
    }
    link.progress(direction).stats.end = end.describe();
    end
}

/// A frame for the logger, before its event is charged.
enum Pending {
    Frame(Frame, Option<Note>),
    Unframeable(i32),
    /// A request denied by `--deny-api`/`--deny-topic`, as its log line has it.
    Denied(kafka_codec::serde_json::Value),
}

/// Hands what `frame` found to the logger, in order.
async fn send_frames(
    direction: Direction,
    link: &Link,
    events: Vec<Pending>,
    seen: (Instant, SystemTime),
) {
    for event in events {
        let charge = link.budget.reserve(EVENT_COST).await;
        let event = match (event, charge) {
            (Pending::Frame(frame, rewritten), Some(charge)) => {
                Event::Frame(Box::new(FrameEvent {
                    direction,
                    seen,
                    frame,
                    rewritten,
                    charge,
                }))
            }
            (Pending::Unframeable(size), _) => Event::Unframeable {
                direction,
                size,
                at: seen.1,
            },
            (Pending::Denied(denial), _) => Event::Denied { denial, at: seen.1 },
            (Pending::Frame(..), None) => continue,
        };
        link.send(event).await;
    }
}

/// Queues the tap's answers that are due (the broker has answered everything before them)
/// to be written to the client, and returns them for the logger.
fn due_answers(link: &Link) -> Vec<Pending> {
    let Some(rewrite) = &link.rewrite else {
        return Vec::new();
    };
    let due = rewrite.due_answers();
    if due.is_empty() {
        return Vec::new();
    }
    let mut progress = link.progress(Direction::ToClient);
    let mut out = Vec::new();
    for (response, note) in due {
        progress.unsent.push_back(Outgoing::Made(response.clone()));
        progress.stats.answered += 1;
        let _ = link
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        link.answered.notify_one();
        if link.config.logging {
            out.push(Pending::Frame(
                Frame {
                    size: response.len() - 4,
                    content: Content::Whole(response.slice(4..)),
                    held: None,
                    charge: link.budget.none(),
                },
                Some(note),
            ));
        }
    }
    out
}

/// Splits `chunk` into frames, at most `max_frames` of them, queues their bytes (or their
/// replacements, or the tap's own answers) to be written, counts requests awaiting
/// responses and frames for the metrics (`seen`: when the chunk was read), and returns what
/// the logger gets and the bytes after the last frame taken.
fn frame(
    direction: Direction,
    link: &Link,
    chunk: Bytes,
    max_frames: usize,
    seen: Instant,
) -> (Vec<Pending>, Bytes) {
    let mut progress = link.progress(direction);
    let mut policy = PumpPolicy { direction, link };
    let (pieces, rest) = progress.framer.push_frames(chunk, &mut policy, max_frames);
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Forward(bytes) => progress.unsent.push_back(Outgoing::Same(bytes)),
            Piece::Unframeable(size) => out.push(Pending::Unframeable(size)),
            Piece::Frame(frame) if direction == Direction::ToServer => {
                request(link, &mut progress, frame, &mut out, seen);
            }
            Piece::Frame(mut frame) => {
                let mut rewritten = None;
                let head = match &frame.content {
                    Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes.clone(),
                };
                if let Some(held) = frame.held.take() {
                    match link
                        .rewrite
                        .as_ref()
                        .and_then(|r| r.response(held.slice(4..)))
                    {
                        Some((bytes, note)) if bytes != held => {
                            progress.unsent.push_back(Outgoing::Rewritten {
                                bytes,
                                original: held,
                            });
                            progress.stats.rewritten += 1;
                            rewritten = Some(note);
                        }
                        Some((_, note)) => {
                            progress.unsent.push_back(Outgoing::Same(held));
                            rewritten = Some(note);
                        }
                        None => progress.unsent.push_back(Outgoing::Same(held)),
                    }
                } else if let (Some(rewrite), Some(id)) = (&link.rewrite, head.get(..4)) {
                    rewrite.responded(i32::from_be_bytes([id[0], id[1], id[2], id[3]]));
                }
                link.awaiting().response(&link.metrics, &head, seen);
                let _ = link
                    .in_flight
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
                link.answered.notify_one();
                if link.config.logging {
                    out.push(Pending::Frame(frame, rewritten));
                }
                if !link.rules.is_empty() {
                    // The tap's answers that waited for this response go right after it.
                    drop(progress);
                    out.extend(due_answers(link));
                    progress = link.progress(direction);
                }
            }
        }
    }
    (out, rest)
}

/// A whole request: decided on if it was held (`--deny-api`/`--deny-topic`), then
/// forwarded, split, answered or dropped, and counted as awaiting a response.
fn request(
    link: &Link,
    progress: &mut Progress,
    mut frame: Frame,
    out: &mut Vec<Pending>,
    seen: Instant,
) {
    link.member.completed_request();
    let head = match &frame.content {
        Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes.clone(),
    };
    // A request whose start does not tell is not counted: better a looser bound than a
    // connection that stops for a response that never comes.
    let expects_response = RawRequestHeader::expects_response(&head) == Some(true);
    let header = RawRequestHeader::peek(&head);
    let decision = match frame.held.take() {
        None => Decision::Forward,
        Some(held) => {
            let decision = link.rules.decide(held.slice(4..));
            if let Some(denial) = decision.denial() {
                let reason = if denial.by_api {
                    "deny_api"
                } else {
                    "deny_topic"
                };
                link.metrics.denied(denial.api, reason);
                if link.config.logging {
                    out.push(Pending::Denied(denial.json(decision.action())));
                }
            }
            match &decision {
                Decision::Forward => progress.unsent.push_back(Outgoing::Same(held)),
                Decision::Split { request, .. } => {
                    progress.unsent.push_back(Outgoing::Rewritten {
                        bytes: request.clone(),
                        original: held,
                    });
                    progress.stats.rewritten += 1;
                }
                Decision::Answer { .. } | Decision::Drop { .. } => {
                    progress.stats.denied.add(&held);
                }
                Decision::Close { denial } => {
                    progress.stats.denied.add(&held);
                    let why = format!(
                        "closed by the tool: {} v{} request {} is concerned by \
                         --deny-api/--deny-topic and cannot be checked or answered ({})",
                        denial.api,
                        denial.version,
                        denial.correlation_id,
                        denial.note.as_deref().unwrap_or("unreadable")
                    );
                    *link.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                }
            }
            decision
        }
    };
    // The broker answers what it is sent and expects to answer; the tap's own answers are
    // not the broker's and are not counted as responses.
    let broker_answers = match &decision {
        Decision::Forward => expects_response,
        Decision::Split { merge, .. } => merge.is_some(),
        Decision::Answer { .. } | Decision::Drop { .. } | Decision::Close { .. } => false,
    };
    link.awaiting()
        .request(&link.metrics, &head, broker_answers, seen);
    match decision {
        Decision::Forward => {
            if expects_response {
                link.in_flight.fetch_add(1, Ordering::AcqRel);
            }
            if let (Some(rewrite), Some(header)) = (&link.rewrite, header) {
                rewrite.request(header, expects_response, None);
            }
        }
        Decision::Split { merge, .. } => {
            // No merge: a Produce with acks=0, which gets no response.
            let expects_response = merge.is_some();
            if expects_response {
                link.in_flight.fetch_add(1, Ordering::AcqRel);
            }
            if let (Some(rewrite), Some(header)) = (&link.rewrite, header) {
                rewrite.request(header, expects_response, merge);
            }
        }
        Decision::Answer { response, denial } => {
            if let Some(rewrite) = &link.rewrite {
                // Answered in its turn, after the broker's responses to earlier requests;
                // until then it counts as in flight.
                link.in_flight.fetch_add(1, Ordering::AcqRel);
                let note = Note {
                    denied: Some(denial.json("answered")),
                    ..Note::default()
                };
                rewrite.answer(response, note);
            }
        }
        Decision::Drop { .. } | Decision::Close { .. } => {}
    }
    if link.config.logging {
        out.push(Pending::Frame(frame, None));
    }
}

/// Writes what is queued, in order, counting it as it goes.
async fn write_unsent(direction: Direction, link: &Link, to: &mut WriteHalf) -> io::Result<()> {
    loop {
        let (bytes, from) = {
            let progress = link.progress(direction);
            match progress.unsent.front() {
                None => break,
                Some(piece) => (piece.bytes().clone(), progress.written),
            }
        };
        let result = to.write(&bytes[from..]).await;
        let mut progress = link.progress(direction);
        let n = match result {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the peer accepts no more bytes",
                ))
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let Progress {
            stats,
            unsent,
            written,
            ..
        } = &mut *progress;
        stats.forwarded.add(&bytes[from..from + n]);
        let rewritten = matches!(
            unsent.front(),
            Some(Outgoing::Rewritten { .. } | Outgoing::Made(_))
        );
        if !rewritten {
            stats.forwarded_as_received.add(&bytes[from..from + n]);
        }
        *written += n;
        if *written == bytes.len() {
            if let Some(Outgoing::Rewritten { original, .. }) = unsent.pop_front() {
                stats.forwarded_as_received.add(&original);
            }
            *written = 0;
        }
        link.touch();
    }
    to.flush().await
}
