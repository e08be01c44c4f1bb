//! `kafka-codec tap`: a transparent TCP (or TLS) proxy in front of a Kafka broker that logs
//! every request and response as JSON.
//!
//! Connections are tokio tasks on an I/O runtime; each connection's logger is a task on a
//! second runtime, the decoding threads (at a lower scheduling priority), so that decoding
//! and logging never stand in the way of forwarding. No thread is started after the tap
//! starts. Everything a connection holds is charged to one memory budget for the process,
//! and the number of connections is capped; see `crate::net`.
//!
//! Modules: [`framing`] finds frame boundaries on the forwarding path, [`pump`] moves one
//! direction, [`connection`] runs one connection, [`events`] is what pumps tell loggers,
//! [`log`] decodes and writes the lines, [`policy`] decides what the tap answers itself
//! (`--deny-api`, `--deny-topic`), [`rewrite`] changes responses (`--rewrite-brokers`,
//! `--clamp-versions`, merged denials), [`stats`] the byte counts of a `close` line.
//! `decode pcap` (`commands::pcap`) feeds the same framer and logger from captured packets.

// The log writer and what feeds it are shared with `decode pcap`, its second producer.
pub(crate) mod config;
mod connection;
pub(crate) mod events;
pub(crate) mod framing;
pub(crate) mod log;
mod policy;
mod proxy;
mod pump;
mod rewrite;
pub(crate) mod stats;

use crate::common::{listen, Failure, Run};
use config::LogArgs;
use connection::Target;
use kafka_codec_server::accept::Acceptor;
use kafka_codec_server::budget::Budget;
use kafka_codec_server::limits::{raise_fd_limit, ServerLimits};
use kafka_codec_server::metrics::Metrics;
use kafka_codec_server::registry::Registry;
use kafka_codec_server::scrape::{self, MetricsListen};
use kafka_codec_server::stream::{self, Resolver};
use kafka_codec_server::tls::{ListenTls, UpstreamTls};
use log::Log;
use proxy::Proxy;
use rewrite::{split_host_port, Brokers};
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::net::TcpListener;

/// Proxy Kafka traffic to a broker and log each request and response as a JSON line.
///
/// Every byte is forwarded unchanged and in order, in both directions (unless
/// --rewrite-brokers, --clamp-versions, --deny-api or --deny-topic); decoding happens beside the forwarding, never in its way. Each
/// request/response pair becomes one line: time, connection, correlation id, API, version,
/// latency, and both messages in Kafka's JSON form. A frame that does not decode is forwarded
/// all the same and logged with the error and its first bytes in hex. When a connection
/// closes, a line gives the byte counts and CRC-32C checksums of each direction as received
/// and as forwarded.
///
/// Credentials are not logged: SASL authentication bytes, raw SASL tokens, password-type
/// config values, SCRAM salts and salted passwords and delegation-token HMACs are replaced
/// by a marker with their length, and the line names the paths replaced (--log-secrets shows
/// them).
///
/// Clients find brokers through the addresses in Metadata responses and then connect there
/// directly, past the tap. Either make the broker advertise the tap's address
/// (advertised.listeners=PLAINTEXT://TAP_HOST:TAP_PORT on a listener the tap forwards to),
/// or let the tap rewrite those addresses (--rewrite-brokers).
///
/// Limits (all connections together): --max-connections, --idle-timeout, --memory-budget;
/// per connection: --max-frame (frames kept for the log), --max-in-flight. Prometheus
/// metrics (requests by API, bytes, latency, connections, memory): --metrics-listen.
#[derive(Debug, clap::Args)]
pub struct Tap {
    /// The address clients connect to (port 0: any free port; the first line on stderr and
    /// the log's `listen` line name it).
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// The broker to forward to.
    #[arg(long, value_name = "HOST:PORT")]
    upstream: String,
    /// Where the JSON lines go: a file (created or truncated), or standard output for `-`.
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    log: PathBuf,
    /// Forward only: decode nothing and write no log (limits, TLS and --rewrite-brokers
    /// still apply).
    #[arg(long, conflicts_with_all = ["records", "log_secrets"])]
    no_log: bool,
    /// Put the tap in place of every broker address in Metadata, FindCoordinator and
    /// DescribeCluster responses (and the new-leader endpoints of Produce, Fetch, ShareFetch
    /// and ShareAcknowledge), so that clients reach the whole cluster through the tap.
    ///
    /// The --upstream address is served by --listen; every other broker gets its own
    /// listener on the same interface, on a free port, opened when a response first names
    /// it (with TLS if --listen-tls-cert is given). Those responses are held until complete
    /// and encoded again; everything else is forwarded byte for byte.
    #[arg(long)]
    rewrite_brokers: bool,
    /// The host put into rewritten responses (default: the --listen host; needed when that
    /// is a wildcard such as 0.0.0.0).
    #[arg(long, value_name = "HOST", requires = "rewrite_brokers")]
    advertised_host: Option<String>,
    /// Show clients only the API versions this tool decodes: each ApiVersions response is
    /// held, and every API's range narrowed to the intersection of the broker's and this
    /// tool's (an API it does not know is removed), so that every later frame decodes. The
    /// pair's line lists what was narrowed and dropped (`rewritten.clampedVersions`).
    /// Without it, newer versions and unknown APIs pass untouched and are logged as not
    /// decoded.
    #[arg(long)]
    clamp_versions: bool,
    /// Answer requests of these APIs (names or keys, as `kafka-codec apis` lists them;
    /// repeatable) with the API's authorization error, never forwarding them:
    /// TOPIC_AUTHORIZATION_FAILED per partition or topic for the topic APIs,
    /// GROUP_AUTHORIZATION_FAILED for group APIs, TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
    /// transaction APIs, CLUSTER_AUTHORIZATION_FAILED otherwise, in the response's top-level
    /// error code.
    #[arg(long, value_name = "NAME[,NAME...]", value_delimiter = ',',
          value_parser = crate::common::parse_api_key)]
    deny_api: Vec<kafka_codec::ApiKey>,
    /// Deny the topics this glob matches (`*`, `?`, `[a-z]`; repeatable) in Produce, Fetch,
    /// ListOffsets, DeleteRecords, CreateTopics, DeleteTopics, CreatePartitions and the topic
    /// resources of DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: the tap
    /// answers for them with TOPIC_AUTHORIZATION_FAILED and forwards the rest of the request
    /// (split, with the same correlation id; the broker's answer is merged with the denials);
    /// a request with only denied topics is answered by the tap; the denied topics of a
    /// Produce with acks=0 are dropped. ApiVersions responses are then capped at Produce and Fetch v12, the last
    /// versions that name their topics; a topic a request names only by id is denied.
    #[arg(long, value_name = "GLOB")]
    deny_topic: Vec<String>,
    #[command(flatten)]
    log_args: LogArgs,
    #[command(flatten)]
    limits: ServerLimits,
    #[command(flatten)]
    listen_tls: ListenTls,
    #[command(flatten)]
    upstream_tls: UpstreamTls,
    #[command(flatten)]
    metrics: MetricsListen,
}

