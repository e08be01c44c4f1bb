//! UnregisterController (key 94, v0) compared with Kafka 4.4.
//! `data/unregister-controller-kafka-4.4.txt` holds what a real cluster of two controllers
//! (both voters) and one broker (`tools/kafka-broker/cluster.sh --controllers 2 --brokers 1`)
//! answered, through the broker (which forwards it), the active controller and the other
//! one, for an id nothing holds, the broker's id, the active controller's and the other
//! voter's (a second's wait after each success); then what DescribeCluster (controller
//! endpoints) and DescribeQuorum (the voters) show. Node ids, ports and the cluster id are
//! placeholders. The plain test sends the same to a cluster of two controllers and one
//! broker; the ignored one compares a live Kafka with the file (`KAFKA_CODEC_RECORD=1`
//! rewrites it).
//!
//! `data/unregister-controller-observer-kafka-4.4.txt`: a registered controller that is not a
//! voter (an observer of `tools/kafka-broker/broker.sh`'s dynamic quorum, started by hand:
//! the ignored test's doc comment; the cluster's controller removed from the voters): Kafka
//! does not look at the voter set, it succeeds too.
//!
//! `data/unregister-controller-acl-kafka-4.4.txt`: the same request from a SASL user without
//! ALTER on the cluster (`tools/kafka-broker/broker.sh`: `StandardAuthorizer`, the cluster
//! carrying an ACL for another user so that `allow.everyone.if.no.acl.found` does not apply).

use crate::support;

use kafka_codec::messages::delete_acls_request::DeleteAclsFilter;
use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_codec::messages::{
    DeleteAclsRequest, DescribeClusterRequest, DescribeQuorumRequest, UnregisterControllerRequest,
};
use kafka_codec::serde_json::Value;
use kafka_codec::{Response, ResponseFrame};
use std::net::SocketAddr;
use support::{Calls, Client};

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "unregister-controller-kafka-4.4.txt";
const ACL_FIXTURE: &str = "unregister-controller-acl-kafka-4.4.txt";

/// An id no node holds.
const UNKNOWN: i32 = 99;

/// The node ids the lines name: the broker, the active controller, the other controller.
#[derive(Debug, Clone, Copy)]
struct Nodes {
    broker: i32,
    active: i32,
    /// The other controller, named `other` in the lines (`voter`, `observer`).
    voter: i32,
    other: &'static str,
}

impl Nodes {
    fn id(&self, target: &str) -> i32 {
        match target {
            "unknown" => UNKNOWN,
            "broker-id" => self.broker,
            "active" => self.active,
            other if other == self.other => self.voter,
            other => panic!("no target {other}"),
        }
    }

