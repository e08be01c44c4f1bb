//! librdkafka (python confluent-kafka) against the cluster: its admin client creates a
//! topic, its producer sends 1,000 records, an assigned consumer reads them back
//! (`tools/clients/cluster_librdkafka.py` checks every record); two consumers of one group
//! share a topic of 4 partitions, commit, and one takes over when the other leaves
//! (`tools/clients/cluster_librdkafka_group.py`); its idempotent producer delivers every
//! record once (`tools/clients/cluster_librdkafka.py --idempotent`); and with faults driven
//! over the HTTP control surface, it follows a leader moved mid-produce and reconnects to a
//! restarted broker, every record landing once (`tools/clients/cluster_faults_librdkafka.py`),
//! and retries a produce whose answer was lost after it was written, without a duplicate
//! when idempotent and with one when not (`tools/clients/cluster_retry_librdkafka.py`); and
//! a group whose member's session is expired mid-consumption rebalances, losing no record
//! and consuming none twice with committed offsets
//! (`tools/clients/cluster_group_expiry_librdkafka.py`); and its transactional producer
//! commits and aborts, consumes-transforms-produces, and is fenced over HTTP, read back by
//! read_committed consumers (`tools/clients/cluster_txn_librdkafka.py`); and a leader
//! stopped for good is fenced after the broker session timeout, its partition led by the
//! other in-sync replica, which the producer follows (`tools/clients/cluster_fence_librdkafka.py`);
//! its producer sends to a topic never created, which Metadata creates, every record
//! read back (`tools/clients/cluster_topics_librdkafka.py`); and a leader fenced while
//! running and unfenced, which the producer follows away and, after the automatic leader
//! rebalance, back (`tools/clients/cluster_rebalance_librdkafka.py`); and a group whose
//! coordinator is stopped and fenced with no other replica of its internal partition waits
//! (COORDINATOR_NOT_AVAILABLE) and resumes from its committed offset once the broker is
//! restarted (`tools/clients/cluster_coordinator_librdkafka.py`); and its consumer follows a
//! leader moved while it reads (`tools/clients/cluster_fetch_leader_librdkafka.py`); and a
//! leader unregistered while it runs, which the producer follows away
//! (`tools/clients/cluster_unregister_librdkafka.py`).
//! Needs the clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored librdkafka::
//! ```

use crate::support;

use kafka_codec_cluster::Cluster;
use support::run_client_script;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_produces_and_consumes_a_thousand_records() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    run_client_script(
        "cluster_librdkafka.py",
        &[cluster.bootstrap(), "1000".into()],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_produces_to_a_topic_metadata_creates() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    run_client_script(
        "cluster_topics_librdkafka.py",
        &[cluster.bootstrap(), "500".into()],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_follows_a_moved_leader_and_a_restarted_broker() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_faults_librdkafka.py", &["2000"]).await;
}

/// A leader moved while librdkafka's consumer reads: its Fetch to the old leader at the old
/// epoch is refused FENCED_LEADER_EPOCH (naming the new leader from v16, KIP-951), it reads
/// the rest from the new leader, every record once and in order
/// (`tools/clients/cluster_fetch_leader_librdkafka.py` checks the request log and the records).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_consumer_follows_a_moved_leader() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_fetch_leader_librdkafka.py", &["1000"]).await;
}

/// A leader stopped for good and fenced once the broker session timeout (here 1 s) passes:
/// librdkafka's idempotent producer refreshes its metadata, sends the rest to the other
/// in-sync replica, now the leader, and every record lands once
/// (`tools/clients/cluster_fence_librdkafka.py` checks the request log, the brokers listed
/// and every record read back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_follows_the_leader_of_a_fenced_broker() {
    let cluster = Cluster::builder()
        .brokers(3)
        .broker_session_timeout(std::time::Duration::from_secs(1))
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_fence_librdkafka.py", &["1000"]).await;
}

/// A leader unregistered while it runs (UnregisterBroker, as Kafka 4.4's controller acts on
/// it: fenced, out of the brokers listed, still running): librdkafka's idempotent producer
/// refreshes its metadata, sends the rest to the other in-sync replica, now the leader, and
/// every record lands once (`tools/clients/cluster_unregister_librdkafka.py` checks the
/// request log, the brokers listed and every record read back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_follows_the_leader_of_an_unregistered_broker() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_unregister_librdkafka.py", &["1000"]).await;
}

/// A leader fenced while it runs (`POST /brokers/0/fence?running=true`), then unfenced,
/// with Kafka 4.4's automatic leader rebalance checking every second: librdkafka's
/// idempotent producer follows the leadership to broker 1 (the fenced broker refusing what
/// it no longer leads) and back to broker 0, its preferred replica, once it caught up and
/// the check ran; every record lands once (`tools/clients/cluster_rebalance_librdkafka.py`
/// checks the request log, the partition's leader, epochs and ISR, and reads every record
/// back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_follows_a_fenced_leader_away_and_the_rebalance_back() {
    let cluster = Cluster::builder()
        .brokers(3)
        .broker_config("leader.imbalance.check.interval.seconds", "1")
        .build()
        .await
        .expect("cluster");
    let control = support::serve_control(&cluster).await;
    run_client_script(
        "cluster_rebalance_librdkafka.py",
        &[cluster.bootstrap(), control.to_string(), "900".into()],
    )
    .await;
    // Seen from the cluster too: led by its preferred replica at epoch 2, all 900 there.
    assert_eq!(cluster.control().leader("rebalance-proof", 0), (0, 2));
    let state = cluster.shared().state();
    assert_eq!(
        state.topics["rebalance-proof"].partitions[0].high_watermark(),
        900
    );
}

