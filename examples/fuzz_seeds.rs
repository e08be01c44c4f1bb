//! Writes seed inputs for the fuzz targets into `fuzz/corpus/<target>/` (or the directory
//! given as the first argument): the annotated sample frames in `examples/frames/`, and, for
//! every schema and every valid version, a random message (`kafka_codec::random`) in each
//! target's input layout. The seed is fixed, so the output is the same on every run.
//!
//! ```sh
//! cargo run --example fuzz_seeds -- /tmp/seeds   # then `cargo fuzz cmin` into fuzz/corpus
//! ```

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod checks;

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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/frames");
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

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus"));
    let mut seeds = Seeds {
        dir,
        rng: SmallRng::seed_from_u64(0x5eed),
        schema_index: 0,
        written: 0,
    };
    sample_frames(&mut seeds);
    record_seeds(&mut seeds);
    kafka_codec::visit_random_messages(&mut seeds);
    assert_eq!(usize::from(seeds.schema_index), checks::schema_count());
    eprintln!("wrote {} seeds to {}", seeds.written, seeds.dir.display());
}
