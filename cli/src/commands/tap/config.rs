//! The settings every connection of the tap reads.

use kafka_codec::DecodeOptions;

pub struct Config {
    pub max_frame: usize,
    /// The longest a message's JSON may be in a line.
    pub max_message_json: usize,
    /// Bytes of a frame shown in hex (and kept of a frame that is not decoded).
    pub max_hex: usize,
    /// How frames are decoded: limits, and trailing bytes allowed unless --strict.
    pub options: DecodeOptions,
    /// Expand `records` fields (--records).
    pub records: bool,
    /// Requests a client may have unanswered before the tap stops reading from it.
    pub max_in_flight: usize,
    /// Show secrets in the log (--log-secrets).
    pub log_secrets: bool,
    /// Whether anything is decoded and logged (not with --no-log).
    pub logging: bool,
    /// Narrow ApiVersions responses to the versions this crate decodes (--clamp-versions).
    pub clamp_versions: bool,
}
