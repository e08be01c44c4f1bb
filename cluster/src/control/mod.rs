//! The control surface: fault rules that every request meets in
//! [`dispatch`](crate::dispatch::dispatch) before its handler, the request log, and the
//! cluster operations (stop and restart a broker, per-broker latency, move a partition's
//! leader or a group's or a transaction's coordinator, expire a group member's session,
//! fence a producer or a transactional id, aborting its open transaction). In process through [`Cluster::control`](crate::Cluster::control); out of process
//! as JSON over HTTP ([`http`], `kafka-codec cluster --control HOST:PORT`).
//!
//! A rule is a [`Match`] (API, versions, broker, connection, client id, the n-th matching
//! call, a predicate over the decoded request) and an [`Action`], fired a number of
//! [`Times`]. Rules are tried in the order they were added; the first that matches acts, and
//! a rule whose times are spent is removed.

mod apply;
mod brokers;
mod fencing;
pub mod http;
pub mod json;
mod log;
pub(crate) mod rebalance;
mod voters;

pub use apply::intercept;
pub use brokers::{ReassignedAndRemoved, RemovedBroker};
pub use fencing::FencedBroker;
pub use log::{LoggedRequest, RequestLog};
pub use voters::QuorumView;

use crate::state::{Cleaned, State};
use crate::{groups, BrokerAddress, Shared};
use kafka_codec::conn::IncomingRequest;
use kafka_codec::{ApiKey, ErrorCode, Response};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;

/// Who sent a request: the broker that received it and the connection it came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The broker's node id.
    pub node_id: i32,
    /// The connection's id (unique in the process; the request log names it).
    pub connection: u64,
    /// The client's address.
    pub peer: std::net::SocketAddr,
}

/// A predicate over a decoded request.
#[derive(Clone)]
pub struct Predicate(Arc<dyn Fn(&IncomingRequest) -> bool + Send + Sync>);

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Predicate")
    }
}

/// Which requests a rule concerns; every criterion given must hold. [`Match::any`] matches
/// every request.
#[derive(Debug, Clone, Default)]
pub struct Match {
    pub(crate) api: Option<ApiKey>,
    pub(crate) versions: Option<(i16, i16)>,
    pub(crate) broker: Option<i32>,
    pub(crate) connection: Option<u64>,
    pub(crate) client_id: Option<String>,
    /// Acts from the n-th request that matches the other criteria on (1: the first).
    pub(crate) from_call: u64,
    pub(crate) predicate: Option<Predicate>,
    /// As JSON, the request's JSON form must contain this (see [`json`]).
    pub(crate) request_json: Option<kafka_codec::serde_json::Value>,
}

impl Match {
    /// Every request.
    pub fn any() -> Self {
        Match::default()
    }

    /// Requests of `api`.
    pub fn api(api: ApiKey) -> Self {
        Match {
            api: Some(api),
            ..Match::default()
        }
    }

    /// Only versions `min..=max`.
    pub fn versions(mut self, min: i16, max: i16) -> Self {
        self.versions = Some((min, max));
        self
    }

    /// Only requests to broker `node_id`.
    pub fn broker(mut self, node_id: i32) -> Self {
        self.broker = Some(node_id);
        self
    }

    /// Only requests on connection `id` (as the request log names it).
    pub fn connection(mut self, id: u64) -> Self {
        self.connection = Some(id);
        self
    }

    /// Only requests whose header names this client id.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Acts on the `n`-th request matching the rest (1: the first), and the ones after it
    /// as long as the rule's [`Times`] last.
    pub fn nth(mut self, n: u64) -> Self {
        self.from_call = n;
        self
    }

    /// Only requests for which `predicate` holds (it sees the decoded request).
    pub fn when(
        mut self,
        predicate: impl Fn(&IncomingRequest) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.predicate = Some(Predicate(Arc::new(predicate)));
        self
    }

