//! TLS on both sides of `kafka-codec tap`, on `quorum serve`'s listener and in `quorum
//! describe` (issue 20), with certificates made here by a test CA: a client speaking TLS to
//! the tap, the tap speaking TLS to a broker, every byte forwarded and every pair logged;
//! broker listeners opened by --rewrite-brokers keep TLS; and what goes wrong (a client
//! without TLS, an untrusted upstream, a certificate file that is not PEM) is one clear line.

use crate::support::BIN;
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ServerConnection;
use kafka_codec::messages::metadata_response::MetadataResponseBroker;
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::Framing;
use kafka_codec::{ApiKey, Request, RequestFrame, Response, ResponseFrame};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// A test CA and the files of one server certificate it signed (SANs 127.0.0.1, localhost).
pub(crate) struct Pki {
    pub(crate) dir: PathBuf,
    pub(crate) ca: PathBuf,
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

impl Pki {
    pub(crate) fn new(name: &str) -> Pki {
        let dir =
            std::env::temp_dir().join(format!("kafka-codec-tls-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "kafka-codec test CA");
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
        let pki = Pki {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            dir,
        };
        std::fs::write(&pki.ca, ca.pem()).unwrap();
        std::fs::write(&pki.cert, cert.pem()).unwrap();
        std::fs::write(&pki.key, key.serialize_pem()).unwrap();
        pki
    }

    pub(crate) fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let key = rustls::pki_types::PrivateKeyDer::from_pem_file(&self.key).unwrap();
        Arc::new(
            rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
        )
    }

    pub(crate) fn client_config(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&self.ca).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        Arc::new(
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
        )
    }

    pub(crate) fn path(path: &Path) -> &str {
        path.to_str().unwrap()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub(crate) type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

pub(crate) fn tls_connect(address: &str, config: &Arc<rustls::ClientConfig>) -> Tls {
    let tcp = TcpStream::connect(address).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(Arc::clone(config), name).unwrap();
    rustls::StreamOwned::new(connection, tcp)
}

/// A broker speaking TLS: a thread per connection, answering ApiVersions and Metadata (whose
/// broker list `metadata` gives).
fn tls_broker(pki: &Pki, metadata: Vec<MetadataResponseBroker>) -> SocketAddr {
    tls_broker_with(pki.server_config(), metadata)
}

/// [`tls_broker`] with its own TLS settings (its certificate, client certificates required).
pub(crate) fn tls_broker_with(
    config: Arc<rustls::ServerConfig>,
    metadata: Vec<MetadataResponseBroker>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { return };
            let (config, metadata) = (Arc::clone(&config), metadata.clone());
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                let mut server = ServerConnection::new();
                let (mut buf, mut chunk) = (BytesMut::new(), [0u8; 4096]);
                loop {
                    let n = match stream.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    while let Ok(Some(request)) = server.receive(&mut buf) {
                        let body: Response = match &request.body {
                            Request::ApiVersions(_) => ApiVersionsResponse::default().into(),
                            _ => MetadataResponse::default()
                                .with_brokers(metadata.clone())
                                .with_cluster_id(Some("tls".into()))
                                .into(),
                        };
                        let mut out = BytesMut::new();
                        server.send(&request.respond(body), &mut out).unwrap();
                        if stream
                            .write_all(&out)
                            .and_then(|()| stream.flush())
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            });
        }
    });
    address
}

/// A server command as a child, its stdout collected as JSON lines, its stderr as text.
pub(crate) struct Child2 {
    child: Child,
    pub(crate) address: String,
    lines: Arc<std::sync::Mutex<Vec<Value>>>,
    pub(crate) stderr: Arc<std::sync::Mutex<String>>,
}

