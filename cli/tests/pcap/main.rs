//! `kafka-codec decode pcap`: captures written by the tests themselves (pcap and pcapng by
//! `pcap-parser`'s writer, packets by `etherparse`'s builder, frames by the library) of
//! Kafka conversations split into segments, reordered, retransmitted, with a segment lost,
//! cut by a snap length, on every link type and both IP versions; TLS and other protocols;
//! hostile files (random bytes, huge declared lengths, many connections) in bounded memory.

#[path = "../support/mod.rs"]
mod support;

use etherparse::PacketBuilder;
use kafka_codec::bytes::Bytes;
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
    SaslAuthenticateRequest, SaslAuthenticateResponse,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::{ApiKey, Framing, Request, RequestFrame, Response, ResponseFrame};
use pcap_parser::pcapng::{EnhancedPacketBlock, InterfaceDescriptionBlock, SectionHeaderBlock};
use pcap_parser::{LegacyPcapBlock, Linktype, PcapHeader, ToVec};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::BIN;

/// How packets are framed on the link.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Link {
    Ethernet,
    Raw,
    Null,
    Loop,
    Sll,
    Sll2,
}

impl Link {
    fn linktype(self) -> Linktype {
        match self {
            Link::Ethernet => Linktype::ETHERNET,
            Link::Raw => Linktype::RAW,
            Link::Null => Linktype::NULL,
            Link::Loop => Linktype::LOOP,
            Link::Sll => Linktype::LINUX_SLL,
            Link::Sll2 => Linktype::LINUX_SLL2,
        }
    }
}

/// One TCP segment to capture.
#[derive(Debug, Clone)]
struct Seg {
    from: SocketAddr,
    to: SocketAddr,
    seq: u32,
    syn: bool,
    fin: bool,
    rst: bool,
    ack: Option<u32>,
    payload: Vec<u8>,
}

