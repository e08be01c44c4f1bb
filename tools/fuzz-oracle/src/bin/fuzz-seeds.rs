//! Writes the fuzz corpus into `fuzz/corpus/<target>/` (or the directory given as the first
//! argument): the tracked, named seeds in `fuzz/seeds/<target>/`, the annotated sample frames
//! in `examples/frames/`, a batch of every magic and codec, and, for every schema and every
//! valid version, a random message (`kafka_codec::random`) in each target's input layout. The
//! seed is fixed, so the output is the same on every run.
//!
//! `select CORPUS OUT` goes the other way: it picks one input of each class (API
//! or schema, version, and what the codec makes of it; see `class`) from a corpus that a
//! campaign grew, and writes them under names that say what they are. That is how the
//! tracked seeds were chosen, and how a campaign's finds join them.
//!
//! ```sh
//! cargo run -p kafka-codec-fuzz-oracle --bin fuzz-seeds -- /tmp/corpus
//! cargo run -p kafka-codec-fuzz-oracle --bin fuzz-seeds -- select /tmp/campaign fuzz/seeds
//! ```

use kafka_codec_fuzz_oracle as checks;

use arbitrary::Unstructured;
use kafka_codec::messages::{RequestHeader, ResponseHeader};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::{
    ApiKey, Message, MessageCodec, MessageKind, RandomMessageVisitor, RequestFrame, ResponseFrame,
};
use rand::{rngs::SmallRng, RngCore, SeedableRng};
use std::path::{Path, PathBuf};

struct Seeds {
    dir: PathBuf,
    rng: SmallRng,
    schema_index: u16,
    written: usize,
}

impl Seeds {
    fn entropy(&mut self) -> Vec<u8> {
        let mut bytes = vec![0u8; 4096];
        self.rng.fill_bytes(&mut bytes);
        bytes
    }

    fn write(&mut self, target: &str, name: &str, bytes: &[u8]) {
        let dir = self.dir.join(target);
        std::fs::create_dir_all(&dir).expect("create corpus directory");
        std::fs::write(dir.join(name), bytes).expect("write seed");
        self.written += 1;
        // Every frame seed is a `views` seed too, behind its flags byte (see the oracle).
        let flags = match target {
            "request_frame" => 0u8,
            "response" => 1,
            _ => return,
        };
        let mut input = vec![flags];
        input.extend_from_slice(bytes);
        self.write("views", name, &input);
    }

    fn random<M: Random>(&mut self, version: i16, unknown_tagged_fields: bool) -> M {
        let entropy = self.entropy();
        let options = RandomOptions {
            unknown_tagged_fields,
        };
        M::random(&mut Unstructured::new(&entropy), version, &options).expect("random message")
    }
}

impl RandomMessageVisitor for Seeds {
    fn visit<M: MessageCodec + Random>(&mut self) {
        let index = self.schema_index;
        self.schema_index += 1;
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            let name = format!("{}-v{version}", M::NAME);
            let selector = checks::version_byte(M::VALID_VERSIONS, version, false);

            let mut structured = index.to_be_bytes().to_vec();
            structured.extend([selector, u8::from(version % 2 == 1)]);
            structured.extend(&self.entropy()[..256]);
            self.write("structured_roundtrip", &name, &structured);

            let message: M = self.random(version, false);
            let mut json = index.to_be_bytes().to_vec();
            json.push(selector);
            json.extend(
                message
                    .to_json(version)
                    .expect("to_json")
                    .to_string()
                    .bytes(),
            );
            self.write("json", &name, &json);

            let Some(api) = M::API_KEY.and_then(ApiKey::from_key) else {
                continue;
            };
            let body: M = self.random(version, version % 2 == 1);
            let body = body.encode_to_vec(version).expect("encode body");
            match M::KIND {
                MessageKind::Request => {
                    let header_version = api.request_header_version(version);
                    let mut header: RequestHeader = self.random(header_version, false);
                    header.request_api_key = api.key();
                    header.request_api_version = version;
                    let mut frame = header.encode_to_vec(header_version).expect("header");
                    frame.extend(&body);
                    self.write("request_frame", &name, &frame);
                }
                MessageKind::Response => {
                    let header_version = api.response_header_version(version);
                    let header: ResponseHeader = self.random(header_version, false);
                    let api_index = ApiKey::ALL.iter().position(|a| *a == api).expect("in ALL");
                    let mut input = vec![
                        api_index as u8,
                        checks::version_byte(api.valid_versions(), version, true),
                    ];
                    input.extend(header.encode_to_vec(header_version).expect("header"));
                    input.extend(&body);
                    self.write("response", &name, &input);
                }
                _ => {}
            }
        }
    }
}