    fn matches(&self, caller: &Caller, request: &IncomingRequest) -> bool {
        self.api.is_none_or(|api| api == request.api_key())
            && self
                .versions
                .is_none_or(|(min, max)| (min..=max).contains(&request.api_version))
            && self.broker.is_none_or(|node| node == caller.node_id)
            && self.connection.is_none_or(|id| id == caller.connection)
            && self
                .client_id
                .as_deref()
                .is_none_or(|id| request.header.client_id.as_deref() == Some(id))
            && self
                .predicate
                .as_ref()
                .is_none_or(|predicate| (predicate.0)(request))
            && self.request_json.as_ref().is_none_or(|pattern| {
                request
                    .body
                    .to_json(request.api_version)
                    .is_ok_and(|body| json::contains(&body, pattern))
            })
    }
}

/// What a rule does to a request it matches.
#[derive(Debug, Clone)]
pub enum Action {
    /// Nothing: the request is answered as usual (counts against the rule's times).
    Pass,
    /// The API's own response with this error code where the API carries errors (per
    /// partition, per topic, per group, or at the top level: from the schemas, for every API
    /// and version; see `kafka_codec::error_response`). The request has no effect.
    Error(ErrorCode),
    /// Waits, then answers as usual.
    Delay(Duration),
    /// Waits, then acts.
    DelayThen(Duration, Box<Action>),
    /// Closes the connection without answering.
    Disconnect,
    /// Never answers; the connection stays open.
    Silence,
    /// Answers as usual, with every record batch of a Fetch answer's partitions given a
    /// wrong CRC (the batch framing intact), so that a client checking CRCs refuses them.
    CorruptRecords,
    /// The request takes effect (its handler runs), then the answer is replaced by what the
    /// inner action does: lost (`Disconnect`, `Silence`), late (`Delay`), or an error
    /// (`Error`): an "outcome unknown" for the client.
    ApplyThen(Box<Action>),
    /// Answers with this response (of the request's API, written at the request's version);
    /// the request has no effect.
    Respond(Box<Response>),
    /// Answers with this response body in Kafka's JSON form, read at the request's version
    /// (a body that does not read closes the connection); the request has no effect.
    RespondJson(kafka_codec::serde_json::Value),
}

/// How many times a rule acts before it is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// Until removed.
    Always,
    /// This many times.
    Count(u64),
}

/// A fault rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub(crate) matcher: Match,
    pub(crate) action: Action,
    pub(crate) times: Times,
}

impl Rule {
    /// A rule acting once.
    pub fn once(matcher: Match, action: Action) -> Self {
        Rule {
            matcher,
            action,
            times: Times::Count(1),
        }
    }

    /// A rule acting `n` times.
    pub fn times(matcher: Match, action: Action, n: u64) -> Self {
        Rule {
            matcher,
            action,
            times: Times::Count(n),
        }
    }

    /// A rule acting until removed.
    pub fn always(matcher: Match, action: Action) -> Self {
        Rule {
            matcher,
            action,
            times: Times::Always,
        }
    }
}

/// A rule in force: its id (to remove it), what it is, and how often it matched and acted.
#[derive(Debug, Clone)]
pub struct ActiveRule {
    /// Its id.
    pub id: u64,
    /// The rule.
    pub rule: Rule,
    /// Requests that matched it (acted on or not yet, before its n-th call).
    pub matched: u64,
    /// Requests it acted on.
    pub acted: u64,
}

