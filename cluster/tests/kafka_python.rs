//! kafka-python against the cluster: two consumers of one group share a topic of 4
//! partitions, commit, and one takes over when the other leaves
//! (`tools/clients/cluster_kafka_python_group.py`, the scenario of librdkafka's group test).
//! Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored kafka_python::
//! ```

use crate::support;

use kafka_codec_cluster::groups::GroupLimits;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::run_client_script;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_consumer_group_shares_commits_and_takes_over() {
    // The first rebalance waits for more members as Kafka's does (its default is 3 s): the
    // two consumers start together and share the first generation.
    let cluster = Cluster::builder()
        .brokers(3)
        .group_limits(GroupLimits {
            initial_rebalance_delay: Duration::from_secs(1),
            ..GroupLimits::default()
        })
        .build()
        .await
        .expect("cluster");
    run_client_script(
        "cluster_kafka_python_group.py",
        &[cluster.bootstrap(), "1000".into()],
    )
    .await;
}

/// SASL_PLAINTEXT with PLAIN and SCRAM-SHA-512, then SASL_SSL with both: kafka-python's admin
/// client creates a topic, its producer and consumer move 200 records, and a wrong password
/// is refused with its authentication error (`tools/clients/cluster_security.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_logs_in_with_sasl_over_plaintext_and_tls() {
    support::run_security_script("kafka-python").await;
}

/// Faults driven over HTTP, as librdkafka meets them (`tests/librdkafka.rs`): a leader
/// moved mid-produce followed, a stopped and restarted broker reconnected to, every record
/// once; a produce applied and its answer lost, retried: once in the log idempotent, twice
/// without (`tools/clients/cluster_faults_kafka_python.py` checks the request log, the
/// delivery reports and every record read back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_follows_moved_leaders_restarted_brokers_and_retries_once() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_faults_kafka_python.py", &["1000"]).await;
    // Seen from the cluster too: the idempotent producer's partition holds each record once
    // and knows its producer id; the other holds each record twice.
    let state = cluster.shared().state();
    assert_eq!(
        state.topics["kp-faults"].partitions[0].high_watermark(),
        1100
    );
    let idempotent = &state.topics["kp-retry-idempotent"].partitions[0];
    assert_eq!(idempotent.high_watermark(), 20);
    assert_eq!(idempotent.producers.len(), 1);
    let plain = &state.topics["kp-retry-plain"].partitions[0];
    assert_eq!(plain.high_watermark(), 40);
}
