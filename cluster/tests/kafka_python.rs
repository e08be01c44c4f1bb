//! kafka-python against the cluster: two consumers of one group share a topic of 4
//! partitions, commit, and one takes over when the other leaves
//! (`tools/clients/cluster_kafka_python_group.py`, the scenario of librdkafka's group test).
//! Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test kafka_python -- --ignored
//! ```

mod support;

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
