//! What the cluster's tests talk through: the crate's own client connection over TCP, one
//! request and its answer at a time. Each test file adds the calls of its own APIs in an
//! `impl Client` of its own (the files are modules of one crate, `main.rs`: where another file
//! already names a call so, a trait of the file's own, as in `fencing.rs`); a helper two test
//! files need lives here, once (over either client where it can: [`Calls`]).

// Some are used only by ignored tests' helpers.
#![allow(dead_code)]

pub mod configs;
pub mod pipe;

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::ClientConnection;
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, ProduceRequest, SyncGroupRequest,
    SyncGroupResponse,
};
use kafka_codec::records::{Compression, Record, RecordBatchBuilder};
use kafka_codec::serde_json::Value;
use kafka_codec::{Request, Response, ResponseFrame};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A hang guard, not a measurement.
pub const GUARD: Duration = Duration::from_secs(30);

pub struct Client {
    pub tcp: TcpStream,
    pub connection: ClientConnection,
    pub received: BytesMut,
}

/// What became of a request.
#[derive(Debug)]
pub enum Outcome {
    Answer(Box<ResponseFrame>),
    Closed,
    Nothing,
}

impl Client {
    pub async fn connect(address: SocketAddr, client_id: &str) -> Client {
        Client {
            tcp: TcpStream::connect(address).await.expect("connect"),
            connection: ClientConnection::new().with_client_id(client_id.to_owned()),
            received: BytesMut::new(),
        }
    }

    /// Sends `body` and waits up to `wait` for the answer.
    pub async fn send(
        &mut self,
        version: i16,
        body: impl Into<Request>,
        wait: Duration,
    ) -> Outcome {
        let body = body.into();
        let mut out = BytesMut::new();
        self.connection
            .send(version, &body, &mut out)
            .expect("encode");
        if self.tcp.write_all(&out).await.is_err() {
            return Outcome::Closed;
        }
        let answer = tokio::time::timeout(wait, async {
            loop {
                if let Some(response) = self.connection.receive(&mut self.received).expect("decode")
                {
                    return Outcome::Answer(Box::new(response));
                }
                match self.tcp.read_buf(&mut self.received).await {
                    Ok(0) | Err(_) => return Outcome::Closed,
                    Ok(_) => {}
                }
            }
        })
        .await;
        answer.unwrap_or(Outcome::Nothing)
    }

    /// The answer to `body`, header and all; a closed connection or no answer within the
    /// guard fails the test, naming the request.
    pub async fn call_frame(&mut self, version: i16, body: impl Into<Request>) -> ResponseFrame {
        let body = body.into();
        let what = format!("{} v{version}", body.api_key());
        match self.send(version, body, GUARD).await {
            Outcome::Answer(frame) => *frame,
            Outcome::Closed => panic!("the broker closed the connection after {what}"),
            Outcome::Nothing => panic!("no answer to {what} before the guard"),
        }
    }

    /// The body of the answer to `body`.
    pub async fn call(&mut self, version: i16, body: impl Into<Request>) -> Response {
        self.call_frame(version, body).await.body
    }

    /// Whether the broker closes the connection after `body` (rather than answering).
    pub async fn closed_after(&mut self, version: i16, body: impl Into<Request>) -> bool {
        let body = body.into();
        let mut out = BytesMut::new();
        self.connection
            .send(version, &body, &mut out)
            .expect("encode");
        self.tcp.write_all(&out).await.expect("write");
        let mut buf = [0u8; 64];
        matches!(
            tokio::time::timeout(GUARD, self.tcp.read(&mut buf))
                .await
                .expect("guard"),
            Ok(0) | Err(_)
        )
    }
}

/// Runs `script` of `tools/clients` with the clients' venv python (`KAFKA_CLIENTS_PYTHON`)
/// and `args`, shows its output, and fails the test unless it succeeded.
pub async fn run_client_script(script: &str, args: &[String]) {
    client_script_output(script, args).await;
}

/// [`run_client_script`], returning the script's stdout.
pub async fn client_script_output(script: &str, args: &[String]) -> String {
    let python = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/clients")
        .join(script);
    let run = tokio::process::Command::new(python)
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output();
    // A hang guard; the script has its own, shorter one.
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the client finished")
        .expect("the client started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{stdout}");
    assert!(
        output.status.success(),
        "the client failed: {}",
        output.status
    );
    stdout
}

