//! A Kafka cluster in memory, for tests: N brokers on 127.0.0.1 that real clients
//! (librdkafka, the Java client, kafka-python, this crate's own `conn`) produce to and fetch
//! from, started in a few milliseconds and stopped when the [`Cluster`] is dropped.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let cluster = kafka_codec_cluster::Cluster::builder().brokers(3).build().await?;
//! println!("bootstrap servers: {}", cluster.bootstrap());
//! # Ok(())
//! # }
//! ```
//!
//! Every request takes one path: the transport ([`broker`]: accept, TLS, the memory budget
//! and connection cap of `kafka-codec-server`) reads a frame, the library's
//! `ServerConnection` decodes it, [`dispatch::dispatch`] decides what happens to it (the one
//! place where version limits, the fault rules and the request log of [`control`] sit) and
//! calls the API's handler (one file per API under [`handlers`]), which changes the
//! cluster's [`state`]; the response is encoded on the way back. KRaft controllers
//! ([`ClusterBuilder::controllers`]) take the same path, with the handlers a controller
//! serves ([`controllers`]) answering from the [`quorum`]. What is served, and what is not yet,
//! is in the README.

pub mod acls;
pub mod authorizer;
pub mod broker;
pub mod client_metrics;
pub mod clock;
pub mod configs;
pub mod consumer_groups;
pub mod control;
pub mod controllers;
pub mod dispatch;
pub mod features;
pub mod fetch_sessions;
pub mod group_configs;
pub mod group_members;
pub mod groups;
pub mod handlers;
pub mod legacy;
pub mod producers;
pub mod quorum;
pub mod quotas;
pub mod release;
pub mod sasl;
pub mod share_groups;
pub mod state;
pub mod streams_assignor;
pub mod streams_groups;
pub mod tokens;
pub mod transactions;

use control::{ControlHandle, Rule};
use dispatch::Reply;
use kafka_codec::conn::{IncomingRequest, SupportedVersions};
use kafka_codec::{DecodeLimits, DecodeOptions, TrailingBytes};
use kafka_codec_server::budget::{Budget, DEFAULT_BUDGET};
use kafka_codec_server::metrics::Metrics;
use kafka_codec_server::registry::Registry;
use release::Release;
use sasl::{SaslUser, Users};
use state::{Retention, State};
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};

/// One broker's id and address, as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerAddress {
    /// Its node id (0, 1, …).
    pub node_id: i32,
    /// The address it listens on.
    pub address: SocketAddr,
}

/// One request as the cluster dealt with it, for a request log
/// ([`ClusterBuilder::on_request`]).
#[derive(Debug)]
pub struct Served<'a> {
    /// The broker (or controller) that received it.
    pub node_id: i32,
    /// Whether that node is a controller.
    pub controller: bool,
    /// The client's address.
    pub peer: SocketAddr,
    /// The request.
    pub request: &'a IncomingRequest,
    /// What the cluster did: answered, answered nothing (acks 0), or closed the connection.
    pub reply: &'a Reply,
    /// How long the cluster took to decide (a voter change waits for its commit).
    pub elapsed: Duration,
}

