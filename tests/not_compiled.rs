//! A build that leaves an API out refuses that API's frames by name, saying which feature
//! would compile it. CI runs this file with `--no-default-features --features
//! client,broker,describe-quorum`; in a build with the `produce` feature it has no tests.
#![cfg(all(feature = "client", feature = "broker", not(feature = "produce")))]

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::DescribeQuorumRequest;
use kafka_codec::{ApiKey, DecodeErrorKind, RequestFrame, ResponseFrame};

fn produce_left_out() -> DecodeErrorKind {
    DecodeErrorKind::ApiNotCompiled {
        api: "Produce",
        feature: "produce",
    }
}

#[test]
fn frames_of_an_api_left_out_are_refused_by_name() {
    assert!(!ApiKey::Produce.is_enabled());
    assert!(ApiKey::DescribeQuorum.is_enabled() && ApiKey::ApiVersions.is_enabled());

    // ProduceRequest v9: request header v2 (key 0, version 9, correlation id 1, null client
    // id, no tagged fields); the body never gets read.
    let request = Bytes::from_static(&[0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0, 0]);
    let err = RequestFrame::decode(request).unwrap_err();
    assert_eq!(err.kind(), &produce_left_out());
    assert_eq!(
        err.to_string(),
        "API Produce is not compiled in: enable kafka-codec's `produce` feature (byte offset 11)"
    );

    // ProduceResponse v9: response header v1 (correlation id 1, no tagged fields).
    let response = Bytes::from_static(&[0, 0, 0, 1, 0, 0]);
    let err = ResponseFrame::decode(response, ApiKey::Produce, 9).unwrap_err();
    assert_eq!(err.kind(), &produce_left_out());

    // What is compiled still works.
    let frame = RequestFrame::new(DescribeQuorumRequest::default(), 2, 7);
    let bytes = frame.encode_to_bytes().unwrap();
    assert_eq!(RequestFrame::decode(bytes).unwrap(), frame);
}
