//! Decoding never reserves memory out of proportion to its input: a 16-byte request frame
//! that claims 2^31 array elements is answered with an error after allocating almost nothing.

use bytes::Bytes;
use kafka_codec::{DecodeErrorKind, RequestFrame};
use kafka_codec_test_support::counting_alloc::measure;

#[test]
fn sixteen_bytes_claiming_two_billion_elements_allocate_under_one_kib() {
    let _serial = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let frame = Bytes::from_static(&[
        0x00, 0x37, // DescribeQuorum
        0x00, 0x00, // version 0 (flexible: request header v2)
        0x00, 0x00, 0x00, 0x01, // correlation id
        0xff, 0xff, // client id null
        0x00, // header tags
        0x81, 0x80, 0x80, 0x80, 0x08, // Topics: compact count 2^31 + 1, i.e. 2^31 elements
    ]);
    assert_eq!(frame.len(), 16);
    let (result, stats) = measure(|| RequestFrame::decode(frame));
    // Every byte asked for, a `realloc` counted at its whole new size.
    let allocated = stats.requested;
    let err = result.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::LengthExceedsInput {
                declared: 0x8000_0000,
                ..
            }
        ),
        "{err}"
    );
    assert!(allocated < 1024, "allocated {allocated} bytes");
    eprintln!("allocated {allocated} bytes while refusing the frame");
}
