//! Live tests against a real Kafka broker: our requests must be accepted and the broker's
//! responses must decode strictly (no trailing bytes) with our codec.
//!
//! They need a running broker, so they are `#[ignore]`d: a plain `cargo test` needs no server
//! and counts them as ignored, not passed. Run them with `--ignored`; then a missing
//! `KAFKA_BROKER` fails the test instead of skipping it:
//!
//! ```sh
//! tools/kafka-broker/broker.sh start          # prints KAFKA_BROKER=... KAFKA_CONTROLLER=...
//! KAFKA_BROKER=127.0.0.1:19092 KAFKA_CONTROLLER=127.0.0.1:19093 \
//!     cargo test --test live live_broker:: -- --ignored --nocapture
//! tools/kafka-broker/broker.sh stop
//! ```
//!
//! or `tools/ci-live.sh`, which does all three. `KAFKA_NODE_ID` and `KAFKA_CLUSTER_ID`, when
//! set (broker.sh writes them), are checked against what the broker reports.
//!
//! Only std's `TcpStream` and this crate's sans-IO connection (`kafka_codec::conn`): no Kafka
//! client library. Every exchange goes through `ClientConnection` (correlation ids, responses
//! in order, each decoded at its request's version), ranges are negotiated with
//! `SupportedVersions`, and retries follow `ErrorCode::is_retriable`.

use bytes::{Bytes, BytesMut};
use kafka_codec::conn::{ApiVersionsReply, ClientConnection, ConnError, SupportedVersions};
use kafka_codec::messages::api_versions_request::ApiVersionsRequest;
use kafka_codec::messages::api_versions_response::ApiVersionsResponse;
use kafka_codec::messages::ResponseHeader;
use kafka_codec::records::{
    decode_batches, BatchReader, Compression, Header, RecordBatch, RecordBatchBuilder,
};
use kafka_codec::split_frame;
use kafka_codec::visit_messages;
use kafka_codec::ErrorCode;
use kafka_codec::MessageCodec;
use kafka_codec::{
    ApiKey, EncodeError, Listener, Message, MessageKind, MessageVisitor, Request, Response,
    ResponseFrame, VersionRange,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Where the broker is

fn env_addr(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The broker listener. Live tests are `#[ignore]`d, so one that runs was asked for by name
/// or with `--ignored`: a missing address is a failure, not a skip.
fn broker() -> String {
    env_addr("KAFKA_BROKER").expect(
        "KAFKA_BROKER is not set (run tools/ci-live.sh, or start \
         tools/kafka-broker/broker.sh and set it)",
    )
}

/// The controller listener (required, like [`broker`]).
fn controller() -> String {
    env_addr("KAFKA_CONTROLLER").expect("KAFKA_CONTROLLER is not set")
}

fn env_i32(name: &str) -> Option<i32> {
    env_addr(name).map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number"))
    })
}

fn port_of(addr: &str) -> i32 {
    addr.rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("{addr} is not host:port"))
}

fn host_of(addr: &str) -> &str {
    addr.rsplit_once(':').map(|(h, _)| h).unwrap_or(addr)
}

// ---------------------------------------------------------------------------------------------
// One connection, raw frames

const CLIENT_ID: &str = "kafka-codec-live";
const IO_TIMEOUT: Duration = Duration::from_secs(10);
static NEXT_CORRELATION_ID: AtomicI32 = AtomicI32::new(1000);

/// What came back for one request.
enum Reply {
    /// A whole response frame, without its size prefix.
    Frame(Bytes),
    /// The broker closed the connection instead of answering.
    Closed,
    /// No answer within [`IO_TIMEOUT`].
    TimedOut,
}

/// A TCP connection driven by the crate's `ClientConnection`.
struct Conn {
    addr: String,
    stream: TcpStream,
    buf: BytesMut,
    client: ClientConnection,
}

impl Conn {
    fn open(addr: &str) -> Conn {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_nodelay(true).unwrap();
        Conn {
            addr: addr.to_string(),
            stream,
            buf: BytesMut::new(),
            // Distinct across connections, so an answer to another request would show.
            client: ClientConnection::new()
                .with_client_id(CLIENT_ID)
                .with_first_correlation_id(NEXT_CORRELATION_ID.fetch_add(1000, Ordering::Relaxed)),
        }
    }

    /// Writes what the connection put in `out`; false if the broker has closed.
    fn write(&mut self, out: &[u8], what: &str) -> bool {
        match self.stream.write_all(out) {
            Ok(()) => true,
            Err(e) if is_closed(&e) => false,
            Err(e) => panic!("{}: writing {what}: {e}", self.addr),
        }
    }

    /// Sends a request whose body is already encoded and waits for what comes back. The
    /// connection writes the header, at the version the API and version call for.
    fn send_raw(&mut self, api: ApiKey, version: i16, body: &[u8]) -> Reply {
        let mut out = BytesMut::new();
        self.client
            .send_encoded(api, version, body, true, &mut out)
            .unwrap_or_else(|e| panic!("{api} v{version}: {e}"));
        if !self.write(&out, &format!("{api} v{version}")) {
            return Reply::Closed;
        }
        self.read_frame(&format!("{api} v{version}"))
    }

    fn read_frame(&mut self, what: &str) -> Reply {
        let limits = self.client.options().limits;
        loop {
            if let Some(frame) = split_frame(&mut self.buf, &limits).expect("response size") {
                return Reply::Frame(frame);
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    assert!(
                        self.buf.is_empty(),
                        "{}: {what}: connection closed inside a frame ({} bytes read)",
                        self.addr,
                        self.buf.len()
                    );
                    return Reply::Closed;
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if is_closed(&e) => return Reply::Closed,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Reply::TimedOut
                }
                Err(e) => panic!("{}: reading {what}: {e}", self.addr),
            }
        }
    }

    /// Sends `body` and decodes the answer strictly; `Err` says what went wrong, with bytes.
    fn call<M: MessageCodec>(
        &mut self,
        api: ApiKey,
        version: i16,
        body: &M,
    ) -> Result<Response, String> {
        let bytes = body
            .encode_to_bytes(version)
            .map_err(|e| format!("encoding the request: {e}"))?;
        self.call_raw(api, version, &bytes)
    }

    fn call_raw(&mut self, api: ApiKey, version: i16, body: &[u8]) -> Result<Response, String> {
        match self.send_raw(api, version, body) {
            Reply::Closed => Err("the broker closed the connection".into()),
            Reply::TimedOut => Err(format!("no answer within {IO_TIMEOUT:?}")),
            Reply::Frame(frame) => self.decode(frame).map(|response| response.body),
        }
    }

    /// Decodes a response frame as the answer to the oldest request in flight (the
    /// connection checks its correlation id), strictly, and checks that re-encoding it gives
    /// the broker's bytes back.
    fn decode(&mut self, frame: Bytes) -> Result<ResponseFrame, String> {
        let decoded = self
            .client
            .decode_response(frame.clone())
            .map_err(|e| match &e {
                ConnError::BadResponse { request, error, .. } => format!(
                    "decode failed: {e}\n  frame ({} bytes, header v{}): {}",
                    frame.len(),
                    request.api.response_header_version(request.version),
                    hex_around(&frame, error.offset())
                ),
                _ => format!("{e}\n  frame: {}", hex_around(&frame, 0)),
            })?;
        // Writing what we read must give Kafka's bytes back: same field order, same defaults
        // left out of the tagged sections, unknown tagged fields kept.
        let again = decoded
            .encode_to_bytes()
            .map_err(|e| format!("re-encoding the decoded response: {e}"))?;
        if again != frame {
            let at = again
                .iter()
                .zip(frame.iter())
                .position(|(a, b)| a != b)
                .unwrap_or(again.len().min(frame.len()));
            return Err(format!(
                "decoded, but re-encoding differs from the broker's bytes at offset {at} \
                 ({} vs {} bytes)\n  broker: {}\n  ours:   {}",
                frame.len(),
                again.len(),
                hex_around(&frame, at),
                hex_around(&again, at)
            ));
        }
        Ok(decoded)
    }
}

