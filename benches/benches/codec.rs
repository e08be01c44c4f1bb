//! kafka-codec against kafka-protocol, decoding and encoding the same bytes in the same run.
//!
//! Each message gets two criterion groups, `<case>/decode` and `<case>/encode`, each with a
//! `kafka-codec` and a `kafka-protocol` function, so the two sit side by side in one report
//! (`benches/report.py` turns them into a table with the ratio).
//!
//! - decode: from a `Bytes` holding the message (a cheap reference-counted clone each
//!   iteration), to an owned message, which is then dropped inside the timed loop: freeing
//!   what decoding allocated is part of its cost for both crates.
//! - encode: the already-built message into a `BytesMut` sized once up front and cleared each
//!   iteration, so neither crate pays for growing the buffer.

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use kafka_codec::{DecodeFields, EncodeFields, Message};
use kafka_codec_bench::{with_case, Case, CaseVisitor, CASES};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::hint::black_box;

const OURS: &str = "kafka-codec";
const THEIRS: &str = "kafka-protocol";

/// Benchmarks decode and encode of one case; `T` is kafka-protocol's type for the message.
struct Compare<'a>(&'a mut Criterion);

impl CaseVisitor for Compare<'_> {
    fn visit<M: Message + DecodeFields + EncodeFields, T: Decodable + Encodable>(
        &mut self,
        case: Case<M>,
    ) {
        compare::<M, T>(self.0, case)
    }
}

fn compare<M: Message + DecodeFields + EncodeFields, T: Decodable + Encodable>(
    c: &mut Criterion,
    case: Case<M>,
) {
    let Case {
        name,
        version,
        message,
        bytes,
    } = case;
    // `Case` has checked that these bytes decode to this in both crates and re-encode
    // identically; kafka-protocol's value is taken from the same bytes.
    let theirs = T::decode(&mut bytes.clone(), version).expect("checked by Case::new");

    let mut group = c.benchmark_group(format!("{name}/decode"));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    few_samples_if_large(&mut group, bytes.len());
    group.bench_function(OURS, |b| {
        b.iter(|| {
            let mut input: Bytes = black_box(&bytes).clone();
            M::decode(&mut input, version).unwrap()
        })
    });
    group.bench_function(THEIRS, |b| {
        b.iter(|| {
            let mut input: Bytes = black_box(&bytes).clone();
            T::decode(&mut input, version).unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group(format!("{name}/encode"));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    few_samples_if_large(&mut group, bytes.len());
    let mut out = BytesMut::with_capacity(bytes.len());
    group.bench_function(OURS, |b| {
        b.iter(|| {
            out.clear();
            black_box(&message).encode(&mut out, version).unwrap();
            black_box(out.len())
        })
    });
    // Empty when a filter skipped the benchmark.
    assert!(
        out.is_empty() || out[..] == bytes[..],
        "{name}: kafka-codec encode drifted"
    );
    group.bench_function(THEIRS, |b| {
        b.iter(|| {
            out.clear();
            black_box(&theirs).encode(&mut out, version).unwrap();
            black_box(out.len())
        })
    });
    // Empty when a filter skipped the benchmark.
    assert!(
        out.is_empty() || out[..] == bytes[..],
        "{name}: kafka-protocol encode drifted"
    );
    group.finish();
}

/// A multi-megabyte case takes milliseconds per operation: criterion's default 100 linearly
/// growing samples would need minutes, so such cases take 20 samples of equal size.
fn few_samples_if_large<M: criterion::measurement::Measurement>(
    group: &mut criterion::BenchmarkGroup<'_, M>,
    len: usize,
) {
    if len > 1024 * 1024 {
        group.sampling_mode(SamplingMode::Flat).sample_size(20);
    }
}

fn benches(c: &mut Criterion) {
    for name in CASES {
        assert!(with_case(name, &mut Compare(c)), "no case {name}");
    }
}

criterion_group!(codec, benches);
criterion_main!(codec);
