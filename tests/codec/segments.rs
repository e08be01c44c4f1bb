//! Segmented encode (`kafka_codec::wire::Segments`): the segments in order are exactly the
//! plain encode, large `bytes`/`records` values are the message's own `Bytes` (same pointer,
//! no copy), the size prefix is right, and errors are the plain encode's.
//!
//! Every message at every version is covered by `tests/codec/roundtrip.rs` (segments concatenated
//! equal the plain encode, for random messages, sharing every non-empty value); this file
//! checks what sharing means for the fields that carry big values.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_codec::conn::{ClientConnection, ServerConnection};
use kafka_codec::messages::{
    fetch_response, produce_request, EnvelopeRequest, FetchRequest, FetchResponse, MetadataRequest,
    ProduceRequest, SaslAuthenticateRequest,
};
use kafka_codec::wire::{Segments, DEFAULT_SHARE_THRESHOLD};
use kafka_codec::Framing;
use kafka_codec::{EncodeErrorKind, Message, Request, RequestFrame, Response, ResponseFrame};
use std::io::{IoSlice, Write};

/// `n` distinct record blobs of `len` bytes (contents do not matter to the codec, only that
/// each is its own allocation).
fn blobs(n: usize, len: usize) -> Vec<Bytes> {
    (0..n).map(|i| Bytes::from(vec![i as u8; len])).collect()
}

fn fetch_response(records: &[Option<Bytes>]) -> FetchResponse {
    FetchResponse::default().with_responses(vec![fetch_response::FetchableTopicResponse::default()
        .with_topic("t".into())
        .with_partitions(
            records
                .iter()
                .enumerate()
                .map(|(i, records)| {
                    fetch_response::PartitionData::default()
                        .with_partition_index(i as i32)
                        .with_high_watermark(1000)
                        .with_records(records.clone())
                })
                .collect(),
        )])
}

fn produce_request(records: &[Bytes]) -> ProduceRequest {
    ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![produce_request::TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(
                records
                    .iter()
                    .enumerate()
                    .map(|(i, records)| {
                        produce_request::PartitionProduceData::default()
                            .with_index(i as i32)
                            .with_records(Some(records.clone()))
                    })
                    .collect(),
            )])
}

/// Which of `values` appear as a whole segment of `segments`, pointer and length equal.
fn shared(segments: &Segments, values: &[Bytes]) -> Vec<bool> {
    values
        .iter()
        .map(|value| {
            segments
                .chunks()
                .any(|chunk| chunk.as_ptr() == value.as_ptr() && chunk.len() == value.len())
        })
        .collect()
}

fn concat(segments: &Segments) -> Vec<u8> {
    segments.chunks().flatten().copied().collect()
}

#[test]
fn fetch_records_are_shared_at_every_version() {
    let records = blobs(10, 64 * 1024);
    let some: Vec<Option<Bytes>> = records.iter().cloned().map(Some).collect();
    let response = fetch_response(&some);
    for version in FetchResponse::VALID_VERSIONS.min..=FetchResponse::VALID_VERSIONS.max {
        let plain = response.encode_to_bytes(version).unwrap();
        let segments = response.encode_segments(version).unwrap();
        assert_eq!(segments.len(), plain.len(), "v{version}");
        assert_eq!(concat(&segments), plain, "v{version}");
        assert_eq!(shared(&segments, &records), vec![true; 10], "v{version}");
        // Owned bytes between records: one chunk before each, and one after the last where
        // anything follows it (tagged sections, in flexible versions).
        let expected = if version >= 12 { 21 } else { 20 };
        assert_eq!(segments.segment_count(), expected, "v{version}");
        let owned: usize = segments
            .chunks()
            .filter(|c| c.len() != 64 * 1024)
            .map(<[u8]>::len)
            .sum();
        assert!(owned < 1024, "v{version}: {owned} owned bytes");
    }
}

#[test]
fn produce_records_are_shared_at_every_version() {
    let records = blobs(3, 20_000);
    let request = produce_request(&records);
    for version in ProduceRequest::VALID_VERSIONS.min..=ProduceRequest::VALID_VERSIONS.max {
        let plain = request.encode_to_bytes(version).unwrap();
        let segments = request.encode_segments(version).unwrap();
        assert_eq!(concat(&segments), plain, "v{version}");
        assert_eq!(shared(&segments, &records), vec![true; 3], "v{version}");
    }
}

