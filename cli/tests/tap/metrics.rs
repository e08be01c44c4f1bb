//! `--metrics-listen` on `tap` and `quorum serve`: traffic of known shape through each, then
//! a scrape by a real HTTP client (`ureq`) whose counts must equal what was sent, by the
//! senders' own count and by the tap's log.

use super::proxy::{default_answer, metadata, produce, Client, Upstream};
use crate::support::metrics::{address_in, request, scrape, Samples};
use crate::support::BIN;
use kafka_codec::bytes::BytesMut;
use kafka_codec::messages::{
    ApiVersionsRequest, SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::{Framing, Request, RequestFrame, ResponseFrame};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

/// A server command as a child, with `--metrics-listen 127.0.0.1:0`: its Kafka address, its
/// metrics address, and its stdout lines (the tap's log); killed on drop.
struct Served {
    child: Child,
    address: String,
    metrics: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Served {
    fn start(args: &[&str]) -> Served {
        let mut child = Command::new(BIN)
            .args(args)
            .args(["--metrics-listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let (mut address, mut metrics, mut seen) = (None, None, String::new());
        while address.is_none() || metrics.is_none() {
            let line = stderr
                .next()
                .unwrap_or_else(|| panic!("the server ended; stderr:\n{seen}"))
                .unwrap();
            // `tap` and `quorum serve` say "listening on", the cluster "bootstrap".
            if let Some((_, rest)) = line
                .split_once("listening on ")
                .or_else(|| line.split_once("bootstrap "))
            {
                address = rest.split([',', ' ']).next().map(str::to_owned);
            }
            metrics = metrics.or_else(|| address_in(&line));
            seen.push_str(&line);
            seen.push('\n');
        }
        std::thread::spawn(move || for _ in stderr {});
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collect = Arc::clone(&lines);
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines() {
                collect.lock().unwrap().push(line.unwrap());
            }
        });
        Served {
            child,
            address: address.unwrap(),
            metrics: metrics.unwrap(),
            lines,
        }
    }

    fn tap(upstream: std::net::SocketAddr, extra: &[&str]) -> Served {
        let upstream = upstream.to_string();
        let mut args = vec!["tap", "--listen", "127.0.0.1:0", "--upstream", &upstream];
        args.extend_from_slice(extra);
        Served::start(&args)
    }

    /// Scrapes until `done` holds (counting trails the bytes on the wire by a moment).
    fn scrape_until(&self, what: &str, done: impl Fn(&Samples) -> bool) -> Samples {
        let start = Instant::now();
        loop {
            let samples = scrape(&self.metrics);
            if done(&samples) {
                return samples;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}:\n{}",
                samples.text
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The tap's log once its `close` line is written: the logger counts what it decodes
    /// (frames that do not, secrets replaced) before it writes that line.
    fn log_when_closed(&self) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let log: Vec<Value> = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect();
            if log.iter().any(|line| line["event"] == "close") {
                return log;
            }
            assert!(start.elapsed() < WAIT, "no close line in the log");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sasl_authenticate() -> (i16, Request) {
    let request =
        SaslAuthenticateRequest::default().with_auth_bytes(b"\0user\0secret".to_vec().into());
    (2, request.into())
}

/// One connection's traffic: ApiVersions v3, five Metadata v12, three Produce v9 with acks=1
/// and two with acks=0 (never answered), a SaslAuthenticate v2 (its secrets redacted in the
/// log), and a Metadata v12 whose body does not decode (the fake broker skips it).
fn send_traffic(client: &mut Client) {
    let mut requests = vec![(3, ApiVersionsRequest::default().into())];
    requests.extend((0..5).map(|_| metadata()));
    requests.extend((0..3).map(|_| produce(1, 100)));
    requests.extend((0..2).map(|_| produce(0, 100)));
    requests.push(sasl_authenticate());
    client.send_all(&requests);
    for _ in 0..10 {
        client.receive();
    }
    // A Metadata v12 header (correlation id 99) and a body cut short.
    let mut garbage = vec![0u8, 3, 0, 12, 0, 0, 0, 99, 0, 2, b'h', b'i', 0];
    garbage.extend_from_slice(&[0xff; 3]);
    let mut framed = (garbage.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(&garbage);
    client.write_raw(&framed);
    client.finish();
}

fn upstream() -> Upstream {
    Upstream::start(|request| match &request.body {
        Request::SaslAuthenticate(_) => Some(SaslAuthenticateResponse::default().into()),
        _ => Some(default_answer(request, "fake")),
    })
}

fn requests(api: &str, version: i16) -> String {
    format!(r#"kafka_codec_requests_total{{api="{api}",version="{version}"}}"#)
}

fn responses(api: &str, version: i16) -> String {
    format!(r#"kafka_codec_responses_total{{api="{api}",version="{version}"}}"#)
}

#[test]
fn the_tap_counts_what_passed_and_a_real_client_scrapes_it() {
    let upstream = upstream();
    let tap = Served::tap(upstream.address, &[]);
    let mut client = Client::connect(&tap.address);
    send_traffic(&mut client);
    let log = tap.log_when_closed();
    let samples = tap.scrape_until("the connection's close", |s| {
        s.get("kafka_codec_connections_closed_total") == 1.0
    });

    // By API and version, as sent.
    assert_eq!(samples.must(&requests("ApiVersions", 3)), 1.0);
    assert_eq!(samples.must(&requests("Metadata", 12)), 6.0);
    assert_eq!(samples.must(&requests("Produce", 9)), 5.0);
    assert_eq!(samples.must(&requests("SaslAuthenticate", 2)), 1.0);
    assert_eq!(samples.must(&responses("ApiVersions", 3)), 1.0);
    assert_eq!(samples.must(&responses("Metadata", 12)), 5.0);
    assert_eq!(samples.must(&responses("Produce", 9)), 3.0);
    assert_eq!(samples.must(&responses("SaslAuthenticate", 2)), 1.0);
    assert_eq!(
        samples.must(r#"kafka_codec_latency_seconds_count{api="Metadata"}"#),
        5.0
    );
    assert_eq!(
        samples.must(r#"kafka_codec_latency_seconds_count{api="Produce"}"#),
        3.0
    );
    // Bytes: what the client sent and received, by its own count.
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_server"}"#),
        client.sent.len() as f64
    );
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_client"}"#),
        client.received.len() as f64
    );
    assert_eq!(samples.must("kafka_codec_connections_opened_total"), 1.0);
    assert_eq!(samples.must("kafka_codec_connections_open"), 0.0);
    assert_eq!(
        samples.must(r#"kafka_codec_connections_evicted_total{reason="connection_cap"}"#),
        0.0
    );
    assert_eq!(
        samples.must("kafka_codec_memory_budget_limit_bytes"),
        (256u64 << 20) as f64
    );
    assert!(samples
        .values
        .contains_key("kafka_codec_memory_budget_in_use_bytes"));

    // What the log shows, the metrics count: pairs by API, frames that did not decode, and
    // secrets replaced.
    let pairs = |api: &str| {
        log.iter()
            .filter(|l| l["event"] == "pair" && l["api"] == api && !l["response"].is_null())
            .count() as f64
    };
    assert_eq!(pairs("Metadata"), samples.must(&responses("Metadata", 12)));
    assert_eq!(pairs("Produce"), samples.must(&responses("Produce", 9)));
    let errors = log
        .iter()
        .filter(|l| l.get("requestError").is_some())
        .count() as f64;
    assert_eq!(errors, 1.0);
    assert_eq!(
        samples.must(
            r#"kafka_codec_undecoded_frames_total{direction="to_server",reason="decode_error"}"#
        ),
        errors
    );
    let redacted: usize = log
        .iter()
        .flat_map(|l| [&l["requestRedacted"], &l["responseRedacted"]])
        .filter_map(Value::as_array)
        .map(Vec::len)
        .sum();
    assert!(redacted >= 1, "the SaslAuthenticate secret is redacted");
    assert_eq!(
        samples.must(r#"kafka_codec_redactions_total{api="SaslAuthenticate"}"#),
        redacted as f64
    );
    // The denials family is there for the policies, empty.
    assert!(samples
        .text
        .contains("# TYPE kafka_codec_denied_total counter\n"));

    // The endpoint's other answers.
    let head = request("HEAD", &tap.metrics, "/metrics");
    assert_eq!((head.status, head.body.as_str()), (200, ""));
    assert_eq!(request("GET", &tap.metrics, "/").status, 404);
    assert_eq!(request("POST", &tap.metrics, "/metrics").status, 405);
    let after = scrape(&tap.metrics);
    // Each answer is counted before it is written: the scrapes before and the HEAD.
    assert!(after.must(r#"kafka_codec_metrics_requests_total{outcome="served"}"#) >= 2.0);
    assert_eq!(
        after.must(r#"kafka_codec_metrics_requests_total{outcome="not_found"}"#),
        2.0
    );
}

#[test]
fn without_a_log_requests_are_still_counted_by_api_from_their_headers() {
    let upstream = upstream();
    let tap = Served::tap(upstream.address, &["--no-log"]);
    let mut client = Client::connect(&tap.address);
    send_traffic(&mut client);
    let samples = tap.scrape_until("the connection's close", |s| {
        s.get("kafka_codec_connections_closed_total") == 1.0
    });
    assert_eq!(samples.must(&requests("Metadata", 12)), 6.0);
    assert_eq!(samples.must(&responses("Metadata", 12)), 5.0);
    assert_eq!(samples.must(&requests("Produce", 9)), 5.0);
    assert_eq!(samples.must(&responses("Produce", 9)), 3.0);
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_server"}"#),
        client.sent.len() as f64
    );
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_client"}"#),
        client.received.len() as f64
    );
    // Nothing is decoded, so nothing fails to decode or is redacted.
    assert!(!samples.text.contains("kafka_codec_redactions_total{"));
    for line in samples.text.lines() {
        if line.starts_with("kafka_codec_undecoded_frames_total") {
            assert!(line.ends_with(" 0"), "{line}");
        }
    }
}

#[test]
fn quorum_serve_counts_its_requests_and_a_real_client_scrapes_it() {
    let server = Served::start(&["quorum", "serve", "--listen", "127.0.0.1:0"]);
    three_api_versions_are_counted(&server);
}

#[test]
fn the_cluster_counts_its_requests_and_a_real_client_scrapes_it() {
    let server = Served::start(&["cluster", "--listen", "127.0.0.1:0"]);
    three_api_versions_are_counted(&server);
}

/// Three ApiVersions v3 round trips on one connection, then the scrape: every request,
/// response and byte each way counted, and the connection opened and closed.
fn three_api_versions_are_counted(server: &Served) {
    let mut stream = TcpStream::connect(&server.address).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let (mut sent, mut received) = (Vec::new(), Vec::new());
    for id in 0..3 {
        let frame = RequestFrame::new(ApiVersionsRequest::default(), 3, id).with_client_id("m");
        let mut out = BytesMut::new();
        frame.encode(&mut out, Framing::SizePrefixed).unwrap();
        stream.write_all(&out).unwrap();
        sent.extend_from_slice(&out);
        let mut prefix = [0u8; 4];
        stream.read_exact(&mut prefix).unwrap();
        let mut body = vec![0u8; u32::from_be_bytes(prefix) as usize];
        stream.read_exact(&mut body).unwrap();
        received.extend_from_slice(&prefix);
        received.extend_from_slice(&body);
        let response =
            ResponseFrame::decode(body.into(), kafka_codec::ApiKey::ApiVersions, 3).unwrap();
        assert_eq!(response.header.correlation_id, id);
    }
    drop(stream);
    let samples = server.scrape_until("the connection's close", |s| {
        s.get("kafka_codec_connections_closed_total") == 1.0
    });
    assert_eq!(samples.must(&requests("ApiVersions", 3)), 3.0);
    assert_eq!(samples.must(&responses("ApiVersions", 3)), 3.0);
    assert_eq!(
        samples.must(r#"kafka_codec_latency_seconds_count{api="ApiVersions"}"#),
        3.0
    );
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_server"}"#),
        sent.len() as f64
    );
    assert_eq!(
        samples.must(r#"kafka_codec_bytes_total{direction="to_client"}"#),
        received.len() as f64
    );
    assert_eq!(samples.must("kafka_codec_connections_opened_total"), 1.0);
    assert_eq!(samples.must("kafka_codec_connections_open"), 0.0);
}