    /// `json` with each node id (as a number, or after `ID `/`node ` in a message) named by
    /// its role, and the request Kafka's authorization refusal prints as `<request>`.
    fn placeholders(&self, json: &mut Value) {
        match json {
            Value::Object(fields) => {
                for (name, value) in fields.iter_mut() {
                    match name.as_str() {
                        "brokerId" | "controllerId" | "leaderId" | "replicaId" => {
                            if let Some(id) = value.as_i64() {
                                *value = Value::String(self.role(id as i32));
                            }
                        }
                        "port" => *value = Value::String("<port>".into()),
                        "clusterId" => *value = Value::String("<cluster-id>".into()),
                        _ => self.placeholders(value),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.placeholders(item)),
            // Kafka's refusal prints its request objects (connection, session, buffers).
            Value::String(text) if text.starts_with("Request ") && text.contains(") needs ") => {
                let needs = &text[text.rfind(") needs ").expect("needs") + 1..];
                *text = format!("Request <request>{needs}");
            }
            Value::String(text) => {
                for (id, role) in [
                    (self.broker, "broker-id"),
                    (self.active, "active"),
                    (self.voter, self.other),
                ] {
                    for word in ["ID ", "node ", "controller "] {
                        *text = text.replace(&format!("{word}{id} "), &format!("{word}<{role}> "));
                        *text = text.replace(&format!("{word}{id}."), &format!("{word}<{role}>."));
                    }
                }
            }
            _ => {}
        }
    }

    fn role(&self, id: i32) -> String {
        match id {
            _ if id == self.broker => "<broker-id>".into(),
            _ if id == self.active => "<active>".into(),
            _ if id == self.voter => format!("<{}>", self.other),
            other => other.to_string(),
        }
    }
}

/// The body of `answer` as Kafka's JSON, node ids by role.
fn body_json(answer: Response, version: i16, nodes: &Nodes) -> Value {
    let mut frame = ResponseFrame::new(answer, version, 0)
        .to_json()
        .expect("json");
    let mut body = frame["body"].take();
    nodes.placeholders(&mut body);
    body
}

fn unregister(id: i32) -> UnregisterControllerRequest {
    UnregisterControllerRequest::default().with_controller_id(id)
}

/// The lines of one run: each listener (`broker`, `controller`: the active one, `follower`:
/// the other) asked to unregister each target, the voter last; then what the active
/// controller describes. `settle` runs after each success and before the describes: Kafka's
/// unregistered controller registers again at once (some 50 ms on the live cluster), and
/// until it has, a second UnregisterController of it is CONTROLLER_ID_NOT_REGISTERED; the
/// live half waits that out, the cluster has no such window.
async fn answers<F: std::future::Future<Output = ()>>(
    broker: &mut impl Calls,
    active: &mut impl Calls,
    follower: &mut impl Calls,
    nodes: &Nodes,
    settle: impl Fn() -> F,
) -> Vec<String> {
    let mut lines = Vec::new();
    for target in ["unknown", "broker-id", "active"] {
        for (listener, client) in [
            ("broker", &mut *broker as &mut dyn CallsDyn),
            ("controller", &mut *active),
            ("follower", &mut *follower),
        ] {
            let answer = client
                .call_dyn(0, unregister(nodes.id(target)).into())
                .await;
            lines.push(format!(
                "UnregisterController v0 {listener} {target}\t{}",
                body_json(answer, 0, nodes)
            ));
        }
    }
    for (listener, client) in [
        ("follower", &mut *follower as &mut dyn CallsDyn),
        ("broker", &mut *broker),
        ("controller", &mut *active),
    ] {
        let answer = client.call_dyn(0, unregister(nodes.voter).into()).await;
        lines.push(format!(
            "UnregisterController v0 {listener} voter\t{}",
            body_json(answer, 0, nodes)
        ));
        settle().await;
    }
    lines.extend(describes(active, nodes).await);
    // A broker forwards DescribeQuorum to the active controller.
    lines.push(format!(
        "DescribeQuorum v2 broker after\t{}",
        quorum_summary(broker, nodes).await
    ));
    lines
}

/// What the active controller shows after: DescribeCluster's controllers (in node id order,
/// checked, then by role) and DescribeQuorum's leader and voters, and whether the other
/// controller is among the observers.
async fn describes(active: &mut impl CallsDyn, nodes: &Nodes) -> Vec<String> {
    let mut lines = Vec::new();
    let described = active
        .call_dyn(
            1,
            DescribeClusterRequest::default()
                .with_endpoint_type(2)
                .into(),
        )
        .await;
    // Both list the controllers in node id order; which role comes first depends on the
    // ids (the live leader is elected at random), so the line lists them by role.
    let Response::DescribeCluster(mut described) = described else {
        panic!("not DescribeCluster")
    };
    let ids: Vec<i32> = described.brokers.iter().map(|c| c.broker_id).collect();
    assert!(ids.is_sorted(), "controllers not in node id order: {ids:?}");
    described.brokers.sort_by_key(|c| nodes.role(c.broker_id));
    lines.push(format!(
        "DescribeCluster v1 controller after\t{}",
        body_json(described.into(), 1, nodes)
    ));
    lines.push(format!(
        "DescribeQuorum v2 controller after\t{}",
        quorum_summary(active, nodes).await
    ));
    lines
}

/// DescribeQuorum v2's error, leader and voters by role, and whether the other controller is
/// among the observers.
async fn quorum_summary(client: &mut (impl CallsDyn + ?Sized), nodes: &Nodes) -> String {
    let quorum = DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])]);
    let Response::DescribeQuorum(quorum) = client.call_dyn(2, quorum.into()).await else {
        panic!("not DescribeQuorum")
    };
    let partition = &quorum.topics[0].partitions[0];
    let observes = partition
        .observers
        .iter()
        .any(|o| o.replica_id == nodes.voter);
    let mut voters: Vec<String> = partition
        .current_voters
        .iter()
        .map(|voter| nodes.role(voter.replica_id))
        .collect();
    voters.sort();
    format!(
        "error {} leader {} voters {} {} observes {observes}",
        partition.error_code,
        nodes.role(partition.leader_id),
        voters.join(","),
        nodes.role(nodes.voter)
    )
}