/// Why an operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationError {
    /// No broker with this node id.
    NoSuchBroker(i32),
    /// No such topic or partition.
    NoSuchPartition(String, i32),
    /// No such group.
    NoSuchGroup(String),
    /// No such member in the group (group id, member id).
    NoSuchMember(String, String),
    /// No producer with this id was handed out.
    NoSuchProducer(i64),
    /// The cluster has no KRaft quorum (no controllers and no brokers: without controllers
    /// the brokers are its voters).
    NoControllers,
    /// No controller or broker of the quorum with this node id (or it leads: it does not
    /// fetch).
    NoSuchController(i32),
    /// The quorum leader refused the voter change, as it would refuse AddRaftVoter or
    /// RemoveRaftVoter: its error code's name and message.
    VoterChangeRefused(String),
    /// No transactional id like this was initialized.
    NoSuchTransactionalId(String),
    /// No such topic.
    NoSuchTopic(String),
    /// The broker is the cluster's last: removing it is refused.
    LastBroker(i32),
    /// A broker could not be added: its listener could not be bound (why).
    Listen(String),
    /// The next broker id is a controller's.
    NodeIdTaken(i32),
    /// The node is stopped: it does not fetch.
    Stopped(i32),
    /// The broker is up: only a stopped broker is fenced.
    Up(i32),
}

impl fmt::Display for OperationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperationError::NoSuchBroker(node) => write!(f, "no broker {node}"),
            OperationError::NoSuchPartition(topic, partition) => {
                write!(f, "no partition {partition} of topic {topic:?}")
            }
            OperationError::NoSuchGroup(group) => write!(f, "no group {group:?}"),
            OperationError::NoSuchMember(group, member) => {
                write!(f, "no member {member:?} in group {group:?}")
            }
            OperationError::NoSuchProducer(id) => write!(f, "no producer id {id}"),
            OperationError::NoControllers => f.write_str("the cluster has no controllers"),
            OperationError::NoSuchController(id) => {
                write!(f, "no controller {id} (or it leads the quorum)")
            }
            OperationError::VoterChangeRefused(why) => write!(f, "refused: {why}"),
            OperationError::NoSuchTransactionalId(id) => {
                write!(f, "no transactional id {id:?}")
            }
            OperationError::NoSuchTopic(topic) => write!(f, "no topic {topic:?}"),
            OperationError::LastBroker(node) => {
                write!(f, "broker {node} is the last broker: a cluster keeps one")
            }
            OperationError::Listen(why) => write!(f, "cannot listen: {why}"),
            OperationError::Stopped(node) => write!(f, "node {node} is stopped"),
            OperationError::Up(node) => {
                write!(f, "broker {node} is up: only a stopped broker is fenced")
            }
            OperationError::NodeIdTaken(node) => {
                write!(f, "the next broker id, {node}, is a controller's")
            }
        }
    }
}

impl std::error::Error for OperationError {}

/// The rules, the request log, and each broker's switches (up or down, latency).
#[derive(Debug)]
pub struct Control {
    rules: Mutex<Rules>,
    pub(crate) log: RequestLog,
    /// The nodes (brokers, then controllers, then brokers added at run time) and their
    /// switches. A removed broker's entry goes, and with it its `up` sender: its accept loop
    /// and connections, which watch it, end.
    nodes: Mutex<Vec<Node>>,
    /// Of each removed broker, the broker its default share (partitions led and groups and
    /// transactions coordinated by the placement rules) went to. A lock of its own, taken
    /// alone.
    successors: Mutex<BTreeMap<i32, i32>>,
    /// Groups whose coordinator was moved, and where to; the others are coordinated by
    /// [`groups::coordinator`]'s rule. A lock of its own, taken alone: handlers ask it while
    /// they hold the groups.
    coordinators: Mutex<BTreeMap<String, i32>>,
    /// Transactional ids whose coordinator was moved, and where to; the others are
    /// coordinated by [`transactions::coordinator`](crate::transactions::coordinator)'s rule.
    transaction_coordinators: Mutex<BTreeMap<String, i32>>,
    /// Of each fenced broker, the broker coordinating the groups and transactional ids its
    /// rule names that were not seen before it was fenced (`fencing.rs`).
    stand_ins: Mutex<BTreeMap<i32, i32>>,
    /// Of each broker fenced, the groups and transactional ids its fencing moved away: back
    /// at the leader rebalance once it is in sync again (`rebalance.rs`).
    fence_moved: Mutex<BTreeMap<i32, fencing::MovedAway>>,
    /// Brokers unregistered after their shutdown (UnregisterBroker, `remove_broker`), by
    /// id: a restart registers one again on the same address, as a Kafka broker started
    /// again registers anew (`brokers.rs`). A lock of its own, taken alone.
    unregistered: Mutex<BTreeMap<i32, BrokerAddress>>,
}

