//! The four codecs as Kafka frames them, each behind its cargo feature, and the streamed,
//! capped decompression.
//!
//! What sits in a compressed batch's records area (magic 2) or a wrapper message's value
//! (magic 0/1):
//! - gzip: one or more gzip members.
//! - snappy: Java and kafka-python write the xerial framing (an 8-byte magic, two int32
//!   versions, then int32-length-prefixed raw snappy blocks); librdkafka writes one raw
//!   snappy block. Both are read, told apart by the magic; the xerial form is written.
//! - lz4: the LZ4 frame format. Magic 0 messages carry a header checksum computed over the
//!   wrong bytes (KAFKA-3160): it is ignored on read and reproduced on write, as Kafka does.
//! - zstd: zstd frames (magic 2 only).
//!
//! Decompressed sizes are not declared anywhere trustworthy, so every codec is read as a
//! stream into a buffer that grows towards [`DecodeLimits::max_decompressed_batch_size`]
//! and stops there with a typed error; only what was decompressed (and one chunk) of it
//! takes memory.
//!
//! [`DecodeLimits::max_decompressed_batch_size`]: crate::DecodeLimits::max_decompressed_batch_size

use super::{Compression, RecordsErrorKind};
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
use std::io::Read;

impl Compression {
    /// The id in the attributes: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.
    pub const fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// The codec of an id; `None` for the undefined ids 5-7.
    pub const fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            _ => return None,
        })
    }

    /// The name Kafka's `compression.type` uses: `none`, `gzip`, `snappy`, `lz4`, `zstd`
    /// (also the name of the cargo feature that compiles the codec in).
    pub const fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    /// The codec of a name (see [`Compression::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Compression::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Decompresses `input`, one compressed payload outside a record batch (client
    /// telemetry's pushed metrics, which Kafka reads with the codec's magic 2 input stream),
    /// at most `cap` bytes of output: corrupt data, a codec not compiled in or more than
    /// `cap` bytes is an error.
    pub fn decompress_payload(
        self,
        input: &[u8],
        cap: usize,
    ) -> Result<Vec<u8>, super::RecordsError> {
        decompress(self, 2, input, cap).map_err(|kind| super::RecordsError::new(kind, 0))
    }

    /// Every codec, `None` first.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// Whether this build can read and write the codec (its cargo feature is on).
    pub const fn is_enabled(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(feature = "zstd"),
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[allow(dead_code)]
fn corrupt(compression: Compression, reason: impl std::fmt::Display) -> RecordsErrorKind {
    RecordsErrorKind::Decompression {
        compression,
        reason: reason.to_string(),
    }
}

/// Reads `reader` to its end into a buffer that never exceeds `cap` bytes. Its capacity
/// grows geometrically from `hint` (to at most `cap`), but at most [`READ_CHUNK`] bytes past
/// what was read are ever zero-filled for the reader, so the pages beyond are reserved and
/// not touched: the buffer takes about the bytes decompressed, not its capacity. Once full,
/// one more byte is asked for to tell "exactly `cap`" from "more".
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
fn read_capped(
    mut reader: impl Read,
    compression: Compression,
    cap: usize,
    hint: usize,
) -> Result<Vec<u8>, RecordsErrorKind> {
    let mut out: Vec<u8> = Vec::with_capacity(hint.clamp(1, cap.max(1)).min(cap));
    let mut filled = 0;
    loop {
        if filled == out.len() {
            if out.len() >= cap {
                let mut probe = [0u8; 1];
                loop {
                    match reader.read(&mut probe) {
                        Ok(0) => {
                            out.truncate(filled);
                            return Ok(out);
                        }
                        Ok(_) => return Err(RecordsErrorKind::DecompressedTooLarge { limit: cap }),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(read_error(compression, e, cap)),
                    }
                }
            }
            if out.len() == out.capacity() {
                let grown = out.capacity().saturating_mul(2).max(4096).min(cap);
                out.reserve_exact(grown - out.len());
            }
            let wanted = filled
                .saturating_add(READ_CHUNK)
                .min(out.capacity())
                .min(cap);
            out.resize(wanted, 0);
        }
        match reader.read(&mut out[filled..]) {
            Ok(0) => {
                out.truncate(filled);
                return Ok(out);
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(read_error(compression, e, cap)),
        }
    }
}

/// How far past the bytes read [`read_capped`] lets a decoder write at a time.
#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
const READ_CHUNK: usize = 256 * 1024;

#[cfg(any(feature = "gzip", feature = "lz4", feature = "zstd"))]
fn read_error(compression: Compression, e: std::io::Error, cap: usize) -> RecordsErrorKind {
    #[cfg(feature = "zstd")]
    if compression == Compression::Zstd && {
        // zstd refuses a frame whose window exceeds `window_log_max` with this text.
        let text = e.to_string();
        text.contains("window") || text.contains("too much memory")
    } {
        return RecordsErrorKind::ZstdWindowTooLarge { limit: cap };
    }
    let _ = cap;
    corrupt(compression, e)
}

/// Decompresses `input` (a records area, or a wrapper message's value for magic 0/1), at
/// most `cap` bytes of output.
pub(crate) fn decompress(
    compression: Compression,
    magic: i8,
    input: &[u8],
    cap: usize,
) -> Result<Vec<u8>, RecordsErrorKind> {
    // Compressed data rarely shrinks below a quarter; start there and grow.
    #[allow(unused_variables)]
    let hint = input.len().saturating_mul(4).max(256);
    match compression {
        Compression::None => Ok(input.to_vec()),
        #[cfg(feature = "gzip")]
        Compression::Gzip => read_capped(
            flate2::read::MultiGzDecoder::new(input),
            compression,
            cap,
            hint,
        ),
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::decompress(input, cap),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::decompress(input, magic, cap, hint),
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::with_buffer(input)
                .map_err(|e| corrupt(compression, e))?;
            // The window is the decoder's own buffer: bound it by the cap too, so that a frame
            // declaring a huge window cannot make it allocate beyond ~2 × cap.
            decoder
                .window_log_max(zstd_window_log_max(cap))
                .map_err(|e| corrupt(compression, e))?;
            read_capped(decoder, compression, cap, hint)
        }
        #[allow(unreachable_patterns)]
        other => {
            let _ = (magic, cap);
            Err(RecordsErrorKind::CodecNotEnabled(other))
        }
    }
}

/// The largest zstd window (as a power of two) a frame may declare under `cap`: the
/// smallest power of two that holds `cap`, between zstd's minimum (2^10) and the default
/// limit of the C library (2^27).
#[cfg(feature = "zstd")]
fn zstd_window_log_max(cap: usize) -> u32 {
    let log = usize::BITS - cap.saturating_sub(1).leading_zeros();
    log.clamp(10, 27)
}

/// Appends the compressed form of `input` to `out`.
pub(crate) fn compress(
    compression: Compression,
    magic: i8,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RecordsErrorKind> {
    match compression {
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut compressed = Vec::with_capacity(zstd::zstd_safe::compress_bound(input.len()));
            zstd_compress(input, &mut compressed)
                .map_err(|e| RecordsErrorKind::Unwritable(format!("zstd: {e}")))?;
            out.extend_from_slice(&compressed);
            Ok(())
        }
        other => compress_to(other, magic, input, out).map_err(|e| codec_error(other, e)),
    }
}

/// What a codec's write error means: a codec compiled out, or a failure of the codec.
fn codec_error(compression: Compression, e: std::io::Error) -> RecordsErrorKind {
    match e
        .into_inner()
        .map(|inner| inner.downcast::<RecordsErrorKind>())
    {
        Some(Ok(kind)) => *kind,
        Some(Err(other)) => RecordsErrorKind::Unwritable(format!("{compression}: {other}")),
        None => RecordsErrorKind::Unwritable(format!("{compression}: write failed")),
    }
}

/// zstd at Kafka's default level, 3, in one shot: what `encode` writes. `out` is written
/// from its start, up to its capacity; too small a capacity is an error.
#[cfg(feature = "zstd")]
fn zstd_compress(input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    zstd::bulk::Compressor::new(3)?.compress_to_buffer(input, out)?;
    Ok(())
}

/// Writes the compressed form of `input` to `out` as it is produced: every codec but zstd,
/// whose one-shot output ([`compress`]) is not what its stream gives.
fn compress_to(
    compression: Compression,
    magic: i8,
    input: &[u8],
    out: impl std::io::Write,
) -> std::io::Result<()> {
    match compression {
        Compression::None => {
            let mut out = out;
            out.write_all(input)
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            use std::io::Write;
            // Kafka's default gzip level is the JDK's default, 6.
            let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
            encoder.write_all(input)?;
            encoder.finish().map(drop)
        }
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy::compress_xerial(input, out),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => lz4::compress(input, magic, out),
        #[allow(unreachable_patterns)]
        other => {
            let _ = (magic, input, out);
            Err(std::io::Error::other(RecordsErrorKind::CodecNotEnabled(
                other,
            )))
        }
    }
}

/// Where the compressed form of `input`, as [`compress`] writes it, first differs from
/// `expected` (`None`: it is the same).
///
/// The codec writes into a comparison with `expected` that stops it at the first byte that
/// differs, so no compressed copy is held. zstd is compressed in one shot, as `encode` does:
/// its streamed output is other bytes, and zstd takes the one-shot path only into a buffer
/// of its bound. Only the pages written take memory, so the copy costs what the output
/// takes: the batch's own compressed size when it comes back the same.
pub(crate) fn compressed_difference(
    compression: Compression,
    magic: i8,
    input: &[u8],
    expected: &[u8],
) -> Result<Option<usize>, RecordsErrorKind> {
    #[cfg(feature = "zstd")]
    if compression == Compression::Zstd {
        let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(input.len()));
        return match zstd_compress(input, &mut out) {
            Ok(()) => Ok(super::first_difference(&out, expected)),
            Err(e) => Err(RecordsErrorKind::Unwritable(format!("zstd: {e}"))),
        };
    }
    let mut comparison = Comparison {
        expected,
        pos: 0,
        differs_at: None,
    };
    match compress_to(compression, magic, input, &mut comparison) {
        Ok(()) => Ok(comparison
            .differs_at
            .or((comparison.pos != expected.len()).then_some(comparison.pos))),
        Err(_) if comparison.differs_at.is_some() => Ok(comparison.differs_at),
        Err(e) => Err(codec_error(compression, e)),
    }
}

