//! Deterministic runs: an in-memory cluster (no sockets: `ClusterBuilder::in_memory`,
//! `Cluster::connect`) on a current-thread runtime with tokio's clock paused, ids from a
//! seed. A scenario with faults (an error on the n-th produce, a delay, a long poll, a moved
//! leader, an apply-then-disconnect, a stopped and restarted broker) runs 20 times and its
//! request log (every field but the wall-clock time) is the same, byte for byte, each time,
//! at the same simulated times. Group sessions (45 s, classic and KIP-848) run out in
//! simulated time too: the cluster reads "now" from tokio's clock (`kafka_codec_cluster::clock`).

use crate::support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::{
    ConsumerGroupHeartbeatRequest, CreateTopicsRequest, FetchRequest, FindCoordinatorRequest,
    HeartbeatRequest, MetadataRequest, ProduceRequest, SyncGroupRequest,
};
use kafka_codec::{ApiKey, ErrorCode, Response};
use kafka_codec_cluster::control::json::logged_to_json;
use kafka_codec_cluster::control::{Action, Match, Rule};
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::pipe::{paused, PipeClient as Client};

fn produce(partition: i32, first: usize) -> ProduceRequest {
    support::produce("events", partition, support::batch(first, 2))
}

fn produce_error(response: Option<Response>) -> i16 {
    match response {
        Some(Response::Produce(p)) => p.responses[0].partition_responses[0].error_code,
        other => panic!("not a Produce answer: {other:?}"),
    }
}

/// The coordinator of `group` (FindCoordinator v3).
async fn coordinator(client: &mut Client, group: &str) -> i32 {
    let Some(Response::FindCoordinator(found)) = client
        .answer(3, FindCoordinatorRequest::default().with_key(group.into()))
        .await
    else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.error_code, 0);
    found.node_id
}

/// A classic consumer member of `group` with a 45 s session (Kafka's default), joined and
/// synced at its coordinator: the connection, the generation and the member id.
async fn classic_member(cluster: &Cluster, group: &str) -> (Client, i32, String) {
    let mut any = Client::connect(cluster, 0);
    let mut client = Client::connect(cluster, coordinator(&mut any, group).await);
    let join = support::classic_join(group);
    let Some(Response::JoinGroup(joined)) = client.answer(3, join).await else {
        panic!("not JoinGroup")
    };
    assert_eq!(joined.error_code, 0);
    let member = joined.member_id.to_string();
    let sync = SyncGroupRequest::default()
        .with_group_id(group.into())
        .with_generation_id(joined.generation_id)
        .with_member_id(member.as_str().into());
    let Some(Response::SyncGroup(synced)) = client.answer(3, sync).await else {
        panic!("not SyncGroup")
    };
    assert_eq!(synced.error_code, 0);
    (client, joined.generation_id, member)
}

/// The error of a classic Heartbeat.
async fn heartbeat(client: &mut Client, group: &str, generation: i32, member: &str) -> i16 {
    let request = HeartbeatRequest::default()
        .with_group_id(group.into())
        .with_generation_id(generation)
        .with_member_id(member.into());
    let Some(Response::Heartbeat(answer)) = client.answer(3, request).await else {
        panic!("not Heartbeat")
    };
    answer.error_code
}

/// The error and epoch of a ConsumerGroupHeartbeat v1 of member `a` (epoch 0 joins).
async fn consumer_heartbeat(client: &mut Client, group: &str, epoch: i32) -> (i16, i32) {
    let mut request = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(group.into())
        .with_member_id("a".into())
        .with_member_epoch(epoch);
    if epoch == 0 {
        request = request
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec!["events".into()]))
            .with_topic_partitions(Some(Vec::new()));
    }
    let Some(Response::ConsumerGroupHeartbeat(answer)) = client.answer(1, request).await else {
        panic!("not ConsumerGroupHeartbeat")
    };
    (answer.error_code, answer.member_epoch)
}

