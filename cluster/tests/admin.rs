//! The admin APIs through this crate's own client connection, each at every version served:
//! DescribeCluster, CreatePartitions, DeleteRecords, OffsetForLeaderEpoch, DescribeLogDirs,
//! with the error codes Kafka gives for their failure cases.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::delete_records_request::{DeleteRecordsPartition, DeleteRecordsTopic};
use kafka_codec::messages::describe_log_dirs_request::DescribableLogDirTopic;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::offset_for_leader_epoch_request::{
    OffsetForLeaderPartition, OffsetForLeaderTopic,
};
use kafka_codec::messages::{
    CreatePartitionsRequest, CreateTopicsRequest, DeleteRecordsRequest, DescribeClusterRequest,
    DescribeLogDirsRequest, FetchRequest, MetadataRequest, OffsetForLeaderEpochRequest,
};
use kafka_codec::records::{Compression, Record, RecordBatchBuilder};
use kafka_codec::{ApiKey, ErrorCode, Response, VersionRange};
use kafka_codec_cluster::Cluster;
use support::Client;

/// Every version of `api` the cluster lists.
fn versions(api: ApiKey) -> std::ops::RangeInclusive<i16> {
    let range: VersionRange = kafka_codec_cluster::handlers::advertised()
        .get(api.key())
        .unwrap_or_else(|| panic!("{api} is not served"));
    range.min..=range.max
}

async fn create_topic(client: &mut Client, name: &str, partitions: i32, replicas: i16) {
    let Response::CreateTopics(created) = client
        .call(
            5,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name(name.into())
                .with_num_partitions(partitions)
                .with_replication_factor(replicas)]),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0, "create {name}");
}

