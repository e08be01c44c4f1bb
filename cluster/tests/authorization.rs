//! ACLs entry by entry (`src/authorizer/per_entry.rs`), as Kafka's `KafkaApis` applies
//! them: a request naming an allowed and a denied topic, group or transactional id is
//! served for the one and refused for the other; the lists Kafka filters (ListGroups,
//! ListTransactions, DescribeTopicPartitions) leave out what may not be described; and the
//! authorized operations asked for are computed from the ACLs. That a real Kafka 4.4 broker
//! gives the same answers is the live comparison's (`tools/clients/cluster_authz_compare.py`).

use crate::support;

use kafka_codec::messages::create_acls_request::AclCreation;
use kafka_codec::messages::*;
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
use kafka_codec_cluster::Cluster;
use support::Client;

// Kafka's codes: resource types, pattern types, operations, permissions.
const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const TRANSACTIONAL_ID: i8 = 5;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;
const ALL: i8 = 2;
const READ: i8 = 3;
const WRITE: i8 = 4;
const CREATE: i8 = 5;
const DESCRIBE: i8 = 8;
const ALLOW: i8 = 3;

const TOPIC_DENIED: i16 = ErrorCode::TOPIC_AUTHORIZATION_FAILED.code();
const GROUP_DENIED: i16 = ErrorCode::GROUP_AUTHORIZATION_FAILED.code();

fn acl(resource_type: i8, name: &str, pattern: i8, operation: i8) -> AclCreation {
    AclCreation::default()
        .with_resource_type(resource_type)
        .with_resource_name(name.into())
        .with_resource_pattern_type(pattern)
        .with_principal("User:alice".into())
        .with_host("*".into())
        .with_operation(operation)
        .with_permission_type(ALLOW)
}

/// The bit set Kafka's `authorizedOperations` answers for these operations.
fn bits(operations: &[i8]) -> i32 {
    operations.iter().fold(0, |bits, op| bits | 1 << op)
}

/// A cluster where admin (a super user) created the topics `allowed` and `denied` and a
/// group and a transaction for each prefix, and alice may: READ and WRITE the topic
/// `allowed`, do ALL on the groups and transactional ids prefixed `ok-`, CREATE topics
/// prefixed `new-ok`, DESCRIBE the cluster.
async fn setup() -> (Cluster, Client, Client) {
    let cluster = sasl_cluster("alice", "alice-secret").await;
    let address = cluster.brokers()[0].address;
    let mut admin = support::login(address, "admin").await;
    let Response::CreateTopics(created) = admin
        .call(7, support::create_topics(&["allowed", "denied"], 1, 1))
        .await
    else {
        panic!("not CreateTopics")
    };
    assert!(created.topics.iter().all(|t| t.error_code == 0));
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![
                acl(TOPIC, "allowed", LITERAL, READ),
                acl(TOPIC, "allowed", LITERAL, WRITE),
                acl(GROUP, "ok-", PREFIXED, ALL),
                acl(TRANSACTIONAL_ID, "ok-", PREFIXED, ALL),
                acl(TOPIC, "new-ok", PREFIXED, CREATE),
                acl(CLUSTER, "kafka-cluster", LITERAL, DESCRIBE),
            ]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    // A record in each topic, and an offset committed in each group (a simple commit,
    // which creates the group).
    for topic in ["allowed", "denied"] {
        let Response::Produce(produced) = admin
            .call(9, support::produce(topic, 0, support::batch(0, 1)))
            .await
        else {
            panic!("not Produce")
        };
        assert_eq!(produced.responses[0].partition_responses[0].error_code, 0);
    }
    for group in ["ok-group", "no-group"] {
        let Response::OffsetCommit(committed) =
            admin.call(8, offset_commit(group, &["allowed"])).await
        else {
            panic!("not OffsetCommit")
        };
        assert_eq!(committed.topics[0].partitions[0].error_code, 0);
    }
    for id in ["ok-txn", "no-txn"] {
        let Response::InitProducerId(started) = admin
            .call(
                4,
                InitProducerIdRequest::default()
                    .with_transactional_id(Some(id.into()))
                    .with_transaction_timeout_ms(60_000)
                    .with_producer_id(-1)
                    .with_producer_epoch(-1),
            )
            .await
        else {
            panic!("not InitProducerId")
        };
        assert_eq!(started.error_code, 0);
    }
    let alice = support::login(address, "alice").await;
    (cluster, admin, alice)
}

