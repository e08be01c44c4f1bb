//! The log: one JSON object per line, written by each connection's logger. Two producers
//! feed it: the tap's connections, and `decode pcap`'s reassembled captures (which add their
//! own `gap`, `tls`/`http` and `capture` lines through [`note`]); the times in the lines are
//! the events' own, the clock's for the tap and the packets' for a capture.
//!
//! Lines, by `event`:
//! - `listen`: a listener opened (`listen`, `upstream`);
//! - `connect`: a client's connection reached the upstream (`client`, `listener`,
//!   `upstream`, `upstreamAddress`, and `clientSubject`, the subject of the client's
//!   certificate under `--listen-tls-client-ca`), or did not (`error`: unreachable, TLS
//!   failed, in words, or the client went away or was closed before sending anything);
//! - `pair`: a request and its response: `correlationId`, `api`, `apiKey`, `apiVersion`,
//!   `latencyMs`, `request` and `response` in Kafka's JSON form (the forms `kafka-codec
//!   encode request|response` read). A request that gets no response (Produce with
//!   `acks = 0`) is a pair with `"response": null` and `"expectsResponse": false`; one that
//!   never got its response says why in `unanswered`;
//! - `request` / `response`: one half of a pair logged alone: a request whose JSON the
//!   memory budget could not keep until its response came, or a response that answers no
//!   request;
//! - `saslToken`: a raw SASL token (after a SaslHandshake v0, or a GSSAPI token before any
//!   request): not a Kafka frame, and a credential; its size only;
//! - `unframeable`: a negative size prefix; the rest of that direction is forwarded unread;
//! - `close`: both directions ended: per direction, bytes and CRC-32C as received and as
//!   forwarded, frames, dropped and partial-frame bytes, and how it ended; `closedBy` when
//!   the tool closed it (idle timeout, connection cap, memory budget).
//!
//! A frame that does not decode is logged in place of its JSON as `requestError` /
//! `responseError` (`error`, `size`, `hex` of its first bytes); a frame not decoded because
//! of a limit as `requestSkipped` / `responseSkipped` (`reason`, `size`, `hex`). A message
//! whose JSON is longer than its share of `--max-line` is replaced by `{"omitted": …}`.
//! With `--records`, `records` fields show as their batches; one that does not decode stays
//! base64 and `requestRecordsError` / `responseRecordsError` say why.
//!
//! Every line is written whole under one lock, so lines of different connections never
//! interleave.

use super::config::Config;
use super::events::{ClosedEvent, ConnectEvent, Ending, Event, FrameEvent, Peer};
use super::framing::{Content, Frame, Skipped};
use super::rewrite::Note;
use super::stats::Stats;
use crate::common::ExpandRecords;
use kafka_codec::bytes::Bytes;
use kafka_codec::conn::{decode_request, decode_response, Direction, RawRequestHeader};
use kafka_codec::json::redact::{self, Form};
use kafka_codec::json::{
    transcode_request, transcode_response, JsonOptions, JsonSink, JsonWriter, TranscodeError,
};
use kafka_codec::serde_json::{self, json, Value};
use kafka_codec::{ApiKey, Message, TrailingBytes};
use kafka_codec_server::budget::{Budget, Charge};
use kafka_codec_server::metrics::{Metrics, Undecoded};
use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use tokio::sync::mpsc;

/// Where lines go.
pub struct Log {
    out: Mutex<Box<dyn Write + Send>>,
    failed: AtomicBool,
    /// Who writes it and what happens when it cannot be written, for the one line on stderr.
    writer: &'static str,
    then: &'static str,
    /// Flush after each line (the tap's log is read as it grows; a capture's is not).
    flush_lines: bool,
}