async fn produce(client: &mut Client, topic: &str, partition: i32, records: usize) -> i64 {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for i in 0..records {
        builder.append_record(Record {
            offset: i as i64,
            timestamp: 1_700_000_000_000,
            value: Some(Bytes::from(format!("value-{i}"))),
            ..Record::default()
        });
    }
    let records = builder.build().encode_to_bytes().expect("batch");
    let request = support::produce(topic, partition, records);
    let Response::Produce(produced) = client.call(9, request).await else {
        panic!("not Produce")
    };
    let answer = &produced.responses[0].partition_responses[0];
    assert_eq!(answer.error_code, 0);
    answer.base_offset
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_cluster_lists_the_brokers_at_every_version() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[1].address, "admin-test").await;
    let Response::Metadata(metadata) = client.call(12, MetadataRequest::default()).await else {
        panic!("not Metadata")
    };
    for version in versions(ApiKey::DescribeCluster) {
        let Response::DescribeCluster(described) = client
            .call(version, DescribeClusterRequest::default())
            .await
        else {
            panic!("not DescribeCluster")
        };
        assert_eq!(described.error_code, 0, "v{version}");
        // The same cluster as Metadata describes.
        assert_eq!(
            Some(described.cluster_id.as_str()),
            metadata.cluster_id.as_ref().map(|id| id.as_str()),
            "v{version}"
        );
        assert_eq!(described.controller_id, metadata.controller_id);
        let brokers: Vec<_> = described
            .brokers
            .iter()
            .map(|b| (b.broker_id, b.host.as_str().to_owned(), b.port))
            .collect();
        let expected: Vec<_> = metadata
            .brokers
            .iter()
            .map(|b| (b.node_id, b.host.as_str().to_owned(), b.port))
            .collect();
        assert_eq!(brokers, expected, "v{version}");
    }
    // A broker asked for the controllers' endpoints (v1+).
    let Response::DescribeCluster(controllers) = client
        .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
        .await
    else {
        panic!("not DescribeCluster")
    };
    assert_eq!(
        controllers.error_code,
        ErrorCode::MISMATCHED_ENDPOINT_TYPE.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_partitions_adds_partitions_and_refuses_what_kafka_refuses() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "admin-test").await;
    let grow = |name: &str, count: i32| {
        CreatePartitionsTopic::default()
            .with_name(name.into())
            .with_count(count)
            // Null: placed by the cluster (an empty list would assign no new partition).
            .with_assignments(None)
    };
    for version in versions(ApiKey::CreatePartitions) {
        let name = format!("grow-{version}");
        create_topic(&mut client, &name, 1, 2).await;
        // validate_only changes nothing.
        let Response::CreatePartitions(checked) = client
            .call(
                version,
                CreatePartitionsRequest::default()
                    .with_topics(vec![grow(&name, 3)])
                    .with_validate_only(true),
            )
            .await
        else {
            panic!("not CreatePartitions")
        };
        assert_eq!(checked.results[0].error_code, 0, "v{version}");
        assert_eq!(cluster.shared().state().topics[&name].partitions.len(), 1);
        let Response::CreatePartitions(grown) = client
            .call(
                version,
                CreatePartitionsRequest::default()
                    .with_topics(vec![grow(&name, 3), grow("no-such-topic", 3)]),
            )
            .await
        else {
            panic!("not CreatePartitions")
        };
        let codes: Vec<_> = grown.results.iter().map(|r| r.error_code).collect();
        assert_eq!(
            codes,
            [0, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()],
            "v{version}"
        );
        assert_eq!(cluster.shared().state().topics[&name].partitions.len(), 3);
    }
    create_topic(&mut client, "t", 2, 2).await;
    let call =
        |topics: Vec<CreatePartitionsTopic>| CreatePartitionsRequest::default().with_topics(topics);
    let mut error_of = async |topics| {
        let Response::CreatePartitions(answer) = client.call(3, call(topics)).await else {
            panic!("not CreatePartitions")
        };
        answer
            .results
            .iter()
            .map(|r| r.error_code)
            .collect::<Vec<_>>()
    };
    // Not an increase.
    assert_eq!(
        error_of(vec![grow("t", 2)]).await,
        [ErrorCode::INVALID_PARTITIONS.code()]
    );
    assert_eq!(
        error_of(vec![grow("t", 1)]).await,
        [ErrorCode::INVALID_PARTITIONS.code()]
    );
    // Assignments: one per new partition, each of replication-factor distinct brokers.
    let assigned = |brokers: &[i32]| {
        CreatePartitionsAssignment::default().with_broker_ids(brokers.iter().copied().collect())
    };
    assert_eq!(
        error_of(vec![
            grow("t", 4).with_assignments(Some(vec![assigned(&[0, 1])]))
        ])
        .await,
        [ErrorCode::INVALID_REPLICA_ASSIGNMENT.code()]
    );
    assert_eq!(
        error_of(vec![
            grow("t", 3).with_assignments(Some(vec![assigned(&[0, 7])]))
        ])
        .await,
        [ErrorCode::INVALID_REPLICA_ASSIGNMENT.code()]
    );
    assert_eq!(
        error_of(vec![
            grow("t", 3).with_assignments(Some(vec![assigned(&[1, 0])]))
        ])
        .await,
        [0]
    );
    // A topic named twice.
    assert_eq!(
        error_of(vec![grow("t", 5), grow("t", 6)]).await,
        [ErrorCode::INVALID_REQUEST.code(); 2]
    );
    assert_eq!(cluster.shared().state().topics["t"].partitions.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_records_moves_the_log_start() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "admin-test").await;
    let mut reader = Client::connect(cluster.brokers()[0].address, "admin-test").await;
    for version in versions(ApiKey::DeleteRecords) {
        let topic = format!("d{version}");
        create_topic(&mut client, &topic, 1, 1).await;
        for _ in 0..3 {
            produce(&mut client, &topic, 0, 4).await;
        }
        let delete = |offset: i64, partition: i32| {
            DeleteRecordsRequest::default()
                .with_timeout_ms(1000)
                .with_topics(vec![DeleteRecordsTopic::default()
                    .with_name(topic.as_str().into())
                    .with_partitions(vec![DeleteRecordsPartition::default()
                        .with_partition_index(partition)
                        .with_offset(offset)])])
        };
        let mut answer = async |offset, partition| {
            let Response::DeleteRecords(deleted) =
                client.call(version, delete(offset, partition)).await
            else {
                panic!("not DeleteRecords")
            };
            let p = &deleted.topics[0].partitions[0];
            (p.error_code, p.low_watermark)
        };
        // Offset 5 is inside the second batch (4..8): the first batch goes, the start is 5.
        assert_eq!(answer(5, 0).await, (0, 5), "v{version}");
        // Lower than the start: the start stays.
        assert_eq!(answer(2, 0).await, (0, 5), "v{version}");
        assert_eq!(answer(13, 0).await.0, ErrorCode::OFFSET_OUT_OF_RANGE.code());
        assert_eq!(answer(-2, 0).await.0, ErrorCode::OFFSET_OUT_OF_RANGE.code());
        assert_eq!(
            answer(0, 1).await.0,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
        );
        {
            let state = cluster.shared().state();
            let log = &state.topics[&topic].partitions[0];
            assert_eq!(log.log_start(), 5);
            assert_eq!(log.batches().count(), 2);
        }
        // A fetch below the new start is out of range; at it, the batch holding it comes.
        let fetch = |offset: i64| {
            FetchRequest::default()
                .with_max_wait_ms(0)
                .with_max_bytes(1 << 20)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(topic.as_str().into())
                    .with_partitions(vec![FetchPartition::default()
                        .with_fetch_offset(offset)
                        .with_partition_max_bytes(1 << 20)])])
        };
        let Response::Fetch(below) = reader.call(11, fetch(4)).await else {
            panic!("not Fetch")
        };
        assert_eq!(
            below.responses[0].partitions[0].error_code,
            ErrorCode::OFFSET_OUT_OF_RANGE.code()
        );
        let Response::Fetch(at) = reader.call(11, fetch(5)).await else {
            panic!("not Fetch")
        };
        assert_eq!(at.responses[0].partitions[0].log_start_offset, 5);
        // -1: up to the high watermark.
        assert_eq!(answer(-1, 0).await, (0, 12), "v{version}");
        assert_eq!(
            cluster.shared().state().topics[&topic].partitions[0]
                .batches()
                .count(),
            0
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_for_leader_epoch_ends_epoch_0_at_the_log_end() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "admin-test").await;
    create_topic(&mut client, "e", 2, 1).await;
    produce(&mut client, "e", 0, 7).await;
    for version in versions(ApiKey::OffsetForLeaderEpoch) {
        let ask = |partition: i32, epoch: i32, current: i32| {
            OffsetForLeaderEpochRequest::default()
                .with_replica_id(-1)
                .with_topics(vec![OffsetForLeaderTopic::default()
                    .with_topic("e".into())
                    .with_partitions(vec![OffsetForLeaderPartition::default()
                        .with_partition(partition)
                        .with_leader_epoch(epoch)
                        .with_current_leader_epoch(current)])])
        };
        let mut answer = async |partition, epoch, current| {
            let Response::OffsetForLeaderEpoch(answer) =
                client.call(version, ask(partition, epoch, current)).await
            else {
                panic!("not OffsetForLeaderEpoch")
            };
            let p = &answer.topics[0].partitions[0];
            // The leader epoch is in v1+ only.
            let epoch = if version >= 1 {
                Some(p.leader_epoch)
            } else {
                None
            };
            (p.error_code, epoch, p.end_offset)
        };
        let known = |epoch| if version >= 1 { Some(epoch) } else { None };
        assert_eq!(answer(0, 0, -1).await, (0, known(0), 7), "v{version}");
        // A later epoch than any: undefined.
        assert_eq!(answer(0, 3, -1).await, (0, known(-1), -1), "v{version}");
        // Partition 1 is led by broker 1.
        assert_eq!(
            answer(1, 0, -1).await.0,
            ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
        );
        if version >= 2 {
            assert_eq!(
                answer(0, 0, 1).await.0,
                ErrorCode::UNKNOWN_LEADER_EPOCH.code()
            );
            assert_eq!(answer(0, 0, 0).await, (0, known(0), 7));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_log_dirs_lists_each_brokers_replicas() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "admin-test").await;
    // Partition p is led by broker p mod 3, with replicas on the next broker too.
    create_topic(&mut client, "l", 3, 2).await;
    produce(&mut client, "l", 0, 5).await;
    let size = cluster.shared().state().topics["l"].partitions[0].bytes() as i64;
    assert!(size > 0);
    for version in versions(ApiKey::DescribeLogDirs) {
        let Response::DescribeLogDirs(all) = client
            .call(version, DescribeLogDirsRequest::default().with_topics(None))
            .await
        else {
            panic!("not DescribeLogDirs")
        };
        assert_eq!(all.results.len(), 1, "v{version}");
        let dir = &all.results[0];
        assert_eq!(dir.error_code, 0);
        let held: Vec<(i32, i64)> = dir.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.partition_size))
            .collect();
        // Broker 0 leads partition 0 and follows partition 2 (led by broker 2).
        assert_eq!(held, [(0, size), (2, 0)], "v{version}");
        if version >= 4 {
            assert!(dir.total_bytes >= dir.usable_bytes && dir.usable_bytes >= 0);
        }
        let Response::DescribeLogDirs(named) = client
            .call(
                version,
                DescribeLogDirsRequest::default().with_topics(Some(vec![
                    DescribableLogDirTopic::default()
                        .with_topic("l".into())
                        .with_partitions([1, 2].into_iter().collect()),
                    DescribableLogDirTopic::default()
                        .with_topic("none".into())
                        .with_partitions([0].into_iter().collect()),
                ])),
            )
            .await
        else {
            panic!("not DescribeLogDirs")
        };
        let topics: Vec<_> = named.results[0]
            .topics
            .iter()
            .map(|t| {
                (
                    t.name.as_str().to_owned(),
                    t.partitions
                        .iter()
                        .map(|p| p.partition_index)
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        assert_eq!(topics, [("l".to_owned(), vec![2])], "v{version}");
    }
}
