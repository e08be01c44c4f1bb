//! The order of an ISR a restarted replica rejoins, compared with Kafka 4.4:
//! `data/isr-order-kafka-4.4.txt` holds what a real cluster (brokers 2 to 8) listed for
//! topics whose replicas hold broker 8, before broker 8 was stopped, while it was, and
//! once it was back in every ISR. A Kafka leader sends the expanded ISR in the order of the
//! Scala hash set it builds it in, and its controller keeps that order, so 8 comes before 2
//! there (`kafka_isr_expansion_order` in `src/state/elr.rs` says where in Kafka's code).
//! The cluster (nine brokers, 0 to 8, on the paused clock) replays the steps: broker 8
//! stopped and fenced (a graceful shutdown), then restarted and caught up.

use crate::support;

use kafka_codec::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::{CreateTopicsRequest, MetadataRequest};
use kafka_codec::Response;
use std::time::Duration;
use support::pipe::{paused, paused_cluster, PipeClient};

/// The topics and their partitions' replicas, as recorded.
const TOPICS: [(&str, &[&[i32]]); 3] = [
    ("two", &[&[2, 8], &[8, 2]]),
    ("three", &[&[3, 8, 2], &[8, 3, 2]]),
    ("four", &[&[5, 8, 7, 2], &[4, 2, 8, 6]]),
];

/// Each partition's leader, replicas and ISR (Metadata v12), as the fixture lists them.
async fn lines(client: &mut PipeClient, step: &str) -> Vec<String> {
    let request = MetadataRequest::default()
        .with_topics(Some(
            TOPICS
                .iter()
                .map(|(name, _)| MetadataRequestTopic::default().with_name(Some((*name).into())))
                .collect(),
        ))
        .with_allow_auto_topic_creation(false);
    let Response::Metadata(metadata) = client.call(12, request).await else {
        panic!("not Metadata")
    };
    let list = |ids: Vec<i32>| {
        let ids: Vec<String> = ids.iter().map(i32::to_string).collect();
        format!("[{}]", ids.join(","))
    };
    let mut lines = Vec::new();
    for (name, _) in TOPICS {
        let topic = metadata
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
            .expect("in Metadata");
        let mut partitions: Vec<_> = topic.partitions.iter().collect();
        partitions.sort_by_key(|p| p.partition_index);
        for p in partitions {
            lines.push(format!(
                "{step}\t{name}-{} leader={} replicas={} isr={}",
                p.partition_index,
                p.leader_id,
                list(p.replica_nodes.iter().collect()),
                list(p.isr_nodes.iter().collect()),
            ));
        }
    }
    lines
}

#[test]
fn a_restarted_replica_rejoins_the_isr_in_kafkas_order() {
    let got = paused().block_on(async {
        let cluster = paused_cluster(9, 43).build().await.expect("cluster");
        let mut client = PipeClient::connect(&cluster, 0);
        let topics = TOPICS
            .iter()
            .map(|(name, partitions)| {
                let assignments = partitions
                    .iter()
                    .enumerate()
                    .map(|(index, ids)| {
                        CreatableReplicaAssignment::default()
                            .with_partition_index(index as i32)
                            .with_broker_ids(ids.to_vec().into())
                    })
                    .collect();
                CreatableTopic::default()
                    .with_name((*name).into())
                    .with_num_partitions(-1)
                    .with_replication_factor(-1)
                    .with_assignments(assignments)
            })
            .collect();
        let request = CreateTopicsRequest::default().with_topics(topics);
        let Response::CreateTopics(created) = client.call(7, request).await else {
            panic!("not CreateTopics")
        };
        for topic in &created.topics {
            assert_eq!(topic.error_code, 0, "{topic:?}");
        }
        let mut got = lines(&mut client, "created").await;
        let control = cluster.control();
        control.stop_broker(8).expect("stop");
        control.fence_broker(8).expect("fence");
        got.extend(lines(&mut client, "8 stopped").await);
        control.restart_broker(8).expect("restart");
        // Its catch-up (a follower fetch round) on the paused clock.
        tokio::time::sleep(Duration::from_secs(10)).await;
        got.extend(lines(&mut client, "8 restarted").await);
        got
    });
    let want = support::fixture_lines("isr-order-kafka-4.4.txt");
    support::assert_same_lines(&got, &want, "cluster");
}