impl Log {
    /// The tap's log: a failed write is reported and forwarding goes on.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        let mut log = Self::named(out, "tap", "; still forwarding");
        log.flush_lines = true;
        log
    }

    /// A log written by the command `writer` (`decode pcap`), which reports a failed write
    /// with `then` after the error.
    pub fn named(out: Box<dyn Write + Send>, writer: &'static str, then: &'static str) -> Self {
        Log {
            out: Mutex::new(out),
            failed: AtomicBool::new(false),
            writer,
            then,
            flush_lines: false,
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = out.flush() {
            self.failed(e);
        }
    }

    fn failed(&self, e: io::Error) {
        // A closed pipe (`| head`) ends a capture's output quietly.
        let quiet = e.kind() == io::ErrorKind::BrokenPipe && self.writer != "tap";
        if !self.failed.swap(true, Ordering::Relaxed) && !quiet {
            crate::common::log_line(format_args!(
                "kafka-codec {}: cannot write the log ({e}){}",
                self.writer, self.then
            ));
        }
    }

    /// Whether a write has failed.
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Writes one line and flushes it, so that `tail -f` sees it at once. A log that cannot
    /// be written is reported once on stderr; forwarding goes on.
    pub fn write(&self, line: &[u8]) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let mut result = out.write_all(line).and_then(|()| out.write_all(b"\n"));
        if self.flush_lines {
            result = result.and_then(|()| out.flush());
        }
        drop(out);
        if let Err(e) = result {
            self.failed(e);
        }
    }
}

/// A JSON object written field by field, so that message JSON rendered (and capped)
/// separately is put in without being parsed again.
struct Line(Vec<u8>);

impl Line {
    fn new(event: &str, time: SystemTime, connection: Option<u64>) -> Self {
        let mut line = Line(b"{".to_vec());
        line.field("event", &json!(event));
        line.field("time", &json!(timestamp(time)));
        if let Some(connection) = connection {
            line.field("connection", &json!(connection));
        }
        line
    }

    fn field(&mut self, key: &str, value: &Value) {
        let text = serde_json::to_vec(value).expect("a JSON value always serializes");
        self.raw(key, &text);
    }

    fn raw(&mut self, key: &str, json_text: &[u8]) {
        if self.0.len() > 1 {
            self.0.push(b',');
        }
        serde_json::to_writer(&mut self.0, key).expect("a key serializes");
        self.0.push(b':');
        self.0.extend_from_slice(json_text);
    }

    fn finish(mut self) -> Vec<u8> {
        self.0.push(b'}');
        self.0
    }
}

/// RFC 3339 in UTC, microseconds.
fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_micros(time).to_string()
}

/// A `listen` line.
pub fn listening(log: &Log, listen: SocketAddr, upstream: &str, tls: bool) {
    let mut line = Line::new("listen", SystemTime::now(), None);
    line.field("listen", &json!(listen.to_string()));
    line.field("upstream", &json!(upstream));
    if tls {
        line.field("tls", &json!(true));
    }
    log.write(&line.finish());
}

/// A line of another producer's own (`decode pcap`: `gap`, `tls`, `capture`): `event`,
/// `time`, `connection` if it is about one, then `fields` in order.
pub fn note(
    log: &Log,
    event: &str,
    time: SystemTime,
    connection: Option<u64>,
    fields: &[(&str, Value)],
) {
    let mut line = Line::new(event, time, connection);
    for (key, value) in fields {
        line.field(key, value);
    }
    log.write(&line.finish());
}

/// One side of a pair, ready to be logged.
enum Side {
    /// Kafka's JSON, as text; the fields of `requestTrailing` / `responseTrailing` if bytes
    /// after the body were ignored; why records fields stayed base64 (with --records); the
    /// paths whose secrets were replaced.
    Json {
        text: Vec<u8>,
        trailing: Option<Value>,
        records_errors: Option<Value>,
        redacted: Vec<String>,
    },
    /// It did not decode: the fields of `requestError` / `responseError`.
    Error(Value),
    /// It was not decoded (`skipped` says why): the fields of `requestSkipped` /
    /// `responseSkipped`.
    Skipped { skipped: Skipped, fields: Value },
}

impl Side {
    fn len(&self) -> usize {
        match self {
            Side::Json { text, .. } => text.len(),
            Side::Error(_) | Side::Skipped { .. } => 256,
        }
    }

