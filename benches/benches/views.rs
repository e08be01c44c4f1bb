//! Zero-copy views (feature `views`) against the owned decode of the same bytes and
//! kafka-protocol's, in one criterion group per shape (`benches/report.py` makes the table):
//!
//! - routing read: make the view (which checks the whole body once) and read what a router
//!   needs: Produce v13, each topic's id, partition index and records length; Fetch v18, topic
//!   id, partition index, error code, high watermark and records length; Metadata v13 (100
//!   topics × 10 partitions), topic names and partition leader ids. The owned decodes build
//!   the whole message and read the same fields.
//! - the same routing read through the lazy view (`LazyMessage`: only the version checked
//!   when made; each accessor reads and bounds-checks what it needs and returns a `Result`).
//! - full walk: the checked view converted with `to_owned()`, the lazy view converted with
//!   `to_owned()` (which checks, then reads) and read through every accessor
//!   (`to_owned_via_accessors`), and every field read with nothing built, through each
//!   struct's `fields()` (`views::full_walk`) and through one accessor per field
//!   (`views::full_walk_accessors`), and every field handed in wire order to a visitor that
//!   sums them by the lazy view's `walk` (`views::full_visit`), against the owned decode; also
//!   for DescribeQuorum v2 and v3
//!   (the codec bench's message; kafka-protocol and krabka decode v2 only).
//!
//! Each group also times krabka-protocol 0.8's borrowed types (`DecodeBorrow`) on the same
//! bytes: they decode the whole message into `Vec`s of borrowed structs (and parse the record
//! batches of a `records` field), which is what a routing read costs with them.
//!
//! - a hand-written reader (`views::hand_written`): the same fields read by plain safe code written
//!   for this one layout, bounds-checked; a reference, not a lower bound.
//! - the floor (`views::floor`, Produce only): the least a safe reader of the layout does to
//!   reach the same fields.
//!
//! Also asserted before timing: the routing read allocates nothing (counting allocator), and
//! all four read the same answer.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use kafka_codec::messages::{
    DescribeQuorumResponse, FetchResponse, MetadataResponse, ProduceRequest,
};
use kafka_codec::{view_message, Message};
use kafka_codec_bench::views::{floor_route, hand_written_route, routes, Route};
use kafka_codec_bench::{
    describe_quorum_response, fetch_response, metadata_response, produce_request, METADATA_SMALL,
};
use kafka_codec_test_support::counting_alloc::{self, CountingAllocator};
use kafka_protocol::protocol::Decodable;
use std::hint::black_box;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn routing(
    c: &mut Criterion,
    name: &str,
    bytes: &Bytes,
    ([view, lazy, owned, kp], krabka): ([Route; 4], Option<Route>),
) {
    assert_eq!(
        view(bytes),
        lazy(bytes),
        "{name}: the lazy view reads what the checked view reads"
    );
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
    if let Some(krabka) = krabka {
        assert_eq!(
            view(bytes),
            krabka(bytes),
            "{name}: and what krabka-protocol reads"
        );
    }
    for route in [view, lazy] {
        let (_, stats) = counting_alloc::measure(|| route(bytes));
        assert_eq!(
            stats.requested, 0,
            "{name}: the routing read allocates nothing"
        );
    }
    let hand_written = hand_written_route(name).expect("a views case");
    assert_eq!(
        view(bytes),
        hand_written(bytes),
        "{name}: and what the hand-written reader reads"
    );
    let mut group = c.benchmark_group(format!("{name}/route"));
    group.bench_function("kafka-codec view", |b| b.iter(|| view(black_box(bytes))));
    group.bench_function("kafka-codec lazy view", |b| {
        b.iter(|| lazy(black_box(bytes)))
    });
    group.bench_function("kafka-codec", |b| b.iter(|| owned(black_box(bytes))));
    group.bench_function("hand-written", |b| {
        b.iter(|| hand_written(black_box(bytes)))
    });
    if let Some(floor) = floor_route(name) {
        assert_eq!(
            view(bytes),
            floor(bytes),
            "{name}: and what the floor reads"
        );
        group.bench_function("floor", |b| b.iter(|| floor(black_box(bytes))));
    }
    group.bench_function("kafka-protocol", |b| b.iter(|| kp(black_box(bytes))));
    if let Some(krabka) = krabka {
        group.bench_function("krabka-protocol borrowed", |b| {
            b.iter(|| krabka(black_box(bytes)))
        });
    }
    group.finish();
}

/// The whole message decoded by the other crates: kafka-protocol's owned decode, and
/// krabka's borrowed decode where the `krabka` feature builds it.
type Decode = fn(&Bytes, i16) -> usize;

