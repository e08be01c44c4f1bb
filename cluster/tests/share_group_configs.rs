//! A share group's own configs (ConfigResource GROUP, set with IncrementalAlterConfigs)
//! taking effect through this crate's own client: `share.auto.offset.reset` (latest, the
//! default; earliest; by_duration), `share.delivery.count.limit` and
//! `share.record.lock.duration.ms` for that group only, beside a group that sets none;
//! `share.isolation.level=read_committed` acquiring to the last stable offset, an aborted
//! transaction's records never delivered.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_codec::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic,
};
use kafka_codec::messages::{
    AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest, ShareFetchRequest,
    ShareFetchResponse, ShareGroupHeartbeatRequest,
};
use kafka_codec::records::{Compression, Record, RecordBatchBuilder};
use kafka_codec::{Response, Uuid};
use kafka_codec_cluster::configs::GROUP;
use kafka_codec_cluster::Cluster;
use support::{batch, produce, Client};

const RELEASE: i8 = 2;

impl Client {
    async fn set_group_configs(&mut self, group: &str, configs: &[(&str, &str)]) {
        let set: Vec<_> = configs
            .iter()
            .map(|(name, value)| (*name, 0, Some(*value)))
            .collect();
        let (error_code, message) = self
            .incremental_alter_configs(1, GROUP, group, &set, false)
            .await;
        assert_eq!(error_code, 0, "{message:?}");
    }

    /// Joins `member` to share group `group` subscribed to `topic`; the heartbeat interval
    /// answered.
    async fn join_share_group(&mut self, group: &str, member: &str, topic: &str) -> i32 {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(group.into())
            .with_member_id(member.into())
            .with_member_epoch(0)
            .with_subscribed_topic_names(Some(vec![topic.into()]));
        let Response::ShareGroupHeartbeat(joined) = self.call(1, request).await else {
            panic!("not ShareGroupHeartbeat")
        };
        assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
        joined.heartbeat_interval_ms
    }

    /// A ShareFetch of partition 0 of `topic` (no wait), carrying `acks`.
    async fn share_fetch_once(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
        topic: Uuid,
        acks: &[(i64, i64, i8)],
    ) -> ShareFetchResponse {
        let request = ShareFetchRequest::default()
            .with_group_id(Some(group.into()))
            .with_member_id(Some(member.into()))
            .with_share_session_epoch(epoch)
            .with_max_wait_ms(0)
            .with_min_bytes(1)
            .with_max_bytes(1 << 20)
            .with_max_records(500)
            .with_batch_size(500)
            .with_topics(vec![FetchTopic::default()
                .with_topic_id(topic)
                .with_partitions(vec![FetchPartition::default()
                    .with_partition_index(0)
                    .with_acknowledgement_batches(
                        acks.iter()
                            .map(|(first, last, kind)| {
                                AcknowledgementBatch::default()
                                    .with_first_offset(*first)
                                    .with_last_offset(*last)
                                    .with_acknowledge_types(vec![*kind].into())
                            })
                            .collect(),
                    )])]);
        let Response::ShareFetch(answer) = self.call(1, request).await else {
            panic!("not ShareFetch")
        };
        assert_eq!(answer.error_code, 0, "{:?}", answer.error_message);
        answer
    }
}

/// The acquired ranges (first, last, delivery count) of the answer's only partition.
fn acquired(answer: &ShareFetchResponse) -> Vec<(i64, i64, i16)> {
    answer
        .responses
        .iter()
        .flat_map(|t| t.partitions.iter())
        .flat_map(|p| p.acquired_records.iter())
        .map(|r| (r.first_offset, r.last_offset, r.delivery_count))
        .collect()
}

async fn cluster_with_topic(name: &str) -> (Cluster, Client, Uuid) {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "share-configs").await;
    let id = support::create_topic(&mut client, name).await;
    (cluster, client, id)
}

/// Two records stamped now (the helper's batches are stamped in 2023).
fn fresh_batch() -> Bytes {
    let now = support::now_ms();
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for i in 0..2 {
        builder.append_record(Record {
            offset: i,
            timestamp: now,
            value: Some(Bytes::from(format!("fresh-{i}"))),
            ..Record::default()
        });
    }
    builder.build().encode_to_bytes().expect("a batch")
}

