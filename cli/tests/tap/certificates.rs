//! The certificates people use (issue 24): a self-signed upstream certificate with `CA:TRUE`
//! trusted because it is itself in `--upstream-ca` (its name and dates still checked), client
//! certificates both ways (`--listen-tls-client-ca`, `--upstream-tls-cert/--upstream-tls-key`,
//! `quorum serve|describe`), and every TLS failure said in words. Certificates are made here
//! with rcgen.

use crate::support::BIN;
use crate::tls::{receive, send, start, tls_broker_with, Child2, WAIT};
use kafka_codec::messages::metadata_response::MetadataResponseBroker;
use kafka_codec::messages::{ApiVersionsRequest, MetadataRequest};
use kafka_codec::serde_json::Value;
use kafka_codec::{ApiKey, Response};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A temporary directory of PEM files, removed when dropped.
struct Files(PathBuf);

impl Files {
    fn new(name: &str) -> Files {
        let dir =
            std::env::temp_dir().join(format!("kafka-codec-certs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Files(dir)
    }

    /// Writes `contents` to `name`; its path, as text for a flag.
    fn write(&self, name: &str, contents: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A certificate and its key, as PEM.
struct Identity {
    cert: String,
    key: String,
}

impl Identity {
    fn chain(&self) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(self.cert.as_bytes())
            .map(Result::unwrap)
            .collect()
    }

    fn private_key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::from_pem_slice(self.key.as_bytes()).unwrap()
    }
}

/// What a certificate is made with.
fn params(common_name: &str, names: &[&str]) -> rcgen::CertificateParams {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = rcgen::CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    params
}

/// A self-signed certificate as `openssl req -x509 -addext subjectAltName=…` makes one:
/// basic constraints CA:TRUE, the names as subjectAltName; expired in 2001 if `expired`.
fn self_signed(common_name: &str, names: &[&str], expired: bool) -> Identity {
    let mut params = params(common_name, names);
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    if expired {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    }
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Identity {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// A certificate authority that signs server and client certificates.
struct Ca {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = params(name, &[]);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }

    fn sign(&self, common_name: &str, names: &[&str]) -> Identity {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params(common_name, names)
            .signed_by(&key, &self.cert, &self.key)
            .unwrap();
        Identity {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    fn roots(&self) -> rustls::RootCertStore {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.cert.der().clone()).unwrap();
        roots
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A TLS server's settings: `identity`, and client certificates of `clients` required.
fn server_config(identity: &Identity, clients: Option<&Ca>) -> Arc<rustls::ServerConfig> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match clients {
        None => builder.with_no_client_auth(),
        Some(ca) => builder.with_client_cert_verifier(
            rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(ca.roots()),
                provider(),
            )
            .build()
            .unwrap(),
        ),
    };
    Arc::new(
        builder
            .with_single_cert(identity.chain(), identity.private_key())
            .unwrap(),
    )
}

/// A TLS client's settings: trusting `ca`, presenting `identity` if given.
fn client_config(ca: &Ca, identity: Option<&Identity>) -> Arc<rustls::ClientConfig> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(ca.roots());
    Arc::new(match identity {
        None => builder.with_no_client_auth(),
        Some(identity) => builder
            .with_client_auth_cert(identity.chain(), identity.private_key())
            .unwrap(),
    })
}

fn tls_client(address: &str, config: Arc<rustls::ClientConfig>) -> crate::tls::Tls {
    let tcp = TcpStream::connect(address).unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    rustls::StreamOwned::new(rustls::ClientConnection::new(config, name).unwrap(), tcp)
}

fn start_tap(upstream: SocketAddr, flags: &[&str]) -> Child2 {
    let upstream = upstream.to_string();
    let mut args = vec!["tap", "--listen", "127.0.0.1:0", "--upstream", &upstream];
    args.extend_from_slice(flags);
    start(&args, "listening on ")
}

/// The tap's `connect` lines once there are `count`.
fn connects(tap: &Child2, count: usize) -> Vec<Value> {
    tap.wait_for("connect lines", |lines| {
        lines.iter().filter(|l| l["event"] == "connect").count() >= count
    })
    .into_iter()
    .filter(|l| l["event"] == "connect")
    .collect()
}

/// A plaintext client's ApiVersions through a tap with `flags` to `upstream`: the tap's
/// connect line, once the answer came back (or the tap said why not).
fn through_tap(upstream: SocketAddr, flags: &[&str]) -> Value {
    let tap = start_tap(upstream, flags);
    let mut client = TcpStream::connect(&tap.address).unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let connect = connects(&tap, 1).remove(0);
    if connect.get("error").is_none() {
        receive(&mut client, ApiKey::ApiVersions, 3);
    }
    connect
}

fn error(connect: &Value) -> &str {
    connect["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {connect}"))
}

#[test]
fn a_self_signed_ca_certificate_in_the_ca_file_is_trusted_as_itself() {
    let files = Files::new("pinned");
    let good = self_signed("broker", &["127.0.0.1", "localhost"], false);
    let misnamed = self_signed("elsewhere", &["kafka.example", "10.1.2.3"], false);
    let expired = self_signed("old broker", &["127.0.0.1"], true);
    let unlisted = self_signed("unlisted broker", &["127.0.0.1"], false);
    let ca = files.write(
        "ca.pem",
        &[&good.cert, &misnamed.cert, &expired.cert]
            .map(String::as_str)
            .concat(),
    );
    let tls = ["--upstream-tls", "--upstream-ca", &ca];

    // In the file, for the name connected to, valid now: accepted, the answer forwarded.
    let broker = tls_broker_with(server_config(&good, None), Vec::new());
    let connect = through_tap(broker, &tls);
    assert!(connect.get("error").is_none(), "{connect}");

    // In the file but for other names: refused, naming both.
    let broker = tls_broker_with(server_config(&misnamed, None), Vec::new());
    let connect = through_tap(broker, &tls);
    assert_eq!(
        error(&connect),
        "cannot connect upstream: TLS handshake failed: the upstream's certificate is not \
         for 127.0.0.1: it names kafka.example, 10.1.2.3; connect by one of its names, or \
         give --upstream-server-name with one of them"
    );
    // ... and accepted under one of its names.
    let connect = through_tap(
        broker,
        &[&tls[..], &["--upstream-server-name", "kafka.example"]].concat(),
    );
    assert!(connect.get("error").is_none(), "{connect}");

    // In the file but expired: refused, with the date.
    let broker = tls_broker_with(server_config(&expired, None), Vec::new());
    let connect = through_tap(broker, &tls);
    let message = error(&connect);
    assert!(
        message.starts_with(
            "cannot connect upstream: TLS handshake failed: the upstream's certificate \
             expired on 2001-01-01T00:00:00Z (it is now "
        ) && message.ends_with("): renew it"),
        "{message}"
    );

    // Signed by a CA that is not in the file.
    let signed = Ca::new("another CA").sign("broker", &["127.0.0.1"]);
    let broker = tls_broker_with(server_config(&signed, None), Vec::new());
    let connect = through_tap(broker, &tls);
    assert_eq!(
        error(&connect),
        "cannot connect upstream: TLS handshake failed: the upstream's certificate is not \
         signed by a trusted certificate authority: give --upstream-ca a PEM file with the CA \
         that signed it (or the certificate itself, if it is self-signed)"
    );

    // Not in the file: refused, saying what it is and what would trust it.
    let broker = tls_broker_with(server_config(&unlisted, None), Vec::new());
    let connect = through_tap(broker, &tls);
    assert_eq!(
        error(&connect),
        "cannot connect upstream: TLS handshake failed: the upstream's certificate is a CA \
         certificate (basic constraints CA:TRUE), not a server certificate, and it is not \
         itself in --upstream-ca: put that very certificate in --upstream-ca to trust it as \
         it is, or give the server a certificate signed by a CA"
    );
}

#[test]
fn client_certificates_both_ways_through_the_tap_and_its_broker_listeners() {
    let files = Files::new("mtls");
    let ca = Ca::new("kafka-codec test CA");
    let server = ca.sign("tap and broker", &["127.0.0.1"]);
    let tap_client = ca.sign("the tap", &[]);
    let app = ca.sign("app one", &[]);
    let ca_file = files.write("ca.pem", &ca.pem());
    let server_cert = files.write("server.pem", &server.cert);
    let server_key = files.write("server.key", &server.key);
    let tap_cert = files.write("tap.pem", &tap_client.cert);
    let tap_key = files.write("tap.key", &tap_client.key);
    // Two brokers that require client certificates; the first names the second.
    let second = tls_broker_with(server_config(&server, Some(&ca)), Vec::new());
    let first = tls_broker_with(
        server_config(&server, Some(&ca)),
        vec![MetadataResponseBroker::default()
            .with_node_id(2)
            .with_host("127.0.0.1".into())
            .with_port(i32::from(second.port()))],
    );
    let tap = start_tap(
        first,
        &[
            "--rewrite-brokers",
            "--listen-tls-cert",
            &server_cert,
            "--listen-tls-key",
            &server_key,
            "--listen-tls-client-ca",
            &ca_file,
            "--upstream-tls",
            "--upstream-ca",
            &ca_file,
            "--upstream-tls-cert",
            &tap_cert,
            "--upstream-tls-key",
            &tap_key,
        ],
    );
    let with_cert = client_config(&ca, Some(&app));
    let mut client = tls_client(&tap.address, Arc::clone(&with_cert));
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    receive(&mut client, ApiKey::ApiVersions, 3);
    send(&mut client, 12, MetadataRequest::default(), 2);
    let Response::Metadata(metadata) = receive(&mut client, ApiKey::Metadata, 12).body else {
        panic!("not Metadata")
    };
    // The second broker's listener of the tap's asks for client certificates too.
    let second_listener = format!("127.0.0.1:{}", metadata.brokers[0].port);
    let mut through = tls_client(&second_listener, with_cert);
    send(&mut through, 3, ApiVersionsRequest::default(), 1);
    receive(&mut through, ApiKey::ApiVersions, 3);
    let mut without = tls_client(&second_listener, client_config(&ca, None));
    send(&mut without, 3, ApiVersionsRequest::default(), 1);
    let connects = connects(&tap, 3);
    let (good, refused): (Vec<&Value>, Vec<&Value>) =
        connects.iter().partition(|c| c.get("error").is_none());
    assert_eq!(good.len(), 2, "{connects:?}");
    for connect in good {
        assert_eq!(connect["clientSubject"], "CN=app one", "{connect}");
    }
    assert_eq!(
        error(refused[0]),
        "TLS handshake with the client failed: the client sent no certificate, and \
         --listen-tls-client-ca requires one: give the client a certificate signed by a CA \
         in that file (Java: ssl.keystore.location; librdkafka: ssl.certificate.location \
         and ssl.key.location)"
    );
    assert!(refused[0].get("clientSubject").is_none());
}

/// The tap's `close` line, once there is one.
fn close_line(tap: &Child2) -> Value {
    tap.wait_for("the close", |lines| {
        lines.iter().any(|l| l["event"] == "close")
    })
    .into_iter()
    .find(|l| l["event"] == "close")
    .unwrap()
}

#[test]
fn client_certificate_failures_are_said_in_words() {
    let files = Files::new("mtls-failures");
    let ca = Ca::new("kafka-codec test CA");
    let stranger_ca = Ca::new("another CA");
    let server = ca.sign("broker", &["127.0.0.1"]);
    let ca_file = files.write("ca.pem", &ca.pem());
    let server_cert = files.write("server.pem", &server.cert);
    let server_key = files.write("server.key", &server.key);
    let broker = tls_broker_with(server_config(&server, Some(&ca)), Vec::new());

    // The broker requires a client certificate and the tap has none: under TLS 1.3 the
    // broker says so after the handshake, on the first read.
    let tap = start_tap(broker, &["--upstream-tls", "--upstream-ca", &ca_file]);
    let mut client = TcpStream::connect(&tap.address).unwrap();
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let close = close_line(&tap);
    assert_eq!(
        close["toClient"]["end"],
        "read failed: the upstream requires a client certificate: give --upstream-tls-cert \
         and --upstream-tls-key",
        "{close}"
    );
    drop(tap);

    // The tap's client certificate is of a CA the broker does not trust.
    let stranger = stranger_ca.sign("the tap", &[]);
    let stranger_cert = files.write("stranger.pem", &stranger.cert);
    let stranger_key = files.write("stranger.key", &stranger.key);
    let tap = start_tap(
        broker,
        &[
            "--upstream-tls",
            "--upstream-ca",
            &ca_file,
            "--upstream-tls-cert",
            &stranger_cert,
            "--upstream-tls-key",
            &stranger_key,
        ],
    );
    let mut client = TcpStream::connect(&tap.address).unwrap();
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let close = close_line(&tap);
    assert_eq!(
        close["toClient"]["end"],
        "read failed: the upstream refused the tool's client certificate (unknown_ca \
         alert): --upstream-tls-cert must be signed by a CA the upstream trusts (Kafka: \
         ssl.truststore.location), and be valid now",
        "{close}"
    );
    drop(tap);

    // At the tap's listener: a client certificate of another CA, and a client that does
    // not trust the tap's certificate.
    let tap = start_tap(
        broker,
        &[
            "--listen-tls-cert",
            &server_cert,
            "--listen-tls-key",
            &server_key,
            "--listen-tls-client-ca",
            &ca_file,
        ],
    );
    let app = stranger_ca.sign("app", &[]);
    let mut client = tls_client(&tap.address, client_config(&ca, Some(&app)));
    send(&mut client, 3, ApiVersionsRequest::default(), 1);
    let first = connects(&tap, 1).remove(0);
    assert_eq!(
        error(&first),
        "TLS handshake with the client failed: the client's certificate is not signed by a \
         trusted certificate authority: --listen-tls-client-ca must hold the CA that signed \
         it (or the certificate itself, if it is self-signed)"
    );
    let mut distrustful = tls_client(&tap.address, client_config(&stranger_ca, None));
    let _ = std::io::Write::write_all(&mut distrustful, b"x");
    let second = connects(&tap, 2).remove(1);
    assert_eq!(
        error(&second),
        "TLS handshake with the client failed: the client refused the tool's certificate \
         (unknown_ca alert): the client must trust the CA that signed --listen-tls-cert \
         (Java: ssl.truststore.location; librdkafka: ssl.ca.location), and the certificate \
         must name the host the client connects to"
    );
}

#[test]
fn the_wrong_protocol_on_either_side_is_said_in_words() {
    let files = Files::new("protocols");
    let ca = Ca::new("kafka-codec test CA");
    let server = ca.sign("broker", &["127.0.0.1"]);
    let ca_file = files.write("ca.pem", &ca.pem());
    let server_cert = files.write("server.pem", &server.cert);
    let server_key = files.write("server.key", &server.key);

    // TLS to a plaintext listener, which closes on the hello as Kafka's does (the hello's
    // first bytes read as a 369 MB frame).
    let plaintext = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = plaintext.local_addr().unwrap();
    std::thread::spawn(move || {
        for tcp in plaintext.incoming() {
            let Ok(mut tcp) = tcp else { return };
            let _ = std::io::Read::read(&mut tcp, &mut [0u8; 4]);
        }
    });
    let connect = through_tap(address, &["--upstream-tls", "--upstream-ca", &ca_file]);
    assert_eq!(
        error(&connect),
        "cannot connect upstream: TLS handshake failed: the upstream closed the connection \
         during the TLS handshake: a plaintext listener does that (connect to its TLS port, \
         or leave out --upstream-tls), and so does a server that requires a client \
         certificate it did not get (--upstream-tls-cert and --upstream-tls-key)"
    );

    // Plaintext Kafka to a TLS listener.
    let broker = tls_broker_with(server_config(&server, None), Vec::new());
    let connect = through_tap(
        broker,
        &[
            "--listen-tls-cert",
            &server_cert,
            "--listen-tls-key",
            &server_key,
        ],
    );
    assert_eq!(
        error(&connect),
        "TLS handshake with the client failed: the client did not start TLS (it sent \
         plaintext Kafka, a size prefix): set the client's security.protocol to SSL (or \
         SASL_SSL), or leave out --listen-tls-cert"
    );
}

#[test]
fn quorum_serve_and_describe_with_client_certificates() {
    let files = Files::new("quorum-mtls");
    let ca = Ca::new("kafka-codec test CA");
    let server = ca.sign("controller", &["127.0.0.1"]);
    let admin = ca.sign("admin", &[]);
    let ca_file = files.write("ca.pem", &ca.pem());
    let server = (
        files.write("server.pem", &server.cert),
        files.write("server.key", &server.key),
    );
    let admin = (
        files.write("admin.pem", &admin.cert),
        files.write("admin.key", &admin.key),
    );
    let serve = start(
        &[
            "quorum",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--listen-tls-cert",
            &server.0,
            "--listen-tls-key",
            &server.1,
            "--listen-tls-client-ca",
            &ca_file,
        ],
        "listening on ",
    );
    let describe = |flags: &[&str]| {
        let mut args = vec![
            "quorum",
            "describe",
            "--bootstrap-controller",
            &serve.address,
            "--tls",
            "--tls-ca",
            &ca_file,
            "--timeout",
            "10",
        ];
        args.extend_from_slice(flags);
        Command::new(BIN).args(&args).output().unwrap()
    };
    let output = describe(&["--tls-cert", &admin.0, "--tls-key", &admin.1]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("CommittedVoters"));
    let start = Instant::now();
    while !serve
        .stderr
        .lock()
        .unwrap()
        .contains(": TLS client certificate CN=admin")
    {
        assert!(start.elapsed() < WAIT, "{}", serve.stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Without a certificate: one line saying which flags.
    let output = describe(&[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "TLS: the controller requires a client certificate: give --tls-cert and --tls-key"
        ),
        "{stderr}"
    );
}

#[test]
fn a_client_certificate_whose_key_is_another_is_refused_at_start() {
    let files = Files::new("mismatch");
    let (one, two) = (
        self_signed("one", &["127.0.0.1"], false),
        self_signed("two", &["127.0.0.1"], false),
    );
    let cert = files.write("one.pem", &one.cert);
    let key = files.write("two.key", &two.key);
    let ca = files.write("ca.pem", &one.cert);
    let message = crate::support::assert_refused(
        &[
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "127.0.0.1:9092",
            "--upstream-tls",
            "--upstream-ca",
            &ca,
            "--upstream-tls-cert",
            &cert,
            "--upstream-tls-key",
            &key,
        ],
        b"",
        "the private key is not the certificate's (the file's first certificate must be the \
         one the key belongs to)",
    );
    assert!(message.contains("--upstream-tls-cert"), "{message}");
}
