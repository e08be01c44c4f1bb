//! Idempotent producers through this crate's own client connection: InitProducerId at every
//! version, then batches with producer ids, sent again (duplicates), out of order, with a
//! newer and an older epoch, checked as Kafka's `ProducerStateManager` checks them.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::produce_response::PartitionProduceResponse;
use kafka_codec::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kafka_codec::records::{Compression, Record, RecordBatchBuilder};
use kafka_codec::{ApiKey, ErrorCode, Response};
use kafka_codec_cluster::producers::BATCHES_RETAINED;
use kafka_codec_cluster::Cluster;
use support::Client;

trait IdempotenceCalls {
    async fn init(
        &mut self,
        version: i16,
        request: InitProducerIdRequest,
    ) -> InitProducerIdResponse;
    async fn produce(
        &mut self,
        id: i64,
        epoch: i16,
        sequence: i32,
        count: usize,
    ) -> PartitionProduceResponse;
}

impl IdempotenceCalls for Client {
    async fn init(
        &mut self,
        version: i16,
        request: InitProducerIdRequest,
    ) -> InitProducerIdResponse {
        match self.call(version, request).await {
            Response::InitProducerId(body) => body,
            other => panic!("not InitProducerId: {other:?}"),
        }
    }

    /// Produces one batch of `count` records from producer `id` at `epoch`, first sequence
    /// `sequence`, to partition 0 of "t".
    async fn produce(
        &mut self,
        id: i64,
        epoch: i16,
        sequence: i32,
        count: usize,
    ) -> PartitionProduceResponse {
        let mut builder = RecordBatchBuilder::new(Compression::None).producer(id, epoch, sequence);
        for i in 0..count {
            builder.append_record(Record {
                offset: i as i64,
                timestamp: 1_700_000_000_000,
                value: Some(Bytes::from(format!("value-{sequence}-{i}"))),
                ..Record::default()
            });
        }
        let records = builder.build().encode_to_bytes().expect("a batch");
        let request = support::produce("t", 0, records);
        match self.call(9, request).await {
            Response::Produce(body) => body.responses[0].partition_responses[0].clone(),
            other => panic!("not Produce: {other:?}"),
        }
    }
}

async fn cluster_with_topic() -> (Cluster, Client) {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "idempotence-test").await;
    support::make_topic(&mut client, 5, "t", 1, 1).await;
    (cluster, client)
}

/// An idempotent (not transactional) producer's InitProducerId: no transactional id.
fn idempotent() -> InitProducerIdRequest {
    InitProducerIdRequest::default()
        .with_transactional_id(None)
        .with_transaction_timeout_ms(60_000)
}

