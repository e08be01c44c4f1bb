//! Configs given to CreateTopics: checked as Kafka 4.4 checks them, kept as the topic's
//! overrides (DescribeConfigs: TOPIC_CONFIG), returned in the v5+ answer, and followed by
//! Produce (`max.message.bytes`, `min.insync.replicas`) and the cleaner (`cleanup.policy`,
//! `retention.ms`). The refusal messages expected here are those a Kafka 4.4 broker gave
//! for the same configs; `tools/clients/cluster_create_topics_vs_broker.py` (the live step
//! `cluster_configs`) compares the whole CreateTopics v7 answers byte for byte.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_codec::messages::create_topics_response::CreatableTopicResult;
use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
use kafka_codec::messages::{CreateTopicsRequest, DescribeConfigsRequest};
use kafka_codec::records::{Compression, RecordBatchBuilder};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use support::{produce, Client};

/// ConfigSource codes.
const TOPIC_CONFIG: i8 = 1;
const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
const DEFAULT_CONFIG: i8 = 5;

/// A topic's configs as a CreateTopics names them (a `None` value: null).
type Configs<'a> = &'a [(&'a str, Option<&'a str>)];

fn topic(
    name: &str,
    partitions: i32,
    factor: i16,
    configs: &[(&str, Option<&str>)],
) -> CreatableTopic {
    CreatableTopic::default()
        .with_name(name.into())
        .with_num_partitions(partitions)
        .with_replication_factor(factor)
        .with_configs(
            configs
                .iter()
                .map(|(name, value)| {
                    CreatableTopicConfig::default()
                        .with_name((*name).into())
                        .with_value(value.map(Into::into))
                })
                .collect(),
        )
}

async fn create(
    client: &mut Client,
    version: i16,
    validate_only: bool,
    topics: Vec<CreatableTopic>,
) -> Vec<CreatableTopicResult> {
    let request = CreateTopicsRequest::default()
        .with_timeout_ms(30_000)
        .with_validate_only(validate_only)
        .with_topics(topics);
    let Response::CreateTopics(answer) = client.call(version, request).await else {
        panic!("not CreateTopics")
    };
    answer.topics
}

