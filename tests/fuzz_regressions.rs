//! Inputs the fuzzers (`fuzz/`) found, minimised, each with the property it broke. Every test
//! runs the fuzz target's own check (`fuzz/src/lib.rs`, included by path) on the input, then
//! asserts the fixed behaviour directly.

#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod checks;

use bytes::BytesMut;
use kafka_codec::frame::split_frame;
use kafka_codec::DecodeLimits;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `request_frame`, out-of-memory (`malloc(67118839)` under `-malloc_limit_mb=64`): the
/// first four bytes, read as a size prefix by `split_frame`, claimed a 64 MiB frame, and
/// `split_frame` reserved all of it before a single byte of the frame had arrived. It now
/// reserves at most 64 KiB ahead of the bytes it has.
#[test]
fn split_frame_does_not_reserve_a_claimed_frame_size() {
    let input = hex("040026f3");
    checks::request_frame(&input);
    let mut buf = BytesMut::from(&input[..]);
    assert_eq!(
        split_frame(&mut buf, &DecodeLimits::default()).unwrap(),
        None
    );
    assert!(
        buf.capacity() <= 64 * 1024 + 4,
        "reserved {}",
        buf.capacity()
    );
    // The frame still arrives whole once its bytes do.
    let mut buf = BytesMut::from(&hex("00000003aabbccdd")[..]);
    let frame = split_frame(&mut buf, &DecodeLimits::default())
        .unwrap()
        .unwrap();
    assert_eq!(&frame[..], hex("aabbcc"));
    assert_eq!(&buf[..], [0xdd]);
}
