//! The properties the fuzz targets check, shared by the fuzz targets (`fuzz/`), the regression
//! tests (`tests/regressions.rs`) and the seeding tool (`src/bin/fuzz-seeds.rs`), so that a
//! regression test runs exactly the oracle the fuzzer ran.
//!
//! Every check takes the fuzzer's bytes and panics when a property fails; an input the codec
//! refuses with an error is fine, as long as the refusal is an `Err` and not a panic, an
//! abort or an oversize allocation.
//!
//! Input layouts (the seeding tool writes the same ones):
//! - `request_frame`: a request frame without its size prefix; the same bytes are also fed to
//!   [`split_frame`] as if they had come off a socket.
//! - `response`: byte 0 picks the API (`ApiKey::ALL[b % len]`), byte 1 the version (one below
//!   to one above the valid range), the rest is the response frame without its size prefix.
//! - `json`: bytes 0-1 pick the message schema (big-endian, modulo the number of schemas),
//!   byte 2 the version within its valid range, the rest is JSON text.
//! - `structured_roundtrip`: bytes 0-1 and 2 as for `json`, byte 3 bit 0 asks for unknown
//!   tagged fields, the rest is entropy for [`Random::random`].
//! - `records`: byte 0 holds flags (bit 0: a Fetch reader that tolerates a truncated last
//!   batch; bit 1: CRCs not checked, so that mutated batches reach the records and the
//!   decompressors; bit 2: headers only, nothing decoded or decompressed), the rest is a
//!   records field.
//! - `views`: byte 0 bit 0 picks a response (then bytes 1 and 2 pick API and version as for
//!   `response`) or a request, bit 1 tight limits; the rest is the frame without its size
//!   prefix.

use arbitrary::Unstructured;
use bytes::{Bytes, BytesMut};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::records::{self, BatchReader, ReadOptions, RecordBatch};
use kafka_codec::split_frame;
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeLimits, DecodeOptions, EncodeError,
    EncodeErrorKind, JsonError, MessageCodec, MessageVisitor, RandomMessageVisitor, RequestFrame,
    ResponseFrame, TrailingBytes, VersionRange,
};
use serde_json::Value;
use std::fmt::Debug;
use std::sync::OnceLock;

/// The counting allocator, shared with the crate's tests. The fuzz targets that check the
/// decoders' memory budget (`request_frame`, `response`, `views`) and `tests/regressions.rs`
/// install it as their global allocator; elsewhere its counters stay 0, and the budget check
/// below then holds trivially.
pub use kafka_codec_test_support::counting_alloc;

/// The fuzz targets' global allocator, [`alloc_limit::LimitedAllocator`] at [`MALLOC_LIMIT`]:
/// libFuzzer's own `-malloc_limit_mb` needs a sanitizer's malloc hooks, which CI's
/// `--sanitizer none` build lacks.
pub use kafka_codec_test_support::alloc_limit;

/// The most one allocation may ask for in a fuzz target: an input is at most 64 KiB
/// (`-max_len=65536` in `.ci/fuzz.sh`), and no length or count it holds may make a decoder
/// reserve over 1024 times that (`-malloc_limit_mb=64` there, for sanitizer builds).
pub const MALLOC_LIMIT: usize = 64 << 20;

/// Runs `decode` and checks that the heap it took at its peak (above what was live before)
/// stays within the memory budget `limits` give an input of `input_len` bytes.
fn within_budget<T>(limits: &DecodeLimits, input_len: usize, decode: impl FnOnce() -> T) -> T {
    // Every `realloc` counted as holding its old and its new block at once.
    let (value, stats) = counting_alloc::measure(decode);
    let peak = stats.peak_if_copied;
    let budget = limits.memory_budget_for(input_len);
    assert!(
        peak <= budget,
        "a decode of {input_len} bytes took {peak} bytes of heap, over its budget {budget}"
    );
    value
}