/// A produce applied and its answer lost (`{"applyThen": "disconnect"}` over HTTP), retried
/// by librdkafka: once in the log with `enable.idempotence=true`, twice without
/// (`tools/clients/cluster_retry_librdkafka.py` checks the request log, the delivery
/// reports and every record read back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_retries_a_lost_answer_once_idempotent_twice_without() {
    let cluster = Cluster::builder()
        .brokers(1)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_retry_librdkafka.py", &["20"]).await;
    // Seen from the cluster too: the idempotent producer's partition holds 20 records and
    // knows its producer id; the other holds each record twice.
    let state = cluster.shared().state();
    let idempotent = &state.topics["retry-idempotent"].partitions[0];
    assert_eq!(idempotent.high_watermark(), 20);
    assert_eq!(idempotent.producers.len(), 1);
    let plain = &state.topics["retry-plain"].partitions[0];
    assert_eq!(plain.high_watermark(), 40);
    assert!(plain.producers.is_empty());
}

/// A member's session expired over HTTP mid-consumption: the group rebalances, the expired
/// member joins again as a new one, and with offsets committed per record none is lost or
/// consumed twice (`tools/clients/cluster_group_expiry_librdkafka.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_group_rebalances_after_an_expired_session_losing_nothing() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_group_expiry_librdkafka.py", &["400"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_consumer_group_shares_commits_and_takes_over() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    run_client_script(
        "cluster_librdkafka_group.py",
        &[cluster.bootstrap(), "1000".into()],
    )
    .await;
}

/// The idempotent producer (`enable.idempotence=true`): InitProducerId, then 10,000 records
/// in small batches, five in flight, each checked by the cluster for its epoch and sequence
/// (`tools/clients/cluster_librdkafka.py --idempotent` checks every record arrived once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_idempotent_producer_delivers_every_record_once() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    run_client_script(
        "cluster_librdkafka.py",
        &[cluster.bootstrap(), "10000".into(), "--idempotent".into()],
    )
    .await;
    // The batches carried a producer id: each partition knows exactly one producer.
    let state = cluster.shared().state();
    let topic = &state.topics["librdkafka-idempotent"];
    for (index, partition) in topic.partitions.iter().enumerate() {
        assert_eq!(partition.producers.len(), 1, "partition {index}");
    }
}

/// SASL_PLAINTEXT with PLAIN and SCRAM-SHA-512, then SASL_SSL with both: confluent-kafka's admin
/// client creates a topic, its producer and consumer move 200 records, and a wrong password
/// is refused with its authentication error (`tools/clients/cluster_security.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn confluent_kafka_logs_in_with_sasl_over_plaintext_and_tls() {
    support::run_security_script("confluent-kafka").await;
}

/// ACLs with SASL on, through librdkafka's admin client and producer: refused without an
/// ACL, a PREFIXED WRITE ACL created, found by a MATCH filter and obeyed (delivered inside
/// the prefix, refused outside), refused again once deleted
/// (`tools/clients/cluster_acls_librdkafka.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_is_held_to_the_acls_it_creates() {
    use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
    let cluster = Cluster::builder()
        .sasl(SaslUser::new(
            Mechanism::ScramSha512,
            "admin",
            "admin-secret",
        ))
        .sasl(SaslUser::new(Mechanism::Plain, "bob", "bob-secret"))
        .super_user("User:admin")
        .build()
        .await
        .expect("cluster");
    let args = [
        &cluster.bootstrap(),
        "admin",
        "admin-secret",
        "bob",
        "bob-secret",
    ];
    run_client_script("cluster_acls_librdkafka.py", &args.map(String::from)).await;
}

/// Transactions with librdkafka's transactional producer (`tools/clients/cluster_txn_librdkafka.py`):
/// commit and abort read back by read_committed and read_uncommitted consumers;
/// consume-transform-produce with `send_offsets_to_transaction`; and (issue 30) a
/// transactional id fenced over HTTP: its open transaction is aborted, its commit fails
/// fatally, and a read_committed consumer sees none of its records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_transactions_commit_abort_and_are_fenced() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_txn_librdkafka.py", &[]).await;
}

/// The same transactions script without the control surface: the producer is fenced by a
/// new instance of its transactional id, whose InitProducerId aborts the open transaction,
/// as against a real broker (where the script passes as written: Kafka 4.4 of
/// `tools/kafka-broker/broker.sh`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_transactions_fenced_by_a_new_instance() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    run_client_script("cluster_txn_librdkafka.py", &[cluster.bootstrap()]).await;
}

/// With one replica of the internal topics, the group's coordinator (broker 1) stopped and
/// fenced after a 1 s broker session: librdkafka's consumer keeps asking broker 0 for the
/// coordinator (COORDINATOR_NOT_AVAILABLE), is handed nothing, and once broker 1 is
/// restarted joins it and reads the rest from the committed offset, every record once
/// (`tools/clients/cluster_coordinator_librdkafka.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn librdkafka_waits_for_a_leaderless_coordinator_and_resumes() {
    let cluster = Cluster::builder()
        .brokers(2)
        .broker_session_timeout(std::time::Duration::from_secs(1))
        .broker_config("offsets.topic.replication.factor", "1")
        .broker_config("transaction.state.log.replication.factor", "1")
        .build()
        .await
        .expect("cluster");
    support::run_control_script(&cluster, "cluster_coordinator_librdkafka.py", &["200"]).await;
}
