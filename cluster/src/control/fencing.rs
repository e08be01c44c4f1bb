//! Fencing a stopped broker once its session times out, as Kafka's KRaft controller fences a
//! broker whose heartbeats stopped for `broker.session.timeout.ms` (9 s by default,
//! [`ClusterBuilder::broker_session_timeout`](crate::ClusterBuilder::broker_session_timeout)),
//! and unfencing it when it comes back; also fencing a running broker, as the controller
//! fences one whose heartbeats stop arriving while its listener is up (and unfences it when
//! they arrive again). What happens to its partitions is `State`'s (`state/fencing.rs`);
//! here the timers (the session, and the unfenced broker's return to the ISRs, a follower
//! fetch round later: `rebalance.rs`), the brokers listed, and its coordinatorships: the
//! groups and transactional ids it coordinates move to a stand-in, as the leadership of
//! their `__consumer_offsets` and `__transaction_state` partitions moves on Kafka.

use super::{ControlHandle, OperationError, Operator};
use crate::state::ReplicaView;

/// What fencing a broker did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedBroker {
    /// The broker fenced.
    pub node_id: i32,
    /// The partitions it led: topic, partition, new leader (-1: offline, no other replica
    /// was in the ISR).
    pub moved_leaders: Vec<(String, i32, i32)>,
    /// The groups it coordinated, now coordinated by `stand_in`.
    pub moved_groups: Vec<String>,
    /// The broker that coordinates what it did (`None`: no other broker is unfenced, so
    /// nothing moved).
    pub stand_in: Option<i32>,
}

/// What a broker's fencing moved to its stand-in.
#[derive(Debug, Default)]
pub(crate) struct MovedAway {
    groups: Vec<String>,
    transactional_ids: Vec<String>,
}

impl ControlHandle {
    /// Fences stopped broker `node_id` now, as the controller does once its session timed
    /// out: it leaves Metadata's and DescribeCluster's brokers and every ISR, each partition
    /// it led moves to the first replica left in the ISR (or goes offline, leader -1, when
    /// none is left), its leader epoch bumped, and its groups and transactional ids move to
    /// the next unfenced broker. Restarting it unfences it. A broker that is up is refused
    /// (`OperationError::Up`); one fenced already is fenced again with nothing to move.
    pub fn fence_broker(&self, node_id: i32) -> Result<FencedBroker, OperationError> {
        if !self.shared.is_broker(node_id) {
            return Err(OperationError::NoSuchBroker(node_id));
        }
        if self.is_up(node_id) {
            return Err(OperationError::Up(node_id));
        }
        Ok(self.fence(node_id))
    }

    /// Fences broker `node_id` while it runs, as the controller fences a broker whose
    /// heartbeats stopped arriving although its listener is up (a network partition from
    /// the controllers, a stalled heartbeat): everything [`fence_broker`](Self::fence_broker)
    /// does, and the broker keeps answering, as a follower at the new leader epochs: a
    /// Produce for a partition it led is NOT_LEADER_OR_FOLLOWER, a Fetch or ListOffsets
    /// naming the old epoch FENCED_LEADER_EPOCH. [`unfence_broker`](Self::unfence_broker)
    /// (its heartbeats back) or a restart unfences it.
    pub fn fence_running_broker(&self, node_id: i32) -> Result<FencedBroker, OperationError> {
        if !self.shared.is_broker(node_id) {
            return Err(OperationError::NoSuchBroker(node_id));
        }
        Ok(self.fence(node_id))
    }

    /// Unfences running broker `node_id`, as the controller does when its heartbeats arrive
    /// again: listed again at once, leading again the offline partitions it was the last
    /// in-sync replica of, and back in the ISRs of the others once it has caught up (a
    /// follower fetch round, `replica.fetch.wait.max.ms`, later). Nothing when it is not
    /// fenced; a stopped broker sends no heartbeat (`OperationError::Stopped`: restart it).
    pub fn unfence_broker(&self, node_id: i32) -> Result<(), OperationError> {
        if !self.shared.is_broker(node_id) {
            return Err(OperationError::NoSuchBroker(node_id));
        }
        if !self.is_up(node_id) {
            return Err(OperationError::Stopped(node_id));
        }
        self.unfence(node_id);
        Ok(())
    }

    pub(super) fn fence(&self, node_id: i32) -> FencedBroker {
        self.operator().fence(node_id)
    }