/// Reads a lazy frame through every accessor (`read`: make the frame, build its header and
/// body from the accessors) within the budget, as [`within_budget`] does.
///
/// The promise checked is that a view never allocates more than the owned decode would, so
/// only what stands for the owned decode is measured. The oracle's own checks that follow
/// (encoding the rebuilt body to compare its bytes, the `walk` beside the accessors) run
/// after the measurement (the walk in a measurement of its own): counted with the read, the
/// encoded copy (as long as the body) made a valid frame near a tight budget (16 KiB) read
/// as over it although the view took no more than the owned decode (the test
/// `views_budget_counts_the_lazy_read_not_the_oracle_checks`).
fn lazy_read<T>(limits: &DecodeLimits, input_len: usize, read: impl FnOnce() -> T) -> T {
    within_budget(limits, input_len, read)
}

/// Equal, or equal but for NaN payloads: `NaN != NaN`, so a frame with a NaN `float64` is
/// compared through its `Debug` text, which prints every NaN alike (the bytes are compared
/// separately, and they keep the payload).
fn same<T: PartialEq + Debug>(a: &T, b: &T) -> bool {
    a == b || format!("{a:?}") == format!("{b:?}")
}

/// Limits far below the defaults, so that the fuzzer reaches every limit check.
pub fn tight_limits() -> DecodeLimits {
    DecodeLimits {
        max_frame_size: 4096,
        max_array_len: 8,
        max_string_len: 16,
        max_bytes_len: 16,
        max_nesting: 2,
        max_decompressed_batch_size: 16 * 1024,
        // Small enough that fuzzed frames reach it.
        memory_budget: Some(16 * 1024),
    }
}

