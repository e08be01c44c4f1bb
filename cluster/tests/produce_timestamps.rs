//! The timestamp bounds of a CreateTime topic (`message.timestamp.before.max.ms` and
//! `message.timestamp.after.max.ms`): a batch holding a record stamped further in the past
//! or the future than its topic allows is refused whole, INVALID_TIMESTAMP with Kafka's
//! partition message and, v8+, one record error per such record (its index in the batch and
//! Kafka's message naming the allowed range); nothing is appended. The same scenario runs
//! against a real Kafka broker (ignored; `bash tools/ci-live.sh cluster_configs`).

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_codec::messages::{CreateTopicsRequest, ProduceResponse};
use kafka_codec::records::{Compression, Record, RecordBatchBuilder};
use kafka_codec::Response;
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use support::{now_ms, produce, Client};

const INVALID_TIMESTAMP: i16 = 32;
const HOUR: i64 = 3_600_000;

/// One batch of records stamped at `stamps` (ms).
fn stamped(stamps: &[i64]) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for (i, stamp) in stamps.iter().enumerate() {
        builder.append_record(Record {
            offset: i as i64,
            timestamp: *stamp,
            value: Some(Bytes::from(format!("value-{i}"))),
            ..Record::default()
        });
    }
    builder.build().encode_to_bytes().expect("a batch")
}

async fn create(client: &mut Client, name: &str, configs: &[(&str, &str)]) {
    let request = CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
        .with_name(name.into())
        .with_num_partitions(1)
        .with_replication_factor(1)
        .with_configs(
            configs
                .iter()
                .map(|(name, value)| {
                    CreatableTopicConfig::default()
                        .with_name((*name).into())
                        .with_value(Some((*value).into()))
                })
                .collect(),
        )]);
    let Response::CreateTopics(created) = client.call(7, request).await else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0, "{created:?}");
}

async fn send(client: &mut Client, version: i16, topic: &str, records: Bytes) -> ProduceResponse {
    let Response::Produce(answer) = client.call(version, produce(topic, 0, records)).await else {
        panic!("not Produce")
    };
    answer
}

/// Checks a record error's message: Kafka's words, the record's timestamp and offset, and
/// a range `before` below and `after` above a time within the test's run.
fn check_record_message(message: &str, stamp: i64, offset: i64, (before, after): (i64, i64)) {
    let prefix = format!(
        "Timestamp {stamp} of message with offset {offset} is out of range. The timestamp \
         should be within ["
    );
    let range = message
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("not Kafka's message: {message}"));
    let (low, high) = range.split_once(", ").expect("two bounds");
    let (low, high): (i64, i64) = (
        low.parse().expect("a number"),
        high.parse().expect("a number"),
    );
    let now = high - after;
    assert_eq!(low, now.wrapping_sub(before), "{message}");
    assert!((now - now_ms()).abs() < 60_000, "{message}");
}

async fn scenario(address: SocketAddr, run: &str) {
    let mut client = Client::connect(address, "timestamps").await;
    let recent = format!("ts-recent-{run}");
    let plain = format!("ts-plain-{run}");
    create(
        &mut client,
        &recent,
        &[("message.timestamp.before.max.ms", "3600000")],
    )
    .await;
    create(&mut client, &plain, &[]).await;
    let now = now_ms();

    // Two hours old, one of three records: the batch is refused, one record error.
    let old = now - 2 * HOUR;
    let answer = send(&mut client, 11, &recent, stamped(&[now, old, now])).await;
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, INVALID_TIMESTAMP, "{answer:?}");
    assert_eq!(
        partition.error_message.as_deref(),
        Some("One or more records have been rejected due to invalid timestamp")
    );
    assert_eq!(
        (
            partition.base_offset,
            partition.log_append_time_ms,
            partition.log_start_offset
        ),
        (-1, -1, 0)
    );
    assert_eq!(partition.record_errors.len(), 1, "{answer:?}");
    assert_eq!(partition.record_errors[0].batch_index, 1);
    check_record_message(
        partition.record_errors[0]
            .batch_index_error_message
            .as_deref()
            .expect("a message"),
        old,
        1,
        (HOUR, HOUR),
    );

    // The default topic takes any past (before.max.ms is Long.MAX_VALUE) but not more
    // than an hour ahead (after.max.ms 3600000): both future records named.
    let ahead = now + 2 * HOUR;
    let answer = send(&mut client, 11, &plain, stamped(&[ahead, 1_000, ahead])).await;
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, INVALID_TIMESTAMP, "{answer:?}");
    let indexes: Vec<i32> = partition
        .record_errors
        .iter()
        .map(|e| e.batch_index)
        .collect();
    assert_eq!(indexes, [0, 2]);
    for (error, offset) in partition.record_errors.iter().zip([0, 2]) {
        check_record_message(
            error
                .batch_index_error_message
                .as_deref()
                .expect("a message"),
            ahead,
            offset,
            (i64::MAX, HOUR),
        );
    }
    // v7 has no record errors: the code and nothing else.
    let answer = send(&mut client, 7, &plain, stamped(&[ahead])).await;
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, INVALID_TIMESTAMP, "{answer:?}");
    assert!(partition.record_errors.is_empty());

    // Nothing was appended: the first batch that passes lands at offset 0.
    let answer = send(&mut client, 11, &plain, stamped(&[now, 1_000])).await;
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(
        (partition.error_code, partition.base_offset),
        (0, 0),
        "{answer:?}"
    );
    let answer = send(&mut client, 11, &recent, stamped(&[now])).await;
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(
        (partition.error_code, partition.base_offset),
        (0, 0),
        "{answer:?}"
    );
}

#[tokio::test]
async fn records_outside_a_topics_timestamp_bounds_are_refused() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    scenario(cluster.brokers()[0].address, "cluster").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (bash tools/ci-live.sh cluster_configs)"]
async fn a_real_kafka_broker_refuses_the_same_records() {
    let broker = support::live_broker().await;
    scenario(broker, &now_ms().to_string()).await;
}
