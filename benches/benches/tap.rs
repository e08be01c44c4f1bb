//! Forwarding through `kafka-codec tap` against a plain TCP relay, measured in the same run
//! (issue 20): the throughput of pipelined Produce requests (64 KiB of records each) and the
//! round-trip time of one small request at a time, direct, through the relay, and through
//! the tap with its log off and on, and with `--deny-topic` denying none of the traffic's
//! topics (issue 25: what deciding on each request costs); and that decision alone, in
//! process, by the owned decode and by the views (`tap/decision`).
//!
//! The tap is the release binary (`cargo build --release -p kafka-codec-cli`, run first by
//! this bench), or the one `KAFKA_CODEC_TAP` names; the relay is tokio's `copy_bidirectional`, one task per connection, on a
//! runtime of two threads: what a minimal TCP proxy is, with tokio's default 8 KiB buffers
//! and with 64 KiB ones (the tap's read size). The fake broker answers each request
//! with a small response. Everything runs on this machine's loopback, so the numbers are
//! ratios, not absolute network figures.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ServerConnection;
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, ProduceRequest, ProduceResponse,
};
use kafka_codec::records::{Compression, RecordBatchBuilder};
use kafka_codec::Framing;
use kafka_codec::{Request, RequestFrame, Response};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Requests per throughput iteration.
const PIPELINED: usize = 64;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The fake broker: answers Produce and ApiVersions with their default responses.
fn broker(runtime: &tokio::runtime::Runtime) -> SocketAddr {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let mut server = ServerConnection::new();
                let (mut buf, mut chunk) = (BytesMut::new(), vec![0u8; 256 * 1024]);
                let mut out = BytesMut::new();
                loop {
                    let n = match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    while let Ok(Some(request)) = server.receive(&mut buf) {
                        let body: Response = match request.body {
                            Request::ApiVersions(_) => ApiVersionsResponse::default().into(),
                            _ => ProduceResponse::default().into(),
                        };
                        server.send(&request.respond(body), &mut out).unwrap();
                    }
                    if !out.is_empty() && stream.write_all(&out.split()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    address
}

/// A plain TCP relay to `upstream`, copying through buffers of `buffer` bytes each way.
fn relay(runtime: &tokio::runtime::Runtime, upstream: SocketAddr, buffer: usize) -> SocketAddr {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional_with_sizes(
                    &mut client,
                    &mut server,
                    buffer,
                    buffer,
                )
                .await;
            });
        }
    });
    address
}

/// The release `kafka-codec`, built now if it is not up to date; or the binary
/// `KAFKA_CODEC_TAP` names (another build, to compare).
fn tap_binary() -> PathBuf {
    if let Some(binary) = std::env::var_os("KAFKA_CODEC_TAP") {
        return PathBuf::from(binary);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "kafka-codec-cli"])
        .current_dir(&root)
        .status()
        .expect("cargo build of the tap");
    assert!(status.success(), "cannot build the tap");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    target.join("release/kafka-codec")
}

/// `kafka-codec tap` in front of `upstream`, killed on drop.
struct Tap {
    child: Child,
    address: String,
}

impl Tap {
    /// With `--log /dev/null`, every pair is decoded and its line written to `/dev/null`:
    /// the tap's own work, without a disk (the throughput case writes gigabytes of lines).
    fn start(binary: &PathBuf, upstream: SocketAddr, args: &[&str]) -> Tap {
        let mut command = Command::new(binary);
        command.args([
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream.to_string(),
        ]);
        command.args(args);
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let mut text = Vec::new();
        let mut byte = [0u8; 1];
        while !text.ends_with(b"\n") {
            stderr.read_exact(&mut byte).unwrap();
            text.push(byte[0]);
        }
        let text = String::from_utf8(text).unwrap();
        let address = text
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split(',').next())
            .unwrap()
            .to_owned();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Tap { child, address }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection sending whole frames and reading whole responses.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(address: &str) -> Client {
        let stream = TcpStream::connect(address).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Client {
            stream,
            buf: vec![0u8; 1 << 20],
        }
    }

