//! `kafka-codec quorum` against real Kafka software, both ways:
//!
//! * Kafka's own `kafka-metadata-quorum` (`org.apache.kafka.tools.MetadataQuorumCommand`
//!   from the pinned release's jars) reads and reconfigures `kafka-codec quorum serve`: its
//!   `describe --status` and `--replication` output is compared with the exact answer the
//!   server gave it (from the server's `--trace`), and its `remove-controller` and
//!   `add-controller` change the simulated quorum, watched through `quorum describe`.
//! * `kafka-codec quorum describe` reads a real Kafka controller (v2: committed voters
//!   unknown) and prints what Kafka's tool prints for it.
//!
//! They need Java and the jars (`tools/kafka-broker/broker.sh fetch` puts them in
//! `target/kafka-broker/lib`; `KAFKA_LIB_DIR` points elsewhere), and the second a running
//! node, so they are `#[ignore]`d; `tools/ci-live.sh` runs them. Run by hand, a missing jar
//! or node fails them: they never pass without having run.

use kafka_codec::serde_json::{self, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_kafka-codec");

// ---------------------------------------------------------------------------------------------
// Kafka's tool

/// The directory with Kafka's jars; fails the test when the tool is not there.
fn kafka_lib() -> PathBuf {
    let dir = std::env::var_os("KAFKA_LIB_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/kafka-broker/lib"),
        PathBuf::from,
    );
    let has_tools = std::fs::read_dir(&dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("kafka-tools-") && !name.starts_with("kafka-tools-api")
        })
    });
    assert!(
        has_tools,
        "no kafka-tools jar in {} (run tools/kafka-broker/broker.sh fetch, or set \
         KAFKA_LIB_DIR)",
        dir.display()
    );
    dir
}

/// A scratch directory for this test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kafka-codec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `kafka-metadata-quorum ARGS`, its log at WARN on stderr.
fn kafka_tool(dir: &Path, args: &[&str]) -> Command {
    let log4j = dir.join("log4j2.properties");
    if !log4j.exists() {
        std::fs::write(
            &log4j,
            "appender.err.type = Console\nappender.err.name = err\nappender.err.target = \
             SYSTEM_ERR\nappender.err.layout.type = PatternLayout\nappender.err.layout.pattern \
             = %p %m (%c)%n\nrootLogger.level = WARN\nrootLogger.appenderRef.err.ref = err\n",
        )
        .unwrap();
    }
    let mut command = Command::new("java");
    command
        .arg(format!("-Dlog4j2.configurationFile={}", log4j.display()))
        .arg("-cp")
        .arg(format!("{}/*", kafka_lib().display()))
        .arg("org.apache.kafka.tools.MetadataQuorumCommand")
        .args(args)
        .stdin(Stdio::null());
    command
}

fn output(mut command: Command) -> Output {
    command.output().expect("the command starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a command that must succeed; returns its stdout.
fn success(command: Command, what: &str) -> String {
    let out = output(command);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn ours(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args).stdin(Stdio::null());
    command
}

// ---------------------------------------------------------------------------------------------
// Our server

/// `kafka-codec quorum serve` on a free port, stopped when dropped; its log is kept.
struct Server {
    child: Child,
    address: String,
    log: Arc<Mutex<Vec<String>>>,
    trace: PathBuf,
}

impl Server {
    fn start(dir: &Path, seed: u64) -> Server {
        let trace = dir.join("trace.jsonl");
        let mut child = ours(&[
            "quorum",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--seed",
            &seed.to_string(),
            "--trace",
            trace.to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("quorum serve starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let keep = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once("listening on ") {
                    let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_owned());
                }
                keep.lock().unwrap().push(line);
            }
        });
        let address = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("quorum serve names its address");
        Server {
            child,
            address,
            log,
            trace,
        }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The trace entries so far.
    fn trace(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.trace)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The last exchange of API `key` with Kafka's admin client.
    fn last_from_kafka_tool(&self, key: i64) -> Value {
        self.trace()
            .into_iter()
            .rev()
            .find(|entry| {
                let header = &entry["request"]["header"];
                header["requestApiKey"] == key
                    && header["clientId"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("adminclient"))
            })
            .unwrap_or_else(|| panic!("no API {key} request from Kafka's tool in the trace"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("quorum serve log:\n{}", self.log());
        }
    }
}

/// `Label:   value` lines of a `--status` view.
fn status_field<'a>(status: &'a str, label: &str) -> &'a str {
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{label}:")))
        .unwrap_or_else(|| panic!("no {label} in\n{status}"))
        .trim()
}

