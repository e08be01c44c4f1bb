//! `kafka-codec cluster`: the first stderr line names every broker, and each of them answers
//! Metadata listing them all; a wrong `--listen` is a usage error.

use crate::support::{assert_usage_error, BIN};
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ClientConnection;
use kafka_codec::messages::MetadataRequest;
use kafka_codec::{Request, Response};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_first_line_names_the_bootstrap_servers_and_each_broker_answers() {
    let mut child = Command::new(BIN)
        .args(["cluster", "--brokers", "3", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _running = Running(child);
    let mut log = BufReader::new(stderr);
    let mut first = String::new();
    log.read_line(&mut first).unwrap();
    let bootstrap = first
        .trim_end()
        .strip_prefix("kafka-codec cluster: bootstrap ")
        .unwrap_or_else(|| panic!("first line: {first:?}"));
    let addresses: Vec<&str> = bootstrap.split(',').collect();
    assert_eq!(addresses.len(), 3, "{bootstrap}");
    for address in &addresses {
        let mut tcp = TcpStream::connect(address).unwrap();
        // A hang guard, not a measurement.
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut client = ClientConnection::new();
        let mut out = BytesMut::new();
        client
            .send(12, &Request::from(MetadataRequest::default()), &mut out)
            .unwrap();
        tcp.write_all(&out).unwrap();
        let mut received = BytesMut::new();
        let response = loop {
            if let Some(response) = client.receive(&mut received).unwrap() {
                break response;
            }
            let mut chunk = [0u8; 4096];
            let n = tcp.read(&mut chunk).unwrap();
            assert!(n > 0, "{address} closed the connection");
            received.extend_from_slice(&chunk[..n]);
        };
        let Response::Metadata(metadata) = response.body else {
            panic!("not Metadata")
        };
        let listed: Vec<String> = metadata
            .brokers
            .iter()
            .map(|b| format!("{}:{}", b.host.as_str(), b.port))
            .collect();
        assert_eq!(listed, addresses, "{address}");
    }
    // Then one line per request: three Metadata requests, one to each broker.
    for node in 0..3 {
        let mut line = String::new();
        log.read_line(&mut line).unwrap();
        assert!(line.starts_with("kafka-codec cluster: ["), "{line:?}");
        assert!(
            line.trim_end()
                .ends_with(&format!("#0 Metadata v12 to broker {node}: answered")),
            "{line:?}"
        );
    }
}

#[test]
fn a_listen_address_without_a_port_is_a_usage_error() {
    assert_usage_error(&["cluster", "--listen", "127.0.0.1"]);
}

#[test]
fn as_version_answers_as_that_release() {
    let mut child = Command::new(BIN)
        .args(["cluster", "--as-version", "0.10"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _running = Running(child);
    // Kept open: the cluster writes a line per request to it.
    let mut log = BufReader::new(stderr);
    let mut first = String::new();
    log.read_line(&mut first).unwrap();
    let address = first
        .trim_end()
        .strip_prefix("kafka-codec cluster: bootstrap ")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .to_owned();
    let mut tcp = TcpStream::connect(&address).unwrap();
    // A hang guard, not a measurement.
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    client
        .send(
            0,
            &Request::from(kafka_codec::messages::ApiVersionsRequest::default()),
            &mut out,
        )
        .unwrap();
    tcp.write_all(&out).unwrap();
    let mut received = BytesMut::new();
    let response = loop {
        if let Some(response) = client.receive(&mut received).unwrap() {
            break response;
        }
        let mut chunk = [0u8; 4096];
        let n = tcp.read(&mut chunk).unwrap();
        assert!(n > 0, "{address} closed the connection");
        received.extend_from_slice(&chunk[..n]);
    };
    let Response::ApiVersions(versions) = response.body else {
        panic!("not ApiVersions")
    };
    // 0.10 is 0.10.0, whose Produce went up to the version the table (read from
    // kafka-clients 0.10.0.1) says.
    let release = kafka_codec_cluster::release::Release::parse("0.10.0").unwrap();
    let produce = versions
        .api_keys
        .iter()
        .find(|key| key.api_key == kafka_codec::ApiKey::Produce.key())
        .expect("Produce listed");
    assert_eq!(
        Some(produce.max_version),
        release
            .versions(kafka_codec::ApiKey::Produce.key())
            .map(|range| range.max)
    );
}

#[test]
fn an_unknown_release_is_a_usage_error() {
    assert_usage_error(&["cluster", "--as-version", "5.0"]);
    assert_usage_error(&["cluster", "--as-version", "latest"]);
}
