//! `kafka-codec quorum serve`: the simulated quorum's leader behind a TCP (or TLS) listener.
//!
//! Connections are tokio tasks, like the tap's: no thread is started after the server has
//! started, every byte read and not yet answered is charged to `--memory-budget`, and
//! `--max-connections` and `--idle-timeout` bound what idle or hostile peers can hold. The
//! cluster sits behind one mutex (never held across an await); a `Notify` wakes requests
//! that wait for a voter change to commit.

use super::controller::{Answer, Controller};
use super::sim::{self, Quorum};
use crate::common::{listen, Failure, Run};
use clap::builder::RangedU64ValueParser;
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::{Direction, IncomingRequest, ServerConnection};
use kafka_codec::json::redact;
use kafka_codec::json::{JsonOptions, JsonSink, JsonWriter};
use kafka_codec::serde_json::{self, json};
use kafka_codec::{DecodeLimits, DecodeOptions, ResponseFrame};
use kafka_codec_server::accept::Acceptor;
use kafka_codec_server::budget::{Budget, Charge};
use kafka_codec_server::limits::{raise_fd_limit, ServerLimits};
use kafka_codec_server::metrics::{Evicted, Metrics, Undecoded};
use kafka_codec_server::registry::{Member, Registry};
use kafka_codec_server::scrape::{self, MetricsListen};
use kafka_codec_server::stream::{self, Stream};
use kafka_codec_server::tls::ListenTls;
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Run a simulated KRaft quorum and answer as its leader, for admin tools.
///
/// Controllers 1, 2 and 3 are the voters and 1 leads; controller 4 and broker 100 fetch as
/// observers. It answers ApiVersions, DescribeCluster (the controller endpoints, for
/// `--bootstrap-controller`), DescribeQuorum v0-v3 and AddRaftVoter / RemoveRaftVoter,
/// which append a VotersRecord; followers fetch every second or two, so a voter change
/// commits a few seconds later, and only then is it answered, as Kafka's leader does. Kafka's
/// `kafka-metadata-quorum` works against it (it speaks DescribeQuorum v2) and so does
/// `kafka-codec quorum describe` (v3: committed voters). Everything is in memory; one line
/// per request goes to stderr.
#[derive(Debug, clap::Args)]
pub struct Serve {
    /// The address to listen on (port 0: any free port; the log's first line names it).
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// Fixes directory ids, the cluster id and the followers' fetch timing.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Followers fetch every 1 to 2 times this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1_000,
          value_parser = clap::value_parser!(u32).range(1..=600_000))]
    fetch_interval_ms: u32,
    /// Advertise only stable versions: DescribeQuorum v0-v2, as a Kafka controller without
    /// `unstable.api.versions.enable` does (v3 is in development).
    #[arg(long)]
    stable_only: bool,
    /// Also append every request and its response, as Kafka's JSON, one object per line,
    /// to this file.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Largest request frame read. The requests a controller answers are small; a larger
    /// frame closes its connection with a line on stderr.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(64..=i32::MAX as u64))]
    max_frame: usize,
    #[command(flatten)]
    limits: ServerLimits,
    #[command(flatten)]
    tls: ListenTls,
    #[command(flatten)]
    metrics: MetricsListen,
}

/// What every connection shares.
struct Shared {
    cluster: Mutex<Quorum>,
    /// Notified whenever the clock moved the quorum.
    moved: Notify,
    controller: Controller,
    trace: Option<Mutex<File>>,
    budget: Arc<Budget>,
    registry: Arc<Registry>,
    metrics: Arc<Metrics>,
    tls: Option<kafka_codec_server::tls::Acceptor>,
    options: DecodeOptions,
    idle_timeout: Option<Duration>,
}