#[test]
fn threshold_small_values_copied_null_and_empty_records() {
    let below = Bytes::from(vec![1u8; DEFAULT_SHARE_THRESHOLD - 1]);
    let at = Bytes::from(vec![2u8; DEFAULT_SHARE_THRESHOLD]);
    let response = fetch_response(&[
        Some(below.clone()),
        None,
        Some(Bytes::new()),
        Some(at.clone()),
    ]);
    for version in [4, 11, 12, 17, 18] {
        let segments = response.encode_segments(version).unwrap();
        assert_eq!(
            concat(&segments),
            response.encode_to_bytes(version).unwrap()
        );
        assert_eq!(
            shared(&segments, &[below.clone(), at.clone()]),
            [false, true]
        );
    }
    // Another threshold: into `Segments` built with it.
    let mut all = Segments::new().with_share_threshold(1);
    response.encode(&mut all, 17).unwrap();
    assert_eq!(shared(&all, &[below.clone(), at.clone()]), [true, true]);
    let mut none = Segments::new().with_share_threshold(usize::MAX);
    response.encode(&mut none, 17).unwrap();
    assert_eq!(shared(&none, &[below, at]), [false, false]);
    assert_eq!(none.into_bytes(), all.into_bytes());
}

#[test]
fn plain_bytes_fields_are_shared_too() {
    let token = Bytes::from(vec![9u8; 10_000]);
    let request = SaslAuthenticateRequest::default().with_auth_bytes(token.clone());
    for version in 0..=2 {
        let segments = request.encode_segments(version).unwrap();
        assert_eq!(concat(&segments), request.encode_to_bytes(version).unwrap());
        assert_eq!(shared(&segments, std::slice::from_ref(&token)), [true]);
    }
    // Non-nullable and nullable `bytes` in one message, with a small one between.
    let (data, principal) = (
        Bytes::from(vec![3u8; 50_000]),
        Bytes::from(vec![4u8; 5_000]),
    );
    let request = EnvelopeRequest::default()
        .with_request_data(data.clone())
        .with_request_principal(Some(principal.clone()))
        .with_client_host_address(Bytes::from_static(&[127, 0, 0, 1]));
    let segments = request.encode_segments(0).unwrap();
    assert_eq!(concat(&segments), request.encode_to_bytes(0).unwrap());
    assert_eq!(shared(&segments, &[data, principal]), [true, true]);
}

#[test]
fn frames_carry_the_size_prefix() {
    let records = blobs(2, 100_000);
    let some: Vec<Option<Bytes>> = records.iter().cloned().map(Some).collect();
    let response = ResponseFrame::new(fetch_response(&some), 18, 42);
    let segments = response.encode_segments(Framing::SizePrefixed).unwrap();
    let mut plain = BytesMut::new();
    response.encode(&mut plain, Framing::SizePrefixed).unwrap();
    assert_eq!(concat(&segments), plain);
    let size = i32::from_be_bytes(segments.chunk()[..4].try_into().unwrap());
    assert_eq!(size as usize, response.encoded_len().unwrap());
    assert_eq!(size as usize + 4, segments.len());
    assert_eq!(shared(&segments, &records), [true, true]);
    let prefixed = kafka_codec::DecodeOptions::default().with_framing(Framing::SizePrefixed);
    let decoded = ResponseFrame::decode_with(
        segments.into_bytes(),
        kafka_codec::ApiKey::Fetch,
        18,
        &prefixed,
    )
    .unwrap();
    let Response::Fetch(body) = decoded.body else {
        panic!("not a Fetch response")
    };
    assert!(body.responses[0].partitions[1].records.as_ref() == Some(&records[1]));

    let records = blobs(1, 70_000);
    let request = RequestFrame::new(produce_request(&records), 13, 7).with_client_id("c");
    let segments = request.encode_segments(Framing::SizePrefixed).unwrap();
    let mut plain = Vec::new();
    request.encode(&mut plain, Framing::SizePrefixed).unwrap();
    assert_eq!(concat(&segments), plain);
    assert_eq!(shared(&segments, &records), [true]);
}

