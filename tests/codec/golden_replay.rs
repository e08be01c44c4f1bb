//! Replays the golden corpus in `tests/golden/` (Apache Kafka's own answers, recorded by
//! `tests/live/oracle_diff.rs` in record mode; see `tests/golden/README.md`) without Java.
//!
//! For every case: our decoding of Kafka's bytes equals the message read from the recorded JSON,
//! re-encoding it gives Kafka's bytes again, and our JSON of it is the recorded JSON. For every
//! misused-field case: we refuse what Kafka refused, and write Kafka's bytes where Kafka dropped
//! an ignorable field. And the index must cover every (schema, version) cell of the crate except
//! the ones Kafka lacks, so a new schema or version without golden data fails here.

use crate::support::{corpus_file, direction, golden_dir, json_diff, kafka_has, unhex, OURS_ONLY};
use bytes::Bytes;
use kafka_codec::MessageCodec;
use kafka_codec::MessageVisitor;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The fewest cases a cell may have in the corpus.
const MIN_CASES: u64 = 25;

/// One line of a corpus file.
struct Line {
    file: String,
    number: usize,
    version: i16,
    json: Value,
    /// Kafka's bytes; `None` where Kafka refused.
    hex: Option<String>,
    /// For misused-field cases: which field, and how.
    misuse: Option<String>,
}

impl Line {
    fn parse(file: &str, number: usize, text: &str) -> Result<(String, Line), String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let items = value.as_array().ok_or("not a JSON array")?;
        if !(4..=5).contains(&items.len()) {
            return Err(format!("{} elements, expected 4 or 5", items.len()));
        }
        let version = items[0]
            .as_i64()
            .and_then(|v| i16::try_from(v).ok())
            .ok_or("version is not an int16")?;
        let direction = items[1]
            .as_str()
            .ok_or("direction is not a string")?
            .to_owned();
        let hex = match &items[3] {
            Value::String(hex) => Some(hex.clone()),
            Value::Null if items.len() == 5 => None,
            _ => return Err("hex is not a string".into()),
        };
        let misuse = match items.get(4) {
            Some(Value::String(note)) => Some(note.clone()),
            Some(_) => return Err("the fifth element is not a string".into()),
            None => None,
        };
        let line = Line {
            file: file.to_owned(),
            number,
            version,
            json: items[2].clone(),
            hex,
            misuse,
        };
        Ok((direction, line))
    }

    fn place(&self) -> String {
        format!("{}:{} (v{})", self.file, self.number, self.version)
    }
}

/// Every line, by schema name.
struct Corpus {
    lines: BTreeMap<&'static str, Vec<Line>>,
}

/// Where each schema's lines live: (file, direction) → schema.
struct Schemas(BTreeMap<(String, &'static str), &'static str>);

impl MessageVisitor for Schemas {
    fn visit<M: MessageCodec>(&mut self) {
        let file = corpus_file(M::NAME, M::KIND, M::API_KEY);
        self.0.insert((file, direction(M::KIND)), M::NAME);
    }
}

struct Replay<'a> {
    corpus: &'a Corpus,
    /// (schema, version) → (cases, misused-field cases) found in the files.
    counts: BTreeMap<(String, i16), (u64, u64)>,
    /// Every cell the crate has.
    cells: BTreeSet<(String, i16)>,
    failures: Vec<String>,
}

impl MessageVisitor for Replay<'_> {
    fn visit<M: MessageCodec>(&mut self) {
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            self.cells.insert((M::NAME.to_owned(), version));
        }
        for line in self.corpus.lines.get(M::NAME).into_iter().flatten() {
            let count = self
                .counts
                .entry((M::NAME.to_owned(), line.version))
                .or_default();
            let result = if line.misuse.is_some() {
                count.1 += 1;
                check_misuse::<M>(line)
            } else {
                count.0 += 1;
                check_case::<M>(line)
            };
            if let Err(problem) = result {
                self.failures
                    .push(format!("{} {}: {problem}", M::NAME, line.place()));
            }
        }
    }
}