/// The scenario, on a fresh runtime with its clock paused; the request log as text.
fn scenario(seed: u64) -> String {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .seed(seed)
            .idle_timeout(None)
            .rule(Rule::once(
                Match::api(ApiKey::Produce).nth(2),
                Action::Error(ErrorCode::NOT_LEADER_OR_FOLLOWER),
            ))
            .rule(Rule::once(
                Match::api(ApiKey::Metadata),
                Action::Delay(Duration::from_millis(250)),
            ))
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        let mut first = Client::connect(&cluster, 0);
        let Some(Response::CreateTopics(created)) = first
            .answer(
                7,
                CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
                    .with_name("events".into())
                    .with_num_partitions(2)
                    .with_replication_factor(1)]),
            )
            .await
        else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
        let metadata = MetadataRequest::default().with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some("events".into())),
        ]));
        // Delayed 250 ms of simulated time.
        first.answer(12, metadata.clone()).await.expect("Metadata");
        assert_eq!(produce_error(first.answer(9, produce(0, 0)).await), 0);
        // The 2nd produce fails once; the retry passes.
        assert_eq!(
            produce_error(first.answer(9, produce(0, 2)).await),
            ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
        );
        assert_eq!(produce_error(first.answer(9, produce(0, 2)).await), 0);
        // A long poll past the end waits its 500 ms out.
        let Some(Response::Fetch(_)) = first
            .answer(
                12,
                FetchRequest::default()
                    .with_max_wait_ms(500)
                    .with_min_bytes(1)
                    .with_max_bytes(1 << 20)
                    .with_topics(vec![FetchTopic::default()
                        .with_topic("events".into())
                        .with_partitions(vec![FetchPartition::default()
                            .with_partition(0)
                            .with_fetch_offset(4)
                            .with_partition_max_bytes(1 << 20)])]),
            )
            .await
        else {
            panic!("not Fetch")
        };
        // The leader moves; the old one refuses, the new one takes it.
        assert_eq!(control.move_leader("events", 0, 1), Ok(1));
        assert_eq!(
            produce_error(first.answer(9, produce(0, 4)).await),
            ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
        );
        let mut second = Client::connect(&cluster, 1);
        second.answer(12, metadata).await.expect("Metadata");
        control.add(Rule::once(
            Match::api(ApiKey::Produce).broker(1),
            Action::ApplyThen(Box::new(Action::Disconnect)),
        ));
        assert!(second.answer(9, produce(0, 4)).await.is_none());
        // Broker 1 stops and comes back; the client reconnects.
        control.stop_broker(1).expect("stop");
        assert!(cluster.connect(1).is_err());
        tokio::time::sleep(Duration::from_millis(100)).await;
        control.restart_broker(1).expect("restart");
        let mut again = Client::connect(&cluster, 1);
        assert_eq!(produce_error(again.answer(9, produce(0, 6)).await), 0);
        // A classic member's 45 s session runs out in simulated time; its next heartbeat is
        // refused.
        let (mut member, generation, id) = classic_member(&cluster, "g").await;
        tokio::time::sleep(Duration::from_secs(46)).await;
        assert_eq!(
            heartbeat(&mut member, "g", generation, &id).await,
            ErrorCode::UNKNOWN_MEMBER_ID.code()
        );
        control
            .log()
            .entries()
            .iter()
            .map(|entry| {
                let mut json = logged_to_json(entry);
                // The wall clock is the one thing a run cannot repeat.
                json.as_object_mut().expect("an object").remove("timeMs");
                json.to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

#[test]
fn twenty_runs_log_the_same_requests_at_the_same_simulated_times() {
    let first = scenario(7);
    for run in 1..20 {
        assert_eq!(scenario(7), first, "run {run} differs");
    }
    let entries: Vec<kafka_codec::serde_json::Value> = first
        .lines()
        .map(|line| kafka_codec::serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(entries.len(), 14, "{first}");
    let at = |i: usize| entries[i]["atMs"].as_f64().unwrap();
    // Simulated time: the delayed Metadata (entry 1) holds the connection 250 ms, the long
    // poll (entry 5) 500 ms, the stop 100 ms; nothing else takes any.
    assert_eq!(entries[1]["api"], "Metadata");
    assert_eq!(at(2) - at(1), 250.0);
    assert_eq!(entries[5]["api"], "Fetch");
    assert_eq!(at(6) - at(5), 500.0);
    assert_eq!(at(9) - at(8), 100.0);
    assert!(entries[3]["outcome"]
        .as_str()
        .unwrap()
        .contains("error NOT_LEADER_OR_FOLLOWER"));
    // The member's refused heartbeat comes 46 s after its SyncGroup.
    assert_eq!(entries[12]["api"], "SyncGroup");
    assert_eq!(entries[13]["api"], "Heartbeat");
    assert_eq!(at(13) - at(12), 46_000.0);
    // Another seed: other topic ids, the same requests.
    assert_eq!(scenario(8).lines().count(), entries.len());
}

/// A classic member's and a KIP-848 member's 45 s sessions (Kafka's defaults) each last 45 s
/// of simulated time, not less (a heartbeat at 44 s keeps each), and end without one: 180 s
/// of sessions on the paused clock. Before the cluster read tokio's clock, the group timer
/// woke at the simulated deadline, compared it with the real time and spun until 45 real
/// seconds had passed (this test took 45 s and failed its guard).
#[test]
fn sessions_expire_in_simulated_time() {
    let wall = std::time::Instant::now();
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(1)
            .in_memory()
            .seed(3)
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        let (mut classic, generation, id) = classic_member(&cluster, "classic").await;
        let mut any = Client::connect(&cluster, 0);
        let mut modern = Client::connect(&cluster, coordinator(&mut any, "modern").await);
        let (error, epoch) = consumer_heartbeat(&mut modern, "modern", 0).await;
        assert_eq!(error, 0);
        tokio::time::sleep(Duration::from_secs(44)).await;
        assert_eq!(heartbeat(&mut classic, "classic", generation, &id).await, 0);
        assert_eq!(consumer_heartbeat(&mut modern, "modern", epoch).await.0, 0);
        tokio::time::sleep(Duration::from_secs(46)).await;
        assert_eq!(
            heartbeat(&mut classic, "classic", generation, &id).await,
            ErrorCode::UNKNOWN_MEMBER_ID.code()
        );
        assert_eq!(
            consumer_heartbeat(&mut modern, "modern", epoch).await.0,
            ErrorCode::UNKNOWN_MEMBER_ID.code()
        );
    });
    // A hang guard, not a timing: 90 s of sessions must not take real time.
    assert!(
        wall.elapsed() < Duration::from_secs(30),
        "{:?}",
        wall.elapsed()
    );
}
