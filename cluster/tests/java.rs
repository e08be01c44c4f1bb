//! Java kafka-clients 4.4 against the cluster (`tools/clients/java`, `ClusterClients`): the
//! AdminClient creates and describes topics (DescribeTopicPartitions or Metadata, as the
//! cluster advertises), lists groups with their types, describes the KIP-848 group and reads
//! its committed offsets; the producer sends keyed records; a classic consumer group reads
//! them once and commits; two KIP-848 consumers (`group.protocol=consumer`) share a topic,
//! one leaves, and the other takes over every partition from the committed offsets, every
//! record consumed exactly once. Then Kafka 4.4's command-line tools (the jars
//! `tools/kafka-broker/broker.sh fetch` copies): `kafka-topics --describe` shows the topic's
//! 4 partitions with their leaders, `kafka-consumer-groups --list` both groups, and
//! `kafka-consumer-groups --describe` the KIP-848 group's committed offsets at the log end,
//! lag 0; `kafka-console-producer` sends 10 lines and `kafka-console-consumer`, a KIP-848
//! member, reads each back once. Needs java, the module's class path and Kafka's jars:
//!
//! ```text
//! bash tools/kafka-broker/broker.sh fetch
//! KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) \
//!     cargo test -p kafka-codec-cluster --test cluster -- --ignored java::
//! ```

use crate::support;

use kafka_codec_cluster::groups::GroupLimits;
use kafka_codec_cluster::Cluster;
use std::time::Duration;

/// Group limits whose KIP-848 members heartbeat every 500 ms. Kafka's test setups shorten
/// the interval as well: a member learns of a new assignment (or of its fencing) at its next
/// heartbeat, 5 s apart by default.
fn frequent_consumer_heartbeats() -> GroupLimits {
    GroupLimits {
        consumer_heartbeat_interval: Duration::from_millis(500),
        ..GroupLimits::default()
    }
}

/// The same for share group members.
fn frequent_share_heartbeats() -> kafka_codec_cluster::share_groups::ShareConfig {
    kafka_codec_cluster::share_groups::ShareConfig {
        heartbeat_interval: Duration::from_millis(500),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_clients_produce_consume_in_classic_and_kip848_groups_and_administer() {
    let cluster = Cluster::builder()
        .brokers(3)
        .group_limits(frequent_consumer_heartbeats())
        .build()
        .await
        .expect("cluster");
    support::java_program("kafkacodec.clients.ClusterClients", &[&cluster.bootstrap()]).await;

    let bootstrap = cluster.bootstrap();
    let topics = kafka_tool(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--topic",
            "java-kip848",
        ],
    )
    .await;
    assert!(topics.contains("PartitionCount: 4"), "{topics}");
    let partitions = topics
        .lines()
        .filter(|line| line.contains("Partition: ") && line.contains("Leader: "))
        .count();
    assert_eq!(partitions, 4, "{topics}");

    let listed = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &["--bootstrap-server", &bootstrap, "--list"],
    )
    .await;
    let listed: Vec<&str> = listed.lines().map(str::trim).collect();
    assert!(
        listed.contains(&"java-classic") && listed.contains(&"java-kip848"),
        "{listed:?}"
    );

    let described = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--describe",
            "--group",
            "java-kip848",
        ],
    )
    .await;
    // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
    let rows: Vec<Vec<&str>> = described
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|columns| columns.first() == Some(&"java-kip848") && columns.len() >= 6)
        .collect();
    assert_eq!(rows.len(), 4, "{described}");
    let mut committed = 0;
    for row in &rows {
        assert_eq!(row[3], row[4], "committed at the log end: {row:?}");
        assert_eq!(row[5], "0", "no lag: {row:?}");
        committed += row[3].parse::<u64>().expect("an offset");
    }
    assert_eq!(committed, 800, "{described}");

    // kafka-console-producer sends lines; kafka-console-consumer, a KIP-848 member, reads
    // them back once each.
    kafka_tool(
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--create",
            "--topic",
            "java-console",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
        ],
    )
    .await;
    let lines: Vec<String> = (0..10).map(|i| format!("console-{i}")).collect();
    kafka_tool_with_input(
        "org.apache.kafka.tools.ConsoleProducer",
        &["--bootstrap-server", &bootstrap, "--topic", "java-console"],
        lines.join("\n") + "\n",
    )
    .await;
    let consumed = kafka_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--topic",
            "java-console",
            "--group",
            "java-console",
            "--command-property",
            "group.protocol=consumer",
            "--from-beginning",
            "--max-messages",
            "10",
            "--timeout-ms",
            "30000",
        ],
    )
    .await;
    let mut consumed: Vec<&str> = consumed.lines().collect();
    consumed.sort_unstable();
    let mut expected: Vec<&str> = lines.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(consumed, expected);
}

