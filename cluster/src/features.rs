//! The feature flags (KIP-584) ApiVersions v3+ carries: the features a node supports, with
//! their level ranges, and the levels the cluster finalized, with the epoch they were
//! finalized at. Clients read them to pick a protocol: the Java producer uses transaction
//! version 2 (KIP-890: Produce v12 adds partitions, EndTxn v5 bumps the epoch) only when
//! `transaction.version` is finalized at 2 or more.
//!
//! The names, ranges and levels (and their order) of each KRaft release are read from that
//! release's own classes (`release-features.tsv`, written and checked by
//! `tools/release-features/run.sh`); those of 3.9 and 4.4 are also compared with real
//! brokers' answers, committed in `tests/data/`, by `tests/features.rs`.

use crate::consumer_groups::java_order::JavaHashMap;
use crate::release::Release;
use kafka_codec::messages::api_versions_response::{FinalizedFeatureKey, SupportedFeatureKey};
use kafka_codec::messages::ApiVersionsResponse;

/// Which transaction protocol the cluster finalizes (`transaction.version`), on releases that
/// have the feature (4.0 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionVersion {
    /// Version 1: clients add partitions with AddPartitionsToTxn and end with EndTxn v4 or
    /// older.
    V1,
    /// Version 2 (KIP-890, Kafka 4.0's default): partitions added by Produce v12+, the epoch
    /// bumped at every EndTxn v5+.
    #[default]
    V2,
}

impl TransactionVersion {
    /// Its level in ApiVersions.
    pub fn level(self) -> i16 {
        match self {
            TransactionVersion::V1 => 1,
            TransactionVersion::V2 => 2,
        }
    }

    /// From a level: 1 or 2 (0, no transaction version, is not offered: the cluster serves
    /// both protocols and a level of 0 would be left out of the answer, as 1 is for
    /// clients older than 4.0).
    pub fn from_level(level: i16) -> Option<TransactionVersion> {
        match level {
            1 => Some(TransactionVersion::V1),
            2 => Some(TransactionVersion::V2),
            _ => None,
        }
    }
}

/// The least epoch the cluster's features are finalized at. Kafka's broker answers the
/// offset of its metadata image, which moves with every record; ApiVersions answers the
/// offset of the cluster's metadata log ([`Features::at_least_epoch`]) when that is higher,
/// as it is once the log holds a few records. Clients only compare epochs, keeping the
/// features of the highest, and every node here answers the same.
pub const FINALIZED_EPOCH: i64 = 1;

/// The feature levels of every KRaft release line, read from each release's own classes by
/// `tools/release-features/run.sh` (CI checks the file against them).
const TABLE: &str = include_str!("../release-features.tsv");

/// One release's features: `(name, min, max)` supported, `(name, level)` finalized, each in
/// the order its brokers list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    supported: Vec<(&'static str, i16, i16)>,
    finalized: Vec<(&'static str, i16)>,
    /// The epoch they were finalized at.
    epoch: i64,
}

impl Features {
    /// What a broker of `release` (`None`: the newest) answers, freshly formatted as
    /// `kafka-storage format --standalone` leaves it, with `transaction_version` finalized
    /// where the release has the feature (4.0 and later). The KRaft releases (3.3-4.4) answer
    /// `release-features.tsv`, whose 3.9 and 4.4 rows `tests/features.rs` compares with
    /// those brokers' captured answers; releases before KIP-584 (2.7) had no features, and
    /// the ZooKeeper releases after it (2.7-3.2) defined none.
    pub fn of(release: Option<Release>, transaction_version: TransactionVersion) -> Features {
        let release = release.unwrap_or_else(Release::newest);
        let mut features = Features {
            supported: Vec::new(),
            finalized: Vec::new(),
            epoch: FINALIZED_EPOCH,
        };
        for row in TABLE.lines().filter(|line| !line.starts_with('#')).skip(1) {
            let cells: Vec<&'static str> = row.split('\t').collect();
            let [line, kind, name, min, max] = cells[..] else {
                panic!("release-features.tsv: not five cells: {row:?}");
            };
            if line != release.name() {
                continue;
            }
            let level = |text: &str| -> i16 {
                text.parse()
                    .unwrap_or_else(|_| panic!("release-features.tsv: not a level: {row:?}"))
            };
            match kind {
                "supported" => features.supported.push((name, level(min), level(max))),
                "finalized" if name == "transaction.version" => {
                    features.finalized.push((name, transaction_version.level()))
                }
                "finalized" => features.finalized.push((name, level(max))),
                _ => panic!("release-features.tsv: unknown kind: {row:?}"),
            }
        }
        features
    }

    /// The level `name` is finalized at, if it is.
    pub fn finalized(&self, name: &str) -> Option<i16> {
        self.finalized
            .iter()
            .find(|(finalized, _)| *finalized == name)
            .map(|&(_, level)| level)
    }

    /// The supported range of `name`, if it is a feature of the release.
    pub fn supported(&self, name: &str) -> Option<(i16, i16)> {
        self.supported
            .iter()
            .find(|(supported, _, _)| *supported == name)
            .map(|&(_, min, max)| (min, max))
    }

