//! What one direction of a proxied connection saw: bytes and CRC-32C as received and as
//! forwarded, reported in the `close` line.

use kafka_codec::serde_json::{json, Value};

/// Byte count and CRC-32C of a stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum {
    pub bytes: u64,
    pub crc32c: u32,
}

impl Sum {
    pub fn add(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.crc32c = crc32c::crc32c_append(self.crc32c, data);
    }

    fn json(&self) -> Value {
        json!({"bytes": self.bytes, "crc32c": format!("{:08x}", self.crc32c)})
    }
}

/// What one direction saw, reported when it ends.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Everything read from the sender.
    pub received: Sum,
    /// Everything the receiver's socket accepted.
    pub forwarded: Sum,
    /// `forwarded`, with each rewritten frame counted as the frame it replaced.
    pub forwarded_as_received: Sum,
    /// What was read and never forwarded, because the receiver's socket failed or the
    /// connection was closed by the tool (counted as received): `forwarded_as_received`
    /// followed by `dropped` is `received`.
    pub dropped: Sum,
    /// Requests the tap answered or dropped under `--deny-api`/`--deny-topic`, never
    /// forwarded (counted as received): `forwarded_as_received`, `denied` and `dropped`
    /// together are `received`, in bytes.
    pub denied: Sum,
    /// Frames replaced by broker address rewriting, version clamping or a denial (a split
    /// request, a merged response).
    pub rewritten: u64,
    /// Responses the tap made itself (denials): in `forwarded`, not in `received`.
    pub answered: u64,
    /// Whole frames.
    pub frames: u64,
    /// Bytes of a frame the sender began and did not finish.
    pub partial: usize,
    /// How the direction ended: "eof", or the error.
    pub end: String,
    /// What the unfinished frame's size prefix was, if it was another protocol's bytes
    /// (a TLS handshake, HTTP) rather than a size.
    pub not_kafka: Option<String>,
    /// Read from a capture (`decode pcap`): what the capture did not hold. `None` for the tap.
    pub capture: Option<CaptureGaps>,
}

/// What a captured direction is missing: gaps (lost segments, packets cut by the snap
/// length, a capture begun mid-connection) and the bytes skipped to find a frame again.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureGaps {
    /// Gaps, each reported once with a `gap` line.
    pub gaps: u64,
    /// Bytes of the stream the capture does not hold.
    pub lost: u64,
    /// Bytes captured but not framed: read past while looking for the next frame after a gap
    /// (or at the start of a connection captured after it opened).
    pub skipped: u64,
}

impl Stats {
    pub fn json(&self) -> Value {
        let mut value = json!({
            "received": self.received.json(),
            "forwarded": self.forwarded.json(),
            "forwardedAsReceived": self.forwarded_as_received.json(),
            "dropped": self.dropped.json(),
            "rewritten": self.rewritten,
            "frames": self.frames,
            "partialFrameBytes": self.partial,
            "end": self.end,
        });
        // Only where policies acted, so that lines without them stay as they were.
        if self.denied.bytes > 0 {
            value["denied"] = self.denied.json();
        }
        if self.answered > 0 {
            value["answered"] = json!(self.answered);
        }
        if let Some(note) = &self.not_kafka {
            value["notKafka"] = json!(note);
        }
        if let Some(capture) = &self.capture {
            value["gaps"] = json!(capture.gaps);
            value["lostBytes"] = json!(capture.lost);
            value["skippedBytes"] = json!(capture.skipped);
        }
        value
    }
}
