//! Eligible leader replicas (KIP-966), as Kafka's KRaft controller keeps them when the
//! cluster finalizes `eligible.leader.replicas.version` 1 (every freshly formatted cluster
//! from Kafka 4.1 on; `release-features.tsv`). Older releases (`--as-version`) keep
//! `fencing.rs`'s behaviour, where an offline partition's ISR keeps its last member.
//!
//! With ELR on, an ISR that shrinks below the topic's effective `min.insync.replicas`
//! (`min(min.insync.replicas, replication factor)`; 1 by default, so only an ISR that empties
//! counts) hands the replicas it loses to the ELR: they held every committed record when
//! they left, so one may lead again when the ISR is empty. The ISR may then be empty (leader
//! -1), the ELR naming the replicas that may come back as leader, and `LastKnownElr` the
//! leader the partition had when it went offline. Any change leaves the ELR empty once the
//! ISR reaches the minimum again; an unclean election empties it, and changing
//! `min.insync.replicas` (for the topic or the cluster) clears the ELR and `LastKnownElr` of
//! the partitions it covers, as Kafka's `ClearElrRecord` does, electing no one.
//!
//! Each event is one partition change as Kafka's `PartitionChangeBuilder` computes it
//! ([`Partition::changed`]): fencing a broker removes it from the ISRs it is in; unfencing
//! one elects leaders for the partitions that have none (it among the acceptable ones), and
//! then (this model's catch-up at once) every unfenced replica of a led partition rejoins
//! its ISR, as the leader's AlterPartition would add it, in the order that leader sends it
//! in ([`kafka_isr_expansion_order`]). `tools/elr-reference`'s `ElrReference` replays the
//! same events through Kafka 4.4's own class (`tests/elr_reference.rs` compares the two).

use super::State;
use crate::configs::definitions;
use std::collections::BTreeMap;

/// A partition whose leader changed: topic, partition, new leader (-1: none).
type Moved = (String, i32, i32);

/// What the cluster keeps for eligible leader replicas.
#[derive(Debug, Default)]
pub struct EligibleLeaders {
    /// Whether `eligible.leader.replicas.version` is finalized at 1 or more.
    enabled: bool,
    /// The partitions whose ISR, ELR or last known ELR is not what `fencing.rs` derives
    /// (every unfenced replica in the ISR, both lists empty).
    kept: BTreeMap<(String, i32), Kept>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    /// Whether the partition has no leader (then always kept).
    leaderless: bool,
    isr: Vec<i32>,
    elr: Vec<i32>,
    last_known_elr: Vec<i32>,
}

/// A partition's replication state, as the controller's partition registration holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// Its replicas, the preferred one first.
    pub replicas: Vec<i32>,
    /// The in-sync replicas.
    pub isr: Vec<i32>,
    /// The eligible leader replicas.
    pub elr: Vec<i32>,
    /// The leader it had when it last went offline (while it has none).
    pub last_known_elr: Vec<i32>,
    /// Its leader, -1 for none.
    pub leader: i32,
}

/// One change asked of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The ISR wanted (a fenced broker left out, a caught-up one added).
    pub target_isr: Vec<i32>,
    /// The topic's effective `min.insync.replicas`.
    pub min_isr: usize,
    /// `unclean.leader.election.enable` for the topic.
    pub unclean: bool,
    /// Whether eligible leader replicas are on.
    pub elr: bool,
    /// A replica back from an unclean shutdown (Kafka's `setUncleanShutdownReplicas`): it
    /// may have lost committed records, so it is no longer eligible.
    pub unclean_shutdown: Option<i32>,
}

