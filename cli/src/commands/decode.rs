//! `kafka-codec decode request|response`: one frame to Kafka's JSON form.

use crate::common::{
    write_json_with, ApiVersionArgs, DiscardJson, ExpandRecords, Failure, FrameInput,
    OtherProtocol, Run,
};
use kafka_codec::bytes::Bytes;
use kafka_codec::json::{JsonOptions, JsonSink};
use kafka_codec::records::DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE;
use kafka_codec::{
    ApiKey, DecodeError, DecodeLimits, DecodeOptions, EncodeError, Framing, RequestFrame,
    ResponseFrame, TrailingBytes,
};

/// Decode one frame (header, then body) and print it as JSON.
///
/// Prints a warning on stderr, naming the byte offset, when the frame holds something the
/// JSON cannot keep (unknown tagged fields, non-canonical encodings, ignored trailing
/// bytes), so that `encode` would not give back the same bytes.
#[derive(Debug, clap::Subcommand)]
pub enum Decode {
    /// A request frame; its header names the API and version.
    ///
    /// Prints {"header": ..., "body": ...}.
    Request {
        #[command(flatten)]
        input: FrameInput,
        #[command(flatten)]
        strictness: Strictness,
    },
    /// A response frame, which does not say which API it answers: name it.
    ///
    /// Prints {"apiKey": K, "apiVersion": V, "header": ..., "body": ...}, so that `encode
    /// response` needs nothing else.
    Response {
        #[command(flatten)]
        api: ApiVersionArgs,
        #[command(flatten)]
        input: FrameInput,
        #[command(flatten)]
        strictness: Strictness,
    },
    /// The Kafka conversations in a packet capture, as the tap's log.
    Pcap(crate::commands::pcap::Pcap),
}

/// What may follow the body, how large a frame may be, and how `records` fields are shown.
#[derive(Debug, clap::Args)]
pub struct Strictness {
    /// Ignore bytes after the body, as Kafka's brokers do, and with --size-prefixed after
    /// the frame (default: they are malformed input).
    #[arg(long)]
    pub lenient: bool,
    /// Refuse a frame (without its size prefix) larger than N bytes, before decoding it.
    #[arg(long, value_name = "N", default_value_t = DecodeLimits::default().max_frame_size)]
    pub max_frame_bytes: usize,
    /// Refuse a frame whose decoded arrays would take more than N bytes of memory
    /// (default: 46 bytes per frame byte plus 1 MiB, which every honest frame fits).
    #[arg(long, value_name = "N")]
    pub memory_budget: Option<usize>,
    /// Show every `records` field (Produce, Fetch, ...) as the JSON array of its batches,
    /// as `records decode` prints it, instead of base64. A Fetch response's partial last
    /// batch ends the array as {"truncatedTail": base64, "note": ...}. `encode` reads this
    /// form back. A records field that does not decode is malformed input (exit 1).
    #[arg(long)]
    pub records: bool,
    /// With --records, show a records field that does not decode as base64, with a
    /// warning, instead of failing.
    #[arg(long, requires = "records")]
    pub allow_invalid_records: bool,
    /// With --records, refuse a batch whose records decompress to more than N bytes.
    #[arg(long, value_name = "N", requires = "records", default_value_t = DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE)]
    pub max_decompressed_bytes: usize,
}

impl Strictness {
    fn options(&self) -> DecodeOptions {
        DecodeOptions {
            trailing_bytes: if self.lenient {
                TrailingBytes::Allow
            } else {
                TrailingBytes::Reject
            },
            limits: self.limits(),
            framing: Framing::Bare,
        }
    }

    fn limits(&self) -> DecodeLimits {
        DecodeLimits {
            max_frame_size: self.max_frame_bytes,
            max_decompressed_batch_size: self.max_decompressed_bytes,
            memory_budget: self.memory_budget,
            ..DecodeLimits::default()
        }
    }
}

impl Run for Decode {
    fn run(self) -> Result<(), Failure> {
        match self {
            Decode::Request { input, strictness } => decode(&input, &strictness, None),
            Decode::Response {
                api,
                input,
                strictness,
            } => {
                let api = api.resolve()?;
                decode(&input, &strictness, Some(api))
            }
            Decode::Pcap(pcap) => pcap.run(),
        }
    }
}

