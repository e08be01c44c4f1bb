//! One routing read or full walk of the `views` benchmark, `n` times, for instruction counts
//! under callgrind (deterministic, where criterion's times on a shared machine are not):
//!
//! ```sh
//! cargo build --profile bench -p kafka-codec-bench --example views_ir \
//!   --features krabka --ignore-rust-version
//! for n in 11 1; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/examples/views_ir produce_request_v13 route-view $n 2>&1 | grep Collected; done
//! ```
//!
//! The Ir of one operation is (Ir at 11 − Ir at 1) / 10. Operations: `route-view`,
//! `route-lazy`, `route-owned`, `route-kafka-protocol`, `route-krabka` (the five routing
//! reads), `route-hand-written` (a hand-written reader of the same fields, `views::hand_written`),
//! `route-floor` (Produce only: the least a safe reader of the layout does, `views::floor`), `walk-view` (view +
//! `to_owned`), `walk-view-check` (the checked view made, nothing read: `walk-view` less this is
//! its `to_owned`), `walk-lazy` (lazy view + `to_owned`),
//! `walk-lazy-accessors` (lazy view + `to_owned_via_accessors`), `walk-fields` (every field
//! read through the lazy views' `fields()`, nothing built: `views::full_walk`),
//! `walk-accessors` (the same through one accessor per field: `views::full_walk_accessors`),
//! `walk-visit` (every field handed to a visitor in wire order by `walk`: `views::full_visit`), `walk-owned`
//! (the owned decode). Cases `describe_quorum_response_v2` and `describe_quorum_response_v3` (the codec
//! bench's DescribeQuorum response at versions 2 and 3) have the `walk-` operations only.
//! Case `produce_request_v9_tap` with `tap-owned`, `tap-view`, `tap-lazy`: the tap's
//! `--deny-topic` decision on a Produce v9 frame (`views::tap_decision`). Cases
//! `quorum_serve_describe_quorum` and `quorum_serve_add_raft_voter` with `quorum-owned`,
//! `quorum-view`, `quorum-lazy`: `quorum serve`'s request reading (`views::quorum_serve`).

use bytes::Bytes;
use kafka_codec::messages::{
    DescribeQuorumResponse, FetchResponse, MetadataResponse, ProduceRequest,
};
use kafka_codec::{view_message, Message, StructView, Viewable};
use kafka_codec_bench::views::{floor_route, hand_written_route, routes};
use kafka_codec_bench::{
    describe_quorum_response, fetch_response, metadata_response, produce_request, METADATA_SMALL,
};
use std::hint::black_box;

