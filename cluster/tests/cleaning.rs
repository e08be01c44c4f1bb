//! Retention and compaction by a topic's configs, set over the wire with AlterConfigs and
//! applied from the control surface (in process and over HTTP) and, for a topic's own
//! retention overrides, on every produce.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::alter_configs_request::{AlterConfigsResource, AlterableConfig};
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::{AlterConfigsRequest, FetchRequest};
use kafka_codec::records::{decode_batches, Compression, RecordBatchBuilder};
use kafka_codec::serde_json::json;
use kafka_codec::Response;
use kafka_codec_cluster::control::OperationError;
use kafka_codec_cluster::Cluster;
use support::{http, now_ms, produce, Client};

async fn topic_with_configs(client: &mut Client, name: &str, configs: &[(&str, &str)]) {
    support::make_topic(client, 5, name, 1, 1).await;
    let request =
        AlterConfigsRequest::default().with_resources(vec![AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(name.into())
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        AlterableConfig::default()
                            .with_name((*k).into())
                            .with_value(Some((*v).into()))
                    })
                    .collect(),
            )]);
    let Response::AlterConfigs(altered) = client.call(2, request).await else {
        panic!("not AlterConfigs")
    };
    assert_eq!(altered.responses[0].error_code, 0);
}

/// Produces one batch of (timestamp, key, value) records; its base offset.
async fn send(client: &mut Client, topic: &str, records: &[(i64, &str, Option<&str>)]) -> i64 {
    let mut builder = RecordBatchBuilder::new(Compression::Gzip);
    for (timestamp, key, value) in records {
        builder.append(
            *timestamp,
            Some(Bytes::from(key.to_string())),
            value.map(|v| Bytes::from(v.to_string())),
        );
    }
    let batch = builder.build().encode_to_bytes().unwrap();
    let Response::Produce(answer) = client.call(9, produce(topic, 0, batch)).await else {
        panic!("not Produce")
    };
    let partition = &answer.responses[0].partition_responses[0];
    assert_eq!(partition.error_code, 0);
    partition.base_offset
}

/// (offset, key, value) of every record a Fetch v11 from `offset` returns.
async fn fetch_all(
    client: &mut Client,
    topic: &str,
    offset: i64,
) -> Vec<(i64, String, Option<String>)> {
    let request = FetchRequest::default()
        .with_replica_id(-1)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic.into())
            .with_partitions(vec![FetchPartition::default()
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])]);
    let Response::Fetch(answer) = client.call(11, request).await else {
        panic!("not Fetch")
    };
    let partition = &answer.responses[0].partitions[0];
    assert_eq!(partition.error_code, 0);
    decode_batches(&partition.records.clone().unwrap_or_default())
        .unwrap()
        .into_iter()
        .flat_map(|b| b.records)
        .map(|r| {
            let text = |b: Bytes| String::from_utf8(b.to_vec()).unwrap();
            (r.offset, text(r.key.unwrap()), r.value.map(text))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_on_demand_keeps_the_newest_value_of_each_key() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "cleaning").await;
    topic_with_configs(
        &mut client,
        "accounts",
        &[
            ("cleanup.policy", "compact"),
            ("delete.retention.ms", "60000"),
        ],
    )
    .await;
    let now = now_ms();
    send(
        &mut client,
        "accounts",
        &[(now, "alice", Some("10")), (now, "bob", Some("20"))],
    )
    .await;
    send(&mut client, "accounts", &[(now, "alice", Some("11"))]).await;
    // bob's tombstone is two minutes old (past delete.retention.ms), carol's fresh.
    send(
        &mut client,
        "accounts",
        &[
            (now - 120_000, "bob", None),
            (now, "carol", Some("30")),
            (now, "carol", None),
        ],
    )
    .await;
    let control = cluster.control();
    let cleaned = control.compact("accounts").expect("compacted");
    assert_eq!(
        (cleaned[0].batches_removed, cleaned[0].records_removed),
        (1, 4)
    );
    assert_eq!(
        fetch_all(&mut client, "accounts", 0).await,
        vec![
            (2, "alice".into(), Some("11".into())),
            (5, "carol".into(), None)
        ]
    );
    // The offsets stay: the next record is at 6.
    assert_eq!(
        send(&mut client, "accounts", &[(now, "dave", Some("1"))]).await,
        6
    );
    assert_eq!(
        control.compact("nope"),
        Err(OperationError::NoSuchTopic("nope".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_on_produce_and_on_demand_over_http() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    let control = support::serve_control(&cluster).await;
    let mut client = Client::connect(cluster.brokers()[0].address, "cleaning").await;

    // retention.ms of one minute, overridden: applied on produce.
    topic_with_configs(&mut client, "short", &[("retention.ms", "60000")]).await;
    let now = now_ms();
    send(&mut client, "short", &[(now - 600_000, "a", Some("old"))]).await;
    send(&mut client, "short", &[(now, "b", Some("new"))]).await;
    assert_eq!(
        fetch_all(&mut client, "short", 1).await,
        vec![(1, "b".into(), Some("new".into()))]
    );
    assert_eq!(
        cluster.shared().state().topics["short"].partitions[0].log_start(),
        1
    );

    // The 7-day default is not applied on produce (Kafka checks every 5 minutes), but is
    // on demand: records from 2023 go then.
    topic_with_configs(&mut client, "defaults", &[]).await;
    for key in ["a", "b", "c"] {
        send(
            &mut client,
            "defaults",
            &[(1_700_000_000_000, key, Some("v"))],
        )
        .await;
    }
    assert_eq!(fetch_all(&mut client, "defaults", 0).await.len(), 3);
    let (status, answer) = http(control, "POST", "/topics/defaults/retention", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer,
        json!({"topic": "defaults", "partitions": [{"partition": 0, "batchesRemoved": 2,
               "recordsRemoved": 0, "logStartOffset": 2, "highWatermark": 3}]})
    );
    // Compaction of a topic that is not compacted changes nothing.
    let (status, answer) = http(control, "POST", "/topics/defaults/compaction", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["partitions"][0]["recordsRemoved"], 0);
    let (status, _) = http(control, "POST", "/topics/nope/retention", None).await;
    assert_eq!(status, 404);
    let (status, _) = http(control, "GET", "/topics/defaults/retention", None).await;
    assert_eq!(status, 405);
    let (status, _) = http(control, "POST", "/topics/defaults/shrink", None).await;
    assert_eq!(status, 404);
}
