//! A dependent of the packaged kafka-codec, built by `tools/package-check.sh` outside the
//! workspace: it proves that the published files build and work, not the repository's.

// Buffers through the crate's re-export, as the docs tell dependents to do.
use kafka_codec::bytes::{Buf, Bytes, BytesMut};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::MetadataRequest;
use kafka_codec::{ApiKey, RequestFrame, Response, ResponseFrame};

fn main() {
    // Encode: a Metadata v12 request for one topic, size-prefixed, as a client writes it.
    // Field by field rather than a struct literal: it works whether or not the generated
    // structs are `#[non_exhaustive]`, which would refuse a dependent's literal.
    let mut topic = MetadataRequestTopic::default();
    topic.name = Some("orders".into());
    let mut request = MetadataRequest::default();
    request.topics = Some(vec![topic]);
    let frame = RequestFrame::new(request, 12, 7).with_client_id("package-check");
    let mut buf = BytesMut::new();
    frame.encode_size_prefixed(&mut buf).expect("encode");
    let len = buf.get_i32() as usize;
    assert_eq!(len, buf.len(), "size prefix");
    assert_eq!(len, frame.encoded_len().expect("encoded_len"));
    let bytes = buf.freeze();
    assert_eq!(
        RequestFrame::peek_api(&bytes).expect("peek"),
        (ApiKey::Metadata, 12)
    );
    // The topic name is on the wire (compact string: length + 1, then the bytes).
    assert!(bytes.windows(7).any(|w| w == b"\x07orders"));

    // Decoding requests is the broker's half: only in the build that has it.
    #[cfg(feature = "broker")]
    assert_eq!(RequestFrame::decode(bytes.clone()).expect("decode"), frame);

    // Decode: a Metadata v0 response (correlation id 7, no brokers, no topics), as a client
    // reads it.
    let response = Bytes::from_static(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
    let decoded = ResponseFrame::decode(response, ApiKey::Metadata, 0).expect("decode response");
    assert_eq!(decoded.header.correlation_id, 7);
    match decoded.body {
        Response::Metadata(body) => assert!(body.brokers.is_empty() && body.topics.is_empty()),
        #[allow(unreachable_patterns)]
        other => panic!("expected a Metadata response, got {other:?}"),
    }
    println!(
        "package-check: Metadata v12 request ({} bytes) encoded, v0 response decoded",
        bytes.len()
    );
}
