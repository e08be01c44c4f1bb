//! `kafka-codec cluster`: the first stderr line names every broker, and each of them answers
//! Metadata listing them all; a wrong `--listen` is a usage error. `--faults` puts rules in
//! force from the start and `--control` serves them over HTTP; a malformed rule file is a
//! usage error naming the key.

use crate::support::{assert_usage_error, BIN};
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ClientConnection;
use kafka_codec::messages::{DescribeClusterRequest, MetadataRequest};
use kafka_codec::{Request, Response, ResponseFrame};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

/// Killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kafka-codec cluster ARGS`, running, with the addresses its first stderr line names; the
/// rest of its stderr is `log` (to read, or to close by dropping it).
struct Started {
    _running: Running,
    log: BufReader<ChildStderr>,
    bootstrap: String,
}

fn start(args: &[&str]) -> Started {
    let mut child = Command::new(BIN)
        .arg("cluster")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let running = Running(child);
    let mut log = BufReader::new(stderr);
    let mut first = String::new();
    log.read_line(&mut first).unwrap();
    let bootstrap = first
        .trim_end()
        .strip_prefix("kafka-codec cluster: bootstrap ")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .to_owned();
    Started {
        _running: running,
        log,
        bootstrap,
    }
}

/// One request to `address` at `version`; the answer.
fn call(address: &str, version: i16, request: impl Into<Request>) -> ResponseFrame {
    let mut tcp = TcpStream::connect(address).unwrap();
    // A hang guard, not a measurement.
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    client.send(version, &request.into(), &mut out).unwrap();
    tcp.write_all(&out).unwrap();
    let mut received = BytesMut::new();
    loop {
        if let Some(response) = client.receive(&mut received).unwrap() {
            return response;
        }
        let mut chunk = [0u8; 4096];
        let n = tcp.read(&mut chunk).unwrap();
        assert!(n > 0, "{address} closed the connection");
        received.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn the_first_line_names_the_bootstrap_servers_and_each_broker_answers() {
    let Started {
        _running,
        mut log,
        bootstrap,
    } = start(&["--brokers", "3", "--listen", "127.0.0.1:0"]);
    let addresses: Vec<&str> = bootstrap.split(',').collect();
    assert_eq!(addresses.len(), 3, "{bootstrap}");
    for address in &addresses {
        let response = call(address, 12, MetadataRequest::default());
        let Response::Metadata(metadata) = response.body else {
            panic!("not Metadata")
        };
        let listed: Vec<String> = metadata
            .brokers
            .iter()
            .map(|b| format!("{}:{}", b.host.as_str(), b.port))
            .collect();
        assert_eq!(listed, addresses, "{address}");
    }
    // Then one line per request: three Metadata requests, one to each broker.
    for node in 0..3 {
        let mut line = String::new();
        log.read_line(&mut line).unwrap();
        assert!(line.starts_with("kafka-codec cluster: ["), "{line:?}");
        assert!(
            line.trim_end()
                .ends_with(&format!("#0 Metadata v12 to broker {node}: answered")),
            "{line:?}"
        );
    }
}

#[test]
fn a_bad_sasl_user_is_a_usage_error_that_does_not_repeat_the_password() {
    for bad in ["md5:alice:secret-word", "plain:alice", "plain:alice:"] {
        assert_usage_error(&["cluster", "--sasl", bad]);
    }
    let output = Command::new(BIN)
        .args(["cluster", "--sasl", "md5:alice:secret-word"])
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("--sasl"), "{message}");
    assert!(!message.contains("secret-word"), "{message}");
}

/// With `--sasl` nothing but ApiVersions and the SASL handshake is served before a client
/// has logged in: Metadata closes the connection (the login itself is tested in
/// kafka-codec-cluster's tests/security.rs and by the real clients).
#[test]
fn with_sasl_an_unauthenticated_request_closes_the_connection() {
    let started = start(&["--sasl", "plain:alice:alice-secret"]);
    let mut tcp = TcpStream::connect(&started.bootstrap).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut out = BytesMut::new();
    ClientConnection::new()
        .send(12, &MetadataRequest::default().into(), &mut out)
        .unwrap();
    tcp.write_all(&out).unwrap();
    let mut chunk = [0u8; 64];
    assert_eq!(
        tcp.read(&mut chunk).unwrap_or(0),
        0,
        "answered before a login"
    );
}

#[test]
fn a_listen_address_without_a_port_is_a_usage_error() {
    assert_usage_error(&["cluster", "--listen", "127.0.0.1"]);
}

#[test]
fn controllers_are_named_on_the_second_line_and_answer_for_the_quorum() {
    let Started {
        _running,
        mut log,
        bootstrap,
    } = start(&["--brokers", "0", "--controllers", "2"]);
    assert_eq!(bootstrap, "(none: --brokers 0)");
    let mut second = String::new();
    log.read_line(&mut second).unwrap();
    let controllers: Vec<String> = second
        .trim_end()
        .strip_prefix("kafka-codec cluster: controllers ")
        .and_then(|rest| rest.strip_suffix(" (--bootstrap-controller)"))
        .unwrap_or_else(|| panic!("second line: {second:?}"))
        .split(',')
        .map(str::to_owned)
        .collect();
    assert_eq!(controllers.len(), 2, "{second}");
    // Each controller names both, and the leader, 3000, as the controller.
    for address in &controllers {
        let request = DescribeClusterRequest::default().with_endpoint_type(2);
        let Response::DescribeCluster(body) = call(address, 1, request).body else {
            panic!("not DescribeCluster")
        };
        assert_eq!((body.error_code, body.controller_id), (0, 3000));
        let listed: Vec<String> = body
            .brokers
            .iter()
            .map(|b| format!("{}:{}", b.host.as_str(), b.port))
            .collect();
        assert_eq!(listed, controllers);
    }
    let mut line = String::new();
    log.read_line(&mut line).unwrap();
    assert!(
        line.trim_end()
            .ends_with("#0 DescribeCluster v1 to controller 3000: answered"),
        "{line:?}"
    );
    // Neither brokers nor controllers: a usage error.
    assert_usage_error(&["cluster", "--brokers", "0"]);
}

/// A unique path under the temporary directory for this test's file.
fn temp_file(name: &str, contents: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("kafka-codec-cluster-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

/// One Metadata v12 request to `address`; the answer.
fn metadata(address: &str) -> kafka_codec::messages::MetadataResponse {
    let Response::Metadata(metadata) = call(address, 12, MetadataRequest::default()).body else {
        panic!("not Metadata")
    };
    metadata
}

/// One HTTP request; the status line and the body.
fn http(address: &str, request: &str) -> (String, String) {
    let mut tcp = TcpStream::connect(address).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    tcp.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

#[test]
fn faults_from_a_file_and_the_control_surface_over_http() {
    let faults = temp_file(
        "faults.json",
        r#"[{"match": {"api": "Metadata"}, "action": {"respond": {"throttleTimeMs": 0,
             "brokers": [], "clusterId": "from-the-file", "controllerId": 7, "topics": []}}}]"#,
    );
    let Started {
        _running,
        mut log,
        bootstrap,
    } = start(&[
        "--control",
        "127.0.0.1:0",
        "--faults",
        faults.to_str().unwrap(),
    ]);
    let mut second = String::new();
    log.read_line(&mut second).unwrap();
    let control = second
        .trim_end()
        .strip_prefix("kafka-codec cluster: control on http://")
        .unwrap_or_else(|| panic!("second line: {second:?}"))
        .to_owned();
    // The file's rule answers the first Metadata, once.
    let answered = metadata(&bootstrap);
    assert_eq!(answered.cluster_id.as_deref(), Some("from-the-file"));
    assert_eq!(answered.controller_id, 7);
    assert_ne!(metadata(&bootstrap).controller_id, 7);
    // A rule over HTTP, and a refused one.
    let rule = r#"{"match": {"api": "Metadata"}, "action": {"error": 5}}"#;
    let (status, body) = http(
        &control,
        &format!(
            "POST /rules HTTP/1.1\r\nContent-Length: {}\r\n\r\n{rule}",
            rule.len()
        ),
    );
    assert!(status.contains(" 201 "), "{status} {body}");
    let bad = r#"{"match": {"api": "Metadata"}, "acton": "pass"}"#;
    let (status, body) = http(
        &control,
        &format!(
            "POST /rules HTTP/1.1\r\nContent-Length: {}\r\n\r\n{bad}",
            bad.len()
        ),
    );
    assert!(status.contains(" 400 "), "{status}");
    assert!(body.contains("acton"), "{body}");
    let (status, body) = http(&control, "GET /counts HTTP/1.1\r\n\r\n");
    assert!(status.contains(" 200 "), "{status}");
    assert!(body.contains(r#""Metadata":2"#), "{body}");
    let _ = std::fs::remove_file(faults);
}

#[test]
fn a_broker_stopped_past_the_session_timeout_is_fenced() {
    let Started {
        _running,
        mut log,
        bootstrap,
    } = start(&[
        "--brokers",
        "2",
        "--control",
        "127.0.0.1:0",
        "--broker-session-timeout-ms",
        "200",
    ]);
    let mut second = String::new();
    log.read_line(&mut second).unwrap();
    let control = second
        .trim_end()
        .strip_prefix("kafka-codec cluster: control on http://")
        .unwrap_or_else(|| panic!("second line: {second:?}"))
        .to_owned();
    let first = bootstrap.split(',').next().unwrap().to_owned();
    assert_eq!(metadata(&first).brokers.len(), 2);
    let (status, body) = http(&control, "POST /brokers/1/stop HTTP/1.1\r\n\r\n");
    assert!(status.contains(" 200 "), "{status} {body}");
    // Fenced once the 200 ms pass; the loop's bound is a hang guard.
    let mut fenced = false;
    for _ in 0..300 {
        let (_, body) = http(&control, "GET /brokers HTTP/1.1\r\n\r\n");
        if body.contains(r#""fenced":true"#) {
            fenced = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(fenced, "broker 1 never fenced");
    let listed: Vec<i32> = metadata(&first).brokers.iter().map(|b| b.node_id).collect();
    assert_eq!(listed, [0]);
    assert_usage_error(&["cluster", "--broker-session-timeout-ms", "soon"]);
}

#[test]
fn broker_configs_set_the_automatic_leader_rebalance() {
    use kafka_codec::messages::create_topics_request::CreatableTopic;
    use kafka_codec::messages::CreateTopicsRequest;
    let Started {
        _running,
        mut log,
        bootstrap,
    } = start(&[
        "--brokers",
        "2",
        "--control",
        "127.0.0.1:0",
        "--broker-config",
        "leader.imbalance.check.interval.seconds=1",
        "--broker-config",
        "replica.fetch.wait.max.ms=0",
    ]);
    let mut second = String::new();
    log.read_line(&mut second).unwrap();
    let control = second
        .trim_end()
        .strip_prefix("kafka-codec cluster: control on http://")
        .unwrap_or_else(|| panic!("second line: {second:?}"))
        .to_owned();
    let first = bootstrap.split(',').next().unwrap().to_owned();
    let create = CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
        .with_name("t".into())
        .with_num_partitions(2)
        .with_replication_factor(2)]);
    let Response::CreateTopics(created) = call(&first, 7, create).body else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].error_code, 0);
    // Broker 1 fenced while running: t-1 goes to 0; unfenced, it is back at the next check.
    let (status, body) = http(
        &control,
        "POST /brokers/1/fence?running=true HTTP/1.1\r\n\r\n",
    );
    assert!(status.contains(" 200 "), "{status} {body}");
    let (status, body) = http(&control, "POST /brokers/1/unfence HTTP/1.1\r\n\r\n");
    assert!(status.contains(" 200 "), "{status} {body}");
    // The loop's bound is a hang guard: the check runs every second.
    let mut back = false;
    for _ in 0..300 {
        let (_, body) = http(&control, "GET /topics/t/partitions HTTP/1.1\r\n\r\n");
        if body.contains(r#""leader":1,"leaderEpoch":2"#) {
            back = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(back, "t-1 never went back to broker 1");
    assert_usage_error(&["cluster", "--broker-config", "leader.imbalance.check"]);
    assert_usage_error(&["cluster", "--broker-config", "no.such.config=1"]);
    assert_usage_error(&[
        "cluster",
        "--broker-config",
        "auto.leader.rebalance.enable=yes",
    ]);
    assert_usage_error(&[
        "cluster",
        "--broker-config",
        "leader.imbalance.check.interval.seconds=0",
    ]);
}

#[test]
fn a_malformed_faults_file_is_a_usage_error_naming_the_key() {
    let faults = temp_file(
        "bad-faults.json",
        r#"[{"action": "pass"}, {"action": {"delayMs": "soon"}}]"#,
    );
    let output = Command::new(BIN)
        .args(["cluster", "--faults"])
        .arg(&faults)
        .output()
        .unwrap();
    let message = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(
        message.contains("rule 1: action.delayMs: expected a whole number of milliseconds"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    let _ = std::fs::remove_file(faults);
}

#[test]
fn as_version_answers_as_that_release() {
    // The log is kept open (in `started`): the cluster writes a line per request to it.
    let started = start(&["--as-version", "0.10"]);
    let response = call(
        &started.bootstrap,
        0,
        kafka_codec::messages::ApiVersionsRequest::default(),
    );
    let Response::ApiVersions(versions) = response.body else {
        panic!("not ApiVersions")
    };
    // 0.10 is 0.10.0, whose Produce went up to the version the table (read from
    // kafka-clients 0.10.0.1) says.
    let release = kafka_codec_cluster::release::Release::parse("0.10.0").unwrap();
    let produce = versions
        .api_keys
        .iter()
        .find(|key| key.api_key == kafka_codec::ApiKey::Produce.key())
        .expect("Produce listed");
    assert_eq!(
        Some(produce.max_version),
        release
            .versions(kafka_codec::ApiKey::Produce.key())
            .map(|range| range.max)
    );
}

#[test]
fn an_unknown_release_is_a_usage_error() {
    assert_usage_error(&["cluster", "--as-version", "5.0"]);
    assert_usage_error(&["cluster", "--as-version", "latest"]);
}

#[test]
fn transaction_version_is_the_one_apiversions_finalizes() {
    let finalized = |args: &[&str]| {
        let started = start(args);
        let response = call(
            &started.bootstrap,
            3,
            kafka_codec::messages::ApiVersionsRequest::default(),
        );
        let Response::ApiVersions(versions) = response.body else {
            panic!("not ApiVersions")
        };
        versions
            .finalized_features
            .iter()
            .find(|feature| feature.name == "transaction.version")
            .map(|feature| feature.max_version_level)
    };
    assert_eq!(finalized(&[]), Some(2), "Kafka 4.4's default");
    assert_eq!(finalized(&["--transaction-version", "1"]), Some(1));
    assert_eq!(finalized(&["--transaction-version", "2"]), Some(2));
    // 3.9 had no transaction version; 4.0 finalized 2, as 4.4 (release-features.tsv).
    assert_eq!(finalized(&["--as-version", "3.9"]), None);
    assert_eq!(finalized(&["--as-version", "4.0"]), Some(2));
    assert_eq!(
        finalized(&["--as-version", "4.0", "--transaction-version", "1"]),
        Some(1)
    );
    assert_usage_error(&["cluster", "--transaction-version", "0"]);
    assert_usage_error(&["cluster", "--transaction-version", "3"]);
}

/// The per-request lines go to stderr; once whoever read it has gone (the pipe closed), the
/// cluster still answers: losing its log must not cost a client its connection.
#[test]
fn requests_are_answered_after_stderr_is_closed() {
    let Started {
        _running,
        log,
        bootstrap,
    } = start(&["--listen", "127.0.0.1:0"]);
    drop(log);
    // The reader is dropped: the pipe is closed now.
    for _ in 0..3 {
        let answered = metadata(&bootstrap);
        assert_eq!(answered.brokers.len(), 1);
    }
}

#[test]
fn broker_config_sets_auto_creation_and_the_default_partitions() {
    use kafka_codec::messages::create_topics_request::CreatableTopic;
    use kafka_codec::messages::metadata_request::MetadataRequestTopic;
    let started = start(&[
        "--listen",
        "127.0.0.1:0",
        "--broker-config",
        "auto.create.topics.enable=false",
        "--broker-config",
        "num.partitions=2",
    ]);
    let address = started.bootstrap.as_str();
    let ask = MetadataRequest::default()
        .with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some("wanted".into()))
        ]))
        .with_allow_auto_topic_creation(true);
    for _ in 0..2 {
        let Response::Metadata(answer) = call(address, 12, ask.clone()).body else {
            panic!("not Metadata")
        };
        assert_eq!(
            answer.topics[0].error_code,
            kafka_codec::ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code()
        );
    }
    let create = kafka_codec::messages::CreateTopicsRequest::default().with_topics(vec![
        CreatableTopic::default()
            .with_name("sized".into())
            .with_num_partitions(-1)
            .with_replication_factor(-1),
    ]);
    let Response::CreateTopics(created) = call(address, 7, create).body else {
        panic!("not CreateTopics")
    };
    assert_eq!(created.topics[0].num_partitions, 2);
}

#[test]
fn a_broker_config_the_cluster_does_not_follow_is_a_usage_error() {
    assert_usage_error(&["cluster", "--broker-config", "log.retention.hours=1"]);
    assert_usage_error(&["cluster", "--broker-config", "num.partitions=0"]);
    assert_usage_error(&["cluster", "--broker-config", "num.partitions"]);
}

#[test]
fn a_delegation_token_key_needs_sasl() {
    // Tokens are asked for and used over SASL logins only; the key without --sasl is a
    // usage error (whose message never repeats the key).
    let output = crate::support::run(
        &[
            "cluster",
            "--delegation-token-secret-key",
            "a-secret-key-value",
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("--sasl"), "{message}");
    assert!(!message.contains("a-secret-key-value"), "{message}");
}