    /// `node_id` registers after an unclean shutdown: fenced, out of the ELRs.
    pub(crate) fn fence_unclean(&self, node_id: i32) -> FencedBroker {
        self.operator().fence_as(node_id, true)
    }

    /// `topic`'s `partition` as Metadata shows it (leader and leader epoch, replicas, ISR,
    /// offline replicas) with its partition epoch, which ISR changes bump too.
    pub fn partition(&self, topic: &str, partition: i32) -> Result<ReplicaView, OperationError> {
        let brokers: Vec<i32> = self.shared.brokers().iter().map(|b| b.node_id).collect();
        let state = self.shared.state();
        if state
            .topics
            .get(topic)
            .and_then(|t| t.partition(partition))
            .is_none()
        {
            return Err(OperationError::NoSuchPartition(topic.to_owned(), partition));
        }
        Ok(state.replica_view(topic, partition, &brokers, self.shared.placement_brokers))
    }

    /// Whether broker `node_id` is fenced.
    pub fn is_fenced(&self, node_id: i32) -> bool {
        self.shared.state().is_fenced(node_id)
    }

    /// Whether broker `node_id` was unfenced and is not back in the ISRs yet.
    pub fn is_catching_up(&self, node_id: i32) -> bool {
        self.shared.state().is_catching_up(node_id)
    }