#[tokio::test]
async fn the_groups_reset_strategy_says_where_its_share_partition_starts() {
    let (_cluster, mut client, topic) = cluster_with_topic("t").await;
    let Response::Produce(_) = client.call(9, produce("t", 0, batch(0, 5))).await else {
        panic!("not Produce")
    };
    let Response::Produce(_) = client.call(9, produce("t", 0, fresh_batch())).await else {
        panic!("not Produce")
    };
    // 5 records stamped in 2023 (offsets 0-4), then 2 stamped now (5-6).
    client
        .set_group_configs("earliest", &[("share.auto.offset.reset", "earliest")])
        .await;
    client
        .set_group_configs("hour", &[("share.auto.offset.reset", "by_duration:PT1H")])
        .await;
    client
        .set_group_configs("latest", &[("share.auto.offset.reset", "latest")])
        .await;
    let mut seen = Vec::new();
    for group in ["default", "latest", "earliest", "hour"] {
        client.join_share_group(group, "m", "t").await;
        let answer = client.share_fetch_once(group, "m", 0, topic, &[]).await;
        seen.push((group, acquired(&answer)));
    }
    assert_eq!(
        seen,
        [
            ("default", vec![]),
            ("latest", vec![]),
            ("earliest", vec![(0, 6, 1)]),
            ("hour", vec![(5, 6, 1)]),
        ]
    );
}

#[tokio::test]
async fn a_groups_delivery_count_limit_and_lock_duration_are_its_own() {
    let (_cluster, mut client, topic) = cluster_with_topic("t").await;
    client
        .set_group_configs(
            "short",
            &[
                ("share.delivery.count.limit", "2"),
                ("share.record.lock.duration.ms", "15000"),
                ("share.auto.offset.reset", "earliest"),
            ],
        )
        .await;
    client
        .set_group_configs("usual", &[("share.auto.offset.reset", "earliest")])
        .await;
    let Response::Produce(_) = client.call(9, produce("t", 0, batch(0, 1))).await else {
        panic!("not Produce")
    };
    for (group, deliveries, lock_ms) in [("short", 2, 15000), ("usual", 5, 30000)] {
        client.join_share_group(group, "m", "t").await;
        let mut answer = client.share_fetch_once(group, "m", 0, topic, &[]).await;
        assert_eq!(answer.acquisition_lock_timeout_ms, lock_ms, "{group}");
        let mut counts = Vec::new();
        for epoch in 1..=6 {
            let got = acquired(&answer);
            if got.is_empty() {
                break;
            }
            counts.push(got[0].2);
            // Released: delivered again until the group's limit, then archived.
            answer = client
                .share_fetch_once(group, "m", epoch, topic, &[(0, 0, RELEASE)])
                .await;
        }
        let expected: Vec<i16> = (1..=deliveries).collect();
        assert_eq!(counts, expected, "{group}");
    }
}

/// A transactional batch of `count` records of `producer` at `epoch` from `sequence`.
fn txn_batch(producer: i64, epoch: i16, sequence: i32, count: usize) -> Bytes {
    support::txn_batch(producer, epoch, sequence, count, "txn")
}

impl Client {
    /// A transaction of `count` records to partition 0 of `topic`, ended (`Some(commit)`) or
    /// left open (`None`).
    async fn transaction(
        &mut self,
        producer: (i64, i16),
        sequence: i32,
        count: usize,
        topic: &str,
        end: Option<bool>,
    ) {
        let (id, epoch) = producer;
        let add = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id("tx".into())
            .with_v3_and_below_producer_id(id)
            .with_v3_and_below_producer_epoch(epoch)
            .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(topic.into())
                .with_partitions(vec![0].into())]);
        let Response::AddPartitionsToTxn(_) = self.call(3, add).await else {
            panic!("not AddPartitionsToTxn")
        };
        let request = produce(topic, 0, txn_batch(id, epoch, sequence, count))
            .with_transactional_id(Some("tx".into()));
        let Response::Produce(produced) = self.call(9, request).await else {
            panic!("not Produce")
        };
        assert_eq!(produced.responses[0].partition_responses[0].error_code, 0);
        if let Some(commit) = end {
            let request = EndTxnRequest::default()
                .with_transactional_id("tx".into())
                .with_producer_id(id)
                .with_producer_epoch(epoch)
                .with_committed(commit);
            let Response::EndTxn(ended) = self.call(3, request).await else {
                panic!("not EndTxn")
            };
            assert_eq!(ended.error_code, 0);
        }
    }
}

#[tokio::test]
async fn read_committed_groups_acquire_to_the_last_stable_offset_and_skip_aborted_records() {
    let (_cluster, mut client, topic) = cluster_with_topic("t").await;
    let init = InitProducerIdRequest::default()
        .with_transactional_id(Some("tx".into()))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(-1)
        .with_producer_epoch(-1);
    let Response::InitProducerId(init) = client.call(4, init).await else {
        panic!("not InitProducerId")
    };
    let producer = (init.producer_id, init.producer_epoch);
    // Offsets 0-1 aborted (marker at 2), 3-4 committed (marker at 5), 6 still open.
    client.transaction(producer, 0, 2, "t", Some(false)).await;
    client.transaction(producer, 2, 2, "t", Some(true)).await;
    client.transaction(producer, 4, 1, "t", None).await;
    let earliest = ("share.auto.offset.reset", "earliest");
    client
        .set_group_configs(
            "committed",
            &[earliest, ("share.isolation.level", "read_committed")],
        )
        .await;
    client.set_group_configs("uncommitted", &[earliest]).await;
    let mut seen = Vec::new();
    for group in ["committed", "uncommitted"] {
        client.join_share_group(group, "m", "t").await;
        let answer = client.share_fetch_once(group, "m", 0, topic, &[]).await;
        seen.push((group, acquired(&answer)));
    }
    assert_eq!(
        seen,
        [
            ("committed", vec![(2, 5, 1)]),
            ("uncommitted", vec![(0, 6, 1)]),
        ]
    );
}

