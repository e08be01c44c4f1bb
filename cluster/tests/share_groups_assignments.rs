//! Share group assignments through ShareGroupHeartbeat conversations, on the paused clock,
//! against Kafka 4.4's `SimpleAssignor`: the fixture's groups that start with one member and
//! change by one event a step (`data/share-assignor.txt`, cases `simple-events`, made by
//! `tools/assignor-reference` `ShareAssignorReference`) are replayed as a client would live
//! them (a member joins with epoch 0 and leaves with -1, CreatePartitions grows a topic, a
//! heartbeat names a new subscription), every member then heartbeats, and the assignments the
//! heartbeats sent (each the last one a member was sent) equal Kafka's for every step.
//!
//! Kafka's assignor walks hash tables whose order follows the topic ids, so each topic is
//! given the id it had in Kafka's run.

use crate::assignor_reference::{by_name, parse_text, Step};
use crate::share_assignor_reference::FIXTURE;
use crate::support;
use kafka_codec::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_codec::messages::{
    CreatePartitionsRequest, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse,
};
use kafka_codec::{Response, Uuid};
use std::collections::{BTreeMap, BTreeSet};
use support::pipe::{paused, paused_cluster, PipeClient as Client};

const GROUP: &str = "share-assignments";

trait ShareAssignmentCalls {
    async fn share_heartbeat(
        &mut self,
        member: &str,
        epoch: i32,
        topics: Option<&[String]>,
    ) -> ShareGroupHeartbeatResponse;
    async fn grow(&mut self, topic: &str, count: i32);
}

impl ShareAssignmentCalls for Client {
    async fn share_heartbeat(
        &mut self,
        member: &str,
        epoch: i32,
        topics: Option<&[String]>,
    ) -> ShareGroupHeartbeatResponse {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(GROUP.into())
            .with_member_id(member.into())
            .with_member_epoch(epoch)
            .with_subscribed_topic_names(
                topics.map(|names| names.iter().map(|n| n.as_str().into()).collect()),
            );
        let Response::ShareGroupHeartbeat(answer) = self.call(1, request).await else {
            panic!("not ShareGroupHeartbeat")
        };
        assert_eq!(answer.error_code, 0, "{member} at {epoch}: {answer:?}");
        answer
    }

    async fn grow(&mut self, topic: &str, count: i32) {
        let request = CreatePartitionsRequest::default()
            .with_timeout_ms(1000)
            .with_topics(vec![CreatePartitionsTopic::default()
                .with_name(topic.into())
                .with_count(count)
                .with_assignments(None)]);
        let Response::CreatePartitions(grown) = self.call(3, request).await else {
            panic!("not CreatePartitions")
        };
        assert_eq!(grown.results[0].error_code, 0, "{grown:?}");
    }
}

/// The members' epochs and the assignments they were last sent.
#[derive(Default)]
struct Members {
    epochs: BTreeMap<String, i32>,
    sent: BTreeMap<String, BTreeMap<Uuid, BTreeSet<i32>>>,
}

impl Members {
    fn heard(&mut self, id: &str, answer: &ShareGroupHeartbeatResponse) {
        self.epochs.insert(id.to_string(), answer.member_epoch);
        if let Some(assignment) = &answer.assignment {
            let partitions = assignment
                .topic_partitions
                .iter()
                .filter(|topic| !topic.partitions.is_empty())
                .map(|topic| (topic.topic_id, topic.partitions.iter().collect()))
                .collect();
            self.sent.insert(id.to_string(), partitions);
        }
    }
}

/// Replays `step`'s one change from `before` with heartbeats (and CreatePartitions).
async fn change(client: &mut Client, members: &mut Members, before: Option<&Step>, step: &Step) {
    if let Some(before) = before {
        for (name, _, count) in &step.topics {
            let grew = before
                .topics
                .iter()
                .any(|(was, _, had)| was == name && had < count);
            if grew {
                client.grow(name, *count).await;
            }
        }
        for (id, _, _) in &before.members {
            if !step.members.iter().any(|(now, _, _)| now == id) {
                members.epochs.remove(id).expect("a member");
                members.sent.remove(id);
                let answer = client.share_heartbeat(id, -1, None).await;
                assert_eq!(answer.member_epoch, -1);
            }
        }
    }
    for (id, _, topics) in &step.members {
        let was = before.and_then(|b| b.members.iter().find(|(m, _, _)| m == id));
        match was {
            None => {
                let answer = client.share_heartbeat(id, 0, Some(topics)).await;
                members.heard(id, &answer);
            }
            Some((_, _, had)) if had != topics => {
                let epoch = members.epochs[id];
                let answer = client.share_heartbeat(id, epoch, Some(topics)).await;
                members.heard(id, &answer);
            }
            Some(_) => {}
        }
    }
}

#[test]
fn heartbeats_assign_partitions_as_kafka_4_4() {
    paused().block_on(async {
        let mut replayed = 0;
        let cases = parse_text(FIXTURE);
        for case in cases.iter().filter(|case| case.assignor == "simple-events") {
            let cluster = paused_cluster(1, 29).build().await.expect("cluster");
            let mut client = Client::connect(&cluster, 0);
            for (name, id, count) in &case.steps[0].topics {
                support::make_topic(&mut client, 7, name, *count, 1).await;
                // Kafka's assignor walks hash tables in an order that follows the topic ids.
                cluster
                    .shared()
                    .state()
                    .topics
                    .get_mut(name)
                    .expect("made")
                    .id = *id;
            }
            let mut members = Members::default();
            let mut before: Option<&Step> = None;
            for (at, step) in case.steps.iter().enumerate() {
                change(&mut client, &mut members, before, step).await;
                // Every member heartbeats and takes whatever it is sent.
                for id in members.epochs.keys().cloned().collect::<Vec<_>>() {
                    let epoch = members.epochs[&id];
                    let answer = client.share_heartbeat(&id, epoch, None).await;
                    members.heard(&id, &answer);
                }
                let got = by_name(
                    step,
                    members
                        .sent
                        .iter()
                        .map(|(id, sent)| (id.clone(), sent.clone())),
                );
                assert_eq!(got, step.assigned, "case {} step {at}", case.name);
                before = Some(step);
                replayed += 1;
            }
        }
        assert_eq!(replayed, 192, "24 groups of eight steps");
    });
}
