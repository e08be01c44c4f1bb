//! `--metrics-listen HOST:PORT`: the [`Metrics`] served to Prometheus over HTTP/1.x, on the
//! command's own runtime, with the same parts as its Kafka listener: the accept loop that
//! backs off ([`Acceptor`]), a cap on connections that closes the one longest without a
//! complete request ([`Registry`], a registry of its own so that scrapers and clients never
//! evict each other), and the memory budget, which every byte a scraper makes the server hold
//! is charged to.
//!
//! One request per connection: `GET /metrics` (or `HEAD`) is answered with the text format
//! and the connection closed; another path is 404, another method 405, anything that is not
//! an HTTP request head within [`MAX_REQUEST`] bytes 400 or 431. The whole request must arrive
//! within [`REQUEST_TIMEOUT`] and the answer be taken within [`WRITE_TIMEOUT`]. A scraper
//! that misbehaves costs its own connection, never the proxy: it is a task like any other,
//! holds at most [`MAX_REQUEST`] bytes, and at most [`MAX_SCRAPERS`] of them are open.
//!
//! Why not an HTTP crate: one fixed route and one request per connection need the request
//! line only; `hyper` (with `hyper-util` and `http-body-util`, which a server needs) would be
//! the largest dependency of the CLI for that (16 s of CPU against 3 s for the text format:
//! `benches/README.md`).

use super::accept::Acceptor;
use super::budget::Budget;
use super::metrics::{Metrics, Scrape};
use super::registry::{Member, Registry};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read (request line and headers); Prometheus sends a few hundred
/// bytes.
pub const MAX_REQUEST: usize = 8 * 1024;
/// Scraper connections open at once; another one closes the one that has gone longest
/// without a complete request.
pub const MAX_SCRAPERS: usize = 16;
/// How long a scraper may take to send its request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a scraper may take to read the answer.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// `--metrics-listen`.
#[derive(Debug, Clone, clap::Args)]
pub struct MetricsListen {
    /// Serve Prometheus metrics (text format 0.0.4) at http://HOST:PORT/metrics: requests and
    /// responses by API and version, bytes, latency, connections, memory (port 0: any free
    /// port; a line on stderr names it). At most 16 scrapers at once, one request each.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,
}

impl MetricsListen {
    /// Binds the metrics listener, if asked for: at start, so that a wrong address fails the
    /// command rather than a later scrape.
    pub fn bind(
        &self,
    ) -> Result<Option<(std::net::TcpListener, SocketAddr)>, crate::error::SetupError> {
        self.metrics_listen
            .as_deref()
            .map(|address| crate::listen::listen_as("--metrics-listen", address))
            .transpose()
    }
}

/// Serves `metrics` on `listener` until the process ends; `report` gets the accept loop's
/// lines. Call on the runtime that is to serve it.
pub fn spawn(
    listener: std::net::TcpListener,
    metrics: Arc<Metrics>,
    budget: Arc<Budget>,
    report: impl Fn(String) + Send + Sync + 'static,
) -> std::io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    tokio::spawn(async move {
        let mut acceptor = Acceptor::new(listener);
        let registry = Registry::new(MAX_SCRAPERS);
        let next = AtomicU64::new(1);
        loop {
            let (tcp, _) = acceptor.accept(&report).await;
            let (member, _) = registry.join(next.fetch_add(1, Ordering::Relaxed));
            tokio::spawn(scraper(
                Arc::clone(&metrics),
                Arc::clone(&budget),
                member,
                tcp,
            ));
        }
    });
    Ok(())
}

/// One scraper's connection, until it is answered, times out or is evicted. Eviction is
/// watched while the answer is written too, so that scrapers that never read their answers
/// hold at most [`MAX_SCRAPERS`] of them.
async fn scraper(metrics: Arc<Metrics>, budget: Arc<Budget>, member: Member, mut tcp: TcpStream) {
    let answered = AtomicBool::new(false);
    let unanswered = tokio::select! {
        unanswered = answer(&metrics, &budget, &member, &mut tcp, &answered) => unanswered,
        _ = member.evicted() => (!answered.load(Ordering::Relaxed)).then_some(Scrape::Evicted),
    };
    if let Some(outcome) = unanswered {
        metrics.scrape(outcome);
    }
}

/// What a request head asks for.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    Metrics { head_only: bool },
    NotFound,
    WrongMethod,
    Bad,
    TooLong,
}

/// Why reading a request head stopped short.
enum Unread {
    /// The scraper closed or the connection failed.
    Gone,
    /// The budget had no room for it.
    NoMemory,
    /// It is longer than [`MAX_REQUEST`].
    TooLong,
}

