/// Bounds a decoder enforces on top of "never more than the input can hold".
///
/// Counts and lengths are always checked against the bytes that remain, so decoding never
/// reserves memory out of proportion to its input. `DecodeLimits` lets a server tighten that:
/// a broker-facing proxy may refuse frames beyond Kafka's own `socket.request.max.bytes`.
///
/// ```
/// use kafka_codec::DecodeLimits;
/// let strict = DecodeLimits { max_array_len: 10_000, ..DecodeLimits::default() };
/// assert_eq!(strict.max_frame_size, 100 * 1024 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Largest frame the framing helpers accept (Kafka's default `socket.request.max.bytes`
    /// is 100 MiB).
    pub max_frame_size: usize,
    /// Largest element count of any one array.
    pub max_array_len: usize,
    /// Largest string length in bytes (Kafka itself never allows more than 32767).
    pub max_string_len: usize,
    /// Largest `bytes` or `records` payload.
    pub max_bytes_len: usize,
    /// Deepest nesting of structs. Kafka schemas nest only a few levels, so this bounds
    /// recursion for hand-written schemas too.
    pub max_nesting: usize,
    /// Largest decompressed size of one record batch's records (of one legacy wrapper's
    /// inner messages); decompression stops there with an error. A few compressed bytes can
    /// claim gigabytes, so this bounds what reading a batch may allocate (64 MiB by
    /// default).
    pub max_decompressed_batch_size: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_frame_size: 100 * 1024 * 1024,
            max_array_len: usize::MAX,
            max_string_len: super::MAX_STRING_LEN,
            max_bytes_len: usize::MAX,
            max_nesting: 64,
            max_decompressed_batch_size: 64 * 1024 * 1024,
        }
    }
}
