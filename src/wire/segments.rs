//! [`Segments`]: encoded bytes as a chain of [`Bytes`], where large `bytes`/`records` values
//! are the caller's own buffers rather than copies.
//!
//! A Fetch response is mostly record batches the server already holds; copying them into one
//! contiguous buffer costs as much as the rest of the encode many times over. Writing into
//! [`Segments`] instead, the small fields go into owned chunks and every `bytes`/`records`
//! value of at least [`Segments::share_threshold`] bytes becomes a segment of its own, a
//! reference-counted clone of the field's `Bytes`. The result is a [`Buf`] whose
//! [`chunks_vectored`](Buf::chunks_vectored) hands all segments to one vectored write.
//!
//! The generated encoders reach this through [`BufMut::put`]: they write `bytes`/`records`
//! values with [`put_shared_bytes`](super::put_shared_bytes), which passes the value as a
//! [`Buf`] whose [`copy_to_bytes`](Buf::copy_to_bytes) is a reference-count increment.
//! `Segments` overrides `put` to keep such a value as a segment; every other [`BufMut`]
//! copies it as `put_slice` would, so the plain encode pays nothing for this.

use bytes::buf::UninitSlice;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::collections::VecDeque;
use std::fmt;
use std::io::IoSlice;

/// Below this many bytes, a `bytes`/`records` value is copied rather than shared.
///
/// Sharing costs a reference-count increment and decrement, the end of an owned chunk, a
/// segment in the chain and an I/O vector entry in the write. Measured (the
/// `share_threshold` group of `benches/benches/codec.rs`: a Fetch response of 10 partitions,
/// every value copied or every value shared), copying is cheaper up to 1 KiB per value
/// (1.04 against 1.18 µs) and sharing from 2 KiB (1.19 against 1.78 µs; 4 KiB: 1.03
/// against 2.73 µs).
pub const DEFAULT_SHARE_THRESHOLD: usize = 2048;

/// The largest first chunk of an encode whose length is known (`for_encoded_len`).
const FIRST_CHUNK_MAX: usize = 16 * 1024;
/// The smallest owned chunk allocated when the current one is full.
const MIN_CHUNK: usize = 256;
/// Owned chunks double in size up to this, so a large message without shared values
/// is written in a few chunks and never copied to grow.
const MAX_CHUNK: usize = 64 * 1024;

/// Encoded bytes as a queue of [`Bytes`] segments: written at the back as a [`BufMut`],
/// read from the front as a [`Buf`].
///
/// Written to, it copies small values into owned chunks and keeps every value that a
/// generated encoder writes as a `bytes`/`records` field, and that is at least
/// [`Segments::share_threshold`] bytes long, as a segment of its own without copying it.
/// Read from, it yields the segments in order; [`Buf::chunks_vectored`] fills one I/O vector
/// entry per segment, so `tokio::io::AsyncWriteExt::write_all_buf` or
/// [`std::io::Write::write_vectored`] send the whole chain in one system call.
///
/// ```
/// use kafka_codec::bytes::{Buf, Bytes};
/// use kafka_codec::messages::fetch_response::{FetchableTopicResponse, PartitionData};
/// use kafka_codec::messages::FetchResponse;
/// use kafka_codec::wire::Segments;
/// use kafka_codec::Message;
///
/// let records = Bytes::from(vec![7u8; 64 * 1024]);
/// let response = FetchResponse::default().with_responses(vec![
///     FetchableTopicResponse::default()
///         .with_partitions(vec![PartitionData::default().with_records(Some(records.clone()))]),
/// ]);
/// let segments = response.encode_segments(17).unwrap();
/// // The records are the caller's buffer, not a copy of it.
/// assert!(segments.chunks().any(|chunk| chunk.as_ptr() == records.as_ptr()));
/// assert_eq!(segments.remaining(), response.encoded_len(17).unwrap());
/// assert_eq!(segments.into_bytes(), response.encode_to_bytes(17).unwrap());
/// ```
#[derive(Clone)]
pub struct Segments {
    /// Finished segments, oldest first; none is empty.
    sealed: VecDeque<Bytes>,
    /// The bytes in `sealed`.
    sealed_len: usize,
    /// The owned chunk being written; read after `sealed`.
    tail: BytesMut,
    share_threshold: usize,
    /// The capacity of the next owned chunk.
    next_chunk: usize,
}

