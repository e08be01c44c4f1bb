//! Partition reassignments (AlterPartitionReassignments, KIP-455), as Kafka 4.4's KRaft
//! controller runs them (`ReplicationControlManager`, `PartitionReassignmentReplicas`,
//! `PartitionChangeBuilder`). A partition with current replicas `C` given target `T`
//! becomes `T` followed by the replicas of `C` not in `T` (in node id order), adding those
//! of `T` not in `C` and removing those of `C` not in `T`. The replicas added are out of the
//! ISR until they have caught up (a follower fetch round, `replica.fetch.wait.max.ms`, as an
//! unfenced broker rejoins: `fencing.rs`); once every replica of `T` is in the ISR the
//! reassignment completes: the replicas are `T`, the removed ones leave the ISR, and a
//! leader among them hands over to the first replica of `T` in the ISR. Removing replicas
//! bumps the leader epoch even when the leader stays, as Kafka's
//! `triggerLeaderEpochBumpForReplicaReassignmentIfNeeded`. A target equal to the ISR's
//! members completes at once. Cancelling (a null target) goes back to the replicas before,
//! the added ones leaving.
//!
//! Replicas given explicitly (a completed reassignment) are kept here too and override the
//! placement (`placement.rs`): the first is the preferred leader.

use super::State;
use std::collections::{BTreeMap, BTreeSet};
use tokio::time::Instant;

/// The reassignments under way and the replica lists given explicitly.
#[derive(Debug, Default)]
pub struct Reassignments {
    /// Replica lists that override the placement: a reassignment's target once complete.
    assigned: BTreeMap<(String, i32), Vec<i32>>,
    /// The reassignments under way.
    ongoing: BTreeMap<(String, i32), Ongoing>,
}

/// A reassignment under way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ongoing {
    /// The target followed by the replicas being removed.
    pub replicas: Vec<i32>,
    /// Replicas of the target that were not replicas before, in node id order.
    pub adding: Vec<i32>,
    /// Replicas not in the target, in node id order.
    pub removing: Vec<i32>,
    /// When the added replicas will have caught up; `None` once they have.
    catch_up_at: Option<Instant>,
}

impl Ongoing {
    /// The target replicas.
    pub fn target(&self) -> Vec<i32> {
        let removing = &self.removing;
        self.replicas
            .iter()
            .copied()
            .filter(|r| !removing.contains(r))
            .collect()
    }

    /// The replicas before the reassignment (what a cancel goes back to).
    fn original(&self) -> Vec<i32> {
        let adding = &self.adding;
        self.replicas
            .iter()
            .copied()
            .filter(|r| !adding.contains(r))
            .collect()
    }
}

/// Why a reassignment was refused: Kafka's error and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// INVALID_REPLICA_ASSIGNMENT.
    InvalidAssignment(String),
    /// INVALID_REPLICATION_FACTOR (v1's `AllowReplicationFactorChange = false`).
    ReplicationFactorChanged(String),
    /// NO_REASSIGNMENT_IN_PROGRESS.
    NoReassignment,
}

/// Kafka's check of a manual assignment (`validateManualPartitionAssignment`): not empty,
/// then in node id order each a registered broker and none twice.
pub fn check_assignment(replicas: &[i32], registered: &[i32]) -> Result<(), String> {
    if replicas.is_empty() {
        return Err("The manual partition assignment includes an empty replica list.".into());
    }
    let mut sorted = replicas.to_vec();
    sorted.sort_unstable();
    let mut previous = None;
    for replica in sorted {
        if !registered.contains(&replica) {
            return Err(format!(
                "The manual partition assignment includes broker {replica}, but no such broker is registered."
            ));
        }
        if previous == Some(replica) {
            return Err(format!(
                "The manual partition assignment includes the broker {replica} more than once."
            ));
        }
        previous = Some(replica);
    }
    Ok(())
}

impl State {
    /// The replicas given explicitly for `topic`'s `partition`, if any: a reassignment's
    /// (the target and the replicas being removed) or a completed one's.
    pub(super) fn assigned_replicas(&self, topic: &str, partition: i32) -> Option<&[i32]> {
        let key = (topic.to_owned(), partition);
        match self.reassignments.ongoing.get(&key) {
            Some(ongoing) => Some(&ongoing.replicas),
            None => self.reassignments.assigned.get(&key).map(Vec::as_slice),
        }
    }

