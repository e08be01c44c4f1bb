//! Kafka 4.4's share group assignor, `simple` (its `SimpleAssignor`), step for step over
//! [`java_order`](crate::consumer_groups::java_order)'s model of Java's hash tables, whose
//! order decides who keeps and who gets what: compared with Kafka's own class in
//! `cluster/tests/share_assignor_reference.rs`.
//!
//! A partition may go to several members: each topic (homogeneous: all the subscribed
//! partitions at once) is shared by `ceil(members / partitions)` members per partition, and
//! member `i` (in the member map's order) wants `ceil(d * (i + 1)) - ceil(d * i)` partitions,
//! `d` being the slots (sharing times partitions) over the members, in `f64` as Java computes
//! it. Each member first keeps what its previous target holds of its subscription; a member
//! over its count gives up partitions (in its set's order) until it is at its count; a
//! partition held by more members than the sharing loses holders (in its set's order),
//! who count as unfilled; then, partition by partition in the partition map's order, the
//! unfilled members (round and round, in index order, skipping one already holding the
//! partition) take the free slots until they reach their count. Members' targets are copies of
//! their previous ones only once changed, as Kafka copies them.
//!
//! Kafka's quirks are kept: with different subscriptions, a topic nobody subscribes to any
//! longer stays in its holders' targets, and a member picked twice for one partition (the
//! round having wrapped) fills one of the partition's slots without taking a second one.

use crate::consumer_groups::java_order::{JavaHash, JavaHashMap, JavaHashSet};
use crate::consumer_groups::kafka_uniform::{deep_copy, JavaAssignment};
use kafka_codec::Uuid;
use std::collections::BTreeMap;

/// One member as the assignor sees it.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// Its id.
    pub id: &'a str,
    /// The ids of the existing topics it subscribes to, in the order Kafka's `TopicIds` walks
    /// them ([`topic_ids`](crate::consumer_groups::kafka_uniform::topic_ids)).
    pub topics: Vec<Uuid>,
    /// Its previous target, as the coordinator read it back
    /// ([`replayed`](crate::consumer_groups::kafka_uniform::replayed)); `None`: nothing.
    pub previous: Option<&'a JavaAssignment>,
}

/// Kafka's `TopicIdPartition` as a hash key (a record: `31 * topic.hashCode() + partition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TopicPartition(Uuid, i32);

impl JavaHash for TopicPartition {
    fn java_hash(&self) -> i32 {
        self.0.java_hash().wrapping_mul(31).wrapping_add(self.1)
    }
}

/// The initial capacity Kafka's `AssignorHelpers.newHashMap(n)`/`newHashSet(n)` ask for.
fn capacity(n: usize) -> usize {
    ((n + 1) as f32 / 0.75 + 1.0) as usize
}

/// Each of `members` members' wanted partition count, `sharing` members sharing each of
/// `partitions` partitions.
fn desired_counts(sharing: usize, partitions: usize, members: usize) -> Vec<usize> {
    let precise = (sharing * partitions) as f64 / members as f64;
    (0..members)
        .map(|at| {
            let upto = (precise * (at + 1) as f64).ceil() as usize;
            upto.saturating_sub((precise * at as f64).ceil() as usize)
        })
        .collect()
}

/// The members' previous targets and their new ones, copied from the previous on first change.
struct Targets<'a> {
    old: Vec<&'a JavaAssignment>,
    new: Vec<Option<JavaAssignment>>,
}

impl<'a> Targets<'a> {
    fn changed(&mut self, member: usize) -> &mut JavaAssignment {
        let old = self.old[member];
        self.new[member].get_or_insert_with(|| deep_copy(old))
    }

    fn into_targets(self, members: &[Member<'_>]) -> Vec<(String, JavaAssignment)> {
        members
            .iter()
            .zip(self.new)
            .zip(self.old)
            .map(|((member, new), old)| (member.id.to_string(), new.unwrap_or_else(|| old.clone())))
            .collect()
    }
}

/// A partition as one builder keys it: Kafka's `TopicIdPartition` (homogeneous), or a bare
/// partition index of the one topic being assigned (heterogeneous).
trait PartitionKey: JavaHash + PartialEq + Copy {
    /// Its topic (`topic` being the one assigned, for a bare index) and partition.
    fn split(&self, topic: Uuid) -> (Uuid, i32);
}

impl PartitionKey for TopicPartition {
    fn split(&self, _: Uuid) -> (Uuid, i32) {
        (self.0, self.1)
    }
}

impl PartitionKey for i32 {
    fn split(&self, topic: Uuid) -> (Uuid, i32) {
        (topic, *self)
    }
}

/// Who holds what while a builder runs (Kafka's `finalAssignmentByPartition` and
/// `finalAssignmentByMember`), members by index.
struct Placement<K> {
    /// The topic being assigned (heterogeneous; unused by `TopicPartition` keys).
    topic: Uuid,
    holders: JavaHashMap<K, JavaHashSet<i32>>,
    held: JavaHashMap<i32, JavaHashSet<K>>,
}

impl<K: PartitionKey> Placement<K> {
    fn new(topic: Uuid, partitions: usize, members: usize) -> Self {
        Placement {
            topic,
            holders: JavaHashMap::with_capacity(capacity(partitions)),
            held: JavaHashMap::with_capacity(capacity(members)),
        }
    }