pub(crate) fn start(args: &[&str], marker: &str) -> Child2 {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = loop {
        let line = stderr.next().expect("the server started").unwrap();
        if let Some((_, rest)) = line.split_once(marker) {
            break rest.split([',', ' ']).next().unwrap().to_owned();
        }
    };
    let text = Arc::new(std::sync::Mutex::new(String::new()));
    let collect = Arc::clone(&text);
    std::thread::spawn(move || {
        for line in stderr {
            let line = line.unwrap();
            collect.lock().unwrap().push_str(&line);
            collect.lock().unwrap().push('\n');
        }
    });
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&lines);
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines() {
            if let Ok(value) = serde_json::from_str(&line.unwrap()) {
                keep.lock().unwrap().push(value);
            }
        }
    });
    Child2 {
        child,
        address,
        lines,
        stderr: text,
    }
}

impl Child2 {
    pub(crate) fn wait_for(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if done(&lines) {
                return lines;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}: {lines:?}; stderr: {}",
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Child2 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn send(stream: &mut impl Write, version: i16, body: impl Into<Request>, id: i32) {
    let mut out = BytesMut::new();
    RequestFrame::new(body, version, id)
        .with_client_id("tls-test")
        .encode(&mut out, Framing::SizePrefixed)
        .unwrap();
    stream.write_all(&out).unwrap();
    stream.flush().unwrap();
}

pub(crate) fn receive(stream: &mut impl Read, api: ApiKey, version: i16) -> ResponseFrame {
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).unwrap();
    let mut frame = vec![0u8; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut frame).unwrap();
    ResponseFrame::decode(frame.into(), api, version).unwrap()
}

#[test]
fn the_tap_speaks_tls_to_clients_and_to_the_broker() {
    let pki = Pki::new("both-sides");
    // The second broker, which the first names in Metadata.
    let second = tls_broker(&pki, Vec::new());
    let first = tls_broker(
        &pki,
        vec![MetadataResponseBroker::default()
            .with_node_id(2)
            .with_host("127.0.0.1".into())
            .with_port(i32::from(second.port()))],
    );
    let tap = start(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &first.to_string(),
            "--rewrite-brokers",
            "--listen-tls-cert",
            Pki::path(&pki.cert),
            "--listen-tls-key",
            Pki::path(&pki.key),
            "--upstream-tls",
            "--upstream-ca",
            Pki::path(&pki.ca),
        ],
        "listening on ",
    );
    let config = pki.client_config();
    let mut client = tls_connect(&tap.address, &config);
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    receive(&mut client, ApiKey::ApiVersions, 3);
    send(&mut client, 12, MetadataRequest::default(), 2);
    let metadata = receive(&mut client, ApiKey::Metadata, 12);
    let Response::Metadata(metadata) = metadata.body else {
        panic!("not Metadata")
    };
    // The second broker is now a listener of the tap's, with TLS too.
    let broker = &metadata.brokers[0];
    assert_eq!(broker.host.as_str(), "127.0.0.1");
    assert_ne!(i32::from(second.port()), broker.port);
    let mut through = tls_connect(&format!("127.0.0.1:{}", broker.port), &config);
    send(&mut through, 3, ApiVersionsRequest::default(), 1);
    receive(&mut through, ApiKey::ApiVersions, 3);
    client.conn.send_close_notify();
    let _ = client.flush();
    drop((client, through));
    let lines = tap.wait_for("three pairs", |lines| {
        lines.iter().filter(|l| l["event"] == "pair").count() == 3
    });
    let listens: Vec<&Value> = lines.iter().filter(|l| l["event"] == "listen").collect();
    assert_eq!(listens.len(), 2);
    assert!(listens.iter().all(|l| l["tls"] == true));
    // The two connections' lines may come in either order: the Metadata pair is found by
    // its API, not its place.
    let metadata: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "pair" && l["api"] == "Metadata")
        .collect();
    assert_eq!(metadata.len(), 1, "{lines:#?}");
    assert_eq!(metadata[0]["response"]["body"]["clusterId"], "tls");
    assert!(metadata[0]["rewritten"].is_object());
}