/// A writer that compares what it is given with `expected` and fails at the first byte
/// that differs (or goes past its end), noting where.
struct Comparison<'a> {
    expected: &'a [u8],
    pos: usize,
    differs_at: Option<usize>,
}

impl std::io::Write for Comparison<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.differs_at.is_none() {
            let rest = &self.expected[self.pos..];
            let common = buf.len().min(rest.len());
            match super::first_difference(&buf[..common], &rest[..common]) {
                Some(at) => self.differs_at = Some(self.pos + at),
                None if buf.len() > rest.len() => self.differs_at = Some(self.pos + common),
                None => {
                    self.pos += buf.len();
                    return Ok(buf.len());
                }
            }
        }
        Err(std::io::Error::other("the output differs"))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "snappy")]
mod snappy {
    use super::{corrupt, Compression, RecordsErrorKind};
    use std::io::{self, Write};

    /// The xerial (snappy-java) stream header: magic, version 1, compatible version 1.
    const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
    const XERIAL_HEADER_LEN: usize = 16;
    /// snappy-java's default block size, which Kafka uses.
    const XERIAL_BLOCK: usize = 32 * 1024;

    /// Raw snappy (librdkafka) or the xerial framing (Java, kafka-python), by the magic.
    pub(super) fn decompress(input: &[u8], cap: usize) -> Result<Vec<u8>, RecordsErrorKind> {
        if input.len() >= XERIAL_HEADER_LEN && input[..8] == XERIAL_MAGIC {
            let mut out = Vec::new();
            let mut rest = &input[XERIAL_HEADER_LEN..];
            while !rest.is_empty() {
                let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                    return Err(corrupt(
                        Compression::Snappy,
                        "truncated xerial block length",
                    ));
                };
                let len = i32::from_be_bytes(*len);
                let len = usize::try_from(len)
                    .ok()
                    .filter(|&len| len <= tail.len())
                    .ok_or_else(|| {
                        corrupt(
                            Compression::Snappy,
                            format!("xerial block of {len} bytes, {} remain", tail.len()),
                        )
                    })?;
                let (block, next) = tail.split_at(len);
                raw_block_into(block, &mut out, cap)?;
                rest = next;
            }
            Ok(out)
        } else {
            let mut out = Vec::new();
            raw_block_into(input, &mut out, cap)?;
            Ok(out)
        }
    }

    /// One raw snappy block appended to `out`. Its decompressed length is declared up front
    /// (and checked by the decoder), so the cap is applied before anything is reserved.
    fn raw_block_into(block: &[u8], out: &mut Vec<u8>, cap: usize) -> Result<(), RecordsErrorKind> {
        let len = snap::raw::decompress_len(block).map_err(|e| corrupt(Compression::Snappy, e))?;
        if len > cap.saturating_sub(out.len()) {
            return Err(RecordsErrorKind::DecompressedTooLarge { limit: cap });
        }
        let start = out.len();
        out.resize(start + len, 0);
        let written = snap::raw::Decoder::new()
            .decompress(block, &mut out[start..])
            .map_err(|e| corrupt(Compression::Snappy, e))?;
        out.truncate(start + written);
        Ok(())
    }

    /// The xerial framing, as Kafka's Java producer writes it, written as each block is
    /// compressed.
    pub(super) fn compress_xerial(input: &[u8], mut out: impl Write) -> io::Result<()> {
        out.write_all(&XERIAL_MAGIC)?;
        out.write_all(&1i32.to_be_bytes())?;
        out.write_all(&1i32.to_be_bytes())?;
        let mut encoder = snap::raw::Encoder::new();
        let mut block = vec![0; snap::raw::max_compress_len(XERIAL_BLOCK.min(input.len()))];
        for chunk in input.chunks(XERIAL_BLOCK) {
            let n = encoder
                .compress(chunk, &mut block)
                .map_err(io::Error::other)?;
            out.write_all(&(n as i32).to_be_bytes())?;
            out.write_all(&block[..n])?;
        }
        Ok(())
    }
}