/// Threads for each of the two runtimes: as many as the machine runs at once.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Lowers the calling thread's scheduling priority (Linux: per thread), so that forwarding
/// goes first when decoding keeps every core busy.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` has no preconditions; `setpriority` on our own thread id only changes
    // this thread's nice value, and its failure is harmless (ignored).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

impl Run for Tap {
    fn run(self) -> Result<(), Failure> {
        if split_host_port(&self.upstream).is_none() {
            return Err(Failure::Usage(format!(
                "--upstream {:?} needs a port: HOST:PORT, such as {}:9092",
                self.upstream, self.upstream
            )));
        }
        let fd_limit = raise_fd_limit();
        let max_connections = self.limits.max_connections(fd_limit, 2);
        let listen_tls = self.listen_tls.acceptor()?;
        let upstream_tls = self.upstream_tls.client()?;
        let io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads())
            .max_blocking_threads(1)
            .thread_name("kafka-codec-io")
            .enable_all()
            .build()
            .map_err(|e| Failure::Peer(format!("cannot start the I/O threads: {e}")))?;
        let decode = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads())
            .max_blocking_threads(1)
            .thread_name("kafka-codec-decode")
            .on_thread_start(lower_priority)
            .enable_time()
            .build()
            .map_err(|e| Failure::Peer(format!("cannot start the decoding threads: {e}")))?;
        let resolver = Resolver::start()
            .map_err(|e| Failure::Peer(format!("cannot start the resolver thread: {e}")))?;
        let (listener, local) = listen(&self.listen)?;
        let metrics_listener = self.metrics.bind()?;
        let out: Box<dyn io::Write + Send> = if self.log.as_os_str() == "-" {
            Box::new(io::stdout())
        } else {
            let file = File::create(&self.log)
                .map_err(|e| Failure::Input(format!("cannot write {}: {e}", self.log.display())))?;
            Box::new(BufWriter::new(file))
        };
        let advertised_host = if self.rewrite_brokers {
            Some(match &self.advertised_host {
                Some(host) => host.clone(),
                None if local.ip().is_unspecified() => {
                    return Err(Failure::Usage(format!(
                        "--rewrite-brokers with --listen {} needs --advertised-host: clients \
                         cannot connect to a wildcard address",
                        self.listen
                    )))
                }
                None => local.ip().to_string(),
            })
        } else {
            None
        };
        let options = self.log_args.decode_options();
        self.log_args.warn_if_logging_secrets("tap");
        let rules = Arc::new(
            policy::Rules::new(self.deny_api.clone(), self.deny_topic.clone(), options)
                .map_err(Failure::Usage)?,
        );
        let budget = Budget::new(self.limits.memory_budget);
        let registry = Registry::new(max_connections);
        let metrics = Metrics::new(Arc::clone(&budget), max_connections);
        let upstream = self.upstream.clone();
        let proxy = Arc::new_cyclic(|weak: &Weak<Proxy>| {
            let brokers = advertised_host.map(|host| {
                let weak = weak.clone();
                Arc::new(Brokers::new(
                    host,
                    local,
                    &upstream,
                    Box::new(move |listener, upstream| {
                        if let Some(proxy) = weak.upgrade() {
                            open_listener(&proxy, listener, upstream);
                        }
                    }),
                ))
            });
            Proxy {
                config: Arc::new(self.log_args.config(!self.no_log, self.clamp_versions)),
                log: (!self.no_log).then(|| Arc::new(Log::new(out))),
                brokers,
                rules,
                budget,
                registry,
                metrics,
                resolver,
                listen_tls,
                upstream_tls,
                decode: decode.handle().clone(),
                idle_timeout: self.limits.idle_timeout(),
                next_connection: AtomicU64::new(1),
                upstream: upstream.clone(),
            }
        });
        io.block_on(async {
            let listener = TcpListener::from_std(listener)
                .map_err(|e| Failure::Peer(format!("cannot listen on {}: {e}", self.listen)))?;
            crate::common::log_line(format_args!(
                "kafka-codec tap: listening on {local}, forwarding to {} (at most {max_connections} \
                 connections, --memory-budget {} bytes)",
                self.upstream,
                proxy.budget.limit()
            ));
            if let Some((listener, address)) = metrics_listener {
                scrape::spawn(
                    listener,
                    Arc::clone(&proxy.metrics),
                    Arc::clone(&proxy.budget),
                    move |line| crate::common::log_line(format_args!("kafka-codec tap: metrics {address}: {line}")),
                )
                .map_err(|e| Failure::Peer(format!("cannot listen on {address}: {e}")))?;
                crate::common::log_line(format_args!("kafka-codec tap: metrics on http://{address}/metrics"));
            }
            probe_upstream(&proxy).await;
            if let Some(log) = &proxy.log {
                log::listening(log, local, &self.upstream, proxy.listen_tls.is_some());
            }
            tokio::spawn(relieve_memory_pressure(Arc::clone(&proxy)));
            accept(proxy, listener, self.upstream.clone()).await;
            Ok(())
        })
    }
}

