//! `kafka-codec tap` between clients and fake brokers built on `kafka_codec::conn`'s server
//! side, over real sockets (no broker, no Java): pairs and checksums, pipelining, acks=0,
//! frames that do not decode, clients that disconnect mid-frame, a broker that closes, many
//! connections at once, the frame and line limits, and broker address rewriting.

use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::{ClientConnection, ConnError, IncomingRequest, ServerConnection};
use kafka_codec::messages::api_versions_response::ApiVersion;
use kafka_codec::messages::find_coordinator_response::{Coordinator, FindCoordinatorResponse};
use kafka_codec::messages::metadata_response::{MetadataResponseBroker, MetadataResponseTopic};
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeClusterRequest, FindCoordinatorRequest,
    MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse,
};
use kafka_codec::records::{Compression, RecordBatchBuilder};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::Framing;
use kafka_codec::{Request, RequestFrame, Response, ResponseFrame};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::BIN;

const WAIT: Duration = Duration::from_secs(20);

/// What a fake broker does with a request it read: answers with the body, or closes the
/// connection without answering (`None`).
type Handler = dyn Fn(&IncomingRequest) -> Option<Response> + Send + Sync;

/// A fake broker: `ServerConnection` behind a listener, one thread per connection. It
/// records every byte it receives, answers what `handler` says, skips requests it cannot
/// read (as a lenient test double, not as Kafka would) and stops reading frames after a
/// framing error, still recording.
pub(crate) struct Upstream {
    pub(crate) address: SocketAddr,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Upstream {
    pub(crate) fn start(
        handler: impl Fn(&IncomingRequest) -> Option<Response> + Send + Sync + 'static,
    ) -> Upstream {
        Upstream::on(TcpListener::bind("127.0.0.1:0").unwrap(), handler)
    }

    /// On a listener bound already, for a handler that needs its own address.
    fn on(
        listener: TcpListener,
        handler: impl Fn(&IncomingRequest) -> Option<Response> + Send + Sync + 'static,
    ) -> Upstream {
        let address = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let record = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (handler, record) = (Arc::clone(&handler), Arc::clone(&record));
                std::thread::spawn(move || serve(stream, &*handler, &record));
            }
        });
        Upstream { address, received }
    }

    /// The default broker: answers ApiVersions, Metadata (cluster id `name`) and Produce.
    fn answering(name: &'static str) -> Upstream {
        Upstream::start(move |request| Some(default_answer(request, name)))
    }

    /// Bytes received on each connection so far, in order of connection; connections that
    /// sent nothing (the tap's reachability probe at start) left out.
    fn received(&self) -> Vec<Vec<u8>> {
        let received = self.received.lock().unwrap();
        received
            .iter()
            .filter(|bytes| !bytes.is_empty())
            .cloned()
            .collect()
    }
}

pub(crate) fn default_answer(request: &IncomingRequest, name: &str) -> Response {
    match &request.body {
        Request::ApiVersions(_) => ApiVersionsResponse::default().into(),
        Request::Produce(_) => ProduceResponse::default().into(),
        _ => MetadataResponse::default()
            .with_cluster_id(Some(name.into()))
            .into(),
    }
}

fn serve(mut stream: TcpStream, handler: &Handler, record: &Mutex<Vec<Vec<u8>>>) {
    let slot = {
        let mut record = record.lock().unwrap();
        record.push(Vec::new());
        record.len() - 1
    };
    let mut server = ServerConnection::new();
    let (mut buf, mut chunk) = (BytesMut::new(), [0u8; 4096]);
    let mut framing = true;
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        record.lock().unwrap()[slot].extend_from_slice(&chunk[..n]);
        if !framing {
            continue;
        }
        buf.extend_from_slice(&chunk[..n]);
        loop {
            let request = match server.receive(&mut buf) {
                Ok(Some(request)) => request,
                Ok(None) => break,
                Err(ConnError::BadRequest { .. }) => continue,
                Err(_) => {
                    framing = false;
                    break;
                }
            };
            if !request.expects_response() {
                continue;
            }
            match handler(&request) {
                Some(body) => {
                    let mut out = BytesMut::new();
                    server.send(&request.respond(body), &mut out).unwrap();
                    if stream.write_all(&out).is_err() {
                        return;
                    }
                }
                None => {
                    let _ = stream.shutdown(Shutdown::Both);
                    return;
                }
            }
        }
    }
}

