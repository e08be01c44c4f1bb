//! The KRaft quorum APIs on a cluster without controllers, compared with Kafka 4.4's
//! combined node (`process.roles=broker,controller`, `tools/kafka-broker/broker.sh`): the
//! brokers are the voters and answer DescribeQuorum (v0-v2), AddRaftVoter and
//! RemoveRaftVoter through their broker listener.
//!
//! `data/combined-quorum-kafka-4.4.txt` holds what a live `broker.sh` node answered on its
//! broker listener: DescribeQuorum every version it lists, and for partitions it does not
//! have; the AddRaftVoter and RemoveRaftVoter refusals (an unknown voter, the leader itself,
//! a wrong cluster id, no `CONTROLLER` listener, the leader under a wrong directory id), and
//! UnregisterController of the node itself (the active controller) and of an unknown id.
//! Run-dependent values are placeholders: the node id and its directory id (by role), ports,
//! the high watermark, log end offsets and fetch timestamps. The plain test sends the same
//! to a cluster of one broker and no controllers; the ignored one compares the live node
//! with the file (`KAFKA_CODEC_RECORD=1` rewrites it).

use crate::support;

use kafka_codec::messages::add_raft_voter_request::Listener;
use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_codec::messages::{
    AddRaftVoterRequest, DescribeQuorumRequest, RemoveRaftVoterRequest, UnregisterControllerRequest,
};
use kafka_codec::serde_json::Value;
use kafka_codec::{Request, Response, ResponseFrame, Uuid};
use std::net::SocketAddr;
use support::{Calls, Client};

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "combined-quorum-kafka-4.4.txt";

/// A node id no process holds.
const UNKNOWN: i32 = 99;

/// The leader (the one combined node) and its directory id, as DescribeQuorum v2 names it.
struct Leader {
    id: i32,
    directory: Uuid,
}

impl Leader {
    /// `json` with the run-dependent values as placeholders: the node id and directory id
    /// by role (as numbers, or inside a message), ports, offsets and timestamps.
    fn placeholders(&self, json: &mut Value) {
        match json {
            Value::Object(fields) => {
                // A refused partition names no leader (0, the default): kept as it is.
                let refused = fields.contains_key("partitionIndex")
                    && fields.get("errorCode").and_then(Value::as_i64) != Some(0);
                for (name, value) in fields.iter_mut() {
                    match name.as_str() {
                        "leaderId" | "replicaId" | "nodeId" | "voterId" if refused => {}
                        "leaderId" | "replicaId" | "nodeId" | "voterId" => {
                            if value.as_i64() == Some(i64::from(self.id)) {
                                *value = Value::String("<leader>".into());
                            }
                        }
                        "port" => *value = Value::String("<port>".into()),
                        "highWatermark"
                        | "logEndOffset"
                        | "lastFetchTimestamp"
                        | "lastCaughtUpTimestamp" => {
                            // -1 (unknown) and 0 (nothing) are kept: not run-dependent.
                            if value.as_i64().is_some_and(|v| v > 0) {
                                *value = Value::String(format!("<{name}>"));
                            }
                        }
                        _ => self.placeholders(value),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.placeholders(item)),
            Value::String(text) => {
                let directory = self.directory.to_string();
                if text == &directory {
                    *text = "<directory-id>".into();
                    return;
                }
                *text = text.replace(&directory, "<directory-id>");
                if let Some(start) = text.find("the cluster id \"") {
                    let start = start + "the cluster id \"".len();
                    if let Some(end) = text[start..].find('"') {
                        text.replace_range(start..start + end, "<cluster-id>");
                    }
                }
                for (before, after) in [("(", ","), ("id=", ","), ("id ", " "), ("id=", ")")] {
                    *text = text.replace(
                        &format!("{before}{}{after}", self.id),
                        &format!("{before}<leader>{after}"),
                    );
                }
            }
            _ => {}
        }
    }
}

fn describe(topic: &str, partition: i32) -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name(topic.into())
        .with_partitions(vec![
            PartitionData::default().with_partition_index(partition)
        ])])
}