/// [`Calls`] as a trait object, for a list of clients of different kinds.
trait CallsDyn {
    fn call_dyn(
        &mut self,
        version: i16,
        body: kafka_codec::Request,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + '_>>;
}

impl<C: Calls> CallsDyn for C {
    fn call_dyn(
        &mut self,
        version: i16,
        body: kafka_codec::Request,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + '_>> {
        Box::pin(self.call(version, body))
    }
}

async fn connect(address: SocketAddr) -> Client {
    Client::connect(address, "unregister-controller").await
}

#[tokio::test]
async fn the_cluster_unregisters_controllers_as_kafka_does() {
    let cluster = kafka_codec_cluster::Cluster::builder()
        .brokers(1)
        .controllers(2)
        .build()
        .await
        .expect("cluster");
    let controllers = cluster.controllers();
    let nodes = Nodes {
        broker: 0,
        active: controllers[0].node_id,
        voter: controllers[1].node_id,
        other: "voter",
    };
    let mut broker = connect(cluster.brokers()[0].address).await;
    let mut active = connect(controllers[0].address).await;
    let mut follower = connect(controllers[1].address).await;
    let got = answers(&mut broker, &mut active, &mut follower, &nodes, || async {}).await;
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "cluster");
}

#[test]
#[ignore = "starts a real Kafka cluster (two controllers, one broker; ~30 s): \
            tools/kafka-broker/cluster.sh --controllers 2 --brokers 1"]
