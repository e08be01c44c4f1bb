//! The controllers' quorum: the library's KRaft leader model ([`LeaderState`]) and the
//! processes around it (the other controllers, the brokers reading the metadata log),
//! driven by a clock. The cluster's controllers answer from it, and so does `kafka-codec
//! quorum serve`.
//!
//! The voters are bootstrapped at `kraft.version` 1, as `kafka-storage format
//! --initial-controllers` leaves them, and the first leads epoch 1. Every process but the
//! leader fetches from it on a timer, one to two fetch intervals apart; a fetch reports what
//! the previous fetch brought (as a follower's fetch offset names what it holds), so a new
//! record is acknowledged by a follower on its second fetch after the append, and the high
//! watermark, and with it the committed voter set, follows a little behind a voter change.
//! The leader appends a record every 500 ms, as an idle KRaft controller appends a
//! `NoOpRecord`. The control surface can stop the timed fetches and fetch by hand, to hold a
//! voter change between "current" and "committed" for as long as a test needs.
//!
//! A seed fixes everything but the wall clock: directory ids, the cluster id and the fetch
//! intervals. When a voter change removes the leader and commits, the leader resigns as
//! Kafka's does and the first remaining voter leads the next epoch.

use kafka_codec::messages::add_raft_voter_request::Listener;
use kafka_codec::messages::{AddRaftVoterRequest, KRaftVersionRecord, RemoveRaftVoterRequest};
use kafka_codec::quorum::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, NewVoterProbe,
    PendingVoterChange, QuorumError, ReplicaKey, VoterChangeError, VoterNode, VoterSet,
};
use kafka_codec::Uuid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The listener controllers talk on (and the one AddRaftVoter's listeners must include).
pub const LISTENER: &str = "CONTROLLER";
/// How often the leader appends a record of its own (Kafka's
/// `metadata.max.idle.interval.ms` default).
const NOOP_INTERVAL_MS: i64 = 500;
/// The `kraft.version` range every controller here supports.
pub const KRAFT_VERSIONS: (i16, i16) = (0, 1);

/// Which processes make up a quorum.
#[derive(Debug, Clone)]
pub struct QuorumShape {
    /// Fixes the directory ids, the cluster id and the fetch timing.
    pub seed: u64,
    /// Followers and observers fetch every 1 to 2 times this many milliseconds.
    pub fetch_interval_ms: i64,
    /// The voters and their controller listener, in order; the first leads epoch 1.
    pub voters: Vec<(i32, Endpoints)>,
    /// Controllers that run but are not voters (AddRaftVoter can add them).
    pub spares: Vec<(i32, Endpoints)>,
    /// Brokers, reading the metadata log as observers.
    pub observers: Vec<i32>,
}

/// One process of the quorum.
#[derive(Debug, Clone)]
struct Process {
    key: ReplicaKey,
    /// Its controller listener; `None` for a broker.
    controller: Option<Endpoints>,
    /// The leader's log end offset when its previous fetch was answered: what it has.
    has_up_to: i64,
    next_fetch_ms: i64,
    /// Whether it runs: a stopped process neither fetches nor votes.
    running: bool,
}

/// Something the quorum did by itself, for a server's log.
pub type Event = String;

/// Why a voter change from the control surface was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoterOpError {
    /// No controller with this id runs in the quorum.
    NoSuchController(i32),
    /// The process is stopped: it does not fetch.
    Stopped(i32),
    /// The leader refused it, as it would refuse AddRaftVoter / RemoveRaftVoter.
    Refused(VoterChangeError),
}

