//! [`ErrorCode`]: Kafka's error codes, generated from the table the import tool takes from
//! the pinned `kafka-clients` jar (`schemas/error-codes.tsv`).

use std::fmt;

/// A Kafka error code, as found in the `ErrorCode` fields of responses.
///
/// A newtype over the wire value, so every `i16` converts both ways without loss: codes this
/// crate does not know (a newer broker's) are kept as they are, and report no
/// [`name`](ErrorCode::name). Each code of Kafka's table is an associated constant named as
/// Kafka names it, usable in `match` patterns.
///
/// ```
/// use kafka_codec::ErrorCode;
///
/// let code = ErrorCode::from(6);
/// assert_eq!(code, ErrorCode::NOT_LEADER_OR_FOLLOWER);
/// assert_eq!(code.name(), Some("NOT_LEADER_OR_FOLLOWER"));
/// assert!(code.is_retriable());
/// assert_eq!(code.to_string(), "NOT_LEADER_OR_FOLLOWER (6)");
///
/// let newer = ErrorCode::from(31000);
/// assert_eq!(newer.name(), None);
/// assert_eq!(i16::from(newer), 31000);
/// assert!(!newer.is_retriable());
///
/// match ErrorCode::from(0) {
///     ErrorCode::NONE => {}
///     other => panic!("{other}"),
/// }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ErrorCode(i16);

include!(concat!(env!("OUT_DIR"), "/error_codes.rs"));

impl ErrorCode {
    /// The code for a wire value (known or not).
    pub const fn new(code: i16) -> Self {
        ErrorCode(code)
    }

    /// The wire value.
    pub const fn code(self) -> i16 {
        self.0
    }

    /// Kafka's name for the code (`UNKNOWN_TOPIC_OR_PARTITION`), or `None` for a code that is
    /// not in Kafka 4.4.0's table.
    pub const fn name(self) -> Option<&'static str> {
        match Self::lookup(self.0) {
            Some((name, _)) => Some(name),
            None => None,
        }
    }

    /// Whether the code is in Kafka 4.4.0's table.
    pub const fn is_known(self) -> bool {
        Self::lookup(self.0).is_some()
    }

    /// Whether a client may send the same request again and expect it to succeed (Kafka's
    /// exception for the code is a `RetriableException`). Unknown codes are not retriable:
    /// Kafka's clients read them as `UNKNOWN_SERVER_ERROR`, which is not.
    pub const fn is_retriable(self) -> bool {
        match Self::lookup(self.0) {
            Some((_, retriable)) => retriable,
            None => false,
        }
    }

    /// Name and retriability of a known code: a binary search of [`ErrorCode::KNOWN`], which
    /// is ascending.
    const fn lookup(code: i16) -> Option<(&'static str, bool)> {
        let (mut low, mut high) = (0, Self::KNOWN.len());
        while low < high {
            let middle = low + (high - low) / 2;
            let known = Self::KNOWN[middle].0;
            if known == code {
                return Some(Self::NAMES[middle]);
            } else if known < code {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        None
    }

    /// The code Kafka calls `name` (`"NOT_CONTROLLER"`), if it is in the table.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        Self::NAMES
            .iter()
            .position(|(known, _)| *known == name)
            .map(|index| Self::KNOWN[index])
    }

    /// Whether the code is anything but `NONE`.
    pub const fn is_error(self) -> bool {
        self.0 != 0
    }

    /// `Ok(())` for `NONE`, else `Err(self)`, for `?` on a response's error code.
    ///
    /// ```
    /// use kafka_codec::ErrorCode;
    /// assert_eq!(ErrorCode::from(0).ok(), Ok(()));
    /// assert_eq!(ErrorCode::from(41).ok(), Err(ErrorCode::NOT_CONTROLLER));
    /// ```
    pub const fn ok(self) -> Result<(), ErrorCode> {
        if self.is_error() {
            Err(self)
        } else {
            Ok(())
        }
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> Self {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> Self {
        code.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(
                f,
                "error code {} (not in Kafka {}'s table)",
                self.0,
                crate::KAFKA_VERSION
            ),
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "ErrorCode::{name}"),
            None => write!(f, "ErrorCode({})", self.0),
        }
    }
}

impl std::error::Error for ErrorCode {}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ApiKey::error_code_fields`, generated from the schemas: a few places read off the
    /// schema files by hand (ProduceResponse's PartitionResponses, FetchResponse's top-level
    /// ErrorCode from v7, DescribeClusterResponse's top level).
    #[test]
    fn where_responses_carry_error_codes() {
        use crate::{ApiKey, VersionRange};
        assert_eq!(
            ApiKey::Produce.error_code_fields(),
            [(
                "responses[].partitionResponses[].errorCode",
                ApiKey::Produce.valid_versions()
            )]
        );
        let fetch = ApiKey::Fetch.error_code_fields();
        let valid = ApiKey::Fetch.valid_versions();
        assert!(fetch.contains(&("errorCode", VersionRange::new(7, valid.max))));
        assert!(fetch.contains(&("responses[].partitions[].errorCode", valid)));
        assert!(ApiKey::DescribeCluster
            .error_code_fields()
            .iter()
            .any(|(path, _)| *path == "errorCode"));
        // Every API has somewhere to put an error.
        for api in ApiKey::ALL {
            assert!(!api.error_code_fields().is_empty(), "{api}");
        }
    }

    #[test]
    fn every_i16_round_trips_and_known_codes_have_unique_names() {
        for code in i16::MIN..=i16::MAX {
            let error = ErrorCode::from(code);
            assert_eq!(i16::from(error), code);
            if let Some(name) = error.name() {
                assert_eq!(ErrorCode::from_name(name), Some(error));
            }
        }
        assert!(ErrorCode::KNOWN.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            ErrorCode::KNOWN.len(),
            (i16::MIN..=i16::MAX)
                .filter(|&c| ErrorCode::from(c).is_known())
                .count()
        );
        assert_eq!(ErrorCode::from_name("NO_SUCH_ERROR"), None);
    }

    #[test]
    fn none_is_not_an_error_and_unknown_codes_display_their_number() {
        assert!(!ErrorCode::NONE.is_error());
        assert!(!ErrorCode::NONE.is_retriable());
        assert_eq!(ErrorCode::default(), ErrorCode::NONE);
        assert_eq!(
            format!("{:?}", ErrorCode::from(-1)),
            "ErrorCode::UNKNOWN_SERVER_ERROR"
        );
        assert_eq!(format!("{:?}", ErrorCode::from(-2)), "ErrorCode(-2)");
        assert_eq!(
            ErrorCode::from(-2).to_string(),
            "error code -2 (not in Kafka 4.4.0's table)"
        );
    }
}
