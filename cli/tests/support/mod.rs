//! Running the built `kafka-codec` binary and checking its output contract: what succeeds
//! writes nothing on stderr; malformed input is exit 1 and one line; usage errors exit 2.

#![allow(dead_code)]

use kafka_codec::serde_json::{self, Value};
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_kafka-codec");

pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kafka-codec");
    // The tool reads all its input before writing anything, so this cannot deadlock.
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Runs a command that must succeed silently and returns its stdout.
pub fn ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let output = run(args, stdin);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        stderr(&output)
    );
    assert_eq!(stderr(&output), "", "{args:?} wrote to stderr");
    output.stdout
}

pub fn json(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).expect("stdout is JSON")
}

/// Asserts exit status 1, nothing on stdout, and a single stderr line with the prefix and
/// `expected` (a field path or a message fragment). Returns the line.
pub fn assert_refused(args: &[&str], stdin: &[u8], expected: &str) -> String {
    let output = run(args, stdin);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
    assert!(
        output.stdout.is_empty(),
        "{args:?} wrote to stdout on error"
    );
    assert_eq!(
        message.lines().count(),
        1,
        "{args:?}: not one line: {message:?}"
    );
    assert!(message.starts_with("kafka-codec: "), "{message}");
    assert!(message.contains(expected), "{message} lacks {expected:?}");
    message
}

/// [`assert_refused`] for malformed binary input: the line names the byte offset too.
pub fn assert_malformed(args: &[&str], stdin: &[u8], expected: &str) -> String {
    let message = assert_refused(args, stdin, expected);
    assert!(message.contains("offset"), "{message}");
    message
}

pub fn assert_usage_error(args: &[&str]) {
    let output = run(args, b"");
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    assert_eq!(
        message.lines().count(),
        1,
        "{args:?}: not one line: {message:?}"
    );
    assert!(message.starts_with("kafka-codec: "), "{message}");
    assert!(message.trim_end().ends_with(" --help')"), "{message}");
    assert!(output.stdout.is_empty(), "{args:?} wrote to stdout");
}

/// The lines of a file of `tests/golden/records/` (batches Kafka's Java code and real clients
/// wrote), each a JSON object.
pub fn golden_records(file: &str) -> Vec<Value> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/golden/records")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// What `records decode` must print for a records field: the library's JSON form of its
/// batches.
pub fn batches_json(field: &[u8]) -> Value {
    let field = kafka_codec::bytes::Bytes::copy_from_slice(field);
    let batches = kafka_codec::records::decode_batches(&field).unwrap();
    serde_json::to_value(&batches).unwrap()
}

/// The batches' JSON without the CRCs (which change when a batch is compressed again).
pub fn without_crc(mut batches: Value) -> Value {
    for batch in batches.as_array_mut().unwrap() {
        batch.as_object_mut().unwrap().remove("crc");
    }
    batches
}

/// How a child process ended and what it used, as `wait4` reports it.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// The raw wait status.
    pub status: i32,
    /// The maximum resident set size, in bytes.
    pub peak_rss: u64,
    /// User plus system CPU time.
    pub cpu: Duration,
}

impl Usage {
    /// Whether the child exited with status 0.
    pub fn succeeded(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    /// Whether the child was killed by a signal (and so did not exit, or panic, on its own).
    pub fn killed_by(&self, signal: i32) -> bool {
        libc::WIFSIGNALED(self.status) && libc::WTERMSIG(self.status) == signal
    }
}

/// Waits for `child` to end and returns its status and resource usage. `child` must not have
/// been waited for.
pub fn wait_usage(child: Child, what: &str) -> Usage {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `status` and `usage` are valid, writable and live for the call; `usage` is a
    // plain C struct for which all-zero bytes are a valid value. `pid` is our own child,
    // not yet waited for (`child` is dropped below without `wait`, so std never reaps it
    // again).
    let (reaped, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let reaped = libc::wait4(pid, &mut status, 0, &mut usage);
        (reaped, usage)
    };
    drop(child);
    assert_eq!(
        reaped,
        pid,
        "{what}: wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Usage {
        status,
        // Linux reports kibibytes.
        peak_rss: usage.ru_maxrss as u64 * 1024,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
    }
}