/// The packet bytes of `seg` on `link`.
fn packet(link: Link, seg: &Seg) -> Vec<u8> {
    let mut ip_packet = Vec::new();
    let step = match (seg.from.ip(), seg.to.ip()) {
        (IpAddr::V4(a), IpAddr::V4(b)) => PacketBuilder::ipv4(a.octets(), b.octets(), 64),
        (IpAddr::V6(a), IpAddr::V6(b)) => PacketBuilder::ipv6(a.octets(), b.octets(), 64),
        _ => unreachable!("one IP version per connection"),
    };
    let mut tcp = step.tcp(seg.from.port(), seg.to.port(), seg.seq, 65535);
    if seg.syn {
        tcp = tcp.syn();
    }
    if seg.fin {
        tcp = tcp.fin();
    }
    if seg.rst {
        tcp = tcp.rst();
    }
    if let Some(ack) = seg.ack {
        tcp = tcp.ack(ack);
    }
    tcp.write(&mut ip_packet, &seg.payload).unwrap();
    let v6 = seg.from.is_ipv6();
    let ethertype: u16 = if v6 { 0x86dd } else { 0x0800 };
    let mut out = Vec::new();
    match link {
        Link::Raw => {}
        Link::Ethernet => {
            out.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
            out.extend_from_slice(&ethertype.to_be_bytes());
        }
        // DLT_NULL is in the capturing host's order (little-endian here); Linux's AF_INET6
        // is 10 but BSDs write 24, 28 or 30.
        Link::Null => out.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes()),
        Link::Loop => out.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        Link::Sll => {
            out.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            out.extend_from_slice(&ethertype.to_be_bytes());
        }
        Link::Sll2 => {
            out.extend_from_slice(&ethertype.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
    }
    out.extend(ip_packet);
    out
}

/// A capture to write: packets with their time (microseconds) and how many bytes of each
/// are cut off.
struct Capture {
    link: Link,
    packets: Vec<(u64, Vec<u8>, usize)>,
}

impl Capture {
    fn new(link: Link) -> Self {
        Capture {
            link,
            packets: Vec::new(),
        }
    }

    fn add(&mut self, time_us: u64, seg: &Seg) {
        self.packets.push((time_us, packet(self.link, seg), 0));
    }

    /// Adds `seg` with its last `cut` bytes not captured (a snap length).
    fn add_cut(&mut self, time_us: u64, seg: &Seg, cut: usize) {
        self.packets.push((time_us, packet(self.link, seg), cut));
    }

    fn pcap(&self) -> Vec<u8> {
        let mut header = PcapHeader::new();
        header.network = self.link.linktype();
        header.snaplen = 262144;
        let mut out = header.to_vec().unwrap();
        for (time, data, cut) in &self.packets {
            let captured = &data[..data.len() - cut];
            let mut block = LegacyPcapBlock {
                ts_sec: (time / 1_000_000) as u32,
                ts_usec: (time % 1_000_000) as u32,
                caplen: captured.len() as u32,
                origlen: data.len() as u32,
                data: captured,
            };
            out.extend(block.to_vec().unwrap());
        }
        out
    }

    fn pcapng(&self) -> Vec<u8> {
        let mut section = SectionHeaderBlock {
            block_type: 0,
            block_len1: 0,
            bom: 0,
            major_version: 1,
            minor_version: 0,
            section_len: -1,
            options: Vec::new(),
            block_len2: 0,
        };
        let mut out = section.to_vec().unwrap();
        let mut interface = InterfaceDescriptionBlock {
            block_type: 0,
            block_len1: 0,
            linktype: self.link.linktype(),
            reserved: 0,
            snaplen: 262144,
            options: Vec::new(),
            block_len2: 0,
            // Nanoseconds, to read the resolution from the interface.
            if_tsresol: 9,
            if_tsoffset: 0,
        };
        out.extend(interface.to_vec().unwrap());
        for (time, data, cut) in &self.packets {
            let captured = &data[..data.len() - cut];
            let nanos = time * 1000;
            let mut block = EnhancedPacketBlock {
                block_type: 0,
                block_len1: 0,
                if_id: 0,
                ts_high: (nanos >> 32) as u32,
                ts_low: nanos as u32,
                caplen: captured.len() as u32,
                origlen: data.len() as u32,
                data: captured,
                options: Vec::new(),
                block_len2: 0,
            };
            out.extend(block.to_vec().unwrap());
        }
        out
    }
}

/// A Kafka conversation on one connection: requests and their responses, as bytes each
/// side sends, cut into segments.
struct Conversation {
    client: SocketAddr,
    server: SocketAddr,
    client_isn: u32,
    server_isn: u32,
    /// (request frame, response frame) with size prefixes.
    exchanges: Vec<(Vec<u8>, Vec<u8>)>,
}

fn request_bytes(body: impl Into<Request>, version: i16, id: i32) -> Vec<u8> {
    let frame = RequestFrame::new(body, version, id).with_client_id("pcap-test");
    let mut out = Vec::new();
    frame.encode(&mut out, Framing::SizePrefixed).unwrap();
    out
}

fn response_bytes(body: impl Into<Response>, version: i16, id: i32) -> Vec<u8> {
    let frame = ResponseFrame::new(body, version, id);
    let mut out = Vec::new();
    frame.encode(&mut out, Framing::SizePrefixed).unwrap();
    out
}

/// ApiVersions v3, then Metadata v12 `n` times.
fn exchanges(n: i32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = vec![(
        request_bytes(ApiVersionsRequest::default(), 3, 0),
        response_bytes(ApiVersionsResponse::default(), 3, 0),
    )];
    for id in 1..=n {
        let cluster = format!("cluster-{id}");
        out.push((
            request_bytes(MetadataRequest::default(), 12, id),
            response_bytes(
                MetadataResponse::default().with_cluster_id(Some(cluster.into())),
                12,
                id,
            ),
        ));
    }
    out
}

impl Conversation {
    fn new(client: &str, server: &str, exchanges: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        Conversation {
            client: client.parse().unwrap(),
            server: server.parse().unwrap(),
            // Near the wrap of the sequence numbers on one side.
            client_isn: u32::MAX - 40,
            server_isn: 1_000_000,
            exchanges,
        }
    }

    fn client_stream(&self) -> Vec<u8> {
        self.exchanges.iter().flat_map(|(q, _)| q.clone()).collect()
    }

    fn server_stream(&self) -> Vec<u8> {
        self.exchanges.iter().flat_map(|(_, r)| r.clone()).collect()
    }

    fn seg(&self, from_client: bool, offset: usize, payload: &[u8]) -> Seg {
        let (from, to, isn) = if from_client {
            (self.client, self.server, self.client_isn)
        } else {
            (self.server, self.client, self.server_isn)
        };
        Seg {
            from,
            to,
            seq: isn.wrapping_add(1).wrapping_add(offset as u32),
            syn: false,
            fin: false,
            rst: false,
            ack: None,
            payload: payload.to_vec(),
        }
    }

    /// The segments in wire order: the handshake, each request cut in pieces of `piece`
    /// bytes then its response likewise, and both FINs.
    fn segments(&self, piece: usize) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut syn = self.seg(true, 0, &[]);
        syn.seq = self.client_isn;
        syn.syn = true;
        out.push(syn);
        let mut syn_ack = self.seg(false, 0, &[]);
        syn_ack.seq = self.server_isn;
        syn_ack.syn = true;
        syn_ack.ack = Some(self.client_isn.wrapping_add(1));
        out.push(syn_ack);
        // Each segment acknowledges what the other side sent before it.
        let acked = |isn: u32, bytes: usize| Some(isn.wrapping_add(1).wrapping_add(bytes as u32));
        let (mut at_client, mut at_server) = (0, 0);
        for (request, response) in &self.exchanges {
            for chunk in request.chunks(piece) {
                let mut seg = self.seg(true, at_client, chunk);
                seg.ack = acked(self.server_isn, at_server);
                out.push(seg);
                at_client += chunk.len();
            }
            for chunk in response.chunks(piece) {
                let mut seg = self.seg(false, at_server, chunk);
                seg.ack = acked(self.client_isn, at_client);
                out.push(seg);
                at_server += chunk.len();
            }
        }
        let mut fin = self.seg(true, at_client, &[]);
        fin.fin = true;
        fin.ack = acked(self.server_isn, at_server);
        out.push(fin);
        let mut fin = self.seg(false, at_server, &[]);
        fin.fin = true;
        fin.ack = acked(self.client_isn, at_client + 1);
        out.push(fin);
        out
    }
}