#[tokio::test]
async fn a_groups_heartbeat_interval_is_answered_to_its_members() {
    let (_cluster, mut client, _) = cluster_with_topic("t").await;
    client
        .set_group_configs("slow", &[("share.heartbeat.interval.ms", "6000")])
        .await;
    assert_eq!(client.join_share_group("slow", "m", "t").await, 6000);
    assert_eq!(client.join_share_group("usual", "m", "t").await, 5000);
}

#[tokio::test]
async fn a_groups_record_lock_limit_stops_acquisition() {
    let (_cluster, mut client, topic) = cluster_with_topic("t").await;
    // The least Kafka takes (group.share.min.partition.max.record.locks).
    client
        .set_group_configs(
            "few",
            &[
                ("share.partition.max.record.locks", "100"),
                ("share.auto.offset.reset", "earliest"),
            ],
        )
        .await;
    client
        .set_group_configs("usual", &[("share.auto.offset.reset", "earliest")])
        .await;
    // 200 records in batches of 10.
    for first in (0..200).step_by(10) {
        let Response::Produce(_) = client.call(9, produce("t", 0, batch(first, 10))).await else {
            panic!("not Produce")
        };
    }
    client.join_share_group("few", "m", "t").await;
    let answer = client.share_fetch_once("few", "m", 0, topic, &[]).await;
    assert_eq!(acquired(&answer), [(0, 99, 1)]);
    // At the limit: nothing more while those are held.
    let answer = client.share_fetch_once("few", "m", 1, topic, &[]).await;
    assert_eq!(acquired(&answer), []);
    // Accepted, they free the locks for the rest.
    let answer = client
        .share_fetch_once("few", "m", 2, topic, &[(0, 99, 1)])
        .await;
    assert_eq!(acquired(&answer), [(100, 199, 1)]);
    // A group with the cluster's limit (2000) takes all 200 at once.
    client.join_share_group("usual", "m", "t").await;
    let answer = client.share_fetch_once("usual", "m", 0, topic, &[]).await;
    assert_eq!(acquired(&answer), [(0, 199, 1)]);
}

#[tokio::test]
async fn a_group_without_renew_acknowledgements_refuses_them() {
    const RENEW: i8 = 4;
    const INVALID_RECORD_STATE: i16 = 121;
    let (_cluster, mut client, topic) = cluster_with_topic("t").await;
    client
        .set_group_configs(
            "no-renew",
            &[
                ("share.renew.acknowledge.enable", "false"),
                ("share.auto.offset.reset", "earliest"),
            ],
        )
        .await;
    client
        .set_group_configs("usual", &[("share.auto.offset.reset", "earliest")])
        .await;
    let Response::Produce(_) = client.call(9, produce("t", 0, batch(0, 2))).await else {
        panic!("not Produce")
    };
    for (group, expected) in [("no-renew", INVALID_RECORD_STATE), ("usual", 0)] {
        client.join_share_group(group, "m", "t").await;
        let answer = client.share_fetch_once(group, "m", 0, topic, &[]).await;
        assert_eq!(acquired(&answer), [(0, 1, 1)], "{group}");
        // ShareFetch v2 renewing the lock of both records (IsRenewAck: it only acknowledges).
        let renew = ShareFetchRequest::default()
            .with_group_id(Some(group.into()))
            .with_member_id(Some("m".into()))
            .with_share_session_epoch(1)
            .with_max_wait_ms(0)
            .with_max_bytes(1 << 20)
            .with_max_records(500)
            .with_batch_size(500)
            .with_is_renew_ack(true)
            .with_topics(vec![FetchTopic::default()
                .with_topic_id(topic)
                .with_partitions(vec![FetchPartition::default()
                    .with_partition_index(0)
                    .with_acknowledgement_batches(vec![
                        AcknowledgementBatch::default()
                            .with_first_offset(0)
                            .with_last_offset(1)
                            .with_acknowledge_types(vec![RENEW].into()),
                    ])])]);
        let Response::ShareFetch(answer) = client.call(2, renew).await else {
            panic!("not ShareFetch")
        };
        let partition = &answer.responses[0].partitions[0];
        assert_eq!(partition.acknowledge_error_code, expected, "{group}");
        // Refused, the records stay acquired (nothing else changed): accepting them works.
        let answer = client
            .share_fetch_once(group, "m", 2, topic, &[(0, 1, 1)])
            .await;
        assert_eq!(
            answer.responses[0].partitions[0].acknowledge_error_code, 0,
            "{group}"
        );
    }
}