impl std::fmt::Display for VoterOpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VoterOpError::NoSuchController(id) => write!(f, "no controller {id}"),
            VoterOpError::Stopped(id) => write!(f, "node {id} is stopped"),
            VoterOpError::Refused(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for VoterOpError {}

/// The quorum.
#[derive(Debug)]
pub struct Quorum {
    rng: ChaCha8Rng,
    cluster_id: String,
    fetch_interval_ms: i64,
    /// Whether followers and observers fetch on their timers (the control surface can stop
    /// them and fetch by hand).
    fetching: bool,
    leader: LeaderState,
    processes: BTreeMap<i32, Process>,
    next_noop_ms: i64,
    committed: Option<VoterSet>,
}

impl Quorum {
    /// A fresh quorum at `now_ms`: the first voter leads epoch 1, the others fetch about
    /// every `fetch_interval_ms`.
    ///
    /// # Panics
    ///
    /// With no voters, or two processes with one id.
    pub fn new(shape: QuorumShape, now_ms: i64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(shape.seed);
        let cluster_id = random_uuid(&mut rng).to_string();
        let first = shape.voters.first().expect("a quorum has a voter").0;
        let mut processes = BTreeMap::new();
        let controllers = shape.voters.iter().chain(&shape.spares);
        let everyone = controllers
            .map(|(id, endpoints)| (*id, Some(endpoints.clone())))
            .chain(shape.observers.iter().map(|id| (*id, None)));
        for (id, controller) in everyone {
            let key = ReplicaKey::new(id, Some(random_uuid(&mut rng)));
            let process = Process {
                key,
                controller,
                has_up_to: 0,
                next_fetch_ms: now_ms,
                running: true,
            };
            assert!(processes.insert(id, process).is_none(), "node {id} twice");
        }
        let fetch_interval_ms = shape.fetch_interval_ms.max(1);
        for process in processes.values_mut() {
            process.next_fetch_ms = now_ms + rng.gen_range(0..fetch_interval_ms);
        }
        let voters = VoterSet::new(shape.voters.iter().map(|(id, endpoints)| {
            VoterNode::new(processes[id].key, endpoints.clone(), KRAFT_VERSIONS)
        }))
        .expect("distinct voters");
        let mut log = ControlRecordStateMachine::new(None);
        log.load_snapshot(
            0,
            &[
                ControlRecord::kraft_version(&KRaftVersionRecord::default().with_k_raft_version(1))
                    .expect("a KRaftVersionRecord encodes"),
                ControlRecord::voters(&voters.to_voters_record()).expect("a VotersRecord encodes"),
            ],
        )
        .expect("a bootstrap snapshot loads");
        let leader = LeaderState::new(local(&processes[&first]), 1, log)
            .expect("the first voter is a voter of the bootstrap set");
        Quorum {
            rng,
            cluster_id,
            fetch_interval_ms,
            fetching: true,
            leader,
            processes,
            next_noop_ms: now_ms + NOOP_INTERVAL_MS,
            committed: None,
        }
    }

    /// Names the cluster `cluster_id` rather than by the seed.
    pub fn with_cluster_id(mut self, cluster_id: impl Into<String>) -> Self {
        self.cluster_id = cluster_id.into();
        self
    }

    /// The cluster id.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The leader's state.
    pub fn leader(&self) -> &LeaderState {
        &self.leader
    }

    /// The leader's state, to answer requests with.
    pub fn leader_mut(&mut self) -> &mut LeaderState {
        &mut self.leader
    }

    /// The id and directory id of process `id`.
    pub fn key(&self, id: i32) -> Option<ReplicaKey> {
        self.processes.get(&id).map(|process| process.key)
    }

    /// The controllers (voters or not) and their listeners, by id.
    pub fn controllers(&self) -> impl Iterator<Item = (i32, &Endpoints)> {
        self.processes
            .iter()
            .filter_map(|(id, process)| Some((*id, process.controller.as_ref()?)))
    }

    /// When the next fetch or append is due.
    pub fn next_due_ms(&self) -> i64 {
        self.next_step().0
    }

    /// Whether a voter change waits to commit: the voter set in force at the high watermark
    /// (none while the high watermark is unknown) is not the current one.
    pub fn change_pending(&self) -> bool {
        self.leader.committed_voter_set() != Some(self.leader.current_voter_set())
    }

    /// Whether followers and observers fetch on their timers.
    pub fn is_fetching(&self) -> bool {
        self.fetching
    }

    /// Starts or stops the followers' and observers' timed fetches. Started again, each
    /// fetches within one interval.
    pub fn set_fetching(&mut self, fetching: bool, now_ms: i64) {
        if fetching && !self.fetching {
            let interval = self.fetch_interval_ms;
            for process in self.processes.values_mut() {
                process.next_fetch_ms = now_ms + self.rng.gen_range(0..interval);
            }
        }
        self.fetching = fetching;
    }

    /// Process `id` fetches from the leader now (on top of its timer, if it runs); what
    /// changed, as [`advance`](Self::advance) reports it.
    pub fn fetch_now(&mut self, id: i32, now_ms: i64) -> Result<Vec<Event>, VoterOpError> {
        if !self.processes.contains_key(&id) || id == self.leader.leader_id() {
            return Err(VoterOpError::NoSuchController(id));
        }
        if !self.is_running(id) {
            return Err(VoterOpError::Stopped(id));
        }
        let mut events = Vec::new();
        self.fetch(id, now_ms, &mut events);
        self.after_step(now_ms, &mut events);
        Ok(events)
    }

    /// Every process fetches twice: they hold the whole log and the high watermark is known,
    /// as in a quorum that has run for a while.
    pub fn catch_up(&mut self, now_ms: i64) -> Vec<Event> {
        let mut events = Vec::new();
        let leader = self.leader.leader_id();
        let ids: Vec<i32> = self
            .processes
            .iter()
            .filter(|(&id, process)| id != leader && process.running)
            .map(|(&id, _)| id)
            .collect();
        for _ in 0..2 {
            for &id in &ids {
                self.fetch(id, now_ms, &mut events);
            }
            self.after_step(now_ms, &mut events);
        }
        events
    }

    /// What the leader learns when it sends ApiVersions to a new voter's address: a
    /// controller with exactly this key answers with its `kraft.version` range; anything
    /// else (an unknown id or directory, a broker, which has no controller listener) does
    /// not answer.
    pub fn probe(&self, key: &ReplicaKey) -> NewVoterProbe {
        match self.processes.get(&key.id()) {
            Some(process) if process.key == *key && process.controller.is_some() => {
                NewVoterProbe::Supports(KRAFT_VERSIONS.0, KRAFT_VERSIONS.1)
            }
            _ => NewVoterProbe::NoAnswer,
        }
    }

    /// Adds controller `id` to the voters, as an AddRaftVoter naming it (its directory id
    /// and listeners) would, with the leader's checks; the offset of the new voter set,
    /// which is current at once and committed once the high watermark passes it.
    pub fn add_voter(&mut self, id: i32, now_ms: i64) -> Result<PendingVoterChange, VoterOpError> {
        let process = self
            .processes
            .get(&id)
            .filter(|process| process.controller.is_some())
            .ok_or(VoterOpError::NoSuchController(id))?;
        let listeners = process
            .controller
            .iter()
            .flat_map(|endpoints| endpoints.iter())
            .map(|(name, address)| {
                Listener::default()
                    .with_name(name.into())
                    .with_host(address.host.as_str().into())
                    .with_port(address.port)
            })
            .collect();
        let request = AddRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(id)
            .with_voter_directory_id(process.key.directory_id_or_zero())
            .with_listeners(listeners);
        let probe = self.probe(&process.key);
        let cluster_id = self.cluster_id.clone();
        let result = self.leader.handle_add_raft_voter(
            &request,
            &cluster_id,
            LISTENER,
            probe,
            now_ms,
            i64::MAX / 2,
        );
        self.after_voter_change(now_ms);
        result.map_err(VoterOpError::Refused)
    }

    /// Removes voter `id`, as a RemoveRaftVoter naming it would, with the leader's checks.
    pub fn remove_voter(
        &mut self,
        id: i32,
        now_ms: i64,
    ) -> Result<PendingVoterChange, VoterOpError> {
        let key = self
            .processes
            .get(&id)
            .filter(|process| process.controller.is_some())
            .ok_or(VoterOpError::NoSuchController(id))?
            .key;
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(id)
            .with_voter_directory_id(key.directory_id_or_zero());
        let cluster_id = self.cluster_id.clone();
        let result =
            self.leader
                .handle_remove_raft_voter(&request, &cluster_id, now_ms, i64::MAX / 2);
        self.after_voter_change(now_ms);
        result.map_err(VoterOpError::Refused)
    }

    fn after_voter_change(&mut self, now_ms: i64) {
        let mut events = Vec::new();
        self.after_step(now_ms, &mut events);
    }

    /// Runs every fetch and append due up to `now_ms`, in time order; returns what changed
    /// that an operator would want to see (the high watermark becoming known, the committed
    /// voter set moving, a new leader).
    pub fn advance(&mut self, now_ms: i64) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let (due, step) = self.next_step();
            if due > now_ms {
                break;
            }
            match step {
                Step::Append => {
                    self.next_noop_ms = due + NOOP_INTERVAL_MS;
                    if let Err(error) = self.leader.append_data(1) {
                        events.push(format!("append failed: {error}"));
                    }
                }
                Step::Fetch(id) => {
                    let interval = self
                        .rng
                        .gen_range(self.fetch_interval_ms..2 * self.fetch_interval_ms);
                    if let Some(process) = self.processes.get_mut(&id) {
                        process.next_fetch_ms = due + interval;
                    }
                    self.fetch(id, due, &mut events);
                }
            }
            self.after_step(due, &mut events);
        }
        events
    }

    /// Notes what a request changed (a voter change appended): the same checks as after a
    /// step of the clock.
    pub fn after_request(&mut self, now_ms: i64) -> Vec<Event> {
        let mut events = Vec::new();
        self.after_step(now_ms, &mut events);
        events
    }

    /// Adds broker `id` as an observer reading the metadata log (a broker added at run
    /// time), fetching within one interval; nothing if the quorum holds it already.
    pub fn add_observer(&mut self, id: i32, now_ms: i64) {
        if self.processes.contains_key(&id) {
            return;
        }
        let key = ReplicaKey::new(id, Some(random_uuid(&mut self.rng)));
        let next_fetch_ms = now_ms + self.rng.gen_range(0..self.fetch_interval_ms);
        self.processes.insert(
            id,
            Process {
                key,
                controller: None,
                has_up_to: 0,
                next_fetch_ms,
                running: true,
            },
        );
    }

    /// Whether process `id` runs (an unknown one does not).
    pub fn is_running(&self, id: i32) -> bool {
        self.processes
            .get(&id)
            .is_some_and(|process| process.running)
    }

    /// Stops or restarts process `id` (a controller, or a broker observing): a stopped one
    /// neither fetches nor votes, so the high watermark needs a majority of the voters
    /// still running. Stopping the leader elects another running voter at the next epoch
    /// when the running voters are a majority (else the quorum waits, its leader stopped,
    /// until enough restart); a restarted process fetches again within one interval. What
    /// changed.
    pub fn set_running(
        &mut self,
        id: i32,
        running: bool,
        now_ms: i64,
    ) -> Result<Vec<Event>, VoterOpError> {
        let interval = self.fetch_interval_ms;
        let next_fetch_ms = now_ms + self.rng.gen_range(0..interval);
        let process = self
            .processes
            .get_mut(&id)
            .ok_or(VoterOpError::NoSuchController(id))?;
        if running && !process.running {
            process.next_fetch_ms = next_fetch_ms;
        }
        process.running = running;
        let mut events = Vec::new();
        self.after_step(now_ms, &mut events);
        if !self.is_running(self.leader.leader_id()) {
            let voters = self.leader.current_voter_set();
            let running = voters
                .voter_ids()
                .filter(|&voter| self.is_running(voter))
                .count();
            if running > voters.voter_ids().count() / 2 {
                match self.elect(now_ms) {
                    Ok(event) => events.push(event),
                    Err(error) => events.push(format!("no new leader: {error}")),
                }
            } else {
                events.push(format!(
                    "leader {} stopped; {running} voter(s) running is no majority: no election",
                    self.leader.leader_id()
                ));
            }
        }
        Ok(events)
    }

    fn next_step(&self) -> (i64, Step) {
        let leader = self.leader.leader_id();
        self.processes
            .iter()
            .filter(|(&id, process)| id != leader && process.running && self.fetching)
            .map(|(&id, process)| (process.next_fetch_ms, Step::Fetch(id)))
            .fold((self.next_noop_ms, Step::Append), |best, next| {
                if next.0 < best.0 {
                    next
                } else {
                    best
                }
            })
    }

    /// Process `id` fetches: it reports what its previous fetch brought.
    fn fetch(&mut self, id: i32, now_ms: i64, events: &mut Vec<Event>) {
        let end = self.leader.log_end_offset();
        let Some(process) = self.processes.get_mut(&id) else {
            return;
        };
        let offset = process.has_up_to.min(end);
        if let Err(error) = self
            .leader
            .update_replica_state(process.key, now_ms, offset)
        {
            events.push(format!("fetch by {} failed: {error}", process.key));
        }
        process.has_up_to = end;
    }

    fn after_step(&mut self, now_ms: i64, events: &mut Vec<Event>) {
        let committed = self.leader.committed_voter_set().cloned();
        if committed != self.committed {
            if let Some(set) = &committed {
                events.push(format!(
                    "high watermark {}: committed voters now {}",
                    self.leader.high_watermark().unwrap_or(-1),
                    ids(set)
                ));
            }
            self.committed = committed;
        }
        if self.leader.must_resign() {
            match self.elect(now_ms) {
                Ok(event) => events.push(event),
                Err(error) => events.push(format!("no new leader: {error}")),
            }
        }
    }

    /// The leader left the voters and that is committed, or it stopped: the first other
    /// voter that runs leads the next epoch from the same log. A leader that left keeps
    /// running and fetching, as an observer; one that stopped fetches again when restarted.
    fn elect(&mut self, now_ms: i64) -> Result<Event, QuorumError> {
        let old = self.leader.leader_id();
        let voters = self.leader.current_voter_set().clone();
        let next = voters
            .nodes()
            .find(|node| node.key().id() != old && self.is_running(node.key().id()))
            .ok_or(QuorumError::NoVoterSet)?;
        let local = LocalReplica {
            key: next.key(),
            listeners: next.listeners().clone(),
            supported_kraft_versions: next.supported_kraft_versions(),
        };
        let epoch = self.leader.epoch() + 1;
        self.leader = LeaderState::new(local, epoch, self.leader.log().clone())?;
        self.committed = None;
        let end = self.leader.log_end_offset();
        if let Some(resigned) = self.processes.get_mut(&old) {
            resigned.has_up_to = end;
            resigned.next_fetch_ms = now_ms + self.fetch_interval_ms;
        }
        let why = if self.is_running(old) {
            "no longer a voter"
        } else {
            "stopped"
        };
        Ok(format!(
            "controller {old} resigned ({why}); controller {} leads epoch {epoch}",
            self.leader.leader_id()
        ))
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Append,
    Fetch(i32),
}