/// A cluster with SASL/PLAIN users admin, a super user, and `user`.
async fn sasl_cluster(user: &str, password: &str) -> Cluster {
    Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
        .sasl(SaslUser::new(Mechanism::Plain, user, password))
        .super_user("User:admin")
        // As tools/kafka-broker/broker.sh sets the real broker, which the live tests compare.
        .auto_create_topics(false)
        .build()
        .await
        .expect("cluster")
}

fn offset_commit(group: &str, topics: &[&str]) -> OffsetCommitRequest {
    use kafka_codec::messages::offset_commit_request::*;
    OffsetCommitRequest::default()
        .with_group_id(group.into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(
            topics
                .iter()
                .map(|name| {
                    OffsetCommitRequestTopic::default()
                        .with_name((*name).into())
                        .with_partitions(vec![OffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(1)])
                })
                .collect(),
        )
}

/// (topic, partition error codes) of each topic answered, sorted by topic.
fn by_topic<T>(
    topics: impl IntoIterator<Item = T>,
    read: impl Fn(T) -> (String, Vec<i16>),
) -> Vec<(String, Vec<i16>)> {
    let mut all: Vec<_> = topics.into_iter().map(read).collect();
    all.sort();
    all
}

#[tokio::test]
async fn produce_fetch_and_list_offsets_serve_the_allowed_topic_and_refuse_the_other() {
    let (cluster, mut admin, mut alice) = setup().await;
    // One Produce to both: the allowed partition appended, the denied refused alone.
    let mut both = support::produce("allowed", 0, support::batch(1, 1));
    let mut denied_topic = support::produce("denied", 0, support::batch(1, 1)).topic_data;
    both.topic_data.append(&mut denied_topic);
    let Response::Produce(produced) = alice.call(9, both.clone()).await else {
        panic!("not Produce")
    };
    let errors = by_topic(&produced.responses, |t| {
        (
            t.name.to_string(),
            t.partition_responses.iter().map(|p| p.error_code).collect(),
        )
    });
    assert_eq!(
        errors,
        [
            ("allowed".to_owned(), vec![0]),
            ("denied".to_owned(), vec![TOPIC_DENIED])
        ]
    );
    let refused = produced
        .responses
        .iter()
        .find(|t| t.name.as_str() == "denied")
        .expect("denied answered");
    assert_eq!(refused.partition_responses[0].base_offset, -1);

    // The same with acks 0: the allowed records are appended and the connection closed.
    assert!(alice.closed_after(9, both.with_acks(0)).await);

    // Fetch of both: the allowed topic's three records, the denied refused with no high
    // watermark; ListOffsets the same split.
    let mut alice = support::login(cluster.brokers()[0].address, "alice").await;
    let fetch = |topics: &[&str]| {
        use kafka_codec::messages::fetch_request::*;
        FetchRequest::default()
            .with_max_wait_ms(0)
            .with_max_bytes(1 << 20)
            .with_topics(
                topics
                    .iter()
                    .map(|name| {
                        FetchTopic::default()
                            .with_topic((*name).into())
                            .with_partitions(vec![FetchPartition::default()
                                .with_partition(0)
                                .with_partition_max_bytes(1 << 20)])
                    })
                    .collect(),
            )
    };
    let Response::Fetch(fetched) = alice.call(12, fetch(&["allowed", "denied"])).await else {
        panic!("not Fetch")
    };
    let answers = by_topic(&fetched.responses, |t| {
        (
            t.topic.to_string(),
            t.partitions
                .iter()
                .flat_map(|p| [p.error_code, p.high_watermark as i16])
                .collect(),
        )
    });
    assert_eq!(
        answers,
        [
            ("allowed".to_owned(), vec![0, 3]),
            ("denied".to_owned(), vec![TOPIC_DENIED, -1])
        ]
    );
    // Only denied topics, with a long wait: answered at once (the guard would trip).
    let Response::Fetch(fetched) = alice
        .call(
            12,
            fetch(&["denied"])
                .with_max_wait_ms(600_000)
                .with_min_bytes(1),
        )
        .await
    else {
        panic!("not Fetch")
    };
    assert_eq!(fetched.responses[0].partitions[0].error_code, TOPIC_DENIED);

    let list = |topics: &[&str]| {
        use kafka_codec::messages::list_offsets_request::*;
        ListOffsetsRequest::default()
            .with_replica_id(-1)
            .with_topics(
                topics
                    .iter()
                    .map(|name| {
                        ListOffsetsTopic::default()
                            .with_name((*name).into())
                            .with_partitions(vec![ListOffsetsPartition::default()
                                .with_partition_index(0)
                                .with_timestamp(-1)])
                    })
                    .collect(),
            )
    };
    let Response::ListOffsets(listed) = alice.call(7, list(&["denied", "allowed"])).await else {
        panic!("not ListOffsets")
    };
    let offsets = by_topic(&listed.topics, |t| {
        (
            t.name.to_string(),
            t.partitions
                .iter()
                .flat_map(|p| [p.error_code, p.offset as i16])
                .collect(),
        )
    });
    assert_eq!(
        offsets,
        [
            ("allowed".to_owned(), vec![0, 3]),
            ("denied".to_owned(), vec![TOPIC_DENIED, -1])
        ]
    );
    // Nothing of alice's reached the denied topic.
    let Response::ListOffsets(listed) = admin.call(7, list(&["denied"])).await else {
        panic!("not ListOffsets")
    };
    assert_eq!(listed.topics[0].partitions[0].offset, 1);
}

#[tokio::test]
async fn groups_are_listed_described_and_committed_to_as_far_as_allowed() {
    let (_cluster, _admin, mut alice) = setup().await;
    // alice may describe the cluster, so ListGroups lists every group; without it, only
    // the groups she may describe (below, after the cluster ACL is gone).
    let Response::DescribeGroups(described) = alice
        .call(
            5,
            DescribeGroupsRequest::default()
                .with_groups(vec!["no-group".into(), "ok-group".into()])
                .with_include_authorized_operations(true),
        )
        .await
    else {
        panic!("not DescribeGroups")
    };
    let mut groups: Vec<(String, i16, i32)> = described
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.to_string(),
                g.error_code,
                g.authorized_operations,
            )
        })
        .collect();
    groups.sort();
    // ALL on the group: every operation a group supports.
    let group_operations = bits(&[READ, DESCRIBE, 6, 10, 11]);
    assert_eq!(
        groups,
        [
            ("no-group".to_owned(), GROUP_DENIED, i32::MIN),
            ("ok-group".to_owned(), 0, group_operations)
        ]
    );

    // OffsetCommit to the allowed group for both topics: alice may READ only one.
    let Response::OffsetCommit(committed) = alice
        .call(8, offset_commit("ok-group", &["allowed", "denied"]))
        .await
    else {
        panic!("not OffsetCommit")
    };
    let errors = by_topic(&committed.topics, |t| {
        (
            t.name.to_string(),
            t.partitions.iter().map(|p| p.error_code).collect(),
        )
    });
    assert_eq!(
        errors,
        [
            ("allowed".to_owned(), vec![0]),
            ("denied".to_owned(), vec![TOPIC_DENIED])
        ]
    );

    // Only denied topics: refused without reaching the group, which is not created.
    let Response::OffsetCommit(committed) =
        alice.call(8, offset_commit("ok-fresh", &["denied"])).await
    else {
        panic!("not OffsetCommit")
    };
    assert_eq!(committed.topics[0].partitions[0].error_code, TOPIC_DENIED);
    let Response::ListGroups(listed) = alice.call(4, ListGroupsRequest::default()).await else {
        panic!("not ListGroups")
    };
    assert!(listed
        .groups
        .iter()
        .all(|g| g.group_id.as_str() != "ok-fresh"));

    // DeleteGroups of both: the allowed one deleted (it has no members), the other refused.
    let Response::DeleteGroups(deleted) = alice
        .call(
            2,
            DeleteGroupsRequest::default()
                .with_groups_names(vec!["ok-group".into(), "no-group".into()]),
        )
        .await
    else {
        panic!("not DeleteGroups")
    };
    let mut results: Vec<(String, i16)> = deleted
        .results
        .iter()
        .map(|r| (r.group_id.to_string(), r.error_code))
        .collect();
    results.sort();
    assert_eq!(
        results,
        [
            ("no-group".to_owned(), GROUP_DENIED),
            ("ok-group".to_owned(), 0)
        ]
    );
}

