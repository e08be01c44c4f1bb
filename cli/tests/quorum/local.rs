//! `kafka-codec quorum serve` driven by the binary's own admin commands over real sockets
//! (no Java, no broker): negotiation, the committed voter set moving behind a voter change,
//! `--stable-only`, and the views of `quorum describe`.

use kafka_codec::messages::describe_quorum_response::DescribeQuorumResponse;
use kafka_codec::quorum::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, ReplicaKey,
    VoterNode, VoterSet,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::Framing;
use kafka_codec::{ResponseFrame, Uuid};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kafka-codec");

/// `quorum serve` on a free port with fast followers; killed when dropped. Its log is kept.
struct Server {
    child: Child,
    address: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// The log lines so far, without their `quorum serve: [time] ` prefix.
    fn log(&self) -> Vec<String> {
        let lines = self.log.lock().unwrap();
        lines
            .iter()
            .map(|line| {
                line.split_once("] ")
                    .map_or(line.as_str(), |(_, rest)| rest)
                    .to_owned()
            })
            .collect()
    }

    /// Waits until a log line satisfies `found`.
    fn logged(&self, what: &str, found: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(line) = self.log().into_iter().find(|line| found(line)) {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "never logged {what}:\n{:#?}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["quorum", "serve", "--listen", "127.0.0.1:0", "--seed", "3"])
            .args(["--fetch-interval-ms", "400"])
            .args(extra)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let address = first
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        // Keep draining the log so the server never blocks on a full pipe.
        let log = Arc::new(Mutex::new(vec![first]));
        let keep = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        Server {
            child,
            address,
            log,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn field<'a>(status: &'a str, label: &str) -> &'a str {
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{label}:")))
        .unwrap_or_else(|| panic!("no {label} in\n{status}"))
        .trim()
}

fn ids(list: &str) -> Vec<i64> {
    let value: Value = serde_json::from_str(list).unwrap();
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect()
}

fn directory_of(list: &str, id: i64) -> String {
    let value: Value = serde_json::from_str(list).unwrap();
    value
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .and_then(|e| e["directoryId"].as_str())
        .unwrap()
        .to_owned()
}

/// `quorum add-controller|remove-controller` arguments for voter `id`.
fn reconfigure<'a>(
    verb: &'a str,
    server: &'a Server,
    id: &'a str,
    directory: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "quorum",
        verb,
        "--bootstrap-controller",
        &server.address,
        "--controller-id",
        id,
        "--controller-directory-id",
        directory,
    ];
    args.extend_from_slice(extra);
    args
}

fn describe(server: &Server, extra: &[&str]) -> String {
    let mut args = vec![
        "quorum",
        "describe",
        "--bootstrap-controller",
        &server.address,
    ];
    args.extend_from_slice(extra);
    ok(&args)
}

