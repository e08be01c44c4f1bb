//! A coordinator whose internal partitions have no leader: with
//! `offsets.topic.replication.factor` (and `transaction.state.log.replication.factor`) 1, the
//! `__consumer_offsets` and `__transaction_state` partitions of a stopped broker have no other
//! replica, so once its session ends and it is fenced nobody coordinates its groups and
//! transactional ids. FindCoordinator answers COORDINATOR_NOT_AVAILABLE (Kafka's `KafkaApis`
//! finds no live leader), the group and transaction APIs NOT_COORDINATOR; after a restart
//! the broker coordinates them again with their offsets. On tokio's paused clock (the 9 s
//! broker session passes in simulated time), over the in-memory transport.

use crate::support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_codec::messages::{
    CreateTopicsRequest, FindCoordinatorRequest, FindCoordinatorResponse, InitProducerIdRequest,
    OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest,
};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::classic_join;
use support::pipe::{paused, PipeClient as Client};

/// The first of `prefix0`, `prefix1`, ... Kafka's hash places on broker `node` of `brokers`.
fn key_on(prefix: &str, node: i32, brokers: usize) -> String {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .find(|key| kafka_codec_cluster::groups::coordinator(key, brokers) == node)
        .expect("a key")
}

async fn find(client: &mut Client, version: i16, key_type: i8, key: &str) -> (i16, i32, String) {
    // v0 knows groups only (its key type is absent, 0).
    let request = if key_type == 0 {
        FindCoordinatorRequest::default()
    } else {
        FindCoordinatorRequest::default().with_key_type(key_type)
    };
    let request = if version >= 4 {
        request.with_coordinator_keys(vec![key.into()])
    } else {
        request.with_key(key.into())
    };
    let Some(Response::FindCoordinator(found)) = client.answer(version, request).await else {
        panic!("not FindCoordinator")
    };
    let FindCoordinatorResponse {
        coordinators,
        error_code,
        node_id,
        host,
        ..
    } = found;
    match coordinators.first() {
        Some(c) if version >= 4 => (c.error_code, c.node_id, c.host.to_string()),
        _ => (error_code, node_id, host.to_string()),
    }
}

/// The committed offset of `events`-0 (`None`: the request failed, with its error).
async fn committed(client: &mut Client, group: &str) -> Result<i64, i16> {
    let request = OffsetFetchRequest::default()
        .with_group_id(group.into())
        .with_topics(Some(vec![OffsetFetchRequestTopic::default()
            .with_name("events".into())
            .with_partition_indexes(vec![0].into())]));
    let Some(Response::OffsetFetch(fetched)) = client.answer(3, request).await else {
        panic!("not OffsetFetch")
    };
    if fetched.error_code != 0 {
        return Err(fetched.error_code);
    }
    Ok(fetched.topics[0].partitions[0].committed_offset)
}

