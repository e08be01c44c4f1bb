//! `kafka-codec encode request|response`: Kafka's JSON form back to a frame's bytes.

use crate::common::{read_input, write_bytes, Failure, Run};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::{RequestFrame, ResponseFrame};
use std::path::PathBuf;

/// Encode the JSON that `decode` prints back into the frame's bytes.
///
/// `decode ... | encode ...` gives back the input exactly, unless decode warned.
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
}

impl Run for Encode {
    fn run(self) -> Result<(), Failure> {
        let (args, is_request) = match self {
            Encode::Request(args) => (args, true),
            Encode::Response(args) => (args, false),
        };
        let data = read_input(&args.file)?;
        let json: Value = serde_json::from_slice(&data)
            .map_err(|e| Failure::Input(format!("invalid JSON: {e}")))?;
        let bad_json = |e: kafka_codec::JsonError| Failure::Input(e.to_string());
        let mut out = Vec::new();
        let encoded = if is_request {
            let frame = RequestFrame::from_json(&json).map_err(bad_json)?;
            if args.size_prefixed {
                frame.encode_size_prefixed(&mut out)
            } else {
                frame.encode(&mut out)
            }
        } else {
            let frame = ResponseFrame::from_json(&json).map_err(bad_json)?;
            if args.size_prefixed {
                frame.encode_size_prefixed(&mut out)
            } else {
                frame.encode(&mut out)
            }
        };
        encoded.map_err(|e| Failure::Input(format!("cannot encode: {e}")))?;
        write_bytes(&out, args.hex)
    }
}