/// The tap as a child process, logging to stdout, which a thread collects; killed on drop.
struct Tap {
    child: Child,
    address: String,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Tap {
    fn start(upstream: SocketAddr, extra: &[&str]) -> Tap {
        let mut child = Command::new(BIN)
            .args(["tap", "--listen", "127.0.0.1:0", "--upstream"])
            .arg(upstream.to_string())
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = stderr.next().unwrap().unwrap();
        let address = first
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split(',').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        std::thread::spawn(move || for _ in stderr {});
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collect = Arc::clone(&lines);
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let line = line.unwrap();
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the tap wrote a line that is not JSON ({e}): {line}")
                });
                collect.lock().unwrap().push(value);
            }
        });
        Tap {
            child,
            address,
            lines,
        }
    }

    fn connect(&self) -> Client {
        Client::connect(&self.address)
    }

    /// Waits until the log satisfies `done`, and returns it.
    fn wait_for(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if done(&lines) {
                return lines;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; the log:\n{}",
                lines
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The log once `n` connections have closed.
    fn wait_closed(&self, n: usize) -> Vec<Value> {
        self.wait_for(&format!("{n} closed connections"), |lines| {
            events(lines, "close").len() >= n
        })
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["event"] == event).collect()
}

/// A client on `ClientConnection`, remembering every byte it sent and received.
pub(crate) struct Client {
    stream: TcpStream,
    conn: ClientConnection,
    buf: BytesMut,
    pub(crate) sent: Vec<u8>,
    pub(crate) received: Vec<u8>,
}

impl Client {
    pub(crate) fn connect(address: &str) -> Client {
        let stream = TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Client {
            stream,
            conn: ClientConnection::new().with_client_id("tap-test"),
            buf: BytesMut::new(),
            sent: Vec::new(),
            received: Vec::new(),
        }
    }

    /// Sends every request in one write (pipelined).
    pub(crate) fn send_all(&mut self, requests: &[(i16, Request)]) {
        let mut out = BytesMut::new();
        for (version, request) in requests {
            self.conn.send(*version, request, &mut out).unwrap();
        }
        self.write_raw(&out);
    }

    pub(crate) fn write_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
        self.sent.extend_from_slice(bytes);
    }

    pub(crate) fn receive(&mut self) -> ResponseFrame {
        loop {
            if let Some(response) = self.conn.receive(&mut self.buf).unwrap() {
                return response;
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the connection closed before a response");
            self.buf.extend_from_slice(&chunk[..n]);
            self.received.extend_from_slice(&chunk[..n]);
        }
    }

    /// Half-closes and reads until the other side closes.
    pub(crate) fn finish(&mut self) {
        self.stream.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = self.stream.read_to_end(&mut rest);
        self.received.extend_from_slice(&rest);
    }
}

fn sum(bytes: &[u8]) -> Value {
    serde_json::json!({"bytes": bytes.len(), "crc32c": format!("{:08x}", crc32c::crc32c(bytes))})
}

pub(crate) fn metadata() -> (i16, Request) {
    (12, MetadataRequest::default().into())
}

pub(crate) fn produce(acks: i16, records: usize) -> (i16, Request) {
    produce_field(acks, Bytes::from(vec![7u8; records]))
}

fn produce_field(acks: i16, records: Bytes) -> (i16, Request) {
    let request = ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    (9, request.into())
}

fn size_prefixed(frame: &RequestFrame) -> Vec<u8> {
    let mut out = Vec::new();
    frame.encode(&mut out, Framing::SizePrefixed).unwrap();
    out
}

#[test]
fn pipelined_pairs_are_logged_and_every_byte_is_forwarded() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    let mut requests = vec![(3, ApiVersionsRequest::default().into())];
    requests.extend((0..29).map(|_| metadata()));
    client.send_all(&requests);
    for id in 0..30 {
        assert_eq!(client.receive().header.correlation_id, id);
    }
    client.finish();

    let lines = tap.wait_closed(1);
    let pairs = events(&lines, "pair");
    assert_eq!(pairs.len(), 30);
    for (id, pair) in pairs.iter().enumerate() {
        assert_eq!(pair["correlationId"], id);
        assert_eq!(pair["request"]["header"]["correlationId"], id);
        assert_eq!(pair["response"]["header"]["correlationId"], id);
        assert!(pair["latencyMs"].as_f64().unwrap() >= 0.0);
        assert!(pair["time"].as_str().unwrap().ends_with('Z'));
    }
    assert_eq!(pairs[0]["api"], "ApiVersions");
    assert_eq!(pairs[0]["apiVersion"], 3);
    assert_eq!(pairs[1]["api"], "Metadata");
    assert_eq!(pairs[1]["apiKey"], 3);
    assert_eq!(pairs[1]["response"]["body"]["clusterId"], "fake");
    // The log's JSON is the form `encode` reads.
    RequestFrame::from_json(&pairs[1]["request"]).unwrap();
    ResponseFrame::from_json(&pairs[1]["response"]).unwrap();

    // Both directions: what one side sent is what the tap received, forwarded and the other
    // side received, by the sides' own count.
    let close = events(&lines, "close")[0];
    assert_eq!(upstream.received(), [client.sent.clone()]);
    let to_server = &close["toServer"];
    assert_eq!(to_server["received"], sum(&client.sent));
    assert_eq!(to_server["forwarded"], sum(&client.sent));
    assert_eq!(to_server["frames"], 30);
    let to_client = &close["toClient"];
    assert_eq!(to_client["received"], sum(&client.received));
    assert_eq!(to_client["forwarded"], sum(&client.received));
    assert_eq!(to_client["dropped"]["bytes"], 0);
    assert_eq!(to_client["end"], "eof");
}

#[test]
fn an_acks_0_produce_is_logged_without_a_response() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    client.send_all(&[produce(0, 10), metadata(), produce(1, 10)]);
    assert_eq!(client.receive().header.correlation_id, 1);
    assert_eq!(client.receive().header.correlation_id, 2);
    client.finish();
    let lines = tap.wait_closed(1);
    let pairs = events(&lines, "pair");
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[0]["api"], "Produce");
    assert_eq!(pairs[0]["request"]["body"]["acks"], 0);
    assert_eq!(pairs[0]["response"], Value::Null);
    assert_eq!(pairs[0]["expectsResponse"], false);
    assert_eq!(pairs[1]["api"], "Metadata");
    assert!(pairs[1]["response"].is_object());
    assert_eq!(pairs[2]["api"], "Produce");
    assert_eq!(pairs[2]["response"]["apiKey"], 0);
    assert!(lines.iter().all(|line| line.get("unanswered").is_none()));
}