    /// Adds the side to `line` as `name` (`request`/`response`).
    fn put(&self, line: &mut Line, name: &str) {
        match self {
            Side::Json {
                text,
                trailing,
                records_errors,
                redacted,
            } => {
                line.raw(name, text);
                if let Some(trailing) = trailing {
                    line.field(&format!("{name}Trailing"), trailing);
                }
                if let Some(errors) = records_errors {
                    line.field(&format!("{name}RecordsError"), errors);
                }
                if !redacted.is_empty() {
                    line.field(&format!("{name}Redacted"), &json!(redacted));
                }
            }
            Side::Error(value) => {
                line.field(name, &Value::Null);
                line.field(&format!("{name}Error"), value);
            }
            Side::Skipped { fields, .. } => {
                line.field(name, &Value::Null);
                line.field(&format!("{name}Skipped"), fields);
            }
        }
    }
}

/// A request waiting for its response.
struct Pending {
    header: RawRequestHeader,
    time: SystemTime,
    seen: Instant,
    /// `None` once logged alone.
    side: Option<Side>,
    /// What keeping it costs on the budget.
    charge: Charge,
}

/// Whether the connection carries Kafka frames or raw SASL tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sasl {
    Kafka,
    /// A SaslHandshake v0 with this correlation id awaits its response: if it succeeds, the
    /// client sends raw tokens next.
    Handshake(i32),
    /// Raw tokens, until a request frame decodes as a Kafka request again.
    Raw,
}

/// One connection's logger: pairs requests with responses and writes the lines. Runs as a
/// task of its own, on the decoding threads, fed by the connection's pumps.
pub struct Logger {
    id: u64,
    config: Arc<Config>,
    log: Arc<Log>,
    budget: Arc<Budget>,
    metrics: Arc<Metrics>,
    awaiting: VecDeque<Pending>,
    client: String,
    upstream: String,
    started: Instant,
    sasl: Sasl,
    requests: u64,
    /// The API of the frame being logged, when its bytes may hold credentials: its hex (of
    /// a frame that does not decode, is skipped, or has trailing bytes) is not shown.
    hex_hidden: Option<ApiKey>,
}

impl Logger {
    pub fn new(
        id: u64,
        config: Arc<Config>,
        log: Arc<Log>,
        budget: Arc<Budget>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Logger {
            id,
            config,
            log,
            budget,
            metrics,
            awaiting: VecDeque::new(),
            client: String::new(),
            upstream: String::new(),
            started: Instant::now(),
            sasl: Sasl::Kafka,
            requests: 0,
            hex_hidden: None,
        }
    }

    /// Logs the connection's events until it closes.
    pub async fn run(mut self, mut events: mpsc::Receiver<Event>) {
        while let Some(event) = events.recv().await {
            if self.event(event) {
                break;
            }
        }
    }

    /// Handles one event; `true` after the last. Called by [`Logger::run`] for the tap, and
    /// directly, packet by packet, by `decode pcap`.
    pub fn event(&mut self, event: Event) -> bool {
        match event {
            Event::Connect(connect) => {
                let ConnectEvent {
                    at,
                    client,
                    listener,
                    upstream,
                    upstream_address,
                    client_subject,
                    error,
                } = *connect;
                self.client = client.to_string();
                self.upstream = upstream.clone();
                self.started = at.0;
                let mut line = self.line("connect", at.1);
                line.field("client", &json!(self.client));
                line.field("listener", &json!(listener.to_string()));
                line.field("upstream", &json!(upstream));
                if let Some(subject) = client_subject {
                    line.field("clientSubject", &json!(subject));
                }
                if let Some(address) = upstream_address {
                    line.field("upstreamAddress", &json!(address.to_string()));
                }
                if let Some(error) = &error {
                    line.field("error", &json!(error));
                }
                self.log.write(&line.finish());
                error.is_some()
            }
            Event::Frame(event) => {
                let FrameEvent {
                    direction,
                    seen,
                    frame,
                    rewritten,
                    charge,
                } = *event;
                match direction {
                    Direction::ToServer => self.request(seen, frame, charge),
                    Direction::ToClient => self.response(seen, frame, rewritten),
                }
                false
            }
            Event::Unframeable {
                direction,
                size,
                at,
            } => {
                let mut line = self.line("unframeable", at);
                line.field("direction", &json!(direction_name(direction)));
                let error = format!(
                    "negative frame size {size}: the rest of this direction is forwarded \
                     without decoding"
                );
                line.field("error", &json!(error));
                self.log.write(&line.finish());
                false
            }
            Event::Denied { denial, at } => {
                let mut line = self.line("denied", at);
                if let Some(fields) = denial.as_object() {
                    for (key, value) in fields {
                        line.field(key, value);
                    }
                }
                self.log.write(&line.finish());
                false
            }
            Event::Closed(closed) => {
                let ClosedEvent {
                    at,
                    to_server,
                    to_client,
                    ended_first,
                    closed_by,
                } = *closed;
                self.closed(at, to_server, to_client, ended_first, closed_by);
                true
            }
        }
    }