/// One node's switches.
#[derive(Debug)]
pub(crate) struct Node {
    id: i32,
    /// Whether it is up (its accept loop and connections watch it).
    up: watch::Sender<bool>,
    latency: Duration,
    /// Whether it stopped by crashing: it registers again without a clean shutdown.
    crashed: bool,
}

#[derive(Debug, Default)]
struct Rules {
    next_id: u64,
    active: Vec<ActiveRule>,
}

impl Control {
    pub(crate) fn new(nodes: Vec<i32>, log_capacity: usize, log_bytes: usize) -> Self {
        Control {
            rules: Mutex::default(),
            log: RequestLog::new(log_capacity, log_bytes),
            nodes: Mutex::new(nodes.into_iter().map(Node::new).collect()),
            successors: Mutex::default(),
            coordinators: Mutex::default(),
            transaction_coordinators: Mutex::default(),
            stand_ins: Mutex::default(),
            fence_moved: Mutex::default(),
            unregistered: Mutex::default(),
        }
    }

    fn rules(&self) -> MutexGuard<'_, Rules> {
        self.rules.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a rule after the others; its id.
    pub fn add(&self, rule: Rule) -> u64 {
        let mut rules = self.rules();
        rules.next_id += 1;
        let id = rules.next_id;
        rules.active.push(ActiveRule {
            id,
            rule,
            matched: 0,
            acted: 0,
        });
        id
    }

    /// Removes the rule `id`; whether it was there.
    pub fn remove(&self, id: u64) -> bool {
        let mut rules = self.rules();
        let before = rules.active.len();
        rules.active.retain(|rule| rule.id != id);
        rules.active.len() != before
    }

    /// Removes every rule.
    pub fn clear(&self) {
        self.rules().active.clear();
    }

    /// The rules in force, in the order they are tried.
    pub fn rules_in_force(&self) -> Vec<ActiveRule> {
        self.rules().active.clone()
    }

    /// The action for `request`, if a rule takes it (counted; a spent rule is removed).
    fn action_for(&self, caller: &Caller, request: &IncomingRequest) -> Option<(u64, Action)> {
        let mut rules = self.rules();
        let mut chosen = None;
        for (index, active) in rules.active.iter_mut().enumerate() {
            if !active.rule.matcher.matches(caller, request) {
                continue;
            }
            active.matched += 1;
            if active.matched < active.rule.matcher.from_call {
                continue;
            }
            active.acted += 1;
            let spent = active.rule.times == Times::Count(active.acted);
            chosen = Some((index, active.id, active.rule.action.clone(), spent));
            break;
        }
        let (index, id, action, spent) = chosen?;
        if spent {
            rules.active.remove(index);
        }
        Some((id, action))
    }

    /// The request log.
    pub fn log(&self) -> &RequestLog {
        &self.log
    }

    /// Stops broker `node_id`: its listener is closed (connections are refused) and its open
    /// connections are dropped, until [`restart_broker`](Self::restart_broker).
    pub fn stop_broker(&self, node_id: i32) -> Result<(), OperationError> {
        self.with_node(node_id, |node| node.up.send_replace(false))?;
        Ok(())
    }

    /// Restarts a stopped broker on the same address; its log and the cluster's state are as
    /// they were (everything is in memory, shared by the brokers).
    pub fn restart_broker(&self, node_id: i32) -> Result<(), OperationError> {
        self.with_node(node_id, |node| node.up.send_replace(true))?;
        Ok(())
    }