fn local(process: &Process) -> LocalReplica {
    LocalReplica {
        key: process.key,
        listeners: process.controller.clone().unwrap_or_default(),
        supported_kraft_versions: KRAFT_VERSIONS,
    }
}

/// A UUID as Kafka's `Uuid.randomUuid` makes them: never zero, never one whose text starts
/// with `-` (it would read as an option on a command line).
fn random_uuid(rng: &mut ChaCha8Rng) -> Uuid {
    loop {
        let uuid = Uuid::from_bytes(rng.gen());
        if !uuid.is_zero() && !uuid.to_string().starts_with('-') {
            return uuid;
        }
    }
}

/// `{1, 2, 3}`.
pub fn ids(set: &VoterSet) -> String {
    let ids: Vec<String> = set.voter_ids().map(|id| id.to_string()).collect();
    format!("{{{}}}", ids.join(", "))
}

#[cfg(test)]
mod tests {
    //! The model in the shape `kafka-codec quorum serve` runs: voters 1, 2 and 3 (1 leads),
    //! controller 4 a spare, broker 100 an observer.

    use super::*;

    const T0: i64 = 1_700_000_000_000;
    const SPARE_CONTROLLER: i32 = 4;
    const BROKER: i32 = 100;

    fn cluster(seed: u64) -> Quorum {
        let endpoint = |id: i32| Endpoints::single(LISTENER, &format!("c{id}"), 9093);
        let shape = QuorumShape {
            seed,
            fetch_interval_ms: 1_000,
            voters: [1, 2, 3].map(|id| (id, endpoint(id))).to_vec(),
            spares: vec![(SPARE_CONTROLLER, endpoint(SPARE_CONTROLLER))],
            observers: vec![BROKER],
        };
        Quorum::new(shape, T0)
    }

