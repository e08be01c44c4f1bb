//! Kafka 4.4's `uniform` assignor, step for step: its `UniformHomogeneousAssignmentBuilder`
//! (every member subscribes to the same topics) over [`java_order`](super::java_order)'s
//! model of Java's hash tables, whose order decides who keeps what, and its
//! `UniformHeterogeneousAssignmentBuilder`, so that it places every partition where Kafka
//! does (compared with Kafka's own classes in `cluster/tests/assignor_reference.rs`).
//!
//! Homogeneous: Kafka walks the members in its member map's order; each, in turn, gets the
//! minimum quota (one more while over-quota slots remain), keeps what its previous target
//! gave it of the subscribed topics up to that quota (in its previous map's order), and
//! gives up the rest; a member that kept no more than the minimum leaves its over-quota slot
//! to later members while enough of them remain to take all that are left; then the
//! partitions nobody holds (subscribed topics in their set's order, each in partition order),
//! followed by those given up, fill the members still under quota in the same order.

use super::java_order::{JavaHashMap, JavaHashSet};
use kafka_codec::Uuid;

/// A target assignment as Kafka holds it: partitions by topic id, in Java's hash order.
pub type JavaAssignment = JavaHashMap<Uuid, JavaHashSet<i32>>;

/// One member as the assignor sees it.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its previous target, as the coordinator read it back ([`replayed`]); `None`: nothing.
    pub previous: Option<&'a JavaAssignment>,
}

/// The member ids in the order Kafka's `TargetAssignmentBuilder` map yields them: a
/// `HashMap` filled in `ids`' order (Kafka fills it in its group's member-map order; the
/// cluster uses member-id order, which only matters for ids sharing a bucket).
pub fn member_order<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut map: JavaHashMap<String, &'a str> = JavaHashMap::new();
    for id in ids {
        map.insert(id.to_string(), id);
    }
    map.iter().map(|(_, id)| *id).collect()
}

/// The subscribed topic ids in the order the assignor walks them: the member's topic names
/// as a `HashSet` (from `names` in their order), mapped to ids (`TopicIds`), copied into a
/// `HashSet` of ids.
pub fn topic_order(names: &[String], id_of: impl Fn(&str) -> Option<Uuid>) -> Vec<Uuid> {
    JavaHashSet::from_collection(topic_ids(names, id_of).into_iter())
        .items()
        .copied()
        .collect()
}

/// A member's subscribed topic ids as Kafka's `TopicIds` walks them: its topic names as a
/// `HashSet` (from `names` in their order), mapped to the ids of those that exist.
pub fn topic_ids(names: &[String], id_of: impl Fn(&str) -> Option<Uuid>) -> Vec<Uuid> {
    let names = JavaHashSet::from_collection(names.iter().cloned());
    names.items().filter_map(|name| id_of(name)).collect()
}

/// `AssignorHelpers.deepCopyAssignment`.
pub fn deep_copy(map: &JavaAssignment) -> JavaAssignment {
    let mut copy = JavaAssignment::with_capacity(map.len());
    for (topic, partitions) in map.iter() {
        copy.insert(
            *topic,
            JavaHashSet::from_collection(
                partitions.items().copied().collect::<Vec<_>>().into_iter(),
            ),
        );
    }
    copy
}

/// A target as the coordinator writes it to its log and reads it back
/// (`ConsumerGroupTargetAssignmentMember` record, `Assignment.fromRecord`): the topics in the
/// map's order into a fresh `HashMap`, each topic's partitions, in its set's order, into a
/// fresh `HashSet`. The next assignment starts from this.
pub fn replayed(target: &JavaAssignment) -> JavaAssignment {
    let mut read = JavaAssignment::new();
    for (topic, partitions) in target.iter() {
        if read.get(topic).is_none() {
            read.insert(
                *topic,
                JavaHashSet::from_collection(
                    partitions.items().copied().collect::<Vec<_>>().into_iter(),
                ),
            );
        }
    }
    read
}

/// A target's contents: its partitions by topic, without the topics it holds none of.
pub fn contents(target: &JavaAssignment) -> super::Assignment {
    target
        .iter()
        .filter(|(_, set)| !set.is_empty())
        .map(|(topic, set)| (*topic, set.items().copied().collect()))
        .collect()
}

