//! Transactions through this crate's own client connection: the coordinator's APIs at their
//! versions, the markers they leave in the log, what `read_committed` reads, transaction
//! versions 1 and 2, timeouts, fencing (by a new instance and by the control surface) and
//! the caps.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::add_partitions_to_txn_request::{
    AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
};
use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::describe_producers_request::TopicRequest;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::fetch_response::PartitionData;
use kafka_codec::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_codec::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_codec::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_codec::messages::{
    AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, CreateTopicsRequest,
    DescribeProducersRequest, DescribeTransactionsRequest, EndTxnRequest, EndTxnResponse,
    FetchRequest, FindCoordinatorRequest, InitProducerIdRequest, ListOffsetsRequest,
    ListTransactionsRequest, OffsetFetchRequest, TxnOffsetCommitRequest,
};
use kafka_codec::records::{decode_batches, ControlRecord};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::transactions::{coordinator, TxnLimits};
use kafka_codec_cluster::Cluster;
use support::{live_broker, Client};

thread_local! {
    /// A suffix for every name of a test (topic, transactional ids, groups): empty against
    /// a fresh cluster, the run's against a real broker, which keeps them between runs.
    /// Every test here runs on a current-thread runtime, so the thread is the test's.
    static RUN: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `name` in this run.
fn named(name: &str) -> String {
    RUN.with(|run| format!("{name}{}", run.borrow()))
}

/// The topic of a test.
fn topic() -> String {
    named("t")
}

/// A transactional batch of `count` records from `producer` at `epoch`, first sequence
/// `sequence`.
fn txn_batch(producer: i64, epoch: i16, sequence: i32, count: usize) -> Bytes {
    support::txn_batch(producer, epoch, sequence, count, "value")
}

fn fetch(partition: i32, offset: i64, isolation: i8) -> FetchRequest {
    FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(isolation)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic().as_str().into())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

const UNCOMMITTED: i8 = 0;
const COMMITTED: i8 = 1;

fn code(error: ErrorCode) -> i16 {
    error.code()
}

impl Client {
    async fn create_topic(&mut self, partitions: i32) {
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(1000)
            .with_topics(vec![CreatableTopic::default()
                .with_name(topic().as_str().into())
                .with_num_partitions(partitions)
                .with_replication_factor(1)]);
        let Response::CreateTopics(created) = self.call(7, request).await else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
    }

    /// InitProducerId of `id`: (error, producer id, epoch).
    async fn init(&mut self, version: i16, id: &str, timeout_ms: i32) -> (i16, i64, i16) {
        let request = InitProducerIdRequest::default()
            .with_transactional_id(Some(id.into()))
            .with_transaction_timeout_ms(timeout_ms)
            .with_producer_id(-1)
            .with_producer_epoch(-1);
        let Response::InitProducerId(body) = self.call(version, request).await else {
            panic!("not InitProducerId")
        };
        (body.error_code, body.producer_id, body.producer_epoch)
    }

    /// AddPartitionsToTxn v0-v3 of `partitions` of the topic: each partition's error.
    async fn add_partitions(
        &mut self,
        version: i16,
        id: &str,
        producer: i64,
        epoch: i16,
        partitions: &[i32],
    ) -> Vec<i16> {
        let request = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(id.into())
            .with_v3_and_below_producer_id(producer)
            .with_v3_and_below_producer_epoch(epoch)
            .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(topic().as_str().into())
                .with_partitions(partitions.to_vec().into())]);
        let Response::AddPartitionsToTxn(body) = self.call(version, request).await else {
            panic!("not AddPartitionsToTxn")
        };
        // By partition (the callers name them in order): Kafka answers in its map's order.
        let mut errors: Vec<(i32, i16)> = body.results_by_topic_v3_and_below[0]
            .results_by_partition
            .iter()
            .map(|p| (p.partition_index, p.partition_error_code))
            .collect();
        errors.sort_unstable();
        errors.into_iter().map(|(_, error)| error).collect()
    }

    /// Produce of `batch` to `partition` of the topic, naming transactional id `id`.
    async fn produce_txn(
        &mut self,
        version: i16,
        id: &str,
        partition: i32,
        batch: Bytes,
    ) -> (i16, i64) {
        let request =
            support::produce(&topic(), partition, batch).with_transactional_id(Some(id.into()));
        let Response::Produce(body) = self.call(version, request).await else {
            panic!("not Produce")
        };
        let answer = &body.responses[0].partition_responses[0];
        (answer.error_code, answer.base_offset)
    }

    async fn end(
        &mut self,
        version: i16,
        id: &str,
        producer: i64,
        epoch: i16,
        commit: bool,
    ) -> EndTxnResponse {
        let request = EndTxnRequest::default()
            .with_transactional_id(id.into())
            .with_producer_id(producer)
            .with_producer_epoch(epoch)
            .with_committed(commit);
        let Response::EndTxn(body) = self.call(version, request).await else {
            panic!("not EndTxn")
        };
        // Kafka answers once the outcome is in its log and writes the markers after (the
        // state is PrepareCommit or PrepareAbort until then); the cluster writes them
        // before it answers. Wait for them, so that what follows reads the same on both.
        if body.error_code == 0 {
            tokio::time::timeout(support::GUARD, async {
                while self.describe(id).await.1.starts_with("Prepare") {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            })
            .await
            .expect("markers written before the guard");
        }
        body
    }

    /// InitProducerId, retried while the answer is CONCURRENT_TRANSACTIONS (an earlier
    /// transaction still ending), as clients retry it.
    async fn init_retrying(&mut self, version: i16, id: &str, timeout_ms: i32) -> (i16, i64, i16) {
        tokio::time::timeout(support::GUARD, async {
            loop {
                let answer = self.init(version, id, timeout_ms).await;
                if answer.0 != ErrorCode::CONCURRENT_TRANSACTIONS.code() {
                    return answer;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("initialized before the guard")
    }

    async fn fetch_partition(
        &mut self,
        partition: i32,
        offset: i64,
        isolation: i8,
    ) -> PartitionData {
        let Response::Fetch(body) = self.call(12, fetch(partition, offset, isolation)).await else {
            panic!("not Fetch")
        };
        body.responses[0].partitions[0].clone()
    }

    async fn latest(&mut self, isolation: i8) -> i64 {
        let request = ListOffsetsRequest::default()
            .with_replica_id(-1)
            .with_isolation_level(isolation)
            .with_topics(vec![ListOffsetsTopic::default()
                .with_name(topic().as_str().into())
                .with_partitions(vec![ListOffsetsPartition::default()
                    .with_partition_index(0)
                    .with_timestamp(-1)])]);
        let Response::ListOffsets(body) = self.call(7, request).await else {
            panic!("not ListOffsets")
        };
        let partition = &body.topics[0].partitions[0];
        assert_eq!(partition.error_code, 0);
        partition.offset
    }

    /// Every record and control record of `partition` from offset 0 to the end (the last
    /// stable offset for read_committed), fetched as a consumer fetches: from where the
    /// last answer ended (a real broker may answer a part).
    async fn read_all(&mut self, partition: i32, isolation: i8) -> Read {
        let mut all: Read = (Vec::new(), Vec::new());
        let mut offset = 0;
        loop {
            let data = self.fetch_partition(partition, offset, isolation).await;
            assert_eq!(data.error_code, 0);
            let end = if isolation == COMMITTED {
                data.last_stable_offset
            } else {
                data.high_watermark
            };
            let bytes = data.records.clone().unwrap_or_default();
            let batches = decode_batches(&bytes).expect("batches decode");
            let Some(last) = batches.last() else {
                return all;
            };
            offset = last.base_offset + i64::from(last.last_offset_delta) + 1;
            let (records, controls) = read(&data);
            all.0.extend(records);
            all.1.extend(controls);
            if offset >= end {
                return all;
            }
        }
    }

    /// Waits until the broker leads both partitions of a topic just created (a real broker
    /// answers NOT_LEADER_OR_FOLLOWER for a moment; the cluster never does).
    async fn wait_for_leaders(&mut self) {
        tokio::time::timeout(support::GUARD, async {
            loop {
                let request = ListOffsetsRequest::default()
                    .with_replica_id(-1)
                    .with_topics(vec![ListOffsetsTopic::default()
                        .with_name(topic().as_str().into())
                        .with_partitions(
                            (0..2)
                                .map(|p| {
                                    ListOffsetsPartition::default()
                                        .with_partition_index(p)
                                        .with_timestamp(-1)
                                })
                                .collect(),
                        )]);
                let Response::ListOffsets(body) = self.call(7, request).await else {
                    panic!("not ListOffsets")
                };
                if body.topics[0].partitions.iter().all(|p| p.error_code == 0) {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("leaders before the guard");
    }

    /// DescribeTransactions' start time of one id.
    async fn start_time(&mut self, id: &str) -> i64 {
        let request =
            DescribeTransactionsRequest::default().with_transactional_ids(vec![id.into()]);
        let Response::DescribeTransactions(body) = self.call(0, request).await else {
            panic!("not DescribeTransactions")
        };
        body.transaction_states[0].transaction_start_time_ms
    }

    /// DescribeTransactions of one id: (error, state, producer id, epoch, partitions).
    async fn describe(&mut self, id: &str) -> (i16, String, i64, i16, Vec<i32>) {
        let request =
            DescribeTransactionsRequest::default().with_transactional_ids(vec![id.into()]);
        let Response::DescribeTransactions(body) = self.call(0, request).await else {
            panic!("not DescribeTransactions")
        };
        let txn = &body.transaction_states[0];
        (
            txn.error_code,
            txn.transaction_state.to_string(),
            txn.producer_id,
            txn.producer_epoch,
            // Sorted: Kafka lists them in its hash set's order.
            {
                let mut partitions: Vec<i32> = txn
                    .topics
                    .iter()
                    .flat_map(|topic| topic.partitions.iter())
                    .collect();
                partitions.sort_unstable();
                partitions
            },
        )
    }
}

/// Records by offset: values, or control records.
type Read = (Vec<(i64, String)>, Vec<(i64, ControlRecord)>);

/// The records (offset, value) and control records of the batches of `data`.
fn read(data: &PartitionData) -> Read {
    let mut records = Vec::new();
    let mut controls = Vec::new();
    let bytes = data.records.clone().unwrap_or_default();
    for batch in decode_batches(&bytes).expect("batches decode") {
        for record in &batch.records {
            if batch.is_control {
                let control = ControlRecord::decode(record.key.as_deref(), record.value.as_deref())
                    .expect("a control record");
                assert!(batch.is_transactional, "a marker batch is transactional");
                controls.push((record.offset, control));
            } else {
                let value = record.value.as_deref().unwrap_or_default();
                records.push((record.offset, String::from_utf8_lossy(value).into_owned()));
            }
        }
    }
    (records, controls)
}

async fn one_broker() -> (Cluster, Client) {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "txn-test").await;
    client.create_topic(2).await;
    (cluster, client)
}

#[tokio::test]
async fn coordinator_is_found_by_kafkas_rule_and_the_others_refuse() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    for id in ["a", "tx", "payments-1", "transactional-id-42"] {
        let expected = coordinator(id, 3);
        for broker in cluster.brokers() {
            let mut client = Client::connect(broker.address, "c").await;
            for version in [1, 3] {
                let request = FindCoordinatorRequest::default()
                    .with_key(id.into())
                    .with_key_type(1);
                let Response::FindCoordinator(body) = client.call(version, request).await else {
                    panic!("not FindCoordinator")
                };
                assert_eq!(body.error_code, 0);
                assert_eq!(body.node_id, expected, "{id} v{version}");
                assert_eq!(
                    body.port,
                    i32::from(cluster.brokers()[expected as usize].address.port())
                );
            }
            let request = FindCoordinatorRequest::default()
                .with_key_type(1)
                .with_coordinator_keys(vec![id.into()]);
            let Response::FindCoordinator(body) = client.call(4, request).await else {
                panic!("not FindCoordinator")
            };
            assert_eq!(body.coordinators[0].node_id, expected);
            // The others answer the coordinator's APIs NOT_COORDINATOR.
            let (error, _, _) = client.init(4, id, 60_000).await;
            if broker.node_id == expected {
                assert_eq!(error, 0);
            } else {
                assert_eq!(error, code(ErrorCode::NOT_COORDINATOR));
            }
        }
    }
    // The rule is the groups' (Java's String.hashCode, 50 partitions): "a" is 97.
    assert_eq!(coordinator("a", 1000), 97 % 50);
}

#[tokio::test]
async fn committed_transaction_leaves_a_commit_marker_and_read_committed_waits_for_it() {
    let (_cluster, mut client) = one_broker().await;
    committed(&mut client).await;
}

async fn committed(client: &mut Client) {
    let (error, producer, epoch) = client.init(3, &named("tx"), 60_000).await;
    assert_eq!((error, epoch), (0, 0));
    assert_eq!(client.start_time(&named("tx")).await, -1, "none begun");
    // Transaction version 1 (Produce v9): the partition must be added first.
    let (error, _) = client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 0, 3))
        .await;
    assert_eq!(error, code(ErrorCode::INVALID_TXN_STATE));
    // Produce v11 (KIP-890) is answered TRANSACTION_ABORTABLE (compared with Kafka 4.4).
    let (error, _) = client
        .produce_txn(11, &named("tx"), 0, txn_batch(producer, epoch, 0, 3))
        .await;
    assert_eq!(error, code(ErrorCode::TRANSACTION_ABORTABLE));
    assert_eq!(
        client
            .add_partitions(3, &named("tx"), producer, epoch, &[0, 1])
            .await,
        vec![0, 0]
    );
    assert_eq!(
        client.describe(&named("tx")).await,
        (0, "Ongoing".into(), producer, 0, vec![0, 1])
    );
    assert_eq!(
        client
            .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 0, 3))
            .await,
        (0, 0)
    );
    // Open: read_uncommitted sees the records, read_committed stops at the LSO (0).
    let uncommitted = client.fetch_partition(0, 0, UNCOMMITTED).await;
    assert_eq!(uncommitted.high_watermark, 3);
    assert_eq!(uncommitted.last_stable_offset, 0);
    assert_eq!(client.read_all(0, UNCOMMITTED).await.0.len(), 3);
    assert_eq!(uncommitted.aborted_transactions, None);
    let committed = client.fetch_partition(0, 0, COMMITTED).await;
    assert_eq!(client.read_all(0, COMMITTED).await.0, vec![]);
    assert_eq!(committed.aborted_transactions, Some(vec![]));
    assert_eq!(client.latest(COMMITTED).await, 0);
    assert_eq!(client.latest(UNCOMMITTED).await, 3);
    // DescribeProducers names the open transaction's first offset.
    let request = DescribeProducersRequest::default().with_topics(vec![TopicRequest::default()
        .with_name(topic().as_str().into())
        .with_partition_indexes(vec![0].into())]);
    let Response::DescribeProducers(described) = client.call(0, request.clone()).await else {
        panic!("not DescribeProducers")
    };
    let active = &described.topics[0].partitions[0].active_producers;
    assert_eq!(active.len(), 1);
    assert_eq!(
        (
            active[0].producer_id,
            active[0].producer_epoch,
            active[0].last_sequence
        ),
        (producer, 0, 2)
    );
    assert_eq!(active[0].current_txn_start_offset, 0);
    assert_eq!(active[0].coordinator_epoch, -1);

    let ended = client.end(3, &named("tx"), producer, epoch, true).await;
    assert_eq!(ended.error_code, 0);
    // A retry of the same EndTxn is answered as the first (transaction version 1).
    assert_eq!(
        client
            .end(3, &named("tx"), producer, epoch, true)
            .await
            .error_code,
        0
    );
    assert_eq!(
        client
            .end(3, &named("tx"), producer, epoch, false)
            .await
            .error_code,
        code(ErrorCode::INVALID_TXN_STATE)
    );
    // A COMMIT marker in both partitions (offset 3 in the one written, 0 in the other).
    let committed = client.fetch_partition(0, 0, COMMITTED).await;
    assert_eq!(committed.last_stable_offset, 4);
    let (records, controls) = client.read_all(0, COMMITTED).await;
    assert_eq!(
        records.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(
        matches!(controls.as_slice(), [(3, ControlRecord::Commit(_))]),
        "{controls:?}"
    );
    assert!(matches!(
        client.read_all(1, COMMITTED).await.1.as_slice(),
        [(0, ControlRecord::Commit(_))]
    ));
    assert_eq!(client.latest(COMMITTED).await, 4);
    assert_eq!(client.describe(&named("tx")).await.1, "CompleteCommit");
    // The ended transaction's start time is kept (Kafka 4.4's `kafka-transactions describe`
    // shows it for a CompleteCommit transaction).
    assert!(client.start_time(&named("tx")).await > 0);
    let Response::DescribeProducers(described) = client.call(0, request).await else {
        panic!("not DescribeProducers")
    };
    let active = &described.topics[0].partitions[0].active_producers;
    assert_eq!(active[0].current_txn_start_offset, -1);
    assert_eq!(active[0].coordinator_epoch, 0);
}

#[tokio::test]
async fn aborted_transaction_is_named_to_read_committed_fetches() {
    let (_cluster, mut client) = one_broker().await;
    aborted(&mut client).await;
}

async fn aborted(client: &mut Client) {
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0])
        .await;
    client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 0, 2))
        .await;
    client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 2, 2))
        .await;
    assert_eq!(
        client
            .end(3, &named("tx"), producer, epoch, false)
            .await
            .error_code,
        0
    );
    assert_eq!(client.describe(&named("tx")).await.1, "CompleteAbort");
    // Then a committed one.
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0])
        .await;
    client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 4, 1))
        .await;
    client.end(3, &named("tx"), producer, epoch, true).await;
    let data = client.fetch_partition(0, 0, COMMITTED).await;
    let aborted = data
        .aborted_transactions
        .clone()
        .expect("read_committed names them");
    assert_eq!(aborted.len(), 1);
    assert_eq!(
        (aborted[0].producer_id, aborted[0].first_offset),
        (producer, 0)
    );
    let (records, controls) = client.read_all(0, COMMITTED).await;
    // The client drops offsets 0-3 (aborted); the log holds them, the markers at 4 and 6.
    assert_eq!(
        records.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 5]
    );
    assert!(matches!(
        controls.as_slice(),
        [(4, ControlRecord::Abort(_)), (6, ControlRecord::Commit(_))]
    ));
    // A fetch past the aborted range is told of none.
    let later = client.fetch_partition(0, 5, COMMITTED).await;
    assert_eq!(later.aborted_transactions, Some(vec![]));
}

