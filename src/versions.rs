//! [`VersionRange`]: the versions a schema, an API or a peer supports.

use std::fmt;

/// An inclusive range of message versions, as a schema's `validVersions` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VersionRange {
    /// Lowest version.
    pub min: i16,
    /// Highest version.
    pub max: i16,
}

impl VersionRange {
    /// `min..=max`.
    pub const fn new(min: i16, max: i16) -> Self {
        VersionRange { min, max }
    }

    /// Whether `version` lies in the range.
    pub const fn contains(&self, version: i16) -> bool {
        self.min <= version && version <= self.max
    }
}

impl fmt::Display for VersionRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// What one Kafka release speaks of an API (see [`ApiKey::releases`]).
///
/// ```
/// use kafka_codec::{ApiKey, VersionRange};
/// // Kafka 3.9.1 speaks Produce v0-v11, Kafka 4.4.0 v3-v13: this crate speaks all of them.
/// let [kafka_3, kafka_4] = ApiKey::Produce.releases() else { unreachable!() };
/// assert_eq!((kafka_3.release, kafka_3.versions), ("3.9.1", Some(VersionRange::new(0, 11))));
/// assert_eq!((kafka_4.release, kafka_4.versions), ("4.4.0", Some(VersionRange::new(3, 13))));
/// assert_eq!(ApiKey::Produce.valid_versions(), VersionRange::new(0, 13));
/// assert_eq!(ApiKey::Produce.removed_versions(), Some(VersionRange::new(0, 2)));
/// // The ZooKeeper-era LeaderAndIsr: gone from Kafka 4, still read and written.
/// assert_eq!(ApiKey::LeaderAndIsr.releases()[1].versions, None);
/// assert_eq!(ApiKey::LeaderAndIsr.removed_versions(), Some(VersionRange::new(0, 7)));
/// ```
///
/// [`ApiKey::releases`]: crate::ApiKey::releases
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReleaseVersions {
    /// The release, as Apache Kafka numbers it (`"3.9.1"`).
    pub release: &'static str,
    /// The versions it defines; `None` when it has no such API (Kafka 4's LeaderAndIsr).
    pub versions: Option<VersionRange>,
    /// Whether its highest version is unstable in that release: a draft, which a broker
    /// advertises only when unstable versions are enabled (Kafka 3.9's ShareFetch v0).
    pub latest_unstable: bool,
}
