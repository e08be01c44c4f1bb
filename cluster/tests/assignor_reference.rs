//! The cluster's server-side assignors against Kafka 4.4's own (`UniformAssignor`,
//! `RangeAssignor`): `data/assignors.txt` is what Kafka's classes assigned over a seeded table
//! of groups (1-4 topics of 1-12 partitions, 1-6 members with and without instance ids and
//! racks, homogeneous and heterogeneous subscriptions), each through four steps: the first
//! members, one joins, one leaves, a topic grows, every step starting from the previous
//! step's targets as Kafka's coordinator reads them back. Regenerate it with
//!
//! ```text
//! java -cp "$(bash tools/assignor-reference/classpath.sh)" \
//!     kafkacodec.assignor.AssignorReference > cluster/tests/data/assignors.txt
//! ```
//!
//! Kafka 4.4's assignors never ask for partition racks (the file's last line counts the
//! calls), so members' racks do not change the placement.

use kafka_codec::Uuid;
use kafka_codec_cluster::consumer_groups::kafka_uniform::{self, JavaAssignment, Spec, Subscribed};
use kafka_codec_cluster::consumer_groups::{range, ConsumerMember, MemberState, TopicsByName};
use kafka_codec_cluster::group_members::Membership;
use std::collections::{BTreeMap, BTreeSet};

const FIXTURE: &str = include_str!("data/assignors.txt");

pub(crate) struct Step {
    pub(crate) topics: Vec<(String, Uuid, i32)>,
    /// id, instance id, subscribed topic names.
    pub(crate) members: Vec<(String, Option<String>, Vec<String>)>,
    /// Kafka's placement: member id to topic name to partitions.
    pub(crate) assigned: BTreeMap<String, BTreeMap<String, BTreeSet<i32>>>,
}

pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) assignor: String,
    pub(crate) steps: Vec<Step>,
}

fn uuid(most: i64, least: i64) -> Uuid {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&most.to_be_bytes());
    bytes[8..].copy_from_slice(&least.to_be_bytes());
    Uuid(bytes)
}

fn parse() -> Vec<Case> {
    parse_text(FIXTURE)
}

/// A fixture of this format (`share_assignor_reference` reads its own).
pub(crate) fn parse_text(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let words: Vec<&str> = line.split(' ').collect();
        let case = cases.last_mut();
        match words[0] {
            "case" => cases.push(Case {
                name: words[1].to_string(),
                assignor: words[2].to_string(),
                steps: Vec::new(),
            }),
            "step" => case.expect("a case").steps.push(Step {
                topics: Vec::new(),
                members: Vec::new(),
                assigned: BTreeMap::new(),
            }),
            "topic" => {
                let step = case.expect("a case").steps.last_mut().expect("a step");
                step.topics.push((
                    words[1].to_string(),
                    uuid(words[2].parse().unwrap(), words[3].parse().unwrap()),
                    words[4].parse().unwrap(),
                ));
            }
            "member" => {
                let step = case.expect("a case").steps.last_mut().expect("a step");
                let instance = (words[2] != "-").then(|| words[2].to_string());
                let topics = words[4].split(',').map(String::from).collect();
                step.members.push((words[1].to_string(), instance, topics));
            }
            "assigned" => {
                let step = case.expect("a case").steps.last_mut().expect("a step");
                let mut placed = BTreeMap::new();
                for part in &words[2..] {
                    let (topic, list) = part.split_once(':').unwrap();
                    placed.insert(
                        topic.to_string(),
                        list.split(',').map(|p| p.parse().unwrap()).collect(),
                    );
                }
                step.assigned.insert(words[1].to_string(), placed);
            }
            other => panic!("unknown line {other:?}"),
        }
    }
    cases
}

pub(crate) fn by_name(
    step: &Step,
    targets: impl Iterator<Item = (String, BTreeMap<Uuid, BTreeSet<i32>>)>,
) -> BTreeMap<String, BTreeMap<String, BTreeSet<i32>>> {
    let names: BTreeMap<Uuid, &str> = step
        .topics
        .iter()
        .map(|(n, id, _)| (*id, n.as_str()))
        .collect();
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<i32>>> = step
        .members
        .iter()
        .map(|(id, _, _)| (id.clone(), BTreeMap::new()))
        .collect();
    for (id, assignment) in targets {
        for (topic, partitions) in assignment {
            if !partitions.is_empty() {
                out.get_mut(&id)
                    .expect("a member")
                    .insert(names[&topic].to_string(), partitions);
            }
        }
    }
    out
}

