//! Eligible leader replicas (KIP-966) through the request path: brokers fenced and unfenced
//! through the control surface, `min.insync.replicas` and `unclean.leader.election.enable`
//! changed with IncrementalAlterConfigs, each partition read back with
//! DescribeTopicPartitions v0 (leader, epoch, ISR, ELR, last known ELR) and Metadata. The
//! expected states are what Kafka 4.4's `PartitionChangeBuilder` produced for the same events
//! (`tools/elr-reference`'s `ElrReference` over the trace quoted at each test;
//! `tests/elr_reference.rs` compares the two on random traces).

use crate::support;

use kafka_codec::messages::MetadataRequest;
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use support::Client;

/// Leader, epoch, ISR, ELR, last known ELR, as `ElrReference` prints them.
type Shown = support::ElrState;

/// Four brokers; topic "e" of one partition on 0, 1 and 2 (broker 3, not a replica, stays
/// up to answer).
async fn cluster(release: Option<Release>) -> (Cluster, Client) {
    // Followers rejoin the ISRs at once (no catch-up delay), as the reference's trace has
    // them rejoin within the unfence.
    let mut builder = Cluster::builder()
        .brokers(4)
        .broker_config("replica.fetch.wait.max.ms", "0");
    if let Some(release) = release {
        builder = builder.as_version(release);
    }
    let cluster = builder.build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[3].address, "elr").await;
    support::make_topic(&mut client, 5, "e", 1, 3).await;
    (cluster, client)
}

async fn describe(client: &mut Client) -> Shown {
    support::elr_state(client, "e").await
}

/// Sets `name` on resource `kind`/`resource` (2 topic, 4 broker): its error code.
async fn set(client: &mut Client, kind: i8, resource: &str, name: &str, value: &str) -> i16 {
    let set = [(name, 0, Some(value))];
    client
        .incremental_alter_configs(1, kind, resource, &set, false)
        .await
        .0
}

fn fence(cluster: &Cluster, node: i32) {
    let control = cluster.control();
    control.stop_broker(node).expect("stop");
    control.fence_broker(node).expect("fence");
}

fn unfence(cluster: &Cluster, node: i32) {
    cluster.control().restart_broker(node).expect("restart");
}

fn shown(leader: i32, epoch: i32, isr: &[i32], elr: &[i32], last_known: &[i32]) -> Shown {
    (
        leader,
        epoch,
        isr.to_vec(),
        elr.to_vec(),
        last_known.to_vec(),
    )
}

