//! What decoding an honest but dense frame costs in memory (issue 11): a counting global
//! allocator around one library decode of each shape of `test-support/src/dense.rs`.
//!
//! ```text
//! cargo build --profile bench -p kafka-codec-bench --example dense_memory
//! target/release/examples/dense_memory                 # every shape at 1, 10 and 50 MiB
//! target/release/examples/dense_memory one list_groups_response_v3 52428800
//! target/release/examples/dense_memory write metadata_request_v9 1048576 frame.bin
//! ```
//!
//! Without arguments it runs each (shape, size) in a child process of its own (`one`), so
//! that the process's peak RSS belongs to that one decode, and prints a markdown table, one
//! row per shape and size:
//!
//! - peak heap: the most live heap bytes above what was live before the decode (the frame
//!   itself is not counted), a `realloc` counted as its growth;
//! - peak if reallocs copied: the same, but every `realloc` counts the old and the new block
//!   as live together, as a copying reallocation has them;
//! - largest allocation; total bytes allocated (every block handed out: a `realloc` that
//!   moved counts its whole new block, one in place its growth); the number of `realloc`s
//!   that moved a block, and the bytes they moved;
//! - the process's peak RSS (`VmHWM`), frame and generator included, to compare with the
//!   CLI's (`benches/dense-cli.sh`).
//!
//! Ratios (×) are to the frame's size. It decodes the whole frame (header and body) as the
//! CLI does, with `DecodeLimits` whose frame limit admits it and defaults otherwise.
//! `write` stores the frame for the CLI.
//!
//! A measuring tool: it asserts nothing about the numbers.

use kafka_codec::bytes::Bytes;
use kafka_codec::{ApiKey, DecodeLimits, DecodeOptions, RequestFrame, ResponseFrame};
use kafka_codec_bench::dense::Shape;
use std::process::{Command, ExitCode};

use kafka_codec_test_support::counting_alloc::{self, CountingAllocator, Stats};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

const MIB: usize = 1024 * 1024;
const SIZES: [usize; 3] = [MIB, 10 * MIB, 50 * MIB];

/// Decodes `frame` once and returns what the decode allocated, above what was live before.
fn measure(shape: Shape, frame: Bytes) -> Result<(Stats, usize), String> {
    let options = DecodeOptions {
        limits: DecodeLimits {
            max_frame_size: frame.len().max(DecodeLimits::default().max_frame_size),
            ..DecodeLimits::default()
        },
        ..DecodeOptions::default()
    };
    let (elements, stats) = counting_alloc::measure(|| -> Result<usize, String> {
        Ok(match shape {
            Shape::ListGroupsResponseV3 => {
                let frame = ResponseFrame::decode_with(frame, ApiKey::ListGroups, 3, &options)
                    .map_err(|e| e.to_string())?;
                match &frame.body {
                    kafka_codec::Response::ListGroups(body) => body.groups.len(),
                    _ => unreachable!("decoded as ListGroups"),
                }
            }
            Shape::MetadataRequestV9 => {
                let frame =
                    RequestFrame::decode_with(frame, &options).map_err(|e| e.to_string())?;
                match &frame.body {
                    kafka_codec::Request::Metadata(body) => {
                        body.topics.as_ref().map_or(0, Vec::len)
                    }
                    _ => return Err("not a Metadata request".into()),
                }
            }
        })
    });
    Ok((stats, elements?))
}

/// The process's peak resident set (`VmHWM`) in bytes, where /proc has it.
fn peak_rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn human(bytes: usize) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

fn with_ratio(bytes: usize, frame: usize) -> String {
    format!("{} ({:.1}×)", human(bytes), bytes as f64 / frame as f64)
}

const HEADER: &str = "| shape | frame | elements | peak heap | peak if reallocs copied | \
largest allocation | total allocated | reallocs that moved (bytes) | process peak RSS |\n\
|---|--:|--:|--:|--:|--:|--:|--:|--:|";

/// One row: generate, decode, report.
fn one(shape: Shape, size: usize) -> Result<(), String> {
    let (frame, count) = shape.frame(size);
    let len = frame.len();
    let (stats, elements) = measure(shape, Bytes::from(frame))?;
    if elements != count {
        return Err(format!("decoded {elements} elements, wrote {count}"));
    }
    let rss = peak_rss().map_or_else(|| "-".to_owned(), |rss| with_ratio(rss, len));
    println!(
        "| {} | {} ({len} B) | {elements} | {} | {} | {} | {} | {} ({}) | {rss} |",
        shape.name(),
        human(len),
        with_ratio(stats.peak, len),
        with_ratio(stats.peak_if_copied, len),
        with_ratio(stats.largest, len),
        with_ratio(stats.total, len),
        stats.moved,
        human(stats.moved_bytes),
    );
    Ok(())
}

fn shape_and_size(args: &[String]) -> Result<(Shape, usize), String> {
    let shape = args
        .first()
        .and_then(|s| Shape::from_name(s))
        .ok_or("SHAPE: list_groups_response_v3 or metadata_request_v9")?;
    let size = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .ok_or("BYTES: the frame's size")?;
    Ok((shape, size))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: dense_memory [one SHAPE BYTES | write SHAPE BYTES FILE]";
    let result = match args.first().map(String::as_str) {
        None => {
            println!("{HEADER}");
            let me = std::env::current_exe().expect("own path");
            let mut failed = false;
            for shape in Shape::ALL {
                for size in SIZES {
                    let status = Command::new(&me)
                        .args(["one", shape.name(), &size.to_string()])
                        .status()
                        .expect("run a child");
                    failed |= !status.success();
                }
            }
            if failed {
                Err("a measurement failed".into())
            } else {
                Ok(())
            }
        }
        Some("one") => shape_and_size(&args[1..]).and_then(|(shape, size)| {
            if std::env::var_os("DENSE_HEADER").is_some() {
                println!("{HEADER}");
            }
            one(shape, size)
        }),
        Some("write") => shape_and_size(&args[1..]).and_then(|(shape, size)| {
            let path = args.get(3).ok_or("FILE")?;
            let (frame, count) = shape.frame(size);
            std::fs::write(path, &frame).map_err(|e| format!("{path}: {e}"))?;
            eprintln!("{path}: {} bytes, {count} elements", frame.len());
            Ok(())
        }),
        Some(_) => Err(usage.into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dense_memory: {e}\n{usage}");
            ExitCode::FAILURE
        }
    }
}
