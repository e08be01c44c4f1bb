//! The frame API a newcomer uses: constructors fill the header from the body, encoding refuses
//! a header that names another API than its body, and `decode_size_prefixed` reads back what
//! `encode_size_prefixed` writes.

use kafka_codec::bytes::{BufMut, Bytes, BytesMut};
use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_codec::messages::{
    ApiVersionsResponse, DescribeQuorumRequest, MetadataRequest, MetadataResponse, RequestHeader,
};
use kafka_codec::{
    ApiKey, DecodeErrorKind, DecodeLimits, DecodeOptions, EncodeErrorKind, Request, RequestFrame,
    ResponseFrame, TrailingBytes,
};

fn describe_quorum() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default()])])
}

fn size_prefixed(frame: &RequestFrame) -> Bytes {
    let mut buf = BytesMut::new();
    frame.encode_size_prefixed(&mut buf).unwrap();
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
    // The same 40 bytes as wire-encoding example 2 (tests/vectors.rs derives them by hand).
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
    assert_eq!(frame.encode(&mut Vec::new()).unwrap_err().kind(), &mismatch);
    assert_eq!(frame.encoded_len().unwrap_err().kind(), &mismatch);
    assert_eq!(frame.encode_to_bytes().unwrap_err().kind(), &mismatch);
    let mut buf = Vec::new();
    assert_eq!(
        frame.encode_size_prefixed(&mut buf).unwrap_err().kind(),
        &mismatch
    );
    assert!(buf.is_empty(), "nothing written");
    assert_eq!(frame.to_json().unwrap_err().kind(), &mismatch);
    assert_eq!(
        frame.encode_to_bytes().unwrap_err().to_string(),
        "the header names API key 0, but the body is a Metadata request (key 3)"
    );
}

#[test]
fn size_prefixed_frames_read_back_one_at_a_time() {
    let first = RequestFrame::new(describe_quorum(), 2, 1).with_client_id("a");
    let second = RequestFrame::new(MetadataRequest::default(), 12, 2);
    let mut buf = BytesMut::new();
    first.encode_size_prefixed(&mut buf).unwrap();
    second.encode_size_prefixed(&mut buf).unwrap();
    let mut bytes = buf.freeze();
    assert_eq!(
        RequestFrame::decode_size_prefixed(&mut bytes).unwrap(),
        first
    );
    assert_eq!(bytes, size_prefixed(&second), "the next frame stays");
    assert_eq!(
        RequestFrame::decode_size_prefixed(&mut bytes).unwrap(),
        second
    );
    assert!(bytes.is_empty());

    let response = ResponseFrame::new(MetadataResponse::default(), 12, 2);
    let mut buf = BytesMut::new();
    response.encode_size_prefixed(&mut buf).unwrap();
    let mut bytes = buf.freeze();
    let decoded = ResponseFrame::decode_size_prefixed(&mut bytes, ApiKey::Metadata, 12);
    assert_eq!(decoded.unwrap(), response);
    assert!(bytes.is_empty());
}

#[test]
fn size_prefixed_errors_count_the_prefix_and_leave_the_buffer() {
    let whole = size_prefixed(&RequestFrame::new(describe_quorum(), 2, 7).with_client_id("c"));
    // Every truncation is an error, and the buffer is left as it was.
    for len in 0..whole.len() {
        let mut bytes = whole.slice(..len);
        let err = RequestFrame::decode_size_prefixed(&mut bytes).unwrap_err();
        assert!(
            matches!(err.kind(), DecodeErrorKind::UnexpectedEof { .. }),
            "{len}: {err}"
        );
        assert_eq!(bytes.len(), len);
    }
    // A negative size, and one above the limit.
    let mut bytes = Bytes::from_static(&[0xff, 0xff, 0xff, 0xfe, 0]);
    let err = RequestFrame::decode_size_prefixed(&mut bytes).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::InvalidFrameSize(-2));
    let tight = DecodeOptions {
        limits: DecodeLimits {
            max_frame_size: 10,
            ..DecodeLimits::default()
        },
        ..DecodeOptions::default()
    };
    let err = RequestFrame::decode_size_prefixed_with(&mut whole.clone(), &tight).unwrap_err();
    assert!(matches!(err.kind(), DecodeErrorKind::LimitExceeded { .. }));

    // Inside the frame, offsets count from the start of the buffer: the topic name's length
    // sits at byte 13 of wire-encoding example 2, so at byte 17 after the prefix.
    let mut lying = whole.to_vec();
    lying[17] = 0x7f;
    let err = RequestFrame::decode_size_prefixed(&mut Bytes::from(lying)).unwrap_err();
    assert_eq!(err.offset(), 17, "{err}");
    assert_eq!(err.path().to_string(), "Topics[0].TopicName");
}

#[test]
fn bytes_after_the_body_inside_the_frame_follow_the_options() {
    let frame = RequestFrame::new(describe_quorum(), 2, 1);
    let body = frame.encode_to_bytes().unwrap();
    let mut buf = BytesMut::new();
    buf.put_i32(body.len() as i32 + 1);
    buf.put_slice(&body);
    buf.put_u8(0xaa);
    let bytes = buf.freeze();
    let err = RequestFrame::decode_size_prefixed(&mut bytes.clone()).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(1));
    assert_eq!(err.offset(), 4 + body.len());
    let lenient = DecodeOptions {
        trailing_bytes: TrailingBytes::Allow,
        ..DecodeOptions::default()
    };
    let mut rest = bytes.clone();
    assert_eq!(
        RequestFrame::decode_size_prefixed_with(&mut rest, &lenient).unwrap(),
        frame
    );
    assert!(rest.is_empty());
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
