//! The CLI streams its JSON both ways (issue 11): on the dense frames, `decode`'s peak RSS
//! stays within twice the library's decode of the same frame, and `encode`'s (of the JSON
//! `decode` printed) within twice the JSON's size plus the library's decode peak: the input
//! and the message, with no tree of the JSON in between.
//!
//! Both peaks are the maximum resident set size of a child process, as `wait4` reports it:
//! the CLI decoding the frame to a discarded stdout, and this test binary run again (with
//! [`LIBRARY_DECODE`] set) decoding the frame with the library and nothing else. The same
//! instrument, so the ratio compares like with like. This file holds one test, so that its
//! children are the only processes it waits for.

#![cfg(target_os = "linux")]

use crate::support::rss::peak_rss;
use kafka_codec::bytes::Bytes;
use kafka_codec::{ApiKey, DecodeOptions, RequestFrame, ResponseFrame};
use kafka_codec_test_support::dense::Shape;
use std::path::Path;
use std::process::Command;

/// Set in the child that decodes with the library: `<shape name>:<frame file>`.
const LIBRARY_DECODE: &str = "KAFKA_CODEC_TEST_LIBRARY_DECODE";

/// Frame size: large enough that the decoded message dwarfs a process's fixed RSS, small
/// enough for a debug build to decode in seconds.
const FRAME_BYTES: usize = 2 << 20;

/// The child's work: decode the frame with the library, keep the message until the end.
fn library_decode(spec: &str) {
    let (name, path) = spec.split_once(':').expect("<shape>:<file>");
    let shape = Shape::from_name(name).expect("a dense shape");
    let frame = Bytes::from(std::fs::read(path).expect("the frame file"));
    let options = DecodeOptions::default();
    match shape {
        Shape::ListGroupsResponseV3 => {
            let api = ApiKey::from_key(shape.api_key()).expect("ListGroups");
            let decoded = ResponseFrame::decode_with(frame, api, shape.version(), &options)
                .expect("the library decodes the frame");
            std::hint::black_box(&decoded);
        }
        Shape::MetadataRequestV9 => {
            let decoded =
                RequestFrame::decode_with(frame, &options).expect("the library decodes the frame");
            std::hint::black_box(&decoded);
        }
    }
}

#[test]
fn cli_peak_rss_stays_within_the_library_decode() {
    if let Ok(spec) = std::env::var(LIBRARY_DECODE) {
        return library_decode(&spec);
    }
    let dir = std::env::temp_dir().join(format!("kafka-codec-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for shape in Shape::ALL {
        let (frame, count) = shape.frame(FRAME_BYTES);
        let path = dir.join(format!("{}.bin", shape.name()));
        std::fs::write(&path, &frame).unwrap();
        let cli = peak_rss(cli_decode(shape, &path), "kafka-codec decode");
        let mut library = Command::new(std::env::current_exe().unwrap());
        library
            .args([
                // The test's name in the `memory` binary, as libtest names it.
                "dense::cli_peak_rss_stays_within_the_library_decode",
                "--exact",
                "--test-threads=1",
            ])
            .env(
                LIBRARY_DECODE,
                format!("{}:{}", shape.name(), path.display()),
            );
        let library = peak_rss(library, "library decode");
        let ratio = cli as f64 / library as f64;
        eprintln!(
            "{}: {} bytes, {count} elements: CLI peak RSS {:.1} MB, library {:.1} MB, {ratio:.2}x",
            shape.name(),
            frame.len(),
            cli as f64 / 1e6,
            library as f64 / 1e6
        );
        if ratio > 2.0 {
            failures.push(format!("decode {}: {ratio:.2}x", shape.name()));
        }

        let json = dir.join(format!("{}.json", shape.name()));
        let mut decode = cli_decode(shape, &path);
        decode.stdout(std::fs::File::create(&json).unwrap());
        assert!(
            decode.status().unwrap().success(),
            "decode {}",
            shape.name()
        );
        let json_len = std::fs::metadata(&json).unwrap().len();
        let encode = peak_rss(cli_encode(shape, &json), "kafka-codec encode");
        let budget = json_len + library;
        let ratio = encode as f64 / budget as f64;
        eprintln!(
            "{}: {json_len} bytes of JSON: encode peak RSS {:.1} MB, JSON + library decode {:.1} MB, {ratio:.2}x",
            shape.name(),
            encode as f64 / 1e6,
            budget as f64 / 1e6
        );
        if ratio > 2.0 {
            failures.push(format!("encode {}: {ratio:.2}x", shape.name()));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        failures.is_empty(),
        "the CLI's peak RSS is more than twice its budget: {failures:?}"
    );
}

fn cli_decode(shape: Shape, frame: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kafka-codec"));
    match shape {
        Shape::ListGroupsResponseV3 => command.args([
            "decode",
            "response",
            "--api-key",
            "16",
            "--api-version",
            "3",
        ]),
        Shape::MetadataRequestV9 => command.args(["decode", "request"]),
    };
    command.arg(frame);
    command
}

fn cli_encode(shape: Shape, json: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kafka-codec"));
    match shape {
        Shape::ListGroupsResponseV3 => command.args(["encode", "response"]),
        Shape::MetadataRequestV9 => command.args(["encode", "request"]),
    };
    command.arg(json);
    command
}