#[tokio::test]
async fn lists_leave_out_what_may_not_be_described() {
    let (_cluster, mut admin, mut alice) = setup().await;
    let groups = |answer: Response| match answer {
        Response::ListGroups(body) => {
            let mut ids: Vec<String> = body.groups.iter().map(|g| g.group_id.to_string()).collect();
            ids.sort();
            ids
        }
        other => panic!("not ListGroups: {other:?}"),
    };
    // DESCRIBE on the cluster: every group.
    assert_eq!(
        groups(alice.call(4, ListGroupsRequest::default()).await),
        ["no-group", "ok-group"]
    );
    // Without it: the groups alice may describe.
    let Response::DeleteAcls(removed) = admin
        .call(
            3,
            DeleteAclsRequest::default().with_filters(vec![
                delete_acls_request::DeleteAclsFilter::default()
                    .with_resource_type_filter(CLUSTER)
                    .with_resource_name_filter(None)
                    .with_pattern_type_filter(LITERAL)
                    .with_principal_filter(None)
                    .with_host_filter(None)
                    .with_operation(DESCRIBE)
                    .with_permission_type(ALLOW),
            ]),
        )
        .await
    else {
        panic!("not DeleteAcls")
    };
    assert_eq!(removed.filter_results[0].matching_acls.len(), 1);
    assert_eq!(
        groups(alice.call(4, ListGroupsRequest::default()).await),
        ["ok-group"]
    );

    let Response::ListTransactions(listed) =
        alice.call(1, ListTransactionsRequest::default()).await
    else {
        panic!("not ListTransactions")
    };
    let ids: Vec<&str> = listed
        .transaction_states
        .iter()
        .map(|t| t.transactional_id.as_str())
        .collect();
    assert_eq!(ids, ["ok-txn"]);
    let Response::ListTransactions(listed) =
        admin.call(1, ListTransactionsRequest::default()).await
    else {
        panic!("not ListTransactions")
    };
    assert_eq!(listed.transaction_states.len(), 2);
    // FindCoordinator v4+: each key on its own.
    let Response::FindCoordinator(found) = alice
        .call(
            4,
            FindCoordinatorRequest::default()
                .with_key_type(1)
                .with_coordinator_keys(vec!["ok-txn".into(), "no-txn".into()]),
        )
        .await
    else {
        panic!("not FindCoordinator")
    };
    let found: Vec<(&str, i16, i32)> = found
        .coordinators
        .iter()
        .map(|c| (c.key.as_str(), c.error_code, c.node_id))
        .collect();
    assert_eq!(
        found,
        [
            ("ok-txn", 0, 0),
            (
                "no-txn",
                ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code(),
                -1
            )
        ]
    );
    let Response::DescribeTransactions(described) = alice
        .call(
            0,
            DescribeTransactionsRequest::default()
                .with_transactional_ids(vec!["ok-txn".into(), "no-txn".into()]),
        )
        .await
    else {
        panic!("not DescribeTransactions")
    };
    let errors: Vec<(&str, i16)> = described
        .transaction_states
        .iter()
        .map(|t| (t.transactional_id.as_str(), t.error_code))
        .collect();
    assert_eq!(
        errors,
        [
            ("ok-txn", 0),
            (
                "no-txn",
                ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()
            )
        ]
    );

    // DescribeTopicPartitions: every topic lists the describable one, with alice's
    // operations on it; named, the other is refused.
    let topics = |names: &[&str]| {
        DescribeTopicPartitionsRequest::default()
            .with_response_partition_limit(2000)
            .with_topics(
                names
                    .iter()
                    .map(|name| {
                        describe_topic_partitions_request::TopicRequest::default()
                            .with_name((*name).into())
                    })
                    .collect(),
            )
    };
    let summary = |answer: Response| match answer {
        Response::DescribeTopicPartitions(body) => body
            .topics
            .iter()
            .map(|t| {
                (
                    t.name.as_deref().unwrap_or_default().to_owned(),
                    t.error_code,
                    t.partitions.len(),
                    t.topic_authorized_operations,
                )
            })
            .collect::<Vec<_>>(),
        other => panic!("not DescribeTopicPartitions: {other:?}"),
    };
    let read_write = bits(&[READ, WRITE, DESCRIBE]);
    assert_eq!(
        summary(alice.call(0, topics(&[])).await),
        [("allowed".to_owned(), 0, 1, read_write)]
    );
    assert_eq!(
        summary(alice.call(0, topics(&["allowed", "denied"])).await),
        [
            ("allowed".to_owned(), 0, 1, read_write),
            ("denied".to_owned(), TOPIC_DENIED, 0, i32::MIN)
        ]
    );
    assert_eq!(
        summary(alice.call(0, topics(&["denied"])).await),
        [("denied".to_owned(), TOPIC_DENIED, 0, i32::MIN)]
    );
}