    fn read_responses(&mut self, mut count: usize) {
        let mut prefix = [0u8; 4];
        while count > 0 {
            self.stream.read_exact(&mut prefix).unwrap();
            let len = u32::from_be_bytes(prefix) as usize;
            self.stream.read_exact(&mut self.buf[..len]).unwrap();
            count -= 1;
        }
    }
}

fn frame(version: i16, body: impl Into<Request>) -> Vec<u8> {
    let mut out = BytesMut::new();
    RequestFrame::new(body, version, 1)
        .with_client_id("bench")
        .encode(&mut out, Framing::SizePrefixed)
        .unwrap();
    out.to_vec()
}

/// A Produce v9 request with one partition of 64 KiB of records (64 records of 1 KiB).
fn produce() -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    for i in 0..64u8 {
        builder.append(1_700_000_000_000, None, Some(vec![i; 1024].into()));
    }
    let records = builder.build().encode_to_bytes().unwrap();
    let request = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("bench".into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    frame(9, request)
}

fn forwarding(c: &mut Criterion) {
    let runtime = runtime();
    let upstream = broker(&runtime);
    // tokio's default copy buffer, and the tap's own read size.
    let relayed = relay(&runtime, upstream, 8 * 1024);
    let relayed_64k = relay(&runtime, upstream, 64 * 1024);
    let binary = tap_binary();
    let tap_quiet = Tap::start(&binary, upstream, &["--no-log"]);
    let tap_logging = Tap::start(&binary, upstream, &["--log", "/dev/null"]);
    // Every Produce is held whole and its topics read, none of them denied: forwarded as it
    // came (the round trip's ApiVersions is not a topic API, only capped).
    let tap_rules = Tap::start(&binary, upstream, &["--no-log", "--deny-topic", "denied-*"]);
    let targets = [
        ("direct", upstream.to_string()),
        ("relay", relayed.to_string()),
        ("relay, 64 KiB buffers", relayed_64k.to_string()),
        ("tap, log off", tap_quiet.address.clone()),
        ("tap, log on", tap_logging.address.clone()),
        ("tap, --deny-topic, none denied", tap_rules.address.clone()),
    ];

    let request = produce();
    let batch = request.repeat(PIPELINED);
    let mut group = c.benchmark_group("tap/throughput");
    group.throughput(Throughput::Bytes(batch.len() as u64));
    for (name, address) in &targets {
        let mut client = Client::connect(address);
        let mut writer = client.stream.try_clone().unwrap();
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                // Written from a thread so that requests and responses flow at once.
                std::thread::scope(|scope| {
                    scope.spawn(|| writer.write_all(&batch).unwrap());
                    client.read_responses(PIPELINED);
                });
            })
        });
    }
    group.finish();

    let small = frame(3, ApiVersionsRequest::default());
    let mut group = c.benchmark_group("tap/round_trip");
    for (name, address) in &targets {
        let mut client = Client::connect(address);
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                client.stream.write_all(&small).unwrap();
                client.read_responses(1);
            })
        });
    }
    group.finish();
    drop((tap_quiet, tap_logging, tap_rules));
}

/// The `--deny-topic` decision alone (issue 25, "The tap on views" in benches/README.md): the
/// topic names of the throughput case's Produce v9 request read by the owned decode (what
/// `named_topics` in `cli/src/commands/tap/policy.rs` ran before), by the checked view (what
/// it runs now) and by the lazy view (which checks less, so the tap does not use it), in
/// one run (`views::tap_decision`, whose test holds the three to the same answers).
fn decision(c: &mut Criterion) {
    use kafka_codec_bench::views::tap_decision;
    let frame = tap_decision::frame();
    let mut group = c.benchmark_group("tap/decision");
    for (name, read) in [
        ("owned decode", tap_decision::owned as fn(&_) -> _),
        ("checked view", tap_decision::checked_view),
        ("lazy view", tap_decision::lazy_view),
    ] {
        assert_eq!(read(&frame), Ok(false), "{name}");
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| read(std::hint::black_box(&frame)))
        });
    }
    group.finish();
}

criterion_group!(benches, forwarding, decision);
criterion_main!(benches);