fn is_closed(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

/// Hex of a frame, all of it if short, else a window around `offset`.
fn hex_around(bytes: &[u8], offset: usize) -> String {
    let (start, end) = if bytes.len() <= 256 {
        (0, bytes.len())
    } else {
        let start = offset.saturating_sub(64);
        (start, (offset + 64).min(bytes.len()))
    };
    let mut s = String::new();
    if start > 0 {
        let _ = write!(s, "[{start}..] ");
    }
    for (i, b) in bytes[start..end].iter().enumerate() {
        if start + i == offset {
            s.push('>');
        }
        let _ = write!(s, "{b:02x}");
        if i + 1 < end - start {
            s.push(' ');
        }
    }
    if end < bytes.len() {
        let _ = write!(s, " [..{}]", bytes.len());
    }
    s
}

/// Takes the typed body out of a [`Response`].
macro_rules! body {
    ($response:expr, $variant:ident) => {
        match $response {
            Response::$variant(body) => body,
            other => panic!(
                "expected a {} response, got {:?}",
                stringify!($variant),
                other.api_key()
            ),
        }
    };
}

// ---------------------------------------------------------------------------------------------
// ApiVersions

fn api_versions_request() -> ApiVersionsRequest {
    // v3+ must name the client software (non-empty, Kafka checks the characters), or the
    // answer is INVALID_REQUEST.
    ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec-live".into())
        .with_client_software_version(kafka_codec::KAFKA_VERSION.into())
}

/// What a listener advertises, asked the way a client asks: ApiVersions at the newest
/// version we speak, falling back as the broker says if it cannot read it.
fn advertised(addr: &str) -> SupportedVersions {
    let mut conn = Conn::open(addr);
    let mut version = ApiVersionsReply::first_version();
    loop {
        let response = conn
            .call(ApiKey::ApiVersions, version, &api_versions_request())
            .unwrap_or_else(|e| panic!("{addr}: ApiVersions v{version}: {e}"));
        match ApiVersionsReply::read(&body!(response, ApiVersions), version) {
            Ok(ApiVersionsReply::Supported(table)) => return table,
            Ok(ApiVersionsReply::RetryWith(lower)) => version = lower,
            Err(e) => panic!("{addr}: ApiVersions v{version}: {e}"),
        }
    }
}

/// The versions the pinned Kafka release (the broker these tests run against) defines:
/// `None` for an API it removed. Ours also hold the versions Kafka 4.0 removed
/// (`ApiKey::removed_versions`), which a 4.x broker neither advertises nor reads.
fn pinned(api: ApiKey) -> Option<VersionRange> {
    let release = api.releases().last().expect("the pinned release");
    assert_eq!(release.release, kafka_codec::KAFKA_VERSION);
    release.versions
}

/// Versions our schemas have beyond the pinned release's that a real 4.4.0 listener does not
/// advertise, and why. Its own unstable latest versions are handled separately.
const OURS_ONLY: &[(ApiKey, i16, &str)] = &[(
    ApiKey::DescribeQuorum,
    3,
    "the committed-voters proposal (our overlay, unstable), unknown to Kafka 4.4.0",
)];

/// Ranges a real 4.4.0 listener advertises that differ from its own schema (and so from ours)
/// on purpose: (API, listener, advertised min, advertised max, why).
const KAFKA_ADVERTISES: &[(ApiKey, Listener, i16, i16, &str)] = &[(
    ApiKey::Produce,
    Listener::Broker,
    0,
    13,
    "Kafka 4 removed Produce v0-v2 from its schema but still advertises min 0, because old \
     librdkafka releases refuse to produce compressed batches otherwise (KAFKA-18659); a \
     v0-v2 request itself is still refused (see produce_v0_to_v2_advertised_but_refused)",
)];

/// APIs our schemas list for a listener that a default 4.4.0 node does not advertise, and why.
const NOT_ADVERTISED: &[(ApiKey, &str)] = &[
    (
        ApiKey::GetTelemetrySubscriptions,
        "advertised only when a metrics reporter that accepts client telemetry is configured",
    ),
    (
        ApiKey::PushTelemetry,
        "advertised only when a metrics reporter that accepts client telemetry is configured",
    ),
];

/// The range a listener of `kind` should advertise for `api`, by our schemas: the pinned
/// release's versions less its unstable latest version; `None` if the API is not meant for
/// that listener or the pinned release removed it.
fn expected_range(api: ApiKey, kind: Listener) -> Option<(VersionRange, Vec<String>)> {
    if !api.listeners().contains(&kind) {
        return None;
    }
    let ours = pinned(api)?;
    let mut notes = Vec::new();
    if let Some(removed) = api.removed_versions() {
        notes.push(format!("v{removed}: removed in Kafka 4, still ours"));
    }
    let mut max = api.valid_versions().max;
    let ours_only = |version: i16| {
        OURS_ONLY
            .iter()
            .find(|(a, v, _)| *a == api && *v == version)
            .map(|(_, _, why)| *why)
    };
    while let Some(why) = ours_only(max) {
        notes.push(format!("v{max}: {why}"));
        max -= 1;
    }
    assert_eq!(
        max, ours.max,
        "{api}: versions beyond Kafka's that OURS_ONLY does not name"
    );
    if api.releases().last().is_some_and(|r| r.latest_unstable) {
        notes.push(format!("v{max}: unstable in the schema"));
        max -= 1;
    }
    Some((VersionRange::new(ours.min, max), notes))
}

/// Compares what a listener advertises with our API table; returns the report and the
/// differences that are not explained.
fn compare_advertised(
    addr: &str,
    kind: Listener,
    advertised: &SupportedVersions,
) -> (String, Vec<String>) {
    let mut report = String::new();
    let mut problems = Vec::new();
    let _ = writeln!(
        report,
        "{addr} ({kind:?} listener) advertises {} APIs:",
        advertised.len()
    );
    for (key, VersionRange { min, max }) in advertised.iter() {
        let Some(api) = ApiKey::from_key(key) else {
            let _ = writeln!(report, "  key {key:>3} {min}-{max}: UNKNOWN to us");
            problems.push(format!(
                "{addr} advertises API key {key} ({min}-{max}) that we do not know"
            ));
            continue;
        };
        let ours = api.valid_versions();
        let verdict = match expected_range(api, kind) {
            None => {
                problems.push(format!(
                    "{addr} advertises {api} {min}-{max}, which our schema does not list for {kind:?}"
                ));
                "NOT for this listener in our schema".to_string()
            }
            Some(_)
                if KAFKA_ADVERTISES
                    .iter()
                    .any(|&(a, l, lo, hi, _)| a == api && l == kind && lo == min && hi == max) =>
            {
                let why = KAFKA_ADVERTISES.iter().find(|(a, ..)| *a == api).unwrap().4;
                format!("known: {why}")
            }
            Some((want, notes)) if want.min == min && want.max == max => {
                if notes.is_empty() {
                    "same".to_string()
                } else {
                    format!("as expected ({})", notes.join("; "))
                }
            }
            Some((want, notes)) => {
                let mut why = format!("DIFFERS: expected {want}");
                if !notes.is_empty() {
                    let _ = write!(why, " ({})", notes.join("; "));
                }
                if ours.min > min || ours.max < max {
                    let _ = write!(why, "; the broker has versions outside ours");
                }
                problems.push(format!(
                    "{addr}: {api} broker {min}-{max}, ours {ours}, {why}"
                ));
                why
            }
        };
        let _ = writeln!(
            report,
            "  {:<38} advertised {min:>2}-{max:<2} ours {ours:<6} {verdict}",
            api.name()
        );
    }
    for &api in ApiKey::ALL {
        if expected_range(api, kind).is_some() && advertised.get(api.key()).is_none() {
            let known = NOT_ADVERTISED.iter().find(|(a, _)| *a == api);
            let _ = writeln!(
                report,
                "  {:<38} not advertised (ours {}): {}",
                api.name(),
                api.valid_versions(),
                known.map_or("NOT EXPLAINED", |(_, why)| why)
            );
            if known.is_none() {
                problems.push(format!(
                    "{addr} does not advertise {api}, which our schema lists for {kind:?}"
                ));
            }
        }
    }
    (report, problems)
}

/// ApiVersions at every version we have and one beyond. Versions the broker reads answer at
/// that version; a version it cannot read answers at version 0 with UNSUPPORTED_VERSION and
/// the broker's ApiVersions range, which `ClientConnection` reads at version 0 by itself and
/// `ApiVersionsReply` turns into the version to retry with. Our `ServerConnection` writes the
/// same bytes for such a request.
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn api_versions_every_version() {
    let addr = broker();
    let advertised = advertised(&addr);
    let broker_range = advertised
        .get(ApiKey::ApiVersions.key())
        .expect("ApiVersions in its own list");
    let ours = ApiKey::ApiVersions.valid_versions();
    let mut report = format!("ApiVersions: broker {broker_range}, ours {ours}\n");
    let beyond = ours.max.max(broker_range.max) + 1;
    for version in 0..=beyond {
        let mut conn = Conn::open(&addr);
        // Beyond our versions, the newest body we can write (the broker does not read it).
        let body = api_versions_request()
            .encode_to_bytes(version.min(ours.max))
            .unwrap();
        let Reply::Frame(frame) = conn.send_raw(ApiKey::ApiVersions, version, &body) else {
            panic!("ApiVersions v{version}: the broker closed the connection");
        };
        let decoded = conn
            .decode(frame.clone())
            .unwrap_or_else(|e| panic!("ApiVersions v{version}: {e}"));
        let response = body!(decoded.body.clone(), ApiVersions);
        if broker_range.contains(version) {
            assert_eq!(decoded.api_version, version);
            assert_eq!(response.error_code, 0, "ApiVersions v{version} error code");
            assert_eq!(
                SupportedVersions::from_response(&response).unwrap(),
                advertised,
                "ApiVersions v{version} lists other APIs than v{}",
                ApiVersionsReply::first_version()
            );
            // The header is v0 even when the body is flexible: the body's error code follows
            // the correlation id directly. Read with a v1 header (one tagged-field byte), the
            // same bytes must not give the same response.
            if ApiVersionsResponse::is_flexible(version) {
                let mut rest = frame.clone();
                let as_v1 = ResponseHeader::decode(&mut rest, 1)
                    .ok()
                    .and_then(|_| ApiVersionsResponse::decode_exact(rest, version).ok());
                assert_ne!(
                    as_v1.as_ref(),
                    Some(&response),
                    "ApiVersions v{version} also reads as header v1"
                );
            }
            let _ = writeln!(
                report,
                "  v{version}: ok, header v0, {} APIs, {} supported / {} finalized features, {} bytes",
                response.api_keys.len(),
                response.supported_features.len(),
                response.finalized_features.len(),
                frame.len()
            );
        } else {
            assert_eq!(decoded.api_version, 0, "v{version}: the fallback reads v0");
            assert_eq!(
                ErrorCode::from(response.error_code),
                ErrorCode::UNSUPPORTED_VERSION,
                "ApiVersions v{version}"
            );
            let retry = ApiVersionsReply::read(&response, version)
                .unwrap_or_else(|e| panic!("ApiVersions v{version}: {e}"));
            assert_eq!(
                retry,
                ApiVersionsReply::RetryWith(broker_range.max.min(ours.max)),
                "v{version}"
            );
            // What our server side writes for the same request, byte for byte.
            let ours_bytes = unsupported_api_versions_answer(
                version,
                &body,
                decoded.header.correlation_id,
                broker_range,
            );
            assert_eq!(
                hex_around(&ours_bytes, 0),
                hex_around(&frame, 0),
                "v{version}: our ServerConnection's answer differs from the broker's"
            );
            let _ = writeln!(
                report,
                "  v{version}: not supported by the broker: v0 answer, {}, keys {:?}, retry {retry:?}; \
                 our server's answer is byte-identical",
                ErrorCode::from(response.error_code),
                response
                    .api_keys
                    .iter()
                    .map(|k| (k.api_key, k.min_version, k.max_version))
                    .collect::<Vec<_>>()
            );
        }
    }
    eprintln!("{report}");
}

/// The frame `ServerConnection` writes (without size prefix) for an ApiVersions request at
/// `version` that it cannot read, advertising `range`.
fn unsupported_api_versions_answer(
    version: i16,
    body: &[u8],
    correlation_id: i32,
    range: VersionRange,
) -> Bytes {
    use kafka_codec::conn::ServerConnection;
    let mut wire = BytesMut::new();
    ClientConnection::new()
        .with_client_id(CLIENT_ID)
        .with_first_correlation_id(correlation_id)
        .send_encoded(ApiKey::ApiVersions, version, body, true, &mut wire)
        .unwrap();
    let mut server = ServerConnection::new();
    let request = server.receive(&mut wire).unwrap().expect("a whole frame");
    assert!(request.is_unsupported_api_versions());
    let mut out = BytesMut::new();
    server
        .send(&request.unsupported_api_versions_response(range), &mut out)
        .unwrap();
    Bytes::from(out).slice(4..)
}

/// The fallback dance against the broker, start to finish: a newer client's ApiVersions is
/// refused, the client retries at the version the answer names, and the table it then gets
/// is the broker's.
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn api_versions_fallback_dance() {
    let addr = broker();
    let advertised = advertised(&addr);
    let mut conn = Conn::open(&addr);
    let mut version = ApiKey::ApiVersions.valid_versions().max + 2;
    let newest_body = api_versions_request()
        .encode_to_bytes(ApiKey::ApiVersions.valid_versions().max)
        .unwrap();
    let mut steps = Vec::new();
    let table = loop {
        let body = if ApiKey::ApiVersions.valid_versions().contains(version) {
            api_versions_request().encode_to_bytes(version).unwrap()
        } else {
            newest_body.clone()
        };
        let response = conn
            .call_raw(ApiKey::ApiVersions, version, &body)
            .unwrap_or_else(|e| panic!("ApiVersions v{version}: {e}"));
        let reply = ApiVersionsReply::read(&body!(response, ApiVersions), version)
            .unwrap_or_else(|e| panic!("ApiVersions v{version}: {e}"));
        steps.push(format!("v{version} -> {reply:?}"));
        match reply {
            ApiVersionsReply::RetryWith(lower) => version = lower,
            ApiVersionsReply::Supported(table) => break table,
        }
        assert!(steps.len() < 4, "no end to the fallback: {steps:?}");
    };
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(table, advertised);
    eprintln!(
        "ApiVersions fallback on one connection: {}",
        steps
            .iter()
            .map(|s| s.split(" -> Supported").next().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(", then ")
    );
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn advertised_ranges_match_ours() {
    let broker_addr = broker();
    let mut all_problems = Vec::new();
    let mut listeners = vec![(broker_addr, Listener::Broker)];
    if let Some(controller_addr) = env_addr("KAFKA_CONTROLLER") {
        listeners.push((controller_addr, Listener::Controller));
    }
    for (addr, kind) in listeners {
        let (report, problems) = compare_advertised(&addr, kind, &advertised(&addr));
        eprintln!("{report}");
        all_problems.extend(problems);
    }
    assert!(
        all_problems.is_empty(),
        "advertised versions differ from ours:\n  {}",
        all_problems.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Conversations: pipelining on one connection, error codes as the broker sends them

/// Many requests in flight on one connection, among them Produce with acks=0 (which the
/// broker never answers): `ClientConnection` matches every answer to its request, in order.
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn pipelined_requests_on_one_connection() {
    use kafka_codec::messages::describe_cluster_request::DescribeClusterRequest;
    use kafka_codec::messages::list_groups_request::ListGroupsRequest;
    use kafka_codec::messages::metadata_request::MetadataRequest;
    use kafka_codec::messages::produce_request::ProduceRequest;
    let addr = broker();
    let peer = advertised(&addr);
    let version = |api: ApiKey| peer.negotiate(api).unwrap_or_else(|e| panic!("{e}"));
    let requests: Vec<Request> = vec![
        MetadataRequest::default().with_topics(Some(vec![])).into(),
        api_versions_request().into(),
        // acks=0 and no topics: accepted, never answered.
        ProduceRequest::default()
            .with_acks(0)
            .with_timeout_ms(1000)
            .into(),
        DescribeClusterRequest::default().into(),
        ListGroupsRequest::default().into(),
    ];
    let mut conn = Conn::open(&addr);
    let mut out = BytesMut::new();
    let mut expected = Vec::new();
    for round in 0..20 {
        for request in &requests {
            let api = request.api_key();
            let sent = conn
                .client
                .send(version(api), request, &mut out)
                .unwrap_or_else(|e| panic!("round {round}: {api}: {e}"));
            assert_eq!(sent.expects_response, api != ApiKey::Produce);
            if sent.expects_response {
                expected.push((sent.correlation_id, api));
            }
        }
    }
    assert_eq!(conn.client.in_flight().len(), expected.len());
    // All at once, then read everything back.
    assert!(conn.write(&out, "the pipelined requests"), "closed");
    for (i, &(correlation_id, api)) in expected.iter().enumerate() {
        let Reply::Frame(frame) = conn.read_frame("a pipelined response") else {
            panic!("answer {i} of {}: no frame", expected.len());
        };
        let response = conn
            .decode(frame)
            .unwrap_or_else(|e| panic!("answer {i}: {e}"));
        assert_eq!(response.header.correlation_id, correlation_id);
        assert_eq!(response.api_key(), api);
        assert_eq!(
            response.body.error_code().filter(|c| c.is_error()),
            None,
            "{api}"
        );
    }
    assert_eq!(conn.client.in_flight().len(), 0);
    eprintln!(
        "pipelined {} requests on one connection ({} acks=0 Produce unanswered), {} answers in order",
        20 * requests.len(),
        20,
        expected.len()
    );
}

/// Errors provoked on purpose: the code the broker sends is the one our table names (and
/// says is retriable or not) for that situation.
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn error_codes_from_the_broker_match_the_table() {
    use kafka_codec::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
    use kafka_codec::messages::describe_cluster_request::DescribeClusterRequest;
    use kafka_codec::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
    let addr = broker();
    let peer = advertised(&addr);
    let version = |api: ApiKey| peer.negotiate(api).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = Vec::new();

    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let existing = format!("kafka-codec-errors-{nanos}");
    let create = |name: &str, replication_factor: i16| {
        let response = Conn::open(&addr)
            .call(
                ApiKey::CreateTopics,
                version(ApiKey::CreateTopics),
                &CreateTopicsRequest::default()
                    .with_topics(vec![CreatableTopic::default()
                        .with_name(name.into())
                        .with_num_partitions(1)
                        .with_replication_factor(replication_factor)])
                    .with_timeout_ms(10_000),
            )
            .unwrap_or_else(|e| panic!("CreateTopics {name}: {e}"));
        let topic = body!(response, CreateTopics).topics.remove(0);
        (ErrorCode::from(topic.error_code), topic.error_message)
    };
    let (first, _) = create(&existing, 1);
    assert_eq!(first, ErrorCode::NONE, "creating {existing}");
    for (what, (code, message), want) in [
        (
            "CreateTopics, a name with a space",
            create("no spaces allowed", 1),
            ErrorCode::INVALID_TOPIC_EXCEPTION,
        ),
        (
            "CreateTopics, replication factor 3 on one node",
            create(&format!("{existing}-rf3"), 3),
            ErrorCode::INVALID_REPLICATION_FACTOR,
        ),
        (
            "CreateTopics, the same topic again",
            create(&existing, 1),
            ErrorCode::TOPIC_ALREADY_EXISTS,
        ),
    ] {
        assert_eq!(code, want, "{what}: {message:?}");
        seen.push((what, code, message.map(|m| m.to_string())));
    }

    let response = Conn::open(&addr)
        .call(
            ApiKey::Metadata,
            version(ApiKey::Metadata),
            &MetadataRequest::default()
                .with_topics(Some(vec![MetadataRequestTopic::default()
                    .with_name(Some(format!("{existing}-absent").as_str().into()))]))
                .with_allow_auto_topic_creation(false),
        )
        .unwrap_or_else(|e| panic!("Metadata: {e}"));
    let code = ErrorCode::from(body!(response, Metadata).topics[0].error_code);
    assert_eq!(code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    assert!(code.is_retriable(), "a topic may yet be created");
    seen.push(("Metadata, a topic that does not exist", code, None));

    // A controller listener describes controllers; asking it for brokers is refused.
    if let Some(controller_addr) = env_addr("KAFKA_CONTROLLER") {
        let controller = advertised(&controller_addr);
        let response = Conn::open(&controller_addr)
            .call(
                ApiKey::DescribeCluster,
                controller
                    .negotiate(ApiKey::DescribeCluster)
                    .unwrap_or_else(|e| panic!("{e}")),
                &DescribeClusterRequest::default().with_endpoint_type(1),
            )
            .unwrap_or_else(|e| panic!("DescribeCluster: {e}"));
        let code = response.error_code().expect("a top-level error code");
        assert_eq!(code, ErrorCode::MISMATCHED_ENDPOINT_TYPE);
        seen.push((
            "DescribeCluster for brokers, asked of the controller",
            code,
            body!(response, DescribeCluster)
                .error_message
                .map(|m| m.to_string()),
        ));
    }

    let mut report = String::from("error codes the broker sent, as our table reads them:\n");
    for (what, code, message) in &seen {
        let _ = writeln!(
            report,
            "  {what}: {code}{}{}",
            if code.is_retriable() {
                ", retriable"
            } else {
                ""
            },
            message
                .as_deref()
                .map(|m| format!(" ({m:?})"))
                .unwrap_or_default()
        );
    }
    eprintln!("{report}");
}

// ---------------------------------------------------------------------------------------------
// Default requests for every advertised API

type EncodeDefault = fn(i16) -> Result<Bytes, EncodeError>;

fn encode_default<M: MessageCodec>(version: i16) -> Result<Bytes, EncodeError> {
    M::default().encode_to_bytes(version)
}

/// API key → "encode the default request body at this version", for every request schema.
struct DefaultRequests(BTreeMap<i16, EncodeDefault>);

impl MessageVisitor for DefaultRequests {
    fn visit<M: MessageCodec>(&mut self) {
        if M::KIND == MessageKind::Request {
            if let Some(key) = M::API_KEY {
                self.0.insert(key, encode_default::<M>);
            }
        }
    }
}

fn default_requests() -> BTreeMap<i16, EncodeDefault> {
    let mut visitor = DefaultRequests(BTreeMap::new());
    visit_messages(&mut visitor);
    visitor.0
}

/// Requests where the all-default body is not a valid request, with the fewest fields set to
/// make it one. `None`: the default body is sent.
fn minimal_request(
    api: ApiKey,
    version: i16,
    kind: Listener,
) -> Option<Result<Bytes, EncodeError>> {
    use kafka_codec::messages::add_partitions_to_txn_request::{
        AddPartitionsToTxnRequest, AddPartitionsToTxnTransaction,
    };
    use kafka_codec::messages::describe_acls_request::DescribeAclsRequest;
    use kafka_codec::messages::describe_cluster_request::DescribeClusterRequest;
    use kafka_codec::messages::init_producer_id_request::InitProducerIdRequest;
    use kafka_codec::messages::produce_request::ProduceRequest;
    Some(match api {
        // acks=0 (the default) means "send no response"; ask for one.
        ApiKey::Produce => ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(1000)
            .encode_to_bytes(version),
        ApiKey::ApiVersions => api_versions_request().encode_to_bytes(version),
        // The default filter says UNKNOWN (0) for resource type, operation and permission
        // type; Kafka refuses to parse such a filter and closes the connection. ANY is 1.
        ApiKey::DescribeAcls => DescribeAclsRequest::default()
            .with_resource_type_filter(1)
            .with_pattern_type_filter(1)
            .with_operation(1)
            .with_permission_type(1)
            .encode_to_bytes(version),
        // v4+ (the broker-to-broker batch form) with no transaction gets no answer at all from
        // 4.4.0 (the response waits for one result per transaction); ask about one made-up
        // transactional id, verify-only, which changes nothing.
        ApiKey::AddPartitionsToTxn if version >= 4 => AddPartitionsToTxnRequest::default()
            .with_transactions(vec![AddPartitionsToTxnTransaction::default()
                .with_transactional_id("kafka-codec-live-no-such-txn".into())
                .with_producer_id(0)
                .with_producer_epoch(0)
                .with_verify_only(true)])
            .encode_to_bytes(version),
        // The default transactional id is "" (not null), which Kafka refuses; null asks for
        // an idempotent producer id.
        ApiKey::InitProducerId => InitProducerIdRequest::default()
            .with_transactional_id(None)
            .encode_to_bytes(version),
        // A controller listener describes controllers (endpoint type 2); the default (1,
        // brokers) gets MISMATCHED_ENDPOINT_TYPE there, and v0 cannot say otherwise.
        ApiKey::DescribeCluster if kind == Listener::Controller && version >= 1 => {
            DescribeClusterRequest::default()
                .with_endpoint_type(2)
                .encode_to_bytes(version)
        }
        _ => return None,
    })
}

/// APIs this sweep does not send, and why. Every other advertised API gets its default (or
/// minimal) request; several of those are refused by Kafka with an error code, which is fine:
/// the point is that the error response decodes. Mutating APIs whose default names node 0
/// with an empty cluster id (BrokerRegistration, AddRaftVoter, RemoveRaftVoter,
/// UpdateRaftVoter) are sent: the controller checks the cluster id first and answers
/// INCONSISTENT_CLUSTER_ID (104) without changing anything.
fn skipped(api: ApiKey) -> Option<&'static str> {
    match api {
        ApiKey::ControllerRegistration => Some(
            "destructive: has no cluster id to check, so the default registers a phantom \
             controller 0 in the metadata log",
        ),
        ApiKey::UnregisterController => Some(
            "destructive: removes controller 0's registration (writes an \
             UnregisterControllerRecord)",
        ),
        ApiKey::UnregisterBroker => Some(
            "destructive: unregisters broker 0; with our node id it would take the only \
             broker away",
        ),
        _ => None,
    }
}

fn sweep(addr: &str, kind: Listener) -> (String, Vec<String>) {
    let advertised = advertised(addr);
    let defaults = default_requests();
    let mut report = format!(
        "{addr} ({kind:?} listener): a default request at min and max of every advertised API\n"
    );
    let mut failures = Vec::new();
    let mut sent = 0;
    for (key, _) in advertised.iter() {
        let Some(api) = ApiKey::from_key(key) else {
            let _ = writeln!(report, "  key {key}: unknown to us, not sent");
            continue;
        };
        if let Some(why) = skipped(api) {
            let _ = writeln!(report, "  {:<38} skipped: {why}", api.name());
            continue;
        }
        let Some(pinned) = pinned(api) else {
            let _ = writeln!(report, "  {:<38} skipped: Kafka 4 removed it", api.name());
            continue;
        };
        let common = match advertised.common_versions(api, pinned) {
            Ok(common) => common,
            Err(e) => {
                let _ = writeln!(report, "  {:<38} FAILED: {e}", api.name());
                failures.push(format!("{addr}: {e}"));
                continue;
            }
        };
        let mut versions = vec![common.min, common.max];
        versions.dedup();
        for version in versions {
            let body = minimal_request(api, version, kind)
                .unwrap_or_else(|| defaults[&key](version))
                .unwrap_or_else(|e| panic!("encoding a default {api} v{version}: {e}"));
            let mut conn = Conn::open(addr);
            sent += 1;
            match conn.call_raw(api, version, &body) {
                Ok(response) => {
                    let _ = writeln!(
                        report,
                        "  {:<38} v{version:<2} ok{}",
                        api.name(),
                        error_summary(&response)
                    );
                }
                Err(e) => {
                    let _ = writeln!(report, "  {:<38} v{version:<2} FAILED: {e}", api.name());
                    failures.push(format!("{addr} {api} v{version}: {e}"));
                }
            }
        }
    }
    let _ = writeln!(report, "  {sent} requests, {} failed", failures.len());
    (report, failures)
}

/// The top-level error code, when the response has one and it is not NONE.
fn error_summary(response: &Response) -> String {
    match response.error_code() {
        Some(code) if code.is_error() => format!(" (error {code})"),
        _ => String::new(),
    }
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn default_requests_to_broker_decode() {
    let addr = broker();
    let (report, failures) = sweep(&addr, Listener::Broker);
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "responses that did not decode:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn default_requests_to_controller_decode() {
    let addr = controller();
    let (report, failures) = sweep(&addr, Listener::Controller);
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "responses that did not decode:\n  {}",
        failures.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Metadata

/// The node id: `KAFKA_NODE_ID` if set, else the controller id a Metadata answer names (a
/// combined single node is its own controller).
fn node_id(broker_addr: &str) -> i32 {
    use kafka_codec::messages::metadata_request::MetadataRequest;
    env_i32("KAFKA_NODE_ID").unwrap_or_else(|| {
        let response = Conn::open(broker_addr)
            .call(
                ApiKey::Metadata,
                12,
                &MetadataRequest::default().with_topics(Some(vec![])),
            )
            .unwrap_or_else(|e| panic!("Metadata v12: {e}"));
        body!(response, Metadata).controller_id
    })
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn metadata_names_this_broker_at_every_version() {
    use kafka_codec::messages::metadata_request::MetadataRequest;
    let addr = broker();
    let node = node_id(&addr);
    let cluster_id = env_addr("KAFKA_CLUSTER_ID");
    let shared = advertised(&addr)
        .common_versions(
            ApiKey::Metadata,
            pinned(ApiKey::Metadata).expect("Metadata"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut report = format!("Metadata v{}..=v{} from {addr}:\n", shared.min, shared.max);
    for version in shared.min..=shared.max {
        let request = MetadataRequest::default()
            // v0 cannot say "no topics" (empty means all); from v1 on, an empty list is none.
            .with_topics(Some(vec![]))
            // The field exists from v4; before that the broker never creates topics here.
            .with_allow_auto_topic_creation(version < 4);
        let response = Conn::open(&addr)
            .call(ApiKey::Metadata, version, &request)
            .unwrap_or_else(|e| panic!("Metadata v{version}: {e}"));
        let response = body!(response, Metadata);
        let broker = response
            .brokers
            .iter()
            .find(|b| b.node_id == node)
            .unwrap_or_else(|| {
                panic!(
                    "Metadata v{version}: node {node} not in {:?}",
                    response.brokers
                )
            });
        assert_eq!(
            broker.host.as_str(),
            host_of(&addr),
            "Metadata v{version}: host"
        );
        assert_eq!(broker.port, port_of(&addr), "Metadata v{version}: port");
        assert_eq!(
            response.brokers.len(),
            1,
            "Metadata v{version}: one node: {:?}",
            response.brokers
        );
        if version >= 1 {
            assert_eq!(
                response.controller_id, node,
                "Metadata v{version}: controller id"
            );
        }
        if version >= 2 {
            if let Some(id) = &cluster_id {
                assert_eq!(
                    response.cluster_id.as_deref(),
                    Some(id.as_str()),
                    "Metadata v{version}: cluster id"
                );
            }
        }
        let _ = writeln!(
            report,
            "  v{version:<2} ok: node {} at {}:{}, controller {}, cluster {:?}, {} topics",
            broker.node_id,
            broker.host,
            broker.port,
            response.controller_id,
            response.cluster_id.as_deref(),
            response.topics.len()
        );
    }
    eprintln!("{report}");
}

// ---------------------------------------------------------------------------------------------
// DescribeQuorum

fn describe_quorum_request() -> kafka_codec::messages::describe_quorum_request::DescribeQuorumRequest
{
    use kafka_codec::messages::describe_quorum_request::{
        DescribeQuorumRequest, PartitionData, TopicData,
    };
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])])
}

/// Checks a DescribeQuorum v0-v2 answer from a single combined node; returns a summary.
fn check_quorum(
    response: &kafka_codec::messages::describe_quorum_response::DescribeQuorumResponse,
    version: i16,
    node: i32,
    controller_addr: Option<&str>,
) -> String {
    assert_eq!(
        response.error_code, 0,
        "v{version}: error {:?}",
        response.error_message
    );
    assert_eq!(response.topics.len(), 1, "v{version}: one topic");
    let topic = &response.topics[0];
    assert_eq!(topic.topic_name.as_str(), "__cluster_metadata");
    assert_eq!(topic.partitions.len(), 1, "v{version}: one partition");
    let p = &topic.partitions[0];
    assert_eq!(p.partition_index, 0);
    assert_eq!(
        p.error_code, 0,
        "v{version}: partition error {:?}",
        p.error_message
    );
    assert_eq!(p.leader_id, node, "v{version}: leader id");
    assert!(
        p.leader_epoch >= 0,
        "v{version}: leader epoch {}",
        p.leader_epoch
    );
    assert!(
        p.high_watermark >= 0,
        "v{version}: high watermark {}",
        p.high_watermark
    );
    let voter = p
        .current_voters
        .iter()
        .find(|v| v.replica_id == node)
        .unwrap_or_else(|| {
            panic!(
                "v{version}: node {node} not among voters {:?}",
                p.current_voters
            )
        });
    assert_eq!(p.current_voters.len(), 1, "v{version}: one voter");
    assert!(
        voter.log_end_offset >= p.high_watermark,
        "v{version}: voter behind the high watermark"
    );
    // v3 only (our proposal): absent below.
    assert_eq!(p.committed_voters, None, "v{version}: committed voters");
    let mut summary = format!(
        "leader {} epoch {} high watermark {}, voters {:?}",
        p.leader_id,
        p.leader_epoch,
        p.high_watermark,
        p.current_voters
            .iter()
            .map(|v| v.replica_id)
            .collect::<Vec<_>>()
    );
    if version >= 1 {
        assert!(voter.last_fetch_timestamp >= -1 && voter.last_caught_up_timestamp >= -1);
    }
    if version >= 2 {
        // A dynamic quorum (formatted --standalone) knows the voter's directory id and endpoints.
        assert!(
            !voter.replica_directory_id.is_zero(),
            "v2: voter directory id is zero"
        );
        let entry = response
            .nodes
            .iter()
            .find(|n| n.node_id == node)
            .unwrap_or_else(|| panic!("v2: node {node} not in Nodes {:?}", response.nodes));
        assert!(
            !entry.listeners.is_empty(),
            "v2: no listeners for node {node}"
        );
        if let Some(addr) = controller_addr {
            assert!(
                entry
                    .listeners
                    .iter()
                    .any(|l| l.host.as_str() == host_of(addr) && i32::from(l.port) == port_of(addr)),
                "v2: controller endpoint {addr} not in {:?}",
                entry.listeners
            );
        }
        let _ = write!(
            summary,
            ", directory {}, endpoints {:?}",
            voter.replica_directory_id,
            entry
                .listeners
                .iter()
                .map(|l| format!("{}://{}:{}", l.name, l.host, l.port))
                .collect::<Vec<_>>()
        );
    } else {
        assert!(response.nodes.is_empty(), "v{version}: Nodes before v2");
    }
    summary
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn describe_quorum_v0_to_v2() {
    let broker_addr = broker();
    let node = node_id(&broker_addr);
    let controller_addr = env_addr("KAFKA_CONTROLLER");
    let mut targets = vec![(broker_addr.clone(), "broker")];
    if let Some(addr) = &controller_addr {
        targets.insert(0, (addr.clone(), "controller"));
    }
    let mut report = String::from("DescribeQuorum for __cluster_metadata-0:\n");
    for (addr, kind) in &targets {
        for version in 0..=2 {
            let response = Conn::open(addr)
                .call(ApiKey::DescribeQuorum, version, &describe_quorum_request())
                .unwrap_or_else(|e| panic!("{kind} {addr}: DescribeQuorum v{version}: {e}"));
            let response = body!(response, DescribeQuorum);
            let summary = check_quorum(&response, version, node, controller_addr.as_deref());
            let _ = writeln!(report, "  {kind} listener {addr} v{version}: {summary}");
        }
    }
    eprintln!("{report}");
}

/// DescribeQuorum v3 is our proposal: a real 4.4.0 node must refuse it, proving it does not
/// read our v3 as something else and that v0-v2 are unchanged.
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn describe_quorum_v3_is_refused_by_kafka() {
    let broker_addr = broker();
    let mut targets = vec![(broker_addr, "broker")];
    if let Some(addr) = env_addr("KAFKA_CONTROLLER") {
        targets.insert(0, (addr, "controller"));
    }
    let body = describe_quorum_request().encode_to_bytes(3).unwrap();
    let mut report = String::from("DescribeQuorum v3 (ours only) sent to Kafka 4.4.0:\n");
    for (addr, kind) in &targets {
        let mut conn = Conn::open(addr);
        let reply = conn.send_raw(ApiKey::DescribeQuorum, 3, &body);
        let outcome = match reply {
            Reply::Closed => "closed the connection without an answer (how Kafka treats a version \
                              it does not know, for every API but ApiVersions)"
                .to_string(),
            Reply::TimedOut => panic!("{kind} {addr}: no answer and no close for v3"),
            Reply::Frame(frame) => {
                // Not expected from 4.4.0; if it answers, it must say UNSUPPORTED_VERSION (35).
                let response = conn
                    .decode(frame)
                    .unwrap_or_else(|e| panic!("{kind} {addr}: v3 answer: {e}"));
                let response = body!(response.body, DescribeQuorum);
                assert_eq!(
                    response.error_code, 35,
                    "{kind} {addr}: v3 accepted: {response:?}"
                );
                "answered UNSUPPORTED_VERSION (35)".to_string()
            }
        };
        let _ = writeln!(report, "  {kind} listener {addr}: {outcome}");
        // The same listener still serves v2 on a new connection.
        let response = Conn::open(addr)
            .call(ApiKey::DescribeQuorum, 2, &describe_quorum_request())
            .unwrap_or_else(|e| panic!("{kind} {addr}: v2 after v3: {e}"));
        assert_eq!(body!(response, DescribeQuorum).error_code, 0);
    }
    eprintln!("{report}");
}

/// Kafka 4.4.0 advertises Produce from v0 (see [`KAFKA_ADVERTISES`]) yet closes the connection
/// on a v0-v2 request, versions its schema no longer has (ours do, from Kafka 3.9.1): acks -1,
/// timeout 1000 ms, no topics (the same bytes in v0, v1 and v2).
#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn produce_v0_to_v2_advertised_but_refused() {
    let addr = broker();
    let body = [0xff, 0xff, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x00, 0x00];
    let ours = kafka_codec::messages::ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(1000);
    for version in 0..=2 {
        assert_eq!(
            ours.encode_to_vec(version).unwrap(),
            body,
            "Produce v{version}"
        );
    }
    let mut report =
        String::from("Produce v0-v2 (advertised by Kafka 4.4.0, not in its schema):\n");
    for version in 0..=2 {
        let reply = Conn::open(&addr).send_raw(ApiKey::Produce, version, &body);
        match reply {
            Reply::Closed => {
                let _ = writeln!(
                    report,
                    "  v{version}: connection closed (UNSUPPORTED_VERSION in the broker log)"
                );
            }
            Reply::Frame(frame) => panic!(
                "Produce v{version}: Kafka now answers ({}); revisit KAFKA_ADVERTISES",
                hex_around(&frame, 0)
            ),
            Reply::TimedOut => panic!("Produce v{version}: no answer and no close"),
        }
    }
    eprintln!("{report}");
}

// ---------------------------------------------------------------------------------------------
// CreateTopics, Produce, Fetch: record batches written by `kafka_codec::records` travel through
// the broker, which checks their CRCs and decompresses them; what comes back reads the same.

/// A name no earlier run used.
fn unique_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{nanos}")
}

/// Creates single-partition topics; returns their ids.
fn create_topics(addr: &str, names: &[String], report: &mut String) -> Vec<kafka_codec::Uuid> {
    use kafka_codec::messages::create_topics_request::{CreatableTopic, CreateTopicsRequest};
    let version = newest_shared(addr, ApiKey::CreateTopics);
    let response = Conn::open(addr)
        .call(
            ApiKey::CreateTopics,
            version,
            &CreateTopicsRequest::default()
                .with_topics(
                    names
                        .iter()
                        .map(|name| {
                            CreatableTopic::default()
                                .with_name(name.as_str().into())
                                .with_num_partitions(1)
                                .with_replication_factor(1)
                        })
                        .collect(),
                )
                .with_timeout_ms(10_000),
        )
        .unwrap_or_else(|e| panic!("CreateTopics v{version}: {e}"));
    let created = body!(response, CreateTopics);
    names
        .iter()
        .map(|name| {
            let result = created
                .topics
                .iter()
                .find(|t| t.name.as_str() == name)
                .unwrap_or_else(|| panic!("CreateTopics: no result for {name}"));
            assert_eq!(
                result.error_code, 0,
                "CreateTopics {name}: {:?}",
                result.error_message
            );
            assert!(
                !result.topic_id.is_zero(),
                "CreateTopics v{version}: no topic id"
            );
            let _ = writeln!(
                report,
                "CreateTopics v{version}: {name} id {}",
                result.topic_id
            );
            result.topic_id
        })
        .collect()
}

/// The newest version both speak (as a client picks it).
fn newest_shared(addr: &str, api: ApiKey) -> i16 {
    advertised(addr)
        .negotiate(api)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The oldest version both speak (of the pinned release's: Kafka 4.4.0 advertises Produce
/// from v0 but refuses v0-v2).
fn oldest_shared(addr: &str, api: ApiKey) -> i16 {
    advertised(addr)
        .common_versions(api, pinned(api).expect("an API Kafka 4.4.0 has"))
        .unwrap_or_else(|e| panic!("{e}"))
        .min
}

/// Produces one records field to partition 0; returns the base offset the broker assigned.
fn produce(
    addr: &str,
    version: i16,
    topic: &str,
    topic_id: kafka_codec::Uuid,
    records: Bytes,
) -> i64 {
    use kafka_codec::messages::produce_request::{
        PartitionProduceData, ProduceRequest, TopicProduceData,
    };
    let request = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(10_000)
        .with_topic_data(vec![TopicProduceData::default()
            // Name up to v12, id from v13: both are ignorable, the version picks one.
            .with_name(topic.into())
            .with_topic_id(topic_id)
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    // A new topic's partition may need a moment to get its leader: retry while the broker
    // says so (nothing was appended then).
    let mut attempts = 0;
    loop {
        let response = Conn::open(addr)
            .call(ApiKey::Produce, version, &request)
            .unwrap_or_else(|e| panic!("Produce v{version}: {e}"));
        let response = body!(response, Produce);
        let partition = response.responses[0].partition_responses[0].clone();
        attempts += 1;
        // A just-created partition answers "not ready yet" (UNKNOWN_TOPIC_OR_PARTITION,
        // LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER): all retriable.
        if ErrorCode::from(partition.error_code).is_retriable() && attempts < 100 {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        assert_eq!(
            partition.error_code, 0,
            "Produce v{version}: {:?}",
            partition.error_message
        );
        return partition.base_offset;
    }
}

/// Fetches partition 0 from offset 0, at most `max_bytes` of records; returns the partition's
/// error code, high watermark and records.
fn fetch(
    addr: &str,
    version: i16,
    topic: &str,
    topic_id: kafka_codec::Uuid,
    max_bytes: i32,
) -> (i16, i64, Bytes) {
    use kafka_codec::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
    let request = FetchRequest::default()
        .with_max_wait_ms(1000)
        .with_min_bytes(1)
        .with_max_bytes(max_bytes)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic.into())
            .with_topic_id(topic_id)
            .with_partitions(vec![FetchPartition::default()
                .with_partition(0)
                .with_fetch_offset(0)
                .with_partition_max_bytes(max_bytes)])]);
    let response = Conn::open(addr)
        .call(ApiKey::Fetch, version, &request)
        .unwrap_or_else(|e| panic!("Fetch v{version}: {e}"));
    let response = body!(response, Fetch);
    assert_eq!(response.error_code, 0, "Fetch v{version}");
    let partition = &response.responses[0].partitions[0];
    (
        partition.error_code,
        partition.high_watermark,
        partition.records.clone().unwrap_or_default(),
    )
}

/// A record as a consumer sees it: key, value, headers, timestamp.
type Seen = (
    Option<Bytes>,
    Option<Bytes>,
    Vec<(String, Option<Bytes>)>,
    i64,
);

fn seen(batch: &RecordBatch, record: &kafka_codec::records::Record) -> Seen {
    (
        record.key.clone(),
        record.value.clone(),
        record
            .headers
            .iter()
            .map(|h| (h.key.to_string(), h.value.clone()))
            .collect(),
        batch.record_timestamp(record),
    )
}

#[test]
#[ignore = "needs a live Kafka broker: tools/ci-live.sh sets KAFKA_BROKER and runs it"]
fn create_topic_produce_and_fetch_back() {
    let addr = broker();
    let mut report = String::new();
    let topic = unique_name("kafka-codec-live");
    let topic_id = create_topics(&addr, std::slice::from_ref(&topic), &mut report)[0];
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;

    // One batch per codec this build has, uncompressed first (by the oldest Produce we
    // share, by topic name) and zstd last (Fetch below v10 refuses zstd).
    let codecs: Vec<Compression> = Compression::ALL
        .into_iter()
        .filter(|c| c.is_enabled())
        .collect();
    let mut sent = Vec::new();
    let mut sizes = Vec::new();
    for (i, &codec) in codecs.iter().enumerate() {
        let mut builder = RecordBatchBuilder::new(codec);
        builder.append(
            now,
            Some(Bytes::from_static(b"k0")),
            Some(Bytes::from(format!("first value, {codec}"))),
        );
        builder.append_with_headers(
            now + 1,
            None,
            Some(Bytes::from("not ASCII: \u{e9}\u{2603} ".repeat(20))),
            vec![
                Header::new("trace", Some(Bytes::from_static(b"abc"))),
                Header::new("empty", None),
            ],
        );
        builder.append(
            now + 2,
            Some(Bytes::from_static(&[0, 1, 2, 0xff, 0xfe])),
            None,
        );
        let batch = builder.build();
        let bytes = batch.encode_to_bytes().expect("encode batch");
        let version = if i == 0 {
            oldest_shared(&addr, ApiKey::Produce)
        } else {
            newest_shared(&addr, ApiKey::Produce)
        };
        let base = produce(&addr, version, &topic, topic_id, bytes.clone());
        assert_eq!(
            base,
            3 * i as i64,
            "Produce v{version} {codec}: base offset"
        );
        let crc = u32::from_be_bytes(bytes[17..21].try_into().unwrap());
        let _ = writeln!(
            report,
            "Produce v{version}: {codec} batch of {} records, {} bytes, CRC-32C {crc:08x}, at offset {base}",
            batch.records.len(),
            bytes.len(),
        );
        sizes.push(bytes.len());
        sent.push((batch, crc));
    }
    let total: usize = sizes.iter().sum();
    let high_watermark = 3 * codecs.len() as i64;

    // Everything back with the newest Fetch: the broker keeps each batch as sent from the
    // attributes on (equal CRC-32C), and our reader gives back the records.
    let version = newest_shared(&addr, ApiKey::Fetch);
    let (error, hw, records) = fetch(&addr, version, &topic, topic_id, 1 << 20);
    assert_eq!((error, hw), (0, high_watermark), "Fetch v{version}");
    let mut reader = BatchReader::fetch(records.clone());
    let mut count = 0;
    for (raw, (want, crc)) in (&mut reader).zip(&sent) {
        let raw = raw.unwrap_or_else(|e| panic!("Fetch v{version}: {e}"));
        assert_eq!(
            raw.header().crc,
            *crc,
            "Fetch v{version}: the broker changed a batch"
        );
        let got = raw
            .decode()
            .unwrap_or_else(|e| panic!("Fetch v{version}: {e}"));
        assert_eq!(got.compression, want.compression);
        assert_eq!(got.base_offset, 3 * count as i64);
        let got_seen: Vec<Seen> = got.records.iter().map(|r| seen(&got, r)).collect();
        let want_seen: Vec<Seen> = want.records.iter().map(|r| seen(want, r)).collect();
        assert_eq!(
            got_seen, want_seen,
            "Fetch v{version}: {} records",
            want.compression
        );
        count += 1;
    }
    assert_eq!(count, sent.len(), "Fetch v{version}: batches");
    assert_eq!(reader.truncated_tail(), None);
    let _ = writeln!(
        report,
        "Fetch v{version}: {} bytes, {count} batches ({}), records equal, CRCs unchanged",
        records.len(),
        codecs
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    );

    // The oldest Fetch we share, up to the zstd batch (older than v10 cannot carry it).
    let old = oldest_shared(&addr, ApiKey::Fetch);
    let before_zstd = if codecs.last() == Some(&Compression::Zstd) && old < 10 {
        sizes.len() - 1
    } else {
        sizes.len()
    };
    let budget: usize = sizes[..before_zstd].iter().sum();
    let (error, _, records) = fetch(&addr, old, &topic, topic_id, budget as i32);
    assert_eq!(error, 0, "Fetch v{old}");
    let batches = decode_batches(&records).unwrap_or_else(|e| panic!("Fetch v{old}: {e}"));
    assert_eq!(batches.len(), before_zstd, "Fetch v{old}: batches");
    let _ = writeln!(
        report,
        "Fetch v{old}: {} bytes, {} batches read back",
        records.len(),
        batches.len()
    );

    // A fetch size that cuts the last batch: the broker may send its first bytes, which a
    // consumer-side reader skips and reports.
    let cut = total - sizes.last().unwrap() / 2;
    let (error, _, records) = fetch(&addr, version, &topic, topic_id, cut as i32);
    assert_eq!(error, 0);
    let mut reader = BatchReader::fetch(records.clone());
    let whole = (&mut reader)
        .map(|b| b.unwrap().decode().unwrap())
        .collect::<Vec<_>>()
        .len();
    assert_eq!(
        whole,
        sent.len() - 1,
        "Fetch v{version} with max {cut}: whole batches"
    );
    let _ = writeln!(
        report,
        "Fetch v{version} max_bytes {cut}: {} bytes, {whole} whole batches, truncated tail {:?}",
        records.len(),
        reader.truncated_tail()
    );
    if reader.truncated_tail().is_some() {
        assert!(
            decode_batches(&records).is_err(),
            "strict reading refuses a cut batch"
        );
    }
    eprintln!("{report}");
}

// ---------------------------------------------------------------------------------------------
// Real clients: librdkafka (confluent-kafka), kafka-python and aiokafka produce known records
// with every codec; we fetch their batches and read them.

/// How a client framed a compressed batch: snappy's xerial header or raw blocks, lz4's frame
/// flags.
fn framing(codec: Compression, area: &[u8]) -> String {
    match codec {
        Compression::Snappy if area.starts_with(&[0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0]) => {
            "xerial framing".into()
        }
        Compression::Snappy => "raw snappy".into(),
        Compression::Lz4 if area.len() > 6 && area[..4] == [0x04, 0x22, 0x4d, 0x18] => {
            let flg = area[4];
            format!(
                "LZ4 frame, FLG {flg:#04x} BD {:#04x}: {} blocks{}{}{}",
                area[5],
                if flg & 0x20 != 0 {
                    "independent"
                } else {
                    "linked"
                },
                if flg & 0x10 != 0 {
                    ", block checksums"
                } else {
                    ""
                },
                if flg & 0x08 != 0 {
                    ", content size"
                } else {
                    ""
                },
                if flg & 0x04 != 0 {
                    ", content checksum"
                } else {
                    ""
                },
            )
        }
        Compression::Gzip if area.len() > 3 => {
            format!("gzip, method {}, flags {:#04x}", area[2], area[3])
        }
        Compression::Zstd if area.len() > 5 => {
            format!("zstd frame, descriptor {:#04x}", area[4])
        }
        _ => String::new(),
    }
}

#[test]
#[ignore = "needs a live Kafka broker and the clients' venv: tools/ci-live.sh sets \
            KAFKA_BROKER and KAFKA_CLIENTS_PYTHON and runs it"]
fn clients_batches_read_as_sent() {
    use base64::Engine as _;
    let addr = broker();
    let python = env_addr("KAFKA_CLIENTS_PYTHON").expect(
        "KAFKA_CLIENTS_PYTHON is not set (PY=$(bash tools/clients/venv.sh) gives the clients' python)",
    );
    let mut report = String::new();
    let prefix = unique_name("kafka-codec-clients");
    let clients = ["confluent-kafka", "kafka-python", "aiokafka"];
    let topics: Vec<String> = clients
        .iter()
        .flat_map(|client| Compression::ALL.map(|c| format!("{prefix}-{client}-{}", c.name())))
        .collect();
    let ids = create_topics(&addr, &topics, &mut String::new());
    let ids: BTreeMap<&str, kafka_codec::Uuid> =
        topics.iter().map(String::as_str).zip(ids).collect();

    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tools/clients/produce_known.py"
    );
    let output = std::process::Command::new(&python)
        .args([script, &addr, &prefix])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("running {python} {script}: {e}"));
    assert!(
        output.status.success(),
        "{script} failed: {}",
        output.status
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the script prints JSON");
    let b64 = |v: &serde_json::Value| {
        v.as_str().map(|t| {
            Bytes::from(
                base64::engine::general_purpose::STANDARD
                    .decode(t)
                    .expect("base64"),
            )
        })
    };
    let version = newest_shared(&addr, ApiKey::Fetch);
    let mut checked = 0;
    let mut golden = String::new();
    for entry in manifest.as_array().expect("a list") {
        let client = entry["client"].as_str().unwrap();
        let codec = Compression::from_name(entry["codec"].as_str().unwrap()).unwrap();
        let topic = entry["topic"].as_str().unwrap();
        let want: Vec<Seen> = entry["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    b64(&r["key"]),
                    b64(&r["value"]),
                    r["headers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|h| (h["key"].as_str().unwrap().to_owned(), b64(&h["value"])))
                        .collect(),
                    r["timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        let (error, hw, records) = fetch(&addr, version, topic, ids[topic], 1 << 20);
        assert_eq!(error, 0, "{client} {codec}: Fetch v{version}");
        assert_eq!(hw, want.len() as i64, "{client} {codec}: high watermark");
        let mut got = Vec::new();
        let mut described = Vec::new();
        for raw in BatchReader::new(records.clone()) {
            let raw = raw.unwrap_or_else(|e| panic!("{client} {codec}: {e}"));
            let batch = raw
                .decode()
                .unwrap_or_else(|e| panic!("{client} {codec}: {e}"));
            assert_eq!(batch.compression, codec, "{client}: batch codec");
            let area = &raw.as_bytes()
                [kafka_codec::records::RECORD_BATCH_OVERHEAD.min(raw.as_bytes().len())..];
            described.push(format!(
                "magic {} {} records{}",
                batch.magic,
                batch.records.len(),
                match framing(codec, area) {
                    f if f.is_empty() => String::new(),
                    f => format!(", {f}"),
                }
            ));
            got.extend(batch.records.iter().map(|r| seen(&batch, r)));
        }
        assert_eq!(got, want, "{client} {codec}: records");
        checked += 1;
        let line = serde_json::json!({
            "client": client,
            "codec": codec.name(),
            "records": entry["records"],
            "hex": kafka_codec_hexdump::encode(&records),
        });
        golden.push_str(&line.to_string());
        golden.push('\n');
        let _ = writeln!(
            report,
            "{client:<16} {:<6}: {} batch(es): {}",
            codec.name(),
            described.len(),
            described.join("; ")
        );
    }
    assert_eq!(checked, clients.len() * Compression::ALL.len());
    eprintln!("{checked} (client, codec) pairs read as sent:\n{report}");
    if std::env::var("KAFKA_CODEC_RECORD_GOLDEN").is_ok_and(|v| v == "1") {
        // The clients' batches as the broker stored them (it sets the base offset and the
        // partition leader epoch, which the CRC does not cover) with the records each client
        // was given: replayed without a broker by `tests/records/batches.rs` and the CLI's tests.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/records");
        std::fs::create_dir_all(dir).expect("creating tests/golden/records");
        std::fs::write(format!("{dir}/clients.jsonl"), &golden).expect("writing clients.jsonl");
        eprintln!(
            "wrote {checked} fetched records fields ({} bytes) to tests/golden/records/clients.jsonl",
            golden.len()
        );
    }
}