#[tokio::test]
async fn metadata_and_describe_cluster_compute_the_authorized_operations() {
    let (cluster, _admin, mut alice) = setup().await;
    let Response::Metadata(metadata) = alice
        .call(
            10,
            MetadataRequest::default()
                .with_topics(None)
                .with_include_cluster_authorized_operations(true)
                .with_include_topic_authorized_operations(true),
        )
        .await
    else {
        panic!("not Metadata")
    };
    let topics: Vec<(&str, i32)> = metadata
        .topics
        .iter()
        .map(|t| {
            (
                t.name.as_deref().unwrap_or_default(),
                t.topic_authorized_operations,
            )
        })
        .collect();
    assert_eq!(topics, [("allowed", bits(&[READ, WRITE, DESCRIBE]))]);
    assert_eq!(metadata.cluster_authorized_operations, bits(&[DESCRIBE]));
    // Not asked: Kafka's "omitted".
    let Response::Metadata(metadata) = alice
        .call(10, MetadataRequest::default().with_topics(None))
        .await
    else {
        panic!("not Metadata")
    };
    assert_eq!(metadata.topics[0].topic_authorized_operations, i32::MIN);
    assert_eq!(metadata.cluster_authorized_operations, i32::MIN);
    let Response::DescribeCluster(described) = alice
        .call(
            1,
            DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
        )
        .await
    else {
        panic!("not DescribeCluster")
    };
    assert_eq!(described.cluster_authorized_operations, bits(&[DESCRIBE]));

    // Without SASL there is no authorizer: every operation the resource supports.
    let open = Cluster::builder().build().await.expect("cluster");
    let mut anyone = Client::connect(open.brokers()[0].address, "anyone").await;
    let Response::DescribeCluster(described) = anyone
        .call(
            1,
            DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
        )
        .await
    else {
        panic!("not DescribeCluster")
    };
    assert_eq!(
        described.cluster_authorized_operations,
        bits(&[CREATE, 9, 10, 11, 12, 7, DESCRIBE])
    );
    drop(cluster);
}

