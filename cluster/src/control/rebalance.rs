//! The automatic leader rebalance's timer, as Kafka 4.4's controller runs it: with
//! `auto.leader.rebalance.enable` (true by default) it registers the periodic task
//! `electPreferred` when it becomes active, which runs every
//! `leader.imbalance.check.interval.seconds` (300 by default) from then on, and again 10 ms
//! after a pass that left elections undone (more than 1000 due). Here the controller becomes
//! active when the cluster is built. What a pass moves is `State`'s (`state/rebalance.rs`).
//!
//! Also the delay of an unfenced broker's return to the ISRs: `replica.fetch.wait.max.ms`
//! (500 ms by default), the longest a follower's fetch waits at the leader. A follower that
//! restarts (or whose heartbeats come back) fetches from its leaders at once; the leader
//! adds it to the ISR once a fetch reaches its log end, which takes one fetch round when
//! there is nothing to copy (every append here is replicated at once) and is answered at
//! the latest `replica.fetch.wait.max.ms` later. So the ISR expansion is modelled at that
//! bound, not at `replica.lag.time.max.ms` (30 s), which is how long a follower may lag
//! before it is removed, not how long it takes to rejoin.

use super::ControlHandle;
use crate::configs::Overrides;
use crate::state::MAX_ELECTIONS_PER_PASS;
use crate::Shared;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How soon a pass that left elections undone runs again (Kafka's `PeriodicTask` default).
const AGAIN_AFTER: Duration = Duration::from_millis(10);

/// The check interval the broker configs give (`None`: the rebalance is off). An interval
/// below 1 s is refused, as Kafka's config validator refuses it.
pub(crate) fn interval(configs: &Overrides) -> io::Result<Option<Duration>> {
    if !configs
        .static_or_default::<bool>("auto.leader.rebalance.enable")
        .unwrap_or(true)
    {
        return Ok(None);
    }
    let seconds = configs
        .static_or_default::<i64>("leader.imbalance.check.interval.seconds")
        .unwrap_or(300);
    if seconds < 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("leader.imbalance.check.interval.seconds {seconds}: at least 1"),
        ));
    }
    Ok(Some(Duration::from_secs(seconds as u64)))
}

/// How long an unfenced broker takes to rejoin the ISRs: `replica.fetch.wait.max.ms`.
pub(crate) fn catch_up_delay(configs: &Overrides) -> Duration {
    let ms = configs
        .static_or_default::<i64>("replica.fetch.wait.max.ms")
        .unwrap_or(500);
    Duration::from_millis(ms.max(0) as u64)
}

/// Runs the rebalance every `interval` until the cluster is dropped.
pub(crate) async fn run(shared: Arc<Shared>, interval: Duration, mut stop: watch::Receiver<()>) {
    let control = ControlHandle {
        shared: Arc::clone(&shared),
    };
    let mut next = interval;
    loop {
        tokio::select! {
            () = tokio::time::sleep(next) => {}
            _ = stop.changed() => return,
        }
        let (_, more) = control.elect_preferred_pass(MAX_ELECTIONS_PER_PASS);
        next = if more { AGAIN_AFTER } else { interval };
    }
}

/// How often Kafka's controller runs its periodic task `electUnclean`: its internal
/// `unclean.leader.election.interval.ms` (`ReplicationConfigs`' default, 5 minutes). Setting
/// `unclean.leader.election.enable` elects nothing at once on Kafka 4.4 (its documentation
/// says to wait for this task or run an unclean ElectLeaders).
pub const UNCLEAN_ELECTION_INTERVAL: Duration = Duration::from_secs(300);

/// Runs the periodic unclean leader election every [`UNCLEAN_ELECTION_INTERVAL`] until the
/// cluster is dropped (registered when the controller becomes active, as Kafka's is).
pub(crate) async fn run_unclean(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    let control = ControlHandle {
        shared: Arc::clone(&shared),
    };
    let mut next = UNCLEAN_ELECTION_INTERVAL;
    loop {
        tokio::select! {
            () = tokio::time::sleep(next) => {}
            _ = stop.changed() => return,
        }
        let (_, more) = control.elect_unclean_pass(MAX_ELECTIONS_PER_PASS);
        next = if more {
            AGAIN_AFTER
        } else {
            UNCLEAN_ELECTION_INTERVAL
        };
    }
}

impl ControlHandle {
    /// Runs the controller's periodic unclean leader election now: each partition without
    /// a leader whose topic has `unclean.leader.election.enable` elects one (the ISR, the
    /// ELR, the last known leader, else the first unfenced replica). The partitions that
    /// got a leader (topic, partition, leader).
    pub fn elect_unclean_leaders(&self) -> Vec<(String, i32, i32)> {
        let mut all = Vec::new();
        loop {
            let (elected, more) = self.elect_unclean_pass(MAX_ELECTIONS_PER_PASS);
            all.extend(elected);
            if !more {
                return all;
            }
        }
    }

    fn elect_unclean_pass(&self, max: usize) -> (Vec<(String, i32, i32)>, bool) {
        let brokers: Vec<i32> = self.shared.brokers().iter().map(|b| b.node_id).collect();
        let (elected, more) =
            self.shared
                .state()
                .elect_unclean_leaders(&brokers, self.shared.placement_brokers, max);
        if !elected.is_empty() {
            self.shared.appended.notify_waiters();
        }
        (elected, more)
    }

    /// Runs the automatic leader rebalance's check now (whether or not the rebalance is on):
    /// every partition whose preferred replica does not lead, is in its ISR and is unfenced
    /// moves to it at a bumped leader epoch. The partitions moved (topic, partition, new
    /// leader).
    pub fn rebalance_leaders(&self) -> Vec<(String, i32, i32)> {
        let mut all = Vec::new();
        loop {
            let (moved, more) = self.elect_preferred_pass(MAX_ELECTIONS_PER_PASS);
            all.extend(moved);
            if !more {
                return all;
            }
        }
    }

    /// The automatic leader rebalance's check interval (`None`: off).
    pub fn leader_rebalance_interval(&self) -> Option<Duration> {
        self.shared.leader_rebalance
    }

    fn elect_preferred_pass(&self, max: usize) -> (Vec<(String, i32, i32)>, bool) {
        self.return_coordinators();
        let brokers: Vec<i32> = self.shared.brokers().iter().map(|b| b.node_id).collect();
        let (moved, more) = self.shared.state().elect_preferred_leaders(
            &brokers,
            self.shared.placement_brokers,
            max,
        );
        if !moved.is_empty() {
            // Fetches waiting at the old leaders answer now.
            self.shared.appended.notify_waiters();
        }
        (moved, more)
    }
}