/// Kafka 4.4's answers to the trace
/// `scenario 0,1,2,3 2 0 1 0,1,2`, `fence 2`, `fence 1`, `fence 0`, `unfence 2`,
/// `unfence 1`, `unfence 0`, `fence 0`, `fence 1`, `fence 2`, `min_isr 1`, `unfence 1`,
/// `unclean 1`, `unfence 0`.
#[tokio::test]
async fn replicas_leaving_below_min_isr_may_lead_again_until_min_isr_changes() {
    let (cluster, mut client) = cluster(None).await;
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "2").await,
        0
    );
    assert_eq!(
        describe(&mut client).await,
        shown(0, 0, &[0, 1, 2], &[], &[])
    );
    fence(&cluster, 2);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0, 1], &[], &[]));
    // Below min.insync.replicas: the replica leaving is eligible.
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[1], &[]));
    // The ISR empties: no leader, the last ISR member eligible too, and the last leader
    // known.
    fence(&cluster, 0);
    assert_eq!(
        describe(&mut client).await,
        shown(-1, 1, &[], &[0, 1], &[0])
    );
    // Metadata has no ELR: offline, with an empty ISR.
    let all = MetadataRequest::default().with_topics(None);
    let Response::Metadata(metadata) = client.call(12, all).await else {
        panic!("not Metadata")
    };
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some("e"));
    let p = &topic.expect("listed").partitions[0];
    assert_eq!(p.error_code, ErrorCode::LEADER_NOT_AVAILABLE.code());
    assert_eq!((p.leader_id, p.isr_nodes.len()), (-1, 0));
    // 2 left the ISR before it shrank below the minimum: not eligible, nothing changes.
    unfence(&cluster, 2);
    assert_eq!(
        describe(&mut client).await,
        shown(-1, 1, &[], &[0, 1], &[0])
    );
    // 1 is eligible: it leads, and 2 rejoins the ISR (the minimum reached, the ELR empties).
    unfence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(1, 2, &[1, 2], &[], &[]));
    unfence(&cluster, 0);
    assert_eq!(
        describe(&mut client).await,
        shown(1, 2, &[0, 1, 2], &[], &[])
    );

    // Offline again with 1 and 2 eligible; a min.insync.replicas change clears them.
    fence(&cluster, 0);
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(2, 3, &[2], &[1], &[]));
    fence(&cluster, 2);
    assert_eq!(
        describe(&mut client).await,
        shown(-1, 4, &[], &[1, 2], &[2])
    );
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "1").await,
        0
    );
    assert_eq!(describe(&mut client).await, shown(-1, 4, &[], &[], &[]));
    unfence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(-1, 4, &[], &[], &[]));
    // Unclean leader election on: the next unfence elects the first replica up.
    assert_eq!(
        set(
            &mut client,
            2,
            "e",
            "unclean.leader.election.enable",
            "true"
        )
        .await,
        0
    );
    assert_eq!(describe(&mut client).await, shown(-1, 4, &[], &[], &[]));
    unfence(&cluster, 0);
    assert_eq!(describe(&mut client).await, shown(0, 5, &[0, 1], &[], &[]));
}

/// With ELR on, Kafka's controller refuses a per-broker `min.insync.replicas`.
#[tokio::test]
async fn a_per_broker_min_isr_is_refused_while_elr_is_on() {
    let (_cluster, mut client) = cluster(None).await;
    assert_eq!(
        set(&mut client, 4, "0", "min.insync.replicas", "2").await,
        ErrorCode::INVALID_CONFIG.code()
    );
    assert_eq!(set(&mut client, 4, "", "min.insync.replicas", "2").await, 0);
    // Kafka 4.0 does not finalize eligible.leader.replicas.version: accepted.
    let (_cluster, mut client) = cluster(Some(Release::parse("4.0").unwrap())).await;
    assert_eq!(
        set(&mut client, 4, "0", "min.insync.replicas", "2").await,
        0
    );
}

/// Kafka 4.4's answers to the same trace with ELR off (`scenario 0,1,2,3 2 0 0 0,1,2`,
/// `fence 2`, `fence 1`, `fence 0`, `unfence 2`, `unfence 1`), as Kafka 4.0 runs.
#[tokio::test]
async fn without_elr_the_isr_keeps_its_last_member() {
    let (cluster, mut client) = cluster(Some(Release::parse("4.0").unwrap())).await;
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "2").await,
        0
    );
    fence(&cluster, 2);
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[], &[]));
    fence(&cluster, 0);
    assert_eq!(describe(&mut client).await, shown(-1, 1, &[0], &[], &[]));
    unfence(&cluster, 2);
    unfence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(-1, 1, &[0], &[], &[]));
}

/// The Java AdminClient's `describeTopics` (DescribeTopicPartitions) reads the ELR and last
/// known ELR of a partition whose brokers were fenced over the HTTP control
/// (`tools/clients/java`'s `ClusterElr`, which checks each state). About 3 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_admin_describes_eligible_leader_replicas() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let control = support::serve_control(&cluster).await;
    let shown = support::java_program(
        "kafkacodec.clients.ClusterElr",
        &[&cluster.bootstrap(), &control.to_string()],
    )
    .await;
    assert!(shown.contains("both fenced: leader - isr [] elr [0] lastKnownElr [0]"));
}