#[tokio::test]
async fn admin_requests_are_served_for_the_entries_allowed() {
    let (_cluster, mut admin, mut alice) = setup().await;
    // CREATE on the prefix new-ok: the one topic created, the other refused.
    let Response::CreateTopics(created) = alice
        .call(7, support::create_topics(&["new-ok-1", "new-no"], 1, 1))
        .await
    else {
        panic!("not CreateTopics")
    };
    let mut errors: Vec<(String, i16)> = created
        .topics
        .iter()
        .map(|t| (t.name.to_string(), t.error_code))
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            ("new-no".to_owned(), TOPIC_DENIED),
            ("new-ok-1".to_owned(), 0)
        ]
    );
    // DescribeConfigs: alice may not describe the configs of either topic (READ and WRITE
    // do not imply DESCRIBE_CONFIGS); admin may.
    let describe = DescribeConfigsRequest::default().with_resources(
        ["allowed", "new-no"]
            .map(|name| {
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(name.into())
            })
            .to_vec(),
    );
    let Response::DescribeConfigs(described) = alice.call(4, describe.clone()).await else {
        panic!("not DescribeConfigs")
    };
    assert!(described
        .results
        .iter()
        .all(|r| r.error_code == TOPIC_DENIED && r.configs.is_empty()));
    let Response::DescribeConfigs(described) = admin.call(4, describe).await else {
        panic!("not DescribeConfigs")
    };
    let errors: Vec<i16> = described.results.iter().map(|r| r.error_code).collect();
    assert_eq!(
        errors,
        [0, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()],
        "the refused topic was not created"
    );
}