#[tokio::test]
async fn transaction_version_2_adds_partitions_at_produce_and_bumps_the_epoch() {
    let (_cluster, mut client) = one_broker().await;
    version_2(&mut client).await;
}

async fn version_2(client: &mut Client) {
    let (_, producer, epoch) = client.init(5, &named("tx2"), 60_000).await;
    // Produce v12: no AddPartitionsToTxn.
    assert_eq!(
        client
            .produce_txn(12, &named("tx2"), 1, txn_batch(producer, epoch, 0, 2))
            .await,
        (0, 0)
    );
    assert_eq!(client.describe(&named("tx2")).await.4, vec![1]);
    let ended = client.end(5, &named("tx2"), producer, epoch, true).await;
    assert_eq!(ended.error_code, 0);
    assert_eq!(
        (ended.producer_id, ended.producer_epoch),
        (producer, epoch + 1)
    );
    // The marker carries the new epoch, which fences the old one at Produce.
    assert!(matches!(
        client.read_all(1, COMMITTED).await.1.as_slice(),
        [(2, ControlRecord::Commit(_))]
    ));
    let data = client.fetch_partition(1, 2, UNCOMMITTED).await;
    let batches = decode_batches(&data.records.clone().unwrap_or_default()).expect("decode");
    assert_eq!(batches[0].producer_epoch, epoch + 1);
    assert_eq!(
        client
            .produce_txn(12, &named("tx2"), 1, txn_batch(producer, epoch, 2, 1))
            .await
            .0,
        code(ErrorCode::INVALID_PRODUCER_EPOCH)
    );
    // A retried EndTxn names the epoch before the bump and gets the same answer.
    let retried = client.end(5, &named("tx2"), producer, epoch, true).await;
    assert_eq!(retried.error_code, 0);
    assert_eq!(retried.producer_epoch, epoch + 1);
    // An abort of an empty transaction is allowed at version 2, not at version 1.
    let aborted = client
        .end(5, &named("tx2"), producer, epoch + 1, false)
        .await;
    assert_eq!((aborted.error_code, aborted.producer_epoch), (0, epoch + 2));
    let (_, p1, e1) = client.init(4, &named("tx1"), 60_000).await;
    assert_eq!(
        client.end(4, &named("tx1"), p1, e1, false).await.error_code,
        code(ErrorCode::INVALID_TXN_STATE)
    );
    // The next transaction at the new epoch starts its sequences at 0.
    assert_eq!(
        client
            .produce_txn(12, &named("tx2"), 1, txn_batch(producer, epoch + 2, 0, 1))
            .await,
        (0, 3)
    );
}