    /// The finalized features, in the order ApiVersions lists them.
    pub fn finalized_levels(&self) -> impl Iterator<Item = (&'static str, i16)> + '_ {
        self.finalized.iter().copied()
    }

    /// `response` with the features an ApiVersions of `version` carries: none below v3 (the
    /// fields are v3+); at v3 the supported features whose range starts at 0 are left out,
    /// as Kafka leaves them out for clients that predate KIP-1022 (they read a minimum of 0
    /// as a malformed range).
    pub fn write(&self, response: ApiVersionsResponse, version: i16) -> ApiVersionsResponse {
        if version < 3 || (self.supported.is_empty() && self.finalized.is_empty()) {
            return response;
        }
        let supported = self
            .supported
            .iter()
            .filter(|&&(_, min, _)| version >= 4 || min > 0)
            .map(|&(name, min, max)| {
                SupportedFeatureKey::default()
                    .with_name(name.into())
                    .with_min_version(min)
                    .with_max_version(max)
            })
            .collect();
        let finalized = self
            .finalized
            .iter()
            .map(|&(name, level)| {
                FinalizedFeatureKey::default()
                    .with_name(name.into())
                    .with_min_version_level(level)
                    .with_max_version_level(level)
            })
            .collect();
        response
            .with_supported_features(supported)
            .with_finalized_features_epoch(self.epoch)
            .with_finalized_features(finalized)
    }

    /// These features at epoch `offset` when that is higher: the offset of the metadata
    /// log's last record, as Kafka's brokers answer (the offset of their metadata image,
    /// which moves with every record, not only with features).
    pub fn at_least_epoch(mut self, offset: i64) -> Features {
        self.epoch = self.epoch.max(offset);
        self
    }
}

/// The levels UpdateFeatures finalized since the cluster started, over the release's.
#[derive(Debug, Clone, Default)]
pub struct Updates {
    /// Feature name and its new level (0: no longer finalized), in the order first changed.
    levels: Vec<(String, i16)>,
    /// Updates applied: each moves the finalized epoch on, as Kafka's metadata offset moves.
    applied: i64,
}

impl Updates {
    /// `features` with these updates.
    pub fn apply(&self, features: &Features) -> Features {
        let mut features = features.clone();
        for (name, level) in &self.levels {
            let position = features.finalized.iter().position(|(n, _)| n == name);
            match (position, *level) {
                (Some(i), 0) => {
                    features.finalized.remove(i);
                }
                (Some(i), level) => features.finalized[i].1 = level,
                (None, 0) => {}
                (None, level) => {
                    // A feature finalized for the first time: its name from the supported
                    // list (every updatable feature is there).
                    if let Some(&(known, _, _)) =
                        features.supported.iter().find(|(n, _, _)| n == name)
                    {
                        features.finalized.push((known, level));
                    }
                }
            }
        }
        if !self.levels.is_empty() {
            // Kafka lists updated levels in the order of the `HashMap` it copies them into,
            // sized for them (`new HashMap<>(n)`).
            let mut map = JavaHashMap::with_capacity(features.finalized.len());
            for &(name, level) in &features.finalized {
                map.insert(name.to_owned(), (name, level));
            }
            features.finalized = map.iter().map(|(_, &entry)| entry).collect();
        }
        features.epoch = FINALIZED_EPOCH + self.applied;
        features
    }

    /// Records one UpdateFeatures' new levels.
    pub fn set(&mut self, levels: impl IntoIterator<Item = (String, i16)>) {
        for (name, level) in levels {
            match self.levels.iter_mut().find(|(n, _)| *n == name) {
                Some(entry) => entry.1 = level,
                None => self.levels.push((name, level)),
            }
        }
        self.applied += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_version_levels_round_trip() {
        for version in [TransactionVersion::V1, TransactionVersion::V2] {
            assert_eq!(
                TransactionVersion::from_level(version.level()),
                Some(version)
            );
        }
        assert_eq!(TransactionVersion::from_level(0), None);
        assert_eq!(TransactionVersion::from_level(3), None);
    }

    #[test]
    fn every_kraft_release_finalizes_its_newest_metadata_version() {
        let kraft = ["3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9"]
            .into_iter()
            .chain(["4.0", "4.1", "4.2", "4.3", "4.4"]);
        for name in kraft {
            let release = Release::parse(name).unwrap();
            let features = Features::of(Some(release), TransactionVersion::V2);
            let (_, _, max) = features
                .supported
                .iter()
                .find(|(feature, _, _)| *feature == "metadata.version")
                .copied()
                .unwrap_or_else(|| panic!("{name}: no metadata.version"));
            assert_eq!(features.finalized("metadata.version"), Some(max), "{name}");
        }
        // The ZooKeeper releases define none.
        let zookeeper = Features::of(Some(Release::parse("3.2").unwrap()), TransactionVersion::V2);
        assert!(zookeeper.supported.is_empty() && zookeeper.finalized.is_empty());
    }

    #[test]
    fn transaction_version_is_chosen_where_the_release_has_it() {
        let release = Release::parse("4.0").unwrap();
        for version in [TransactionVersion::V1, TransactionVersion::V2] {
            let features = Features::of(Some(release), version);
            assert_eq!(
                features.finalized("transaction.version"),
                Some(version.level())
            );
        }
        let release = Release::parse("3.8").unwrap();
        let features = Features::of(Some(release), TransactionVersion::V1);
        assert_eq!(features.finalized("transaction.version"), None);
    }

    #[test]
    fn older_releases_have_no_transaction_version() {
        let release = Release::parse("3.9").unwrap();
        let features = Features::of(Some(release), TransactionVersion::V2);
        assert_eq!(features.finalized("transaction.version"), None);
        assert_eq!(features.finalized("metadata.version"), Some(21));
        let none = Features::of(Some(Release::parse("2.8").unwrap()), TransactionVersion::V2);
        let response = none.write(ApiVersionsResponse::default(), 3);
        assert_eq!(response, ApiVersionsResponse::default());
    }
}
