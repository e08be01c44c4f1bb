//! `kafka-codec quorum serve`: the simulated quorum's leader behind a TCP listener.
//!
//! Blocking I/O on plain threads: one accepts, one per connection, one moves the clock.
//! An admin tool opens two or three connections and sends a handful of requests, so a
//! runtime would buy nothing. The cluster sits behind one mutex; a condition variable wakes
//! connections that wait for a voter change to commit.

use super::controller::{Answer, Controller};
use super::sim::{self, Cluster};
use crate::common::{listen, Failure, Run};
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::{IncomingRequest, ServerConnection};
use kafka_codec::serde_json::{self, json};
use kafka_codec::ResponseFrame;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
}

/// What every thread shares.
struct Shared {
    cluster: Mutex<Cluster>,
    /// Notified whenever the clock moved the quorum.
    moved: Condvar,
    controller: Controller,
    trace: Option<Mutex<File>>,
}

impl Run for Serve {
    fn run(self) -> Result<(), Failure> {
        let (listener, local) = listen(&self.listen)?;
        let host = advertised_host(&self.listen, &local);
        let trace = match &self.trace {
            Some(path) => Some(Mutex::new(File::create(path).map_err(|e| {
                Failure::Input(format!("cannot write {}: {e}", path.display()))
            })?)),
            None => None,
        };
        let cluster = Cluster::new(
            self.seed,
            i64::from(self.fetch_interval_ms),
            (&host, local.port()),
            now_ms(),
        );
        let controller = Controller::new(&host, local.port(), self.stable_only);
        let address = format!("{}:{}", bracketed(&host), local.port());
        log(&format!(
            "listening on {address} (seed {}): cluster {}, controller {} leads epoch {} of \
             voters {}; controller 4 and broker 100 fetch as observers",
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
        let shared = Arc::new(Shared {
            cluster: Mutex::new(cluster),
            moved: Condvar::new(),
            controller,
            trace,
        });
        let clock = Arc::clone(&shared);
        std::thread::spawn(move || run_clock(&clock));
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => {
                    let shared = Arc::clone(&shared);
                    std::thread::spawn(move || serve_connection(&shared, stream));
                }
                Err(e) => log(&format!("accept failed: {e}")),
            }
        }
        Ok(())
    }
}

/// Moves the quorum along the wall clock, waking at each fetch or append.
fn run_clock(shared: &Shared) {
    loop {
        let wait = {
            let mut cluster = lock(&shared.cluster);
            let now = now_ms();
            for event in cluster.advance(now) {
                log(&event);
            }
            shared.moved.notify_all();
            (cluster.next_due_ms() - now).clamp(1, 200)
        };
        std::thread::sleep(Duration::from_millis(wait as u64));
    }
}

fn serve_connection(shared: &Shared, mut stream: TcpStream) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    let _ = stream.set_nodelay(true);
    let mut connection = ServerConnection::new();
    let mut received = BytesMut::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match connection.receive(&mut received) {
            Ok(Some(request)) => {
                if !answer(shared, &mut connection, &request, &peer, &mut stream) {
                    return;
                }
            }
            Ok(None) => match stream.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(e) => {
                    log(&format!("{peer}: read failed: {e}"));
                    return;
                }
            },
            Err(e) => {
                log(&format!("{peer}: closing the connection: {e}"));
                return;
            }
        }
    }
}

/// Answers one request; false when the connection should close.
fn answer(
    shared: &Shared,
    connection: &mut ServerConnection,
    request: &IncomingRequest,
    peer: &str,
    stream: &mut TcpStream,
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
    let mut cluster = lock(&shared.cluster);
    let now = now_ms();
    for event in cluster.advance(now) {
        log(&event);
    }
    let (answer, summary) = shared.controller.answer(&mut cluster, request, now);
    for event in cluster.after_request(now) {
        log(&event);
    }
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
                if let Some(outcome) = pending.poll(cluster.leader(), now_ms()) {
                    break outcome;
                }
                cluster = shared
                    .moved
                    .wait_timeout(cluster, Duration::from_millis(200))
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            };
            let waited = now_ms() - now;
            match &outcome {
                Ok(()) => log(&format!(
                    "{what}: NONE after {waited} ms (offset {} committed, high watermark {})",
                    pending.offset(),
                    cluster.leader().high_watermark().unwrap_or(-1)
                )),
                Err(error) => log(&format!("{what}: {error}")),
            }
            Controller::voter_change_response(request, &outcome)
        }
    };
    drop(cluster);
    record(shared, peer, request, &response);
    let mut out = BytesMut::new();
    if let Err(e) = connection.send(&response, &mut out) {
        log(&format!("{what}: cannot send the answer: {e}"));
        return false;
    }
    if let Err(e) = stream.write_all(&out) {
        log(&format!("{what}: write failed: {e}"));
        return false;
    }
    true
}

/// One line of the `--trace` file.
fn record(shared: &Shared, peer: &str, request: &IncomingRequest, response: &ResponseFrame) {
    let Some(trace) = &shared.trace else {
        return;
    };
    let line = json!({
        "time": now_ms(),
        "peer": peer,
        "request": request.to_json().unwrap_or_else(|e| json!(e.to_string())),
        "response": response.to_json().unwrap_or_else(|e| json!(e.to_string())),
    });
    let mut file = lock(trace);
    let written = serde_json::to_writer(&mut *file, &line)
        .map_err(std::io::Error::from)
        .and_then(|()| file.write_all(b"\n"))
        .and_then(|()| file.flush());
    if let Err(e) = written {
        log(&format!("cannot write the trace: {e}"));
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
    eprintln!(
        "quorum serve: [{:02}:{:02}:{:02}.{:03}] {message}",
        day / 3_600_000,
        day / 60_000 % 60,
        day / 1_000 % 60,
        day % 1_000
    );
}
