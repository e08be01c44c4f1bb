//! The simulated quorum behind `quorum serve`: the library's leader model
//! ([`LeaderState`]) plus the processes around it, driven by a clock.
//!
//! Controllers 1, 2 and 3 are the voters (bootstrapped at `kraft.version` 1, as
//! `kafka-storage format --initial-controllers` leaves them) and controller 1 leads epoch 1.
//! Controller 4 runs too but is not a voter (a spare that `add-controller` can add), and
//! broker 100 reads the metadata log. All but the leader fetch from it on a timer, one to two
//! fetch intervals apart; a fetch reports what the previous fetch brought, so a new record is
//! on a follower two fetches after it was appended, and the high watermark, and with it the
//! committed voter set, follows a few seconds behind a voter change. The leader appends a
//! record every 500 ms, as an idle KRaft controller appends a `NoOpRecord`.
//!
//! A seed fixes everything but the wall clock: directory ids, the cluster id and the fetch
//! intervals. Only the leader has a socket (the server's); the other controllers' endpoints
//! are names under `.invalid`, which resolve nowhere. When a voter change removes the
//! leader and commits, the leader resigns as Kafka's does, the lowest-numbered remaining
//! voter takes over the next epoch, and the server answers as that leader from then on.

use kafka_codec::messages::KRaftVersionRecord;
use kafka_codec::quorum::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, NewVoterProbe,
    QuorumError, ReplicaKey, VoterNode, VoterSet,
};
use kafka_codec::Uuid;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The listener controllers talk on.
pub const LISTENER: &str = "CONTROLLER";
/// The voters the quorum starts with; the first leads.
const VOTERS: [i32; 3] = [1, 2, 3];
/// A controller that runs but is not a voter.
const SPARE_CONTROLLER: i32 = 4;
/// A broker, reading the metadata log as an observer.
const BROKER: i32 = 100;
/// How often the leader appends a record of its own (Kafka's
/// `metadata.max.idle.interval.ms` default).
const NOOP_INTERVAL_MS: i64 = 500;
/// The `kraft.version` range every simulated controller supports.
const KRAFT_VERSIONS: (i16, i16) = (0, 1);

/// One simulated process.
#[derive(Debug, Clone)]
struct Process {
    key: ReplicaKey,
    /// Its controller listener; `None` for a broker.
    controller: Option<Endpoints>,
    /// The leader's log end offset when its previous fetch was answered: what it has.
    has_up_to: i64,
    next_fetch_ms: i64,
}

/// Something the quorum did by itself, for the server's log.
pub type Event = String;

/// The simulated quorum.
#[derive(Debug)]
pub struct Cluster {
    rng: ChaCha8Rng,
    cluster_id: String,
    fetch_interval_ms: i64,
    leader: LeaderState,
    processes: BTreeMap<i32, Process>,
    next_noop_ms: i64,
    committed: Option<VoterSet>,
}

