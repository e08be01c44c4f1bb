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
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_codec::{DecodeFields, EncodeFields, Message};
use kafka_codec_bench::{
    api_versions_response, describe_quorum_response, fetch_response, metadata_response,
    produce_request, Case,
};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::hint::black_box;

const OURS: &str = "kafka-codec";
const THEIRS: &str = "kafka-protocol";

/// Benchmarks decode and encode of one case; `T` is kafka-protocol's type for the message.
fn compare<M: Message + EncodeFields + DecodeFields, T: Decodable + Encodable>(
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

fn benches(c: &mut Criterion) {
    use kafka_protocol::messages as kp;
    compare::<_, kp::MetadataResponse>(c, metadata_response());
    compare::<_, kp::FetchResponse>(c, fetch_response());
    compare::<_, kp::ProduceRequest>(c, produce_request());
    compare::<_, kp::DescribeQuorumResponse>(c, describe_quorum_response());
    compare::<_, kp::ApiVersionsResponse>(c, api_versions_response());
}

criterion_group!(codec, benches);
criterion_main!(codec);