/// The number after `flag` in `text` (the sample frames name a response's API that way).
fn flag_value(text: &str, flag: &str) -> Option<i16> {
    let after = text.split(flag).nth(1)?;
    let token = after.split_whitespace().next()?;
    token
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// Seeds from `examples/frames/*.hex`: a request frame as it is, a response frame behind the
/// two selector bytes of the `response` target.
fn sample_frames(seeds: &mut Seeds) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/frames");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/frames")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "hex"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("read sample");
        let bytes = kafka_codec_hexdump::decode(text.as_bytes()).expect("sample is hex");
        let name = format!("sample-{}", path.file_stem().unwrap().to_string_lossy());
        let key = flag_value(&text, "--api-key").and_then(ApiKey::from_key);
        match (key, flag_value(&text, "--api-version")) {
            (Some(api), Some(version)) => {
                ResponseFrame::decode(bytes.clone().into(), api, version).expect("sample");
                let api_index = ApiKey::ALL.iter().position(|a| *a == api).expect("in ALL");
                let mut input = vec![
                    api_index as u8,
                    checks::version_byte(api.valid_versions(), version, true),
                ];
                input.extend(bytes);
                seeds.write("response", &name, &input);
            }
            _ => {
                RequestFrame::decode(bytes.clone().into()).expect("sample");
                seeds.write("request_frame", &name, &bytes);
            }
        }
    }
}

/// `records` seeds: a batch of every magic and codec (two of them in one field, and one cut
/// short), under each reader flag.
fn record_seeds(seeds: &mut Seeds) {
    use bytes::Bytes;
    use kafka_codec::records::{Compression, Header, RecordBatchBuilder};
    for compression in Compression::ALL.into_iter().filter(|c| c.is_enabled()) {
        for magic in [0i8, 1, 2] {
            if magic < 2 && compression == Compression::Zstd {
                continue;
            }
            let mut builder = RecordBatchBuilder::new(compression)
                .magic(magic)
                .base_offset(7);
            let headers = if magic == 2 {
                vec![
                    Header::new("h", Some(Bytes::from_static(b"v"))),
                    Header::new("n", None),
                ]
            } else {
                Vec::new()
            };
            builder.append_with_headers(
                1_700_000_000_000,
                Some(Bytes::from_static(b"key")),
                Some(Bytes::from_static(b"value value value")),
                headers,
            );
            builder.append(1_700_000_000_001, None, None);
            let batch = builder.build().encode_to_bytes().expect("seed batch");
            let mut field = batch.to_vec();
            field.extend_from_slice(&batch);
            let cut = &field[..field.len() - 5];
            for flags in [0u8, 1, 2, 4] {
                for (kind, bytes) in [("one", &batch[..]), ("two", &field[..]), ("cut", cut)] {
                    let mut input = vec![flags];
                    input.extend_from_slice(bytes);
                    seeds.write(
                        "records",
                        &format!("{compression}-v{magic}-{kind}-{flags}"),
                        &input,
                    );
                }
            }
        }
    }
}

/// The tracked seeds, `fuzz/seeds/<target>/`.
fn tracked_seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds")
}

/// Copies the tracked, named seeds (`fuzz/seeds/<target>/*.bin`) into the corpus.
fn copy_tracked(seeds: &mut Seeds) {
    for target in TARGETS {
        for (name, bytes) in read_dir(&tracked_seeds().join(target)) {
            seeds.write(target, &name, &bytes);
        }
    }
}

/// The fuzz targets, each with a directory of the corpus.
const TARGETS: [&str; 6] = [
    "request_frame",
    "response",
    "json",
    "structured_roundtrip",
    "records",
    "views",
];

/// The files of `dir` (none if it does not exist), sorted by name.
fn read_dir(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).expect("read corpus file");
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// `CamelCase` as `camel-case`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            break;
        }
    }
    out
}

