//! Fenced brokers, as Kafka's KRaft controller fences a broker whose heartbeats stopped for
//! `broker.session.timeout.ms`: it leaves the ISR of every partition, each partition it led
//! gets a new leader from the replicas left in the ISR (its leader epoch bumped through
//! [`State::move_leader`]), and a partition with none left goes offline (leader -1, its ISR
//! the last replica that was in it, as Kafka keeps one when eligible leader replicas are
//! off). When the broker comes back it is unfenced and leads again the offline partitions it
//! was the last in-sync replica of at once (Kafka's controller elects it as it unfences it);
//! it rejoins the ISR of its other partitions only once it has caught up
//! ([`State::caught_up`], a follower fetch round later: `control/fencing.rs`), each such
//! change bumping the partition epoch but not the leader epoch, as an ISR expansion does on
//! Kafka. Preferred leaders return through the automatic rebalance (`rebalance.rs`) or
//! ElectLeaders.

use super::elr::kafka_isr_expansion_order;
use super::State;
use std::collections::{BTreeMap, BTreeSet};

/// What fencing changed, kept beside the topics.
#[derive(Debug, Default)]
pub struct Fencing {
    /// The brokers fenced now.
    pub(super) fenced: BTreeSet<i32>,
    /// The replicas of each partition a fence moved or took offline, as they were then:
    /// the list stays put while the leader moves within it (the default list is counted
    /// from the leader).
    pub(super) pinned: BTreeMap<(String, i32), Vec<i32>>,
    /// Offline partitions, each with the last replica in its ISR (the one that may lead it
    /// again).
    offline: BTreeMap<(String, i32), i32>,
    /// Brokers unfenced but not yet back in the ISRs (their followers still catching up),
    /// each with the ticket of its unfencing (so a timer of an earlier one does nothing).
    catching_up: BTreeMap<i32, u64>,
    /// Unfencings so far: the next ticket.
    unfencings: u64,
    /// Of each partition, the ISR changes that moved no leader (a follower fenced, a broker
    /// caught up): with the leader epoch, its partition epoch.
    isr_changes: BTreeMap<(String, i32), i32>,
    /// Of each partition whose replicas a leader move reordered, the order of its ISR
    /// before (a reassignment that reorders the replicas leaves the ISR's order alone); of
    /// each whose ISR a caught-up replica rejoined, the ISR in the order Kafka's leader
    /// sends an expanded one in ([`kafka_isr_expansion_order`]).
    pub(super) isr_order: BTreeMap<(String, i32), Vec<i32>>,
    /// Of each fenced (or catching up) broker, the end offset of each partition it followed
    /// when it left: one it missed records of catches up a fetch round later than one it
    /// missed nothing of.
    left_at: BTreeMap<i32, BTreeMap<(String, i32), i64>>,
    /// Of each broker catching up, the partitions whose ISR it rejoined already.
    rejoined: BTreeMap<i32, BTreeSet<(String, i32)>>,
}

/// A partition's replicas as Metadata and DescribeTopicPartitions list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaView {
    /// The leader (-1: offline) and its epoch.
    pub leader: (i32, i32),
    /// Its replicas, the preferred one first.
    pub replicas: Vec<i32>,
    /// The in-sync replicas.
    pub isr: Vec<i32>,
    /// The replicas on fenced (or removed) brokers.
    pub offline: Vec<i32>,
    /// The partition epoch, bumped by every leader or ISR change (the leader epoch by
    /// leader changes only), as Kafka's controller bumps them.
    pub partition_epoch: i32,
}

/// The replicas of a partition led by `leader` among `brokers` (the brokers now, in node
/// id order): the leader and the brokers after it in turn, as many as the replication
/// factor and the brokers allow.
pub fn replicas_among(brokers: &[i32], leader: i32, replication_factor: i16) -> Vec<i32> {
    let after = brokers
        .iter()
        .position(|&node| node == leader)
        .map_or(0, |at| at + 1);
    let others = brokers[after..]
        .iter()
        .chain(&brokers[..after])
        .copied()
        .filter(|&node| node != leader);
    std::iter::once(leader)
        .chain(others)
        .take(usize::try_from(replication_factor).unwrap_or(0).max(1))
        .collect()
}

