//! [`PrimitiveArray`]: an array of fixed-width numbers held as its big-endian wire bytes.

use super::Uuid;
use bytes::{BufMut, Bytes, BytesMut};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::iter::FusedIterator;
use std::marker::PhantomData;

/// A value of fixed width on the wire: the element type of `[]int32` and its kin.
pub trait FixedWidth: Copy {
    /// Bytes one value takes.
    const WIDTH: usize;
    /// Writes the value.
    fn put(self, buf: &mut impl BufMut);
    /// The value of its `WIDTH` big-endian bytes (`bytes.len() == WIDTH`).
    fn from_be_slice(bytes: &[u8]) -> Self;
}

macro_rules! fixed_width {
    ($($ty:ty, $width:literal, $put:ident;)*) => {$(
        impl FixedWidth for $ty {
            const WIDTH: usize = $width;
            #[inline]
            fn put(self, buf: &mut impl BufMut) {
                buf.$put(self);
            }
            #[inline]
            fn from_be_slice(bytes: &[u8]) -> Self {
                let mut value = [0; $width];
                value.copy_from_slice(bytes);
                <$ty>::from_be_bytes(value)
            }
        }
    )*};
}

fixed_width! {
    i8, 1, put_i8;
    i16, 2, put_i16;
    u16, 2, put_u16;
    i32, 4, put_i32;
    u32, 4, put_u32;
    i64, 8, put_i64;
    f64, 8, put_f64;
}

impl FixedWidth for bool {
    const WIDTH: usize = 1;
    #[inline]
    fn put(self, buf: &mut impl BufMut) {
        buf.put_u8(u8::from(self));
    }
    #[inline]
    fn from_be_slice(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

impl FixedWidth for Uuid {
    const WIDTH: usize = 16;
    #[inline]
    fn put(self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }
    #[inline]
    fn from_be_slice(bytes: &[u8]) -> Self {
        let mut value = [0; 16];
        value.copy_from_slice(bytes);
        Uuid(value)
    }
}

/// An array of fixed-width values (`[]int32` broker ids, `[]int64`, `[]uuid`, ...), held as
/// the big-endian bytes Kafka writes.
///
/// Decoding one allocates nothing and touches no reference count when its elements fit in
/// the value itself (up to [`PrimitiveArray::INLINE_CAPACITY`] bytes: five `i32`s, two
/// `i64`s or one uuid; replica, ISR and offline lists of replication factors up to five do).
/// A longer array is a slice of the input frame, shared rather than copied. Encoding writes
/// the bytes back as they are. Elements are converted when read (`get`, `iter`). Build one
/// from a `Vec`, an array or an iterator; to change one, take `to_vec()`, change that, and
/// convert it back.
///
/// ```
/// use kafka_codec::PrimitiveArray;
/// let replicas: PrimitiveArray<i32> = vec![1, 2, 3].into();
/// assert_eq!(replicas.len(), 3);
/// assert_eq!(replicas.get(1), Some(2));
/// assert_eq!(replicas, [1, 2, 3]);
/// assert_eq!(replicas.iter().rev().collect::<Vec<_>>(), [3, 2, 1]);
/// assert_eq!(format!("{replicas:?}"), "[1, 2, 3]");
/// assert_eq!(replicas.as_be_bytes(), &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
/// ```
pub struct PrimitiveArray<T> {
    // Invariant: a whole number of `T::WIDTH`-byte elements.
    repr: Repr,
    element: PhantomData<fn() -> T>,
}

// Inline, an array costs a copy of at most 22 bytes. Shared, it costs a reference count on
// the input (an atomic increment now and a decrement at drop, every array counting on the
// same cache line: Metadata has three arrays per partition) and a box. The box keeps the
// shared form one word, so the whole is three words, one less than the `Bytes` it replaces
// (a Metadata partition is 96 bytes, not 120), and the tag leaves room for `Option`'s
// `None`. Four words (30 bytes inline) decoded the Metadata benchmarks no faster.
#[derive(Clone)]
enum Repr {
    // Invariant: `len <= INLINE_CAPACITY`; the bytes past `len` mean nothing (the decoder
    // may leave there the input that followed the array).
    Inline {
        len: u8,
        bytes: [u8; INLINE_CAPACITY],
    },
    // Invariant: longer than `INLINE_CAPACITY`.
    Shared(Box<Bytes>),
}

pub(super) const INLINE_CAPACITY: usize = 22;

// The layout the comment above promises, with or without `Option`.
const _: () = assert!(std::mem::size_of::<PrimitiveArray<i64>>() == INLINE_CAPACITY + 2);
const _: () = assert!(std::mem::size_of::<Option<PrimitiveArray<i64>>>() == INLINE_CAPACITY + 2);

impl Repr {
    const EMPTY: Repr = Repr::Inline {
        len: 0,
        bytes: [0; INLINE_CAPACITY],
    };

    /// `bytes` copied inline, if they fit.
    #[inline]
    fn inline(bytes: &[u8]) -> Option<Repr> {
        let mut inline = [0; INLINE_CAPACITY];
        inline.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(Repr::Inline {
            len: bytes.len() as u8,
            bytes: inline,
        })
    }

    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Shared(bytes) => bytes,
        }
    }
}

