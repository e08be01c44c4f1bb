//! Differential test against Apache Kafka itself (issue 3, "Proven against Apache Kafka").
//!
//! Starts the Java oracle (`tools/java-oracle`: Kafka's own generated message classes behind a
//! JSON-lines process) once per Kafka release whose schemas the crate merges (4.4.0, and 3.9.1
//! for the versions and APIs Kafka 4 removed), and for every (schema, version) cell that Kafka
//! also has generates random messages valid for that version and checks them against the
//! newest release that defines the cell (`schemas/releases.tsv`), case by case:
//!
//! 1. our encoding == Kafka's encoding of our JSON, byte for byte;
//! 2. our decoding of Kafka's bytes == the message;
//! 3. our JSON == Kafka's JSON of our bytes (as `serde_json::Value`, numbers by value);
//! 4. fields the version lacks: a message at the version whose one out-of-version field holds
//!    a non-default value (taken from a random message of a version that has the field) must be
//!    refused by both sides when the field is not ignorable, and dropped by both sides, with
//!    equal bytes, when it is.
//!
//! 5. mutated bytes (one byte replaced, inserted or deleted in a valid encoding): where both
//!    sides read them, both must give the same JSON; where one side refuses, it must be us, for
//!    one of the known ways in which Kafka's reader is more lenient than ours (tallied in the
//!    report, see [`stricter_than_kafka`]).
//!
//! It also tracks, per cell and per field (walking the JSON objects along the schema), whether
//! the field ever held a non-default value, and draws more cases (up to 200) for cells where a
//! field never did before it reports.
//!
//! Unknown tagged fields are generated with `unknown_tagged_fields: false` here: Kafka's JSON
//! form cannot carry them, so they are checked on our side only (`tests/codec/roundtrip.rs`).
//!
//! Needs Java: it is `#[ignore]`d and reads the jars from `KAFKA_ORACLE_JAR`, comma-separated,
//! one per release (each says which Kafka it runs).
//!
//! ```sh
//! mvn -q -f tools/java-oracle/pom.xml package -DskipTests
//! mvn -q -f tools/java-oracle/pom.xml package -DskipTests -Pkafka3
//! KAFKA_ORACLE_JAR=tools/java-oracle/target/java-oracle.jar,tools/java-oracle/target/kafka3/java-oracle.jar \
//!     cargo test --test live oracle_diff:: -- --ignored --nocapture
//! ```
//!
//! - `KAFKA_CODEC_SEED=N` replays a run (the seed is printed first); without it a fresh seed
//!   is drawn, except in record mode.
//! - `KAFKA_CODEC_RECORD_GOLDEN=1` rewrites the golden corpus in `tests/golden/` from the fixed
//!   seed [`GOLDEN_SEED`] (see `tools/regenerate-golden.sh`), Kafka's record batches in
//!   `tests/golden/records/java.jsonl` included.
//! - `KAFKA_CODEC_ORACLE_ONLY=Name1,Name2` limits the run to some schemas (for debugging; the
//!   record mode refuses it).
//! - `KAFKA_CODEC_ORACLE_CASES=N` draws N cases per cell in the first round instead of 25, for
//!   a longer soak.

use crate::support::{
    corpus_file, direction, golden_dir, hex, json_diff, json_eq, kafka_has, unhex, OURS_ONLY,
};
use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::MessageCodec;
use kafka_codec::{MessageKind, RandomMessageVisitor, VersionRange};
use kafka_codec_codegen::model::{self, DefaultValue, FieldType, Primitive};
use rand::{rngs::SmallRng, RngCore, SeedableRng};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// Cases per cell in the first round (and in the golden corpus).
const CASES: usize = 25;
/// Cases per cell at most, when fields never took a non-default value.
const MAX_CASES: usize = 200;
/// In record mode: candidates per cell, all checked against Kafka, from which the corpus keeps
/// [`CASES`] (every field's non-default value first, then the smallest).
const RECORD_POOL: usize = 100;
/// In record mode: entropy per candidate, in turn. Small amounts make small messages for the
/// corpus; the full amount makes sure that every field gets non-default values.
const RECORD_ENTROPY: &[usize] = &[8, 16, 24, 32, 48, 64, 128, 256, 1024, ENTROPY];
/// The seed of the golden corpus.
const GOLDEN_SEED: u64 = 0x6b61_666b_6134_3430; // "kafka440"
/// Entropy per random message; never exhausted by one message.
const ENTROPY: usize = 16 * 1024;
/// Attempts at finding a donor message whose field holds a non-default value.
const DONOR_ATTEMPTS: usize = 200;

/// No unknown tagged fields: Kafka's JSON form has no place for them, so the oracle could
/// neither take nor give them back. They are checked on our side only, by the property round
/// trip in `tests/codec/roundtrip.rs` (every other case there carries some).
const OPTIONS: RandomOptions = RandomOptions {
    unknown_tagged_fields: false,
};

// ---------------------------------------------------------------------------------------------
// The oracle process

struct Oracle {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The Kafka release it runs.
    kafka: String,
}

/// One oracle per jar of `KAFKA_ORACLE_JAR` (comma-separated), by the Kafka release each runs.
/// The pinned release's must be among them.
fn start_oracles() -> BTreeMap<String, Oracle> {
    let jars = std::env::var("KAFKA_ORACLE_JAR").expect(
        "set KAFKA_ORACLE_JAR to the oracle jars, comma-separated (tools/ci-oracle.sh builds \
         them: mvn -q -f tools/java-oracle/pom.xml package -DskipTests, and with -Pkafka3)",
    );
    let mut oracles = BTreeMap::new();
    for jar in jars.split(',').map(str::trim).filter(|j| !j.is_empty()) {
        let oracle = Oracle::start(jar);
        if let Some(other) = oracles.insert(oracle.kafka.clone(), oracle) {
            panic!("two jars run Kafka {}", other.kafka);
        }
    }
    assert!(
        oracles.contains_key(kafka_codec::KAFKA_VERSION),
        "no jar of KAFKA_ORACLE_JAR runs the pinned Kafka {}",
        kafka_codec::KAFKA_VERSION
    );
    oracles
}