#[tokio::test]
async fn offsets_committed_in_a_transaction_become_visible_when_it_commits() {
    let (_cluster, mut client) = one_broker().await;
    offsets(&mut client).await;
}

async fn offsets(client: &mut Client) {
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    let offsets = |offset: i64| {
        TxnOffsetCommitRequest::default()
            .with_transactional_id(named("tx").as_str().into())
            .with_group_id(named("g").as_str().into())
            .with_producer_id(producer)
            .with_producer_epoch(epoch)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name(topic().as_str().into())
                .with_partitions(vec![TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(offset)
                    .with_committed_metadata(Some("m".into()))])])
    };
    let commit_error = |response: Response| match response {
        Response::TxnOffsetCommit(body) => body.topics[0].partitions[0].error_code,
        other => panic!("not TxnOffsetCommit: {other:?}"),
    };
    // Transaction version 1: the group must be added first (v4+: TRANSACTION_ABORTABLE).
    assert_eq!(
        commit_error(client.call(3, offsets(5)).await),
        code(ErrorCode::INVALID_TXN_STATE)
    );
    assert_eq!(
        commit_error(client.call(4, offsets(5)).await),
        code(ErrorCode::TRANSACTION_ABORTABLE)
    );
    let add = AddOffsetsToTxnRequest::default()
        .with_transactional_id(named("tx").as_str().into())
        .with_producer_id(producer)
        .with_producer_epoch(epoch)
        .with_group_id(named("g").as_str().into());
    let Response::AddOffsetsToTxn(added) = client.call(3, add).await else {
        panic!("not AddOffsetsToTxn")
    };
    assert_eq!(added.error_code, 0);
    assert_eq!(commit_error(client.call(3, offsets(5)).await), 0);
    let fetch = |stable: bool| {
        OffsetFetchRequest::default()
            .with_group_id(named("g").as_str().into())
            .with_require_stable(stable)
            .with_topics(Some(vec![OffsetFetchRequestTopic::default()
                .with_name(topic().as_str().into())
                .with_partition_indexes(vec![0].into())]))
    };
    let fetched = |response: Response| match response {
        Response::OffsetFetch(body) => {
            let partition = &body.topics[0].partitions[0];
            (partition.error_code, partition.committed_offset)
        }
        other => panic!("not OffsetFetch: {other:?}"),
    };
    assert_eq!(
        fetched(client.call(7, fetch(true)).await),
        (code(ErrorCode::UNSTABLE_OFFSET_COMMIT), -1)
    );
    assert_eq!(fetched(client.call(7, fetch(false)).await), (0, -1));
    assert_eq!(
        client
            .end(3, &named("tx"), producer, epoch, true)
            .await
            .error_code,
        0
    );
    assert_eq!(fetched(client.call(7, fetch(true)).await), (0, 5));
    // An aborted transaction's offsets are dropped.
    client
        .call(
            3,
            AddOffsetsToTxnRequest::default()
                .with_transactional_id(named("tx").as_str().into())
                .with_producer_id(producer)
                .with_producer_epoch(epoch)
                .with_group_id(named("g").as_str().into()),
        )
        .await;
    assert_eq!(commit_error(client.call(3, offsets(9)).await), 0);
    client.end(3, &named("tx"), producer, epoch, false).await;
    assert_eq!(fetched(client.call(7, fetch(true)).await), (0, 5));
    // Version 5 (transaction version 2) adds the group itself.
    let Response::TxnOffsetCommit(body) = client.call(5, offsets(7)).await else {
        panic!("not TxnOffsetCommit")
    };
    assert_eq!(body.topics[0].partitions[0].error_code, 0);
    client.end(3, &named("tx"), producer, epoch, true).await;
    assert_eq!(fetched(client.call(7, fetch(true)).await), (0, 7));
}

