//! `decode` on captured bytes that are another protocol's: HTTP requests and responses, and TLS
//! records of every content type (written by rustls, a real TLS stack, in an in-memory
//! handshake), named for what they are in one line instead of failing as an absurd frame
//! size or an unknown API key.

use crate::support::assert_refused;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::path::PathBuf;
use std::sync::Arc;

/// A file of `bytes` in a directory of the test's own; removed when dropped.
struct Capture(PathBuf);

impl Capture {
    fn new(name: &str, bytes: &[u8]) -> Capture {
        let path = std::env::temp_dir().join(format!(
            "kafka-codec-not-kafka-{}-{name}.bin",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        Capture(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs every decode a capture might be given (a request or a response, with or without the
/// size prefix) on `bytes` and requires the one line `expected`, exit 1, nothing on stdout.
fn named(name: &str, bytes: &[u8], expected: &str) {
    let capture = Capture::new(name, bytes);
    let path = capture.path();
    let response = [
        "decode",
        "response",
        "--api-key",
        "ApiVersions",
        "--api-version",
        "3",
    ];
    for args in [
        vec!["decode", "request", "--size-prefixed", path],
        vec!["decode", "request", path],
        [&response[..], &["--size-prefixed", path]].concat(),
        [&response[..], &[path]].concat(),
    ] {
        let line = assert_refused(&args, b"", expected);
        assert_eq!(
            line.trim_end(),
            format!("kafka-codec: {expected}"),
            "{name}: {args:?}"
        );
    }
}

#[test]
fn http_requests_and_responses_are_named() {
    for method in [
        "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
    ] {
        let request = format!("{method} /v3/clusters HTTP/1.1\r\nHost: broker:9092\r\n\r\n");
        named(
            method,
            request.as_bytes(),
            "these bytes are an HTTP request, not a Kafka frame",
        );
    }
    named(
        "h2-preface",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "these bytes are an HTTP request, not a Kafka frame",
    );
    named(
        "http-response",
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        "these bytes are an HTTP response, not a Kafka frame",
    );
    named(
        "ssh",
        b"SSH-2.0-OpenSSH_9.6\r\n",
        "these bytes are an SSH greeting, not a Kafka frame",
    );
}

/// Every TLS record a client and a server wrote to each other in a full handshake at
/// `version`, then a little application data each way; and the alert a server answers a
/// Kafka request with.
fn tls_records(version: &'static rustls::SupportedProtocolVersion) -> Vec<Vec<u8>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let server_config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[version])
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert.der().to_vec())],
                PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
            )
            .unwrap(),
    );
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(ca.der().to_vec())).unwrap();
    let client_config = Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[version])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    let name = ServerName::try_from("localhost").unwrap();
    use std::io::Write;
    let mut client =
        rustls::Connection::from(rustls::ClientConnection::new(client_config, name).unwrap());
    let mut server =
        rustls::Connection::from(rustls::ServerConnection::new(server_config.clone()).unwrap());
    client.writer().write_all(b"ping").unwrap();
    server.writer().write_all(b"pong").unwrap();
    let mut wire = Vec::new();
    for _ in 0..10 {
        let there = pass(&mut client, &mut server, &mut wire);
        let back = pass(&mut server, &mut client, &mut wire);
        if !there && !back {
            break;
        }
    }
    assert!(!client.is_handshaking() && !server.is_handshaking());
    // A TLS listener given a plaintext Kafka request answers with an alert.
    let mut listener = rustls::ServerConnection::new(server_config).unwrap();
    let kafka_request = [0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff];
    listener.read_tls(&mut &kafka_request[..]).unwrap();
    assert!(listener.process_new_packets().is_err());
    let mut alert = Vec::new();
    while listener.wants_write() {
        listener.write_tls(&mut alert).unwrap();
    }
    wire.extend_from_slice(&alert);
    // Cut into records: content type, version, length, then the fragment.
    let mut records = Vec::new();
    let mut rest = &wire[..];
    while rest.len() >= 5 {
        let len = 5 + usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        records.push(rest[..len].to_vec());
        rest = &rest[len..];
    }
    assert!(rest.is_empty());
    records
}

/// Moves what `from` has to write to `to`, keeping a copy in `wire`; whether there was any.
fn pass(from: &mut rustls::Connection, to: &mut rustls::Connection, wire: &mut Vec<u8>) -> bool {
    let mut bytes = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut bytes).unwrap();
    }
    wire.extend_from_slice(&bytes);
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        to.read_tls(&mut rest).unwrap();
        to.process_new_packets().unwrap();
    }
    !bytes.is_empty()
}

#[test]
fn tls_records_of_every_type_are_named_with_the_likely_cause() {
    let mut seen = std::collections::BTreeSet::new();
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        for record in tls_records(version) {
            let kind = match record[0] {
                20 => "change cipher spec",
                21 => "alert",
                22 => "handshake",
                23 => "application data",
                other => panic!("record type {other}"),
            };
            if !seen.insert((record[0], record[2])) {
                continue; // one of each type and version is enough
            }
            named(
                &format!("tls-{}-{}", record[0], record[2]),
                &record,
                &format!(
                    "these bytes are a TLS record ({kind}), not a Kafka frame: was the capture \
                     taken on a TLS port?"
                ),
            );
        }
    }
    let types: std::collections::BTreeSet<u8> = seen.iter().map(|(t, _)| *t).collect();
    assert_eq!(types, [20, 21, 22, 23].into(), "{seen:?}");
}
