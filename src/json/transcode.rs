//! Kafka's JSON form written straight from wire bytes (see "Straight from wire bytes" in
//! [`crate::json`]): the entry points, their error, and [`JsonOut`], what the generated
//! `TranscodeFields` code writes to.

use super::{
    write_bool, write_f64, write_i16, write_i32, write_i64, write_i8, write_records, write_u16,
    write_u32, write_uuid, JsonOptions, JsonSink,
};
#[cfg(any(feature = "client", feature = "broker"))]
use crate::frame::{check_frame_size, finish};
use crate::frame::{DecodeOptions, TrailingBytes};
use crate::message::{Message, TranscodeFields};
#[cfg(any(feature = "client", feature = "broker"))]
use crate::messages;
use crate::wire::{DecodeError, DecodeErrorKind, Decoder, EncodeError, FixedWidth, Uuid};
#[cfg(feature = "client")]
use crate::ApiKey;
use bytes::Bytes;

/// Why bytes could not be shown as Kafka's JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TranscodeError {
    /// The bytes are not a valid encoding: the error decoding them gives. Checked first: bytes
    /// that are invalid anywhere give this, even where writing their JSON failed earlier.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The bytes decode, but the message has no JSON form (a float that is not finite, a
    /// `records` field its [`RecordsJson`](super::RecordsJson) hook refuses): the error writing
    /// its JSON gives.
    #[error(transparent)]
    Json(#[from] EncodeError),
}

impl TranscodeError {
    /// Adds an enclosing field to the path.
    #[doc(hidden)]
    #[cold]
    pub fn at(self, field: &'static str) -> Self {
        match self {
            TranscodeError::Decode(e) => TranscodeError::Decode(e.at(field)),
            TranscodeError::Json(e) => TranscodeError::Json(e.at(field)),
        }
    }

    /// Adds an enclosing array index to the path.
    #[doc(hidden)]
    #[cold]
    pub fn at_index(self, index: usize) -> Self {
        match self {
            TranscodeError::Decode(e) => TranscodeError::Decode(e.at_index(index)),
            TranscodeError::Json(e) => TranscodeError::Json(e.at_index(index)),
        }
    }

    /// Records the message and version, unless an inner message already did.
    #[doc(hidden)]
    #[cold]
    pub fn in_message(self, message: &'static str, version: i16) -> Self {
        match self {
            TranscodeError::Decode(e) => TranscodeError::Decode(e.in_message(message, version)),
            TranscodeError::Json(e) => TranscodeError::Json(e.in_message(message, version)),
        }
    }
}

/// What a transcode found besides the JSON it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Transcoded {
    /// Bytes after the body that [`TrailingBytes::Allow`] let through (always 0 with
    /// [`TrailingBytes::Reject`], which refuses them).
    pub trailing_bytes: usize,
}

/// Kafka's JSON of a request frame (without its size prefix), `{"header": …, "body": …}`,
/// written to `out` straight from the bytes: the text
/// [`RequestFrame::decode_with`](crate::RequestFrame::decode_with) and then
/// [`RequestFrame::write_json`](crate::RequestFrame::write_json) give, and the same error
/// where they fail (see [`crate::json`]). On an error `out` holds a partial value.
///
/// ```
/// use kafka_codec::json::{transcode_request, JsonOptions, JsonWriter};
/// use kafka_codec::messages::MetadataRequest;
/// use kafka_codec::{DecodeOptions, RequestFrame};
///
/// let frame = RequestFrame::new(MetadataRequest::default(), 12, 7).with_client_id("admin");
/// let bytes = frame.encode_to_bytes().unwrap();
///
/// let mut text = Vec::new();
/// let mut writer = JsonWriter::compact(&mut text);
/// let done = transcode_request(&bytes, &DecodeOptions::default(), &JsonOptions::default(), &mut writer)
///     .unwrap();
/// writer.finish().unwrap();
/// assert_eq!(done.trailing_bytes, 0);
/// let value: kafka_codec::serde_json::Value = kafka_codec::serde_json::from_slice(&text).unwrap();
/// assert_eq!(value, frame.to_json().unwrap());
/// ```
#[cfg(feature = "broker")]
#[inline]
pub fn transcode_request(
    frame: &Bytes,
    options: &DecodeOptions,
    json_options: &JsonOptions<'_>,
    out: &mut dyn JsonSink,
) -> Result<Transcoded, TranscodeError> {
    decode_errors_first(json_options, out, |out| {
        check_frame_size(frame.len(), &options.limits)?;
        let (api, version) = crate::RequestFrame::peek_api(frame)?;
        let mut decoder = Decoder::with_limits(frame, options.limits);
        out.begin_object();
        out.key("header");
        messages::RequestHeader::transcode_from(
            &mut decoder,
            api.request_header_version(version),
            out,
        )?;
        out.key("body");
        crate::Request::transcode_from(api, &mut decoder, version, out)?;
        out.end_object();
        finish(&decoder, options)?;
        Ok(trailing(&decoder))
    })
}