impl Oracle {
    fn start(jar: &str) -> Oracle {
        let mut child = Command::new("java")
            .args(["-jar", jar])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting `java -jar {jar}`: {e}"));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut oracle = Oracle {
            child,
            stdin,
            stdout,
            kafka: String::new(),
        };
        let reply = oracle.call(&[json!({"op": "ping"})]).remove(0);
        oracle.kafka = reply["kafka"]
            .as_str()
            .unwrap_or_else(|| panic!("the oracle {jar} does not say its Kafka: {reply}"))
            .to_owned();
        oracle
    }

    /// Sends every request, then reads every reply: the writer runs on its own thread so that
    /// neither pipe can fill up while the other side waits.
    fn call(&mut self, requests: &[Value]) -> Vec<Value> {
        let mut text = String::new();
        for (id, request) in requests.iter().enumerate() {
            let mut request = request.clone();
            request["id"] = json!(id);
            text.push_str(&serde_json::to_string(&request).expect("JSON"));
            text.push('\n');
        }
        let stdin = &mut self.stdin;
        let stdout = &mut self.stdout;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || {
                stdin
                    .write_all(text.as_bytes())
                    .and_then(|()| stdin.flush())
            });
            let mut replies = Vec::with_capacity(requests.len());
            let mut line = String::new();
            for id in 0..requests.len() {
                line.clear();
                let read = stdout
                    .read_line(&mut line)
                    .expect("reading from the oracle");
                assert!(
                    read > 0,
                    "the oracle exited after {id} of {} replies",
                    requests.len()
                );
                let reply: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("oracle reply is not JSON ({e}): {line}"));
                assert_eq!(
                    reply["id"],
                    json!(id),
                    "oracle replies out of order: {line}"
                );
                replies.push(reply);
            }
            writer
                .join()
                .expect("writer thread")
                .expect("writing to the oracle");
            replies
        })
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        // Closing stdin ends the oracle; wait so that no process outlives the test.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What Kafka answered: `Ok(hex or JSON)` or `Err("Kind: message")`.
fn reply_result<'a>(reply: &'a Value, key: &str) -> Result<&'a Value, String> {
    if reply["ok"] == json!(true) {
        reply
            .get(key)
            .ok_or_else(|| format!("reply without {key}: {reply}"))
    } else {
        Err(format!(
            "{}: {}",
            reply["kind"].as_str().unwrap_or("?"),
            reply["error"].as_str().unwrap_or("?")
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Our side, behind a trait object so cells of every message type can sit in one list

struct Generated {
    json: Value,
    bytes: Vec<u8>,
}

/// Our side's answer to "encode this JSON at this version".
enum Ours {
    Encoded(Vec<u8>),
    Refused(String),
    /// `to_json` and `encode` of the same message disagree about refusing.
    Inconsistent(String),
}

/// One message type, as a table of its generic functions, so that cells of every type can sit
/// in one list. A case is named by a seed: the message is drawn again from it when needed.
struct Schema {
    name: &'static str,
    kind: MessageKind,
    api_key: Option<i16>,
    versions: VersionRange,
    default_json: fn(i16) -> Result<Value, String>,
    generate: fn(i16, Draw) -> Result<Generated, String>,
    /// Our decoding of Kafka's bytes must give back the message of the case.
    check_decode: fn(i16, Draw, &[u8]) -> Result<(), String>,
    /// Reads the JSON and encodes it. With `json_too`, also writes the message's JSON, which
    /// must be refused exactly when the encoding is (as Kafka's JSON writer refuses a field the
    /// version lacks; it writes null wherever it finds one, so null cases skip this).
    encode_json: fn(&Value, i16, bool) -> Ours,
    /// Our JSON of bytes that may be malformed.
    decode_json: fn(i16, &[u8]) -> Result<Value, Refusal>,
}

/// Why we refused to read some bytes.
struct Refusal {
    text: String,
    /// One of the known ways in which Kafka reads what we refuse.
    known: Option<&'static str>,
}

/// Where our reader is deliberately stricter than Kafka's: Kafka accepts these inputs, we
/// refuse them. Found by the mutated-bytes check; each is a choice, listed in the report.
fn stricter_than_kafka(error: &kafka_codec::DecodeError) -> Option<&'static str> {
    use kafka_codec::{DecodeErrorKind as Kind, PathSegment};
    let in_tagged_field = error
        .path()
        .segments()
        .any(|s| matches!(s, PathSegment::Tag(_)));
    match error.kind() {
        Kind::InvalidUtf8 => Some("string bytes that are not UTF-8 (Kafka reads them with U+FFFD replacements)"),
        // Kafka reads an unsigned varint into an int: a compact length or count of 2^31 or
        // more wraps negative and reads as null where the field is nullable (and is refused
        // where it is not). No writer produces one; we refuse it as too long.
        Kind::LengthExceedsInput { declared, .. } if *declared >= 1 << 31 => Some(
            "a compact length of 2^31 or more (Kafka's int arithmetic wraps it negative: null \
             where the field is nullable)",
        ),
        Kind::TagOutOfOrder { .. } | Kind::DuplicateTag(_) => {
            Some("tagged fields out of order or repeated (Kafka reads them in any order)")
        }
        _ if in_tagged_field => Some(
            "a known tagged field whose value does not fill its declared size (Kafka reads the value \
             and ignores the size)",
        ),
        _ => None,
    }
}

/// How a case is drawn: a seed for its entropy, and how much entropy. Once the entropy runs
/// out, `Random` picks the first choice everywhere (empty arrays, empty or null strings, zero
/// or edge integers), so less entropy makes smaller messages.
#[derive(Debug, Clone, Copy)]
struct Draw {
    seed: u64,
    entropy: usize,
}

fn random_message<M: MessageCodec + Random>(version: i16, draw: Draw) -> Result<M, String> {
    let mut entropy = vec![0u8; draw.entropy];
    SmallRng::seed_from_u64(draw.seed).fill_bytes(&mut entropy);
    M::random(&mut Unstructured::new(&entropy), version, &OPTIONS)
        .map_err(|e| format!("random: {e}"))
}

fn default_json<M: MessageCodec>(version: i16) -> Result<Value, String> {
    M::default().to_json(version).map_err(|e| e.to_string())
}

fn generate<M: MessageCodec + Random>(version: i16, draw: Draw) -> Result<Generated, String> {
    let message = random_message::<M>(version, draw)?;
    let bytes = message
        .encode_to_vec(version)
        .map_err(|e| format!("encode: {e}"))?;
    let json = message
        .to_json(version)
        .map_err(|e| format!("to_json: {e}"))?;
    Ok(Generated { json, bytes })
}

fn check_decode<M: MessageCodec + Random>(
    version: i16,
    draw: Draw,
    bytes: &[u8],
) -> Result<(), String> {
    let message = random_message::<M>(version, draw)?;
    let decoded = M::decode_exact(Bytes::copy_from_slice(bytes), version)
        .map_err(|e| format!("our decode of Kafka's bytes fails: {e}"))?;
    if decoded == message {
        return Ok(());
    }
    let detail = match (message.to_json(version), decoded.to_json(version)) {
        (Ok(ours), Ok(theirs)) => json_diff(&ours, &theirs).unwrap_or_else(|| "same JSON".into()),
        _ => format!("{message:?} vs {decoded:?}"),
    };
    Err(format!(
        "our decode of Kafka's bytes differs from the message: {detail}"
    ))
}

fn encode_json<M: MessageCodec>(json: &Value, version: i16, json_too: bool) -> Ours {
    let message = match M::from_json(json, version) {
        Ok(message) => message,
        Err(e) => return Ours::Refused(format!("from_json: {e}")),
    };
    let encoded = message.encode_to_vec(version);
    if json_too {
        match (&encoded, message.to_json(version)) {
            (Ok(_), Err(e)) => {
                return Ours::Inconsistent(format!("encode accepts, to_json refuses: {e}"))
            }
            (Err(e), Ok(_)) => {
                return Ours::Inconsistent(format!("to_json accepts, encode refuses: {e}"))
            }
            _ => {}
        }
    }
    match encoded {
        Ok(bytes) => Ours::Encoded(bytes),
        Err(e) => Ours::Refused(format!("encode: {e}")),
    }
}

fn decode_json<M: MessageCodec>(version: i16, bytes: &[u8]) -> Result<Value, Refusal> {
    let message = M::decode_exact(Bytes::copy_from_slice(bytes), version).map_err(|e| Refusal {
        known: stricter_than_kafka(&e),
        text: e.to_string(),
    })?;
    message.to_json(version).map_err(|e| Refusal {
        known: matches!(e.kind(), kafka_codec::EncodeErrorKind::NonFiniteFloat(_)).then_some(
            "a float64 that is NaN or infinite (JSON has no number for it; Kafka writes a string)",
        ),
        text: e.to_string(),
    })
}

struct Collect(Vec<Schema>);

impl RandomMessageVisitor for Collect {
    fn visit<M: MessageCodec + Random>(&mut self) {
        self.0.push(Schema {
            name: M::NAME,
            kind: M::KIND,
            api_key: M::API_KEY,
            versions: M::VALID_VERSIONS,
            default_json: default_json::<M>,
            generate: generate::<M>,
            check_decode: check_decode::<M>,
            encode_json: encode_json::<M>,
            decode_json: decode_json::<M>,
        });
    }
}

// ---------------------------------------------------------------------------------------------
// The schema model: which fields a version has, and their defaults as JSON

fn json_key(field: &model::Field) -> String {
    let mut chars = field.name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

fn struct_of<'a>(message: &'a model::Message, ty: &FieldType) -> Option<&'a model::Struct> {
    ty.struct_name()
        .and_then(|name| message.struct_by_name(name))
}

/// The JSON of a field's default value at `version`, as the schema gives it.
fn default_field_json(message: &model::Message, field: &model::Field, version: i16) -> Value {
    let null_default =
        field.default == DefaultValue::Null || field.ty.primitive() == Some(Primitive::Records);
    if field.is_optional() && null_default {
        return Value::Null;
    }
    match &field.ty {
        FieldType::Array(_) => json!([]),
        FieldType::Struct(_) => default_struct_json(
            message,
            struct_of(message, &field.ty).expect("struct"),
            version,
        ),
        FieldType::Primitive(p) => match (p, &field.default) {
            (Primitive::Bool, DefaultValue::Bool(b)) => json!(b),
            (Primitive::Bool, _) => json!(false),
            (Primitive::Float64, DefaultValue::Float(f)) => json!(f),
            (Primitive::Float64, _) => json!(0.0),
            (Primitive::String, DefaultValue::String(s)) => json!(s),
            (Primitive::String | Primitive::Bytes | Primitive::Records, _) => json!(""),
            (Primitive::Uuid, DefaultValue::Uuid(b)) => {
                json!(kafka_codec::Uuid::from_bytes(*b).to_string())
            }
            (Primitive::Uuid, _) => json!(kafka_codec::Uuid::ZERO.to_string()),
            (_, DefaultValue::Int(i)) => match i64::try_from(*i) {
                Ok(i) => json!(i),
                Err(_) => json!(u64::try_from(*i).expect("fits u64")),
            },
            (_, _) => json!(0),
        },
    }
}

/// The JSON of a struct whose fields all hold their defaults: tagged fields left out, as Kafka
/// writes them.
fn default_struct_json(message: &model::Message, s: &model::Struct, version: i16) -> Value {
    let mut object = Map::new();
    for field in &s.fields {
        if field.versions.contains(version) && !field.tagged_versions.contains(version) {
            object.insert(json_key(field), default_field_json(message, field, version));
        }
    }
    Value::Object(object)
}

/// Every field the version has, as dotted paths of schema names (`Topics.Partitions.LeaderId`).
fn field_paths(
    message: &model::Message,
    s: &model::Struct,
    version: i16,
    prefix: &str,
    out: &mut Vec<String>,
) {
    for field in s.fields.iter().filter(|f| f.versions.contains(version)) {
        let path = format!("{prefix}{}", field.name);
        if let Some(nested) = struct_of(message, &field.ty) {
            field_paths(message, nested, version, &format!("{path}."), out);
        }
        out.push(path);
    }
}

/// Marks every field that holds a non-default value somewhere in `value` (a JSON object of
/// struct `s`): a field is non-default when its JSON differs from its default's JSON.
fn mark_non_default(
    message: &model::Message,
    s: &model::Struct,
    version: i16,
    value: &Value,
    prefix: &str,
    out: &mut BTreeSet<String>,
) {
    let Some(object) = value.as_object() else {
        return;
    };
    for field in s.fields.iter().filter(|f| f.versions.contains(version)) {
        let Some(value) = object.get(&json_key(field)) else {
            continue;
        };
        let path = format!("{prefix}{}", field.name);
        if !json_eq(value, &default_field_json(message, field, version)) {
            out.insert(path.clone());
        }
        if let Some(nested) = struct_of(message, &field.ty) {
            let elements = match value {
                Value::Array(elements) => elements.iter().collect(),
                other => vec![other],
            };
            for element in elements {
                mark_non_default(message, nested, version, element, &format!("{path}."), out);
            }
        }
    }
}

/// One hop from a struct to a nested struct.
#[derive(Clone)]
struct Hop<'a> {
    field: &'a model::Field,
    target: &'a model::Struct,
}