#[test]
fn a_coordinator_without_a_leader_is_not_available_until_its_broker_returns() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .seed(5)
            .idle_timeout(None)
            .broker_config("offsets.topic.replication.factor", "1")
            .broker_config("transaction.state.log.replication.factor", "1")
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        let group = key_on("group-", 1, 2);
        let transactional_id = key_on("txn-", 1, 2);
        let mut zero = Client::connect(&cluster, 0);
        let topic = CreatableTopic::default()
            .with_name("events".into())
            .with_num_partitions(1)
            .with_replication_factor(1);
        let Some(Response::CreateTopics(created)) = zero
            .answer(7, CreateTopicsRequest::default().with_topics(vec![topic]))
            .await
        else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
        assert_eq!(find(&mut zero, 3, 0, &group).await.1, 1);
        // A member at broker 1 commits offset 5 of events-0.
        let mut one = Client::connect(&cluster, 1);
        let Some(Response::JoinGroup(joined)) = one.answer(3, classic_join(&group)).await else {
            panic!("not JoinGroup")
        };
        assert_eq!(joined.error_code, 0);
        let sync = SyncGroupRequest::default()
            .with_group_id(group.as_str().into())
            .with_generation_id(joined.generation_id)
            .with_member_id(joined.member_id.clone());
        let Some(Response::SyncGroup(synced)) = one.answer(3, sync).await else {
            panic!("not SyncGroup")
        };
        assert_eq!(synced.error_code, 0);
        let commit = OffsetCommitRequest::default()
            .with_group_id(group.as_str().into())
            .with_generation_id_or_member_epoch(joined.generation_id)
            .with_member_id(joined.member_id.clone())
            .with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name("events".into())
                .with_partitions(vec![OffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(5)])]);
        let Some(Response::OffsetCommit(done)) = one.answer(3, commit).await else {
            panic!("not OffsetCommit")
        };
        assert_eq!(done.topics[0].partitions[0].error_code, 0);
        assert_eq!(committed(&mut one, &group).await, Ok(5));

        // Broker 1 stops; its session (9 s) ends and it is fenced with no replica to take
        // over its internal partitions.
        control.stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(control.is_fenced(1));
        let unavailable = ErrorCode::COORDINATOR_NOT_AVAILABLE.code();
        for version in [0, 3, 4, 6] {
            for (key_type, key) in [(0, &group), (1, &transactional_id)] {
                if version == 0 && key_type == 1 {
                    continue;
                }
                let answer = find(&mut zero, version, key_type, key).await;
                assert_eq!(answer, (unavailable, -1, String::new()), "v{version} {key}");
            }
        }
        // The live broker does not coordinate them.
        let not_coordinator = ErrorCode::NOT_COORDINATOR.code();
        assert_eq!(committed(&mut zero, &group).await, Err(not_coordinator));
        let Some(Response::JoinGroup(refused)) = zero.answer(3, classic_join(&group)).await else {
            panic!("not JoinGroup")
        };
        assert_eq!(refused.error_code, not_coordinator);
        let init = InitProducerIdRequest::default()
            .with_transactional_id(Some(transactional_id.as_str().into()))
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(-1)
            .with_producer_epoch(-1);
        let Some(Response::InitProducerId(refused)) = zero.answer(4, init.clone()).await else {
            panic!("not InitProducerId")
        };
        assert_eq!(refused.error_code, not_coordinator);
        // A group broker 0 coordinates is unaffected.
        let own = key_on("group-", 0, 2);
        assert_eq!(
            find(&mut zero, 3, 0, &own).await,
            (0, 0, "127.0.0.1".into())
        );

        // Broker 1 comes back and leads its internal partitions again: the group, its
        // offsets and the transactional id are there.
        control.restart_broker(1).expect("restart");
        assert!(!control.is_fenced(1));
        assert_eq!(find(&mut zero, 4, 0, &group).await.0, 0);
        assert_eq!(find(&mut zero, 4, 0, &group).await.1, 1);
        assert_eq!(find(&mut zero, 3, 1, &transactional_id).await.1, 1);
        let mut back = Client::connect(&cluster, 1);
        assert_eq!(committed(&mut back, &group).await, Ok(5));
        let Some(Response::InitProducerId(initialised)) = back.answer(4, init).await else {
            panic!("not InitProducerId")
        };
        assert_eq!(initialised.error_code, 0);
    });
}

/// With Kafka's default (3 replicas), another broker takes the fenced coordinator's
/// internal partitions over: FindCoordinator names it.
#[test]
fn a_fenced_coordinator_with_another_replica_moves_to_it() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        let group = key_on("group-", 1, 2);
        cluster.control().stop_broker(1).expect("stop");
        tokio::time::sleep(Duration::from_secs(10)).await;
        let mut zero = Client::connect(&cluster, 0);
        assert_eq!(
            find(&mut zero, 4, 0, &group).await,
            (0, 0, "127.0.0.1".into())
        );
    });
}

/// The two internal topics are placed alike: different replication factors are refused.
#[test]
fn different_internal_replication_factors_are_refused() {
    paused().block_on(async {
        let built = Cluster::builder()
            .brokers(2)
            .in_memory()
            .broker_config("offsets.topic.replication.factor", "1")
            .build()
            .await;
        let Err(refused) = built else {
            panic!("built with different factors")
        };
        assert!(refused
            .to_string()
            .contains("transaction.state.log.replication.factor (3)"));
    });
}