/// Kafka's bytes decode to the recorded message, encode back to the same bytes, and our JSON of
/// the message is the recorded JSON.
fn check_case<M: MessageCodec>(line: &Line) -> Result<(), String> {
    let version = line.version;
    let kafka = Bytes::from(unhex(line.hex.as_deref().unwrap_or_default())?);
    let decoded = M::decode_exact(kafka.clone(), version)
        .map_err(|e| format!("decoding Kafka's bytes: {e}"))?;
    let expected =
        M::from_json(&line.json, version).map_err(|e| format!("reading the JSON: {e}"))?;
    if decoded != expected {
        let detail = match decoded.to_json(version) {
            Ok(json) => json_diff(&line.json, &json)
                .unwrap_or_else(|| format!("{expected:?} vs {decoded:?}")),
            Err(e) => e.to_string(),
        };
        return Err(format!("Kafka's bytes decode to another message: {detail}"));
    }
    let again = decoded
        .encode_to_vec(version)
        .map_err(|e| format!("encoding: {e}"))?;
    if again != kafka {
        return Err("re-encoding gives other bytes than Kafka's".into());
    }
    let json = expected
        .to_json(version)
        .map_err(|e| format!("to_json: {e}"))?;
    if let Some(diff) = json_diff(&line.json, &json) {
        return Err(format!("our JSON differs from the recorded JSON: {diff}"));
    }
    Ok(())
}

/// A misused field: refused where Kafka refused, dropped with Kafka's bytes where it dropped it.
fn check_misuse<M: MessageCodec>(line: &Line) -> Result<(), String> {
    let version = line.version;
    let note = line.misuse.as_deref().unwrap_or_default();
    let ours = M::from_json(&line.json, version)
        .map_err(|e| e.to_string())
        .and_then(|m| m.encode_to_vec(version).map_err(|e| e.to_string()));
    match (&line.hex, ours) {
        (None, Err(_)) => Ok(()),
        (None, Ok(bytes)) => Err(format!(
            "{note}: Kafka refuses, we write {}",
            crate::support::hex(&bytes)
        )),
        (Some(hex), Ok(bytes)) if unhex(hex)? == bytes => Ok(()),
        (Some(hex), Ok(bytes)) => Err(format!(
            "{note}: Kafka writes {hex}, we write {}",
            crate::support::hex(&bytes)
        )),
        (Some(hex), Err(e)) => Err(format!("{note}: Kafka writes {hex}, we refuse: {e}")),
    }
}

fn read_corpus(index: &Value) -> Result<Corpus, Vec<String>> {
    let mut schemas = Schemas(BTreeMap::new());
    kafka_codec::visit_messages(&mut schemas);
    let mut problems = Vec::new();
    let mut lines: BTreeMap<&'static str, Vec<Line>> = BTreeMap::new();
    let files: BTreeSet<String> = index["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|cell| cell["file"].as_str().map(str::to_owned))
        .collect();
    for entry in std::fs::read_dir(golden_dir()).expect("tests/golden exists") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".jsonl") && !files.contains(&name) {
            problems.push(format!("{name} is not in index.json"));
        }
    }
    for file in &files {
        let text = match std::fs::read_to_string(golden_dir().join(file)) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{file}: {e}"));
                continue;
            }
        };
        for (i, text) in text.lines().enumerate() {
            match Line::parse(file, i + 1, text) {
                Ok((direction, line)) => match schemas.0.get(&(file.clone(), direction.as_str())) {
                    Some(schema) => lines.entry(schema).or_default().push(line),
                    None => problems.push(format!(
                        "{file}:{}: no schema for direction {direction:?}",
                        i + 1
                    )),
                },
                Err(e) => problems.push(format!("{file}:{}: {e}", i + 1)),
            }
        }
    }
    if problems.is_empty() {
        Ok(Corpus { lines })
    } else {
        Err(problems)
    }
}

