//! What the code `kafka-codec-codegen` emits is written against: each generated file starts
//! with `use <crate>::codegen::*;` and then names these items plainly.
//!
//! **Not API.** Public only so that generated code reaches it through any crate path (see
//! `kafka_codec_codegen::Generator::crate_path`), as `prost` does with its encoding module;
//! hidden from the documentation, and its items may change or go in any release, minor or
//! patch. Nothing here is needed to use the crate: messages encode, decode and speak JSON
//! through [`Message`] and the frame types.

#[doc(no_inline)]
pub use crate::message::{DecodeFields, EncodeFields, Message, MessageKind};
#[doc(no_inline)]
pub use crate::versions::VersionRange;
#[doc(no_inline)]
pub use crate::wire::{
    self, DecodeError, DecodeErrorKind, Decoder, EncodeError, EncodeErrorKind, PrimitiveArray,
    RawTaggedField, TaggedFields, Utf8Bytes, Uuid,
};
#[doc(no_inline)]
pub use bytes::{BufMut, Bytes};

#[cfg(feature = "json")]
#[doc(no_inline)]
pub use crate::json::{self, Json, JsonOptions, JsonOut, JsonSink, JsonSource, TranscodeError};
#[cfg(feature = "json")]
#[doc(no_inline)]
pub use crate::json::{JsonError, JsonErrorKind};
#[cfg(feature = "json")]
#[doc(no_inline)]
pub use crate::message::{JsonFields, TranscodeFields};
#[cfg(feature = "json")]
#[doc(no_inline)]
pub use serde_json::{Map, Value};

#[cfg(feature = "views")]
#[doc(no_inline)]
pub use crate::view_struct;
#[cfg(feature = "views")]
#[doc(no_inline)]
pub use crate::wire::view::{
    check_bool_array, check_bytes, check_bytes_array, check_count, check_fixed_array,
    check_fixed_array_field, check_str, check_str_array, check_struct, check_struct_array, Checked,
    IntoOwned, Lazy, ViewCursor, ViewIter, ViewMark, ViewMode, Walk,
};
#[cfg(feature = "views")]
#[doc(no_inline)]
pub use crate::wire::view::{
    collect_fields, collect_values, TaggedSection, ViewArray, ViewValue, ViewVisitor,
};
#[cfg(feature = "views")]
#[doc(no_inline)]
pub use crate::wire::view::{collect_via_accessors, ViaAccessors};

#[cfg(feature = "arbitrary")]
#[doc(no_inline)]
pub use crate::random::{self, arbitrary::Unstructured, Random, RandomOptions};

/// Adds the field a value belongs to to the path of its error: `d.read_i32().at("LeaderId")?`.
///
/// One small generic function per value type, where a `map_err` closure would be one more
/// function per field.
pub trait AtField {
    /// The result, with `field` added to the error's path.
    fn at(self, field: &'static str) -> Self;
}

macro_rules! at_field {
    ($($error:ty),*) => {$(
        impl<T> AtField for Result<T, $error> {
            #[inline]
            fn at(self, field: &'static str) -> Self {
                match self {
                    Ok(value) => Ok(value),
                    Err(error) => Err(error.at(field)),
                }
            }
        }
    )*};
}

at_field!(DecodeError, EncodeError);
#[cfg(feature = "json")]
at_field!(JsonError, TranscodeError);