impl Partition {
    /// The partition after `change`, a new leader chosen among those `acceptable` (unfenced
    /// brokers) when its leader no longer qualifies. Its leader epoch goes up by one when
    /// the leader differs.
    pub fn changed(&self, change: &Change, acceptable: impl Fn(i32) -> bool) -> Partition {
        let mut isr = change.target_isr.clone();
        let mut elr = self.elr.clone();
        if change.elr {
            if isr.len() >= change.min_isr {
                elr.clear();
            } else {
                // Whoever was eligible already or in the ISR and is not in the new one, nor
                // back from an unclean shutdown, in the order of the `HashSet` Kafka
                // collects them in (the old ELR first, then the old ISR).
                elr =
                    java_hash_set_order(self.elr.iter().chain(&self.isr).copied(), self.elr.len())
                        .into_iter()
                        .filter(|&replica| {
                            !isr.contains(&replica) && change.unclean_shutdown != Some(replica)
                        })
                        .collect();
            }
        }
        let qualifies = |replica: i32, isr: &[i32], elr: &[i32]| {
            (isr.contains(&replica) || (isr.is_empty() && elr.contains(&replica)))
                && acceptable(replica)
        };
        // The leader it had when it went offline, when nothing else can lead (this is
        // counted as an unclean election).
        let last_known = change.elr
            && isr.is_empty()
            && elr.is_empty()
            && self.last_known_elr.len() == 1
            && acceptable(self.last_known_elr[0]);
        let (leader, unclean) = if qualifies(self.leader, &isr, &elr) {
            (self.leader, false)
        } else if let Some(replica) = self
            .replicas
            .iter()
            .copied()
            .find(|&replica| qualifies(replica, &isr, &elr))
        {
            (replica, false)
        } else if last_known {
            (self.last_known_elr[0], true)
        } else if let Some(replica) = self
            .replicas
            .iter()
            .copied()
            .find(|&replica| change.unclean && acceptable(replica))
        {
            (replica, true)
        } else {
            (-1, false)
        };
        let moved = leader != self.leader;
        if moved && elr.contains(&leader) {
            // Elected from the ELR: it is the ISR now.
            isr = vec![leader];
            elr.retain(|&replica| replica != leader);
        }
        if moved && unclean {
            isr = vec![leader];
        }
        if (moved && unclean) || !change.elr {
            elr.clear();
        }
        if isr.is_empty() && !change.elr {
            // Without ELR an ISR never empties: its last member stays.
            isr = self.isr.clone();
        }
        let mut last_known_elr = self.last_known_elr.clone();
        if change.elr && moved {
            if leader < 0 && self.last_known_elr.is_empty() {
                last_known_elr = vec![self.leader];
            } else if leader >= 0 {
                last_known_elr.clear();
            }
        }
        Partition {
            replicas: self.replicas.clone(),
            isr,
            elr,
            last_known_elr,
            leader,
        }
    }
}

/// The iteration order of a `java.util.HashSet<Integer>` built as `new HashSet<>(first)`
/// with the first `initial` of `items`, then given the rest by `add`: by bucket
/// (`hash & (capacity - 1)`, an `Integer`'s hash being its value spread as
/// `h ^ (h >>> 16)`), within a bucket in insertion order (a resize splits buckets keeping
/// that order). The capacity starts at `max(initial / 0.75 + 1, 16)` rounded up to a power
/// of two and doubles while the set holds more than three quarters of it. Broker ids below
/// the capacity come out ascending; 16 and above do not (16 before 1). A bucket is never
/// long enough here (8) for Java to make it a tree.
fn java_hash_set_order(items: impl IntoIterator<Item = i32>, initial: usize) -> Vec<i32> {
    let mut set = distinct(items);
    let mut capacity = ((initial as f32 / 0.75) as usize + 1)
        .max(16)
        .next_power_of_two();
    while set.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    // A stable sort keeps insertion order within a bucket.
    set.sort_by_key(|&id| bucket(id, capacity));
    set
}

/// `items` without repeats, each where it first came.
fn distinct(items: impl IntoIterator<Item = i32>) -> Vec<i32> {
    let mut set: Vec<i32> = Vec::new();
    for item in items {
        if !set.contains(&item) {
            set.push(item);
        }
    }
    set
}

/// An `Integer`'s hash (its value) spread as Java's `HashMap` and Scala 2.13's
/// `mutable.HashSet` both spread it: `h ^ (h >>> 16)`.
fn spread(id: i32) -> u32 {
    let h = id as u32;
    h ^ (h >> 16)
}

/// The bucket `id` falls in, in a table of `capacity` (a power of two) buckets.
fn bucket(id: i32, capacity: usize) -> usize {
    spread(id) as usize & (capacity - 1)
}

