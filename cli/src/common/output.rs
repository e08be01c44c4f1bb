//! Writing results to standard output.

use super::Failure;
use kafka_codec::serde_json;
use serde::Serialize;
use std::io::{self, BufWriter, Write};

/// What a failed write to stdout means: a closed pipe ends the run quietly.
fn write_failure(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::Quiet
    } else {
        Failure::Input(format!("cannot write output: {e}"))
    }
}

/// Writes and flushes; a closed pipe ends the run quietly.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(write_failure)
}

/// Pretty JSON and a newline, serialized straight to stdout (no text held in memory).
///
/// An error the value itself raises while it serializes (a lazily read part that turns out
/// malformed) is input trouble, reported with its own message.
pub fn write_json<T: Serialize + ?Sized>(value: &T) -> Result<(), Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => write_failure(io::Error::from(kind)),
        None => Failure::Input(e.to_string()),
    })?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(write_failure)
}

/// Raw bytes, or lowercase hex and a newline.
pub fn write_bytes(bytes: &[u8], hex: bool) -> Result<(), Failure> {
    if hex {
        let mut text = kafka_codec_hexdump::encode(bytes);
        text.push('\n');
        write_stdout(text.as_bytes())
    } else {
        write_stdout(bytes)
    }
}