/// The `(id, directoryId)` pairs of a voter list as `--status` prints it.
fn members(list: &str) -> Vec<(i64, String)> {
    let value: Value = serde_json::from_str(list).unwrap_or_else(|e| panic!("{e}: {list}"));
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["id"].as_i64().unwrap(),
                entry["directoryId"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The `(replicaId, replicaDirectoryId)` pairs of a response's replica list.
fn wire_members(list: &Value) -> Vec<(i64, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["replicaId"].as_i64().unwrap(),
                r["replicaDirectoryId"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Our `quorum describe --status` of the server (v3).
fn describe(server: &Server) -> String {
    describe_at(&server.address)
}

/// Our `quorum describe --status` of the controllers at `bootstrap` (v3).
fn describe_at(bootstrap: &str) -> String {
    success(
        ours(&["quorum", "describe", "--bootstrap-controller", bootstrap]),
        "quorum describe",
    )
}

fn ids(list: &[(i64, String)]) -> Vec<i64> {
    list.iter().map(|(id, _)| *id).collect()
}

/// What our `quorum describe --response` prints for a traced answer: the lines Kafka's tool
/// prints come first.
fn rendered(dir: &Path, entry: &Value, cluster_id: &str, view: &str) -> String {
    let file = dir.join("response.json");
    std::fs::write(&file, entry["response"].to_string()).unwrap();
    success(
        ours(&[
            "quorum",
            "describe",
            view,
            "--response",
            file.to_str().unwrap(),
            "--cluster-id",
            cluster_id,
        ]),
        "quorum describe --response",
    )
}

#[test]
#[ignore = "needs Java and Kafka 4.4.0's tool jars (tools/kafka-broker/broker.sh fetch); run by tools/ci-live.sh"]
fn kafka_metadata_quorum_reads_and_reconfigures_our_server() {
    let dir = scratch("quorum-live");
    let server = Server::start(&dir, 42);
    let bootstrap = server.address.clone();

    // Wait until the quorum has a high watermark (a few follower fetches).
    let deadline = Instant::now() + Duration::from_secs(20);
    while status_field(&describe(&server), "CommittedVoters").starts_with("unknown") {
        assert!(
            Instant::now() < deadline,
            "no high watermark:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // --status: Kafka's eight lines are exactly ours for the answer it got, at v2.
    let status = success(
        kafka_tool(
            &dir,
            &["--bootstrap-controller", &bootstrap, "describe", "--status"],
        ),
        "kafka-metadata-quorum describe --status",
    );
    println!("kafka-metadata-quorum describe --status against quorum serve:\n{status}");
    let quorum = server.last_from_kafka_tool(55);
    assert_eq!(
        quorum["response"]["apiVersion"], 2,
        "Kafka's tool negotiates v2"
    );
    let cluster = server.last_from_kafka_tool(60);
    let cluster_id = cluster["response"]["body"]["clusterId"].as_str().unwrap();
    let ours_status = rendered(&dir, &quorum, cluster_id, "--status");
    let kafka_lines: Vec<&str> = status.lines().collect();
    assert_eq!(kafka_lines.len(), 8, "{status}");
    assert_eq!(
        kafka_lines,
        ours_status.lines().take(8).collect::<Vec<_>>(),
        "Kafka's tool and ours differ on the same answer"
    );
    assert_eq!(
        status_field(&ours_status, "CommittedVoters"),
        "unknown (DescribeQuorum v2 has none; v3 has them)"
    );
    // And it shows the model's state, read from the answer itself.
    let partition = &quorum["response"]["body"]["topics"][0]["partitions"][0];
    assert_eq!(status_field(&status, "ClusterId"), cluster_id);
    assert_eq!(
        status_field(&status, "LeaderId"),
        partition["leaderId"].to_string()
    );
    assert_eq!(
        status_field(&status, "HighWatermark"),
        partition["highWatermark"].to_string()
    );
    assert_eq!(
        members(status_field(&status, "CurrentVoters")),
        wire_members(&partition["currentVoters"])
    );
    assert_eq!(
        members(status_field(&status, "CurrentObservers")),
        wire_members(&partition["observers"])
    );
    assert_eq!(
        ids(&members(status_field(&status, "CurrentVoters"))),
        [1, 2, 3]
    );
    assert_eq!(
        ids(&members(status_field(&status, "CurrentObservers"))),
        [4, 100]
    );

    // --replication: Kafka's table is exactly ours for the answer it got.
    let replication = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-controller",
                &bootstrap,
                "describe",
                "--replication",
            ],
        ),
        "kafka-metadata-quorum describe --replication",
    );
    println!("kafka-metadata-quorum describe --replication against quorum serve:\n{replication}");
    let quorum = server.last_from_kafka_tool(55);
    assert_eq!(quorum["response"]["apiVersion"], 2);
    let ours_replication = rendered(&dir, &quorum, cluster_id, "--replication");
    let table: Vec<&str> = ours_replication
        .lines()
        .take_while(|line| !line.is_empty())
        .collect();
    assert_eq!(replication.lines().collect::<Vec<_>>(), table);
    let partition = &quorum["response"]["body"]["topics"][0]["partitions"][0];
    let rows: Vec<Vec<&str>> = replication
        .lines()
        .skip(1)
        .map(|line| line.split('\t').map(str::trim).collect())
        .collect();
    let leader = partition["leaderId"].to_string();
    assert_eq!((rows[0][0], rows[0][6]), (leader.as_str(), "Leader"));
    assert_eq!(rows.len(), 5, "{replication}");
    for row in &rows[1..3] {
        assert_eq!(row[6], "Follower");
    }
    assert_eq!(
        rows[3..].iter().map(|r| (r[0], r[6])).collect::<Vec<_>>(),
        [("4", "Observer"), ("100", "Observer")]
    );

    // remove-controller: while Kafka's tool waits for the answer (the leader answers once
    // the VotersRecord commits, as Kafka's does), voter 3 is out of the current set but still
    // in the committed one; once the answer comes it is out of both.
    let voters = members(status_field(&describe(&server), "CurrentVoters"));
    let three = voters.iter().find(|(id, _)| *id == 3).unwrap().1.clone();
    let mut remove = kafka_tool(
        &dir,
        &[
            "--bootstrap-controller",
            &bootstrap,
            "remove-controller",
            "--controller-id",
            "3",
            "--controller-directory-id",
            &three,
        ],
    );
    let mut remove = remove
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let pending = loop {
        let status = describe(&server);
        if !ids(&members(status_field(&status, "CurrentVoters"))).contains(&3) {
            break status;
        }
        assert!(
            remove.try_wait().unwrap().is_none(),
            "remove-controller ended before the removal showed:\n{}",
            server.log()
        );
        assert!(Instant::now() < deadline, "no removal:\n{}", server.log());
        std::thread::sleep(Duration::from_millis(50));
    };
    println!("quorum describe while remove-controller waits:\n{pending}");
    assert_eq!(
        ids(&members(status_field(&pending, "CommittedVoters"))),
        [1, 2, 3],
        "{pending}"
    );
    assert_eq!(
        status_field(&pending, "PendingVoterChange"),
        "removes 3 (current, not committed until the high watermark passes it)"
    );
    assert!(ids(&members(status_field(&pending, "CurrentObservers"))).contains(&3));
    let removed = remove.wait_with_output().unwrap();
    assert!(
        removed.status.success(),
        "remove-controller: {}\n{}",
        text(&removed.stdout),
        text(&removed.stderr)
    );
    println!(
        "kafka-metadata-quorum remove-controller:\n{}",
        text(&removed.stdout)
    );
    assert_eq!(
        text(&removed.stdout),
        format!("Removed KRaft controller 3 with directory id {three}\n")
    );
    let after = describe(&server);
    println!("quorum describe after remove-controller returned:\n{after}");
    assert_eq!(ids(&members(status_field(&after, "CurrentVoters"))), [1, 2]);
    assert_eq!(
        ids(&members(status_field(&after, "CommittedVoters"))),
        [1, 2]
    );
    assert_eq!(status_field(&after, "PendingVoterChange"), "none");
    let request = &server.last_from_kafka_tool(81)["request"]["body"];
    assert_eq!(
        (
            request["voterId"].as_i64(),
            request["voterDirectoryId"].as_str()
        ),
        (Some(3), Some(three.as_str()))
    );

    // add-controller: controller 4 fetches as an observer; a config file and the
    // meta.properties of its metadata directory are all the tool needs locally.
    let observers = members(status_field(&after, "CurrentObservers"));
    let four = observers.iter().find(|(id, _)| *id == 4).unwrap().1.clone();
    let meta = dir.join("controller-4");
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(
        meta.join("meta.properties"),
        format!("version=1\ncluster.id={cluster_id}\nnode.id=4\ndirectory.id={four}\n"),
    )
    .unwrap();
    let config = dir.join("controller-4.properties");
    std::fs::write(
        &config,
        format!(
            "process.roles=controller\nnode.id=4\ncontroller.listener.names=CONTROLLER\n\
             listeners=CONTROLLER://controller-4.invalid:9093\nmetadata.log.dir={}\n",
            meta.display()
        ),
    )
    .unwrap();
    let added = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-controller",
                &bootstrap,
                "--command-config",
                config.to_str().unwrap(),
                "add-controller",
            ],
        ),
        "kafka-metadata-quorum add-controller",
    );
    println!("kafka-metadata-quorum add-controller:\n{added}");
    assert_eq!(
        added,
        format!(
            "Added controller 4 with directory id {four} and endpoints: \
             CONTROLLER://controller-4.invalid:9093\n"
        )
    );
    let after = describe(&server);
    println!("quorum describe after add-controller returned:\n{after}");
    assert_eq!(
        ids(&members(status_field(&after, "CurrentVoters"))),
        [1, 2, 4]
    );
    assert_eq!(
        ids(&members(status_field(&after, "CommittedVoters"))),
        [1, 2, 4]
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Kafka's tool against the in-memory cluster's controllers

/// `kafka-codec cluster --brokers 1 --controllers 3 --control 127.0.0.1:0`, stopped when
/// dropped: the controllers' addresses and the control surface's.
struct ClusterProcess {
    child: Child,
    controllers: String,
    control: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl ClusterProcess {
    fn start() -> ClusterProcess {
        let mut child = ours(&[
            "cluster",
            "--brokers",
            "1",
            "--controllers",
            "3",
            "--control",
            "127.0.0.1:0",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("kafka-codec cluster starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let keep = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once("kafka-codec cluster: controllers ") {
                    let _ = tx.send(("controllers", rest.split(' ').next().unwrap().to_owned()));
                }
                if let Some((_, rest)) = line.split_once("control on http://") {
                    let _ = tx.send(("control", rest.trim().to_owned()));
                }
                keep.lock().unwrap().push(line);
            }
        });
        let (mut controllers, mut control) = (None, None);
        while controllers.is_none() || control.is_none() {
            let (what, value) = rx
                .recv_timeout(Duration::from_secs(20))
                .expect("kafka-codec cluster names its controllers and control address");
            match what {
                "controllers" => controllers = Some(value),
                _ => control = Some(value),
            }
        }
        ClusterProcess {
            child,
            controllers: controllers.unwrap(),
            control: control.unwrap(),
            log,
        }
    }

    /// One HTTP request to the control surface; its status line and JSON body.
    fn control(&self, method: &str, path: &str, body: &str) -> (String, Value) {
        use std::io::{Read, Write};
        let mut tcp = std::net::TcpStream::connect(&self.control).unwrap();
        write!(
            tcp,
            "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (
            head.lines().next().unwrap().to_owned(),
            serde_json::from_str(body).unwrap(),
        )
    }
}

impl Drop for ClusterProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!(
                "kafka-codec cluster log:\n{}",
                self.log.lock().unwrap().join("\n")
            );
        }
    }
}