/// Faults driven through the HTTP control (`ClusterFaults`): the Java idempotent producer
/// follows a leader moved mid-produce (every record acknowledged once, at 0..n-1), and its
/// retry of a produce applied with the answer lost leaves no duplicate, while the same
/// without idempotence leaves each record twice. About 5 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_producer_follows_a_moved_leader_and_retries_a_lost_answer_once() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    support::java_control_program(&cluster, "kafkacodec.clients.ClusterFaults").await;
    // Seen from the cluster too: the moved partition holds every record once and is led by
    // broker 1 at epoch 1; the idempotent producer's retried partition holds each record
    // once, the plain one each twice.
    let control = cluster.control();
    assert_eq!(control.leader("java-faults", 0), (1, 1));
    let state = cluster.shared().state();
    assert_eq!(
        state.topics["java-faults"].partitions[0].high_watermark(),
        1000
    );
    let idempotent = &state.topics["java-retry"].partitions[0];
    assert_eq!(idempotent.high_watermark(), 20);
    assert_eq!(idempotent.producers.len(), 1);
    assert_eq!(
        state.topics["java-retry-plain"].partitions[0].high_watermark(),
        40
    );
}

/// More faults through the HTTP control (`ClusterFaultsMore`): the leader broker stopped for
/// a second and restarted while a producer and a consumer run (both reconnect, every record
/// acknowledged and consumed once); a member's session expired mid-consumption in a classic
/// and in a KIP-848 group (it is told, joins again, and with per-record commits no record is
/// lost or consumed twice); a transactional producer fenced mid-transaction (its commit
/// raises ProducerFencedException, read_committed sees none of it, a new instance commits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_clients_recover_from_a_restart_an_expired_session_and_a_fence() {
    let cluster = Cluster::builder()
        .brokers(2)
        // A KIP-848 member learns of its fencing at its next heartbeat.
        .group_limits(frequent_consumer_heartbeats())
        .build()
        .await
        .expect("cluster");
    let stdout =
        support::java_control_program(&cluster, "kafkacodec.clients.ClusterFaultsMore").await;
    assert!(stdout.contains("ProducerFencedException"), "{stdout}");
    // Seen from the cluster: broker 0 is up again and holds every record once; the fenced
    // transaction's partitions hold its records and an abort marker, then the new
    // instance's records and a commit marker; the groups' offsets are at the ends.
    let control = cluster.control();
    assert!(control.is_up(0));
    let state = cluster.shared().state();
    assert_eq!(
        state.topics["java-restart"].partitions[0].high_watermark(),
        600
    );
    let fenced: i64 = state.topics["java-fence"]
        .partitions
        .iter()
        .map(|partition| partition.high_watermark())
        .sum();
    assert_eq!(
        fenced,
        30 + 10 + 4,
        "records and a marker per partition each time"
    );
}

/// Runs one of Kafka's command-line tools (`class` of the jars in `KAFKA_LIB_DIR`, by
/// default where `tools/kafka-broker/broker.sh fetch` copies them, as the CLI's quorum tests
/// find them) with `args`; its stdout, or a failed test with its stderr.
async fn kafka_tool(class: &str, args: &[&str]) -> String {
    kafka_tool_with_input(class, args, String::new()).await
}

/// [`kafka_tool`] with `input` on its stdin.
async fn kafka_tool_with_input(class: &str, args: &[&str], input: String) -> String {
    let lib = std::env::var_os("KAFKA_LIB_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/kafka-broker/lib"),
        std::path::PathBuf::from,
    );
    let version = include_str!("../../tools/kafka-version").trim();
    assert!(
        lib.join(format!("kafka-tools-{version}.jar")).exists(),
        "no Kafka {version} jars in {} (bash tools/kafka-broker/broker.sh fetch)",
        lib.display()
    );
    let mut child = tokio::process::Command::new("java")
        .arg("-cp")
        .arg(format!("{}/*", lib.display()))
        .arg(class)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("java started");
    let mut stdin = child.stdin.take().expect("its stdin");
    tokio::io::AsyncWriteExt::write_all(&mut stdin, input.as_bytes())
        .await
        .expect("the tool read its input");
    drop(stdin);
    let run = async { child.wait_with_output().await };
    let output = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the tool finished")
        .expect("its output");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{class} {args:?} failed: {}\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    print!("{stdout}");
    stdout
}

