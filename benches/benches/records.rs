//! kafka-codec's `records` against kafka-protocol's `records` module, in the same run: one
//! batch of 1,000 small records, uncompressed and with each codec.
//!
//! - decode: a `Bytes` holding the batch (our encoding, which kafka-protocol reads to the
//!   same records; checked in `RecordsCase::new`) to owned records, dropped in the loop.
//! - encode: the records into a buffer cleared each iteration (each crate compresses with
//!   its own codec libraries; the outputs are not byte-identical when compressed).

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_codec::records::decode_batches;
use kafka_codec_bench::records::{records_cases, RecordsCase};
use kafka_protocol::records::{RecordBatchDecoder, RecordBatchEncoder};
use std::hint::black_box;

const OURS: &str = "kafka-codec";
const THEIRS: &str = "kafka-protocol";

fn compare(c: &mut Criterion, case: RecordsCase) {
    let RecordsCase {
        name,
        batch,
        theirs,
        options,
        bytes,
    } = case;
    let mut group = c.benchmark_group(format!("{name}/decode"));
    group.throughput(Throughput::Elements(batch.records.len() as u64));
    group.bench_function(OURS, |b| {
        b.iter(|| decode_batches(black_box(&bytes)).unwrap())
    });
    group.bench_function(THEIRS, |b| {
        b.iter(|| {
            let mut input: Bytes = black_box(&bytes).clone();
            RecordBatchDecoder::decode(&mut input).unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group(format!("{name}/encode"));
    group.throughput(Throughput::Elements(batch.records.len() as u64));
    let mut ours = Vec::with_capacity(2 * bytes.len() + 1024);
    group.bench_function(OURS, |b| {
        b.iter(|| {
            ours.clear();
            black_box(&batch).encode_to_vec(&mut ours).unwrap();
            black_box(ours.len())
        })
    });
    let mut out = BytesMut::with_capacity(2 * bytes.len() + 1024);
    group.bench_function(THEIRS, |b| {
        b.iter(|| {
            out.clear();
            RecordBatchEncoder::encode(&mut out, black_box(&theirs).iter(), &options).unwrap();
            black_box(out.len())
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    for case in records_cases() {
        compare(c, case);
    }
}

criterion_group!(records, benches);
criterion_main!(records);
