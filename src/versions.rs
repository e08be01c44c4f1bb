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
