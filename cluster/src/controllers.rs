//! The cluster's KRaft controllers: what their listeners advertise, the quorum they share
//! ([`crate::quorum`], the crate's leader model) and the clock that moves it.
//!
//! Every controller answers ApiVersions (the controller listener's set below) and
//! DescribeCluster (the controllers' endpoints, `EndpointType` 2, KIP-919, with the leader as
//! controller id: what `--bootstrap-controller` needs); the leader answers DescribeQuorum,
//! AddRaftVoter and RemoveRaftVoter, and the others NOT_LEADER_OR_FOLLOWER, as Kafka's
//! `KafkaRaftClient` answers them on a follower (the admin client then asks DescribeCluster
//! again and goes to the leader). A voter change is answered once it commits.

use crate::quorum::{Quorum, QuorumShape, LISTENER};
use crate::release::{Listener, Release};
use crate::{BrokerAddress, Event, Shared};
use kafka_codec::conn::SupportedVersions;
use kafka_codec::quorum::{Endpoints, PendingVoterChange, VoterChangeError};
use kafka_codec::ErrorCode;
use std::collections::BTreeSet;
use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;

/// The first controller's node id: Kafka's test kit (`TestKitNodes`) numbers controllers
/// from 3000, clear of the brokers' ids.
pub const FIRST_CONTROLLER_ID: i32 = 3000;

/// How long an accepted voter change may take to commit before the leader answers
/// `REQUEST_TIMED_OUT`: below the admin client's 30 s request timeout, long enough for a
/// test that holds the followers' fetches for a while.
pub const VOTER_CHANGE_TIMEOUT_MS: i64 = 15_000;

/// What a controller's ApiVersions lists: every version of
/// [`CONTROLLER_SERVED`](crate::handlers::CONTROLLER_SERVED) this crate knows,
/// DescribeQuorum v3 (committed voters, provisional: in development upstream) included
/// unless `stable_only`; limited to what `release`'s KRaft controllers listed when the
/// cluster answers as one (nothing before 2.8, which had none).
pub fn advertised(release: Option<Release>, stable_only: bool) -> SupportedVersions {
    let all =
        SupportedVersions::from_ranges(crate::handlers::CONTROLLER_SERVED.into_iter().filter_map(
            |api| {
                let range = if stable_only {
                    api.stable_versions()?
                } else {
                    api.valid_versions()
                };
                Some((api.key(), range))
            },
        ));
    match release {
        Some(release) => release.limit(&all, Listener::Controller),
        None => all,
    }
}

/// Members of the quorum that are modelled but have no listener
/// ([`ClusterBuilder::modelled_controller`](crate::ClusterBuilder::modelled_controller),
/// [`modelled_broker`](crate::ClusterBuilder::modelled_broker)).
#[derive(Debug, Clone, Default)]
pub(crate) struct Modelled {
    /// Controllers in the voter set from the start, after the served ones.
    pub voters: Vec<i32>,
    /// Controllers outside it.
    pub spares: Vec<i32>,
    /// Brokers, observers of the metadata log.
    pub brokers: Vec<i32>,
}

impl Modelled {
    /// Refuses modelled members without a served controller to lead them, and ids that are
    /// negative or taken (by a served node or another modelled one).
    pub fn check(
        &self,
        served_controllers: usize,
        served: impl Iterator<Item = i32>,
    ) -> io::Result<()> {
        let invalid = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        let modelled = self.voters.iter().chain(&self.spares).chain(&self.brokers);
        if served_controllers == 0 && modelled.clone().next().is_some() {
            return invalid("modelled quorum members need a served controller to lead them".into());
        }
        let mut seen: BTreeSet<i32> = served.collect();
        for &id in modelled {
            if id < 0 {
                return invalid(format!("modelled node id {id} is negative"));
            }
            if !seen.insert(id) {
                return invalid(format!("node id {id} is given twice"));
            }
        }
        Ok(())
    }
}

/// Where a modelled controller says it listens: a name under `.invalid` (RFC 6761), which
/// resolves nowhere, so no client mistakes it for a reachable one.
pub fn modelled_endpoints(node_id: i32) -> Endpoints {
    Endpoints::single(LISTENER, &format!("controller-{node_id}.invalid"), 9093)
}

/// The quorum of `controllers` (all voters, the first leading) and the modelled voters after
/// them, with the modelled spares, and `brokers` and the modelled brokers reading the
/// metadata log as observers, named `cluster_id`, caught up as a quorum that has run for a
/// while (the high watermark known, so voter changes are accepted at once).
pub(crate) fn quorum(
    seed: u64,
    host: &str,
    controllers: &[BrokerAddress],
    brokers: &[BrokerAddress],
    modelled: &Modelled,
    fetch_interval: Duration,
    cluster_id: &str,
) -> Quorum {
    let shape = QuorumShape {
        seed,
        fetch_interval_ms: i64::try_from(fetch_interval.as_millis()).unwrap_or(i64::MAX),
        voters: controllers
            .iter()
            .map(|c| {
                let endpoints = Endpoints::single(LISTENER, host, c.address.port());
                (c.node_id, endpoints)
            })
            .chain(
                modelled
                    .voters
                    .iter()
                    .map(|&id| (id, modelled_endpoints(id))),
            )
            .collect(),
        spares: (modelled.spares.iter())
            .map(|&id| (id, modelled_endpoints(id)))
            .collect(),
        observers: (brokers.iter().map(|b| b.node_id))
            .chain(modelled.brokers.iter().copied())
            .collect(),
    };
    let now = now_ms();
    let mut quorum = Quorum::new(shape, now).with_cluster_id(cluster_id);
    quorum.catch_up(now);
    quorum
}