/// Runs `tools/clients/cluster_authz_compare.py` (librdkafka) with the clients' venv python
/// (`KAFKA_CLIENTS_PYTHON`) and returns the outcome line it prints.
async fn authz_scenario(admin: String, user: String, name: &str) -> String {
    // A prefix of its own per run, so a broker's leftovers never meet this run.
    let prefix = format!("authz-{}", std::process::id());
    support::client_script_output(
        "cluster_authz_compare.py",
        &[admin, user, name.to_owned(), prefix],
    )
    .await
    .trim()
    .to_owned()
}

/// The environment variable `name`, which a live test needs.
fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

/// A librdkafka config as the JSON object the script reads.
fn config(pairs: &[(&str, &str)]) -> String {
    let quote = |text: &str| format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""));
    let fields: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{}: {}", quote(key), quote(value)))
        .collect();
    format!("{{{}}}", fields.join(", "))
}

fn sasl_plain(bootstrap: &str, user: &str, password: &str) -> String {
    config(&[
        ("bootstrap.servers", bootstrap),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", user),
        ("sasl.password", password),
    ])
}

/// The same mixes of allowed and denied entries, through librdkafka, against a real Kafka
/// 4.4 broker (StandardAuthorizer, its PLAINTEXT principal a super user; broker.sh) and
/// against this cluster: a Produce to an allowed and a denied topic, a consumer of both,
/// ListGroups filtered, DescribeGroups, Metadata (`describe_topics`) and DescribeCluster
/// with their authorized operations. The outcomes must be equal.
#[tokio::test]
#[ignore = "needs a Kafka broker with an authorizer and SASL: KAFKA_BROKER, \
            KAFKA_BROKER_SASL_PLAINTEXT, KAFKA_SASL_USERS (bash tools/ci-live.sh cluster_authz)"]
async fn a_real_kafka_broker_authorizes_the_same() {
    let (user, password) = support::broker_plain_user(&env("KAFKA_SASL_USERS"));
    let cluster = sasl_cluster(&user, &password).await;
    let bootstrap = cluster.brokers()[0].address.to_string();
    let ours = authz_scenario(
        sasl_plain(&bootstrap, "admin", "admin-secret"),
        sasl_plain(&bootstrap, &user, &password),
        &user,
    )
    .await;
    println!("cluster: {ours}");
    let broker = authz_scenario(
        config(&[("bootstrap.servers", &env("KAFKA_BROKER"))]),
        sasl_plain(&env("KAFKA_BROKER_SASL_PLAINTEXT"), &user, &password),
        &user,
    )
    .await;
    println!("broker:  {broker}");
    assert_eq!(ours, broker);
}

