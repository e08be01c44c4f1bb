//! The cluster's share group assignor against Kafka 4.4's own (`SimpleAssignor`):
//! `data/share-assignor.txt` is what Kafka's class assigned over a seeded table of 120 share
//! groups (1-3 topics of 1-8 partitions, 1-8 members; in half of them every member picks its
//! own topics), each through eight steps of random changes (a member joins or leaves, a topic
//! grows, subscriptions change), every step starting from the previous step's targets as
//! Kafka's coordinator reads them back; many have more members than partitions, which they
//! share; and 24 groups that start with one member and change by one event a step, which
//! `share_groups_assignments.rs` replays with heartbeats. Regenerate it with
//!
//! ```text
//! java -cp "$(bash tools/assignor-reference/classpath.sh)" \
//!     kafkacodec.assignor.ShareAssignorReference > cluster/tests/data/share-assignor.txt
//! ```

use crate::assignor_reference::{by_name, parse_text};
use kafka_codec::Uuid;
use kafka_codec_cluster::consumer_groups::kafka_uniform::{self, JavaAssignment};
use kafka_codec_cluster::share_groups::simple;
use std::collections::BTreeMap;

pub(crate) const FIXTURE: &str = include_str!("data/share-assignor.txt");

#[test]
fn simple_places_partitions_as_kafka_4_4() {
    let (mut homogeneous, mut heterogeneous, mut shared) = (0, 0, 0);
    for case in parse_text(FIXTURE) {
        assert!(["simple", "simple-events"].contains(&case.assignor.as_str()));
        let mut previous: BTreeMap<String, JavaAssignment> = BTreeMap::new();
        for (at, step) in case.steps.iter().enumerate() {
            let order =
                kafka_uniform::member_order(step.members.iter().map(|(id, _, _)| id.as_str()));
            let ids: BTreeMap<&str, (Uuid, i32)> = step
                .topics
                .iter()
                .map(|(name, id, count)| (name.as_str(), (*id, *count)))
                .collect();
            let subscription = |id: &str| {
                let member = step.members.iter().find(|(m, _, _)| m == id).unwrap();
                &member.2
            };
            let first = &step.members[0].2;
            let same = step.members.iter().all(|(_, _, topics)| topics == first);
            let members: Vec<simple::Member<'_>> = order
                .iter()
                .map(|id| simple::Member {
                    id,
                    topics: kafka_uniform::topic_ids(subscription(id), |name| {
                        ids.get(name).map(|(topic, _)| *topic)
                    }),
                    previous: previous.get(*id),
                })
                .collect();
            let partitions: BTreeMap<Uuid, i32> = ids.values().copied().collect();
            let targets: Vec<(String, JavaAssignment)> =
                simple::assign(&members, &partitions, same)
                    .into_iter()
                    .map(|(id, target)| (id, kafka_uniform::replayed(&target)))
                    .collect();
            let got = by_name(
                step,
                targets
                    .iter()
                    .map(|(id, target)| (id.clone(), kafka_uniform::contents(target))),
            );
            assert_eq!(got, step.assigned, "case {} step {at}", case.name);
            if same {
                homogeneous += 1;
            } else {
                heterogeneous += 1;
            }
            let total: i32 = step.topics.iter().map(|(_, _, count)| count).sum();
            if step.members.len() > total as usize {
                shared += 1;
            }
            previous = targets.into_iter().collect();
        }
    }
    assert_eq!(
        homogeneous + heterogeneous,
        1152,
        "144 cases of eight steps"
    );
    assert!(
        homogeneous >= 600 && heterogeneous >= 200 && shared >= 100,
        "{homogeneous} homogeneous, {heterogeneous} heterogeneous, {shared} with partitions shared"
    );
}
