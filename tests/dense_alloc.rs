//! Issue 11's honest but dense frames under a counting allocator: a decode's peak heap stays
//! within its memory budget and within 24× the frame (22.7× measured for the worst shape at
//! 50 MiB), no array is ever regrown, and a budget too small for the frame is refused with the
//! path of the array that did not fit.
//!
//! Its own test binary, since the global allocator counts every thread's allocations; the
//! tests here take `SERIAL` so that no other test's frame is built (and regrown) while a
//! decode is counted.

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/dense.rs"]
mod dense;

use bytes::Bytes;
use counting_alloc::{measure, CountingAllocator};
use dense::Shape;
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeLimits, DecodeOptions, Request, RequestFrame,
    Response, ResponseFrame,
};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Frames of 2 MiB: hundreds of thousands of elements, a second or two in a debug build.
const FRAME_LEN: usize = 2 * 1024 * 1024;

struct Measured {
    peak: usize,
    reallocs: usize,
    result: Result<usize, DecodeError>,
}

/// Decodes `frame` as `shape` under `limits`, counting what the decode allocates; the result
/// is the number of array elements decoded.
fn decode(shape: Shape, frame: Bytes, limits: DecodeLimits) -> Measured {
    let options = DecodeOptions {
        limits,
        ..DecodeOptions::default()
    };
    let (result, stats) = measure(|| match shape {
        Shape::ListGroupsResponseV3 => {
            ResponseFrame::decode_with(frame, ApiKey::ListGroups, 3, &options).map(|frame| {
                match frame.body {
                    Response::ListGroups(body) => body.groups.len(),
                    _ => 0,
                }
            })
        }
        Shape::MetadataRequestV9 => {
            RequestFrame::decode_with(frame, &options).map(|frame| match frame.body {
                Request::Metadata(body) => body.topics.map_or(0, |t| t.len()),
                _ => 0,
            })
        }
    });
    Measured {
        // Every `realloc` counted as holding its old and new block at once.
        peak: stats.peak_if_copied,
        reallocs: stats.reallocs,
        result,
    }
}

#[test]
fn dense_frames_fit_their_budget_and_24_times_their_size_without_regrowing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for shape in Shape::ALL {
        let (frame, count) = shape.frame(FRAME_LEN);
        let frame = Bytes::from(frame);
        let len = frame.len();
        let limits = DecodeLimits::default();
        let budget = limits.memory_budget_for(len);
        let measured = decode(shape, frame, limits);
        let decoded = measured
            .result
            .unwrap_or_else(|e| panic!("{}: {e}", shape.name()));
        assert_eq!(decoded, count, "{}", shape.name());
        assert!(
            measured.peak <= budget,
            "{}: peak {} above the budget {budget}",
            shape.name(),
            measured.peak
        );
        assert!(
            measured.peak <= 24 * len,
            "{}: peak {} is {:.1}× the frame",
            shape.name(),
            measured.peak,
            measured.peak as f64 / len as f64
        );
        assert_eq!(
            measured.reallocs,
            0,
            "{}: an array was regrown",
            shape.name()
        );
    }
}

#[test]
fn a_budget_too_small_is_refused_naming_the_array() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for (shape, path) in [
        (Shape::ListGroupsResponseV3, "Groups"),
        (Shape::MetadataRequestV9, "Topics"),
    ] {
        let (frame, _) = shape.frame(FRAME_LEN);
        let frame = Bytes::from(frame);
        // Room for the frame's own size in memory, far less than its elements need.
        let budget = frame.len();
        let limits = DecodeLimits {
            memory_budget: Some(budget),
            ..DecodeLimits::default()
        };
        let measured = decode(shape, frame, limits);
        let error = measured.result.expect_err("over budget");
        assert!(
            matches!(
                error.kind(),
                DecodeErrorKind::LimitExceeded { what: "memory budget", limit, .. }
                    if *limit == budget as u64
            ),
            "{}: {error}",
            shape.name()
        );
        assert_eq!(error.path().to_string(), path, "{}: {error}", shape.name());
        // Refused before the array was reserved: nothing near the budget was allocated.
        assert!(
            measured.peak < budget,
            "{}: peak {}",
            shape.name(),
            measured.peak
        );
    }
}
