//! The loop bodies of `benches/transcode.rs`, a fixed number of times, for instruction counts
//! (as `profile.rs` for the `codec` benchmark):
//!
//! ```text
//! cargo build --profile bench -p kafka-codec-bench --example transcode_profile
//! valgrind --tool=callgrind target/release/examples/transcode_profile metadata transcode 11
//! valgrind --tool=callgrind target/release/examples/transcode_profile metadata transcode 1
//! # (Ir of the first - Ir of the second) / 10 = instructions per transcode
//! ```
//!
//! Arguments: `metadata` (MetadataResponse v13, 100 × 10 × 3) or `list_groups` (the dense
//! ListGroupsResponse v3 of 1 MiB); `transcode` or `decode` (decode + write_json); N.

use bytes::Bytes;
use kafka_codec::codegen::{DecodeFields, JsonFields, TranscodeFields};
use kafka_codec::json::{transcode_message, JsonOptions, JsonWriter};
use kafka_codec::messages::{ListGroupsResponse, MetadataResponse};
use kafka_codec::{DecodeOptions, Message};
use kafka_codec_bench::dense::Shape;
use kafka_codec_bench::{metadata_response, METADATA_SMALL};
use std::hint::black_box;
use std::process::ExitCode;

fn run<M: Message + DecodeFields + JsonFields + TranscodeFields>(
    transcode: bool,
    n: usize,
    bytes: Bytes,
    version: i16,
) {
    let (options, json) = (DecodeOptions::default(), JsonOptions::default());
    let mut text = Vec::new();
    for _ in 0..n {
        text.clear();
        let mut writer = JsonWriter::compact(&mut text);
        if transcode {
            transcode_message::<M>(black_box(&bytes), version, &options, &json, &mut writer)
                .unwrap();
        } else {
            let message = M::decode_exact(black_box(&bytes).clone(), version).unwrap();
            message
                .write_json_with(version, &json, &mut writer)
                .unwrap();
        }
        writer.finish().unwrap();
        black_box(text.len());
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, op, n] = &args[..] else {
        eprintln!("usage: transcode_profile metadata|list_groups transcode|decode N");
        return ExitCode::FAILURE;
    };
    let (Ok(n), transcode) = (n.parse::<usize>(), op == "transcode") else {
        eprintln!("N must be a number");
        return ExitCode::FAILURE;
    };
    match case.as_str() {
        "metadata" => {
            let case = metadata_response(METADATA_SMALL, 100, 10);
            run::<MetadataResponse>(transcode, n, case.bytes, case.version);
        }
        "list_groups" => {
            let (body, _) = Shape::ListGroupsResponseV3.body(1024 * 1024);
            run::<ListGroupsResponse>(transcode, n, Bytes::from(body), 3);
        }
        _ => {
            eprintln!("no case {case}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
