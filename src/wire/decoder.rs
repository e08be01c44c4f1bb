use super::array::INLINE_CAPACITY;
use super::{
    DecodeError, DecodeErrorKind, DecodeLimits, FixedWidth, PrimitiveArray, RawTaggedField,
    TaggedFields, Utf8Bytes, Uuid, MAX_STRING_LEN,
};
use bytes::Bytes;

/// A cursor over a shared input buffer.
///
/// Fixed-width values are read straight from the slice; strings, bytes and records come back
/// as slices of the input (`Bytes::slice`), never copies. Offsets in errors count from the
/// start of the input, so an error deep inside a frame names the frame byte at fault.
///
/// Cloning a decoder saves its place: a reader can look ahead (to a struct's tagged section,
/// say) and then go back by assigning the clone.
#[derive(Clone)]
pub struct Decoder<'a> {
    input: &'a Bytes,
    // The address of the input's first byte: positions are offsets from it.
    base: usize,
    // The readable window from the next byte on: up to the input's end, or to the end of the
    // tagged field being read, which must not read into its neighbour. Reads split their
    // bytes off its front, so each read is one length check.
    rest: &'a [u8],
    limits: DecodeLimits,
    depth: usize,
    // What is left of the memory budget (`DecodeLimits::memory_budget`): every reservation
    // of an array or a tagged section is charged here before it is made.
    budget_left: usize,
}

/// A `bool` from its one wire byte: any non-zero byte is true, as in Kafka (for
/// [`Decoder::read_fixed_array`]).
pub fn bool_from_byte([byte]: [u8; 1]) -> bool {
    byte != 0
}

/// The fewest bytes of a string that is not null: its length prefix.
fn string_min_size(compact: bool) -> usize {
    if compact {
        1
    } else {
        2
    }
}

/// Why a varint could not be read.
enum VarintError {
    /// The window ended inside it.
    Eof,
    /// More bytes than the type allows.
    TooLong(DecodeErrorKind),
}

/// An unsigned base-128 varint of at most `MAX` bytes from the front of `input`: the value
/// and the bytes it took. Bits beyond 64 are dropped, as Kafka's `ByteUtils` drops bits above
/// 32 in the fifth byte of a varint.
fn unsigned_varint<const MAX: usize>(input: &[u8]) -> Result<(u64, usize), VarintError> {
    let mut value: u64 = 0;
    for (i, &byte) in input.iter().enumerate().take(MAX) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if input.len() >= MAX {
        Err(VarintError::TooLong(DecodeErrorKind::VarintTooLong {
            max_bytes: MAX,
        }))
    } else {
        Err(VarintError::Eof)
    }
}

/// The error of a negative length where null is not allowed: -1 is a null in the wrong
/// place, other negative values are malformed.
#[cold]
fn negative_length(len: i64, start: usize) -> DecodeError {
    let kind = if len == -1 {
        DecodeErrorKind::UnexpectedNull
    } else {
        DecodeErrorKind::NegativeLength(len)
    };
    DecodeError::new(kind, start)
}

impl<'a> Decoder<'a> {
    /// A decoder over all of `input`, with default limits.
    pub fn new(input: &'a Bytes) -> Self {
        Self::with_limits(input, DecodeLimits::default())
    }

    /// A decoder over all of `input` with the given limits.
    pub fn with_limits(input: &'a Bytes, limits: DecodeLimits) -> Self {
        Decoder {
            input,
            base: input.as_ptr() as usize,
            rest: input,
            limits,
            depth: 0,
            budget_left: limits.memory_budget_for(input.len()),
        }
    }

    /// A decoder over `input[start..end]` (which the caller has checked is in bounds), with
    /// positions counted from the start of `input` and the memory budget of `end - start`
    /// input bytes: a frame after its size prefix, read in place as a view reads it.
    #[cfg(feature = "views")]
    pub(crate) fn with_limits_in(
        input: &'a Bytes,
        start: usize,
        end: usize,
        limits: DecodeLimits,
    ) -> Self {
        Decoder {
            input,
            base: input.as_ptr() as usize,
            rest: input.get(start..end).unwrap_or(&input[..0]),
            limits,
            depth: 0,
            budget_left: limits.memory_budget_for(end.saturating_sub(start)),
        }
    }

    /// Bytes of the memory budget not yet reserved.
    pub fn budget_left(&self) -> usize {
        self.budget_left
    }

    /// An empty `Vec` with room for exactly `count` values, its bytes charged to the memory
    /// budget ([`DecodeLimits::memory_budget`]); refused with `LimitExceeded` when they do
    /// not fit. Callers have checked `count` against the bytes that remain, so the `Vec`
    /// never grows.
    #[inline]
    pub fn reserve<T>(&mut self, count: usize) -> Result<Vec<T>, DecodeError> {
        self.charge(count.saturating_mul(std::mem::size_of::<T>()))?;
        Ok(Vec::with_capacity(count))
    }

    /// A compact array of fixed-width values `width` bytes each that fits inline in a
    /// `PrimitiveArray` (nothing to charge), stepped over at once when its count is one byte
    /// and the input holds it; `false` (nothing read) for anything else, which the caller
    /// checks the long way. For the zero-copy views' check.
    #[cfg(feature = "views")]
    #[inline]
    pub(crate) fn skip_short_compact_array(&mut self, width: usize) -> bool {
        if let Some((&byte @ 1..=0x7f, rest)) = self.rest.split_first() {
            let count = usize::from(byte - 1);
            let len = count * width;
            if len <= super::array::INLINE_CAPACITY
                && count <= self.limits.max_array_len
                && len <= rest.len()
            {
                self.rest = &rest[len..];
                return true;
            }
        }
        false
    }

    /// Charges `bytes` about to be allocated to the memory budget (a view charges what the
    /// owned decode would allocate, so both refuse the same frames).
    #[inline]
    pub(crate) fn charge(&mut self, bytes: usize) -> Result<(), DecodeError> {
        if bytes > self.budget_left {
            return Err(self.budget_exceeded(bytes));
        }
        self.budget_left -= bytes;
        Ok(())
    }

    #[cold]
    fn budget_exceeded(&self, bytes: usize) -> DecodeError {
        let limit = self.limits.memory_budget_for(self.input.len());
        let used = limit - self.budget_left;
        self.error(DecodeErrorKind::LimitExceeded {
            what: "memory budget",
            value: (used as u64).saturating_add(bytes as u64),
            limit: limit as u64,
        })
    }

