//! aiokafka against the cluster: its admin client creates a topic of 4 partitions, a plain
//! and an idempotent producer each send 1,000 records, and two consumers of one group share
//! the partitions, consume every record once in order and commit; a fresh consumer reads
//! the offsets back (`tools/clients/cluster_aiokafka.py`). Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test aiokafka -- --ignored
//! ```

use kafka_codec_cluster::groups::GroupLimits;
use kafka_codec_cluster::Cluster;
use std::path::Path;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python aiokafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn aiokafka_admin_producers_and_a_consumer_group_with_commits() {
    let python = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
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
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/clients/cluster_aiokafka.py");
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
