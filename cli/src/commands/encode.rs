//! `kafka-codec encode request|response`: Kafka's JSON form back to a frame's bytes.

use crate::common::{read_input, write_bytes, ExpandRecords, Failure, Run};
use kafka_codec::json::JsonOptions;
use kafka_codec::records::DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE;
use kafka_codec::Framing;
use kafka_codec::{DecodeLimits, RequestFrame, ResponseFrame};
use std::path::PathBuf;

/// Encode the JSON that `decode` prints back into the frame's bytes.
///
/// `decode ... | encode ...` gives back the input exactly, unless decode warned. A `records`
/// field may be base64 or, as `decode --records` shows it, an array of batches.
///
/// The JSON is read strictly: a key that the message has in no version, or a key given twice
/// in one object, is an error naming it and its path (Kafka's own reader drops the first and
/// keeps the last of the second); --lenient accepts both as Kafka does.
#[derive(Debug, clap::Subcommand)]
pub enum Encode {
    /// A request: {"header": ..., "body": ...}; the header names the API and version.
    Request(EncodeArgs),
    /// A response: {"apiKey": K, "apiVersion": V, "header": ..., "body": ...}.
    Response(EncodeArgs),
}

/// Where the JSON comes from and how the bytes are written.
#[derive(Debug, clap::Args)]
pub struct EncodeArgs {
    /// Read the JSON from FILE, or from standard input for `-`.
    #[arg(value_name = "FILE|-")]
    pub file: PathBuf,
    /// Write lowercase hex and a newline instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
    /// Write the frame's 4-byte big-endian size first, as on the wire.
    #[arg(long)]
    pub size_prefixed: bool,
    /// Accept unknown keys (dropped) and keys given twice (the last wins), as Kafka's JSON
    /// reader does.
    #[arg(long)]
    pub lenient: bool,
    /// Refuse to write a frame (without its size prefix) larger than N bytes.
    #[arg(long, value_name = "N", default_value_t = DecodeLimits::default().max_frame_size)]
    pub max_frame_bytes: usize,
}

impl Run for Encode {
    fn run(self) -> Result<(), Failure> {
        let (args, is_request) = match self {
            Encode::Request(args) => (args, true),
            Encode::Response(args) => (args, false),
        };
        let data = read_input(&args.file)?;
        // Records in their expanded form are read back whatever --records decode was given.
        let hook = ExpandRecords::new(
            DecodeLimits {
                max_decompressed_batch_size: DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE,
                ..DecodeLimits::default()
            },
            false,
        );
        let options = JsonOptions {
            lenient: args.lenient,
            records: Some(&hook),
        };
        let bad_json = |e: kafka_codec::JsonError| {
            Failure::Input(format!("{e}{}", wrong_command_hint(&e, is_request)))
        };
        let too_large = |len: usize| {
            Failure::Input(format!(
                "the frame would be {len} bytes, more than --max-frame-bytes {}",
                args.max_frame_bytes
            ))
        };
        let cannot = |e: kafka_codec::EncodeError| Failure::Input(format!("cannot encode: {e}"));
        // The frame is read from the text token by token (no `Value` tree), so memory is the
        // input, the message and then the bytes. The input is read whole rather than through
        // a reader: a frame's body is kept as borrowed text until its header gives the
        // version, and slice parsing is the faster of serde_json's two.
        let mut out = Vec::new();
        let framing = if args.size_prefixed {
            Framing::SizePrefixed
        } else {
            Framing::Bare
        };
        let encoded = if is_request {
            let frame = RequestFrame::from_json_with(&data, &options).map_err(bad_json)?;
            drop(data);
            let len = frame.encoded_len().map_err(cannot)?;
            if len > args.max_frame_bytes {
                return Err(too_large(len));
            }
            frame.encode(&mut out, framing)
        } else {
            let frame = ResponseFrame::from_json_with(&data, &options).map_err(bad_json)?;
            drop(data);
            let len = frame.encoded_len().map_err(cannot)?;
            if len > args.max_frame_bytes {
                return Err(too_large(len));
            }
            frame.encode(&mut out, framing)
        };
        encoded.map_err(cannot)?;
        write_bytes(&out, args.hex)
    }
}

/// When the JSON is the other kind of frame: a response's form names `apiKey` and
/// `apiVersion` at its top, a request's names neither (its header has `requestApiKey`).
fn wrong_command_hint(error: &kafka_codec::JsonError, is_request: bool) -> &'static str {
    use kafka_codec::JsonErrorKind;
    let top = error.path().to_string();
    match error.kind() {
        JsonErrorKind::UnknownField(key)
            if is_request && top.is_empty() && (key == "apiKey" || key == "apiVersion") =>
        {
            " (this is a response's JSON, which names apiKey and apiVersion: use `kafka-codec \
             encode response`)"
        }
        JsonErrorKind::MissingField if !is_request && (top == "apiKey" || top == "apiVersion") => {
            " (a response's JSON names apiKey and apiVersion at its top; for a request's \
             JSON, use `kafka-codec encode request`)"
        }
        _ => "",
    }
}