/// `kafka-codec cluster` without controllers (its brokers are combined nodes, the KRaft
/// voters), stopped when dropped: its bootstrap address.
struct CombinedCluster {
    child: Child,
    bootstrap: String,
}

impl CombinedCluster {
    fn start() -> CombinedCluster {
        let mut child = ours(&["cluster"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("kafka-codec cluster starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().expect("a first line").expect("text");
        let bootstrap = first
            .strip_prefix("kafka-codec cluster: bootstrap ")
            .unwrap_or_else(|| panic!("not the bootstrap line: {first}"))
            .to_owned();
        // Keep reading, so the cluster never blocks on a full pipe.
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
        CombinedCluster { child, bootstrap }
    }
}

impl Drop for CombinedCluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tool through a broker (`--bootstrap-server`) of a cluster without controllers, as
/// against `tools/kafka-broker/broker.sh`'s combined node: the broker leads a quorum of
/// itself, and a controller that is not a voter cannot be removed.
#[test]
#[ignore = "needs Java and Kafka 4.4.0's tool jars (tools/kafka-broker/broker.sh fetch); run by tools/ci-live.sh"]
fn kafka_metadata_quorum_reads_and_reconfigures_combined_brokers() {
    let dir = scratch("cluster-combined-live");
    let cluster = CombinedCluster::start();
    let bootstrap = cluster.bootstrap.clone();
    let status = success(
        kafka_tool(
            &dir,
            &["--bootstrap-server", &bootstrap, "describe", "--status"],
        ),
        "kafka-metadata-quorum describe --status",
    );
    println!("kafka-metadata-quorum describe --status against a combined cluster:\n{status}");
    assert_eq!(status_field(&status, "LeaderId"), "0");
    assert_eq!(status_field(&status, "LeaderEpoch"), "1");
    assert_eq!(ids(&members(status_field(&status, "CurrentVoters"))), [0]);
    assert!(members(status_field(&status, "CurrentObservers")).is_empty());
    let replication = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-server",
                &bootstrap,
                "describe",
                "--replication",
            ],
        ),
        "kafka-metadata-quorum describe --replication",
    );
    println!("kafka-metadata-quorum describe --replication:\n{replication}");
    let rows: Vec<Vec<String>> = replication
        .lines()
        .skip(1)
        .map(|line| line.split('\t').map(|c| c.trim().to_owned()).collect())
        .collect();
    assert_eq!(rows.len(), 1, "{replication}");
    assert_eq!((rows[0][0].as_str(), rows[0][6].as_str()), ("0", "Leader"));
    let removed = output(kafka_tool(
        &dir,
        &[
            "--bootstrap-server",
            &bootstrap,
            "remove-controller",
            "--controller-id",
            "99",
            "--controller-directory-id",
            "Y29tYmluZWQtcXVvcnVtIQ",
        ],
    ));
    assert!(!removed.status.success(), "{}", text(&removed.stdout));
    assert!(
        text(&removed.stderr).contains("VoterNotFoundException")
            || text(&removed.stderr).contains("Cannot remove voter"),
        "{}",
        text(&removed.stderr)
    );
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs Java and Kafka 4.4.0's tool jars (tools/kafka-broker/broker.sh fetch); run by tools/ci-live.sh"]
fn kafka_metadata_quorum_reads_and_reconfigures_cluster_controllers() {
    let dir = scratch("cluster-controllers-live");
    let cluster = ClusterProcess::start();
    // Any controller will do: the tool finds the leader through DescribeCluster.
    let bootstrap = cluster.controllers.split(',').nth(1).unwrap().to_owned();

    let status = success(
        kafka_tool(
            &dir,
            &["--bootstrap-controller", &bootstrap, "describe", "--status"],
        ),
        "kafka-metadata-quorum describe --status",
    );
    println!("kafka-metadata-quorum describe --status against kafka-codec cluster:\n{status}");
    assert_eq!(status.lines().count(), 8, "{status}");
    assert_eq!(status_field(&status, "LeaderId"), "3000");
    assert_eq!(status_field(&status, "LeaderEpoch"), "1");
    let voters = members(status_field(&status, "CurrentVoters"));
    assert_eq!(ids(&voters), [3000, 3001, 3002]);
    assert_eq!(
        ids(&members(status_field(&status, "CurrentObservers"))),
        [0]
    );
    let cluster_id = status_field(&status, "ClusterId").to_owned();

    let replication = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-controller",
                &bootstrap,
                "describe",
                "--replication",
            ],
        ),
        "kafka-metadata-quorum describe --replication",
    );
    println!(
        "kafka-metadata-quorum describe --replication against kafka-codec cluster:\n{replication}"
    );
    let rows: Vec<Vec<String>> = replication
        .lines()
        .skip(1)
        .map(|line| {
            line.split('\t')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect();
    let shown: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[6].as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("3000", "Leader"),
            ("3001", "Follower"),
            ("3002", "Follower"),
            ("0", "Observer")
        ],
        "{replication}"
    );

    // remove-controller with the followers held by the control surface: while the tool
    // waits, 3002 is out of the current voters and still among the committed ones.
    let (line, _) = cluster.control("PUT", "/quorum/fetching", r#"{"fetching": false}"#);
    assert!(line.contains("200"), "{line}");
    let three = voters.iter().find(|(id, _)| *id == 3002).unwrap().1.clone();
    let remove = kafka_tool(
        &dir,
        &[
            "--bootstrap-controller",
            &bootstrap,
            "remove-controller",
            "--controller-id",
            "3002",
            "--controller-directory-id",
            &three,
        ],
    );
    let mut remove = {
        let mut remove = remove;
        remove
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let pending = loop {
        let (_, quorum) = cluster.control("GET", "/quorum", "");
        if quorum["currentVoters"] == serde_json::json!([3000, 3001]) {
            break describe_at(&bootstrap);
        }
        assert!(
            remove.try_wait().unwrap().is_none(),
            "remove-controller ended early"
        );
        assert!(Instant::now() < deadline, "no removal: {quorum}");
        std::thread::sleep(Duration::from_millis(50));
    };
    println!("quorum describe while remove-controller waits:\n{pending}");
    assert_eq!(
        ids(&members(status_field(&pending, "CurrentVoters"))),
        [3000, 3001]
    );
    assert_eq!(
        ids(&members(status_field(&pending, "CommittedVoters"))),
        [3000, 3001, 3002]
    );
    assert!(
        remove.try_wait().unwrap().is_none(),
        "answered before the commit"
    );
    let (line, _) = cluster.control("PUT", "/quorum/fetching", r#"{"fetching": true}"#);
    assert!(line.contains("200"), "{line}");
    let removed = remove.wait_with_output().unwrap();
    assert!(
        removed.status.success(),
        "remove-controller: {}\n{}",
        text(&removed.stdout),
        text(&removed.stderr)
    );
    assert_eq!(
        text(&removed.stdout),
        format!("Removed KRaft controller 3002 with directory id {three}\n")
    );
    let after = describe_at(&bootstrap);
    assert_eq!(
        ids(&members(status_field(&after, "CommittedVoters"))),
        [3000, 3001]
    );

    // add-controller puts it back: it kept fetching as an observer.
    let port = cluster
        .controllers
        .split(',')
        .nth(2)
        .unwrap()
        .rsplit_once(':')
        .unwrap()
        .1
        .to_owned();
    let meta = dir.join("controller-3002");
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(
        meta.join("meta.properties"),
        format!("version=1\ncluster.id={cluster_id}\nnode.id=3002\ndirectory.id={three}\n"),
    )
    .unwrap();
    let config = dir.join("controller-3002.properties");
    std::fs::write(
        &config,
        format!(
            "process.roles=controller\nnode.id=3002\ncontroller.listener.names=CONTROLLER\n\
             listeners=CONTROLLER://127.0.0.1:{port}\nmetadata.log.dir={}\n",
            meta.display()
        ),
    )
    .unwrap();
    let added = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-controller",
                &bootstrap,
                "--command-config",
                config.to_str().unwrap(),
                "add-controller",
            ],
        ),
        "kafka-metadata-quorum add-controller",
    );
    println!("kafka-metadata-quorum add-controller:\n{added}");
    assert_eq!(
        added,
        format!(
            "Added controller 3002 with directory id {three} and endpoints: \
             CONTROLLER://127.0.0.1:{port}\n"
        )
    );
    let after = describe_at(&bootstrap);
    assert_eq!(
        ids(&members(status_field(&after, "CommittedVoters"))),
        [3000, 3001, 3002]
    );
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// Our tool against a real controller