impl<T: FixedWidth> PrimitiveArray<T> {
    /// Bytes of elements held in the value itself, without allocating or sharing.
    pub const INLINE_CAPACITY: usize = INLINE_CAPACITY;

    /// The empty array.
    pub const fn new() -> Self {
        PrimitiveArray {
            repr: Repr::EMPTY,
            element: PhantomData,
        }
    }

    /// The array whose elements are the big-endian `bytes`; `None` unless their length is a
    /// whole number of elements. Bytes that fit inline are copied, longer ones are kept.
    pub fn from_be_bytes(bytes: Bytes) -> Option<Self> {
        if bytes.len() % T::WIDTH != 0 {
            return None;
        }
        Some(PrimitiveArray {
            repr: Repr::inline(&bytes).unwrap_or_else(|| Repr::Shared(Box::new(bytes))),
            element: PhantomData,
        })
    }

    /// The array whose elements are the big-endian `bytes` (copied); `None` unless their
    /// length is a whole number of elements.
    pub fn from_be_slice(bytes: &[u8]) -> Option<Self> {
        if bytes.len() % T::WIDTH != 0 {
            return None;
        }
        Some(PrimitiveArray {
            repr: Repr::inline(bytes)
                .unwrap_or_else(|| Repr::Shared(Box::new(Bytes::copy_from_slice(bytes)))),
            element: PhantomData,
        })
    }

    /// The first `len` bytes of `window`, inline: for the decoder, which checked that `len`
    /// is a whole number of elements, at most [`Self::INLINE_CAPACITY`], and within the
    /// input. Copying the whole window is a few fixed-size moves where a copy of `len` bytes
    /// would be a call; the bytes past `len` are never read.
    #[inline]
    pub(super) fn from_window_unchecked(window: &[u8; INLINE_CAPACITY], len: usize) -> Self {
        debug_assert!(len <= INLINE_CAPACITY && len % T::WIDTH == 0);
        PrimitiveArray {
            repr: Repr::Inline {
                len: len as u8,
                bytes: *window,
            },
            element: PhantomData,
        }
    }

    /// Trusted by the decoder, which cut `bytes` at a whole number of elements and, when they
    /// are longer than [`Self::INLINE_CAPACITY`], slices the input with `shared`.
    #[inline]
    pub(super) fn from_be_bytes_unchecked(bytes: &[u8], shared: impl FnOnce() -> Bytes) -> Self {
        debug_assert_eq!(bytes.len() % T::WIDTH, 0);
        PrimitiveArray {
            repr: Repr::inline(bytes).unwrap_or_else(|| Repr::Shared(Box::new(shared()))),
            element: PhantomData,
        }
    }

    /// The elements' big-endian bytes, as they are on the wire (without the count).
    #[inline]
    pub fn as_be_bytes(&self) -> &[u8] {
        self.repr.as_slice()
    }

    /// The elements' big-endian bytes as shared [`Bytes`]: the input's own slice when the
    /// array is longer than [`Self::INLINE_CAPACITY`], otherwise a copy.
    pub fn to_be_bytes(&self) -> Bytes {
        match &self.repr {
            Repr::Inline { .. } => Bytes::copy_from_slice(self.as_be_bytes()),
            Repr::Shared(bytes) => Bytes::clone(bytes),
        }
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_be_bytes().len() / T::WIDTH
    }