/// Polls `describe` until `done` holds.
fn until(server: &Server, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = describe(server, &[]);
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "never {what}:\n{status}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_voter_change_is_current_at_once_and_committed_later() {
    let server = Server::start(&[]);
    let status = until(&server, "committed", |s| {
        !field(s, "CommittedVoters").starts_with("unknown")
    });
    assert_eq!(ids(field(&status, "CurrentVoters")), [1, 2, 3]);
    assert_eq!(ids(field(&status, "CommittedVoters")), [1, 2, 3]);
    assert_eq!(ids(field(&status, "CurrentObservers")), [4, 100]);
    assert_eq!(field(&status, "PendingVoterChange"), "none");
    assert_eq!(field(&status, "LeaderId"), "1");
    let three = directory_of(field(&status, "CurrentVoters"), 3);

    // remove-controller answers once the removal commits; meanwhile describe shows it
    // pending.
    let mut remove = Command::new(BIN)
        .args(reconfigure("remove-controller", &server, "3", &three, &[]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pending = until(&server, "pending", |s| {
        ids(field(s, "CurrentVoters")) == [1, 2]
    });
    // A fetch reports what the previous one brought, so the commit is at least one fetch
    // interval (400 ms) after the append: time enough to look.
    assert_eq!(
        ids(field(&pending, "CommittedVoters")),
        [1, 2, 3],
        "{pending}"
    );
    assert_eq!(
        field(&pending, "PendingVoterChange"),
        "removes 3 (current, not committed until the high watermark passes it)"
    );
    let mut stdout = String::new();
    remove
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(remove.wait().unwrap().success());
    assert_eq!(
        stdout,
        format!("Removed KRaft controller 3 with directory id {three}\n")
    );
    let after = describe(&server, &[]);
    assert_eq!(ids(field(&after, "CommittedVoters")), [1, 2]);
    assert!(ids(field(&after, "CurrentObservers")).contains(&3));

    // Removing it again: VOTER_NOT_FOUND, exit 1.
    let again = run(&reconfigure("remove-controller", &server, "3", &three, &[]));
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("VOTER_NOT_FOUND"));

    // Controller 3 kept fetching as an observer, so it can come back.
    let added = ok(&reconfigure(
        "add-controller",
        &server,
        "3",
        &three,
        &["--listener", "CONTROLLER://controller-3.invalid:9093"],
    ));
    assert_eq!(
        added,
        format!(
            "Added controller 3 with directory id {three} and endpoints: \
             CONTROLLER://controller-3.invalid:9093\n"
        )
    );
    let after = describe(&server, &[]);
    assert_eq!(ids(field(&after, "CurrentVoters")), [1, 2, 3]);
    assert_eq!(ids(field(&after, "CommittedVoters")), [1, 2, 3]);

    // A controller that does not run cannot be added.
    let missing = run(&reconfigure(
        "add-controller",
        &server,
        "7",
        "B7B7B7B7B7B7B7B7B7B7Bw",
        &["--listener", "CONTROLLER://c7:9093"],
    ));
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("REQUEST_TIMED_OUT"));
}

#[test]
fn stable_only_keeps_v3_out_on_either_side() {
    let server = Server::start(&["--stable-only"]);
    let status = describe(&server, &[]);
    assert_eq!(
        field(&status, "CommittedVoters"),
        "unknown (DescribeQuorum v2 has none; v3 has them)"
    );
    let full = Server::start(&[]);
    let status = until(&full, "committed", |s| {
        !field(s, "CommittedVoters").starts_with("unknown")
    });
    assert_eq!(ids(field(&status, "CommittedVoters")), [1, 2, 3]);
    let stable = describe(&full, &["--stable-only"]);
    assert!(field(&stable, "CommittedVoters").starts_with("unknown (DescribeQuorum v2"));

    // A client that sends v3 anyway is cut off, as Kafka cuts off a version it does not
    // advertise.
    let mut socket = TcpStream::connect(&server.address).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = kafka_codec::RequestFrame::new(
        kafka_codec::messages::DescribeQuorumRequest::default(),
        3,
        1,
    );
    let mut bytes = kafka_codec::bytes::BytesMut::new();
    request.encode(&mut bytes, Framing::SizePrefixed).unwrap();
    socket.write_all(&bytes).unwrap();
    let mut rest = Vec::new();
    assert_eq!(
        socket.read_to_end(&mut rest).unwrap(),
        0,
        "closed without an answer"
    );
}