/// A target known only by its contents as the coordinator reads it back: the topics in id
/// order, each topic's partitions in order, through [`replayed`].
pub fn from_contents(target: &super::Assignment) -> JavaAssignment {
    let mut map = JavaAssignment::new();
    for (topic, set) in target {
        map.insert(*topic, JavaHashSet::from_collection(set.iter().copied()));
    }
    replayed(&map)
}

/// The homogeneous `uniform` assignment: each member's new target, in `members`' order
/// (give them in [`member_order`]), given the subscribed topics in [`topic_order`] with
/// their partition counts. A partition is "assigned" when a member's previous target holds it.
pub fn assign(members: &[Spec<'_>], topics: &[(Uuid, i32)]) -> Vec<(String, JavaAssignment)> {
    if members.is_empty() || topics.is_empty() {
        return members
            .iter()
            .map(|member| (member.id.to_string(), JavaAssignment::new()))
            .collect();
    }
    let held = |topic: &Uuid, index: i32| {
        members.iter().any(|member| {
            member
                .previous
                .and_then(|previous| previous.get(topic))
                .is_some_and(|set| set.contains(&index))
        })
    };
    let subscribed = |topic: &Uuid| topics.iter().any(|(id, _)| id == topic);
    let mut unassigned: Vec<(Uuid, i32)> = Vec::new();
    let mut total = 0usize;
    for (topic, count) in topics {
        for index in 0..*count {
            if !held(topic, index) {
                unassigned.push((*topic, index));
            }
        }
        total += (*count).max(0) as usize;
    }
    let min_quota = total / members.len();
    let mut extra = total % members.len();
    let empty = JavaAssignment::new();
    // `None`: the previous map itself (immutable in Kafka, copied before any change).
    let mut targets: Vec<(String, Option<JavaAssignment>)> = Vec::with_capacity(members.len());
    let mut unfilled: Vec<(usize, usize)> = Vec::new();
    for (at, member) in members.iter().enumerate() {
        let old = member.previous.unwrap_or(&empty);
        let mut new: Option<JavaAssignment> = None;
        let mut quota = min_quota;
        let mut has_extra = extra > 0;
        if has_extra {
            quota += 1;
        }
        for (topic, partitions) in old.iter() {
            if subscribed(topic) {
                if partitions.len() <= quota {
                    quota -= partitions.len();
                } else {
                    for partition in partitions.items() {
                        if quota > 0 {
                            quota -= 1;
                        } else {
                            let copy = new.get_or_insert_with(|| deep_copy(old));
                            if let Some(set) = copy.get_mut(topic) {
                                set.remove(partition);
                                if set.is_empty() {
                                    copy.remove(topic);
                                }
                            }
                            unassigned.push((*topic, *partition));
                        }
                    }
                }
            } else {
                new.get_or_insert_with(|| deep_copy(old)).remove(topic);
            }
        }
        // A member that did not keep an over-quota partition leaves the extra slot to the
        // members after it, while enough of them remain to take every extra slot.
        if quota > 0 && has_extra && members.len() - at > extra {
            quota -= 1;
            has_extra = false;
        }
        if quota > 0 {
            unfilled.push((at, quota));
        }
        if has_extra {
            extra -= 1;
        }
        targets.push((member.id.to_string(), new));
    }
    let mut next = 0;
    for (at, quota) in unfilled {
        let old = members[at].previous.unwrap_or(&empty);
        let target = targets[at].1.get_or_insert_with(|| deep_copy(old));
        for _ in 0..quota {
            let Some((topic, index)) = unassigned.get(next) else {
                break;
            };
            next += 1;
            target
                .compute_if_absent(*topic, JavaHashSet::new)
                .add(*index);
        }
    }
    targets
        .into_iter()
        .zip(members)
        .map(|((id, new), member)| {
            let target = new.unwrap_or_else(|| member.previous.cloned().unwrap_or_default());
            (id, target)
        })
        .collect()
}

/// A member as Kafka's heterogeneous `uniform` builder sees it.
#[derive(Debug, Clone)]
pub struct Subscribed<'a> {
    /// Its id.
    pub id: &'a str,
    /// The ids of the existing topics it subscribes to.
    pub topics: Vec<Uuid>,
    /// Its previous target.
    pub previous: Option<&'a super::Assignment>,
}

/// Kafka's `Uuid.compareTo`: the two halves as signed numbers.
fn uuid_order(a: &Uuid, b: &Uuid) -> std::cmp::Ordering {
    let halves = |id: &Uuid| {
        (
            i64::from_be_bytes(id.0[..8].try_into().expect("8 bytes")),
            i64::from_be_bytes(id.0[8..].try_into().expect("8 bytes")),
        )
    };
    halves(a).cmp(&halves(b))
}