#[tokio::test]
async fn fencing_errors_by_version_and_a_new_instance_aborts_the_open_transaction() {
    let (_cluster, mut client) = one_broker().await;
    fencing(&mut client).await;
}

async fn fencing(client: &mut Client) {
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0])
        .await;
    client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 0, 2))
        .await;
    // A new instance: the open transaction is aborted (CONCURRENT_TRANSACTIONS, retried).
    let (error, _, _) = client.init(4, &named("tx"), 60_000).await;
    assert_eq!(error, code(ErrorCode::CONCURRENT_TRANSACTIONS));
    let (error, again, new_epoch) = client.init_retrying(4, &named("tx"), 60_000).await;
    assert_eq!((error, again), (0, producer));
    assert_eq!(
        new_epoch,
        epoch + 2,
        "one bump to abort, one for the new instance"
    );
    let data = client.fetch_partition(0, 0, COMMITTED).await;
    assert!(matches!(
        client.read_all(0, COMMITTED).await.1.as_slice(),
        [(2, ControlRecord::Abort(_))]
    ));
    assert_eq!(data.aborted_transactions.expect("named").len(), 1);
    // The old instance is fenced: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before.
    for version in 0..=3 {
        let expected = if version >= 2 {
            ErrorCode::PRODUCER_FENCED
        } else {
            ErrorCode::INVALID_PRODUCER_EPOCH
        };
        assert_eq!(
            client
                .end(version, &named("tx"), producer, epoch, true)
                .await
                .error_code,
            code(expected),
            "EndTxn v{version}"
        );
        assert_eq!(
            client
                .add_partitions(version, &named("tx"), producer, epoch, &[0])
                .await,
            vec![code(expected)],
            "AddPartitionsToTxn v{version}"
        );
    }
    assert_eq!(
        client
            .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 2, 1))
            .await
            .0,
        code(ErrorCode::INVALID_PRODUCER_EPOCH)
    );
    // Another producer id, an unknown transactional id.
    assert_eq!(
        client
            .end(3, &named("tx"), producer + 100, new_epoch, true)
            .await
            .error_code,
        code(ErrorCode::INVALID_PRODUCER_ID_MAPPING)
    );
    assert_eq!(
        client
            .end(3, &named("nope"), producer, new_epoch, true)
            .await
            .error_code,
        code(ErrorCode::INVALID_PRODUCER_ID_MAPPING)
    );
    // Unknown partitions: UNKNOWN_TOPIC_OR_PARTITION, the others not attempted.
    assert_eq!(
        client
            .add_partitions(3, &named("tx"), producer, new_epoch, &[0, 7])
            .await,
        vec![
            code(ErrorCode::OPERATION_NOT_ATTEMPTED),
            code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
        ]
    );
}