impl Default for Segments {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Segments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segments")
            .field("len", &self.len())
            .field("segments", &self.segment_count())
            .field("share_threshold", &self.share_threshold)
            .finish()
    }
}

impl Segments {
    /// Empty; the first write allocates a small chunk.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Empty, with room for `capacity` owned bytes before another chunk is needed.
    pub fn with_capacity(capacity: usize) -> Self {
        Segments {
            sealed: VecDeque::new(),
            sealed_len: 0,
            tail: BytesMut::with_capacity(capacity),
            share_threshold: DEFAULT_SHARE_THRESHOLD,
            next_chunk: capacity.clamp(MIN_CHUNK, MAX_CHUNK),
        }
    }

    /// Empty, sized for an encode of `len` bytes: room for all of it up to 16 KiB (most
    /// messages then take one chunk, and into_bytes is free), since what the shared values
    /// leave is not known before writing; a larger message continues in chunks that double.
    pub(crate) fn for_encoded_len(len: usize) -> Self {
        Self::with_capacity(len.min(FIRST_CHUNK_MAX))
    }

    /// Shares values of at least `threshold` bytes instead of copying them (`usize::MAX`:
    /// never). Applies to what is written from now on.
    pub fn with_share_threshold(mut self, threshold: usize) -> Self {
        self.share_threshold = threshold;
        self
    }

    /// The length from which `bytes`/`records` values are shared rather than copied.
    pub fn share_threshold(&self) -> usize {
        self.share_threshold
    }

    /// Bytes not yet read.
    pub fn len(&self) -> usize {
        self.sealed_len + self.tail.len()
    }

    /// True when no bytes remain.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of non-empty segments, i.e. of I/O vector entries a vectored write of the
    /// whole chain takes.
    pub fn segment_count(&self) -> usize {
        self.sealed.len() + usize::from(!self.tail.is_empty())
    }

    /// The segments in order, none empty.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.sealed
            .iter()
            .map(|segment| &segment[..])
            .chain(Some(&self.tail[..]).filter(|tail| !tail.is_empty()))
    }

    /// Appends `bytes` as a segment of its own, whatever its length: no copy.
    pub fn push_shared(&mut self, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        self.seal();
        self.sealed_len += bytes.len();
        self.sealed.push_back(bytes);
    }

    /// Moves the segments of `other` to the end of these, without copying them.
    pub fn append(&mut self, mut other: Segments) {
        self.seal();
        other.seal();
        self.sealed_len += other.sealed_len;
        self.sealed.append(&mut other.sealed);
    }

    /// All the bytes as one `Bytes`: the segment itself when there is only one, else a copy
    /// of the segments into one buffer.
    pub fn into_bytes(mut self) -> Bytes {
        if self.sealed.is_empty() {
            return self.tail.freeze();
        }
        if self.tail.is_empty() && self.sealed.len() == 1 {
            return self.sealed.pop_front().expect("one segment");
        }
        let mut out = BytesMut::with_capacity(self.len());
        for chunk in self.chunks() {
            out.extend_from_slice(chunk);
        }
        out.freeze()
    }

    /// Ends the owned chunk being written, so that what follows comes after it. The rest of
    /// its allocation stays the tail.
    fn seal(&mut self) {
        if !self.tail.is_empty() {
            let done = self.tail.split().freeze();
            self.sealed_len += done.len();
            self.sealed.push_back(done);
        }
    }

    /// Makes room for `additional` more owned bytes: a new chunk, so that nothing written
    /// is copied to grow.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        let capacity = self.next_chunk.max(additional);
        self.next_chunk = (self.next_chunk * 2).min(MAX_CHUNK);
        let full = std::mem::replace(&mut self.tail, BytesMut::with_capacity(capacity));
        if !full.is_empty() {
            self.sealed_len += full.len();
            self.sealed.push_back(full.freeze());
        }
    }

    #[inline]
    fn reserve(&mut self, additional: usize) {
        if self.tail.capacity() - self.tail.len() < additional {
            self.grow(additional);
        }
    }
}