    #[test]
    fn a_seed_names_one_cluster() {
        let (a, b, c) = (cluster(7), cluster(7), cluster(8));
        assert_eq!(a.cluster_id(), b.cluster_id());
        assert_ne!(a.cluster_id(), c.cluster_id());
        let keys = |c: &Quorum| [1, 2, 3, 4, 100].map(|id| c.key(id)).to_vec();
        assert_eq!(keys(&a), keys(&b));
        assert_ne!(keys(&a), keys(&c));
        // The same clock gives the same history.
        let (mut a, mut b) = (a, b);
        for step in 1..=40 {
            let now = T0 + step * 250;
            assert_eq!(a.advance(now), b.advance(now));
            assert_eq!(
                a.leader_mut().describe_quorum(now, 3).unwrap(),
                b.leader_mut().describe_quorum(now, 3).unwrap()
            );
        }
    }

    #[test]
    fn the_high_watermark_and_the_committed_set_follow_a_few_seconds_behind() {
        let mut quorum = cluster(1);
        assert_eq!(quorum.leader().high_watermark(), None);
        let events = quorum.advance(T0 + 5_000);
        let hw = quorum
            .leader()
            .high_watermark()
            .expect("known after a few fetches");
        assert!(hw > quorum.leader().epoch_start_offset());
        assert!(
            events[0].contains("committed voters now {1, 2, 3}"),
            "{events:?}"
        );
        // Remove voter 3: current at once, committed only seconds later.
        let three = quorum.key(3).unwrap();
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(3)
            .with_voter_directory_id(three.directory_id().unwrap());
        let now = T0 + 5_000;
        let id = quorum.cluster_id().to_owned();
        let pending = quorum
            .leader_mut()
            .handle_remove_raft_voter(&request, &id, now, 30_000)
            .unwrap();
        assert_eq!(quorum.leader().current_voter_set().len(), 2);
        assert_eq!(quorum.leader().committed_voter_set().unwrap().len(), 3);
        assert_eq!(pending.poll(quorum.leader(), now), None);
        // Not before one fetch interval: a fetch reports what the previous one brought.
        quorum.advance(now + 999);
        assert_eq!(pending.poll(quorum.leader(), now + 999), None);
        let mut at = now;
        while pending.poll(quorum.leader(), at).is_none() {
            at += 100;
            quorum.advance(at);
        }
        assert_eq!(pending.poll(quorum.leader(), at), Some(Ok(())));
        assert!(at - now <= 4_000, "committed after {} ms", at - now);
        assert_eq!(quorum.leader().committed_voter_set().unwrap().len(), 2);
        // Controller 3 keeps fetching, now as an observer.
        quorum.advance(at + 3_000);
        assert!(quorum.leader().observer_states().any(|s| s.key() == three));
    }

