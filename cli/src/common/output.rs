//! Writing results to standard output.

use super::failure::Failure;
use kafka_codec::json::{JsonSink, JsonWriter};
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

/// Pretty JSON and a newline, written token by token to stdout by `write` (no tree, no text
/// held in memory). An error `write` returns is turned into a [`Failure`] by `failed`; the
/// output then ends where the error was found.
pub fn write_json_with<E>(
    write: impl FnOnce(&mut dyn JsonSink) -> Result<(), E>,
    failed: impl FnOnce(E) -> Failure,
) -> Result<(), Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    let mut writer = JsonWriter::pretty(&mut out);
    let written = write(&mut writer);
    // An I/O error stops the writing first: a closed pipe is the reason, not what the
    // message could not show after it.
    writer.finish().map_err(write_failure)?;
    written.map_err(failed)?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(write_failure)
}

/// A JSON sink that keeps nothing: a dry run finds whether a message can be shown before
/// any of it is written.
pub struct DiscardJson;

impl JsonSink for DiscardJson {
    fn begin_object(&mut self) {}
    fn key(&mut self, _: &str) {}
    fn end_object(&mut self) {}
    fn begin_array(&mut self) {}
    fn end_array(&mut self) {}
    fn null(&mut self) {}
    fn bool(&mut self, _: bool) {}
    fn i64(&mut self, _: i64) {}
    fn u64(&mut self, _: u64) {}
    fn f64(&mut self, _: f64) {}
    fn str(&mut self, _: &str) {}
    fn bytes(&mut self, _: &[u8]) {}
    fn uuid(&mut self, _: &kafka_codec::Uuid) {}
    fn value(&mut self, _: &kafka_codec::serde_json::Value) {}
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
