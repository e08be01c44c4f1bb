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

/// Not a finding but the oracle's other branch: inputs Kafka accepts that are not what an
/// encoder writes. Each decodes, re-encodes to the canonical bytes, and those re-encode
/// identically (the `request_frame` check asserts all of it).
#[test]
fn non_canonical_frames_re_encode_canonically() {
    use kafka_codec::RequestFrame;
    for (input, canonical) in [
        // ApiVersions v3, header tagged-field count 0 written as a two-byte varint.
        (
            "00120003000000010003636c69 8000 0261023100",
            "00120003000000010003636c69 00 0261023100",
        ),
        // Metadata v4, AllowAutoTopicCreation as the byte 2.
        (
            "0003000400000009 0000 00000000 02",
            "0003000400000009 0000 00000000 01",
        ),
        // Metadata v4, null Topics as the count -2.
        (
            "0003000400000009ffff fffffffe 01",
            "0003000400000009ffff ffffffff 01",
        ),
    ] {
        let input = hex(&input.replace(' ', ""));
        let canonical = hex(&canonical.replace(' ', ""));
        checks::request_frame(&input);
        let frame = RequestFrame::decode(input.into()).unwrap();
        assert_eq!(frame.encode_to_bytes().unwrap(), canonical);
    }
}