    /// Fences `node_id` once the broker session timeout passes, unless it is restarted (or
    /// removed, or the cluster dropped) first. Needs the runtime serving the cluster (a
    /// call from elsewhere arms no timer).
    pub(crate) fn fence_when_session_ends(&self, node_id: i32) {
        if !self.shared.is_broker(node_id) {
            return;
        }
        let (Ok(runtime), Ok(mut up)) = (
            tokio::runtime::Handle::try_current(),
            self.watch_up(node_id),
        ) else {
            return;
        };
        let handle = self.clone();
        let timeout = self.shared.broker_session_timeout;
        let mut dropped = self.shared.stop.clone();
        runtime.spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(timeout) => {
                    // Up again or removed in the meantime: nothing to fence.
                    let _ = handle.fence_broker(node_id);
                }
                _ = up.wait_for(|&up| up) => {}
                _ = dropped.changed() => {}
            }
        });
    }

    /// Unfences `node_id` as it comes back: leading the offline partitions it was the last
    /// in-sync replica of, and in its other partitions' ISRs once caught up (a timer). What
    /// it coordinated stays with its stand-in, as the leadership of the coordinators'
    /// partitions stays moved, until the leader rebalance (`rebalance.rs`).
    pub(crate) fn unfence(&self, node_id: i32) {
        let brokers: Vec<i32> = self.shared.brokers().iter().map(|b| b.node_id).collect();
        let back = self.shared.state().unfence_broker_among(
            node_id,
            &brokers,
            self.shared.placement_brokers,
        );
        // Out of the ISRs until it has caught up (a ticket only if it was fenced).
        let ticket = self.shared.state().catch_up_ticket(node_id);
        if !back.is_empty() {
            self.shared.appended.notify_waiters();
        }
        if let Some(ticket) = ticket {
            self.catch_up_later(node_id, ticket);
        }
    }

    /// Puts `node_id` back in the ISRs after the catch-up delay, unless it was fenced (and
    /// perhaps unfenced again) meanwhile. With no delay, or off the runtime, at once.
    fn catch_up_later(&self, node_id: i32, ticket: u64) {
        let handle = self.clone();
        // One fetch round; whether another is needed (partitions it has not rejoined).
        let caught_up = move || {
            let brokers: Vec<i32> = handle.shared.brokers().iter().map(|b| b.node_id).collect();
            let mut state = handle.shared.state();
            if state.catch_up_ticket(node_id) != Some(ticket) {
                return false;
            }
            state.caught_up(node_id, &brokers, handle.shared.placement_brokers);
            state.catch_up_ticket(node_id) == Some(ticket)
        };
        let delay = self.shared.replica_catch_up;
        // No delay, or no runtime to run a timer: at once.
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) if !delay.is_zero() => runtime,
            _ => {
                while caught_up() {}
                return;
            }
        };
        let mut dropped = self.shared.stop.clone();
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(delay) => if !caught_up() { return },
                    _ = dropped.changed() => return,
                }
            }
        });
    }

    /// Gives the groups and transactional ids moved away by fencing back to each broker
    /// that is unfenced and in sync again, and the ids not seen yet that its rule names, as
    /// the preferred leader election gives it back the leadership of their
    /// `__consumer_offsets` and `__transaction_state` partitions.
    pub(crate) fn return_coordinators(&self) {
        let back: Vec<(i32, MovedAway)> = {
            let state = self.shared.state();
            let mut fence_moved = lock(&self.fence_moved);
            let ready: Vec<i32> = fence_moved
                .keys()
                .copied()
                .filter(|&node| {
                    self.shared.is_broker(node)
                        && !state.is_fenced(node)
                        && !state.is_catching_up(node)
                })
                .collect();
            ready
                .into_iter()
                .filter_map(|node| fence_moved.remove(&node).map(|moved| (node, moved)))
                .collect()
        };
        if back.is_empty() {
            return;
        }
        let mut returned = Vec::new();
        {
            let mut coordinators = lock(&self.coordinators);
            let mut transaction_coordinators = lock(&self.transaction_coordinators);
            let mut stand_ins = lock(&self.stand_ins);
            for (node, moved) in back {
                stand_ins.remove(&node);
                for group in moved.groups {
                    if coordinators.insert(group.clone(), node) != Some(node) {
                        returned.push(group);
                    }
                }
                for id in moved.transactional_ids {
                    transaction_coordinators.insert(id, node);
                }
            }
        }
        let mut groups = self.shared.groups();
        for group in &returned {
            groups.coordinator_moved(group);
        }
        drop(groups);
        self.shared.groups_changed.notify_one();
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Operator<'_> {
    pub(super) fn fence(&self, node_id: i32) -> FencedBroker {
        self.fence_as(node_id, false)
    }

    pub(super) fn fence_as(&self, node_id: i32, unclean: bool) -> FencedBroker {
        let shared = &self.shared;
        let brokers: Vec<i32> = shared.brokers().iter().map(|b| b.node_id).collect();
        let placement = shared.placement_brokers;
        let (moved_leaders, stand_in) = {
            let mut state = shared.state();
            let moved = if unclean {
                state.fence_broker_unclean(node_id, &brokers, placement)
            } else {
                state.fence_broker(node_id, &brokers, placement)
            };
            // The next unfenced broker after it in node id order among the other replicas of
            // its internal partitions (`offsets.topic.replication.factor`), as Kafka's
            // controller elects one of them; none: they have no leader.
            let factor = state.configs.coordinator_replication_factor();
            let stand_in = crate::state::replicas_among(&brokers, node_id, factor)
                .into_iter()
                .find(|&b| b != node_id && !state.is_fenced(b));
            (moved, stand_in)
        };
        let mut moved_groups = Vec::new();
        if let Some(stand_in) = stand_in {
            moved_groups = shared
                .groups()
                .groups
                .keys()
                .filter(|group| self.coordinator(group, placement) == node_id)
                .cloned()
                .collect();
            let transactional_ids: Vec<String> = shared
                .state()
                .transactions
                .by_id
                .keys()
                .filter(|id| self.transaction_coordinator(id, placement) == node_id)
                .cloned()
                .collect();
            lock(&self.coordinators)
                .extend(moved_groups.iter().map(|group| (group.clone(), stand_in)));
            lock(&self.transaction_coordinators)
                .extend(transactional_ids.iter().map(|id| (id.clone(), stand_in)));
            let mut fence_moved = lock(&self.fence_moved);
            let moved = fence_moved.entry(node_id).or_default();
            moved.groups.extend(moved_groups.iter().cloned());
            moved.transactional_ids.extend(transactional_ids);
            // Ids not seen yet whose rule names it go to the stand-in too.
            let mut stand_ins = lock(&self.stand_ins);
            for to in stand_ins.values_mut() {
                if *to == node_id {
                    *to = stand_in;
                }
            }
            stand_ins.insert(node_id, stand_in);
        }
        {
            let mut groups = shared.groups();
            for group in &moved_groups {
                groups.coordinator_moved(group);
            }
        }
        shared.groups_changed.notify_one();
        shared.appended.notify_waiters();
        FencedBroker {
            node_id,
            moved_leaders,
            moved_groups,
            stand_in,
        }
    }
}