fn capture_of(link: Link, segments: &[Seg]) -> Capture {
    let mut capture = Capture::new(link);
    for (i, seg) in segments.iter().enumerate() {
        capture.add(1_700_000_000_000_000 + i as u64 * 1000, seg);
    }
    capture
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kafka-codec-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn decode(path: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .args(["decode", "pcap"])
        .arg(path)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The lines of a run that succeeded, with nothing on stderr.
fn lines_ok(path: &Path, extra: &[&str]) -> Vec<Value> {
    let output = decode(path, extra);
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    parse_lines(&output)
}

fn parse_lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

fn sum(bytes: &[u8]) -> Value {
    serde_json::json!({"bytes": bytes.len(), "crc32c": format!("{:08x}", crc32c::crc32c(bytes))})
}

/// The pairs are the conversation's exchanges, their JSON the frames' (encoded again, the
/// same bytes), and the close line counts each side's bytes.
fn assert_conversation(lines: &[Value], conversation: &Conversation) {
    let pairs = events(lines, "pair");
    assert_eq!(pairs.len(), conversation.exchanges.len(), "{lines:#?}");
    for (pair, (request, response)) in pairs.iter().zip(&conversation.exchanges) {
        let frame = RequestFrame::from_json(&pair["request"]).unwrap();
        let mut bytes = Vec::new();
        frame.encode(&mut bytes, Framing::SizePrefixed).unwrap();
        assert_eq!(&bytes, request);
        let frame = ResponseFrame::from_json(&pair["response"]).unwrap();
        let mut bytes = Vec::new();
        frame.encode(&mut bytes, Framing::SizePrefixed).unwrap();
        assert_eq!(&bytes, response);
        assert!(pair["latencyMs"].as_f64().unwrap() >= 0.0);
    }
    let connect = events(lines, "connect");
    assert_eq!(connect.len(), 1);
    assert_eq!(connect[0]["client"], conversation.client.to_string());
    assert_eq!(connect[0]["listener"], conversation.server.to_string());
    let close = events(lines, "close");
    assert_eq!(close.len(), 1);
    let close = close[0];
    assert_eq!(
        close["toServer"]["received"],
        sum(&conversation.client_stream())
    );
    assert_eq!(
        close["toClient"]["received"],
        sum(&conversation.server_stream())
    );
    assert_eq!(close["toServer"]["frames"], conversation.exchanges.len());
    assert_eq!(close["toClient"]["frames"], conversation.exchanges.len());
    assert_eq!(close["toServer"]["end"], "eof");
    assert_eq!(close["toClient"]["end"], "eof");
}

#[test]
fn every_link_type_both_formats_and_both_ip_versions() {
    let links = [
        Link::Ethernet,
        Link::Raw,
        Link::Null,
        Link::Loop,
        Link::Sll,
        Link::Sll2,
    ];
    for (i, link) in links.into_iter().enumerate() {
        for (client, server) in [
            ("10.0.0.1:50000", "10.0.0.2:9092"),
            ("[fd00::1]:50000", "[fd00::2]:9093"),
        ] {
            let conversation = Conversation::new(client, server, exchanges(3));
            let capture = capture_of(link, &conversation.segments(17 + i));
            for (format, bytes) in [("pcap", capture.pcap()), ("pcapng", capture.pcapng())] {
                let path = temp(&format!("link-{link:?}-{}.{format}", server.len()), &bytes);
                let lines = lines_ok(&path, &[]);
                assert_conversation(&lines, &conversation);
                // Times are the capture's: the first packet at 1_700_000_000 s.
                let connect = events(&lines, "connect")[0];
                assert_eq!(
                    connect["time"], "2023-11-14T22:13:20.000000Z",
                    "{link:?} {format}"
                );
                let summary = events(&lines, "capture")[0];
                assert_eq!(summary["kafka"], 1);
            }
        }
    }
}

#[test]
fn reordered_and_retransmitted_segments_give_the_same_pairs() {
    let conversation = Conversation::new("10.0.0.1:50001", "10.0.0.2:9092", exchanges(4));
    let segments = conversation.segments(13);
    // Within each run of one side's segments: reversed, every third sent twice; and a
    // retransmission that overlaps two segments. (Across sides the order stays: a response
    // is never captured before the last byte of its request.)
    let mut all = segments[..2].to_vec();
    let body = &segments[2..segments.len() - 2];
    let mut at = 0;
    while at < body.len() {
        let run = body[at..]
            .iter()
            .take_while(|s| s.from == body[at].from)
            .count();
        for (i, seg) in body[at..at + run].iter().rev().enumerate() {
            all.push(seg.clone());
            if i % 3 == 0 {
                all.push(seg.clone());
            }
        }
        at += run;
    }
    let client = conversation.client_stream();
    all.push(conversation.seg(true, 5, &client[5..40]));
    all.extend_from_slice(&segments[segments.len() - 2..]);
    let capture = capture_of(Link::Ethernet, &all);
    let lines = lines_ok(&temp("reordered.pcap", &capture.pcap()), &[]);
    assert_conversation(&lines, &conversation);
    assert!(events(&lines, "gap").is_empty());
    assert_eq!(events(&lines, "close")[0]["toServer"]["gaps"], 0);
}

#[test]
fn a_lost_segment_is_one_gap_and_decoding_resumes_at_the_next_frame() {
    let conversation = Conversation::new("10.0.0.1:50002", "10.0.0.2:9092", exchanges(6));
    let segments = conversation.segments(20);
    // Lose a segment in the middle of the third request (correlation id 2).
    let client = conversation.client_stream();
    let third = conversation.exchanges[0].0.len() + conversation.exchanges[1].0.len();
    let lost = segments
        .iter()
        .position(|s| {
            s.from == conversation.client
                && s.seq
                    == conversation
                        .client_isn
                        .wrapping_add(1)
                        .wrapping_add(third as u32 + 20)
        })
        .unwrap();
    let kept: Vec<Seg> = segments
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != lost)
        .map(|(_, s)| s.clone())
        .collect();
    let lost_bytes = segments[lost].payload.len();
    let lines = lines_ok(
        &temp("lost.pcap", &capture_of(Link::Raw, &kept).pcap()),
        &[],
    );
    let gaps = events(&lines, "gap");
    assert_eq!(gaps.len(), 1, "{lines:#?}");
    assert_eq!(gaps[0]["direction"], "toServer");
    assert_eq!(gaps[0]["lostBytes"], lost_bytes);
    // Every request but the one cut is a pair; its response answers no request seen.
    let ids: Vec<i64> = events(&lines, "pair")
        .iter()
        .map(|p| p["correlationId"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [0, 1, 3, 4, 5, 6]);
    for pair in events(&lines, "pair") {
        assert!(pair["response"]["body"].is_object(), "{pair}");
    }
    let orphan = events(&lines, "response");
    assert_eq!(orphan.len(), 1);
    assert_eq!(orphan[0]["correlationId"], 2);
    let close = events(&lines, "close")[0];
    assert_eq!(close["toServer"]["gaps"], 1);
    assert_eq!(close["toServer"]["lostBytes"], lost_bytes);
    assert_eq!(
        close["toServer"]["received"]["bytes"],
        client.len() - lost_bytes
    );
    assert_eq!(close["toClient"]["gaps"], 0);
}

#[test]
fn packets_cut_by_the_snap_length_are_gaps() {
    let conversation = Conversation::new("10.0.0.1:50003", "10.0.0.2:9092", exchanges(3));
    let segments = conversation.segments(1000);
    let mut capture = Capture::new(Link::Ethernet);
    for (i, seg) in segments.iter().enumerate() {
        // The second response is cut 10 bytes short.
        let second_response =
            seg.from == conversation.server && seg.payload.len() > 20 && i > 4 && i < 7;
        if second_response {
            capture.add_cut(i as u64, seg, 10);
        } else {
            capture.add(i as u64, seg);
        }
    }
    for (format, bytes) in [("pcap", capture.pcap()), ("pcapng", capture.pcapng())] {
        let lines = lines_ok(&temp(&format!("cut.{format}"), &bytes), &[]);
        let gaps = events(&lines, "gap");
        assert_eq!(gaps.len(), 1, "{lines:#?}");
        assert_eq!(gaps[0]["direction"], "toClient");
        assert_eq!(gaps[0]["lostBytes"], 10);
        assert_eq!(events(&lines, "close")[0]["toClient"]["lostBytes"], 10);
        // The response cut short is not decoded; the ones after it are.
        let pairs = events(&lines, "pair");
        let answered: Vec<bool> = pairs.iter().map(|p| p["response"].is_object()).collect();
        assert_eq!(answered.iter().filter(|a| **a).count(), 3, "{lines:#?}");
    }
}

#[test]
fn tls_on_a_kafka_port_is_one_line_and_other_protocols_elsewhere_are_not_logged() {
    // A real ClientHello, as rustls writes it.
    let client_hello = {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from("kafka.example").unwrap();
        let mut connection = rustls::ClientConnection::new(config.into(), name).unwrap();
        let mut hello = Vec::new();
        connection.write_tls(&mut hello).unwrap();
        hello
    };
    let tls = Conversation::new(
        "10.0.0.1:50004",
        "10.0.0.2:9093",
        vec![(client_hello, b"\x16\x03\x03\x00\x02\x02\x00".to_vec())],
    );
    let http = Conversation::new(
        "10.0.0.1:50005",
        "10.0.0.2:8080",
        vec![(
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            b"HTTP/1.1 200 OK\r\n\r\n".to_vec(),
        )],
    );
    let mut segments = tls.segments(30);
    segments.extend(http.segments(30));
    let lines = lines_ok(
        &temp("tls.pcap", &capture_of(Link::Ethernet, &segments).pcap()),
        &[],
    );
    let tls_lines = events(&lines, "tls");
    assert_eq!(tls_lines.len(), 1, "{lines:#?}");
    assert_eq!(tls_lines[0]["client"], "10.0.0.1:50004");
    assert!(events(&lines, "pair").is_empty());
    assert!(events(&lines, "close").is_empty());
    let summary = events(&lines, "capture")[0];
    assert_eq!(summary["tls"], 1);
    assert_eq!(summary["notKafka"], 1);
    assert_eq!(lines.len(), 2, "{lines:#?}");
}

#[test]
fn kafka_on_another_port_is_found_by_its_first_request() {
    // The client is on the higher port and sends first; the server's port is no --port.
    let conversation = Conversation::new("[fd00::9]:60000", "[fd00::1]:19092", exchanges(2));
    let path = temp(
        "other-port.pcapng",
        &capture_of(Link::Sll2, &conversation.segments(50)).pcapng(),
    );
    assert_conversation(&lines_ok(&path, &[]), &conversation);
    // Named with --port, the same.
    assert_conversation(&lines_ok(&path, &["--port", "19092"]), &conversation);
}

#[test]
fn a_connection_captured_midway_is_read_from_its_next_frame() {
    let conversation = Conversation::new("10.0.0.1:50006", "10.0.0.2:9092", exchanges(4));
    let segments = conversation.segments(25);
    // No handshake, and the capture starts inside the first request and its response.
    let start_client = segments
        .iter()
        .position(|s| s.from == conversation.client && !s.syn && !s.payload.is_empty())
        .unwrap()
        + 1;
    let capture: Vec<Seg> = segments[start_client..].to_vec();
    let lines = lines_ok(
        &temp("midway.pcap", &capture_of(Link::Ethernet, &capture).pcap()),
        &[],
    );
    let ids: Vec<i64> = events(&lines, "pair")
        .iter()
        .map(|p| p["correlationId"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3, 4], "{lines:#?}");
    assert!(events(&lines, "gap").is_empty());
    let close = events(&lines, "close")[0];
    assert!(close["toServer"]["skippedBytes"].as_u64().unwrap() > 0);
}

#[test]
fn secrets_are_redacted_unless_log_secrets() {
    let token = b"\0alice\0alice-secret-password".to_vec();
    let exchanges = vec![(
        request_bytes(
            SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token.clone())),
            2,
            0,
        ),
        response_bytes(SaslAuthenticateResponse::default(), 2, 0),
    )];
    let conversation = Conversation::new("10.0.0.1:50007", "10.0.0.2:9092", exchanges);
    let path = temp(
        "sasl.pcap",
        &capture_of(Link::Ethernet, &conversation.segments(100)).pcap(),
    );
    let output = decode(&path, &[]);
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(!text.contains("alice-secret-password"));
    let lines = parse_lines(&output);
    let pair = events(&lines, "pair")[0];
    assert_eq!(pair["api"], ApiKey::SaslAuthenticate.name());
    assert!(pair["requestRedacted"].is_array(), "{pair}");

    let output = decode(&path, &["--log-secrets"]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--log-secrets"));
    let lines = parse_lines(&output);
    let pair = events(&lines, "pair")[0];
    let frame = RequestFrame::from_json(&pair["request"]).unwrap();
    let Request::SaslAuthenticate(body) = frame.body else {
        panic!("{pair}")
    };
    assert_eq!(body.auth_bytes.as_ref(), &token[..]);
}

#[test]
fn records_are_shown_as_batches_with_records() {
    // The --records flag reaches the logger: a Produce's records field as batches.
    use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_codec::messages::{ProduceRequest, ProduceResponse};
    use kafka_codec::records::{Compression, RecordBatchBuilder};
    let mut builder = RecordBatchBuilder::new(Compression::None).base_offset(0);
    builder.append(
        1_700_000_000_000,
        Some(Bytes::from_static(b"k")),
        Some(Bytes::from_static(b"v")),
    );
    let records = builder.build().encode_to_bytes().unwrap();
    let request = ProduceRequest::default()
        .with_acks(1)
        .with_timeout_ms(1000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(records))])]);
    let exchanges = vec![(
        request_bytes(request, 9, 0),
        response_bytes(ProduceResponse::default(), 9, 0),
    )];
    let conversation = Conversation::new("10.0.0.1:50008", "10.0.0.2:9092", exchanges);
    let path = temp(
        "produce.pcap",
        &capture_of(Link::Ethernet, &conversation.segments(64)).pcap(),
    );
    let plain = lines_ok(&path, &[]);
    let expanded = lines_ok(&path, &["--records"]);
    let field = |lines: &[Value]| {
        events(lines, "pair")[0]["request"]["body"]["topicData"][0]["partitionData"][0]["records"]
            .clone()
    };
    assert!(field(&plain).is_string());
    assert!(field(&expanded).is_array(), "{:?}", field(&expanded));
}

