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
//! - encode, `kafka-codec (segmented)`: `Message::encode_segments`, the chain of `Bytes` a
//!   vectored write sends, in which `bytes`/`records` values of 2 KiB or more are the
//!   message's own `Bytes`, not copies. It allocates its chunks and segment list each
//!   iteration and frees them inside the timed loop, as a server queuing a response would.

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use kafka_codec::codegen::{DecodeFields, EncodeFields};
use kafka_codec::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_codec::messages::FetchResponse;
use kafka_codec::wire::Segments;
use kafka_codec::Message;
use kafka_codec_bench::{with_case, Case, CaseVisitor, CASES};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::hint::black_box;

const OURS: &str = "kafka-codec";
const THEIRS: &str = "kafka-protocol";
const SEGMENTED: &str = "kafka-codec (segmented)";

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
    let mut segmented = None;
    group.bench_function(SEGMENTED, |b| {
        b.iter(|| {
            let segments = black_box(&message).encode_segments(version).unwrap();
            black_box(segments.len())
        });
        segmented = Some(message.encode_segments(version).unwrap());
    });
    // None when a filter skipped the benchmark.
    assert!(
        segmented.is_none_or(|segments| segments.into_bytes() == bytes),
        "{name}: kafka-codec segmented encode drifted"
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

/// Where sharing a `records` value starts to pay (`wire::DEFAULT_SHARE_THRESHOLD`): a Fetch
/// response of 10 partitions whose records are `size` bytes each, segmented with every value
/// copied into the owned chunks or every value shared.
fn share_threshold(c: &mut Criterion) {
    for size in [256, 1024, 2048, 4096, 8192, 16384] {
        let message =
            FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
                .with_partitions(
                    (0..10)
                        .map(|i| {
                            PartitionData::default()
                                .with_partition_index(i)
                                .with_records(Some(Bytes::from(vec![i as u8; size])))
                        })
                        .collect(),
                )]);
        let mut group = c.benchmark_group(format!("share_threshold/{size}"));
        group.throughput(Throughput::Bytes(10 * size as u64));
        for (name, threshold) in [("copied", usize::MAX), ("shared", 1)] {
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut segments = Segments::new().with_share_threshold(threshold);
                    black_box(&message).encode(&mut segments, 18).unwrap();
                    black_box(segments.segment_count())
                })
            });
        }
        group.finish();
    }
}

fn benches(c: &mut Criterion) {
    for name in CASES {
        assert!(with_case(name, &mut Compare(c)), "no case {name}");
    }
    share_threshold(c);
}

criterion_group!(codec, benches);
criterion_main!(codec);
