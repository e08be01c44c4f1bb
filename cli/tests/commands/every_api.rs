//! `decode … | encode …` through the built binary gives back the input bytes for a random,
//! well-formed request and response frame of every API at every version it supports
//! (header version rules included, such as ApiVersions responses always using header v0).
//!
//! One frame per cell, without `proptest`: each case costs two runs of the binary, a failure
//! already names one frame (as hex and JSON), and the same message-level property is shrunk
//! to a small case in `tests/codec/roundtrip.rs`.

use arbitrary::Unstructured;
use kafka_codec::messages::{RequestHeader, ResponseHeader};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::{ApiKey, Message, MessageCodec, MessageKind, RandomMessageVisitor};
use kafka_codec_hexdump::encode as hex;

struct Frame {
    description: String,
    /// Options naming the API, for responses only.
    api_args: Vec<String>,
    kind: &'static str,
    bytes: Vec<u8>,
}

/// Builds one random frame (header + body) per API, version and direction.
struct Frames {
    state: u64,
    frames: Vec<Frame>,
}

impl Frames {
    /// splitmix64: deterministic entropy for `Unstructured`, no RNG crate needed.
    fn entropy(&mut self) -> Vec<u8> {
        (0..4096)
            .flat_map(|_| {
                self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = self.state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)).to_le_bytes()
            })
            .collect()
    }
}

impl RandomMessageVisitor for Frames {
    fn visit<M: MessageCodec + Random>(&mut self) {
        let Some(api) = M::API_KEY.and_then(ApiKey::from_key) else {
            return;
        };
        let options = RandomOptions::default();
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            let entropy = self.entropy();
            let mut u = Unstructured::new(&entropy);
            let body = M::random(&mut u, version, &options).unwrap();
            let (kind, mut bytes, api_args) = match M::KIND {
                MessageKind::Request => {
                    let header_version = api.request_header_version(version);
                    let mut header =
                        RequestHeader::random(&mut u, header_version, &options).unwrap();
                    header.request_api_key = api.key();
                    header.request_api_version = version;
                    (
                        "request",
                        header.encode_to_vec(header_version).unwrap(),
                        vec![],
                    )
                }
                MessageKind::Response => {
                    let header_version = api.response_header_version(version);
                    let header = ResponseHeader::random(&mut u, header_version, &options).unwrap();
                    let args = vec![
                        "--api-key".to_owned(),
                        api.key().to_string(),
                        "--api-version".to_owned(),
                        version.to_string(),
                    ];
                    (
                        "response",
                        header.encode_to_vec(header_version).unwrap(),
                        args,
                    )
                }
                _ => return,
            };
            bytes.extend(body.encode_to_vec(version).unwrap());
            self.frames.push(Frame {
                description: format!("{} v{version}", M::NAME),
                api_args,
                kind,
                bytes,
            });
        }
    }
}

/// Runs a command that must succeed silently; returns its stdout.
fn run(args: &[String], stdin: &[u8]) -> Vec<u8> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::support::ok(&args, stdin)
}

#[test]
fn every_api_and_version_round_trips_through_the_binary() {
    let mut visitor = Frames {
        state: 0x006b_6166_6b61,
        frames: Vec::new(),
    };
    kafka_codec::visit_random_messages(&mut visitor);
    let frames = visitor.frames;
    let requests = frames.iter().filter(|f| f.kind == "request").count();
    // Request and response schemas share their versions, so both directions pair up.
    assert_eq!(2 * requests, frames.len());
    assert!(requests > 250, "only {requests} request frames");

    for (i, frame) in frames.iter().enumerate() {
        // Alternate raw bytes and hex text, so both paths see every kind of frame.
        let use_hex = i % 2 == 1;
        let format: &[&str] = if use_hex { &["--hex"] } else { &[] };
        let mut decode: Vec<String> = vec!["decode".into(), frame.kind.into()];
        decode.extend(frame.api_args.iter().cloned());
        decode.extend(format.iter().map(|s| s.to_string()));
        decode.push("-".into());
        let mut encode: Vec<String> = vec!["encode".into(), frame.kind.into()];
        encode.extend(format.iter().map(|s| s.to_string()));
        encode.push("-".into());

        let input = if use_hex {
            hex(&frame.bytes).into_bytes()
        } else {
            frame.bytes.clone()
        };
        let json = run(&decode, &input);
        let mut output = run(&encode, &json);
        if use_hex {
            assert_eq!(output.pop(), Some(b'\n'));
        }
        assert!(
            output == input,
            "{}: decode | encode changed the bytes\n  in  {}\n  out {}\n  json {}",
            frame.description,
            hex(&frame.bytes),
            if use_hex {
                String::from_utf8_lossy(&output).into_owned()
            } else {
                hex(&output)
            },
            String::from_utf8_lossy(&json),
        );
    }
    eprintln!(
        "{} frames ({requests} requests) round-tripped",
        frames.len()
    );
}