/// Runs `script` of `tools/clients` against `cluster` with its control surface served (see
/// [`serve_control`]): the script's arguments are the bootstrap servers, the control
/// surface's address, then `args`.
pub async fn run_control_script(
    cluster: &kafka_codec_cluster::Cluster,
    script: &str,
    args: &[&str],
) {
    let control = serve_control(cluster).await;
    let mut all = vec![cluster.bootstrap(), control.to_string()];
    all.extend(args.iter().map(|arg| (*arg).to_owned()));
    run_client_script(script, &all).await;
}

/// A batch of `count` records, keys and values numbered from `first`.
pub fn batch(first: usize, count: usize) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for i in first..first + count {
        builder.append_record(Record {
            offset: (i - first) as i64,
            timestamp: 1_700_000_000_000 + i as i64,
            key: Some(Bytes::from(format!("key-{i}"))),
            value: Some(Bytes::from(format!("value-{i}"))),
            ..Record::default()
        });
    }
    builder.build().encode_to_bytes().expect("a batch")
}

/// A Produce (acks all) of `records` to one partition.
pub fn produce(topic: &str, partition: i32, records: Bytes) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(topic.into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(partition)
                .with_records(Some(records))])])
}

/// The group calls the group and fault tests share.
impl Client {
    pub async fn join(&mut self, version: i16, request: JoinGroupRequest) -> JoinGroupResponse {
        match self.call(version, request).await {
            Response::JoinGroup(body) => body,
            other => panic!("not JoinGroup: {other:?}"),
        }
    }

    pub async fn sync(&mut self, version: i16, request: SyncGroupRequest) -> SyncGroupResponse {
        match self.call(version, request).await {
            Response::SyncGroup(body) => body,
            other => panic!("not SyncGroup: {other:?}"),
        }
    }

    pub async fn heartbeat(
        &mut self,
        version: i16,
        group: &str,
        generation: i32,
        member: &str,
    ) -> i16 {
        let request = HeartbeatRequest::default()
            .with_group_id(group.into())
            .with_generation_id(generation)
            .with_member_id(member.into());
        match self.call(version, request).await {
            Response::Heartbeat(body) => body.error_code,
            other => panic!("not Heartbeat: {other:?}"),
        }
    }
}

