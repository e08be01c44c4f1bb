//! The tap between a real client and the in-memory cluster: `kafka-codec tap
//! --rewrite-brokers --records` in front of a `kafka-codec cluster` of three brokers, and
//! librdkafka (`confluent-kafka`) through it: the group scenario of the cluster's own test
//! (`tools/clients/cluster_librdkafka_group.py`: two consumers share four partitions, commit,
//! one takes over) and the tap proof's workload (`tools/clients/tap_workload.py`: every codec,
//! a group, the admin API). `tools/clients/check_tap_log.py` then checks the log: every frame
//! decoded (no decode error, skipped or unframeable frame), every byte forwarded as received,
//! and every record produced found in the expanded Produce and Fetch records. Needs the
//! clients' venv:
//!
//! ```text
//! KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh) \
//!     cargo test -p kafka-codec-cli --test tap cluster_clients -- --ignored
//! ```

use crate::support::BIN;
use kafka_codec::serde_json::{self, Value};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A hang guard for each client run and for the tap's last lines, not a measurement.
const GUARD: Duration = Duration::from_secs(120);

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `kafka-codec ARGS` and returns it with the first stderr line's text after
/// `prefix`; the rest of stderr is drained (the cluster writes a line per request).
fn start(args: &[&str], prefix: &str) -> (Running, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kafka-codec");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let running = Running(child);
    let first = stderr.next().expect("a first line").unwrap();
    let rest = first
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("first stderr line {first:?} lacks {prefix:?}"))
        .to_owned();
    std::thread::spawn(move || for _ in stderr {});
    (running, rest)
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/clients")
}

/// Runs a script of `tools/clients` with the venv's python and returns its stdout; fails
/// the test if it fails. Its output goes to files (`out`), so a chatty client cannot fill a
/// pipe nobody reads while the hang guard waits.
fn python(python: &str, args: &[&str], out: &Path) -> String {
    let stdout_path = out.with_extension("stdout");
    let stderr_path = out.with_extension("stderr");
    let mut child = Command::new(python)
        .args(args)
        .current_dir(clients_dir())
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap())
        .spawn()
        .expect("run python");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = std::fs::remove_file(&stdout_path);
    let _ = std::fs::remove_file(&stderr_path);
    print!("{stdout}");
    assert!(
        status.is_some_and(|status| status.success()),
        "{args:?} failed ({status:?}; None: killed by the hang guard):\n{stdout}\n{stderr}"
    );
    stdout
}

/// The log's whole lines (the tap may be writing the next one).
fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_inclusive('\n')
        .filter_map(|line| line.strip_suffix('\n'))
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn count(lines: &[Value], event: &str) -> usize {
    lines.iter().filter(|l| l["event"] == event).count()
}

#[test]
#[ignore = "needs python confluent-kafka (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
fn librdkafka_through_the_tap_to_the_cluster_every_frame_decodes() {
    let venv = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
    let (_cluster, bootstrap) = start(
        &["cluster", "--brokers", "3", "--listen", "127.0.0.1:0"],
        "kafka-codec cluster: bootstrap ",
    );
    let brokers: Vec<&str> = bootstrap.split(',').collect();
    assert_eq!(brokers.len(), 3, "{bootstrap}");
    // The log goes next to the test binaries (not a shared temporary directory), one per
    // process, so parallel runs do not share it.
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "tap-cluster-librdkafka-{}.jsonl",
        std::process::id()
    ));
    let log_arg = log.to_str().unwrap();
    let (mut tap, listening) = start(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            brokers[0],
            "--rewrite-brokers",
            "--records",
            "--log",
            log_arg,
        ],
        "kafka-codec tap: listening on ",
    );
    let through = listening.split(',').next().unwrap().to_owned();

    python(
        &venv,
        &["cluster_librdkafka_group.py", &through, "1000"],
        &log,
    );
    let prefix = format!("tap-cluster-{}", std::process::id());
    python(
        &venv,
        &["tap_workload.py", "confluent-kafka", &through, &prefix],
        &log,
    );

    // The clients have exited; the tap logs each connection's close once both sides are
    // done.
    let started = Instant::now();
    let lines = loop {
        let lines = log_lines(&log);
        let connects = count(&lines, "connect");
        if connects > 0 && connects == count(&lines, "close") {
            break lines;
        }
        assert!(
            started.elapsed() < GUARD,
            "{connects} connections opened, {} closed",
            count(&lines, "close")
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = tap.0.kill();
    let _ = tap.0.wait();
    // Every broker was reached through the tap: a listener of its own for each.
    let upstreams: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|l| l["event"] == "listen")
        .filter_map(|l| l["upstream"].as_str())
        .collect();
    assert_eq!(
        upstreams,
        brokers.iter().copied().collect(),
        "the tap's listeners"
    );

    let summary = python(
        &venv,
        &["check_tap_log.py", &format!("confluent-kafka={log_arg}")],
        &log,
    );
    let frames: usize = summary
        .lines()
        .find_map(|line| line.strip_prefix("tap proof: "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count in {summary}"));
    assert!(frames > 100, "{frames} frames");
    let _ = std::fs::remove_file(&log);
}
