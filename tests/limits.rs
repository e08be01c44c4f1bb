//! Every [`DecodeLimits`] bound refuses input just over it with a typed
//! `DecodeErrorKind::LimitExceeded`, through the framing helpers a server uses
//! (`split_frame`, `RequestFrame::decode_with`, `ResponseFrame::decode_with`) and through
//! `Message::decode_with_limits`; input exactly at the bound is accepted.

use bytes::{Bytes, BytesMut};
use kafka_codec::frame::split_frame;
use kafka_codec::messages::describe_quorum_request::{
    DescribeQuorumRequest, PartitionData, TopicData,
};
use kafka_codec::messages::{DescribeQuorumResponse, SaslAuthenticateRequest};
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeLimits, DecodeOptions, Message, Request,
    RequestFrame, ResponseFrame,
};

fn options(limits: DecodeLimits) -> DecodeOptions {
    DecodeOptions {
        limits,
        ..DecodeOptions::default()
    }
}

/// Asserts that `result` failed with `LimitExceeded` for `what`, naming `value` and `limit`.
#[track_caller]
fn assert_limit<T: std::fmt::Debug>(
    result: Result<T, DecodeError>,
    what: &str,
    value: u64,
    limit: u64,
) -> DecodeError {
    let error = result.expect_err("over the limit");
    match error.kind() {
        DecodeErrorKind::LimitExceeded {
            what: w,
            value: v,
            limit: l,
        } => assert_eq!((*w, *v, *l), (what, value, limit), "{error}"),
        other => panic!("expected LimitExceeded for {what}, got {other:?} ({error})"),
    }
    error
}

fn request_frame(body: Request, version: i16, client_id: &str) -> RequestFrame {
    RequestFrame::new(body, version, 7).with_client_id(client_id)
}

/// DescribeQuorum v2 with `topics` topics of `partitions` partitions each: two levels of
/// nested structs (topic, partition) below the body.
fn describe_quorum(topics: usize, partitions: usize) -> RequestFrame {
    let topic = TopicData {
        topic_name: "__cluster_metadata".into(),
        partitions: vec![PartitionData::default(); partitions],
        ..Default::default()
    };
    let body = DescribeQuorumRequest {
        topics: vec![topic; topics],
        ..Default::default()
    };
    request_frame(Request::DescribeQuorum(body), 2, "c")
}

fn encode(frame: &RequestFrame) -> Bytes {
    frame.encode_to_bytes().expect("encodes")
}

#[test]
fn max_frame_size_refuses_a_size_prefix_before_reserving() {
    let limits = DecodeLimits {
        max_frame_size: 1000,
        ..DecodeLimits::default()
    };
    let mut at_limit = BytesMut::from(&1000i32.to_be_bytes()[..]);
    assert_eq!(split_frame(&mut at_limit, &limits).unwrap(), None);

    let mut over = BytesMut::from(&1001i32.to_be_bytes()[..]);
    assert_limit(split_frame(&mut over, &limits), "frame size", 1001, 1000);
    assert!(over.capacity() < 1001, "reserved for a refused frame");
}

#[test]
fn max_frame_size_refuses_a_request_frame() {
    let bytes = encode(&describe_quorum(1, 1));
    let len = bytes.len();
    let at_limit = options(DecodeLimits {
        max_frame_size: len,
        ..DecodeLimits::default()
    });
    assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
    let over = options(DecodeLimits {
        max_frame_size: len - 1,
        ..DecodeLimits::default()
    });
    let error = assert_limit(
        RequestFrame::decode_with(bytes, &over),
        "frame size",
        len as u64,
        len as u64 - 1,
    );
    assert_eq!(error.offset(), 0);
}

#[test]
fn max_frame_size_refuses_a_response_frame() {
    let frame = ResponseFrame::new(DescribeQuorumResponse::default(), 2, 7);
    let bytes = frame.encode_to_bytes().unwrap();
    let len = bytes.len();
    let at_limit = options(DecodeLimits {
        max_frame_size: len,
        ..DecodeLimits::default()
    });
    assert_eq!(
        ResponseFrame::decode_with(bytes.clone(), ApiKey::DescribeQuorum, 2, &at_limit).unwrap(),
        frame
    );
    let over = options(DecodeLimits {
        max_frame_size: len - 1,
        ..DecodeLimits::default()
    });
    assert_limit(
        ResponseFrame::decode_with(bytes, ApiKey::DescribeQuorum, 2, &over),
        "frame size",
        len as u64,
        len as u64 - 1,
    );
}

