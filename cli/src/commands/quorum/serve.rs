//! `kafka-codec quorum serve`: one KRaft controller of the cluster crate (`kafka-codec-cluster`)
//! behind a TCP (or TLS) listener, the rest of its quorum modelled.
//!
//! Controllers 1, 2 and 3 are the voters and 1, the one served, leads epoch 1; controller 4
//! runs as a spare that `add-controller` can add, and broker 100 reads the metadata log. Only
//! controller 1 has a socket; the others are modelled by the cluster
//! (`ClusterBuilder::modelled_controller`) and advertise names under `.invalid`. The
//! connections, the memory budget, the connection cap, idle timeouts and TLS are the
//! cluster's transport; this file says what to build and writes the log and the `--trace`.

use crate::common::{host_and_port, Failure, Run};
use clap::builder::RangedU64ValueParser;
use kafka_codec::conn::SupportedVersions;
use kafka_codec::json::redact;
use kafka_codec::json::{JsonOptions, JsonSink, JsonWriter};
use kafka_codec::messages::describe_quorum_response::{DescribeQuorumResponse, ReplicaState};
use kafka_codec::quorum::ReplicaKey;
use kafka_codec::serde_json::{self, json};
use kafka_codec::{ApiKey, ErrorCode, Request, Response, ResponseFrame, VersionRange};
use kafka_codec_cluster::dispatch::Reply;
use kafka_codec_cluster::quorum::ids;
use kafka_codec_cluster::{Cluster, Event, Served};
use kafka_codec_server::limits::{raise_fd_limit, ServerLimits};
use kafka_codec_server::metrics::Metrics;
use kafka_codec_server::scrape::{self, MetricsListen};
use kafka_codec_server::tls::ListenTls;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The controller served; it leads epoch 1.
const SERVED: i32 = 1;
/// The modelled voters, after the served one.
const MODELLED_VOTERS: [i32; 2] = [2, 3];
/// A modelled controller that runs but is not a voter.
const SPARE_CONTROLLER: i32 = 4;
/// A modelled broker, reading the metadata log as an observer.
const BROKER: i32 = 100;

/// Run a simulated KRaft quorum and answer as its leader, for admin tools.
///
/// Controllers 1, 2 and 3 are the voters and 1 leads; controller 4 and broker 100 fetch as
/// observers. It answers ApiVersions, DescribeCluster (the controller endpoints, for
/// `--bootstrap-controller`), DescribeQuorum v0-v3 and AddRaftVoter / RemoveRaftVoter,
/// which append a VotersRecord; followers fetch every second or two, so a voter change
/// commits a few seconds later, and only then is it answered, as Kafka's leader does. Kafka's
/// `kafka-metadata-quorum` works against it (it speaks DescribeQuorum v2) and so does
/// `kafka-codec quorum describe` (v3: committed voters). Everything is in memory; one line
/// per request goes to stderr. It is a controller of `kafka-codec cluster`'s kind, the
/// others modelled rather than listened on.
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

