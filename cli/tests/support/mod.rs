//! Running the built `kafka-codec` binary and checking its output contract: what succeeds
//! writes nothing on stderr; malformed input is exit 1 and one line; usage errors exit 2.

#![allow(dead_code)]

pub mod metrics;
pub mod rss;

use kafka_codec::serde_json::{self, Value};
use std::io::Write;
use std::process::{Command, Output, Stdio};

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