/// Kafka's `UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer`: walks one
/// topic's subscribers from the least loaded up and from the most loaded down.
struct Balancer {
    sorted: Vec<usize>,
    least_end: usize,
    least_count: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_count: i64,
    next_most: i64,
}

impl Balancer {
    fn new(members: &[usize], sizes: &[i64]) -> (Balancer, i64) {
        let mut sorted = members.to_vec();
        sorted.sort_by_key(|index| (sizes[*index], *index));
        let first = sizes[sorted[0]];
        let last = sizes[sorted[sorted.len() - 1]];
        let balancer = Balancer {
            least_end: 0,
            least_count: first - 1,
            next_least: 0,
            most_start: sorted.len(),
            most_end: sorted.len(),
            most_count: last + 1,
            next_most: sorted.len() as i64 - 1,
            sorted,
        };
        (balancer, last - first)
    }

    fn next_least_loaded(&mut self, sizes: &[i64]) -> usize {
        if self.next_least >= self.least_end {
            self.least_count += 1;
            while self.least_end < self.sorted.len()
                && sizes[self.sorted[self.least_end]] == self.least_count
            {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let member = self.sorted[self.next_least];
        self.next_least += 1;
        member
    }

    fn next_most_loaded(&mut self, sizes: &[i64]) -> Option<usize> {
        if self.next_most < self.most_start as i64 {
            if self.most_end <= self.most_start && self.most_start > 0 {
                self.most_count = sizes[self.sorted[self.most_start - 1]];
            } else {
                self.most_count -= 1;
            }
            while self.most_start > 0 && sizes[self.sorted[self.most_start - 1]] == self.most_count
            {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as i64 - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let member = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(member)
    }

    fn exclude_most_loaded(&mut self) {
        let at = (self.next_most + 1) as usize;
        self.sorted.swap(at, self.most_end - 1);
        self.most_end -= 1;
    }

    fn balanced(&self) -> bool {
        self.most_count - self.least_count <= 1
    }
}

/// Kafka 4.4's `uniform` assignment when members subscribe to different topics (its
/// `UniformHeterogeneousAssignmentBuilder`): members keep what they had of what they still
/// subscribe to, the rest goes topic by topic (most partitions per subscriber first) to the
/// least loaded subscribers, then each topic is balanced by moving partitions from its most
/// to its least loaded subscribers, for at most 16 rounds. Give `members` in
/// [`member_order`]: ties go to the earlier member.
pub fn assign_heterogeneous(
    members: &[Subscribed<'_>],
    partitions: &std::collections::BTreeMap<Uuid, i32>,
) -> Vec<(String, super::Assignment)> {
    use std::collections::BTreeMap;
    const MAX_ITERATION_COUNT: usize = 16;
    let mut subscribers: BTreeMap<Uuid, Vec<usize>> = BTreeMap::new();
    for (index, member) in members.iter().enumerate() {
        for topic in &member.topics {
            if partitions.contains_key(topic) {
                subscribers.entry(*topic).or_default().push(index);
            }
        }
    }
    let mut targets: Vec<super::Assignment> = vec![super::Assignment::new(); members.len()];
    if subscribers.is_empty() {
        return members
            .iter()
            .map(|m| m.id.to_string())
            .zip(targets)
            .collect();
    }
    let count = |topic: &Uuid| partitions.get(topic).copied().unwrap_or(0).max(0);
    let mut sizes = vec![0i64; members.len()];
    let mut owners: BTreeMap<Uuid, Vec<i64>> = subscribers
        .keys()
        .map(|topic| (*topic, vec![-1; count(topic) as usize]))
        .collect();
    for (index, member) in members.iter().enumerate() {
        for (topic, had) in member.previous.into_iter().flatten() {
            if !member.topics.contains(topic) || !owners.contains_key(topic) {
                continue;
            }
            let slots = owners.get_mut(topic).expect("checked");
            let kept: std::collections::BTreeSet<i32> = had
                .iter()
                .copied()
                .filter(|p| *p >= 0 && (*p as usize) < slots.len())
                .collect();
            for partition in &kept {
                slots[*partition as usize] = index as i64;
            }
            sizes[index] += kept.len() as i64;
            targets[index].insert(*topic, kept);
        }
    }
    let ratio = |topic: &Uuid| f64::from(count(topic)) / subscribers[topic].len() as f64;
    let sort_topics = |mut topics: Vec<Uuid>| {
        topics.sort_by(|a, b| {
            ratio(b)
                .partial_cmp(&ratio(a))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(subscribers[a].len().cmp(&subscribers[b].len()))
                .then(uuid_order(a, b))
        });
        topics
    };
    let assign_partition = |targets: &mut Vec<super::Assignment>,
                            owners: &mut BTreeMap<Uuid, Vec<i64>>,
                            sizes: &mut Vec<i64>,
                            topic: Uuid,
                            partition: i32,
                            member: usize| {
        let slot = &mut owners.get_mut(&topic).expect("a subscribed topic")[partition as usize];
        if *slot >= 0 {
            let old = *slot as usize;
            if let Some(set) = targets[old].get_mut(&topic) {
                set.remove(&partition);
                if set.is_empty() {
                    targets[old].remove(&topic);
                }
            }
            sizes[old] -= 1;
        }
        *slot = member as i64;
        targets[member].entry(topic).or_default().insert(partition);
        sizes[member] += 1;
    };
    // The partitions nobody keeps.
    let unassigned: Vec<(Uuid, Vec<i32>)> = subscribers
        .keys()
        .map(|topic| {
            let free = (0..count(topic))
                .filter(|p| owners[topic][*p as usize] == -1)
                .collect::<Vec<i32>>();
            (*topic, free)
        })
        .filter(|(_, free)| !free.is_empty())
        .collect();
    let free: BTreeMap<Uuid, Vec<i32>> = unassigned.into_iter().collect();
    for topic in sort_topics(free.keys().copied().collect()) {
        let (mut balancer, _) = Balancer::new(&subscribers[&topic], &sizes);
        for partition in &free[&topic] {
            let member = balancer.next_least_loaded(&sizes);
            assign_partition(
                &mut targets,
                &mut owners,
                &mut sizes,
                topic,
                *partition,
                member,
            );
        }
    }
    // Balance the topics more than one member subscribes to.
    let shared: Vec<Uuid> = subscribers
        .iter()
        .filter(|(_, who)| who.len() >= 2)
        .map(|(topic, _)| *topic)
        .collect();
    if shared.is_empty() {
        return members
            .iter()
            .map(|m| m.id.to_string())
            .zip(targets)
            .collect();
    }
    let sorted = sort_topics(shared);
    let mut last_rebalanced: Option<usize> = None;
    'rounds: for _ in 0..MAX_ITERATION_COUNT {
        for (at, topic) in sorted.iter().enumerate() {
            if last_rebalanced == Some(at) {
                break 'rounds;
            }
            let (mut balancer, imbalance) = Balancer::new(&subscribers[topic], &sizes);
            let mut moved = 0;
            if imbalance > 1 {
                let slots = owners[topic].clone();
                let mut order: Vec<i32> = (0..count(topic)).collect();
                order.sort_by_key(|p| (slots[*p as usize], *p));
                let mut start: BTreeMap<i64, usize> = BTreeMap::new();
                let mut end: BTreeMap<i64, usize> = BTreeMap::new();
                for (i, partition) in order.iter().enumerate() {
                    let owner = slots[*partition as usize];
                    start.entry(owner).or_insert(i);
                    end.insert(owner, i + 1);
                }
                while !balancer.balanced() {
                    let mut most = None;
                    while let Some(member) = balancer.next_most_loaded(&sizes) {
                        let key = member as i64;
                        match (start.get(&key), end.get(&key)) {
                            (Some(s), Some(e)) if e > s => {
                                most = Some(member);
                                break;
                            }
                            _ => balancer.exclude_most_loaded(),
                        }
                    }
                    let Some(most) = most else {
                        break;
                    };
                    let e = end.get_mut(&(most as i64)).expect("found above");
                    let partition = order[*e - 1];
                    *e -= 1;
                    let least = balancer.next_least_loaded(&sizes);
                    if balancer.balanced() {
                        break;
                    }
                    assign_partition(
                        &mut targets,
                        &mut owners,
                        &mut sizes,
                        *topic,
                        partition,
                        least,
                    );
                    moved += 1;
                }
            }
            if moved > 0 || last_rebalanced.is_none() {
                last_rebalanced = Some(at);
            }
        }
    }
    members
        .iter()
        .map(|m| m.id.to_string())
        .zip(targets)
        .collect()
}
