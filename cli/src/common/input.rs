//! Where input comes from: a file or standard input, raw bytes or hex text.

use super::failure::Failure;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads all of `path`, or standard input for `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>, Failure> {
    let stdin = path.as_os_str() == "-";
    let mut data = Vec::new();
    let result = if stdin {
        std::io::stdin().lock().read_to_end(&mut data).map(drop)
    } else {
        std::fs::read(path).map(|bytes| data = bytes)
    };
    result.map_err(|e| {
        let name = if stdin {
            "standard input".into()
        } else {
            path.display().to_string()
        };
        Failure::Input(format!("cannot read {name}: {e}"))
    })?;
    Ok(data)
}

/// Binary input (a frame, a records field), from a file or stdin, raw or as hex.
#[derive(Debug, clap::Args)]
pub struct BinaryInput {
    /// Read from FILE, or from standard input for `-`.
    #[arg(value_name = "FILE|-")]
    pub file: PathBuf,
    /// The input is hex text, not raw bytes.
    ///
    /// Accepted: plain hex (whitespace and commas ignored, `#` starts a comment to the end
    /// of the line, `0x` prefixes); `xxd` output; hex dumps with offsets as `tshark -x`,
    /// Wireshark's "Copy as Hex Dump" and `hexdump -C` write them (the ASCII column is
    /// ignored). Byte offsets in errors count decoded bytes, not characters.
    #[arg(long)]
    pub hex: bool,
}

impl BinaryInput {
    /// The input's bytes, hex decoded if `--hex` was given.
    pub fn read(&self) -> Result<Vec<u8>, Failure> {
        let data = read_input(&self.file)?;
        if self.hex {
            kafka_codec_hexdump::decode(&data).map_err(|e| Failure::Input(e.to_string()))
        } else {
            Ok(data)
        }
    }
}

/// The bytes of one frame, with or without its size prefix.
#[derive(Debug, clap::Args)]
pub struct FrameInput {
    #[command(flatten)]
    pub source: BinaryInput,
    /// The input starts with the frame's 4-byte big-endian size, as on the wire.
    #[arg(long)]
    pub size_prefixed: bool,
}

impl FrameInput {
    /// The input's bytes, hex decoded if `--hex` was given.
    pub fn read(&self) -> Result<Vec<u8>, Failure> {
        self.source.read()
    }
}