    /// Marks broker `node_id` crashed (or not): its next restart is unclean.
    pub(crate) fn set_crashed(&self, node_id: i32, crashed: bool) -> Result<(), OperationError> {
        self.with_node(node_id, |node| node.crashed = crashed)
    }

    /// Whether broker `node_id` stopped by crashing and was not restarted since.
    pub fn is_crashed(&self, node_id: i32) -> bool {
        self.with_node(node_id, |node| node.crashed)
            .unwrap_or(false)
    }

    /// Whether broker `node_id` is up.
    pub fn is_up(&self, node_id: i32) -> bool {
        self.with_node(node_id, |node| *node.up.borrow())
            .unwrap_or(false)
    }

    pub(crate) fn nodes(&self) -> MutexGuard<'_, Vec<Node>> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with_node<T>(
        &self,
        node_id: i32,
        f: impl FnOnce(&mut Node) -> T,
    ) -> Result<T, OperationError> {
        self.nodes()
            .iter_mut()
            .find(|node| node.id == node_id)
            .map(f)
            .ok_or(OperationError::NoSuchBroker(node_id))
    }

    /// Watches whether node `node_id` is up; the watch ends (its sender dropped) when the
    /// broker is removed.
    pub(crate) fn watch_up(&self, node_id: i32) -> Result<watch::Receiver<bool>, OperationError> {
        self.with_node(node_id, |node| node.up.subscribe())
    }

    /// Every request to broker `node_id` is answered `latency` later (on top of any rule's
    /// delay), as a round-trip time.
    pub fn set_latency(&self, node_id: i32, latency: Duration) -> Result<(), OperationError> {
        self.with_node(node_id, |node| node.latency = latency)
    }

    /// Where `node_id`'s default share went if it was removed (following successors that
    /// were removed in turn), else `node_id`.
    pub(crate) fn successor(&self, node_id: i32) -> i32 {
        let successors = self.successors.lock().unwrap_or_else(|e| e.into_inner());
        if successors.is_empty() {
            return node_id;
        }
        let mut node = node_id;
        // Each removal points at a broker still there, so a chain ends; the bound is a guard.
        for _ in 0..=successors.len() {
            match successors.get(&node) {
                Some(&next) => node = next,
                None => break,
            }
        }
        node
    }

    /// The broker coordinating `transactional_id` in a cluster of `brokers`: where
    /// [`ControlHandle::move_transaction_coordinator`] moved it, else by Kafka's rule.
    pub fn transaction_coordinator(&self, transactional_id: &str, brokers: usize) -> i32 {
        self.transaction_coordinators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(transactional_id)
            .copied()
            .unwrap_or_else(|| {
                self.stand_in(
                    self.successor(crate::transactions::coordinator(transactional_id, brokers)),
                )
            })
    }

    /// The broker coordinating `group_id` in a cluster of `brokers`: where
    /// [`ControlHandle::move_coordinator`] moved it, else by Kafka's rule.
    pub fn coordinator(&self, group_id: &str, brokers: usize) -> i32 {
        self.coordinators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(group_id)
            .copied()
            .unwrap_or_else(|| {
                self.stand_in(self.successor(groups::coordinator(group_id, brokers)))
            })
    }

    /// Whether coordinator `node_id`'s `__consumer_offsets` and `__transaction_state`
    /// partitions have a leader in `state`: not while it is fenced and their leadership went
    /// nowhere (no stand-in: no other replica was unfenced to take them, `fencing.rs`).
    /// FindCoordinator then answers COORDINATOR_NOT_AVAILABLE, as Kafka's `KafkaApis` does
    /// for a partition with no live leader, and `node_id` itself NOT_COORDINATOR. Read from
    /// the fenced brokers each time, so it follows fencing and unfencing by any path.
    pub fn coordinator_available(&self, node_id: i32, state: &State) -> bool {
        !state.is_fenced(node_id) || self.stand_in(node_id) != node_id
    }

    /// Who coordinates for `node_id` while it is fenced, else `node_id`.
    fn stand_in(&self, node_id: i32) -> i32 {
        let stand_ins = self.stand_ins.lock().unwrap_or_else(|e| e.into_inner());
        stand_ins.get(&node_id).copied().unwrap_or(node_id)
    }

    /// Broker `node_id`'s latency.
    pub fn latency(&self, node_id: i32) -> Duration {
        self.with_node(node_id, |node| node.latency)
            .unwrap_or_default()
    }
}