impl State {
    /// Whether broker `node_id` is fenced.
    pub fn is_fenced(&self, node_id: i32) -> bool {
        self.fencing.fenced.contains(&node_id)
    }

    /// `topic`'s `partition` (which must exist) as Metadata lists it, among `brokers` (the
    /// brokers now, in node id order).
    pub fn replica_view(
        &self,
        topic: &str,
        partition: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> ReplicaView {
        let leader = self.leader(topic, partition, placement_brokers);
        let key = (topic.to_owned(), partition);
        let replicas = match self.fencing.pinned.get(&key) {
            Some(pinned) => pinned.clone(),
            None if self.assigned_replicas(topic, partition).is_some() => self
                .assigned_replicas(topic, partition)
                .map(<[i32]>::to_vec)
                .unwrap_or_default(),
            None => {
                let factor = self
                    .topics
                    .get(topic)
                    .map_or(1, |topic| topic.replication_factor);
                // Counted over the brokers it was placed on that are still there.
                let placed: Vec<i32>;
                let pool = match self.placement(topic, partition) {
                    Some(on) => {
                        placed = on.iter().copied().filter(|n| brokers.contains(n)).collect();
                        &placed[..]
                    }
                    None => brokers,
                };
                replicas_among(pool, leader.0, factor)
            }
        };
        let isr = match self.fencing.offline.get(&key) {
            Some(&last) => vec![last],
            None => replicas
                .iter()
                .copied()
                .filter(|node| !self.is_fenced(*node))
                .collect(),
        };
        // With eligible leader replicas on, the ISR `elr.rs` keeps where it differs.
        let mut isr = self.kept_isr(&key).map_or(isr, <[i32]>::to_vec);
        if let Some(order) = self.fencing.isr_order.get(&key) {
            isr.sort_by_key(|node| order.iter().position(|o| o == node).unwrap_or(order.len()));
        }
        let offline = replicas
            .iter()
            .copied()
            .filter(|node| self.is_fenced(*node) || !brokers.contains(node))
            .collect();
        // A broker unfenced but not caught up on this partition is out of its ISR, unless it
        // leads.
        let isr = if self.fencing.catching_up.is_empty() {
            isr
        } else {
            let caught_up = |node: &i32| *node == leader.0 || !self.is_catching_up_on(*node, &key);
            isr.into_iter().filter(caught_up).collect()
        };
        // Replicas a reassignment adds are out of the ISR until caught up (`reassign.rs`).
        let lagging = self.lagging_replicas(topic, partition);
        let isr = if lagging.is_empty() {
            isr
        } else {
            isr.into_iter().filter(|r| !lagging.contains(r)).collect()
        };
        let partition_epoch = leader.1 + self.fencing.isr_changes.get(&key).copied().unwrap_or(0);
        ReplicaView {
            leader,
            replicas,
            isr,
            offline,
            partition_epoch,
        }
    }

    /// A change of `key`'s partition that moved no leader (its ISR or replicas): the
    /// partition epoch moves on, the leader epoch stays.
    pub(super) fn bump_partition_epoch(&mut self, key: &(String, i32)) {
        *self.fencing.isr_changes.entry(key.clone()).or_default() += 1;
    }

    /// Whether broker `node_id` was unfenced and is not back in the ISRs yet.
    pub fn is_catching_up(&self, node_id: i32) -> bool {
        self.fencing.catching_up.contains_key(&node_id)
    }

    /// Whether broker `node_id` is catching up and has not rejoined `key`'s ISR yet.
    pub fn is_catching_up_on(&self, node_id: i32, key: &(String, i32)) -> bool {
        self.is_catching_up(node_id)
            && !self
                .fencing
                .rejoined
                .get(&node_id)
                .is_some_and(|rejoined| rejoined.contains(key))
    }

    /// Broker `node_id`, just unfenced, is out of the ISRs until [`caught_up`](Self::caught_up).
    pub(super) fn start_catching_up(&mut self, node_id: i32) {
        self.fencing.rejoined.remove(&node_id);
        self.fencing.unfencings += 1;
        self.fencing
            .catching_up
            .insert(node_id, self.fencing.unfencings);
    }

    /// The ticket of broker `node_id`'s unfencing while it catches up (a timer started then
    /// ends it only if it is still the same unfencing).
    pub fn catch_up_ticket(&self, node_id: i32) -> Option<u64> {
        self.fencing.catching_up.get(&node_id).copied()
    }

    /// The partitions (of those with a leader) whose replicas include `node_id`, the leader
    /// aside: those whose ISR it leaves when fenced or joins when caught up.
    fn followed_by(
        &self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        let mut followed = Vec::new();
        for (name, topic) in &self.topics {
            for index in 0..topic.partitions.len() as i32 {
                let view = self.replica_view(name, index, brokers, placement_brokers);
                if view.leader.0 >= 0
                    && view.leader.0 != node_id
                    && view.replicas.contains(&node_id)
                {
                    followed.push((name.clone(), index));
                }
            }
        }
        followed
    }

    /// A follower fetch round of broker `node_id`, unfenced a while ago: it rejoins the ISR
    /// of each partition it follows whose end it has reached (each partition on its own, its
    /// partition epoch bumped, its leader epoch not, as the leader's ISR expansion does on
    /// Kafka once the follower's fetch offset reaches its end). At the first round that is
    /// the partitions that took no record since it left; the others' missed records come in
    /// that round's fetch, and they rejoin at the next. The partitions rejoined; nothing when
    /// it was not catching up (fenced again meanwhile). It is caught up once it rejoined
    /// them all ([`is_catching_up`](Self::is_catching_up) false).
    pub fn caught_up(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        if !self.fencing.catching_up.contains_key(&node_id) {
            return Vec::new();
        }
        let followed = self.followed_by(node_id, brokers, placement_brokers);
        let in_isr = |state: &State, (name, index): &(String, i32)| {
            state
                .replica_view(name, *index, brokers, placement_brokers)
                .isr
                .contains(&node_id)
        };
        let before: Vec<bool> = followed.iter().map(|key| in_isr(self, key)).collect();
        // What it fetched up to this round: every partition's end (the next round's fetch
        // reaches the end of those that took records meanwhile).
        let left_at = self.fencing.left_at.remove(&node_id).unwrap_or_default();
        let (at_end, behind): (Vec<_>, Vec<_>) = followed.iter().cloned().partition(|key| {
            left_at
                .get(key)
                .is_none_or(|&at| at == self.end_offset(key))
        });
        if behind.is_empty() {
            self.fencing.catching_up.remove(&node_id);
            self.fencing.rejoined.remove(&node_id);
        } else {
            self.fencing
                .rejoined
                .entry(node_id)
                .or_default()
                .extend(at_end);
        }
        // With eligible leader replicas on, the ISRs `elr.rs` keeps take it back too (and
        // the other replicas that caught up on a partition back online), each change
        // counted there.
        let counted = self.rejoin_isrs(brokers, placement_brokers);
        let joined: Vec<(String, i32)> = followed
            .into_iter()
            .zip(before)
            .filter(|(key, was)| !was && in_isr(self, key))
            .map(|(key, _)| key)
            .collect();
        for key in &joined {
            // The ISR it rejoins is in the order of the Scala hash set Kafka 4.4's leader
            // expands it in, whatever the replicas' order and whoever joined last
            // ([`kafka_isr_expansion_order`]; ascending for ids below 8. Recorded:
            // `tests/remove_broker_kafka.rs`, c back in [a,b] of replicas [a,c,b] as [a,b,c]
            // and in [a] of [c,a] as [a,c]; `tests/elect_leaders_preferred_kafka.rs`, a back
            // in [b] as [a,b]).
            let isr = self
                .replica_view(&key.0, key.1, brokers, placement_brokers)
                .isr;
            self.fencing
                .isr_order
                .insert(key.clone(), kafka_isr_expansion_order(isr));
        }
        // A reassignment waiting for it may complete now, in the same change (Kafka's
        // controller completes it as it takes the expanded ISR: one record).
        let completed = self.complete_reassignments(brokers, placement_brokers);
        for key in &joined {
            if !counted.contains(key) && !completed.contains(key) {
                *self.fencing.isr_changes.entry(key.clone()).or_default() += 1;
            }
        }
        joined
    }

    /// Fences broker `node_id` (among `brokers`, the brokers now): each partition it leads
    /// moves to the first of its replicas left in its ISR, or goes offline (leader -1), its epoch
    /// bumped either way. Topic, partition and new leader (-1: offline) of each; nothing
    /// when it was fenced already.
    pub fn fence_broker(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32, i32)> {
        self.fence_broker_as(node_id, brokers, placement_brokers, false)
    }

    /// Broker `node_id` registers again after an unclean shutdown (its registration's
    /// `PreviousBrokerEpoch` is not the epoch the controller knows): fenced (a new
    /// registration is) as [`fence_broker`](Self::fence_broker) fences it, and with eligible
    /// leader replicas on it also leaves every ELR, as Kafka's `handleBrokerUncleanShutdown`
    /// does (it may have lost committed records), fenced already or not. Without ELR,
    /// Kafka's `handleBrokerShutdown`: a fence. The partitions whose leader changed.
    pub fn fence_broker_unclean(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32, i32)> {
        let unclean = self.eligible_leader_replicas_enabled();
        self.fence_broker_as(node_id, brokers, placement_brokers, unclean)
    }

    fn fence_broker_as(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
        unclean: bool,
    ) -> Vec<(String, i32, i32)> {
        if self.is_fenced(node_id) && !unclean {
            return Vec::new();
        }
        // The partitions whose ISR it leaves without a leader change (it follows them and
        // is in their ISR): their partition epochs move on, whichever path fences it.
        let shrunk: Vec<(String, i32)> = self
            .followed_by(node_id, brokers, placement_brokers)
            .into_iter()
            .filter(|(name, index)| {
                self.replica_view(name, *index, brokers, placement_brokers)
                    .isr
                    .contains(&node_id)
            })
            .collect();
        // With eligible leader replicas on (Kafka 4.1 and later), `elr.rs`.
        let mut shrunk = shrunk;
        let moved = if self.eligible_leader_replicas_enabled() {
            let (moved, elr_changed) =
                self.fence_broker_elr(node_id, brokers, placement_brokers, unclean);
            // An ELR change is a partition change too.
            shrunk.extend(elr_changed);
            moved
        } else {
            self.fence_broker_plain(node_id, brokers, placement_brokers)
        };
        for key in shrunk {
            *self.fencing.isr_changes.entry(key).or_default() += 1;
        }
        self.fencing.catching_up.remove(&node_id);
        self.fencing.rejoined.remove(&node_id);
        // Where it stopped following each partition (the earliest, if fenced again before it
        // caught up).
        let followed = self.followed_by(node_id, brokers, placement_brokers);
        let ends: Vec<((String, i32), i64)> = followed
            .into_iter()
            .map(|key| {
                let end = self.end_offset(&key);
                (key, end)
            })
            .collect();
        let left_at = self.fencing.left_at.entry(node_id).or_default();
        for (key, end) in ends {
            left_at.entry(key).or_insert(end);
        }
        moved
    }

    /// The offset the next record of `key`'s partition gets (0: no such partition).
    fn end_offset(&self, (name, index): &(String, i32)) -> i64 {
        self.topics
            .get(name)
            .and_then(|topic| topic.partition(*index))
            .map_or(0, |partition| partition.high_watermark())
    }

    /// [`fence_broker`](Self::fence_broker) with eligible leader replicas off.
    fn fence_broker_plain(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32, i32)> {
        if !self.fencing.fenced.insert(node_id) {
            return Vec::new();
        }
        let mut led = Vec::new();
        for (name, topic) in &self.topics {
            for index in 0..topic.partitions.len() as i32 {
                if self.leader(name, index, placement_brokers).0 == node_id {
                    led.push((name.clone(), index));
                }
            }
        }
        let mut moved = Vec::new();
        for (name, index) in led {
            let view = self.replica_view(&name, index, brokers, placement_brokers);
            // The first of its replicas (in their order, not the ISR's) left in the ISR, as
            // Kafka's `PartitionChangeBuilder.electAnyLeader` looks through the replicas.
            let to = view
                .replicas
                .iter()
                .copied()
                .find(|replica| view.isr.contains(replica))
                .or_else(|| {
                    self.unclean_leader_without_elr(&name, &view.replicas, |replica| {
                        brokers.contains(&replica) && !self.is_fenced(replica)
                    })
                })
                .unwrap_or(-1);
            let key = (name.clone(), index);
            self.fencing.pinned.insert(key.clone(), view.replicas);
            self.move_leader(&name, index, to, placement_brokers);
            if to < 0 {
                self.fencing.offline.insert(key, node_id);
            }
            moved.push((name, index, to));
        }
        moved
    }

    /// Moves the leader of `topic`'s `partition` (which must exist) to `to` as an operator
    /// does on Kafka, by a reassignment that puts `to` first among the replicas (the others
    /// in their order; the ISR's order kept), then a preferred leader election: the
    /// partition epoch moves on twice, the leader epoch once (`tests/move_leader_kafka.rs`,
    /// recorded from Kafka 4.4), and `to` is the preferred replica from then on. A broker
    /// that is not a replica is added by the same reassignment (replicas `[to, the
    /// others]`), in sync at once, in the ISR in Kafka's expansion order; the partition
    /// epoch moves on three times, as Kafka's (recorded alike). A partition being reassigned
    /// has its leader moved in place, the replicas as they are. The new leader epoch.
    pub fn move_leader_reassigned(
        &mut self,
        topic: &str,
        partition: i32,
        to: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> i32 {
        let view = self.replica_view(topic, partition, brokers, placement_brokers);
        if !view.replicas.contains(&to) {
            let key = (topic.to_owned(), partition);
            let target: Vec<i32> = std::iter::once(to)
                .chain(view.replicas.iter().copied())
                .collect();
            // It joins the ISR as a caught-up replica does: in the order Kafka's leader
            // sends an expanded ISR in (last in the recording: [a,b] + c as [a,b,c]).
            let isr = kafka_isr_expansion_order(view.isr.iter().copied().chain([to]));
            if self.reassign_in_sync(topic, partition, &target, brokers, placement_brokers) {
                self.fencing.isr_order.insert(key, isr);
            }
        } else if view.replicas[0] != to {
            let key = (topic.to_owned(), partition);
            let replicas: Vec<i32> = std::iter::once(to)
                .chain(view.replicas.iter().copied().filter(|&r| r != to))
                .collect();
            // The new order is the partition's placement from now on: `to` is its
            // preferred replica (ElectLeaders, the automatic rebalance).
            if self.reorder_replicas(key.clone(), replicas) {
                self.fencing.pinned.remove(&key);
                self.fencing.isr_order.insert(key.clone(), view.isr);
                self.bump_partition_epoch(&key);
            }
        }
        self.move_leader(topic, partition, to, placement_brokers)
    }

    /// Broker `node_id` is unregistered: the replicas lists that name it keep naming it
    /// (Kafka's controller reassigns nothing), although the replicas of a partition placed
    /// by default are counted over the brokers listed.
    pub fn keep_replicas_of(&mut self, node_id: i32, brokers: &[i32], placement_brokers: usize) {
        let mut kept = Vec::new();
        for (name, topic) in &self.topics {
            for index in 0..topic.partitions.len() as i32 {
                let key = (name.clone(), index);
                if self.fencing.pinned.contains_key(&key) {
                    continue;
                }
                let view = self.replica_view(name, index, brokers, placement_brokers);
                if view.replicas.contains(&node_id) {
                    kept.push((key, view.replicas));
                }
            }
        }
        self.fencing.pinned.extend(kept);
    }

    /// Unfences broker `node_id`: it leads again (at a bumped epoch) the offline partitions
    /// whose last in-sync replica it was, and is out of the other ISRs until
    /// [`caught_up`](Self::caught_up). Those partitions; nothing when it was not fenced.
    pub fn unfence_broker(&mut self, node_id: i32, placement_brokers: usize) -> Vec<(String, i32)> {
        if !self.fencing.fenced.remove(&node_id) {
            return Vec::new();
        }
        self.start_catching_up(node_id);
        let back: Vec<(String, i32)> = self
            .fencing
            .offline
            .iter()
            .filter(|(_, &last)| last == node_id)
            .map(|(key, _)| key.clone())
            .collect();
        for (name, index) in &back {
            self.move_leader(name, *index, node_id, placement_brokers);
            self.expanded_isr_order(name, *index, node_id);
        }
        // With unclean leader election, an offline partition it is a replica of elects the
        // first replica that may lead, it or one unfenced.
        let mut back = back;
        let unclean: Vec<(String, i32, i32)> = self
            .fencing
            .offline
            .keys()
            .filter_map(|(name, index)| {
                let replicas = self.fencing.pinned.get(&(name.clone(), *index))?;
                let to = self.unclean_leader_without_elr(name, replicas, |replica| {
                    !self.is_fenced(replica)
                })?;
                Some((name.clone(), *index, to))
            })
            .collect();
        for (name, index, to) in unclean {
            self.move_leader(&name, index, to, placement_brokers);
            self.expanded_isr_order(&name, index, to);
            back.push((name, index));
        }
        back
    }

    /// `topic`'s `partition`, whose ISR was `before`: if it grew, it is in the order Kafka's
    /// leader sends an expanded ISR in from now on ([`kafka_isr_expansion_order`]).
    pub(super) fn order_expanded_isr(
        &mut self,
        topic: &str,
        partition: i32,
        before: &[i32],
        brokers: &[i32],
        placement_brokers: usize,
    ) {
        let isr = self
            .replica_view(topic, partition, brokers, placement_brokers)
            .isr;
        if isr.iter().any(|replica| !before.contains(replica)) {
            self.fencing.isr_order.insert(
                (topic.to_owned(), partition),
                kafka_isr_expansion_order(isr),
            );
        }
    }

    /// A partition back online with `leader` alone in its ISR: the other unfenced replicas
    /// that are not catching up join it at once in this model, in the order Kafka's leader
    /// sends an expanded ISR in ([`kafka_isr_expansion_order`]), each in a change of its
    /// own (one partition epoch each), as Kafka's leader adds one follower at a time.
    fn expanded_isr_order(&mut self, topic: &str, partition: i32, leader: i32) {
        let key = (topic.to_owned(), partition);
        let Some(replicas) = self.fencing.pinned.get(&key) else {
            return;
        };
        let isr: Vec<i32> = replicas
            .iter()
            .copied()
            .filter(|&replica| {
                replica == leader
                    || (!self.is_fenced(replica) && !self.is_catching_up_on(replica, &key))
            })
            .collect();
        if isr.len() > 1 {
            let joined = isr.len() as i32 - 1;
            *self.fencing.isr_changes.entry(key.clone()).or_default() += joined;
            self.fencing
                .isr_order
                .insert(key, kafka_isr_expansion_order(isr));
        }
    }

    /// What fencing kept of a partition that now has a leader (ElectLeaders' unclean
    /// election, a move) or of a topic deleted.
    pub(super) fn forget_offline(&mut self, topic: &str, partition: Option<i32>) {
        self.forget_eligible_leaders(topic, partition);
        match partition {
            Some(index) => {
                self.fencing.offline.remove(&(topic.to_owned(), index));
            }
            None => {
                self.fencing.offline.retain(|(name, _), _| name != topic);
                self.fencing.pinned.retain(|(name, _), _| name != topic);
                self.fencing.isr_order.retain(|(name, _), _| name != topic);
                self.fencing
                    .isr_changes
                    .retain(|(name, _), _| name != topic);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Retention;

    #[test]
    fn replicas_follow_the_leader_in_node_order() {
        assert_eq!(replicas_among(&[0, 1, 2], 1, 2), [1, 2]);
        assert_eq!(replicas_among(&[0, 1, 2], 2, 3), [2, 0, 1]);
        assert_eq!(replicas_among(&[0, 1, 2], 0, 9), [0, 1, 2]);
        // A leader that is no longer a broker still comes first.
        assert_eq!(replicas_among(&[0, 2], 1, 2), [1, 0]);
    }

    #[test]
    fn a_fenced_leader_hands_over_to_the_isr_or_the_partition_goes_offline() {
        let mut state = State::new(Retention::default());
        // Three brokers: "r" has two replicas ([p mod 3, the next]), "s" one.
        state.add_topic("r", 3, 2);
        state.add_topic("s", 3, 1);
        let brokers = [0, 1, 2];
        let moved = state.fence_broker(1, &brokers, 3);
        assert_eq!(
            moved,
            [("r".to_owned(), 1, 2), ("s".to_owned(), 1, -1)],
            "r-1 [1, 2] moves to 2, s-1 [1] goes offline"
        );
        assert!(state.fence_broker(1, &brokers, 3).is_empty());
        let view = state.replica_view("r", 1, &brokers, 3);
        assert_eq!(view.leader, (2, 1));
        assert_eq!(
            (view.replicas, view.isr, view.offline),
            (vec![1, 2], vec![2], vec![1])
        );
        // r-0 [0, 1]: a follower fenced leaves the ISR, the leader stays at its epoch.
        let view = state.replica_view("r", 0, &brokers, 3);
        assert_eq!(view.leader, (0, 0));
        assert_eq!((view.isr, view.offline), (vec![0], vec![1]));
        let view = state.replica_view("s", 1, &brokers, 3);
        assert_eq!(view.leader, (-1, 1));
        assert_eq!((view.replicas, view.isr), (vec![1], vec![1]));

        // r-0's ISR shrank without a leader change: its partition epoch moved on alone.
        assert_eq!(state.replica_view("r", 0, &brokers, 3).partition_epoch, 1);

        // Back: leading the offline partition at once, out of the other ISRs until caught up.
        assert_eq!(state.unfence_broker(1, 3), [("s".to_owned(), 1)]);
        assert_eq!(state.leader("s", 1, 3), (1, 2));
        assert!(state.is_catching_up(1));
        let view = state.replica_view("r", 1, &brokers, 3);
        assert_eq!(view.leader, (2, 1));
        assert_eq!((view.isr, view.offline), (vec![2], vec![]));
        assert!(state.unfence_broker(1, 3).is_empty());
        // Caught up: in the ISRs of the partitions it follows (in Kafka's expansion order,
        // ascending for these ids), each partition epoch bumped and each leader epoch kept.
        assert_eq!(
            state.caught_up(1, &brokers, 3),
            [("r".to_owned(), 0), ("r".to_owned(), 1)]
        );
        let view = state.replica_view("r", 1, &brokers, 3);
        assert_eq!(
            (view.leader, view.isr, view.partition_epoch),
            ((2, 1), vec![1, 2], 2)
        );
        let view = state.replica_view("r", 0, &brokers, 3);
        assert_eq!(
            (view.leader, view.isr, view.partition_epoch),
            ((0, 0), vec![0, 1], 2)
        );
        assert!(state.caught_up(1, &brokers, 3).is_empty());
    }

    #[test]
    fn fenced_while_catching_up_it_stays_out_of_the_isr() {
        let mut state = State::new(Retention::default());
        state.add_topic("r", 2, 2);
        let brokers = [0, 1];
        assert_eq!(state.fence_broker(1, &brokers, 2), [("r".to_owned(), 1, 0)]);
        state.unfence_broker(1, 2);
        // Fenced again before it caught up: no ISR change to count, nothing joins later.
        assert!(state.fence_broker(1, &brokers, 2).is_empty());
        assert!(state.caught_up(1, &brokers, 2).is_empty());
        let view = state.replica_view("r", 0, &brokers, 2);
        assert_eq!((view.isr, view.partition_epoch), (vec![0], 1));
    }

    /// With ELR off (releases before 4.1) and unclean leader election on, the unfence path
    /// elects a replica out of the ISR. Kafka 4.4's `PartitionChangeBuilder` with ELR off
    /// (`tools/elr-reference`): `scenario 0,1 1 1 0 0,1`, `fence 1`, `fence 0` (-1, ISR
    /// [0]), `unfence 1` (1 at epoch 2, ISR [1]); with the switch off `unfence 1` elects
    /// no one (`scenario 0,1 1 0 0 0,1`).
    #[test]
    fn without_elr_unclean_election_applies_as_a_broker_is_unfenced() {
        for unclean in [true, false] {
            let mut state = State::new(Retention::default());
            state.add_topic("t", 1, 2);
            state
                .configs
                .topics
                .entry("t".to_owned())
                .or_default()
                .insert(
                    "unclean.leader.election.enable".to_owned(),
                    unclean.to_string(),
                );
            let brokers = [0, 1];
            state.fence_broker(1, &brokers, 2);
            state.fence_broker(0, &brokers, 2);
            let view = state.replica_view("t", 0, &brokers, 2);
            assert_eq!((view.leader, view.isr), ((-1, 1), vec![0]));
            state.unfence_broker(1, 2);
            let view = state.replica_view("t", 0, &brokers, 2);
            if unclean {
                assert_eq!((view.leader, view.isr), ((1, 2), vec![1]));
            } else {
                assert_eq!((view.leader, view.isr), ((-1, 1), vec![0]));
            }
        }
    }

    #[test]
    fn the_last_isr_replica_alone_brings_an_offline_partition_back() {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 1, 2);
        let brokers = [0, 1];
        // The follower first, then the leader: offline, its ISR the leader.
        assert!(state.fence_broker(1, &brokers, 2).is_empty());
        assert_eq!(
            state.fence_broker(0, &brokers, 2),
            [("t".to_owned(), 0, -1)]
        );
        assert_eq!(state.replica_view("t", 0, &brokers, 2).isr, [0]);
        // The follower's return changes nothing (it was out of the ISR, and there is no
        // leader to catch up with), the leader's does.
        assert!(state.unfence_broker(1, 2).is_empty());
        assert!(state.caught_up(1, &brokers, 2).is_empty());
        assert_eq!(state.leader("t", 0, 2), (-1, 1));
        assert_eq!(state.replica_view("t", 0, &brokers, 2).isr, [0]);
        assert_eq!(state.unfence_broker(0, 2), [("t".to_owned(), 0)]);
        let view = state.replica_view("t", 0, &brokers, 2);
        assert_eq!(view.leader, (0, 2));
        assert_eq!(view.isr, [0, 1]);
    }
}