/// Java kafka-clients' transactions (`tools/clients/java`, `ClusterTransactions`, which also
/// passes against a real Kafka 4.4 broker): a committed and an aborted transaction, a
/// consume-transform-produce step with `sendOffsetsToTransaction`, and a second producer with
/// the same transactional.id fencing the first (ProducerFencedException); read_committed
/// sees exactly the committed records. The cluster finalizes transaction version 2, as Kafka
/// 4.4 does, so the producer speaks it: partitions added by Produce v12+, never by
/// AddPartitionsToTxn, and EndTxn v5+ (the request log shows it). Then Kafka 4.4's
/// `kafka-transactions` lists and describes the transaction and the partition's producer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_transactions_commit_abort_fence_and_kafka_transactions_describes_them() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let bootstrap = cluster.bootstrap();
    let (stdout, protocol) = run_transactions(&cluster).await;
    let producer_id = stdout
        .lines()
        .find_map(|line| line.strip_prefix("transactional id java-txn-a producer id "))
        .expect("the program names the producer id")
        .to_owned();

    assert_eq!(protocol.add_partitions, Vec::<i16>::new(), "{protocol:?}");
    assert!(!protocol.end_txn.is_empty(), "{protocol:?}");
    assert!(protocol.end_txn.iter().all(|&v| v >= 5), "{protocol:?}");
    assert!(!protocol.produce.is_empty(), "{protocol:?}");
    assert!(protocol.produce.iter().all(|&v| v >= 12), "{protocol:?}");

    // TransactionalId Coordinator ProducerId TransactionState
    let listed = kafka_tool(
        "org.apache.kafka.tools.TransactionsCommand",
        &["--bootstrap-server", &bootstrap, "list"],
    )
    .await;
    let row = tool_row(&listed, "java-txn-a");
    assert_eq!(row[2], producer_id, "{listed}");
    assert_eq!(row[3], "CompleteCommit", "{listed}");

    // CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState
    // TransactionTimeoutMs ...
    let described = kafka_tool(
        "org.apache.kafka.tools.TransactionsCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "describe",
            "--transactional-id",
            "java-txn-a",
        ],
    )
    .await;
    let row = tool_row(&described, "java-txn-a");
    assert_eq!(row[0], listed_coordinator(&listed), "{described}");
    assert_eq!(row[2], producer_id, "{described}");
    assert_eq!(row[4], "CompleteCommit", "{described}");
    assert_eq!(
        row[5], "60000",
        "the producer's transaction.timeout.ms: {described}"
    );

    // ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp
    // CurrentTransactionStartOffset
    let producers = kafka_tool(
        "org.apache.kafka.tools.TransactionsCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "describe-producers",
            "--topic",
            "java-txn",
            "--partition",
            "0",
        ],
    )
    .await;
    let row = tool_row(&producers, &producer_id);
    assert_eq!(row[5], "None", "no transaction open: {producers}");
    assert_eq!(row[1], described_epoch(&described), "{producers}");
}

/// The same program against a cluster that finalizes transaction version 1: the producer
/// adds partitions with AddPartitionsToTxn and ends with EndTxn v4 or older.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_transactions_at_transaction_version_1() {
    let cluster = Cluster::builder()
        .brokers(3)
        .transaction_version(kafka_codec_cluster::features::TransactionVersion::V1)
        .build()
        .await
        .expect("cluster");
    let (_, protocol) = run_transactions(&cluster).await;
    assert!(!protocol.add_partitions.is_empty(), "{protocol:?}");
    assert!(!protocol.end_txn.is_empty(), "{protocol:?}");
    assert!(protocol.end_txn.iter().all(|&v| v <= 4), "{protocol:?}");
    assert!(protocol.produce.iter().all(|&v| v <= 11), "{protocol:?}");
}

/// The same program against a cluster answering as Kafka 4.0 (`--as-version 4.0`): 4.0's
/// brokers finalize transaction version 2 (`release-features.tsv`, from 4.0.2's classes), so
/// the producer speaks it at 4.0's versions: Produce v12 (4.0's newest), EndTxn v5, no
/// AddPartitionsToTxn. Before the table, 4.0 was answered without features and the
/// producer fell back to version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_transactions_against_kafka_4_0_use_its_transaction_version_2() {
    let cluster = Cluster::builder()
        .brokers(3)
        .as_version(kafka_codec_cluster::release::Release::parse("4.0").expect("4.0"))
        .build()
        .await
        .expect("cluster");
    let (_, protocol) = run_transactions(&cluster).await;
    assert_eq!(protocol.add_partitions, Vec::<i16>::new(), "{protocol:?}");
    assert!(!protocol.end_txn.is_empty(), "{protocol:?}");
    assert!(protocol.end_txn.iter().all(|&v| v == 5), "{protocol:?}");
    assert!(!protocol.produce.is_empty(), "{protocol:?}");
    assert!(protocol.produce.iter().all(|&v| v == 12), "{protocol:?}");
}