impl Run for Serve {
    fn run(self) -> Result<(), Failure> {
        let (host, port) = host_and_port(&self.listen)?;
        let max_connections = self.limits.max_connections(raise_fd_limit(), 1);
        // Read here, so that a bad certificate or key is said before anything listens; the
        // cluster reads them again as it builds its listener.
        let tls = self.tls.config()?.is_some();
        let metrics_listener = self.metrics.bind()?;
        let trace = match &self.trace {
            Some(path) => Some(Mutex::new(File::create(path).map_err(|e| {
                Failure::Input(format!("cannot write {}: {e}", path.display()))
            })?)),
            None => None,
        };
        // The trace counts its redactions in the cluster's metrics, which exist once built.
        let metrics: Arc<OnceLock<Arc<Metrics>>> = Arc::default();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max_blocking_threads(1)
            .thread_name("kafka-codec-quorum")
            .enable_all()
            .build()
            .map_err(|e| Failure::Peer(format!("cannot start the server's threads: {e}")))?;
        runtime.block_on(async {
            let mut builder = Cluster::builder()
                .brokers(0)
                .controllers(1)
                .first_controller_id(SERVED)
                .host(host)
                .controller_ports([port])
                .seed(self.seed)
                .quorum_fetch_interval(Duration::from_millis(u64::from(self.fetch_interval_ms)))
                .controller_stable_only(self.stable_only)
                .max_frame(self.max_frame)
                .memory_budget(self.limits.memory_budget)
                .max_connections(max_connections)
                .idle_timeout(self.limits.idle_timeout())
                .on_event(log_event);
            for id in MODELLED_VOTERS {
                builder = builder.modelled_controller(id, true);
            }
            builder = builder
                .modelled_controller(SPARE_CONTROLLER, false)
                .modelled_broker(BROKER);
            if tls {
                builder = builder.listen_tls(self.tls.clone());
            }
            let traced = Arc::clone(&metrics);
            let cluster = builder
                .on_request(move |served| {
                    log_request(served);
                    if let (Some(trace), Reply::Respond(response)) = (&trace, served.reply) {
                        record(trace, traced.get(), served, response);
                    }
                })
                .build()
                .await
                .map_err(|e| Failure::Peer(format!("cannot listen on {}: {e}", self.listen)))?;
            let _ = metrics.set(Arc::clone(cluster.metrics()));
            let local = cluster.controllers()[0].address;
            let address = format!("{}:{}", bracketed(host), local.port());
            let shared = cluster.shared();
            if let Some(quorum) = shared.quorum() {
                log(&format!(
                    "listening on {address}{} (seed {}): cluster {}, controller {} leads epoch {} \
                     of voters {}; controller {SPARE_CONTROLLER} and broker {BROKER} fetch as \
                     observers",
                    if tls { " with TLS" } else { "" },
                    self.seed,
                    quorum.cluster_id(),
                    quorum.leader().leader_id(),
                    quorum.leader().epoch(),
                    ids(quorum.leader().current_voter_set()),
                ));
            }
            log(&format!("advertised: {}", shared.controller_advertised));
            if !self.stable_only {
                log("DescribeQuorum v3 (committed voters) is provisional and advertised; --stable-only hides it");
            }
            log(&format!(
                "watch it: kafka-codec quorum describe --bootstrap-controller {address} [--replication]"
            ));
            if let Some((listener, address)) = metrics_listener {
                scrape::spawn(
                    listener,
                    Arc::clone(cluster.metrics()),
                    Arc::clone(cluster.budget()),
                    move |line| log(&format!("metrics {address}: {line}")),
                )
                .map_err(|e| Failure::Peer(format!("cannot listen on {address}: {e}")))?;
                log(&format!("metrics on http://{address}/metrics"));
            }
            // Serves until the process is killed; the cluster stops with it.
            std::future::pending::<()>().await;
            Ok(())
        })
    }
}

/// One line per request: who, which request, and what became of it.
fn log_request(served: &Served<'_>) {
    let request = served.request;
    let what = format!(
        "{} {} #{} {} v{}",
        served.peer,
        request.header.client_id.as_deref().unwrap_or("-"),
        request.correlation_id(),
        request.api_key(),
        request.api_version
    );
    match served.reply {
        Reply::Respond(response) => log(&format!("{what}: {}", summary(served, response))),
        Reply::Nothing => log(&format!("{what}: no response")),
        Reply::Close(why) => log(&format!("{what}: {why}; closing the connection")),
    }
}

