//! The iteration order of Java's `HashMap` and `HashSet` (JDK 17), which Kafka's `uniform`
//! assignor walks: which member is filled first and which partitions it gives up follow it, so
//! the cluster places partitions exactly as Kafka does only by walking the same order.
//!
//! A table of `2^k` buckets; an entry goes to bucket `(h ^ (h >>> 16)) & (capacity - 1)` of
//! its Java `hashCode` `h`, appended to that bucket's list by `put` (first in it by
//! `computeIfAbsent`); iteration is bucket by bucket, each
//! in insertion order. A resize (more entries than 3/4 of the capacity, or a ninth entry in one
//! bucket of a table under 64) doubles the table and keeps each bucket's relative order.
//! Java turns a bucket of 8 or more in a table of 64 or more into a tree, whose order this does
//! not model (it needs 8 colliding keys in one group).

use kafka_codec::Uuid;

/// A key's Java `hashCode`.
pub trait JavaHash {
    /// `hashCode()` as Java computes it.
    fn java_hash(&self) -> i32;
}

impl JavaHash for i32 {
    /// `Integer.hashCode`: the value.
    fn java_hash(&self) -> i32 {
        *self
    }
}

impl JavaHash for String {
    /// `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units.
    fn java_hash(&self) -> i32 {
        self.encode_utf16().fold(0i32, |h, unit| {
            h.wrapping_mul(31).wrapping_add(i32::from(unit))
        })
    }
}

impl JavaHash for Uuid {
    /// Kafka's `Uuid.hashCode`: the two halves xored, then the high and low words xored.
    fn java_hash(&self) -> i32 {
        let most = u64::from_be_bytes(self.0[..8].try_into().expect("8 bytes"));
        let least = u64::from_be_bytes(self.0[8..].try_into().expect("8 bytes"));
        let xor = most ^ least;
        ((xor >> 32) as u32 ^ xor as u32) as i32
    }
}

/// Java's `HashMap`, for its order: the entries in the order Java iterates them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaHashMap<K, V> {
    table: Vec<Vec<(K, V)>>,
    threshold: usize,
    len: usize,
}

impl<K: JavaHash + PartialEq, V> Default for JavaHashMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket(hash: i32, capacity: usize) -> usize {
    let h = hash as u32;
    (h ^ (h >> 16)) as usize & (capacity - 1)
}