    /// `member` keeps `key` from its previous target.
    fn keep(&mut self, member: i32, key: K) {
        self.holders
            .compute_if_absent(key, JavaHashSet::new)
            .add(member);
        self.held
            .compute_if_absent(member, JavaHashSet::new)
            .add(key);
    }

    /// Each of `members` over its count gives partitions up, in its set's order.
    fn revoke_overfilled(&mut self, members: &[i32], desired: &[usize], targets: &mut Targets<'_>) {
        for member in members {
            let want = desired[*member as usize];
            let Some(mine) = self.held.get_mut(member) else {
                continue;
            };
            for key in mine.items().copied().collect::<Vec<_>>() {
                if mine.len() <= want {
                    break;
                }
                let (topic, partition) = key.split(self.topic);
                if let Some(set) = targets.changed(*member as usize).get_mut(&topic) {
                    set.remove(&partition);
                }
                if let Some(set) = self.holders.get_mut(&key) {
                    set.remove(member);
                }
                mine.remove(&key);
            }
        }
    }

    /// Each partition held by more than `sharing` members loses holders, in its set's order;
    /// those who lost one are `unfilled` (homogeneous).
    fn revoke_overshared(
        &mut self,
        sharing: usize,
        targets: &mut Targets<'_>,
        mut unfilled: Option<&mut JavaHashSet<i32>>,
    ) {
        for key in self.holders.iter().map(|(k, _)| *k).collect::<Vec<_>>() {
            let Some(set) = self.holders.get_mut(&key) else {
                continue;
            };
            let mut holding = set.len();
            if holding <= sharing {
                continue;
            }
            let (topic, partition) = key.split(self.topic);
            for member in set.items().copied().collect::<Vec<_>>() {
                let dropped = targets
                    .changed(member as usize)
                    .get_mut(&topic)
                    .and_then(|partitions| partitions.remove(&partition))
                    .is_some();
                if dropped {
                    holding -= 1;
                    set.remove(&member);
                    if let Some(mine) = self.held.get_mut(&member) {
                        mine.remove(&key);
                    }
                    if let Some(unfilled) = unfilled.as_deref_mut() {
                        unfilled.add(member);
                    }
                }
                if holding <= sharing {
                    break;
                }
            }
        }
    }