fn add(cluster_id: Option<&str>, id: i32, directory: Uuid, listener: &str) -> AddRaftVoterRequest {
    AddRaftVoterRequest::default()
        .with_cluster_id(cluster_id.map(Into::into))
        .with_timeout_ms(5_000)
        .with_voter_id(id)
        .with_voter_directory_id(directory)
        .with_listeners(vec![Listener::default()
            .with_name(listener.into())
            .with_host("127.0.0.1".into())
            .with_port(1)])
}

fn remove(cluster_id: Option<&str>, id: i32, directory: Uuid) -> RemoveRaftVoterRequest {
    RemoveRaftVoterRequest::default()
        .with_cluster_id(cluster_id.map(Into::into))
        .with_voter_id(id)
        .with_voter_directory_id(directory)
}

/// The leader as DescribeQuorum v2 names it.
async fn leader(client: &mut impl Calls) -> Leader {
    let Response::DescribeQuorum(quorum) = client.call(2, describe("__cluster_metadata", 0)).await
    else {
        panic!("not DescribeQuorum")
    };
    let partition = &quorum.topics[0].partitions[0];
    let voter = (partition.current_voters.iter())
        .find(|voter| voter.replica_id == partition.leader_id)
        .expect("the leader is a voter");
    Leader {
        id: partition.leader_id,
        directory: voter.replica_directory_id,
    }
}

/// One line per request: what, version, case <TAB> the answer's body as Kafka's JSON.
/// `settle` runs before each AddRaftVoter of the unknown voter: Kafka's leader probes it at
/// 127.0.0.1:1, and within its connection backoff after a failed probe it answers
/// "not ready to receive requests" instead of the probe's failure; the live half waits
/// that out, the cluster has no such window.
async fn answers<F: std::future::Future<Output = ()>>(
    client: &mut impl Calls,
    settle: impl Fn() -> F,
) -> Vec<String> {
    let leader = leader(client).await;
    let other_directory = Uuid::from_bytes(*b"combined-quorum!");
    let mut requests: Vec<(String, i16, Request)> = Vec::new();
    for version in 0..=2 {
        requests.push((
            "DescribeQuorum metadata".into(),
            version,
            describe("__cluster_metadata", 0).into(),
        ));
    }
    requests.push((
        "DescribeQuorum partition-1".into(),
        2,
        describe("__cluster_metadata", 1).into(),
    ));
    requests.push((
        "DescribeQuorum other-topic".into(),
        2,
        describe("combined-quorum", 0).into(),
    ));
    for version in 0..=1 {
        requests.push((
            "AddRaftVoter unknown".into(),
            version,
            add(None, UNKNOWN, other_directory, "CONTROLLER").into(),
        ));
    }
    let more: [(&str, i16, Request); 9] = [
        (
            "AddRaftVoter unknown-ack-false",
            1,
            add(None, UNKNOWN, other_directory, "CONTROLLER")
                .with_ack_when_committed(false)
                .into(),
        ),
        (
            "AddRaftVoter leader",
            0,
            add(None, leader.id, leader.directory, "CONTROLLER").into(),
        ),
        (
            "AddRaftVoter wrong-cluster-id",
            0,
            add(Some("wrong"), UNKNOWN, other_directory, "CONTROLLER").into(),
        ),
        (
            "AddRaftVoter no-controller-listener",
            0,
            add(None, UNKNOWN, other_directory, "OTHER").into(),
        ),
        (
            "RemoveRaftVoter unknown",
            0,
            remove(None, UNKNOWN, other_directory).into(),
        ),
        (
            "RemoveRaftVoter leader-other-directory",
            0,
            remove(None, leader.id, other_directory).into(),
        ),
        (
            "RemoveRaftVoter wrong-cluster-id",
            0,
            remove(Some("wrong"), leader.id, leader.directory).into(),
        ),
        // The combined node is the active controller.
        (
            "UnregisterController leader",
            0,
            UnregisterControllerRequest::default()
                .with_controller_id(leader.id)
                .into(),
        ),
        (
            "UnregisterController unknown",
            0,
            UnregisterControllerRequest::default()
                .with_controller_id(UNKNOWN)
                .into(),
        ),
    ];
    requests.extend(
        more.into_iter()
            .map(|(what, version, request)| (what.to_owned(), version, request)),
    );
    let mut lines = Vec::new();
    for (what, version, request) in requests {
        if what.starts_with("AddRaftVoter unknown") {
            settle().await;
        }
        let answer = client.call(version, request).await;
        let mut frame = ResponseFrame::new(answer, version, 0)
            .to_json()
            .expect("json");
        let mut body = frame["body"].take();
        leader.placeholders(&mut body);
        let (api, case) = what.split_once(' ').expect("api and case");
        lines.push(format!("{api} v{version} {case}\t{body}"));
    }
    lines
}