impl Run for Serve {
    fn run(self) -> Result<(), Failure> {
        let fd_limit = raise_fd_limit();
        let max_connections = self.limits.max_connections(fd_limit, 1);
        let tls = self.tls.acceptor()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max_blocking_threads(1)
            .thread_name("kafka-codec-quorum")
            .enable_all()
            .build()
            .map_err(|e| Failure::Peer(format!("cannot start the server's threads: {e}")))?;
        let (listener, local) = listen(&self.listen)?;
        let metrics_listener = self.metrics.bind()?;
        let host = advertised_host(&self.listen, &local);
        let trace = match &self.trace {
            Some(path) => Some(Mutex::new(File::create(path).map_err(|e| {
                Failure::Input(format!("cannot write {}: {e}", path.display()))
            })?)),
            None => None,
        };
        let cluster = sim::quorum(
            self.seed,
            i64::from(self.fetch_interval_ms),
            (&host, local.port()),
            now_ms(),
        );
        let controller = Controller::new(&host, local.port(), self.stable_only);
        let address = format!("{}:{}", bracketed(&host), local.port());
        log(&format!(
            "listening on {address}{} (seed {}): cluster {}, controller {} leads epoch {} of \
             voters {}; controller 4 and broker 100 fetch as observers",
            if tls.is_some() { " with TLS" } else { "" },
            self.seed,
            cluster.cluster_id(),
            cluster.leader().leader_id(),
            cluster.leader().epoch(),
            sim::ids(cluster.leader().current_voter_set()),
        ));
        log(&format!("advertised: {}", controller.advertised()));
        if !self.stable_only {
            log("DescribeQuorum v3 (committed voters) is provisional and advertised; --stable-only hides it");
        }
        log(&format!(
            "watch it: kafka-codec quorum describe --bootstrap-controller {address} [--replication]"
        ));
        let budget = Budget::new(self.limits.memory_budget);
        let shared = Arc::new(Shared {
            cluster: Mutex::new(cluster),
            moved: Notify::new(),
            controller,
            trace,
            metrics: Metrics::new(Arc::clone(&budget), max_connections),
            budget,
            registry: Registry::new(max_connections),
            tls,
            options: DecodeOptions {
                limits: DecodeLimits {
                    max_frame_size: self.max_frame,
                    ..DecodeLimits::default()
                },
                ..DecodeOptions::default()
            },
            idle_timeout: self.limits.idle_timeout(),
        });
        runtime.block_on(async {
            let listener = TcpListener::from_std(listener)
                .map_err(|e| Failure::Peer(format!("cannot listen on {}: {e}", self.listen)))?;
            if let Some((listener, address)) = metrics_listener {
                scrape::spawn(
                    listener,
                    Arc::clone(&shared.metrics),
                    Arc::clone(&shared.budget),
                    move |line| log(&format!("metrics {address}: {line}")),
                )
                .map_err(|e| Failure::Peer(format!("cannot listen on {address}: {e}")))?;
                log(&format!("metrics on http://{address}/metrics"));
            }
            tokio::spawn(run_clock(Arc::clone(&shared)));
            tokio::spawn(relieve_memory_pressure(Arc::clone(&shared)));
            let mut acceptor = Acceptor::new(listener);
            let next = AtomicU64::new(1);
            loop {
                let (stream, peer) = acceptor.accept(|line| log(&line)).await;
                let id = next.fetch_add(1, Ordering::Relaxed);
                let (member, _) = shared.registry.join(id);
                tokio::spawn(serve_connection(Arc::clone(&shared), member, stream, peer));
            }
        })
    }
}