/// A function every request is shown to after it is dealt with.
#[derive(Clone)]
pub struct RequestObserver(Arc<dyn Fn(&Served<'_>) + Send + Sync>);

/// Something the cluster did that no request shows, for a server's log
/// ([`ClusterBuilder::on_event`]).
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// To one connection of node `node_id`: its TLS handshake failed, its client presented
    /// a certificate, it sent what does not decode, a read or write failed, or it was closed
    /// for a limit (the connection cap, the memory budget, the idle timeout).
    Connection {
        /// The broker or controller the connection is to.
        node_id: i32,
        /// The client's address.
        peer: SocketAddr,
        /// What happened, one line.
        message: &'a str,
    },
    /// To a listener or the memory budget: accepting failed (out of descriptors) or works
    /// again, or a connection was closed to free memory.
    Server(&'a str),
    /// The controllers' quorum moved by itself: the high watermark became known, the
    /// committed voters changed, a new leader took over.
    Quorum(&'a str),
}

/// A function every [`Event`] is shown to.
#[derive(Clone)]
pub struct EventObserver(Arc<dyn Fn(&Event<'_>) + Send + Sync>);

impl std::fmt::Debug for EventObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventObserver")
    }
}

impl std::fmt::Debug for RequestObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestObserver")
    }
}

/// What every broker and connection of a cluster shares.
#[derive(Debug)]
pub struct Shared {
    state: Mutex<State>,
    /// Woken on every append, for fetches waiting on `MaxWaitMs`.
    pub(crate) appended: Notify,
    /// The brokers, by node id: those of the build and those added since
    /// ([`Cluster::add_broker`]), less those removed. Read once per request that lists
    /// them (Metadata, DescribeCluster, FindCoordinator), written only by adding or removing.
    brokers: std::sync::RwLock<Arc<Vec<BrokerAddress>>>,
    /// How many brokers the cluster was built with: the `N` of the default placement rules
    /// (partition `p` led by broker `p mod N`, coordinators by Kafka's hash `mod N`). It
    /// never changes, so adding a broker moves nothing, as on Kafka (a new broker leads what
    /// is moved to it); a removed broker's share goes to a successor ([`Cluster::remove_broker`]).
    pub placement_brokers: usize,
    /// The host brokers listen on (an added one too).
    pub(crate) host: String,
    /// How long a stopped broker stays unfenced ([`ClusterBuilder::broker_session_timeout`]).
    pub(crate) broker_session_timeout: Duration,
    /// How often the automatic leader rebalance runs (`None`: off).
    pub(crate) leader_rebalance: Option<Duration>,
    /// How long an unfenced broker takes to rejoin the ISRs.
    pub(crate) replica_catch_up: Duration,
    /// Brokers have no listener ([`ClusterBuilder::in_memory`]).
    pub(crate) in_memory: bool,
    /// The node id the next added broker gets.
    next_broker_id: std::sync::atomic::AtomicI32,
    /// The controllers, in node id order (the first leads at the start).
    pub controllers: Vec<BrokerAddress>,
    /// The KRaft quorum: of the controllers, or without them of the brokers (combined
    /// nodes); `None` only with neither.
    pub(crate) quorum: Option<Mutex<quorum::Quorum>>,
    /// Woken whenever the quorum moved (a fetch, an append, a voter change), for voter
    /// changes waiting to commit.
    pub(crate) quorum_moved: Notify,
    /// Wakes the quorum's clock ([`controllers::run_clock`]) after a voter change, so that
    /// it runs the fetches and appends on time until the change commits.
    pub(crate) quorum_clock: Notify,
    /// What a controller's ApiVersions lists.
    pub controller_advertised: SupportedVersions,
    /// The cluster id Metadata names.
    pub cluster_id: String,
    /// What ApiVersions lists: exactly the APIs that have a handler, at the versions of the
    /// release the cluster answers as.
    pub advertised: SupportedVersions,
    /// The Kafka release the cluster answers as (`None`: every version this crate knows).
    pub release: Option<Release>,
    /// The feature levels ApiVersions v3+ carries (the release's, with the transaction
    /// version chosen).
    pub features: features::Features,
    pub(crate) budget: Arc<Budget>,
    pub(crate) registry: Arc<Registry>,
    /// Requests, bytes, latencies and connections, counted as the tap and `quorum serve`
    /// count them; [`Cluster::metrics`] hands them to a Prometheus endpoint.
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) options: DecodeOptions,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) observer: Option<RequestObserver>,
    pub(crate) events: Option<EventObserver>,
    /// The group coordinators' state (classic groups and committed offsets).
    groups: Mutex<groups::Groups>,
    /// Share groups, their share partitions and sessions (taken before the state's lock
    /// when both are needed).
    share_groups: Mutex<share_groups::ShareGroups>,
    /// Woken when a share group member joins, for [`share_groups::run_timers`].
    pub(crate) share_groups_changed: Notify,
    /// Woken after every change to the groups, for the timers of [`groups::run_timers`].
    pub(crate) groups_changed: Notify,
    /// Woken when a transaction begins, for the timeouts of [`transactions::run_timers`].
    pub(crate) transactions_changed: Notify,
    /// Woken by every AlterPartitionReassignments, for its catch-up timer
    /// (`handlers::run_reassignment_timers`).
    pub(crate) reassignments_changed: Notify,
    /// The fault rules, the request log, each broker's switches.
    pub(crate) control: control::Control,
    /// Changes when the cluster is dropped: every task of it watches this and ends.
    pub(crate) stop: watch::Receiver<()>,
    /// Connection ids, unique in the cluster (the registry and the request log key by
    /// them), counted per cluster so that a run names them as the last one did.
    pub(crate) next_connection: std::sync::atomic::AtomicU64,
    /// Whether connections must authenticate with SASL (users were given).
    pub sasl: bool,
    /// The SASL users: PLAIN passwords and SCRAM credentials.
    users: Mutex<Users>,
    /// The ACLs (CreateAcls, DescribeAcls, DeleteAcls), enforced when SASL is on.
    acls: Mutex<acls::Acls>,
    /// Principals (`User:admin`) the ACLs do not bind.
    pub super_users: Vec<String>,
    /// The listeners' TLS, if they serve TLS.
    pub(crate) tls: Option<TlsAcceptor>,
    /// The client quotas (stored, not enforced).
    client_quotas: Mutex<quotas::ClientQuotas>,
    /// Client metrics subscriptions and instances (KIP-714).
    client_metrics: Mutex<client_metrics::ClientMetrics>,
    /// The feature levels UpdateFeatures finalized, replacing [`Shared::features`]' (a
    /// level of 0 removes the feature), and the epoch they were finalized at.
    feature_updates: Mutex<features::Updates>,
    /// Each node's fetch sessions, by node id.
    fetch_sessions: Mutex<std::collections::HashMap<i32, fetch_sessions::FetchSessions>>,
    /// The slots and bytes of each node's fetch session cache.
    fetch_session_limits: (usize, usize),
    /// The seed of the session ids ([`ClusterBuilder::seed`]), if runs must repeat.
    fetch_session_seed: Option<u64>,
}

/// A TLS listener's acceptor (of `kafka-codec-server`), shown by Debug without its keys.
#[derive(Clone)]
pub(crate) struct TlsAcceptor(pub(crate) kafka_codec_server::tls::Acceptor);

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsAcceptor")
    }
}