    fn line(&self, event: &str, time: SystemTime) -> Line {
        Line::new(event, time, Some(self.id))
    }

    fn request(&mut self, (seen, time): (Instant, SystemTime), frame: Frame, charge: Charge) {
        self.requests += 1;
        let first = self.requests == 1;
        let head = match &frame.content {
            Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes.clone(),
        };
        let header = RawRequestHeader::peek(&head);
        if self.raw_sasl_token(Direction::ToServer, time, &frame, header, first) {
            return;
        }
        self.hex_hidden = self.secret_api(header.and_then(|h| h.api()), redact::Direction::Request);
        let side = match &frame.content {
            Content::Whole(bytes) => self.render_request(bytes, frame.size),
            Content::Head { head, skipped } => {
                self.skipped(*skipped, head, frame.size, Direction::ToServer)
            }
        };
        self.count(Direction::ToServer, header.and_then(|h| h.api()), &side);
        drop(frame);
        let Some(header) = header else {
            // Shorter than a header: nothing can answer it.
            let mut line = self.line("request", time);
            side.put(&mut line, "request");
            self.log.write(&line.finish());
            return;
        };
        if header.api() == Some(ApiKey::SaslHandshake) && header.api_version == 0 {
            self.sasl = Sasl::Handshake(header.correlation_id);
        }
        if RawRequestHeader::expects_response(&head) == Some(false) {
            let mut line = self.pair_line("pair", &header, time);
            side.put(&mut line, "request");
            line.field("response", &Value::Null);
            line.field("expectsResponse", &json!(false));
            self.log.write(&line.finish());
            return;
        }
        let mut pending = Pending {
            header,
            time,
            seen,
            side: Some(side),
            charge,
        };
        let kept = pending.side.as_ref().map_or(0, Side::len);
        match self.budget.try_reserve_optional(kept) {
            Some(more) => pending.charge.absorb(more),
            None => {
                // The budget cannot keep its JSON until the response comes: log it now.
                let mut line = self.pair_line("request", &header, time);
                if let Some(side) = pending.side.take() {
                    side.put(&mut line, "request");
                }
                line.field(
                    "note",
                    &json!("logged alone: --memory-budget could not keep it until its response"),
                );
                self.log.write(&line.finish());
            }
        }
        self.awaiting.push_back(pending);
    }

