//! The generator reads schemas with a small JSON reader of its own (to keep every dependent's
//! build free of serde). This test holds it to serde_json on every schema in `schemas/`: the
//! same values, object members in the same order, numbers with the same text.

use kafka_codec_codegen::json::{self, Value};
use kafka_codec_codegen::parse::strip_comments;
use std::path::Path;

fn from_serde(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Number(n.to_string()),
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(from_serde).collect()),
        serde_json::Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), from_serde(value)))
                .collect(),
        ),
    }
}

#[test]
fn every_schema_reads_as_serde_json_reads_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let stripped = strip_comments(&text).unwrap();
        let ours = json::parse(&stripped)
            .unwrap_or_else(|e| panic!("{}: our reader: {e}", path.display()));
        let theirs: serde_json::Value = serde_json::from_str(&stripped)
            .unwrap_or_else(|e| panic!("{}: serde_json: {e}", path.display()));
        assert_eq!(ours, from_serde(&theirs), "{}", path.display());
        compared += 1;
    }
    // Every message and data schema Kafka 4.4 has; a wrong directory must not pass empty.
    assert!(compared > 190, "only {compared} schemas compared");
}