async fn connect(address: SocketAddr) -> Client {
    Client::connect(address, "combined-quorum").await
}

#[tokio::test]
async fn a_cluster_without_controllers_answers_the_quorum_apis_as_a_combined_kafka_node() {
    let cluster = kafka_codec_cluster::Cluster::builder()
        .build()
        .await
        .expect("cluster");
    let mut client = connect(cluster.brokers()[0].address).await;
    let got = answers(&mut client, || async {}).await;
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "cluster");
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 combined node: KAFKA_BROKER (tools/kafka-broker/broker.sh start)"]
async fn a_combined_kafka_node_answers_the_quorum_apis_as_recorded() {
    let mut client = connect(support::live_broker().await).await;
    let settle = || tokio::time::sleep(std::time::Duration::from_secs(3));
    let got = answers(&mut client, settle).await;
    let header = "# What Kafka 4.4's combined node (process.roles=broker,controller,\n\
                  # tools/kafka-broker/broker.sh) answered on its broker listener to\n\
                  # DescribeQuorum, AddRaftVoter, RemoveRaftVoter and UnregisterController; recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # combined_quorum:: --ignored. One line per request: API, version, case <TAB>\n\
                  # the answer's body as Kafka's JSON; the node id and its directory id by\n\
                  # role, ports, high watermark, log end offsets and timestamps (when above 0)\n\
                  # as placeholders: they change from run to run. Three seconds' wait before\n\
                  # each AddRaftVoter of the unknown voter (Kafka's connection backoff).\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
}

/// `data/combined-quorum-acl-kafka-4.4.txt`: the same node's answers to a PLAIN user
/// (`sasl-users`) without DESCRIBE or ALTER on the cluster, which carries an ALTER ACL for
/// another user only (so that `allow.everyone.if.no.acl.found` does not apply).
const ACL_FIXTURE: &str = "combined-quorum-acl-kafka-4.4.txt";

const OTHER_USER: &str = "User:combined-quorum-other";

/// The refused user's answers: DescribeQuorum v0-v2, AddRaftVoter v0-v1, RemoveRaftVoter v0.
async fn refused_answers(user: &mut impl Calls) -> Vec<String> {
    let directory = Uuid::from_bytes(*b"combined-quorum!");
    let mut requests: Vec<(&str, i16, Request)> = Vec::new();
    for version in 0..=2 {
        requests.push((
            "DescribeQuorum",
            version,
            describe("__cluster_metadata", 0).into(),
        ));
    }
    for version in 0..=1 {
        requests.push((
            "AddRaftVoter",
            version,
            add(None, UNKNOWN, directory, "CONTROLLER").into(),
        ));
    }
    requests.push((
        "RemoveRaftVoter",
        0,
        remove(None, UNKNOWN, directory).into(),
    ));
    let mut lines = Vec::new();
    for (api, version, request) in requests {
        let answer = user.call(version, request).await;
        let mut frame = ResponseFrame::new(answer, version, 0)
            .to_json()
            .expect("json");
        let mut body = frame["body"].take();
        refusal_placeholders(&mut body);
        lines.push(format!("{api} v{version} refused\t{body}"));
    }
    lines
}