impl Node {
    pub(crate) fn new(id: i32) -> Self {
        Node {
            id,
            up: watch::Sender::new(true),
            latency: Duration::ZERO,
            crashed: false,
        }
    }
}

/// The control surface of one cluster: [`Control`] with the cluster's state, for the
/// operations that change it.
#[derive(Debug, Clone)]
pub struct ControlHandle {
    pub(crate) shared: Arc<Shared>,
}

impl std::ops::Deref for ControlHandle {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.shared.control
    }
}

/// The operations a handler takes part in as well as the control surface (an
/// UnregisterBroker does what [`ControlHandle::remove_broker`] does after the shutdown), on a
/// borrowed cluster: one code path for both.
pub(crate) struct Operator<'a> {
    pub(crate) shared: &'a Shared,
}

impl std::ops::Deref for Operator<'_> {
    type Target = Control;
    fn deref(&self) -> &Control {
        &self.shared.control
    }
}

impl ControlHandle {
    pub(crate) fn operator(&self) -> Operator<'_> {
        Operator {
            shared: &self.shared,
        }
    }
}

impl ControlHandle {
    /// Moves the leadership of `topic`'s `partition` to broker `to`, bumping its leader
    /// epoch: the old leader then answers NOT_LEADER_OR_FOLLOWER, and a request naming the
    /// old epoch FENCED_LEADER_EPOCH, until the client refreshes its metadata. As Kafka 4.4
    /// shows the same move made by a reassignment putting `to` first among the replicas and
    /// a preferred election (`tests/move_leader_kafka.rs`): the replicas list starts with
    /// `to` (so it stays the preferred leader), the others in their order, the ISR's order
    /// kept, and the partition epoch moves on by two. A broker that holds no replica is
    /// added by that reassignment (replicas `[to, the others]`, `to` in the ISR in Kafka's
    /// expansion order, the partition epoch moved on by three), as Kafka showed alike. The
    /// new epoch.
    pub fn move_leader(&self, topic: &str, partition: i32, to: i32) -> Result<i32, OperationError> {
        let brokers = self.shared.placement_brokers;
        if !self.shared.is_broker(to) {
            return Err(OperationError::NoSuchBroker(to));
        }
        // The brokers listed, read before the state is locked (as everywhere).
        let listed: Vec<i32> = self.shared.brokers().iter().map(|b| b.node_id).collect();
        let mut state = self.shared.state();
        let exists = state
            .topics
            .get(topic)
            .is_some_and(|t| t.partition(partition).is_some());
        if !exists {
            return Err(OperationError::NoSuchPartition(topic.to_owned(), partition));
        }
        Ok(state.move_leader_reassigned(topic, partition, to, &listed, brokers))
    }

