//! Java kafka-clients 4.4 against the cluster (`tools/clients/java`, `ClusterClients`): the
//! AdminClient creates and describes topics (DescribeTopicPartitions or Metadata, as the
//! cluster advertises), lists groups with their types, describes the KIP-848 group and reads
//! its committed offsets; the producer sends keyed records; a classic consumer group reads
//! them once and commits; two KIP-848 consumers (`group.protocol=consumer`) share a topic,
//! one leaves, and the other takes over every partition from the committed offsets, every
//! record consumed exactly once. Needs java and the module's class path:
//!
//! ```text
//! KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) \
//!     cargo test -p kafka-codec-cluster --test java -- --ignored
//! ```

use kafka_codec_cluster::groups::GroupLimits;
use kafka_codec_cluster::Cluster;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_clients_produce_consume_in_classic_and_kip848_groups_and_administer() {
    let cluster = Cluster::builder()
        .brokers(3)
        .group_limits(GroupLimits {
            // Kafka's test setups shorten it as well: a member learns of a new assignment at
            // its next heartbeat, 5 s apart by default.
            consumer_heartbeat_interval: Duration::from_millis(500),
            ..GroupLimits::default()
        })
        .build()
        .await
        .expect("cluster");
    let class_path = std::env::var("KAFKA_CLIENTS_JAVA").expect(
        "KAFKA_CLIENTS_JAVA names the Java clients' class path (tools/clients/java-classpath.sh)",
    );
    let run = tokio::process::Command::new("java")
        .args(["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp"])
        .arg(class_path)
        .arg("kafkacodec.clients.ClusterClients")
        .arg(cluster.bootstrap())
        .kill_on_drop(true)
        .output();
    // A hang guard; the program has its own, shorter ones.
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the Java clients finished")
        .expect("java started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    print!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "the Java clients failed: {}",
        output.status
    );
}
