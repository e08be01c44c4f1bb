//! `kafka-codec decode pcap`: the Kafka conversations in a packet capture, written as the
//! tap's log.
//!
//! A capture is a second producer for the tap's log writer (`commands::tap::log`): the
//! packets are read ([`packets`]), each TCP direction put back in order ([`reassembly`]),
//! and each Kafka connection's bytes framed and logged as the tap frames and logs them
//! ([`streams`]), with the capture's time stamps and addresses.

mod packets;
mod reassembly;
mod streams;

use crate::commands::tap::config::LogArgs;
use crate::commands::tap::log::{self, Log};
use crate::common::{Failure, Run};
use clap::builder::RangedU64ValueParser;
use kafka_codec::serde_json::json;
use kafka_codec_server::budget::Budget;
use kafka_codec_server::limits::parse_bytes;
use packets::Packets;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;
use streams::{Settings, Streams};

/// Decode the Kafka conversations in a packet capture (pcap or pcapng, as `tcpdump -w` or
/// Wireshark write them) and print them as the tap's log: one JSON line per request and
/// response, a `connect` and a `close` line per connection.
///
/// Link types: Ethernet, Linux cooked (v1 and v2, `tcpdump -i any`), BSD loopback (null),
/// raw IP; IPv4 and IPv6. Each TCP connection is put back in order in both directions
/// (segments out of order, retransmissions); bytes the capture does not hold (a lost
/// segment, packets cut by the snap length) are a gap, reported once with a `gap` line, and
/// decoding resumes at the next frame that reads as one. Times come from the capture.
///
/// A connection is Kafka when one side is on a --port (that side is the server), or when
/// its first bytes read as a Kafka request (their sender is the client). A connection to a
/// --port that speaks TLS or HTTP gets one `tls` / `http` line. A `capture` line ends the
/// log: what was read, and how many connections were of each kind.
///
/// Memory is bounded whatever the capture's size (--max-connections, --max-reorder,
/// --memory-budget). A file that is not a capture, or is truncated or damaged, ends the run
/// with one line on stderr (exit 1), after what came before it has been written.
#[derive(Debug, clap::Args)]
pub struct Pcap {
    /// The capture file (`-` for standard input).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// A port Kafka is served on (repeatable). Default: 9092 and 9093.
    #[arg(long = "port", value_name = "PORT")]
    ports: Vec<u16>,
    #[command(flatten)]
    log_args: LogArgs,
    /// Connections tracked at once; for another, the one idle the longest in the capture is
    /// closed (its `close` line says so).
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    max_connections: usize,
    /// Bytes one direction may hold out of order (waiting for a segment the capture may not
    /// have); past it, the missing bytes are a gap.
    #[arg(long, value_name = "BYTES", default_value = "4MiB", value_parser = parse_bytes)]
    max_reorder: usize,
    /// Bytes all connections together may hold: segments out of order, frames kept to be
    /// decoded, requests awaiting responses. Past it, frames are logged as skipped and
    /// segments out of order declared lost.
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = parse_bytes)]
    memory_budget: usize,
}

impl Run for Pcap {
    fn run(self) -> Result<(), Failure> {
        let name = self.file.display().to_string();
        let input: Box<dyn Read + Send> = if self.file.as_os_str() == "-" {
            Box::new(io::stdin())
        } else {
            Box::new(BufReader::new(File::open(&self.file).map_err(|e| {
                Failure::Input(format!("cannot read {name}: {e}"))
            })?))
        };
        let mut packets =
            Packets::open(input).map_err(|e| Failure::Input(format!("{name}: {e}")))?;
        self.log_args.warn_if_logging_secrets("decode pcap");
        // A capture is read, not proxied: nothing is rewritten.
        let config = Arc::new(self.log_args.config(true, false));
        let out = Box::new(BufWriter::new(io::stdout()));
        let log = Arc::new(Log::named(out, "decode pcap", "; stopping"));
        let ports = if self.ports.is_empty() {
            vec![9092, 9093]
        } else {
            self.ports.clone()
        };
        let budget = Budget::new(self.memory_budget);
        let mut streams = Streams::new(
            Settings {
                ports: ports.clone(),
                max_connections: self.max_connections,
                max_reorder: self.max_reorder,
                config,
            },
            Arc::clone(&log),
            budget,
        );
        let mut segments = 0u64;
        let failed = loop {
            match packets.next_segment() {
                Ok(Some(segment)) => {
                    segments += 1;
                    streams.segment(segment);
                    if log.has_failed() {
                        return Err(Failure::Quiet);
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        streams.finish();
        let counts = &streams.counts;
        let skipped = packets.skipped();
        log::note(
            &log,
            "capture",
            streams.last_time.unwrap_or(SystemTime::UNIX_EPOCH),
            None,
            &[
                ("file", json!(name)),
                ("ports", json!(ports)),
                ("tcpSegments", json!(segments)),
                ("connections", json!(counts.connections)),
                ("kafka", json!(counts.kafka)),
                ("tls", json!(counts.tls)),
                ("http", json!(counts.http)),
                ("notKafka", json!(counts.other)),
                ("noData", json!(counts.empty)),
                ("evicted", json!(counts.evicted)),
                ("notTcpPackets", json!(skipped.not_tcp)),
                ("unknownLinkPackets", json!(skipped.link_type)),
                ("cutHeaderPackets", json!(skipped.cut_headers)),
            ],
        );
        log.flush();
        if log.has_failed() {
            return Err(Failure::Quiet);
        }
        match failed {
            Some(e) => Err(Failure::Input(format!("{name}: {e}"))),
            None => Ok(()),
        }
    }
}