    fn response(
        &mut self,
        (seen, time): (Instant, SystemTime),
        frame: Frame,
        rewritten: Option<Note>,
    ) {
        if self.raw_sasl_token(Direction::ToClient, time, &frame, None, false) {
            return;
        }
        let head = match &frame.content {
            Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes.clone(),
        };
        let correlation_id = head
            .get(..4)
            .map(|id| i32::from_be_bytes([id[0], id[1], id[2], id[3]]));
        let (pending, unanswered) = self.take_pending(correlation_id);
        for earlier in unanswered {
            self.alone(earlier, "the server answered a later request first");
        }
        self.hex_hidden = self.secret_api(
            pending.as_ref().and_then(|p| p.header.api()),
            redact::Direction::Response,
        );
        if let (Some(pending), Sasl::Handshake(id)) = (&pending, self.sasl) {
            if pending.header.correlation_id == id {
                // SaslHandshake v0's body starts with its error code: 0 means raw tokens follow.
                let accepted = head.get(4..6) == Some(&[0, 0][..]);
                self.sasl = if accepted { Sasl::Raw } else { Sasl::Kafka };
            }
        }
        let side = match (&frame.content, &pending) {
            (Content::Whole(bytes), Some(pending)) => match pending.header.api() {
                Some(api) => {
                    self.render_response(bytes, api, pending.header.api_version, frame.size)
                }
                None => self.error(
                    format!(
                        "the request named API key {}, which this build does not know",
                        pending.header.api_key
                    ),
                    bytes,
                    frame.size,
                ),
            },
            (Content::Whole(bytes), None) => self.error(
                match correlation_id {
                    Some(id) => format!("no request with correlation id {id} awaits a response"),
                    None => "a response shorter than its header".to_owned(),
                },
                bytes,
                frame.size,
            ),
            (Content::Head { head, skipped }, _) => {
                self.skipped(*skipped, head, frame.size, Direction::ToClient)
            }
        };
        self.count(
            Direction::ToClient,
            pending.as_ref().and_then(|p| p.header.api()),
            &side,
        );
        drop(frame);
        let mut line = match &pending {
            Some(pending) => {
                let event = if pending.side.is_some() {
                    "pair"
                } else {
                    "response"
                };
                let mut line = self.pair_line(event, &pending.header, pending.time);
                let latency = seen.saturating_duration_since(pending.seen);
                line.field("latencyMs", &json!(latency.as_micros() as f64 / 1000.0));
                if let Some(request) = &pending.side {
                    request.put(&mut line, "request");
                }
                line
            }
            None => {
                let mut line = self.line("response", time);
                line.field("correlationId", &json!(correlation_id));
                line
            }
        };
        side.put(&mut line, "response");
        if let Some(note) = rewritten {
            line.field("rewritten", &note.json());
        }
        self.log.write(&line.finish());
    }

    /// Logs a raw SASL token in place of a frame and returns `true`, if the frame is one.
    fn raw_sasl_token(
        &mut self,
        direction: Direction,
        time: SystemTime,
        frame: &Frame,
        header: Option<RawRequestHeader>,
        first: bool,
    ) -> bool {
        let head = match &frame.content {
            Content::Whole(bytes) | Content::Head { head: bytes, .. } => bytes,
        };
        let raw = match (self.sasl, direction) {
            (Sasl::Raw, Direction::ToClient) => true,
            (Sasl::Raw, Direction::ToServer) => {
                // Tokens go on until the client sends a Kafka request again.
                let kafka = matches!(&frame.content, Content::Whole(bytes)
                    if decode_request(bytes.clone(), &self.config.options).is_ok());
                if kafka {
                    self.sasl = Sasl::Kafka;
                }
                !kafka
            }
            // A GSSAPI token (ASN.1 application tag 0x60) as the first bytes of a connection:
            // a client authenticating with Kerberos before any Kafka request (pre-KIP-43).
            (_, Direction::ToServer) => {
                let gssapi =
                    first && head.first() == Some(&0x60) && header.and_then(|h| h.api()).is_none();
                if gssapi {
                    self.sasl = Sasl::Raw;
                }
                gssapi
            }
            _ => false,
        };
        if !raw {
            return false;
        }
        let mut line = self.line("saslToken", time);
        line.field("direction", &json!(direction_name(direction)));
        line.field("size", &json!(frame.size));
        if self.config.log_secrets {
            line.field("hex", &self.hex(head));
        } else {
            line.field(
                "note",
                &json!("a raw SASL token (not a Kafka frame): a credential, not shown"),
            );
        }
        self.log.write(&line.finish());
        true
    }

    /// The oldest request answered by a response with `correlation_id`, and the requests
    /// before it (Kafka answers in order: those will never be answered).
    fn take_pending(&mut self, correlation_id: Option<i32>) -> (Option<Pending>, Vec<Pending>) {
        let Some(id) = correlation_id else {
            return (None, Vec::new());
        };
        let Some(at) = self
            .awaiting
            .iter()
            .position(|p| p.header.correlation_id == id)
        else {
            return (None, Vec::new());
        };
        let mut before: Vec<Pending> = self.awaiting.drain(..=at).collect();
        let pending = before.pop();
        (pending, before)
    }

