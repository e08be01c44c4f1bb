//! Kafka's JSON of a message two ways, into the same reused `Vec`: decoding it and writing the
//! decoded message (`decode + write_json`), and writing it straight from the bytes
//! (`transcode`, `json::transcode_message`). Both write the same text; a test in the main
//! crate (`tests/codec/transcode.rs`) holds them to it, and this benchmark checks it once per case.
//!
//! Cases: MetadataResponse v13 of 100 topics × 10 partitions × 3 replicas (the `codec`
//! benchmark's), and the dense ListGroupsResponse v3 of issue 11 at 1 MiB (~175,000 groups
//! of 6 bytes each, where decoding builds a `Vec` of 136-byte structs).

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use kafka_codec::codegen::{DecodeFields, JsonFields, TranscodeFields};
use kafka_codec::json::{transcode_message, JsonOptions, JsonWriter};
use kafka_codec::messages::{ListGroupsResponse, MetadataResponse};
use kafka_codec::{DecodeOptions, Message};
use kafka_codec_bench::dense::Shape;
use kafka_codec_bench::{metadata_response, METADATA_SMALL};
use std::hint::black_box;

fn compare<M: Message + DecodeFields + JsonFields + TranscodeFields>(
    c: &mut Criterion,
    name: &str,
    version: i16,
    bytes: Bytes,
) {
    let options = DecodeOptions::default();
    let json = JsonOptions::default();
    let decoded = |text: &mut Vec<u8>| {
        text.clear();
        let message = M::decode_exact(bytes.clone(), version).unwrap();
        let mut writer = JsonWriter::compact(text);
        message
            .write_json_with(version, &json, &mut writer)
            .unwrap();
        writer.finish().unwrap();
    };
    let transcoded = |text: &mut Vec<u8>| {
        text.clear();
        let mut writer = JsonWriter::compact(text);
        transcode_message::<M>(&bytes, version, &options, &json, &mut writer).unwrap();
        writer.finish().unwrap();
    };
    let (mut expected, mut text) = (Vec::new(), Vec::new());
    decoded(&mut expected);
    transcoded(&mut text);
    assert!(text == expected, "{name}: the two texts differ");

    let mut group = c.benchmark_group(format!("{name}/json"));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    if bytes.len() > 256 * 1024 {
        group.sampling_mode(SamplingMode::Flat).sample_size(20);
    }
    group.bench_function("decode + write_json", |b| {
        b.iter(|| {
            decoded(black_box(&mut text));
            black_box(text.len())
        })
    });
    group.bench_function("transcode", |b| {
        b.iter(|| {
            transcoded(black_box(&mut text));
            black_box(text.len())
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let metadata = metadata_response(METADATA_SMALL, 100, 10);
    compare::<MetadataResponse>(c, METADATA_SMALL, metadata.version, metadata.bytes);
    let shape = Shape::ListGroupsResponseV3;
    let (body, _) = shape.body(1024 * 1024);
    compare::<ListGroupsResponse>(
        c,
        "list_groups_response_v3_1mib",
        shape.version(),
        Bytes::from(body),
    );
}

criterion_group!(transcode, benches);
criterion_main!(transcode);
