//! Deterministic runs: an in-memory cluster (no sockets: `ClusterBuilder::in_memory`,
//! `Cluster::connect`) on a current-thread runtime with tokio's clock paused, ids from a
//! seed. A scenario with faults (an error on the n-th produce, a delay, a long poll, a moved
//! leader, an apply-then-disconnect, a stopped and restarted broker) runs 20 times and its
//! request log (every field but the wall-clock time) is the same, byte for byte, each time,
//! at the same simulated times.

mod support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::{CreateTopicsRequest, FetchRequest, MetadataRequest, ProduceRequest};
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
    assert_eq!(entries.len(), 10, "{first}");
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
    // Another seed: other topic ids, the same requests.
    assert_eq!(scenario(8).lines().count(), entries.len());
}