    /// `key`'s replicas from now on, as a reassignment that only reorders them completes at
    /// once; `false` (nothing done) while a reassignment of it is under way.
    pub(super) fn reorder_replicas(&mut self, key: (String, i32), replicas: Vec<i32>) -> bool {
        if self.reassignments.ongoing.contains_key(&key) {
            return false;
        }
        self.reassignments.assigned.insert(key, replicas);
        true
    }

    /// The replicas `topic`'s `partition` is adding that have not caught up yet (out of
    /// its ISR).
    pub(super) fn lagging_replicas(&self, topic: &str, partition: i32) -> &[i32] {
        match self
            .reassignments
            .ongoing
            .get(&(topic.to_owned(), partition))
        {
            Some(ongoing) if ongoing.catch_up_at.is_some() => &ongoing.adding,
            _ => &[],
        }
    }

    /// The reassignment of `topic`'s `partition` under way, if any.
    pub fn reassignment(&self, topic: &str, partition: i32) -> Option<&Ongoing> {
        self.reassignments
            .ongoing
            .get(&(topic.to_owned(), partition))
    }

    /// Every reassignment under way, by topic and partition.
    pub fn reassignments(&self) -> impl Iterator<Item = (&(String, i32), &Ongoing)> {
        self.reassignments.ongoing.iter()
    }

    /// When the next reassignment's added replicas will have caught up.
    pub fn next_catch_up(&self) -> Option<Instant> {
        self.reassignments
            .ongoing
            .values()
            .filter_map(|ongoing| ongoing.catch_up_at)
            .min()
    }

    /// Reassigns `topic`'s `partition` (which must exist) to `target` (checked by
    /// [`check_assignment`]), among `brokers` (the brokers now); `catch_up_at`: when the
    /// replicas it adds will be in sync. `allow_factor_change` false refuses another
    /// number of replicas than before. Completes at once when nothing has to catch up.
    #[allow(clippy::too_many_arguments)]
    pub fn reassign(
        &mut self,
        topic: &str,
        partition: i32,
        target: &[i32],
        allow_factor_change: bool,
        brokers: &[i32],
        placement_brokers: usize,
        catch_up_at: Instant,
    ) -> Result<(), Refused> {
        check_assignment(target, brokers).map_err(Refused::InvalidAssignment)?;
        let key = (topic.to_owned(), partition);
        let view = self.replica_view(topic, partition, brokers, placement_brokers);
        let current = view.replicas.clone();
        if !allow_factor_change {
            let before = match self.reassignments.ongoing.get(&key) {
                Some(ongoing) => ongoing.original().len(),
                None => current.len(),
            };
            if before != target.len() {
                return Err(Refused::ReplicationFactorChanged(format!(
                    "The replication factor is changed from {before} to {}",
                    target.len()
                )));
            }
        }
        let removing: BTreeSet<i32> = current
            .iter()
            .copied()
            .filter(|r| !target.contains(r))
            .collect();
        let adding: BTreeSet<i32> = target
            .iter()
            .copied()
            .filter(|r| !current.contains(r))
            .collect();
        let mut replicas = target.to_vec();
        replicas.extend(removing.iter().copied());
        if replicas == current && !self.reassignments.ongoing.contains_key(&key) {
            return Ok(());
        }
        // A replica still adding from an earlier reassignment stays out of the ISR.
        let still_lagging: Vec<i32> = self.lagging_replicas(topic, partition).to_vec();
        let lagging = !adding.is_empty() || still_lagging.iter().any(|r| target.contains(r));
        let mut adding: Vec<i32> = adding.into_iter().collect();
        if lagging {
            for r in still_lagging {
                if target.contains(&r) && !adding.contains(&r) {
                    adding.push(r);
                }
            }
            adding.sort_unstable();
        }
        // The ISR keeps its order while the replicas are reordered (Kafka's controller
        // changes the replicas alone: [2,3] reassigned to [4,3] lists replicas [4,3,2] and
        // the ISR still [2,3], `tests/isr_order_kafka.rs`).
        if !view.isr.is_empty() {
            self.fencing.isr_order.insert(key.clone(), view.isr.clone());
        }
        // The leader stays where it is while the replica list changes under it.
        let leader = self.leader(topic, partition, placement_brokers);
        self.moved.entry(key.clone()).or_insert(leader);
        self.fencing.pinned.remove(&key);
        self.reassignments.ongoing.insert(
            key.clone(),
            Ongoing {
                replicas: replicas.clone(),
                adding,
                removing: removing.into_iter().collect(),
                catch_up_at: lagging.then_some(catch_up_at),
            },
        );
        if !self.complete_reassignment(topic, partition, brokers, placement_brokers) {
            // The replica set changed: a new partition epoch, the leader's only when a
            // replica left (none does before completion).
            self.bump_partition_epoch(&key);
        }
        Ok(())
    }

