//! A dependent of the packaged kafka-codec, built by `tools/package-check.sh` outside the
//! workspace: it proves that the published files build and work, not the repository's.
//! It calls only `new`, `encode_to_bytes`, `encoded_len`, `peek_api` and the frames' plain
//! `decode`, and sets fields one by one (no struct literals), so it does not depend on how
//! the frame API spells framing or whether the generated structs are `#[non_exhaustive]`.

// Buffers through the crate's re-export, as the docs tell dependents to do.
use kafka_codec::bytes::{BufMut, BytesMut};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::MetadataRequest;
use kafka_codec::{ApiKey, RequestFrame, Response, ResponseFrame};

fn main() {
    // Encode: a Metadata v12 request for one topic, as a client writes it.
    let mut topic = MetadataRequestTopic::default();
    topic.name = Some("orders".into());
    let mut request = MetadataRequest::default();
    request.topics = Some(vec![topic]);
    let frame = RequestFrame::new(request, 12, 7).with_client_id("package-check");
    let bytes = frame.encode_to_bytes().expect("encode");
    assert_eq!(bytes.len(), frame.encoded_len().expect("encoded_len"));
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
    let mut response = BytesMut::new();
    response.put_i32(7); // correlation id
    response.put_i32(0); // brokers: empty array
    response.put_i32(0); // topics: empty array
    let decoded =
        ResponseFrame::decode(response.freeze(), ApiKey::Metadata, 0).expect("decode response");
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
