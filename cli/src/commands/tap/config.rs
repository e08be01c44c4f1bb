//! The settings every connection of the tap reads, and the flags that set how frames are
//! decoded and logged, shared by `tap` and `decode pcap` (one log writer, two producers).

use clap::builder::RangedU64ValueParser;
use kafka_codec::{DecodeLimits, DecodeOptions, TrailingBytes};

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
    /// Requests a client may have unanswered before the tap stops reading from it.
    pub max_in_flight: usize,
    /// Show secrets in the log (--log-secrets).
    pub log_secrets: bool,
    /// Whether anything is decoded and logged (not with --no-log).
    pub logging: bool,
    /// Narrow ApiVersions responses to the versions this crate decodes (--clamp-versions).
    pub clamp_versions: bool,
}

/// Bytes of a log line kept for everything but the two messages (time, ids, API, errors,
/// rewritten addresses).
const LINE_FIELDS: usize = 4096;

/// How frames are decoded and logged: the flags `tap` and `decode pcap` both take.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Frames larger than this are not decoded (logged as skipped with their first bytes;
    /// the tap still forwards them). It is also each connection's share of frames waiting
    /// to be logged.
    #[arg(long, value_name = "BYTES", default_value_t = DecodeLimits::default().max_frame_size,
          value_parser = RangedU64ValueParser::<usize>::new().range(64..=i32::MAX as u64))]
    pub max_frame: usize,
    /// Longest log line. Each of its two messages may take half of it, less 4 KiB kept for
    /// the other fields; a message whose JSON is longer is logged as a note giving its size.
    /// Writing a message's JSON never takes more memory than its share, whatever the frame.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(16 * 1024..=1 << 32))]
    pub max_line: usize,
    /// How many bytes of a frame that does not decode (or is skipped) are logged, in hex; at
    /// most an eighth of --max-line, so that the hex of both sides fits in a line.
    #[arg(long, value_name = "BYTES", default_value_t = 256,
          value_parser = RangedU64ValueParser::<usize>::new().range(16..=1 << 20))]
    pub max_hex: usize,
    /// Requests of a connection awaiting responses. At this many the tap stops forwarding
    /// and reading from the client (backpressure) until responses come; `decode pcap` logs
    /// the oldest as unanswered.
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=1 << 20))]
    pub max_in_flight: usize,
    /// Log bytes after a message body as a decode error. By default they are ignored, as
    /// Kafka's broker and clients ignore them, and the line notes them
    /// (`requestTrailing`/`responseTrailing`).
    #[arg(long)]
    pub strict: bool,
    /// Show every `records` field (Produce, Fetch, ...) as the JSON array of its batches,
    /// as `kafka-codec records decode` prints it, instead of base64. A field that does not
    /// decode stays base64 and the line says why (`requestRecordsError` /
    /// `responseRecordsError`); a Fetch response's partial last batch ends the array as
    /// {"truncatedTail": base64, "note": ...}.
    #[arg(long)]
    pub records: bool,
    /// Log credentials as they pass instead of replacing them (a warning goes to stderr).
    #[arg(long)]
    pub log_secrets: bool,
}

impl LogArgs {
    /// How frames are decoded: within --max-frame, trailing bytes refused with --strict.
    /// Frames arrive already split off the stream.
    pub fn decode_options(&self) -> DecodeOptions {
        DecodeOptions {
            limits: DecodeLimits {
                max_frame_size: self.max_frame,
                ..DecodeLimits::default()
            },
            trailing_bytes: if self.strict {
                TrailingBytes::Reject
            } else {
                TrailingBytes::Allow
            },
            framing: kafka_codec::Framing::Bare,
        }
    }

    /// The settings these flags give; `logging` and `clamp_versions` come from the tap's
    /// own flags.
    pub fn config(&self, logging: bool, clamp_versions: bool) -> Config {
        Config {
            max_frame: self.max_frame,
            max_message_json: (self.max_line - LINE_FIELDS) / 2,
            max_hex: self.max_hex.min(self.max_line / 8),
            options: self.decode_options(),
            records: self.records,
            max_in_flight: self.max_in_flight,
            log_secrets: self.log_secrets,
            logging,
            clamp_versions,
        }
    }

    /// With --log-secrets, says on stderr that credentials will be written out.
    pub fn warn_if_logging_secrets(&self, command: &str) {
        if self.log_secrets {
            crate::common::log_line(format_args!(
                "kafka-codec {command}: warning: --log-secrets: passwords, SASL tokens and \
                 other credentials will be written to the log as they are read"
            ));
        }
    }
}