#[test]
fn bad_files_get_one_line_and_what_came_before_is_written() {
    let one_line = |output: &Output| {
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        stderr
    };
    let empty = decode(&temp("empty.pcap", b""), &[]);
    assert!(one_line(&empty).contains("empty or truncated"));
    let garbage = decode(&temp("garbage.pcap", &[0x42; 4096]), &[]);
    assert!(one_line(&garbage).contains("not a capture"));

    // Truncated in the middle of a record: the pairs before it are written.
    let conversation = Conversation::new("10.0.0.1:50009", "10.0.0.2:9092", exchanges(5));
    let bytes = capture_of(Link::Ethernet, &conversation.segments(40)).pcap();
    let output = decode(&temp("truncated.pcap", &bytes[..bytes.len() * 2 / 3]), &[]);
    assert!(one_line(&output).contains("truncated"));
    let lines = parse_lines(&output);
    assert!(!events(&lines, "pair").is_empty());
    let close = events(&lines, "close")[0];
    assert_eq!(
        close["toServer"]["end"],
        "the capture ends before the connection does"
    );
    assert_eq!(events(&lines, "capture").len(), 1);
}

/// This process's resident set size, in bytes.
fn own_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Writes a hostile capture into `path` as it goes (the test process stays small, as the
/// child's peak RSS is measured): a legacy pcap header, then what `body` writes.
fn hostile_file(name: &str, body: impl FnOnce(&mut dyn std::io::Write)) -> PathBuf {
    let path = temp(name, b"");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    body(&mut file);
    std::io::Write::flush(&mut file).unwrap();
    path
}

#[test]
fn hostile_captures_cost_bounded_memory_and_never_panic() {
    use support::rss::wait_usage;
    let run = |path: &Path, extra: &[&str], what: &str| {
        let child = Command::new(BIN)
            .args(["decode", "pcap"])
            .arg(path)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let usage = wait_usage(child, what);
        assert!(
            libc::WIFEXITED(usage.status),
            "{what}: killed by a signal (status {:#x})",
            usage.status
        );
        let code = libc::WEXITSTATUS(usage.status);
        eprintln!("{what}: peak RSS {} KiB", usage.peak_rss / 1024);
        assert!(
            code == 0 || code == 1,
            "{what}: exit {code} (a panic exits 101)"
        );
        usage
    };
    let mut header = PcapHeader::new();
    header.snaplen = 262144;
    header.network = Linktype::RAW;
    let header = header.to_vec().unwrap();

    // Random bytes after a valid header, and alone.
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let noise: Vec<u8> = (0..1 << 20).map(|_| random() as u8).collect();
    let path = hostile_file("random-after-header.pcap", |out| {
        out.write_all(&header).unwrap();
        out.write_all(&noise).unwrap();
    });
    run(&path, &[], "random bytes after a pcap header");
    let path = hostile_file("random.pcap", |out| out.write_all(&noise).unwrap());
    run(&path, &[], "random bytes");

    // A record declaring 4 GiB, and a pcapng block declaring 4 GiB.
    let path = hostile_file("huge-record.pcap", |out| {
        out.write_all(&header).unwrap();
        out.write_all(&[
            0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ])
        .unwrap();
        out.write_all(&noise[..100_000]).unwrap();
    });
    let usage = run(&path, &[], "a huge record");
    assert!(
        usage.peak_rss < 128 << 20,
        "a huge record: peak RSS {}",
        usage.peak_rss
    );
    let path = hostile_file("huge-block.pcapng", |out| {
        let mut section = SectionHeaderBlock {
            block_type: 0,
            block_len1: 0,
            bom: 0,
            major_version: 1,
            minor_version: 0,
            section_len: -1,
            options: Vec::new(),
            block_len2: 0,
        };
        out.write_all(&section.to_vec().unwrap()).unwrap();
        out.write_all(&[6, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff])
            .unwrap();
        out.write_all(&noise[..100_000]).unwrap();
    });
    let usage = run(&path, &[], "a huge pcapng block");
    assert!(
        usage.peak_rss < 128 << 20,
        "a huge block: peak RSS {}",
        usage.peak_rss
    );

    // Many connections, each beginning a 100 MB request it never finishes, and a segment
    // far ahead of what came: without the caps, every one would be held.
    let connections = 20_000u32;
    let path = hostile_file("many.pcap", |out| {
        out.write_all(&header).unwrap();
        let mut request = request_bytes(MetadataRequest::default(), 12, 1);
        request[..4].copy_from_slice(&(100_000_000u32).to_be_bytes());
        request.resize(1400, 0x41);
        for n in 0..connections {
            let client: SocketAddr = SocketAddr::new(
                [10, 1, (n >> 8) as u8, n as u8].into(),
                40000 + (n % 20000) as u16,
            );
            let server: SocketAddr = "10.0.0.2:9092".parse().unwrap();
            let conversation = Conversation {
                client,
                server,
                client_isn: n,
                server_isn: 0,
                exchanges: Vec::new(),
            };
            let mut syn = conversation.seg(true, 0, &[]);
            syn.seq = n;
            syn.syn = true;
            let first = conversation.seg(true, 0, &request);
            let ahead = conversation.seg(true, 100_000, &request[..1000]);
            for (i, seg) in [syn, first, ahead].iter().enumerate() {
                let data = packet(Link::Raw, seg);
                let mut block = LegacyPcapBlock {
                    ts_sec: n,
                    ts_usec: i as u32,
                    caplen: data.len() as u32,
                    origlen: data.len() as u32,
                    data: &data,
                };
                out.write_all(&block.to_vec().unwrap()).unwrap();
            }
        }
    });
    let file_size = std::fs::metadata(&path).unwrap().len();
    let usage = run(
        &path,
        &["--max-connections", "500", "--memory-budget", "8MiB"],
        "many connections",
    );
    assert!(libc::WEXITSTATUS(usage.status) == 0);
    // The file is far larger than what the caps let the process hold.
    assert!(file_size > 40 << 20, "{file_size}");
    // Measured: 24 MiB with these caps, 150 MiB with a cap above the connections. A child's
    // peak counts its parent's RSS at the spawn (support/rss.rs): allowed for.
    let limit = (48u64 << 20).max(own_rss() + (24 << 20));
    assert!(
        usage.peak_rss < limit,
        "many connections: peak RSS {} for a {file_size}-byte capture",
        usage.peak_rss
    );
}

#[test]
fn frames_above_max_frame_are_skipped_as_the_tap_skips_them() {
    let big = response_bytes(
        MetadataResponse::default().with_cluster_id(Some("c".repeat(100).into())),
        12,
        1,
    );
    let mut exchanges = exchanges(2);
    exchanges[1].1 = big.clone();
    let conversation = Conversation::new("10.0.0.1:50010", "10.0.0.2:9092", exchanges);
    let path = temp(
        "max-frame.pcap",
        &capture_of(Link::Ethernet, &conversation.segments(30)).pcap(),
    );
    let lines = lines_ok(&path, &["--max-frame", "64"]);
    let pairs = events(&lines, "pair");
    assert_eq!(pairs.len(), 3);
    // The Metadata response with its long cluster id is larger than 64 bytes; the frames
    // around it are decoded.
    assert!(pairs[1]["request"].is_object());
    let skipped = &pairs[1]["responseSkipped"];
    let reason = skipped["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("larger than --max-frame (64 bytes)"),
        "{}",
        pairs[1]
    );
    assert_eq!(skipped["size"], big.len() - 4);
    assert!(pairs[2]["response"].is_object());
}

#[test]
fn the_same_ports_opening_another_connection_start_a_new_one() {
    let first = Conversation::new("10.0.0.1:50011", "10.0.0.2:9092", exchanges(1));
    let mut second = Conversation::new("10.0.0.1:50011", "10.0.0.2:9092", exchanges(2));
    second.client_isn = 77;
    second.server_isn = 99;
    // The first connection's FINs are not captured: only the new SYN ends it.
    let mut segments = first.segments(40);
    segments.truncate(segments.len() - 2);
    segments.extend(second.segments(40));
    let lines = lines_ok(
        &temp("reused.pcap", &capture_of(Link::Ethernet, &segments).pcap()),
        &[],
    );
    assert_eq!(events(&lines, "connect").len(), 2, "{lines:#?}");
    let closes = events(&lines, "close");
    assert_eq!(
        closes[0]["toServer"]["received"],
        sum(&first.client_stream())
    );
    assert_eq!(
        closes[0]["toServer"]["end"],
        "not seen to end: the same ports opened another connection"
    );
    assert_eq!(
        closes[1]["toServer"]["received"],
        sum(&second.client_stream())
    );
    assert_eq!(events(&lines, "pair").len(), 5);
    assert!(events(&lines, "gap").is_empty());
}

#[test]
fn a_connection_begun_before_the_capture_on_another_port_is_not_kept_waiting() {
    // Kafka on a port not named, captured after it opened: its first bytes say nothing of
    // its start, so it is counted as not Kafka (and not held while undecided).
    let conversation = Conversation::new("10.0.0.1:50012", "10.0.0.2:29092", exchanges(3));
    let segments = conversation.segments(25);
    let lines = lines_ok(
        &temp(
            "midway-other-port.pcap",
            &capture_of(Link::Ethernet, &segments[3..]).pcap(),
        ),
        &[],
    );
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(events(&lines, "capture")[0]["notKafka"], 1);
    // Named with --port, it is read from its next frame.
    let path = temp(
        "midway-other-port.pcap",
        &capture_of(Link::Ethernet, &segments[3..]).pcap(),
    );
    let lines = lines_ok(&path, &["--port", "29092"]);
    assert_eq!(events(&lines, "pair").len(), 3, "{lines:#?}");
}