/// Says at start when the upstream cannot be reached, rather than only in the log of the
/// first client.
async fn probe_upstream(proxy: &Proxy) {
    let probe = stream::connect(
        &proxy.resolver,
        &proxy.upstream,
        Duration::from_secs(3),
        None,
    )
    .await;
    if let Err(e) = probe {
        crate::common::log_line(format_args!(
            "kafka-codec tap: warning: the upstream {} cannot be reached now ({e}); clients \
             are accepted and refused until it can",
            proxy.upstream
        ));
    }
}

/// Closes a connection that holds memory each time the budget asks for room.
async fn relieve_memory_pressure(proxy: Arc<Proxy>) {
    loop {
        proxy.budget.pressure().await;
        if let Some(id) = proxy.registry.evict_for_memory() {
            crate::common::log_line(format_args!(
                "kafka-codec tap: --memory-budget ({} bytes, {} in use) is spent; closing \
                 connection {id}, the one holding memory that has gone longest without a \
                 complete request",
                proxy.budget.limit(),
                proxy.budget.in_use()
            ));
        }
    }
}

/// Serves a listener opened for a broker found by --rewrite-brokers.
fn open_listener(proxy: &Arc<Proxy>, listener: std::net::TcpListener, upstream: String) {
    match TcpListener::from_std(listener) {
        Ok(listener) => {
            if let (Some(log), Ok(local)) = (&proxy.log, listener.local_addr()) {
                log::listening(log, local, &upstream, proxy.listen_tls.is_some());
            }
            tokio::spawn(accept(Arc::clone(proxy), listener, upstream));
        }
        Err(e) => crate::common::log_line(format_args!(
            "kafka-codec tap: cannot serve a listener for {upstream}: {e}"
        )),
    }
}

/// Accepts clients for `upstream` forever, one task each.
async fn accept(proxy: Arc<Proxy>, listener: TcpListener, upstream: String) {
    let mut acceptor = Acceptor::new(listener);
    let local = acceptor
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    loop {
        let (client, peer) = acceptor
            .accept(|line| {
                crate::common::log_line(format_args!("kafka-codec tap: {local}: {line}"))
            })
            .await;
        let id = proxy.next_connection.fetch_add(1, Ordering::Relaxed);
        let (member, _evicted) = proxy.registry.join(id);
        let target = Target {
            listener: local,
            upstream: upstream.clone(),
        };
        tokio::spawn(connection::serve(
            Arc::clone(&proxy),
            id,
            member,
            client,
            peer,
            target,
        ));
    }
}
