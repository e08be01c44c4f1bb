//! `kafka-codec records decode|encode`: what a `records` field holds (record batches) as
//! JSON, and back.

use crate::common::{
    check_records, read_input, records_from_json, write_bytes, write_json_with, BinaryInput,
    Failure, Run,
};
use kafka_codec::bytes::Bytes;
use kafka_codec::records::{ReadOptions, DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::DecodeLimits;
use std::path::PathBuf;

/// The record batches of a `records` field (Produce, Fetch, FetchSnapshot, ...) as JSON, and
/// back.
///
/// One JSON object per batch, in order: baseOffset, partitionLeaderEpoch, magic, crc,
/// compression ("none", "gzip", "snappy", "lz4", "zstd"), timestampType, isTransactional,
/// isControl, hasDeleteHorizon, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId,
/// producerEpoch, baseSequence and records. A record has offset (absolute), timestamp, key
/// and value (standard base64 or null), headers ({key: string, value: base64 or null});
/// attributes when not 0, and in a control batch its decoded control record. Legacy message
/// sets (magic 0 and 1) show as batch-like objects: a plain message as a batch of one record,
/// a compressed wrapper as a batch of its inner messages.
#[derive(Debug, clap::Subcommand)]
pub enum Records {
    Decode(RecordsDecode),
    Encode(RecordsEncode),
}

impl Run for Records {
    fn run(self) -> Result<(), Failure> {
        match self {
            Records::Decode(command) => command.run(),
            Records::Encode(command) => command.run(),
        }
    }
}

/// Print the batches of a records field as a JSON array.
///
/// The input is the field's raw bytes: one or more batches, back to back, as they follow the
/// field's length on the wire. Every batch is read (CRCs checked, compressed ones
/// decompressed) before anything is printed, so malformed input prints nothing: exit status
/// 1 and one line on stderr naming the batch's base offset, the record's index and the byte
/// offset (in a compressed batch, also the offset in its decompressed records). Then each
/// batch is read again as it is printed, record by record: memory stays at the input and
/// one decompressed batch, however many records there are.
///
/// A warning on stderr says when `records encode` would not give back the same bytes: a
/// compressed batch whose codec output differs from this crate's (encode compresses again;
/// the records stay the same), a batch not in the canonical form Kafka writes, or a partial
/// last batch left out.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  kafka-codec records decode records.bin
  kafka-codec records decode --hex records.hex | kafka-codec records encode --hex -")]
pub struct RecordsDecode {
    #[command(flatten)]
    pub input: BinaryInput,
    /// Refuse a batch whose records decompress to more than N bytes (a decompression bomb
    /// stops there).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DECOMPRESSED_BATCH_SIZE)]
    pub max_decompressed_bytes: usize,
    /// Leave out an incomplete last batch, with a warning, instead of refusing it: a Fetch
    /// response's records may end with one (the broker cuts at the fetch size).
    #[arg(long)]
    pub allow_truncated_tail: bool,
}

impl Run for RecordsDecode {
    fn run(self) -> Result<(), Failure> {
        let field = Bytes::from(self.input.read()?);
        let options = ReadOptions {
            limits: DecodeLimits {
                max_decompressed_batch_size: self.max_decompressed_bytes,
                ..DecodeLimits::default()
            },
            allow_truncated_tail: self.allow_truncated_tail,
            ..ReadOptions::default()
        };
        let checked = check_records(field, options).map_err(|e| Failure::Input(e.to_string()))?;
        write_json_with(
            |out| checked.write_json(out),
            |e| Failure::Input(e.to_string()),
        )?;
        for warning in checked.warnings.iter().chain(&checked.tail_warning()) {
            eprintln!("kafka-codec: warning: {warning}");
        }
        Ok(())
    }
}

/// Write the bytes of a records field from the JSON array `records decode` prints.
///
/// Uncompressed batches come back byte for byte; compressed ones are compressed again with
/// the codec they name. Only `records` is required in a batch, and a record needs none of
/// its keys: the rest takes the defaults of a new batch (base offset 0, magic 2, no
/// compression, no producer state, a record's offset the one after the previous). `crc` is
/// recomputed; `control` must match the record's key and value, which are what is written.
/// An unknown key is an error.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Example:
  kafka-codec records encode batches.json > records.bin")]
pub struct RecordsEncode {
    /// Read the JSON from FILE, or from standard input for `-`.
    #[arg(value_name = "FILE|-")]
    pub file: PathBuf,
    /// Write lowercase hex and a newline instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
}

impl Run for RecordsEncode {
    fn run(self) -> Result<(), Failure> {
        let data = read_input(&self.file)?;
        let json: Value = serde_json::from_slice(&data)
            .map_err(|e| Failure::Input(format!("invalid JSON: {e}")))?;
        let bytes = records_from_json(&json).map_err(Failure::Input)?;
        write_bytes(&bytes, self.hex)
    }
}
