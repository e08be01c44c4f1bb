//! The log: one JSON object per line, written by each connection's decoder.
//!
//! Lines, by `event`:
//! - `listen`: a listener opened (`listen`, `upstream`);
//! - `connect`: a client connected (`client`, `listener`, `upstream`), or could not be
//!   connected upstream (`error`);
//! - `pair`: a request and its response: `correlationId`, `api`, `apiKey`, `apiVersion`,
//!   `latencyMs`, `request` and `response` in Kafka's JSON form (the forms `kafka-codec
//!   encode request|response` read). A request that gets no response (Produce with
//!   `acks = 0`) is a pair with `"response": null` and `"expectsResponse": false`; one that
//!   never got its response says why in `unanswered`;
//! - `request` / `response`: one half of a pair logged alone: a request whose response did
//!   not arrive while the connection's budget for waiting requests was full, or a response
//!   that answers no request;
//! - `unframeable`: a negative size prefix; the rest of that direction is forwarded unread;
//! - `close`: both directions ended: per direction, bytes and CRC-32C as received and as
//!   forwarded, frames, dropped and partial-frame bytes, and how it ended.
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

use super::framing::{Content, Frame, Skipped};
use super::pump::Stats;
use super::rewrite::Note;
use super::Config;
use crate::common::ExpandRecords;
use kafka_codec::bytes::Bytes;
use kafka_codec::conn::IncomingRequest;
use kafka_codec::conn::{Direction, Observer, RawRequestHeader};
use kafka_codec::json::JsonOptions;
use kafka_codec::serde_json::{self, json, Value};
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeOptions, EncodeError, Message, RequestFrame,
    ResponseFrame, TrailingBytes,
};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

/// Where lines go.
pub struct Log {
    out: Mutex<Box<dyn Write + Send>>,
    failed: AtomicBool,
}

impl Log {
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Log {
            out: Mutex::new(out),
            failed: AtomicBool::new(false),
        }
    }

    /// Writes one line and flushes it, so that `tail -f` sees it at once. A log that cannot
    /// be written is reported once on stderr; forwarding goes on.
    pub fn write(&self, line: &str) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let result = out
            .write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = result {
            if !self.failed.swap(true, Ordering::Relaxed) {
                eprintln!("kafka-codec tap: cannot write the log ({e}); still forwarding");
            }
        }
    }
}

/// A JSON object written field by field, so that message JSON rendered (and capped)
/// separately is put in without being parsed again.
struct Line(String);

impl Line {
    fn new(event: &str, time: SystemTime, connection: Option<u64>) -> Self {
        let mut line = Line(String::from("{"));
        line.field("event", &json!(event));
        line.field("time", &json!(timestamp(time)));
        if let Some(connection) = connection {
            line.field("connection", &json!(connection));
        }
        line
    }

    fn field(&mut self, key: &str, value: &Value) {
        let text = serde_json::to_string(value).expect("a JSON value always serializes");
        self.raw(key, &text);
    }

    fn raw(&mut self, key: &str, json_text: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0
            .push_str(&serde_json::to_string(key).expect("a key serializes"));
        self.0.push(':');
        self.0.push_str(json_text);
    }

    fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

/// RFC 3339 in UTC, microseconds.
fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_micros(time).to_string()
}

/// A `listen` line.
pub fn listening(log: &Log, listen: SocketAddr, upstream: &str) {
    let mut line = Line::new("listen", SystemTime::now(), None);
    line.field("listen", &json!(listen.to_string()));
    line.field("upstream", &json!(upstream));
    log.write(&line.finish());
}

/// One side of a pair, ready to be logged.
enum Side {
    /// Kafka's JSON, as text, the fields of `requestTrailing` / `responseTrailing` if
    /// bytes after the body were ignored, and why records fields stayed base64 (with
    /// --records: `requestRecordsError` / `responseRecordsError`).
    Json(String, Option<Value>, Option<Value>),
    /// It did not decode: the fields of `requestError` / `responseError`.
    Error(Value),
    /// It was not decoded: the fields of `requestSkipped` / `responseSkipped`.
    Skipped(Value),
}