/// A broker crashed and restarted (`Control::crash_broker`, then `restart_broker`)
/// registers without a clean shutdown: it leaves the ELRs, so it cannot lead from them.
/// Kafka 4.4's answers to the trace `scenario 0,1,2,3 3 0 1 0,1,2`, `fence 2`, `fence 1`,
/// `unclean_restart 1`, `unclean_restart 0`, `fence 0`, `fence 1`, `unclean_restart 1`,
/// `unfence 0`.
#[tokio::test]
async fn a_broker_back_from_an_unclean_shutdown_leaves_the_elrs() {
    let (cluster, mut client) = cluster(None).await;
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "3").await,
        0
    );
    let crash_and_restart = |node: i32| {
        let control = cluster.control();
        control.crash_broker(node).expect("crash");
        assert!(control.is_crashed(node));
        control.restart_broker(node).expect("restart");
        assert!(!control.is_crashed(node));
    };
    fence(&cluster, 2);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0, 1], &[2], &[]));
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[1, 2], &[]));
    // 1 comes back uncleanly: out of the ELR, then in the ISR once caught up.
    crash_and_restart(1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0, 1], &[2], &[]));
    // The leader crashes: 1 leads; 0, back, is in sync again but never eligible meanwhile.
    crash_and_restart(0);
    assert_eq!(describe(&mut client).await, shown(1, 1, &[0, 1], &[2], &[]));
    fence(&cluster, 0);
    fence(&cluster, 1);
    assert_eq!(
        describe(&mut client).await,
        shown(-1, 2, &[], &[0, 1, 2], &[1])
    );
    // The last leader back uncleanly: out of the ELR, and not elected (the ELR is not empty,
    // so the last known leader is not tried); the partition stays offline.
    crash_and_restart(1);
    assert_eq!(
        describe(&mut client).await,
        shown(-1, 2, &[], &[0, 2], &[1])
    );
    // 0, back cleanly, is eligible: it leads, 1 rejoins.
    unfence(&cluster, 0);
    assert_eq!(describe(&mut client).await, shown(0, 3, &[0, 1], &[2], &[]));
}

/// The same crash over HTTP: `POST /brokers/ID/crash`, then `restart`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_over_http_makes_the_restart_unclean() {
    use kafka_codec::serde_json::json;
    let (cluster, mut client) = cluster(None).await;
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "3").await,
        0
    );
    fence(&cluster, 2);
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[1, 2], &[]));
    let control = support::serve_control(&cluster).await;
    let (status, answer) = support::http(control, "POST", "/brokers/1/crash", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (&answer["up"], &answer["crashed"]),
        (&json!(false), &json!(true))
    );
    let (status, answer) = support::http(control, "POST", "/brokers/1/restart", None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        (&answer["up"], &answer["crashed"], &answer["fenced"]),
        (&json!(true), &json!(false), &json!(false))
    );
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0, 1], &[2], &[]));
    let (status, _) = support::http(control, "POST", "/brokers/9/crash", None).await;
    assert_eq!(status, 404);
    let (status, _) = support::http(control, "GET", "/brokers/1/crash", None).await;
    assert_eq!(status, 405);
}

/// Kafka's controller writes a config record for every config a request names on a broker
/// resource, changed or not (`ConfigurationControlManager.incrementalAlterConfigResource`
/// skips an unchanged value only for a topic), and every `min.insync.replicas` record clears
/// the ELRs (`createClearElrRecordsAsNeeded`): the cluster-wide value set again clears them,
/// the topic's set again does not.
#[tokio::test]
async fn the_cluster_wide_min_isr_set_to_its_value_clears_the_elrs() {
    let (cluster, mut client) = cluster(None).await;
    assert_eq!(set(&mut client, 4, "", "min.insync.replicas", "1").await, 0);
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "3").await,
        0
    );
    fence(&cluster, 2);
    fence(&cluster, 1);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[1, 2], &[]));
    assert_eq!(
        set(&mut client, 2, "e", "min.insync.replicas", "3").await,
        0
    );
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[1, 2], &[]));
    assert_eq!(set(&mut client, 4, "", "min.insync.replicas", "1").await, 0);
    assert_eq!(describe(&mut client).await, shown(0, 0, &[0], &[], &[]));
}