/// Java's `tableSizeFor`: the least power of two at least `n` (1 for 0).
fn table_size_for(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

impl<K: JavaHash + PartialEq, V> JavaHashMap<K, V> {
    /// `new HashMap<>()`.
    pub fn new() -> Self {
        JavaHashMap {
            table: Vec::new(),
            threshold: 0,
            len: 0,
        }
    }

    /// `new HashMap<>(initialCapacity)`.
    pub fn with_capacity(initial: usize) -> Self {
        JavaHashMap {
            table: Vec::new(),
            threshold: table_size_for(initial),
            len: 0,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn resize(&mut self) {
        let old = self.table.len();
        let (capacity, threshold) = if old > 0 {
            let threshold = if old >= 16 { self.threshold * 2 } else { 0 };
            (old * 2, threshold)
        } else if self.threshold > 0 {
            (self.threshold, 0)
        } else {
            (16, 12)
        };
        self.threshold = if threshold == 0 {
            capacity * 3 / 4
        } else {
            threshold
        };
        let entries = std::mem::take(&mut self.table);
        self.table = (0..capacity).map(|_| Vec::new()).collect();
        for (key, value) in entries.into_iter().flatten() {
            let at = bucket(key.java_hash(), capacity);
            self.table[at].push((key, value));
        }
    }

    /// `put`: a new key goes last in its bucket; an existing one keeps its place.
    pub fn insert(&mut self, key: K, value: V) {
        if self.table.is_empty() {
            self.resize();
        }
        let at = bucket(key.java_hash(), self.table.len());
        if let Some(entry) = self.table[at].iter_mut().find(|(k, _)| *k == key) {
            entry.1 = value;
            return;
        }
        let chained = self.table[at].len();
        self.table[at].push((key, value));
        // treeifyBin on a table under 64 resizes instead.
        if chained >= 8 && self.table.len() < 64 {
            self.resize();
        }
        self.len += 1;
        if self.len > self.threshold {
            self.resize();
        }
    }

    /// `computeIfAbsent`: unlike `put`, it resizes before inserting (when already over the
    /// threshold) and puts a new key first in its bucket.
    pub fn compute_if_absent(&mut self, key: K, value: impl FnOnce() -> V) -> &mut V {
        if self.len > self.threshold || self.table.is_empty() {
            self.resize();
        }
        let hash = key.java_hash();
        let at = bucket(hash, self.table.len());
        if let Some(found) = self.table[at].iter().position(|(k, _)| *k == key) {
            return &mut self.table[at][found].1;
        }
        let chained = self.table[at].len();
        self.table[at].insert(0, (key, value()));
        self.len += 1;
        // treeifyBin on a table under 64 resizes instead; the new key stays first (a resize
        // keeps each bucket's order).
        if chained >= 7 && self.table.len() < 64 {
            self.resize();
        }
        let at = bucket(hash, self.table.len());
        &mut self.table[at][0].1
    }

    /// `get`.
    pub fn get(&self, key: &K) -> Option<&V> {
        if self.table.is_empty() {
            return None;
        }
        let at = bucket(key.java_hash(), self.table.len());
        self.table[at]
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// `get`, to change the value.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        if self.table.is_empty() {
            return None;
        }
        let at = bucket(key.java_hash(), self.table.len());
        self.table[at]
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// `remove` (the table never shrinks).
    pub fn remove(&mut self, key: &K) -> Option<V> {
        if self.table.is_empty() {
            return None;
        }
        let at = bucket(key.java_hash(), self.table.len());
        let found = self.table[at].iter().position(|(k, _)| k == key)?;
        self.len -= 1;
        Some(self.table[at].remove(found).1)
    }

    /// The entries in Java's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.table.iter().flatten().map(|(k, v)| (k, v))
    }
}

/// Java's `HashSet` (a `HashMap` of its elements).
pub type JavaHashSet<K> = JavaHashMap<K, ()>;

impl<K: JavaHash + PartialEq> JavaHashMap<K, ()> {
    /// `new HashSet<>(collection)` (JDK 17: a map of capacity `max(n / .75 + 1, 16)`), filled
    /// in the collection's order.
    pub fn from_collection(items: impl ExactSizeIterator<Item = K>) -> Self {
        let n = items.len();
        let mut set = Self::with_capacity((((n as f32) / 0.75) as usize + 1).max(16));
        for item in items {
            set.insert(item, ());
        }
        set
    }

    /// `add`.
    pub fn add(&mut self, item: K) {
        self.insert(item, ());
    }

    /// `contains`.
    pub fn contains(&self, item: &K) -> bool {
        self.get(item).is_some()
    }

    /// The elements in Java's iteration order.
    pub fn items(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_javas() {
        // "hello".hashCode() and "".hashCode() as the JLS defines String.hashCode.
        assert_eq!("hello".to_string().java_hash(), 99_162_322);
        assert_eq!(String::new().java_hash(), 0);
    }

    #[test]
    fn integers_wrap_around_the_table_in_bucket_order() {
        // Capacity 16: 17 shares bucket 1 with 1 and follows it; 16 sits in bucket 0.
        let set = JavaHashSet::from_collection([17, 3, 1, 16].into_iter());
        assert_eq!(set.items().copied().collect::<Vec<_>>(), vec![16, 17, 1, 3]);
    }

    #[test]
    fn compute_if_absent_puts_a_new_key_first_in_its_bucket() {
        let mut map: JavaHashMap<i32, ()> = JavaHashMap::with_capacity(16);
        map.insert(1, ());
        map.compute_if_absent(17, || ());
        map.insert(33, ());
        assert_eq!(
            map.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            vec![17, 1, 33]
        );
    }
}