    fn closed(
        &mut self,
        (at, time): (Instant, SystemTime),
        to_server: Stats,
        to_client: Stats,
        ended_first: Option<Ending>,
        closed_by: Option<String>,
    ) {
        // A client may hang up with a request in flight (a consumer closing during a long
        // poll); a server closing on one is another matter: the log tells them apart.
        let why = match (&closed_by, ended_first) {
            (Some(_), _) => "the tool closed the connection first",
            (
                None,
                Some(Ending {
                    peer: Peer::Client,
                    reset: false,
                }),
            ) => "the client closed the connection first",
            (
                None,
                Some(Ending {
                    peer: Peer::Client,
                    reset: true,
                }),
            ) => "the client reset the connection first",
            (
                None,
                Some(Ending {
                    peer: Peer::Server,
                    reset: false,
                }),
            ) => "the server closed the connection first",
            (
                None,
                Some(Ending {
                    peer: Peer::Server,
                    reset: true,
                }),
            ) => "the server reset the connection first",
            (None, None) => "the connection failed first",
        };
        for pending in std::mem::take(&mut self.awaiting) {
            self.alone(pending, why);
        }
        let mut line = self.line("close", time);
        line.field("client", &json!(self.client));
        line.field("upstream", &json!(self.upstream));
        line.field(
            "durationMs",
            &json!(at.saturating_duration_since(self.started).as_millis() as u64),
        );
        line.field("toServer", &to_server.json());
        line.field("toClient", &to_client.json());
        if let Some(why) = closed_by {
            line.field("closedBy", &json!(why));
        }
        self.log.write(&line.finish());
    }

    /// Logs the oldest requests awaiting a response as unanswered while more than `max`
    /// await. The tap holds a client back at --max-in-flight instead; a capture cannot, and
    /// its requests must not pile up without bound.
    pub fn cap_awaiting(&mut self, max: usize) {
        while self.awaiting.len() > max {
            if let Some(pending) = self.awaiting.pop_front() {
                self.alone(
                    pending,
                    "more requests than --max-in-flight awaited responses",
                );
            }
        }
    }

    /// A request that never got its response.
    fn alone(&mut self, pending: Pending, why: &str) {
        let event = if pending.side.is_some() {
            "pair"
        } else {
            "response"
        };
        let mut line = self.pair_line(event, &pending.header, pending.time);
        if let Some(side) = &pending.side {
            side.put(&mut line, "request");
        }
        line.field("response", &Value::Null);
        line.field("unanswered", &json!(why));
        self.log.write(&line.finish());
    }

    /// The start of a `pair` line (or a half of one): which request, which API.
    fn pair_line(&self, event: &str, header: &RawRequestHeader, time: SystemTime) -> Line {
        let mut line = self.line(event, time);
        line.field("correlationId", &json!(header.correlation_id));
        line.field("api", &json!(header.api().map(ApiKey::name)));
        line.field("apiKey", &json!(header.api_key));
        line.field("apiVersion", &json!(header.api_version));
        line
    }

    /// A request's JSON, written as its bytes are read (no decoded message: the memory is
    /// the line's share, whatever the frame holds).
    fn render_request(&self, bytes: &Bytes, size: usize) -> Side {
        let api = RawRequestHeader::peek(bytes).and_then(|header| header.api());
        let options = self.config.options;
        match api {
            // An ApiVersions request at a version this build does not know is read the way
            // Kafka's broker reads it (header only, as version 0): decoded, it is small.
            Some(ApiKey::ApiVersions) => self.message(
                ApiKey::ApiVersions,
                redact::Direction::Request,
                |json, out| {
                    let request =
                        decode_request(bytes.clone(), &options).map_err(TranscodeError::Decode)?;
                    request
                        .write_json(json, out)
                        .map_err(TranscodeError::Json)?;
                    // Read at a version other than the one asked for, its length says nothing.
                    let canonical = (request.api_version == request.header.request_api_version)
                        .then(|| {
                            let header_version =
                                ApiKey::ApiVersions.request_header_version(request.api_version);
                            Some(
                                request.header.encoded_len(header_version).ok()?
                                    + request.body.encoded_len(request.api_version).ok()?,
                            )
                        })
                        .flatten();
                    Ok(self.decoded_trailing(bytes, canonical))
                },
                bytes,
                size,
            ),
            _ => self.message(
                api.unwrap_or(ApiKey::ApiVersions),
                redact::Direction::Request,
                |json, out| transcode_request(bytes, &options, json, out).map(|t| t.trailing_bytes),
                bytes,
                size,
            ),
        }
    }