/// What a decode gave, in a file name: `ok`, or the error's kind (its `Debug` name).
fn outcome<T, E: std::fmt::Debug>(result: &Result<T, E>, kind: impl Fn(&E) -> String) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(e) => kebab(&kind(e)),
    }
}

/// The schema an input of `json` or `structured_roundtrip` picks, and its version.
struct Schema {
    version_byte: u8,
    name: String,
}

impl checks::SchemaAction for Schema {
    fn run<M: MessageCodec + Random>(&mut self) {
        let version = checks::pick_version(M::VALID_VERSIONS, self.version_byte, false);
        self.name = format!("{}-v{version}", kebab(M::NAME));
    }
}

/// The class of a fuzz input, as a file name: what it is for its target (API or schema and
/// version, or the records' magic, codec and reader flags) and what the codec makes of it.
/// Inputs of one class exercise the same case; `select` keeps one of each.
fn class(target: &str, input: &[u8]) -> Option<String> {
    use kafka_codec::bytes::Bytes;
    use kafka_codec::DecodeOptions;
    let api_name = |api: ApiKey| kebab(api.name());
    match target {
        "views" => {
            let (flags, frame) = input.split_first()?;
            let frame_target = if flags & 1 == 0 {
                "request_frame"
            } else {
                "response"
            };
            let limits = if flags & 2 == 0 { "" } else { "-tight" };
            class(frame_target, frame).map(|class| format!("{class}{limits}"))
        }
        "request_frame" => {
            let [k0, k1, v0, v1, ..] = input else {
                return Some("short".into());
            };
            let key = i16::from_be_bytes([*k0, *k1]);
            let version = i16::from_be_bytes([*v0, *v1]);
            let api = ApiKey::from_key(key).map_or_else(|| "unknown-api".into(), api_name);
            let result = RequestFrame::decode(Bytes::copy_from_slice(input));
            let version = if (-1..=99).contains(&version) {
                format!("v{version}")
            } else {
                "bad-version".into()
            };
            Some(format!(
                "{api}-{version}-{}",
                outcome(&result, |e| format!("{:?}", e.kind()))
            ))
        }
        "response" => {
            let [api, version, frame @ ..] = input else {
                return None;
            };
            let api = ApiKey::ALL[usize::from(*api) % ApiKey::ALL.len()];
            let version = checks::pick_version(api.valid_versions(), *version, true);
            let result = ResponseFrame::decode_with(
                Bytes::copy_from_slice(frame),
                api,
                version,
                &DecodeOptions::default(),
            );
            Some(format!(
                "{}-v{version}-{}",
                api_name(api),
                outcome(&result, |e| format!("{:?}", e.kind()))
            ))
        }
        "json" | "structured_roundtrip" => {
            let [hi, lo, version_byte, rest @ ..] = input else {
                return None;
            };
            let index = usize::from(u16::from_be_bytes([*hi, *lo]));
            let schema = checks::with_schema(
                index,
                Schema {
                    version_byte: *version_byte,
                    name: String::new(),
                },
            );
            if target == "json" {
                let json = serde_json::from_slice::<serde_json::Value>(rest);
                let what = match json {
                    Ok(serde_json::Value::Object(_)) => "object",
                    Ok(_) => "not-object",
                    Err(_) => "not-json",
                };
                Some(format!("{}-{what}", schema.name))
            } else {
                let tagged = rest.first().is_some_and(|b| b & 1 != 0);
                Some(format!(
                    "{}{}",
                    schema.name,
                    if tagged { "-unknown-tagged" } else { "" }
                ))
            }
        }
        "records" => {
            use kafka_codec::records::{BatchReader, ReadOptions};
            let [flags, field @ ..] = input else {
                return None;
            };
            // Offset 16 is the magic byte in every format; the codec is in the low bits of
            // the attributes (one byte after it in magic 0/1, two bytes from offset 21 in v2).
            let magic = field.get(16).copied();
            let codec = match magic {
                Some(0 | 1) => field.get(17).map(|a| a & 7),
                Some(2) => field.get(22).map(|a| a & 7),
                _ => None,
            };
            let shape = match (magic, codec) {
                (Some(m @ 0..=2), Some(c)) => format!("magic{m}-codec{c}"),
                _ => "no-batch".into(),
            };
            let options = ReadOptions {
                limits: checks::tight_limits(),
                allow_truncated_tail: flags & 1 != 0,
                verify_crc: flags & 2 == 0,
            };
            let mut reader = BatchReader::with_options(Bytes::copy_from_slice(field), options);
            let mut result = "ok".to_string();
            for raw in &mut reader {
                let decoded = raw.and_then(|raw| raw.decode());
                if let Err(e) = decoded {
                    result = kebab(&format!("{:?}", e.kind()));
                    break;
                }
            }
            Some(format!("{shape}-flags{}-{result}", flags & 7))
        }
        _ => None,
    }
}