#[test]
fn records_shows_batches_of_every_codec_and_keeps_undecodable_ones_as_base64() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &["--records"]);
    let mut client = tap.connect();
    let codecs = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    let mut requests = Vec::new();
    for compression in codecs {
        let mut builder = RecordBatchBuilder::new(compression).base_offset(0);
        builder.append(
            1_700_000_000_000,
            Some(Bytes::from(format!("key {compression}"))),
            Some(Bytes::from(format!("value sent with {compression}"))),
        );
        requests.push(produce_field(1, builder.build().encode_to_bytes().unwrap()));
    }
    // A batch whose CRC does not match.
    let mut broken = RecordBatchBuilder::new(Compression::None).base_offset(0);
    broken.append(1_700_000_000_000, None, Some(Bytes::from("v")));
    let mut broken = broken.build().encode_to_bytes().unwrap().to_vec();
    *broken.last_mut().unwrap() ^= 0xff;
    requests.push(produce_field(1, Bytes::from(broken.clone())));
    client.send_all(&requests);
    for _ in &requests {
        client.receive();
    }
    client.finish();
    let lines = tap.wait_closed(1);
    let pairs = events(&lines, "pair");
    assert_eq!(pairs.len(), requests.len());
    for (pair, compression) in pairs.iter().zip(codecs) {
        let field = &pair["request"]["body"]["topicData"][0]["partitionData"][0]["records"];
        let batch = &field[0];
        assert_eq!(batch["compression"], compression.to_string(), "{pair}");
        let value =
            kafka_codec::json::bytes_to_json(format!("value sent with {compression}").as_bytes());
        assert_eq!(batch["records"][0]["value"], value, "{pair}");
        assert!(pair.get("requestRecordsError").is_none(), "{pair}");
    }
    let last = pairs.last().unwrap();
    let field = &last["request"]["body"]["topicData"][0]["partitionData"][0]["records"];
    assert_eq!(field, &kafka_codec::json::bytes_to_json(&broken));
    let error = last["requestRecordsError"][0].as_str().unwrap();
    assert!(error.contains("does not decode"), "{error}");
    // Every byte still forwarded as it was.
    assert_eq!(upstream.received().concat(), client.sent);
}

#[test]
fn frames_that_do_not_decode_are_forwarded_and_logged_with_hex() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    // Metadata v12 whose body is garbage, then an unknown API key, then a good request.
    let garbage: &[u8] = &[
        0, 0, 0, 14, 0, 3, 0, 12, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    ];
    let unknown: &[u8] = &[0, 0, 0, 10, 0x03, 0xe7, 0, 0, 0, 0, 0, 8, 0xff, 0xff];
    client.write_raw(garbage);
    client.write_raw(unknown);
    client.conn = ClientConnection::new().with_first_correlation_id(9);
    client.send_all(&[metadata()]);
    assert_eq!(client.receive().header.correlation_id, 9);
    client.finish();

    let lines = tap.wait_closed(1);
    assert_eq!(upstream.received(), [client.sent.clone()]);
    let bad: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("requestError").is_some())
        .collect();
    assert_eq!(bad.len(), 2, "{lines:?}");
    assert_eq!(bad[0]["correlationId"], 7);
    assert_eq!(bad[0]["api"], "Metadata");
    assert_eq!(bad[0]["requestError"]["size"], 14);
    assert_eq!(
        bad[0]["requestError"]["hex"],
        kafka_codec_hexdump::encode(&garbage[4..])
    );
    assert!(!bad[0]["requestError"]["error"].as_str().unwrap().is_empty());
    assert_eq!(bad[1]["apiKey"], 999);
    assert_eq!(bad[1]["api"], Value::Null);
    // The fake broker answered neither; the answer to the next request says so.
    assert_eq!(
        bad[0]["unanswered"],
        "the server answered a later request first"
    );
    let good = events(&lines, "pair")
        .into_iter()
        .find(|pair| pair["correlationId"] == 9)
        .unwrap();
    assert_eq!(good["response"]["body"]["clusterId"], "fake");
}

#[test]
fn a_negative_size_stops_decoding_not_forwarding() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    let mut bytes = vec![0xff, 0xff, 0xff, 0xf0];
    bytes.extend_from_slice(b"whatever follows is passed on");
    client.write_raw(&bytes);
    client.finish();
    let lines = tap.wait_closed(1);
    assert_eq!(upstream.received(), [bytes]);
    let unframeable = events(&lines, "unframeable");
    assert_eq!(unframeable.len(), 1);
    assert_eq!(unframeable[0]["direction"], "toServer");
}

#[test]
fn a_client_that_disconnects_mid_frame_leaves_the_tap_serving() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    let frame = size_prefixed(&RequestFrame::new(MetadataRequest::default(), 12, 1));
    client.write_raw(&frame[..frame.len() - 3]);
    drop(client);
    let lines = tap.wait_closed(1);
    let close = events(&lines, "close")[0];
    assert_eq!(close["toServer"]["partialFrameBytes"], frame.len() - 3);
    assert_eq!(close["toServer"]["frames"], 0);
    // Forwarded all the same: the broker saw what the client sent.
    let deadline = Instant::now() + WAIT;
    while upstream.received().first().map(Vec::len) != Some(frame.len() - 3) {
        assert!(
            Instant::now() < deadline,
            "the partial frame was not forwarded"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    let mut again = tap.connect();
    again.send_all(&[metadata()]);
    assert_eq!(again.receive().header.correlation_id, 0);
}

/// A client that hangs up with a request in flight (a consumer closing during a long poll)
/// is told apart from a broker that closes on one.
#[test]
fn a_client_that_hangs_up_first_is_named_in_unanswered() {
    // A broker that never answers and closes only once the tap passes on the client's end.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let _ = stream.read_to_end(&mut Vec::new());
            });
        }
    });
    let tap = Tap::start(address, &[]);
    let mut client = tap.connect();
    client.send_all(&[metadata()]);
    client.stream.shutdown(Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    client.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    let lines = tap.wait_closed(1);
    let pair = events(&lines, "pair")[0];
    assert_eq!(pair["unanswered"], "the client closed the connection first");
    assert_eq!(pair["response"], Value::Null);
}

/// A client that resets its connection (closing with its linger time zero, as a client
/// does that closes with bytes unread) is named as the one that hung up, not "failed".
#[test]
fn a_client_that_resets_is_named_in_unanswered() {
    // A broker that never answers and tells when the request has reached it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let (reached, arrived) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let reached = reached.clone();
            std::thread::spawn(move || {
                let mut buffer = [0; 512];
                while let Ok(n @ 1..) = stream.read(&mut buffer) {
                    let _ = reached.send(n);
                }
            });
        }
    });
    let tap = Tap::start(address, &[]);
    let mut client = tap.connect();
    client.send_all(&[metadata()]);
    // The request reaches the broker before the reset, so it is in flight when it comes.
    arrived
        .recv_timeout(WAIT)
        .expect("the request never reached the broker");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    runtime.block_on(async {
        // The option belongs to the socket, so setting it through a duplicate descriptor
        // holds when the client's own descriptor closes.
        let duplicate = client.stream.try_clone().unwrap();
        duplicate.set_nonblocking(true).unwrap();
        let duplicate = tokio::net::TcpStream::from_std(duplicate).unwrap();
        duplicate.set_zero_linger().unwrap();
    });
    drop(client);
    let lines = tap.wait_closed(1);
    let pair = events(&lines, "pair")[0];
    assert_eq!(pair["unanswered"], "the client reset the connection first");
    assert_eq!(pair["response"], Value::Null);
}