/// A field to misuse, below struct fields the version has: a field the version lacks (to be
/// set to a non-default value), or a field that is nullable in other versions but not in this
/// one (to be set to null).
struct Target<'a> {
    hops: Vec<Hop<'a>>,
    field: &'a model::Field,
    null: bool,
}

impl Target<'_> {
    fn path(&self) -> String {
        let mut names: Vec<&str> = self.hops.iter().map(|h| h.field.name.as_str()).collect();
        names.push(&self.field.name);
        let path = names.join(".");
        if self.null {
            format!("null {path}")
        } else {
            format!("absent {path}")
        }
    }
}

fn targets<'a>(
    message: &'a model::Message,
    s: &'a model::Struct,
    version: i16,
    hops: &[Hop<'a>],
    out: &mut Vec<Target<'a>>,
) {
    for field in &s.fields {
        let hops = hops.to_vec();
        if !field.versions.contains(version) {
            out.push(Target {
                hops,
                field,
                null: false,
            });
            continue;
        }
        if field.is_optional() && !field.nullable_versions.contains(version) {
            out.push(Target {
                hops: hops.clone(),
                field,
                null: true,
            });
        }
        if let Some(target) = struct_of(message, &field.ty) {
            let mut deeper = hops;
            deeper.push(Hop { field, target });
            targets(message, target, version, &deeper, out);
        }
    }
}

/// The objects a path of hops leads to (every element of every array on the way).
fn objects_at<'v>(value: &'v Value, hops: &[Hop<'_>]) -> Vec<&'v Map<String, Value>> {
    let Some(object) = value.as_object() else {
        return Vec::new();
    };
    let Some((hop, rest)) = hops.split_first() else {
        return vec![object];
    };
    match object.get(&json_key(hop.field)) {
        Some(Value::Array(elements)) => elements.iter().flat_map(|e| objects_at(e, rest)).collect(),
        Some(other) => objects_at(other, rest),
        None => Vec::new(),
    }
}

/// The default message at `version` with the target field set to `value`: containers on the
/// way are default structs (one element for arrays).
fn with_target(message: &model::Message, version: i16, target: &Target<'_>, value: Value) -> Value {
    let mut root = default_struct_json(message, &message.root, version);
    let mut here = &mut root;
    for hop in &target.hops {
        let element = default_struct_json(message, hop.target, version);
        let object = here.as_object_mut().expect("object");
        let key = json_key(hop.field);
        let slot = if hop.field.ty.is_array() {
            object.insert(key.clone(), json!([element]));
            &mut object[&key][0]
        } else {
            object.insert(key.clone(), element);
            &mut object[&key]
        };
        here = slot;
    }
    here.as_object_mut()
        .expect("object")
        .insert(json_key(target.field), value);
    root
}

// ---------------------------------------------------------------------------------------------
// Cells and cases

struct Case {
    json: Value,
    hex: String,
    agreed: bool,
    covers: BTreeSet<String>,
}

/// A misused-field case: both sides refused, or both dropped the field.
struct Misuse {
    path: String,
    json: Value,
    /// Kafka's bytes when both sides accepted (the field is ignorable).
    hex: Option<String>,
    agreed: bool,
}

struct Cell<'a> {
    schema: &'a Schema,
    model: &'a model::Message,
    version: i16,
    /// The Kafka release that answers for the cell: the newest that defines it.
    release: &'a str,
    rng: SmallRng,
    fields: Vec<String>,
    covered: BTreeSet<String>,
    cases: Vec<Case>,
    misused: Vec<Misuse>,
    mismatches: usize,
}

impl Cell<'_> {
    fn name(&self) -> String {
        format!("{} v{}", self.schema.name, self.version)
    }

    fn missed(&self) -> Vec<&String> {
        self.fields
            .iter()
            .filter(|f| !self.covered.contains(*f))
            .collect()
    }
}

/// A disagreement between Kafka and us (or a failure of the harness itself).
struct Disagreement {
    cell: String,
    what: String,
    detail: String,
    example: String,
}

fn mix(seed: u64, name: &str, version: i16) -> u64 {
    // FNV-1a over the name, then the version: each cell draws its own stream, so adding a
    // schema does not shift the cases of the others.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(version.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed.rotate_left(17)
}

fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
}

struct Run<'a> {
    oracles: BTreeMap<String, Oracle>,
    releases: &'a kafka_codec_codegen::releases::Releases,
    cells: Vec<Cell<'a>>,
    disagreements: Vec<Disagreement>,
    /// How Kafka refused the cases where both sides refused, by exception kind.
    refusal_kinds: BTreeMap<String, usize>,
    /// Mutated encodings: how many were checked, how many both sides refused, how many both
    /// read alike, and the known ways in which only Kafka read them.
    mutations: (usize, usize, usize),
    lenient: BTreeMap<&'static str, usize>,
}

/// What both sides must do with a message whose one out-of-version field is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Refuse: null where the version does not allow it; a field the version lacks that is not
    /// ignorable (writing would lose it), or whose value is a struct that does not exist at
    /// the version, which Kafka's JSON reader cannot read.
    Refused,
    /// Write the message without the field: it is ignorable.
    Dropped,
}

fn expected(message: &model::Message, target: &Target<'_>, version: i16, value: &Value) -> Expect {
    let holds_struct = value.is_object() || value.as_array().is_some_and(|a| !a.is_empty());
    let struct_missing =
        struct_of(message, &target.field.ty).is_some_and(|s| !s.versions.contains(version));
    if target.null || !target.field.ignorable || (holds_struct && struct_missing) {
        Expect::Refused
    } else {
        Expect::Dropped
    }
}

/// Whether `release` defines (schema, version).
fn defines(
    releases: &kafka_codec_codegen::releases::Releases,
    release: &str,
    schema: &str,
    version: i16,
) -> bool {
    let cells = releases.of(schema).unwrap_or_default();
    releases
        .names
        .iter()
        .zip(cells)
        .any(|(name, cell)| name == release && cell.versions.contains(version))
}

/// The newest release that defines (schema, version), if any does.
fn reference<'a>(
    releases: &'a kafka_codec_codegen::releases::Releases,
    schema: &str,
    version: i16,
) -> Option<&'a str> {
    let cells = releases.of(schema)?;
    releases
        .names
        .iter()
        .zip(cells)
        .rev()
        .find(|(_, cell)| cell.versions.contains(version))
        .map(|(name, _)| name.as_str())
}