/// The Java AdminClient's side (`tools/clients/java`, `ClusterAuthz`): DescribeTopicPartitions
/// with authorized operations for an allowed and a denied topic, the topics listed, the
/// transactions listed (filtered) and described (one refused), against a real Kafka 4.4
/// broker with `StandardAuthorizer` and against this cluster. The outcomes must be equal.
#[tokio::test]
#[ignore = "needs a Kafka broker with an authorizer and SASL and the Java clients: \
            KAFKA_BROKER, KAFKA_BROKER_SASL_PLAINTEXT, KAFKA_SASL_USERS, KAFKA_CLIENTS_JAVA \
            (bash tools/ci-live.sh cluster_authz)"]
async fn the_java_admin_client_meets_the_same_acls_as_at_a_real_broker() {
    let (user, password) = support::broker_plain_user(&env("KAFKA_SASL_USERS"));
    let prefix = format!("authz-java-{}", std::process::id());
    let cluster = sasl_cluster(&user, &password).await;
    let bootstrap = cluster.brokers()[0].address.to_string();
    let ours = support::java_program(
        "kafkacodec.clients.ClusterAuthz",
        &[
            &bootstrap,
            "admin",
            "admin-secret",
            &bootstrap,
            &user,
            &password,
            &prefix,
        ],
    )
    .await;
    let broker = support::java_program(
        "kafkacodec.clients.ClusterAuthz",
        &[
            &env("KAFKA_BROKER"),
            "-",
            "-",
            &env("KAFKA_BROKER_SASL_PLAINTEXT"),
            &user,
            &password,
            &prefix,
        ],
    )
    .await;
    assert_eq!(ours.trim(), broker.trim());
}

/// A DeleteShareGroupOffsets refused on its group: GROUP_AUTHORIZATION_FAILED and Kafka's
/// message at the top level, no topics (Kafka's `DeleteShareGroupOffsetsRequest`
/// `getErrorResponse`); and a group's configs (ConfigResource GROUP) described or altered
/// only with DESCRIBE_CONFIGS or ALTER_CONFIGS on the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_offsets_and_group_configs_are_refused_as_kafka_refuses_them() {
    use kafka_codec::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
    use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
    let (_cluster, _admin, mut alice) = setup().await;
    let Response::DeleteShareGroupOffsets(refused) = alice
        .call(
            0,
            DeleteShareGroupOffsetsRequest::default()
                .with_group_id("no-group".into())
                .with_topics(vec![DeleteShareGroupOffsetsRequestTopic::default()
                    .with_topic_name("allowed".into())]),
        )
        .await
    else {
        panic!("not DeleteShareGroupOffsets")
    };
    assert_eq!(refused.error_code, GROUP_DENIED);
    assert_eq!(
        refused.error_message.as_ref().map(|m| m.as_str()),
        Some("Group authorization failed.")
    );
    assert!(refused.responses.is_empty());

    let Response::DescribeConfigs(described) = alice
        .call(
            4,
            DescribeConfigsRequest::default().with_resources(
                ["ok-group", "no-group"]
                    .map(|group| {
                        DescribeConfigsResource::default()
                            .with_resource_type(32)
                            .with_resource_name(group.into())
                    })
                    .to_vec(),
            ),
        )
        .await
    else {
        panic!("not DescribeConfigs")
    };
    let codes: Vec<(String, i16)> = described
        .results
        .iter()
        .map(|r| (r.resource_name.as_str().to_owned(), r.error_code))
        .collect();
    assert_eq!(
        codes,
        [
            ("ok-group".to_owned(), 0),
            ("no-group".to_owned(), GROUP_DENIED)
        ]
    );
}