/// A whole frame, request or response, seen the same way by the checks below. A response
/// frame does not name its API and version: they come with it as `Context`.
trait Frame: PartialEq + Debug + Sized {
    type Context: Copy;
    fn decode(
        bytes: Bytes,
        cx: Self::Context,
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError>;
    fn encode(&self) -> Result<Bytes, EncodeError>;
    fn encoded_len(&self) -> Result<usize, EncodeError>;
    fn to_json(&self) -> Result<Value, EncodeError>;
    fn from_json(value: &Value) -> Result<Self, JsonError>;
}

impl Frame for RequestFrame {
    type Context = ();
    fn decode(bytes: Bytes, _: (), options: &DecodeOptions) -> Result<Self, DecodeError> {
        RequestFrame::decode_with(bytes, options)
    }
    fn encode(&self) -> Result<Bytes, EncodeError> {
        self.encode_to_bytes()
    }
    fn encoded_len(&self) -> Result<usize, EncodeError> {
        RequestFrame::encoded_len(self)
    }
    fn to_json(&self) -> Result<Value, EncodeError> {
        RequestFrame::to_json(self)
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        RequestFrame::from_json(value)
    }
}

impl Frame for ResponseFrame {
    type Context = (ApiKey, i16);
    fn decode(
        bytes: Bytes,
        (api, version): (ApiKey, i16),
        options: &DecodeOptions,
    ) -> Result<Self, DecodeError> {
        ResponseFrame::decode_with(bytes, api, version, options)
    }
    fn encode(&self) -> Result<Bytes, EncodeError> {
        self.encode_to_bytes()
    }
    fn encoded_len(&self) -> Result<usize, EncodeError> {
        ResponseFrame::encoded_len(self)
    }
    fn to_json(&self) -> Result<Value, EncodeError> {
        ResponseFrame::to_json(self)
    }
    fn from_json(value: &Value) -> Result<Self, JsonError> {
        ResponseFrame::from_json(value)
    }
}

/// Decode → encode → decode for one frame:
/// - decoding never panics, and tight limits only ever refuse (with `LimitExceeded`) what the
///   default limits accept, never decode it differently;
/// - lenient trailing-byte handling decodes a strictly valid frame to the same frame;
/// - a decoded frame encodes, `encoded_len` is exact, and the bytes decode to the same frame;
/// - the input is canonical when re-encoding gives it back; when it does not, the re-encoded
///   bytes are canonical: they decode to the same frame and re-encode identically;
/// - the frame's JSON form reads back and is stable once unknown tagged fields, which it
///   leaves out, are gone (see `json_round_trip` below).
fn check_frame<F: Frame>(input: &[u8], cx: F::Context) {
    let input = Bytes::copy_from_slice(input);
    let strict = within_budget(&DecodeLimits::default(), input.len(), || {
        F::decode(input.clone(), cx, &DecodeOptions::default())
    });
    let lenient = F::decode(
        input.clone(),
        cx,
        &DecodeOptions {
            trailing_bytes: TrailingBytes::Allow,
            ..DecodeOptions::default()
        },
    );
    let tight = within_budget(&tight_limits(), input.len(), || {
        F::decode(
            input.clone(),
            cx,
            &DecodeOptions {
                limits: tight_limits(),
                ..DecodeOptions::default()
            },
        )
    });
    let frame = match strict {
        Ok(frame) => frame,
        Err(_) => return,
    };
    let lenient = lenient.expect("a strictly valid frame decodes leniently");
    assert!(same(&lenient, &frame), "lenient decoding differs");
    match tight {
        Ok(tight) => assert!(same(&tight, &frame), "tight limits decode differently"),
        Err(e) => assert!(
            matches!(e.kind(), DecodeErrorKind::LimitExceeded { .. }),
            "tight limits refuse a valid frame with {e}, not LimitExceeded"
        ),
    }

    let encoded = frame.encode().expect("a decoded frame encodes");
    assert_eq!(
        frame.encoded_len().expect("encoded_len"),
        encoded.len(),
        "encoded_len is not what encode wrote"
    );
    let again = F::decode(encoded.clone(), cx, &DecodeOptions::default())
        .expect("the re-encoded frame decodes");
    assert!(same(&again, &frame), "re-encoded frame decodes differently");
    if encoded != input {
        // Non-canonical input (a bool byte of 2, a long varint, a default tagged field...):
        // the re-encoding must be canonical.
        let encoded_again = again.encode().expect("encodes again");
        assert_eq!(encoded_again, encoded, "re-encoding is not a fixed point");
    }

    // JSON cannot carry NaN or infinities; everything else reads back.
    if let Ok(json) = frame.to_json() {
        let (back, lost) = json_round_trip(&json, F::from_json, F::to_json);
        if lost {
            // Only unknown tagged fields are left out of the JSON form, and they are on the
            // wire: the frame read back must encode differently.
            let back = back.encode().expect("the frame read from JSON encodes");
            assert_ne!(
                back, encoded,
                "JSON changed, but not because it lost anything"
            );
        }
    }
}

/// Reads a value's own JSON back and checks that the JSON form is stable. Kafka's JSON form
/// leaves out unknown tagged fields, so the first round may lose some: a tagged struct that
/// differs from its default only in unknown tagged fields is written, reads back as the
/// default, and is not written again. From there on, JSON → value → JSON is the identity.
/// Returns the value read back, and whether the first round changed the JSON.
fn json_round_trip<T>(
    json: &Value,
    from_json: impl Fn(&Value) -> Result<T, JsonError>,
    to_json: impl Fn(&T) -> Result<Value, EncodeError>,
) -> (T, bool) {
    let back = from_json(json).unwrap_or_else(|e| panic!("own JSON does not read: {e}"));
    let again = to_json(&back).expect("to_json of what JSON gave");
    if again == *json {
        return (back, false);
    }
    let back_again = from_json(&again).unwrap_or_else(|e| panic!("JSON does not read: {e}"));
    assert_eq!(
        to_json(&back_again).expect("to_json"),
        again,
        "JSON not stable"
    );
    (back, true)
}

/// Splits `data` into frames as a server reading a socket would, and decodes each one.
fn check_stream(data: &[u8]) {
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = split_frame(&mut buf, &DecodeLimits::default()) {
        let _ = RequestFrame::decode(frame);
    }
}

/// The `request_frame` target.
pub fn request_frame(data: &[u8]) {
    check_stream(data);
    check_frame::<RequestFrame>(data, ());
}

/// The version a selector byte picks: `min - 1 ..= max + 1` when `out_of_range`, so that
/// unsupported versions get tried too, else `min..=max`.
pub fn pick_version(range: VersionRange, byte: u8, out_of_range: bool) -> i16 {
    let extra = i32::from(out_of_range);
    let span = i32::from(range.max) - i32::from(range.min) + 1 + 2 * extra;
    let version = i32::from(range.min) - extra + i32::from(byte) % span;
    version as i16
}

/// The selector byte for `version` (the inverse of [`pick_version`]).
pub fn version_byte(range: VersionRange, version: i16, out_of_range: bool) -> u8 {
    (i32::from(version) - i32::from(range.min) + i32::from(out_of_range)) as u8
}

/// The `response` target.
pub fn response(data: &[u8]) {
    let [api, version, frame @ ..] = data else {
        return;
    };
    let api = ApiKey::ALL[usize::from(*api) % ApiKey::ALL.len()];
    let version = pick_version(api.valid_versions(), *version, true);
    check_frame::<ResponseFrame>(frame, (api, version));
}

/// How many message schemas there are (requests, responses, headers, data).
pub fn schema_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        struct Count(usize);
        impl MessageVisitor for Count {
            fn visit<M: MessageCodec>(&mut self) {
                self.0 += 1;
            }
        }
        let mut count = Count(0);
        kafka_codec::visit_messages(&mut count);
        count.0
    })
}