    /// True when there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.as_be_bytes().is_empty()
    }

    /// The element at `index`, if there is one.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        let start = index.checked_mul(T::WIDTH)?;
        let bytes = self
            .as_be_bytes()
            .get(start..start.checked_add(T::WIDTH)?)?;
        Some(T::from_be_slice(bytes))
    }

    /// The first element, if any.
    pub fn first(&self) -> Option<T> {
        self.get(0)
    }

    /// The last element, if any.
    pub fn last(&self) -> Option<T> {
        self.len().checked_sub(1).and_then(|index| self.get(index))
    }

    /// True if an element equals `value`.
    pub fn contains(&self, value: &T) -> bool
    where
        T: PartialEq,
    {
        self.iter().any(|element| element == *value)
    }

    /// The elements, front to back (or back to front: `rev()`).
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter::over(self.as_be_bytes())
    }

    /// The elements in a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

/// The elements of a [`PrimitiveArray`], by value.
pub struct Iter<'a, T> {
    chunks: std::slice::ChunksExact<'a, u8>,
    element: PhantomData<fn() -> T>,
}

impl<T: FixedWidth> Iterator for Iter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        self.chunks.next().map(T::from_be_slice)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }

    fn nth(&mut self, n: usize) -> Option<T> {
        self.chunks.nth(n).map(T::from_be_slice)
    }
}

impl<T: FixedWidth> DoubleEndedIterator for Iter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        self.chunks.next_back().map(T::from_be_slice)
    }
}

impl<T: FixedWidth> ExactSizeIterator for Iter<'_, T> {}
impl<T: FixedWidth> FusedIterator for Iter<'_, T> {}

impl<'a, T: FixedWidth> Iter<'a, T> {
    /// The elements of `bytes`, each `T::WIDTH` big-endian bytes (a trailing part is ignored:
    /// callers pass whole elements).
    pub(crate) fn over(bytes: &'a [u8]) -> Self {
        Iter {
            chunks: bytes.chunks_exact(T::WIDTH),
            element: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Iter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Iter")
            .field("remaining_bytes", &self.chunks.len())
            .finish()
    }
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            chunks: self.chunks.clone(),
            element: PhantomData,
        }
    }
}

/// The elements of a [`PrimitiveArray`] it was turned into.
pub struct IntoIter<T> {
    array: PrimitiveArray<T>,
    // Elements not yet taken: [front, back).
    front: usize,
    back: usize,
}

impl<T: FixedWidth> Iterator for IntoIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        self.front += 1;
        self.array.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.back - self.front;
        (left, Some(left))
    }
}

impl<T: FixedWidth> DoubleEndedIterator for IntoIter<T> {
    fn next_back(&mut self) -> Option<T> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.array.get(self.back)
    }
}

impl<T: FixedWidth> ExactSizeIterator for IntoIter<T> {}
impl<T: FixedWidth> FusedIterator for IntoIter<T> {}

impl<T: FixedWidth> IntoIterator for PrimitiveArray<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        let back = self.len();
        IntoIter {
            array: self,
            front: 0,
            back,
        }
    }
}

impl<'a, T: FixedWidth> IntoIterator for &'a PrimitiveArray<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T: FixedWidth> FromIterator<T> for PrimitiveArray<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let mut inline = [0; INLINE_CAPACITY];
        let mut len = 0;
        // Inline while the elements fit (whatever the size hint says), then on the heap.
        while let Some(value) = iter.next() {
            if len + T::WIDTH > INLINE_CAPACITY {
                let more = iter
                    .size_hint()
                    .0
                    .saturating_add(1)
                    .saturating_mul(T::WIDTH);
                let mut bytes = BytesMut::with_capacity(len.saturating_add(more));
                bytes.put_slice(&inline[..len]);
                value.put(&mut bytes);
                iter.for_each(|value| value.put(&mut bytes));
                return PrimitiveArray {
                    repr: Repr::Shared(Box::new(bytes.freeze())),
                    element: PhantomData,
                };
            }
            value.put(&mut &mut inline[len..]);
            len += T::WIDTH;
        }
        PrimitiveArray {
            repr: Repr::Inline {
                len: len as u8,
                bytes: inline,
            },
            element: PhantomData,
        }
    }
}

impl<'a, T: FixedWidth + 'a> FromIterator<&'a T> for PrimitiveArray<T> {
    fn from_iter<I: IntoIterator<Item = &'a T>>(iter: I) -> Self {
        iter.into_iter().copied().collect()
    }
}

