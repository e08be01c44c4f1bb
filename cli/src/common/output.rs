//! Writing results to standard output.

use super::Failure;
use kafka_codec::serde_json::{self, Value};
use std::io::{self, Write};

/// Writes and flushes; a closed pipe ends the run quietly.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Failure::Quiet
            } else {
                Failure::Input(format!("cannot write output: {e}"))
            }
        })
}

/// Pretty JSON and a newline.
pub fn write_json(value: &Value) -> Result<(), Failure> {
    let mut text = serde_json::to_string_pretty(value).expect("a JSON value always serializes");
    text.push('\n');
    write_stdout(text.as_bytes())
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
