//! The old message formats (magic 0 and 1), as a Kafka 3.x broker serves them: its log holds
//! magic 2 batches only, so a Produce v0-v2 message set is converted up to one v2 batch
//! before it is stored, and a Fetch v0-v3, whose clients read no v2 batch, gets the stored
//! batches converted down (v0-v1: magic 0, v2-v3: magic 1). A release that served no v2
//! format (`--as-version` 0.8 to 0.10.2) serves no Produce v3 or Fetch v4 either, so its
//! clients only ever see the format of their own release; Kafka 4 dropped these versions
//! (KIP-896) and `--as-version 4.x` closes the connection on them before they get here.
//!
//! Decompression is bounded by the crate's cap ([`DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE`])
//! for a whole message set and for each stored batch converted.

use kafka_codec::bytes::Bytes;
use kafka_codec::records::{
    down_convert, up_convert, BatchReader, ReadOptions, RecordsErrorKind,
    DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE,
};
use kafka_codec::ErrorCode;

/// The magic a Fetch of `version` reads, when older than 2: v0-v1 magic 0, v2-v3 magic 1.
pub fn fetch_magic(version: i16) -> Option<i8> {
    match version {
        0..=1 => Some(0),
        2..=3 => Some(1),
        _ => None,
    }
}

/// A Produce v0-v2 message set as the one v2 batch the log stores (offsets from 0; the
/// append assigns the real ones).
///
/// Errors as Kafka answers them: a v2 batch in a request of these versions, or no message
/// at all: INVALID_RECORD; a message that fails its CRC or cannot be read (truncated, a
/// corrupt or unknown codec, more than the cap decompressed): CORRUPT_MESSAGE.
pub fn up_convert_message_set(records: &Bytes) -> Result<Bytes, ErrorCode> {
    let options = ReadOptions::default();
    let mut entries = Vec::new();
    let mut decompressed = 0usize;
    for entry in BatchReader::with_options(records.clone(), options) {
        let entry = entry.map_err(|_| ErrorCode::CORRUPT_MESSAGE)?;
        if entry.header().magic >= 2 {
            return Err(ErrorCode::INVALID_RECORD);
        }
        let entry = entry.decode().map_err(|e| match e.kind() {
            RecordsErrorKind::CodecNotEnabled(_) => ErrorCode::UNSUPPORTED_COMPRESSION_TYPE,
            _ => ErrorCode::CORRUPT_MESSAGE,
        })?;
        // Each wrapper is capped on its own; so is the set, so that many wrappers cannot
        // add up to many caps.
        decompressed = decompressed.saturating_add(entry.uncompressed_len());
        if decompressed > DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE {
            return Err(ErrorCode::CORRUPT_MESSAGE);
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        return Err(ErrorCode::INVALID_RECORD);
    }
    up_convert(&entries)
        .and_then(|batch| batch.encode_to_bytes())
        .map_err(|_| ErrorCode::INVALID_RECORD)
}

/// A stored v2 batch as a Fetch reading `magic` gets it: its records from `from_offset` on;
/// `None` when none is left (or it is a control batch, which old clients never saw).
///
/// Errors: a zstd batch, which no old format carries: UNSUPPORTED_COMPRESSION_TYPE, as
/// Kafka answers an old fetch of zstd data; a batch that does not decode (the log holds
/// only batches that did): CORRUPT_MESSAGE.
pub fn down_convert_stored(
    stored: &Bytes,
    magic: i8,
    from_offset: i64,
) -> Result<Option<Bytes>, ErrorCode> {
    let options = ReadOptions {
        // Checked when it was produced.
        verify_crc: false,
        ..ReadOptions::default()
    };
    let mut out = Vec::new();
    for batch in BatchReader::with_options(stored.clone(), options) {
        let batch = batch
            .and_then(|batch| batch.decode())
            .map_err(|_| ErrorCode::CORRUPT_MESSAGE)?;
        match down_convert(&batch, magic, from_offset) {
            Ok(Some(converted)) => converted
                .encode_to_vec(&mut out)
                .map_err(|_| ErrorCode::CORRUPT_MESSAGE)?,
            Ok(None) => {}
            Err(e) if matches!(e.kind(), RecordsErrorKind::CompressionNeedsMagic2 { .. }) => {
                return Err(ErrorCode::UNSUPPORTED_COMPRESSION_TYPE)
            }
            Err(_) => return Err(ErrorCode::CORRUPT_MESSAGE),
        }
    }
    Ok((!out.is_empty()).then(|| Bytes::from(out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::records::{decode_batches, Compression, RecordBatchBuilder};

    fn legacy_set(magic: i8, compression: Compression, values: &[&str]) -> Bytes {
        let mut builder = RecordBatchBuilder::new(compression)
            .magic(magic)
            .base_offset(0);
        for value in values {
            builder.append(1_234, None, Some(Bytes::from(value.to_string())));
        }
        builder.build().encode_to_bytes().unwrap()
    }

    #[test]
    fn a_message_set_goes_up_and_comes_down_as_each_fetch_version_reads_it() {
        for compression in [Compression::None, Compression::Gzip, Compression::Lz4] {
            let stored =
                up_convert_message_set(&legacy_set(1, compression, &["a", "b", "c"])).unwrap();
            let batches = decode_batches(&stored).unwrap();
            assert_eq!(batches.len(), 1);
            assert_eq!(batches[0].magic, 2);
            for version in 0..=3 {
                let magic = fetch_magic(version).unwrap();
                let fetched = down_convert_stored(&stored, magic, 1).unwrap().unwrap();
                let read = decode_batches(&fetched).unwrap();
                let values: Vec<_> = read
                    .iter()
                    .flat_map(|b| &b.records)
                    .map(|r| (r.offset, r.value.clone().unwrap()))
                    .collect();
                assert_eq!(
                    values,
                    vec![(1, Bytes::from("b")), (2, Bytes::from("c"))],
                    "{compression:?} v{version}"
                );
                assert!(read.iter().all(|b| b.magic == magic));
            }
        }
        assert_eq!(fetch_magic(4), None);
    }

    #[test]
    fn bad_message_sets_get_kafkas_errors() {
        // A v2 batch in a v0-v2 request, nothing at all, and a message whose CRC fails.
        let v2 = {
            let mut builder = RecordBatchBuilder::new(Compression::None);
            builder.append(0, None, Some(Bytes::from("x")));
            builder.build().encode_to_bytes().unwrap()
        };
        assert_eq!(up_convert_message_set(&v2), Err(ErrorCode::INVALID_RECORD));
        assert_eq!(
            up_convert_message_set(&Bytes::new()),
            Err(ErrorCode::INVALID_RECORD)
        );
        let mut corrupt = legacy_set(0, Compression::None, &["abc"]).to_vec();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1;
        assert_eq!(
            up_convert_message_set(&Bytes::from(corrupt)),
            Err(ErrorCode::CORRUPT_MESSAGE)
        );
        // A truncated entry.
        let whole = legacy_set(1, Compression::Gzip, &["abc"]);
        assert_eq!(
            up_convert_message_set(&whole.slice(..whole.len() - 3)),
            Err(ErrorCode::CORRUPT_MESSAGE)
        );
    }

    #[test]
    fn zstd_cannot_go_down() {
        let mut builder = RecordBatchBuilder::new(Compression::Zstd);
        builder.append(0, None, Some(Bytes::from("x")));
        let stored = builder.build().encode_to_bytes().unwrap();
        assert_eq!(
            down_convert_stored(&stored, 1, 0),
            Err(ErrorCode::UNSUPPORTED_COMPRESSION_TYPE)
        );
    }
}
