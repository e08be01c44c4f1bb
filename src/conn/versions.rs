//! Version negotiation: what a peer supports (from its `ApiVersionsResponse`), the highest
//! version both sides speak, and the ApiVersions fallback.
//!
//! A connection starts with ApiVersions at the highest version this crate speaks
//! ([`ApiVersionsReply::first_version`]). A broker that cannot read that version answers
//! with a **version 0** body carrying `UNSUPPORTED_VERSION` and, since Kafka 2.4, its own
//! ApiVersions range; [`ClientConnection`](super::ClientConnection) reads such an answer at
//! v0 by itself, and [`ApiVersionsReply::read`] turns it into the version to retry with.

use crate::messages::api_versions_response::{ApiVersion, ApiVersionsResponse};
use crate::ErrorCode;
use crate::{ApiKey, VersionRange};
use std::collections::BTreeMap;
use std::fmt;

/// Why no version could be agreed on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NegotiationError {
    /// The peer does not list the API at all.
    #[error("the peer does not support {api}")]
    NotSupportedByPeer {
        /// The API.
        api: ApiKey,
    },
    /// Both sides know the API, but their version ranges do not overlap.
    #[error("no common version of {api}: ours {}, the peer's {theirs}", display_ours(.ours))]
    NoCommonVersion {
        /// The API.
        api: ApiKey,
        /// The versions we offered (`None`: we have no stable version and did not opt in to
        /// unstable ones).
        ours: Option<VersionRange>,
        /// The versions the peer advertised.
        theirs: VersionRange,
    },
    /// The ApiVersions answer carries an error other than the fallback case.
    #[error("ApiVersions failed: {0}")]
    ApiVersionsFailed(ErrorCode),
    /// The peer refused our ApiVersions version but offers none lower to retry with.
    #[error(
        "the peer refused ApiVersions v{sent} and offers no lower version to retry with{}",
        .peer_max.map(|v| format!(" (its highest is v{v})")).unwrap_or_default()
    )]
    NoApiVersionsFallback {
        /// The version we sent.
        sent: i16,
        /// The highest ApiVersions version the peer named, if it named one.
        peer_max: Option<i16>,
    },
    /// The peer lists an API key twice (Kafka never does; which entry counts is unclear).
    #[error("the peer lists API key {0} twice")]
    DuplicateApiKey(i16),
}

fn display_ours(ours: &Option<VersionRange>) -> String {
    match ours {
        Some(range) => range.to_string(),
        None => "none (only an unstable version)".into(),
    }
}

/// What one side supports: API key → version range, as an `ApiVersionsResponse` lists it.
///
/// Keys this crate does not know are kept ([`SupportedVersions::iter`] shows them), as are
/// empty ranges (min above max), which match nothing.
///
/// ```
/// use kafka_codec::conn::{NegotiationError, SupportedVersions};
/// use kafka_codec::{ApiKey, VersionRange};
///
/// let broker = SupportedVersions::from_ranges([
///     (ApiKey::Metadata.key(), VersionRange::new(0, 9)),
///     (ApiKey::InitProducerId.key(), VersionRange::new(0, 6)),
/// ]);
/// // The highest version both speak.
/// assert_eq!(broker.negotiate(ApiKey::Metadata), Ok(9));
/// // Never an unstable version unless asked for: InitProducerId v6 is unstable in Kafka 4.4.0.
/// assert!(ApiKey::InitProducerId.latest_version_unstable());
/// assert_eq!(broker.negotiate(ApiKey::InitProducerId), Ok(5));
/// let all = ApiKey::InitProducerId.valid_versions();
/// assert_eq!(broker.negotiate_within(ApiKey::InitProducerId, all), Ok(6));
/// // A typed error when there is nothing in common.
/// assert_eq!(
///     broker.negotiate(ApiKey::Fetch),
///     Err(NegotiationError::NotSupportedByPeer { api: ApiKey::Fetch })
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SupportedVersions {
    ranges: BTreeMap<i16, VersionRange>,
}

