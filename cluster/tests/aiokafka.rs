//! aiokafka against the cluster: its admin client creates a topic of 4 partitions, a plain
//! and an idempotent producer each send 1,000 records, and two consumers of one group share
//! the partitions, consume every record once in order and commit; a fresh consumer reads
//! the offsets back (`tools/clients/cluster_aiokafka.py`). Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored aiokafka::
//! ```

use crate::support;

use kafka_codec_cluster::groups::GroupLimits;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::run_client_script;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python aiokafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn aiokafka_admin_producers_and_a_consumer_group_with_commits() {
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
    run_client_script("cluster_aiokafka.py", &[cluster.bootstrap(), "1000".into()]).await;
}

/// SASL_PLAINTEXT with PLAIN and SCRAM-SHA-512, then SASL_SSL with both: aiokafka's admin
/// client creates a topic, its producer and consumer move 200 records, and a wrong password
/// is refused with its authentication error (`tools/clients/cluster_security.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python aiokafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn aiokafka_logs_in_with_sasl_over_plaintext_and_tls() {
    support::run_security_script("aiokafka").await;
}
