//! Runs one case of the `redact` benchmark N times, for instruction counts (as `profile`
//! does for the codec cases):
//!
//! ```text
//! cargo build --profile bench -p kafka-codec-bench --example redact_ir
//! valgrind --tool=callgrind target/release/examples/redact_ir fetch_response_v18_1000x100 redacted 101
//! valgrind --tool=callgrind target/release/examples/redact_ir fetch_response_v18_1000x100 redacted 1
//! # (Ir of the first - Ir of the second) / 100 = instructions per write
//! ```
//!
//! Arguments: CASE (`list` prints them), `plain` or `redacted`, and N (default 1000). One
//! warm-up write comes before the N.

use kafka_codec_bench::redact::redact_cases;
use std::hint::black_box;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases = redact_cases();
    if args.first().map(String::as_str) == Some("list") {
        for case in &cases {
            println!("{}", case.name);
        }
        return ExitCode::SUCCESS;
    }
    let (Some(name), Some(mode)) = (args.first(), args.get(1)) else {
        eprintln!("usage: redact_ir CASE plain|redacted [N] | list");
        return ExitCode::FAILURE;
    };
    let n: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(1000);
    let Some(case) = cases.iter().find(|case| case.name == name) else {
        eprintln!("redact_ir: no case {name}");
        return ExitCode::FAILURE;
    };
    let redacted = match mode.as_str() {
        "plain" => false,
        "redacted" => true,
        _ => {
            eprintln!("redact_ir: mode is plain or redacted");
            return ExitCode::FAILURE;
        }
    };
    let mut text = Vec::new();
    for _ in 0..n + 1 {
        if redacted {
            black_box(case.redacted(&mut text));
        } else {
            case.plain(&mut text);
        }
        black_box(text.len());
    }
    ExitCode::SUCCESS
}
