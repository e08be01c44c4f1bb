//! DescribeTopicPartitions through this crate's own client: topics in name order, paged by
//! the response partition limit with a cursor (inside a topic and between topics), unknown
//! and invalid names, and a cursor whose topic was not asked for. The same scenario, each
//! assertion as written, runs against a real Kafka 4.4 broker
//! (`bash tools/ci-live.sh cluster_groups`).

use crate::support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::describe_topic_partitions_request::{Cursor, TopicRequest};
use kafka_codec::messages::{
    CreateTopicsRequest, DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse,
};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use support::Client;

impl Client {
    async fn describe_partitions(
        &mut self,
        topics: &[&str],
        limit: i32,
        cursor: Option<(&str, i32)>,
    ) -> DescribeTopicPartitionsResponse {
        let request = DescribeTopicPartitionsRequest::default()
            .with_topics(
                topics
                    .iter()
                    .map(|name| TopicRequest::default().with_name((*name).into()))
                    .collect(),
            )
            .with_response_partition_limit(limit)
            .with_cursor(cursor.map(|(topic, partition)| {
                Cursor::default()
                    .with_topic_name(topic.into())
                    .with_partition_index(partition)
            }));
        let Response::DescribeTopicPartitions(answer) = self.call(0, request).await else {
            panic!("not DescribeTopicPartitions")
        };
        answer
    }
}

/// Each topic's name, error and partition indexes, and the next cursor.
type Page = (Vec<(String, i16, Vec<i32>)>, Option<(String, i32)>);

fn page(answer: &DescribeTopicPartitionsResponse) -> Page {
    let topics = answer
        .topics
        .iter()
        .map(|topic| {
            (
                topic.name.as_deref().unwrap_or_default().to_string(),
                topic.error_code,
                topic.partitions.iter().map(|p| p.partition_index).collect(),
            )
        })
        .collect();
    let cursor = answer
        .next_cursor
        .as_ref()
        .map(|cursor| (cursor.topic_name.to_string(), cursor.partition_index));
    (topics, cursor)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_topic_partitions_pages_as_kafka_does() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    scenario(cluster.brokers()[0].address, "dtp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_same() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    scenario(broker, &format!("dtp-{nanos}")).await;
}

async fn scenario(address: SocketAddr, prefix: &str) {
    let (a, b, missing) = (
        format!("{prefix}-a"),
        format!("{prefix}-b"),
        format!("{prefix}-missing"),
    );
    let mut client = Client::connect(address, "dtp").await;
    let Response::CreateTopics(created) = client
        .call(
            7,
            CreateTopicsRequest::default().with_topics(vec![
                CreatableTopic::default()
                    .with_name(a.as_str().into())
                    .with_num_partitions(3)
                    .with_replication_factor(1),
                CreatableTopic::default()
                    .with_name(b.as_str().into())
                    .with_num_partitions(2)
                    .with_replication_factor(1),
            ]),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert!(created.topics.iter().all(|t| t.error_code == 0));
    let named = [b.as_str(), missing.as_str(), a.as_str()];
    let unknown = ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code();
    let topic =
        |name: &str, error: i16, partitions: &[i32]| (name.to_string(), error, partitions.to_vec());

    // In name order, the unknown one with its error.
    let all = client.describe_partitions(&named, 2000, None).await;
    assert_eq!(
        page(&all),
        (
            vec![
                topic(&a, 0, &[0, 1, 2]),
                topic(&b, 0, &[0, 1]),
                topic(&missing, unknown, &[])
            ],
            None
        )
    );
    let described = &all.topics[0];
    assert_ne!(described.topic_id, kafka_codec::Uuid::default());
    assert!(described
        .partitions
        .iter()
        .all(|p| p.leader_id >= 0 && p.isr_nodes.len() == 1));

    // Paged: cut inside a topic, then resumed from the cursor.
    let first = client.describe_partitions(&named, 2, None).await;
    assert_eq!(
        page(&first),
        (vec![topic(&a, 0, &[0, 1])], Some((a.clone(), 2)))
    );
    let second = client.describe_partitions(&named, 2, Some((&a, 2))).await;
    assert_eq!(
        page(&second),
        (
            vec![topic(&a, 0, &[2]), topic(&b, 0, &[0])],
            Some((b.clone(), 1))
        )
    );
    let third = client.describe_partitions(&named, 2, Some((&b, 1))).await;
    assert_eq!(
        page(&third),
        (
            vec![topic(&b, 0, &[1]), topic(&missing, unknown, &[])],
            None
        )
    );
    // The limit reached exactly at a topic's end: the cursor names the next topic at 0.
    let exact = client.describe_partitions(&named, 3, None).await;
    assert_eq!(
        page(&exact),
        (vec![topic(&a, 0, &[0, 1, 2])], Some((b.clone(), 0)))
    );

    // A cursor whose topic was not asked for fails the request.
    let refused = client
        .describe_partitions(&[a.as_str()], 2000, Some((&b, 0)))
        .await;
    assert_eq!(
        page(&refused),
        (
            vec![topic(&a, ErrorCode::INVALID_REQUEST.code(), &[])],
            None
        )
    );
    // A name Kafka could never hold.
    let invalid = client.describe_partitions(&["no/such"], 2000, None).await;
    assert_eq!(
        page(&invalid),
        (
            vec![topic(
                "no/such",
                ErrorCode::INVALID_TOPIC_EXCEPTION.code(),
                &[]
            )],
            None
        )
    );
}