#[test]
fn max_array_len_refuses_a_long_array() {
    let bytes = encode(&describe_quorum(3, 1));
    let at_limit = options(DecodeLimits {
        max_array_len: 3,
        ..DecodeLimits::default()
    });
    assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
    let over = options(DecodeLimits {
        max_array_len: 2,
        ..DecodeLimits::default()
    });
    let error = assert_limit(
        RequestFrame::decode_with(bytes, &over),
        "array length",
        3,
        2,
    );
    assert_eq!(error.path().to_string(), "Topics");
    assert_eq!(error.message(), Some("DescribeQuorumRequest"));
}

#[test]
fn max_array_len_applies_to_nested_arrays_and_bare_messages() {
    let frame = describe_quorum(1, 5);
    let Request::DescribeQuorum(body) = &frame.body else {
        unreachable!()
    };
    let limits = DecodeLimits {
        max_array_len: 4,
        ..DecodeLimits::default()
    };
    let mut bytes = body.encode_to_bytes(2).unwrap();
    let error = assert_limit(
        DescribeQuorumRequest::decode_with_limits(&mut bytes, 2, limits),
        "array length",
        5,
        4,
    );
    assert_eq!(error.path().to_string(), "Topics[0].Partitions");
}

#[test]
fn max_string_len_refuses_a_long_string() {
    let bytes = encode(&describe_quorum(0, 0));
    // The header's client id "c" is the only string.
    let over = options(DecodeLimits {
        max_string_len: 0,
        ..DecodeLimits::default()
    });
    let error = assert_limit(
        RequestFrame::decode_with(bytes.clone(), &over),
        "string length",
        1,
        0,
    );
    assert_eq!(error.path().to_string(), "ClientId");

    let topic_name = encode(&describe_quorum(1, 0));
    let tight = options(DecodeLimits {
        max_string_len: 17,
        ..DecodeLimits::default()
    });
    assert_limit(
        RequestFrame::decode_with(topic_name.clone(), &tight),
        "string length",
        18,
        17,
    );
    let at_limit = options(DecodeLimits {
        max_string_len: 18,
        ..DecodeLimits::default()
    });
    assert!(RequestFrame::decode_with(topic_name, &at_limit).is_ok());
}

#[test]
fn max_bytes_len_refuses_long_bytes() {
    for version in 0..=2 {
        let body = SaslAuthenticateRequest {
            auth_bytes: Bytes::from_static(&[0xaa; 10]),
            ..Default::default()
        };
        let bytes = encode(&request_frame(
            Request::SaslAuthenticate(body),
            version,
            "c",
        ));
        let at_limit = options(DecodeLimits {
            max_bytes_len: 10,
            ..DecodeLimits::default()
        });
        assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
        let over = options(DecodeLimits {
            max_bytes_len: 9,
            ..DecodeLimits::default()
        });
        let error = assert_limit(
            RequestFrame::decode_with(bytes, &over),
            "bytes length",
            10,
            9,
        );
        assert_eq!(error.path().to_string(), "AuthBytes");
    }
}

#[test]
fn max_nesting_refuses_deep_structs() {
    // Body → TopicData (depth 1) → PartitionData (depth 2).
    let bytes = encode(&describe_quorum(1, 1));
    let at_limit = options(DecodeLimits {
        max_nesting: 2,
        ..DecodeLimits::default()
    });
    assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
    let over = options(DecodeLimits {
        max_nesting: 1,
        ..DecodeLimits::default()
    });
    let error = assert_limit(
        RequestFrame::decode_with(bytes, &over),
        "struct nesting",
        2,
        1,
    );
    assert_eq!(error.path().to_string(), "Topics[0].Partitions[0]");
}

#[test]
fn limits_never_change_what_is_accepted() {
    // A frame within every limit decodes to the same value under tight and default limits.
    let frame = describe_quorum(2, 2);
    let bytes = encode(&frame);
    let tight = options(DecodeLimits {
        max_frame_size: bytes.len(),
        max_array_len: 2,
        max_string_len: 18,
        max_bytes_len: 0,
        max_nesting: 2,
        max_decompressed_batch_size: 0,
    });
    assert_eq!(RequestFrame::decode_with(bytes, &tight).unwrap(), frame);
}
