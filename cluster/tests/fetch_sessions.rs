//! Fetch sessions (KIP-227) through this crate's own client over TCP: a full fetch opens a
//! session, incremental fetches add, update and forget partitions and are answered with the
//! partitions that have news only, an empty incremental fetch waits `MaxWaitMs` for records
//! (and is woken by a produce), epoch -1 closes the session, and the session errors are
//! Kafka's. The cache's eviction rule and bounds are tested in `src/fetch_sessions.rs`.

use crate::support;

use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic, ForgottenTopic};
use kafka_codec::messages::{FetchRequest, FetchResponse};
use kafka_codec::records::decode_batches;
use kafka_codec::{ErrorCode, Response, Uuid};
use kafka_codec_cluster::Cluster;
use std::time::{Duration, Instant};
use support::{batch, produce, Client, GUARD};

/// A full fetch asking for a session (epoch 0; the field's default, -1, asks for none) of
/// `partitions` (partition, offset) of `topic` (by name, or by `id` from v13).
fn fetch(topic: &str, id: Uuid, partitions: &[(i32, i64)]) -> FetchRequest {
    FetchRequest::default()
        .with_session_epoch(0)
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(if partitions.is_empty() {
            Vec::new()
        } else {
            vec![FetchTopic::default()
                .with_topic(topic.into())
                .with_topic_id(id)
                .with_partitions(
                    partitions
                        .iter()
                        .map(|&(partition, offset)| {
                            FetchPartition::default()
                                .with_partition(partition)
                                .with_fetch_offset(offset)
                                .with_partition_max_bytes(1 << 20)
                        })
                        .collect(),
                )]
        })
}

fn session(request: FetchRequest, id: i32, epoch: i32) -> FetchRequest {
    request.with_session_id(id).with_session_epoch(epoch)
}

async fn call(client: &mut Client, version: i16, request: FetchRequest) -> FetchResponse {
    match client.call(version, request).await {
        Response::Fetch(response) => response,
        other => panic!("not Fetch: {other:?}"),
    }
}

/// (partition, high watermark, records) of each partition answered, in order.
fn answered(response: &FetchResponse) -> Vec<(i32, i64, usize)> {
    response
        .responses
        .iter()
        .flat_map(|topic| &topic.partitions)
        .map(|p| {
            let records = p
                .records
                .as_ref()
                .map(|r| {
                    decode_batches(r)
                        .expect("batches")
                        .iter()
                        .map(|b| b.records.len())
                        .sum()
                })
                .unwrap_or(0);
            (p.partition_index, p.high_watermark, records)
        })
        .collect()
}