#[test]
fn a_broker_that_closes_leaves_the_tap_serving() {
    let upstream = Upstream::start(|request| match request.body {
        Request::Metadata(_) => None,
        _ => Some(default_answer(request, "fake")),
    });
    let tap = Tap::start(upstream.address, &[]);
    let mut client = tap.connect();
    client.send_all(&[metadata()]);
    let mut rest = Vec::new();
    client.stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    drop(client);
    let lines = tap.wait_closed(1);
    let pair = events(&lines, "pair")[0];
    assert_eq!(pair["unanswered"], "the server closed the connection first");
    assert_eq!(pair["response"], Value::Null);

    let mut again = tap.connect();
    again.send_all(&[(3, ApiVersionsRequest::default().into())]);
    assert_eq!(again.receive().header.correlation_id, 0);
}

#[test]
fn an_unreachable_broker_is_logged_and_the_client_closed() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap();
    drop(closed);
    let tap = Tap::start(address, &[]);
    let mut client = tap.connect();
    // The tap reaches for the upstream once the client has said something, as Kafka clients
    // always speak first.
    client.send_all(&[(3, ApiVersionsRequest::default().into())]);
    let mut rest = Vec::new();
    let _ = client.stream.read_to_end(&mut rest);
    let lines = tap.wait_for("a connect error", |lines| {
        events(lines, "connect")
            .iter()
            .any(|c| c.get("error").is_some())
    });
    assert!(events(&lines, "connect")[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("cannot connect upstream"));
}