impl Shared {
    /// The cluster's state, locked. Never held across an await.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The groups, locked. Never held across an await, nor together with [`Shared::state`].
    pub fn groups(&self) -> MutexGuard<'_, groups::Groups> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The share groups, locked. Never held across an await; taken before
    /// [`Shared::state`] when both are needed, never with [`Shared::groups`].
    pub fn share_groups(&self) -> MutexGuard<'_, share_groups::ShareGroups> {
        self.share_groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Node `node_id`'s fetch sessions, locked (made at its first fetch: a broker added at
    /// run time gets its own). Never held across an await, nor together with another lock.
    pub fn fetch_sessions(&self, node_id: i32) -> fetch_sessions::NodeSessions<'_> {
        let mut nodes = self
            .fetch_sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let sessions = nodes.entry(node_id).or_insert_with(|| {
            let seed = self
                .fetch_session_seed
                .map(|seed| seed ^ (node_id as u64).wrapping_add(1));
            let (slots, bytes) = self.fetch_session_limits;
            let sessions = fetch_sessions::FetchSessions::new(slots, bytes, seed);
            // Forgotten whenever the node is stopped.
            match self.control.watch_up(node_id) {
                Ok(up) => sessions.follow(up),
                Err(_) => sessions,
            }
        });
        sessions.forget_if_stopped();
        fetch_sessions::NodeSessions::new(nodes, node_id)
    }

    /// The client metrics subscriptions and instances, locked. Never held across an await,
    /// nor together with another lock.
    pub fn client_metrics(&self) -> MutexGuard<'_, client_metrics::ClientMetrics> {
        self.client_metrics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The finalized feature levels now: the release's, with UpdateFeatures' changes.
    pub fn finalized_features(&self) -> features::Features {
        self.feature_updates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .apply(&self.features)
    }

    /// The offset of the metadata log's last record (the KRaft quorum's), after moving the
    /// quorum to now; `None` without a quorum.
    pub fn metadata_offset(&self) -> Option<i64> {
        let mut quorum = self.quorum()?;
        controllers::advance(self, &mut quorum, controllers::now_ms());
        Some(quorum.leader().log_end_offset() - 1)
    }

    /// Appends a record to the metadata log (a change the controller writes, such as a
    /// feature level), so that the epoch ApiVersions shows moves on.
    pub(crate) fn append_metadata_record(&self) {
        if let Some(mut quorum) = self.quorum() {
            let now = controllers::now_ms();
            controllers::advance(self, &mut quorum, now);
            let _ = quorum.leader_mut().append_data(1);
            for event in quorum.after_request(now) {
                self.event(Event::Quorum(&event));
            }
        }
    }

    /// UpdateFeatures' changes, locked. Never held across an await.
    pub(crate) fn feature_updates(&self) -> MutexGuard<'_, features::Updates> {
        self.feature_updates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The client quotas, locked. Never held across an await.
    pub fn client_quotas(&self) -> MutexGuard<'_, quotas::ClientQuotas> {
        self.client_quotas.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The SASL users, locked. Never held across an await.
    pub fn users(&self) -> MutexGuard<'_, Users> {
        self.users.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The ACLs, locked. Never held across an await.
    pub fn acls(&self) -> MutexGuard<'_, acls::Acls> {
        self.acls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The KRaft quorum, locked (the controllers', or the brokers' as combined nodes when
    /// there are no controllers; `None` only with neither), moved to now first: every fetch
    /// and append due since it last moved runs at its own time
    /// ([`Quorum::advance`](quorum::Quorum::advance)), so that an idle quorum need not be
    /// moved by a clock. Never held across an await, nor together with another lock.
    pub fn quorum(&self) -> Option<MutexGuard<'_, quorum::Quorum>> {
        let mut quorum = self.quorum_as_it_was()?;
        controllers::advance(self, &mut quorum, controllers::now_ms());
        Some(quorum)
    }

    /// The KRaft quorum, locked, where it last moved (for the clock, which moves it).
    pub(crate) fn quorum_as_it_was(&self) -> Option<MutexGuard<'_, quorum::Quorum>> {
        self.quorum
            .as_ref()
            .map(|quorum| quorum.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// After a voter change (or an operation that may start or end one): wakes what waits
    /// for a commit, and the clock.
    pub(crate) fn quorum_changed(&self) {
        self.quorum_moved.notify_waiters();
        self.quorum_clock.notify_one();
    }

    /// The brokers now: those of the build and those added since, less those removed.
    pub fn brokers(&self) -> Arc<Vec<BrokerAddress>> {
        Arc::clone(&self.brokers.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether `node_id` is a broker of the cluster now (not removed).
    pub fn is_broker(&self, node_id: i32) -> bool {
        self.brokers()
            .iter()
            .any(|broker| broker.node_id == node_id)
    }

    /// Whether node `node_id` is one of the controllers.
    pub fn is_controller(&self, node_id: i32) -> bool {
        self.controllers.iter().any(|c| c.node_id == node_id)
    }

    /// The address of node `node_id`, a broker or a controller.
    pub fn address(&self, node_id: i32) -> Option<SocketAddr> {
        self.brokers()
            .iter()
            .chain(&self.controllers)
            .find(|node| node.node_id == node_id)
            .map(|node| node.address)
    }

    /// The controller id a broker's Metadata and DescribeCluster name: a KRaft broker names
    /// a live broker (Kafka's `KRaftMetadataCache` picks one at random; clients cannot reach
    /// the controllers through a broker, KIP-590), here the first broker that is up, so runs
    /// repeat; -1 when none is.
    pub fn controller_for_clients(&self) -> i32 {
        self.brokers()
            .iter()
            .map(|broker| broker.node_id)
            .find(|&node| self.control.is_up(node))
            .unwrap_or(-1)
    }

    /// Shows `event` to the event observer, if there is one.
    pub(crate) fn event(&self, event: Event<'_>) {
        if let Some(events) = &self.events {
            (events.0)(&event);
        }
    }

    /// What ApiVersions lists on node `node_id`: the controller set on a controller.
    pub fn advertised_on(&self, node_id: i32) -> &SupportedVersions {
        if self.is_controller(node_id) {
            &self.controller_advertised
        } else {
            &self.advertised
        }
    }
}

/// A running cluster; dropping it stops its brokers and closes their connections.
#[derive(Debug)]
pub struct Cluster {
    shared: Arc<Shared>,
    /// Dropped with the cluster: every broker and connection task watches it and ends.
    _stop: watch::Sender<()>,
}

impl Cluster {
    /// A builder with the defaults: one broker on a free port of 127.0.0.1.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// The brokers' addresses, comma-separated, as clients take `bootstrap.servers`.
    pub fn bootstrap(&self) -> String {
        self.shared
            .brokers()
            .iter()
            .map(|broker| broker.address.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The client metrics pushes the cluster kept (with
    /// [`ClusterBuilder::client_telemetry`]): the last 64, at most 8 MiB together, oldest
    /// first.
    pub fn telemetry_pushes(&self) -> Vec<client_metrics::Push> {
        self.shared.client_metrics().pushes()
    }

    /// The brokers now (those added at run time included, those removed left out).
    pub fn brokers(&self) -> Vec<BrokerAddress> {
        self.shared.brokers().to_vec()
    }

    /// The controllers (none unless [`ClusterBuilder::controllers`] asked for some).
    pub fn controllers(&self) -> &[BrokerAddress] {
        &self.shared.controllers
    }

    /// The controllers' addresses, comma-separated, as admin tools take
    /// `--bootstrap-controller`.
    pub fn bootstrap_controllers(&self) -> String {
        self.shared
            .controllers
            .iter()
            .map(|controller| controller.address.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What the brokers share, the state included (for tests that look inside).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// What the brokers counted (requests and responses by API and version, bytes each way,
    /// latencies, connections), for `kafka_codec_server::scrape` or a test's assertions.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.shared.metrics
    }

    /// The memory budget every connection is charged to (a metrics endpoint charges its
    /// scrapers to it too).
    pub fn budget(&self) -> &Arc<Budget> {
        &self.shared.budget
    }

    /// The control surface: fault rules, the request log, stopping and restarting brokers,
    /// latency, moving leaders and coordinators, expiring sessions, fencing producers (see
    /// [`control`]).
    pub fn control(&self) -> ControlHandle {
        ControlHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// A connection to broker `node_id` over an in-memory pipe, served as a TCP connection
    /// is (the transport of [`ClusterBuilder::in_memory`] clusters, and usable beside TCP in
    /// any cluster): no socket, so a test on a current-thread runtime with tokio's clock
    /// paused runs the same on every run. Refused while the broker is stopped.
    pub fn connect(&self, node_id: i32) -> io::Result<tokio::io::DuplexStream> {
        broker::connect_in_memory(&self.shared, node_id)
    }

    /// Adds a broker with the next node id on `port` (a free one if `None`); see
    /// [`ControlHandle::add_broker`].
    pub fn add_broker(&self, port: Option<u16>) -> Result<BrokerAddress, control::OperationError> {
        self.control().add_broker(port)
    }

    /// Removes broker `node_id`, moving what it led and coordinated; see
    /// [`ControlHandle::remove_broker`].
    pub fn remove_broker(
        &self,
        node_id: i32,
    ) -> Result<control::RemovedBroker, control::OperationError> {
        self.control().remove_broker(node_id)
    }

    /// Serves the control surface as JSON over HTTP on `listener` (see [`control::http`]),
    /// until the cluster is dropped. Call on the runtime that is to serve it.
    pub fn serve_control(&self, listener: TcpListener) {
        tokio::spawn(control::http::serve(self.control(), listener));
    }
}

/// How to start a [`Cluster`].
#[derive(Debug, Clone)]
pub struct ClusterBuilder {
    brokers: usize,
    controllers: usize,
    controller_ports: Vec<u16>,
    first_controller_id: i32,
    quorum_fetch_interval: Duration,
    controller_stable_only: bool,
    host: String,
    ports: Vec<u16>,
    retention: Retention,
    memory_budget: usize,
    max_connections: usize,
    idle_timeout: Option<Duration>,
    max_frame: usize,
    observer: Option<RequestObserver>,
    events: Option<EventObserver>,
    modelled: controllers::Modelled,
    group_limits: groups::GroupLimits,
    share_config: share_groups::ShareConfig,
    transaction_limits: transactions::TxnLimits,
    release: Option<Release>,
    transaction_version: features::TransactionVersion,
    rules: Vec<Rule>,
    log_capacity: usize,
    log_bytes: usize,
    in_memory: bool,
    seed: Option<u64>,
    sasl_users: Vec<SaslUser>,
    super_users: Vec<String>,
    tls: Option<kafka_codec_server::tls::ListenTls>,
    /// Each broker's fetch session slots and the bytes they hold.
    fetch_session_limits: (usize, usize),
    broker_session_timeout: Duration,
    /// Static broker settings (`configs::STATIC_SETTINGS`), checked at build.
    broker_settings: Vec<(String, String)>,
    /// Whether GetTelemetrySubscriptions and PushTelemetry are served.
    client_telemetry: bool,
}

impl Default for ClusterBuilder {
    fn default() -> Self {
        ClusterBuilder {
            brokers: 1,
            controllers: 0,
            controller_ports: Vec::new(),
            first_controller_id: controllers::FIRST_CONTROLLER_ID,
            quorum_fetch_interval: Duration::from_millis(100),
            controller_stable_only: false,
            host: "127.0.0.1".into(),
            ports: Vec::new(),
            retention: Retention::default(),
            memory_budget: DEFAULT_BUDGET,
            max_connections: 1024,
            idle_timeout: Some(Duration::from_secs(600)),
            // Kafka's `socket.request.max.bytes` default.
            max_frame: 100 * 1024 * 1024,
            observer: None,
            events: None,
            modelled: controllers::Modelled::default(),
            group_limits: groups::GroupLimits::default(),
            share_config: share_groups::ShareConfig::default(),
            transaction_limits: transactions::TxnLimits::default(),
            release: None,
            transaction_version: features::TransactionVersion::default(),
            rules: Vec::new(),
            log_capacity: 10_000,
            // The log holds produced batches beside the partitions' own copies: at 64 MiB it
            // was a third of the memory after producing 1 M records of 100 bytes
            // (benches/README.md, the cluster benchmark).
            log_bytes: 16 << 20,
            in_memory: false,
            seed: None,
            sasl_users: Vec::new(),
            super_users: Vec::new(),
            tls: None,
            fetch_session_limits: (
                fetch_sessions::DEFAULT_SLOTS,
                fetch_sessions::DEFAULT_MAX_BYTES,
            ),
            // Kafka's `broker.session.timeout.ms` default.
            broker_session_timeout: Duration::from_secs(9),
            broker_settings: Vec::new(),
            client_telemetry: false,
        }
    }
}

impl ClusterBuilder {
    /// How long a stopped broker keeps its partitions before it is fenced (default 9 s,
    /// Kafka's `broker.session.timeout.ms`): then it leaves Metadata's brokers and every
    /// ISR, and its partitions get new leaders or go offline
    /// ([`ControlHandle::fence_broker`](control::ControlHandle::fence_broker)).
    pub fn broker_session_timeout(mut self, timeout: Duration) -> Self {
        self.broker_session_timeout = timeout;
        self
    }

    /// How many brokers (at least one, unless there are controllers: a cluster of
    /// controllers alone is what `kafka-codec quorum serve` runs).
    pub fn brokers(mut self, brokers: usize) -> Self {
        self.brokers = brokers;
        self
    }

    /// How many KRaft controllers (default none), each on a listener of its own, running
    /// the crate's leader model ([`quorum`]): all are voters and the first leads. They
    /// answer what Kafka's controllers answer admin tools (see [`controllers`]). With none,
    /// the brokers are the voters, as combined nodes (`process.roles=broker,controller`)
    /// are, the first leading, and answer DescribeQuorum, AddRaftVoter and RemoveRaftVoter
    /// from that quorum.
    pub fn controllers(mut self, controllers: usize) -> Self {
        self.controllers = controllers;
        self
    }

    /// The controllers' ports, in order; those past the list (and port 0) take a free port.
    pub fn controller_ports(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        self.controller_ports = ports.into_iter().collect();
        self
    }

    /// The first controller's node id (default 3000, as Kafka's own test kit numbers its
    /// controllers); the others follow it.
    pub fn first_controller_id(mut self, id: i32) -> Self {
        self.first_controller_id = id;
        self
    }

    /// Followers and brokers fetch the metadata log every 1 to 2 times this (default
    /// 100 ms), so a voter change commits that much later.
    pub fn quorum_fetch_interval(mut self, interval: Duration) -> Self {
        self.quorum_fetch_interval = interval;
        self
    }

    /// Controllers advertise stable versions only: DescribeQuorum v0-v2, as a Kafka
    /// controller without `unstable.api.versions.enable` does (v3, committed voters, is in
    /// development upstream and advertised by default).
    pub fn controller_stable_only(mut self, stable_only: bool) -> Self {
        self.controller_stable_only = stable_only;
        self
    }

    /// The host the brokers listen on and advertise (default 127.0.0.1).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The brokers' ports, in node id order; brokers past the list (and port 0) take a free
    /// port.
    pub fn ports(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        self.ports = ports.into_iter().collect();
        self
    }

    /// The retention caps (default: 256 MiB a partition, 1 GiB the cluster).
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// Bytes of requests read and not yet answered, for all connections together (default
    /// 256 MiB), as the tap's `--memory-budget`.
    pub fn memory_budget(mut self, bytes: usize) -> Self {
        self.memory_budget = bytes;
        self
    }

    /// Serve client metrics (KIP-714: GetTelemetrySubscriptions and PushTelemetry), as a
    /// Kafka broker does only when a metrics reporter that receives client telemetry is
    /// configured (default off, as Kafka's default: a Java client then pushes nothing).
    /// Pushes are kept for [`Cluster::telemetry_pushes`].
    pub fn client_telemetry(mut self, on: bool) -> Self {
        self.client_telemetry = on;
        self
    }

    /// Connections open at once over all brokers (default 1024); the least useful is closed
    /// for a new one.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// Closes a connection with no byte either way for this long (default 600 s; `None`:
    /// never), timed on the cluster's clock ([`clock`]): on a paused runtime it passes in
    /// simulated time.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The largest request frame read (default 100 MiB, Kafka's `socket.request.max.bytes`).
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Shows every request to `observer` once it is dealt with (a request log; the CLI's
    /// `cluster` command prints one line each). It runs on the connection's task: keep it
    /// short.
    pub fn on_request(mut self, observer: impl Fn(&Served<'_>) + Send + Sync + 'static) -> Self {
        self.observer = Some(RequestObserver(Arc::new(observer)));
        self
    }

    /// Shows every [`Event`] (what happens to connections, listeners and the quorum that no
    /// request shows) to `observer`, as it happens; it runs on the task concerned, with no
    /// lock held but the quorum's for a quorum event: keep it short.
    pub fn on_event(mut self, observer: impl Fn(&Event<'_>) + Send + Sync + 'static) -> Self {
        self.events = Some(EventObserver(Arc::new(observer)));
        self
    }

    /// A controller of the quorum that is modelled but not listened on: it fetches from the
    /// leader on the quorum's timer and answers the leader's probe of a new voter, and its
    /// endpoint is `controller-ID.invalid:9093`, a name that resolves nowhere. A `voter`
    /// starts in the voter set (after the controllers served, so one of those leads);
    /// otherwise it is a spare that AddRaftVoter can add. Needs at least one served
    /// controller ([`controllers`](Self::controllers)). `kafka-codec quorum serve` serves
    /// one controller and models the others this way.
    pub fn modelled_controller(mut self, node_id: i32, voter: bool) -> Self {
        if voter {
            self.modelled.voters.push(node_id);
        } else {
            self.modelled.spares.push(node_id);
        }
        self
    }

    /// A broker that is modelled but not listened on: it reads the metadata log as an
    /// observer of the quorum, and no client can reach it.
    pub fn modelled_broker(mut self, node_id: i32) -> Self {
        self.modelled.brokers.push(node_id);
        self
    }

    /// The group coordinator's caps and session timeout bounds (default: Kafka's timeouts,
    /// 10,000 groups, 1,000 members a group, 64 MiB).
    pub fn group_limits(mut self, limits: groups::GroupLimits) -> Self {
        self.group_limits = limits;
        self
    }

    /// Share groups' lock timeout, delivery-count limit, heartbeat interval and caps
    /// (default: Kafka's).
    pub fn share_config(mut self, config: share_groups::ShareConfig) -> Self {
        self.share_config = config;
        self
    }

    /// The transaction coordinator's caps (default: 10,000 transactional ids, 100,000
    /// partitions, groups and pending offsets in all transactions together).
    pub fn transaction_limits(mut self, limits: transactions::TxnLimits) -> Self {
        self.transaction_limits = limits;
        self
    }

    /// Answers as `release`'s brokers did (`--as-version`), as its ZooKeeper-mode broker up
    /// to 3.2 and as its KRaft broker from 3.3 ([`Release::broker_listener`]), the
    /// controllers as its KRaft controller: ApiVersions lists that release's versions of the
    /// APIs served that its broker listed, another API or a request above them closes the
    /// connection, and a release older than ApiVersions (0.8, 0.9) closes the connection on
    /// one. Default: every version
    /// this crate knows, those of the newest release and those that 4.0 removed (KIP-896),
    /// so that a client of any age connects.
    pub fn as_version(mut self, release: Release) -> Self {
        self.release = Some(release);
        self
    }

    /// The transaction version ApiVersions finalizes (`transaction.version`, on releases from
    /// 4.0; default 2, as Kafka 4.4 formats a cluster), which clients such as the Java
    /// producer follow. Either protocol is served whatever is finalized: each request's
    /// version says which its client speaks.
    pub fn transaction_version(mut self, version: features::TransactionVersion) -> Self {
        self.transaction_version = version;
        self
    }

    /// Starts with this fault rule in force (after those given before; see [`control`]).
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Requests the request log keeps, the newest: at most `entries` of them (default
    /// 10,000; 0 keeps none) and at most `bytes` of requests as encoded (default 16 MiB).
    /// Its per-API counts cover every request.
    pub fn request_log_capacity(mut self, entries: usize, bytes: usize) -> Self {
        self.log_capacity = entries;
        self.log_bytes = bytes;
        self
    }

    /// Brokers with no listener: clients connect with [`Cluster::connect`] only, over
    /// in-memory pipes. Metadata names each broker at 127.0.0.1 with port 0.
    pub fn in_memory(mut self) -> Self {
        self.in_memory = true;
        self
    }

    /// Derives the cluster id and the topic ids from `seed` rather than at random, so that
    /// runs with the same seed (and the same requests) answer the same bytes.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Turns SASL on (SASL_PLAINTEXT, or SASL_SSL with [`tls`](Self::tls)) and adds `user`:
    /// every connection must authenticate (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, all
    /// three offered) before anything but ApiVersions, SaslHandshake and SaslAuthenticate
    /// is served. A PLAIN user logs in with PLAIN only, a SCRAM user with its mechanism only
    /// (its credential derived with 4096 iterations, as `kafka-configs` does by default).
    pub fn sasl(mut self, user: SaslUser) -> Self {
        self.sasl_users.push(user);
        self
    }

    /// A principal (`User:admin`) that ACLs do not bind, as Kafka's `super.users`. With SASL
    /// on, everyone else needs an ACL for each operation (see [`authorizer`]).
    pub fn super_user(mut self, principal: impl Into<String>) -> Self {
        self.super_users.push(principal.into());
        self
    }

    /// Serves TLS on every broker listener (SSL, or SASL_SSL with [`sasl`](Self::sasl)) with
    /// this certificate chain and private key, PEM files, as the tap's
    /// `--listen-tls-cert`/`--listen-tls-key` (the same rustls setup of
    /// `kafka-codec-server`). In-memory connections ([`Cluster::connect`]) stay plain.
    pub fn tls(self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.listen_tls(kafka_codec_server::tls::ListenTls {
            listen_tls_cert: Some(cert.into()),
            listen_tls_key: Some(key.into()),
            listen_tls_client_ca: None,
        })
    }

    /// [`tls`](Self::tls) as the server crate's `--listen-tls-*` flags give it (a client CA
    /// asks every client for a certificate: mutual TLS). No certificate: plain listeners.
    pub fn listen_tls(mut self, tls: kafka_codec_server::tls::ListenTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Each broker's fetch session cache: at most `slots` sessions (default 1000, Kafka's
    /// `max.incremental.fetch.session.cache.slots`; 0: none, clients send full fetches)
    /// holding at most `bytes` of partitions in all, topic names included (default 32 MiB).
    pub fn fetch_sessions(mut self, slots: usize, bytes: usize) -> Self {
        self.fetch_session_limits = (slots, bytes);
        self
    }

    /// A static setting of every broker, as its `server.properties` would give it: one the
    /// cluster follows ([`configs::STATIC_SETTINGS`]): `auto.create.topics.enable`
    /// (Metadata's topic auto-creation, on by default as in Kafka), `num.partitions` or
    /// `default.replication.factor` (what a topic gets when CreateTopics gives -1, or when
    /// auto-created; 1 and 1 by default), `auto.leader.rebalance.enable` and
    /// `leader.imbalance.check.interval.seconds` (the automatic leader rebalance,
    /// `control/rebalance.rs`), `replica.fetch.wait.max.ms` (how long an unfenced broker
    /// takes to rejoin the ISRs, `control/fencing.rs`), the `delegation.token.*` settings
    /// ([`tokens`]), `offsets.topic.replication.factor` and
    /// `transaction.state.log.replication.factor` (equal: the replicas of the coordinators'
    /// internal partitions, which may take over a fenced coordinator, `control/fencing.rs`).
    /// DescribeConfigs shows them as
    /// STATIC_BROKER_CONFIG (under dynamic overrides). Checked by [`build`](Self::build)
    /// (another name, a value not of its type or out of range: `InvalidInput`).
    pub fn broker_config(mut self, name: &str, value: &str) -> Self {
        self.broker_settings
            .push((name.to_owned(), value.to_owned()));
        self
    }

    /// Turns delegation tokens on (KIP-48, with SASL on: see [`tokens`]): the secret key
    /// their HMACs are computed with, Kafka's `delegation.token.secret.key` (a static
    /// broker setting, as [`broker_config`](Self::broker_config) sets it; so are
    /// `delegation.token.max.lifetime.ms`, `delegation.token.expiry.time.ms` and
    /// `delegation.token.expiry.check.interval.ms`). Without it the token APIs answer
    /// DELEGATION_TOKEN_AUTH_DISABLED.
    pub fn delegation_token_secret_key(self, key: &str) -> Self {
        self.broker_config(tokens::SECRET_KEY, key)
    }

    /// Whether Metadata creates the topics it is asked for (`auto.create.topics.enable`;
    /// default true, as Kafka's).
    pub fn auto_create_topics(self, enabled: bool) -> Self {
        self.broker_config("auto.create.topics.enable", &enabled.to_string())
    }

    /// Binds every broker and starts serving on the current tokio runtime.
    pub async fn build(self) -> io::Result<Cluster> {
        for (name, value) in &self.broker_settings {
            configs::check_static_setting(name, value).map_err(|message| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("broker config {message}"),
                )
            })?;
        }
        // Both internal topics are placed alike (`configs::TRANSACTIONS_REPLICATION_FACTOR`).
        let factor = |name: &str| {
            self.broker_settings
                .iter()
                .rev()
                .find(|(set, _)| set == name)
                .map_or(3, |(_, value)| value.trim().parse::<i64>().unwrap_or(3))
        };
        let (offsets, transactions) = (
            factor(configs::OFFSETS_REPLICATION_FACTOR),
            factor(configs::TRANSACTIONS_REPLICATION_FACTOR),
        );
        if offsets != transactions {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "broker config {} ({offsets}) and {} ({transactions}) must be equal: the \
                     cluster places both internal topics alike",
                    configs::OFFSETS_REPLICATION_FACTOR,
                    configs::TRANSACTIONS_REPLICATION_FACTOR
                ),
            ));
        }
        let tls = match &self.tls {
            None => None,
            Some(tls) => tls
                .acceptor()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?
                .map(TlsAcceptor),
        };
        let mut users = Users::default();
        for user in &self.sasl_users {
            users.add(user);
        }
        let broker_count = if self.controllers == 0 {
            self.brokers.max(1)
        } else {
            self.brokers
        };
        let mut listeners = Vec::with_capacity(broker_count + self.controllers);
        let mut brokers = Vec::with_capacity(broker_count);
        for node_id in 0..broker_count {
            if self.in_memory {
                brokers.push(BrokerAddress {
                    node_id: node_id as i32,
                    address: SocketAddr::from(([127, 0, 0, 1], 0)),
                });
                continue;
            }
            let port = self.ports.get(node_id).copied().unwrap_or(0);
            let listener = TcpListener::bind((self.host.as_str(), port)).await?;
            brokers.push(BrokerAddress {
                node_id: node_id as i32,
                address: listener.local_addr()?,
            });
            listeners.push(listener);
        }
        let mut controller_nodes = Vec::with_capacity(self.controllers);
        for index in 0..self.controllers {
            let node_id = i32::try_from(index)
                .ok()
                .and_then(|index| self.first_controller_id.checked_add(index))
                .filter(|&id| id >= 0)
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "controller ids from {} are not all node ids (0 to {})",
                            self.first_controller_id,
                            i32::MAX
                        ),
                    )
                })?;
            if brokers.iter().any(|broker| broker.node_id == node_id) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("controller {node_id} has a broker's node id"),
                ));
            }
            if self.in_memory {
                controller_nodes.push(BrokerAddress {
                    node_id,
                    address: SocketAddr::from(([127, 0, 0, 1], 0)),
                });
                continue;
            }
            let port = self.controller_ports.get(index).copied().unwrap_or(0);
            let listener = TcpListener::bind((self.host.as_str(), port)).await?;
            controller_nodes.push(BrokerAddress {
                node_id,
                address: listener.local_addr()?,
            });
            listeners.push(listener);
        }
        self.modelled.check(
            controller_nodes.len(),
            brokers.iter().chain(&controller_nodes).map(|n| n.node_id),
        )?;
        let mut state = State::new(self.retention);
        state.configs.statics = self.broker_settings.iter().cloned().collect();
        users.tokens = tokens::Tokens::new(tokens::TokenSettings::from_settings(|name| {
            state.configs.broker_setting(name)
        }));
        let leader_rebalance = control::rebalance::interval(&state.configs)?;
        let replica_catch_up = control::rebalance::catch_up_delay(&state.configs);
        state.transactions = transactions::Transactions::new(self.transaction_limits);
        if let Some(seed) = self.seed {
            state.seed_ids(seed);
        }
        // Eligible leader replicas (KIP-966) where the release finalizes them (4.1 on).
        state.set_eligible_leader_replicas(
            features::Features::of(self.release, self.transaction_version)
                .finalized("eligible.leader.replicas.version")
                .is_some_and(|level| level >= 1),
        );
        let cluster_id = cluster_id(&state);
        // Without controllers the brokers are the voters (combined mode,
        // `process.roles=broker,controller`, as `tools/kafka-broker/broker.sh` runs Kafka).
        let (voters, observers) = if controller_nodes.is_empty() {
            (&brokers[..], &[][..])
        } else {
            (&controller_nodes[..], &brokers[..])
        };
        let quorum = (!voters.is_empty()).then(|| {
            let seed = self.seed.unwrap_or_else(|| {
                let id = state.new_id();
                u64::from_be_bytes(id.as_bytes()[..8].try_into().expect("8 bytes"))
            });
            controllers::quorum(
                seed,
                &self.host,
                voters,
                observers,
                &self.modelled,
                self.quorum_fetch_interval,
                &cluster_id,
            )
        });
        let controller_advertised =
            controllers::advertised(self.release, self.controller_stable_only);
        let budget = Budget::new(self.memory_budget);
        let (stop, stopped) = watch::channel(());
        let nodes = brokers
            .iter()
            .chain(&controller_nodes)
            .map(|node| node.node_id)
            .collect();
        let control = control::Control::new(nodes, self.log_capacity, self.log_bytes);
        for rule in self.rules {
            control.add(rule);
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            appended: Notify::new(),
            placement_brokers: brokers.len(),
            next_broker_id: std::sync::atomic::AtomicI32::new(brokers.len() as i32),
            brokers: std::sync::RwLock::new(Arc::new(brokers)),
            host: self.host.clone(),
            broker_session_timeout: self.broker_session_timeout,
            leader_rebalance,
            replica_catch_up,
            in_memory: self.in_memory,
            controllers: controller_nodes,
            quorum: quorum.map(Mutex::new),
            quorum_moved: Notify::new(),
            quorum_clock: Notify::new(),
            controller_advertised,
            cluster_id,
            advertised: {
                // Brokers forward the quorum APIs to the controllers, or answer them as
                // combined nodes: listed either way, as Kafka's KRaft brokers list them (an
                // older release's, as its broker listed them: a ZooKeeper-mode broker none).
                let served = handlers::advertised_with(self.client_telemetry);
                match self.release {
                    Some(release) => release.limit(&served, release.broker_listener()),
                    None => served,
                }
            },
            release: self.release,
            features: features::Features::of(self.release, self.transaction_version),
            metrics: Metrics::new(Arc::clone(&budget), self.max_connections),
            budget,
            // The idle timeout waits on the runtime's clock: activity is timed on it too.
            registry: Registry::with_clock(self.max_connections, clock::now),
            options: DecodeOptions {
                limits: DecodeLimits {
                    max_frame_size: self.max_frame,
                    ..DecodeLimits::default()
                },
                // Kafka's brokers read a request's fields and ignore what follows them;
                // librdkafka 2.16's admin Metadata v13 carries 3 such bytes, and refusing
                // them closed its connection (found through the tap, `cli/tests/tap`).
                trailing_bytes: TrailingBytes::Allow,
                ..DecodeOptions::default()
            },
            idle_timeout: self.idle_timeout,
            observer: self.observer,
            events: self.events,
            groups: Mutex::new({
                let mut groups = groups::Groups::new(self.group_limits);
                if let Some(seed) = self.seed {
                    groups.seed_ids(seed);
                }
                groups
            }),
            share_groups: Mutex::new(share_groups::ShareGroups::new(
                self.share_config,
                self.group_limits,
            )),
            share_groups_changed: Notify::new(),
            groups_changed: Notify::new(),
            transactions_changed: Notify::new(),
            reassignments_changed: Notify::new(),
            control,
            stop: stopped.clone(),
            next_connection: std::sync::atomic::AtomicU64::new(1),
            sasl: !self.sasl_users.is_empty(),
            users: Mutex::new(users),
            acls: Mutex::default(),
            super_users: self.super_users,
            tls,
            fetch_sessions: Mutex::default(),
            fetch_session_limits: self.fetch_session_limits,
            fetch_session_seed: self.seed,
            client_quotas: Mutex::default(),
            client_metrics: Mutex::default(),
            feature_updates: Mutex::default(),
        });
        let node_ids: Vec<i32> = shared
            .brokers()
            .iter()
            .chain(&shared.controllers)
            .map(|node| node.node_id)
            .collect();
        for (node_id, listener) in node_ids.into_iter().zip(listeners) {
            tokio::spawn(broker::serve(
                Arc::clone(&shared),
                node_id,
                listener,
                stopped.clone(),
            ));
        }
        if shared.quorum.is_some() {
            tokio::spawn(controllers::run_clock(Arc::clone(&shared), stopped.clone()));
        }
        if let Some(interval) = shared.leader_rebalance {
            tokio::spawn(control::rebalance::run(
                Arc::clone(&shared),
                interval,
                stopped.clone(),
            ));
        }
        tokio::spawn(control::rebalance::run_unclean(
            Arc::clone(&shared),
            stopped.clone(),
        ));
        tokio::spawn(groups::run_timers(Arc::clone(&shared), stopped.clone()));
        tokio::spawn(share_groups::run_timers(
            Arc::clone(&shared),
            stopped.clone(),
        ));
        tokio::spawn(transactions::run_timers(
            Arc::clone(&shared),
            stopped.clone(),
        ));
        tokio::spawn(handlers::run_reassignment_timers(
            Arc::clone(&shared),
            stopped.clone(),
        ));
        tokio::spawn(broker::relieve_memory_pressure(
            Arc::clone(&shared),
            stopped,
        ));
        Ok(Cluster {
            shared,
            _stop: stop,
        })
    }
}

/// A cluster id as Kafka writes one: a random UUID in its URL-safe base64 text.
fn cluster_id(state: &State) -> String {
    state.new_id().to_string()
}
