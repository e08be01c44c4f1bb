//! What `json::redact` costs on top of writing a response body's JSON text: `plain` writes it
//! with `JsonWriter`, `redacted` through `redact::write_redacted`, which wraps the writer in a
//! `Redactor` only for an API and direction that has secret fields. None of the cases holds a
//! secret, so both write the same text.
//!
//! - `fetch_response_v18`: the codec benchmark's Fetch response (10 partitions of 64 KiB):
//!   Fetch responses are wrapped (records of KRaft's metadata log are secrets); base64 of the
//!   records dominates.
//! - `fetch_response_v18_1000x100`: 1,000 partitions of 100 bytes, where following the path
//!   to each `records` shows.
//! - `describe_configs_response_v4_500`: 500 broker configs, each name checked against the
//!   password-config rules.
//! - `metadata_response_v13_100x10x3`: no secret field, so no wrapper.

use criterion::{criterion_group, criterion_main, Criterion};
use kafka_codec_bench::redact::redact_cases;
use std::hint::black_box;
use std::time::Duration;

fn benches(c: &mut Criterion) {
    let mut text = Vec::new();
    for case in redact_cases() {
        let mut group = c.benchmark_group(format!("redact/{}", case.name));
        group.bench_function("plain", |b| {
            b.iter(|| {
                case.plain(&mut text);
                black_box(text.len())
            })
        });
        group.bench_function("redacted", |b| {
            b.iter(|| black_box(case.redacted(&mut text)))
        });
        group.finish();
    }
}

criterion_group! {
    name = redact;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(redact);
