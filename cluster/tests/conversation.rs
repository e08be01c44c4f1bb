//! The cluster through this crate's own client connection (`kafka_codec::conn`), over TCP:
//! topics created, batches produced and fetched back byte for byte, offsets listed, and the
//! error codes Kafka gives for the failure cases.

use crate::support;

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::{
    ApiVersionsRequest, CreateTopicsRequest, FetchRequest, ListOffsetsRequest, MetadataRequest,
};
use kafka_codec::records::{decode_batches, Compression, Record, RecordBatchBuilder};
use kafka_codec::{ApiKey, ErrorCode, Request, Response};
use kafka_codec_cluster::Cluster;
use std::time::{Duration, Instant};
use support::{batch, produce, Client, GUARD};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn fetch(topic: &str, partition: i32, offset: i64) -> FetchRequest {
    FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic.into())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

fn list_offsets(topic: &str, timestamp: i64) -> ListOffsetsRequest {
    ListOffsetsRequest::default().with_topics(vec![ListOffsetsTopic::default()
        .with_name(topic.into())
        .with_partitions(vec![
            ListOffsetsPartition::default().with_timestamp(timestamp)
        ])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_fetch_and_list_offsets_round_trip() {
    let started = Instant::now();
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    eprintln!("3 brokers bound in {:?}", started.elapsed());
    assert_eq!(cluster.bootstrap().split(',').count(), 3);
    let leader = cluster.brokers()[0].address;
    let mut client = Client::connect(leader, "conversation-test").await;

    // ApiVersions lists exactly the served APIs, each at every version the crate knows.
    let versions = ApiKey::ApiVersions.valid_versions().max;
    let Response::ApiVersions(body) = client
        .call_frame(versions, ApiVersionsRequest::default())
        .await
        .body
    else {
        panic!("not ApiVersions")
    };
    let keys: Vec<i16> = body.api_keys.iter().map(|api| api.api_key).collect();
    let served = [
        ApiKey::Produce,
        ApiKey::Fetch,
        ApiKey::ListOffsets,
        ApiKey::Metadata,
        ApiKey::ApiVersions,
        ApiKey::CreateTopics,
        ApiKey::DeleteTopics,
        ApiKey::FindCoordinator,
        ApiKey::JoinGroup,
        ApiKey::SyncGroup,
        ApiKey::Heartbeat,
        ApiKey::LeaveGroup,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::DescribeGroups,
        ApiKey::ListGroups,
        ApiKey::DeleteGroups,
        ApiKey::OffsetDelete,
    ];
    for api in served {
        let listed = body
            .api_keys
            .iter()
            .find(|a| a.api_key == api.key())
            .expect("listed");
        assert_eq!(
            (listed.min_version, listed.max_version),
            (api.valid_versions().min, api.valid_versions().max),
            "{api}"
        );
    }
    // Nothing but what has a handler (handlers::SERVED grows with every API added).
    assert_eq!(
        keys.len(),
        kafka_codec_cluster::handlers::advertised().len(),
        "nothing else advertised: {keys:?}"
    );
    // An API not advertised closes the connection, as Kafka does.
    let mut other = Client::connect(leader, "conversation-test").await;
    assert!(
        other
            .closed_after(
                0,
                kafka_codec::messages::GetTelemetrySubscriptionsRequest::default()
            )
            .await
    );

    // CreateTopics: 3 partitions; again, TOPIC_ALREADY_EXISTS; a bad name.
    let create = |name: &str| {
        CreateTopicsRequest::default()
            .with_timeout_ms(1000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(name.into())
                .with_num_partitions(3)
                .with_replication_factor(1)])
    };
    let Response::CreateTopics(created) = client.call_frame(7, create("events")).await.body else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    assert_eq!(created.topics[0].num_partitions, 3);
    let Response::CreateTopics(again) = client.call_frame(7, create("events")).await.body else {
        panic!("not CreateTopics")
    };
    assert_eq!(
        again.topics[0].error_code,
        ErrorCode::TOPIC_ALREADY_EXISTS.code()
    );
    let Response::CreateTopics(bad) = client.call_frame(7, create("no/slashes")).await.body else {
        panic!("not CreateTopics")
    };
    assert_eq!(
        bad.topics[0].error_code,
        ErrorCode::INVALID_TOPIC_EXCEPTION.code()
    );

    // Metadata: three brokers, partition 0 led by broker 0; an unknown topic.
    let Response::Metadata(metadata) = client
        .call_frame(
            12,
            MetadataRequest::default().with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some("events".into())),
                MetadataRequestTopic::default().with_name(Some("missing".into())),
            ])),
        )
        .await
        .body
    else {
        panic!("not Metadata")
    };
    assert_eq!(metadata.brokers.len(), 3);
    assert_eq!(metadata.topics[0].partitions.len(), 3);
    assert_eq!(metadata.topics[0].partitions[0].leader_id, 0);
    assert_eq!(
        metadata.topics[1].error_code,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
    );

    // Produce two batches at v9 and one at v3: offsets 0, 5 and 12.
    let batches = [batch(0, 5), batch(5, 7), batch(12, 1)];
    let mut bases = Vec::new();
    for (records, version) in batches.iter().zip([9, 9, 3]) {
        let Response::Produce(produced) = client
            .call_frame(version, produce("events", 0, records.clone()))
            .await
            .body
        else {
            panic!("not Produce")
        };
        let partition = &produced.responses[0].partition_responses[0];
        assert_eq!(partition.error_code, 0);
        bases.push(partition.base_offset);
    }
    assert_eq!(bases, [0, 5, 12]);
    // Partition 1 is led by broker 1: NOT_LEADER_OR_FOLLOWER here.
    let Response::Produce(elsewhere) = client
        .call_frame(9, produce("events", 1, batch(0, 1)))
        .await
        .body
    else {
        panic!("not Produce")
    };
    assert_eq!(
        elsewhere.responses[0].partition_responses[0].error_code,
        ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
    );
    // A batch whose CRC does not match: CORRUPT_MESSAGE.
    let mut corrupt = BytesMut::from(&batch(0, 2)[..]);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    let Response::Produce(refused) = client
        .call_frame(9, produce("events", 0, corrupt.freeze()))
        .await
        .body
    else {
        panic!("not Produce")
    };
    assert_eq!(
        refused.responses[0].partition_responses[0].error_code,
        ErrorCode::CORRUPT_MESSAGE.code()
    );

    // A batch whose offset range (0..=5) does not match its record count (2): INVALID_RECORD.
    let mut gap = RecordBatchBuilder::new(Compression::None);
    for offset in [0, 5] {
        gap.append_record(Record {
            offset,
            value: Some(Bytes::from("gap")),
            ..Record::default()
        });
    }
    let gap = gap.build().encode_to_bytes().expect("a batch");
    let Response::Produce(refused) = client.call_frame(9, produce("events", 0, gap)).await.body
    else {
        panic!("not Produce")
    };
    assert_eq!(
        refused.responses[0].partition_responses[0].error_code,
        ErrorCode::INVALID_RECORD.code()
    );

    // A control batch from a client: INVALID_RECORD too.
    let mut control = RecordBatchBuilder::new(Compression::None).control(true);
    control.append_record(Record {
        value: Some(Bytes::from("not a marker")),
        ..Record::default()
    });
    let control = control.build().encode_to_bytes().expect("a batch");
    let Response::Produce(refused) = client
        .call_frame(9, produce("events", 0, control))
        .await
        .body
    else {
        panic!("not Produce")
    };
    assert_eq!(
        refused.responses[0].partition_responses[0].error_code,
        ErrorCode::INVALID_RECORD.code()
    );

    // Fetch from 0 at v4 and v12: the three batches back, byte for byte except the fields
    // the broker sets: the base offset and the partition leader epoch (0), which the CRC
    // does not cover.
    for version in [4, 12] {
        let Response::Fetch(fetched) = client.call_frame(version, fetch("events", 0, 0)).await.body
        else {
            panic!("not Fetch")
        };
        let partition = &fetched.responses[0].partitions[0];
        assert_eq!(partition.error_code, 0);
        assert_eq!(partition.high_watermark, 13);
        let records = partition.records.clone().expect("records");
        let mut expected = Vec::new();
        for (sent, base) in batches.iter().zip(&bases) {
            let mut sent = sent.to_vec();
            sent[..8].copy_from_slice(&base.to_be_bytes());
            sent[12..16].copy_from_slice(&0i32.to_be_bytes());
            expected.extend_from_slice(&sent);
        }
        assert_eq!(&records[..], &expected[..], "v{version}");
        let decoded = decode_batches(&records).expect("batches");
        let values: Vec<Bytes> = decoded
            .iter()
            .flat_map(|b| b.records.iter().map(|r| r.value.clone().unwrap()))
            .collect();
        assert_eq!(values[12], Bytes::from("value-12"));
        assert_eq!(decoded[1].records[0].offset, 5);
    }
    // From the middle of the second batch: that batch and the next.
    let Response::Fetch(middle) = client.call_frame(12, fetch("events", 0, 7)).await.body else {
        panic!("not Fetch")
    };
    let records = middle.responses[0].partitions[0].records.clone().unwrap();
    assert_eq!(decode_batches(&records).unwrap()[0].base_offset, 5);
    // Past the end: OFFSET_OUT_OF_RANGE.
    let Response::Fetch(past) = client.call_frame(12, fetch("events", 0, 14)).await.body else {
        panic!("not Fetch")
    };
    assert_eq!(
        past.responses[0].partitions[0].error_code,
        ErrorCode::OFFSET_OUT_OF_RANGE.code()
    );

    // ListOffsets: earliest, latest, by timestamp (record 7's), at v1 and v8; v0's list.
    for version in [1, 8] {
        for (timestamp, offset) in [(-2, 0), (-1, 13), (1_700_000_000_007, 7), (-3, 12)] {
            let Response::ListOffsets(listed) = client
                .call_frame(version, list_offsets("events", timestamp))
                .await
                .body
            else {
                panic!("not ListOffsets")
            };
            let partition = &listed.topics[0].partitions[0];
            if version < 7 && timestamp == -3 {
                continue;
            }
            assert_eq!(
                (partition.error_code, partition.offset),
                (0, offset),
                "v{version} {timestamp}"
            );
        }
    }
    let Response::ListOffsets(old) = client.call_frame(0, list_offsets("events", -1)).await.body
    else {
        panic!("not ListOffsets")
    };
    assert_eq!(
        old.topics[0].partitions[0].old_style_offsets.to_vec(),
        vec![13]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_fetch_is_woken_by_a_produce() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let address = cluster.brokers()[0].address;
    let mut client = Client::connect(address, "conversation-test").await;
    let Response::CreateTopics(_) = client
        .call_frame(
            4,
            CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                .with_name("waits".into())
                .with_num_partitions(1)
                .with_replication_factor(1)]),
        )
        .await
        .body
    else {
        panic!("not CreateTopics")
    };
    let mut consumer = Client::connect(address, "conversation-test").await;
    let waiting = tokio::spawn(async move {
        // Waits up to the guard for one byte.
        let request = fetch("waits", 0, 0)
            .with_max_wait_ms(GUARD.as_millis() as i32)
            .with_min_bytes(1);
        consumer.call_frame(11, request).await
    });
    let Response::Produce(_) = client
        .call_frame(9, produce("waits", 0, batch(0, 3)))
        .await
        .body
    else {
        panic!("not Produce")
    };
    let Response::Fetch(fetched) = waiting.await.expect("task").body else {
        panic!("not Fetch")
    };
    let records = fetched.responses[0].partitions[0].records.clone().unwrap();
    assert_eq!(decode_batches(&records).unwrap()[0].records.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_fails_its_connection_only() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let address = cluster.brokers()[0].address;
    let mut garbage = TcpStream::connect(address).await.unwrap();
    // A size prefix of 2 GiB - 1, then nonsense: the connection closes.
    garbage
        .write_all(b"\x7f\xff\xff\xffnonsense")
        .await
        .unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(GUARD, garbage.read(&mut buf))
        .await
        .expect("guard");
    assert!(matches!(read, Ok(0) | Err(_)));
    // The broker still answers others.
    let mut client = Client::connect(address, "conversation-test").await;
    let Response::Metadata(metadata) = client.call_frame(1, MetadataRequest::default()).await.body
    else {
        panic!("not Metadata")
    };
    assert_eq!(metadata.brokers.len(), 1);
    drop(cluster);
    // Dropped: new connections are refused once the accept loop has ended.
    let refused = tokio::time::timeout(GUARD, async {
        loop {
            if TcpStream::connect(address).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(refused.is_ok());
}

/// Bytes after a request's fields are ignored, as Kafka's brokers ignore them: librdkafka
/// 2.16's admin client sends Metadata v13 with 3 of them (`cli/tests/tap/cluster_clients.rs`
/// saw them through the tap), and closing the connection on them broke its `list_topics`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_after_a_request_are_ignored() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "conversation-test").await;
    let mut out = BytesMut::new();
    client
        .connection
        .send(13, &Request::from(MetadataRequest::default()), &mut out)
        .expect("encode");
    // The bytes the tap logged after librdkafka's body, and the size prefix grown by them.
    out.extend_from_slice(&[1, 0, 0]);
    let size = u32::try_from(out.len() - 4).unwrap();
    out[..4].copy_from_slice(&size.to_be_bytes());
    client.tcp.write_all(&out).await.expect("write");
    let answer = tokio::time::timeout(GUARD, async {
        loop {
            if let Some(response) = client
                .connection
                .receive(&mut client.received)
                .expect("decode")
            {
                return response;
            }
            let read = client
                .tcp
                .read_buf(&mut client.received)
                .await
                .expect("read");
            assert!(read > 0, "the broker closed the connection");
        }
    })
    .await
    .expect("an answer before the guard");
    let Response::Metadata(metadata) = answer.body else {
        panic!("not Metadata")
    };
    assert_eq!(metadata.brokers.len(), 1);
}

/// Every version of every served API answers (a response that cannot be written at the
/// asked version would close the connection instead), and the data APIs find their
/// partition by name before v13 and by topic id from v13.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_of_every_served_api_answers() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "conversation-test").await;
    for version in
        ApiKey::ApiVersions.valid_versions().min..=ApiKey::ApiVersions.valid_versions().max
    {
        let Response::ApiVersions(body) = client
            .call_frame(version, ApiVersionsRequest::default())
            .await
            .body
        else {
            panic!("not ApiVersions")
        };
        assert_eq!(body.error_code, 0, "ApiVersions v{version}");
    }
    let range = ApiKey::CreateTopics.valid_versions();
    for version in range.min..=range.max {
        let Response::CreateTopics(created) = client
            .call_frame(
                version,
                CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                    .with_name(format!("t{version}").as_str().into())
                    .with_num_partitions(1)
                    .with_replication_factor(1)]),
            )
            .await
            .body
        else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0, "CreateTopics v{version}");
    }
    let range = ApiKey::Metadata.valid_versions();
    let mut topic_id = None;
    for version in range.min..=range.max {
        let Response::Metadata(metadata) = client
            .call_frame(
                version,
                MetadataRequest::default().with_topics(Some(vec![
                    MetadataRequestTopic::default().with_name(Some("t0".into()))
                ])),
            )
            .await
            .body
        else {
            panic!("not Metadata")
        };
        assert_eq!(metadata.topics[0].error_code, 0, "Metadata v{version}");
        if version >= 10 {
            topic_id = Some(metadata.topics[0].topic_id);
        }
    }
    let topic_id = topic_id.expect("a topic id");
    let range = ApiKey::Produce.valid_versions();
    for version in range.min..=range.max {
        // v0-v2 carry a magic 0/1 message set (a v2 batch there is INVALID_RECORD, as on
        // Kafka); v3+ one v2 batch.
        let records = if version < 3 {
            let mut builder = RecordBatchBuilder::new(Compression::None).magic(1);
            builder.append(1_700_000_000_000, None, Some(Bytes::from("old")));
            builder.build().encode_to_bytes().expect("a message set")
        } else {
            batch(0, 2)
        };
        let mut request = produce("t0", 0, records);
        if version >= 13 {
            request.topic_data[0].name = "".into();
            request.topic_data[0].topic_id = topic_id;
        }
        let Response::Produce(produced) = client.call_frame(version, request).await.body else {
            panic!("not Produce")
        };
        assert_eq!(
            produced.responses[0].partition_responses[0].error_code, 0,
            "Produce v{version}"
        );
    }
    let range = ApiKey::Fetch.valid_versions();
    for version in range.min..=range.max {
        let mut request = fetch("t0", 0, 0);
        if version >= 13 {
            request.topics[0].topic = "".into();
            request.topics[0].topic_id = topic_id;
        }
        let Response::Fetch(fetched) = client.call_frame(version, request).await.body else {
            panic!("not Fetch")
        };
        let partition = &fetched.responses[0].partitions[0];
        assert_eq!(partition.error_code, 0, "Fetch v{version}");
        assert!(
            !partition.records.clone().unwrap_or_default().is_empty(),
            "Fetch v{version}"
        );
    }
    let range = ApiKey::ListOffsets.valid_versions();
    for version in range.min..=range.max {
        let Response::ListOffsets(listed) = client
            .call_frame(version, list_offsets("t0", -1))
            .await
            .body
        else {
            panic!("not ListOffsets")
        };
        assert_eq!(
            listed.topics[0].partitions[0].error_code, 0,
            "ListOffsets v{version}"
        );
    }
    let range = ApiKey::DeleteTopics.valid_versions();
    for version in range.min..=range.max {
        let name = format!(
            "t{}",
            version.min(ApiKey::CreateTopics.valid_versions().max)
        );
        let mut request = kafka_codec::messages::DeleteTopicsRequest::default();
        if version >= 6 {
            request.topics = vec![
                kafka_codec::messages::delete_topics_request::DeleteTopicState::default()
                    .with_name(Some(name.as_str().into())),
            ];
        } else {
            request.topic_names = vec![name.as_str().into()];
        }
        let Response::DeleteTopics(deleted) = client.call_frame(version, request).await.body else {
            panic!("not DeleteTopics")
        };
        // Versions past CreateTopics' newest delete the same topic again: unknown by then.
        let expected = if version > ApiKey::CreateTopics.valid_versions().max {
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
        } else {
            0
        };
        assert_eq!(
            deleted.responses[0].error_code, expected,
            "DeleteTopics v{version}"
        );
    }
}

/// The request observer sees every request with what became of it, an unserved API's
/// closed connection included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_observer_sees_answers_and_closes() {
    use kafka_codec_cluster::dispatch::Reply;
    use std::sync::{Arc, Mutex};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let cluster = Cluster::builder()
        .on_request(move |served| {
            let outcome = match served.reply {
                Reply::Respond(_) => "answered".to_owned(),
                Reply::Nothing => "nothing".to_owned(),
                Reply::Close(why) => format!("closed: {why}"),
            };
            log.lock().unwrap().push(format!(
                "{} v{} broker {}: {outcome}",
                served.request.api_key(),
                served.request.api_version,
                served.node_id
            ));
        })
        .build()
        .await
        .expect("cluster");
    let address = cluster.brokers()[0].address;
    let mut client = Client::connect(address, "conversation-test").await;
    client.call_frame(3, ApiVersionsRequest::default()).await;
    assert!(
        client
            .closed_after(
                0,
                kafka_codec::messages::GetTelemetrySubscriptionsRequest::default()
            )
            .await
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "ApiVersions v3 broker 0: answered",
            "GetTelemetrySubscriptions v0 broker 0: closed: GetTelemetrySubscriptions v0 is not served",
        ]
    );
}
