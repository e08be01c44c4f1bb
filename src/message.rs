//! The [`Message`] trait every generated top-level message implements, and the three traits a
//! generated struct (message or nested) implements for what the build compiles:
//! [`EncodeFields`], [`DecodeFields`] and, with the `json` feature, [`JsonFields`].
//!
//! Which structs get which codec follows the cargo features: a client encodes requests and
//! decodes responses (`client`), a broker the reverse (`broker`); headers and data schemas
//! always get both. `Message`'s encode and decode methods exist for every message and are
//! callable where the message has the codec they need, so a build without the broker side
//! refuses `MetadataRequest::decode` at compile time rather than at run time.

#[cfg(feature = "json")]
use crate::json::{
    elements_of, read_token, Json, JsonOptions, JsonOut, JsonSink, JsonSource, TranscodeError,
    ValueSink,
};
#[cfg(feature = "json")]
use crate::json::{JsonError, JsonErrorKind};
use crate::versions::VersionRange;
use crate::wire::{
    DecodeError, DecodeErrorKind, DecodeLimits, Decoder, EncodeError, EncodeErrorKind, Segments,
};
use bytes::{Buf, BufMut, Bytes, BytesMut};
#[cfg(feature = "json")]
use serde_json::Value;

/// Reading one struct, a message or a nested struct, at a version.
///
/// The version is always the top-level message's version: nested fields are versioned by it.
/// Generated for headers and data schemas always, for responses with the `client` feature and
/// for requests with `broker`. The provided methods read the struct where it is nested; each
/// is compiled once per struct type, whichever fields use it.
pub trait DecodeFields: Sized {
    /// Reads the struct's fields (and its tagged section, in flexible versions). Does not
    /// check that `version` is valid; [`Message::decode_from`] does.
    fn decode_fields(decoder: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError>;

    /// The fewest bytes the struct takes on the wire at `version` (every field at its
    /// shortest, tagged ones absent): array counts are checked against it, so that an array
    /// can be reserved whole and never grows.
    fn min_wire_size(version: i16) -> usize;

    /// The struct as a field of another: counted against [`DecodeLimits::max_nesting`].
    fn decode_nested(decoder: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError> {
        decoder.enter()?;
        let value = Self::decode_fields(decoder, version);
        decoder.leave();
        value
    }

    /// A nullable struct field: a marker byte, negative for null, then the struct.
    fn decode_nullable(
        decoder: &mut Decoder<'_>,
        version: i16,
    ) -> Result<Option<Self>, DecodeError> {
        if decoder.read_struct_marker()? {
            Self::decode_nested(decoder, version).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An array of the struct that must not be null.
    fn decode_array(
        decoder: &mut Decoder<'_>,
        compact: bool,
        version: i16,
    ) -> Result<Vec<Self>, DecodeError> {
        let count = decoder.read_array_count(compact, Self::min_wire_size(version))?;
        Self::decode_elements(decoder, count, version)
    }

    /// A nullable array of the struct.
    fn decode_nullable_array(
        decoder: &mut Decoder<'_>,
        compact: bool,
        version: i16,
    ) -> Result<Option<Vec<Self>>, DecodeError> {
        match decoder.read_array_len(compact, Self::min_wire_size(version))? {
            Some(count) => Self::decode_elements(decoder, count, version).map(Some),
            None => Ok(None),
        }
    }

    /// `count` elements of an array, each a nested struct. A plain loop, so that each struct
    /// type costs one small function here and nothing more.
    ///
    /// Every element sits at the same depth, so the nesting limit is checked once, where the
    /// first element starts: the error it gives is the one that element's own check would.
    fn decode_elements(
        decoder: &mut Decoder<'_>,
        count: usize,
        version: i16,
    ) -> Result<Vec<Self>, DecodeError> {
        let mut values = decoder.reserve(count)?;
        if count == 0 {
            return Ok(values);
        }
        decoder.enter().map_err(|error| error.at_index(0))?;
        // Each element is written into the capacity reserved above rather than pushed: a
        // push keeps a growth path the compiler must prepare for on every element (DescribeQuorum
        // spent ~70 instructions per replica there).
        let slots = &mut values.spare_capacity_mut()[..count];
        for (index, slot) in slots.iter_mut().enumerate() {
            match Self::decode_fields(decoder, version) {
                Ok(value) => {
                    slot.write(value);
                }
                Err(error) => {
                    // SAFETY: the slots before `index` were written in earlier iterations
                    // (`MaybeUninit::write`), and `index < count <= capacity`; the elements
                    // are dropped with the vector.
                    unsafe { values.set_len(index) };
                    decoder.leave();
                    return Err(error.at_index(index));
                }
            }
        }
        // SAFETY: every one of the `count` slots was written by the loop above (it returns
        // before this line otherwise), and `count <= capacity`: the slice `[..count]` of the
        // spare capacity would have panicked before the loop if it were not.
        unsafe { values.set_len(count) };
        decoder.leave();
        Ok(values)
    }
}

/// Writing one struct, a message or a nested struct, at a version.
///
/// Generated for headers and data schemas always, for requests with the `client` feature and
/// for responses with `broker`. As with [`DecodeFields`], the provided methods write the
/// struct where it is nested, compiled once per struct type.
pub trait EncodeFields: Sized {
    /// Writes the struct's fields. Does not check that `version` is valid;
    /// [`Message::encode`] does.
    fn encode_fields(&self, buf: &mut impl BufMut, version: i16) -> Result<(), EncodeError>;

    /// Exactly the number of bytes [`EncodeFields::encode_fields`] writes.
    fn fields_len(&self, version: i16) -> usize;

    /// A nullable struct field: a marker byte (`-1` null, `1` present), then the struct.
    fn encode_nullable(
        value: Option<&Self>,
        buf: &mut impl BufMut,
        version: i16,
    ) -> Result<(), EncodeError> {
        match value {
            Some(value) => {
                buf.put_i8(1);
                value.encode_fields(buf, version)
            }
            None => {
                buf.put_i8(-1);
                Ok(())
            }
        }
    }

    /// An array of the struct: its length, then each element.
    fn encode_array(
        values: &[Self],
        buf: &mut impl BufMut,
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        crate::wire::put_length(buf, values.len(), compact)?;
        // The index is counted by hand: `enumerate()` would add an `Enumerate::next` per
        // struct type to the code every dependent compiles (2 % of the crate's LLVM IR).
        let mut index = 0;
        #[allow(clippy::explicit_counter_loop)]
        for value in values {
            if let Err(error) = value.encode_fields(buf, version) {
                return Err(error.at_index(index));
            }
            index += 1;
        }
        Ok(())
    }

    /// A nullable array of the struct.
    fn encode_nullable_array(
        values: Option<&[Self]>,
        buf: &mut impl BufMut,
        compact: bool,
        version: i16,
    ) -> Result<(), EncodeError> {
        match values {
            Some(values) => Self::encode_array(values, buf, compact, version),
            None => {
                crate::wire::put_null(buf, compact, false);
                Ok(())
            }
        }
    }

    /// Bytes [`EncodeFields::encode_array`] writes.
    fn array_len(values: &[Self], compact: bool, version: i16) -> usize {
        let mut len = crate::wire::array_prefix_len(values.len(), compact);
        for value in values {
            len += value.fields_len(version);
        }
        len
    }

    /// Bytes [`EncodeFields::encode_nullable_array`] writes.
    fn nullable_array_len(values: Option<&[Self]>, compact: bool, version: i16) -> usize {
        match values {
            Some(values) => Self::array_len(values, compact, version),
            None => crate::wire::array_prefix_len(0, compact),
        }
    }
}

/// Kafka's JSON form of one struct at a version (feature `json`; see [`crate::json`]).
#[cfg(feature = "json")]
pub trait JsonFields: Sized {
    /// The struct's JSON keys in any version, in schema order: what a misspelled key is
    /// compared with to suggest the one meant.
    const JSON_KEYS: &'static [&'static str];

    /// Writes the struct as a JSON object in Kafka's form, token by token, to `out`. On an
    /// error `out` holds a partial object.
    fn write_json_fields(
        &self,
        version: i16,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError>;

    /// The struct as a JSON object in Kafka's form: [`JsonFields::write_json_fields`] into a
    /// [`ValueSink`], so the tree and the text cannot differ.
    fn to_json_value(&self, version: i16, options: &JsonOptions<'_>) -> Result<Value, EncodeError> {
        ValueSink::collect(|sink| self.write_json_fields(version, options, sink))
    }

    /// Writes an array of the struct as a JSON array.
    fn write_json_array(
        values: &[Self],
        version: i16,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError> {
        out.begin_array();
        for (index, value) in values.iter().enumerate() {
            value
                .write_json_fields(version, options, out)
                .map_err(|e| e.at_index(index))?;
        }
        out.end_array();
        Ok(())
    }

    /// The struct from a JSON object token in Kafka's form (generated): its fields are read
    /// as the tokens come, with no tree in between.
    fn from_json_token(
        json: Json<'_>,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError>;

    /// The struct from the JSON object `source` holds.
    fn read_json_fields(
        source: &mut dyn JsonSource,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        read_token(source, |json| Self::from_json_token(json, version, options))
    }

    /// A nullable struct: `None` for JSON null.
    fn read_nullable_json_fields(
        source: &mut dyn JsonSource,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Option<Self>, JsonError> {
        read_token(source, |json| match json {
            Json::Null => Ok(None),
            json => Self::from_json_token(json, version, options).map(Some),
        })
    }

    /// An array of the struct.
    fn read_json_array(
        source: &mut dyn JsonSource,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Vec<Self>, JsonError> {
        elements_of(source, false, |element| {
            Self::read_json_fields(element, version, options)
        })
        .map(Option::unwrap_or_default)
    }

    /// A nullable array of the struct: `None` for JSON null.
    fn read_nullable_json_array(
        source: &mut dyn JsonSource,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Option<Vec<Self>>, JsonError> {
        elements_of(source, true, |element| {
            Self::read_json_fields(element, version, options)
        })
    }

    /// The struct from a JSON object in Kafka's form: [`JsonFields::read_json_fields`] over
    /// the tree, the same code that reads text.
    fn from_json_value(
        value: &Value,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError> {
        crate::json::from_value(value, |source| {
            Self::read_json_fields(source, version, options)
        })
        .map_err(JsonError::place_duplicate)
    }

    /// Empties the unknown tagged fields of the struct and of every struct nested in it: the
    /// struct becomes what its JSON form reads back as (the JSON shows no unknown tagged
    /// fields), without building that JSON.
    fn clear_unknown_tagged_fields(&mut self);

    /// An array of the struct as a JSON array.
    fn array_to_json(
        values: &[Self],
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Value, EncodeError> {
        ValueSink::collect(|sink| Self::write_json_array(values, version, options, sink))
    }
}

/// Kafka's JSON form of one struct written straight from its wire bytes (feature `json`, for
/// the structs that decode): the tokens [`JsonFields::write_json_fields`] writes for the value
/// [`DecodeFields::decode_fields`] reads, with no value in between (see
/// [`crate::json::transcode_message`]). Generated; the provided methods read the struct where
/// it is nested, as [`DecodeFields`]' do.
#[cfg(feature = "json")]
pub trait TranscodeFields: DecodeFields {
    /// Reads the struct's fields at `version` and writes them to `out` as one JSON object,
    /// checking the bytes as [`DecodeFields::decode_fields`] does. On an error `out` holds a
    /// partial object.
    fn transcode_fields(
        decoder: &mut Decoder<'_>,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError>;

    /// The struct as a field of another: counted against [`DecodeLimits::max_nesting`].
    fn transcode_nested(
        decoder: &mut Decoder<'_>,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError> {
        decoder.enter()?;
        let done = Self::transcode_fields(decoder, version, out);
        decoder.leave();
        done
    }

    /// A nullable struct field: a marker byte, negative for null, then the struct.
    fn transcode_nullable(
        decoder: &mut Decoder<'_>,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError> {
        if decoder.read_struct_marker()? {
            Self::transcode_nested(decoder, version, out)
        } else {
            out.null();
            Ok(())
        }
    }

    /// An array of the struct that must not be null: its count checked as
    /// [`DecodeFields::decode_array`] checks it, then each element where it lies.
    fn transcode_array(
        decoder: &mut Decoder<'_>,
        compact: bool,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError> {
        let count = decoder.read_array_count(compact, Self::min_wire_size(version))?;
        Self::transcode_elements(decoder, count, version, out)
    }

    /// A nullable array of the struct.
    fn transcode_nullable_array(
        decoder: &mut Decoder<'_>,
        compact: bool,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError> {
        match decoder.read_array_len(compact, Self::min_wire_size(version))? {
            Some(count) => Self::transcode_elements(decoder, count, version, out),
            None => {
                out.null();
                Ok(())
            }
        }
    }

    /// `count` elements of an array, as [`DecodeFields::decode_elements`] reads them (the
    /// nesting limit checked once, where the first element starts), each written as it is
    /// read: nothing is reserved.
    fn transcode_elements(
        decoder: &mut Decoder<'_>,
        count: usize,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError> {
        out.begin_array();
        if count > 0 {
            decoder.enter().map_err(|error| error.at_index(0))?;
            for index in 0..count {
                if let Err(error) = Self::transcode_fields(decoder, version, out) {
                    decoder.leave();
                    return Err(error.at_index(index));
                }
            }
            decoder.leave();
        }
        out.end_array();
        Ok(())
    }
}

/// Whether the top-level struct is a request, response, header or data schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A request body.
    Request,
    /// A response body.
    Response,
    /// A request or response header.
    Header,
    /// A payload carried inside other messages or logs (control records, consumer protocol).
    Data,
}

/// A top-level Kafka message: a request or response body, a header or a data schema.
///
/// Encoding needs the message's [`EncodeFields`], decoding its [`DecodeFields`] and JSON its
/// [`JsonFields`]; which of them a message has follows the cargo features: requests encode
/// with `client` and decode with `broker`, responses the other way round, headers and data
/// schemas always both, JSON with `json`. With the default features every message has all
/// three. A method whose codec is compiled out is refused when the program is compiled
/// ("the trait bound `MetadataRequest: DecodeFields` is not satisfied"), not at run time.
///
/// ```
/// use kafka_codec::bytes::Bytes;
/// use kafka_codec::messages::ApiVersionsRequest;
/// use kafka_codec::Message;
///
/// let request = ApiVersionsRequest::default()
///     .with_client_software_name("a".into())
///     .with_client_software_version("1".into());
/// let bytes = request.encode_to_bytes(3).unwrap();
/// assert_eq!(&bytes[..], [0x02, b'a', 0x02, b'1', 0x00]);
/// assert_eq!(request.encoded_len(3).unwrap(), bytes.len());
/// assert_eq!(ApiVersionsRequest::decode_exact(bytes, 3).unwrap(), request);
/// ```
pub trait Message: Default + Clone + std::fmt::Debug + PartialEq {
    /// The schema name, e.g. `DescribeQuorumResponse`.
    const NAME: &'static str;
    /// What kind of schema this is.
    const KIND: MessageKind;
    /// The API key of a request or response.
    const API_KEY: Option<i16>;
    /// The versions this crate can read and write.
    const VALID_VERSIONS: VersionRange;
    /// The first flexible version (compact encodings, tagged fields), if any.
    const FIRST_FLEXIBLE_VERSION: Option<i16>;

    /// Whether `version` uses the flexible encoding.
    fn is_flexible(version: i16) -> bool {
        Self::FIRST_FLEXIBLE_VERSION.is_some_and(|first| version >= first)
    }

    /// Writes the message at `version`.
    ///
    /// Fails if the version is not valid, if a field the version lacks holds a non-default
    /// value and is not ignorable, or if a value breaks a wire limit. On failure, part of the
    /// message may already be in `buf`; use [`Message::encode_to_bytes`] for all-or-nothing.
    fn encode(&self, buf: &mut impl BufMut, version: i16) -> Result<(), EncodeError>
    where
        Self: EncodeFields,
    {
        check_encode_version(Self::NAME, Self::VALID_VERSIONS, version)?;
        match self.encode_fields(buf, version) {
            Ok(()) => Ok(()),
            Err(error) => Err(error.in_message(Self::NAME, version)),
        }
    }

    /// The exact number of bytes [`Message::encode`] writes at `version`.
    fn encoded_len(&self, version: i16) -> Result<usize, EncodeError>
    where
        Self: EncodeFields,
    {
        check_encode_version(Self::NAME, Self::VALID_VERSIONS, version)?;
        Ok(self.fields_len(version))
    }

    /// Encodes into a new buffer of exactly the right size.
    fn encode_to_bytes(&self, version: i16) -> Result<Bytes, EncodeError>
    where
        Self: EncodeFields,
    {
        let mut buf = BytesMut::with_capacity(self.encoded_len(version)?);
        self.encode(&mut buf, version)?;
        Ok(buf.freeze())
    }

    /// Encodes into [`Segments`]: every `bytes`/`records` value of at least
    /// [`DEFAULT_SHARE_THRESHOLD`](crate::wire::DEFAULT_SHARE_THRESHOLD) bytes is a segment
    /// of its own, a reference to the field's `Bytes` rather than a copy; the rest is copied
    /// into owned chunks. The segments in order are exactly what [`Message::encode`] writes;
    /// hand them to a vectored write, or [`Segments::into_bytes`] for one buffer. For another
    /// threshold, [`Message::encode`] into `Segments::new().with_share_threshold(n)`.
    fn encode_segments(&self, version: i16) -> Result<Segments, EncodeError>
    where
        Self: EncodeFields,
    {
        let mut out = Segments::for_encoded_len(self.encoded_len(version)?);
        self.encode(&mut out, version)?;
        Ok(out)
    }

    /// Encodes into a new `Vec`.
    fn encode_to_vec(&self, version: i16) -> Result<Vec<u8>, EncodeError>
    where
        Self: EncodeFields,
    {
        let mut buf = Vec::with_capacity(self.encoded_len(version)?);
        self.encode(&mut buf, version)?;
        Ok(buf)
    }

    /// Reads the message at `version` from the front of `buf` and advances `buf` past it.
    ///
    /// Lenient about what follows: bytes after the message stay in `buf` (some clients send
    /// trailing bytes after a body). Strings, bytes and records in the result are slices of
    /// `buf`'s storage, not copies.
    fn decode(buf: &mut Bytes, version: i16) -> Result<Self, DecodeError>
    where
        Self: DecodeFields,
    {
        Self::decode_with_limits(buf, version, DecodeLimits::default())
    }

    /// [`Message::decode`] with explicit limits.
    fn decode_with_limits(
        buf: &mut Bytes,
        version: i16,
        limits: DecodeLimits,
    ) -> Result<Self, DecodeError>
    where
        Self: DecodeFields,
    {
        let mut decoder = Decoder::with_limits(buf, limits);
        let message = Self::decode_from(&mut decoder, version)?;
        let consumed = decoder.position();
        buf.advance(consumed);
        Ok(message)
    }

    /// Reads the message from a decoder positioned at its first byte.
    fn decode_from(decoder: &mut Decoder<'_>, version: i16) -> Result<Self, DecodeError>
    where
        Self: DecodeFields,
    {
        if !Self::VALID_VERSIONS.contains(version) {
            return Err(unsupported_decode_version(
                decoder,
                Self::NAME,
                Self::VALID_VERSIONS,
                version,
            ));
        }
        match Self::decode_fields(decoder, version) {
            Ok(message) => Ok(message),
            Err(error) => Err(error.in_message(Self::NAME, version)),
        }
    }

    /// Transcodes the message from a decoder positioned at its first byte (see
    /// [`crate::json::transcode_message`]): checked as [`Message::decode_from`] checks it, an
    /// error naming the message and version.
    #[doc(hidden)]
    #[cfg(feature = "json")]
    fn transcode_from(
        decoder: &mut Decoder<'_>,
        version: i16,
        out: &mut JsonOut<'_>,
    ) -> Result<(), TranscodeError>
    where
        Self: TranscodeFields,
    {
        if !Self::VALID_VERSIONS.contains(version) {
            return Err(unsupported_decode_version(
                decoder,
                Self::NAME,
                Self::VALID_VERSIONS,
                version,
            )
            .into());
        }
        match Self::transcode_fields(decoder, version, out) {
            Ok(()) => Ok(()),
            Err(error) => Err(error.in_message(Self::NAME, version)),
        }
    }

    /// Reads the message and requires that it fills `bytes` exactly.
    fn decode_exact(bytes: Bytes, version: i16) -> Result<Self, DecodeError>
    where
        Self: DecodeFields,
    {
        let mut decoder = Decoder::new(&bytes);
        let message = Self::decode_from(&mut decoder, version)?;
        if decoder.remaining() != 0 {
            return Err(decoder
                .error(DecodeErrorKind::TrailingBytes(decoder.remaining()))
                .in_message(Self::NAME, version));
        }
        Ok(message)
    }

    /// The message in Kafka's JSON form for `version` (see [`crate::json`]).
    #[cfg(feature = "json")]
    fn to_json(&self, version: i16) -> Result<Value, EncodeError>
    where
        Self: JsonFields,
    {
        self.to_json_with(version, &JsonOptions::default())
    }

    /// [`Message::to_json`] with a hook for `records` fields.
    #[cfg(feature = "json")]
    fn to_json_with(&self, version: i16, options: &JsonOptions<'_>) -> Result<Value, EncodeError>
    where
        Self: JsonFields,
    {
        check_encode_version(Self::NAME, Self::VALID_VERSIONS, version)?;
        self.to_json_value(version, options)
            .map_err(|e| e.in_message(Self::NAME, version))
    }

    /// [`Message::to_json_with`] written token by token to `out` (a [`crate::json::JsonWriter`]
    /// streams it as text without building a tree). On an error `out` holds a partial value.
    #[cfg(feature = "json")]
    fn write_json_with(
        &self,
        version: i16,
        options: &JsonOptions<'_>,
        out: &mut dyn JsonSink,
    ) -> Result<(), EncodeError>
    where
        Self: JsonFields,
    {
        check_encode_version(Self::NAME, Self::VALID_VERSIONS, version)?;
        self.write_json_fields(version, options, out)
            .map_err(|e| e.in_message(Self::NAME, version))
    }

    /// Reads Kafka's JSON form for `version`, strictly: a key the message has in no version
    /// is an error (see [`crate::json`]).
    #[cfg(feature = "json")]
    fn from_json(value: &Value, version: i16) -> Result<Self, JsonError>
    where
        Self: JsonFields,
    {
        Self::from_json_with(value, version, &JsonOptions::default())
    }

    /// [`Message::from_json`] with `options` (lenient reading, a hook for `records` fields).
    #[cfg(feature = "json")]
    fn from_json_with(
        value: &Value,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError>
    where
        Self: JsonFields,
    {
        crate::json::from_value(value, |source| {
            Self::read_json_message(source, version, options)
        })
        .map_err(JsonError::place_duplicate)
    }

    /// [`Message::from_json_with`] from JSON text, read token by token: no
    /// [`serde_json::Value`] tree is built, so reading holds the text and the message only.
    #[cfg(feature = "json")]
    fn from_json_slice(
        text: &[u8],
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError>
    where
        Self: JsonFields,
    {
        crate::json::from_text(text, |source| {
            Self::read_json_message(source, version, options)
        })
        .map_err(JsonError::place_duplicate)
    }

    /// The message from the JSON `source` holds (what frames read their body with); an error
    /// names the message and version.
    #[doc(hidden)]
    #[cfg(feature = "json")]
    fn read_json_message(
        source: &mut dyn JsonSource,
        version: i16,
        options: &JsonOptions<'_>,
    ) -> Result<Self, JsonError>
    where
        Self: JsonFields,
    {
        if !Self::VALID_VERSIONS.contains(version) {
            return Err(JsonError::new(JsonErrorKind::UnsupportedVersion {
                version,
                valid: Self::VALID_VERSIONS.to_string(),
            })
            .in_message(Self::NAME, version));
        }
        Self::read_json_fields(source, version, options)
            .map_err(|e| e.in_message(Self::NAME, version))
    }
}

// The checks below are not generic, so each message does not get a copy.

fn check_encode_version(
    name: &'static str,
    valid: VersionRange,
    version: i16,
) -> Result<(), EncodeError> {
    if valid.contains(version) {
        Ok(())
    } else {
        Err(EncodeError::new(EncodeErrorKind::UnsupportedVersion {
            version,
            valid: valid.to_string(),
        })
        .in_message(name, version))
    }
}

#[cold]
fn unsupported_decode_version(
    decoder: &Decoder<'_>,
    name: &'static str,
    valid: VersionRange,
    version: i16,
) -> DecodeError {
    decoder
        .error(DecodeErrorKind::UnsupportedVersion {
            version,
            valid: valid.to_string(),
        })
        .in_message(name, version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::cell::Cell;

    thread_local! {
        static DROPPED: Cell<usize> = const { Cell::new(0) };
    }

    /// An element that owns heap memory and counts its drops, so a test sees which slots
    /// `decode_elements` treats as written.
    struct Counted(#[allow(dead_code)] Box<i32>);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPPED.with(|dropped| dropped.set(dropped.get() + 1));
        }
    }

    impl DecodeFields for Counted {
        fn decode_fields(decoder: &mut Decoder<'_>, _version: i16) -> Result<Self, DecodeError> {
            decoder.read_i32().map(|value| Counted(Box::new(value)))
        }

        fn min_wire_size(_version: i16) -> usize {
            4
        }
    }

    fn decode(input: &'static [u8], count: usize) -> Result<Vec<Counted>, DecodeError> {
        let input = Bytes::from_static(input);
        let mut decoder = Decoder::new(&input);
        Counted::decode_elements(&mut decoder, count, 0)
    }

    #[test]
    fn elements_written_into_reserved_slots_are_each_dropped_once() {
        DROPPED.with(|dropped| dropped.set(0));
        let values = decode(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3], 3).unwrap();
        assert_eq!(values.iter().map(|v| *v.0).collect::<Vec<_>>(), [1, 2, 3]);
        drop(values);
        assert_eq!(DROPPED.with(Cell::get), 3);

        // The third element is cut short: the two before it are dropped with the error,
        // the slot that was never written is not.
        DROPPED.with(|dropped| dropped.set(0));
        let error = decode(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0], 3).err().unwrap();
        assert!(error.to_string().contains("[2]"), "{error}");
        assert_eq!(DROPPED.with(Cell::get), 2);

        DROPPED.with(|dropped| dropped.set(0));
        assert!(decode(&[0, 0], 1).is_err());
        assert_eq!(DROPPED.with(Cell::get), 0);
        assert!(decode(&[], 0).unwrap().is_empty());
    }
}
