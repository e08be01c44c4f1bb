//! The memory budget of decoding records into [`RecordBatch`](super::RecordBatch)es.

use super::{RecordsError, RecordsErrorKind};
use crate::wire::DecodeLimits;

/// What decoding records into memory may still reserve.
///
/// [`DecodeLimits::memory_budget`] when it is set; by default
/// [`DecodeLimits::MEMORY_PER_INPUT_BYTE`] per byte of records read (a compressed batch's
/// decompressed records, an uncompressed batch's own) plus
/// [`DecodeLimits::MEMORY_BUDGET_BASE`]. A record takes at most 16 bytes of memory per byte
/// it takes in a batch, a header 32 (`Record` is 112 bytes and the smallest record 7,
/// `Header` is 64 bytes and the smallest header 2), so every honest batch fits the default,
/// and what a batch may cost is bounded by its records' bytes, which the decompression cap
/// bounds in turn.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    limit: usize,
    used: usize,
    /// The default: the limit grows with the records read.
    scales: bool,
}

impl Budget {
    pub(crate) fn new(limits: &DecodeLimits) -> Self {
        match limits.memory_budget {
            Some(limit) => Budget {
                limit,
                used: 0,
                scales: false,
            },
            None => Budget {
                limit: DecodeLimits::MEMORY_BUDGET_BASE,
                used: 0,
                scales: true,
            },
        }
    }

    /// No limit: records handed out one at a time are the caller's to keep or drop.
    pub(crate) fn unlimited() -> Self {
        Budget {
            limit: usize::MAX,
            used: 0,
            scales: false,
        }
    }

    /// The records of one more batch, `len` bytes as read, are about to be decoded.
    pub(crate) fn add_records(&mut self, len: usize) {
        if self.scales {
            self.limit = self
                .limit
                .saturating_add(len.saturating_mul(DecodeLimits::MEMORY_PER_INPUT_BYTE));
        }
    }

    /// Bytes that may still be reserved.
    #[inline]
    pub(crate) fn left(&self) -> usize {
        self.limit - self.used
    }

    /// Takes `bytes` already checked against [`Budget::left`].
    #[inline]
    pub(crate) fn take(&mut self, bytes: usize) {
        debug_assert!(bytes <= self.left());
        self.used += bytes;
    }

    /// Charges `bytes` about to be reserved; refused with `LimitExceeded` ("memory budget")
    /// at byte `offset` when they do not fit.
    pub(crate) fn charge(&mut self, bytes: usize, offset: usize) -> Result<(), RecordsError> {
        if bytes > self.left() {
            return Err(RecordsError::new(
                RecordsErrorKind::LimitExceeded {
                    what: "memory budget",
                    value: (self.used as u64).saturating_add(bytes as u64),
                    limit: self.limit as u64,
                },
                offset,
            ));
        }
        self.used += bytes;
        Ok(())
    }
}