async fn cluster() -> (Cluster, Client) {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    let client = Client::connect(cluster.brokers()[0].address, "topic-configs").await;
    (cluster, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_given_at_creation_are_kept_returned_and_described() {
    let (_cluster, mut client) = cluster().await;
    let created = create(
        &mut client,
        7,
        false,
        vec![topic(
            "accounts",
            -1,
            -1,
            &[
                ("cleanup.policy", Some("compact")),
                ("retention.ms", Some("60000")),
            ],
        )],
    )
    .await;
    let result = &created[0];
    assert_eq!(
        (result.error_code, result.error_message.as_deref()),
        (0, None)
    );
    assert_eq!((result.num_partitions, result.replication_factor), (1, 1));
    assert_ne!(result.topic_id.0, [0; 16]);
    let configs = result.configs.as_ref().expect("configs at v7");
    // Every topic config, by name, as a Kafka 4.4 broker answered (37 of them).
    assert_eq!(configs.len(), 37);
    assert!(configs.windows(2).all(|w| w[0].name < w[1].name));
    let source = |name: &str| {
        let config = configs.iter().find(|c| c.name.as_str() == name).unwrap();
        assert!(!config.read_only && !config.is_sensitive);
        (
            config.value.as_ref().map(|v| v.as_str().to_owned()),
            config.config_source,
        )
    };
    assert_eq!(
        source("cleanup.policy"),
        (Some("compact".into()), TOPIC_CONFIG)
    );
    assert_eq!(source("retention.ms"), (Some("60000".into()), TOPIC_CONFIG));
    assert_eq!(
        source("min.insync.replicas"),
        (Some("1".into()), DYNAMIC_DEFAULT_BROKER_CONFIG)
    );
    assert_eq!(
        source("segment.bytes"),
        (Some("1073741824".into()), DEFAULT_CONFIG)
    );

    // DescribeConfigs shows them as the topic's own.
    let request =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name("accounts".into())
            .with_configuration_keys(Some(vec!["cleanup.policy".into(), "retention.ms".into()]))]);
    let Response::DescribeConfigs(described) = client.call(4, request).await else {
        panic!("not DescribeConfigs")
    };
    let described: Vec<(String, Option<String>, i8)> = described.results[0]
        .configs
        .iter()
        .map(|c| {
            (
                c.name.as_str().to_owned(),
                c.value.as_ref().map(|v| v.as_str().to_owned()),
                c.config_source,
            )
        })
        .collect();
    assert_eq!(
        described,
        vec![
            (
                "cleanup.policy".into(),
                Some("compact".into()),
                TOPIC_CONFIG
            ),
            ("retention.ms".into(), Some("60000".into()), TOPIC_CONFIG),
        ]
    );

    // v4 has no configs in its answer; the topic's configs are kept all the same.
    let older = create(
        &mut client,
        4,
        false,
        vec![topic("older", 2, 1, &[("max.message.bytes", Some("2048"))])],
    )
    .await;
    assert_eq!(older[0].error_code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_only_answers_the_configs_and_keeps_nothing() {
    let (cluster, mut client) = cluster().await;
    let created = create(
        &mut client,
        7,
        true,
        vec![topic(
            "checked",
            3,
            1,
            &[
                ("cleanup.policy", Some("compact,delete")),
                ("retention.ms", Some("-1")),
            ],
        )],
    )
    .await;
    assert_eq!(created[0].error_code, 0);
    assert_eq!(created[0].num_partitions, 3);
    let configs = created[0].configs.as_ref().unwrap();
    let policy = configs
        .iter()
        .find(|c| c.name.as_str() == "cleanup.policy")
        .unwrap();
    assert_eq!(policy.value.as_deref(), Some("compact,delete"));
    assert_eq!(policy.config_source, TOPIC_CONFIG);
    let state = cluster.shared().state();
    assert!(!state.topics.contains_key("checked"));
    assert!(!state.configs.topics.contains_key("checked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configs_are_refused_with_kafkas_messages() {
    let (cluster, mut client) = cluster().await;
    // (configs, Kafka 4.4's message), each as a real broker answered it.
    let cases: &[(Configs, &str)] = &[
        (&[("no.such.config", Some("1"))], "Unknown topic config name: no.such.config"),
        (
            &[("retention.ms", Some("soon"))],
            "Invalid value soon for configuration retention.ms: Not a number of type LONG",
        ),
        (
            &[("max.message.bytes", Some("3000000000"))],
            "Invalid value 3000000000 for configuration max.message.bytes: Not a number of type INT",
        ),
        (
            &[("preallocate", Some("yes"))],
            "Invalid value yes for configuration preallocate: Expected value to be either true or false",
        ),
        (
            &[("cleanup.policy", Some("compact,zzz"))],
            "Invalid value zzz for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (
            &[("message.timestamp.type", Some("logappendtime"))],
            "Invalid value logappendtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime",
        ),
        (
            &[("compression.type", Some("GZIP"))],
            "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        (
            &[("min.insync.replicas", Some("0"))],
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            &[("compression.lz4.level", Some("2147483647"))],
            "Invalid value 2147483647 for configuration compression.lz4.level: Value must be no more than 17",
        ),
        (
            &[("compression.gzip.level", Some("0"))],
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ),
        (
            &[("min.cleanable.dirty.ratio", Some("-12345678.5"))],
            "Invalid value -1.23456785E7 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            &[("min.cleanable.dirty.ratio", Some("-0.00001"))],
            "Invalid value -1.0E-5 for configuration min.cleanable.dirty.ratio: Value must be at least 0",
        ),
        (
            &[("leader.replication.throttled.replicas", Some("0:x"))],
            "Invalid value [0:x] for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            &[("remote.storage.enable", Some("true"))],
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.",
        ),
        (
            &[("retention.ms", None)],
            "Null value not supported for topic configs: retention.ms",
        ),
    ];
    let topics = cases
        .iter()
        .enumerate()
        .map(|(i, (configs, _))| topic(&format!("bad-{i}"), 1, 1, configs))
        .collect();
    let answers = create(&mut client, 7, false, topics).await;
    for ((configs, message), answer) in cases.iter().zip(&answers) {
        assert_eq!(
            (answer.error_code, answer.error_message.as_deref()),
            (ErrorCode::INVALID_CONFIG.code(), Some(*message)),
            "{configs:?}"
        );
        // Refused as Kafka answers it: no id, no counts, an empty list of configs.
        assert_eq!(answer.topic_id.0, [0; 16]);
        assert_eq!((answer.num_partitions, answer.replication_factor), (-1, -1));
        assert_eq!(answer.configs.as_deref().map(<[_]>::len), Some(0));
    }
    assert!(cluster.shared().state().topics.is_empty());

    // The configs are checked before the partition count and replication factor.
    let answers = create(
        &mut client,
        7,
        false,
        vec![
            topic("zero", 0, 1, &[("retention.ms", Some("x"))]),
            topic("wide", 1, 5, &[("retention.ms", Some("x"))]),
        ],
    )
    .await;
    assert!(answers
        .iter()
        .all(|a| a.error_code == ErrorCode::INVALID_CONFIG.code()));
    // Values Kafka takes as they are: spaces, a sign, any case of a boolean, an empty policy.
    let answers = create(
        &mut client,
        7,
        true,
        vec![topic(
            "loose",
            1,
            1,
            &[
                ("retention.ms", Some(" +100 ")),
                ("preallocate", Some("TRUE")),
                ("cleanup.policy", Some("")),
                ("min.cleanable.dirty.ratio", Some("1e-5")),
                ("follower.replication.throttled.replicas", Some("*")),
                ("leader.replication.throttled.replicas", Some("0:1,1:2")),
            ],
        )],
    )
    .await;
    assert_eq!(answers[0].error_code, 0, "{:?}", answers[0].error_message);
}

/// One uncompressed batch of `count` records of `size` value bytes.
fn batch(count: usize, size: usize) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for i in 0..count {
        builder.append(
            1_700_000_000_000 + i as i64,
            Some(Bytes::from(format!("k{i}"))),
            Some(Bytes::from(vec![b'v'; size])),
        );
    }
    builder.build().encode_to_bytes().unwrap()
}

async fn produce_error(client: &mut Client, topic: &str, acks: i16, records: Bytes) -> i16 {
    let Response::Produce(answer) = client
        .call(9, produce(topic, 0, records).with_acks(acks))
        .await
    else {
        panic!("not Produce")
    };
    answer.responses[0].partition_responses[0].error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_follows_max_message_bytes_and_min_insync_replicas() {
    let (_cluster, mut client) = cluster().await;
    let created = create(
        &mut client,
        7,
        false,
        vec![
            topic("small", 1, 1, &[("max.message.bytes", Some("1000"))]),
            topic("strict", 1, 1, &[("min.insync.replicas", Some("2"))]),
        ],
    )
    .await;
    assert!(created.iter().all(|t| t.error_code == 0));

    // A batch larger than max.message.bytes (as sent) is refused whole; one within it goes.
    let large = batch(2, 600);
    assert!(large.len() > 1000);
    assert_eq!(
        produce_error(&mut client, "small", 1, large).await,
        ErrorCode::MESSAGE_TOO_LARGE.code()
    );
    let fits = batch(2, 100);
    assert!(fits.len() <= 1000);
    assert_eq!(produce_error(&mut client, "small", 1, fits).await, 0);

    // One in-sync replica of the two min.insync.replicas asks for: acks=all is refused,
    // acks=1 is not.
    assert_eq!(
        produce_error(&mut client, "strict", -1, batch(1, 10)).await,
        ErrorCode::NOT_ENOUGH_REPLICAS.code()
    );
    assert_eq!(
        produce_error(&mut client, "strict", 1, batch(1, 10)).await,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_policy_and_retention_given_at_creation_take_effect() {
    let (cluster, mut client) = cluster().await;
    let created = create(
        &mut client,
        7,
        false,
        vec![
            topic("compacted", 1, 1, &[("cleanup.policy", Some("compact"))]),
            topic("short", 1, 1, &[("retention.ms", Some("60000"))]),
        ],
    )
    .await;
    assert!(created.iter().all(|t| t.error_code == 0));
    let now = support::now_ms();
    let keyed = |timestamp: i64, key: &str| {
        let mut builder = RecordBatchBuilder::new(Compression::None);
        builder.append(
            timestamp,
            Some(Bytes::from(key.to_owned())),
            Some(Bytes::from_static(b"v")),
        );
        builder.build().encode_to_bytes().unwrap()
    };
    for key in ["a", "a", "b"] {
        assert_eq!(
            produce_error(&mut client, "compacted", 1, keyed(now, key)).await,
            0
        );
    }
    let cleaned = cluster.control().compact("compacted").expect("compacted");
    assert_eq!(cleaned[0].records_removed, 1);

    // retention.ms of a minute, applied on produce: the ten-minute-old batch goes.
    assert_eq!(
        produce_error(&mut client, "short", 1, keyed(now - 600_000, "x")).await,
        0
    );
    assert_eq!(
        produce_error(&mut client, "short", 1, keyed(now, "y")).await,
        0
    );
    assert_eq!(
        cluster.shared().state().topics["short"].partitions[0].log_start(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_append_time_topics_stamp_each_batch_as_it_is_appended() {
    use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_codec::messages::FetchRequest;
    use kafka_codec::records::{BatchReader, TimestampType};
    let (_cluster, mut client) = cluster().await;
    let created = create(
        &mut client,
        7,
        false,
        vec![
            topic(
                "stamped",
                1,
                1,
                &[("message.timestamp.type", Some("LogAppendTime"))],
            ),
            topic("created", 1, 1, &[]),
        ],
    )
    .await;
    assert!(created.iter().all(|t| t.error_code == 0));
    let now = || support::now_ms();
    let mut appended = Vec::new();
    for name in ["stamped", "created"] {
        let before = now();
        // Records of 2023, sent as create times.
        let Response::Produce(answer) = client.call(9, produce(name, 0, batch(3, 10))).await else {
            panic!("not Produce")
        };
        let partition = &answer.responses[0].partition_responses[0];
        assert_eq!(partition.error_code, 0);
        appended.push((before, partition.log_append_time_ms, now()));
    }
    let (before, stamp, after) = appended[0];
    assert!((before..=after).contains(&stamp), "{appended:?}");
    // A CreateTime topic answers -1, as Kafka does.
    assert_eq!(appended[1].1, -1);

    for (name, stamped) in [("stamped", true), ("created", false)] {
        let request = FetchRequest::default()
            .with_replica_id(-1)
            .with_max_bytes(1 << 20)
            .with_topics(vec![FetchTopic::default()
                .with_topic(name.into())
                .with_partitions(vec![FetchPartition::default()
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20)])]);
        let Response::Fetch(answer) = client.call(11, request).await else {
            panic!("not Fetch")
        };
        let records = answer.responses[0].partitions[0].records.clone().unwrap();
        let raw = BatchReader::new(records).next().unwrap().unwrap();
        raw.verify_crc().expect("a CRC that matches");
        let decoded = raw.decode().unwrap();
        assert_eq!(decoded.records.len(), 3);
        if stamped {
            assert_eq!(decoded.timestamp_type, TimestampType::LogAppendTime);
            assert_eq!(raw.header().max_timestamp, stamp);
        } else {
            assert_eq!(decoded.timestamp_type, TimestampType::CreateTime);
            assert_eq!(raw.header().max_timestamp, 1_700_000_000_002);
        }
    }
}