/// Runs `ClusterTransactions` against `cluster`: its stdout (which must tell of the
/// fencing) and the versions of the transaction APIs it sent.
async fn run_transactions(cluster: &Cluster) -> (String, TransactionProtocol) {
    let stdout = support::java_program(
        "kafkacodec.clients.ClusterTransactions",
        &[&cluster.bootstrap()],
    )
    .await;
    assert!(
        stdout.contains("fenced: ProducerFencedException"),
        "{stdout}"
    );
    (stdout, transaction_protocol(cluster))
}

/// The versions of the transaction APIs a run sent, from the cluster's request log.
#[derive(Debug)]
struct TransactionProtocol {
    /// AddPartitionsToTxn.
    add_partitions: Vec<i16>,
    /// EndTxn.
    end_txn: Vec<i16>,
    /// Produce requests with a transactional id.
    produce: Vec<i16>,
}

fn transaction_protocol(cluster: &Cluster) -> TransactionProtocol {
    use kafka_codec::{ApiKey, Request};
    let control = cluster.control();
    let log = control.log();
    let versions = |api| log.of(api).iter().map(|entry| entry.version).collect();
    TransactionProtocol {
        add_partitions: versions(ApiKey::AddPartitionsToTxn),
        end_txn: versions(ApiKey::EndTxn),
        produce: log
            .of(ApiKey::Produce)
            .iter()
            .filter(|entry| {
                matches!(&entry.request.body,
                         Request::Produce(body) if body.transactional_id.is_some())
            })
            .map(|entry| entry.version)
            .collect(),
    }
}

/// The columns of the row of a tool's table whose first or second column is `key`.
fn tool_row<'a>(table: &'a str, key: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|columns| columns.first() == Some(&key) || columns.get(1) == Some(&key))
        .unwrap_or_else(|| panic!("no row for {key}: {table}"))
}

/// The coordinator `kafka-transactions list` names for java-txn-a.
fn listed_coordinator(listed: &str) -> &str {
    tool_row(listed, "java-txn-a")[1]
}

/// The producer epoch `kafka-transactions describe` names.
fn described_epoch(described: &str) -> &str {
    tool_row(described, "java-txn-a")[3]
}

/// Java kafka-clients 4.4's `KafkaShareConsumer` (`tools/clients/java`, `ClusterShareGroups`):
/// two share consumers of one group share a one-partition topic, the AdminClient describes
/// the group (both assigned the partition) and lists it as a share group, and 400 records
/// are each consumed exactly once between the two. The same program passes against a real
/// Kafka 4.4 broker (by hand: `java -cp "$(bash tools/clients/java-classpath.sh)"
/// kafkacodec.clients.ClusterShareGroups $KAFKA_BROKER`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_share_consumers_consume_every_record_once() {
    let cluster = Cluster::builder()
        .share_config(frequent_share_heartbeats())
        .build()
        .await
        .expect("cluster");
    support::java_program(
        "kafkacodec.clients.ClusterShareGroups",
        &[&cluster.bootstrap()],
    )
    .await;
}

/// Kafka 4.4's `kafka-leader-election` (`LeaderElectionCommand`): a preferred election over
/// every partition moves a moved leader back; naming a partition already on its preferred
/// replica reports nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and Kafka's jars (bash tools/kafka-broker/broker.sh fetch)"]
async fn kafka_leader_election_moves_leaders_back_to_their_preferred_replicas() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    cluster.shared().state().add_topic("elect", 3, 3);
    cluster
        .control()
        .elect_leader("elect", 0, 1)
        .expect("moved");
    let bootstrap = cluster.bootstrap();
    let all = kafka_tool(
        "org.apache.kafka.tools.LeaderElectionCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--election-type",
            "PREFERRED",
            "--all-topic-partitions",
        ],
    )
    .await;
    assert!(
        all.contains("Successfully completed leader election (PREFERRED) for partitions elect-0"),
        "{all}"
    );
    assert_eq!(cluster.shared().state().leader("elect", 0, 3), (0, 2));
    let one = kafka_tool(
        "org.apache.kafka.tools.LeaderElectionCommand",
        &[
            "--bootstrap-server",
            &bootstrap,
            "--election-type",
            "PREFERRED",
            "--topic",
            "elect",
            "--partition",
            "1",
        ],
    )
    .await;
    assert!(
        one.contains("Valid replica already elected for partitions elect-1"),
        "{one}"
    );
}