    /// A response's JSON, as [`Logger::render_request`].
    fn render_response(&self, bytes: &Bytes, api: ApiKey, version: i16, size: usize) -> Side {
        let options = self.config.options;
        if api == ApiKey::ApiVersions {
            // Kafka's clients read a refusal of their ApiVersions version at version 0.
            return self.message(
                api,
                redact::Direction::Response,
                |json, out| {
                    let response = decode_response(bytes.clone(), api, version, &options)
                        .map_err(TranscodeError::Decode)?;
                    response
                        .write_json(json, out)
                        .map_err(TranscodeError::Json)?;
                    Ok(self.decoded_trailing(bytes, response.encoded_len().ok()))
                },
                bytes,
                size,
            );
        }
        self.message(
            api,
            redact::Direction::Response,
            |json, out| {
                transcode_response(bytes, api, version, &options, json, out)
                    .map(|t| t.trailing_bytes)
            },
            bytes,
            size,
        )
    }

    /// Bytes after a decoded message's body, which a lenient decode let through: the frame's
    /// length less the canonical encoding's (which a body read leniently always has).
    fn decoded_trailing(&self, frame: &Bytes, canonical: Option<usize>) -> usize {
        match (self.config.options.trailing_bytes, canonical) {
            (TrailingBytes::Allow, Some(canonical)) => frame.len().saturating_sub(canonical),
            _ => 0,
        }
    }