    /// Hands the partitions out (in the holders map's order) to the `unfilled` members, round
    /// and round in the set's order, until each partition has `sharing` holders or nobody
    /// took one in a round; a member leaves the round at its count.
    fn fill(
        &mut self,
        sharing: usize,
        unfilled: &mut JavaHashSet<i32>,
        desired: &[usize],
        targets: &mut Targets<'_>,
    ) {
        let mut round: Vec<i32> = unfilled.items().copied().collect();
        let mut next = 0;
        let mut took = false;
        for (key, holding) in self.holders.iter() {
            let mut wanted = sharing.saturating_sub(holding.len());
            while wanted > 0 {
                if next >= round.len() {
                    if !took {
                        break;
                    }
                    round = unfilled.items().copied().collect();
                    next = 0;
                    took = false;
                    if round.is_empty() {
                        break;
                    }
                }
                let member = round[next];
                next += 1;
                // Only the holders from before the round: a member picked again takes nothing.
                if holding.contains(&member) {
                    continue;
                }
                let (topic, partition) = key.split(self.topic);
                targets
                    .changed(member as usize)
                    .compute_if_absent(topic, JavaHashSet::new)
                    .add(partition);
                let mine = self.held.compute_if_absent(member, JavaHashSet::new);
                mine.add(*key);
                wanted -= 1;
                took = true;
                if mine.len() >= desired[member as usize] {
                    unfilled.remove(&member);
                }
            }
            if unfilled.is_empty() {
                break;
            }
        }
    }
}

/// The `simple` assignment: each member's new target (before the coordinator writes and
/// reads it back), in `members`' order (give them in
/// [`member_order`](crate::consumer_groups::kafka_uniform::member_order)). `homogeneous`:
/// every member subscribes to the same topic names. `partitions`: each existing topic's count.
pub fn assign(
    members: &[Member<'_>],
    partitions: &BTreeMap<Uuid, i32>,
    homogeneous: bool,
) -> Vec<(String, JavaAssignment)> {
    let empty = JavaAssignment::new();
    let mut targets = Targets {
        old: members
            .iter()
            .map(|member| member.previous.unwrap_or(&empty))
            .collect(),
        new: vec![None; members.len()],
    };
    let count = |topic: &Uuid| partitions.get(topic).copied().unwrap_or(0).max(0);
    let assigned = if homogeneous {
        members
            .first()
            .is_some_and(|first| !first.topics.is_empty())
    } else {
        members.iter().any(|member| !member.topics.is_empty())
    };
    if !assigned {
        // Kafka's assignor returns no assignment: every target is empty.
        return members
            .iter()
            .map(|member| (member.id.to_string(), JavaAssignment::new()))
            .collect();
    }
    if homogeneous {
        assign_homogeneous(&members[0].topics, members.len(), count, &mut targets);
    } else {
        let mut topics: JavaHashSet<Uuid> = JavaHashSet::new();
        for member in members {
            for topic in &member.topics {
                topics.add(*topic);
            }
        }
        for topic in topics.items() {
            let subscribers: Vec<usize> = (0..members.len())
                .filter(|at| members[*at].topics.contains(topic))
                .collect();
            assign_topic(*topic, count(topic), &subscribers, &mut targets);
        }
    }
    targets.into_targets(members)
}

/// Kafka's `SimpleHomogeneousAssignmentBuilder`: `topics` (the first member's, as everyone's)
/// shared out among `n` members.
fn assign_homogeneous(
    topics: &[Uuid],
    n: usize,
    count: impl Fn(&Uuid) -> i32,
    targets: &mut Targets<'_>,
) {
    let all: Vec<TopicPartition> = topics
        .iter()
        .flat_map(|topic| (0..count(topic)).map(|p| TopicPartition(*topic, p)))
        .collect();
    let sharing = if all.is_empty() {
        0
    } else {
        n.div_ceil(all.len())
    };
    let desired = desired_counts(sharing, all.len(), n);
    let mut placement: Placement<TopicPartition> = Placement::new(Uuid::default(), all.len(), n);
    let mut unfilled: JavaHashSet<i32> = JavaHashSet::with_capacity(capacity(n));
    let mut overfilled: JavaHashSet<i32> = JavaHashSet::with_capacity(capacity(n));
    // Keep what is still subscribed; copy a target once it reaches its count or drops a topic.
    for (member, want) in desired.iter().copied().enumerate() {
        let old = targets.old[member];
        let mut kept = 0;
        for (topic, partitions) in old.iter() {
            if topics.contains(topic) {
                for partition in partitions.items() {
                    kept += 1;
                    placement.keep(member as i32, TopicPartition(*topic, *partition));
                    if kept >= want && targets.new[member].is_none() {
                        targets.new[member] = Some(deep_copy(old));
                    }
                }
            } else {
                targets.changed(member).remove(topic);
            }
        }
        if kept < want {
            unfilled.add(member as i32);
        } else if kept > want {
            overfilled.add(member as i32);
        }
    }
    let overfilled: Vec<i32> = overfilled.items().copied().collect();
    placement.revoke_overfilled(&overfilled, &desired, targets);
    placement.revoke_overshared(sharing, targets, Some(&mut unfilled));
    for key in &all {
        placement.holders.compute_if_absent(*key, JavaHashSet::new);
    }
    if !unfilled.is_empty() {
        placement.fill(sharing, &mut unfilled, &desired, targets);
    }
}

/// Kafka's `SimpleHeterogeneousAssignmentBuilder` for one topic of `partitions` partitions,
/// `subscribers` (member indices, in order) sharing it.
fn assign_topic(topic: Uuid, partitions: i32, subscribers: &[usize], targets: &mut Targets<'_>) {
    let n = targets.old.len();
    let total = partitions as usize;
    let sharing = if total == 0 {
        0
    } else {
        subscribers.len().div_ceil(total)
    };
    let mut desired = vec![0usize; n];
    for (at, want) in desired_counts(sharing, total, subscribers.len())
        .into_iter()
        .enumerate()
    {
        desired[subscribers[at]] = want;
    }
    let mut placement: Placement<i32> = Placement::new(topic, total, subscribers.len());
    // What each member held of the topic, subscribed or not.
    for member in 0..n {
        let old = targets.old[member];
        if old.is_empty() {
            continue;
        }
        let Some(had) = old.get(&topic) else {
            continue;
        };
        for partition in had.items() {
            placement.keep(member as i32, *partition);
        }
    }
    // Members over their count (0 for those not subscribing) give partitions up.
    let holding: Vec<i32> = placement.held.iter().map(|(k, _)| *k).collect();
    placement.revoke_overfilled(&holding, &desired, targets);
    placement.revoke_overshared(sharing, targets, None);
    for partition in 0..partitions {
        placement.holders.compute_if_absent(partition, || {
            JavaHashSet::with_capacity(capacity(subscribers.len()))
        });
    }
    let mut unfilled: JavaHashSet<i32> = JavaHashSet::with_capacity(capacity(n));
    for member in subscribers {
        let mine = placement
            .held
            .get(&(*member as i32))
            .map_or(0, JavaHashSet::len);
        if mine < desired[*member] {
            unfilled.add(*member as i32);
        }
    }
    placement.fill(sharing, &mut unfilled, &desired, targets);
}
