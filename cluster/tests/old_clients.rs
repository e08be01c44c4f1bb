//! Old clients against a cluster answering as an old release: kafka-python pinned to
//! `api_version=(0, 9)` (Produce v1 / Fetch v1: magic 0) and `(0, 10)` (Produce v2 / Fetch
//! v2: magic 1), and the old Java kafka-clients 0.10.2.2 and 0.11.0.3
//! (`tools/clients/java-old`), each producing five known records with every codec of the
//! old formats, consuming them in a consumer group, committing and reading the commit back
//! (`tools/clients/old_workload.py`, `OldWorkload.java`: the workloads of the tap's proof
//! with old versions; any answer that differs from what was sent fails the run).
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored old_clients::
//! ```
//!
//! The Java tests also need Java 17 and Maven (kafka-clients from Maven Central).

use crate::support;

use kafka_codec::records::{decode_batches, Compression};
use kafka_codec::ApiKey;
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::run_client_script;

/// A cluster answering as `release`, with one topic `topic` of one partition, made in
/// process: 0.9 and 0.10.0 served no CreateTopics.
async fn cluster_with_topic(release: &str, topics: &[&str]) -> Cluster {
    let cluster = Cluster::builder()
        .brokers(1)
        .as_version(Release::parse(release).expect("a release"))
        .build()
        .await
        .expect("cluster");
    let mut state = cluster.shared().state();
    for topic in topics {
        state.add_topic(topic, 1, 1);
    }
    drop(state);
    cluster
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_0_9_and_0_10_against_kafka_0_10() {
    let cluster = cluster_with_topic("0.10", &["old-0.9", "old-0.10"]).await;
    for (setting, topic, version) in [
        ("kafka-python-0.9", "old-0.9", 1),
        ("kafka-python-0.10", "old-0.10", 2),
    ] {
        cluster.control().log().clear();
        run_client_script(
            "old_workload.py",
            &[setting.into(), cluster.bootstrap(), topic.into()],
        )
        .await;
        // (0, 9): Produce v1 / Fetch v1, magic 0; (0, 10): v2 / v2, magic 1.
        assert_eq!(
            versions_and_codecs(&cluster, topic),
            (vec![version], vec![version], OLD_CODECS.to_vec())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_0_9_against_kafka_0_9() {
    let cluster = cluster_with_topic("0.9", &["old-0.9"]).await;
    run_client_script(
        "old_workload.py",
        &[
            "kafka-python-0.9".into(),
            cluster.bootstrap(),
            "old-0.9".into(),
        ],
    )
    .await;
    assert_eq!(
        versions_and_codecs(&cluster, "old-0.9"),
        (vec![1], vec![1], OLD_CODECS.to_vec())
    );
}

/// The Produce and Fetch versions the clients sent, and the codecs of the batches stored
/// for `topic`: proof that the run took the old formats' path (up-converted on produce,
/// down-converted on fetch) with every codec.
fn versions_and_codecs(cluster: &Cluster, topic: &str) -> (Vec<i16>, Vec<i16>, Vec<Compression>) {
    let control = cluster.control();
    let log = control.log();
    let versions = |api| {
        let mut seen: Vec<i16> = log.of(api).iter().map(|entry| entry.version).collect();
        seen.sort_unstable();
        seen.dedup();
        seen
    };
    let state = cluster.shared().state();
    let mut codecs: Vec<Compression> = state.topics[topic].partitions[0]
        .batches()
        .flat_map(|stored| decode_batches(&stored.bytes()).expect("stored batches decode"))
        .inspect(|batch| assert_eq!(batch.magic, 2))
        .map(|batch| batch.compression)
        .collect();
    codecs.sort_by_key(|codec| codec.id());
    codecs.dedup();
    (versions(ApiKey::Produce), versions(ApiKey::Fetch), codecs)
}

/// By codec id.
const OLD_CODECS: [Compression; 4] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
];

/// `tools/clients/java-old`, built, and the class path of kafka-clients `version`.
fn java_old_classpath(version: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/clients/java-old");
    let pom = dir.join("pom.xml");
    let mvn = |args: &[&str]| {
        let output = Command::new("mvn")
            .args(["-q", "-B", "-f"])
            .arg(&pom)
            .args(args)
            .output()
            .expect("mvn runs (Java 17 and Maven)");
        assert!(
            output.status.success(),
            "mvn {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    // Always: a no-op when nothing changed, and never a stale jar.
    mvn(&["package"]);
    let jar: PathBuf = dir.join("target/java-old-clients.jar");
    let listed = dir.join(format!("target/classpath-{version}"));
    if !listed.exists() {
        mvn(&[
            "dependency:build-classpath",
            &format!("-Dkafka.version={version}"),
            &format!("-Dmdep.outputFile={}", listed.display()),
        ]);
    }
    let classpath = std::fs::read_to_string(&listed).expect("the class path mvn wrote");
    format!("{}:{}", jar.display(), classpath.trim())
}

/// Runs `OldWorkload` of kafka-clients `version` against `bootstrap`; fails unless it
/// succeeded.
async fn run_old_java(version: &str, bootstrap: String, topic: &str) {
    let classpath = tokio::task::spawn_blocking({
        let version = version.to_owned();
        move || java_old_classpath(&version)
    })
    .await
    .expect("mvn");
    let run = tokio::process::Command::new("java")
        .arg("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
        .arg("-cp")
        .arg(classpath)
        .arg("kafkacodec.clients.OldWorkload")
        .args([bootstrap, topic.to_owned(), format!("java-{version}")])
        .kill_on_drop(true)
        .output();
    // A hang guard; the workload has its own, shorter one.
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the client finished")
        .expect("java runs");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    print!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "the old Java client failed: {}",
        output.status
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Java 17 and Maven (kafka-clients 0.10.2.2 and 0.11.0.3 from Maven Central)"]
async fn old_java_clients_against_kafka_0_10_and_0_11() {
    // 0.10.2.2 asks ApiVersions and takes 0.10.0's versions (magic 1); 0.11.0.3 against
    // 0.10.0 writes magic 1 too, and against 0.11 its own v2 batches (Produce v3, Fetch v5).
    let cluster = cluster_with_topic("0.10", &["java-0.10.2.2", "java-0.11.0.3"]).await;
    for version in ["0.10.2.2", "0.11.0.3"] {
        let topic = format!("java-{version}");
        cluster.control().log().clear();
        run_old_java(version, cluster.bootstrap(), &topic).await;
        assert_eq!(
            versions_and_codecs(&cluster, &topic),
            (vec![2], vec![2], OLD_CODECS.to_vec())
        );
    }
    let cluster = cluster_with_topic("0.11", &["java-0.11.0.3"]).await;
    run_old_java("0.11.0.3", cluster.bootstrap(), "java-0.11.0.3").await;
    assert_eq!(
        versions_and_codecs(&cluster, "java-0.11.0.3"),
        (vec![3], vec![5], OLD_CODECS.to_vec())
    );
}