fn walk<M: Message + Viewable + kafka_codec::codegen::DecodeFields + 'static>(
    case: &str,
    bytes: &Bytes,
    version: i16,
    how: &str,
) -> usize {
    if how == "walk-fields" {
        // Every field read through the lazy views' `fields()`, nothing built.
        let case = kafka_codec_bench::views::full_walk::of(case).expect("a walk case");
        case(bytes, version).expect("valid") as usize
    } else if how == "walk-visit" {
        // Every field handed to a visitor in wire order by the lazy view's `walk`.
        let case = kafka_codec_bench::views::full_visit::of(case).expect("a walk case");
        case(bytes, version).expect("valid") as usize
    } else if how == "walk-accessors" {
        // The same fields read through one lazy accessor each, nothing built.
        let case = kafka_codec_bench::views::full_walk_accessors::of(case).expect("a walk case");
        case(bytes, version).expect("valid") as usize
    } else if how == "walk-view" {
        let view: M::View<'_> = view_message(bytes, version).expect("valid");
        std::mem::size_of_val(&black_box(view.to_owned_struct()))
    } else if how == "walk-view-check" {
        // The checked view made alone: what `walk-view` spends before `to_owned`.
        let view: M::View<'_> = view_message(bytes, version).expect("valid");
        std::mem::size_of_val(&black_box(view))
    } else if how == "walk-lazy" || how == "walk-lazy-accessors" {
        use kafka_codec::wire::view::OwnedViaAccessors;
        let message = kafka_codec::LazyMessage::new::<M>(bytes, version).expect("valid");
        let view: M::LazyView<'_> = message.view().expect("its view");
        let owned = if how == "walk-lazy" {
            view.to_owned_struct()
        } else {
            view.to_owned_via_accessors()
        };
        std::mem::size_of_val(&black_box(owned.expect("valid")))
    } else {
        let message = M::decode(&mut bytes.clone(), version).expect("valid");
        std::mem::size_of_val(&black_box(message))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, case, operation, n] = &args[..] else {
        eprintln!("usage: views_ir <case> <operation> <n>");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("a count");
    if case == "produce_request_v9_tap" {
        // The tap's `--deny-topic` decision on its bench traffic (`views::tap_decision`).
        use kafka_codec_bench::views::tap_decision;
        let frame = tap_decision::frame();
        let read = match operation.as_str() {
            "tap-owned" => tap_decision::owned,
            "tap-view" => tap_decision::checked_view,
            "tap-lazy" => tap_decision::lazy_view,
            _ => panic!("unknown operation {operation}"),
        };
        let denied = (0..n)
            .filter(|_| read(black_box(&frame)).expect("valid"))
            .count();
        println!("{denied}");
        return;
    }
    if let Some(api) = case.strip_prefix("quorum_serve_") {
        // `quorum serve`'s request reading (`views::quorum_serve`).
        use kafka_codec_bench::views::quorum_serve;
        let frame = match api {
            "describe_quorum" => quorum_serve::describe_quorum(),
            "add_raft_voter" => quorum_serve::add_raft_voter(),
            _ => panic!("unknown case {case}"),
        };
        let read = match operation.as_str() {
            "quorum-owned" => quorum_serve::owned,
            "quorum-view" => quorum_serve::checked_view,
            "quorum-lazy" => quorum_serve::lazy_view,
            _ => panic!("unknown operation {operation}"),
        };
        let sum = (0..n).fold(0u64, |sum, _| {
            sum.wrapping_add(read(black_box(&frame)).expect("valid"))
        });
        println!("{sum}");
        return;
    }
    if let Some(version) = case.strip_prefix("describe_quorum_response_v") {
        // The full walks alone: no routing read is defined for DescribeQuorum.
        let version: i16 = version.parse().expect("a version");
        let message = describe_quorum_response().message;
        let bytes = message.encode_to_bytes(version).expect("encodes");
        let sum: usize = (0..n)
            .map(|_| walk::<DescribeQuorumResponse>(case, black_box(&bytes), version, operation))
            .sum();
        println!("{sum}");
        return;
    }
    let (bytes, version) = match case.as_str() {
        "produce_request_v13" => (produce_request().bytes, 13),
        "fetch_response_v18" => (fetch_response().bytes, 18),
        METADATA_SMALL => (metadata_response(METADATA_SMALL, 100, 10).bytes, 13),
        _ => panic!("unknown case {case}"),
    };
    let ([view, lazy, owned, kp], krabka) = routes(case).expect("a views case");
    let mut sum = 0u64;
    for _ in 0..n {
        let bytes = black_box(&bytes);
        sum = sum.wrapping_add(match operation.as_str() {
            "route-view" => view(bytes),
            "route-lazy" => lazy(bytes),
            "route-owned" => owned(bytes),
            "route-hand-written" => hand_written_route(case).expect("a views case")(bytes),
            "route-floor" => floor_route(case).expect("a case with a floor")(bytes),
            "route-kafka-protocol" => kp(bytes),
            "route-krabka" => krabka.expect("built with --features krabka")(bytes),
            how if how.starts_with("walk-") => {
                (match version {
                    18 => walk::<FetchResponse>(case, bytes, version, how),
                    _ if case.starts_with("produce") => {
                        walk::<ProduceRequest>(case, bytes, version, how)
                    }
                    _ => walk::<MetadataResponse>(case, bytes, version, how),
                }) as u64
            }
            _ => panic!("unknown operation {operation}"),
        });
    }
    println!("{sum}");
}