#[test]
fn many_connections_at_once() {
    let upstream = Upstream::answering("fake");
    let tap = Arc::new(Tap::start(upstream.address, &[]));
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let address = tap.address.clone();
            std::thread::spawn(move || {
                let mut client = Client::connect(&address);
                client.send_all(&(0..5).map(|_| metadata()).collect::<Vec<_>>());
                for id in 0..5 {
                    assert_eq!(client.receive().header.correlation_id, id);
                }
                client.finish();
                (sum(&client.sent), sum(&client.received))
            })
        })
        .collect();
    let mut sums: Vec<(Value, Value)> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let lines = tap.wait_closed(16);
    assert_eq!(events(&lines, "pair").len(), 80);
    let mut ids: Vec<u64> = events(&lines, "close")
        .iter()
        .map(|close| close["connection"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    let mut logged: Vec<(Value, Value)> = events(&lines, "close")
        .iter()
        .map(|close| {
            assert_eq!(
                close["toServer"]["received"],
                close["toServer"]["forwarded"]
            );
            assert_eq!(
                close["toClient"]["received"],
                close["toClient"]["forwarded"]
            );
            (
                close["toServer"]["received"].clone(),
                close["toClient"]["received"].clone(),
            )
        })
        .collect();
    let key = |pair: &(Value, Value)| pair.0.to_string() + &pair.1.to_string();
    sums.sort_by_key(key);
    logged.sort_by_key(key);
    assert_eq!(sums, logged);
}

#[test]
fn frames_above_the_limit_are_forwarded_and_skipped() {
    let upstream = Upstream::answering("fake");
    let tap = Tap::start(
        upstream.address,
        &["--max-frame", "1024", "--max-hex", "16"],
    );
    let mut client = tap.connect();
    client.send_all(&[produce(1, 5000), metadata()]);
    assert_eq!(client.receive().header.correlation_id, 0);
    assert_eq!(client.receive().header.correlation_id, 1);
    client.finish();
    let lines = tap.wait_closed(1);
    assert_eq!(upstream.received(), [client.sent.clone()]);
    let pairs = events(&lines, "pair");
    let skipped = &pairs[0]["requestSkipped"];
    assert!(skipped["reason"].as_str().unwrap().contains("--max-frame"));
    assert!(skipped["size"].as_u64().unwrap() > 5000);
    assert_eq!(skipped["hex"].as_str().unwrap().len(), 32);
    // The response still finds its request.
    assert_eq!(pairs[0]["api"], "Produce");
    assert_eq!(pairs[0]["response"]["apiKey"], 0);
    assert_eq!(pairs[1]["response"]["body"]["clusterId"], "fake");
}

#[test]
fn messages_longer_than_the_line_are_replaced_by_a_note() {
    let upstream = Upstream::start(|request| {
        Some(match request.body {
            Request::Metadata(_) => MetadataResponse::default()
                .with_topics(
                    (0..2000)
                        .map(|i| {
                            MetadataResponseTopic::default()
                                .with_name(Some(format!("topic-{i}").into()))
                        })
                        .collect(),
                )
                .into(),
            _ => default_answer(request, "fake"),
        })
    });
    let tap = Tap::start(upstream.address, &["--max-line", "16384"]);
    let mut client = tap.connect();
    client.send_all(&[metadata()]);
    client.receive();
    client.finish();
    let lines = tap.wait_closed(1);
    let pair = events(&lines, "pair")[0];
    assert!(pair["request"].is_object());
    assert!(pair["response"]["omitted"]
        .as_str()
        .unwrap()
        .contains("--max-line"));
    assert!(pair.to_string().len() < 4096);
}

#[test]
fn bytes_after_a_body_are_noted_unless_strict() {
    let upstream = Upstream::answering("fake");
    let mut frame = RequestFrame::new(MetadataRequest::default(), 12, 4)
        .encode_to_bytes()
        .unwrap()
        .to_vec();
    frame.extend_from_slice(&[1, 0, 0]);
    let mut bytes = (frame.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(&frame);
    for (strict, extra) in [(false, &[][..]), (true, &["--strict"][..])] {
        let tap = Tap::start(upstream.address, extra);
        let mut client = tap.connect();
        client.write_raw(&bytes);
        client.finish();
        let lines = tap.wait_closed(1);
        let line = lines
            .iter()
            .find(|line| line["correlationId"] == 4)
            .unwrap();
        if strict {
            assert!(line["requestError"]["error"]
                .as_str()
                .unwrap()
                .contains("left over"));
        } else {
            assert_eq!(
                line["requestTrailing"],
                serde_json::json!({"bytes": 3, "hex": "010000"})
            );
            assert_eq!(line["request"]["body"]["topics"], serde_json::json!([]));
        }
    }
}

#[test]
fn rewritten_brokers_are_reached_through_the_tap() {
    // Broker 2 answers with its own name; broker 1, the bootstrap, names both.
    let second = Upstream::answering("broker-2");
    let second_address = second.address;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let first_address = listener.local_addr().unwrap();
    let first = Upstream::on(listener, move |request| {
        let broker = |id, address: SocketAddr| {
            MetadataResponseBroker::default()
                .with_node_id(id)
                .with_host(address.ip().to_string().into())
                .with_port(i32::from(address.port()))
        };
        Some(match &request.body {
            Request::Metadata(_) => MetadataResponse::default()
                .with_cluster_id(Some("broker-1".into()))
                .with_brokers(vec![broker(1, first_address), broker(2, second_address)])
                .into(),
            Request::FindCoordinator(_) => FindCoordinatorResponse::default()
                .with_coordinators(vec![Coordinator::default()
                    .with_key("group".into())
                    .with_node_id(2)
                    .with_host(second_address.ip().to_string().into())
                    .with_port(i32::from(second_address.port()))])
                .into(),
            _ => default_answer(request, "broker-1"),
        })
    });
    let tap = Tap::start(first.address, &["--rewrite-brokers"]);
    let mut client = tap.connect();
    let find = FindCoordinatorRequest::default().with_coordinator_keys(vec!["group".into()]);
    client.send_all(&[metadata(), (4, find.into())]);
    let Response::Metadata(metadata) = client.receive().body else {
        panic!("not a Metadata response")
    };
    let Response::FindCoordinator(coordinator) = client.receive().body else {
        panic!("not a FindCoordinator response")
    };
    client.finish();

    // The bootstrap broker is the tap's own address; the other one a listener of the tap's.
    let tap_address: SocketAddr = tap.address.parse().unwrap();
    assert_eq!(metadata.brokers[0].host, "127.0.0.1");
    assert_eq!(metadata.brokers[0].port, i32::from(tap_address.port()));
    let second_port = metadata.brokers[1].port;
    assert_ne!(second_port, i32::from(second_address.port()));
    assert_eq!(coordinator.coordinators[0].port, second_port);

    let mut through = Client::connect(&format!("127.0.0.1:{second_port}"));
    through.send_all(&[metadata_v(12)]);
    let Response::Metadata(answer) = through.receive().body else {
        panic!("not a Metadata response")
    };
    assert_eq!(answer.cluster_id.as_deref(), Some("broker-2"));
    through.finish();

    let lines = tap.wait_closed(2);
    let rewritten: Vec<&Value> = lines
        .iter()
        .filter(|l| l.get("rewritten").is_some())
        .collect();
    assert_eq!(rewritten.len(), 2);
    let addresses = rewritten[0]["rewritten"]["addresses"].as_array().unwrap();
    assert_eq!(addresses.len(), 2);
    assert!(addresses.contains(&serde_json::json!({
        "from": second_address.to_string(),
        "to": format!("127.0.0.1:{second_port}"),
    })));
    // The log shows what the broker sent.
    assert_eq!(
        rewritten[0]["response"]["body"]["brokers"][1]["port"],
        i32::from(second_address.port())
    );
    let listens = events(&lines, "listen");
    assert_eq!(listens.len(), 2);
    assert_eq!(listens[1]["upstream"], second_address.to_string());
    // What the client got differs from what the broker sent only in the rewritten frames.
    // The two connections may close in either order: take the bootstrap connection's.
    let closes = events(&lines, "close");
    let close = closes
        .iter()
        .find(|close| close["upstream"] == first_address.to_string())
        .expect("the bootstrap connection's close");
    assert_eq!(close["toClient"]["rewritten"], 2);
    assert_eq!(close["toClient"]["forwarded"], sum(&client.received));
    assert_eq!(
        close["toClient"]["forwardedAsReceived"],
        close["toClient"]["received"]
    );
    assert_ne!(
        close["toClient"]["forwarded"],
        close["toClient"]["received"]
    );
}

fn metadata_v(version: i16) -> (i16, Request) {
    (version, MetadataRequest::default().into())
}

/// Kafka-4.5-like ranges: every API this crate knows one version beyond what it decodes, and
/// an API key it does not know.
fn newer_broker_ranges() -> Vec<ApiVersion> {
    let mut ranges: Vec<ApiVersion> = kafka_codec::ApiKey::ALL
        .iter()
        .map(|api| {
            let ours = api.valid_versions();
            ApiVersion::default()
                .with_api_key(api.key())
                .with_min_version(ours.min)
                .with_max_version(ours.max + 1)
        })
        .collect();
    ranges.push(
        ApiVersion::default()
            .with_api_key(99)
            .with_min_version(0)
            .with_max_version(2),
    );
    ranges
}

#[test]
fn clamp_versions_narrows_api_versions_to_what_the_tap_decodes() {
    let upstream = Upstream::start(|request| {
        Some(match &request.body {
            Request::ApiVersions(_) => ApiVersionsResponse::default()
                .with_api_keys(newer_broker_ranges())
                .into(),
            _ => default_answer(request, "newer"),
        })
    });
    for (clamp, extra) in [(true, &["--clamp-versions"][..]), (false, &[][..])] {
        let tap = Tap::start(upstream.address, extra);
        let mut client = tap.connect();
        client.send_all(&[(3, ApiVersionsRequest::default().into()), metadata()]);
        let Response::ApiVersions(seen) = client.receive().body else {
            panic!("not an ApiVersions response")
        };
        assert_eq!(client.receive().header.correlation_id, 1);
        client.finish();
        if !clamp {
            assert_eq!(seen.api_keys, newer_broker_ranges());
            continue;
        }
        // Every API the crate knows, at the intersection; key 99 gone.
        let expected: Vec<ApiVersion> = kafka_codec::ApiKey::ALL
            .iter()
            .map(|api| {
                let ours = api.valid_versions();
                ApiVersion::default()
                    .with_api_key(api.key())
                    .with_min_version(ours.min)
                    .with_max_version(ours.max)
            })
            .collect();
        assert_eq!(seen.api_keys, expected);
        let lines = tap.wait_closed(1);
        let pair = lines
            .iter()
            .find(|line| line["api"] == "ApiVersions")
            .expect("the ApiVersions pair");
        let note = &pair["rewritten"]["clampedVersions"];
        assert_eq!(
            note["narrowed"].as_array().unwrap().len(),
            kafka_codec::ApiKey::ALL.len()
        );
        assert_eq!(note["dropped"][0]["apiKey"], 99);
        // The log shows what the broker sent.
        assert_eq!(
            pair["response"]["body"]["apiKeys"]
                .as_array()
                .unwrap()
                .len(),
            kafka_codec::ApiKey::ALL.len() + 1
        );
        let close = &events(&lines, "close")[0];
        assert_eq!(close["toClient"]["rewritten"], 1);
        assert_eq!(close["toClient"]["forwarded"], sum(&client.received));
    }
}

/// A broker that does not have the client's ApiVersions version answers at version 0 with
/// UNSUPPORTED_VERSION and its ranges: the tap reads that v0 body and clamps it too.
#[test]
fn clamp_versions_reads_an_unsupported_version_answer_at_v0() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut size = [0u8; 4];
                if stream.read_exact(&mut size).is_err() {
                    return; // the tap's reachability probe
                }
                let mut frame = vec![0u8; u32::from_be_bytes(size) as usize];
                stream.read_exact(&mut frame).unwrap();
                let request = RequestFrame::decode(Bytes::from(frame)).unwrap();
                let answer = ApiVersionsResponse::default()
                    .with_error_code(35)
                    .with_api_keys(newer_broker_ranges());
                let response = ResponseFrame::new(answer, 0, request.header.correlation_id);
                let mut out = Vec::new();
                response.encode(&mut out, Framing::SizePrefixed).unwrap();
                stream.write_all(&out).unwrap();
                let _ = stream.read_to_end(&mut Vec::new());
            });
        }
    });
    let tap = Tap::start(address, &["--clamp-versions"]);
    let mut client = Client::connect(&tap.address);
    let mut out = Vec::new();
    let request = RequestFrame::new(ApiVersionsRequest::default(), 3, 0);
    request.encode(&mut out, Framing::SizePrefixed).unwrap();
    client.write_raw(&out);
    let mut size = [0u8; 4];
    client.stream.read_exact(&mut size).unwrap();
    let mut frame = vec![0u8; u32::from_be_bytes(size) as usize];
    client.stream.read_exact(&mut frame).unwrap();
    let seen = ResponseFrame::decode(Bytes::from(frame), kafka_codec::ApiKey::ApiVersions, 0)
        .expect("a v0 ApiVersions response");
    let Response::ApiVersions(seen) = seen.body else {
        unreachable!()
    };
    assert_eq!(seen.error_code, 35);
    assert_eq!(seen.api_keys.len(), kafka_codec::ApiKey::ALL.len());
    assert!(seen.api_keys.iter().all(|entry| {
        let api = kafka_codec::ApiKey::from_key(entry.api_key).unwrap();
        entry.max_version == api.valid_versions().max
    }));
}

