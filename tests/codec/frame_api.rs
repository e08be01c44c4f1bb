//! The frame API a newcomer uses: constructors fill the header from the body, encoding refuses
//! a header that names another API than its body, and `decode_with` with
//! `Framing::SizePrefixed` reads back what `encode` with it writes.

use kafka_codec::bytes::{BufMut, Bytes, BytesMut};
use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_codec::messages::{
    ApiVersionsResponse, DescribeQuorumRequest, MetadataRequest, MetadataResponse, RequestHeader,
};
use kafka_codec::Framing;
use kafka_codec::{
    split_frame, ApiKey, DecodeErrorKind, DecodeLimits, DecodeOptions, EncodeErrorKind, Request,
    RequestFrame, ResponseFrame, TrailingBytes,
};

fn describe_quorum() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default()])])
}

fn size_prefixed(frame: &RequestFrame) -> Bytes {
    let mut buf = BytesMut::new();
    frame.encode(&mut buf, Framing::SizePrefixed).unwrap();
    buf.freeze()
}

#[test]
fn constructors_take_the_api_from_the_body() {
    let frame = RequestFrame::new(describe_quorum(), 2, 7).with_client_id("c");
    assert_eq!(
        frame.header,
        RequestHeader::default()
            .with_request_api_key(55)
            .with_request_api_version(2)
            .with_correlation_id(7)
            .with_client_id(Some("c".into()))
    );
    // The same 40 bytes as wire-encoding example 2 (tests/codec/vectors.rs derives them by hand).
    let bytes = frame.encode_to_bytes().unwrap();
    assert_eq!(bytes.len(), 40);
    assert_eq!(RequestFrame::decode(bytes).unwrap(), frame);

    let response = ResponseFrame::new(ApiVersionsResponse::default(), 3, 7);
    assert_eq!(response.api_key(), ApiKey::ApiVersions);
    assert_eq!(response.header.correlation_id, 7);
    let bytes = response.encode_to_bytes().unwrap();
    assert_eq!(
        ResponseFrame::decode(bytes, ApiKey::ApiVersions, 3).unwrap(),
        response
    );
}

#[test]
fn a_header_naming_another_api_is_refused() {
    // The mistake the constructors prevent: a Metadata body under a default header, whose
    // key 0 would otherwise have gone out as a Produce request.
    let frame = RequestFrame {
        header: RequestHeader::default().with_request_api_version(12),
        body: Request::Metadata(MetadataRequest::default()),
    };
    let mismatch = EncodeErrorKind::ApiKeyMismatch {
        header: 0,
        body: 3,
        body_name: "Metadata",
    };
    let bare = frame.encode(&mut Vec::new(), Framing::Bare);
    assert_eq!(bare.unwrap_err().kind(), &mismatch);
    assert_eq!(frame.encoded_len().unwrap_err().kind(), &mismatch);
    assert_eq!(frame.encode_to_bytes().unwrap_err().kind(), &mismatch);
    let mut buf = Vec::new();
    assert_eq!(
        frame
            .encode(&mut buf, Framing::SizePrefixed)
            .unwrap_err()
            .kind(),
        &mismatch
    );
    assert!(buf.is_empty(), "nothing written");
    assert_eq!(frame.to_json().unwrap_err().kind(), &mismatch);
    assert_eq!(
        frame.encode_to_bytes().unwrap_err().to_string(),
        "the header names API key 0, but the body is a Metadata request (key 3)"
    );
}

/// The options that read a frame after its size prefix.
fn prefixed() -> DecodeOptions {
    DecodeOptions::default().with_framing(Framing::SizePrefixed)
}