fn env_required(name: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| panic!("{name} is not set (run tools/ci-live.sh)"))
}

#[test]
#[ignore = "needs a running Kafka 4.4 node (KAFKA_CONTROLLER, KAFKA_BROKER) and its jars; run by tools/ci-live.sh"]
fn quorum_describe_reads_a_real_kafka_controller() {
    let controller = env_required("KAFKA_CONTROLLER");
    let status = success(
        ours(&["quorum", "describe", "--bootstrap-controller", &controller]),
        "quorum describe",
    );
    println!("kafka-codec quorum describe against Kafka 4.4:\n{status}");
    // Kafka has no DescribeQuorum v3: the answer is v2, and says nothing of committed voters.
    assert_eq!(
        status_field(&status, "CommittedVoters"),
        "unknown (DescribeQuorum v2 has none; v3 has them)"
    );
    if let Ok(cluster_id) = std::env::var("KAFKA_CLUSTER_ID") {
        assert_eq!(status_field(&status, "ClusterId"), cluster_id);
    }
    let node_id = std::env::var("KAFKA_NODE_ID").unwrap_or_else(|_| "1".into());
    assert_eq!(status_field(&status, "LeaderId"), node_id);
    let voters = members(status_field(&status, "CurrentVoters"));
    assert_eq!(ids(&voters), [node_id.parse::<i64>().unwrap()]);
    assert!(status_field(&status, "CurrentVoters").contains(&format!("://{controller}\"")));

    // Kafka's own tool on the same node prints the same lines, but for the ones that move
    // between two calls (the log grows).
    let dir = scratch("quorum-describe-live");
    let kafka = success(
        kafka_tool(
            &dir,
            &[
                "--bootstrap-controller",
                &controller,
                "describe",
                "--status",
            ],
        ),
        "kafka-metadata-quorum describe --status",
    );
    println!("kafka-metadata-quorum describe --status against the same node:\n{kafka}");
    for label in [
        "ClusterId",
        "LeaderId",
        "LeaderEpoch",
        "CurrentVoters",
        "CurrentObservers",
    ] {
        assert_eq!(
            status_field(&kafka, label),
            status_field(&status, label),
            "{label}"
        );
    }
    let stable = success(
        ours(&[
            "quorum",
            "describe",
            "--bootstrap-controller",
            &controller,
            "--stable-only",
            "--replication",
        ]),
        "quorum describe --stable-only --replication",
    );
    println!("kafka-codec quorum describe --replication against Kafka 4.4:\n{stable}");
    let header = stable.lines().next().unwrap();
    assert!(header.starts_with("NodeId\tDirectoryId"), "{stable}");
    assert!(stable
        .lines()
        .nth(1)
        .unwrap()
        .starts_with(&format!("{node_id} ")));
    assert!(stable.contains("CommittedVoters: unknown (DescribeQuorum v2 has none"));

    // A broker listener serves DescribeCluster for brokers only: a clear error, exit 1.
    let broker = env_required("KAFKA_BROKER");
    let out = output(ours(&[
        "quorum",
        "describe",
        "--bootstrap-controller",
        &broker,
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let error = text(&out.stderr);
    println!("against the broker listener: {error}");
    assert!(error.contains("MISMATCHED_ENDPOINT_TYPE"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