/// Kafka 4.4's `kafka-configs` sets client quotas (`--alter --add-config` on a user and
/// client id, and on the default client id) and describes them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and Kafka's jars (bash tools/kafka-broker/broker.sh fetch)"]
async fn kafka_configs_alters_and_describes_client_quotas() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let bootstrap = cluster.bootstrap();
    let configs = |args: &'static [&'static str]| {
        let mut all = vec!["--bootstrap-server", bootstrap.as_str()];
        all.extend_from_slice(args);
        all
    };
    let altered = kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &configs(&[
            "--alter",
            "--add-config",
            "producer_byte_rate=1024,consumer_byte_rate=2048",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--entity-type",
            "clients",
            "--entity-name",
            "app",
        ]),
    )
    .await;
    assert!(altered.contains("Completed updating config"), "{altered}");
    kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &configs(&[
            "--alter",
            "--add-config",
            "request_percentage=50",
            "--entity-type",
            "clients",
            "--entity-default",
        ]),
    )
    .await;
    let described = kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &configs(&[
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--entity-type",
            "clients",
            "--entity-name",
            "app",
        ]),
    )
    .await;
    assert!(
        described.contains("producer_byte_rate=1024.0")
            && described.contains("consumer_byte_rate=2048.0"),
        "{described}"
    );
    let defaults = kafka_tool(
        "org.apache.kafka.tools.ConfigCommand",
        &configs(&["--describe", "--entity-type", "clients", "--entity-default"]),
    )
    .await;
    assert!(defaults.contains("request_percentage=50.0"), "{defaults}");
    let stored = cluster
        .shared()
        .client_quotas()
        .describe(&[], false)
        .map(|found| found.len());
    assert_eq!(stored, Ok(2));
}

/// Java kafka-clients 4.4's AdminClient on a share group's offsets (`tools/clients/java`,
/// `ClusterShareGroupOffsets`: alterShareGroupOffsets making the group, listShareGroupOffsets
/// with the lag, a KafkaShareConsumer reading from the altered start, GroupNotEmptyException
/// while it is a member, deleteShareGroupOffsets), then Kafka 4.4's `kafka-share-groups` on
/// the group it left without offsets: `--reset-offsets --to-earliest --execute`,
/// `--describe --offsets` (start 0, lag 10), `--delete-offsets`, and no offsets again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java, the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh)) and Kafka's jars (bash tools/kafka-broker/broker.sh fetch)"]
async fn java_admin_and_kafka_share_groups_alter_describe_and_delete_share_offsets() {
    let cluster = Cluster::builder()
        .share_config(frequent_share_heartbeats())
        .build()
        .await
        .expect("cluster");
    share_offsets_scenario(&cluster.bootstrap(), "java-share-offsets").await;
}

/// The same against a real Kafka 4.4 broker (`bash tools/ci-live.sh cluster_groups`), which
/// passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT, java, KAFKA_CLIENTS_JAVA and Kafka's jars (bash tools/ci-live.sh cluster_groups)"]
async fn a_real_kafka_broker_answers_the_java_share_offsets_scenario() {
    let broker = support::live_bootstrap();
    let nanos = support::nanos();
    share_offsets_scenario(&broker, &format!("java-share-offsets-{nanos}")).await;
}

async fn share_offsets_scenario(bootstrap: &str, name: &str) {
    let (topic, group) = (format!("{name}-t"), format!("{name}-g"));
    support::java_program(
        "kafkacodec.clients.ClusterShareGroupOffsets",
        &[bootstrap, &topic, &group],
    )
    .await;
    let tool = |args: &[&str]| {
        let mut all = vec!["--bootstrap-server", bootstrap, "--group", &group];
        all.extend_from_slice(args);
        let all: Vec<String> = all.into_iter().map(str::to_owned).collect();
        async move {
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            kafka_tool(
                "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
                &all,
            )
            .await
        }
    };
    let reset = tool(&[
        "--reset-offsets",
        "--to-earliest",
        "--execute",
        "--topic",
        &topic,
    ])
    .await;
    assert_eq!(tool_row(&reset, &topic), [group.as_str(), &topic, "0", "0"]);
    let described = tool(&["--describe", "--offsets"]).await;
    assert_eq!(
        tool_row(&described, &topic),
        [group.as_str(), &topic, "0", "0", "10"]
    );
    let deleted = tool(&["--delete-offsets", "--topic", &topic]).await;
    assert_eq!(tool_row(&deleted, &topic), [topic.as_str(), "Successful"]);
    let none = format!("Share group '{group}' has no offset information.");
    assert!(tool(&["--describe", "--offsets"]).await.contains(&none));
}