    /// A message as it is logged: the one place where a message's JSON is written out,
    /// capped at its share of the line, its `records` fields expanded with --records, its
    /// secrets replaced by markers (unless --log-secrets). `write` writes it and returns the
    /// trailing bytes it let through.
    fn message(
        &self,
        api: ApiKey,
        direction: redact::Direction,
        write: impl FnOnce(&JsonOptions<'_>, &mut dyn JsonSink) -> Result<usize, TranscodeError>,
        bytes: &Bytes,
        size: usize,
    ) -> Side {
        // A records field that does not decode stays base64: the tap logs, it never refuses.
        // Expanding one may take a decompressed batch: charged first, or not expanded.
        let mut records_errors = Vec::new();
        let limits = self.config.options.limits;
        let records_charge = if self.config.records {
            let charge = self
                .budget
                .try_reserve_optional(limits.max_decompressed_batch_size);
            if charge.is_none() {
                records_errors.push(
                    "records fields shown as base64: --memory-budget had no room for a \
                     decompressed batch"
                        .to_owned(),
                );
            }
            charge
        } else {
            None
        };
        let hook = records_charge
            .as_ref()
            .map(|_| ExpandRecords::new(limits, true));
        let options = JsonOptions {
            lenient: false,
            records: hook.as_ref().map(|hook| hook as _),
        };
        let cap = self.config.max_message_json;
        let mut text = Capped {
            buf: Vec::new(),
            cap,
        };
        let mut writer = JsonWriter::compact(&mut text);
        let mut trailing = 0;
        let written = if self.config.log_secrets {
            write(&options, &mut writer).map(|n| {
                trailing = n;
                Vec::new()
            })
        } else {
            redact::write_redacted(api, direction, Form::Frame, &mut writer, |out| {
                write(&options, out).map(|n| trailing = n)
            })
        };
        let over_cap = writer.finish().is_err();
        records_errors.extend(hook.map(|hook| hook.take_refused()).unwrap_or_default());
        drop(records_charge);
        match written {
            Err(TranscodeError::Decode(e)) => self.error(e.to_string(), bytes, size),
            Err(TranscodeError::Json(e)) => {
                self.error(format!("cannot show as JSON: {e}"), bytes, size)
            }
            Ok(redacted) => Side::Json {
                text: if over_cap {
                    serde_json::to_vec(&json!({
                        "omitted": format!(
                            "the JSON of this {size}-byte frame is longer than the {cap} bytes \
                             --max-line leaves a message"
                        ),
                    }))
                    .expect("a JSON value always serializes")
                } else {
                    text.buf
                },
                trailing: (trailing > 0).then(|| {
                    let tail = &bytes[bytes.len() - trailing..];
                    json!({"bytes": trailing, "hex": self.hex(tail)})
                }),
                records_errors: (!records_errors.is_empty()).then(|| json!(records_errors)),
                redacted,
            },
        }
    }

    /// Counts a logged side for the metrics: a frame not decoded, or secrets replaced.
    fn count(&self, direction: Direction, api: Option<ApiKey>, side: &Side) {
        match side {
            Side::Error(_) => self.metrics.undecoded(direction, Undecoded::Error),
            Side::Skipped { skipped, .. } => {
                let why = match skipped {
                    Skipped::TooLarge => Undecoded::TooLarge,
                    Skipped::MemoryBudget => Undecoded::MemoryBudget,
                    // Not logged at all with --no-log, where there is no logger.
                    Skipped::Backlog | Skipped::NotLogged => Undecoded::Backlog,
                };
                self.metrics.undecoded(direction, why);
            }
            Side::Json { redacted, .. } => {
                if let (Some(api), false) = (api, redacted.is_empty()) {
                    self.metrics.redacted(api, redacted.len());
                }
            }
        }
    }

    /// `api` if its messages in `direction` can carry credentials and they are not shown.
    fn secret_api(&self, api: Option<ApiKey>, direction: redact::Direction) -> Option<ApiKey> {
        api.filter(|&api| !self.config.log_secrets && redact::has_secrets(api, direction))
    }

    fn hex(&self, bytes: &[u8]) -> Value {
        if let Some(api) = self.hex_hidden {
            return json!(format!(
                "not shown: {api} frames can carry credentials ({})",
                redact::marker(bytes.len())
            ));
        }
        let shown = &bytes[..bytes.len().min(self.config.max_hex)];
        json!(kafka_codec_hexdump::encode(shown))
    }

    fn error(&self, error: String, bytes: &Bytes, size: usize) -> Side {
        Side::Error(json!({"error": error, "size": size, "hex": self.hex(bytes)}))
    }

    fn skipped_because(&self, skipped: Skipped, reason: String, head: &[u8], size: usize) -> Side {
        Side::Skipped {
            skipped,
            fields: json!({"reason": reason, "size": size, "hex": self.hex(head)}),
        }
    }

    fn skipped(&self, skipped: Skipped, head: &[u8], size: usize, direction: Direction) -> Side {
        let reason = match skipped {
            Skipped::TooLarge => {
                // The size prefix of a frame this large may be another protocol's first bytes.
                let prefix = u32::try_from(size).unwrap_or(u32::MAX).to_be_bytes();
                let protocol = crate::common::OtherProtocol::recognise(&prefix);
                let hint = match (protocol, direction) {
                    (Some(p), Direction::ToServer) if p.is_tls() => {
                        "; it is a TLS handshake: the client speaks TLS (give the tap \
                         --listen-tls-cert and --listen-tls-key)"
                            .to_owned()
                    }
                    (Some(p), Direction::ToClient) if p.is_tls() => {
                        "; it is TLS: the broker speaks TLS (give the tap --upstream-tls)"
                            .to_owned()
                    }
                    (Some(p), Direction::ToServer) => {
                        format!("; it is {}: the client is not a Kafka client", p.name())
                    }
                    (Some(p), Direction::ToClient) => {
                        format!("; it is {}: the upstream is not a Kafka broker", p.name())
                    }
                    (None, _) => String::new(),
                };
                format!(
                    "larger than --max-frame ({} bytes){hint}",
                    self.config.max_frame
                )
            }
            Skipped::Backlog => format!(
                "the logger was behind by --max-frame ({} bytes) on this connection",
                self.config.max_frame
            ),
            Skipped::MemoryBudget => format!(
                "--memory-budget ({} bytes) had no room to keep it for the log",
                self.budget.limit()
            ),
            Skipped::NotLogged => "not logged".to_owned(),
        };
        self.skipped_because(skipped, reason, head, size)
    }
}

fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::ToServer => "toServer",
        Direction::ToClient => "toClient",
    }
}

/// A writer that refuses to grow past `cap` bytes.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > self.cap {
            return Err(io::Error::other("over the cap"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