#[test]
fn tls_failures_are_one_clear_line() {
    let pki = Pki::new("failures");
    let other = Pki::new("other-ca");
    let broker = tls_broker(&pki, Vec::new());
    // An upstream whose certificate the tap does not trust.
    let tap = start(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &broker.to_string(),
            "--upstream-tls",
            "--upstream-ca",
            Pki::path(&other.ca),
        ],
        "listening on ",
    );
    let mut client = TcpStream::connect(&tap.address).unwrap();
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let lines = tap.wait_for("the refused connect", |lines| {
        lines.iter().any(|l| l["event"] == "connect")
    });
    let connect = lines.iter().find(|l| l["event"] == "connect").unwrap();
    let error = connect["error"].as_str().unwrap();
    assert_eq!(
        error,
        // The other CA has the same name: the signature is what tells them apart.
        "cannot connect upstream: TLS handshake failed: the upstream's certificate's \
         signature does not verify with its issuer's key (a certificate of another CA with \
         the same name?): give --upstream-ca a PEM file with the CA that signed it (or the \
         certificate itself, if it is self-signed)"
    );
    drop(tap);

    // A client that does not speak TLS to a TLS listener.
    let tap = start(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &broker.to_string(),
            "--listen-tls-cert",
            Pki::path(&pki.cert),
            "--listen-tls-key",
            Pki::path(&pki.key),
        ],
        "listening on ",
    );
    let mut client = TcpStream::connect(&tap.address).unwrap();
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let lines = tap.wait_for("the refused client", |lines| {
        lines.iter().any(|l| l["event"] == "connect")
    });
    let error = lines[1]["error"].as_str().unwrap();
    assert!(
        error.starts_with("TLS handshake with the client failed: the client did not start TLS"),
        "{error}"
    );
    drop(tap);

    // Files that are not what the flags need.
    crate::support::assert_refused(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:9092",
            "--listen-tls-cert",
            Pki::path(&pki.key),
            "--listen-tls-key",
            Pki::path(&pki.key),
        ],
        b"",
        "no certificate in the file",
    );
    crate::support::assert_refused(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:9092",
            "--upstream-tls",
            "--upstream-ca",
            "/nonexistent/ca.pem",
        ],
        b"",
        "--upstream-ca /nonexistent/ca.pem",
    );
}

#[test]
fn quorum_serve_and_describe_speak_tls() {
    let pki = Pki::new("quorum");
    let server = start(
        &[
            "quorum",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--listen-tls-cert",
            Pki::path(&pki.cert),
            "--listen-tls-key",
            Pki::path(&pki.key),
        ],
        "listening on ",
    );
    let output = Command::new(BIN)
        .args([
            "quorum",
            "describe",
            "--bootstrap-controller",
            &server.address,
            "--tls",
            "--tls-ca",
            Pki::path(&pki.ca),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("CommittedVoters"), "{stdout}");
    // Without TLS the server sees garbage and says so; the client gets a clear line.
    let output = Command::new(BIN)
        .args([
            "quorum",
            "describe",
            "--bootstrap-controller",
            &server.address,
            "--timeout",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_tls_client_at_a_plaintext_tap_is_named_in_the_log() {
    let pki = Pki::new("plaintext-tap");
    let broker = tls_broker(&pki, Vec::new());
    let tap = start(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &broker.to_string(),
        ],
        "listening on ",
    );
    // A TLS client's ClientHello, read as a size prefix, is a frame of 369 MB.
    let tcp = TcpStream::connect(&tap.address).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let connection = rustls::ClientConnection::new(
        pki.client_config(),
        ServerName::try_from("127.0.0.1").unwrap(),
    )
    .unwrap();
    let mut client = rustls::StreamOwned::new(connection, tcp);
    let _ = client.write_all(b"x");
    drop(client);
    // The handshake's first record never ends as the frame it claims to be: the close line
    // names it.
    let lines = tap.wait_for("the close", |lines| {
        lines.iter().any(|l| l["event"] == "close")
    });
    let close = lines.iter().find(|l| l["event"] == "close").unwrap();
    let note = close["toServer"]["notKafka"].as_str().unwrap();
    assert!(
        note.contains("TLS") && note.contains("--listen-tls-cert"),
        "{note}"
    );
}