/// Calls `visit` with the `index`-th schema of [`kafka_codec::visit_random_messages`].
struct Nth<V> {
    index: usize,
    visit: V,
}

/// Something done with one schema, chosen at run time.
pub trait SchemaAction {
    /// Does it with `M`.
    fn run<M: MessageCodec + Random>(&mut self);
}

impl<V: SchemaAction> RandomMessageVisitor for Nth<V> {
    fn visit<M: MessageCodec + Random>(&mut self) {
        if self.index == 0 {
            self.visit.run::<M>();
        }
        self.index = self.index.wrapping_sub(1);
    }
}

/// Runs `action` on the `index`-th schema (modulo the number of schemas).
pub fn with_schema<A: SchemaAction>(index: usize, action: A) -> A {
    let mut nth = Nth {
        index: index % schema_count(),
        visit: action,
    };
    kafka_codec::visit_random_messages(&mut nth);
    nth.visit
}

struct JsonCase<'a> {
    version_byte: u8,
    json: &'a [u8],
}

impl SchemaAction for JsonCase<'_> {
    fn run<M: MessageCodec + Random>(&mut self) {
        let version = pick_version(M::VALID_VERSIONS, self.version_byte, false);
        // Text read token by token is read as its tree is, except that only text can give a
        // key twice (strict reading refuses it, a tree has kept the last).
        let options = kafka_codec::json::JsonOptions::default();
        let from_text = M::from_json_slice(self.json, version, &options);
        let Ok(value) = serde_json::from_slice::<Value>(self.json) else {
            assert!(
                from_text.is_err(),
                "{} v{version}: text that is not JSON read",
                M::NAME
            );
            return;
        };
        let from_tree = M::from_json(&value, version);
        match (&from_text, &from_tree) {
            (Ok(text), Ok(tree)) => assert_eq!(text, tree, "{} v{version}: text and tree", M::NAME),
            (Ok(_), Err(e)) => panic!(
                "{} v{version}: text reads, its tree fails with {e}",
                M::NAME
            ),
            // With a key given twice, text reading may stop earlier, at an invalid first
            // value the tree never saw (it kept the last).
            (Err(e), Ok(_)) => assert!(
                matches!(e.kind(), kafka_codec::JsonErrorKind::DuplicateKey { .. })
                    || gives_a_key_twice(self.json),
                "{} v{version}: the tree reads, its text fails with {e}",
                M::NAME
            ),
            (Err(_), Err(_)) => {}
        }
        let Ok(message) = from_tree else {
            return;
        };
        // Like Kafka's JSON converters, reading JSON accepts any field the schema has, at any
        // version, and null wherever the field is ever nullable; writing the version then
        // refuses what it cannot carry, and drops ignorable fields it lacks.
        if let Err(e) = message.encode_to_bytes(version) {
            assert!(
                matches!(
                    e.kind(),
                    EncodeErrorKind::FieldNotInVersion | EncodeErrorKind::NullNotAllowed
                ),
                "{} v{version}: a message read from JSON fails to encode with {e}",
                M::NAME
            );
            return;
        }
        // What the version carries of the message is what its own JSON reads back to.
        let (decoded, carried) = check_message(&message, version);
        assert!(
            same(&decoded, &carried),
            "{} v{version}: decodes to something other than what the version carries\n \
             carried {carried:?}\n read    {decoded:?}",
            M::NAME
        );
    }
}