/// Kafka's refusal message prints its request object: `<request>` stands for it.
fn refusal_placeholders(json: &mut Value) {
    match json {
        Value::Object(fields) => fields.values_mut().for_each(refusal_placeholders),
        Value::Array(items) => items.iter_mut().for_each(refusal_placeholders),
        Value::String(text) if text.starts_with("Request ") && text.contains(") needs ") => {
            let needs = &text[text.rfind(") needs ").expect("needs") + 1..];
            *text = format!("Request <request>{needs}");
        }
        _ => {}
    }
}

#[test]
fn a_cluster_without_controllers_refuses_the_quorum_apis_without_acls_as_kafka_does() {
    support::pipe::paused().block_on(async {
        let (_cluster, _admin, mut client) = support::pipe::acl_cluster(55, OTHER_USER).await;
        let got = refused_answers(&mut client).await;
        support::assert_same_lines(&got, &support::fixture_lines(ACL_FIXTURE), "cluster");
    });
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 node with an authorizer and SASL: KAFKA_BROKER, \
            KAFKA_BROKER_SASL_PLAINTEXT (tools/kafka-broker/broker.sh start)"]
async fn a_combined_kafka_node_refuses_the_quorum_apis_without_acls_as_recorded() {
    use kafka_codec::messages::delete_acls_request::DeleteAclsFilter;
    use kafka_codec::messages::DeleteAclsRequest;
    let (user, password) = support::tools_plain_user();
    let mut admin = connect(support::live_broker().await).await;
    support::allow_cluster_alter(&mut admin, OTHER_USER).await;
    let sasl = std::env::var("KAFKA_BROKER_SASL_PLAINTEXT").expect("KAFKA_BROKER_SASL_PLAINTEXT");
    let sasl = tokio::net::lookup_host(sasl)
        .await
        .expect("resolves")
        .next()
        .expect("an address");
    let mut client = connect(sasl).await;
    support::plain_login(&mut client, &user, &password).await;
    // The node learns the ACL from its metadata log: until then the user is allowed.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let got = loop {
        let got = refused_answers(&mut client).await;
        if got
            .iter()
            .all(|line| !line.contains("\"errorCode\":0,\"topics\""))
            || tokio::time::Instant::now() > deadline
        {
            break got;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let filter = DeleteAclsFilter::default()
        .with_resource_type_filter(4)
        .with_resource_name_filter(Some("kafka-cluster".into()))
        .with_pattern_type_filter(3)
        .with_principal_filter(Some(OTHER_USER.into()))
        .with_host_filter(Some("*".into()))
        .with_operation(7)
        .with_permission_type(3);
    let deleted = admin
        .call(3, DeleteAclsRequest::default().with_filters(vec![filter]))
        .await;
    assert!(matches!(deleted, Response::DeleteAcls(d) if d.filter_results[0].error_code == 0));
    let header = "# What Kafka 4.4's combined node (tools/kafka-broker/broker.sh, StandardAuthorizer)\n\
                  # answered on its SASL_PLAINTEXT broker listener to its PLAIN user (sasl-users)\n\
                  # without DESCRIBE or ALTER on the cluster, which carries an ALTER ACL for\n\
                  # another user only; recorded by KAFKA_CODEC_RECORD=1 cargo test -p\n\
                  # kafka-codec-cluster --test cluster -- combined_quorum::a_combined_kafka_node_refuses\n\
                  # --ignored. One line per request <TAB> the answer's body as Kafka's JSON.\n";
    if support::recorded(ACL_FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(ACL_FIXTURE), "live");
}