/// `ClusterShareGroupReset`: the AdminClient sets a share group's `share.auto.offset.reset`
/// to `earliest` (a GROUP config) before the group exists, and a Java `KafkaShareConsumer`
/// of it gets every record produced before it subscribed, each once. The same program passes
/// against a real Kafka 4.4 broker (by hand: `java -cp "$(bash
/// tools/clients/java-classpath.sh)" kafkacodec.clients.ClusterShareGroupReset $KAFKA_BROKER
/// TOPIC GROUP`, about 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn a_java_share_consumer_of_an_earliest_group_gets_the_older_records() {
    let cluster = Cluster::builder()
        .share_config(kafka_codec_cluster::share_groups::ShareConfig {
            // As above: the member learns of its assignment at its next heartbeat.
            heartbeat_interval: Duration::from_millis(500),
            ..Default::default()
        })
        .build()
        .await
        .expect("cluster");
    support::java_program(
        "kafkacodec.clients.ClusterShareGroupReset",
        &[&cluster.bootstrap(), "reset-t", "reset-g"],
    )
    .await;
}

/// Java kafka-clients 4.4's KIP-848 consumer subscribing by pattern (`tools/clients/java`,
/// `ClusterRegexConsumers`): a `SubscriptionPattern` (RE2J, resolved by the coordinator) and
/// a `java.util.regex.Pattern` (resolved by the client), each in its own group; a topic
/// created after the subscribe is picked up, every record consumed once by each, a topic
/// neither matches is not; a pattern RE2J refuses fails the poll with Kafka's message. About
/// 25 s (Kafka resolves a group's regexes at most every 10 s), so `.ci/run` skips it; by
/// hand: `KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh) cargo test -p
/// kafka-codec-cluster --test cluster -- --ignored java::java_consumers_subscribe_by_pattern`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_consumers_subscribe_by_pattern_and_pick_up_new_topics() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    support::java_program(
        "kafkacodec.clients.ClusterRegexConsumers",
        &[&cluster.bootstrap(), "java-regex"],
    )
    .await;
}

/// The same against a real Kafka 4.4 broker, which passes (about 32 s; by hand, with
/// `KAFKA_BROKER` from `bash tools/kafka-broker/broker.sh env`; not in CI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker: KAFKA_BROKER=HOST:PORT, java and KAFKA_CLIENTS_JAVA (bash tools/kafka-broker/broker.sh start)"]
async fn a_real_kafka_broker_answers_the_java_regex_scenario() {
    let broker = support::live_bootstrap();
    let nanos = support::nanos();
    support::java_program(
        "kafkacodec.clients.ClusterRegexConsumers",
        &[&broker, &format!("java-regex-{nanos}")],
    )
    .await;
}

/// A Kafka Streams 4.4 application with `group.protocol=streams` (KIP-1071;
/// `tools/clients/java`, `ClusterStreams`): two instances of a count by key share the four
/// tasks of a 4-partition input (the changelog topic created by the coordinator's request,
/// as Kafka's broker creates it), the expected counts come out, one instance leaves and the
/// other takes over every task, counting on from the committed state. The same program
/// passes against a real Kafka 4.4 broker (by hand: `java -cp "$(bash
/// tools/clients/java-classpath.sh)" kafkacodec.clients.ClusterStreams $KAFKA_BROKER`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs java and the Java clients' class path (KAFKA_CLIENTS_JAVA=$(bash tools/clients/java-classpath.sh))"]
async fn java_streams_app_counts_by_key_and_one_instance_takes_over() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let out =
        support::java_program("kafkacodec.clients.ClusterStreams", &[&cluster.bootstrap()]).await;
    assert!(out.contains("summary: split 2+2, counts {key-0=10, key-1=10, key-2=10, key-3=10, key-4=10, key-5=10, key-6=10, key-7=10}, after close 4 tasks on one"), "{out}");
}