impl SupportedVersions {
    /// The table an `ApiVersionsResponse` lists. Its error code must be `NONE`
    /// ([`ApiVersionsReply::read`] handles the fallback case first).
    pub fn from_response(response: &ApiVersionsResponse) -> Result<Self, NegotiationError> {
        ErrorCode::from(response.error_code)
            .ok()
            .map_err(NegotiationError::ApiVersionsFailed)?;
        let mut ranges = BTreeMap::new();
        for entry in &response.api_keys {
            let range = VersionRange::new(entry.min_version, entry.max_version);
            if ranges.insert(entry.api_key, range).is_some() {
                return Err(NegotiationError::DuplicateApiKey(entry.api_key));
            }
        }
        Ok(SupportedVersions { ranges })
    }

    /// A table from (API key, range) pairs; a later pair for the same key replaces an earlier.
    pub fn from_ranges(ranges: impl IntoIterator<Item = (i16, VersionRange)>) -> Self {
        SupportedVersions {
            ranges: ranges.into_iter().collect(),
        }
    }

    /// What this crate speaks, for the given APIs, without unstable versions: the table a
    /// server built on it advertises (see [`SupportedVersions::to_api_keys`]).
    ///
    /// ```
    /// use kafka_codec::conn::SupportedVersions;
    /// use kafka_codec::{ApiKey, Listener};
    /// let controller_apis = ApiKey::ALL
    ///     .iter()
    ///     .copied()
    ///     .filter(|api| api.listeners().contains(&Listener::Controller));
    /// let ours = SupportedVersions::stable(controller_apis);
    /// assert!(ours.get(ApiKey::DescribeQuorum.key()).is_some());
    /// assert!(ours.get(ApiKey::Fetch.key()).is_some());
    /// assert!(ours.get(ApiKey::OffsetCommit.key()).is_none());
    /// ```
    pub fn stable(apis: impl IntoIterator<Item = ApiKey>) -> Self {
        Self::from_ranges(
            apis.into_iter()
                .filter_map(|api| Some((api.key(), api.stable_versions()?))),
        )
    }

    /// The range listed for an API key.
    pub fn get(&self, api_key: i16) -> Option<VersionRange> {
        self.ranges.get(&api_key).copied()
    }

    /// Every listed (API key, range), by key, including keys this crate does not know.
    pub fn iter(&self) -> impl Iterator<Item = (i16, VersionRange)> + '_ {
        self.ranges.iter().map(|(&key, &range)| (key, range))
    }

    /// How many API keys are listed.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether no API is listed.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The `ApiKeys` entries of an `ApiVersionsResponse` listing this table.
    pub fn to_api_keys(&self) -> Vec<ApiVersion> {
        self.iter()
            .map(|(api_key, range)| ApiVersion {
                api_key,
                min_version: range.min,
                max_version: range.max,
                ..Default::default()
            })
            .collect()
    }

    /// The versions of `api` that both `ours` and the peer support.
    pub fn common_versions(
        &self,
        api: ApiKey,
        ours: VersionRange,
    ) -> Result<VersionRange, NegotiationError> {
        let theirs = self
            .get(api.key())
            .ok_or(NegotiationError::NotSupportedByPeer { api })?;
        let common = VersionRange::new(ours.min.max(theirs.min), ours.max.min(theirs.max));
        if common.min > common.max {
            return Err(NegotiationError::NoCommonVersion {
                api,
                ours: Some(ours),
                theirs,
            });
        }
        Ok(common)
    }

    /// The highest version of `api` both sides support, among this crate's stable versions
    /// ([`ApiKey::stable_versions`]): an unstable version is never picked this way.
    pub fn negotiate(&self, api: ApiKey) -> Result<i16, NegotiationError> {
        match api.stable_versions() {
            Some(ours) => self.negotiate_within(api, ours),
            None => Err(NegotiationError::NoCommonVersion {
                api,
                ours: None,
                theirs: self
                    .get(api.key())
                    .ok_or(NegotiationError::NotSupportedByPeer { api })?,
            }),
        }
    }

    /// The highest version of `api` in `ours` that the peer supports. Pass
    /// `api.valid_versions()` to opt in to an unstable latest version, or a narrower range
    /// when the caller speaks only some versions.
    pub fn negotiate_within(
        &self,
        api: ApiKey,
        ours: VersionRange,
    ) -> Result<i16, NegotiationError> {
        self.common_versions(api, ours).map(|common| common.max)
    }
}

