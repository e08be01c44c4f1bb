//! [`TaggedFields`]: the unknown tagged fields of one struct, one pointer wide.

use super::RawTaggedField;
use std::fmt;
use std::ops::Deref;

/// The tagged fields of a struct that this crate does not know, kept so that they are
/// written back unchanged.
///
/// Nearly every struct has none, and a decode builds one of these per struct (per array
/// element), so the empty container costs one pointer and no allocation; the fields live
/// behind it only when there are some. It reads like a `Vec<RawTaggedField>` (it derefs to
/// a slice) and is built like one:
///
/// ```
/// use kafka_codec::bytes::Bytes;
/// use kafka_codec::{RawTaggedField, TaggedFields};
/// let mut fields = TaggedFields::new();
/// assert!(fields.is_empty());
/// fields.push(RawTaggedField { tag: 7, data: Bytes::from_static(b"x") });
/// assert_eq!(fields.len(), 1);
/// assert_eq!(fields[0].tag, 7);
/// let same: TaggedFields = vec![RawTaggedField { tag: 7, data: Bytes::from_static(b"x") }].into();
/// assert_eq!(fields, same);
/// ```
// `None` when empty: `Option<Box<_>>` is one pointer (the box is never null), where a `Vec`
// is three words; the extra allocation is paid only by the rare struct with fields.
#[allow(clippy::box_collection)]
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TaggedFields(Option<Box<Vec<RawTaggedField>>>);

impl TaggedFields {
    /// No fields, without allocating.
    pub const fn new() -> Self {
        TaggedFields(None)
    }

    /// Appends a field (tags are written in the order they are held).
    pub fn push(&mut self, field: RawTaggedField) {
        self.0.get_or_insert_with(Default::default).push(field);
    }

    /// Removes every field, freeing their room.
    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// The fields as a `Vec`.
    pub fn into_vec(mut self) -> Vec<RawTaggedField> {
        self.0.take().map_or_else(Vec::new, |fields| *fields)
    }

    /// The fields as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[RawTaggedField] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

// Every decoded struct drops one of these, nearly always empty: the emptiness check is
// inlined into each struct's drop, and only a container that holds fields calls out to free
// them (the derived drop would be one out-of-line call per struct).
impl Drop for TaggedFields {
    #[inline]
    fn drop(&mut self) {
        if let Some(fields) = self.0.take() {
            free_fields(fields);
        }
    }
}

// Takes the box by value so that the container left behind is known to be empty (a method
// that empties `self` out of line measured ~10 % more instructions on DescribeQuorum).
#[allow(clippy::box_collection)]
#[inline(never)]
fn free_fields(fields: Box<Vec<RawTaggedField>>) {
    drop(fields);
}

impl Deref for TaggedFields {
    type Target = [RawTaggedField];

    #[inline]
    fn deref(&self) -> &[RawTaggedField] {
        self.as_slice()
    }
}

impl AsRef<[RawTaggedField]> for TaggedFields {
    fn as_ref(&self) -> &[RawTaggedField] {
        self.as_slice()
    }
}

impl fmt::Debug for TaggedFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<RawTaggedField>> for TaggedFields {
    fn from(fields: Vec<RawTaggedField>) -> Self {
        if fields.is_empty() {
            TaggedFields(None)
        } else {
            TaggedFields(Some(Box::new(fields)))
        }
    }
}

impl<const N: usize> From<[RawTaggedField; N]> for TaggedFields {
    fn from(fields: [RawTaggedField; N]) -> Self {
        Vec::from(fields).into()
    }
}

impl From<TaggedFields> for Vec<RawTaggedField> {
    fn from(fields: TaggedFields) -> Self {
        fields.into_vec()
    }
}

impl FromIterator<RawTaggedField> for TaggedFields {
    fn from_iter<I: IntoIterator<Item = RawTaggedField>>(iter: I) -> Self {
        iter.into_iter().collect::<Vec<_>>().into()
    }
}

impl Extend<RawTaggedField> for TaggedFields {
    fn extend<I: IntoIterator<Item = RawTaggedField>>(&mut self, iter: I) {
        for field in iter {
            self.push(field);
        }
    }
}

impl IntoIterator for TaggedFields {
    type Item = RawTaggedField;
    type IntoIter = std::vec::IntoIter<RawTaggedField>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a TaggedFields {
    type Item = &'a RawTaggedField;
    type IntoIter = std::slice::Iter<'a, RawTaggedField>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq<Vec<RawTaggedField>> for TaggedFields {
    fn eq(&self, other: &Vec<RawTaggedField>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<[RawTaggedField]> for TaggedFields {
    fn eq(&self, other: &[RawTaggedField]) -> bool {
        self.as_slice() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn field(tag: u32) -> RawTaggedField {
        RawTaggedField {
            tag,
            data: Bytes::from_static(b"ab"),
        }
    }

    #[test]
    fn empty_costs_one_pointer() {
        assert_eq!(std::mem::size_of::<TaggedFields>(), 8);
        assert_eq!(
            std::mem::size_of::<TaggedFields>(),
            std::mem::size_of::<usize>()
        );
        assert!(TaggedFields::new().is_empty());
        assert_eq!(TaggedFields::from(Vec::new()), TaggedFields::new());
    }

    #[test]
    fn reads_and_builds_like_a_vec() {
        let mut fields = TaggedFields::new();
        fields.push(field(1));
        fields.extend([field(2)]);
        assert_eq!(fields.len(), 2);
        assert_eq!(fields, vec![field(1), field(2)]);
        assert_eq!(fields.iter().map(|f| f.tag).collect::<Vec<_>>(), [1, 2]);
        assert_eq!((&fields).into_iter().count(), 2);
        let collected: TaggedFields = [field(1), field(2)].into_iter().collect();
        assert_eq!(collected, fields);
        assert_eq!(
            format!("{fields:?}"),
            format!("{:?}", vec![field(1), field(2)])
        );
        assert_eq!(fields.clone().into_vec(), vec![field(1), field(2)]);
        fields.clear();
        assert!(fields.is_empty());
        assert_eq!(format!("{fields:?}"), "[]");
    }
}