impl Cluster {
    /// A fresh quorum at `now_ms`: controller 1 leads epoch 1 and listens on `address`; the
    /// others fetch about every `fetch_interval_ms`.
    pub fn new(seed: u64, fetch_interval_ms: i64, address: (&str, u16), now_ms: i64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cluster_id = random_uuid(&mut rng).to_string();
        let mut processes = BTreeMap::new();
        for id in VOTERS.into_iter().chain([SPARE_CONTROLLER, BROKER]) {
            let key = ReplicaKey::new(id, Some(random_uuid(&mut rng)));
            let controller = (id != BROKER).then(|| {
                if id == VOTERS[0] {
                    Endpoints::single(LISTENER, address.0, address.1)
                } else {
                    Endpoints::single(LISTENER, &format!("controller-{id}.invalid"), 9093)
                }
            });
            processes.insert(
                id,
                Process {
                    key,
                    controller,
                    has_up_to: 0,
                    next_fetch_ms: now_ms,
                },
            );
        }
        for process in processes.values_mut() {
            process.next_fetch_ms = now_ms + rng.gen_range(0..fetch_interval_ms.max(1));
        }
        let voters = VoterSet::new(VOTERS.iter().map(|id| {
            let process = &processes[id];
            VoterNode::new(
                process.key,
                process.controller.clone().expect("voters are controllers"),
                KRAFT_VERSIONS,
            )
        }))
        .expect("three distinct voters");
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
        let leader = LeaderState::new(local(&processes[&VOTERS[0]]), 1, log)
            .expect("controller 1 is a voter of the bootstrap set");
        Cluster {
            rng,
            cluster_id,
            fetch_interval_ms: fetch_interval_ms.max(1),
            leader,
            processes,
            next_noop_ms: now_ms + NOOP_INTERVAL_MS,
            committed: None,
        }
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

    /// When the next fetch or append is due.
    pub fn next_due_ms(&self) -> i64 {
        self.next_step().0
    }

    /// What the leader learns when it sends ApiVersions to a new voter's address: a
    /// simulated controller with exactly this key answers with its `kraft.version` range;
    /// anything else (an unknown id or directory, a broker, which has no controller
    /// listener) does not answer.
    pub fn probe(&self, key: &ReplicaKey) -> NewVoterProbe {
        match self.processes.get(&key.id()) {
            Some(process) if process.key == *key && process.controller.is_some() => {
                NewVoterProbe::Supports(KRAFT_VERSIONS.0, KRAFT_VERSIONS.1)
            }
            _ => NewVoterProbe::NoAnswer,
        }
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
                Step::Fetch(id) => self.fetch(id, due, &mut events),
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

    fn next_step(&self) -> (i64, Step) {
        let leader = self.leader.leader_id();
        self.processes
            .iter()
            .filter(|(&id, _)| id != leader)
            .map(|(&id, process)| (process.next_fetch_ms, Step::Fetch(id)))
            .fold((self.next_noop_ms, Step::Append), |best, next| {
                if next.0 < best.0 {
                    next
                } else {
                    best
                }
            })
    }

    fn fetch(&mut self, id: i32, now_ms: i64, events: &mut Vec<Event>) {
        let end = self.leader.log_end_offset();
        let interval = self
            .rng
            .gen_range(self.fetch_interval_ms..2 * self.fetch_interval_ms);
        let process = self.processes.get_mut(&id).expect("a scheduled process");
        process.next_fetch_ms = now_ms + interval;
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

    /// The leader left the voters and that is committed: it resigns, and the lowest
    /// remaining voter leads the next epoch from the same log. The old leader keeps running
    /// and fetching, as an observer.
    fn elect(&mut self, now_ms: i64) -> Result<Event, QuorumError> {
        let old = self.leader.leader_id();
        let voters = self.leader.current_voter_set().clone();
        let next = voters
            .nodes()
            .find(|node| self.processes.contains_key(&node.key().id()))
            .ok_or(QuorumError::NoVoterSet)?;
        let process = &self.processes[&next.key().id()];
        let local = LocalReplica {
            key: next.key(),
            listeners: next.listeners().clone(),
            supported_kraft_versions: next.supported_kraft_versions(),
        };
        debug_assert_eq!(process.key, next.key());
        let epoch = self.leader.epoch() + 1;
        self.leader = LeaderState::new(local, epoch, self.leader.log().clone())?;
        self.committed = None;
        let end = self.leader.log_end_offset();
        if let Some(resigned) = self.processes.get_mut(&old) {
            resigned.has_up_to = end;
            resigned.next_fetch_ms = now_ms + self.fetch_interval_ms;
        }
        Ok(format!(
            "controller {old} resigned (no longer a voter); controller {} leads epoch {epoch} \
             and this server answers for it",
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
    use super::*;
    use kafka_codec::messages::RemoveRaftVoterRequest;

    const T0: i64 = 1_700_000_000_000;

    fn cluster(seed: u64) -> Cluster {
        Cluster::new(seed, 1_000, ("127.0.0.1", 9093), T0)
    }

    #[test]
    fn a_seed_names_one_cluster() {
        let (a, b, c) = (cluster(7), cluster(7), cluster(8));
        assert_eq!(a.cluster_id(), b.cluster_id());
        assert_ne!(a.cluster_id(), c.cluster_id());
        let keys = |c: &Cluster| c.processes.values().map(|p| p.key).collect::<Vec<_>>();
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
        let three = quorum.processes[&3].key;
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

    #[test]
    fn a_leader_that_removes_itself_hands_over_once_the_removal_commits() {
        let mut quorum = cluster(3);
        quorum.advance(T0 + 5_000);
        let one = quorum.processes[&1].key;
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
        let four = quorum.processes[&SPARE_CONTROLLER].key;
        assert_eq!(quorum.probe(&four), NewVoterProbe::Supports(0, 1));
        let other_disk = ReplicaKey::new(4, Some(Uuid::from_bytes([9; 16])));
        assert_eq!(quorum.probe(&other_disk), NewVoterProbe::NoAnswer);
        let broker = quorum.processes[&BROKER].key;
        assert_eq!(quorum.probe(&broker), NewVoterProbe::NoAnswer);
        assert_eq!(
            quorum.probe(&ReplicaKey::new(7, Some(Uuid::from_bytes([7; 16])))),
            NewVoterProbe::NoAnswer
        );
    }
}