impl Run<'_> {
    /// Sends each request to the oracle of its release; the replies come back in the order of
    /// the requests.
    fn call(&mut self, requests: Vec<(&str, Value)>) -> Vec<Value> {
        let mut by_release: BTreeMap<&str, (Vec<usize>, Vec<Value>)> = BTreeMap::new();
        for (index, (release, request)) in requests.into_iter().enumerate() {
            let batch = by_release.entry(release).or_default();
            batch.0.push(index);
            batch.1.push(request);
        }
        let mut replies = vec![Value::Null; by_release.values().map(|b| b.0.len()).sum()];
        for (release, (indexes, batch)) in by_release {
            let oracle = self
                .oracles
                .get_mut(release)
                .unwrap_or_else(|| panic!("no oracle runs Kafka {release}"));
            for (index, reply) in indexes.into_iter().zip(oracle.call(&batch)) {
                replies[index] = reply;
            }
        }
        replies
    }

    /// Draws `count` more cases for each listed cell, checks them all in one pipelined batch.
    fn round(&mut self, wanted: &[(usize, usize)], entropy_schedule: &[usize]) {
        let mut generated = Vec::new();
        let mut requests = Vec::new();
        for &(index, count) in wanted {
            let cell = &mut self.cells[index];
            for k in 0..count {
                let draw = Draw {
                    seed: cell.rng.next_u64(),
                    entropy: entropy_schedule[(cell.cases.len() + k) % entropy_schedule.len()],
                };
                match (cell.schema.generate)(cell.version, draw) {
                    Ok(case) => {
                        let (schema, version) = (cell.schema.name, cell.version);
                        requests.push((cell.release, json!({"op": "encode", "schema": schema, "version": version, "json": case.json})));
                        requests.push((cell.release, json!({"op": "decode", "schema": schema, "version": version, "hex": hex(&case.bytes)})));
                        generated.push((index, draw, case));
                    }
                    Err(e) => self.disagreements.push(Disagreement {
                        cell: cell.name(),
                        what: "our side cannot produce a case (harness)".into(),
                        detail: e,
                        example: String::new(),
                    }),
                }
            }
        }
        let replies = self.call(requests);
        for ((index, draw, case), replies) in generated.into_iter().zip(replies.chunks(2)) {
            let cell = &mut self.cells[index];
            let mut problems: Vec<(&str, String)> = Vec::new();
            match reply_result(&replies[0], "hex") {
                Ok(kafka_hex) => {
                    let kafka_hex = kafka_hex.as_str().unwrap_or_default();
                    if kafka_hex != hex(&case.bytes) {
                        problems.push((
                            "our bytes differ from Kafka's encoding of our JSON",
                            format!("ours  {}\nkafka {kafka_hex}", hex(&case.bytes)),
                        ));
                    }
                    match unhex(kafka_hex) {
                        Ok(kafka_bytes) => {
                            if let Err(e) =
                                (cell.schema.check_decode)(cell.version, draw, &kafka_bytes)
                            {
                                problems.push(("our decode of Kafka's bytes", e));
                            }
                        }
                        Err(e) => problems.push(("Kafka's hex", e)),
                    }
                }
                Err(e) => problems.push(("Kafka refuses to encode our JSON", e)),
            }
            match reply_result(&replies[1], "json") {
                Ok(kafka_json) => {
                    if let Some(diff) = json_diff(&case.json, kafka_json) {
                        problems.push(("our JSON differs from Kafka's JSON of our bytes", diff));
                    }
                }
                Err(e) => problems.push(("Kafka refuses to decode our bytes", e)),
            }
            let mut covers = BTreeSet::new();
            mark_non_default(
                cell.model,
                &cell.model.root,
                cell.version,
                &case.json,
                "",
                &mut covers,
            );
            let agreed = problems.is_empty();
            if agreed {
                cell.covered.extend(covers.iter().cloned());
            } else {
                cell.mismatches += 1;
            }
            for (what, detail) in problems {
                self.disagreements.push(Disagreement {
                    cell: cell.name(),
                    what: what.into(),
                    detail,
                    example: format!("json {}\nhex  {}", case.json, hex(&case.bytes)),
                });
            }
            cell.cases.push(Case {
                json: case.json,
                hex: hex(&case.bytes),
                agreed,
                covers,
            });
        }
    }

    /// Misused fields, one case each. A field the version lacks holding a non-default value
    /// (taken from a random message of a version that has it): Kafka and we must both refuse
    /// it when it is not ignorable, and both drop it and write the same bytes when it is.
    /// Null in a field that is nullable in other versions only: both must refuse.
    fn misused_fields(&mut self, seed: u64) {
        let mut planned = Vec::new();
        let mut requests = Vec::new();
        for (index, cell) in self.cells.iter().enumerate() {
            let mut found = Vec::new();
            targets(cell.model, &cell.model.root, cell.version, &[], &mut found);
            let mut rng =
                SmallRng::seed_from_u64(mix(seed, cell.schema.name, cell.version) ^ 0xd0_4f00);
            for target in found {
                let value = if target.null {
                    Value::Null
                } else {
                    let range = cell.schema.versions;
                    // Donors come from versions the cell's release has (a field only another
                    // release knows is no misuse its classes could see) and in which the whole
                    // path exists.
                    let donors: Vec<i16> = (range.min..=range.max)
                        .filter(|&w| defines(self.releases, cell.release, cell.schema.name, w))
                        .filter(|&w| target.field.versions.contains(w))
                        .filter(|&w| target.hops.iter().all(|h| h.field.versions.contains(w)))
                        .collect();
                    if donors.is_empty() {
                        continue; // only in versions Kafka lacks (our overlay)
                    }
                    let mut donor = None;
                    for attempt in 0..DONOR_ATTEMPTS {
                        let w = donors[attempt % donors.len()];
                        let draw = Draw {
                            seed: rng.next_u64(),
                            entropy: ENTROPY,
                        };
                        let Ok(generated) = (cell.schema.generate)(w, draw) else {
                            continue;
                        };
                        let default = default_field_json(cell.model, target.field, w);
                        donor = objects_at(&generated.json, &target.hops)
                            .into_iter()
                            .filter_map(|object| object.get(&json_key(target.field)))
                            .find(|value| !json_eq(value, &default))
                            .cloned();
                        if donor.is_some() {
                            break;
                        }
                    }
                    let Some(donor) = donor else {
                        self.disagreements.push(Disagreement {
                            cell: cell.name(),
                            what: "no donor message with a non-default value (harness)".into(),
                            detail: target.path(),
                            example: String::new(),
                        });
                        continue;
                    };
                    donor
                };
                let expect = expected(cell.model, &target, cell.version, &value);
                let json = with_target(cell.model, cell.version, &target, value);
                requests.push((cell.release, json!({"op": "encode", "schema": cell.schema.name, "version": cell.version, "json": json})));
                planned.push((index, target.path(), expect, json));
            }
        }
        let replies = self.call(requests);
        for ((index, path, expect, json), reply) in planned.into_iter().zip(&replies) {
            let cell = &mut self.cells[index];
            let kafka =
                reply_result(reply, "hex").map(|h| h.as_str().unwrap_or_default().to_owned());
            let ours = (cell.schema.encode_json)(&json, cell.version, !path.starts_with("null "));
            let (agreed, hex_out, problem) = match (&ours, &kafka) {
                (Ours::Refused(_), Err(_)) if expect == Expect::Refused => (true, None, None),
                (Ours::Encoded(bytes), Ok(kafka_hex))
                    if expect == Expect::Dropped && hex(bytes) == *kafka_hex =>
                {
                    (true, Some(kafka_hex.clone()), None)
                }
                (Ours::Inconsistent(e), _) => (
                    false,
                    None,
                    Some(format!("our to_json and encode disagree: {e}")),
                ),
                (ours, kafka) => {
                    let ours = match ours {
                        Ours::Encoded(bytes) => format!("we write {}", hex(bytes)),
                        Ours::Refused(e) => format!("we refuse ({e})"),
                        Ours::Inconsistent(_) => unreachable!(),
                    };
                    let kafka = match kafka {
                        Ok(h) => format!("Kafka writes {h}"),
                        Err(e) => format!("Kafka refuses ({e})"),
                    };
                    (
                        false,
                        None,
                        Some(format!("{path} (expected: {expect:?}): {ours}; {kafka}")),
                    )
                }
            };
            if agreed {
                if let Err(e) = &kafka {
                    // The exception kind and the first words of Kafka's message.
                    let words: Vec<&str> = e.split_whitespace().take(4).collect();
                    *self.refusal_kinds.entry(words.join(" ")).or_default() += 1;
                }
            }
            if let Some(detail) = problem {
                cell.mismatches += 1;
                self.disagreements.push(Disagreement {
                    cell: cell.name(),
                    what: "a misused field (absent from the version, or null where not allowed)"
                        .into(),
                    detail,
                    example: format!("json {json}"),
                });
            }
            cell.misused.push(Misuse {
                path,
                json,
                hex: hex_out,
                agreed,
            });
        }
    }

    /// One byte replaced, inserted or deleted in valid encodings: both sides must read the
    /// result alike, or both refuse it, or only Kafka reads it in one of the known ways.
    fn mutations(&mut self, seed: u64, per_cell: usize) {
        let mut planned = Vec::new();
        let mut requests = Vec::new();
        for (index, cell) in self.cells.iter().enumerate() {
            let mut rng =
                SmallRng::seed_from_u64(mix(seed, cell.schema.name, cell.version) ^ 0x0b17_f11e);
            for _ in 0..per_cell {
                let draw = Draw {
                    seed: rng.next_u64(),
                    entropy: ENTROPY,
                };
                let Ok(generated) = (cell.schema.generate)(cell.version, draw) else {
                    continue;
                };
                let mut bytes = generated.bytes;
                let at = rng.next_u32() as usize % (bytes.len() + 1);
                match rng.next_u32() % 3 {
                    0 if at < bytes.len() => bytes[at] = rng.next_u32() as u8,
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, rng.next_u32() as u8),
                }
                requests.push((cell.release, json!({"op": "decode", "schema": cell.schema.name, "version": cell.version, "hex": hex(&bytes)})));
                planned.push((index, bytes));
            }
        }
        let replies = self.call(requests);
        for ((index, bytes), reply) in planned.into_iter().zip(&replies) {
            let cell = &mut self.cells[index];
            self.mutations.0 += 1;
            let problem = match (
                reply_result(reply, "json"),
                (cell.schema.decode_json)(cell.version, &bytes),
            ) {
                (Err(_), Err(_)) => {
                    self.mutations.1 += 1;
                    None
                }
                (Ok(kafka), Ok(ours)) => match json_diff(&ours, kafka) {
                    None => {
                        self.mutations.2 += 1;
                        None
                    }
                    Some(diff) => Some(("both read mutated bytes, to different JSON", diff)),
                },
                (
                    Ok(_),
                    Err(Refusal {
                        known: Some(how), ..
                    }),
                ) => {
                    *self.lenient.entry(how).or_default() += 1;
                    None
                }
                (Ok(_), Err(Refusal { text, .. })) => {
                    Some(("Kafka reads mutated bytes that we refuse", text))
                }
                (Err(e), Ok(_)) => Some(("we read mutated bytes that Kafka refuses", e)),
            };
            if let Some((what, detail)) = problem {
                cell.mismatches += 1;
                self.disagreements.push(Disagreement {
                    cell: cell.name(),
                    what: what.into(),
                    detail,
                    example: format!("hex {}", hex(&bytes)),
                });
            }
        }
    }

    /// Cells we have and Kafka lacks must really be refused by Kafka.
    fn ours_only(&mut self, schemas: &[Schema]) {
        let mut requests = Vec::new();
        for &(name, version) in OURS_ONLY {
            let schema = schemas
                .iter()
                .find(|s| s.name == name)
                .expect("known schema");
            let json = (schema.default_json)(version).expect("default JSON");
            requests.push((
                kafka_codec::KAFKA_VERSION,
                json!({"op": "encode", "schema": name, "version": version, "json": json}),
            ));
        }
        let replies = self.call(requests);
        for (&(name, version), reply) in OURS_ONLY.iter().zip(&replies) {
            if reply["kind"] != json!("UnsupportedVersionException") {
                self.disagreements.push(Disagreement {
                    cell: format!("{name} v{version}"),
                    what: "Kafka has a version we call ours only".into(),
                    detail: reply.to_string(),
                    example: String::new(),
                });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The golden corpus

/// Picks the corpus cases of a cell: first, greedily, cases that give fields their first
/// non-default value (most new fields per byte); then the smallest of the rest, distinct bytes
/// first; repeats only when a schema has fewer than [`CASES`] distinct messages.
fn pick_golden(cell: &Cell<'_>) -> Vec<usize> {
    let sizes: Vec<usize> = cell
        .cases
        .iter()
        .map(|c| c.hex.len() + c.json.to_string().len())
        .collect();
    let mut candidates: Vec<usize> = (0..cell.cases.len())
        .filter(|&i| cell.cases[i].agreed)
        .collect();
    candidates.sort_by_key(|&i| (sizes[i], i));
    let mut picked = Vec::new();
    let mut covered = BTreeSet::new();
    while picked.len() < CASES {
        let best = candidates
            .iter()
            .filter(|i| !picked.contains(*i))
            .map(|&i| (cell.cases[i].covers.difference(&covered).count(), i))
            .filter(|&(gain, _)| gain > 0)
            // gain / size, compared without division; ties go to the smaller case
            .max_by(|&(g1, i1), &(g2, i2)| {
                (g1 * sizes[i2])
                    .cmp(&(g2 * sizes[i1]))
                    .then(sizes[i2].cmp(&sizes[i1]))
            });
        let Some((_, i)) = best else { break };
        covered.extend(cell.cases[i].covers.iter().cloned());
        picked.push(i);
    }
    let mut seen: BTreeSet<&str> = picked.iter().map(|&i| cell.cases[i].hex.as_str()).collect();
    for distinct_only in [true, false] {
        for &i in &candidates {
            if picked.len() >= CASES {
                break;
            }
            let fresh = seen.insert(cell.cases[i].hex.as_str());
            if (fresh || !distinct_only) && (!picked.contains(&i)) {
                picked.push(i);
            }
        }
    }
    picked.sort_unstable();
    picked
}

fn write_golden(cells: &[Cell<'_>], seed: u64) {
    let dir = golden_dir();
    std::fs::create_dir_all(&dir).expect("creating tests/golden");
    for entry in std::fs::read_dir(&dir).expect("listing tests/golden") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            std::fs::remove_file(&path).expect("removing an old corpus file");
        }
    }
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut index_cells = Vec::new();
    let mut order: Vec<&Cell<'_>> = cells.iter().collect();
    order.sort_by(|a, b| (a.schema.name, a.version).cmp(&(b.schema.name, b.version)));
    let (mut total_cases, mut total_refused, mut total_ignored) = (0, 0, 0);
    for cell in order {
        let (schema, version) = (cell.schema.name, cell.version);
        let file = corpus_file(schema, cell.schema.kind, cell.schema.api_key);
        let text = files.entry(file.clone()).or_default();
        let direction = direction(cell.schema.kind);
        let picked = pick_golden(cell);
        for &i in &picked {
            let case = &cell.cases[i];
            let line = json!([version, direction, case.json, case.hex]);
            text.push_str(&serde_json::to_string(&line).expect("JSON"));
            text.push('\n');
        }
        let (mut refused, mut ignored) = (0, 0);
        for case in cell.misused.iter().filter(|c| c.agreed) {
            match &case.hex {
                None => refused += 1,
                Some(_) => ignored += 1,
            }
            let line = json!([version, direction, case.json, case.hex, case.path]);
            text.push_str(&serde_json::to_string(&line).expect("JSON"));
            text.push('\n');
        }
        total_cases += picked.len();
        total_refused += refused;
        total_ignored += ignored;
        let mut entry = json!({
            "schema": schema,
            "version": version,
            "file": file,
            "cases": picked.len(),
            "refused": refused,
            "dropped": ignored,
            "checked": cell.cases.len() + cell.misused.len(),
            "mismatches": cell.mismatches,
        });
        if cell.release != kafka_codec::KAFKA_VERSION {
            entry["kafka"] = json!(cell.release);
        }
        let missed = cell.missed();
        if !missed.is_empty() {
            entry["neverNonDefault"] = json!(missed);
        }
        index_cells.push(serde_json::to_string(&entry).expect("JSON"));
    }
    for (file, text) in &files {
        std::fs::write(dir.join(file), text).expect("writing a corpus file");
    }
    let ours_only: Vec<String> = OURS_ONLY
        .iter()
        .map(|(schema, version)| json!({"schema": schema, "version": version}).to_string())
        .collect();
    let index = format!(
        "{{\n  \"kafka\": {kafka},\n  \"seed\": {seed},\n  \"regenerate\": \"tools/regenerate-golden.sh\",\n  \
         \"totals\": {{\"cells\": {cells}, \"cases\": {total_cases}, \"refused\": {total_refused}, \"dropped\": {total_ignored}, \"files\": {files}}},\n  \
         \"oursOnly\": [{ours_only}],\n  \"cells\": [\n    {list}\n  ]\n}}\n",
        kafka = json!(kafka_codec::KAFKA_VERSION),
        cells = cells.len(),
        files = files.len(),
        ours_only = ours_only.join(", "),
        list = index_cells.join(",\n    "),
    );
    std::fs::write(dir.join("index.json"), index).expect("writing index.json");
    eprintln!(
        "recorded {total_cases} cases, {total_refused} refusals and {total_ignored} dropped fields in {} files under {}",
        files.len(),
        dir.display()
    );
}

// ---------------------------------------------------------------------------------------------

#[test]
#[ignore = "needs Java and the oracle jars: set KAFKA_ORACLE_JAR (see tools/ci-oracle.sh)"]
fn kafka_agrees_on_every_cell() {
    let started = Instant::now();
    let oracles = start_oracles();
    let record = std::env::var("KAFKA_CODEC_RECORD_GOLDEN").is_ok_and(|v| v == "1");
    let seed = match std::env::var("KAFKA_CODEC_SEED") {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("KAFKA_CODEC_SEED={text} is not a u64")),
        Err(_) if record => GOLDEN_SEED,
        Err(_) => fresh_seed(),
    };
    eprintln!("oracle_diff: seed {seed} (replay with KAFKA_CODEC_SEED={seed})");
    let only: Option<Vec<String>> = std::env::var("KAFKA_CODEC_ORACLE_ONLY")
        .ok()
        .map(|list| list.split(',').map(|s| s.trim().to_owned()).collect());
    assert!(
        !(record && only.is_some()),
        "the golden corpus needs every schema: unset KAFKA_CODEC_ORACLE_ONLY"
    );

    let set = kafka_codec_codegen::Generator::new(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas"))
        .load()
        .expect("loading schemas/");
    let mut collect = Collect(Vec::new());
    kafka_codec::visit_random_messages(&mut collect);
    let schemas = collect.0;

    let mut cells = Vec::new();
    let mut harness = Vec::new();
    for schema in &schemas {
        if only
            .as_ref()
            .is_some_and(|only| !only.iter().any(|n| n == schema.name))
        {
            continue;
        }
        let model = set
            .find(schema.name)
            .expect("every generated message has a schema");
        let range = schema.versions;
        for version in range.min..=range.max {
            let Some(release) = reference(&set.releases, schema.name, version) else {
                assert!(
                    !kafka_has(schema.name, version),
                    "{} v{version}: schemas/releases.tsv names no Kafka release for it, and \
                     OURS_ONLY does not list it",
                    schema.name
                );
                continue;
            };
            assert!(
                kafka_has(schema.name, version),
                "{} v{version} is in OURS_ONLY, yet Kafka {release} defines it",
                schema.name
            );
            // The model's defaults are what coverage and the absent-field cases build on:
            // they must be our default message's JSON.
            let ours = (schema.default_json)(version).expect("the default message has JSON");
            let from_model = default_struct_json(model, &model.root, version);
            if let Some(diff) = json_diff(&ours, &from_model) {
                harness.push(format!(
                    "{} v{version}: default JSON vs model: {diff}",
                    schema.name
                ));
            }
            let mut fields = Vec::new();
            field_paths(model, &model.root, version, "", &mut fields);
            cells.push(Cell {
                schema,
                model,
                version,
                release,
                rng: SmallRng::seed_from_u64(mix(seed, schema.name, version)),
                fields,
                covered: BTreeSet::new(),
                cases: Vec::new(),
                misused: Vec::new(),
                mismatches: 0,
            });
        }
    }
    assert!(
        harness.is_empty(),
        "harness problems:\n{}",
        harness.join("\n")
    );
    let needed: BTreeSet<&str> = cells.iter().map(|c| c.release).collect();
    for release in needed {
        assert!(
            oracles.contains_key(release),
            "cells of Kafka {release} need an oracle that runs it: list its jar in KAFKA_ORACLE_JAR \
             (tools/ci-oracle.sh builds them all)"
        );
    }

    let mut run = Run {
        oracles,
        releases: &set.releases,
        cells,
        disagreements: Vec::new(),
        refusal_kinds: BTreeMap::new(),
        mutations: (0, 0, 0),
        lenient: BTreeMap::new(),
    };
    eprintln!(
        "oracle up after {:.1?}; {} cells",
        started.elapsed(),
        run.cells.len()
    );

    // Rounds: everyone gets the first batch; cells with fields that never held a non-default
    // value get more, up to MAX_CASES.
    let (first, entropy_schedule) = if record {
        (RECORD_POOL, RECORD_ENTROPY)
    } else {
        let cases = std::env::var("KAFKA_CODEC_ORACLE_CASES").map_or(CASES, |n| {
            n.parse()
                .unwrap_or_else(|_| panic!("KAFKA_CODEC_ORACLE_CASES={n} is not a count"))
        });
        (cases.max(CASES), &[ENTROPY][..])
    };
    let mut wanted: Vec<(usize, usize)> = (0..run.cells.len()).map(|i| (i, first)).collect();
    let mut rounds = 0;
    while !wanted.is_empty() {
        rounds += 1;
        run.round(&wanted, entropy_schedule);
        wanted = run
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.missed().is_empty() && c.cases.len() < MAX_CASES)
            .map(|(i, c)| (i, CASES.min(MAX_CASES - c.cases.len())))
            .collect();
    }
    let cases: usize = run.cells.iter().map(|c| c.cases.len()).sum();
    eprintln!(
        "{cases} cases in {rounds} rounds after {:.1?}",
        started.elapsed()
    );

    run.misused_fields(seed);
    run.mutations(seed, if record { CASES } else { first });
    if only.is_none() {
        run.ours_only(&schemas);
    }
    let misused: Vec<&Misuse> = run.cells.iter().flat_map(|c| &c.misused).collect();
    let nulls = misused
        .iter()
        .filter(|c| c.path.starts_with("null "))
        .count();
    let refused = misused
        .iter()
        .filter(|c| c.agreed && c.hex.is_none())
        .count();
    let ignored = misused
        .iter()
        .filter(|c| c.agreed && c.hex.is_some())
        .count();
    let refusal_kinds = format!("{:?}", run.refusal_kinds);

    // Report.
    let mut report = String::new();
    let mut by_release: BTreeMap<&str, usize> = BTreeMap::new();
    for cell in &run.cells {
        *by_release.entry(cell.release).or_default() += 1;
    }
    report += &format!("cells answered by Kafka release: {by_release:?}\n");
    report += &format!(
        "cells: {} (plus {} ours only, refused by Kafka); cases: {cases} ({} to {} per cell); \
         misused fields: {} cases ({} absent from the version, {nulls} null where the version forbids it; \
         {refused} refused by both, Kafka's kinds {refusal_kinds}; {ignored} ignorable and dropped by both)\n",
        run.cells.len(),
        OURS_ONLY.len(),
        run.cells.iter().map(|c| c.cases.len()).min().unwrap_or(0),
        run.cells.iter().map(|c| c.cases.len()).max().unwrap_or(0),
        misused.len(),
        misused.len() - nulls,
    );
    let missed: Vec<String> = run
        .cells
        .iter()
        .filter(|c| !c.missed().is_empty())
        .map(|c| format!("  {} ({} cases): {:?}", c.name(), c.cases.len(), c.missed()))
        .collect();
    let fields: usize = run.cells.iter().map(|c| c.fields.len()).sum();
    report += &format!(
        "fields that took a non-default value: {} of {fields} (cell, field) pairs\n",
        fields - run.cells.iter().map(|c| c.missed().len()).sum::<usize>()
    );
    if !missed.is_empty() {
        report += &format!(
            "fields that never took a non-default value:\n{}\n",
            missed.join("\n")
        );
    }
    let (mutated, both_refused, both_read) = run.mutations;
    report += &format!(
        "mutated encodings: {mutated} ({both_refused} refused by both, {both_read} read alike by both, \
         {} read by Kafka only, where our reader is stricter by choice):\n",
        run.lenient.values().sum::<usize>()
    );
    for (how, count) in &run.lenient {
        report += &format!("  {count:6}  {how}\n");
    }
    // Disagreements, grouped by schema and kind, with one example each.
    let mut groups: BTreeMap<(String, String), Vec<&Disagreement>> = BTreeMap::new();
    for d in &run.disagreements {
        let schema = d.cell.split(' ').next().unwrap_or_default().to_owned();
        groups.entry((schema, d.what.clone())).or_default().push(d);
    }
    report += &format!(
        "disagreements: {} in {} groups\n",
        run.disagreements.len(),
        groups.len()
    );
    for ((schema, what), list) in &groups {
        let first = list[0];
        let cells: BTreeSet<&str> = list.iter().map(|d| d.cell.as_str()).collect();
        report += &format!(
            "- {schema}: {what}: {} cases in {:?}\n    {}\n    {}\n",
            list.len(),
            cells,
            first.detail.replace('\n', "\n    "),
            first.example.replace('\n', "\n    ")
        );
    }
    report += &format!("seed {seed}; took {:.1?}\n", started.elapsed());
    eprintln!("{report}");

    if record {
        write_golden(&run.cells, seed);
    }
    assert!(
        run.disagreements.is_empty(),
        "seed {seed}: {} disagreements with Kafka (see the report above)",
        run.disagreements.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Record batches: Kafka's MemoryRecordsBuilder and MemoryRecords against `kafka_codec::records`

#[cfg(feature = "records")]
mod records_diff {
    use super::{fresh_seed, golden_dir, hex, reply_result, start_oracles, unhex, GOLDEN_SEED};
    use bytes::Bytes;
    use kafka_codec::messages::leader_change_message::Voter;
    use kafka_codec::messages::{
        EndTxnMarker, KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord,
        SnapshotHeaderRecord, VotersRecord,
    };
    use kafka_codec::records::{
        decode_batches, json, Compression, ControlRecord, Header, Record, RecordBatch,
        RecordBatchBuilder,
    };
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    use serde_json::{json, Value};
    use std::collections::BTreeMap;
    use std::time::Instant;

    /// Random batches per run: every magic × codec × flag combination many times over.
    const BATCHES: usize = 1200;
    const T0: i64 = 1_700_000_000_000;

    fn random_bytes(rng: &mut SmallRng, max: usize) -> Bytes {
        let len = rng.gen_range(0..=max);
        if rng.gen_bool(0.3) {
            // Compressible: the codecs' back-references get exercised.
            Bytes::from(vec![rng.gen::<u8>(); len])
        } else {
            Bytes::from((0..len).map(|_| rng.gen()).collect::<Vec<u8>>())
        }
    }

    fn nullable(rng: &mut SmallRng, max: usize) -> Option<Bytes> {
        rng.gen_bool(0.8).then(|| random_bytes(rng, max))
    }

    fn header_key(rng: &mut SmallRng) -> String {
        let alphabet = ['a', 'b', 'Z', '-', '.', '\u{e9}', '\u{2603}', '\u{1f600}'];
        let len = rng.gen_range(0..8);
        (0..len)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
            .collect()
    }

    fn random_control(rng: &mut SmallRng) -> ControlRecord {
        match rng.gen_range(0..7) {
            0 => ControlRecord::Commit(EndTxnMarker::default().with_coordinator_epoch(rng.gen())),
            1 => ControlRecord::Abort(EndTxnMarker::default().with_coordinator_epoch(rng.gen())),
            2 => ControlRecord::LeaderChange(
                LeaderChangeMessage::default()
                    .with_version(0)
                    .with_leader_id(rng.gen_range(0..10))
                    .with_voters(
                        (0..rng.gen_range(0..4))
                            .map(|id| Voter::default().with_voter_id(id))
                            .collect(),
                    ),
            ),
            3 => ControlRecord::SnapshotHeader(
                SnapshotHeaderRecord::default()
                    .with_version(0)
                    .with_last_contained_log_timestamp(T0 + rng.gen_range(0..1000)),
            ),
            4 => ControlRecord::SnapshotFooter(SnapshotFooterRecord::default()),
            5 => ControlRecord::KRaftVersion(
                KRaftVersionRecord::default()
                    .with_version(0)
                    .with_k_raft_version(rng.gen_range(0..2)),
            ),
            _ => ControlRecord::KRaftVoters(VotersRecord::default()),
        }
    }

    /// A batch as a producer or broker could write it, built the way Kafka's
    /// MemoryRecordsBuilder fills in the header.
    fn random_batch(rng: &mut SmallRng) -> RecordBatch {
        let compression = Compression::ALL[rng.gen_range(0..Compression::ALL.len())];
        let magic: i8 = if compression == Compression::Zstd {
            2
        } else {
            [0, 1, 2, 2][rng.gen_range(0..4)]
        };
        let control = magic == 2 && rng.gen_bool(0.15);
        let transactional = magic == 2 && rng.gen_bool(0.3);
        let mut builder = RecordBatchBuilder::new(compression)
            .magic(magic)
            .base_offset(rng.gen_range(0..1i64 << 40));
        if magic == 2 {
            builder = builder
                .transactional(transactional)
                .control(control)
                .partition_leader_epoch(if rng.gen_bool(0.5) {
                    -1
                } else {
                    rng.gen_range(0..1000)
                });
            if transactional || rng.gen_bool(0.4) {
                let sequence = if control && rng.gen_bool(0.5) {
                    -1
                } else {
                    rng.gen_range(0..1 << 20)
                };
                builder =
                    builder.producer(rng.gen_range(0..1 << 40), rng.gen_range(0..100), sequence);
            }
            if rng.gen_bool(0.1) {
                builder = builder.delete_horizon(T0 + rng.gen_range(0..100_000));
            }
        }
        if magic >= 1 && rng.gen_bool(0.2) {
            builder = builder.log_append_time(T0 + rng.gen_range(0..1_000_000));
        }
        let count = if rng.gen_bool(0.1) {
            rng.gen_range(50..200)
        } else {
            rng.gen_range(1..12)
        };
        for _ in 0..count {
            let timestamp = T0 + rng.gen_range(-1000..100_000);
            if control {
                builder
                    .append_control(timestamp, &random_control(rng))
                    .unwrap();
                continue;
            }
            let gap = if rng.gen_bool(0.1) {
                rng.gen_range(1..5)
            } else {
                0
            };
            let headers = if magic == 2 {
                (0..rng.gen_range(0..4))
                    .map(|_| Header::new(header_key(rng), nullable(rng, 12)))
                    .collect()
            } else {
                Vec::new()
            };
            let record = Record {
                offset: builder.next_offset() + gap,
                timestamp,
                attributes: 0,
                key: nullable(rng, 24),
                value: nullable(rng, 300),
                headers,
            };
            builder.append_record(record);
        }
        builder.build()
    }

    /// A record as Kafka reports it: offset, timestamp (the append time under
    /// LogAppendTime), key, value, headers.
    type Seen = (
        i64,
        i64,
        Option<Bytes>,
        Option<Bytes>,
        Vec<(String, Option<Bytes>)>,
    );

    fn seen(batch: &RecordBatch, record: &Record) -> Seen {
        (
            record.offset,
            batch.record_timestamp(record),
            record.key.clone(),
            record.value.clone(),
            record
                .headers
                .iter()
                .map(|h| (h.key.to_string(), h.value.clone()))
                .collect(),
        )
    }

    fn seen_json(record: &Value) -> Seen {
        let bytes = |v: &Value| v.as_str().map(|t| Bytes::from(support_b64(t)));
        (
            record["offset"].as_i64().unwrap(),
            record["timestamp"].as_i64().unwrap(),
            bytes(&record["key"]),
            bytes(&record["value"]),
            record["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h["key"].as_str().unwrap().to_owned(), bytes(&h["value"])))
                .collect(),
        )
    }

    fn support_b64(text: &str) -> Vec<u8> {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .expect("base64 from Java")
    }

    /// Header fields as Kafka's RecordBatch reports them (magic 2), from a batch of ours.
    fn header_json(batch: &RecordBatch) -> Value {
        json!({
            "baseOffset": batch.base_offset,
            "partitionLeaderEpoch": batch.partition_leader_epoch,
            "magic": batch.magic,
            "compression": batch.compression.name(),
            "timestampType": batch.timestamp_type.name(),
            "isTransactional": batch.is_transactional,
            "isControl": batch.is_control,
            "hasDeleteHorizon": batch.has_delete_horizon,
            "lastOffsetDelta": batch.last_offset_delta,
            "baseTimestamp": batch.base_timestamp,
            "maxTimestamp": batch.max_timestamp,
            "producerId": batch.producer_id,
            "producerEpoch": batch.producer_epoch,
            "baseSequence": batch.base_sequence,
        })
    }

    fn without(mut value: Value, keys: &[&str]) -> Value {
        if let Some(object) = value.as_object_mut() {
            for key in keys {
                object.remove(*key);
            }
        }
        value
    }

    #[derive(Default)]
    struct Tally {
        batches: usize,
        records: usize,
        identical: usize,
    }

    #[test]
    #[ignore = "needs Java and the oracle jars: set KAFKA_ORACLE_JAR (see tools/ci-oracle.sh)"]
    fn kafka_agrees_on_record_batches() {
        let started = Instant::now();
        let record = std::env::var("KAFKA_CODEC_RECORD_GOLDEN").is_ok_and(|v| v == "1");
        let seed = match std::env::var("KAFKA_CODEC_SEED") {
            Ok(text) => text.parse().expect("KAFKA_CODEC_SEED is a u64"),
            Err(_) if record => GOLDEN_SEED,
            Err(_) => fresh_seed(),
        };
        eprintln!("records_diff: seed {seed} (replay with KAFKA_CODEC_SEED={seed})");
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x7265_636f_7264_7321);
        let specs: Vec<RecordBatch> = (0..BATCHES).map(|_| random_batch(&mut rng)).collect();
        // Batches are the pinned release's job: its MemoryRecords reads every magic.
        let mut oracle = start_oracles()
            .remove(kafka_codec::KAFKA_VERSION)
            .expect("the pinned release's oracle");
        let mut problems: Vec<String> = Vec::new();
        let mut tally: BTreeMap<(i8, &str), Tally> = BTreeMap::new();
        let (mut control, mut transactional, mut headers, mut null_keys, mut null_values) =
            (0, 0, 0, 0, 0);

        // 1. Kafka writes each batch; we read it.
        let requests: Vec<Value> = specs
            .iter()
            .map(|spec| json!({"op": "records_build", "batches": [json::batch_to_json(spec)]}))
            .collect();
        let written = oracle.call(&requests);
        let mut java_bytes = Vec::new();
        for (index, (spec, reply)) in specs.iter().zip(&written).enumerate() {
            let what = format!("batch {index} (magic {} {})", spec.magic, spec.compression);
            let entry = tally
                .entry((spec.magic, spec.compression.name()))
                .or_default();
            entry.batches += 1;
            entry.records += spec.records.len();
            control += usize::from(spec.is_control);
            transactional += usize::from(spec.is_transactional);
            headers += spec
                .records
                .iter()
                .filter(|r| !r.headers.is_empty())
                .count();
            null_keys += spec.records.iter().filter(|r| r.key.is_none()).count();
            null_values += spec.records.iter().filter(|r| r.value.is_none()).count();
            let bytes = match reply_result(reply, "hex") {
                Ok(hex) => Bytes::from(unhex(hex.as_str().unwrap()).expect("hex from Java")),
                Err(e) => {
                    problems.push(format!("{what}: Kafka could not write it: {e}"));
                    java_bytes.push(Bytes::new());
                    continue;
                }
            };
            java_bytes.push(bytes.clone());
            let decoded = match decode_batches(&bytes) {
                Ok(decoded) => decoded,
                Err(e) => {
                    problems.push(format!(
                        "{what}: we cannot read Kafka's bytes: {e}\n  {}",
                        hex(&bytes)
                    ));
                    continue;
                }
            };
            let got: Vec<Seen> = decoded
                .iter()
                .flat_map(|b| b.records.iter().map(move |r| seen(b, r)))
                .collect();
            let want: Vec<Seen> = spec.records.iter().map(|r| seen(spec, r)).collect();
            if got != want {
                problems.push(format!(
                    "{what}: Kafka's records read differently\n  want {want:?}\n  got  {got:?}"
                ));
            }
            for batch in &decoded {
                if (batch.magic, batch.compression) != (spec.magic, spec.compression) {
                    problems.push(format!(
                        "{what}: read as magic {} {}",
                        batch.magic, batch.compression
                    ));
                }
            }
            if spec.magic == 2 {
                let got = without(header_json(&decoded[0]), &[]);
                if got != header_json(spec) {
                    problems.push(format!(
                        "{what}: header differs\n  want {}\n  got  {got}",
                        header_json(spec)
                    ));
                }
            }
            // Uncompressed: our bytes are Kafka's bytes.
            if spec.compression == Compression::None {
                match spec.encode_to_bytes() {
                    Ok(ours) if ours == bytes => entry.identical += 1,
                    Ok(ours) => problems.push(format!(
                        "{what}: bytes differ\n  kafka {}\n  ours  {}",
                        hex(&bytes),
                        hex(&ours)
                    )),
                    Err(e) => problems.push(format!("{what}: we cannot write it: {e}")),
                }
            }
        }

        // 2. We write each batch; Kafka reads it (MemoryRecords, ensureValid on every batch
        // and record, so every CRC is checked).
        let ours: Vec<Bytes> = specs
            .iter()
            .map(|s| s.encode_to_bytes().expect("we write"))
            .collect();
        let requests: Vec<Value> = ours
            .iter()
            .map(|b| json!({"op": "records_read", "hex": hex(b)}))
            .collect();
        let read = oracle.call(&requests);
        for (index, ((spec, reply), bytes)) in specs.iter().zip(&read).zip(&ours).enumerate() {
            let what = format!("batch {index} (magic {} {})", spec.magic, spec.compression);
            let batches = match reply_result(reply, "batches") {
                Ok(batches) => batches.as_array().unwrap().clone(),
                Err(e) => {
                    problems.push(format!(
                        "{what}: Kafka cannot read our bytes: {e}\n  {}",
                        hex(bytes)
                    ));
                    continue;
                }
            };
            let got: Vec<Seen> = batches
                .iter()
                .flat_map(|b| b["records"].as_array().unwrap().iter().map(seen_json))
                .collect();
            let want: Vec<Seen> = spec.records.iter().map(|r| seen(spec, r)).collect();
            if got != want {
                problems.push(format!(
                    "{what}: Kafka reads our records differently\n  want {want:?}\n  got  {got:?}"
                ));
            }
            if spec.magic == 2 {
                let got = without(batches[0].clone(), &["crc", "records"]);
                if got != header_json(spec) {
                    problems.push(format!(
                        "{what}: Kafka reads our header differently\n  want {}\n  got  {got}",
                        header_json(spec)
                    ));
                }
            } else {
                for b in &batches {
                    if b["magic"] != json!(spec.magic)
                        || b["compression"] != json!(spec.compression.name())
                    {
                        problems.push(format!(
                            "{what}: Kafka reads magic {} {}",
                            b["magic"], b["compression"]
                        ));
                    }
                }
            }
        }

        let mut report = format!(
            "records_diff: {BATCHES} random batches both ways in {:.1}s ({control} control, \
             {transactional} transactional; records with headers {headers}, null keys \
             {null_keys}, null values {null_values})\n",
            started.elapsed().as_secs_f64()
        );
        for ((magic, codec), t) in &tally {
            report.push_str(&format!(
                "  magic {magic} {codec:<6}: {:>4} batches, {:>5} records{}\n",
                t.batches,
                t.records,
                if *codec == "none" {
                    format!(", {} byte-identical both ways", t.identical)
                } else {
                    String::new()
                }
            ));
        }
        report.push_str(&format!("  disagreements: {}\n", problems.len()));
        eprintln!("{report}");
        for problem in problems.iter().take(10) {
            eprintln!("{problem}");
        }
        assert!(
            problems.is_empty(),
            "{} disagreements with Kafka (first ones above)",
            problems.len()
        );
        if record {
            write_records_golden(&specs, &java_bytes);
        }
    }

    /// What a batch's corpus group is: the smallest batch of each is kept.
    type Group = (i8, &'static str, bool, bool, &'static str, bool, bool);

    fn group(batch: &RecordBatch) -> Group {
        (
            batch.magic,
            batch.compression.name(),
            batch.is_control,
            batch.is_transactional,
            batch.timestamp_type.name(),
            batch.has_delete_horizon,
            batch.records.iter().any(|r| !r.headers.is_empty()),
        )
    }

    /// `tests/golden/records/java.jsonl`: for each kind of batch (magic, codec, control,
    /// transactional, timestamp type, delete horizon, headers), the smallest two that Kafka
    /// wrote in this run, as `{"batch": <our JSON form of what Kafka was asked to write>,
    /// "hex": <Kafka's bytes>}`, one per line. Replayed without Java by `tests/records/batches.rs`
    /// and the CLI's `records` tests.
    fn write_records_golden(specs: &[RecordBatch], java: &[Bytes]) {
        let mut groups: BTreeMap<Group, Vec<usize>> = BTreeMap::new();
        for (index, spec) in specs.iter().enumerate() {
            groups.entry(group(spec)).or_default().push(index);
        }
        let mut kept: Vec<usize> = groups
            .into_values()
            .flat_map(|mut members| {
                members.sort_by_key(|&i| (java[i].len(), i));
                members.truncate(2);
                members
            })
            .collect();
        kept.sort_unstable();
        let mut text = String::new();
        for &index in &kept {
            let line =
                json!({"batch": json::batch_to_json(&specs[index]), "hex": hex(&java[index])});
            text.push_str(&serde_json::to_string(&line).expect("JSON"));
            text.push('\n');
        }
        let dir = golden_dir().join("records");
        std::fs::create_dir_all(&dir).expect("creating tests/golden/records");
        std::fs::write(dir.join("java.jsonl"), &text).expect("writing java.jsonl");
        eprintln!(
            "records_diff: wrote {} of Kafka's batches ({} bytes) to tests/golden/records/java.jsonl",
            kept.len(),
            text.len()
        );
    }
}