/// Answers Produce with success for every partition it was sent, after `delay` (so that an
/// answer of the tap's for a later request is ready first, and must wait its turn).
fn produce_answer(request: &IncomingRequest, delay: Duration) -> Response {
    let Request::Produce(produce) = &request.body else {
        return default_answer(request, "policy");
    };
    std::thread::sleep(delay);
    ProduceResponse::default()
        .with_responses(
            produce
                .topic_data
                .iter()
                .map(|topic| {
                    TopicProduceResponse::default()
                        .with_name(topic.name.clone())
                        .with_partition_responses(
                            topic
                                .partition_data
                                .iter()
                                .map(|p| {
                                    PartitionProduceResponse::default()
                                        .with_index(p.index)
                                        .with_base_offset(42)
                                })
                                .collect(),
                        )
                })
                .collect(),
        )
        .into()
}

fn produce_to(acks: i16, topics: &[&str]) -> (i16, Request) {
    let request = ProduceRequest::default()
        .with_acks(acks)
        .with_timeout_ms(1000)
        .with_topic_data(
            topics
                .iter()
                .map(|name| {
                    TopicProduceData::default()
                        .with_name((*name).into())
                        .with_partition_data(vec![PartitionProduceData::default()
                            .with_index(0)
                            .with_records(Some(Bytes::from_static(&[7; 16])))])
                })
                .collect(),
        );
    (9, request.into())
}

/// Each topic of a Produce response with its partitions' error codes.
fn produce_errors(response: &Response) -> Vec<(String, Vec<i16>)> {
    let Response::Produce(produce) = response else {
        panic!("not a Produce response: {response:?}")
    };
    let mut topics: Vec<(String, Vec<i16>)> = produce
        .responses
        .iter()
        .map(|t| {
            let codes = t.partition_responses.iter().map(|p| p.error_code).collect();
            (t.name.to_string(), codes)
        })
        .collect();
    topics.sort();
    topics
}

