//! The control surface through this crate's own client connection over TCP: each action of
//! a fault rule, each way of matching, the request log, and the cluster operations (stop and
//! restart a broker, latency, move a leader), in process and over HTTP.

use crate::support;

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::ClientConnection;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::{
    ApiVersionsRequest, FetchRequest, FindCoordinatorRequest, InitProducerIdRequest,
    JoinGroupRequest, MetadataRequest, MetadataResponse, SyncGroupRequest,
};
use kafka_codec::records::{BatchReader, Compression, Record, RecordBatchBuilder};
use kafka_codec::serde_json::json;
use kafka_codec::{ApiKey, ErrorCode, Request, Response};
use kafka_codec_cluster::control::{Action, Match, OperationError, Rule};
use kafka_codec_cluster::Cluster;
use std::time::{Duration, Instant};
use support::{batch, http, produce, Client, Outcome, GUARD};
use tokio::net::TcpStream;

fn fetch(topic: &str, partition: i32, offset: i64, epoch: i32) -> FetchRequest {
    FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic.into())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_current_leader_epoch(epoch)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1 << 20)])])
}

fn metadata(topic: &str) -> MetadataRequest {
    MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some(topic.into()))
    ]))
}

async fn cluster_with_topic(brokers: usize, partitions: i32) -> Cluster {
    support::cluster_with_topic(brokers, partitions, "faults-test").await
}

async fn api_versions(client: &mut Client, version: i16) -> i16 {
    let body = ApiVersionsRequest::default()
        .with_client_software_name("t".into())
        .with_client_software_version("1".into());
    let Response::ApiVersions(answer) = client.call(version, body).await else {
        panic!("not ApiVersions")
    };
    answer.error_code
}

fn produce_error(response: &Response) -> i16 {
    let Response::Produce(produced) = response else {
        panic!("not Produce: {response:?}")
    };
    produced.responses[0].partition_responses[0].error_code
}

fn fetched(response: &Response) -> (i16, Bytes) {
    let Response::Fetch(fetched) = response else {
        panic!("not Fetch: {response:?}")
    };
    let partition = &fetched.responses[0].partitions[0];
    (
        partition.error_code,
        partition.records.clone().unwrap_or_default(),
    )
}