async fn cluster_with(topic: &str, partitions: i32) -> (Cluster, Uuid) {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let id = cluster.shared().state().add_topic(topic, partitions, 1);
    (cluster, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opens_answers_news_only_and_closes() {
    let (cluster, _) = cluster_with("s", 3).await;
    let mut client = Client::connect(cluster.brokers()[0].address, "sessions").await;
    for (partition, count) in [(0, 2), (1, 3)] {
        client
            .call(9, produce("s", partition, batch(0, count)))
            .await;
    }

    // A full fetch (epoch 0) opens a session and answers every partition.
    let full = call(
        &mut client,
        12,
        fetch("s", Uuid::default(), &[(0, 0), (1, 0), (2, 0)]),
    )
    .await;
    assert_eq!(full.error_code, 0);
    assert!(full.session_id > 0, "a session: {}", full.session_id);
    assert_eq!(answered(&full), vec![(0, 2, 2), (1, 3, 3), (2, 0, 0)]);
    let id = full.session_id;

    // Incremental, epoch 1: partitions 0 and 1 move on; nothing is new, so nothing is sent.
    let quiet = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[(0, 2), (1, 3)]), id, 1),
    )
    .await;
    assert_eq!((quiet.error_code, quiet.session_id), (0, id));
    assert!(quiet.responses.is_empty(), "{quiet:?}");

    // Records on partition 2 (whose position the session remembers) and a new high
    // watermark on 1: those two only, though the request names no partition.
    client.call(9, produce("s", 2, batch(0, 4))).await;
    client.call(9, produce("s", 1, batch(3, 1))).await;
    let news = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[]), id, 2),
    )
    .await;
    assert_eq!(news.session_id, id);
    // Partition 1 is read from 3 (its last position), partition 2 from 0.
    assert_eq!(answered(&news), vec![(1, 4, 1), (2, 4, 4)]);

    // The answered high watermarks are remembered: the same fetch again has no news for 1
    // (the client has not moved it on: same records again) ...
    let again = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[(1, 4), (2, 4)]), id, 3),
    )
    .await;
    assert!(again.responses.is_empty(), "{again:?}");

    // Forgetting partition 2 and adding nothing: records on it are no news any more.
    client.call(9, produce("s", 2, batch(4, 1))).await;
    let forget = session(fetch("s", Uuid::default(), &[]), id, 4).with_forgotten_topics_data(vec![
        ForgottenTopic::default()
            .with_topic("s".into())
            .with_partitions(vec![2].into()),
    ]);
    let forgot = call(&mut client, 12, forget).await;
    assert!(forgot.responses.is_empty(), "{forgot:?}");

    // A stale epoch, an unknown session, topic ids in a session of names.
    let stale = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[]), id, 4),
    )
    .await;
    assert_eq!(
        (stale.error_code, stale.session_id),
        (ErrorCode::INVALID_FETCH_SESSION_EPOCH.code(), 0)
    );
    let unknown = call(
        &mut client,
        12,
        session(
            fetch("s", Uuid::default(), &[]),
            id.wrapping_add(1).max(1),
            1,
        ),
    )
    .await;
    assert_eq!(
        unknown.error_code,
        ErrorCode::FETCH_SESSION_ID_NOT_FOUND.code()
    );
    let ids = call(
        &mut client,
        13,
        session(fetch("", Uuid::default(), &[]), id, 5),
    )
    .await;
    assert_eq!(
        ids.error_code,
        ErrorCode::FETCH_SESSION_TOPIC_ID_ERROR.code()
    );

    // Epoch -1 closes it: a sessionless answer, and the session is gone.
    let closed = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[(0, 0)]), id, -1),
    )
    .await;
    assert_eq!((closed.error_code, closed.session_id), (0, 0));
    assert_eq!(answered(&closed), vec![(0, 2, 2)]);
    let gone = call(
        &mut client,
        12,
        session(fetch("s", Uuid::default(), &[]), id, 5),
    )
    .await;
    assert_eq!(
        gone.error_code,
        ErrorCode::FETCH_SESSION_ID_NOT_FOUND.code()
    );
    assert_eq!(cluster.shared().fetch_sessions(0).len(), 0);

    // Before v7 there are no sessions.
    let old = call(&mut client, 6, fetch("s", Uuid::default(), &[(0, 0)])).await;
    assert_eq!(old.session_id, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_incremental_fetch_long_polls_and_is_woken_by_a_produce() {
    let (cluster, id) = cluster_with("waits", 2).await;
    let address = cluster.brokers()[0].address;
    let mut consumer = Client::connect(address, "sessions").await;
    let full = call(&mut consumer, 13, fetch("", id, &[(0, 0), (1, 0)])).await;
    let session_id = full.session_id;
    assert!(session_id > 0);

    // Nothing arrives: it waits MaxWaitMs (a lower bound only), then answers nothing.
    let wait = Duration::from_millis(200);
    let started = Instant::now();
    let request = session(fetch("", id, &[]), session_id, 1)
        .with_max_wait_ms(wait.as_millis() as i32)
        .with_min_bytes(1);
    let empty = call(&mut consumer, 13, request).await;
    assert!(started.elapsed() >= wait, "waited {:?}", started.elapsed());
    assert!(empty.responses.is_empty(), "{empty:?}");

    // A produce wakes a waiting incremental fetch, which answers that partition alone.
    let waiting = tokio::spawn(async move {
        let request = session(fetch("", id, &[]), session_id, 2)
            .with_max_wait_ms(GUARD.as_millis() as i32)
            .with_min_bytes(1);
        call(&mut consumer, 13, request).await
    });
    let mut producer = Client::connect(address, "sessions").await;
    producer.call(9, produce("waits", 1, batch(0, 3))).await;
    let woken = waiting.await.expect("task");
    assert_eq!(woken.session_id, session_id);
    assert_eq!(woken.responses.len(), 1);
    assert_eq!(woken.responses[0].topic_id, id);
    assert_eq!(answered(&woken), vec![(1, 3, 3)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_broker_forgets_its_sessions_and_a_full_cache_opens_none() {
    let cluster = Cluster::builder()
        .fetch_sessions(1, 1 << 20)
        .build()
        .await
        .expect("cluster");
    cluster.shared().state().add_topic("r", 1, 1);
    let address = cluster.brokers()[0].address;
    let mut client = Client::connect(address, "sessions").await;
    let first = call(&mut client, 12, fetch("r", Uuid::default(), &[(0, 0)])).await;
    assert!(first.session_id > 0);
    // One slot, taken by a young session of as many partitions: no room for a second.
    let second = call(&mut client, 12, fetch("r", Uuid::default(), &[(0, 0)])).await;
    assert_eq!(second.session_id, 0);

    cluster.control().stop_broker(0).expect("stop");
    cluster.control().restart_broker(0).expect("restart");
    let mut client = tokio::time::timeout(GUARD, async {
        loop {
            if let Ok(tcp) = tokio::net::TcpStream::connect(address).await {
                drop(tcp);
                break Client::connect(address, "sessions").await;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the broker listens again");
    let forgotten = call(
        &mut client,
        12,
        session(fetch("r", Uuid::default(), &[]), first.session_id, 1),
    )
    .await;
    assert_eq!(
        forgotten.error_code,
        ErrorCode::FETCH_SESSION_ID_NOT_FOUND.code()
    );
    let reopened = call(&mut client, 12, fetch("r", Uuid::default(), &[(0, 0)])).await;
    assert!(reopened.session_id > 0);
}

/// A broker added at run time keeps sessions of its own: one it opened is unknown to the
/// first broker, and the first broker's are unknown to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_added_at_run_time_has_its_own_sessions() {
    let (cluster, _) = cluster_with("s", 2).await;
    let added = cluster.add_broker(None).expect("a broker added");
    cluster
        .control()
        .move_leader("s", 1, added.node_id)
        .expect("partition 1 moved to the new broker");
    let mut first = Client::connect(cluster.brokers()[0].address, "sessions").await;
    let mut second = Client::connect(added.address, "sessions").await;
    let on_first = call(&mut first, 12, fetch("s", Uuid::default(), &[(0, 0)])).await;
    let on_second = call(&mut second, 12, fetch("s", Uuid::default(), &[(1, 0)])).await;
    assert_eq!((on_first.error_code, on_second.error_code), (0, 0));
    assert!(on_first.session_id > 0 && on_second.session_id > 0);
    for (client, id) in [
        (&mut first, on_second.session_id),
        (&mut second, on_first.session_id),
    ] {
        if on_first.session_id == on_second.session_id {
            break;
        }
        let elsewhere = call(client, 12, session(fetch("s", Uuid::default(), &[]), id, 1)).await;
        assert_eq!(
            elsewhere.error_code,
            ErrorCode::FETCH_SESSION_ID_NOT_FOUND.code()
        );
    }
    // Each broker's own session goes on.
    let next = call(
        &mut second,
        12,
        session(fetch("s", Uuid::default(), &[]), on_second.session_id, 1),
    )
    .await;
    assert_eq!(
        (next.error_code, next.session_id),
        (0, on_second.session_id)
    );
}
