//! The values the wire layer reads and writes beyond plain numbers: [`Uuid`], [`Utf8Bytes`]
//! and [`RawTaggedField`].

use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use bytes::Bytes;
use std::fmt;
use std::ops::Deref;

/// A Kafka UUID: 16 bytes, most significant half first.
///
/// Kafka has no null UUID; "no UUID" is [`Uuid::ZERO`]. Its text form (used in Kafka's
/// JSON and tools) is URL-safe base64 without padding, 22 characters.
///
/// ```
/// use kafka_codec::Uuid;
/// let id = Uuid::from_bytes([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
/// assert_eq!(id.to_string(), "AQIDBAUGBwgJCgsMDQ4PEA");
/// assert_eq!("AQIDBAUGBwgJCgsMDQ4PEA".parse::<Uuid>().unwrap(), id);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero UUID, Kafka's "none".
    pub const ZERO: Uuid = Uuid([0; 16]);

    /// Wraps 16 raw bytes.
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Uuid(bytes)
    }

    /// The 16 raw bytes.
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// Builds a UUID from its two signed 64-bit halves, as Kafka's Java `Uuid` holds it.
    pub fn from_halves(most_significant: i64, least_significant: i64) -> Self {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&most_significant.to_be_bytes());
        bytes[8..].copy_from_slice(&least_significant.to_be_bytes());
        Uuid(bytes)
    }

    /// The two signed 64-bit halves; Kafka orders UUIDs by this pair.
    pub fn halves(&self) -> (i64, i64) {
        let (hi, lo) = self.0.split_at(8);
        (
            i64::from_be_bytes(hi.try_into().expect("8 bytes")),
            i64::from_be_bytes(lo.try_into().expect("8 bytes")),
        )
    }

    /// True for [`Uuid::ZERO`].
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 16]
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

/// Why a text could not be read as a Kafka UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Kafka UUID (22-character URL-safe base64 of 16 bytes): {0:?}")]
pub struct ParseUuidError(pub String);

impl std::str::FromStr for Uuid {
    type Err = ParseUuidError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // Kafka accepts at most 24 characters (22 plus optional padding).
        if text.len() > 24 {
            return Err(ParseUuidError(text.to_owned()));
        }
        // Padding is optional, as in Kafka's reader, but if present it must be complete.
        let engine = if text.contains('=') {
            &URL_SAFE
        } else {
            &URL_SAFE_NO_PAD
        };
        let bytes = engine
            .decode(text)
            .map_err(|_| ParseUuidError(text.to_owned()))?;
        let bytes: [u8; 16] = bytes
            .try_into()
            .map_err(|_| ParseUuidError(text.to_owned()))?;
        Ok(Uuid(bytes))
    }
}

/// An immutable UTF-8 string that shares its storage with the buffer it was decoded from.
///
/// Decoding a message from [`Bytes`] hands out slices of the input instead of copying string
/// payloads; `Utf8Bytes` is such a slice, checked to be valid UTF-8 once, at decode time.
/// It derefs to `str`.
///
/// ```
/// use kafka_codec::Utf8Bytes;
/// let name = Utf8Bytes::from("__cluster_metadata");
/// assert_eq!(&*name, "__cluster_metadata");
/// assert!(name.starts_with("__"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Utf8Bytes(Bytes);

impl Utf8Bytes {
    /// A string of static text, without allocating.
    pub const fn from_static(text: &'static str) -> Self {
        Utf8Bytes(Bytes::from_static(text.as_bytes()))
    }

    /// Checks that `bytes` is UTF-8 and wraps it without copying.
    #[inline]
    pub fn from_utf8(bytes: Bytes) -> Result<Self, std::str::Utf8Error> {
        // Names, hosts and ids are nearly always ASCII (which is UTF-8): `is_ascii` checks a
        // word at a time, and only text that is not ASCII pays for the general check.
        if !bytes.is_ascii() {
            std::str::from_utf8(&bytes)?;
        }
        Ok(Utf8Bytes(bytes))
    }

    /// `text` as a `Utf8Bytes` that shares `buf` when `text` is a slice of it (no copy), else
    /// a copy. No check is needed: the bytes are `text`'s own, which a `&str` guarantees are
    /// UTF-8. (The zero-copy views hand out `&str` slices of their frame.)
    #[cfg(feature = "views")]
    #[inline]
    pub(crate) fn from_str_in(buf: &Bytes, text: &str) -> Self {
        let (start, end) = (buf.as_ptr() as usize, buf.as_ptr() as usize + buf.len());
        let at = text.as_ptr() as usize;
        if text.is_empty() {
            Utf8Bytes(Bytes::new())
        } else if start <= at && at + text.len() <= end {
            Utf8Bytes(buf.slice_ref(text.as_bytes()))
        } else {
            Utf8Bytes(Bytes::copy_from_slice(text.as_bytes()))
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor either starts from a `str`/`String` or checks the bytes
        // (`is_ascii`, else `std::str::from_utf8`), and the inner `Bytes` is never exposed
        // mutably, so the bytes are valid UTF-8 for the whole life of the value. Exercised by
        // the tests below and by every string round trip in the test suite.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The underlying shared bytes.
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// Unwraps into the underlying shared bytes.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Deref for Utf8Bytes {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Utf8Bytes {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Utf8Bytes {
    fn from(text: &str) -> Self {
        Utf8Bytes(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl From<String> for Utf8Bytes {
    fn from(text: String) -> Self {
        Utf8Bytes(Bytes::from(text.into_bytes()))
    }
}

impl PartialEq<str> for Utf8Bytes {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Utf8Bytes {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A tagged field whose tag this crate does not know, kept verbatim so that a message read
/// from a newer peer is written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTaggedField {
    /// The tag number.
    pub tag: u32,
    /// The field's bytes, without the tag and size prefix.
    pub data: Bytes,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_bytes_rejects_invalid_and_shares_storage() {
        assert!(Utf8Bytes::from_utf8(Bytes::from_static(b"\xff\xfe")).is_err());
        let input = Bytes::from_static("héllo wörld".as_bytes());
        let text = Utf8Bytes::from_utf8(input.slice(0..6)).unwrap();
        assert_eq!(text.as_str(), "héllo");
        assert_eq!(text.as_bytes().as_ptr(), input.as_ptr());
    }

    #[test]
    fn uuid_halves_round_trip() {
        let id = Uuid::from_halves(-1, 42);
        assert_eq!(id.halves(), (-1, 42));
        assert_eq!(Uuid::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        assert!("not a uuid".parse::<Uuid>().is_err());
        assert!("AAAAAAAAAAAAAAAAAAAAAAAAAAAA".parse::<Uuid>().is_err());
        // Padding may be left out or given whole, not in part.
        let id = "AQIDBAUGBwgJCgsMDQ4PEA".parse::<Uuid>().unwrap();
        assert_eq!("AQIDBAUGBwgJCgsMDQ4PEA==".parse::<Uuid>(), Ok(id));
        assert!("AQIDBAUGBwgJCgsMDQ4PEA=".parse::<Uuid>().is_err());
        // Leftover bits must be zero, or two texts would name the same UUID.
        assert!("AQIDBAUGBwgJCgsMDQ4PEB".parse::<Uuid>().is_err());
    }
}
