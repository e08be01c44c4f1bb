//! Errors of reading Kafka's JSON form. The byte-level errors ([`DecodeError`],
//! [`EncodeError`]) and the field path they all share live in [`crate::wire`].
//!
//! [`DecodeError`]: crate::DecodeError
//! [`EncodeError`]: crate::EncodeError

use crate::wire::{located_error, Location};
use std::fmt;

/// What went wrong while reading Kafka's JSON form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// A JSON value of the wrong type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field needs.
        expected: &'static str,
        /// What the JSON held.
        found: &'static str,
    },
    /// A number outside the field's range, or not an integer.
    #[error("{value} is out of range for {ty}")]
    OutOfRange {
        /// The number, as text.
        value: String,
        /// The field's type.
        ty: &'static str,
    },
    /// A key the version requires is missing.
    #[error("required field is missing")]
    MissingField,
    /// `null` in a field that is never nullable.
    #[error("null is not allowed in this field")]
    UnexpectedNull,
    /// Text that is not valid base64.
    #[error("invalid base64")]
    InvalidBase64,
    /// Text that is not a Kafka UUID (at most [`crate::json::MAX_QUOTED_CHARS`] characters of
    /// it are kept).
    #[error("invalid UUID {0:?}")]
    InvalidUuid(String),
    /// A string longer than Kafka's limit of 32767 bytes.
    #[error("string of {0} bytes exceeds Kafka's limit of 32767")]
    StringTooLong(usize),
    /// A version outside the schema's valid versions.
    #[error("version {version} is not supported (valid: {valid})")]
    UnsupportedVersion {
        /// The version asked for.
        version: i16,
        /// The valid range, as text.
        valid: String,
    },
    /// An API key this crate does not know.
    #[error("unknown API key {0}")]
    UnknownApiKey(i16),
    /// A key that is not part of the form (forms that refuse unknown keys rather than drop
    /// them, such as the records form).
    #[error("unknown field {0:?}")]
    UnknownField(String),
    /// A key given twice in one JSON object: a JSON object model would keep only one of the
    /// two values without a word.
    #[error("key {key:?} is given twice in {path}")]
    DuplicateKey {
        /// The key (at most [`crate::json::MAX_QUOTED_CHARS`] characters of it).
        key: String,
        /// Where the object is, in the JSON's own keys (`header`, `topics[3]`).
        path: String,
    },
    /// Text that is not JSON.
    #[error("invalid JSON: {0}")]
    Syntax(String),
    /// A `records` field that the [`crate::json::RecordsJson`] hook cannot read.
    #[error("records: {0}")]
    Records(String),
    /// An API this crate knows but this build leaves out: its cargo feature is off.
    #[error("API {api} is not compiled in: enable kafka-codec's `{feature}` feature")]
    ApiNotCompiled {
        /// The API's name (`DescribeQuorum`).
        api: &'static str,
        /// The cargo feature that compiles it (`describe-quorum`).
        feature: &'static str,
    },
}

#[derive(Clone, PartialEq, Eq)]
struct JsonErrorDetail {
    kind: JsonErrorKind,
    location: Location,
    /// The key an [`JsonErrorKind::UnknownField`] was probably meant to be. Beside the kind
    /// rather than in it, so that the message reads `unknown field "topcs" at topics[0];
    /// did you mean "topics"?`, the path before the suggestion.
    suggestion: Option<&'static str>,
}

/// Reading Kafka's JSON form failed.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonError(Box<JsonErrorDetail>);

located_error!(JsonError, JsonErrorKind);

impl JsonError {
    /// An error of `kind`.
    pub fn new(kind: JsonErrorKind) -> Self {
        JsonError(Box::new(JsonErrorDetail {
            kind,
            location: Location::default(),
            suggestion: None,
        }))
    }

    /// For an [`JsonErrorKind::UnknownField`], the struct's key closest to the one given (a
    /// few edits away), which the message offers as "did you mean".
    pub fn suggestion(&self) -> Option<&'static str> {
        self.0.suggestion
    }

    /// This error, suggesting `key` as the one meant.
    pub(crate) fn suggest(mut self, key: Option<&'static str>) -> Self {
        self.0.suggestion = key;
        self
    }

    /// A [`JsonErrorKind::DuplicateKey`] is found where the object's own path is not yet
    /// known (the readers add enclosing fields on the way out, as for every error): at the
    /// top, the path travelled so far becomes the key's place, so the message names it once.
    pub(crate) fn place_duplicate(mut self) -> Self {
        let detail = &mut *self.0;
        if let JsonErrorKind::DuplicateKey { path, .. } = &mut detail.kind {
            let outer = std::mem::take(&mut detail.location.path).to_string();
            *path = match (outer.is_empty(), path.is_empty()) {
                (true, true) => "the top level".to_owned(),
                (true, false) => std::mem::take(path),
                (false, true) => outer,
                (false, false) if path.starts_with('[') => format!("{outer}{path}"),
                (false, false) => format!("{outer}.{path}"),
            };
        }
        self
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0.kind, self.0.location)?;
        if let Some(key) = self.0.suggestion {
            write!(f, "; did you mean {key:?}?")?;
        }
        Ok(())
    }
}
