//! `kafka-codec tap`: a transparent TCP proxy in front of a Kafka broker that logs every
//! request and response as JSON.
//!
//! Std threads and blocking sockets: three per connection (one pump per direction, one
//! decoder). A debugging proxy sees tens of connections, not tens of thousands, and
//! blocking pumps make "forward first" plain to see: a pump reads, pushes finished frames
//! onto its decoder's queue, writes, and never waits for a decode. No runtime to start, and
//! a slow peer in one direction cannot delay the other.
//!
//! Modules: [`framing`] finds frame boundaries on the forwarding path, [`pump`] moves one
//! direction, [`connection`] ties a connection's threads together, [`log`] decodes and
//! writes the lines, [`rewrite`] is `--rewrite-brokers`.

mod connection;
mod framing;
mod log;
mod pump;
mod rewrite;

use crate::common::{listen, Failure, Run};
use clap::builder::RangedU64ValueParser;
use kafka_codec::{DecodeLimits, DecodeOptions, TrailingBytes};
use log::Log;
use rewrite::{Brokers, Rewrite};
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long connecting upstream may take before the client's connection is given up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Proxy Kafka traffic to a broker and log each request and response as a JSON line.
///
/// Every byte is forwarded unchanged and in order, in both directions (unless
/// --rewrite-brokers); decoding happens beside the forwarding, never in its way. Each
/// request/response pair becomes one line: time, connection, correlation id, API, version,
/// latency, and both messages in Kafka's JSON form. A frame that does not decode is forwarded
/// all the same and logged with the error and its first bytes in hex. When a connection
/// closes, a line gives the byte counts and CRC-32C checksums of each direction as received
/// and as forwarded.
///
/// Clients find brokers through the addresses in Metadata responses and then connect there
/// directly, past the tap. Either make the broker advertise the tap's address
/// (advertised.listeners=PLAINTEXT://TAP_HOST:TAP_PORT on a listener the tap forwards to),
/// or let the tap rewrite those addresses (--rewrite-brokers).
#[derive(Debug, clap::Args)]
pub struct Tap {
    /// The address clients connect to (port 0: any free port; the first line on stderr and
    /// the log's `listen` line name it).
    #[arg(long, value_name = "HOST:PORT")]
    listen: String,
    /// The broker to forward to.
    #[arg(long, value_name = "HOST:PORT")]
    upstream: String,
    /// Where the JSON lines go: a file (created or truncated), or standard output for `-`.
    #[arg(long, value_name = "FILE|-", default_value = "-")]
    log: PathBuf,
    /// Put the tap in place of every broker address in Metadata, FindCoordinator and
    /// DescribeCluster responses (and the new-leader endpoints of Produce, Fetch, ShareFetch
    /// and ShareAcknowledge), so that clients reach the whole cluster through the tap.
    ///
    /// The --upstream address is served by --listen; every other broker gets its own
    /// listener on the same interface, on a free port, opened when a response first names
    /// it. Those responses are held until complete and encoded again; everything else is
    /// forwarded byte for byte.
    #[arg(long)]
    rewrite_brokers: bool,
    /// The host put into rewritten responses (default: the --listen host; needed when that
    /// is a wildcard such as 0.0.0.0).
    #[arg(long, value_name = "HOST", requires = "rewrite_brokers")]
    advertised_host: Option<String>,
    /// Frames larger than this are forwarded but not decoded (logged as skipped with their
    /// first bytes). It is also each connection's budget for frames waiting to be decoded,
    /// which bounds the tap's memory per connection.
    #[arg(long, value_name = "BYTES", default_value_t = DecodeLimits::default().max_frame_size,
          value_parser = RangedU64ValueParser::<usize>::new().range(64..=i32::MAX as u64))]
    max_frame: usize,
    /// Longest log line. Each of its two messages may take half of it, less 4 KiB kept for
    /// the other fields; a message whose JSON is longer is logged as a note giving its size.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(16 * 1024..=1 << 32))]
    max_line: usize,
    /// How many bytes of a frame that does not decode (or is skipped) are logged, in hex; at
    /// most an eighth of --max-line, so that the hex of both sides fits in a line.
    #[arg(long, value_name = "BYTES", default_value_t = 256,
          value_parser = RangedU64ValueParser::<usize>::new().range(16..=1 << 20))]
    max_hex: usize,
    /// Log bytes after a message body as a decode error. By default they are ignored, as
    /// Kafka's broker and clients ignore them, and the line notes them
    /// (`requestTrailing`/`responseTrailing`).
    #[arg(long)]
    strict: bool,
    /// Show every `records` field (Produce, Fetch, ...) as the JSON array of its batches,
    /// as `kafka-codec records decode` prints it, instead of base64. A field that does not
    /// decode stays base64 and the line says why (`requestRecordsError` /
    /// `responseRecordsError`); a Fetch response's partial last batch ends the array as
    /// {"truncatedTail": base64, "note": ...}.
    #[arg(long)]
    records: bool,
}

