//! No secret reaches the tap's log (issue 20): SaslAuthenticate's bytes both ways, the raw
//! tokens after a SaslHandshake v0, a credential frame that does not decode (its hex), and
//! `--log-secrets` as the explicit opt-out with its warning. Each check looks for the
//! password as text, as base64 in both alphabets at every byte alignment, and as hex.

use crate::support::BIN;
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest,
};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::Framing;
use kafka_codec::{ApiKey, RequestFrame, ResponseFrame};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PASSWORD: &[u8] = b"s3cr3t-passw0rd~~";
const WAIT: Duration = Duration::from_secs(20);

/// The PLAIN token: authorization id, user, password, NUL-separated.
fn plain_token() -> Vec<u8> {
    let mut token = b"\0alice\0".to_vec();
    token.extend_from_slice(PASSWORD);
    token
}

fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Every form of the password that must not appear in `text`.
fn leaks(text: &str) -> Vec<String> {
    const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut forms = vec![String::from_utf8(PASSWORD.to_vec()).unwrap()];
    forms.push(PASSWORD.iter().map(|b| format!("{b:02x}")).collect());
    for alphabet in [STANDARD, URL] {
        // After 0, 1 or 2 bytes of something else, the password's own base64 characters are
        // those past the first group, up to the last whole group.
        for lead in 0..3 {
            let mut bytes = vec![b'x'; lead];
            bytes.extend_from_slice(PASSWORD);
            let encoded = base64(&bytes, alphabet);
            let whole = bytes.len() / 3 * 4;
            forms.push(encoded[4..whole].to_owned());
        }
    }
    forms
        .into_iter()
        .filter(|form| text.contains(form.as_str()))
        .collect()
}

#[test]
fn the_leak_check_finds_the_password_in_every_form() {
    let token = plain_token();
    for text in [
        String::from_utf8_lossy(PASSWORD).into_owned(),
        base64(
            &token,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        ),
        base64(
            &token[1..],
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        ),
        base64(
            &token[2..],
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        ),
        token.iter().map(|b| format!("{b:02x}")).collect(),
    ] {
        assert!(!leaks(&text).is_empty(), "not found in {text}");
    }
}

/// A fake broker for one connection: answers each frame with what `answer` returns for it
/// (raw frame bytes without the size prefix).
fn broker(answer: impl Fn(usize, &[u8]) -> Vec<u8> + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut index = 0;
            loop {
                let mut prefix = [0u8; 4];
                if stream.read_exact(&mut prefix).is_err() {
                    break;
                }
                let mut frame = vec![0u8; u32::from_be_bytes(prefix) as usize];
                if stream.read_exact(&mut frame).is_err() {
                    break;
                }
                let reply = answer(index, &frame);
                index += 1;
                let mut out = (reply.len() as u32).to_be_bytes().to_vec();
                out.extend_from_slice(&reply);
                if stream.write_all(&out).is_err() {
                    break;
                }
            }
        }
    });
    address
}

struct Tap {
    child: Child,
    address: String,
    lines: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

impl Tap {
    fn start(upstream: &str, extra: &[&str]) -> Tap {
        let mut child = Command::new(BIN)
            .args(["tap", "--listen", "127.0.0.1:0", "--upstream", upstream])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let address = loop {
            let line = stderr.next().unwrap().unwrap();
            stderr_text.lock().unwrap().push_str(&line);
            if let Some((_, rest)) = line.split_once("listening on ") {
                break rest.split(',').next().unwrap().to_owned();
            }
        };
        let keep = Arc::clone(&stderr_text);
        std::thread::spawn(move || {
            for line in stderr {
                keep.lock().unwrap().push_str(&line.unwrap());
            }
        });
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collect = Arc::clone(&lines);
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines() {
                collect.lock().unwrap().push(line.unwrap());
            }
        });
        Tap {
            child,
            address,
            lines,
            stderr: stderr_text,
        }
    }

    /// The log, once it has a `close` line.
    fn closed_log(&self) -> (String, Vec<Value>) {
        let start = Instant::now();
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if lines.iter().any(|l| l.contains("\"event\":\"close\"")) {
                let values = lines
                    .iter()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                return (lines.join("\n"), values);
            }
            assert!(start.elapsed() < WAIT, "no close line: {lines:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn frame(version: i16, body: impl Into<kafka_codec::Request>, id: i32) -> Vec<u8> {
    let mut out = BytesMut::new();
    RequestFrame::new(body, version, id)
        .with_client_id("secrets")
        .encode(&mut out, Framing::SizePrefixed)
        .unwrap();
    out.to_vec()
}

fn read_frame(stream: &mut TcpStream) -> Vec<u8> {
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).unwrap();
    let mut frame = vec![0u8; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut frame).unwrap();
    frame
}