impl Buf for Segments {
    #[inline]
    fn remaining(&self) -> usize {
        self.len()
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        match self.sealed.front() {
            Some(front) => front,
            None => &self.tail,
        }
    }

    fn advance(&mut self, mut cnt: usize) {
        assert!(
            cnt <= self.len(),
            "Segments::advance: {cnt} bytes past the {} remaining",
            self.len()
        );
        while cnt > 0 {
            let Some(front) = self.sealed.front_mut() else {
                self.tail.advance(cnt);
                return;
            };
            if cnt < front.len() {
                front.advance(cnt);
                self.sealed_len -= cnt;
                return;
            }
            cnt -= front.len();
            self.sealed_len -= front.len();
            self.sealed.pop_front();
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [IoSlice<'a>]) -> usize {
        let mut filled = 0;
        for (slot, chunk) in dst.iter_mut().zip(self.chunks()) {
            *slot = IoSlice::new(chunk);
            filled += 1;
        }
        filled
    }

    /// Without a copy when the bytes lie within the first segment.
    fn copy_to_bytes(&mut self, len: usize) -> Bytes {
        assert!(
            len <= self.len(),
            "Segments::copy_to_bytes: {len} bytes of the {} remaining",
            self.len()
        );
        match self.sealed.front_mut() {
            Some(front) if len <= front.len() => {
                let bytes = front.split_to(len);
                self.sealed_len -= len;
                if front.is_empty() {
                    self.sealed.pop_front();
                }
                bytes
            }
            None => self.tail.split_to(len).freeze(),
            Some(_) => {
                let mut out = BytesMut::with_capacity(len);
                while out.len() < len {
                    let chunk = self.chunk();
                    let n = chunk.len().min(len - out.len());
                    out.extend_from_slice(&chunk[..n]);
                    self.advance(n);
                }
                out.freeze()
            }
        }
    }
}

// SAFETY: every method forwards to the tail `BytesMut`, itself a sound `BufMut`, with one
// exception that keeps the contract: `chunk_mut` may first replace the tail by a new chunk
// (`grow`), and then returns the new tail's `chunk_mut`. So the slice `chunk_mut` returns
// is always spare capacity of the current tail, and `advance_mut(cnt)` (whose caller
// promises the first `cnt` bytes of that slice are initialised) forwards to that same tail,
// which nothing can have replaced in between: both take `&mut self`, and only `chunk_mut`,
// the `put*` methods and `grow` replace the tail. `remaining_mut` is the tail's, and
// `chunk_mut` is never empty (the tail has spare capacity after `reserve`), as the trait
// requires while `remaining_mut` is not 0. Exercised by `tests::written_through_chunk_mut`.
unsafe impl BufMut for Segments {
    #[inline]
    fn remaining_mut(&self) -> usize {
        self.tail.remaining_mut()
    }

    #[inline]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        // SAFETY: the caller's promise about the slice `chunk_mut` returned, which is the
        // tail's own (see above).
        unsafe { self.tail.advance_mut(cnt) }
    }

    #[inline]
    fn chunk_mut(&mut self) -> &mut UninitSlice {
        if self.tail.len() == self.tail.capacity() {
            self.grow(MIN_CHUNK);
        }
        self.tail.chunk_mut()
    }

    /// A `Bytes` (or another `Buf` whose `copy_to_bytes` does not copy) of at least
    /// [`Segments::share_threshold`] bytes becomes a segment of its own; a shorter one is
    /// copied.
    #[inline]
    fn put<T: Buf>(&mut self, mut src: T)
    where
        Self: Sized,
    {
        let len = src.remaining();
        if len >= self.share_threshold && len > 0 {
            let shared = src.copy_to_bytes(len);
            self.push_shared(shared);
            return;
        }
        self.reserve(len);
        while src.has_remaining() {
            let chunk = src.chunk();
            let n = chunk.len();
            self.tail.extend_from_slice(chunk);
            src.advance(n);
        }
    }

    #[inline]
    fn put_slice(&mut self, src: &[u8]) {
        self.reserve(src.len());
        self.tail.extend_from_slice(src);
    }

    #[inline]
    fn put_u8(&mut self, n: u8) {
        self.reserve(1);
        self.tail.put_u8(n);
    }

    #[inline]
    fn put_i8(&mut self, n: i8) {
        self.put_u8(n as u8);
    }

    #[inline]
    fn put_bytes(&mut self, val: u8, cnt: usize) {
        self.reserve(cnt);
        self.tail.put_bytes(val, cnt);
    }
}

/// A borrowed `Bytes` as a [`Buf`]: read, it is the value's bytes (what a plain `BufMut`
/// copies); [`Buf::copy_to_bytes`] is a slice of the value, so [`Segments`] shares it.
pub(crate) struct SharedBytes<'a> {
    bytes: &'a Bytes,
    read: usize,
}