#[test]
fn kafka_golden_corpus_replays() {
    let started = std::time::Instant::now();
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(golden_dir().join("index.json")).expect("tests/golden/index.json"),
    )
    .expect("index.json is JSON");
    assert_eq!(
        index["kafka"].as_str(),
        Some(kafka_codec::KAFKA_VERSION),
        "corpus of another Kafka"
    );
    let ours_only: BTreeSet<(String, i16)> =
        OURS_ONLY.iter().map(|(s, v)| (s.to_string(), *v)).collect();
    let listed_ours_only: BTreeSet<(String, i16)> = index["oursOnly"]
        .as_array()
        .expect("oursOnly")
        .iter()
        .map(|c| {
            (
                c["schema"].as_str().unwrap().to_owned(),
                c["version"].as_i64().unwrap() as i16,
            )
        })
        .collect();
    assert_eq!(
        listed_ours_only, ours_only,
        "index.json and the tests disagree on cells Kafka lacks"
    );

    let corpus = read_corpus(&index)
        .unwrap_or_else(|problems| panic!("bad corpus:\n{}", problems.join("\n")));
    let mut replay = Replay {
        corpus: &corpus,
        counts: BTreeMap::new(),
        cells: BTreeSet::new(),
        failures: Vec::new(),
    };
    kafka_codec::visit_messages(&mut replay);

    // The index covers exactly the crate's cells that Kafka has, each with enough cases, no
    // recorded mismatch, and the counts the files hold.
    let mut failures = replay.failures;
    let mut indexed = BTreeSet::new();
    for cell in index["cells"].as_array().expect("cells") {
        let schema = cell["schema"].as_str().expect("schema").to_owned();
        let version = cell["version"].as_i64().expect("version") as i16;
        let name = format!("{schema} v{version}");
        let number = |key: &str| {
            cell[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{name}: no {key} in index.json"))
        };
        let (cases, misused) = replay
            .counts
            .get(&(schema.clone(), version))
            .copied()
            .unwrap_or_default();
        if number("mismatches") != 0 {
            failures.push(format!(
                "{name}: Kafka disagreed on {} cases when recorded",
                number("mismatches")
            ));
        }
        if number("cases") < MIN_CASES || cases != number("cases") {
            failures.push(format!(
                "{name}: index says {} cases, the file has {cases} (at least {MIN_CASES})",
                number("cases")
            ));
        }
        if misused != number("refused") + number("dropped") {
            failures.push(format!(
                "{name}: index says {} misused-field cases, the file has {misused}",
                number("refused") + number("dropped")
            ));
        }
        if !indexed.insert((schema, version)) {
            failures.push(format!("{name} is listed twice"));
        }
    }
    let wanted: BTreeSet<(String, i16)> = replay
        .cells
        .iter()
        .filter(|(s, v)| kafka_has(s, *v))
        .cloned()
        .collect();
    for (schema, version) in wanted.difference(&indexed) {
        failures.push(format!(
            "{schema} v{version} has no golden data: regenerate with tools/regenerate-golden.sh"
        ));
    }
    for (schema, version) in indexed.difference(&wanted) {
        failures.push(format!(
            "{schema} v{version} is in the corpus but not in the crate"
        ));
    }
    for (schema, version) in replay.counts.keys() {
        if !indexed.contains(&(schema.clone(), *version)) {
            failures.push(format!("{schema} v{version} has lines but no index entry"));
        }
    }

    let lines: usize = corpus.lines.values().map(Vec::len).sum();
    assert!(
        failures.is_empty(),
        "{} of {lines} golden lines or cells fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!(
        "{lines} golden lines over {} cells replayed in {:.1?}",
        indexed.len(),
        started.elapsed()
    );
}