/// A class's name without its version (`metadata-unexpected-eof` for
/// `metadata-v12-unexpected-eof`), and what the codec made of the input (`unexpected-eof`).
fn split_class(class: &str) -> (String, String) {
    let tokens: Vec<&str> = class.split('-').collect();
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let version = (0..tokens.len()).find_map(|i| match (tokens[i], tokens.get(i + 1)) {
        ("v", Some(next)) if digits(next) => Some((i, 2)),
        ("bad", Some(&"version")) => Some((i, 2)),
        (t, _) if t.starts_with('v') && digits(&t[1..]) => Some((i, 1)),
        _ => None,
    });
    let after = |i: usize| tokens[i..].join("-");
    match version {
        Some((i, width)) => {
            let mut coarse = tokens[..i].to_vec();
            coarse.extend(&tokens[i + width..]);
            (coarse.join("-"), after(i + width))
        }
        None => {
            let flags = tokens.iter().position(|t| t.starts_with("flags"));
            (
                class.to_string(),
                flags.map_or_else(String::new, |i| after(i + 1)),
            )
        }
    }
}

/// `select CORPUS OUT`: one input of each class (see [`class`]) of every target's corpus in
/// `CORPUS/<target>/`, the smallest, written to `OUT/<target>/<class>.bin`; at most `limit`
/// of them per target, spread over the classes: every API or schema with each outcome before
/// a second version of it, and the outcomes in turn.
fn select(corpus: &Path, out: &Path, limit: impl Fn(&str) -> usize) {
    use std::collections::BTreeMap;
    for target in TARGETS {
        let mut classes: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for (_, input) in read_dir(&corpus.join(target)) {
            let Some(class) = class(target, &input) else {
                continue;
            };
            let kept = classes.entry(class).or_insert_with(|| input.clone());
            if input.len() < kept.len() {
                *kept = input;
            }
        }
        // Rank each class within its version-less group, then within the classes of its
        // outcome and rank; take them in that order.
        let mut in_group: BTreeMap<String, usize> = BTreeMap::new();
        let mut in_outcome: BTreeMap<(usize, String), usize> = BTreeMap::new();
        let mut ranked: Vec<((usize, usize, String), Vec<u8>)> = classes
            .into_iter()
            .map(|(name, input)| {
                let (coarse, outcome) = split_class(&name);
                let group = in_group.entry(coarse).or_default();
                let rank = *group;
                *group += 1;
                let turn = in_outcome.entry((rank, outcome)).or_default();
                let key = (rank, *turn, name);
                *turn += 1;
                (key, input)
            })
            .collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0));
        ranked.truncate(limit(target));
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).expect("create seed directory");
        for ((_, _, name), input) in &ranked {
            std::fs::write(dir.join(format!("{name}.bin")), input).expect("write seed");
        }
        eprintln!("{target}: {} seeds", ranked.len());
    }
}

fn main() {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "select") {
        let [_, corpus, out] = &args[..] else {
            eprintln!("usage: fuzz-seeds select CORPUS OUT");
            std::process::exit(2);
        };
        // A few hundred in all: the frame targets, whose inputs the transcoding test also
        // reads, get the most.
        select(Path::new(corpus), Path::new(out), |target| match target {
            "request_frame" | "response" | "views" => 200,
            "records" => 120,
            _ => 80,
        });
        return;
    }
    let dir = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus"));
    let mut seeds = Seeds {
        dir,
        rng: SmallRng::seed_from_u64(0x5eed),
        schema_index: 0,
        written: 0,
    };
    copy_tracked(&mut seeds);
    sample_frames(&mut seeds);
    record_seeds(&mut seeds);
    kafka_codec::visit_random_messages(&mut seeds);
    assert_eq!(usize::from(seeds.schema_index), checks::schema_count());
    eprintln!("wrote {} seeds to {}", seeds.written, seeds.dir.display());
}
