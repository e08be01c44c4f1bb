//! The old message formats over the wire, through this crate's own client connection:
//! Produce v0-v2 message sets (plain and compressed wrappers, magic 0 and 1) stored as v2
//! batches at the offsets the log assigns, read back by Fetch v0-v3 as magic 0/1 and by
//! Fetch v4+ as the stored v2 batches; and the errors Kafka's validator gives.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::FetchRequest;
use kafka_codec::records::{decode_batches, Compression, RecordBatch, RecordBatchBuilder};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use support::{produce, Client};

fn message_set(magic: i8, compression: Compression, values: &[&str]) -> Bytes {
    // Offsets as an old producer writes them (0, 1, …): the broker assigns the real ones.
    let mut builder = RecordBatchBuilder::new(compression).magic(magic);
    for (i, value) in values.iter().enumerate() {
        builder.append(
            1_700_000_000_000 + i as i64,
            Some(Bytes::from(format!("k{i}"))),
            Some(Bytes::from(value.to_string())),
        );
    }
    builder.build().encode_to_bytes().expect("a message set")
}

fn fetch(offset: i64) -> FetchRequest {
    FetchRequest::default()
        .with_replica_id(-1)
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic("old".into())
            .with_partitions(vec![FetchPartition::default()
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

async fn produce_error(client: &mut Client, version: i16, records: Bytes) -> (i16, i64) {
    let Response::Produce(answer) = client.call(version, produce("old", 0, records)).await else {
        panic!("not a Produce answer");
    };
    let partition = &answer.responses[0].partition_responses[0];
    (partition.error_code, partition.base_offset)
}

async fn fetched(client: &mut Client, version: i16, offset: i64) -> Vec<RecordBatch> {
    let Response::Fetch(answer) = client.call(version, fetch(offset)).await else {
        panic!("not a Fetch answer");
    };
    let partition = &answer.responses[0].partitions[0];
    assert_eq!(partition.error_code, 0, "fetch v{version}");
    decode_batches(&partition.records.clone().unwrap_or_default()).expect("records decode")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_message_sets_are_stored_as_v2_and_read_back_in_each_fetch_versions_format() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    {
        let mut state = cluster.shared().state();
        state.add_topic("old", 1, 1);
    }
    let mut client = Client::connect(cluster.brokers()[0].address, "legacy-test").await;
    // v0 magic 0 plain (3 messages), v1 magic 0 gzip, v2 magic 1 lz4 and snappy wrappers.
    let sets = [
        (0, 0, Compression::None, vec!["a", "b", "c"]),
        (1, 0, Compression::Gzip, vec!["d", "e"]),
        (2, 1, Compression::Lz4, vec!["f", "g"]),
        (2, 1, Compression::Snappy, vec!["h"]),
    ];
    let mut next = 0;
    for (version, magic, compression, values) in &sets {
        let answer = produce_error(
            &mut client,
            *version,
            message_set(*magic, *compression, values),
        )
        .await;
        assert_eq!(answer, (0, next), "produce v{version}");
        next += values.len() as i64;
    }
    let values: Vec<&str> = sets.iter().flat_map(|s| s.3.iter().copied()).collect();

    // Stored: one v2 batch per produce, with the producer's codec.
    let stored: Vec<(i8, Compression)> = cluster.shared().state().topics["old"].partitions[0]
        .batches()
        .flat_map(|b| decode_batches(&b.bytes()).expect("stored"))
        .map(|b| (b.magic, b.compression))
        .collect();
    assert_eq!(stored, sets.iter().map(|s| (2, s.2)).collect::<Vec<_>>());

    // Each fetch version reads its format, from offset 1 (inside the first batch: the
    // records before it are left out of a converted batch).
    for (version, magic) in [(0, 0), (1, 0), (2, 1), (3, 1), (4, 2), (11, 2)] {
        let batches = fetched(&mut client, version, 1).await;
        assert!(batches.iter().all(|b| b.magic == magic), "fetch v{version}");
        let records: Vec<(i64, i64, Bytes)> = batches
            .iter()
            .flat_map(|b| {
                b.records
                    .iter()
                    .map(move |r| (r.offset, b.record_timestamp(r), r.value.clone().unwrap()))
            })
            .filter(|(offset, _, _)| *offset >= 1)
            .collect();
        let want: Vec<(i64, i64, Bytes)> = values
            .iter()
            .enumerate()
            .skip(1)
            .map(|(offset, value)| {
                // The set's own timestamps; magic 0 messages had none (-1), and magic 0
                // readers see none at all.
                let within = sets
                    .iter()
                    .scan(0usize, |start, s| {
                        let here = (*start, s);
                        *start += s.3.len();
                        Some(here)
                    })
                    .find(|(start, s)| offset < start + s.3.len())
                    .expect("a set");
                let timestamp = if within.1 .1 == 0 || magic == 0 {
                    -1
                } else {
                    1_700_000_000_000 + (offset - within.0) as i64
                };
                (offset as i64, timestamp, Bytes::from(value.to_string()))
            })
            .collect();
        assert_eq!(records, want, "fetch v{version}");
        if magic < 2 {
            // A converted batch starts at the fetch offset.
            assert_eq!(batches[0].records[0].offset, 1, "fetch v{version}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formats_and_versions_that_do_not_go_together_are_refused_as_kafka_refuses_them() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    {
        let mut state = cluster.shared().state();
        state.add_topic("old", 1, 1);
    }
    let mut client = Client::connect(cluster.brokers()[0].address, "legacy-test").await;
    let v2 = message_set(2, Compression::None, &["x"]);
    let invalid = ErrorCode::INVALID_RECORD.code();
    let corrupt = ErrorCode::CORRUPT_MESSAGE.code();
    // A v2 batch at v0-v2, a message set at v3+.
    assert_eq!(produce_error(&mut client, 2, v2).await.0, invalid);
    let old = message_set(1, Compression::None, &["x"]);
    assert_eq!(produce_error(&mut client, 3, old.clone()).await.0, invalid);
    // A message whose CRC fails, and a truncated wrapper.
    let mut flipped = old.to_vec();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert_eq!(
        produce_error(&mut client, 2, Bytes::from(flipped)).await.0,
        corrupt
    );
    let wrapper = message_set(1, Compression::Gzip, &["x", "y"]);
    assert_eq!(
        produce_error(&mut client, 2, wrapper.slice(..wrapper.len() - 2))
            .await
            .0,
        corrupt
    );
    // Nothing was appended.
    assert_eq!(
        cluster.shared().state().topics["old"].partitions[0].high_watermark(),
        0
    );
}