#[test]
fn range_places_partitions_as_kafka_4_4() {
    let mut compared = 0;
    for case in parse().iter().filter(|case| case.assignor == "range") {
        for (at, step) in case.steps.iter().enumerate() {
            let members: BTreeMap<String, ConsumerMember> = step
                .members
                .iter()
                .map(|(id, instance, topics)| {
                    let member = ConsumerMember {
                        membership: Membership::new(
                            id.clone(),
                            instance.clone(),
                            kafka_codec_cluster::clock::now(),
                        ),
                        state: MemberState::Stable,
                        subscribed_names: topics.clone(),
                        subscribed_regex: None,
                        subscribed_topics: topics.clone(),
                        server_assignor: Some("range".into()),
                        assigned: Default::default(),
                        revoking: Default::default(),
                    };
                    (id.clone(), member)
                })
                .collect();
            let topics: TopicsByName = step
                .topics
                .iter()
                .map(|(name, id, count)| (name.clone(), (*id, *count)))
                .collect();
            let got = by_name(step, range(&members, &topics).into_iter());
            assert_eq!(got, step.assigned, "case {} step {at}", case.name);
            compared += 1;
        }
    }
    assert_eq!(compared, 480, "120 cases of four steps");
}

/// A target's contents.
fn contents(target: &JavaAssignment) -> BTreeMap<Uuid, BTreeSet<i32>> {
    target
        .iter()
        .map(|(topic, set)| (*topic, set.items().copied().collect()))
        .collect()
}

#[test]
fn uniform_places_partitions_as_kafka_4_4() {
    let (mut homogeneous, mut heterogeneous) = (0, 0);
    for case in parse().iter().filter(|case| case.assignor == "uniform") {
        let mut previous: BTreeMap<String, JavaAssignment> = BTreeMap::new();
        for (at, step) in case.steps.iter().enumerate() {
            let order =
                kafka_uniform::member_order(step.members.iter().map(|(id, _, _)| id.as_str()));
            let member = |id: &str| step.members.iter().find(|(m, _, _)| m == id).unwrap();
            let ids: BTreeMap<&str, (Uuid, i32)> = step
                .topics
                .iter()
                .map(|(name, id, count)| (name.as_str(), (*id, *count)))
                .collect();
            let first = &step.members[0].2;
            let targets: Vec<(String, JavaAssignment)> =
                if step.members.iter().all(|(_, _, topics)| topics == first) {
                    let topics: Vec<(Uuid, i32)> =
                        kafka_uniform::topic_order(&member(order[0]).2, |name| {
                            ids.get(name).map(|(id, _)| *id)
                        })
                        .into_iter()
                        .map(|id| (id, ids.values().find(|(i, _)| *i == id).unwrap().1))
                        .collect();
                    let specs: Vec<Spec<'_>> = order
                        .iter()
                        .map(|id| Spec {
                            id,
                            previous: previous.get(*id).filter(|p| !p.is_empty()),
                        })
                        .collect();
                    homogeneous += 1;
                    kafka_uniform::assign(&specs, &topics)
                        .into_iter()
                        .map(|(id, target)| (id.clone(), kafka_uniform::replayed(&target)))
                        .collect()
                } else {
                    let had: BTreeMap<String, BTreeMap<Uuid, BTreeSet<i32>>> = previous
                        .iter()
                        .map(|(id, target)| (id.clone(), contents(target)))
                        .collect();
                    let members: Vec<Subscribed<'_>> = order
                        .iter()
                        .map(|id| Subscribed {
                            id,
                            topics: member(id)
                                .2
                                .iter()
                                .map(|name| ids[name.as_str()].0)
                                .collect(),
                            previous: had.get(*id),
                        })
                        .collect();
                    let partitions = ids.values().copied().collect();
                    heterogeneous += 1;
                    kafka_uniform::assign_heterogeneous(&members, &partitions)
                        .into_iter()
                        .map(|(id, target)| (id, kafka_uniform::from_contents(&target)))
                        .collect()
                };
            let got = by_name(
                step,
                targets
                    .iter()
                    .map(|(id, target)| (id.clone(), contents(target))),
            );
            assert_eq!(got, step.assigned, "case {} step {at}", case.name);
            previous = targets.into_iter().collect();
        }
    }
    // 120 cases of four steps; a heterogeneous group can become homogeneous when one leaves.
    assert_eq!(homogeneous + heterogeneous, 480);
    assert!(
        homogeneous >= 300 && heterogeneous >= 100,
        "{homogeneous} and {heterogeneous}"
    );
}
