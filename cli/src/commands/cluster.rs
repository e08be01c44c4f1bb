//! `kafka-codec cluster`: the in-memory Kafka cluster of `kafka-codec-cluster` as a process,
//! for clients in other languages and processes. It runs until killed.

use crate::common::{host_and_port, Failure, Run};
use kafka_codec_cluster::dispatch::Reply;
use kafka_codec_cluster::features::TransactionVersion;
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::sasl::SaslUser;
use kafka_codec_cluster::{Cluster, Served};
use kafka_codec_server::limits::{raise_fd_limit, ServerLimits};
use kafka_codec_server::scrape::{self, MetricsListen};
use kafka_codec_server::tls::ListenTls;
use std::sync::Arc;

/// Run a Kafka cluster in memory: N brokers that real clients produce to and fetch from.
///
/// It serves topics, Produce (idempotent and transactional producers included), Fetch,
/// ListOffsets, classic and KIP-848 consumer groups, transactions and the admin APIs of
/// `kafka-codec-cluster`'s README (configs with Kafka's defaults included) at every version
/// this build knows, or as an older release did (`--as-version`); the README lists what is
/// not served yet: share groups and more. With --sasl every client must authenticate
/// (SASL_PLAINTEXT, or SASL_SSL with --listen-tls-cert/--listen-tls-key). The first line on
/// stderr names the bootstrap servers, then one line per request follows; everything is in
/// memory and goes when the process ends.
#[derive(Debug, clap::Args)]
pub struct ClusterCommand {
    /// How many brokers (0 only with --controllers).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(0..=64))]
    brokers: u16,
    /// How many KRaft controllers (node ids 3000, 3001, …), each on a listener of its own,
    /// all voters, the first leading: they answer what Kafka's controllers answer admin
    /// tools with `--bootstrap-controller` (DescribeCluster, DescribeQuorum v0-v3,
    /// AddRaftVoter, RemoveRaftVoter, UnregisterController), on the crate's KRaft leader model. The second stderr
    /// line names them.
    #[arg(long, value_name = "M", default_value_t = 0,
          value_parser = clap::value_parser!(u16).range(0..=16))]
    controllers: u16,
    /// The first broker's address; broker i listens on PORT+i and controller j on
    /// PORT+N+j. Port 0: each takes any free port (the first lines name them).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    listen: String,
    /// Answer as this Kafka release's brokers did, 0.8 to 4.4 (`2.8`; `0.10` is 0.10.0, and
    /// 0.10.1, 0.10.2 have their own; its ZooKeeper-mode broker up to 3.2, its KRaft broker
    /// from 3.3): ApiVersions lists the APIs that broker listed at that release's versions,
    /// another API or a request above them closes the connection, and 0.8 and 0.9 close it
    /// on ApiVersions. Default:
    /// every version this build knows, the newest release's and those 4.0 removed.
    #[arg(long, value_name = "X.Y")]
    as_version: Option<Release>,
    /// The transaction version ApiVersions finalizes (`transaction.version`, 4.0 and
    /// later): 2 (KIP-890: Produce adds partitions, EndTxn bumps the epoch), Kafka 4.4's
    /// default, or 1. Clients such as the Java producer pick their protocol by it; the
    /// cluster serves both.
    #[arg(long, value_name = "1|2", default_value_t = 2,
          value_parser = clap::value_parser!(i16).range(1..=2))]
    transaction_version: i16,
    /// Serve client metrics (KIP-714: GetTelemetrySubscriptions, PushTelemetry), as a Kafka
    /// broker does only with a client telemetry receiver configured; off by default, as
    /// Kafka's default. Subscriptions are CLIENT_METRICS config resources.
    #[arg(long)]
    client_telemetry: bool,
    /// A static setting of every broker, as in Kafka's `server.properties` (repeatable):
    /// `auto.create.topics.enable=false` stops Metadata from creating the topics it is asked
    /// for (on by default, as in Kafka); `num.partitions=N` and
    /// `default.replication.factor=N` are what a topic gets when CreateTopics gives -1 or
    /// Metadata creates it (1 and 1 by default); `auto.leader.rebalance.enable` and
    /// `leader.imbalance.check.interval.seconds` drive the automatic leader rebalance;
    /// `replica.fetch.wait.max.ms` is how long an unfenced broker takes to rejoin the ISRs;
    /// `delegation.token.*` are the delegation tokens' key and lifetimes.
    /// DescribeConfigs shows them as STATIC_BROKER_CONFIG. Another name, or a bad value, is
    /// refused at start.
    #[arg(long, value_name = "NAME=VALUE")]
    broker_config: Vec<String>,
    /// How long a stopped broker (`POST /brokers/ID/stop` on --control) keeps its
    /// partitions before it is fenced, as Kafka's `broker.session.timeout.ms`: then it leaves
    /// Metadata and every ISR, and its partitions get new leaders from the ISR or go
    /// offline. Restarting it unfences it.
    #[arg(long, value_name = "MS", default_value_t = 9000)]
    broker_session_timeout_ms: u64,
    /// Require SASL and add a user: `plain:USER:PASS`, `scram-sha-256:USER:PASS` or
    /// `scram-sha-512:USER:PASS` (repeat for more users). All three mechanisms are offered;
    /// a user logs in with its own. Without it no client authenticates.
    // Read as text and parsed in `run`: clap's own error would repeat the password.
    #[arg(long, value_name = "MECHANISM:USER:PASS")]
    sasl: Vec<String>,
    /// With --sasl, ACLs are enforced (CreateAcls/DescribeAcls/DeleteAcls manage them):
    /// this principal (`User:admin`, repeatable) may do everything without one, as Kafka's
    /// `super.users`.
    #[arg(long, value_name = "User:NAME", requires = "sasl")]
    super_user: Vec<String>,
    /// With --sasl, delegation tokens (KIP-48) are served: the secret key their HMACs are
    /// made with, Kafka's `delegation.token.secret.key` (their lifetimes: --broker-config
    /// `delegation.token.max.lifetime.ms` and `delegation.token.expiry.time.ms`). A client
    /// logs in with a token over SCRAM (`tokenauth=true`). Without it the token APIs answer
    /// DELEGATION_TOKEN_AUTH_DISABLED.
    #[arg(long, value_name = "KEY", requires = "sasl")]
    delegation_token_secret_key: Option<String>,
    #[command(flatten)]
    tls: ListenTls,
    #[command(flatten)]
    limits: ServerLimits,
    #[command(flatten)]
    metrics: MetricsListen,
    /// Serve the control surface as JSON over HTTP at http://HOST:PORT: fault rules
    /// (/rules), the request log (/log, /counts), stopping and restarting brokers, latency
    /// (/brokers), moving leaders (/leaders) and coordinators (/coordinators), the groups
    /// (/groups), expiring a member's session (/sessions/expire), fencing a producer
    /// (/producers/fence), the controllers' voters and followers' fetches (/quorum). Port
    /// 0: any free port (a line on stderr names it).
    /// kafka-codec-cluster's README has curl examples.
    #[arg(long, value_name = "HOST:PORT")]
    control: Option<String>,
    /// Fault rules in force from the start: a JSON file holding a rule or an array of rules,
    /// as POST /rules takes them.
    #[arg(long, value_name = "FILE")]
    faults: Option<std::path::PathBuf>,
}

