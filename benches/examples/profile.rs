//! Runs one benchmarked operation a fixed number of times, for instruction counts.
//!
//! Criterion's `--profile-time` runs for a time, not a count, so instruction counts from it
//! cannot be divided per operation. This builds the case (with the equal-work check of
//! `Case::new`), runs the operation once as a warm-up, then exactly N more times:
//!
//! ```text
//! cargo build --profile bench -p kafka-codec-bench --example profile
//! valgrind --tool=callgrind target/release/examples/profile fetch_response_v18 decode kafka-codec 101
//! valgrind --tool=callgrind target/release/examples/profile fetch_response_v18 decode kafka-codec 1
//! # (Ir of the first - Ir of the second) / 100 = instructions per decode
//! ```
//!
//! Subtracting a run with a small N removes the setup and the warm-up; `benches/callgrind.sh`
//! does this for every case.
//!
//! Arguments: CASE (a benchmark group's case name, e.g. `fetch_response_v18`; `list` prints
//! them), `decode` or `encode`, `kafka-codec` or `kafka-protocol`, and N (default 10000);
//! or `encode-segmented kafka-codec` (`Message::encode_segments`, message cases only).
//! The cases of `benches/records.rs` (`records_1000_none`, `records_1000_gzip`, …) run that
//! benchmark's loop bodies; `list` leaves them out.

use bytes::{Bytes, BytesMut};
use kafka_codec::codegen::{DecodeFields, EncodeFields};
use kafka_codec::records::{decode_batches, Compression};
use kafka_codec::Message;
use kafka_codec_bench::records::{RecordsCase, RECORDS};
use kafka_codec_bench::{with_case, Case, CaseVisitor, CASES};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::hint::black_box;
use std::process::ExitCode;

struct Run<'a> {
    op: &'a str,
    who: &'a str,
    n: usize,
}

impl CaseVisitor for Run<'_> {
    fn visit<M: Message + DecodeFields + EncodeFields, T: Decodable + Encodable>(
        &mut self,
        case: Case<M>,
    ) {
        let Case {
            version,
            message,
            bytes,
            ..
        } = case;
        let theirs = T::decode(&mut bytes.clone(), version).expect("checked by Case::new");
        let mut out = BytesMut::with_capacity(bytes.len());
        // The warm-up (first touch of the output buffer, lazy statics) plus N.
        let times = self.n + 1;
        match (self.op, self.who) {
            ("decode", "kafka-codec") => {
                for _ in 0..times {
                    let mut input: Bytes = black_box(&bytes).clone();
                    black_box(M::decode(&mut input, version).unwrap());
                }
            }
            ("decode", "kafka-protocol") => {
                for _ in 0..times {
                    let mut input: Bytes = black_box(&bytes).clone();
                    black_box(T::decode(&mut input, version).unwrap());
                }
            }
            ("encode", "kafka-codec") => {
                for _ in 0..times {
                    out.clear();
                    black_box(&message).encode(&mut out, version).unwrap();
                    black_box(out.len());
                }
            }
            ("encode-segmented", "kafka-codec") => {
                for _ in 0..times {
                    let segments = black_box(&message).encode_segments(version).unwrap();
                    black_box(segments.len());
                }
            }
            ("encode", "kafka-protocol") => {
                for _ in 0..times {
                    out.clear();
                    black_box(&theirs).encode(&mut out, version).unwrap();
                    black_box(out.len());
                }
            }
            _ => unreachable!("checked in main"),
        }
    }
}

/// The loop bodies of `benches/records.rs`: the warm-up plus `n`.
fn run_records(case: RecordsCase, op: &str, who: &str, n: usize) {
    let RecordsCase {
        batch,
        theirs,
        options,
        bytes,
        ..
    } = case;
    let mut ours = Vec::with_capacity(2 * bytes.len() + 1024);
    let mut out = BytesMut::with_capacity(2 * bytes.len() + 1024);
    let times = n + 1;
    match (op, who) {
        ("decode", "kafka-codec") => {
            for _ in 0..times {
                black_box(decode_batches(black_box(&bytes)).unwrap());
            }
        }
        ("decode", "kafka-protocol") => {
            for _ in 0..times {
                let mut input: Bytes = black_box(&bytes).clone();
                black_box(kafka_protocol::records::RecordBatchDecoder::decode(&mut input).unwrap());
            }
        }
        ("encode", "kafka-codec") => {
            for _ in 0..times {
                ours.clear();
                black_box(&batch).encode_to_vec(&mut ours).unwrap();
                black_box(ours.len());
            }
        }
        ("encode", "kafka-protocol") => {
            for _ in 0..times {
                out.clear();
                kafka_protocol::records::RecordBatchEncoder::encode(
                    &mut out,
                    black_box(&theirs).iter(),
                    &options,
                )
                .unwrap();
                black_box(out.len());
            }
        }
        _ => unreachable!("checked in main"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: profile CASE decode|encode kafka-codec|kafka-protocol [N]\n       profile CASE encode-segmented kafka-codec [N]\n       profile list";
    if args.first().map(String::as_str) == Some("list") {
        for name in CASES {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }
    let (Some(case), Some(op), Some(who)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let n = match args.get(3).map(|n| n.parse::<usize>()) {
        None => 10_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("bad N: {e}\n{usage}");
            return ExitCode::from(2);
        }
    };
    let known = match (op.as_str(), who.as_str()) {
        ("decode" | "encode", "kafka-codec" | "kafka-protocol") => true,
        // Message cases only: `Message::encode_segments`.
        ("encode-segmented", "kafka-codec") => !case.starts_with("records_"),
        _ => false,
    };
    if !known {
        eprintln!("{usage}");
        return ExitCode::from(2);
    }
    let prefix = format!("records_{RECORDS}_");
    let codec = Compression::ALL
        .into_iter()
        .find(|c| case.strip_prefix(prefix.as_str()) == Some(c.name()));
    if let Some(codec) = codec {
        run_records(RecordsCase::new(codec), op, who, n);
        return ExitCode::SUCCESS;
    }
    let mut run = Run { op, who, n };
    if !with_case(case, &mut run) {
        eprintln!("unknown case {case}\n{usage}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