/// Kafka's JSON of a response frame (without its size prefix) of `api_key` at `version`,
/// `{"apiKey": …, "apiVersion": …, "header": …, "body": …}`, written to `out` straight from
/// the bytes: the text [`ResponseFrame::decode_with`](crate::ResponseFrame::decode_with) and
/// then [`ResponseFrame::write_json`](crate::ResponseFrame::write_json) give, and the same
/// error where they fail (see [`crate::json`]). On an error `out` holds a partial value.
#[cfg(feature = "client")]
#[inline]
pub fn transcode_response(
    frame: &Bytes,
    api_key: ApiKey,
    version: i16,
    options: &DecodeOptions,
    json_options: &JsonOptions<'_>,
    out: &mut dyn JsonSink,
) -> Result<Transcoded, TranscodeError> {
    decode_errors_first(json_options, out, |out| {
        check_frame_size(frame.len(), &options.limits)?;
        let mut decoder = Decoder::with_limits(frame, options.limits);
        out.begin_object();
        out.key("apiKey");
        out.i16(api_key.key());
        out.key("apiVersion");
        out.i16(version);
        out.key("header");
        messages::ResponseHeader::transcode_from(
            &mut decoder,
            api_key.response_header_version(version),
            out,
        )?;
        out.key("body");
        crate::Response::transcode_from(api_key, &mut decoder, version, out)?;
        out.end_object();
        finish(&decoder, options)?;
        Ok(trailing(&decoder))
    })
}

/// Kafka's JSON of one message `M` at `version` (a body, a header or a data schema), written
/// to `out` straight from `input`: the text [`Message::decode_with_limits`] (or, with
/// [`TrailingBytes::Reject`], [`Message::decode_exact`]) and then
/// [`Message::write_json_with`] give, and the same error where they fail.
#[inline]
pub fn transcode_message<M: Message + TranscodeFields>(
    input: &Bytes,
    version: i16,
    options: &DecodeOptions,
    json_options: &JsonOptions<'_>,
    out: &mut dyn JsonSink,
) -> Result<Transcoded, TranscodeError> {
    decode_errors_first(json_options, out, |out| {
        let mut decoder = Decoder::with_limits(input, options.limits);
        M::transcode_from(&mut decoder, version, out)?;
        if options.trailing_bytes == TrailingBytes::Reject && decoder.remaining() != 0 {
            return Err(decoder
                .error(DecodeErrorKind::TrailingBytes(decoder.remaining()))
                .in_message(M::NAME, version)
                .into());
        }
        Ok(trailing(&decoder))
    })
}

fn trailing(decoder: &Decoder<'_>) -> Transcoded {
    Transcoded {
        trailing_bytes: decoder.remaining(),
    }
}

/// Runs `walk` writing to `out`. Decoding reads every byte before anything is written, so a
/// decode error anywhere comes before a JSON error; when `walk` fails writing JSON, it runs
/// again writing nothing, to the end, and a decode error it meets wins.
fn decode_errors_first(
    options: &JsonOptions<'_>,
    out: &mut dyn JsonSink,
    walk: impl Fn(&mut JsonOut<'_>) -> Result<Transcoded, TranscodeError>,
) -> Result<Transcoded, TranscodeError> {
    match walk(&mut JsonOut::new(out, options)) {
        Err(TranscodeError::Json(error)) => match walk(&mut JsonOut::checking()) {
            Err(TranscodeError::Decode(error)) => Err(error.into()),
            _ => Err(error.into()),
        },
        result => result,
    }
}

/// Where generated transcoders write: a [`JsonSink`] with the JSON options, or nowhere (a
/// walk that only checks the bytes: it writes nothing and refuses nothing JSON would refuse,
/// and calls no [`RecordsJson`](super::RecordsJson) hook).
///
/// Not for use outside generated code: the methods write values as the generated
/// `write_json_fields` does, through the same `json::write_*` functions.
#[doc(hidden)]
pub struct JsonOut<'a> {
    sink: Option<&'a mut dyn JsonSink>,
    options: &'a JsonOptions<'a>,
}

