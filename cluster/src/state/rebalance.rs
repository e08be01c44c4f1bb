//! The automatic leader rebalance of Kafka 4.4's KRaft controller
//! (`auto.leader.rebalance.enable`, on by default): every
//! `leader.imbalance.check.interval.seconds` its periodic task `electPreferred` runs a
//! preferred leader election over the partitions whose leader is not their preferred
//! replica, and a partition moves back when the preferred replica is in its ISR and may lead
//! (registered and unfenced). At most 1000 elections a pass; when more are due the pass
//! runs again 10 ms later. Kafka 4.4 has no imbalance threshold: the ZooKeeper controller's
//! `leader.imbalance.per.broker.percentage` is gone, and every imbalanced partition whose
//! preferred replica can lead moves at the next check. The timer is `control/rebalance.rs`.

use super::State;

/// Kafka's `ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE`.
pub const MAX_ELECTIONS_PER_PASS: usize = 1000;

impl State {
    /// One pass of the preferred leader election over every partition, among `brokers` (the
    /// brokers now): each partition whose preferred replica (the first its placement gives
    /// it, ElectLeaders' preferred replica) does not lead, is in its ISR and is unfenced
    /// moves to it, its leader epoch bumped through [`State::move_leader`]; at most `max`.
    /// The partitions moved (topic, partition, new leader), and whether more were due.
    pub fn elect_preferred_leaders(
        &mut self,
        brokers: &[i32],
        placement_brokers: usize,
        max: usize,
    ) -> (Vec<(String, i32, i32)>, bool) {
        let mut due = Vec::new();
        for (name, topic) in &self.topics {
            for index in 0..topic.partitions.len() as i32 {
                let preferred = self.placed_replicas(name, index, placement_brokers)[0];
                if self.leader(name, index, placement_brokers).0 == preferred
                    || !brokers.contains(&preferred)
                    || self.is_fenced(preferred)
                {
                    continue;
                }
                let view = self.replica_view(name, index, brokers, placement_brokers);
                if view.isr.contains(&preferred) {
                    due.push((name.clone(), index, preferred));
                }
            }
        }
        let more = due.len() > max;
        due.truncate(max);
        for (name, index, preferred) in &due {
            self.move_leader(name, *index, *preferred, placement_brokers);
        }
        (due, more)
    }
}

#[cfg(test)]
mod tests {
    use crate::state::{Retention, State};

    #[test]
    fn leaders_go_back_to_preferred_replicas_once_in_sync() {
        let mut state = State::new(Retention::default());
        // "r": 3 partitions of 2 replicas ([p, p+1]); "s": 3 of 1.
        state.add_topic("r", 3, 2);
        state.add_topic("s", 3, 1);
        let brokers = [0, 1, 2];
        state.fence_broker(1, &brokers, 3);
        // Fenced: nothing to move back (r-1's preferred replica 1 cannot lead).
        assert_eq!(
            state.elect_preferred_leaders(&brokers, 3, 1000),
            (vec![], false)
        );
        state.unfence_broker(1, 3);
        // Unfenced but catching up: not in r-1's ISR yet.
        assert_eq!(
            state.elect_preferred_leaders(&brokers, 3, 1000),
            (vec![], false)
        );
        state.caught_up(1, &brokers, 3);
        let (moved, more) = state.elect_preferred_leaders(&brokers, 3, 1000);
        assert_eq!((moved, more), (vec![("r".to_owned(), 1, 1)], false));
        // Back at epoch 2 (1: the fence's move), ISR whole, replicas as placed.
        let view = state.replica_view("r", 1, &brokers, 3);
        assert_eq!(
            (view.leader, view.replicas, view.isr),
            ((1, 2), vec![1, 2], vec![1, 2])
        );
        // Balanced: a second pass moves nothing.
        assert_eq!(
            state.elect_preferred_leaders(&brokers, 3, 1000),
            (vec![], false)
        );
    }

    #[test]
    fn a_pass_elects_at_most_its_maximum() {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 4, 2);
        let brokers = [0, 1];
        // Every partition led by its second replica.
        for p in 0..4 {
            state.move_leader("t", p, 1 - p % 2, 2);
        }
        let (moved, more) = state.elect_preferred_leaders(&brokers, 2, 3);
        assert_eq!(moved.len(), 3);
        assert!(more);
        let (moved, more) = state.elect_preferred_leaders(&brokers, 2, 3);
        assert_eq!((moved, more), (vec![("t".to_owned(), 3, 1)], false));
        let leaders: Vec<(i32, i32)> = (0..4).map(|p| state.leader("t", p, 2)).collect();
        assert_eq!(leaders, [(0, 2), (1, 2), (0, 2), (1, 2)]);
    }
}
