//! Helpers shared by the differential driver (`oracle_diff.rs`) and the golden replay
//! (`golden_replay.rs`): hex, JSON comparison, and where the golden corpus lives.

#![allow(dead_code)]

use kafka_codec::{ApiKey, MessageKind};
use serde_json::{Number, Value};
use std::path::PathBuf;

/// Cells that exist only on our side: DescribeQuorum v3 is our overlay, Kafka 4.4.0 stops at v2.
pub const OURS_ONLY: &[(&str, i16)] =
    &[("DescribeQuorumRequest", 3), ("DescribeQuorumResponse", 3)];

/// Whether Apache Kafka has the (schema, version) cell too.
pub fn kafka_has(schema: &str, version: i16) -> bool {
    !OURS_ONLY.contains(&(schema, version))
}

/// `tests/golden/` in the source tree.
pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
}

/// The corpus file of a schema: one per API (request and response together), one per header
/// or data schema.
pub fn corpus_file(schema: &str, kind: MessageKind, api_key: Option<i16>) -> String {
    let stem = match (kind, api_key.and_then(ApiKey::from_key)) {
        (MessageKind::Request | MessageKind::Response, Some(api)) => api.name().to_owned(),
        _ => schema.to_owned(),
    };
    format!("{stem}.jsonl")
}

/// The second element of a corpus line: which schema of the file the line is for.
pub fn direction(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Request => "request",
        MessageKind::Response => "response",
        MessageKind::Header => "header",
        MessageKind::Data => "data",
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    kafka_codec_hexdump::encode(bytes)
}

/// Bytes from hex.
pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    kafka_codec_hexdump::decode(text.as_bytes()).map_err(|e| e.to_string())
}

/// Numbers are equal when they denote the same value: integers exactly, and as `f64` when
/// either side is a float (Jackson writes `1.0E-5` where serde writes `1e-5`).
fn numbers_equal(a: &Number, b: &Number) -> bool {
    if a.is_f64() || b.is_f64() {
        a.as_f64() == b.as_f64()
    } else {
        a.as_i64() == b.as_i64() && a.as_u64() == b.as_u64()
    }
}

/// Where two JSON values first differ (`None` if they are equal); object key order is ignored.
pub fn json_diff(a: &Value, b: &Value) -> Option<String> {
    fn walk(a: &Value, b: &Value, path: &mut String) -> Option<String> {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) if numbers_equal(x, y) => None,
            (Value::Array(x), Value::Array(y)) => {
                if x.len() != y.len() {
                    return Some(format!("{path}: {} vs {} elements", x.len(), y.len()));
                }
                for (i, (x, y)) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    let found = walk(x, y, path);
                    path.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                None
            }
            (Value::Object(x), Value::Object(y)) => {
                for (key, xv) in x {
                    let len = path.len();
                    path.push('.');
                    path.push_str(key);
                    let found = match y.get(key) {
                        Some(yv) => walk(xv, yv, path),
                        None => Some(format!("{path}: {xv} vs (absent)")),
                    };
                    path.truncate(len);
                    if found.is_some() {
                        return found;
                    }
                }
                y.iter()
                    .find(|(key, _)| !x.contains_key(*key))
                    .map(|(key, yv)| format!("{path}.{key}: (absent) vs {yv}"))
            }
            _ if a == b => None,
            _ => Some(format!("{path}: {a} vs {b}")),
        }
    }
    walk(a, b, &mut String::from("$"))
}

/// Equal as JSON, numbers by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    json_diff(a, b).is_none()
}

/// Bytes from an annotated hex listing (`#` starts a comment). Used for hand-derived vectors.
pub fn annotated_hex(text: &str) -> bytes::Bytes {
    bytes::Bytes::from(unhex(text).expect("valid hex"))
}
