//! librdkafka (python confluent-kafka) against the cluster: its admin client creates a
//! topic, its producer sends 1,000 records, an assigned consumer reads them back
//! (`tools/clients/cluster_librdkafka.py` checks every record); two consumers of one group
//! share a topic of 4 partitions, commit, and one takes over when the other leaves
//! (`tools/clients/cluster_librdkafka_group.py`). Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test librdkafka -- --ignored
//! ```

use kafka_codec_cluster::Cluster;
use std::path::Path;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_produces_and_consumes_a_thousand_records() {
    run_script("cluster_librdkafka.py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_consumer_group_shares_commits_and_takes_over() {
    run_script("cluster_librdkafka_group.py").await;
}

/// Runs a client script of `tools/clients` against a fresh 3-broker cluster with its
/// bootstrap servers and 1,000 records.
async fn run_script(name: &str) {
    let python = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/clients")
        .join(name);
    let run = tokio::process::Command::new(python)
        .arg(script)
        .arg(cluster.bootstrap())
        .arg("1000")
        .kill_on_drop(true)
        .output();
    // A hang guard; the script has its own, shorter one.
    let output = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the client finished")
        .expect("the client started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    print!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "the client failed: {}",
        output.status
    );
}

/// The idempotent producer (`enable.idempotence=true`): InitProducerId, then 10,000 records
/// in small batches, five in flight, each checked by the cluster for its epoch and sequence
/// (`tools/clients/cluster_librdkafka_idempotent.py` checks every record arrived once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_idempotent_producer_delivers_every_record_once() {
    let python = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/clients/cluster_librdkafka_idempotent.py");
    let run = tokio::process::Command::new(python)
        .arg(script)
        .arg(cluster.bootstrap())
        .arg("10000")
        .kill_on_drop(true)
        .output();
    // A hang guard; the script has its own, shorter one.
    let output = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .expect("the client finished")
        .expect("the client started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    print!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "the client failed: {}",
        output.status
    );
    // The batches carried a producer id: each partition knows exactly one producer.
    let state = cluster.shared().state();
    let topic = &state.topics["librdkafka-idempotent"];
    for (index, partition) in topic.partitions.iter().enumerate() {
        assert_eq!(partition.producers.len(), 1, "partition {index}");
    }
}
