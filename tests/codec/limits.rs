//! Every [`DecodeLimits`] bound refuses input just over it with a typed
//! `DecodeErrorKind::LimitExceeded`, through the framing helpers a server uses
//! (`split_frame`, `RequestFrame::decode_with`, `ResponseFrame::decode_with`) and through
//! `Message::decode_with_limits`; input exactly at the bound is accepted.

use bytes::{Bytes, BytesMut};
use kafka_codec::messages::describe_quorum_request::{
    DescribeQuorumRequest, PartitionData, TopicData,
};
use kafka_codec::messages::{DescribeQuorumResponse, SaslAuthenticateRequest};
use kafka_codec::split_frame;
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
    let topic = TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default(); partitions]);
    let body = DescribeQuorumRequest::default().with_topics(vec![topic; topics]);
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
        let body =
            SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(&[0xaa; 10]));
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
        // Exactly the two topics and four partitions the decode reserves.
        memory_budget: Some(
            2 * std::mem::size_of::<TopicData>() + 4 * std::mem::size_of::<PartitionData>(),
        ),
    });
    assert_eq!(RequestFrame::decode_with(bytes, &tight).unwrap(), frame);
}

/// A SaslAuthenticate v2 request frame (flexible, header v2) whose header's or body's empty
/// tagged section is replaced by `section`.
fn with_tagged_section(in_header: bool, section: &[u8]) -> Bytes {
    let frame = request_frame(
        Request::SaslAuthenticate(SaslAuthenticateRequest::default()),
        2,
        "c",
    );
    let bytes = encode(&frame);
    // Header v2: key (2), version (2), correlation id (4), client id "c" (2 + 1), then its
    // tagged section; the body's is its last byte.
    let at = if in_header { 11 } else { bytes.len() - 1 };
    assert_eq!(bytes[at], 0, "an empty tagged section");
    let mut out = BytesMut::from(&bytes[..at]);
    out.extend_from_slice(section);
    out.extend_from_slice(&bytes[at + 1..]);
    out.freeze()
}

/// One unknown tag (100) of `size` bytes.
fn one_unknown_tag(size: usize) -> Vec<u8> {
    let mut section = vec![1, 100];
    let mut n = size;
    while n >= 0x80 {
        section.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    section.push(n as u8);
    section.extend(std::iter::repeat_n(0xab, size));
    section
}

/// `count` unknown tags (100, 101, ...), each empty.
fn many_unknown_tags(count: usize) -> Vec<u8> {
    let mut section = vec![(count as u8 & 0x7f) | 0x80, (count >> 7) as u8];
    assert!(count < 1 << 14);
    for i in 0..count {
        let tag = 100 + i;
        section.extend_from_slice(&[(tag as u8 & 0x7f) | 0x80, (tag >> 7) as u8, 0]);
    }
    section
}

#[test]
fn max_bytes_len_bounds_each_unknown_tagged_field() {
    for in_header in [false, true] {
        let bytes = with_tagged_section(in_header, &one_unknown_tag(1000));
        let at_limit = options(DecodeLimits {
            max_bytes_len: 1000,
            ..DecodeLimits::default()
        });
        assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
        let over = options(DecodeLimits {
            max_bytes_len: 1,
            ..DecodeLimits::default()
        });
        let error = assert_limit(
            RequestFrame::decode_with(bytes, &over),
            "tagged field size",
            1000,
            1,
        );
        assert_eq!(error.path().to_string(), "<tag 100>", "{error}");
    }
}

#[test]
fn max_array_len_bounds_the_count_of_tagged_fields() {
    for in_header in [false, true] {
        let bytes = with_tagged_section(in_header, &many_unknown_tags(1000));
        let at_limit = options(DecodeLimits {
            max_array_len: 1000,
            ..DecodeLimits::default()
        });
        assert!(RequestFrame::decode_with(bytes.clone(), &at_limit).is_ok());
        let over = options(DecodeLimits {
            max_array_len: 1,
            ..DecodeLimits::default()
        });
        assert_limit(
            RequestFrame::decode_with(bytes, &over),
            "tagged field count",
            1000,
            1,
        );
    }
}

#[test]
fn unknown_tagged_fields_are_charged_to_the_memory_budget() {
    let bytes = with_tagged_section(false, &many_unknown_tags(1000));
    // 1,000 kept fields need 1,000 × size_of::<RawTaggedField>() bytes, and the `Vec` that
    // holds them sits behind `TaggedFields`' one pointer.
    let needed = std::mem::size_of::<Vec<kafka_codec::RawTaggedField>>()
        + 1000 * std::mem::size_of::<kafka_codec::RawTaggedField>();
    let enough = options(DecodeLimits {
        memory_budget: Some(needed),
        ..DecodeLimits::default()
    });
    assert!(RequestFrame::decode_with(bytes.clone(), &enough).is_ok());
    let short = options(DecodeLimits {
        memory_budget: Some(needed - 1),
        ..DecodeLimits::default()
    });
    assert_limit(
        RequestFrame::decode_with(bytes, &short),
        "memory budget",
        needed as u64,
        needed as u64 - 1,
    );
}