#[test]
fn deny_topic_splits_answers_and_drops_in_request_order() {
    let upstream =
        Upstream::start(|request| Some(produce_answer(request, Duration::from_millis(300))));
    let tap = Tap::start(upstream.address, &["--deny-topic", "secret-*"]);
    let mut client = tap.connect();
    client.send_all(&[
        produce_to(-1, &["public", "secret-a"]),  // 0: split
        produce_to(-1, &["secret-b"]),            // 1: answered by the tap
        metadata(),                               // 2: forwarded
        produce_to(0, &["secret-c"]),             // 3: acks=0, dropped
        produce_to(1, &["secret-d", "secret-e"]), // 4: answered by the tap
    ]);
    let responses: Vec<ResponseFrame> = (0..4).map(|_| client.receive()).collect();
    let ids: Vec<i32> = responses.iter().map(|r| r.header.correlation_id).collect();
    assert_eq!(ids, [0, 1, 2, 4], "responses out of request order");
    const DENIED: i16 = 29; // TOPIC_AUTHORIZATION_FAILED
    assert_eq!(
        produce_errors(&responses[0].body),
        [
            ("public".into(), vec![0]),
            ("secret-a".into(), vec![DENIED])
        ]
    );
    assert_eq!(
        produce_errors(&responses[1].body),
        [("secret-b".into(), vec![DENIED])]
    );
    assert!(matches!(responses[2].body, Response::Metadata(_)));
    assert_eq!(
        produce_errors(&responses[3].body),
        [
            ("secret-d".into(), vec![DENIED]),
            ("secret-e".into(), vec![DENIED])
        ]
    );
    client.finish();
    let lines = tap.wait_closed(1);

    // The broker saw the allowed part of request 0 and the Metadata request, nothing else.
    let received = upstream.received();
    let mut server = ServerConnection::new();
    let mut buf = BytesMut::from(&received[0][..]);
    let mut seen = Vec::new();
    while let Some(request) = server.receive(&mut buf).unwrap() {
        seen.push((request.correlation_id(), request.body.clone()));
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].0, 0);
    let Request::Produce(forwarded) = &seen[0].1 else {
        panic!("not a Produce request")
    };
    let names: Vec<&str> = forwarded.topic_data.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["public"]);
    assert_eq!(seen[1].0, 2);

    let denied = events(&lines, "denied");
    let actions: Vec<(&Value, &Value)> = denied
        .iter()
        .map(|d| (&d["correlationId"], &d["action"]))
        .collect();
    assert_eq!(
        actions,
        [
            (&Value::from(0), &Value::from("split")),
            (&Value::from(1), &Value::from("answered")),
            (&Value::from(3), &Value::from("dropped")),
            (&Value::from(4), &Value::from("answered")),
        ]
    );
    assert_eq!(denied[0]["topics"], serde_json::json!(["secret-a"]));
    // Every request is a pair in the log, the tap's answers included.
    let pairs = events(&lines, "pair");
    assert_eq!(pairs.len(), 5, "{pairs:?}");
    assert!(pairs.iter().all(|p| p.get("unanswered").is_none()));
    let close = &events(&lines, "close")[0];
    assert_eq!(close["toClient"]["answered"], 2);
    assert_eq!(close["toClient"]["forwarded"], sum(&client.received));
    assert_eq!(close["toServer"]["rewritten"], 1);
}

#[test]
fn deny_api_answers_with_the_top_level_error_and_refuses_what_it_cannot_answer() {
    let upstream = Upstream::answering("policy");
    let tap = Tap::start(upstream.address, &["--deny-api", "DescribeCluster,produce"]);
    let mut client = tap.connect();
    client.send_all(&[
        (1, DescribeClusterRequest::default().into()),
        produce_to(-1, &["any"]),
        metadata(),
    ]);
    let Response::DescribeCluster(cluster) = client.receive().body else {
        panic!("not a DescribeCluster response")
    };
    assert_eq!(cluster.error_code, 31); // CLUSTER_AUTHORIZATION_FAILED
    assert_eq!(
        produce_errors(&client.receive().body),
        [("any".into(), vec![29])]
    );
    assert!(matches!(client.receive().body, Response::Metadata(_)));
    client.finish();
    // Only the Metadata request reached the broker.
    let mut server = ServerConnection::new();
    let mut buf = BytesMut::from(&upstream.received()[0][..]);
    let request = server.receive(&mut buf).unwrap().unwrap();
    assert!(matches!(request.body, Request::Metadata(_)));
    assert!(server.receive(&mut buf).unwrap().is_none());

    crate::support::assert_usage_error(&[
        "tap",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "127.0.0.1:9",
        "--deny-api",
        "Nope",
    ]);
}

/// A client that sends a denied request and closes its side at once still gets the tap's
/// answer before the connection ends.
#[test]
fn a_denied_request_is_answered_when_the_client_closes_its_side_at_once() {
    let upstream = Upstream::start(|request| Some(produce_answer(request, Duration::ZERO)));
    let tap = Tap::start(upstream.address, &["--deny-topic", "secret"]);
    for _ in 0..5 {
        let mut client = tap.connect();
        client.send_all(&[produce_to(-1, &["public"]), produce_to(-1, &["secret"])]);
        client.finish();
        let mut conn = ClientConnection::new();
        let mut out = BytesMut::new();
        conn.send(
            produce_to(-1, &[]).0,
            &produce_to(-1, &["public"]).1,
            &mut out,
        )
        .unwrap();
        conn.send(
            produce_to(-1, &[]).0,
            &produce_to(-1, &["secret"]).1,
            &mut out,
        )
        .unwrap();
        let mut buf = BytesMut::from(&client.received[..]);
        let first = conn
            .receive(&mut buf)
            .unwrap()
            .expect("the broker's answer");
        let second = conn.receive(&mut buf).unwrap().expect("the tap's answer");
        assert_eq!(produce_errors(&first.body), [("public".into(), vec![0])]);
        assert_eq!(produce_errors(&second.body), [("secret".into(), vec![29])]);
    }
}