    /// Makes broker `to` the leader of `topic`'s `partition` in place, as Kafka's controller
    /// elects another replica when the leader's broker is fenced: the leader epoch moves on
    /// and the preferred replica stays what it was, so a preferred ElectLeaders or the
    /// automatic leader rebalance moves the leadership back. For a leader off its preferred
    /// replica; [`move_leader`](Self::move_leader) is an operator's move, which makes `to`
    /// the preferred replica. The new epoch.
    pub fn elect_leader(
        &self,
        topic: &str,
        partition: i32,
        to: i32,
    ) -> Result<i32, OperationError> {
        let brokers = self.shared.placement_brokers;
        if !self.shared.is_broker(to) {
            return Err(OperationError::NoSuchBroker(to));
        }
        let mut state = self.shared.state();
        let exists = state
            .topics
            .get(topic)
            .is_some_and(|t| t.partition(partition).is_some());
        if !exists {
            return Err(OperationError::NoSuchPartition(topic.to_owned(), partition));
        }
        Ok(state.move_leader(topic, partition, to, brokers))
    }

    /// Moves the coordination of `group_id` to broker `to`: FindCoordinator names `to` from
    /// now on and the previous coordinator answers the group's requests NOT_COORDINATOR (a
    /// JoinGroup or SyncGroup waiting there too), so members find the new one, as when the
    /// leader of the group's `__consumer_offsets` partition moves on Kafka. The group's
    /// members, generation and offsets stay. The previous coordinator.
    pub fn move_coordinator(&self, group_id: &str, to: i32) -> Result<i32, OperationError> {
        let brokers = self.shared.placement_brokers;
        if !self.shared.is_broker(to) {
            return Err(OperationError::NoSuchBroker(to));
        }
        if !self.shared.groups().groups.contains_key(group_id) {
            return Err(OperationError::NoSuchGroup(group_id.to_owned()));
        }
        let previous = self.coordinator(group_id, brokers);
        self.coordinators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(group_id.to_owned(), to);
        if previous != to {
            self.shared.groups().coordinator_moved(group_id);
            self.shared.groups_changed.notify_one();
        }
        Ok(previous)
    }

    /// Moves the coordination of `transactional_id` to broker `to`, as when the leader of
    /// its `__transaction_state` partition moves on Kafka: FindCoordinator names `to` from
    /// now on and the previous coordinator answers the id's requests NOT_COORDINATOR, so the
    /// producer finds the new one; the transaction (its state, partitions, epoch) stays, as
    /// Kafka's new coordinator reads it back from its log. The previous coordinator.
    pub fn move_transaction_coordinator(
        &self,
        transactional_id: &str,
        to: i32,
    ) -> Result<i32, OperationError> {
        let brokers = self.shared.placement_brokers;
        if !self.shared.is_broker(to) {
            return Err(OperationError::NoSuchBroker(to));
        }
        if !self
            .shared
            .state()
            .transactions
            .by_id
            .contains_key(transactional_id)
        {
            return Err(OperationError::NoSuchTransactionalId(
                transactional_id.to_owned(),
            ));
        }
        let previous = self.transaction_coordinator(transactional_id, brokers);
        self.transaction_coordinators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(transactional_id.to_owned(), to);
        Ok(previous)
    }

    /// Expires the session of `member_id` in `group_id` now, as its session timeout would:
    /// the member is removed and the group rebalances without it (its next Heartbeat, or
    /// SyncGroup, is UNKNOWN_MEMBER_ID; the others' heartbeats REBALANCE_IN_PROGRESS). In a
    /// share group, the records it holds and its share session are released and the group
    /// assigned again (its next ShareGroupHeartbeat: UNKNOWN_MEMBER_ID).
    pub fn expire_session(&self, group_id: &str, member_id: &str) -> Result<(), OperationError> {
        let mut expired =
            self.shared
                .groups()
                .expire_member(group_id, member_id, crate::clock::now());
        if expired == Err(kafka_codec::ErrorCode::GROUP_ID_NOT_FOUND) {
            // Read before the share groups are locked (never the state's lock inside).
            let topics = crate::share_groups::topics_by_name(&self.shared.state());
            let mut share = self.shared.share_groups();
            if share.groups.contains_key(group_id) {
                expired = share.expire_member(group_id, member_id, &topics);
            }
        }
        match expired {
            Ok(()) => {
                self.shared.groups_changed.notify_one();
                Ok(())
            }
            Err(kafka_codec::ErrorCode::GROUP_ID_NOT_FOUND) => {
                Err(OperationError::NoSuchGroup(group_id.to_owned()))
            }
            Err(_) => Err(OperationError::NoSuchMember(
                group_id.to_owned(),
                member_id.to_owned(),
            )),
        }
    }

