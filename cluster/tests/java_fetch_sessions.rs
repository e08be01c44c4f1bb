//! Fetch sessions with Java kafka-clients 4.4 (`tools/clients/java`, `ClusterFetchSessions`):
//! a consumer assigned every partition of a topic polls while records arrive one partition
//! at a time; the program checks that every record arrives once, in order, and this test
//! reads what the brokers saw: each broker's first fetch opened a session, the fetches
//! after it were incremental (the session's id at its next epoch), none was refused, and
//! incremental answers left out the partitions without news. Needs java and the module's
//! class path:
//!
//! ```text
//! KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored java_fetch_sessions::
//! ```

use crate::support;

use kafka_codec::{Request, Response};
use kafka_codec_cluster::dispatch::Reply;
use kafka_codec_cluster::Cluster;
use std::sync::{Arc, Mutex};

/// One Fetch as a broker saw it and answered it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    node_id: i32,
    session_id: i32,
    epoch: i32,
    error_code: i16,
    answered_session: i32,
    /// Partitions the request named and the answer carried.
    named: usize,
    answered: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn the_java_consumer_fetches_incrementally_in_sessions() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = Arc::clone(&seen);
    let cluster = Cluster::builder()
        .brokers(3)
        .on_request(move |served| {
            let (Request::Fetch(request), Reply::Respond(frame)) =
                (&served.request.body, served.reply)
            else {
                return;
            };
            let Response::Fetch(response) = &frame.body else {
                return;
            };
            log.lock().unwrap().push(Seen {
                node_id: served.node_id,
                session_id: request.session_id,
                epoch: request.session_epoch,
                error_code: response.error_code,
                answered_session: response.session_id,
                named: request.topics.iter().map(|t| t.partitions.len()).sum(),
                answered: response.responses.iter().map(|t| t.partitions.len()).sum(),
            });
        })
        .build()
        .await
        .expect("cluster");
    support::java_program(
        "kafkacodec.clients.ClusterFetchSessions",
        &[&cluster.bootstrap(), "java-sessions"],
    )
    .await;

    let seen = seen.lock().unwrap().clone();
    for fetch in &seen {
        assert_eq!(fetch.error_code, 0, "a fetch was refused: {fetch:?}");
    }
    // Partitions 0..5 are led by brokers p mod 3: the consumer fetches from all three.
    for node in 0..3 {
        let fetches: Vec<&Seen> = seen.iter().filter(|f| f.node_id == node).collect();
        let opened = fetches
            .iter()
            .find(|f| f.epoch == 0)
            .unwrap_or_else(|| panic!("broker {node}: no full fetch: {fetches:?}"));
        assert!(opened.answered_session > 0, "no session opened: {opened:?}");
        let incremental: Vec<&&Seen> = fetches
            .iter()
            .filter(|f| f.session_id == opened.answered_session && f.epoch > 0)
            .collect();
        assert!(
            incremental.len() >= 5,
            "broker {node}: {} incremental fetches of {}",
            incremental.len(),
            fetches.len()
        );
        // Each answered in the session, at epochs 1, 2, 3, …
        for (i, fetch) in incremental.iter().enumerate() {
            assert_eq!(fetch.answered_session, opened.answered_session, "{fetch:?}");
            assert_eq!(fetch.epoch, i as i32 + 1, "{fetch:?}");
        }
        // Answers without news carry no partition, and requests name only what moved.
        assert!(
            incremental.iter().any(|f| f.answered == 0),
            "broker {node}: every incremental answer carried partitions"
        );
        assert!(
            incremental.iter().any(|f| f.named < opened.named),
            "broker {node}: every incremental request named every partition"
        );
    }
    let incremental = seen.iter().filter(|f| f.epoch > 0).count();
    println!(
        "{} fetches, {} of them incremental, none refused",
        seen.len(),
        incremental
    );
}