fn kafka_unregisters_controllers_as_recorded() {
    let script = |args: &[&str]| {
        std::process::Command::new("bash")
            .arg(support::KAFKA_CLUSTER_SCRIPT)
            .args(args)
            .output()
            .expect("cluster.sh")
    };
    let started = script(&["--controllers", "2", "--brokers", "1", "start"]);
    if !started.status.success() {
        script(&["stop"]);
        panic!("cluster.sh: {}", String::from_utf8_lossy(&started.stderr));
    }
    let env = String::from_utf8_lossy(&started.stdout).into_owned();
    let result = std::panic::catch_unwind(|| {
        tokio::runtime::Runtime::new()
            .expect("runtime")
            .block_on(live(&env))
    });
    script(&["stop"]);
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

async fn live(env: &str) {
    let address = |name: &str| -> SocketAddr {
        env.lines()
            .find_map(|line| line.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("{name} in cluster.sh's env"))
            .parse()
            .expect("an address")
    };
    let broker_address = address("KAFKA_CLUSTER_BROKER_3");
    let controllers = [
        (1, address("KAFKA_CLUSTER_CONTROLLER_1")),
        (2, address("KAFKA_CLUSTER_CONTROLLER_2")),
    ];
    let mut first = connect(controllers[0].1).await;
    // The leader, once elected and known to controller 1.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let leader = loop {
        let Response::DescribeCluster(described) = first
            .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
            .await
        else {
            panic!("not DescribeCluster")
        };
        if described.controller_id > 0 && described.brokers.len() == 2 {
            break described.controller_id;
        }
        assert!(tokio::time::Instant::now() < deadline, "no leader");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let (active_address, follower_address, voter) = if leader == 1 {
        (controllers[0].1, controllers[1].1, 2)
    } else {
        (controllers[1].1, controllers[0].1, 1)
    };
    let nodes = Nodes {
        broker: 3,
        active: leader,
        voter,
        other: "voter",
    };
    let mut broker = connect(broker_address).await;
    let mut active = connect(active_address).await;
    let mut follower = connect(follower_address).await;
    let settle = || tokio::time::sleep(std::time::Duration::from_secs(1));
    let got = answers(&mut broker, &mut active, &mut follower, &nodes, settle).await;
    let header = "# What Kafka 4.4 answered to UnregisterController v0 (two controllers, both\n\
                  # voters, and one broker: tools/kafka-broker/cluster.sh --controllers 2\n\
                  # --brokers 1), through the broker, the active controller and the other one\n\
                  # (a second's wait after each success: the controller registers again), then\n\
                  # DescribeCluster and DescribeQuorum; recorded by KAFKA_CODEC_RECORD=1 cargo\n\
                  # test -p kafka-codec-cluster --test cluster -- unregister_controller::\n\
                  # --ignored. One line per request: API, version, listener, target <TAB> the\n\
                  # answer's body as Kafka's JSON (node ids by role), or a summary.\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
}

/// The lines of the ACL fixture: `refused` (the user without ALTER on the cluster) and
/// `allowed` (a super user) asking to unregister an unknown id.
async fn acl_answers(user: &mut impl Calls, admin: &mut impl Calls) -> Vec<String> {
    let nodes = Nodes {
        broker: -1,
        active: -1,
        voter: -1,
        other: "voter",
    };
    let mut lines = Vec::new();
    for (who, client) in [
        ("refused", user as &mut dyn CallsDyn),
        ("allowed", admin as &mut dyn CallsDyn),
    ] {
        let answer = client.call_dyn(0, unregister(UNKNOWN).into()).await;
        lines.push(format!(
            "UnregisterController v0 {who} unknown\t{}",
            body_json(answer, 0, &nodes)
        ));
    }
    lines
}

#[test]
fn the_cluster_refuses_without_alter_on_the_cluster_as_kafka_does() {
    support::pipe::paused().block_on(async {
        let (_cluster, mut admin, mut client) =
            support::pipe::acl_cluster(94, "User:unregister-controller-other").await;
        let got = acl_answers(&mut client, &mut admin).await;
        support::assert_same_lines(&got, &support::fixture_lines(ACL_FIXTURE), "cluster");
    });
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 broker with an authorizer and SASL: KAFKA_BROKER, \
            KAFKA_BROKER_SASL_PLAINTEXT (tools/kafka-broker/broker.sh)"]
async fn kafka_refuses_without_alter_on_the_cluster_as_recorded() {
    let (user, password) = support::tools_plain_user();
    let mut admin = connect(support::live_broker().await).await;
    support::allow_cluster_alter(&mut admin, "User:unregister-controller-other").await;
    let sasl = std::env::var("KAFKA_BROKER_SASL_PLAINTEXT").expect("KAFKA_BROKER_SASL_PLAINTEXT");
    let sasl = tokio::net::lookup_host(sasl)
        .await
        .expect("resolves")
        .next()
        .expect("an address");
    let mut client = connect(sasl).await;
    support::plain_login(&mut client, &user, &password).await;
    // The broker learns the ACL from its metadata log.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let got = loop {
        let got = acl_answers(&mut client, &mut admin).await;
        if got[0].contains("\"errorCode\":31") || tokio::time::Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let filter = DeleteAclsFilter::default()
        .with_resource_type_filter(4)
        .with_resource_name_filter(Some("kafka-cluster".into()))
        .with_pattern_type_filter(3)
        .with_principal_filter(Some("User:unregister-controller-other".into()))
        .with_host_filter(Some("*".into()))
        .with_operation(7)
        .with_permission_type(3);
    let deleted = admin
        .call(3, DeleteAclsRequest::default().with_filters(vec![filter]))
        .await;
    assert!(matches!(deleted, Response::DeleteAcls(d) if d.filter_results[0].error_code == 0));
    let header =
        "# What Kafka 4.4 (StandardAuthorizer, tools/kafka-broker/broker.sh) answered to\n\
                  # UnregisterController v0 of an unknown id from its PLAIN user (sasl-users),\n\
                  # the cluster carrying an ALTER ACL for another user only (refused), and from\n\
                  # its PLAINTEXT principal, a super user (allowed); recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # unregister_controller::kafka_refuses --ignored. One line per request <TAB>\n\
                  # the answer's body as Kafka's JSON.\n";
    if support::recorded(ACL_FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(ACL_FIXTURE), "live");
}

const OBSERVER_FIXTURE: &str = "unregister-controller-observer-kafka-4.4.txt";

/// The lines of the observer fixture: a registered controller that is not a voter
/// unregistered through the broker, then through the active controller (a second's wait
/// after each on the live side), then what the active controller shows.
async fn observer_answers<F: std::future::Future<Output = ()>>(
    broker: &mut impl Calls,
    active: &mut impl Calls,
    nodes: &Nodes,
    settle: impl Fn() -> F,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (listener, client) in [
        ("broker", &mut *broker as &mut dyn CallsDyn),
        ("controller", &mut *active),
    ] {
        let answer = client.call_dyn(0, unregister(nodes.voter).into()).await;
        lines.push(format!(
            "UnregisterController v0 {listener} observer\t{}",
            body_json(answer, 0, nodes)
        ));
        settle().await;
    }
    lines.extend(describes(active, nodes).await);
    lines
}

#[tokio::test]
async fn the_cluster_unregisters_a_controller_that_is_not_a_voter_as_kafka_does() {
    let cluster = kafka_codec_cluster::Cluster::builder()
        .brokers(1)
        .controllers(2)
        .build()
        .await
        .expect("cluster");
    let controllers = cluster.controllers();
    // 3001 leaves the voters (committed once it has fetched twice) and observes.
    let control = cluster.control();
    control.set_quorum_fetching(false).expect("fetching");
    control
        .remove_voter(controllers[1].node_id)
        .expect("removed");
    control.quorum_fetch(controllers[1].node_id).expect("fetch");
    let view = control.quorum_fetch(controllers[1].node_id).expect("fetch");
    assert_eq!(view.committed_voters, Some(vec![controllers[0].node_id]));
    let nodes = Nodes {
        broker: 0,
        active: controllers[0].node_id,
        voter: controllers[1].node_id,
        other: "observer",
    };
    let mut broker = connect(cluster.brokers()[0].address).await;
    let mut active = connect(controllers[0].address).await;
    let got = observer_answers(&mut broker, &mut active, &nodes, || async {}).await;
    support::assert_same_lines(&got, &support::fixture_lines(OBSERVER_FIXTURE), "cluster");
}

/// A Kafka 4.4 node of `tools/kafka-broker/broker.sh` (node 1, a dynamic quorum of one
/// voter) and a second controller (node 2) that joined it as an observer, started by hand:
///
/// ```sh
/// D=target/observer-ctl L=target/kafka-broker/lib; mkdir -p $D/data
/// cat >$D/server.properties <<EOF
/// process.roles=controller
/// node.id=2
/// listeners=CONTROLLER://127.0.0.1:19690
/// controller.listener.names=CONTROLLER
/// listener.security.protocol.map=CONTROLLER:PLAINTEXT
/// controller.quorum.bootstrap.servers=$KAFKA_CONTROLLER
/// log.dirs=$D/data
/// EOF
/// java -cp "$L/*" kafka.tools.StorageTool format --config $D/server.properties \
///     --cluster-id a2Fma2EtY29kZWMtbGl2ZQ --no-initial-controllers
/// java -cp "$L/*" kafka.Kafka $D/server.properties &
/// KAFKA_OBSERVER_CONTROLLER=127.0.0.1:19690 cargo test -p kafka-codec-cluster --test \
///     cluster -- unregister_controller::kafka_unregisters_an_observer --ignored
/// ```
#[tokio::test]
#[ignore = "needs a Kafka 4.4 node and a controller observing its quorum: KAFKA_BROKER, \
            KAFKA_CONTROLLER, KAFKA_OBSERVER_CONTROLLER (see the doc comment)"]
async fn kafka_unregisters_an_observer_controller_as_recorded() {
    let address = |name: &str| -> SocketAddr {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set"))
            .parse()
            .expect("an address")
    };
    let _observer = address("KAFKA_OBSERVER_CONTROLLER");
    let nodes = Nodes {
        // broker.sh's node is both broker and the active controller.
        broker: -2,
        active: 1,
        voter: 2,
        other: "observer",
    };
    let mut broker = connect(support::live_broker().await).await;
    let mut active = connect(address("KAFKA_CONTROLLER")).await;
    let settle = || tokio::time::sleep(std::time::Duration::from_secs(1));
    let got = observer_answers(&mut broker, &mut active, &nodes, settle).await;
    let header =
        "# What Kafka 4.4 answered to UnregisterController v0 of a registered controller\n\
                  # that is not a voter (node 2, joined as an observer to the dynamic quorum of\n\
                  # tools/kafka-broker/broker.sh's node 1; how: the ignored test's doc comment),\n\
                  # through the broker, then the active controller (a second's wait after each:\n\
                  # it registers again), then DescribeCluster and DescribeQuorum; recorded by\n\
                  # KAFKA_CODEC_RECORD=1 cargo test -p kafka-codec-cluster --test cluster --\n\
                  # unregister_controller::kafka_unregisters_an_observer --ignored.\n";
    if support::recorded(OBSERVER_FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(OBSERVER_FIXTURE), "live");
}
