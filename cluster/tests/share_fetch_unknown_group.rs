//! A ShareFetch naming a share group that does not exist (no member ever heartbeated, no
//! offsets altered): the share session opens, and each partition is answered
//! UNKNOWN_SERVER_ERROR with no records, as Kafka 4.4 answers when its share coordinator
//! holds no state for the group. The same scenario runs against a real Kafka broker
//! (ignored; `bash tools/ci-live.sh cluster_configs`).

use crate::support;

use kafka_codec::messages::share_fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::{ShareFetchRequest, ShareFetchResponse};
use kafka_codec::{Response, Uuid};
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use support::{batch, create_topic, produce, Client};

const UNKNOWN_SERVER_ERROR: i16 = -1;

async fn share_fetch(
    client: &mut Client,
    group: &str,
    epoch: i32,
    topic: Uuid,
) -> ShareFetchResponse {
    let request = ShareFetchRequest::default()
        .with_group_id(Some(group.into()))
        .with_member_id(Some("member-of-no-group".into()))
        .with_share_session_epoch(epoch)
        .with_max_wait_ms(3000)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_max_records(100)
        .with_batch_size(100)
        .with_topics(vec![FetchTopic::default()
            .with_topic_id(topic)
            .with_partitions(vec![
                FetchPartition::default().with_partition_index(0)
            ])]);
    let Response::ShareFetch(answer) = client.call(1, request).await else {
        panic!("not ShareFetch")
    };
    answer
}

async fn scenario(address: SocketAddr, run: &str) {
    let mut client = Client::connect(address, "share-no-group").await;
    let name = format!("share-no-group-{run}");
    let topic = create_topic(&mut client, &name).await;
    let Response::Produce(_) = client.call(9, produce(&name, 0, batch(0, 5))).await else {
        panic!("not Produce")
    };
    let group = format!("no-such-share-group-{run}");
    for epoch in [0, 1] {
        let answer = share_fetch(&mut client, &group, epoch, topic).await;
        assert_eq!(answer.error_code, 0, "{answer:?}");
        let partitions: Vec<_> = answer
            .responses
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, p)))
            .collect();
        assert_eq!(partitions.len(), 1, "{answer:?}");
        let (id, partition) = partitions[0];
        assert_eq!(id, topic);
        assert_eq!(partition.partition_index, 0);
        assert_eq!(partition.error_code, UNKNOWN_SERVER_ERROR, "{answer:?}");
        assert_eq!(partition.error_message, None);
        assert_eq!(partition.current_leader.leader_id, 0, "{answer:?}");
        assert!(partition.acquired_records.is_empty(), "{answer:?}");
        assert!(
            partition.records.as_ref().is_none_or(|r| r.is_empty()),
            "{answer:?}"
        );
    }
}

#[tokio::test]
async fn a_share_fetch_in_no_group_is_answered_unknown_server_error() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    scenario(cluster.brokers()[0].address, "cluster").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_configs)"]
async fn a_real_kafka_broker_answers_the_same() {
    let broker = support::live_broker().await;
    let nanos = support::nanos();
    support::coordinator_ready(&mut Client::connect(broker, "ready").await, "ready").await;
    scenario(broker, &nanos.to_string()).await;
}