impl<'a> SharedBytes<'a> {
    #[inline]
    pub(crate) fn new(bytes: &'a Bytes) -> Self {
        SharedBytes { bytes, read: 0 }
    }
}

impl Buf for SharedBytes<'_> {
    #[inline]
    fn remaining(&self) -> usize {
        self.bytes.len() - self.read
    }

    #[inline]
    fn chunk(&self) -> &[u8] {
        &self.bytes[self.read..]
    }

    #[inline]
    fn advance(&mut self, cnt: usize) {
        assert!(cnt <= self.remaining(), "SharedBytes::advance past the end");
        self.read += cnt;
    }

    fn copy_to_bytes(&mut self, len: usize) -> Bytes {
        assert!(
            len <= self.remaining(),
            "SharedBytes::copy_to_bytes past the end"
        );
        let bytes = self.bytes.slice(self.read..self.read + len);
        self.read += len;
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::put_shared_bytes;

    fn concat(segments: &Segments) -> Vec<u8> {
        segments.chunks().flatten().copied().collect()
    }

    #[test]
    fn large_values_are_shared_small_ones_copied() {
        let large = Bytes::from(vec![1u8; 5000]);
        let small = Bytes::from(vec![2u8; 100]);
        let mut segments = Segments::new();
        segments.put_i32(7);
        put_shared_bytes(&mut segments, &large, false).unwrap();
        put_shared_bytes(&mut segments, &small, true).unwrap();
        segments.put_u8(9);

        let mut plain = Vec::new();
        plain.put_i32(7);
        put_shared_bytes(&mut plain, &large, false).unwrap();
        put_shared_bytes(&mut plain, &small, true).unwrap();
        plain.put_u8(9);

        assert_eq!(concat(&segments), plain);
        assert_eq!(segments.len(), plain.len());
        let chunks: Vec<&[u8]> = segments.chunks().collect();
        assert_eq!(chunks.len(), 3, "owned, shared, owned");
        assert_eq!(chunks[1].as_ptr(), large.as_ptr());
        assert_eq!(chunks[1].len(), large.len());
        assert_eq!(segments.segment_count(), 3);
        assert_eq!(segments.into_bytes(), plain);
    }

    #[test]
    fn threshold_decides() {
        let value = Bytes::from(vec![3u8; 64]);
        let mut never = Segments::new().with_share_threshold(usize::MAX);
        never.put(Bytes::clone(&value));
        assert_eq!(never.segment_count(), 1);
        assert_ne!(never.chunk().as_ptr(), value.as_ptr());

        let mut always = Segments::new().with_share_threshold(0);
        always.put_u8(1);
        always.put(Bytes::clone(&value));
        always.put(Bytes::new());
        assert_eq!(always.segment_count(), 2, "an empty value adds no segment");
        assert_eq!(always.chunks().nth(1).unwrap().as_ptr(), value.as_ptr());
    }

    #[test]
    fn owned_chunks_grow_without_copying() {
        let mut segments = Segments::new();
        let mut expected = Vec::new();
        for i in 0..100_000u32 {
            segments.put_u32(i);
            expected.put_u32(i);
        }
        segments.put_slice(&[5; 100_000]);
        expected.put_slice(&[5; 100_000]);
        assert_eq!(concat(&segments), expected);
        // 500 KB in chunks that double from 256 bytes up to 64 KiB.
        assert!(segments.segment_count() < 20, "{segments:?}");
    }

    #[test]
    fn read_as_a_buf() {
        let shared = Bytes::from(vec![4u8; 10_000]);
        let mut segments = Segments::new();
        segments.put_slice(b"head");
        segments.put(shared.clone());
        segments.put_slice(b"tail");
        let expected = concat(&segments);

        let mut slices = [IoSlice::new(&[]); 8];
        assert_eq!(segments.chunks_vectored(&mut slices), 3);
        let mut one = [IoSlice::new(&[]); 1];
        assert_eq!(segments.chunks_vectored(&mut one), 1);
        assert_eq!(&one[0][..], b"head");

        // Across segments: a copy; within one: a slice of it.
        let mut reader = segments.clone();
        assert_eq!(reader.copy_to_bytes(6), expected[..6]);
        let inside = reader.copy_to_bytes(100);
        assert_eq!(inside.as_ptr(), shared[2..].as_ptr());
        reader.advance(reader.remaining() - 2);
        assert_eq!(reader.chunk(), b"il");
        assert_eq!(reader.copy_to_bytes(2), &b"il"[..]);
        assert!(reader.is_empty());

        // Written after reading started: still in order.
        let mut queue = segments;
        queue.advance(2);
        queue.put_slice(b"more");
        let mut read = Vec::new();
        while queue.has_remaining() {
            let chunk = queue.chunk().to_vec();
            queue.advance(chunk.len());
            read.extend(chunk);
        }
        assert_eq!(read, [&expected[2..], b"more"].concat());
    }

    #[test]
    fn append_and_push_shared() {
        let mut a = Segments::new();
        a.put_slice(b"ab");
        let mut b = Segments::new();
        b.put_slice(b"cd");
        let shared = Bytes::from_static(b"ef");
        b.push_shared(shared.clone());
        a.append(b);
        assert_eq!(concat(&a), b"abcdef");
        assert_eq!(a.chunks().last().unwrap().as_ptr(), shared.as_ptr());
        a.put_slice(b"g");
        assert_eq!(a.into_bytes(), &b"abcdefg"[..]);
    }

    #[test]
    fn written_through_chunk_mut() {
        // The unsafe `advance_mut`, driven the way `BufMut`'s provided methods and foreign
        // writers drive it: fill `chunk_mut`, then advance. Past a full chunk too.
        let mut segments = Segments::with_capacity(3);
        let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let mut rest = &data[..];
        while !rest.is_empty() {
            let chunk = segments.chunk_mut();
            assert!(chunk.len() > 0);
            let n = chunk.len().min(rest.len()).min(1000);
            chunk[..n].copy_from_slice(&rest[..n]);
            // SAFETY: the first `n` bytes of the chunk were just written.
            unsafe { segments.advance_mut(n) };
            rest = &rest[n..];
        }
        assert_eq!(concat(&segments), data);
        // The provided methods go through `chunk_mut` too.
        segments.put_u64_le(u64::MAX);
        assert_eq!(segments.len(), 5008);
    }

    #[test]
    fn into_bytes_of_one_segment_does_not_copy() {
        let shared = Bytes::from(vec![1u8; 8192]);
        let mut segments = Segments::new();
        segments.put(shared.clone());
        assert_eq!(segments.into_bytes().as_ptr(), shared.as_ptr());
    }
}