/// True when some object in `text` (valid JSON) has a key twice.
fn gives_a_key_twice(text: &[u8]) -> bool {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};

    /// Any JSON value, refused when an object in it repeats a key.
    struct Distinct;
    impl<'de> Deserialize<'de> for Distinct {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(DistinctVisitor)
        }
    }
    struct DistinctVisitor;
    impl<'de> Visitor<'de> for DistinctVisitor {
        type Value = Distinct;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_str<E>(self, _: &str) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_unit<E>(self) -> Result<Distinct, E> {
            Ok(Distinct)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Distinct, A::Error> {
            while seq.next_element::<Distinct>()?.is_some() {}
            Ok(Distinct)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Distinct, A::Error> {
            let mut keys = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !keys.insert(key) {
                    return Err(A::Error::custom("a key given twice"));
                }
                map.next_value::<Distinct>()?;
            }
            Ok(Distinct)
        }
    }
    serde_json::from_slice::<Distinct>(text).is_err()
}

/// The `json` target.
pub fn json(data: &[u8]) {
    let [hi, lo, version_byte, json @ ..] = data else {
        return;
    };
    let index = usize::from(u16::from_be_bytes([*hi, *lo]));
    with_schema(
        index,
        JsonCase {
            version_byte: *version_byte,
            json,
        },
    );
}

/// Encode → decode for a message: it encodes at `version`, `encoded_len` is exact, decoding
/// takes exactly the encoded bytes, which re-encode identically, and the JSON form reads back
/// and is stable (see `json_round_trip` below). Returns what decoding gave and what the JSON form read back to, for the
/// caller to compare with what it knows of the message.
pub fn check_message<M: MessageCodec>(message: &M, version: i16) -> (M, M) {
    let encoded = message
        .encode_to_bytes(version)
        .unwrap_or_else(|e| panic!("{} v{version} does not encode: {e}", M::NAME));
    assert_eq!(
        message.encoded_len(version).expect("encoded_len"),
        encoded.len(),
        "{} v{version}: encoded_len is not what encode wrote",
        M::NAME
    );
    let mut rest = encoded.clone();
    let decoded = M::decode(&mut rest, version)
        .unwrap_or_else(|e| panic!("{} v{version} does not decode: {e}", M::NAME));
    assert!(rest.is_empty(), "{} v{version}: bytes left over", M::NAME);
    let encoded_again = decoded.encode_to_bytes(version).expect("re-encodes");
    assert_eq!(
        encoded_again,
        encoded,
        "{} v{version}: not a fixed point",
        M::NAME
    );

    let json = message
        .to_json(version)
        .unwrap_or_else(|e| panic!("{} v{version} encodes but to_json fails: {e}", M::NAME));
    let (back, _) = json_round_trip(
        &json,
        |json| M::from_json(json, version),
        |message| message.to_json(version),
    );
    (decoded, back)
}

struct StructuredCase<'a> {
    version_byte: u8,
    options: RandomOptions,
    entropy: &'a [u8],
}

impl SchemaAction for StructuredCase<'_> {
    fn run<M: MessageCodec + Random>(&mut self) {
        let version = pick_version(M::VALID_VERSIONS, self.version_byte, false);
        let mut u = Unstructured::new(self.entropy);
        let Ok(message) = M::random(&mut u, version, &self.options) else {
            return;
        };
        let (decoded, back) = check_message(&message, version);
        assert!(
            same(&decoded, &message),
            "{} v{version}: decodes differently\n wrote {message:?}\n read  {decoded:?}",
            M::NAME
        );
        // Unknown tagged fields survive the wire but are not part of Kafka's JSON form.
        if !self.options.unknown_tagged_fields {
            assert!(
                same(&back, &message),
                "{} v{version}: JSON loses data",
                M::NAME
            );
        }
    }
}