    /// The cluster's clock sleeps long while no voter change is pending, and whoever reads
    /// the quorum next moves it in one go: that must give what a clock ticking all along
    /// gave.
    #[test]
    fn a_quorum_moved_at_once_is_where_a_ticking_one_is() {
        let (mut ticking, mut idle) = (cluster(11), cluster(11));
        ticking.catch_up(T0);
        idle.catch_up(T0);
        assert!(!ticking.change_pending(), "caught up: nothing pending");
        let end = T0 + 60_000;
        let mut events = Vec::new();
        for step in 1..=600 {
            events.extend(ticking.advance(T0 + step * 100));
        }
        assert_eq!(idle.advance(end), events);
        assert_eq!(
            ticking.leader_mut().describe_quorum(end, 3).unwrap(),
            idle.leader_mut().describe_quorum(end, 3).unwrap()
        );
        assert_eq!(ticking.next_due_ms(), idle.next_due_ms());
        // A voter change is pending until it commits.
        idle.remove_voter(3, end).expect("accepted");
        assert!(idle.change_pending());
        idle.advance(end + 10_000);
        assert!(!idle.change_pending());
    }

    #[test]
    fn a_leader_that_removes_itself_hands_over_once_the_removal_commits() {
        let mut quorum = cluster(3);
        quorum.advance(T0 + 5_000);
        let one = quorum.key(1).unwrap();
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(1)
            .with_voter_directory_id(one.directory_id().unwrap());
        let id = quorum.cluster_id().to_owned();
        quorum
            .leader_mut()
            .handle_remove_raft_voter(&request, &id, T0 + 5_000, 30_000)
            .unwrap();
        let events = quorum.advance(T0 + 10_000);
        assert!(
            events
                .iter()
                .any(|e| e.contains("controller 2 leads epoch 2")),
            "{events:?}"
        );
        assert_eq!(quorum.leader().leader_id(), 2);
        // The new leader learns its high watermark from the remaining voter, 3.
        quorum.advance(T0 + 15_000);
        assert!(quorum.leader().high_watermark().is_some());
        assert_eq!(
            ids(quorum.leader().committed_voter_set().unwrap()),
            "{2, 3}"
        );
        assert!(quorum.leader().observer_states().any(|s| s.key() == one));
    }

    #[test]
    fn only_a_running_controller_answers_the_new_voter_probe() {
        let quorum = cluster(5);
        let four = quorum.key(SPARE_CONTROLLER).unwrap();
        assert_eq!(quorum.probe(&four), NewVoterProbe::Supports(0, 1));
        let other_disk = ReplicaKey::new(4, Some(Uuid::from_bytes([9; 16])));
        assert_eq!(quorum.probe(&other_disk), NewVoterProbe::NoAnswer);
        let broker = quorum.key(BROKER).unwrap();
        assert_eq!(quorum.probe(&broker), NewVoterProbe::NoAnswer);
        assert_eq!(
            quorum.probe(&ReplicaKey::new(7, Some(Uuid::from_bytes([7; 16])))),
            NewVoterProbe::NoAnswer
        );
    }
}