/// How long the quorum's clock sleeps while no voter change is pending. It need not wake at
/// all then (whoever reads the quorum moves it first, [`Shared::quorum`]); it wakes this
/// often so that a read after a long idle never has more than this much of the quorum's
/// history to run under the lock (about 20 fetches and appends: some 1 ms in a debug
/// build, where a day of them took 7 s).
const IDLE_CLOCK: Duration = Duration::from_secs(10);

/// Moves the quorum along the wall clock: while a voter change waits to commit, at each
/// fetch or append, so that the change commits (and its answer goes) on time; otherwise
/// every [`IDLE_CLOCK`]; until the cluster is dropped. Whoever reads the quorum in between
/// moves it to that moment ([`Shared::quorum`]), each fetch and append at its own time,
/// which gives the state a clock that never slept would have given. A voter change wakes
/// the clock ([`Shared::quorum_changed`]). (It used to wake at least every 200 ms: an idle
/// debug cluster spent some 80 ms of CPU and 710 context switches a minute on it.)
pub(crate) async fn run_clock(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    loop {
        let wait = {
            let Some(mut quorum) = shared.quorum_as_it_was() else {
                return;
            };
            let now = now_ms();
            advance(&shared, &mut quorum, now);
            if quorum.change_pending() {
                Duration::from_millis((quorum.next_due_ms() - now).max(1) as u64)
            } else {
                IDLE_CLOCK
            }
        };
        shared.quorum_moved.notify_waiters();
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = shared.quorum_clock.notified() => {}
            _ = stop.changed() => return,
        }
    }
}

/// Runs every fetch and append due up to `now` ([`Quorum::advance`]), showing what moved
/// to the event observer.
pub(crate) fn advance(shared: &Shared, quorum: &mut Quorum, now: i64) {
    for event in quorum.advance(now) {
        shared.event(Event::Quorum(&event));
    }
}

/// A voter change on controller `node_id`, as AddRaftVoter and RemoveRaftVoter (and only
/// they) make one: refused NOT_LEADER_OR_FOLLOWER unless it leads the quorum, else `change`
/// runs the leader model's checks and the answer waits for the change to commit. A broker
/// (`node_id` not a controller) forwards it to the leader, as Kafka's brokers do.
pub(crate) async fn change_voters(
    shared: &Shared,
    node_id: i32,
    change: impl FnOnce(&mut Quorum, &str, i64) -> Result<PendingVoterChange, VoterChangeError>,
) -> Result<(), VoterChangeError> {
    let not_leader = || VoterChangeError {
        code: ErrorCode::NOT_LEADER_OR_FOLLOWER,
        message: "this controller is not the quorum leader".into(),
    };
    let accepted = {
        let Some(mut quorum) = shared.quorum() else {
            return Err(not_leader());
        };
        let now = now_ms();
        advance(shared, &mut quorum, now);
        let leader = quorum.leader().leader_id();
        if shared.is_controller(node_id) && leader != node_id {
            return Err(not_leader());
        }
        let cluster_id = quorum.cluster_id().to_owned();
        let accepted = change(&mut quorum, &cluster_id, now);
        if let Ok(pending) = &accepted {
            shared.event(Event::Quorum(&format!(
                "controller {leader} appended a VotersRecord at offset {}; the change is \
                 answered once it commits",
                pending.offset()
            )));
        }
        for event in quorum.after_request(now) {
            shared.event(Event::Quorum(&event));
        }
        accepted
    };
    shared.quorum_changed();
    wait_for_commit(shared, accepted?).await
}

/// Waits until `pending` has an answer: committed, or timed out. A leader that resigned
/// meanwhile answers as its successor's log says (the change is in it).
pub(crate) async fn wait_for_commit(
    shared: &Shared,
    pending: PendingVoterChange,
) -> Result<(), VoterChangeError> {
    loop {
        let moved = shared.quorum_moved.notified();
        let polled = shared
            .quorum()
            .and_then(|quorum| pending.poll(quorum.leader(), now_ms()));
        if let Some(outcome) = polled {
            return outcome;
        }
        // The clock wakes this at each fetch or append while the change is pending; a hang
        // guard polls at least every 200 ms (each poll moves the quorum to now).
        let _ = tokio::time::timeout(Duration::from_millis(200), moved).await;
    }
}

/// Milliseconds since the epoch, as KRaft's fetch timestamps are.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