impl Run for ClusterCommand {
    fn run(self) -> Result<(), Failure> {
        let (host, port) = host_and_port(&self.listen)?;
        let sasl_users = self
            .sasl
            .iter()
            .map(|user| {
                user.parse::<SaslUser>()
                    .map_err(|e| Failure::Usage(format!("--sasl: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if self.brokers == 0 && self.controllers == 0 {
            return Err(Failure::Usage(
                "--brokers 0 needs --controllers: a cluster has a node".into(),
            ));
        }
        let brokers = usize::from(self.brokers);
        let nodes = self.brokers + self.controllers;
        let ports: Vec<u16> = if port == 0 {
            Vec::new()
        } else {
            (0..nodes)
                .map(|i| port.checked_add(i))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    Failure::Usage(format!(
                        "--listen {}: {nodes} brokers and controllers from port {port} run \
                         past 65535",
                        self.listen
                    ))
                })?
        };
        // The certificate and key are read here, so that a bad one is said before anything
        // listens; the cluster reads them again as it builds its listeners.
        self.tls.config()?;
        let (broker_ports, controller_ports) = ports.split_at(ports.len().min(brokers));
        let (broker_ports, controller_ports) = (broker_ports.to_vec(), controller_ports.to_vec());
        let metrics_listener = self.metrics.bind()?;
        let control_listener = self
            .control
            .as_deref()
            .map(|address| kafka_codec_server::listen::listen_as("--control", address))
            .transpose()?;
        let rules = match &self.faults {
            None => Vec::new(),
            Some(path) => read_faults(path)?,
        };
        let broker_settings = self
            .broker_config
            .iter()
            .map(|setting| {
                let (name, value) = setting.split_once('=').ok_or_else(|| {
                    Failure::Usage(format!("--broker-config {setting}: not NAME=VALUE"))
                })?;
                kafka_codec_cluster::configs::check_static_setting(name, value)
                    .map_err(|e| Failure::Usage(format!("--broker-config {setting}: {e}")))?;
                Ok((name.to_owned(), value.to_owned()))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        // Each connection holds one descriptor.
        let max_connections = self.limits.max_connections(raise_fd_limit(), 1);
        fix_mmap_threshold();
        // One thread serves every connection: a request's work is short and under the
        // cluster's one state lock anyway, so more workers mostly added wake-ups between
        // threads (and their stacks and allocator arenas, and a hand-off before the first
        // answer); the clients beside it get the other cores.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Peer(format!("cannot start the cluster's threads: {e}")))?;
        runtime.block_on(async {
            let mut builder = Cluster::builder().broker_session_timeout(
                std::time::Duration::from_millis(self.broker_session_timeout_ms),
            );
            for (name, value) in &broker_settings {
                builder = builder.broker_config(name, value);
            }
            if let Some(version) = TransactionVersion::from_level(self.transaction_version) {
                builder = builder.transaction_version(version);
            }
            builder = builder.client_telemetry(self.client_telemetry);
            if let Some(release) = self.as_version {
                builder = builder.as_version(release);
            }
            for rule in rules {
                builder = builder.rule(rule);
            }
            for user in sasl_users {
                builder = builder.sasl(user);
            }
            for principal in self.super_user {
                builder = builder.super_user(principal);
            }
            if let Some(key) = &self.delegation_token_secret_key {
                builder = builder.delegation_token_secret_key(key);
            }
            if self.tls.listen_tls_cert.is_some() {
                builder = builder.listen_tls(self.tls.clone());
            }
            let cluster = builder
                .brokers(brokers)
                .controllers(usize::from(self.controllers))
                .host(host)
                .ports(broker_ports)
                .controller_ports(controller_ports)
                .memory_budget(self.limits.memory_budget)
                .max_connections(max_connections)
                .idle_timeout(self.limits.idle_timeout())
                .on_request(log_request)
                .build()
                .await
                .map_err(|e| match e.kind() {
                    // A setting the builder refuses (a broker config's value out of range).
                    std::io::ErrorKind::InvalidInput => Failure::Usage(e.to_string()),
                    _ => Failure::Peer(format!("cannot listen on {}: {e}", self.listen)),
                })?;
            let bootstrap = cluster.bootstrap();
            crate::common::log_line(format_args!(
                "kafka-codec cluster: bootstrap {}",
                if bootstrap.is_empty() {
                    "(none: --brokers 0)"
                } else {
                    &bootstrap
                }
            ));
            if !cluster.controllers().is_empty() {
                crate::common::log_line(format_args!(
                    "kafka-codec cluster: controllers {} (--bootstrap-controller)",
                    cluster.bootstrap_controllers()
                ));
            }
            if let Some((listener, address)) = metrics_listener {
                scrape::spawn(
                    listener,
                    Arc::clone(cluster.metrics()),
                    Arc::clone(cluster.budget()),
                    move |line| {
                        crate::common::log_line(format_args!(
                            "kafka-codec cluster: metrics {address}: {line}"
                        ))
                    },
                )
                .map_err(|e| Failure::Peer(format!("cannot listen on {address}: {e}")))?;
                crate::common::log_line(format_args!(
                    "kafka-codec cluster: metrics on http://{address}/metrics"
                ));
            }
            if let Some((listener, address)) = control_listener {
                let listener = tokio::net::TcpListener::from_std(listener)
                    .map_err(|e| Failure::Peer(format!("cannot listen on {address}: {e}")))?;
                cluster.serve_control(listener);
                crate::common::log_line(format_args!(
                    "kafka-codec cluster: control on http://{address}"
                ));
            }
            // Serves until the process is killed; the cluster stops with it.
            std::future::pending::<()>().await;
            Ok(())
        })
    }
}

/// One line per request on stderr, as `quorum serve` writes them: when, who, which request,
/// which broker, and what became of it.
fn log_request(served: &Served<'_>) {
    let request = served.request;
    let client = request.header.client_id.as_deref().unwrap_or("-");
    let outcome = match served.reply {
        Reply::Respond(_) => "answered".to_owned(),
        Reply::Nothing => "no response (acks 0)".to_owned(),
        Reply::Close(why) => format!("{why}; closing the connection"),
    };
    crate::common::log_line(format_args!(
        "kafka-codec cluster: [{}] {} {client} #{} {} v{} to {} {}: {outcome}",
        humantime::format_rfc3339_millis(std::time::SystemTime::now()),
        served.peer,
        request.correlation_id(),
        request.api_key(),
        request.api_version,
        if served.controller {
            "controller"
        } else {
            "broker"
        },
        served.node_id,
    ));
}

/// Allocations of at least this many bytes get their own mapping from the allocator.
const MMAP_THRESHOLD: usize = 128 * 1024;

/// Keeps glibc's malloc at a fixed mmap threshold ([`MMAP_THRESHOLD`], its initial value).
/// By default glibc raises the threshold to the size of each mapped block freed: once the
/// retention cap drops its first ~1 MiB batch, every later batch comes from the threads'
/// heaps, where the holes left by dropped batches are kept, so the process grew to about
/// 690 MiB after 1 GiB was produced to one partition capped at 256 MiB (benches/README.md,
/// `benches/cluster/run.sh`); at a fixed threshold a dropped batch's memory goes back to the
/// system at once (about 360 MiB: the cap, the request log and the buffers). Returns whether
/// the allocator took the setting (always false on another allocator or libc).
fn fix_mmap_threshold() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a parameter of glibc's allocator, under the allocator's
    // own lock (it is safe to call from any thread at any time); the value is a constant in
    // the range glibc accepts (at most HEAP_MAX_SIZE / 2, 32 MiB on 64-bit).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// The rules of a `--faults` file.
fn read_faults(path: &std::path::Path) -> Result<Vec<kafka_codec_cluster::control::Rule>, Failure> {
    let shown = path.display();
    let text = std::fs::read(path)
        .map_err(|e| Failure::Usage(format!("--faults {shown}: cannot read it: {e}")))?;
    let value: kafka_codec::serde_json::Value = kafka_codec::serde_json::from_slice(&text)
        .map_err(|e| Failure::Usage(format!("--faults {shown}: not JSON: {e}")))?;
    kafka_codec_cluster::control::json::rules_from_json(&value)
        .map_err(|e| Failure::Usage(format!("--faults {shown}: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_the_fixed_mmap_threshold() {
        assert!(super::fix_mmap_threshold());
    }
}