/// The `structured_roundtrip` target.
pub fn structured_roundtrip(data: &[u8]) {
    let [hi, lo, version_byte, flags, entropy @ ..] = data else {
        return;
    };
    let index = usize::from(u16::from_be_bytes([*hi, *lo]));
    with_schema(
        index,
        StructuredCase {
            version_byte: *version_byte,
            options: RandomOptions {
                unknown_tagged_fields: flags & 1 == 1,
            },
            entropy,
        },
    );
}

/// A batch with the fields writing recomputes (the CRC) cleared, for comparisons.
fn without_crc(batch: &RecordBatch) -> RecordBatch {
    RecordBatch {
        crc: 0,
        ..batch.clone()
    }
}

/// The `records` target: reading a records field never panics and never allocates beyond
/// the (tight) decompression limit; whatever reads also reads lazily to the same records,
/// writes, and reads back to the same batch; its JSON form reads back to the same batch.
pub fn records(data: &[u8]) {
    let [flags, field @ ..] = data else {
        return;
    };
    let options = ReadOptions {
        limits: tight_limits(),
        allow_truncated_tail: flags & 1 != 0,
        verify_crc: flags & 2 == 0,
    };
    let headers_only = flags & 4 != 0;
    let mut reader = BatchReader::with_options(Bytes::copy_from_slice(field), options);
    for raw in &mut reader {
        let Ok(raw) = raw else {
            break;
        };
        let header = *raw.header();
        let _ = (
            header.compression(),
            header.timestamp_type(),
            header.last_offset(),
            raw.verify_crc(),
        );
        assert_eq!(raw.as_bytes().len(), header.size());
        if headers_only {
            continue;
        }
        let lazy: Result<Vec<records::Record>, _> = raw.records().and_then(|it| it.collect());
        let batch = match raw.decode() {
            Ok(batch) => batch,
            Err(error) => {
                // Only decoding whole batches is charged to the memory budget: records
                // handed out one at a time are not.
                let budget = matches!(
                    error.kind(),
                    records::RecordsErrorKind::LimitExceeded {
                        what: "memory budget",
                        ..
                    }
                );
                assert!(
                    lazy.is_err() || budget,
                    "decode refuses what lazy reading accepts"
                );
                continue;
            }
        };
        assert_eq!(
            lazy.expect("lazy reading"),
            batch.records,
            "lazy and whole reads differ"
        );
        if batch.is_control {
            for control in batch.control_records().flatten() {
                let _ = control.value();
            }
        }

        let bytes = batch
            .encode_to_bytes()
            .expect("a batch that was read writes");
        let mut again = records::decode_batches_with(
            &bytes,
            &ReadOptions {
                limits: tight_limits(),
                ..ReadOptions::default()
            },
        )
        .expect("what we wrote reads back");
        if batch.magic == 2 {
            assert_eq!(again.len(), 1);
            assert_eq!(
                without_crc(&again.remove(0)),
                without_crc(&batch),
                "v2 round trip"
            );
        } else {
            let records: Vec<_> = again.iter().flat_map(|b| b.records.clone()).collect();
            assert_eq!(records, batch.records, "legacy round trip");
        }

        let json = records::json::batch_to_json(&batch);
        let back = records::json::batch_from_json(&json).expect("own JSON reads back");
        assert_eq!(back, batch, "JSON round trip");
    }
    if reader.truncated_tail().is_some() {
        assert!(options.allow_truncated_tail);
    }
}