#[tokio::test]
async fn broker_form_verifies_without_adding() {
    let (_cluster, mut client) = one_broker().await;
    verify_only(&mut client).await;
}

async fn verify_only(client: &mut Client) {
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0])
        .await;
    let verify = AddPartitionsToTxnRequest::default().with_transactions(vec![
        AddPartitionsToTxnTransaction::default()
            .with_transactional_id(named("tx").as_str().into())
            .with_producer_id(producer)
            .with_producer_epoch(epoch)
            .with_verify_only(true)
            .with_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(topic().as_str().into())
                .with_partitions(vec![0, 1].into())]),
    ]);
    let Response::AddPartitionsToTxn(body) = client.call(4, verify).await else {
        panic!("not AddPartitionsToTxn")
    };
    assert_eq!(body.error_code, 0);
    let result = &body.results_by_transaction[0];
    assert_eq!(result.transactional_id.as_str(), named("tx"));
    // By partition: Kafka answers them in its map's order.
    let mut errors: Vec<(i32, i16)> = result.topic_results[0]
        .results_by_partition
        .iter()
        .map(|p| (p.partition_index, p.partition_error_code))
        .collect();
    errors.sort_unstable();
    // Kafka's verification answers TRANSACTION_ABORTABLE (compared with Kafka 4.4).
    assert_eq!(
        errors,
        vec![(0, 0), (1, code(ErrorCode::TRANSACTION_ABORTABLE))]
    );
    assert_eq!(
        client.describe(&named("tx")).await.4,
        vec![0],
        "verify_only added nothing"
    );
}