macro_rules! decodes {
    ($kp:ty, $kr:ty) => {{
        let kp: Decode = |bytes, version| {
            let message = <$kp>::decode(&mut bytes.clone(), version).expect("valid");
            std::mem::size_of_val(&message)
        };
        #[cfg(feature = "krabka")]
        let krabka: Option<Decode> = Some(|bytes, version| {
            use krabka_protocol::DecodeBorrow;
            let message = <$kr>::decode_borrow(&mut &bytes[..], version).expect("valid");
            std::mem::size_of_val(&message)
        });
        #[cfg(not(feature = "krabka"))]
        let krabka: Option<Decode> = None;
        (Some(kp), krabka)
    }};
}

fn full_walk<M: Message + kafka_codec::Viewable + kafka_codec::codegen::DecodeFields + 'static>(
    c: &mut Criterion,
    name: &str,
    bytes: &Bytes,
    version: i16,
    (kp, krabka): (Option<Decode>, Option<Decode>),
) {
    use kafka_codec::StructView;
    let mut group = c.benchmark_group(format!("{name}/walk"));
    group.bench_function("kafka-codec view to_owned", |b| {
        b.iter(|| {
            let view: M::View<'_> = view_message(black_box(bytes), version).expect("valid");
            view.to_owned_struct()
        })
    });
    group.bench_function("kafka-codec lazy view to_owned", |b| {
        b.iter(|| {
            let message = kafka_codec::LazyMessage::new::<M>(black_box(bytes), version);
            let message = message.expect("valid");
            let view: M::LazyView<'_> = message.view().expect("its view");
            view.to_owned_struct().expect("valid")
        })
    });
    group.bench_function("kafka-codec lazy view accessors", |b| {
        b.iter(|| {
            use kafka_codec::wire::view::OwnedViaAccessors;
            let message = kafka_codec::LazyMessage::new::<M>(black_box(bytes), version);
            let message = message.expect("valid");
            let view: M::LazyView<'_> = message.view().expect("its view");
            view.to_owned_via_accessors().expect("valid")
        })
    });
    group.bench_function("kafka-codec lazy view every field", |b| {
        let walk = kafka_codec_bench::views::full_walk::of(name).expect("a walk case");
        b.iter(|| walk(black_box(bytes), version).expect("valid"))
    });
    group.bench_function("kafka-codec lazy view walk", |b| {
        let walk = kafka_codec_bench::views::full_visit::of(name).expect("a walk case");
        b.iter(|| walk(black_box(bytes), version).expect("valid"))
    });
    group.bench_function("kafka-codec lazy view every field, accessors", |b| {
        let walk = kafka_codec_bench::views::full_walk_accessors::of(name).expect("a walk case");
        b.iter(|| walk(black_box(bytes), version).expect("valid"))
    });
    group.bench_function("kafka-codec", |b| {
        b.iter(|| M::decode(&mut black_box(bytes).clone(), version).expect("valid"))
    });
    if let Some(kp) = kp {
        group.bench_function("kafka-protocol", |b| {
            b.iter(|| kp(black_box(bytes), version))
        });
    }
    if let Some(krabka) = krabka {
        group.bench_function("krabka-protocol borrowed", |b| {
            b.iter(|| krabka(black_box(bytes), version))
        });
    }
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
        routes("produce_request_v13").expect("a views case"),
    );
    routing(
        c,
        "fetch_response_v18",
        &fetch,
        routes("fetch_response_v18").expect("a views case"),
    );
    routing(
        c,
        METADATA_SMALL,
        &metadata,
        routes(METADATA_SMALL).expect("a views case"),
    );
    use kafka_protocol::messages as kp;
    #[cfg(feature = "krabka")]
    use krabka_protocol::borrowed as kr;
    full_walk::<ProduceRequest>(
        c,
        "produce_request_v13",
        &produce,
        13,
        decodes!(kp::ProduceRequest, kr::produce_request::ProduceRequest<'_>),
    );
    full_walk::<FetchResponse>(
        c,
        "fetch_response_v18",
        &fetch,
        18,
        decodes!(kp::FetchResponse, kr::fetch_response::FetchResponse<'_>),
    );
    // DescribeQuorum, the field-heavy shape of issue 25 (the codec bench's message): at v2
    // beside both other crates, at v3 alone (neither decodes v3).
    let quorum = describe_quorum_response();
    full_walk::<DescribeQuorumResponse>(
        c,
        "describe_quorum_response_v2",
        &quorum.bytes,
        2,
        decodes!(
            kp::DescribeQuorumResponse,
            kr::describe_quorum_response::DescribeQuorumResponse<'_>
        ),
    );
    let quorum_v3 = quorum.message.encode_to_bytes(3).expect("encodes");
    full_walk::<DescribeQuorumResponse>(
        c,
        "describe_quorum_response_v3",
        &quorum_v3,
        3,
        (None, None),
    );
    full_walk::<MetadataResponse>(
        c,
        METADATA_SMALL,
        &metadata,
        13,
        decodes!(
            kp::MetadataResponse,
            kr::metadata_response::MetadataResponse<'_>
        ),
    );
}

criterion_group!(benches, views);
criterion_main!(benches);
