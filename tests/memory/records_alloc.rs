//! Decompression bombs: a compressed batch whose records would inflate far beyond
//! `DecodeLimits::max_decompressed_batch_size` stops at the limit with a typed error, and the
//! memory it costs stays about the limit (the decompressor's own state, such as zstd's
//! window, comes on top: at most the limit again).
//!
//! A counting allocator (the `memory` binary's) tracks the peak of live heap bytes while a
//! batch is read. The tests take `SERIAL`, so that no other test's allocations (such as
//! another test's bombs being built) mix in while a decode is counted.

use bytes::Bytes;
use kafka_codec::records::{
    decode_batches_with, Compression, ReadOptions, RecordBatchBuilder, RecordsErrorKind,
};
use kafka_codec::DecodeLimits;
use kafka_codec_test_support::counting_alloc::measure;

use crate::SERIAL;

/// Peak live heap bytes above what was live before `f` ran, a `realloc` counted as its
/// growth: large reallocations move pages (mremap) rather than copy.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let (value, stats) = measure(f);
    (value, stats.peak)
}

/// A v2 batch of one record whose compressed records area is `area` (CRC and length fixed
/// up, so only decompression can refuse it).
fn batch_with_area(compression: Compression, area: &[u8]) -> Bytes {
    let mut builder = RecordBatchBuilder::new(Compression::None);
    builder.append(0, None, Some(Bytes::from_static(b"x")));
    let mut bytes = builder.build().encode_to_bytes().unwrap().to_vec();
    bytes.truncate(61);
    bytes.extend_from_slice(area);
    let length = (bytes.len() - 12) as i32;
    bytes[8..12].copy_from_slice(&length.to_be_bytes());
    bytes[21..23].copy_from_slice(&i16::from(compression.id()).to_be_bytes());
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    Bytes::from(bytes)
}

/// Our own compressed form of `len` zero bytes in one batch, and its records area.
fn compressed_zeros(compression: Compression, len: usize) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(compression);
    builder.append(0, None, Some(Bytes::from(vec![0u8; len])));
    builder.build().encode_to_bytes().unwrap()[61..].to_vec()
}

fn options(limit: usize) -> ReadOptions {
    ReadOptions {
        limits: DecodeLimits {
            max_decompressed_batch_size: limit,
            ..DecodeLimits::default()
        },
        ..ReadOptions::default()
    }
}

const MIB: usize = 1024 * 1024;

/// Bombs of every codec against a 4 MiB limit, each inflating to 64 MiB or more: built by
/// repeating a block (or member, or frame) of compressed zeros, so that they are cheap to
/// make and as dense as the codec allows.
fn bombs() -> Vec<(Compression, Vec<u8>, usize)> {
    let mut bombs = Vec::new();
    if Compression::Gzip.is_enabled() {
        // Concatenated gzip members (readers must accept them): 64 × 1 MiB.
        let member = compressed_zeros(Compression::Gzip, MIB);
        bombs.push((Compression::Gzip, member.repeat(64), 64 * MIB));
    }
    if Compression::Snappy.is_enabled() {
        // The xerial header, then one 32 KiB block of zeros 2048 times.
        let framed = compressed_zeros(Compression::Snappy, 32 * 1024);
        let (header, block) = framed.split_at(16);
        let mut bomb = header.to_vec();
        bomb.extend(block.repeat(2048));
        bombs.push((Compression::Snappy, bomb, 64 * MIB));
    }
    if Compression::Lz4.is_enabled() {
        // The frame header, one 64 KiB independent block of zeros 1024 times, the end mark.
        let frame = compressed_zeros(Compression::Lz4, 64 * 1024);
        let (header, rest) = frame.split_at(7);
        let block = &rest[..rest.len() - 4];
        let mut bomb = header.to_vec();
        bomb.extend(block.repeat(1024));
        bomb.extend([0, 0, 0, 0]);
        bombs.push((Compression::Lz4, bomb, 64 * MIB));
    }
    if Compression::Zstd.is_enabled() {
        // 64 frames of 1 MiB of zeros.
        let frame = compressed_zeros(Compression::Zstd, MIB);
        bombs.push((Compression::Zstd, frame.repeat(64), 64 * MIB));
    }
    bombs
}

#[test]
fn bombs_stop_at_the_limit_within_about_twice_the_limit_of_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let limit = 4 * MIB;
    for (compression, area, inflated) in bombs() {
        let batch = batch_with_area(compression, &area);
        let (result, peak) = peak_of(|| decode_batches_with(&batch, &options(limit)));
        let error = result.unwrap_err();
        assert_eq!(
            error.kind(),
            &RecordsErrorKind::DecompressedTooLarge { limit },
            "{compression}: {error}"
        );
        eprintln!(
            "{compression}: {} bytes that inflate to {} MiB stopped at the {} MiB limit, \
             peak {:.2} MiB",
            batch.len(),
            inflated / MIB,
            limit / MIB,
            peak as f64 / MIB as f64
        );
        assert!(
            peak <= 2 * limit + MIB / 4,
            "{compression}: peak {peak} bytes"
        );
    }
}

#[test]
fn a_hundred_bytes_cannot_claim_more_than_the_limit() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Each about 100 bytes, inflating (or claiming to) far beyond a 16 KiB limit.
    let limit = 16 * 1024;
    let mut cases: Vec<(Compression, Vec<u8>)> = Vec::new();
    if Compression::Gzip.is_enabled() {
        cases.push((
            Compression::Gzip,
            compressed_zeros(Compression::Gzip, 100_000),
        ));
    }
    if Compression::Snappy.is_enabled() {
        // Raw snappy declares its length first: 2^32 - 1 here, then nothing.
        cases.push((
            Compression::Snappy,
            vec![0xff, 0xff, 0xff, 0xff, 0x0f, 0x00],
        ));
    }
    if Compression::Lz4.is_enabled() {
        cases.push((Compression::Lz4, compressed_zeros(Compression::Lz4, 20_000)));
    }
    if Compression::Zstd.is_enabled() {
        cases.push((
            Compression::Zstd,
            compressed_zeros(Compression::Zstd, 2 * MIB),
        ));
    }
    for (compression, area) in cases {
        let batch = batch_with_area(compression, &area);
        assert!(
            batch.len() < 61 + 200,
            "{compression}: {} bytes",
            batch.len()
        );
        let (result, peak) = peak_of(|| decode_batches_with(&batch, &options(limit)));
        let error = result.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                RecordsErrorKind::DecompressedTooLarge { .. }
                    | RecordsErrorKind::ZstdWindowTooLarge { .. }
            ),
            "{compression}: {error}"
        );
        eprintln!(
            "{compression}: {}-byte batch refused ({error}), peak {} KiB",
            batch.len(),
            peak / 1024
        );
        assert!(peak <= 2 * limit + 256 * 1024, "{compression}: peak {peak}");
    }
}