impl Side {
    fn len(&self) -> usize {
        match self {
            Side::Json(text, _, _) => text.len(),
            Side::Error(_) | Side::Skipped(_) => 256,
        }
    }

    /// Adds the side to `line` as `name` (`request`/`response`).
    fn put(&self, line: &mut Line, name: &str) {
        match self {
            Side::Json(text, trailing, records_errors) => {
                line.raw(name, text);
                if let Some(trailing) = trailing {
                    line.field(&format!("{name}Trailing"), trailing);
                }
                if let Some(errors) = records_errors {
                    line.field(&format!("{name}RecordsError"), errors);
                }
            }
            Side::Error(value) => {
                line.field(name, &Value::Null);
                line.field(&format!("{name}Error"), value);
            }
            Side::Skipped(value) => {
                line.field(name, &Value::Null);
                line.field(&format!("{name}Skipped"), value);
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
}

/// One connection's decoder: follows the conversation with an [`Observer`] and logs it.
pub struct Decoder {
    id: u64,
    config: Arc<Config>,
    log: Arc<Log>,
    observer: Observer,
    pending: HashMap<i32, VecDeque<Pending>>,
    /// Bytes of request JSON held in `pending`: bounded by the frame limit.
    pending_bytes: usize,
    client: String,
    upstream: String,
    started: Instant,
}

impl Decoder {
    pub fn new(id: u64, config: &Arc<Config>, log: Arc<Log>) -> Self {
        Decoder {
            id,
            config: Arc::clone(config),
            log,
            observer: Observer::new().with_options(config.options),
            pending: HashMap::new(),
            pending_bytes: 0,
            client: String::new(),
            upstream: String::new(),
            started: Instant::now(),
        }
    }

    fn line(&self, event: &str, time: SystemTime) -> Line {
        Line::new(event, time, Some(self.id))
    }

    /// The upstream could not be reached: the client's connection is closed.
    pub fn refused(
        &mut self,
        client: &str,
        listener: SocketAddr,
        upstream: &str,
        error: &io::Error,
    ) {
        let mut line = self.line("connect", SystemTime::now());
        line.field("client", &json!(client));
        line.field("listener", &json!(listener.to_string()));
        line.field("upstream", &json!(upstream));
        line.field("error", &json!(format!("cannot connect upstream: {error}")));
        self.log.write(&line.finish());
    }

    pub fn connected(
        &mut self,
        client: &str,
        listener: SocketAddr,
        upstream: &str,
        server: &TcpStream,
    ) {
        self.client = client.to_owned();
        self.upstream = upstream.to_owned();
        let mut line = self.line("connect", SystemTime::now());
        line.field("client", &json!(client));
        line.field("listener", &json!(listener.to_string()));
        line.field("upstream", &json!(upstream));
        if let Ok(address) = server.peer_addr() {
            line.field("upstreamAddress", &json!(address.to_string()));
        }
        self.log.write(&line.finish());
    }

    pub fn frame(
        &mut self,
        direction: Direction,
        seen: (Instant, SystemTime),
        frame: Frame,
        rewritten: Option<Note>,
    ) {
        match direction {
            Direction::ToServer => self.request(seen, frame),
            Direction::ToClient => self.response(seen, frame, rewritten),
        }
    }

    fn request(&mut self, (seen, time): (Instant, SystemTime), frame: Frame) {
        let (observed, side) = match frame.content {
            Content::Whole(bytes) => {
                let observed = self.observer.observe_request(bytes.clone());
                let side = match &observed.decoded {
                    Ok(request) => self.message(
                        |options| request.to_json_with(options),
                        &bytes,
                        frame.size,
                        || self.request_trailing(&bytes, request),
                    ),
                    Err(e) => self.error(e.to_string(), &bytes, frame.size),
                };
                (observed, side)
            }
            Content::Head { head, skipped } => {
                let side = self.skipped(skipped, &head, frame.size);
                (self.observer.observe_request(head), side)
            }
        };
        let Some(header) = observed.header else {
            // Shorter than a header: nothing can answer it.
            let mut line = self.line("request", time);
            side.put(&mut line, "request");
            self.log.write(&line.finish());
            return;
        };
        if !observed.expects_response {
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
        };
        let size = pending.side.as_ref().map_or(0, Side::len);
        if self.pending_bytes + size > self.config.max_frame {
            // Too much waits for responses already: log this request now, its response alone.
            let mut line = self.pair_line("request", &header, time);
            if let Some(side) = pending.side.take() {
                side.put(&mut line, "request");
            }
            line.field(
                "note",
                &json!("logged alone: too many requests await their responses"),
            );
            self.log.write(&line.finish());
        } else {
            self.pending_bytes += size;
        }
        self.pending
            .entry(header.correlation_id)
            .or_default()
            .push_back(pending);
    }

    fn response(
        &mut self,
        (seen, time): (Instant, SystemTime),
        frame: Frame,
        rewritten: Option<Note>,
    ) {
        let (observed, side) = match frame.content {
            Content::Whole(bytes) => {
                let observed = self.observer.observe_response(bytes.clone());
                let side = match &observed.decoded {
                    Some(Ok(response)) => self.message(
                        |options| response.to_json_with(options),
                        &bytes,
                        frame.size,
                        || self.response_trailing(&bytes, response),
                    ),
                    Some(Err(e)) => self.error(e.to_string(), &bytes, frame.size),
                    None => self.error(
                        match observed.correlation_id {
                            Some(id) => {
                                format!("no request with correlation id {id} awaits a response")
                            }
                            None => "a response shorter than its header".to_owned(),
                        },
                        &bytes,
                        frame.size,
                    ),
                };
                (observed, side)
            }
            Content::Head { head, skipped } => {
                let side = self.skipped(skipped, &head, frame.size);
                (self.observer.observe_response(head), side)
            }
        };
        for header in &observed.unanswered {
            if let Some(pending) = self.take_pending(header.correlation_id) {
                self.alone(pending, "the server answered a later request first");
            }
        }
        let pending = observed
            .request
            .and_then(|header| self.take_pending(header.correlation_id));
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
                line.field("correlationId", &json!(observed.correlation_id));
                line
            }
        };
        side.put(&mut line, "response");
        if let Some(note) = rewritten {
            line.field("rewritten", &note.json());
        }
        self.log.write(&line.finish());
    }

    pub fn unframeable(&mut self, direction: Direction, size: i32, at: SystemTime) {
        let mut line = self.line("unframeable", at);
        line.field("direction", &json!(direction_name(direction)));
        let error = format!(
            "negative frame size {size}: the rest of this direction is forwarded without \
             decoding"
        );
        line.field("error", &json!(error));
        self.log.write(&line.finish());
    }

    pub fn closed(&mut self, to_server: Stats, to_client: Stats) {
        let mut left: Vec<Pending> = self.pending.drain().flat_map(|(_, queue)| queue).collect();
        left.sort_by_key(|pending| pending.seen);
        for pending in left {
            self.alone(pending, "the connection closed first");
        }
        let mut line = self.line("close", SystemTime::now());
        line.field("client", &json!(self.client));
        line.field("upstream", &json!(self.upstream));
        line.field(
            "durationMs",
            &json!(self.started.elapsed().as_millis() as u64),
        );
        line.field("toServer", &to_server.json());
        line.field("toClient", &to_client.json());
        self.log.write(&line.finish());
    }

    fn take_pending(&mut self, correlation_id: i32) -> Option<Pending> {
        let queue = self.pending.get_mut(&correlation_id)?;
        let pending = queue.pop_front();
        if queue.is_empty() {
            self.pending.remove(&correlation_id);
        }
        if let Some(side) = pending.as_ref().and_then(|p| p.side.as_ref()) {
            self.pending_bytes -= side.len();
        }
        pending
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

    /// A decoded message as it is logged: the one place where a message's JSON is written
    /// out, its `records` fields expanded with --records.
    fn message(
        &self,
        json: impl FnOnce(&JsonOptions<'_>) -> Result<Value, EncodeError>,
        bytes: &Bytes,
        size: usize,
        trailing: impl FnOnce() -> Option<Value>,
    ) -> Side {
        // A records field that does not decode stays base64: the tap logs, it never refuses.
        let hook = self
            .config
            .records
            .then(|| ExpandRecords::new(self.config.options.limits, true));
        let options = JsonOptions {
            lenient: false,
            records: hook.as_ref().map(|hook| hook as _),
        };
        let json = json(&options);
        let records_errors = hook.map(|hook| hook.take_refused()).unwrap_or_default();
        match json {
            Ok(json) => Side::Json(
                self.capped(&json, size),
                trailing(),
                (!records_errors.is_empty()).then(|| json!(records_errors)),
            ),
            Err(e) => self.error(format!("cannot show as JSON: {e}"), bytes, size),
        }
    }

    /// Kafka's JSON of one message, or a stand-in if it is longer than half a line may be.
    fn capped(&self, json: &Value, size: usize) -> String {
        let cap = self.config.max_message_json;
        let mut out = Capped {
            buf: Vec::new(),
            cap,
        };
        match serde_json::to_writer(&mut out, json) {
            Ok(()) => String::from_utf8(out.buf).expect("serde_json writes UTF-8"),
            Err(_) => json!({
                "omitted": format!(
                    "the JSON of this {size}-byte frame is longer than the {cap} bytes \
                     --max-line leaves a message"
                ),
            })
            .to_string(),
        }
    }

    /// Bytes after the request's body, which the lenient decode ignored (as Kafka's broker
    /// does): `{"bytes": n, "hex": …}`. A frame whose canonical encoding has its length
    /// cannot have any, so only the others are decoded again, strictly, to find out.
    fn request_trailing(&self, frame: &Bytes, request: &IncomingRequest) -> Option<Value> {
        if self.config.options.trailing_bytes == TrailingBytes::Reject
            || request.api_version != request.header.request_api_version
        {
            return None;
        }
        let api = request.api_key();
        let header_version = api.request_header_version(request.api_version);
        let canonical = request.header.encoded_len(header_version).ok()?
            + request.body.encoded_len(request.api_version).ok()?;
        if canonical == frame.len() {
            return None;
        }
        let strict = self.strict_options();
        match RequestFrame::decode_with(frame.clone(), &strict) {
            Err(e) => self.trailing(frame, &e),
            Ok(_) => None,
        }
    }

    /// As [`Decoder::request_trailing`], for a response.
    fn response_trailing(&self, frame: &Bytes, response: &ResponseFrame) -> Option<Value> {
        if self.config.options.trailing_bytes == TrailingBytes::Reject
            || response.encoded_len().ok()? == frame.len()
        {
            return None;
        }
        let strict = self.strict_options();
        match ResponseFrame::decode_with(
            frame.clone(),
            response.api_key(),
            response.api_version,
            &strict,
        ) {
            Err(e) => self.trailing(frame, &e),
            Ok(_) => None,
        }
    }

    fn strict_options(&self) -> DecodeOptions {
        DecodeOptions {
            trailing_bytes: TrailingBytes::Reject,
            ..self.config.options
        }
    }

    fn trailing(&self, frame: &[u8], error: &DecodeError) -> Option<Value> {
        let DecodeErrorKind::TrailingBytes(count) = error.kind() else {
            return None;
        };
        let tail = &frame[frame.len().saturating_sub(*count)..];
        Some(json!({"bytes": count, "hex": self.hex(tail)}))
    }

    fn hex(&self, bytes: &[u8]) -> Value {
        let shown = &bytes[..bytes.len().min(self.config.max_hex)];
        json!(kafka_codec_hexdump::encode(shown))
    }

    fn error(&self, error: String, bytes: &Bytes, size: usize) -> Side {
        Side::Error(json!({"error": error, "size": size, "hex": self.hex(bytes)}))
    }

    fn skipped(&self, skipped: Skipped, head: &[u8], size: usize) -> Side {
        let reason = match skipped {
            Skipped::TooLarge => {
                format!("larger than --max-frame ({} bytes)", self.config.max_frame)
            }
            Skipped::Backlog => format!(
                "the decoder was behind by --max-frame ({} bytes) on this connection",
                self.config.max_frame
            ),
        };
        Side::Skipped(json!({"reason": reason, "size": size, "hex": self.hex(head)}))
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
