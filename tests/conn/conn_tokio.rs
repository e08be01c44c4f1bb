//! The tokio codecs (`kafka_codec::conn::tokio`, feature `tokio`) over an in-memory duplex
//! pipe: a client and a server task talk through `Framed`.
#![cfg(feature = "tokio")]

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use kafka_codec::conn::tokio::{ClientCodec, CodecError, OutgoingRequest, ServerCodec};
use kafka_codec::conn::{
    ApiVersionsReply, ClientConnection, ConnError, ServerConnection, SupportedVersions,
};
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse, ProduceRequest,
    ProduceResponse,
};
use kafka_codec::ErrorCode;
use kafka_codec::{ApiKey, DecodeLimits, DecodeOptions, Request, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::Framed;

/// A server that answers ApiVersions with `table`, Metadata with the request's version as
/// its controller id, and Produce with an empty answer, until the client hangs up.
async fn serve(socket: tokio::io::DuplexStream, table: SupportedVersions) -> usize {
    let mut framed = Framed::new(socket, ServerCodec::new(ServerConnection::new()));
    let mut answered = 0;
    while let Some(request) = framed.next().await {
        let request = request.expect("a request that decodes");
        if !request.expects_response() {
            continue;
        }
        let body: Response = match &request.body {
            Request::ApiVersions(_) => ApiVersionsResponse::default()
                .with_api_keys(table.to_api_keys())
                .into(),
            Request::Metadata(_) => MetadataResponse::default()
                .with_controller_id(i32::from(request.api_version))
                .into(),
            Request::Produce(_) => ProduceResponse::default().into(),
            other => panic!("unexpected {:?}", other.api_key()),
        };
        framed.send(request.respond(body)).await.expect("send");
        answered += 1;
    }
    answered
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_negotiates_and_pipelines_through_framed() {
    let (client_end, server_end) = tokio::io::duplex(256);
    let table = SupportedVersions::stable([ApiKey::ApiVersions, ApiKey::Metadata, ApiKey::Produce]);
    let server = tokio::spawn(serve(server_end, table.clone()));

    let connection = ClientConnection::new().with_client_id("tokio-test");
    let mut client = Framed::new(client_end, ClientCodec::new(connection));
    let version = ApiVersionsReply::first_version();
    client
        .send(OutgoingRequest::new(version, ApiVersionsRequest::default()))
        .await
        .unwrap();
    let response = client.next().await.unwrap().unwrap();
    let Response::ApiVersions(body) = &response.body else {
        panic!("{response:?}")
    };
    let ApiVersionsReply::Supported(peer) = ApiVersionsReply::read(body, version).unwrap() else {
        panic!("fallback")
    };
    assert_eq!(peer, table);

    // 300 requests in flight at once (the duplex holds only 256 bytes, so writes and reads
    // interleave), every tenth an acks=0 Produce that gets no answer.
    let metadata = peer.negotiate(ApiKey::Metadata).unwrap();
    let produce = peer.negotiate(ApiKey::Produce).unwrap();
    let mut expected = Vec::new();
    let (mut sink, mut stream) = client.split();
    let writer = async {
        for i in 0..300 {
            let request = if i % 10 == 3 {
                OutgoingRequest::new(produce, ProduceRequest::default())
            } else {
                let version = metadata - (i % 3) as i16;
                expected.push(version);
                OutgoingRequest::new(version, MetadataRequest::default())
            };
            sink.feed(request).await.unwrap();
        }
        sink.flush().await.unwrap();
        sink
    };
    let reader = async {
        let mut got = Vec::new();
        while got.len() < 270 {
            let response = stream.next().await.unwrap().unwrap();
            let Response::Metadata(body) = response.body else {
                panic!("{:?}", response.body)
            };
            assert_eq!(body.controller_id, i32::from(response.api_version));
            got.push(response.api_version);
        }
        got
    };
    let (sink, got) = tokio::join!(writer, reader);
    assert_eq!(got, expected);
    let client = sink.reunite(stream).unwrap();
    assert_eq!(client.codec().connection().in_flight().len(), 0);

    drop(client);
    assert_eq!(server.await.unwrap(), 1 + 270);
}

#[tokio::test(flavor = "current_thread")]
async fn the_server_codec_answers_an_unknown_api_versions_the_kafka_way() {
    let (mut raw, server_end) = tokio::io::duplex(1024);
    let server = tokio::spawn(async move {
        let mut framed = Framed::new(server_end, ServerCodec::new(ServerConnection::new()));
        let request = framed.next().await.unwrap().unwrap();
        assert!(request.is_unsupported_api_versions());
        framed
            .send(request.unsupported_api_versions_response(ApiKey::ApiVersions.valid_versions()))
            .await
            .unwrap();
    });
    // Written by the sans-IO client into a buffer, sent as raw bytes.
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let newer = ApiKey::ApiVersions.valid_versions().max + 1;
    client
        .send_encoded(ApiKey::ApiVersions, newer, &[0], true, &mut out)
        .unwrap();
    raw.write_all(&out).await.unwrap();
    let mut answer = BytesMut::new();
    loop {
        if let Some(response) = client.receive(&mut answer).unwrap() {
            assert_eq!(response.api_version, 0);
            assert_eq!(
                response.body.error_code(),
                Some(ErrorCode::UNSUPPORTED_VERSION)
            );
            break;
        }
        assert!(raw.read_buf(&mut answer).await.unwrap() > 0, "closed early");
    }
    server.await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_peer_that_hangs_up_mid_frame_or_lies_about_sizes_ends_the_stream_with_an_error() {
    // Half a frame, then EOF: an I/O error, not a hang and not a silent end.
    let (mut raw, client_end) = tokio::io::duplex(1024);
    let mut client = Framed::new(client_end, ClientCodec::default());
    client
        .send(OutgoingRequest::new(12, MetadataRequest::default()))
        .await
        .unwrap();
    raw.write_all(&[0, 0, 0, 40, 0, 0, 0]).await.unwrap();
    drop(raw);
    assert!(matches!(client.next().await, Some(Err(CodecError::Io(_)))));

    // A size above the limit: refused from the prefix alone.
    let (mut raw, server_end) = tokio::io::duplex(1024);
    let options = DecodeOptions {
        limits: DecodeLimits {
            max_frame_size: 1024,
            ..DecodeLimits::default()
        },
        ..DecodeOptions::default()
    };
    let mut server = Framed::new(
        server_end,
        ServerCodec::new(ServerConnection::new().with_options(options)),
    );
    raw.write_all(&(1i32 << 20).to_be_bytes()).await.unwrap();
    assert!(matches!(
        server.next().await,
        Some(Err(CodecError::Conn(ConnError::Framing(_))))
    ));
}