fn decode(
    input: &FrameInput,
    strictness: &Strictness,
    response_api: Option<(ApiKey, i16)>,
) -> Result<(), Failure> {
    let data = Bytes::from(input.read()?);
    let framing = if input.size_prefixed {
        Framing::SizePrefixed
    } else {
        Framing::Bare
    };
    let options = strictness.options().with_framing(framing);
    let frame_len = data
        .len()
        .saturating_sub(if input.size_prefixed { 4 } else { 0 });
    // Another protocol's bytes (a capture of the wrong port or of TLS) say so rather than
    // fail as an absurd frame size or an unknown API key; a frame that decodes is a frame.
    let not_kafka = || {
        OtherProtocol::recognise(&data).map(|protocol| {
            let question = if protocol.is_tls() {
                ": was the capture taken on a TLS port?"
            } else {
                ""
            };
            Failure::Input(format!(
                "these bytes are {protocol}, not a Kafka frame{question}"
            ))
        })
    };
    if !input.size_prefixed && frame_len > strictness.max_frame_bytes {
        if let Some(failure) = not_kafka() {
            return Err(failure);
        }
        return Err(Failure::Input(format!(
            "the frame is {frame_len} bytes, more than --max-frame-bytes {}",
            strictness.max_frame_bytes
        )));
    }
    let hook = strictness
        .records
        .then(|| ExpandRecords::new(strictness.limits(), strictness.allow_invalid_records));
    let json_options = JsonOptions {
        lenient: false,
        records: hook.as_ref().map(|hook| hook as _),
    };
    let hint = if input.source.hex {
        ""
    } else {
        not_binary_hint(&data)
    };
    let bad = |e: DecodeError| not_kafka().unwrap_or_else(|| Failure::Input(format!("{e}{hint}")));
    let unshowable = |e: EncodeError| Failure::Input(format!("cannot show as JSON: {e}"));

    // Decode. The JSON streams to stdout from the decoded message; the round-trip check
    // re-encodes the message itself, since JSON -> message is lossless by construction (the
    // Java oracle proves the JSON equal to Kafka's), so no tree of the JSON is ever built.
    // The records hook reports itself what its own form of `records` fields loses.
    // Error offsets count from the start of the input, size prefix included; bytes after a
    // size-prefixed frame are trailing bytes, refused unless lenient.
    let decoded = match response_api {
        None => RequestFrame::decode_with(data.clone(), &options)
            .map(|frame| Decoded::Request(Box::new(frame))),
        Some((api, version)) => ResponseFrame::decode_with(data.clone(), api, version, &options)
            .map(|frame| Decoded::Response(Box::new(frame))),
    }
    .map_err(bad)?;
    // The frame without its prefix, where the round trip is compared, and the bytes after it
    // (lenient only). The prefix was read and checked by the decode that just succeeded.
    let (frame, base, after) = if input.size_prefixed {
        let size = i32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
        let after = data.len() - 4 - size;
        (data.slice(4..4 + size), 4, after)
    } else {
        (data, 0, 0)
    };
    // The JSON streams, so a message that cannot be shown (a float JSON has no form for, a
    // records field that does not decode) must be found before the first byte is written:
    // nothing goes to stdout on an error. A dry run into a sink that keeps nothing finds it;
    // the records hook only checks its fields then (collecting their warnings once), and
    // does not check them again when they are written.
    if let Some(hook) = &hook {
        hook.check_only(true);
    }
    decoded
        .write_json(&json_options, &mut DiscardJson)
        .map_err(unshowable)?;
    if let Some(hook) = &hook {
        hook.check_only(false);
    }
    write_json_with(|out| decoded.write_json(&json_options, out), unshowable)?;
    // What `encode` will read back from this JSON: the message without its unknown tagged
    // fields, which the JSON does not show.
    let mut decoded = decoded;
    decoded.clear_unknown_tagged_fields();
    let again = decoded.encode_to_bytes().map_err(|e| e.to_string());
    drop(decoded);
    let (refused, records_warnings) = hook
        .map(|hook| (hook.take_refused(), hook.take_warnings()))
        .unwrap_or_default();
    for warning in refused.iter().chain(&records_warnings) {
        eprintln!("kafka-codec: warning: {warning}");
    }
    if let Some(warning) = round_trip_warning(&frame, again, base) {
        eprintln!("kafka-codec: warning: {warning}");
    }
    if after != 0 {
        eprintln!(
            "kafka-codec: warning: {} bytes after the frame, from byte offset {}, are not in \
             the JSON; encode will not write them",
            after,
            base + frame.len()
        );
    }
    Ok(())
}

/// What to do when raw input that did not decode is plainly not a frame's bytes: hex text
/// read without `--hex`, or JSON meant for `encode`.
fn not_binary_hint(data: &[u8]) -> &'static str {
    let text = data.trim_ascii_start();
    if text.starts_with(b"{") {
        " (the input is JSON: `kafka-codec encode request|response` reads it)"
    } else if !text.is_empty() && data.is_ascii() && kafka_codec_hexdump::decode(data).is_ok() {
        " (the input looks like hex text: add --hex)"
    } else {
        ""
    }
}

/// A decoded request or response frame.
enum Decoded {
    // Boxed: frames are large, and the enum is only moved once.
    Request(Box<RequestFrame>),
    Response(Box<ResponseFrame>),
}

impl Decoded {
    fn write_json(
        &self,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError> {
        match self {
            Decoded::Request(frame) => frame.write_json(options, out),
            Decoded::Response(frame) => frame.write_json(options, out),
        }
    }

    fn clear_unknown_tagged_fields(&mut self) {
        match self {
            Decoded::Request(frame) => frame.clear_unknown_tagged_fields(),
            Decoded::Response(frame) => frame.clear_unknown_tagged_fields(),
        }
    }

    fn encode_to_bytes(&self) -> Result<Bytes, EncodeError> {
        match self {
            Decoded::Request(frame) => frame.encode_to_bytes(),
            Decoded::Response(frame) => frame.encode_to_bytes(),
        }
    }
}

/// Why `encode` would not give back `input`, if it would not.
fn round_trip_warning(input: &[u8], again: Result<Bytes, String>, base: usize) -> Option<String> {
    let again = match again {
        Ok(again) if again == input => return None,
        Ok(again) => again,
        Err(e) => return Some(format!("this JSON does not encode again: {e}")),
    };
    if input.starts_with(&again) {
        return Some(format!(
            "{} trailing bytes from byte offset {} are not in the JSON; encode will not write them",
            input.len() - again.len(),
            base + again.len()
        ));
    }
    let first_difference = input
        .iter()
        .zip(again.iter())
        .position(|(a, b)| a != b)
        .unwrap_or(input.len().min(again.len()));
    Some(format!(
        "encode will not give back these bytes (they differ from byte offset {}): the frame \
         holds unknown tagged fields or non-canonical encodings the JSON does not keep",
        base + first_difference
    ))
}
