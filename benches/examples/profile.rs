//! Runs one benchmarked operation a fixed number of times, for profilers.
//!
//! Criterion's `--profile-time` runs for a time, not a count, so instruction counts from it
//! cannot be divided per operation. This runs exactly N operations after building the case:
//!
//! ```text
//! cargo build --profile bench -p kafka-codec-bench --example profile
//! valgrind --tool=callgrind target/release/examples/profile metadata_response_v12 decode kafka-codec 1000
//! ```
//!
//! Building the case (and checking it against kafka-protocol) is counted too: subtract a run
//! with N = 0 to get the cost of the N operations alone.
//!
//! Arguments: CASE (as in the benchmark names, e.g. `fetch_response_v16`), `decode` or
//! `encode`, `kafka-codec` or `kafka-protocol`, and the number of operations (default 10000).

use bytes::{Bytes, BytesMut};
use kafka_codec::{DecodeFields, EncodeFields, Message};
use kafka_codec_bench::{
    api_versions_response, describe_quorum_response, fetch_response, metadata_response,
    produce_request, Case,
};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable};
use std::hint::black_box;
use std::process::ExitCode;

fn run<M: Message + EncodeFields + DecodeFields, T: Decodable + Encodable>(
    case: Case<M>,
    op: &str,
    who: &str,
    n: usize,
) {
    let Case {
        version,
        message,
        bytes,
        ..
    } = case;
    let theirs = T::decode(&mut bytes.clone(), version).expect("checked by Case::new");
    let mut out = BytesMut::with_capacity(bytes.len());
    match (op, who) {
        ("decode", "kafka-codec") => {
            for _ in 0..n {
                let mut input: Bytes = black_box(&bytes).clone();
                black_box(M::decode(&mut input, version).unwrap());
            }
        }
        ("decode", "kafka-protocol") => {
            for _ in 0..n {
                let mut input: Bytes = black_box(&bytes).clone();
                black_box(T::decode(&mut input, version).unwrap());
            }
        }
        ("encode", "kafka-codec") => {
            for _ in 0..n {
                out.clear();
                black_box(&message).encode(&mut out, version).unwrap();
                black_box(out.len());
            }
        }
        ("encode", "kafka-protocol") => {
            for _ in 0..n {
                out.clear();
                black_box(&theirs).encode(&mut out, version).unwrap();
                black_box(out.len());
            }
        }
        _ => unreachable!("checked in main"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: profile CASE decode|encode kafka-codec|kafka-protocol [N]";
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
    if !matches!(op.as_str(), "decode" | "encode")
        || !matches!(who.as_str(), "kafka-codec" | "kafka-protocol")
    {
        eprintln!("{usage}");
        return ExitCode::from(2);
    }
    match case.as_str() {
        "metadata_response_v12" => run::<_, kp::MetadataResponse>(metadata_response(), op, who, n),
        "fetch_response_v16" => run::<_, kp::FetchResponse>(fetch_response(), op, who, n),
        "produce_request_v11" => run::<_, kp::ProduceRequest>(produce_request(), op, who, n),
        "describe_quorum_response_v2" => {
            run::<_, kp::DescribeQuorumResponse>(describe_quorum_response(), op, who, n)
        }
        "api_versions_response_v3" => {
            run::<_, kp::ApiVersionsResponse>(api_versions_response(), op, who, n)
        }
        _ => {
            eprintln!("unknown case {case}\n{usage}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