impl<T: FixedWidth> From<Vec<T>> for PrimitiveArray<T> {
    fn from(values: Vec<T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T: FixedWidth> From<&[T]> for PrimitiveArray<T> {
    fn from(values: &[T]) -> Self {
        values.iter().collect()
    }
}

impl<T: FixedWidth, const N: usize> From<[T; N]> for PrimitiveArray<T> {
    fn from(values: [T; N]) -> Self {
        values.into_iter().collect()
    }
}

impl<T: FixedWidth> From<PrimitiveArray<T>> for Vec<T> {
    fn from(array: PrimitiveArray<T>) -> Self {
        array.to_vec()
    }
}

impl<T: FixedWidth> Default for PrimitiveArray<T> {
    fn default() -> Self {
        PrimitiveArray::new()
    }
}

impl<T> Clone for PrimitiveArray<T> {
    fn clone(&self) -> Self {
        PrimitiveArray {
            repr: self.repr.clone(),
            element: PhantomData,
        }
    }
}

impl<T: FixedWidth + fmt::Debug> fmt::Debug for PrimitiveArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

// Equality is of the values, element by element (so `f64` compares as numbers, as a
// `Vec<f64>` does), not of the bytes.
impl<T: FixedWidth + PartialEq> PartialEq for PrimitiveArray<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: FixedWidth + Eq> Eq for PrimitiveArray<T> {}

impl<T: FixedWidth + PartialEq> PartialEq<[T]> for PrimitiveArray<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl<T: FixedWidth + PartialEq> PartialEq<&[T]> for PrimitiveArray<T> {
    fn eq(&self, other: &&[T]) -> bool {
        *self == **other
    }
}

impl<T: FixedWidth + PartialEq> PartialEq<Vec<T>> for PrimitiveArray<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self == **other
    }
}

impl<T: FixedWidth + PartialEq, const N: usize> PartialEq<[T; N]> for PrimitiveArray<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        *self == other[..]
    }
}

impl<T: FixedWidth + PartialEq> PartialEq<PrimitiveArray<T>> for Vec<T> {
    fn eq(&self, other: &PrimitiveArray<T>) -> bool {
        *other == **self
    }
}

impl<T: FixedWidth + Hash + Eq> Hash for PrimitiveArray<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for value in self.iter() {
            value.hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_bytes() {
        fn check<T: FixedWidth + PartialEq + fmt::Debug>(values: Vec<T>) {
            let array = PrimitiveArray::from(values.clone());
            assert_eq!(array.len(), values.len());
            assert_eq!(array.as_be_bytes().len(), values.len() * T::WIDTH);
            assert_eq!(array.to_vec(), values);
            assert_eq!(array.iter().rev().collect::<Vec<_>>(), {
                let mut reversed = values.clone();
                reversed.reverse();
                reversed
            });
            assert_eq!(array.clone().into_iter().collect::<Vec<_>>(), values);
            assert_eq!(
                array.clone().into_iter().rev().collect::<Vec<_>>().len(),
                values.len()
            );
            let again = PrimitiveArray::<T>::from_be_bytes(array.to_be_bytes()).unwrap();
            assert_eq!(again, array);
            let again = PrimitiveArray::<T>::from_be_slice(array.as_be_bytes()).unwrap();
            assert_eq!(again, array);
            assert_eq!(array, values);
            assert_eq!(values, array);
        }
        check(vec![i8::MIN, -1, 0, i8::MAX]);
        check(vec![i16::MIN, -1, 0, i16::MAX]);
        check(vec![0u16, 1, u16::MAX]);
        check(vec![i32::MIN, -1, 0, 7, i32::MAX]);
        check(vec![0u32, u32::MAX]);
        check(vec![i64::MIN, -1, 0, i64::MAX]);
        check(vec![-0.5f64, 0.0, f64::INFINITY]);
        check(vec![Uuid::ZERO, Uuid::from_halves(1, -2)]);
        check(Vec::<i32>::new());
    }