#[tokio::test]
async fn list_transactions_filters() {
    let (_cluster, mut client) = one_broker().await;
    let (_, a, a_epoch) = client.init(4, &named("alpha"), 60_000).await;
    let (_, b, _) = client.init(4, &named("beta"), 60_000).await;
    client
        .add_partitions(3, &named("alpha"), a, a_epoch, &[0])
        .await;
    let list = |states: Vec<&str>, producers: Vec<i64>, duration: i64, pattern: Option<&str>| {
        ListTransactionsRequest::default()
            .with_state_filters(states.into_iter().map(Into::into).collect())
            .with_producer_id_filters(producers.into())
            .with_duration_filter(duration)
            .with_transactional_id_pattern(pattern.map(Into::into))
    };
    let names = |response: Response| match response {
        Response::ListTransactions(body) => (
            body.error_code,
            body.unknown_state_filters
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
            body.transaction_states
                .iter()
                .map(|t| {
                    (
                        t.transactional_id.to_string(),
                        t.transaction_state.to_string(),
                    )
                })
                .collect::<Vec<_>>(),
        ),
        other => panic!("not ListTransactions: {other:?}"),
    };
    let both = vec![
        ("alpha".to_string(), "Ongoing".to_string()),
        ("beta".to_string(), "Empty".to_string()),
    ];
    assert_eq!(
        names(client.call(0, list(vec![], vec![], -1, None)).await).2,
        both
    );
    assert_eq!(
        names(
            client
                .call(0, list(vec!["Ongoing", "Bogus"], vec![], -1, None))
                .await
        ),
        (0, vec!["Bogus".to_string()], vec![both[0].clone()])
    );
    assert_eq!(
        names(client.call(0, list(vec![], vec![b], -1, None)).await).2,
        vec![both[1].clone()]
    );
    // v1: running at least an hour: none ongoing; the empty one has no start.
    assert_eq!(
        names(
            client
                .call(1, list(vec!["Ongoing"], vec![], 3_600_000, None))
                .await
        )
        .2,
        vec![]
    );
    assert_eq!(
        names(client.call(2, list(vec![], vec![], -1, Some("al.*"))).await).2,
        vec![both[0].clone()]
    );
    assert_eq!(
        names(
            client
                .call(2, list(vec![], vec![], -1, Some("(unclosed")))
                .await
        )
        .0,
        code(ErrorCode::INVALID_REGULAR_EXPRESSION)
    );
}