/// A CA and a certificate for 127.0.0.1 and localhost signed by it, made at test time in a
/// directory of their own (removed on drop): PEM files for the cluster's TLS listeners and
/// for the clients to trust.
pub struct TestPki {
    pub dir: std::path::PathBuf,
    pub ca: std::path::PathBuf,
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

impl TestPki {
    pub fn new(name: &str) -> TestPki {
        let dir = std::env::temp_dir().join(format!(
            "kafka-codec-cluster-tls-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "kafka-codec-cluster test CA");
        let ca = ca_params.self_signed(&ca_key).expect("the CA certificate");
        let key = rcgen::KeyPair::generate().expect("a server key");
        let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
            .expect("server names")
            .signed_by(&key, &ca, &ca_key)
            .expect("the server certificate");
        let pki = TestPki {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            dir,
        };
        std::fs::write(&pki.ca, ca.pem()).expect("write");
        std::fs::write(&pki.cert, cert.pem()).expect("write");
        std::fs::write(&pki.key, key.serialize_pem()).expect("write");
        pki
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `tools/clients/cluster_security.py` with `client` against a cluster with SASL
/// (a PLAIN and a SCRAM-SHA-512 user): over SASL_PLAINTEXT with each mechanism, then over
/// SASL_SSL (a certificate made now) with SCRAM-SHA-512 and PLAIN.
pub async fn run_security_script(client: &str) {
    use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
    let users = [
        ("PLAIN", "alice", "alice-secret"),
        ("SCRAM-SHA-512", "carol", "carol-secret"),
    ];
    let builder = || {
        kafka_codec_cluster::Cluster::builder()
            .brokers(2)
            .sasl(SaslUser::new(Mechanism::Plain, users[0].1, users[0].2))
            .sasl(SaslUser::new(
                Mechanism::ScramSha512,
                users[1].1,
                users[1].2,
            ))
            // With SASL on, ACLs are enforced: these users may do everything.
            .super_user("User:alice")
            .super_user("User:carol")
    };
    let cluster = builder().build().await.expect("cluster");
    for (mechanism, user, password) in users {
        let args = [
            client,
            &cluster.bootstrap(),
            "SASL_PLAINTEXT",
            mechanism,
            user,
            password,
        ];
        run_client_script("cluster_security.py", &args.map(String::from)).await;
    }
    let pki = TestPki::new(client);
    let cluster = builder()
        .tls(&pki.cert, &pki.key)
        .build()
        .await
        .expect("cluster");
    let ca = pki.ca.display().to_string();
    for (mechanism, user, password) in users {
        let args = [
            client,
            &cluster.bootstrap(),
            "SASL_SSL",
            mechanism,
            user,
            password,
            &ca,
        ];
        run_client_script("cluster_security.py", &args.map(String::from)).await;
    }
}

/// Serves `cluster`'s control surface over HTTP on a free port of 127.0.0.1: its address.
pub async fn serve_control(cluster: &kafka_codec_cluster::Cluster) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a control listener");
    let address = listener.local_addr().expect("its address");
    cluster.serve_control(listener);
    address
}

/// One request to the control surface over HTTP: the status and the JSON body.
pub async fn http(
    address: SocketAddr,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut tcp = TcpStream::connect(address).await.expect("connect");
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(GUARD, tcp.read_to_end(&mut answer))
        .await
        .expect("guard")
        .expect("read");
    let text = String::from_utf8(answer).expect("UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head");
    let status = head[9..12].parse().expect("a status");
    (
        status,
        kafka_codec::serde_json::from_str(body).expect("JSON"),
    )
}

/// `tools/kafka-broker/cluster.sh`: the real Kafka cluster of the live comparisons.
pub const KAFKA_CLUSTER_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tools/kafka-broker/cluster.sh"
);

/// Starts a real Kafka cluster of a controller and `brokers` brokers (`cluster.sh --brokers
/// N start`), gives `work` the brokers' node ids and addresses, and stops the cluster after,
/// whether `work` passed or not.
pub fn with_kafka_cluster<T>(
    brokers: usize,
    work: impl FnOnce(Vec<(i32, SocketAddr)>) -> T + std::panic::UnwindSafe,
) -> T {
    let script = |args: &[&str]| {
        std::process::Command::new("bash")
            .arg(KAFKA_CLUSTER_SCRIPT)
            .args(args)
            .output()
            .expect("cluster.sh")
    };
    let started = script(&["--brokers", &brokers.to_string(), "start"]);
    if !started.status.success() {
        script(&["stop"]);
        panic!("cluster.sh: {}", String::from_utf8_lossy(&started.stderr));
    }
    // KAFKA_CLUSTER_BROKER_<node>=<address> lines.
    let addresses = String::from_utf8_lossy(&started.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix("KAFKA_CLUSTER_BROKER_")?.split_once('='))
        .map(|(node, address)| {
            let node = node.parse().expect("a node id");
            (node, address.parse().expect("an address"))
        })
        .collect();
    let result = std::panic::catch_unwind(|| work(addresses));
    script(&["stop"]);
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Runs `class` of the Java clients' module (`tools/clients/java`, its class path in
/// `KAFKA_CLIENTS_JAVA`) with `args`; its stdout, or a failed test with its stderr.
pub async fn java_program(class: &str, args: &[&str]) -> String {
    let class_path = std::env::var("KAFKA_CLIENTS_JAVA").expect(
        "KAFKA_CLIENTS_JAVA names the Java clients' class path (tools/clients/java-classpath.sh)",
    );
    let run = tokio::process::Command::new("java")
        .args(["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp"])
        .arg(class_path)
        .arg(class)
        .args(args)
        .kill_on_drop(true)
        .output();
    // A hang guard; the programs have their own, shorter ones.
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("the Java program finished")
        .expect("java started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    print!("{stdout}");
    assert!(output.status.success(), "{class} failed: {}", output.status);
    stdout
}

/// [`java_program`] `class` against `cluster` with its control surface served: its
/// arguments are the bootstrap servers and the control surface's address. Its stdout.
pub async fn java_control_program(cluster: &kafka_codec_cluster::Cluster, class: &str) -> String {
    let control = serve_control(cluster).await;
    java_program(class, &[&cluster.bootstrap(), &control.to_string()]).await
}

/// A CreateTopics request for `names`, each of `partitions` partitions with `replication`
/// replicas.
pub fn create_topics(
    names: &[&str],
    partitions: i32,
    replication: i16,
) -> kafka_codec::messages::CreateTopicsRequest {
    use kafka_codec::messages::create_topics_request::CreatableTopic;
    kafka_codec::messages::CreateTopicsRequest::default().with_topics(
        names
            .iter()
            .map(|name| {
                CreatableTopic::default()
                    .with_name((*name).into())
                    .with_num_partitions(partitions)
                    .with_replication_factor(replication)
            })
            .collect(),
    )
}

/// Makes topic `name` of one partition (CreateTopics v7); its id.
pub async fn create_topic(client: &mut Client, name: &str) -> kafka_codec::Uuid {
    use kafka_codec::messages::create_topics_request::CreatableTopic;
    let request = kafka_codec::messages::CreateTopicsRequest::default().with_topics(vec![
        CreatableTopic::default()
            .with_name(name.into())
            .with_num_partitions(1)
            .with_replication_factor(1),
    ]);
    let Response::CreateTopics(created) = client.call(7, request).await else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    created.topics[0].topic_id
}

/// Waits until the broker coordinates `group` (a real broker answers
/// COORDINATOR_NOT_AVAILABLE while it creates `__consumer_offsets`, then
/// COORDINATOR_LOAD_IN_PROGRESS while it loads the group's partition).
pub async fn coordinator_ready(client: &mut Client, group: &str) {
    tokio::time::timeout(GUARD, async {
        loop {
            let request = kafka_codec::messages::FindCoordinatorRequest::default()
                .with_coordinator_keys(vec![group.into()]);
            let Response::FindCoordinator(found) = client.call(6, request).await else {
                panic!("not FindCoordinator")
            };
            if found.coordinators[0].error_code == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the coordinator loaded");
}

/// A client logged in to the broker at `address` as `user` with SASL PLAIN, its password
/// `USER-secret`.
pub async fn login(address: std::net::SocketAddr, user: &str) -> Client {
    let mut client = Client::connect(address, user).await;
    let Response::SaslHandshake(shook) = client
        .call(
            1,
            kafka_codec::messages::SaslHandshakeRequest::default().with_mechanism("PLAIN".into()),
        )
        .await
    else {
        panic!("not SaslHandshake")
    };
    assert_eq!(shook.error_code, 0);
    let token = format!("\0{user}\0{user}-secret");
    let Response::SaslAuthenticate(done) = client
        .call(
            2,
            kafka_codec::messages::SaslAuthenticateRequest::default()
                .with_auth_bytes(token.into_bytes().into()),
        )
        .await
    else {
        panic!("not SaslAuthenticate")
    };
    assert_eq!(done.error_code, 0, "{user} logs in");
    client
}

/// The address of the real Kafka broker `KAFKA_BROKER` names, for the ignored live tests.
pub async fn live_broker() -> std::net::SocketAddr {
    tokio::net::lookup_host(live_bootstrap())
        .await
        .expect("KAFKA_BROKER resolves")
        .next()
        .expect("an address")
}

/// `KAFKA_BROKER`, the HOST:PORT of the real Kafka broker of the ignored live tests (written
/// by `tools/kafka-broker/broker.sh`), as the clients' bootstrap servers.
pub fn live_bootstrap() -> String {
    std::env::var("KAFKA_BROKER").expect("KAFKA_BROKER=HOST:PORT of a Kafka broker")
}

/// Nanoseconds since 1970: a suffix for names not used before on a real broker, which keeps
/// its topics and groups from one run to the next.
pub fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos()
}

/// The wall clock in milliseconds since 1970, as record timestamps and retention count it.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64
}

/// A batch of one record: value `v`, no key, timestamp 0.
pub fn one_record() -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    builder.append_record(Record {
        value: Some(Bytes::from_static(b"v")),
        ..Record::default()
    });
    builder.build().encode_to_bytes().expect("batch")
}

/// One request and the body of its answer, over either client: [`Client`] (TCP) or
/// [`pipe::PipeClient`] (in memory), so that a helper serves the tests of both.
#[allow(async_fn_in_trait)]
pub trait Calls {
    async fn call(&mut self, version: i16, body: impl Into<Request>) -> Response;
}

impl Calls for Client {
    async fn call(&mut self, version: i16, body: impl Into<Request>) -> Response {
        Client::call(self, version, body).await
    }
}

/// Logs `client` in with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2); fails the test
/// unless both succeed.
pub async fn plain_login(client: &mut impl Calls, user: &str, password: &str) {
    use kafka_codec::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
    let handshake = SaslHandshakeRequest::default().with_mechanism("PLAIN".into());
    let Response::SaslHandshake(shook) = client.call(1, handshake).await else {
        panic!("not SaslHandshake")
    };
    assert_eq!(shook.error_code, 0);
    let token = format!("\0{user}\0{password}");
    let request = SaslAuthenticateRequest::default().with_auth_bytes(token.into_bytes().into());
    let Response::SaslAuthenticate(done) = client.call(2, request).await else {
        panic!("not SaslAuthenticate")
    };
    assert_eq!(done.error_code, 0, "{user} logs in");
}

/// Allows `principal` ALTER on the cluster (CreateAcls v3): with an ACL on the cluster
/// resource, `allow.everyone.if.no.acl.found` no longer lets every other user alter it.
pub async fn allow_cluster_alter(admin: &mut impl Calls, principal: &str) {
    use kafka_codec::messages::create_acls_request::AclCreation;
    use kafka_codec::messages::CreateAclsRequest;
    let request = CreateAclsRequest::default().with_creations(vec![AclCreation::default()
        .with_resource_type(4) // CLUSTER
        .with_resource_name("kafka-cluster".into())
        .with_resource_pattern_type(3) // LITERAL
        .with_principal(principal.into())
        .with_host("*".into())
        .with_operation(7) // ALTER
        .with_permission_type(3)]); // ALLOW
    let Response::CreateAcls(created) = admin.call(3, request).await else {
        panic!("not CreateAcls")
    };
    assert_eq!(created.results[0].error_code, 0);
}

/// Makes topic `name` of `partitions` partitions with `replication` replicas (CreateTopics
/// `version`); fails the test unless it was made.
pub async fn make_topic(
    client: &mut impl Calls,
    version: i16,
    name: &str,
    partitions: i32,
    replication: i16,
) {
    let request = create_topics(&[name], partitions, replication);
    let Response::CreateTopics(created) = client.call(version, request).await else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
}

/// A cluster of `brokers` brokers with topic "events" of `partitions` partitions (one
/// replica each), made by a client named `client_id`.
pub async fn cluster_with_topic(
    brokers: usize,
    partitions: i32,
    client_id: &str,
) -> kafka_codec_cluster::Cluster {
    let cluster = kafka_codec_cluster::Cluster::builder()
        .brokers(brokers)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, client_id).await;
    make_topic(&mut client, 7, "events", partitions, 1).await;
    cluster
}

/// Leader, leader epoch, ISR, ELR and last known ELR of a partition, as Kafka's
/// `tools/elr-reference` prints them.
pub type ElrState = (i32, i32, Vec<i32>, Vec<i32>, Vec<i32>);

/// The [`ElrState`] of `topic`'s partition 0 as DescribeTopicPartitions v0 answers it (the
/// ELR lists are never null at v0).
pub async fn elr_state(client: &mut impl Calls, topic: &str) -> ElrState {
    use kafka_codec::messages::describe_topic_partitions_request::TopicRequest;
    let request = kafka_codec::messages::DescribeTopicPartitionsRequest::default()
        .with_topics(vec![TopicRequest::default().with_name(topic.into())])
        .with_response_partition_limit(10);
    let Response::DescribeTopicPartitions(described) = client.call(0, request).await else {
        panic!("not DescribeTopicPartitions")
    };
    let p = &described.topics[0].partitions[0];
    let list = |list: &Option<kafka_codec::wire::PrimitiveArray<i32>>| -> Vec<i32> {
        list.as_ref().expect("a list, never null").iter().collect()
    };
    (
        p.leader_id,
        p.leader_epoch,
        p.isr_nodes.iter().collect(),
        list(&p.eligible_leader_replicas),
        list(&p.last_known_elr),
    )
}

/// A transactional batch of `count` records of `producer` at `epoch`, first sequence
/// `sequence`; values `PREFIX-SEQUENCE-I`, stamped in 2023.
pub fn txn_batch(producer: i64, epoch: i16, sequence: i32, count: usize, prefix: &str) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None)
        .producer(producer, epoch, sequence)
        .transactional(true);
    for i in 0..count {
        builder.append_record(Record {
            offset: i as i64,
            timestamp: 1_700_000_000_000,
            value: Some(Bytes::from(format!("{prefix}-{sequence}-{i}"))),
            ..Record::default()
        });
    }
    builder.build().encode_to_bytes().expect("a batch")
}

/// A classic consumer member's first JoinGroup for `group`: Kafka's default 45 s session
/// and rebalance timeouts, one `range` protocol with empty subscription metadata.
pub fn classic_join(group: &str) -> kafka_codec::messages::JoinGroupRequest {
    use kafka_codec::messages::join_group_request::JoinGroupRequestProtocol;
    kafka_codec::messages::JoinGroupRequest::default()
        .with_group_id(group.into())
        .with_session_timeout_ms(45_000)
        .with_rebalance_timeout_ms(45_000)
        .with_protocol_type("consumer".into())
        .with_protocols(vec![JoinGroupRequestProtocol::default()
            .with_name("range".into())
            .with_metadata(Bytes::from_static(b"\0\0\0\0\0\0\0\0\0\0"))])
}

/// The lines of a recorded fixture (`tests/data/<name>`), comments and blank lines left out.
pub fn fixture_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture_path(name))
        .unwrap_or_else(|e| panic!("the fixture {name}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `tests/data/<name>`.
pub fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// What a live comparison got: with `KAFKA_CODEC_RECORD` set, written to the fixture
/// `name` under `header` (comment lines, each ending in a newline) and `true`; else `false`,
/// for the caller to compare.
pub fn recorded(name: &str, header: &str, got: &[String]) -> bool {
    if std::env::var_os("KAFKA_CODEC_RECORD").is_none() {
        return false;
    }
    let mut text = header.to_owned();
    for line in got {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(fixture_path(name), text).expect("write the fixture");
    true
}

/// Asserts that `got` (what `what` answered) are the lines `want` (what Kafka answered),
/// listing every line that differs.
pub fn assert_same_lines(got: &[String], want: &[String], what: &str) {
    let differing: Vec<String> = want
        .iter()
        .zip(got)
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("  Kafka:   {w}\n  {what}: {g}"))
        .collect();
    assert!(
        differing.is_empty() && got.len() == want.len(),
        "{} of {} answers differ ({} lines against {}):\n{}",
        differing.len(),
        want.len(),
        got.len(),
        want.len(),
        differing.join("\n")
    );
}

/// The PLAIN user and password the live broker's SASL listeners have: of the file
/// `KAFKA_SASL_USERS` names (set by `tools/kafka-broker/broker.sh`), or else of
/// tools/kafka-broker/sasl-users, the file the script starts from.
pub fn tools_plain_user() -> (String, String) {
    let file = std::env::var("KAFKA_SASL_USERS").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tools/kafka-broker/sasl-users"
        )
        .to_owned()
    });
    broker_plain_user(&file)
}

/// The PLAIN user and password of the broker's SASL listeners (tools/kafka-broker/sasl-users).
pub fn broker_plain_user(users_file: &str) -> (String, String) {
    let users = std::fs::read_to_string(users_file).expect("the SASL users file");
    users
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                ["PLAIN", user, password] => Some((user.to_owned(), password.to_owned())),
                _ => None,
            },
        )
        .expect("a PLAIN user")
}