/// Moves the quorum along the wall clock, waking at each fetch or append.
async fn run_clock(shared: Arc<Shared>) {
    loop {
        let wait = {
            let mut cluster = lock(&shared.cluster);
            let now = now_ms();
            for event in cluster.advance(now) {
                log(&event);
            }
            shared.moved.notify_waiters();
            (cluster.next_due_ms() - now).clamp(1, 200)
        };
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}

/// Closes a connection that holds memory each time the budget asks for room.
async fn relieve_memory_pressure(shared: Arc<Shared>) {
    loop {
        shared.budget.pressure().await;
        if let Some(id) = shared.registry.evict_for_memory() {
            log(&format!(
                "--memory-budget ({} bytes, {} in use) is spent; closing connection {id}, the \
                 one holding memory that has gone longest without a complete request",
                shared.budget.limit(),
                shared.budget.in_use()
            ));
        }
    }
}

async fn serve_connection(shared: Arc<Shared>, member: Member, tcp: TcpStream, peer: SocketAddr) {
    let peer = peer.to_string();
    let _ = tcp.set_nodelay(true);
    let _open = shared.metrics.connection();
    let work = async {
        let stream = match &shared.tls {
            Some(acceptor) => match stream::accept_tls(acceptor, tcp, HANDSHAKE_TIMEOUT).await {
                Ok(stream) => stream,
                Err(e) => return log(&format!("{peer}: {e}")),
            },
            None => Stream::Plain(tcp),
        };
        if let Some(subject) = stream.client_subject() {
            log(&format!("{peer}: TLS client certificate {subject}"));
        }
        converse(&shared, &member, stream, &peer).await;
    };
    let idle = async {
        let Some(timeout) = shared.idle_timeout else {
            return std::future::pending().await;
        };
        loop {
            let last = member.last_activity();
            let deadline = last + timeout;
            if tokio::time::Instant::now() >= deadline.into() {
                return timeout;
            }
            tokio::time::sleep_until(deadline.into()).await;
        }
    };
    tokio::select! {
        () = work => {}
        why = member.evicted() => {
            shared.metrics.evicted(why.into());
            log(&format!("{peer}: {}", why.describe(shared.registry.max())));
        }
        timeout = idle => {
            shared.metrics.evicted(Evicted::IdleTimeout);
            log(&format!(
                "{peer}: closed by the server: no byte either way for --idle-timeout ({} s)",
                timeout.as_secs()
            ));
        }
    }
}

/// Reads requests and answers them until the peer goes or sends something unreadable.
async fn converse(shared: &Shared, member: &Member, mut stream: Stream, peer: &str) {
    let mut connection = ServerConnection::new().with_options(shared.options);
    let mut received = BytesMut::new();
    // What `received` holds, charged to the budget before it is held.
    let mut charge: Charge = shared.budget.none();
    loop {
        match connection.receive(&mut received) {
            Ok(Some(request)) => {
                let counted = shared
                    .metrics
                    .request(request.api_key().key(), request.api_version);
                let started = Instant::now();
                member.completed_request();
                charge.shrink_to(received.len());
                member.set_held(charge.bytes());
                if !answer(shared, &mut connection, &request, peer, &mut stream).await {
                    return;
                }
                shared.metrics.response(counted, started.elapsed());
            }
            Ok(None) => {
                let chunk = match stream.read_chunk().await {
                    Ok(chunk) if chunk.is_empty() => return,
                    Ok(chunk) => chunk,
                    Err(e) => return log(&format!("{peer}: read failed: {e}")),
                };
                member.touch();
                shared.metrics.bytes(Direction::ToServer, chunk.len());
                let Some(more) = shared.budget.reserve(chunk.len()).await else {
                    return;
                };
                charge.absorb(more);
                charge.shrink_to(received.len() + chunk.len());
                member.set_held(charge.bytes());
                received.extend_from_slice(&chunk);
            }
            Err(e) => {
                shared
                    .metrics
                    .undecoded(Direction::ToServer, Undecoded::Error);
                return log(&format!("{peer}: closing the connection: {e}"));
            }
        }
    }
}

/// Answers one request; false when the connection should close.
async fn answer(
    shared: &Shared,
    connection: &mut ServerConnection,
    request: &IncomingRequest,
    peer: &str,
    stream: &mut Stream,
) -> bool {
    let client = request
        .header
        .client_id
        .as_deref()
        .unwrap_or("-")
        .to_owned();
    let what = format!(
        "{peer} {client} #{} {} v{}",
        request.correlation_id(),
        request.api_key(),
        request.api_version
    );
    let now = now_ms();
    let (answer, summary) = {
        let mut cluster = lock(&shared.cluster);
        for event in cluster.advance(now) {
            log(&event);
        }
        let (answer, summary) = shared.controller.answer(&mut cluster, request, now);
        for event in cluster.after_request(now) {
            log(&event);
        }
        (answer, summary)
    };
    let response = match answer {
        Answer::Now(response) => {
            log(&format!("{what}: {summary}"));
            *response
        }
        Answer::Close(why) => {
            log(&format!("{what}: {why}; closing the connection"));
            return false;
        }
        Answer::AfterCommit(pending) => {
            log(&format!("{what}: {summary}"));
            let outcome = loop {
                let moved = shared.moved.notified();
                let polled = {
                    let cluster = lock(&shared.cluster);
                    pending
                        .poll(cluster.leader(), now_ms())
                        .map(|outcome| (outcome, cluster.leader().high_watermark()))
                };
                if let Some(polled) = polled {
                    break polled;
                }
                let _ = tokio::time::timeout(Duration::from_millis(200), moved).await;
            };
            let (outcome, high_watermark) = outcome;
            let waited = now_ms() - now;
            match &outcome {
                Ok(()) => log(&format!(
                    "{what}: NONE after {waited} ms (offset {} committed, high watermark {})",
                    pending.offset(),
                    high_watermark.unwrap_or(-1)
                )),
                Err(error) => log(&format!("{what}: {error}")),
            }
            Controller::voter_change_response(request, &outcome)
        }
    };
    record(shared, peer, request, &response);
    let mut out = BytesMut::new();
    if let Err(e) = connection.send(&response, &mut out) {
        log(&format!("{what}: cannot send the answer: {e}"));
        return false;
    }
    if let Err(e) = async {
        stream.write_all(&out).await?;
        stream.flush().await
    }
    .await
    {
        log(&format!("{what}: write failed: {e}"));
        return false;
    }
    shared.metrics.bytes(Direction::ToClient, out.len());
    true
}

/// One line of the `--trace` file.
fn record(shared: &Shared, peer: &str, request: &IncomingRequest, response: &ResponseFrame) {
    let Some(trace) = &shared.trace else {
        return;
    };
    let api = request.api_key();
    let mut line = serde_json::to_vec(&json!({"time": now_ms(), "peer": peer}))
        .expect("a JSON value always serializes");
    line.pop();
    line.extend_from_slice(b",\"request\":");
    let mut redacted = redacted_json(&mut line, api, redact::Direction::Request, |out| {
        request.write_json(&JsonOptions::default(), out)
    });
    line.extend_from_slice(b",\"response\":");
    redacted += redacted_json(&mut line, api, redact::Direction::Response, |out| {
        response.write_json(&JsonOptions::default(), out)
    });
    if redacted > 0 {
        shared.metrics.redacted(api, redacted);
    }
    line.extend_from_slice(b"}\n");
    let mut file = lock(trace);
    let written = file.write_all(&line).and_then(|()| file.flush());
    if let Err(e) = written {
        log(&format!("cannot write the trace: {e}"));
    }
}

/// A message's JSON appended to `out` with its secrets replaced (the trace is a log too), or
/// the error that stopped it as a JSON string; how many secrets were replaced.
fn redacted_json(
    out: &mut Vec<u8>,
    api: kafka_codec::ApiKey,
    direction: redact::Direction,
    write: impl FnOnce(&mut dyn JsonSink) -> Result<(), kafka_codec::EncodeError>,
) -> usize {
    let mut text = Vec::new();
    let mut writer = JsonWriter::compact(&mut text);
    let written = redact::write_redacted(api, direction, redact::Form::Frame, &mut writer, write);
    let finished = writer.finish();
    match (written, finished) {
        (Ok(redacted), Ok(())) => {
            out.extend_from_slice(&text);
            redacted.len()
        }
        (Err(e), _) => {
            out.extend_from_slice(&serde_json::to_vec(&e.to_string()).unwrap_or_default());
            0
        }
        (_, Err(e)) => {
            out.extend_from_slice(&serde_json::to_vec(&e.to_string()).unwrap_or_default());
            0
        }
    }
}

/// The host the server names in DescribeCluster and as controller 1's endpoint: the one
/// given to `--listen` (so a name stays a name), without IPv6 brackets.
fn advertised_host(listen: &str, local: &SocketAddr) -> String {
    match listen.rsplit_once(':') {
        Some((host, _)) if !host.is_empty() => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        _ => local.ip().to_string(),
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking connection thread must not stop the others.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `quorum serve: [12:00:00.000] message` on stderr (UTC).
fn log(message: &str) {
    let ms = now_ms();
    let day = ms.rem_euclid(86_400_000);
    crate::common::log_line(format_args!(
        "quorum serve: [{:02}:{:02}:{:02}.{:03}] {message}",
        day / 3_600_000,
        day / 60_000 % 60,
        day / 1_000 % 60,
        day % 1_000
    ));
}