    /// Fences producer `producer_id` at the newest epoch the cluster knows it at, as a
    /// newer instance of a transactional producer would: its next Produce at that epoch (or
    /// an older one) is INVALID_PRODUCER_EPOCH, the error Kafka gives a fenced producer's
    /// Produce at every version since 2.7 (KIP-588; the same code was named
    /// ProducerFencedException before); a transactional id it holds moves on to the new
    /// epoch (the fenced instance's InitProducerId: PRODUCER_FENCED). The first epoch still
    /// accepted.
    pub fn fence_producer(&self, producer_id: i64) -> Result<i16, OperationError> {
        let fenced = self
            .shared
            .state()
            .fence_producer(producer_id, self.shared.placement_brokers)
            .ok_or(OperationError::NoSuchProducer(producer_id));
        // An aborted transaction's markers, for fetches waiting on them.
        self.shared.appended.notify_waiters();
        fenced
    }

    /// Fences the producer holding `transactional_id`, as a new instance's InitProducerId
    /// or Kafka's coordinator at a transaction's timeout do: its ongoing transaction is
    /// aborted (ABORT markers written to each of its partitions, so `read_committed`
    /// consumers skip its records) and its epoch bumped, so the fenced instance's Produce
    /// is INVALID_PRODUCER_EPOCH and its AddPartitionsToTxn, AddOffsetsToTxn and EndTxn
    /// PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2). The producer id and the epoch now
    /// current.
    pub fn fence_transactional_id(
        &self,
        transactional_id: &str,
    ) -> Result<(i64, i16), OperationError> {
        let fenced = {
            let mut state = self.shared.state();
            let fenced =
                state.fence_transactional_id(transactional_id, self.shared.placement_brokers);
            if let Some(now) = fenced {
                state.producer_ids.fence(now.producer_id, now.epoch);
            }
            fenced
        };
        self.shared.appended.notify_waiters();
        fenced
            .map(|now| (now.producer_id, now.epoch))
            .ok_or_else(|| OperationError::NoSuchTransactionalId(transactional_id.to_owned()))
    }

    /// Applies `topic`'s retention now, by its configs (`retention.ms`, `retention.bytes`,
    /// Kafka's defaults where not overridden; only when `cleanup.policy` holds `delete`):
    /// the oldest batches past either go and the log start moves past them (the newest
    /// batch stays). What each partition lost.
    pub fn apply_retention(&self, topic: &str) -> Result<Vec<Cleaned>, OperationError> {
        self.shared
            .state()
            .apply_retention(topic, None, crate::state::now_ms())
            .ok_or_else(|| OperationError::NoSuchTopic(topic.to_owned()))
    }

    /// Compacts `topic` now when its `cleanup.policy` holds `compact`: the newest record of
    /// each key stays, tombstones older than `delete.retention.ms` go, offsets never move.
    /// What each partition lost.
    pub fn compact(&self, topic: &str) -> Result<Vec<Cleaned>, OperationError> {
        self.shared
            .state()
            .compact(topic, crate::state::now_ms())
            .ok_or_else(|| OperationError::NoSuchTopic(topic.to_owned()))
    }

    /// The leader and leader epoch of `topic`'s `partition`.
    pub fn leader(&self, topic: &str, partition: i32) -> (i32, i32) {
        self.shared
            .state()
            .leader(topic, partition, self.shared.placement_brokers)
    }

    /// The brokers now (those added at run time included, those removed left out).
    pub fn brokers(&self) -> Vec<BrokerAddress> {
        self.shared.brokers().to_vec()
    }
}