fn end_offset(cluster: &Cluster) -> i64 {
    cluster.shared().state().topics["t"].partitions[0].high_watermark()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_producer_id_hands_out_fresh_ids_and_bumps_transactional_epochs() {
    let (_cluster, mut client) = cluster_with_topic().await;
    let versions = ApiKey::InitProducerId
        .stable_versions()
        .expect("stable versions");
    // An empty transactional id is refused (only null means "not transactional").
    let empty = client
        .init(4, idempotent().with_transactional_id(Some("".into())))
        .await;
    assert_eq!(empty.error_code, ErrorCode::INVALID_REQUEST.code());
    let mut ids = Vec::new();
    for version in versions.min..=versions.max {
        let answer = client.init(version, idempotent()).await;
        assert_eq!(answer.error_code, 0, "v{version}");
        assert_eq!(answer.producer_epoch, 0, "v{version}");
        ids.push(answer.producer_id);
    }
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        ids.len(),
        "an idempotent producer gets a fresh id every time"
    );

    // A transactional id keeps its producer id; each InitProducerId bumps the epoch.
    let txn = |timeout| {
        InitProducerIdRequest::default()
            .with_transactional_id(Some("txn".into()))
            .with_transaction_timeout_ms(timeout)
    };
    let first = client.init(4, txn(60_000)).await;
    let second = client.init(4, txn(60_000)).await;
    assert_eq!((first.error_code, second.error_code), (0, 0));
    assert_eq!(second.producer_id, first.producer_id);
    assert_eq!(second.producer_epoch, first.producer_epoch + 1);
    // Naming the epoch it was given (v3+) is the same instance re-initialising.
    let named = |epoch| {
        txn(60_000)
            .with_producer_id(first.producer_id)
            .with_producer_epoch(epoch)
    };
    let third = client.init(4, named(second.producer_epoch)).await;
    assert_eq!(third.error_code, 0);
    assert_eq!(third.producer_epoch, second.producer_epoch + 1);
    // A fenced instance naming its old epoch: PRODUCER_FENCED from v4, before it
    // INVALID_PRODUCER_EPOCH (the code ProducerFencedException had before KIP-588).
    let fenced = client.init(4, named(first.producer_epoch)).await;
    assert_eq!(fenced.error_code, ErrorCode::PRODUCER_FENCED.code());
    let fenced = client.init(3, named(first.producer_epoch)).await;
    assert_eq!(fenced.error_code, ErrorCode::INVALID_PRODUCER_EPOCH.code());
    let unknown = client
        .init(4, named(0).with_producer_id(first.producer_id + 1000))
        .await;
    assert_eq!(
        unknown.error_code,
        ErrorCode::INVALID_PRODUCER_ID_MAPPING.code()
    );
    // Over `transaction.max.timeout.ms` (15 minutes by default).
    let too_long = client.init(4, txn(15 * 60 * 1000 + 1)).await;
    assert_eq!(
        too_long.error_code,
        ErrorCode::INVALID_TRANSACTION_TIMEOUT.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_are_answered_with_the_original_offset_and_gaps_refused() {
    let (cluster, mut client) = cluster_with_topic().await;
    let id = client.init(4, idempotent()).await.producer_id;

    let first = client.produce(id, 0, 0, 3).await;
    assert_eq!((first.error_code, first.base_offset), (0, 0));
    let second = client.produce(id, 0, 3, 2).await;
    assert_eq!((second.error_code, second.base_offset), (0, 3));

    // The first batch again (a retry after a lost answer): success, the original offset,
    // nothing appended.
    let again = client.produce(id, 0, 0, 3).await;
    assert_eq!((again.error_code, again.base_offset), (0, 0));
    assert_eq!(end_offset(&cluster), 5);

    // A gap in the sequence, and a batch overlapping the last one without matching it.
    let gap = client.produce(id, 0, 10, 1).await;
    assert_eq!(
        gap.error_code,
        ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.code()
    );
    let overlap = client.produce(id, 0, 4, 1).await;
    assert_eq!(
        overlap.error_code,
        ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.code()
    );
    assert_eq!(end_offset(&cluster), 5);

    // Only the last five batches are remembered: six more, then the sixth back is out of
    // order and the fifth back a duplicate.
    let mut offsets = Vec::new();
    for n in 0..=BATCHES_RETAINED as i32 {
        let answer = client.produce(id, 0, 5 + n, 1).await;
        assert_eq!(answer.error_code, 0);
        offsets.push(answer.base_offset);
    }
    let forgotten = client.produce(id, 0, 5, 1).await;
    assert_eq!(
        forgotten.error_code,
        ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.code()
    );
    let remembered = client.produce(id, 0, 6, 1).await;
    assert_eq!(
        (remembered.error_code, remembered.base_offset),
        (0, offsets[1])
    );
    let end = end_offset(&cluster);
    assert_eq!(end, 5 + offsets.len() as i64);

    // A new epoch starts at sequence 0; an older epoch is fenced.
    let bumped_late = client.produce(id, 1, 11, 1).await;
    assert_eq!(
        bumped_late.error_code,
        ErrorCode::OUT_OF_ORDER_SEQUENCE_NUMBER.code()
    );
    let bumped = client.produce(id, 1, 0, 1).await;
    assert_eq!((bumped.error_code, bumped.base_offset), (0, end));
    let stale = client.produce(id, 0, 11, 1).await;
    assert_eq!(stale.error_code, ErrorCode::INVALID_PRODUCER_EPOCH.code());

    // A producer this partition has never seen may start anywhere (Kafka accepts it: its
    // state may have gone with the log).
    let other = client.init(4, idempotent()).await.producer_id;
    let late_start = client.produce(other, 0, 42, 2).await;
    assert_eq!(late_start.error_code, 0);
    let next = client.produce(other, 0, 44, 1).await;
    assert_eq!(next.error_code, 0);
    assert_eq!(end_offset(&cluster), end + 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_wrap_after_i32_max() {
    let (cluster, mut client) = cluster_with_topic().await;
    let id = client.init(4, idempotent()).await.producer_id;
    // Two records from i32::MAX - 1: the last is i32::MAX, the next batch starts at 0.
    let answer = client.produce(id, 0, i32::MAX - 1, 2).await;
    assert_eq!(answer.error_code, 0);
    let wrapped = client.produce(id, 0, 0, 1).await;
    assert_eq!(wrapped.error_code, 0);
    assert_eq!(end_offset(&cluster), 3);
}
