//! [`ReplicaKey`]: who a replica is.

use crate::Uuid;
use std::cmp::Ordering;
use std::fmt;

/// A replica's identity: its node id plus, when known, the id of the log directory that holds
/// its copy of the metadata log.
///
/// The directory id tells apart two incarnations of the same node id (say, a controller whose
/// disk was replaced). The all-zero UUID means "no directory id" on the wire, so
/// [`ReplicaKey::new`] maps `Some(Uuid::ZERO)` to `None`; every key therefore has exactly one
/// representation and equality, hashing and ordering agree.
///
/// Ordering is Kafka's: by id, then by directory id, where a missing directory id sorts as the
/// zero UUID and UUIDs compare as their two halves read as **signed** 64-bit integers (so a
/// directory id whose first byte is `0x80` or above sorts *before* the zero UUID).
///
/// ```
/// use kafka_codec::quorum::ReplicaKey;
/// use kafka_codec::Uuid;
///
/// let plain = ReplicaKey::without_directory(2);
/// let negative = ReplicaKey::new(2, Some(Uuid::from_halves(-1, 0)));
/// let positive = ReplicaKey::new(2, Some(Uuid::from_halves(0, 1)));
/// let mut keys = vec![positive, plain, negative, ReplicaKey::without_directory(1)];
/// keys.sort();
/// assert_eq!(keys, [ReplicaKey::without_directory(1), negative, plain, positive]);
/// assert_eq!(ReplicaKey::new(2, Some(Uuid::ZERO)), plain);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplicaKey {
    id: i32,
    directory_id: Option<Uuid>,
}

impl ReplicaKey {
    /// A key; a zero directory id is treated as none.
    pub fn new(id: i32, directory_id: Option<Uuid>) -> Self {
        ReplicaKey {
            id,
            directory_id: directory_id.filter(|d| !d.is_zero()),
        }
    }

    /// A key from a wire pair (id, directory id), where the zero UUID means none.
    pub fn from_wire(id: i32, directory_id: Uuid) -> Self {
        ReplicaKey::new(id, Some(directory_id))
    }

    /// A key without a directory id (static voters, old peers).
    pub fn without_directory(id: i32) -> Self {
        ReplicaKey {
            id,
            directory_id: None,
        }
    }

    /// The node id.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The directory id, if known.
    pub fn directory_id(&self) -> Option<Uuid> {
        self.directory_id
    }

    /// The directory id as the wire writes it: the zero UUID when unknown.
    pub fn directory_id_or_zero(&self) -> Uuid {
        self.directory_id.unwrap_or(Uuid::ZERO)
    }

    /// Whether a replica presenting `other` is the replica this *stored* key describes.
    ///
    /// The ids must be equal. If this key has a directory id, `other` must carry the same one;
    /// if this key has none, any directory id (or none) matches. The relation is deliberately
    /// asymmetric: the stored side (a voter entry) decides how strict the match is.
    ///
    /// ```
    /// use kafka_codec::quorum::ReplicaKey;
    /// use kafka_codec::Uuid;
    ///
    /// let with_dir = ReplicaKey::new(3, Some(Uuid::from_halves(0, 7)));
    /// let bare = ReplicaKey::without_directory(3);
    /// assert!(bare.matches(&with_dir));
    /// assert!(!with_dir.matches(&bare));
    /// ```
    pub fn matches(&self, other: &ReplicaKey) -> bool {
        self.id == other.id
            && match self.directory_id {
                Some(mine) => other.directory_id == Some(mine),
                None => true,
            }
    }
}

impl ReplicaKey {
    /// Whether the two keys can name the same replica: equal ids, and directory ids that do
    /// not contradict each other (equal, or at least one unknown). Symmetric, unlike
    /// [`ReplicaKey::matches`].
    ///
    /// ```
    /// use kafka_codec::quorum::ReplicaKey;
    /// use kafka_codec::Uuid;
    ///
    /// let a = ReplicaKey::new(2, Some(Uuid::from_halves(0, 1)));
    /// let b = ReplicaKey::new(2, Some(Uuid::from_halves(0, 2)));
    /// let bare = ReplicaKey::without_directory(2);
    /// assert!(a.agrees_with(&bare) && bare.agrees_with(&a));
    /// assert!(!a.agrees_with(&b));
    /// ```
    pub fn agrees_with(&self, other: &ReplicaKey) -> bool {
        self.matches(other) || other.matches(self)
    }
}

impl Ord for ReplicaKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id).then_with(|| {
            self.directory_id_or_zero()
                .halves()
                .cmp(&other.directory_id_or_zero().halves())
        })
    }
}

impl PartialOrd for ReplicaKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ReplicaKey {
    /// `id` or `id/directory-id` (Kafka's UUID text).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.directory_id {
            Some(dir) => write!(f, "{}/{}", self.id, dir),
            None => write!(f, "{}", self.id),
        }
    }
}

impl fmt::Debug for ReplicaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReplicaKey({self})")
    }
}