#[cfg(feature = "lz4")]
mod lz4 {
    use super::{corrupt, read_capped, Compression, RecordsErrorKind};
    use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};
    use std::hash::Hasher;
    use std::io::{self, Read, Write};

    const FLG_CONTENT_SIZE: u8 = 0x08;
    const FLG_DICT_ID: u8 = 0x01;

    /// Length of the frame descriptor up to (not including) its checksum byte, if `frame`
    /// starts with a complete LZ4 frame header.
    fn descriptor_end(frame: &[u8]) -> Option<usize> {
        let flg = *frame.get(4)?;
        let mut end = 6;
        if flg & FLG_CONTENT_SIZE != 0 {
            end += 8;
        }
        if flg & FLG_DICT_ID != 0 {
            end += 4;
        }
        (frame.len() > end && frame[..4] == [0x04, 0x22, 0x4d, 0x18]).then_some(end)
    }

    fn xxh32(bytes: &[u8]) -> u8 {
        let mut hasher = twox_hash::XxHash32::with_seed(0);
        hasher.write(bytes);
        (hasher.finish() >> 8) as u8
    }

    pub(super) fn decompress(
        input: &[u8],
        magic: i8,
        cap: usize,
        hint: usize,
    ) -> Result<Vec<u8>, RecordsErrorKind> {
        match descriptor_end(input) {
            // Magic 0's header checksum covers the wrong bytes; Kafka ignores it, and so do
            // we: the header goes to the decoder with the checksum it expects.
            Some(end) if magic == 0 => {
                let mut header = input[..=end].to_vec();
                header[end] = xxh32(&header[4..end]);
                let reader = header.as_slice().chain(&input[end + 1..]);
                read_capped(FrameDecoder::new(reader), Compression::Lz4, cap, hint)
            }
            _ => read_capped(FrameDecoder::new(input), Compression::Lz4, cap, hint),
        }
        .map_err(|e| match e {
            RecordsErrorKind::Decompression { reason, .. } => corrupt(Compression::Lz4, reason),
            other => other,
        })
    }

    /// Kafka's framing: 64 KiB independent blocks, no checksums, an end mark.
    pub(super) fn compress(input: &[u8], magic: i8, out: impl Write) -> io::Result<()> {
        let info = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Independent);
        if magic == 0 {
            let mut encoder = FrameEncoder::with_frame_info(info, Kafka3160::new(out));
            encoder.write_all(input)?;
            encoder.finish().map_err(io::Error::from)?.finish()
        } else {
            let mut encoder = FrameEncoder::with_frame_info(info, out);
            encoder.write_all(input)?;
            encoder.finish().map(drop).map_err(io::Error::from)
        }
    }

    /// Passes a frame on with the header checksum Kafka writes for magic 0 (KAFKA-3160):
    /// the checksum of the magic number and the descriptor, not of the descriptor alone.
    struct Kafka3160<W> {
        out: W,
        /// The frame's start, until its header is whole.
        head: Vec<u8>,
        passed: bool,
    }

    impl<W: Write> Kafka3160<W> {
        fn new(out: W) -> Self {
            Kafka3160 {
                out,
                head: Vec::new(),
                passed: false,
            }
        }

        /// Writes what is still held (a frame too short to have a header is passed as is).
        fn finish(mut self) -> io::Result<()> {
            if !self.passed {
                self.out.write_all(&self.head)?;
            }
            self.out.flush()
        }
    }

    impl<W: Write> Write for Kafka3160<W> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.passed {
                return self.out.write(buf);
            }
            self.head.extend_from_slice(buf);
            if let Some(end) = descriptor_end(&self.head) {
                self.head[end] = xxh32(&self.head[..end]);
                self.out.write_all(&self.head)?;
                self.head = Vec::new();
                self.passed = true;
            }
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            self.out.flush()
        }
    }
}