    /// Reassigns `topic`'s `partition` to `target`, the replicas it adds caught up at once
    /// (the log is shared), as a reassignment runs on Kafka: the replicas added (a new
    /// partition epoch), then in the ISR, completing it (another). Whether it completed
    /// (`false`: refused, or another reassignment of it under way).
    pub(super) fn reassign_in_sync(
        &mut self,
        topic: &str,
        partition: i32,
        target: &[i32],
        brokers: &[i32],
        placement_brokers: usize,
    ) -> bool {
        let key = (topic.to_owned(), partition);
        if self.reassignments.ongoing.contains_key(&key) {
            return false;
        }
        let now = Instant::from_std(crate::clock::now());
        let started = self.reassign(
            topic,
            partition,
            target,
            true,
            brokers,
            placement_brokers,
            now,
        );
        if started.is_err() {
            return false;
        }
        match self.reassignments.ongoing.get_mut(&key) {
            Some(ongoing) => ongoing.catch_up_at = None,
            // Nothing to catch up: completed already.
            None => return true,
        }
        self.complete_reassignment(topic, partition, brokers, placement_brokers)
    }

    /// Cancels the reassignment of `topic`'s `partition`: back to the replicas before, the
    /// added ones leaving (the leader epoch bumped, as replicas left); a leader among them
    /// hands over to the first original replica in the ISR.
    pub fn cancel_reassignment(
        &mut self,
        topic: &str,
        partition: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Result<(), Refused> {
        let key = (topic.to_owned(), partition);
        let Some(ongoing) = self.reassignments.ongoing.get(&key).cloned() else {
            return Err(Refused::NoReassignment);
        };
        let view = self.replica_view(topic, partition, brokers, placement_brokers);
        let original = ongoing.original();
        let isr: Vec<i32> = view
            .isr
            .iter()
            .copied()
            .filter(|r| !ongoing.adding.contains(r))
            .collect();
        if isr.is_empty() {
            return Err(Refused::InvalidAssignment(format!(
                "Unable to revert partition assignment for {topic}:{partition} because it would require an unclean leader election."
            )));
        }
        self.reassignments.ongoing.remove(&key);
        self.fencing.pinned.remove(&key);
        self.reassignments.assigned.insert(key, original.clone());
        self.settle_leader(
            topic,
            partition,
            &original,
            &isr,
            view.leader.0,
            !ongoing.adding.is_empty(),
            placement_brokers,
        );
        Ok(())
    }

    /// The added replicas of every reassignment due by `now` have caught up: those whose
    /// target is then wholly in sync complete. The partitions completed.
    pub fn reassignments_caught_up(
        &mut self,
        now: Instant,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        let due: Vec<(String, i32)> = self
            .reassignments
            .ongoing
            .iter()
            .filter(|(_, ongoing)| ongoing.catch_up_at.is_some_and(|at| at <= now))
            .map(|(key, _)| key.clone())
            .collect();
        let before: Vec<Vec<i32>> = due
            .iter()
            .map(|(topic, partition)| {
                self.replica_view(topic, *partition, brokers, placement_brokers)
                    .isr
            })
            .collect();
        for key in &due {
            if let Some(ongoing) = self.reassignments.ongoing.get_mut(key) {
                ongoing.catch_up_at = None;
            }
        }
        let mut completed = Vec::new();
        for ((topic, partition), before) in due.into_iter().zip(before) {
            // The added replicas join the ISR as Kafka's leader adds them.
            self.order_expanded_isr(&topic, partition, &before, brokers, placement_brokers);
            let grew = self
                .replica_view(&topic, partition, brokers, placement_brokers)
                .isr
                .iter()
                .any(|replica| !before.contains(replica));
            if self.complete_reassignment(&topic, partition, brokers, placement_brokers) {
                completed.push((topic, partition));
            } else if grew {
                // The added replicas joined the ISR; a target replica fenced keeps it going
                // (one fenced itself joins nothing: no change).
                self.bump_partition_epoch(&(topic.clone(), partition));
            }
        }
        completed
    }

    /// Completes every reassignment whose target is wholly in sync (after a broker caught
    /// up again, `fencing.rs`). The partitions completed.
    pub(super) fn complete_reassignments(
        &mut self,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> Vec<(String, i32)> {
        let keys: Vec<(String, i32)> = self.reassignments.ongoing.keys().cloned().collect();
        keys.into_iter()
            .filter(|(topic, partition)| {
                self.complete_reassignment(topic, *partition, brokers, placement_brokers)
            })
            .collect()
    }

    /// Completes the reassignment of `topic`'s `partition` if its target is in the ISR
    /// (Kafka's `maybeCompleteReassignment`): whether it did.
    fn complete_reassignment(
        &mut self,
        topic: &str,
        partition: i32,
        brokers: &[i32],
        placement_brokers: usize,
    ) -> bool {
        let key = (topic.to_owned(), partition);
        let Some(ongoing) = self.reassignments.ongoing.get(&key).cloned() else {
            return false;
        };
        let view = self.replica_view(topic, partition, brokers, placement_brokers);
        let target = ongoing.target();
        let isr: Vec<i32> = view
            .isr
            .iter()
            .copied()
            .filter(|r| !ongoing.removing.contains(r))
            .collect();
        if isr.is_empty() || !target.iter().all(|r| isr.contains(r)) {
            return false;
        }
        self.reassignments.ongoing.remove(&key);
        self.fencing.pinned.remove(&key);
        self.reassignments.assigned.insert(key, target.clone());
        let removed = !ongoing.removing.is_empty();
        self.settle_leader(
            topic,
            partition,
            &target,
            &isr,
            view.leader.0,
            removed,
            placement_brokers,
        );
        true
    }

    /// After the replicas became `replicas` with ISR `isr`: a leader no longer among them
    /// (or offline) hands over to the first of them in the ISR and not fenced, as Kafka's
    /// `electAnyLeader` keeps a leader that may stay; the leader epoch is bumped when the
    /// leader moved or `removed` (replicas left), else the partition epoch.
    #[allow(clippy::too_many_arguments)]
    fn settle_leader(
        &mut self,
        topic: &str,
        partition: i32,
        replicas: &[i32],
        isr: &[i32],
        leader: i32,
        removed: bool,
        placement_brokers: usize,
    ) {
        let stays = replicas.contains(&leader) && isr.contains(&leader) && !self.is_fenced(leader);
        let to = if stays {
            leader
        } else {
            replicas
                .iter()
                .copied()
                .find(|r| isr.contains(r) && !self.is_fenced(*r))
                .unwrap_or(-1)
        };
        if to != leader || removed {
            self.move_leader(topic, partition, to, placement_brokers);
        } else {
            self.bump_partition_epoch(&(topic.to_owned(), partition));
        }
    }

    /// Replicas given explicitly at creation (CreateTopics, CreatePartitions): `topic`'s
    /// `partition` is on them, the first its leader and preferred replica.
    pub fn assign_replicas(&mut self, topic: &str, partition: i32, replicas: Vec<i32>) {
        if !replicas.is_empty() {
            self.reassignments
                .assigned
                .insert((topic.to_owned(), partition), replicas);
        }
    }

    /// What reassignments kept of a topic deleted.
    pub(super) fn forget_reassignments(&mut self, topic: &str) {
        self.reassignments
            .ongoing
            .retain(|(name, _), _| name != topic);
        self.reassignments
            .assigned
            .retain(|(name, _), _| name != topic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Retention;
    use std::time::Duration;

    #[test]
    fn assignments_are_checked_as_kafka_checks_them() {
        let brokers = [0, 1, 2];
        assert_eq!(check_assignment(&[2, 0], &brokers), Ok(()));
        assert_eq!(
            check_assignment(&[], &brokers).unwrap_err(),
            "The manual partition assignment includes an empty replica list."
        );
        // In node id order: the duplicate 1 comes before the unknown 7.
        assert_eq!(
            check_assignment(&[7, 1, 1], &brokers).unwrap_err(),
            "The manual partition assignment includes the broker 1 more than once."
        );
        assert_eq!(
            check_assignment(&[7, 0], &brokers).unwrap_err(),
            "The manual partition assignment includes broker 7, but no such broker is registered."
        );
    }

    #[test]
    fn a_reassignment_adds_then_completes_once_caught_up() {
        let mut state = State::new(Retention::default());
        // Three brokers; t-0 on [0, 1], led by 0.
        state.add_topic("t", 1, 2);
        let brokers = [0, 1, 2];
        let now = Instant::from_std(crate::clock::now());
        let later = now + Duration::from_millis(500);
        state
            .reassign("t", 0, &[2, 1], true, &brokers, 3, later)
            .unwrap();
        let ongoing = state.reassignment("t", 0).unwrap().clone();
        assert_eq!(
            (ongoing.replicas, ongoing.adding, ongoing.removing),
            (vec![2, 1, 0], vec![2], vec![0])
        );
        let view = state.replica_view("t", 0, &brokers, 3);
        assert_eq!(
            (view.leader, view.replicas.clone()),
            ((0, 0), vec![2, 1, 0])
        );
        // The ISR in its order from before, not the replicas' new one (recorded:
        // `tests/isr_order_kafka.rs`, [2,3] to [4,3] lists ISR [2,3]).
        assert_eq!((view.isr, view.partition_epoch), (vec![0, 1], 1));
        assert_eq!(state.next_catch_up(), Some(later));
        // Not yet.
        assert!(state.reassignments_caught_up(now, &brokers, 3).is_empty());
        assert_eq!(
            state.reassignments_caught_up(later, &brokers, 3),
            [("t".to_owned(), 0)]
        );
        // Done: the target, the removed leader replaced by the first target replica in
        // sync, the leader epoch bumped. The ISR is as Kafka's code makes it (read from
        // the 4.4 jars, not recorded): the leader's expansion sends {0, 1, 2} in its hash
        // set's order, [0, 1, 2], and `maybeCompleteReassignment` drops 0, keeping the order.
        assert!(state.reassignment("t", 0).is_none());
        let view = state.replica_view("t", 0, &brokers, 3);
        assert_eq!(
            (view.leader, view.replicas, view.isr),
            ((2, 1), vec![2, 1], vec![1, 2])
        );
        // The preferred replica is now the target's first.
        assert_eq!(state.placed_replicas("t", 0, 3), [2, 1]);
    }

    #[test]
    fn a_target_in_sync_completes_at_once_and_a_cancel_goes_back() {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 2, 2);
        let brokers = [0, 1, 2];
        let at = Instant::from_std(crate::clock::now());
        // t-0 on [0, 1] to [1]: in sync already; 0 leaves, 1 leads at a new epoch.
        state.reassign("t", 0, &[1], true, &brokers, 3, at).unwrap();
        assert!(state.reassignment("t", 0).is_none());
        let view = state.replica_view("t", 0, &brokers, 3);
        assert_eq!(
            (view.leader, view.replicas, view.isr),
            ((1, 1), vec![1], vec![1])
        );
        // v1 without a replication factor change.
        assert_eq!(
            state.reassign("t", 1, &[0], false, &brokers, 3, at),
            Err(Refused::ReplicationFactorChanged(
                "The replication factor is changed from 2 to 1".into()
            ))
        );
        // t-1 on [1, 2] to [0, 2]: 0 added; cancelled, back to [1, 2], the leader epoch
        // bumped as 0 leaves.
        assert_eq!(
            state.cancel_reassignment("t", 1, &brokers, 3),
            Err(Refused::NoReassignment)
        );
        state
            .reassign("t", 1, &[0, 2], true, &brokers, 3, at)
            .unwrap();
        assert_eq!(state.replica_view("t", 1, &brokers, 3).replicas, [0, 2, 1]);
        state.cancel_reassignment("t", 1, &brokers, 3).unwrap();
        // Kafka's original replicas: the replicas less those added, in their order; the
        // ISR less those added, in its order (`PartitionReassignmentRevert`, read from the
        // 4.4 jar with `javap -c`; not recorded).
        let view = state.replica_view("t", 1, &brokers, 3);
        assert_eq!(
            (view.leader, view.replicas, view.isr),
            ((1, 1), vec![2, 1], vec![1, 2])
        );
        assert!(state.reassignment("t", 1).is_none());
    }
}