/// The options of a walk that writes nothing.
const NO_OPTIONS: &JsonOptions<'static> = &JsonOptions {
    lenient: false,
    records: None,
};

impl<'a> JsonOut<'a> {
    /// Writing to `sink` with `options`.
    pub fn new(sink: &'a mut dyn JsonSink, options: &'a JsonOptions<'a>) -> Self {
        JsonOut {
            sink: Some(sink),
            options,
        }
    }

    /// Writing nothing: a walk that only checks the bytes.
    pub fn checking() -> JsonOut<'static> {
        JsonOut {
            sink: None,
            options: NO_OPTIONS,
        }
    }

    /// Whether anything is written.
    #[inline]
    pub fn writes(&self) -> bool {
        self.sink.is_some()
    }

    /// The sink and the options, when writing: for values written by the generated JSON
    /// writer (the decoded values of tagged fields).
    #[inline]
    pub fn parts(&mut self) -> Option<(&mut dyn JsonSink, &JsonOptions<'a>)> {
        let options = self.options;
        match &mut self.sink {
            Some(sink) => Some((&mut **sink, options)),
            None => None,
        }
    }

    #[inline]
    fn with(&mut self, write: impl FnOnce(&mut dyn JsonSink)) {
        if let Some(sink) = self.sink.as_deref_mut() {
            write(sink);
        }
    }

    /// `{`.
    #[inline]
    pub fn begin_object(&mut self) {
        self.with(|out| out.begin_object());
    }

    /// The key of the next value.
    #[inline]
    pub fn key(&mut self, key: &str) {
        self.with(|out| out.key(key));
    }

    /// `}`.
    #[inline]
    pub fn end_object(&mut self) {
        self.with(|out| out.end_object());
    }

    /// `null`.
    #[inline]
    pub fn null(&mut self) {
        self.with(|out| out.null());
    }

    /// A `bool`.
    #[inline]
    pub fn bool(&mut self, value: bool) {
        self.with(|out| write_bool(out, &value));
    }

    /// An `int8`.
    #[inline]
    pub fn i8(&mut self, value: i8) {
        self.with(|out| write_i8(out, &value));
    }

    /// An `int16`.
    #[inline]
    pub fn i16(&mut self, value: i16) {
        self.with(|out| write_i16(out, &value));
    }

    /// A `uint16`.
    #[inline]
    pub fn u16(&mut self, value: u16) {
        self.with(|out| write_u16(out, &value));
    }

    /// An `int32`.
    #[inline]
    pub fn i32(&mut self, value: i32) {
        self.with(|out| write_i32(out, &value));
    }

    /// A `uint32`.
    #[inline]
    pub fn u32(&mut self, value: u32) {
        self.with(|out| write_u32(out, &value));
    }

    /// An `int64`.
    #[inline]
    pub fn i64(&mut self, value: i64) {
        self.with(|out| write_i64(out, &value));
    }

    /// A `float64`; JSON has no NaN or infinity (a checking walk does not mind).
    #[inline]
    pub fn f64(&mut self, value: f64) -> Result<(), EncodeError> {
        match self.sink.as_deref_mut() {
            Some(out) => write_f64(out, value),
            None => Ok(()),
        }
    }

    /// A `uuid`.
    #[inline]
    pub fn uuid(&mut self, value: Uuid) {
        self.with(|out| write_uuid(out, &value));
    }

    /// A `string`.
    #[inline]
    pub fn str(&mut self, value: &str) {
        self.with(|out| out.str(value));
    }

    /// A nullable `string`.
    #[inline]
    pub fn nullable_str(&mut self, value: Option<&str>) {
        match value {
            Some(value) => self.str(value),
            None => self.null(),
        }
    }

    /// `bytes`.
    #[inline]
    pub fn bytes(&mut self, value: &[u8]) {
        self.with(|out| out.bytes(value));
    }

    /// Nullable `bytes`.
    #[inline]
    pub fn nullable_bytes(&mut self, value: Option<&[u8]>) {
        match value {
            Some(value) => self.bytes(value),
            None => self.null(),
        }
    }

    /// `records`: base64, or what the options' hook shows (a checking walk calls no hook).
    #[inline]
    pub fn records(&mut self, value: Bytes) -> Result<(), EncodeError> {
        let options = self.options;
        match self.sink.as_deref_mut() {
            Some(out) => write_records(out, &value, options),
            None => Ok(()),
        }
    }

    /// Nullable `records`.
    #[inline]
    pub fn nullable_records(&mut self, value: Option<Bytes>) -> Result<(), EncodeError> {
        match value {
            Some(value) => self.records(value),
            None => {
                self.null();
                Ok(())
            }
        }
    }

    /// An array of fixed-width values from their wire bytes (`[]int32`, `[]uuid`, ...), each
    /// written by `write`.
    #[inline]
    pub fn fixed_array<T: FixedWidth>(&mut self, bytes: &[u8], write: fn(&mut dyn JsonSink, &T)) {
        self.with(|out| {
            out.begin_array();
            for value in bytes.chunks_exact(T::WIDTH) {
                write(out, &T::from_be_slice(value));
            }
            out.end_array();
        });
    }

    /// A nullable array of fixed-width values.
    #[inline]
    pub fn nullable_fixed_array<T: FixedWidth>(
        &mut self,
        bytes: Option<&[u8]>,
        write: fn(&mut dyn JsonSink, &T),
    ) {
        match bytes {
            Some(bytes) => self.fixed_array(bytes, write),
            None => self.null(),
        }
    }

    /// An array of `float64`s from their wire bytes.
    pub fn f64_array(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        let Some(out) = self.sink.as_deref_mut() else {
            return Ok(());
        };
        out.begin_array();
        for (index, value) in bytes.chunks_exact(8).enumerate() {
            write_f64(out, f64::from_be_slice(value)).map_err(|e| e.at_index(index))?;
        }
        out.end_array();
        Ok(())
    }

    /// A nullable array of `float64`s.
    pub fn nullable_f64_array(&mut self, bytes: Option<&[u8]>) -> Result<(), EncodeError> {
        match bytes {
            Some(bytes) => self.f64_array(bytes),
            None => {
                self.null();
                Ok(())
            }
        }
    }

    /// An array of strings that must not be null, read from `decoder` as
    /// [`Decoder::read_string_array`] reads it.
    pub fn string_array(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
    ) -> Result<(), DecodeError> {
        let count = decoder.read_array_count(compact, string_min_size(compact))?;
        self.strings(decoder, compact, count)
    }

    /// A nullable array of strings, read as [`Decoder::read_nullable_string_array`] reads it.
    pub fn nullable_string_array(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
    ) -> Result<(), DecodeError> {
        match decoder.read_array_len(compact, string_min_size(compact))? {
            Some(count) => self.strings(decoder, compact, count),
            None => {
                self.null();
                Ok(())
            }
        }
    }

    fn strings(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
        count: usize,
    ) -> Result<(), DecodeError> {
        self.begin_array();
        for index in 0..count {
            let value = decoder.read_str(compact).map_err(|e| e.at_index(index))?;
            self.str(value);
        }
        self.end_array();
        Ok(())
    }

    /// An array of `bytes` (or `records`) that must not be null, read as the generated
    /// decoder reads it (`Decoder::read_array` of `Decoder::read_bytes`).
    pub fn bytes_array(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
    ) -> Result<(), DecodeError> {
        let count = decoder.read_array_count(compact, bytes_min_size(compact))?;
        self.byte_strings(decoder, compact, count)
    }

    /// A nullable array of `bytes` (or `records`).
    pub fn nullable_bytes_array(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
    ) -> Result<(), DecodeError> {
        match decoder.read_array_len(compact, bytes_min_size(compact))? {
            Some(count) => self.byte_strings(decoder, compact, count),
            None => {
                self.null();
                Ok(())
            }
        }
    }

    fn byte_strings(
        &mut self,
        decoder: &mut Decoder<'_>,
        compact: bool,
        count: usize,
    ) -> Result<(), DecodeError> {
        self.begin_array();
        for index in 0..count {
            let value = decoder
                .read_byte_slice(compact)
                .map_err(|e| e.at_index(index))?;
            self.bytes(value);
        }
        self.end_array();
        Ok(())
    }

    /// `[`.
    #[inline]
    pub fn begin_array(&mut self) {
        self.with(|out| out.begin_array());
    }

    /// `]`.
    #[inline]
    pub fn end_array(&mut self) {
        self.with(|out| out.end_array());
    }
}

/// The fewest bytes of a string that is not null: its length prefix (as the decoder counts
/// it for an array of strings).
fn string_min_size(compact: bool) -> usize {
    if compact {
        1
    } else {
        2
    }
}

/// The fewest bytes of `bytes` that are not null: its length prefix.
fn bytes_min_size(compact: bool) -> usize {
    if compact {
        1
    } else {
        4
    }
}