impl fmt::Display for SupportedVersions {
    /// `Name min-max` per API, comma-separated; unknown keys as `key N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, range)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match ApiKey::from_key(key) {
                Some(api) => write!(f, "{api} {range}")?,
                None => write!(f, "key {key} {range}")?,
            }
        }
        Ok(())
    }
}

/// What an `ApiVersionsResponse` means for the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiVersionsReply {
    /// The peer's table: negotiate with it.
    Supported(SupportedVersions),
    /// The peer cannot read the ApiVersions version we sent: send ApiVersions again at this
    /// version.
    RetryWith(i16),
}

impl ApiVersionsReply {
    /// The version to send ApiVersions at first: the highest stable one this crate speaks.
    pub fn first_version() -> i16 {
        ApiKey::ApiVersions
            .stable_versions()
            .unwrap_or(ApiKey::ApiVersions.valid_versions())
            .max
    }

    /// Reads the answer to an ApiVersions request sent at `sent_version`.
    ///
    /// `UNSUPPORTED_VERSION` is the fallback case, as Kafka's own client handles it: retry at
    /// the highest version both sides speak, taking the peer's ApiVersions range from the
    /// answer, or version 0 when the answer lists none (brokers before 2.4). Any other error
    /// fails, and so does a fallback that would not go below `sent_version`.
    ///
    /// ```
    /// use kafka_codec::conn::{ApiVersionsReply, SupportedVersions};
    /// use kafka_codec::messages::api_versions_response::{ApiVersion, ApiVersionsResponse};
    /// use kafka_codec::{ApiKey, ErrorCode};
    /// // An older broker refused ApiVersions v4: its v0 answer names its own range, 0-2.
    /// let refused = ApiVersionsResponse::default()
    ///     .with_error_code(ErrorCode::UNSUPPORTED_VERSION.code())
    ///     .with_api_keys(vec![ApiVersion::default()
    ///         .with_api_key(ApiKey::ApiVersions.key())
    ///         .with_min_version(0)
    ///         .with_max_version(2)]);
    /// assert_eq!(ApiVersionsReply::read(&refused, 4), Ok(ApiVersionsReply::RetryWith(2)));
    /// ```
    pub fn read(
        response: &ApiVersionsResponse,
        sent_version: i16,
    ) -> Result<ApiVersionsReply, NegotiationError> {
        let error = ErrorCode::from(response.error_code);
        if error != ErrorCode::UNSUPPORTED_VERSION {
            return SupportedVersions::from_response(response).map(ApiVersionsReply::Supported);
        }
        let theirs = response
            .api_keys
            .iter()
            .find(|entry| entry.api_key == ApiKey::ApiVersions.key())
            .map(|entry| VersionRange::new(entry.min_version, entry.max_version));
        let ours = VersionRange::new(
            ApiKey::ApiVersions.valid_versions().min,
            Self::first_version(),
        );
        let retry = match theirs {
            // The highest version in both ranges, if they meet.
            Some(theirs) => {
                let highest = theirs.max.min(ours.max);
                (highest >= theirs.min.max(ours.min)).then_some(highest)
            }
            None => Some(ours.min),
        };
        match retry {
            Some(version) if version < sent_version => Ok(ApiVersionsReply::RetryWith(version)),
            _ => Err(NegotiationError::NoApiVersionsFallback {
                sent: sent_version,
                peer_max: theirs.map(|range| range.max),
            }),
        }
    }
}