/// What an answer says, in a few words.
fn summary(served: &Served<'_>, response: &ResponseFrame) -> String {
    let voter =
        |verb: &str, id: i32, directory| format!("{verb} {}", ReplicaKey::from_wire(id, directory));
    let voter_change = |what: String, code: i16, message: Option<&str>| {
        if code == 0 {
            return format!(
                "{what}: NONE after {} ms (committed)",
                served.elapsed.as_millis()
            );
        }
        let message = message.map(|m| format!(": {m}")).unwrap_or_default();
        format!("{what}: {}{message}", ErrorCode::from(code))
    };
    match (&served.request.body, &response.body) {
        (_, Response::ApiVersions(body)) if body.error_code != 0 => {
            let max = body
                .api_keys
                .iter()
                .find(|key| key.api_key == ApiKey::ApiVersions.key())
                .map_or(0, |key| key.max_version);
            format!(
                "{}, retry at v{max} or lower",
                ErrorCode::from(body.error_code)
            )
        }
        (_, Response::ApiVersions(body)) => {
            let ranges = body.api_keys.iter().map(|key| {
                let range = VersionRange::new(key.min_version, key.max_version);
                (key.api_key, range)
            });
            SupportedVersions::from_ranges(ranges).to_string()
        }
        (_, Response::DescribeCluster(body)) if body.error_code != 0 => {
            ErrorCode::from(body.error_code).to_string()
        }
        (_, Response::DescribeCluster(body)) => {
            let at = body
                .brokers
                .iter()
                .find(|b| b.broker_id == body.controller_id)
                .map_or_else(
                    || "no listener".to_owned(),
                    |b| format!("{}:{}", b.host, b.port),
                );
            format!(
                "cluster {}, controller {} at {at}",
                body.cluster_id, body.controller_id
            )
        }
        (_, Response::DescribeQuorum(body)) => summarize(body),
        (Request::AddRaftVoter(asked), Response::AddRaftVoter(body)) => voter_change(
            voter("add", asked.voter_id, asked.voter_directory_id),
            body.error_code,
            body.error_message.as_deref(),
        ),
        (Request::RemoveRaftVoter(asked), Response::RemoveRaftVoter(body)) => voter_change(
            voter("remove", asked.voter_id, asked.voter_directory_id),
            body.error_code,
            body.error_message.as_deref(),
        ),
        _ => "answered".into(),
    }
}

/// `leader 1, epoch 1, HW 57, voters {1, 2, 3}, committed {1, 2, 3}, observers {4, 100}`.
fn summarize(response: &DescribeQuorumResponse) -> String {
    let Some(partition) = response.topics.first().and_then(|t| t.partitions.first()) else {
        return "no partition".into();
    };
    if partition.error_code != 0 {
        return format!("{}", ErrorCode::from(partition.error_code));
    }
    let ids = |replicas: &[ReplicaState]| {
        let ids: Vec<String> = replicas.iter().map(|r| r.replica_id.to_string()).collect();
        format!("{{{}}}", ids.join(", "))
    };
    let committed = match &partition.committed_voters {
        Some(committed) => format!(", committed {}", ids(committed)),
        None => String::new(),
    };
    format!(
        "leader {}, epoch {}, HW {}, voters {}{committed}, observers {}",
        partition.leader_id,
        partition.leader_epoch,
        partition.high_watermark,
        ids(&partition.current_voters),
        ids(&partition.observers)
    )
}

/// What happened to a connection, a listener or the quorum.
fn log_event(event: &Event<'_>) {
    match event {
        Event::Connection { peer, message, .. } => log(&format!("{peer}: {message}")),
        Event::Server(message) | Event::Quorum(message) => log(message),
    }
}

/// One line of the `--trace` file.
fn record(
    trace: &Mutex<File>,
    metrics: Option<&Arc<Metrics>>,
    served: &Served<'_>,
    response: &ResponseFrame,
) {
    let request = served.request;
    let api = request.api_key();
    let peer = served.peer.to_string();
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
    if let (true, Some(metrics)) = (redacted > 0, metrics) {
        metrics.redacted(api, redacted);
    }
    line.extend_from_slice(b"}\n");
    // A panicking connection task must not stop the others from tracing.
    let mut file = trace
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let written = file.write_all(&line).and_then(|()| file.flush());
    if let Err(e) = written {
        log(&format!("cannot write the trace: {e}"));
    }
}

/// A message's JSON appended to `out` with its secrets replaced (the trace is a log too), or
/// the error that stopped it as a JSON string; how many secrets were replaced.
fn redacted_json(
    out: &mut Vec<u8>,
    api: ApiKey,
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

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
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