#[tokio::test]
async fn an_ongoing_transaction_is_aborted_at_its_timeout() {
    let (_cluster, mut client) = one_broker().await;
    let (_, producer, epoch) = client.init(4, &named("slow"), 50).await;
    client
        .add_partitions(3, &named("slow"), producer, epoch, &[0])
        .await;
    client
        .produce_txn(9, &named("slow"), 0, txn_batch(producer, epoch, 0, 1))
        .await;
    // No timing assertion: wait (within the guard) for the coordinator to abort it.
    let aborted = tokio::time::timeout(support::GUARD, async {
        loop {
            let described = client.describe(&named("slow")).await;
            if described.1 == "CompleteAbort" {
                return described;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("aborted before the guard");
    assert_eq!(aborted.3, epoch + 1, "the epoch is bumped");
    assert_eq!(
        client
            .end(3, &named("slow"), producer, epoch, true)
            .await
            .error_code,
        code(ErrorCode::PRODUCER_FENCED)
    );
    let data = client.fetch_partition(0, 0, COMMITTED).await;
    assert!(matches!(
        client.read_all(0, COMMITTED).await.1.as_slice(),
        [(1, ControlRecord::Abort(_))]
    ));
    assert_eq!(data.last_stable_offset, 2);
}

#[tokio::test]
async fn the_control_surface_fences_a_transactional_id() {
    let (cluster, mut client) = one_broker().await;
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0, 1])
        .await;
    client
        .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 0, 3))
        .await;
    let (id, now) = cluster
        .control()
        .fence_transactional_id("tx")
        .expect("a known id");
    assert_eq!((id, now), (producer, epoch + 1));
    assert!(cluster.control().fence_transactional_id("nope").is_err());
    // Aborted, markers in both partitions; read_committed sees none of its records.
    assert_eq!(client.describe(&named("tx")).await.1, "CompleteAbort");
    let data = client.fetch_partition(0, 0, COMMITTED).await;
    assert_eq!(data.aborted_transactions.clone().expect("named").len(), 1);
    assert!(matches!(
        client.read_all(0, COMMITTED).await.1.as_slice(),
        [(3, ControlRecord::Abort(_))]
    ));
    assert!(matches!(
        client.read_all(1, COMMITTED).await.1.as_slice(),
        [(0, ControlRecord::Abort(_))]
    ));
    assert_eq!(
        client
            .produce_txn(9, &named("tx"), 0, txn_batch(producer, epoch, 3, 1))
            .await
            .0,
        code(ErrorCode::INVALID_PRODUCER_EPOCH)
    );
    assert_eq!(
        client
            .end(1, &named("tx"), producer, epoch, true)
            .await
            .error_code,
        code(ErrorCode::INVALID_PRODUCER_EPOCH)
    );
    assert_eq!(
        client
            .end(3, &named("tx"), producer, epoch, true)
            .await
            .error_code,
        code(ErrorCode::PRODUCER_FENCED)
    );
    // Fencing by producer id does the same for a transactional producer.
    let (_, producer, epoch) = client.init(4, &named("tx"), 60_000).await;
    client
        .add_partitions(3, &named("tx"), producer, epoch, &[0])
        .await;
    let first = cluster.control().fence_producer(producer).expect("known");
    assert_eq!(first, epoch + 1);
    assert_eq!(client.describe(&named("tx")).await.1, "CompleteAbort");
}

#[tokio::test]
async fn the_caps_refuse_with_a_clear_error() {
    let cluster = Cluster::builder()
        .transaction_limits(TxnLimits {
            max_transactions: 1,
            max_members: 2,
        })
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "caps").await;
    client.create_topic(4).await;
    let (error, producer, epoch) = client.init(4, &named("one"), 60_000).await;
    assert_eq!(error, 0);
    assert_eq!(
        client.init(4, &named("two"), 60_000).await.0,
        code(ErrorCode::POLICY_VIOLATION)
    );
    // The same id again is not a new one.
    let (error, _, epoch2) = client.init(4, &named("one"), 60_000).await;
    assert_eq!((error, epoch2), (0, epoch + 1));
    assert_eq!(
        client
            .add_partitions(3, &named("one"), producer, epoch2, &[0, 1, 2])
            .await,
        vec![code(ErrorCode::POLICY_VIOLATION); 3]
    );
    assert_eq!(
        client
            .add_partitions(3, &named("one"), producer, epoch2, &[0, 1])
            .await,
        vec![0, 0]
    );
}

