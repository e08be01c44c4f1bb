//! The feature flags (KIP-584) ApiVersions v3+ carries: the features a node supports, with
//! their level ranges, and the levels the cluster finalized, with the epoch they were
//! finalized at. Clients read them to pick a protocol: the Java producer uses transaction
//! version 2 (KIP-890: Produce v12 adds partitions, EndTxn v5 bumps the epoch) only when
//! `transaction.version` is finalized at 2 or more.
//!
//! The names, ranges and levels (and their order) are those of a real broker's answer,
//! committed as fixtures in `tests/data/` and compared by `tests/features.rs`.

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

/// The epoch the cluster's features were finalized at. Kafka's is the metadata log offset of
/// the last feature level record (41 on a freshly formatted 4.4 broker, other numbers on its
/// controller); clients only compare epochs, keeping the features of the highest, and every
/// node here answers the same.
pub const FINALIZED_EPOCH: i64 = 1;

/// One release's features: `(name, min, max)` supported, `(name, level)` finalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    supported: &'static [(&'static str, i16, i16)],
    finalized: Vec<(&'static str, i16)>,
}

/// Kafka 4.4 (tests/data/kafka-4.4-api-versions-v4.hex), in its order.
const SUPPORTED_4_4: &[(&str, i16, i16)] = &[
    ("group.version", 0, 1),
    ("kraft.version", 0, 1),
    ("metadata.version", 7, 33),
    ("share.version", 0, 2),
    ("streams.version", 0, 1),
    ("transaction.version", 0, 2),
    ("eligible.leader.replicas.version", 0, 1),
];

/// Kafka 3.9 (tests/data/kafka-3.9-api-versions-v4.hex).
const SUPPORTED_3_9: &[(&str, i16, i16)] = &[("kraft.version", 0, 1), ("metadata.version", 1, 21)];

impl Features {
    /// What a broker of `release` (`None`: the newest) answers, freshly formatted as
    /// `kafka-storage format --standalone` leaves it, with `transaction_version` finalized
    /// where the release has the feature. Known for 4.4 and 3.9 (read from their brokers);
    /// releases before KIP-584 (2.7) had none, and the ZooKeeper releases after it
    /// finalized none; the KRaft releases 3.3-3.8 and 4.0-4.3 are answered without
    /// features too, for now (their levels have not been read from their brokers).
    pub fn of(release: Option<Release>, transaction_version: TransactionVersion) -> Features {
        let release = release.unwrap_or_else(Release::newest);
        match release.name() {
            "4.4" => Features {
                supported: SUPPORTED_4_4,
                finalized: vec![
                    ("group.version", 1),
                    ("kraft.version", 1),
                    ("share.version", 2),
                    ("metadata.version", 33),
                    ("streams.version", 1),
                    ("transaction.version", transaction_version.level()),
                    ("eligible.leader.replicas.version", 1),
                ],
            },
            "3.9" => Features {
                supported: SUPPORTED_3_9,
                finalized: vec![("kraft.version", 1), ("metadata.version", 21)],
            },
            _ => Features {
                supported: &[],
                finalized: Vec::new(),
            },
        }
    }

    /// The level `name` is finalized at, if it is.
    pub fn finalized(&self, name: &str) -> Option<i16> {
        self.finalized
            .iter()
            .find(|(finalized, _)| *finalized == name)
            .map(|&(_, level)| level)
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
            .with_finalized_features_epoch(FINALIZED_EPOCH)
            .with_finalized_features(finalized)
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