/// The order of the ISR a Kafka 4.4 leader sends in the AlterPartition that adds a caught-up
/// replica, which its controller keeps as it is (so the partition's ISR has it from then
/// on). Found in the 4.4 jars (`javap -c`): `kafka.cluster.Partition.prepareIsrExpand`
/// maps the committed ISR (a `java.util.Set`) into a Scala `mutable.HashSet`, adds the new
/// replica with `+` and sends that set's `toList`; `ReplicationControlManager.alterPartition`
/// hands the list to `PartitionChangeBuilder.setTargetIsrWithBrokerStates`, and `build`
/// writes `targetIsr` into the `PartitionChangeRecord` unsorted. So the order is Scala
/// 2.13's hash set iteration, which is neither the replicas' order nor who joined last: by
/// bucket (`h & (capacity - 1)` with `h` the id spread as `h ^ (h >>> 16)`), then within a
/// bucket by `h`. The capacity is 8 while the set holds at most 5 and doubles each time it
/// holds three quarters of it (6 -> 16, 12 -> 32, 24 -> 64): measured with the Kafka
/// distribution's `scala-library-2.13.18` making 20,000 random expansions of 2 to 31 ids the
/// way `prepareIsrExpand` does, this rule gave each list exactly. Ids below 8 come out
/// ascending; 8 and above need not (8 before 1), as a live 4.4 cluster listed them
/// (`tests/isr_order_kafka.rs`). `tools/elr-reference` expands with the Scala library
/// itself, and `tests/elr_reference.rs` compares.
pub(super) fn kafka_isr_expansion_order(isr: impl IntoIterator<Item = i32>) -> Vec<i32> {
    let mut set = distinct(isr);
    let mut capacity: usize = 8;
    while set.len() * 4 >= capacity * 3 && capacity < 1 << 30 {
        capacity *= 2;
    }
    // Within a bucket by the spread hash (as a signed int), whatever came first.
    set.sort_by_key(|&id| (bucket(id, capacity), spread(id) as i32));
    set
}

impl State {
    /// Turns eligible leader replicas on or off (the cluster's finalized
    /// `eligible.leader.replicas.version`); set once, before any topic.
    pub fn set_eligible_leader_replicas(&mut self, enabled: bool) {
        self.eligible_leaders.enabled = enabled;
    }

    /// Whether eligible leader replicas are on.
    pub fn eligible_leader_replicas_enabled(&self) -> bool {
        self.eligible_leaders.enabled
    }