/// A frame viewed (`RequestFrameView`/`ResponseFrameView`) beside its owned decode:
/// - making the view never panics and takes no more heap than the owned decode's budget
///   (a view allocates nothing but the unknown tagged fields the owned decode would keep);
/// - the view accepts exactly what the owned decoder accepts, and refuses with the same
///   error;
/// - walking every accessor of the accepted view (`to_owned`, which reads each field and each
///   array element) never panics and gives the owned decode's header and body;
/// - the lazy view of the same frame (`LazyRequestFrame`/`LazyResponseFrame`), made and read
///   through every accessor (`to_owned_via_accessors`) within the same budget (that reading
///   alone is measured: see [`lazy_read`]), never panics;
///   what the owned decoder accepts it reads the same, and every error it gives is the owned
///   decoder's (it may read bytes the owned decoder refuses, where the refusal lies in what
///   no accessor reads: a limit, a tagged section's order).
fn check_view(input: &[u8], response: Option<(ApiKey, i16)>, options: &DecodeOptions) {
    use kafka_codec::wire::view::OwnedViaAccessors;
    use kafka_codec::StructView;
    /// A frame's header (as `Debug` text: request and response headers alike) and body bytes.
    type Seen = Result<(String, Vec<u8>), DecodeError>;

    struct Walk<'a> {
        input: &'a Bytes,
        response: Option<(ApiKey, i16)>,
        options: &'a DecodeOptions,
    }
    impl Walk<'_> {
        fn request<M: MessageCodec + kafka_codec::Viewable>(&self) -> (Seen, Seen, Seen) {
            let (input, options) = (self.input, self.options);
            let view = within_budget(&options.limits, input.len(), || {
                kafka_codec::RequestFrameView::new(input, options)
            });
            let view = view.map(|frame| {
                let body = frame.body::<M::View<'_>>().expect("the frame's own API");
                let body = body.to_owned_struct().encode_to_vec(frame.api_version());
                let header = frame.header().to_owned();
                (format!("{header:?}"), body.expect("a viewed body encodes"))
            });
            let owned = RequestFrame::decode_with(input.clone(), options).map(|frame| {
                let mut body = Vec::new();
                let version = frame.api_version();
                frame
                    .body
                    .encode(&mut body, version)
                    .expect("a decoded body encodes");
                (format!("{:?}", frame.header), body)
            });
            // See `lazy_read`: only the view's own work is measured.
            let read = lazy_read(&options.limits, input.len(), || {
                kafka_codec::LazyRequestFrame::new(input, options).map(|frame| {
                    let body = frame
                        .body::<M::LazyView<'_>>()
                        .expect("the frame's own API")
                        .to_owned_via_accessors();
                    let header = frame.header().to_owned();
                    (frame, format!("{header:?}"), body)
                })
            });
            let lazy = read.and_then(|(frame, header, body)| {
                let view = frame
                    .body::<M::LazyView<'_>>()
                    .expect("the frame's own API");
                walk_agrees(&options.limits, input.len(), &view, &body, &owned);
                let body = body?.encode_to_vec(frame.api_version());
                // Unencodable only where the owned decode refuses the frame (the lazy view reads
                // the parts it is asked for); an empty body then differs from any owned one.
                Ok((header, body.unwrap_or_default()))
            });
            (view, owned, lazy)
        }

        fn response<M: MessageCodec + kafka_codec::Viewable>(
            &self,
            api: ApiKey,
            version: i16,
        ) -> (Seen, Seen, Seen) {
            let (input, options) = (self.input, self.options);
            let view = within_budget(&options.limits, input.len(), || {
                kafka_codec::ResponseFrameView::new(input, api, version, options)
            });
            let view = view.map(|frame| {
                let body = frame.body::<M::View<'_>>().expect("the frame's own API");
                let body = body.to_owned_struct().encode_to_vec(version);
                let header = frame.header().to_owned();
                (format!("{header:?}"), body.expect("a viewed body encodes"))
            });
            let owned =
                ResponseFrame::decode_with(input.clone(), api, version, options).map(|frame| {
                    let mut body = Vec::new();
                    frame
                        .body
                        .encode(&mut body, version)
                        .expect("a decoded body encodes");
                    (format!("{:?}", frame.header), body)
                });
            // See `lazy_read`: only the view's own work is measured.
            let read = lazy_read(&options.limits, input.len(), || {
                kafka_codec::LazyResponseFrame::new(input, api, version, options).map(|frame| {
                    let body = frame
                        .body::<M::LazyView<'_>>()
                        .expect("the frame's own API")
                        .to_owned_via_accessors();
                    let header = frame.header().to_owned();
                    (frame, format!("{header:?}"), body)
                })
            });
            let lazy = read.and_then(|(frame, header, body)| {
                let view = frame
                    .body::<M::LazyView<'_>>()
                    .expect("the frame's own API");
                walk_agrees(&options.limits, input.len(), &view, &body, &owned);
                let body = body?.encode_to_vec(version);
                // Unencodable only where the owned decode refuses the frame (the lazy view reads
                // the parts it is asked for); an empty body then differs from any owned one.
                Ok((header, body.unwrap_or_default()))
            });
            (view, owned, lazy)
        }
    }
    /// A visitor that takes nothing: `walk` reads every field in wire order regardless.
    struct Nothing;
    impl kafka_codec::ViewVisitor<'_> for Nothing {}
    /// A lazy body's `walk` (every field, in wire order) never panics, stays within the
    /// budget, fails wherever reading every field through the accessors failed (`read`, the
    /// measured read's result), with the same error, and any error it returns is the owned
    /// decoder's (`owned`). It may refuse more than the accessors: a tagged field given
    /// twice, which it reads each time, where the accessors read it once.
    fn walk_agrees<'a, V, T>(
        limits: &DecodeLimits,
        input_len: usize,
        body: &V,
        read: &Result<T, DecodeError>,
        owned: &Seen,
    ) where
        V: StructView<'a, Mode = kafka_codec::Lazy>,
    {
        // A walk of its own, measured on its own: it is a reading of the view too.
        let walked = within_budget(limits, input_len, || body.walk_struct(&mut Nothing));
        if let Err(e) = read {
            assert_eq!(walked.as_ref(), Err(e), "walk and the accessors disagree");
        }
        if let Err(e) = &walked {
            assert_eq!(
                Some(e),
                owned.as_ref().err(),
                "the walk's error is not the owned decoder's"
            );
        }
    }
    impl kafka_codec::ViewableMessageVisitor for Walk<'_> {
        fn visit<M: MessageCodec + Random + kafka_codec::Viewable + 'static>(&mut self) {
            use kafka_codec::MessageKind;
            let (view, owned, lazy) = match (self.response, M::KIND) {
                (None, MessageKind::Request) => match RequestFrame::peek_api(self.input) {
                    Ok((api, _)) if M::API_KEY == Some(api.key()) => self.request::<M>(),
                    _ => return,
                },
                (Some((api, version)), MessageKind::Response) if M::API_KEY == Some(api.key()) => {
                    self.response::<M>(api, version)
                }
                _ => return,
            };
            match (&lazy, &owned) {
                (Ok(lazy), Ok(owned)) => {
                    assert_eq!(lazy.0, owned.0, "the lazy view's header differs");
                    assert_eq!(lazy.1, owned.1, "the lazy view's body differs");
                }
                (Err(lazy), Err(owned)) => assert_eq!(lazy, owned, "the lazy errors differ"),
                (Ok(_), Err(_)) => {}
                (Err(lazy), Ok(_)) => panic!("the lazy view refused a valid frame: {lazy}"),
            }
            match (view, owned) {
                (Ok(view), Ok(owned)) => {
                    assert_eq!(view.0, owned.0, "the view's header differs");
                    assert_eq!(view.1, owned.1, "the view's body differs");
                }
                (Err(view), Err(owned)) => assert_eq!(view, owned, "the errors differ"),
                (view, owned) => panic!("view {:?}, owned {:?}", view.err(), owned.err()),
            }
        }
    }
    let input = Bytes::copy_from_slice(input);
    kafka_codec::visit_viewable_messages(&mut Walk {
        input: &input,
        response,
        options,
    });
}

/// The `views` target.
pub fn views(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let options = DecodeOptions {
        limits: if flags & 2 != 0 {
            tight_limits()
        } else {
            DecodeLimits::default()
        },
        ..DecodeOptions::default()
    };
    if flags & 1 == 0 {
        check_view(rest, None, &options);
        return;
    }
    let [api, version, frame @ ..] = rest else {
        return;
    };
    let api = ApiKey::ALL[usize::from(*api) % ApiKey::ALL.len()];
    let version = pick_version(api.valid_versions(), *version, true);
    check_view(frame, Some((api, version)), &options);
}