/// Reads the request head and answers it. An answer is counted (and `answered` set) before
/// it is written, so that the scraper's next request sees it; how the connection ended
/// otherwise is returned.
async fn answer(
    metrics: &Arc<Metrics>,
    budget: &Arc<Budget>,
    member: &Member,
    tcp: &mut TcpStream,
    answered: &AtomicBool,
) -> Option<Scrape> {
    // What the head and the answer hold, charged like any other bytes held for a peer.
    let mut charge = budget.none();
    let read = tokio::time::timeout(REQUEST_TIMEOUT, read_head(tcp, member, &mut charge)).await;
    let asked = match read {
        Err(_) => return Some(Scrape::TimedOut),
        Ok(Err(Unread::Gone)) => return Some(Scrape::BadRequest),
        Ok(Err(Unread::NoMemory)) => None,
        Ok(Err(Unread::TooLong)) => Some(Asked::TooLong),
        Ok(Ok(head)) => {
            member.completed_request();
            Some(parse(&head))
        }
    };
    let (status, content_type, body, head_only, outcome) = match asked {
        Some(Asked::Metrics { head_only }) => {
            // Rendered, then charged: its size is known only then, and bounded by the
            // table (a few hundred KB with every API and version busy).
            let text = metrics.render();
            if charge.try_grow_optional(text.len()) {
                (
                    "200 OK",
                    Metrics::CONTENT_TYPE,
                    text,
                    head_only,
                    Scrape::Served,
                )
            } else {
                no_memory()
            }
        }
        None => no_memory(),
        Some(Asked::NotFound) => plain(
            "404 Not Found",
            "the metrics are at /metrics\n",
            Scrape::NotFound,
        ),
        Some(Asked::WrongMethod) => plain(
            "405 Method Not Allowed",
            "only GET and HEAD are answered\n",
            Scrape::NotFound,
        ),
        Some(Asked::Bad) => plain(
            "400 Bad Request",
            "not an HTTP/1 request\n",
            Scrape::BadRequest,
        ),
        Some(Asked::TooLong) => plain(
            "431 Request Header Fields Too Large",
            "the request head is longer than 8 KiB\n",
            Scrape::BadRequest,
        ),
    };
    metrics.scrape(outcome);
    answered.store(true, Ordering::Relaxed);
    let allow = if status.starts_with("405") {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let header = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         {allow}Connection: close\r\n\r\n",
        body.len()
    );
    // A scraper that does not take its answer in time costs only its connection.
    let _ = tokio::time::timeout(WRITE_TIMEOUT, async {
        tcp.write_all(header.as_bytes()).await?;
        if !head_only {
            tcp.write_all(body.as_bytes()).await?;
        }
        tcp.shutdown().await
    })
    .await;
    drop(charge);
    None
}

type Answer = (&'static str, &'static str, String, bool, Scrape);

fn plain(status: &'static str, body: &str, outcome: Scrape) -> Answer {
    (
        status,
        "text/plain; charset=utf-8",
        body.to_owned(),
        false,
        outcome,
    )
}

fn no_memory() -> Answer {
    plain(
        "503 Service Unavailable",
        "--memory-budget has no room for the answer now\n",
        Scrape::NoMemory,
    )
}

/// Reads up to the end of the request head (its blank line), at most [`MAX_REQUEST`] bytes;
/// the head without what may follow it.
async fn read_head(
    tcp: &mut TcpStream,
    member: &Member,
    charge: &mut crate::budget::Charge,
) -> Result<Vec<u8>, Unread> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = head_end(&head) {
            head.truncate(end);
            return Ok(head);
        }
        if head.len() >= MAX_REQUEST {
            return Err(Unread::TooLong);
        }
        let want = chunk.len().min(MAX_REQUEST - head.len());
        let n = match tcp.read(&mut chunk[..want]).await {
            Ok(0) | Err(_) => return Err(Unread::Gone),
            Ok(n) => n,
        };
        if !charge.try_grow_optional(head.len() + n) {
            return Err(Unread::NoMemory);
        }
        head.extend_from_slice(&chunk[..n]);
        member.touch();
    }
}

/// Where the request head ends (after its blank line), if it has.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4);
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|at| at + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The request line of a head: `METHOD SP TARGET SP HTTP/1.x`.
fn parse(head: &[u8]) -> Asked {
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let Ok(line) = std::str::from_utf8(&head[..line_end]) else {
        return Asked::Bad;
    };
    let mut parts = line.trim_end_matches('\r').split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Asked::Bad;
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Asked::Bad;
    }
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    if path != "/metrics" {
        return Asked::NotFound;
    }
    match method {
        "GET" => Asked::Metrics { head_only: false },
        "HEAD" => Asked::Metrics { head_only: true },
        _ => Asked::WrongMethod,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let get = Asked::Metrics { head_only: false };
        assert_eq!(parse(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), get);
        assert_eq!(parse(b"GET /metrics?name[]=x HTTP/1.0\r\n\r\n"), get);
        assert_eq!(
            parse(b"HEAD /metrics HTTP/1.1\r\n\r\n"),
            Asked::Metrics { head_only: true }
        );
        assert_eq!(parse(b"GET / HTTP/1.1\r\n\r\n"), Asked::NotFound);
        assert_eq!(parse(b"GET /metricsx HTTP/1.1\r\n\r\n"), Asked::NotFound);
        assert_eq!(parse(b"POST /metrics HTTP/1.1\r\n\r\n"), Asked::WrongMethod);
        assert_eq!(parse(b"GET /metrics HTTP/2\r\n\r\n"), Asked::Bad);
        assert_eq!(parse(b"GET  /metrics HTTP/1.1\r\n\r\n"), Asked::Bad);
        assert_eq!(parse(b"\x00\x00\x00\x10\xff\xfe\n\n"), Asked::Bad);
        assert_eq!(parse(b"GET metrics HTTP/1.1\n\n"), Asked::Bad);
    }

    #[test]
    fn the_head_ends_at_its_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\nbody"), Some(24));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\nbody"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
        assert_eq!(head_end(b""), None);
    }
}