/// Bytes of a log line kept for everything but the two messages (time, ids, API, errors,
/// rewritten addresses).
const LINE_FIELDS: usize = 4096;

/// The settings every connection reads.
pub struct Config {
    pub max_frame: usize,
    /// The longest a message's JSON may be in a line.
    pub max_message_json: usize,
    /// Bytes of a frame shown in hex (and kept of a frame that is not decoded).
    pub max_hex: usize,
    /// How frames are decoded: limits, and trailing bytes allowed unless --strict.
    pub options: DecodeOptions,
    /// Expand `records` fields (--records).
    pub records: bool,
}

/// The running tap: what its listeners and connections share.
pub struct Proxy {
    config: Arc<Config>,
    log: Arc<Log>,
    brokers: Option<Brokers>,
    next_connection: AtomicU64,
}

impl Run for Tap {
    fn run(self) -> Result<(), Failure> {
        let (listener, local) = listen(&self.listen)?;
        let out: Box<dyn io::Write + Send> = if self.log.as_os_str() == "-" {
            Box::new(io::stdout())
        } else {
            let file = File::create(&self.log)
                .map_err(|e| Failure::Input(format!("cannot write {}: {e}", self.log.display())))?;
            Box::new(BufWriter::new(file))
        };
        let brokers = if self.rewrite_brokers {
            let host = match self.advertised_host {
                Some(host) => host,
                None if local.ip().is_unspecified() => {
                    return Err(Failure::Usage(format!(
                        "--rewrite-brokers with --listen {} needs --advertised-host: clients \
                         cannot connect to a wildcard address",
                        self.listen
                    )))
                }
                None => local.ip().to_string(),
            };
            Some(Brokers::new(host, local, &self.upstream))
        } else {
            None
        };
        let options = DecodeOptions {
            limits: DecodeLimits {
                max_frame_size: self.max_frame,
                ..DecodeLimits::default()
            },
            trailing_bytes: if self.strict {
                TrailingBytes::Reject
            } else {
                TrailingBytes::Allow
            },
        };
        let proxy = Arc::new(Proxy {
            config: Arc::new(Config {
                max_frame: self.max_frame,
                max_message_json: (self.max_line - LINE_FIELDS) / 2,
                max_hex: self.max_hex.min(self.max_line / 8),
                options,
                records: self.records,
            }),
            log: Arc::new(Log::new(out)),
            brokers,
            next_connection: AtomicU64::new(1),
        });
        eprintln!(
            "kafka-codec tap: listening on {local}, forwarding to {}",
            self.upstream
        );
        log::listening(&proxy.log, local, &self.upstream);
        Proxy::accept(&proxy, listener, self.upstream);
        Ok(())
    }
}

impl Proxy {
    /// Serves another listener on its own thread (a broker found by --rewrite-brokers).
    fn spawn_listener(
        proxy: &Arc<Proxy>,
        listener: TcpListener,
        upstream: String,
    ) -> io::Result<()> {
        let local = listener.local_addr()?;
        log::listening(&proxy.log, local, &upstream);
        let proxy = Arc::clone(proxy);
        std::thread::Builder::new()
            .name(format!("tap-listen-{local}"))
            .spawn(move || Proxy::accept(&proxy, listener, upstream))?;
        Ok(())
    }

    /// Accepts clients for `upstream` forever, one thread each.
    fn accept(proxy: &Arc<Proxy>, listener: TcpListener, upstream: String) {
        let local = listener.local_addr().ok();
        loop {
            let client = match listener.accept() {
                Ok((client, _)) => client,
                Err(e) => {
                    // Out of file descriptors and the like: wait and go on, never exit.
                    eprintln!("kafka-codec tap: accept failed: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            let id = proxy.next_connection.fetch_add(1, Ordering::Relaxed);
            let listener = local.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
            let rewrite = proxy
                .brokers
                .as_ref()
                .map(|_| Rewrite::new(Arc::clone(proxy), proxy.config.options));
            let (config, log, upstream) = (
                Arc::clone(&proxy.config),
                Arc::clone(&proxy.log),
                upstream.clone(),
            );
            let spawned = std::thread::Builder::new()
                .name(format!("tap-{id}"))
                .spawn(move || {
                    connection::serve(id, client, listener, upstream, config, log, rewrite)
                });
            if let Err(e) = spawned {
                eprintln!("kafka-codec tap: connection {id}: cannot start a thread: {e}");
            }
        }
    }
}

/// Connects to `upstream`, trying each address it resolves to.
fn connect(upstream: &str) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address");
    for address in upstream.to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}