#[tokio::test]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT (tools/kafka-broker/broker.sh start)"]
async fn a_real_kafka_broker_answers_the_same() {
    // The scenarios above that need no cluster internals, each assertion as written,
    // against Kafka: what they expect is what Kafka answers. Fresh names for each, as the
    // broker keeps topics, transactional ids and groups.
    let broker = live_broker().await;
    // A fresh broker creates `__transaction_state` at the first FindCoordinator and answers
    // the coordinator's APIs NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE until it is
    // loaded; clients retry them, and so does this, once.
    let mut warm = Client::connect(broker, "txn-live").await;
    tokio::time::timeout(support::GUARD, async {
        loop {
            let request = FindCoordinatorRequest::default()
                .with_key("warm-up".into())
                .with_key_type(1);
            let Response::FindCoordinator(found) = warm.call(3, request).await else {
                panic!("not FindCoordinator")
            };
            if found.error_code == 0 && warm.init(4, "warm-up", 60_000).await.0 == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a transaction coordinator before the guard");
    // Likewise the group coordinator (`__consumer_offsets`), which TxnOffsetCommit reaches:
    // COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS until it is loaded.
    tokio::time::timeout(support::GUARD, async {
        loop {
            let request = FindCoordinatorRequest::default()
                .with_key("warm-up".into())
                .with_key_type(0);
            let Response::FindCoordinator(found) = warm.call(3, request).await else {
                panic!("not FindCoordinator")
            };
            if found.error_code == 0 {
                let request = OffsetFetchRequest::default()
                    .with_group_id("warm-up".into())
                    .with_topics(None);
                let Response::OffsetFetch(fetched) = warm.call(7, request).await else {
                    panic!("not OffsetFetch")
                };
                if fetched.error_code == 0 {
                    return;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("a group coordinator before the guard");
    for (name, index) in [
        ("committed", 0),
        ("aborted", 1),
        ("version_2", 2),
        ("offsets", 3),
        ("fencing", 4),
        ("verify_only", 5),
    ] {
        let nanos = support::nanos();
        RUN.with(|run| *run.borrow_mut() = format!("-{name}-{nanos}"));
        let mut client = Client::connect(broker, "txn-live").await;
        client.create_topic(2).await;
        client.wait_for_leaders().await;
        eprintln!("scenario {name}");
        match index {
            0 => committed(&mut client).await,
            1 => aborted(&mut client).await,
            2 => version_2(&mut client).await,
            3 => offsets(&mut client).await,
            4 => fencing(&mut client).await,
            _ => verify_only(&mut client).await,
        }
    }
}

#[tokio::test]
async fn transactional_records_need_the_requests_transactional_id() {
    let (_cluster, mut client) = one_broker().await;
    let (_, producer, epoch) = client.init(4, "tx", 60_000).await;
    client.add_partitions(3, "tx", producer, epoch, &[0]).await;
    // Without it, Kafka refuses the request as unauthorized for the id it does not name.
    let request = support::produce(&topic(), 0, txn_batch(producer, epoch, 0, 1));
    let Response::Produce(body) = client.call(9, request).await else {
        panic!("not Produce")
    };
    assert_eq!(
        body.responses[0].partition_responses[0].error_code,
        code(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    );
    assert_eq!(client.latest(UNCOMMITTED).await, 0);
}

#[tokio::test]
async fn a_moved_transaction_coordinator_is_found_and_keeps_the_transaction() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let old = coordinator("tx", 3);
    let new = (old + 1) % 3;
    let address = |node: i32| cluster.brokers()[node as usize].address;
    let mut at_old = Client::connect(address(old), "old").await;
    at_old.create_topic(3).await;
    let (_, producer, epoch) = at_old.init(4, "tx", 60_000).await;
    assert_eq!(
        at_old.add_partitions(3, "tx", producer, epoch, &[0]).await,
        vec![0]
    );
    let control = cluster.control();
    assert_eq!(control.move_transaction_coordinator("tx", new), Ok(old));
    assert!(control.move_transaction_coordinator("nope", new).is_err());
    assert!(control.move_transaction_coordinator("tx", 7).is_err());
    let request = FindCoordinatorRequest::default()
        .with_key("tx".into())
        .with_key_type(1);
    let Response::FindCoordinator(found) = at_old.call(3, request).await else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.node_id, new);
    assert_eq!(
        at_old.end(3, "tx", producer, epoch, true).await.error_code,
        code(ErrorCode::NOT_COORDINATOR)
    );
    let mut at_new = Client::connect(address(new), "new").await;
    assert_eq!(
        at_new.describe("tx").await,
        (0, "Ongoing".into(), producer, epoch, vec![0])
    );
    assert_eq!(
        at_new.end(3, "tx", producer, epoch, true).await.error_code,
        0
    );
    assert_eq!(at_new.describe("tx").await.1, "CompleteCommit");
}