#[test]
fn size_prefixed_frames_read_back_one_at_a_time() {
    let first = RequestFrame::new(describe_quorum(), 2, 1).with_client_id("a");
    let second = RequestFrame::new(MetadataRequest::default(), 12, 2);
    let mut buf = BytesMut::new();
    first.encode(&mut buf, Framing::SizePrefixed).unwrap();
    second.encode(&mut buf, Framing::SizePrefixed).unwrap();
    // One after another: `split_frame` takes each off the front, and it decodes bare.
    let limits = DecodeLimits::default();
    let frame = split_frame(&mut buf, &limits).unwrap().unwrap();
    assert_eq!(RequestFrame::decode(frame).unwrap(), first);
    assert_eq!(
        buf.clone().freeze(),
        size_prefixed(&second),
        "the next frame stays"
    );
    // One whole buffer: decoded with the prefix.
    assert_eq!(
        RequestFrame::decode_with(buf.freeze(), &prefixed()).unwrap(),
        second
    );

    let response = ResponseFrame::new(MetadataResponse::default(), 12, 2);
    let mut buf = BytesMut::new();
    response.encode(&mut buf, Framing::SizePrefixed).unwrap();
    let decoded = ResponseFrame::decode_with(buf.freeze(), ApiKey::Metadata, 12, &prefixed());
    assert_eq!(decoded.unwrap(), response);
}

#[test]
fn size_prefixed_errors_count_the_prefix() {
    let whole = size_prefixed(&RequestFrame::new(describe_quorum(), 2, 7).with_client_id("c"));
    // Every truncation is an error.
    for len in 0..whole.len() {
        let err = RequestFrame::decode_with(whole.slice(..len), &prefixed()).unwrap_err();
        assert!(
            matches!(err.kind(), DecodeErrorKind::UnexpectedEof { .. }),
            "{len}: {err}"
        );
    }
    // A negative size, and one above the limit.
    let bytes = Bytes::from_static(&[0xff, 0xff, 0xff, 0xfe, 0]);
    let err = RequestFrame::decode_with(bytes, &prefixed()).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::InvalidFrameSize(-2));
    let tight = DecodeOptions {
        limits: DecodeLimits {
            max_frame_size: 10,
            ..DecodeLimits::default()
        },
        ..prefixed()
    };
    let err = RequestFrame::decode_with(whole.clone(), &tight).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::LimitExceeded { .. }));

    // Inside the frame, offsets count from the start of the buffer: the topic name's length
    // sits at byte 13 of wire-encoding example 2, so at byte 17 after the prefix.
    let mut lying = whole.to_vec();
    lying[17] = 0x7f;
    let err = RequestFrame::decode_with(Bytes::from(lying), &prefixed()).unwrap_err();
    assert_eq!(err.offset(), 17, "{err}");
    assert_eq!(err.path().to_string(), "Topics[0].TopicName");
}

#[test]
fn bytes_after_the_body_or_the_frame_follow_the_options() {
    let frame = RequestFrame::new(describe_quorum(), 2, 1);
    let body = frame.encode_to_bytes().unwrap();
    // One byte after the body, inside the frame's size.
    let mut buf = BytesMut::new();
    buf.put_i32(body.len() as i32 + 1);
    buf.put_slice(&body);
    buf.put_u8(0xaa);
    let inside = buf.freeze();
    // One byte after the frame.
    let mut after = size_prefixed(&frame).to_vec();
    after.push(0xaa);
    let after = Bytes::from(after);
    let lenient = DecodeOptions {
        trailing_bytes: TrailingBytes::Allow,
        ..prefixed()
    };
    for bytes in [inside, after] {
        let err = RequestFrame::decode_with(bytes.clone(), &prefixed()).unwrap_err();
        assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(1));
        assert_eq!(err.offset(), 4 + body.len());
        assert_eq!(RequestFrame::decode_with(bytes, &lenient).unwrap(), frame);
    }
}

/// `cargo test` runs with the default features, and they must compile everything: both
/// directions, JSON and every API (CI checks the smaller builds with `cargo clippy`).
#[test]
fn the_default_build_has_every_api_both_directions_and_json() {
    const { assert!(cfg!(feature = "client") && cfg!(feature = "broker") && cfg!(feature = "json")) };
    let missing: Vec<ApiKey> = ApiKey::ALL
        .iter()
        .copied()
        .filter(|api| !api.is_enabled())
        .collect();
    assert!(missing.is_empty(), "APIs left out: {missing:?}");
    assert_eq!(ApiKey::ApiVersions.feature(), None, "always compiled");
    assert_eq!(ApiKey::DescribeQuorum.feature(), Some("describe-quorum"));
}
