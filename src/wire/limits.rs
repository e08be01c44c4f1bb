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
    /// Most bytes one decode may reserve for the arrays and tagged sections it builds
    /// (element count × in-memory size; strings and bytes are slices of the input, so they
    /// cost only their handle inside their struct, as do arrays of fixed-width numbers, but
    /// for a box when they are too long to hold inline). A reservation that would pass it is
    /// refused with `LimitExceeded` ("memory budget") and the path of the field.
    ///
    /// `None` (the default) scales with the input: [`DecodeLimits::MEMORY_PER_INPUT_BYTE`]
    /// bytes per input byte plus [`DecodeLimits::MEMORY_BUDGET_BASE`], which every honest
    /// frame of every schema fits (see `docs/memory-density.md`).
    ///
    /// Record batches decoded whole (`records::RawBatch::decode`, `decode_batches`) charge
    /// their records and headers to it too, one budget per call; there the default is
    /// measured against the records' bytes as read (a compressed batch's decompressed
    /// records), which the decompression cap bounds.
    pub memory_budget: Option<usize>,
}

impl DecodeLimits {
    /// Bytes of memory one wire byte may become under the default budget: the worst
    /// element of any schema in `docs/memory-density.md`, rounded up (a test keeps the two
    /// in step).
    pub const MEMORY_PER_INPUT_BYTE: usize = 46;

    /// What the default budget allows on top of [`DecodeLimits::MEMORY_PER_INPUT_BYTE`] per
    /// input byte: 1 MiB, so that tiny frames never come near it.
    pub const MEMORY_BUDGET_BASE: usize = 1024 * 1024;

    /// The budget of a decode over `input_len` bytes: [`DecodeLimits::memory_budget`], or
    /// the default proportional to the input.
    pub fn memory_budget_for(&self, input_len: usize) -> usize {
        self.memory_budget.unwrap_or_else(|| {
            input_len
                .saturating_mul(Self::MEMORY_PER_INPUT_BYTE)
                .saturating_add(Self::MEMORY_BUDGET_BASE)
        })
    }
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
            memory_budget: None,
        }
    }
}