#[test]
fn errors_are_the_plain_encodes() {
    let response = fetch_response(&[Some(Bytes::from(vec![0u8; 10_000]))]);
    // A version the message does not have.
    let plain = response.encode_to_bytes(99).unwrap_err();
    let segmented = response.encode_segments(99).unwrap_err();
    assert_eq!(segmented.to_string(), plain.to_string());
    assert!(matches!(
        plain.kind(),
        EncodeErrorKind::UnsupportedVersion { .. }
    ));
    // A field the version cannot carry, found after a shared value was written.
    let mut late = response.clone();
    late.node_endpoints = vec![Default::default()];
    let plain = late.encode_to_bytes(15).unwrap_err();
    let segmented = late.encode_segments(15).unwrap_err();
    assert_eq!(segmented.to_string(), plain.to_string());
    assert_eq!(segmented.kind(), &EncodeErrorKind::FieldNotInVersion);
    // A frame whose header names another API than its body.
    let mut frame = RequestFrame::new(MetadataRequest::default(), 12, 1);
    frame.header.request_api_key = 0;
    let plain = frame.encode_to_bytes().unwrap_err();
    let segmented = frame.encode_segments(Framing::SizePrefixed).unwrap_err();
    assert_eq!(segmented.to_string(), plain.to_string());
}

#[test]
fn a_vectored_write_sends_the_chain() {
    let records = blobs(10, 64 * 1024);
    let some: Vec<Option<Bytes>> = records.iter().cloned().map(Some).collect();
    let frame = ResponseFrame::new(fetch_response(&some), 18, 1);
    let mut segments = frame.encode_segments(Framing::SizePrefixed).unwrap();
    let mut plain = Vec::new();
    frame.encode(&mut plain, Framing::SizePrefixed).unwrap();

    // A writer that takes at most 100,000 bytes per call, as a socket might.
    struct Socket {
        got: Vec<u8>,
        calls: usize,
    }
    impl Write for Socket {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
            self.calls += 1;
            let mut budget = 100_000;
            let start = self.got.len();
            for buf in bufs {
                let n = buf.len().min(budget);
                self.got.extend_from_slice(&buf[..n]);
                budget -= n;
            }
            Ok(self.got.len() - start)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut socket = Socket {
        got: Vec::new(),
        calls: 0,
    };
    while segments.has_remaining() {
        let mut slices = [IoSlice::new(&[]); 64];
        let n = segments.chunks_vectored(&mut slices);
        let written = socket.write_vectored(&slices[..n]).unwrap();
        segments.advance(written);
    }
    assert_eq!(socket.got, plain);
    assert_eq!(socket.calls, plain.len().div_ceil(100_000));
}

#[test]
fn connections_queue_segments() {
    let mut client = ClientConnection::new().with_client_id("seg");
    let mut server = ServerConnection::new();

    // Client: a Produce with large records, segmented, equals the plain send.
    let records = blobs(2, 30_000);
    let produce = Request::from(produce_request(&records));
    let mut queue = Segments::new();
    let mut twin = ClientConnection::new().with_client_id("seg");
    let mut plain = BytesMut::new();
    let sent = client.send_segments(13, &produce, &mut queue).unwrap();
    assert_eq!(twin.send(13, &produce, &mut plain).unwrap(), sent);
    assert_eq!(concat(&queue), plain);
    assert_eq!(shared(&queue, &records), [true, true]);
    // An error appends nothing and takes no correlation id.
    let before = queue.len();
    assert!(client.send_segments(99, &produce, &mut queue).is_err());
    assert_eq!(queue.len(), before);
    let fetch = Request::from(FetchRequest::default());
    let next = client.send_segments(18, &fetch, &mut queue).unwrap();
    assert_eq!(next.correlation_id, sent.correlation_id + 1);

    // Server: reads both requests from the queue's bytes, answers in order.
    let mut to_server = BytesMut::new();
    to_server.put(queue);
    let produce_in = server.receive(&mut to_server).unwrap().unwrap();
    let fetch_in = server.receive(&mut to_server).unwrap().unwrap();
    let fetched = blobs(3, 50_000);
    let answer = fetch_in.respond(fetch_response(
        &fetched.iter().cloned().map(Some).collect::<Vec<_>>(),
    ));
    let mut out = Segments::new();
    // Out of order: refused, nothing appended.
    assert!(server.send_segments(&answer, &mut out).is_err());
    assert!(out.is_empty());
    let produced = produce_in.respond(kafka_codec::messages::ProduceResponse::default());
    server.send_segments(&produced, &mut out).unwrap();
    server.send_segments(&answer, &mut out).unwrap();
    assert_eq!(shared(&out, &fetched), [true; 3]);

    let mut to_client = BytesMut::new();
    to_client.put(out);
    assert_eq!(client.receive(&mut to_client).unwrap().unwrap(), produced);
    let response = client.receive(&mut to_client).unwrap().unwrap();
    let Response::Fetch(body) = &response.body else {
        panic!("not a Fetch response: {response:?}")
    };
    assert_eq!(
        body.responses[0].partitions[2].records,
        Some(fetched[2].clone())
    );
}