/// The offsets of the records fetched from partition 0 from offset 0.
async fn offsets_held(client: &mut Client) -> Vec<i64> {
    let (error, records) = fetched(&client.call(12, fetch("events", 0, 0, -1)).await);
    assert_eq!(error, 0);
    BatchReader::new(records)
        .flat_map(|batch| {
            let batch = batch.expect("a batch");
            let header = *batch.header();
            header.base_offset..=header.base_offset + i64::from(header.last_offset_delta)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_rule_answers_in_the_apis_own_field_once() {
    let cluster = cluster_with_topic(1, 1).await;
    let control = cluster.control();
    control.add(Rule::once(
        Match::api(ApiKey::Produce),
        Action::Error(ErrorCode::NOT_LEADER_OR_FOLLOWER),
    ));
    // Per topic for Metadata (its only error field the request reaches).
    control.add(Rule::once(
        Match::api(ApiKey::Metadata),
        Action::Error(ErrorCode::LEADER_NOT_AVAILABLE),
    ));
    let mut client = Client::connect(cluster.brokers()[0].address, "faults-test").await;
    let failed = client.call(9, produce("events", 0, batch(0, 3))).await;
    assert_eq!(
        produce_error(&failed),
        ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
    );
    // The error answer had no effect: nothing was written; the next produce passes.
    assert!(offsets_held(&mut client).await.is_empty());
    assert_eq!(
        produce_error(&client.call(9, produce("events", 0, batch(0, 3))).await),
        0
    );
    assert_eq!(offsets_held(&mut client).await, [0, 1, 2]);
    let Response::Metadata(meta) = client.call(12, metadata("events")).await else {
        panic!("not Metadata")
    };
    assert_eq!(meta.topics.len(), 1);
    assert_eq!(
        meta.topics[0].error_code,
        ErrorCode::LEADER_NOT_AVAILABLE.code()
    );
    assert_eq!(meta.topics[0].name.as_deref(), Some("events"));
    assert!(control.rules_in_force().is_empty(), "both rules were spent");

    // The log saw every request, with the rule's doing.
    let log = control.log();
    assert_eq!(log.count(ApiKey::Produce), 2);
    let produces = log.of(ApiKey::Produce);
    assert!(produces[0].outcome.contains("error NOT_LEADER_OR_FOLLOWER"));
    assert_eq!(produces[1].outcome, "answered");
    assert_eq!(produces[0].client_id.as_deref(), Some("faults-test"));
    assert_eq!(produces[0].version, 9);
    assert_eq!(produces[0].node_id, 0);
    assert_eq!(produces[0].connection, produces[1].connection);
    assert!(produces[0].correlation_id < produces[1].correlation_id);
    assert!(produces[0].at <= produces[1].at);
    assert!(matches!(
        &produces[0].request.body,
        Request::Produce(p) if p.topic_data[0].name.as_str() == "events"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_match_by_broker_client_version_call_and_predicate() {
    let cluster = cluster_with_topic(2, 2).await;
    let control = cluster.control();
    let error = |code: ErrorCode| Action::Error(code);
    // Only the 3rd ApiVersions v3 from client "c" to broker 1 on any connection.
    control.add(Rule::once(
        Match::api(ApiKey::ApiVersions)
            .versions(3, 3)
            .broker(1)
            .client_id("c")
            .nth(3),
        error(ErrorCode::CLUSTER_AUTHORIZATION_FAILED),
    ));
    // Produces to partition 1 only, by a predicate over the decoded request.
    control.add(Rule::always(
        Match::api(ApiKey::Produce).when(|request| {
            matches!(&request.body, Request::Produce(p)
                if p.topic_data.iter().any(|t| t.partition_data.iter().any(|d| d.index == 1)))
        }),
        error(ErrorCode::KAFKA_STORAGE_ERROR),
    ));
    let b0 = cluster.brokers()[0].address;
    let b1 = cluster.brokers()[1].address;
    let mut other_client = Client::connect(b1, "d").await;
    let mut on_b0 = Client::connect(b0, "c").await;
    let mut on_b1 = Client::connect(b1, "c").await;
    // Not counted: another client, another broker, another version.
    assert_eq!(api_versions(&mut other_client, 3).await, 0);
    assert_eq!(api_versions(&mut on_b0, 3).await, 0);
    assert_eq!(api_versions(&mut on_b1, 2).await, 0);
    // The 1st and 2nd matching pass, the 3rd fails, the 4th passes (once).
    assert_eq!(api_versions(&mut on_b1, 3).await, 0);
    assert_eq!(api_versions(&mut on_b1, 3).await, 0);
    assert_eq!(
        api_versions(&mut on_b1, 3).await,
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED.code()
    );
    assert_eq!(api_versions(&mut on_b1, 3).await, 0);

    // Partition 0 is led by broker 0, partition 1 by broker 1.
    assert_eq!(
        produce_error(&on_b0.call(9, produce("events", 0, batch(0, 1))).await),
        0
    );
    assert_eq!(
        produce_error(&on_b1.call(9, produce("events", 1, batch(0, 1))).await),
        ErrorCode::KAFKA_STORAGE_ERROR.code()
    );

    // By connection: the id the log gave this connection.
    let connection = control.log().of(ApiKey::Produce)[0].connection;
    control.clear();
    control.add(Rule::always(
        Match::any().connection(connection),
        Action::Error(ErrorCode::THROTTLING_QUOTA_EXCEEDED),
    ));
    assert_eq!(
        produce_error(&on_b0.call(9, produce("events", 0, batch(1, 1))).await),
        ErrorCode::THROTTLING_QUOTA_EXCEEDED.code()
    );
    let mut fresh = Client::connect(b0, "faults-test").await;
    assert_eq!(
        produce_error(&fresh.call(9, produce("events", 0, batch(1, 1))).await),
        0
    );
    let rules = control.rules_in_force();
    assert_eq!((rules[0].matched, rules[0].acted), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_disconnect_silence_and_respond() {
    let cluster = cluster_with_topic(1, 1).await;
    let control = cluster.control();
    let address = cluster.brokers()[0].address;

    // Delay: answered, no sooner than asked (a lower bound only; a sleep never ends early).
    control.add(Rule::once(
        Match::api(ApiKey::Metadata),
        Action::Delay(Duration::from_millis(200)),
    ));
    let mut client = Client::connect(address, "faults-test").await;
    let started = Instant::now();
    let Response::Metadata(meta) = client.call(12, metadata("events")).await else {
        panic!("not Metadata")
    };
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(meta.topics[0].error_code, 0);

    // Delay then disconnect.
    control.add(Rule::once(
        Match::api(ApiKey::Metadata),
        Action::DelayThen(Duration::from_millis(100), Box::new(Action::Disconnect)),
    ));
    let started = Instant::now();
    assert!(matches!(
        client.send(12, metadata("events"), GUARD).await,
        Outcome::Closed
    ));
    assert!(started.elapsed() >= Duration::from_millis(100));

    // Disconnect: the connection closes without an answer.
    control.add(Rule::once(Match::api(ApiKey::Metadata), Action::Disconnect));
    let mut client = Client::connect(address, "faults-test").await;
    assert!(matches!(
        client.send(12, metadata("events"), GUARD).await,
        Outcome::Closed
    ));

    // Silence: no answer, and the connection stays open.
    control.add(Rule::once(Match::api(ApiKey::Metadata), Action::Silence));
    let mut client = Client::connect(address, "faults-test").await;
    assert!(matches!(
        client
            .send(12, metadata("events"), Duration::from_millis(300))
            .await,
        Outcome::Nothing
    ));
    let entries = control.log().of(ApiKey::Metadata);
    assert!(entries.last().unwrap().outcome.ends_with("silence"));

    // Respond: the response the test built, at the request's version.
    let built = MetadataResponse::default()
        .with_cluster_id(Some("built-by-the-test".into()))
        .with_controller_id(7);
    control.add(Rule::once(
        Match::api(ApiKey::Metadata),
        Action::Respond(Box::new(built.into())),
    ));
    let mut client = Client::connect(address, "faults-test").await;
    let Response::Metadata(meta) = client.call(12, metadata("events")).await else {
        panic!("not Metadata")
    };
    assert_eq!(meta.cluster_id.as_deref(), Some("built-by-the-test"));
    assert_eq!(meta.controller_id, 7);
    assert!(meta.topics.is_empty());

    // The same from JSON, read at the request's version.
    control.add(Rule::once(
        Match::api(ApiKey::Metadata),
        Action::RespondJson(json!({
            "throttleTimeMs": 5, "brokers": [], "clusterId": "from-json", "controllerId": 3,
            "topics": []
        })),
    ));
    let Response::Metadata(meta) = client.call(12, metadata("events")).await else {
        panic!("not Metadata")
    };
    assert_eq!(
        (meta.cluster_id.as_deref(), meta.throttle_time_ms),
        (Some("from-json"), 5)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_records_fail_the_crc_with_framing_intact() {
    let cluster = cluster_with_topic(1, 1).await;
    let control = cluster.control();
    let mut client = Client::connect(cluster.brokers()[0].address, "faults-test").await;
    for first in [0, 3] {
        assert_eq!(
            produce_error(&client.call(9, produce("events", 0, batch(first, 3))).await),
            0
        );
    }
    control.add(Rule::once(
        Match::api(ApiKey::Fetch),
        Action::CorruptRecords,
    ));
    let (error, corrupt) = fetched(&client.call(12, fetch("events", 0, 0, -1)).await);
    assert_eq!(error, 0);
    let (_, clean) = fetched(&client.call(12, fetch("events", 0, 0, -1)).await);
    assert_eq!(corrupt.len(), clean.len());
    let corrupt: Vec<_> = BatchReader::new(corrupt).map(|b| b.unwrap()).collect();
    let clean: Vec<_> = BatchReader::new(clean).map(|b| b.unwrap()).collect();
    assert_eq!(corrupt.len(), 2);
    for (bad, good) in corrupt.iter().zip(&clean) {
        assert_eq!(bad.header().base_offset, good.header().base_offset);
        assert_eq!(bad.header().records_count, good.header().records_count);
        assert!(good.verify_crc().is_ok());
        assert!(bad.verify_crc().is_err(), "the CRC must fail");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_then_takes_effect_and_loses_or_fails_the_answer() {
    let cluster = cluster_with_topic(1, 1).await;
    let control = cluster.control();
    let address = cluster.brokers()[0].address;
    // Written, then the connection drops: the client cannot know.
    control.add(Rule::once(
        Match::api(ApiKey::Produce),
        Action::ApplyThen(Box::new(Action::Disconnect)),
    ));
    let mut client = Client::connect(address, "faults-test").await;
    assert!(matches!(
        client
            .send(9, produce("events", 0, batch(0, 2)), GUARD)
            .await,
        Outcome::Closed
    ));
    let mut client = Client::connect(address, "faults-test").await;
    assert_eq!(offsets_held(&mut client).await, [0, 1]);
    // Written, then an error answer: a retry would write it again.
    control.add(Rule::once(
        Match::api(ApiKey::Produce),
        Action::ApplyThen(Box::new(Action::Error(ErrorCode::REQUEST_TIMED_OUT))),
    ));
    assert_eq!(
        produce_error(&client.call(9, produce("events", 0, batch(2, 2))).await),
        ErrorCode::REQUEST_TIMED_OUT.code()
    );
    assert_eq!(offsets_held(&mut client).await, [0, 1, 2, 3]);
    // Written, answered late.
    control.add(Rule::once(
        Match::api(ApiKey::Produce),
        Action::ApplyThen(Box::new(Action::Delay(Duration::from_millis(150)))),
    ));
    let started = Instant::now();
    assert_eq!(
        produce_error(&client.call(9, produce("events", 0, batch(4, 1))).await),
        0
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(offsets_held(&mut client).await, [0, 1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_broker_refuses_and_drops_connections_until_restarted() {
    let cluster = cluster_with_topic(2, 2).await;
    let control = cluster.control();
    let address = cluster.brokers()[1].address;
    let mut client = Client::connect(address, "faults-test").await;
    assert_eq!(
        produce_error(&client.call(9, produce("events", 1, batch(0, 2))).await),
        0
    );
    control.stop_broker(1).unwrap();
    assert!(!control.is_up(1));
    // The open connection is dropped.
    assert!(matches!(
        client.send(12, metadata("events"), GUARD).await,
        Outcome::Closed
    ));
    // New ones are refused (the listener is closed; give the accept loop a moment to see
    // the switch: retried under the guard, never asserted on time).
    tokio::time::timeout(GUARD, async {
        while TcpStream::connect(address).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("connections refused");
    // The other broker serves on.
    let mut other = Client::connect(cluster.brokers()[0].address, "faults-test").await;
    assert_eq!(
        produce_error(&other.call(9, produce("events", 0, batch(0, 1))).await),
        0
    );
    control.restart_broker(1).unwrap();
    let mut client = tokio::time::timeout(GUARD, async {
        loop {
            if let Ok(tcp) = TcpStream::connect(address).await {
                return Client {
                    tcp,
                    connection: ClientConnection::new().with_client_id("after"),
                    received: BytesMut::new(),
                };
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("listening again");
    // Its partition's log is as it was.
    let (error, records) = fetched(&client.call(12, fetch("events", 1, 0, -1)).await);
    assert_eq!(error, 0);
    assert_eq!(BatchReader::new(records).count(), 1);
    assert!(control.stop_broker(2).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_delays_every_answer_of_one_broker() {
    let cluster = cluster_with_topic(2, 1).await;
    let control = cluster.control();
    control.set_latency(1, Duration::from_millis(150)).unwrap();
    let mut slow = Client::connect(cluster.brokers()[1].address, "faults-test").await;
    for _ in 0..2 {
        let started = Instant::now();
        slow.call(12, metadata("events")).await;
        assert!(started.elapsed() >= Duration::from_millis(150));
    }
    assert_eq!(control.latency(1), Duration::from_millis(150));
    assert_eq!(control.latency(0), Duration::ZERO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_leader_bumps_the_epoch_and_fences_the_old_one() {
    let cluster = cluster_with_topic(2, 1).await;
    let control = cluster.control();
    let old = cluster.brokers()[0].address;
    let new = cluster.brokers()[1].address;
    let mut to_old = Client::connect(old, "faults-test").await;
    assert_eq!(
        produce_error(&to_old.call(9, produce("events", 0, batch(0, 1))).await),
        0
    );
    assert_eq!(control.leader("events", 0), (0, 0));
    assert_eq!(control.move_leader("events", 0, 1), Ok(1));
    assert_eq!(control.leader("events", 0), (1, 1));
    // The old leader refuses.
    assert_eq!(
        produce_error(&to_old.call(9, produce("events", 0, batch(1, 1))).await),
        ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
    );
    // It holds a replica now (the move added 1 as Kafka's reassignment does: replicas
    // [1, 0]): a follower, it fences the old epoch.
    let (error, _) = fetched(&to_old.call(12, fetch("events", 0, 0, 0)).await);
    assert_eq!(error, ErrorCode::FENCED_LEADER_EPOCH.code());
    // Metadata names the new leader and epoch.
    let Response::Metadata(meta) = to_old.call(12, metadata("events")).await else {
        panic!("not Metadata")
    };
    let partition = &meta.topics[0].partitions[0];
    assert_eq!((partition.leader_id, partition.leader_epoch), (1, 1));
    // At the new leader: the old epoch is fenced, a future one unknown, the current one
    // (or none) served.
    let mut to_new = Client::connect(new, "faults-test").await;
    let (error, _) = fetched(&to_new.call(12, fetch("events", 0, 0, 0)).await);
    assert_eq!(error, ErrorCode::FENCED_LEADER_EPOCH.code());
    let (error, _) = fetched(&to_new.call(12, fetch("events", 0, 0, 2)).await);
    assert_eq!(error, ErrorCode::UNKNOWN_LEADER_EPOCH.code());
    assert_eq!(
        produce_error(&to_new.call(9, produce("events", 0, batch(1, 1))).await),
        0
    );
    let (error, records) = fetched(&to_new.call(12, fetch("events", 0, 0, 1)).await);
    assert_eq!(error, 0);
    let epochs: Vec<i32> = BatchReader::new(records)
        .map(|b| b.unwrap().header().partition_leader_epoch)
        .collect();
    // Each batch carries the epoch of the leader that wrote it.
    assert_eq!(epochs, [0, 1]);
    assert!(control.move_leader("events", 5, 1).is_err());
    assert!(control.move_leader("events", 0, 9).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_surface_over_http() {
    let cluster = cluster_with_topic(2, 1).await;
    let control = support::serve_control(&cluster).await;
    let broker = cluster.brokers()[0].address;

    let (status, answer) = http(
        control,
        "POST",
        "/rules",
        Some(json!({"match": {"api": "Produce"}, "action": {"error": "NOT_ENOUGH_REPLICAS"}, "times": 2})),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    let id = answer["ids"][0].as_u64().unwrap();
    let mut client = Client::connect(broker, "faults-test").await;
    assert_eq!(
        produce_error(&client.call(9, produce("events", 0, batch(0, 1))).await),
        ErrorCode::NOT_ENOUGH_REPLICAS.code()
    );
    let (status, rules) = http(control, "GET", "/rules", None).await;
    assert_eq!(status, 200);
    assert_eq!(rules[0]["id"].as_u64(), Some(id));
    assert_eq!(rules[0]["acted"], 1);
    assert_eq!(rules[0]["action"], json!({"error": "NOT_ENOUGH_REPLICAS"}));
    assert_eq!(
        http(control, "DELETE", &format!("/rules/{id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        http(control, "DELETE", &format!("/rules/{id}"), None)
            .await
            .0,
        404
    );
    assert_eq!(
        produce_error(&client.call(9, produce("events", 0, batch(0, 1))).await),
        0
    );

    // Bad input is refused, naming what is wrong.
    let refused = [
        json!({"action": "pass", "tims": 1}),
        json!({"match": {"api": "Nope"}, "action": "pass"}),
        json!({"action": {"error": "NO_SUCH_ERROR"}}),
        json!({"action": {"delayMs": "soon"}}),
    ];
    let named = ["tims", "match.api", "action.error", "action.delayMs"];
    for (rule, name) in refused.into_iter().zip(named) {
        let (status, answer) = http(control, "POST", "/rules", Some(rule)).await;
        assert_eq!(status, 400);
        assert!(answer["error"].as_str().unwrap().contains(name), "{answer}");
    }
    let (status, answer) = http(
        control,
        "PUT",
        "/brokers/0/latency",
        Some(json!({"msec": 1})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(answer["error"].as_str().unwrap().contains("msec"));
    assert_eq!(http(control, "GET", "/nowhere", None).await.0, 404);
    assert_eq!(http(control, "PATCH", "/rules", None).await.0, 405);
    assert_eq!(http(control, "GET", "/log?colour=red", None).await.0, 400);

    // The log and the counts.
    let (status, log) = http(control, "GET", "/log?api=Produce", None).await;
    assert_eq!(status, 200);
    let log = log.as_array().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0]["api"], "Produce");
    assert_eq!(log[0]["version"], 9);
    assert_eq!(log[0]["clientId"], "faults-test");
    assert_eq!(log[0]["broker"], 0);
    assert_eq!(log[0]["request"]["topicData"][0]["name"], "events");
    assert!(log[0]["outcome"]
        .as_str()
        .unwrap()
        .contains("NOT_ENOUGH_REPLICAS"));
    let (_, counts) = http(control, "GET", "/counts", None).await;
    assert_eq!(counts["Produce"], 2);

    // Operations.
    let (status, moved) = http(
        control,
        "POST",
        "/leaders",
        Some(json!({"topic": "events", "partition": 0, "leader": 1})),
    )
    .await;
    assert_eq!((status, moved["leaderEpoch"].as_i64()), (200, Some(1)));
    assert_eq!(cluster.control().leader("events", 0), (1, 1));
    assert_eq!(
        http(
            control,
            "POST",
            "/leaders",
            Some(json!({"topic": "nope", "partition": 0, "leader": 1}))
        )
        .await
        .0,
        404
    );
    assert_eq!(http(control, "POST", "/brokers/1/stop", None).await.0, 200);
    let (_, brokers) = http(control, "GET", "/brokers", None).await;
    assert_eq!(brokers[1]["up"], false);
    assert_eq!(
        http(control, "POST", "/brokers/1/restart", None).await.0,
        200
    );
    assert_eq!(
        http(
            control,
            "PUT",
            "/brokers/1/latency",
            Some(json!({"ms": 20}))
        )
        .await
        .0,
        200
    );
    let (_, brokers) = http(control, "GET", "/brokers", None).await;
    assert_eq!(
        (brokers[1]["up"].clone(), brokers[1]["latencyMs"].clone()),
        (json!(true), json!(20))
    );
    assert_eq!(http(control, "POST", "/brokers/7/stop", None).await.0, 404);
}

/// A JoinGroup of the consumer protocol with a 30 s session (no heartbeats are needed
/// within a test; only the control surface ends it).
fn join(group: &str, member: &str) -> JoinGroupRequest {
    JoinGroupRequest::default()
        .with_group_id(group.into())
        .with_session_timeout_ms(30_000)
        .with_rebalance_timeout_ms(30_000)
        .with_member_id(member.into())
        .with_protocol_type("consumer".into())
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name("range".into())
            .with_metadata(Bytes::from_static(b"\0\0\0\0\0\0\0\0\0\0"))])
}

/// The coordinator FindCoordinator names (v3: one key; v4: a batch of one).
async fn find_coordinator(client: &mut Client, version: i16, group: &str) -> i32 {
    let request = if version >= 4 {
        FindCoordinatorRequest::default().with_coordinator_keys(vec![group.into()])
    } else {
        FindCoordinatorRequest::default().with_key(group.into())
    };
    let Response::FindCoordinator(found) = client.call(version, request).await else {
        panic!("not FindCoordinator")
    };
    if version >= 4 {
        assert_eq!(found.coordinators[0].error_code, 0);
        found.coordinators[0].node_id
    } else {
        assert_eq!(found.error_code, 0);
        found.node_id
    }
}

/// A member of a stable generation 1 of `group` at its coordinator: the client, the
/// coordinator's id and the member id.
async fn stable_member(cluster: &Cluster, group: &str) -> (Client, i32, String) {
    let mut any = Client::connect(cluster.brokers()[0].address, "faults-test").await;
    let coordinator = find_coordinator(&mut any, 3, group).await;
    let mut client =
        Client::connect(cluster.brokers()[coordinator as usize].address, "member-a").await;
    let answer = client.join(3, join(group, "")).await;
    assert_eq!((answer.error_code, answer.generation_id), (0, 1));
    let member = answer.member_id.to_string();
    assert_eq!(client.sync(3, sync(group, 1, &member)).await.error_code, 0);
    (client, coordinator, member)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_rebalances_the_group_without_the_member() {
    let cluster = cluster_with_topic(2, 1).await;
    let control = cluster.control();
    let (mut a, coordinator, a_id) = stable_member(&cluster, "g").await;
    // B joins; the group waits for A to rejoin, which it never does: its session is
    // expired on demand instead, and B's join completes without it.
    let address = cluster.brokers()[coordinator as usize].address;
    let b_join = tokio::spawn(async move {
        let mut b = Client::connect(address, "member-b").await;
        let answer = b.join(3, join("g", "")).await;
        (b, answer)
    });
    let deadline = Instant::now() + GUARD;
    while a.heartbeat(3, "g", 1, &a_id).await != ErrorCode::REBALANCE_IN_PROGRESS.code() {
        assert!(
            Instant::now() < deadline,
            "B's join never started a rebalance"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(control.expire_session("g", &a_id), Ok(()));
    let (mut b, answer) = tokio::time::timeout(GUARD, b_join).await.unwrap().unwrap();
    assert_eq!(answer.error_code, 0);
    assert_eq!(answer.generation_id, 2);
    assert_eq!(answer.leader, answer.member_id);
    assert_eq!(answer.members.len(), 1);
    assert_eq!(
        a.heartbeat(3, "g", 1, &a_id).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
    let b_id = answer.member_id.to_string();
    assert_eq!(b.sync(3, sync("g", 2, &b_id)).await.error_code, 0);
    assert_eq!(
        control.expire_session("g", &a_id),
        Err(OperationError::NoSuchMember("g".into(), a_id.clone()))
    );
    assert_eq!(
        control.expire_session("nope", &b_id),
        Err(OperationError::NoSuchGroup("nope".into()))
    );

    // Over HTTP: the group as it stands, then B's session expired there.
    let http_at = support::serve_control(&cluster).await;
    let (status, groups) = http(http_at, "GET", "/groups", None).await;
    assert_eq!(status, 200);
    assert_eq!(groups[0]["group"], "g");
    assert_eq!(groups[0]["coordinator"], coordinator);
    assert_eq!(groups[0]["state"], "Stable");
    assert_eq!(groups[0]["generation"], 2);
    assert_eq!(groups[0]["members"][0]["member"], b_id.as_str());
    assert_eq!(groups[0]["members"][0]["clientId"], "member-b");
    let expire = |member: &str| Some(json!({"group": "g", "member": member}));
    let (status, answer) = http(http_at, "POST", "/sessions/expire", expire(&b_id)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        b.heartbeat(3, "g", 2, &b_id).await,
        ErrorCode::UNKNOWN_MEMBER_ID.code()
    );
    let (_, groups) = http(http_at, "GET", "/groups", None).await;
    assert_eq!(groups[0]["state"], "Empty");
    assert_eq!(groups[0]["members"], json!([]));
    // An unknown member or group is named; a bad body is refused naming the field.
    let (status, answer) = http(http_at, "POST", "/sessions/expire", expire(&b_id)).await;
    assert_eq!(status, 404);
    assert!(
        answer["error"].as_str().unwrap().contains(&b_id),
        "{answer}"
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/sessions/expire",
        Some(json!({"group": "nope", "member": "m"})),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        answer["error"].as_str().unwrap().contains("nope"),
        "{answer}"
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/sessions/expire",
        Some(json!({"group": "g", "membr": "m"})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("membr"),
        "{answer}"
    );
    assert_eq!(http(http_at, "GET", "/sessions/expire", None).await.0, 405);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_coordinator_is_found_and_the_old_one_refuses() {
    let cluster = cluster_with_topic(2, 1).await;
    let control = cluster.control();
    let (mut a, old, a_id) = stable_member(&cluster, "g").await;
    let new = 1 - old;
    // A join waiting at the old coordinator when it moves is answered NOT_COORDINATOR.
    let old_address = cluster.brokers()[old as usize].address;
    let waiting = tokio::spawn(async move {
        let mut b = Client::connect(old_address, "member-b").await;
        b.join(3, join("g", "")).await
    });
    let deadline = Instant::now() + GUARD;
    while a.heartbeat(3, "g", 1, &a_id).await != ErrorCode::REBALANCE_IN_PROGRESS.code() {
        assert!(
            Instant::now() < deadline,
            "B's join never started a rebalance"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(control.move_coordinator("g", new), Ok(old));
    let answer = tokio::time::timeout(GUARD, waiting).await.unwrap().unwrap();
    assert_eq!(answer.error_code, ErrorCode::NOT_COORDINATOR.code());
    // FindCoordinator names the new one at every key form, from any broker.
    for broker in cluster.brokers() {
        let mut client = Client::connect(broker.address, "faults-test").await;
        assert_eq!(find_coordinator(&mut client, 3, "g").await, new);
        assert_eq!(find_coordinator(&mut client, 4, "g").await, new);
    }
    // The old coordinator refuses; the new one holds the group as it was.
    assert_eq!(
        a.heartbeat(3, "g", 1, &a_id).await,
        ErrorCode::NOT_COORDINATOR.code()
    );
    let mut at_new = Client::connect(cluster.brokers()[new as usize].address, "member-a").await;
    assert_eq!(
        at_new.heartbeat(3, "g", 1, &a_id).await,
        ErrorCode::REBALANCE_IN_PROGRESS.code()
    );
    let rejoined = at_new.join(3, join("g", &a_id)).await;
    assert_eq!((rejoined.error_code, rejoined.generation_id), (0, 2));
    assert_eq!(
        control.move_coordinator("nope", new),
        Err(OperationError::NoSuchGroup("nope".into()))
    );
    assert_eq!(
        control.move_coordinator("g", 7),
        Err(OperationError::NoSuchBroker(7))
    );

    // Over HTTP, back to the old one.
    let http_at = support::serve_control(&cluster).await;
    let (status, answer) = http(
        http_at,
        "POST",
        "/coordinators",
        Some(json!({"group": "g", "coordinator": old})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["previous"], new);
    assert_eq!(find_coordinator(&mut a, 4, "g").await, old);
    assert_eq!(
        at_new.heartbeat(3, "g", 2, &a_id).await,
        ErrorCode::NOT_COORDINATOR.code()
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/coordinators",
        Some(json!({"group": "nope", "coordinator": 0})),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        answer["error"].as_str().unwrap().contains("nope"),
        "{answer}"
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/coordinators",
        Some(json!({"group": "g", "coordinator": "one"})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("coordinator"),
        "{answer}"
    );
}

/// A batch of one record from producer `id` at `epoch`, sequence `sequence`.
fn producer_batch(id: i64, epoch: i16, sequence: i32) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None).producer(id, epoch, sequence);
    builder.append_record(Record {
        offset: 0,
        timestamp: 1_700_000_000_000,
        value: Some(Bytes::from(format!("{id}-{epoch}-{sequence}"))),
        ..Record::default()
    });
    builder.build().encode_to_bytes().expect("a batch")
}

async fn init_producer_id(client: &mut Client, transactional_id: Option<&str>) -> (i64, i16) {
    let request = InitProducerIdRequest::default()
        .with_transactional_id(transactional_id.map(Into::into))
        .with_transaction_timeout_ms(60_000);
    let Response::InitProducerId(answer) = client.call(4, request).await else {
        panic!("not InitProducerId")
    };
    assert_eq!(answer.error_code, 0);
    (answer.producer_id, answer.producer_epoch)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_producer_is_refused_at_every_produce_version() {
    let cluster = cluster_with_topic(1, 2).await;
    let control = cluster.control();
    let mut client = Client::connect(cluster.brokers()[0].address, "faults-test").await;
    let (id, epoch) = init_producer_id(&mut client, None).await;
    assert_eq!(epoch, 0);
    assert_eq!(
        produce_error(
            &client
                .call(9, produce("events", 0, producer_batch(id, 0, 0)))
                .await
        ),
        0
    );
    assert_eq!(control.fence_producer(id), Ok(1));
    // Produce v3-v12 (v13 names topics by id): the fenced epoch is INVALID_PRODUCER_EPOCH,
    // in the partition it wrote to and in one it never wrote to.
    for version in 3..=12 {
        for partition in [0, 1] {
            let sequence = 1 - partition;
            let answer = client
                .call(
                    version,
                    produce("events", partition, producer_batch(id, 0, sequence)),
                )
                .await;
            assert_eq!(
                produce_error(&answer),
                ErrorCode::INVALID_PRODUCER_EPOCH.code(),
                "v{version} partition {partition}"
            );
        }
    }
    assert_eq!(
        offsets_in(&cluster, 0),
        1,
        "nothing appended after the fence"
    );
    // The next epoch is taken, from sequence 0.
    assert_eq!(
        produce_error(
            &client
                .call(9, produce("events", 0, producer_batch(id, 1, 0)))
                .await
        ),
        0
    );
    assert_eq!(
        control.fence_producer(999),
        Err(OperationError::NoSuchProducer(999))
    );

    // Over HTTP, a transactional producer: fenced, its old instance's InitProducerId is
    // PRODUCER_FENCED, and a new instance gets the epoch after the fence.
    let http_at = support::serve_control(&cluster).await;
    let (tx_id, tx_epoch) = init_producer_id(&mut client, Some("tx")).await;
    let (status, answer) = http(
        http_at,
        "POST",
        "/producers/fence",
        Some(json!({"producerId": tx_id})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["firstAcceptedEpoch"], tx_epoch + 1);
    assert_eq!(
        produce_error(
            &client
                .call(9, produce("events", 1, producer_batch(tx_id, tx_epoch, 0)))
                .await
        ),
        ErrorCode::INVALID_PRODUCER_EPOCH.code()
    );
    let request = InitProducerIdRequest::default()
        .with_transactional_id(Some("tx".into()))
        .with_transaction_timeout_ms(60_000)
        .with_producer_id(tx_id)
        .with_producer_epoch(tx_epoch);
    let Response::InitProducerId(old_instance) = client.call(4, request).await else {
        panic!("not InitProducerId")
    };
    assert_eq!(old_instance.error_code, ErrorCode::PRODUCER_FENCED.code());
    assert_eq!(
        init_producer_id(&mut client, Some("tx")).await,
        (tx_id, tx_epoch + 2)
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/producers/fence",
        Some(json!({"producerId": 999})),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        answer["error"].as_str().unwrap().contains("999"),
        "{answer}"
    );
    let (status, answer) = http(
        http_at,
        "POST",
        "/producers/fence",
        Some(json!({"producer": 1})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("producer"),
        "{answer}"
    );

    // A transactional id fenced over HTTP (its open transaction aborted: tests/transactions.rs
    // covers the markers), and its coordinator moved.
    let (status, answer) = http(
        http_at,
        "POST",
        "/transactions/fence",
        Some(json!({"transactionalId": "tx"})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["producerId"], tx_id);
    assert_eq!(answer["producerEpoch"], tx_epoch + 3);
    let (status, answer) = http(
        http_at,
        "POST",
        "/transactions/fence",
        Some(json!({"transactionalId": "nope"})),
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        answer["error"].as_str().unwrap().contains("nope"),
        "{answer}"
    );
    let (status, _) = http(
        http_at,
        "POST",
        "/transactions/fence",
        Some(json!({"transactionalId": 7})),
    )
    .await;
    assert_eq!(status, 400);
    let brokers = cluster.brokers().len();
    let old = kafka_codec_cluster::transactions::coordinator("tx", brokers);
    let to = (old + 1) % brokers as i32;
    let (status, answer) = http(
        http_at,
        "POST",
        "/coordinators",
        Some(json!({"transactionalId": "tx", "coordinator": to})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["previous"], old);
    let (status, answer) = http(
        http_at,
        "POST",
        "/coordinators",
        Some(json!({"transactionalId": "tx", "group": "g", "coordinator": to})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
}

fn offsets_in(cluster: &Cluster, partition: usize) -> i64 {
    cluster.shared().state().topics["events"].partitions[partition].high_watermark()
}

fn sync(group: &str, generation: i32, member: &str) -> SyncGroupRequest {
    SyncGroupRequest::default()
        .with_group_id(group.into())
        .with_generation_id(generation)
        .with_member_id(member.into())
}