/// A committed voter with no live state in the answer (its removal is not committed and it
/// never fetched, so it expired from the observers): the replication view says so and shows
/// its -1s as unknown.
#[test]
fn describe_shows_committed_only_sentinels_as_unknown() {
    let key = |id: i32| ReplicaKey::new(id, Some(Uuid::from_bytes([id as u8; 16])));
    let node = |id: i32| {
        VoterNode::new(
            key(id),
            Endpoints::single("CONTROLLER", &format!("c{id}"), 9093),
            (0, 1),
        )
    };
    let mut log = ControlRecordStateMachine::new(None);
    log.load_snapshot(
        0,
        &[
            ControlRecord::kraft_version(
                &kafka_codec::messages::KRaftVersionRecord::default().with_k_raft_version(1),
            )
            .unwrap(),
            ControlRecord::voters(
                &VoterSet::new([node(1), node(2), node(3)])
                    .unwrap()
                    .to_voters_record(),
            )
            .unwrap(),
        ],
    )
    .unwrap();
    let local = LocalReplica {
        key: key(1),
        listeners: node(1).listeners().clone(),
        supported_kraft_versions: (0, 1),
    };
    let t0 = 1_700_000_000_000;
    let mut leader = LeaderState::new(local, 5, log).unwrap();
    leader.update_replica_state(key(2), t0, 3).unwrap();
    leader.remove_voter(&key(3)).unwrap();
    let answer: DescribeQuorumResponse = leader.describe_quorum(t0 + 100, 3).unwrap();
    let dir = scratch("sentinels");
    let file = dir.join("answer.json");
    std::fs::write(
        &file,
        ResponseFrame::new(answer, 3, 0)
            .to_json()
            .unwrap()
            .to_string(),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let replication = ok(&["quorum", "describe", "--response", path, "--replication"]);
    let row = replication
        .lines()
        .skip_while(|line| !line.starts_with("CommittedVoters"))
        .find(|line| line.starts_with("3 "))
        .unwrap_or_else(|| panic!("no committed row for 3:\n{replication}"));
    let cells: Vec<&str> = row.split('\t').map(str::trim).collect();
    assert_eq!(
        cells[2..7],
        [
            "-1 (unknown)",
            "unknown",
            "-1 (unknown)",
            "-1 (unknown)",
            "No live state (removal not committed)"
        ]
    );
    let status = ok(&[
        "quorum",
        "describe",
        "--response",
        path,
        "--cluster-id",
        "x",
    ]);
    assert_eq!(field(&status, "ClusterId"), "x");
    assert_eq!(ids(field(&status, "CommittedVoters")), [1, 2, 3]);
    assert_eq!(ids(field(&status, "CurrentVoters")), [1, 2]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn describe_fails_clearly() {
    // Nobody listens there.
    let out = run(&[
        "quorum",
        "describe",
        "--bootstrap-controller",
        "127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.starts_with("kafka-codec: 127.0.0.1:1: cannot connect"),
        "{error}"
    );
    // A file that is not a DescribeQuorum answer.
    let dir = scratch("not-quorum");
    let file = dir.join("metadata.json");
    let frame = ResponseFrame::new(kafka_codec::messages::MetadataResponse::default(), 12, 0);
    std::fs::write(&file, frame.to_json().unwrap().to_string()).unwrap();
    let out = run(&["quorum", "describe", "--response", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not DescribeQuorum"));
    // Usage errors.
    for args in [
        &["quorum", "describe"][..],
        &[
            "quorum",
            "describe",
            "--bootstrap-controller",
            "a:1",
            "--status",
            "--replication",
        ],
        &["quorum", "serve"],
        &[
            "quorum",
            "remove-controller",
            "--bootstrap-controller",
            "a:1",
            "--controller-id",
            "-3",
            "--controller-directory-id",
            "AAAAAAAAAAAAAAAAAAAAAQ",
        ],
        &[
            "quorum",
            "remove-controller",
            "--bootstrap-controller",
            "a:1",
            "--controller-id",
            "3",
            "--controller-directory-id",
            "AAAAAAAAAAAAAAAAAAAAAA",
        ],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("kafka-codec-quorum-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The server as a client that knows nothing of this crate sees it: a newer ApiVersions gets
/// Kafka's fallback answer, and bytes that are not a request end that connection only.
#[test]
fn the_server_answers_a_newer_client_and_survives_garbage() {
    let server = Server::start(&[]);
    let exchange = |bytes: &[u8]| -> Vec<u8> {
        let mut socket = TcpStream::connect(&server.address).unwrap();
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        socket.write_all(bytes).unwrap();
        let mut answer = Vec::new();
        let mut size = [0u8; 4];
        if socket.read_exact(&mut size).is_ok() {
            answer.resize(u32::from_be_bytes(size) as usize, 0);
            socket.read_exact(&mut answer).unwrap();
        }
        answer
    };
    // ApiVersions v99, correlation id 7, client id "x", then a body we cannot know.
    let newer = [
        0, 0, 0, 14, 0, 18, 0, 99, 0, 0, 0, 7, 0, 1, b'x', 0, 0xde, 0xad,
    ];
    let answer = exchange(&newer);
    let frame = ResponseFrame::decode(
        kafka_codec::bytes::Bytes::from(answer),
        kafka_codec::ApiKey::ApiVersions,
        0,
    )
    .unwrap();
    assert_eq!(frame.header.correlation_id, 7);
    let kafka_codec::Response::ApiVersions(body) = frame.body else {
        panic!("not ApiVersions")
    };
    assert_eq!(body.error_code, 35, "UNSUPPORTED_VERSION");
    assert_eq!(body.api_keys.len(), 1);
    assert_eq!(
        (body.api_keys[0].api_key, body.api_keys[0].max_version),
        (18, kafka_codec::ApiKey::ApiVersions.valid_versions().max)
    );
    // Garbage: an unknown API key, then a frame claiming 2 GiB. Each connection is closed
    // without an answer.
    assert!(exchange(&[0, 0, 0, 8, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1]).is_empty());
    assert!(exchange(&[0x7f, 0xff, 0xff, 0xff, 0, 18]).is_empty());
    // And the server still serves.
    let status = describe(&server, &[]);
    assert_eq!(field(&status, "LeaderId"), "1");
}

#[test]
fn describe_through_a_tap_says_that_describe_quorum_goes_around_it() {
    let server = Server::start(&[]);
    let mut tap = Command::new(BIN)
        .args([
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &server.address,
            "--no-log",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(tap.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let address = first
        .split_once("listening on ")
        .and_then(|(_, rest)| rest.split(',').next())
        .unwrap()
        .to_owned();
    std::thread::spawn(move || for _ in lines {});
    let out = run(&["quorum", "describe", "--bootstrap-controller", &address]);
    let _ = tap.kill();
    let _ = tap.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("goes to the leader at {}", server.address))
            && stderr.contains("--rewrite-brokers"),
        "{stderr}"
    );
}

/// The log names each request and what it got, what the quorum did by itself and what
/// happened to a connection, in the `PEER CLIENT #CORRELATION API vN: …` form.
#[test]
fn the_log_says_what_each_request_got() {
    let server = Server::start(&[]);
    let first = server.log()[0].clone();
    assert!(
        first.starts_with(&format!(
            "listening on {} (seed 3): cluster ",
            server.address
        )) && first.ends_with(
            "controller 1 leads epoch 1 of voters {1, 2, 3}; controller 4 and broker 100 \
                 fetch as observers"
        ),
        "{first}"
    );
    let status = describe(&server, &[]);
    let voters = field(&status, "CurrentVoters").to_owned();
    let line = server.logged("DescribeQuorum", |l| l.contains(" DescribeQuorum v3: "));
    assert!(
        line.contains(": leader 1, epoch 1, HW ")
            && line.contains(", voters {1, 2, 3}, committed {1, 2, 3}, observers {4, 100}"),
        "{line}"
    );
    let line = server.logged("DescribeCluster", |l| l.contains(" DescribeCluster v"));
    assert!(
        line.ends_with(&format!("controller 1 at {}", server.address)),
        "{line}"
    );
    server.logged("ApiVersions", |l| {
        l.contains(" ApiVersions v") && l.contains(": ApiVersions 0-")
    });
    // A refused removal, then one answered once it commits.
    let wrong = run(&reconfigure(
        "remove-controller",
        &server,
        "3",
        "B7B7B7B7B7B7B7B7B7B7Bw",
        &[],
    ));
    assert_eq!(wrong.status.code(), Some(1));
    server.logged("the refusal", |l| {
        l.contains(" RemoveRaftVoter v")
            && l.contains(": remove 3")
            && l.contains(": VOTER_NOT_FOUND")
    });
    let three = directory_of(&voters, 3);
    ok(&reconfigure("remove-controller", &server, "3", &three, &[]));
    server.logged("the append", |l| {
        l.starts_with("controller 1 appended a VotersRecord at offset ")
    });
    server.logged("the commit", |l| l.ends_with("committed voters now {1, 2}"));
    let line = server.logged("the answer", |l| {
        l.contains(" RemoveRaftVoter v") && l.contains(": NONE after ")
    });
    assert!(line.contains(": remove 3"), "{line}");
    // Bytes that are not a request: that connection is closed, and the log says why.
    let mut socket = TcpStream::connect(&server.address).unwrap();
    socket
        .write_all(&[0, 0, 0, 8, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1])
        .unwrap();
    let peer = socket.local_addr().unwrap().to_string();
    let mut rest = Vec::new();
    let _ = socket.read_to_end(&mut rest);
    server.logged("the closed connection", |l| {
        l.starts_with(&format!("{peer}: closing the connection: "))
    });
}