    /// `topic`'s `partition`'s eligible leader replicas and last known ELR, as
    /// DescribeTopicPartitions lists them (both empty when ELR is off).
    pub fn eligible_leaders(&self, topic: &str, partition: i32) -> (Vec<i32>, Vec<i32>) {
        match self
            .eligible_leaders
            .kept
            .get(&(topic.to_owned(), partition))
        {
            Some(kept) => (kept.elr.clone(), kept.last_known_elr.clone()),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// The ISR kept for `key` where it differs from what fencing derives.
    pub(super) fn kept_isr(&self, key: &(String, i32)) -> Option<&[i32]> {
        self.eligible_leaders
            .kept
            .get(key)
            .map(|kept| kept.isr.as_slice())
    }

    /// Drops what is kept of `topic`'s `partition` (a leader moved by hand or elected
    /// through ElectLeaders: its replicas catch up at once), or of the whole topic.
    pub(super) fn forget_eligible_leaders(&mut self, topic: &str, partition: Option<i32>) {
        let kept = &mut self.eligible_leaders.kept;
        match partition {
            Some(index) => {
                kept.remove(&(topic.to_owned(), index));
            }
            None => kept.retain(|(name, _), _| name != topic),
        }
    }

    /// Clears the ELR and last known ELR of `topic`'s partitions, or of every topic's, as a
    /// change of `min.insync.replicas` does (Kafka's `ClearElrRecord`); no leader is elected,
    /// and the partition epoch of each partition that had either list moves on.
    pub fn clear_eligible_leaders(&mut self, topic: Option<&str>) {
        if !self.eligible_leaders.enabled {
            return;
        }
        let mut cleared = Vec::new();
        for (key, kept) in self.eligible_leaders.kept.iter_mut() {
            let has_lists = !kept.elr.is_empty() || !kept.last_known_elr.is_empty();
            if topic.is_none_or(|topic| topic == key.0) && has_lists {
                kept.elr.clear();
                kept.last_known_elr.clear();
                cleared.push(key.clone());
            }
        }
        // Each partition cleared is a partition change (Kafka's `removeTopicElrs` merges a
        // `PartitionChangeRecord` into it): its partition epoch moves on.
        for key in &cleared {
            self.bump_partition_epoch(key);
        }
        // What is left may be what fencing derives again; drop it then.
        let derived: Vec<(String, i32)> = self
            .eligible_leaders
            .kept
            .iter()
            .filter(|(key, kept)| {
                !kept.leaderless
                    && kept.elr.is_empty()
                    && kept.last_known_elr.is_empty()
                    && kept.isr == self.derived_isr(key)
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in derived {
            self.eligible_leaders.kept.remove(&key);
        }
    }

    /// Fences `node_id` with ELR on: each partition whose ISR it is in loses it. With
    /// `unclean` (it registered again after an unclean shutdown, Kafka's
    /// `handleBrokerUncleanShutdown`) also each partition whose ELR holds it, and it leaves
    /// the ELRs. The partitions whose leader changed, with the new one (-1: none), and
    /// those whose ELR alone changed; nothing when it was fenced already and not `unclean`.
    pub(super) fn fence_broker_elr(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
        unclean: bool,
    ) -> (Vec<Moved>, Vec<(String, i32)>) {
        if self.is_fenced(node_id) && !unclean {
            return (Vec::new(), Vec::new());
        }
        // The partitions as they were before (what fencing derives counts it out once
        // fenced).
        let holding: Vec<(String, i32, Partition)> = self
            .registrations(brokers, placement_brokers)
            .into_iter()
            .filter(|(_, _, before)| {
                before.isr.contains(&node_id) || (unclean && before.elr.contains(&node_id))
            })
            .collect();
        self.fencing.fenced.insert(node_id);
        let mut moved = Vec::new();
        let mut elr_changed = Vec::new();
        for (name, index, before) in holding {
            let mut target_isr = before.isr.clone();
            target_isr.retain(|&replica| replica != node_id);
            let mut change = self.change_for(&name, &before, target_isr);
            if unclean {
                change.unclean_shutdown = Some(node_id);
            }
            let after = before.changed(&change, |replica| {
                replica != node_id && self.active(replica, brokers)
            });
            if after.leader != before.leader {
                moved.push((name.clone(), index, after.leader));
            } else if !before.isr.contains(&node_id) && after != before {
                elr_changed.push((name.clone(), index));
            }
            self.settle(&name, index, &before, after, placement_brokers);
        }
        (moved, elr_changed)
    }

    /// Unfences broker `node_id` among `brokers` (the brokers now): with ELR on as
    /// Kafka's controller does (below), else as `unfence_broker` does. The partitions that
    /// got a leader back; nothing when it was not fenced.
    pub fn unfence_broker_among(
        &mut self,
        node_id: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        if !self.eligible_leaders.enabled {
            return self.unfence_broker(node_id, placement_brokers);
        }
        if !self.is_fenced(node_id) {
            return Vec::new();
        }
        let before = self.registrations(brokers, placement_brokers);
        self.fencing.fenced.remove(&node_id);
        let back = self.elect_leaderless(node_id, before, brokers, placement_brokers);
        // Back in the ISRs once it has caught up (`State::caught_up`, a fetch round later).
        self.start_catching_up(node_id);
        back
    }

    /// `node_id` just unfenced (`before`, every partition as it was) with ELR on: the
    /// partitions without a leader elect one (from the ISR, else the ELR, else the last
    /// known leader, else, with unclean leader election, any unfenced replica), as Kafka's
    /// controller does as it unfences a broker. The partitions that got a leader.
    fn elect_leaderless(
        &mut self,
        node_id: i32,
        before: Vec<(String, i32, Partition)>,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        let mut back = Vec::new();
        for (name, index, before) in before {
            if before.leader >= 0 {
                continue;
            }
            let change = self.change_for(&name, &before, before.isr.clone());
            let after = before.changed(&change, |replica| {
                replica == node_id || self.active(replica, brokers)
            });
            if after.leader >= 0 {
                back.push((name.clone(), index));
            }
            self.settle(&name, index, &before, after, placement_brokers);
        }
        back
    }

    /// With ELR on, every unfenced replica of a partition with a leader rejoins its ISR,
    /// as the leader's AlterPartition adds a follower that caught up: one replica a change
    /// (Kafka's leader has one ISR change in flight at a time), in the replicas' order, each
    /// change bumping the partition epoch. The partitions changed, once a change.
    pub fn rejoin_isrs(&mut self, brokers: &[i32], placement_brokers: usize) -> Vec<(String, i32)> {
        let mut changed = Vec::new();
        if !self.eligible_leaders.enabled {
            return changed;
        }
        for (name, index, before) in self.registrations(brokers, placement_brokers) {
            if before.leader < 0 {
                continue;
            }
            let key = (name.clone(), index);
            let joining: Vec<i32> = before
                .replicas
                .iter()
                .copied()
                .filter(|&replica| {
                    !before.isr.contains(&replica)
                        && self.active(replica, brokers)
                        && !self.is_catching_up_on(replica, &key)
                })
                .collect();
            let mut before = before;
            for replica in joining {
                // The list Kafka's leader sends ([`kafka_isr_expansion_order`]).
                let target_isr =
                    kafka_isr_expansion_order(before.isr.iter().copied().chain([replica]));
                let change = self.change_for(&name, &before, target_isr);
                let after = before.changed(&change, |replica| self.active(replica, brokers));
                let moved = after.leader != before.leader;
                self.settle(&name, index, &before, after.clone(), placement_brokers);
                if !moved {
                    // (A leader change bumps it with the leader epoch.)
                    self.bump_partition_epoch(&key);
                }
                changed.push(key.clone());
                before = after;
            }
        }
        changed
    }

    /// One pass of Kafka's controller's periodic task `electUnclean`
    /// (`maybeElectUncleanLeaders`, every `unclean.leader.election.interval.ms`, 5 minutes):
    /// each partition without a leader whose topic has `unclean.leader.election.enable`
    /// elects one as ElectLeaders' unclean election does (from the ISR, the ELR, the last
    /// known leader, else the first unfenced replica, which is then the ISR alone); at most
    /// `max`. The partitions that got a leader (topic, partition, leader), and whether more
    /// were due.
    pub fn elect_unclean_leaders(
        &mut self,
        brokers: &[i32],
        placement_brokers: usize,
        max: usize,
    ) -> (Vec<(String, i32, i32)>, bool) {
        let mut elected = Vec::new();
        let mut tried = 0;
        for (name, index, before) in self.registrations(brokers, placement_brokers) {
            if before.leader >= 0 {
                continue;
            }
            let change = self.change_for(&name, &before, before.isr.clone());
            if !change.unclean {
                continue;
            }
            if tried == max {
                return (elected, true);
            }
            tried += 1;
            if let Some(leader) =
                self.elect(&name, index, &before, &change, brokers, placement_brokers)
            {
                elected.push((name.clone(), index, leader));
            }
        }
        (elected, false)
    }

    /// ElectLeaders' unclean election of `topic`'s `partition` (which must exist), as Kafka's
    /// controller's `electLeader` with `ElectionType.UNCLEAN`: none is needed while it has a
    /// leader (a stopped broker leads until it is fenced); else a leader from the ISR, the
    /// ELR, the last known leader, else any unfenced replica whatever the topic's
    /// `unclean.leader.election.enable`, through the same change as the periodic task's. The
    /// new leader, or ELECTION_NOT_NEEDED / ELIGIBLE_LEADERS_NOT_AVAILABLE.
    pub fn elect_unclean_leader(
        &mut self,
        topic: &str,
        partition: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Result<i32, kafka_codec::ErrorCode> {
        let before = self.registration(topic, partition, brokers, placement_brokers);
        if before.leader >= 0 {
            return Err(kafka_codec::ErrorCode::ELECTION_NOT_NEEDED);
        }
        let mut change = self.change_for(topic, &before, before.isr.clone());
        change.unclean = true;
        self.elect(
            topic,
            partition,
            &before,
            &change,
            brokers,
            placement_brokers,
        )
        .ok_or(kafka_codec::ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE)
    }

    /// Elects a leader for `topic`'s `partition` (`before`, with no leader) by `change`
    /// among the unfenced brokers, and makes it the partition's: with ELR on through
    /// `settle` (its ISR, ELR and last known leader kept), else through `move_leader`,
    /// fencing's derivation taking it from there (the other replicas rejoin at once). Either
    /// way the leader epoch goes up once. The leader, if one qualified.
    fn elect(
        &mut self,
        topic: &str,
        partition: i32,
        before: &Partition,
        change: &Change,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Option<i32> {
        let after = before.changed(change, |replica| self.active(replica, brokers));
        let leader = after.leader;
        if leader < 0 {
            return None;
        }
        if self.eligible_leaders.enabled {
            self.settle(topic, partition, before, after, placement_brokers);
        } else {
            self.move_leader(topic, partition, leader, placement_brokers);
        }
        Some(leader)
    }

    /// With eligible leader replicas off (releases before 4.1), the leader `fencing.rs`
    /// falls back to when no in-sync replica can lead: with `unclean.leader.election.enable`
    /// the first replica of `replicas` that is `acceptable`, as those releases' change
    /// builder elects in the fence and unfence paths; else none.
    pub(super) fn unclean_leader_without_elr(
        &self,
        topic: &str,
        replicas: &[i32],
        acceptable: impl Fn(i32) -> bool,
    ) -> Option<i32> {
        let unclean = self
            .effective_topic_config(topic, "unclean.leader.election.enable")
            .is_some_and(|value| value.trim().eq_ignore_ascii_case("true"));
        if !unclean {
            return None;
        }
        replicas
            .iter()
            .copied()
            .find(|&replica| acceptable(replica))
    }

    /// Every partition, by topic and index, as the controller holds it.
    fn registrations(
        &self,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32, Partition)> {
        self.topics
            .iter()
            .flat_map(|(name, topic)| {
                (0..topic.partitions.len() as i32).map(move |index| (name.clone(), index))
            })
            .map(|(name, index)| {
                let partition = self.registration(&name, index, brokers, placement_brokers);
                (name, index, partition)
            })
            .collect()
    }

    /// Whether `replica` is a broker now and not fenced.
    fn active(&self, replica: i32, brokers: &[i32]) -> bool {
        brokers.contains(&replica) && !self.is_fenced(replica)
    }

    /// `topic`'s `partition` as the controller holds it.
    fn registration(
        &self,
        topic: &str,
        partition: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Partition {
        let view = self.replica_view(topic, partition, brokers, placement_brokers);
        let (elr, last_known_elr) = self.eligible_leaders(topic, partition);
        Partition {
            replicas: view.replicas,
            isr: view.isr,
            elr,
            last_known_elr,
            leader: view.leader.0,
        }
    }

    fn change_for(&self, topic: &str, before: &Partition, target_isr: Vec<i32>) -> Change {
        let min_isr = self
            .effective_topic_config(topic, "min.insync.replicas")
            .and_then(|value| value.trim().parse::<usize>().ok())
            .unwrap_or(1);
        let unclean = self
            .effective_topic_config(topic, "unclean.leader.election.enable")
            .is_some_and(|value| value.trim().eq_ignore_ascii_case("true"));
        Change {
            target_isr,
            min_isr: min_isr.min(before.replicas.len()),
            unclean,
            elr: self.eligible_leaders.enabled,
            unclean_shutdown: None,
        }
    }

    /// `name` for `topic` as the controller reads it: the topic's override, else the
    /// cluster-wide one, else Kafka's default.
    fn effective_topic_config(&self, topic: &str, name: &str) -> Option<String> {
        let topic_override = self.configs.topics.get(topic).and_then(|o| o.get(name));
        let definition = definitions().topic.get(name);
        let cluster_override = definition
            .and_then(|d| d.synonym.as_deref())
            .and_then(|synonym| self.configs.brokers.get("")?.get(synonym));
        topic_override
            .or(cluster_override)
            .cloned()
            .or_else(|| definition?.default.clone())
    }

    /// The ISR fencing derives for `key`: its unfenced replicas.
    fn derived_isr(&self, key: &(String, i32)) -> Vec<i32> {
        match self.fencing.pinned.get(key) {
            Some(replicas) => replicas
                .iter()
                .copied()
                .filter(|&replica| !self.is_fenced(replica))
                .collect(),
            // Never moved by fencing: the placement's replicas, all kept in sync while
            // unfenced; compared only through `settle`, which pins first.
            None => Vec::new(),
        }
    }

    /// Makes `after` the partition's state: a new leader through `move_leader` (its epoch
    /// bumped, its replica list pinned), and what differs from fencing's derivation kept.
    fn settle(
        &mut self,
        topic: &str,
        partition: i32,
        before: &Partition,
        after: Partition,
        placement_brokers: usize,
    ) {
        let key = (topic.to_owned(), partition);
        self.fencing
            .pinned
            .entry(key.clone())
            .or_insert_with(|| before.replicas.clone());
        if after.leader != before.leader {
            self.move_leader(topic, partition, after.leader, placement_brokers);
        }
        let kept = Kept {
            leaderless: after.leader < 0,
            isr: after.isr,
            elr: after.elr,
            last_known_elr: after.last_known_elr,
        };
        // A partition without a leader is always kept: fencing would count a replica
        // unfenced later into its ISR.
        if !kept.leaderless
            && kept.elr.is_empty()
            && kept.last_known_elr.is_empty()
            && kept.isr == self.derived_isr(&key)
        {
            self.eligible_leaders.kept.remove(&key);
        } else {
            self.eligible_leaders.kept.insert(key, kept);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each expected state is what Kafka 4.4's `PartitionChangeBuilder` gave for the same
    //! events (`tools/elr-reference`, trace quoted at each test; leader epochs left out).
    use super::*;

    /// Each expected list is what Scala 2.13.18's `mutable.HashSet` gave for the ISR and
    /// joining replica, expanded as `Partition.prepareIsrExpand` does (a probe run against
    /// the Kafka distribution's `scala-library`; the same calls as `tools/elr-reference`).
    #[test]
    fn an_expanded_isr_is_in_the_order_of_kafkas_scala_hash_set() {
        let cases: [(&[i32], i32, &[i32]); 8] = [
            (&[3, 1], 2, &[1, 2, 3]),
            (&[17, 1], 2, &[1, 17, 2]),
            (&[16, 2], 1, &[16, 1, 2]),
            (&[100, 5], 3, &[3, 100, 5]),
            (&[396296901], 954834209, &[954834209, 396296901]),
            (&[8, 15, 31, 28], 9, &[8, 9, 28, 15, 31]),
            (&[4, 7, 10, 1, 11], 2, &[1, 2, 4, 7, 10, 11]),
            (
                &[3, 22, 8, 17, 23, 18, 15, 5, 10, 21, 20],
                6,
                &[3, 5, 6, 8, 10, 15, 17, 18, 20, 21, 22, 23],
            ),
        ];
        for (isr, joining, expected) in cases {
            let got = kafka_isr_expansion_order(isr.iter().copied().chain([joining]));
            assert_eq!(got, expected, "{isr:?} + {joining}");
        }
        let isr = [
            40160, 31328, 25379, 59845, 44997, 45478, 31048, 3273, 5866, 5899, 63918, 51215, 1775,
            33680, 59379, 12724, 39062, 19449, 57081, 69016, 57567, 10271, 53471,
        ];
        let expected = [
            44997, 59845, 31048, 3273, 5899, 51215, 33680, 12307, 39062, 69016, 10271, 53471,
            57567, 31328, 40160, 25379, 45478, 5866, 63918, 1775, 59379, 12724, 19449, 57081,
        ];
        assert_eq!(
            kafka_isr_expansion_order(isr.into_iter().chain([12307])),
            expected
        );
    }

    fn partition(
        replicas: &[i32],
        isr: &[i32],
        elr: &[i32],
        lke: &[i32],
        leader: i32,
    ) -> Partition {
        Partition {
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            elr: elr.to_vec(),
            last_known_elr: lke.to_vec(),
            leader,
        }
    }

    fn change(target_isr: &[i32], min_isr: usize, unclean: bool) -> Change {
        Change {
            target_isr: target_isr.to_vec(),
            min_isr,
            unclean,
            elr: true,
            unclean_shutdown: None,
        }
    }

    /// `scenario 0,1 1 0 1 0,1`, `fence 1`, `fence 0`, `unfence 0`.
    #[test]
    fn the_last_isr_member_fenced_enters_the_elr_and_is_the_last_known_leader() {
        let p = partition(&[0, 1], &[0, 1], &[], &[], 0);
        let p = p.changed(&change(&[0], 1, false), |r| r == 0);
        assert_eq!(p, partition(&[0, 1], &[0], &[], &[], 0));
        let p = p.changed(&change(&[], 1, false), |_| false);
        assert_eq!(p, partition(&[0, 1], &[], &[0], &[0], -1));
        // Back: elected from the ELR, the ISR is it alone, both lists empty again.
        let p = p.changed(&change(&[], 1, false), |r| r == 0);
        assert_eq!(p, partition(&[0, 1], &[0], &[], &[], 0));
    }

    /// `scenario 0,1 1 0 0 0,1`, `fence 1`, `fence 0`.
    #[test]
    fn without_elr_the_isr_keeps_its_last_member() {
        let mut off = change(&[], 1, false);
        off.elr = false;
        let p = partition(&[0, 1], &[0], &[], &[], 0);
        assert_eq!(
            p.changed(&off, |_| false),
            partition(&[0, 1], &[0], &[], &[], -1)
        );
    }

    /// `scenario 0,1,2 2 0 1 0,1,2`, `fence 2`, `fence 1`, `unfence 1`.
    #[test]
    fn below_min_isr_the_replicas_leaving_become_eligible() {
        // min.insync.replicas 2 of 3: the first follower out changes nothing else, the
        // second enters the ELR.
        let p = partition(&[0, 1, 2], &[0, 1, 2], &[], &[], 0);
        let p = p.changed(&change(&[0, 1], 2, false), |r| r != 2);
        assert_eq!(p, partition(&[0, 1, 2], &[0, 1], &[], &[], 0));
        let p = p.changed(&change(&[0], 2, false), |r| r == 0);
        assert_eq!(p, partition(&[0, 1, 2], &[0], &[1], &[], 0));
        // Back to two in sync: the ELR empties.
        let p = p.changed(&change(&[0, 1], 2, false), |r| r != 2);
        assert_eq!(p, partition(&[0, 1, 2], &[0, 1], &[], &[], 0));
    }

    /// `scenario 2,16,17,33 4 0 1 2,16,17,33`, `fence 33`, `fence 2`, `fence 17`,
    /// `unclean_restart 2`.
    #[test]
    fn the_elr_is_in_kafkas_hash_set_order_and_loses_a_replica_back_from_an_unclean_shutdown() {
        let replicas = [2, 16, 17, 33];
        let p = partition(&replicas, &replicas, &[], &[], 2);
        let p = p.changed(&change(&[2, 16, 17], 4, false), |r| r != 33);
        assert_eq!(p, partition(&replicas, &[2, 16, 17], &[33], &[], 2));
        let p = p.changed(&change(&[16, 17], 4, false), |r| r == 16 || r == 17);
        assert_eq!(p, partition(&replicas, &[16, 17], &[33, 2], &[], 16));
        // 33 and 17 share a bucket (id % 16 = 1): in the order they went in.
        let p = p.changed(&change(&[16], 4, false), |r| r == 16);
        assert_eq!(p, partition(&replicas, &[16], &[33, 17, 2], &[], 16));
        // 2 registers again after an unclean shutdown: out of the ELR.
        let mut shutdown = change(&[16], 4, false);
        shutdown.unclean_shutdown = Some(2);
        let p = p.changed(&shutdown, |r| r == 16);
        // Unfenced and caught up, it rejoins the ISR (as Kafka printed after the restart).
        let p = p.changed(&change(&[2, 16], 4, false), |r| r == 2 || r == 16);
        assert_eq!(p, partition(&replicas, &[2, 16], &[33, 17], &[], 16));
    }

    /// `scenario 0,1 1 1 1 0,1`, `fence 1`, `fence 0`, `unfence 1`.
    #[test]
    fn an_unclean_election_empties_the_elr_and_the_last_known_leader() {
        let p = partition(&[0, 1], &[0], &[], &[], 0);
        let p = p.changed(&change(&[], 1, true), |_| false);
        assert_eq!(p, partition(&[0, 1], &[], &[0], &[0], -1));
        let p = p.changed(&change(&[], 1, true), |r| r == 1);
        assert_eq!(p, partition(&[0, 1], &[1], &[], &[], 1));
    }
}
