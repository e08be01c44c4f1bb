//! Where a new topic's partitions go: over the brokers registered and unfenced when it is
//! created (those added at run time included, fenced ones left out), as Kafka's replica
//! placer places over its usable brokers; partitions added later (CreatePartitions)
//! likewise over the brokers usable then. Partition `p` of a topic placed over brokers `B`
//! (in node id order) is led by `B[p mod |B|]`, and its replicas are that broker and the
//! ones after it in `B`, as many as the replication factor. A stopped broker still within
//! its session is placed on, as Kafka's controller, which does not know it stopped yet,
//! places on it.

use super::{replicas_among, State};

impl State {
    /// Places `topic` (just created) over `brokers`, the usable brokers now in node id order.
    pub fn place_topic(&mut self, topic: &str, brokers: Vec<i32>) {
        if let Some(found) = self.topics.get_mut(topic) {
            found.placement = (!brokers.is_empty()).then_some(brokers);
        }
    }

    /// Places partitions `first..` of `topic` (just added by CreatePartitions) over
    /// `brokers`, the usable brokers now in node id order.
    pub fn place_partitions(&mut self, topic: &str, first: i32, brokers: Vec<i32>) {
        if let Some(found) = self.topics.get_mut(topic) {
            if !brokers.is_empty() {
                found.grown.push((first, brokers));
            }
        }
    }

    /// The broker the placement gives `topic`'s `partition`: over the brokers it was placed
    /// on, else (a topic never placed) over the `brokers` the cluster started with.
    pub(super) fn placed_leader(&self, topic: &str, partition: i32, brokers: usize) -> i32 {
        // Replicas given explicitly: the first leads (a reassignment pins its leader).
        if let Some(&first) = self
            .assigned_replicas(topic, partition)
            .and_then(<[i32]>::first)
        {
            return first;
        }
        match self.placement(topic, partition) {
            Some(placed) => placed[partition.rem_euclid(placed.len() as i32) as usize],
            None => partition.rem_euclid(brokers.max(1) as i32),
        }
    }

    /// The replicas the placement gives `topic`'s `partition`, the preferred leader first
    /// (ElectLeaders' preferred replica), whatever has moved since.
    pub fn placed_replicas(&self, topic: &str, partition: i32, brokers: usize) -> Vec<i32> {
        // Replicas given explicitly (a reassignment) come first, as Kafka keeps them.
        if let Some(assigned) = self.assigned_replicas(topic, partition) {
            return assigned.to_vec();
        }
        let factor = self.topics.get(topic).map_or(1, |t| t.replication_factor);
        let preferred = self.placed_leader(topic, partition, brokers);
        match self.placement(topic, partition) {
            Some(placed) => replicas_among(placed, preferred, factor),
            None => {
                let all: Vec<i32> = (0..brokers.max(1) as i32).collect();
                replicas_among(&all, preferred, factor)
            }
        }
    }

    /// The brokers `topic`'s `partition` was placed over, if it was: those of the last
    /// CreatePartitions run that added it, else the topic's.
    pub(super) fn placement(&self, topic: &str, partition: i32) -> Option<&[i32]> {
        let found = self.topics.get(topic)?;
        match found
            .grown
            .iter()
            .rev()
            .find(|(first, _)| *first <= partition)
        {
            Some((_, brokers)) => Some(brokers),
            None => found.placement.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::state::{Retention, State};

    #[test]
    fn a_topic_is_placed_over_the_brokers_given_in_turn() {
        let mut state = State::new(Retention::default());
        state.add_topic("t", 4, 2);
        // Brokers 0-2 at the start, 1 fenced, 3 added.
        state.place_topic("t", vec![0, 2, 3]);
        let leaders: Vec<i32> = (0..4).map(|p| state.leader("t", p, 3).0).collect();
        assert_eq!(leaders, [0, 2, 3, 0]);
        assert_eq!(state.placed_replicas("t", 2, 3), [3, 0]);
        let brokers = [0, 1, 2, 3];
        let view = state.replica_view("t", 1, &brokers, 3);
        assert_eq!((view.replicas, view.isr), (vec![2, 3], vec![2, 3]));
        // Never placed: the starting brokers, p mod N.
        state.add_topic("u", 2, 1);
        assert_eq!(state.leader("u", 1, 3).0, 1);
        assert_eq!(state.placed_replicas("u", 2, 3), [2]);
    }
}
