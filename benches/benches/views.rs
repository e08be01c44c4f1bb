//! Zero-copy views (feature `views`) against the owned decode of the same bytes and
//! kafka-protocol's, in one criterion group per shape (`benches/report.py` makes the table):
//!
//! - routing read: make the view (which checks the whole body once) and read what a router
//!   needs: Produce v13, each topic's id, partition index and records length; Fetch v18, topic
//!   id, partition index, error code, high watermark and records length; Metadata v13 (100
//!   topics × 10 partitions), topic names and partition leader ids. The owned decodes build
//!   the whole message and read the same fields.
//! - full walk: the view converted with `to_owned()`, which reads every field through its
//!   accessor, against the owned decode.
//!
//! Also asserted before timing: the routing read allocates nothing (counting allocator).

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use kafka_codec::messages::fetch_response::FetchResponseView;
use kafka_codec::messages::metadata_response::MetadataResponseView;
use kafka_codec::messages::produce_request::ProduceRequestView;
use kafka_codec::messages::{FetchResponse, MetadataResponse, ProduceRequest};
use kafka_codec::{view_message, Message};
use kafka_codec_bench::{fetch_response, metadata_response, produce_request, METADATA_SMALL};
use kafka_codec_test_support::counting_alloc::{self, CountingAllocator};
use kafka_protocol::protocol::Decodable;
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn produce_route_view(bytes: &Bytes) -> u64 {
    let view: ProduceRequestView<'_> = view_message(bytes, 13).expect("valid");
    let mut sum = 0u64;
    for topic in view.topic_data() {
        sum ^= topic.topic_id().halves().0 as u64;
        for partition in topic.partition_data() {
            sum += partition.index() as u64 + partition.records().map_or(0, <[u8]>::len) as u64;
        }
    }
    sum
}

fn produce_route_owned(bytes: &Bytes) -> u64 {
    let message = ProduceRequest::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topic_data {
        sum ^= topic.topic_id.halves().0 as u64;
        for partition in &topic.partition_data {
            sum += partition.index as u64 + partition.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

fn produce_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::ProduceRequest::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topic_data {
        sum ^= topic.topic_id.as_u64_pair().0;
        for partition in &topic.partition_data {
            sum += partition.index as u64 + partition.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

fn fetch_route_view(bytes: &Bytes) -> u64 {
    let view: FetchResponseView<'_> = view_message(bytes, 18).expect("valid");
    let mut sum = 0u64;
    for topic in view.responses() {
        sum ^= topic.topic_id().halves().0 as u64;
        for p in topic.partitions() {
            sum += p.partition_index() as u64 + p.error_code() as u64 + p.high_watermark() as u64;
            sum += p.records().map_or(0, <[u8]>::len) as u64;
        }
    }
    sum
}

fn fetch_route_owned(bytes: &Bytes) -> u64 {
    let message = FetchResponse::decode(&mut bytes.clone(), 18).expect("valid");
    let mut sum = 0u64;
    for topic in &message.responses {
        sum ^= topic.topic_id.halves().0 as u64;
        for p in &topic.partitions {
            sum += p.partition_index as u64 + p.error_code as u64 + p.high_watermark as u64;
            sum += p.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

fn fetch_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::FetchResponse::decode(&mut bytes.clone(), 18).expect("valid");
    let mut sum = 0u64;
    for topic in &message.responses {
        sum ^= topic.topic_id.as_u64_pair().0;
        for p in &topic.partitions {
            sum += p.partition_index as u64 + p.error_code as u64 + p.high_watermark as u64;
            sum += p.records.as_ref().map_or(0, Bytes::len) as u64;
        }
    }
    sum
}

fn metadata_route_view(bytes: &Bytes) -> u64 {
    let view: MetadataResponseView<'_> = view_message(bytes, 13).expect("valid");
    let mut sum = 0u64;
    for topic in view.topics() {
        sum += topic.name().map_or(0, str::len) as u64;
        for p in topic.partitions() {
            sum += p.leader_id() as u64;
        }
    }
    sum
}

fn metadata_route_owned(bytes: &Bytes) -> u64 {
    let message = MetadataResponse::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topics {
        sum += topic.name.as_ref().map_or(0, |n| n.len()) as u64;
        for p in &topic.partitions {
            sum += p.leader_id as u64;
        }
    }
    sum
}

fn metadata_route_kp(bytes: &Bytes) -> u64 {
    let message =
        kafka_protocol::messages::MetadataResponse::decode(&mut bytes.clone(), 13).expect("valid");
    let mut sum = 0u64;
    for topic in &message.topics {
        sum += topic.name.as_ref().map_or(0, |n| n.len()) as u64;
        for p in &topic.partitions {
            sum += p.leader_id.0 as u64;
        }
    }
    sum
}

type Route = fn(&Bytes) -> u64;

fn routing(c: &mut Criterion, name: &str, bytes: &Bytes, [view, owned, kp]: [Route; 3]) {
    assert_eq!(
        view(bytes),
        owned(bytes),
        "{name}: the view reads what the decode reads"
    );
    assert_eq!(
        view(bytes),
        kp(bytes),
        "{name}: and what kafka-protocol reads"
    );
    let (_, stats) = counting_alloc::measure(|| view(bytes));
    assert_eq!(
        stats.requested, 0,
        "{name}: the routing read allocates nothing"
    );
    let mut group = c.benchmark_group(format!("{name}/route"));
    group.bench_function("kafka-codec view", |b| b.iter(|| view(black_box(bytes))));
    group.bench_function("kafka-codec", |b| b.iter(|| owned(black_box(bytes))));
    group.bench_function("kafka-protocol", |b| b.iter(|| kp(black_box(bytes))));
    group.finish();
}

fn full_walk<M: Message + kafka_codec::Viewable + kafka_codec::codegen::DecodeFields>(
    c: &mut Criterion,
    name: &str,
    bytes: &Bytes,
    version: i16,
) {
    use kafka_codec::StructView;
    let mut group = c.benchmark_group(format!("{name}/walk"));
    group.bench_function("kafka-codec view to_owned", |b| {
        b.iter(|| {
            let view: M::View<'_> = view_message(black_box(bytes), version).expect("valid");
            view.to_owned_struct()
        })
    });
    group.bench_function("kafka-codec", |b| {
        b.iter(|| M::decode(&mut black_box(bytes).clone(), version).expect("valid"))
    });
    group.finish();
}

fn views(c: &mut Criterion) {
    let produce = produce_request().bytes;
    let fetch = fetch_response().bytes;
    let metadata = metadata_response(METADATA_SMALL, 100, 10).bytes;
    routing(
        c,
        "produce_request_v13",
        &produce,
        [produce_route_view, produce_route_owned, produce_route_kp],
    );
    routing(
        c,
        "fetch_response_v18",
        &fetch,
        [fetch_route_view, fetch_route_owned, fetch_route_kp],
    );
    routing(
        c,
        METADATA_SMALL,
        &metadata,
        [metadata_route_view, metadata_route_owned, metadata_route_kp],
    );
    full_walk::<ProduceRequest>(c, "produce_request_v13", &produce, 13);
    full_walk::<FetchResponse>(c, "fetch_response_v18", &fetch, 18);
    full_walk::<MetadataResponse>(c, METADATA_SMALL, &metadata, 13);
}

criterion_group!(benches, views);
criterion_main!(benches);