    #[test]
    fn holds_big_endian_bytes() {
        let array = PrimitiveArray::from([0x0102_0304i32, -1]);
        assert_eq!(array.as_be_bytes(), &[1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(array.get(0), Some(0x0102_0304));
        assert_eq!(array.get(1), Some(-1));
        assert_eq!(array.get(2), None);
        assert_eq!(array.get(usize::MAX), None);
        assert_eq!(array.first(), Some(0x0102_0304));
        assert_eq!(array.last(), Some(-1));
        assert!(array.contains(&-1));
        assert!(!array.contains(&0));
        assert_eq!(array.iter().len(), 2);
        assert_eq!(array.iter().nth(1), Some(-1));
    }

    #[test]
    fn a_partial_element_is_refused() {
        assert!(PrimitiveArray::<i32>::from_be_bytes(Bytes::from_static(&[0; 6])).is_none());
        assert!(PrimitiveArray::<i32>::from_be_bytes(Bytes::from_static(&[0; 8])).is_some());
        assert!(PrimitiveArray::<i32>::from_be_slice(&[0; 34]).is_none());
        assert!(PrimitiveArray::<i32>::from_be_slice(&[0; 36]).is_some());
    }

    /// Arrays on both sides of the inline capacity, built every way, hold the same values;
    /// a long one built from `Bytes` shares them rather than copying.
    #[test]
    fn inline_and_shared_arrays_agree() {
        const CAPACITY: usize = PrimitiveArray::<i32>::INLINE_CAPACITY;
        for count in 0..=CAPACITY / 4 + 3 {
            let values: Vec<i32> = (0..count as i32).map(|i| i * 0x0101_0101 - 7).collect();
            let wire: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
            let collected: PrimitiveArray<i32> = values.iter().collect();
            let exact = PrimitiveArray::<i32>::from(values.as_slice());
            // An iterator whose size hint says nothing still spills to the heap correctly.
            let unsized_hint: PrimitiveArray<i32> =
                values.iter().copied().filter(|_| true).collect();
            let shared = PrimitiveArray::<i32>::from_be_bytes(Bytes::from(wire.clone())).unwrap();
            for array in [&collected, &exact, &unsized_hint, &shared] {
                assert_eq!(array.as_be_bytes(), wire.as_slice());
                assert_eq!(array.len(), count);
                assert_eq!(array.to_vec(), values);
                assert_eq!(array.clone(), collected);
                assert_eq!(array.iter().rev().count(), count);
            }
            let input = Bytes::from(wire.clone());
            let from_input = PrimitiveArray::<i32>::from_be_bytes(input.clone()).unwrap();
            let kept = from_input.to_be_bytes();
            assert_eq!(kept, input);
            // Longer than the capacity: the very bytes of the input; shorter: a copy.
            assert_eq!(
                kept.as_ptr() == input.as_ptr() && !input.is_empty(),
                wire.len() > CAPACITY
            );
        }
        // Eight-byte and sixteen-byte elements: three `i64`s or one uuid fit, one more does not.
        let three: PrimitiveArray<i64> = [1i64, 2, 3].into();
        let four: PrimitiveArray<i64> = [1i64, 2, 3, 4].into();
        assert_eq!((three.len(), four.len()), (3, 4));
        assert_eq!(four.to_vec(), [1, 2, 3, 4]);
        let two: PrimitiveArray<Uuid> = [Uuid::from_halves(1, 2), Uuid::ZERO].into();
        assert_eq!(two.get(0), Some(Uuid::from_halves(1, 2)));
        assert_eq!(two.last(), Some(Uuid::ZERO));
    }

    #[test]
    fn equality_is_of_values_and_empty_is_default() {
        let a: PrimitiveArray<f64> = vec![0.0].into();
        let b: PrimitiveArray<f64> = vec![-0.0].into();
        assert_eq!(a, b, "compared as numbers, as Vec<f64> compares");
        let nan: PrimitiveArray<f64> = vec![f64::NAN].into();
        assert_ne!(nan, nan.clone());
        assert_eq!(PrimitiveArray::<i64>::default(), PrimitiveArray::new());
        assert!(PrimitiveArray::<i64>::new().is_empty());
        assert_eq!(format!("{:?}", PrimitiveArray::<i64>::new()), "[]");
        let collected: PrimitiveArray<i16> = (1..=3).collect();
        assert_eq!(collected, [1, 2, 3]);
        assert_eq!(collected, &[1i16, 2, 3][..]);
        assert_ne!(collected, [1, 2]);
        assert_eq!(Vec::from(collected), vec![1, 2, 3]);
    }
}
