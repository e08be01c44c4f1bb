//! Issue 11's honest but dense frames under a counting allocator: a decode's peak heap stays
//! within its memory budget and within 24× the frame (22.7× measured for the worst shape at
//! 50 MiB), no array is ever regrown, and a budget too small for the frame is refused with the
//! path of the array that did not fit. Writing the same frames' JSON straight from their
//! bytes (`json::transcode_*`) allocates a small constant, whatever the frame's size.
//!
//! In the `memory` test binary, whose global allocator counts the measuring thread's
//! allocations only (libtest's own threads allocate while a test runs).

use crate::SERIAL;
use bytes::Bytes;
use kafka_codec::json::{transcode_request, transcode_response, JsonOptions, JsonWriter};
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeLimits, DecodeOptions, Request, RequestFrame,
    Response, ResponseFrame,
};
use kafka_codec_test_support::counting_alloc::{self, measure};
use kafka_codec_test_support::dense::Shape;
use std::io;

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

/// An `io::Write` that keeps nothing and counts the bytes it is given.
#[derive(Default)]
struct CountingSink(usize);

impl io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The JSON text of `frame` as `shape`, into a sink that keeps nothing: its length, and what
/// writing it allocated. Straight from the bytes when `transcode`, else decoded first.
fn json_of(shape: Shape, frame: &Bytes, transcode: bool) -> (usize, counting_alloc::Stats) {
    let (options, json) = (DecodeOptions::default(), JsonOptions::default());
    let (len, stats) = measure(|| {
        let mut sink = CountingSink::default();
        let mut writer = JsonWriter::compact(&mut sink);
        match (shape, transcode) {
            (Shape::ListGroupsResponseV3, true) => {
                transcode_response(frame, ApiKey::ListGroups, 3, &options, &json, &mut writer)
                    .map(drop)
                    .unwrap();
            }
            (Shape::ListGroupsResponseV3, false) => {
                ResponseFrame::decode(frame.clone(), ApiKey::ListGroups, 3)
                    .unwrap()
                    .write_json(&json, &mut writer)
                    .unwrap();
            }
            (Shape::MetadataRequestV9, true) => {
                transcode_request(frame, &options, &json, &mut writer)
                    .map(drop)
                    .unwrap();
            }
            (Shape::MetadataRequestV9, false) => {
                RequestFrame::decode(frame.clone())
                    .unwrap()
                    .write_json(&json, &mut writer)
                    .unwrap();
            }
        }
        writer.finish().unwrap();
        sink.0
    });
    (len, stats)
}

#[test]
fn transcoding_a_dense_frame_allocates_a_small_constant_whatever_its_size() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for shape in Shape::ALL {
        let mut seen = Vec::new();
        for len in [FRAME_LEN / 2, 2 * FRAME_LEN] {
            let (frame, _) = shape.frame(len);
            let frame = Bytes::from(frame);
            let (text_len, transcoded) = json_of(shape, &frame, true);
            let (decoded_len, decoded) = json_of(shape, &frame, false);
            // The whole text was written: as long as the decoded frame's.
            assert_eq!(text_len, decoded_len, "{} at {len}", shape.name());
            eprintln!(
                "{} of {} bytes: transcode peak {} B ({} B in all), decode + write_json peak {} B",
                shape.name(),
                frame.len(),
                transcoded.peak_if_copied,
                transcoded.total,
                decoded.peak_if_copied
            );
            assert!(
                transcoded.peak_if_copied < 64 * 1024,
                "{}: peak {}",
                shape.name(),
                transcoded.peak_if_copied
            );
            seen.push((transcoded.peak_if_copied, transcoded.total));
        }
        // Not a byte more for four times the elements.
        assert_eq!(seen[0], seen[1], "{}", shape.name());
    }
}