/// A SaslAuthenticate conversation: the client's PLAIN token, the server's answer carrying
/// the password too (as a SCRAM server message would carry salt and proof).
fn authenticate(extra: &[&str]) -> (String, Vec<Value>, String) {
    let upstream = broker(|_, request| {
        let version = i16::from_be_bytes([request[2], request[3]]);
        let id = i32::from_be_bytes(request[4..8].try_into().unwrap());
        let mut echo = b"server saw ".to_vec();
        echo.extend_from_slice(PASSWORD);
        let response = ResponseFrame::new(
            SaslAuthenticateResponse::default().with_auth_bytes(Bytes::from(echo)),
            version,
            id,
        );
        response.encode_to_bytes().unwrap().to_vec()
    });
    let tap = Tap::start(&upstream, extra);
    let mut client = TcpStream::connect(&tap.address).unwrap();
    for (version, id) in [(0, 1), (1, 2), (2, 3)] {
        let request =
            SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(plain_token()));
        client.write_all(&frame(version, request, id)).unwrap();
        let response = read_frame(&mut client);
        ResponseFrame::decode(response.into(), ApiKey::SaslAuthenticate, version).unwrap();
    }
    drop(client);
    let (text, lines) = tap.closed_log();
    let stderr = tap.stderr.lock().unwrap().clone();
    (text, lines, stderr)
}

#[test]
fn sasl_authenticate_bytes_are_redacted_both_ways() {
    let (text, lines, stderr) = authenticate(&[]);
    assert_eq!(leaks(&text), Vec::<String>::new(), "{text}");
    assert_eq!(leaks(&stderr), Vec::<String>::new(), "{stderr}");
    let pairs: Vec<&Value> = lines.iter().filter(|l| l["event"] == "pair").collect();
    assert_eq!(pairs.len(), 3);
    for pair in pairs {
        assert_eq!(
            pair["request"]["body"]["authBytes"],
            format!("<redacted: {} bytes>", plain_token().len())
        );
        assert_eq!(
            pair["requestRedacted"],
            serde_json::json!(["body.authBytes"])
        );
        assert_eq!(
            pair["responseRedacted"],
            serde_json::json!(["body.authBytes"])
        );
    }
}

#[test]
fn log_secrets_shows_them_and_warns() {
    let (text, _, stderr) = authenticate(&["--log-secrets"]);
    assert!(
        !leaks(&text).is_empty(),
        "--log-secrets shows the credentials"
    );
    assert!(stderr.contains("--log-secrets"), "{stderr}");
}

#[test]
fn a_credential_frame_that_does_not_decode_is_not_shown_in_hex() {
    let upstream = broker(|_, request| {
        let id = i32::from_be_bytes(request[4..8].try_into().unwrap());
        ResponseFrame::new(SaslAuthenticateResponse::default(), 2, id)
            .encode_to_bytes()
            .unwrap()
            .to_vec()
    });
    let tap = Tap::start(&upstream, &["--strict"]);
    let mut client = TcpStream::connect(&tap.address).unwrap();
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(plain_token()));
    // One byte after the body: --strict refuses the frame, which is logged as an error.
    let mut bytes = frame(2, request, 1);
    bytes.push(0);
    let len = (bytes.len() - 4) as u32;
    bytes[..4].copy_from_slice(&len.to_be_bytes());
    client.write_all(&bytes).unwrap();
    read_frame(&mut client);
    drop(client);
    let (text, lines) = tap.closed_log();
    assert_eq!(leaks(&text), Vec::<String>::new(), "{text}");
    let pair = lines.iter().find(|l| l["event"] == "pair").unwrap();
    let hex = pair["requestError"]["hex"].as_str().unwrap();
    assert!(hex.starts_with("not shown: SaslAuthenticate"), "{hex}");
}

#[test]
fn raw_tokens_after_a_version_0_handshake_are_not_shown() {
    // SaslHandshake v0 accepted; then the raw PLAIN token (not a Kafka frame) and the
    // server's empty answer; then Kafka requests again.
    let upstream = broker(|index, request| match index {
        0 => {
            // SaslHandshake v0 response: correlation id, error 0, mechanisms ["PLAIN"].
            let mut reply = request[4..8].to_vec();
            reply.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 5]);
            reply.extend_from_slice(b"PLAIN");
            reply
        }
        1 => Vec::new(),
        _ => {
            let id = i32::from_be_bytes(request[4..8].try_into().unwrap());
            ResponseFrame::new(ApiVersionsResponse::default(), 3, id)
                .encode_to_bytes()
                .unwrap()
                .to_vec()
        }
    });
    let tap = Tap::start(&upstream, &[]);
    let mut client = TcpStream::connect(&tap.address).unwrap();
    let handshake = SaslHandshakeRequest::default().with_mechanism("PLAIN".into());
    client.write_all(&frame(0, handshake, 1)).unwrap();
    read_frame(&mut client);
    let token = plain_token();
    let mut raw = (token.len() as u32).to_be_bytes().to_vec();
    raw.extend_from_slice(&token);
    client.write_all(&raw).unwrap();
    assert!(read_frame(&mut client).is_empty());
    client
        .write_all(&frame(3, ApiVersionsRequest::default(), 2))
        .unwrap();
    read_frame(&mut client);
    drop(client);
    let (text, lines) = tap.closed_log();
    assert_eq!(leaks(&text), Vec::<String>::new(), "{text}");
    let tokens: Vec<&Value> = lines.iter().filter(|l| l["event"] == "saslToken").collect();
    assert_eq!(tokens.len(), 2, "{text}");
    assert_eq!(tokens[0]["direction"], "toServer");
    assert_eq!(tokens[0]["size"], token.len());
    let pairs: Vec<&Value> = lines.iter().filter(|l| l["event"] == "pair").collect();
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0]["api"], "SaslHandshake");
    assert_eq!(pairs[1]["api"], "ApiVersions");
    assert!(pairs[1]["response"]["body"].is_object());
}