    /// Bytes consumed so far (the offset of the next byte).
    #[inline]
    pub fn position(&self) -> usize {
        // `rest` is always a subslice of the input, so its start is at or after `base`.
        self.rest.as_ptr() as usize - self.base
    }

    /// Bytes left in the current window.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The limits in force.
    pub fn limits(&self) -> &DecodeLimits {
        &self.limits
    }

    /// An error of `kind` at the current position.
    #[cold]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.position())
    }

    /// The next `N` bytes of the window.
    #[inline]
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        match self.rest.split_first_chunk::<N>() {
            Some((bytes, rest)) => {
                self.rest = rest;
                Ok(*bytes)
            }
            None => Err(self.error(DecodeErrorKind::UnexpectedEof {
                needed: N,
                remaining: self.rest.len(),
            })),
        }
    }

    /// The next `N` bytes of the window as one array, if the window holds them: a run of
    /// consecutive fixed-width fields taken with one length check (see [`read_at`]). `None`
    /// leaves the window as it was, so the caller can read the run field by field to find
    /// and name the one that is short.
    ///
    /// [`read_at`]: super::read_at
    #[inline]
    pub fn fixed_run<const N: usize>(&mut self) -> Option<&'a [u8; N]> {
        let (run, rest) = self.rest.split_first_chunk::<N>()?;
        self.rest = rest;
        Some(run)
    }

    /// Like [`Decoder::fixed_run`], for a run that ends a struct in a flexible version: the
    /// run's `N` bytes and the tagged-field count after them (`M` = `N` + 1 bytes), taken
    /// with one length check when that count is zero (no tagged fields, the common case).
    /// `None` (a short window, or tagged fields to read) leaves the window as it was.
    #[inline]
    pub fn fixed_run_untagged<const N: usize, const M: usize>(&mut self) -> Option<&'a [u8; N]> {
        const { assert!(M == N + 1, "the run and one count byte") };
        let (bytes, rest) = self.rest.split_first_chunk::<M>()?;
        let (run, [0]) = bytes.split_first_chunk::<N>()? else {
            return None;
        };
        self.rest = rest;
        Some(run)
    }

    /// The error of a run that [`Decoder::fixed_run`] found short, as reading its fields one
    /// by one reports it: `fields` are the run's (name, width) in order, and the error names
    /// the first field the window cannot hold, at that field's offset.
    #[cold]
    pub fn short_run_error(&self, fields: &[(&'static str, usize)]) -> DecodeError {
        let (mut offset, mut remaining) = (self.position(), self.remaining());
        let mut short = ("", 0);
        for &(name, width) in fields {
            short = (name, width);
            if remaining < width {
                break;
            }
            offset += width;
            remaining -= width;
        }
        let (name, needed) = short;
        DecodeError::new(DecodeErrorKind::UnexpectedEof { needed, remaining }, offset).at(name)
    }

    /// An unsigned varint of at most `MAX` bytes.
    fn varint<const MAX: usize>(&mut self) -> Result<u64, DecodeError> {
        match unsigned_varint::<MAX>(self.rest) {
            Ok((value, len)) => {
                self.rest = &self.rest[len..];
                Ok(value)
            }
            Err(VarintError::Eof) => Err(self.error(DecodeErrorKind::UnexpectedEof {
                needed: 1,
                remaining: self.rest.len(),
            })),
            Err(VarintError::TooLong(kind)) => Err(self.error(kind)),
        }
    }

    /// Takes the next `len` bytes as a shared slice of the input.
    #[inline]
    pub fn read_slice(&mut self, len: usize) -> Result<Bytes, DecodeError> {
        if len > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                declared: len as u64,
                remaining: self.remaining(),
            }));
        }
        if len == 0 {
            // Empty arrays and strings are common; an empty `Bytes` touches no refcount.
            return Ok(Bytes::new());
        }
        let start = self.position();
        let slice = self.input.slice(start..start + len);
        self.rest = &self.rest[len..];
        Ok(slice)
    }

    /// Skips `len` bytes.
    #[inline]
    pub fn skip(&mut self, len: usize) -> Result<(), DecodeError> {
        if len > self.remaining() {
            return Err(self.error(DecodeErrorKind::UnexpectedEof {
                needed: len,
                remaining: self.remaining(),
            }));
        }
        self.rest = &self.rest[len..];
        Ok(())
    }

    /// `bool`: any non-zero byte is true, as in Kafka.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        Ok(self.take::<1>()?[0] != 0)
    }

    /// `int8`.
    #[inline]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        self.take().map(i8::from_be_bytes)
    }

    /// `int16`, big-endian.
    #[inline]
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        self.take().map(i16::from_be_bytes)
    }

    /// `uint16`, big-endian.
    #[inline]
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        self.take().map(u16::from_be_bytes)
    }

    /// `int32`, big-endian.
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.take().map(i32::from_be_bytes)
    }

    /// `uint32`, big-endian.
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        self.take().map(u32::from_be_bytes)
    }

    /// `int64`, big-endian.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.take().map(i64::from_be_bytes)
    }

    /// `float64`: IEEE 754 bits, big-endian.
    #[inline]
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        self.take().map(f64::from_be_bytes)
    }

    /// `uuid`: 16 bytes.
    #[inline]
    pub fn read_uuid(&mut self) -> Result<Uuid, DecodeError> {
        self.take().map(Uuid)
    }

    /// The next byte of the window, if any, without consuming it.
    #[inline]
    fn peek_u8(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// Consumes the byte [`Decoder::peek_u8`] returned.
    #[inline]
    fn bump(&mut self) {
        self.rest = &self.rest[1..];
    }

    /// Unsigned varint (compact lengths, tags, sizes), at most five bytes.
    #[inline]
    pub fn read_unsigned_varint(&mut self) -> Result<u32, DecodeError> {
        // Nearly every varint in a message (compact lengths, counts, tags) fits in one byte;
        // taking it here keeps the common case free of the general parser's large result.
        if let Some(byte @ 0..=0x7f) = self.peek_u8() {
            self.bump();
            return Ok(u32::from(byte));
        }
        self.read_long_unsigned_varint()
    }

    /// [`Decoder::read_unsigned_varint`] of two bytes or more, kept out of line so the
    /// one-byte case inlines into its callers.
    #[inline(never)]
    fn read_long_unsigned_varint(&mut self) -> Result<u32, DecodeError> {
        // Five bytes carry 35 bits; Kafka keeps the low 32.
        self.varint::<5>().map(|value| value as u32)
    }

    /// Zigzag varint (record fields), at most five bytes.
    pub fn read_varint(&mut self) -> Result<i32, DecodeError> {
        let raw = self.read_unsigned_varint()?;
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// Zigzag varlong (record timestamps), at most ten bytes.
    pub fn read_varlong(&mut self) -> Result<i64, DecodeError> {
        let raw = self.varint::<10>()?;
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// A length prefix as a signed number: classic lengths as written, compact ones minus
    /// one (so compact 0, the null marker, reads as -1).
    #[inline]
    fn read_length(&mut self, compact: bool, classic_i16: bool) -> Result<i64, DecodeError> {
        if compact {
            Ok(i64::from(self.read_unsigned_varint()?) - 1)
        } else if classic_i16 {
            Ok(i64::from(self.read_i16()?))
        } else {
            Ok(i64::from(self.read_i32()?))
        }
    }

    /// A length where null is allowed: any negative length is null, as Kafka reads it.
    #[inline]
    fn read_nullable_length(
        &mut self,
        compact: bool,
        classic_i16: bool,
    ) -> Result<Option<u64>, DecodeError> {
        Ok(u64::try_from(self.read_length(compact, classic_i16)?).ok())
    }

    /// A length where null is not allowed: -1 is a null in the wrong place, other negative
    /// values are malformed.
    #[inline]
    fn read_non_null_length(
        &mut self,
        compact: bool,
        classic_i16: bool,
    ) -> Result<u64, DecodeError> {
        let start = self.position();
        let len = self.read_length(compact, classic_i16)?;
        match u64::try_from(len) {
            Ok(len) => Ok(len),
            Err(_) => Err(negative_length(len, start)),
        }
    }

    #[inline]
    fn check_len(
        &self,
        start: usize,
        len: u64,
        limit: usize,
        what: &'static str,
    ) -> Result<usize, DecodeError> {
        if len > self.remaining() as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::LengthExceedsInput {
                    declared: len,
                    remaining: self.remaining(),
                },
                start,
            ));
        }
        if len > limit as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::LimitExceeded {
                    what,
                    value: len,
                    limit: limit as u64,
                },
                start,
            ));
        }
        Ok(len as usize)
    }

    /// A nullable string: classic int16 length or compact uvarint length + 1.
    pub fn read_nullable_string(
        &mut self,
        compact: bool,
    ) -> Result<Option<Utf8Bytes>, DecodeError> {
        let start = self.position();
        match self.read_nullable_length(compact, true)? {
            Some(len) => self.read_string_body(start, len).map(Some),
            None => Ok(None),
        }
    }

    /// A string that must not be null.
    pub fn read_string(&mut self, compact: bool) -> Result<Utf8Bytes, DecodeError> {
        let start = self.position();
        let len = self.read_non_null_length(compact, true)?;
        self.read_string_body(start, len)
    }

    fn read_string_body(&mut self, start: usize, len: u64) -> Result<Utf8Bytes, DecodeError> {
        let len = self.string_len(start, len)?;
        let bytes = self.read_slice(len)?;
        Utf8Bytes::from_utf8(bytes)
            .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidUtf8, start))
    }

    /// A string's length, checked against Kafka's limit, the configured one and the input.
    #[inline]
    fn string_len(&self, start: usize, len: u64) -> Result<usize, DecodeError> {
        if len > MAX_STRING_LEN as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::StringTooLong(len as usize),
                start,
            ));
        }
        self.check_len(start, len, self.limits.max_string_len, "string length")
    }

    /// The next `len` bytes of the window, which the caller has checked it holds.
    #[inline]
    fn take_checked(&mut self, len: usize) -> &'a [u8] {
        let (bytes, rest) = self.rest.split_at(len);
        self.rest = rest;
        bytes
    }

    /// A string that must not be null, borrowed from the input: checked exactly as
    /// [`Decoder::read_string`] checks it (length, limits, UTF-8), with no `Bytes` handle.
    #[inline]
    pub fn read_str(&mut self, compact: bool) -> Result<&'a str, DecodeError> {
        let start = self.position();
        let len = self.read_non_null_length(compact, true)?;
        self.read_str_body(start, len)
    }

    /// A nullable string borrowed from the input (see [`Decoder::read_str`]).
    #[inline]
    pub fn read_nullable_str(&mut self, compact: bool) -> Result<Option<&'a str>, DecodeError> {
        let start = self.position();
        match self.read_nullable_length(compact, true)? {
            Some(len) => self.read_str_body(start, len).map(Some),
            None => Ok(None),
        }
    }

    #[inline]
    fn read_str_body(&mut self, start: usize, len: u64) -> Result<&'a str, DecodeError> {
        let len = self.string_len(start, len)?;
        let bytes = self.take_checked(len);
        std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::new(DecodeErrorKind::InvalidUtf8, start))
    }

    /// Nullable `bytes` or `records`: classic int32 length or compact uvarint length + 1.
    pub fn read_nullable_bytes(&mut self, compact: bool) -> Result<Option<Bytes>, DecodeError> {
        let start = self.position();
        match self.read_nullable_length(compact, false)? {
            Some(len) => self.read_bytes_body(start, len).map(Some),
            None => Ok(None),
        }
    }

    /// `bytes` or `records` that must not be null.
    pub fn read_bytes(&mut self, compact: bool) -> Result<Bytes, DecodeError> {
        let start = self.position();
        let len = self.read_non_null_length(compact, false)?;
        self.read_bytes_body(start, len)
    }

    fn read_bytes_body(&mut self, start: usize, len: u64) -> Result<Bytes, DecodeError> {
        let len = self.check_len(start, len, self.limits.max_bytes_len, "bytes length")?;
        self.read_slice(len)
    }

    /// `bytes` that must not be null, borrowed from the input: checked exactly as
    /// [`Decoder::read_bytes`] checks them, with no `Bytes` handle.
    #[inline]
    pub fn read_byte_slice(&mut self, compact: bool) -> Result<&'a [u8], DecodeError> {
        let start = self.position();
        let len = self.read_non_null_length(compact, false)?;
        let len = self.check_len(start, len, self.limits.max_bytes_len, "bytes length")?;
        Ok(self.take_checked(len))
    }

    /// Nullable `bytes` borrowed from the input (see [`Decoder::read_byte_slice`]).
    #[inline]
    pub fn read_nullable_byte_slice(
        &mut self,
        compact: bool,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        let start = self.position();
        match self.read_nullable_length(compact, false)? {
            Some(len) => {
                let len = self.check_len(start, len, self.limits.max_bytes_len, "bytes length")?;
                Ok(Some(self.take_checked(len)))
            }
            None => Ok(None),
        }
    }

    /// An array count, checked against the remaining bytes and the limits; `None` for null.
    ///
    /// A count whose elements could not fit in the bytes that remain, at `min_element_size`
    /// bytes each (at least one), is refused before anything is reserved, so the whole array
    /// can then be reserved at once.
    pub fn read_array_len(
        &mut self,
        compact: bool,
        min_element_size: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let start = self.position();
        match self.read_nullable_length(compact, false)? {
            Some(count) => self.check_count(start, count, min_element_size).map(Some),
            None => Ok(None),
        }
    }

    /// A nullable array whose elements, each at least `min_element_size` bytes on the wire,
    /// `read_element` decodes.
    pub fn read_nullable_array<T>(
        &mut self,
        compact: bool,
        min_element_size: usize,
        read_element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        match self.read_array_len(compact, min_element_size)? {
            Some(count) => self.read_elements(count, read_element).map(Some),
            None => Ok(None),
        }
    }

    /// The count of an array that must not be null, checked as [`Decoder::read_array_len`]
    /// checks it.
    #[inline]
    pub fn read_array_count(
        &mut self,
        compact: bool,
        min_element_size: usize,
    ) -> Result<usize, DecodeError> {
        let start = self.position();
        // Most compact counts are one byte (0 to 126 elements; 0 is null and goes the long
        // way to its error).
        if compact {
            if let Some(byte @ 1..=0x7f) = self.peek_u8() {
                self.bump();
                return self.check_count(start, u64::from(byte - 1), min_element_size);
            }
        }
        let count = self.read_non_null_length(compact, false)?;
        self.check_count(start, count, min_element_size)
    }

    /// `count` if its elements fit the bytes that remain at `min_element_size` each (at
    /// least one) and the count is within `max_array_len`. Inline: it runs for every array.
    #[inline]
    fn check_count(
        &self,
        start: usize,
        count: u64,
        min_element_size: usize,
    ) -> Result<usize, DecodeError> {
        let needed = count.saturating_mul(min_element_size.max(1) as u64);
        if needed <= self.remaining() as u64 && count <= self.limits.max_array_len as u64 {
            Ok(count as usize)
        } else {
            Err(self.count_error(start, count, min_element_size, needed))
        }
    }

    #[cold]
    fn count_error(
        &self,
        start: usize,
        count: u64,
        min_element_size: usize,
        needed: u64,
    ) -> DecodeError {
        let remaining = self.remaining();
        if count > remaining as u64 {
            DecodeError::new(
                DecodeErrorKind::LengthExceedsInput {
                    declared: count,
                    remaining,
                },
                start,
            )
        } else if needed > remaining as u64 {
            DecodeError::new(
                DecodeErrorKind::ArrayExceedsInput {
                    count,
                    min_element_size,
                    remaining,
                },
                start,
            )
        } else {
            DecodeError::new(
                DecodeErrorKind::LimitExceeded {
                    what: "array length",
                    value: count,
                    limit: self.limits.max_array_len as u64,
                },
                start,
            )
        }
    }

    /// An array that must not be null, of elements at least `min_element_size` bytes each.
    pub fn read_array<T>(
        &mut self,
        compact: bool,
        min_element_size: usize,
        read_element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let count = self.read_array_count(compact, min_element_size)?;
        self.read_elements(count, read_element)
    }

    fn read_elements<T>(
        &mut self,
        count: usize,
        mut read_element: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let mut elements = self.reserve(count)?;
        for index in 0..count {
            match read_element(self) {
                Ok(element) => elements.push(element),
                Err(error) => return Err(error.at_index(index)),
            }
        }
        Ok(elements)
    }

    /// An array of fixed-width values that must not be null, `N` bytes each, made by
    /// `from_bytes` (`i32::from_be_bytes`, ...). The count is checked against the bytes that
    /// remain at `N` bytes per element, so the elements are read without a check each.
    pub fn read_fixed_array<T, const N: usize>(
        &mut self,
        compact: bool,
        from_bytes: impl Fn([u8; N]) -> T,
    ) -> Result<Vec<T>, DecodeError> {
        let count = self.read_array_count(compact, N)?;
        self.read_fixed_elements(count, from_bytes)
    }

    /// A nullable array of fixed-width values (see [`Decoder::read_fixed_array`]).
    pub fn read_nullable_fixed_array<T, const N: usize>(
        &mut self,
        compact: bool,
        from_bytes: impl Fn([u8; N]) -> T,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        match self.read_array_len(compact, N)? {
            Some(count) => self.read_fixed_elements(count, from_bytes).map(Some),
            None => Ok(None),
        }
    }

    #[inline]
    fn read_fixed_elements<T, const N: usize>(
        &mut self,
        count: usize,
        from_bytes: impl Fn([u8; N]) -> T,
    ) -> Result<Vec<T>, DecodeError> {
        let mut values = self.reserve(count)?;
        // The count was checked against the window at N bytes per element (N >= 1), so
        // `len` is within it; `get` keeps that a checked fact rather than an assumption.
        let len = count * N;
        let Some((bytes, rest)) = self.rest.split_at_checked(len) else {
            return Err(self.error(DecodeErrorKind::UnexpectedEof {
                needed: len,
                remaining: self.remaining(),
            }));
        };
        // `chunks_exact` yields `count` chunks of exactly N bytes: an exact-size iterator, so
        // `extend` writes into the reserved room without a capacity check per element, and
        // the copy into `[u8; N]` has equal lengths (its length check folds away).
        values.extend(bytes.chunks_exact(N).map(|chunk| {
            let mut value = [0; N];
            value.copy_from_slice(chunk);
            from_bytes(value)
        }));
        self.rest = rest;
        Ok(values)
    }

    /// An array of fixed-width values that must not be null (`[]int32`, `[]int64`, `[]uuid`,
    /// ...): copied into the value when it fits [`PrimitiveArray::INLINE_CAPACITY`], a slice
    /// of the input when longer. The count is checked against the bytes that remain at
    /// `T::WIDTH` bytes per element.
    #[inline]
    pub fn read_primitive_array<T: FixedWidth>(
        &mut self,
        compact: bool,
    ) -> Result<PrimitiveArray<T>, DecodeError> {
        // The common case in one step: a one-byte compact count of an array that fits inline
        // and is not at the end of the window (so the window holds a whole inline array after
        // the count), within `max_array_len`; a count byte of 0 (null) wraps to a count too
        // large for this path. (Written as a helper returning the window, or the array, this
        // ran fewer instructions but a fifth more time on Metadata.)
        if compact {
            if let Some((count, window)) = self
                .rest
                .split_first()
                .and_then(|(&byte, rest)| Some((byte.wrapping_sub(1), rest.first_chunk()?)))
            {
                let count = usize::from(count);
                let len = count * T::WIDTH;
                if len <= INLINE_CAPACITY && count <= self.limits.max_array_len {
                    let array = PrimitiveArray::from_window_unchecked(window, len);
                    self.rest = &self.rest[1 + len..];
                    return Ok(array);
                }
            }
        }
        let count = self.read_array_count(compact, T::WIDTH)?;
        self.read_primitive_elements(count)
    }

    /// A nullable array of fixed-width values (see [`Decoder::read_primitive_array`]).
    pub fn read_nullable_primitive_array<T: FixedWidth>(
        &mut self,
        compact: bool,
    ) -> Result<Option<PrimitiveArray<T>>, DecodeError> {
        match self.read_array_len(compact, T::WIDTH)? {
            Some(count) => self.read_primitive_elements(count).map(Some),
            None => Ok(None),
        }
    }

    #[inline]
    fn read_primitive_elements<T: FixedWidth>(
        &mut self,
        count: usize,
    ) -> Result<PrimitiveArray<T>, DecodeError> {
        // `count` fits the window at `T::WIDTH` bytes each (checked with the count), so the
        // product does not overflow and the window holds `len` bytes.
        let len = count * T::WIDTH;
        // The common case: a short array, not at the very end of the window. It is copied
        // into the value; nothing is allocated or shared.
        if len <= INLINE_CAPACITY {
            if let Some(window) = self.rest.first_chunk::<INLINE_CAPACITY>() {
                let array = PrimitiveArray::from_window_unchecked(window, len);
                self.rest = &self.rest[len..];
                return Ok(array);
            }
        }
        self.read_primitive_elements_cut(len)
    }

    /// [`Decoder::read_primitive_elements`] of `len` bytes when they are longer than an inline
    /// array or end the window.
    #[inline(never)]
    fn read_primitive_elements_cut<T: FixedWidth>(
        &mut self,
        len: usize,
    ) -> Result<PrimitiveArray<T>, DecodeError> {
        let Some((bytes, rest)) = self.rest.split_at_checked(len) else {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                declared: len as u64,
                remaining: self.remaining(),
            }));
        };
        // A longer array shares the input, through a box (one `Bytes`) that is charged like
        // any other reservation.
        if len > INLINE_CAPACITY {
            self.charge(std::mem::size_of::<Bytes>())?;
        }
        let (input, start) = (self.input, self.position());
        let array =
            PrimitiveArray::from_be_bytes_unchecked(bytes, || input.slice(start..start + len));
        self.rest = rest;
        Ok(array)
    }

    /// The wire bytes of an array of fixed-width values that must not be null, `width` bytes
    /// each, borrowed from the input: the count is checked as
    /// [`Decoder::read_primitive_array`] and [`Decoder::read_fixed_array`] check it, and nothing
    /// is reserved.
    #[inline]
    pub fn read_array_bytes(
        &mut self,
        compact: bool,
        width: usize,
    ) -> Result<&'a [u8], DecodeError> {
        let count = self.read_array_count(compact, width)?;
        // The count fits the window at `width` bytes each (checked with it).
        Ok(self.take_checked(count * width))
    }

    /// The wire bytes of a nullable array of fixed-width values (see
    /// [`Decoder::read_array_bytes`]).
    #[inline]
    pub fn read_nullable_array_bytes(
        &mut self,
        compact: bool,
        width: usize,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.read_array_len(compact, width)? {
            Some(count) => Ok(Some(self.take_checked(count * width))),
            None => Ok(None),
        }
    }

    /// An array of strings that must not be null; the strings use the array's encoding.
    pub fn read_string_array(&mut self, compact: bool) -> Result<Vec<Utf8Bytes>, DecodeError> {
        self.read_array(compact, string_min_size(compact), |d| {
            d.read_string(compact)
        })
    }

    /// A nullable array of strings.
    pub fn read_nullable_string_array(
        &mut self,
        compact: bool,
    ) -> Result<Option<Vec<Utf8Bytes>>, DecodeError> {
        self.read_nullable_array(compact, string_min_size(compact), |d| {
            d.read_string(compact)
        })
    }

    /// The one-byte marker in front of a nullable struct: negative means null.
    pub fn read_struct_marker(&mut self) -> Result<bool, DecodeError> {
        Ok(self.read_i8()? >= 0)
    }

    /// Enters a nested struct, enforcing [`DecodeLimits::max_nesting`].
    #[inline]
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= self.limits.max_nesting {
            return Err(self.nesting_exceeded());
        }
        self.depth += 1;
        Ok(())
    }

    #[cold]
    fn nesting_exceeded(&self) -> DecodeError {
        self.error(DecodeErrorKind::LimitExceeded {
            what: "struct nesting",
            value: self.depth as u64 + 1,
            limit: self.limits.max_nesting as u64,
        })
    }

    /// Leaves a nested struct.
    #[inline]
    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A nested struct, read by `read_fields` and counted against
    /// [`DecodeLimits::max_nesting`].
    ///
    /// ```
    /// # use kafka_codec::bytes::Bytes;
    /// use kafka_codec::wire::Decoder;
    /// let input = Bytes::from_static(&[0x00, 0x07]);
    /// let mut decoder = Decoder::new(&input);
    /// let port = decoder.read_struct(|d| d.read_u16()).unwrap();
    /// assert_eq!(port, 7);
    /// ```
    #[inline]
    pub fn read_struct<T>(
        &mut self,
        read_fields: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        self.enter()?;
        let value = read_fields(self);
        self.leave();
        value
    }

    /// A nullable struct: a marker byte (negative means null), then the struct.
    pub fn read_nullable_struct<T>(
        &mut self,
        read_fields: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        if self.read_struct_marker()? {
            self.read_struct(read_fields).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The tagged-field section at the end of a struct in a flexible version.
    ///
    /// `read_known` is called with the decoder narrowed to one field's bytes; it returns
    /// `Ok(true)` when it decoded the tag, `Ok(false)` for a tag it does not know, which is
    /// kept raw. Tags must be strictly ascending (Kafka writes them so); a known field must
    /// use exactly its declared size.
    #[inline]
    pub fn read_tagged_fields(
        &mut self,
        mut read_known: impl FnMut(&mut Self, u32) -> Result<bool, DecodeError>,
    ) -> Result<TaggedFields, DecodeError> {
        // Almost every tagged section is empty: a single zero count, read here inline.
        if self.peek_u8() == Some(0) {
            self.bump();
            return Ok(TaggedFields::new());
        }
        // The rest is one function for every caller, not one per `read_known`.
        self.read_tagged_section(&mut read_known, true)
    }

    /// The tagged-field section of a struct that knows no tags: every field is kept raw.
    #[inline]
    pub fn read_unknown_tagged_fields(&mut self) -> Result<TaggedFields, DecodeError> {
        self.read_tagged_fields(|_, _| Ok(false))
    }

    /// The tagged-field section, read and checked as [`Decoder::read_tagged_fields`] reads
    /// it, but with the unknown fields skipped rather than kept: nothing is reserved for them
    /// (nor charged to the memory budget).
    #[inline]
    pub fn skip_tagged_fields(
        &mut self,
        mut read_known: impl FnMut(&mut Self, u32) -> Result<bool, DecodeError>,
    ) -> Result<(), DecodeError> {
        if self.peek_u8() == Some(0) {
            self.bump();
            return Ok(());
        }
        self.read_tagged_section(&mut read_known, false).map(drop)
    }

    /// [`Decoder::skip_tagged_fields`] of a struct that knows no tags.
    #[inline]
    pub fn skip_unknown_tagged_fields(&mut self) -> Result<(), DecodeError> {
        self.skip_tagged_fields(|_, _| Ok(false))
    }

    /// The tagged section after its first byte was found not to be a zero count: known fields
    /// go to `read_known`, unknown ones are kept when `keep_unknown`, else skipped.
    fn read_tagged_section(
        &mut self,
        read_known: &mut dyn FnMut(&mut Self, u32) -> Result<bool, DecodeError>,
        keep_unknown: bool,
    ) -> Result<TaggedFields, DecodeError> {
        let count_start = self.position();
        let count = self.read_unsigned_varint()?;
        if count as usize > self.limits.max_array_len {
            return Err(DecodeError::new(
                DecodeErrorKind::LimitExceeded {
                    what: "tagged field count",
                    value: u64::from(count),
                    limit: self.limits.max_array_len as u64,
                },
                count_start,
            ));
        }
        // Each entry takes at least two bytes (tag and size).
        if u64::from(count) * 2 > self.remaining() as u64 {
            return Err(DecodeError::new(
                DecodeErrorKind::LengthExceedsInput {
                    declared: u64::from(count),
                    remaining: self.remaining(),
                },
                count_start,
            ));
        }
        let mut unknown = Vec::new();
        let mut previous: Option<u32> = None;
        for entry in 0..count {
            let tag_start = self.position();
            let tag = self.read_unsigned_varint()?;
            if let Some(previous) = previous {
                if tag == previous {
                    return Err(DecodeError::new(
                        DecodeErrorKind::DuplicateTag(tag),
                        tag_start,
                    ));
                }
                if tag < previous {
                    return Err(DecodeError::new(
                        DecodeErrorKind::TagOutOfOrder { tag, previous },
                        tag_start,
                    ));
                }
            }
            previous = Some(tag);
            // Errors about a field's size or value name its tag, whatever went wrong.
            let size_start = self.position();
            let size = u64::from(self.read_unsigned_varint().map_err(|e| e.at_tag(tag))?);
            let size = self
                .check_len(size_start, size, usize::MAX, "tagged field size")
                .map_err(|e| e.at_tag(tag))?;
            // `check_len` found `size` bytes in the window.
            let outer = self.rest;
            self.rest = &outer[..size];
            let value_start = self.position();
            let known = read_known(self, tag).map_err(|e| e.at_tag(tag));
            let used = self.position() - value_start;
            self.rest = &outer[used..];
            if known? {
                if used != size {
                    return Err(DecodeError::new(
                        DecodeErrorKind::TaggedFieldSize {
                            tag,
                            declared: size,
                            used,
                        },
                        value_start,
                    )
                    .at_tag(tag));
                }
            } else {
                // Unknown fields are bounded as known bytes are; the first one reserves room
                // for every entry left, so the section never grows.
                self.check_len(
                    size_start,
                    size as u64,
                    self.limits.max_bytes_len,
                    "tagged field size",
                )
                .map_err(|e| e.at_tag(tag))?;
                if !keep_unknown {
                    // `check_len` found `size` bytes in the window.
                    self.rest = &outer[size..];
                    continue;
                }
                if unknown.capacity() == 0 {
                    // The `Vec` itself goes behind `TaggedFields`' one pointer: charged too.
                    self.charge(std::mem::size_of::<Vec<RawTaggedField>>())?;
                    unknown = self.reserve((count - entry) as usize)?;
                }
                self.rest = outer;
                let data = self.read_slice(size)?;
                unknown.push(RawTaggedField { tag, data });
            }
        }
        Ok(unknown.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The one-byte fast paths must behave exactly like the general readers around them.
    #[test]
    fn one_byte_varint_fast_path_respects_the_window() {
        let empty = Bytes::new();
        let err = Decoder::new(&empty).read_unsigned_varint().unwrap_err();
        assert!(matches!(err.kind(), DecodeErrorKind::UnexpectedEof { .. }));

        let input = Bytes::from_static(&[0x7f, 0x80, 0x01, 0x00]);
        let mut d = Decoder::new(&input);
        assert_eq!(d.read_unsigned_varint().unwrap(), 0x7f);
        assert_eq!(d.read_unsigned_varint().unwrap(), 0x80);
        assert_eq!(d.read_unsigned_varint().unwrap(), 0);
        assert_eq!(d.remaining(), 0);
    }

    #[test]
    fn a_run_with_its_tagged_count_is_taken_only_when_the_count_is_zero() {
        // Two bytes of run, then a zero count: all three taken.
        let input = Bytes::from_static(&[0x12, 0x34, 0x00, 0x2a]);
        let mut d = Decoder::new(&input);
        assert_eq!(d.fixed_run_untagged::<2, 3>(), Some(&[0x12, 0x34]));
        assert_eq!(d.position(), 3);
        // A count of one field, or no count byte at all: nothing taken.
        for input in [&[0x12, 0x34, 0x01, 0x00, 0x00][..], &[0x12, 0x34]] {
            let input = Bytes::copy_from_slice(input);
            let mut d = Decoder::new(&input);
            assert_eq!(d.fixed_run_untagged::<2, 3>(), None);
            assert_eq!(d.position(), 0);
            assert_eq!(d.fixed_run::<2>(), Some(&[0x12, 0x34]));
        }
    }

    #[test]
    fn array_counts_are_checked_at_the_element_minimum_size() {
        // Compact count 3, then 8 bytes: three i32s need 12.
        let input = Bytes::from_static(&[0x04, 0, 0, 0, 1, 0, 0, 0, 2]);
        let err = Decoder::new(&input)
            .read_fixed_array(true, i32::from_be_bytes)
            .unwrap_err();
        assert_eq!(
            err.kind(),
            &DecodeErrorKind::ArrayExceedsInput {
                count: 3,
                min_element_size: 4,
                remaining: 8
            }
        );
        // Two fit exactly, and are reserved exactly.
        let input = Bytes::from_static(&[0x03, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        let mut d = Decoder::new(&input);
        let budget = d.budget_left();
        let values = d.read_fixed_array(true, i32::from_be_bytes).unwrap();
        assert_eq!(values, [1, -2]);
        assert_eq!(values.capacity(), 2);
        assert_eq!(budget - d.budget_left(), 8);
        assert_eq!(d.remaining(), 0);
    }

    /// Every way a primitive array can be read (one-byte fast path, inline at the window's
    /// end, shared) agrees with the general `Vec` reader on values, errors and position.
    #[test]
    fn primitive_arrays_read_as_the_general_reader_does() {
        fn check<T: FixedWidth + PartialEq + std::fmt::Debug, const N: usize>(
            input: &Bytes,
            compact: bool,
            limits: DecodeLimits,
            from_bytes: fn([u8; N]) -> T,
        ) {
            fn agree<A: PartialEq + std::fmt::Debug>(
                input: &Bytes,
                expected: Result<A, DecodeError>,
                got: Result<A, DecodeError>,
            ) {
                match (expected, got) {
                    (Ok(expected), Ok(got)) => assert_eq!(got, expected, "{input:?}"),
                    (Err(expected), Err(got)) => assert_eq!(got, expected, "{input:?}"),
                    (expected, got) => panic!("{input:?}: {expected:?} but {got:?}"),
                }
            }
            let mut general = Decoder::with_limits(input, limits);
            let mut ours = Decoder::with_limits(input, limits);
            let expected = general.read_fixed_array(compact, from_bytes);
            let got = ours.read_primitive_array::<T>(compact);
            agree(input, expected, got.map(|got| got.to_vec()));
            assert_eq!(ours.position(), general.position(), "{input:?}");
            let mut general = Decoder::with_limits(input, limits);
            let mut ours = Decoder::with_limits(input, limits);
            let expected = general.read_nullable_fixed_array(compact, from_bytes);
            let got = ours.read_nullable_primitive_array::<T>(compact);
            agree(input, expected, got.map(|got| got.map(|got| got.to_vec())));
            assert_eq!(ours.position(), general.position(), "{input:?}");
            // The borrowed wire bytes of the same arrays.
            let values =
                |bytes: &[u8]| -> Vec<T> { bytes.chunks_exact(N).map(T::from_be_slice).collect() };
            let mut general = Decoder::with_limits(input, limits);
            let mut ours = Decoder::with_limits(input, limits);
            let expected = general.read_fixed_array(compact, from_bytes);
            let got = ours.read_array_bytes(compact, N).map(values);
            agree(input, expected, got);
            assert_eq!(ours.position(), general.position(), "{input:?}");
            let mut general = Decoder::with_limits(input, limits);
            let mut ours = Decoder::with_limits(input, limits);
            let expected = general.read_nullable_fixed_array(compact, from_bytes);
            let got = ours
                .read_nullable_array_bytes(compact, N)
                .map(|bytes| bytes.map(values));
            agree(input, expected, got);
            assert_eq!(ours.position(), general.position(), "{input:?}");
        }
        let tight = DecodeLimits {
            max_array_len: 3,
            ..DecodeLimits::default()
        };
        for compact in [true, false] {
            for count in -2i32..=12 {
                for trailing in 0..=60u8 {
                    let mut input = if compact {
                        vec![(count + 1) as u8]
                    } else {
                        count.to_be_bytes().to_vec()
                    };
                    input.extend((0..trailing).map(|i| i.wrapping_mul(37)));
                    let input = Bytes::from(input);
                    for limits in [DecodeLimits::default(), tight] {
                        check(&input, compact, limits, i32::from_be_bytes);
                        check(&input, compact, limits, i64::from_be_bytes);
                        check(&input, compact, limits, i16::from_be_bytes);
                        check(&input, compact, limits, Uuid::from_bytes);
                    }
                }
            }
        }
    }

    /// The borrowing readers (strings, bytes, a tagged section whose unknown fields are
    /// skipped) give what the owning readers give, the same errors at the same offsets, and
    /// leave the decoder at the same place, over inputs of every short shape.
    #[test]
    fn borrowing_readers_agree_with_the_owning_ones() {
        fn agree<'i, A: PartialEq + std::fmt::Debug, B: PartialEq + std::fmt::Debug>(
            input: &'i Bytes,
            limits: DecodeLimits,
            owning: impl Fn(&mut Decoder<'i>) -> Result<A, DecodeError>,
            borrowing: impl Fn(&mut Decoder<'i>) -> Result<B, DecodeError>,
            same: impl Fn(&A, &B) -> bool,
        ) {
            let mut general = Decoder::with_limits(input, limits);
            let mut ours = Decoder::with_limits(input, limits);
            match (owning(&mut general), borrowing(&mut ours)) {
                (Ok(a), Ok(b)) => assert!(same(&a, &b), "{input:?}: {a:?} but {b:?}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{input:?}"),
                (a, b) => panic!("{input:?}: {a:?} but {b:?}"),
            }
            assert_eq!(ours.position(), general.position(), "{input:?}");
        }
        let tight = DecodeLimits {
            max_string_len: 3,
            max_bytes_len: 3,
            ..DecodeLimits::default()
        };
        // Tag 1 is known (a one-byte varint); the others are not.
        let read_known = |d: &mut Decoder<'_>, tag: u32| -> Result<bool, DecodeError> {
            if tag == 1 {
                d.read_unsigned_varint()?;
                Ok(true)
            } else {
                Ok(false)
            }
        };
        // Every prefix byte pattern that matters (lengths, counts, tags, sizes, nulls, a
        // negative classic length), then text that is ASCII, UTF-8, or not UTF-8.
        let heads: Vec<Vec<u8>> = (0u8..=8)
            .flat_map(|a| (0u8..=8).map(move |b| vec![a, b]))
            .chain([
                vec![0xff, 0xff],
                vec![0xff, 0xfe],
                vec![0x80, 0x01],
                vec![0, 0, 0, 2],
            ])
            .collect();
        let tails: [&[u8]; 4] = [
            b"",
            b"abcdefgh",
            "\u{e9}t\u{e9}s".as_bytes(),
            &[0xc3, 0x28, 1, 2, 3, 4],
        ];
        for head in &heads {
            for tail in tails {
                let mut input = head.clone();
                input.extend_from_slice(tail);
                let input = Bytes::from(input);
                for limits in [DecodeLimits::default(), tight] {
                    for compact in [true, false] {
                        let text = |a: &Utf8Bytes, b: &&str| a.as_str() == *b;
                        agree(
                            &input,
                            limits,
                            |d| d.read_string(compact),
                            |d| d.read_str(compact),
                            text,
                        );
                        agree(
                            &input,
                            limits,
                            |d| d.read_nullable_string(compact),
                            |d| d.read_nullable_str(compact),
                            |a, b| a.as_ref().map(Utf8Bytes::as_str) == *b,
                        );
                        let bytes = |a: &Bytes, b: &&[u8]| a[..] == **b;
                        agree(
                            &input,
                            limits,
                            |d| d.read_bytes(compact),
                            |d| d.read_byte_slice(compact),
                            bytes,
                        );
                        agree(
                            &input,
                            limits,
                            |d| d.read_nullable_bytes(compact),
                            |d| d.read_nullable_byte_slice(compact),
                            |a, b| a.as_deref() == *b,
                        );
                    }
                    agree(
                        &input,
                        limits,
                        |d| d.read_tagged_fields(read_known),
                        |d| d.skip_tagged_fields(read_known),
                        |_, _| true,
                    );
                    agree(
                        &input,
                        limits,
                        |d| d.read_unknown_tagged_fields(),
                        |d| d.skip_unknown_tagged_fields(),
                        |_, _| true,
                    );
                }
            }
        }
    }

    #[test]
    fn a_primitive_array_shares_the_input_only_when_long_and_pays_for_it() {
        // Two i32s inline, then eight shared: the budget pays only for the second's box.
        let mut input = vec![0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0x09];
        input.extend((1..=8u8).flat_map(|i| [0, 0, 0, i]));
        let input = Bytes::from(input);
        let mut d = Decoder::new(&input);
        let budget = d.budget_left();
        assert_eq!(d.read_primitive_array::<i32>(true).unwrap(), [1, 2]);
        assert_eq!(d.budget_left(), budget);
        let long = d.read_primitive_array::<i32>(true).unwrap();
        assert_eq!(long, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(budget - d.budget_left(), std::mem::size_of::<Bytes>());
        assert_eq!(long.to_be_bytes().as_ptr(), input[10..].as_ptr());
        // Without room in the budget for the box, the long one is refused.
        let limits = DecodeLimits {
            memory_budget: Some(std::mem::size_of::<Bytes>() - 1),
            ..DecodeLimits::default()
        };
        let mut d = Decoder::with_limits(&input, limits);
        d.read_primitive_array::<i32>(true).unwrap();
        let err = d.read_primitive_array::<i32>(true).unwrap_err();
        assert!(matches!(
            err.kind(),
            DecodeErrorKind::LimitExceeded {
                what: "memory budget",
                ..
            }
        ));
    }

    #[test]
    fn a_primitive_array_stays_inside_a_tagged_field() {
        // Tag 1 of 5 bytes: compact count 1 and one i32; the bytes after the field must not
        // be read as part of it (the fast path needs a window of a whole inline array).
        let mut input = vec![0x01, 0x01, 0x05, 0x02, 0, 0, 0, 7];
        input.extend([0xee; 40]);
        let input = Bytes::from(input);
        let mut d = Decoder::new(&input);
        let mut seen = None;
        d.read_tagged_fields(|d, _| {
            seen = Some(d.read_primitive_array::<i32>(true)?);
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen.unwrap(), [7]);
        assert_eq!(d.remaining(), 40);
        // A count that reaches past the field is refused, though the input goes on.
        let mut input = vec![0x01, 0x01, 0x05, 0x03, 0, 0, 0, 7];
        input.extend([0xee; 40]);
        let input = Bytes::from(input);
        let err = Decoder::new(&input)
            .read_tagged_fields(|d, _| d.read_primitive_array::<i32>(true).map(|_| true))
            .unwrap_err();
        assert!(matches!(
            err.kind(),
            DecodeErrorKind::ArrayExceedsInput { .. }
        ));
    }

    #[test]
    fn tagged_sections_empty_and_not() {
        // An empty section is one zero byte; what follows is left alone.
        let input = Bytes::from_static(&[0x00, 0x2a]);
        let mut d = Decoder::new(&input);
        let unknown = d.read_tagged_fields(|_, _| panic!("no tags")).unwrap();
        assert!(unknown.is_empty());
        assert_eq!(d.position(), 1);

        // One unknown tag 5 of two bytes, then a known tag 7 of one byte, read inside its
        // own window: the one-byte varint inside must not read past the field's end.
        let input = Bytes::from_static(&[0x02, 0x05, 0x02, 0xaa, 0xbb, 0x07, 0x01, 0x09, 0x63]);
        let mut d = Decoder::new(&input);
        let mut seen = None;
        let unknown = d
            .read_tagged_fields(|d, tag| {
                if tag == 7 {
                    seen = Some(d.read_unsigned_varint()?);
                    assert!(d.read_unsigned_varint().is_err(), "read past the field");
                    Ok(true)
                } else {
                    Ok(false)
                }
            })
            .unwrap();
        assert_eq!(seen, Some(9));
        assert_eq!(unknown.len(), 1);
        assert_eq!(
            (unknown[0].tag, &unknown[0].data[..]),
            (5, &[0xaa, 0xbb][..])
        );
        assert_eq!(d.remaining(), 1);

        // A count with no room for its entries is still refused.
        let input = Bytes::from_static(&[0x03, 0x00]);
        let err = Decoder::new(&input)
            .read_tagged_fields(|_, _| Ok(false))
            .unwrap_err();
        assert!(matches!(
            err.kind(),
            DecodeErrorKind::LengthExceedsInput { .. }
        ));
    }
}