/// With --deny-topic, clients are kept on the Produce and Fetch versions that name their
/// topics; nothing else changes without --clamp-versions.
#[test]
fn deny_topic_caps_produce_and_fetch_at_the_versions_that_name_topics() {
    let upstream = Upstream::start(|request| {
        Some(match &request.body {
            Request::ApiVersions(_) => ApiVersionsResponse::default()
                .with_api_keys(newer_broker_ranges())
                .into(),
            _ => default_answer(request, "newer"),
        })
    });
    let tap = Tap::start(upstream.address, &["--deny-topic", "x"]);
    let mut client = tap.connect();
    client.send_all(&[(3, ApiVersionsRequest::default().into())]);
    let Response::ApiVersions(seen) = client.receive().body else {
        panic!("not an ApiVersions response")
    };
    client.finish();
    let mut expected = newer_broker_ranges();
    for entry in &mut expected {
        if entry.api_key == 0 || entry.api_key == 1 {
            entry.max_version = 12;
        }
    }
    assert_eq!(seen.api_keys, expected);
}

/// A request the rules concern that the tap cannot read (a Produce at a version it does not
/// know) is neither forwarded unseen nor left unanswered: its connection is closed.
#[test]
fn an_unreadable_request_the_rules_concern_closes_its_connection() {
    let upstream = Upstream::start(|request| Some(produce_answer(request, Duration::ZERO)));
    let tap = Tap::start(upstream.address, &["--deny-topic", "secret"]);
    let mut client = tap.connect();
    let (version, body) = produce_to(-1, &["public"]);
    let mut bytes = size_prefixed(&RequestFrame::new(body, version, 0));
    bytes[6..8].copy_from_slice(&99i16.to_be_bytes());
    client.write_raw(&bytes);
    let mut rest = Vec::new();
    let _ = client.stream.read_to_end(&mut rest);
    assert!(rest.is_empty(), "the tap answered: {rest:?}");
    let lines = tap.wait_closed(1);
    let denied = events(&lines, "denied");
    assert_eq!(denied.len(), 1, "{lines:?}");
    assert_eq!(denied[0]["action"], "closed");
    let close = &events(&lines, "close")[0];
    assert!(
        close["toServer"]["end"]
            .as_str()
            .unwrap()
            .contains("cannot be checked"),
        "{close}"
    );
    assert!(
        upstream.received().is_empty(),
        "the broker got {:?}",
        upstream.received()
    );
}

/// The config APIs are denied per topic resource: a broker resource beside a denied topic
/// is still forwarded, and the answer merged.
#[test]
fn deny_topic_splits_config_requests_by_topic_resource() {
    use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
    use kafka_codec::messages::describe_configs_response::DescribeConfigsResult;
    use kafka_codec::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
    let upstream = Upstream::start(|request| {
        Some(match &request.body {
            Request::DescribeConfigs(r) => DescribeConfigsResponse::default()
                .with_results(
                    r.resources
                        .iter()
                        .map(|c| {
                            DescribeConfigsResult::default()
                                .with_resource_type(c.resource_type)
                                .with_resource_name(c.resource_name.clone())
                        })
                        .collect(),
                )
                .into(),
            _ => default_answer(request, "configs"),
        })
    });
    let tap = Tap::start(upstream.address, &["--deny-topic", "secret*"]);
    let mut client = tap.connect();
    let resource = |kind: i8, name: &str| {
        DescribeConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(name.into())
    };
    let request = DescribeConfigsRequest::default().with_resources(vec![
        resource(2, "secret-1"),
        resource(4, "1"),
        resource(2, "public"),
    ]);
    let only_denied =
        DescribeConfigsRequest::default().with_resources(vec![resource(2, "secret-2")]);
    // A broker resource named like a denied topic is not a topic.
    let broker_only =
        DescribeConfigsRequest::default().with_resources(vec![resource(4, "secret-3")]);
    client.send_all(&[
        (4, request.into()),
        (4, only_denied.into()),
        (4, broker_only.into()),
    ]);
    let results = |response: ResponseFrame| {
        let Response::DescribeConfigs(r) = response.body else {
            panic!("not a DescribeConfigs response")
        };
        let mut out: Vec<(i8, String, i16)> = r
            .results
            .iter()
            .map(|c| (c.resource_type, c.resource_name.to_string(), c.error_code))
            .collect();
        out.sort();
        out
    };
    assert_eq!(
        results(client.receive()),
        [
            (2, "public".into(), 0),
            (2, "secret-1".into(), 29),
            (4, "1".into(), 0)
        ]
    );
    assert_eq!(results(client.receive()), [(2, "secret-2".into(), 29)]);
    assert_eq!(results(client.receive()), [(4, "secret-3".into(), 0)]);
    client.finish();
}

/// A Produce with acks=0 naming allowed and denied topics: the allowed part goes on (still
/// unanswered, as Kafka does), the denied part is dropped.
#[test]
fn an_acks_0_produce_is_split_without_a_response() {
    let upstream = Upstream::start(|request| Some(produce_answer(request, Duration::ZERO)));
    let tap = Tap::start(upstream.address, &["--deny-topic", "secret"]);
    let mut client = tap.connect();
    client.send_all(&[produce_to(0, &["public", "secret"]), metadata()]);
    assert_eq!(client.receive().header.correlation_id, 1);
    client.finish();
    let lines = tap.wait_closed(1);
    let mut server = ServerConnection::new();
    let mut buf = BytesMut::from(&upstream.received()[0][..]);
    let Request::Produce(forwarded) = server.receive(&mut buf).unwrap().unwrap().body else {
        panic!("not a Produce request")
    };
    let names: Vec<&str> = forwarded.topic_data.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["public"]);
    assert_eq!(forwarded.acks, 0);
    let denied = events(&lines, "denied");
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0]["action"], "split");
    assert_eq!(denied[0]["topics"], serde_json::json!(["secret"]));
}