/// A KIP-848 member's SubscribedTopicRegex resolves to the topics it may DESCRIBE, as
/// Kafka's `TopicRegexResolver` filters them with the member's request context: alice's
/// `.*` is assigned `allowed` (READ implies DESCRIBE), not `denied`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regex_subscription_resolves_to_the_topics_the_member_may_describe() {
    let (_cluster, mut admin, mut alice) = setup().await;
    let Response::Metadata(metadata) = admin
        .call(
            12,
            MetadataRequest::default().with_topics(Some(
                ["allowed", "denied"]
                    .into_iter()
                    .map(|name| {
                        kafka_codec::messages::metadata_request::MetadataRequestTopic::default()
                            .with_name(Some(name.into()))
                    })
                    .collect(),
            )),
        )
        .await
    else {
        panic!("not Metadata")
    };
    let id = |name: &str| {
        metadata
            .topics
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
            .expect("the topic")
            .topic_id
    };
    let Response::ConsumerGroupHeartbeat(joined) = alice
        .call(
            1,
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id("ok-regex".into())
                .with_member_id("m".into())
                .with_member_epoch(0)
                .with_rebalance_timeout_ms(30_000)
                .with_subscribed_topic_regex(Some(".*".into()))
                .with_topic_partitions(Some(Vec::new())),
        )
        .await
    else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    // Resolved after the joining heartbeat (with its context), as Kafka's executor does: the
    // member sees its topics at the next one.
    let Response::ConsumerGroupHeartbeat(resolved) = alice
        .call(
            1,
            ConsumerGroupHeartbeatRequest::default()
                .with_group_id("ok-regex".into())
                .with_member_id("m".into())
                .with_member_epoch(joined.member_epoch)
                .with_topic_partitions(Some(Vec::new())),
        )
        .await
    else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(resolved.error_code, 0, "{:?}", resolved.error_message);
    let topics: Vec<_> = resolved
        .assignment
        .expect("an assignment")
        .topic_partitions
        .iter()
        .map(|tp| tp.topic_id)
        .collect();
    assert_eq!(topics, [id("allowed")]);
    assert_ne!(id("allowed"), id("denied"));
}

/// Delegation tokens through the Java AdminClient 4.4 (`tools/clients/java`,
/// `DelegationTokens`): created with a renewer, described (every owner, another owner, the
/// renewer), renewed, used to log in (SCRAM-SHA-512 with `tokenauth=true`: the topics are
/// listed, tokens may not be asked for), expired at once, then gone (not described, not
/// renewed, no login). Against a real Kafka 4.4 broker (`tools/kafka-broker/broker.sh`,
/// whose config sets `delegation.token.secret.key`) and against this cluster: the lines
/// printed must be equal. About 8 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a Kafka broker with SASL and a delegation token key and the Java clients: \
            KAFKA_BROKER_SASL_PLAINTEXT, KAFKA_SASL_USERS, KAFKA_CLIENTS_JAVA \
            (bash tools/ci-live.sh cluster_authz)"]
async fn the_java_admin_client_uses_delegation_tokens_as_at_a_real_broker() {
    let (user, password) = support::broker_plain_user(&env("KAFKA_SASL_USERS"));
    let broker = support::java_program(
        "kafkacodec.clients.DelegationTokens",
        &[&env("KAFKA_BROKER_SASL_PLAINTEXT"), &user, &password],
    )
    .await;
    let cluster = Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, &user, &password))
        // The broker lets everyone do what no ACL names (`allow.everyone.if.no.acl.found`):
        // here the user (and the token's login, as the user) is a super user.
        .super_user(format!("User:{user}"))
        .delegation_token_secret_key("kafka-codec-delegation-token-key")
        .build()
        .await
        .expect("cluster");
    let ours = support::java_program(
        "kafkacodec.clients.DelegationTokens",
        &[&cluster.brokers()[0].address.to_string(), &user, &password],
    )
    .await;
    assert!(broker.contains("created owner=User:"), "{broker}");
    assert_eq!(ours.trim(), broker.trim());
}
