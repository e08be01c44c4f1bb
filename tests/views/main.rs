//! Views (feature `views`) against the owned decoder, for every request, response and header
//! at every version:
//! - random messages (unknown tagged fields included) encoded, viewed and converted back
//!   with `to_owned`, which reads every field through its accessor, equal the original and
//!   the owned decode of the same bytes;
//! - the golden corpus (Kafka's own bytes) viewed equals its owned decode;
//! - hostile variants of those bytes (cut short, bytes changed) and tight `DecodeLimits`:
//!   the view accepts exactly what the owned decoder accepts, refuses with the same error
//!   (kind, offset, path), and what it accepts converts to the same message;
//! - the same bytes through the lazy views (only the header checked when made), read through
//!   every accessor (`to_owned_via_accessors`) and converted with `to_owned`: what the owned
//!   decoder accepts reads the same; every error an accessor returns is the owned decoder's
//!   error for the whole input (kind, offset, path), and bytes cut short always meet one;
//! - every struct's `fields()` (all its fields in one pass), checked and lazy, converted to
//!   the owned message (`to_owned_via_fields`): the same as above, on the same bytes;
//! - every message's `walk` (every field handed to a visitor in wire order), checked and lazy,
//!   written as JSON: the owned decode's JSON, or its error (`walk.rs`).

#[path = "../support/mod.rs"]
mod support;
mod walk;

use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::messages::{RequestHeader, ResponseHeader};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::wire::view::{OwnedViaAccessors, OwnedViaFields};
use kafka_codec::{
    view_message, ApiKey, Checked, DecodeError, DecodeLimits, DecodeOptions, Framing, LazyMessage,
    LazyRequestFrame, LazyResponseFrame, Message, MessageCodec, MessageKind, RequestFrame,
    RequestFrameView, ResponseFrame, ResponseFrameView, StructView, TrailingBytes, Viewable,
    ViewableMessageVisitor,
};
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

const CASES_PER_VERSION: usize = 12;
const ENTROPY: usize = 4096;

/// A seed per (message, version), so that a failure names a case that reproduces.
fn seed(name: &str, version: i16) -> u64 {
    name.bytes().fold(u64::from(version as u16), |h, b| {
        h.wrapping_mul(31).wrapping_add(u64::from(b))
    })
}

/// The view of `bytes` at `version`, converted, beside the owned decode of the same bytes.
fn both<M: MessageCodec + Viewable>(
    bytes: &Bytes,
    version: i16,
) -> (
    Result<M, kafka_codec::DecodeError>,
    Result<M, kafka_codec::DecodeError>,
) {
    let view = view_message::<M::View<'_>>(bytes, version).map(|view| view.to_owned_struct());
    let owned = M::decode(&mut bytes.clone(), version);
    (view, owned)
}

/// The lazy view of `bytes` at `version` read through every accessor, and converted with
/// `to_owned`.
fn lazy<M: MessageCodec + Viewable + 'static>(
    bytes: &Bytes,
    version: i16,
) -> (Result<M, DecodeError>, Result<M, DecodeError>) {
    match LazyMessage::new::<M>(bytes, version) {
        Ok(message) => {
            let view = message.view::<M::LazyView<'_>>().expect("its own view");
            (view.to_owned_via_accessors(), view.to_owned_struct())
        }
        Err(e) => (Err(e.clone()), Err(e)),
    }
}

/// The owned message built from `fields()` (every field of each struct read in one pass) of
/// the checked view and of the lazy view of `bytes` at `version`.
fn fields<M: MessageCodec + Viewable + 'static>(
    bytes: &Bytes,
    version: i16,
) -> (Result<M, DecodeError>, Result<M, DecodeError>) {
    let checked =
        view_message::<M::View<'_>>(bytes, version).and_then(OwnedViaFields::to_owned_via_fields);
    let lazy = LazyMessage::new::<M>(bytes, version).and_then(|message| {
        let view = message.view::<M::LazyView<'_>>().expect("its own view");
        view.to_owned_via_fields()
    });
    (checked, lazy)
}

/// A lazy read's outcome against the owned decode's: what the owned decoder accepts reads
/// the same; an error is the owned decoder's; `must_fail` (bytes cut short, read whole)
/// requires an error.
fn lazy_agrees<T: PartialEq + std::fmt::Debug>(
    what: &str,
    lazy: &Result<T, DecodeError>,
    owned: &Result<T, DecodeError>,
    must_fail: bool,
) -> Result<(), String> {
    let agrees = match (lazy, owned) {
        (Ok(lazy), Ok(owned)) => lazy == owned,
        (Err(lazy), Err(owned)) => lazy == owned,
        (Ok(_), Err(_)) => !must_fail,
        (Err(_), Ok(_)) => false,
    };
    if agrees {
        Ok(())
    } else {
        Err(format!("{what}: lazy {lazy:?}, owned {owned:?}"))
    }
}

/// Tight limits that refuse some random messages, so the view's checks of each limit meet
/// frames the owned decoder refuses.
fn tight_options(rng: &mut SmallRng) -> DecodeOptions {
    let mut limits = DecodeLimits::default();
    match rng.gen_range(0..5) {
        0 => limits.max_array_len = rng.gen_range(0..4),
        1 => limits.max_string_len = rng.gen_range(0..8),
        2 => limits.max_bytes_len = rng.gen_range(0..8),
        3 => limits.max_nesting = rng.gen_range(0..3),
        _ => limits.memory_budget = Some(rng.gen_range(0..512)),
    }
    let framing = if rng.gen() {
        Framing::Bare
    } else {
        Framing::SizePrefixed
    };
    let trailing_bytes = if rng.gen() {
        TrailingBytes::Reject
    } else {
        TrailingBytes::Allow
    };
    DecodeOptions {
        limits,
        trailing_bytes,
        framing,
    }
}

/// The whole frame of `body` (header + body), with its size prefix when `options` says so.
fn frame<M: Message>(body: &[u8], version: i16, options: &DecodeOptions) -> Option<Bytes> {
    let api = ApiKey::from_key(M::API_KEY?)?;
    let mut out = Vec::new();
    let header = match M::KIND {
        MessageKind::Request => RequestHeader::default()
            .with_request_api_key(api.key())
            .with_request_api_version(version)
            .with_correlation_id(7)
            .with_client_id(Some("views".into()))
            .encode_to_vec(api.request_header_version(version)),
        _ => ResponseHeader::default()
            .with_correlation_id(7)
            .encode_to_vec(api.response_header_version(version)),
    }
    .ok()?;
    let len = header.len() + body.len();
    if options.framing == Framing::SizePrefixed {
        out.extend_from_slice(&(len as i32).to_be_bytes());
    }
    out.extend_from_slice(&header);
    out.extend_from_slice(body);
    Some(Bytes::from(out))
}

/// A frame viewed and decoded owned with the same options: the same outcome, the same error,
/// the same body.
fn check_frame<M: MessageCodec + Viewable + 'static>(
    bytes: &Bytes,
    version: i16,
    options: &DecodeOptions,
) -> Result<(), String> {
    let Some(api) = M::API_KEY.and_then(ApiKey::from_key) else {
        return Ok(());
    };
    let (view, owned) = match M::KIND {
        MessageKind::Request => {
            let view = RequestFrameView::new(bytes, options).map(|frame| {
                let body = frame.body::<M::View<'_>>().expect("the frame's own API");
                (
                    frame.header().correlation_id(),
                    body.to_owned_struct().encode_to_vec(version),
                )
            });
            let owned = RequestFrame::decode_with(bytes.clone(), options).map(|frame| {
                let mut body = Vec::new();
                let written = frame.body.encode(&mut body, version).map(|()| body);
                (frame.header.correlation_id, written)
            });
            (view, owned)
        }
        _ => {
            let view = ResponseFrameView::new(bytes, api, version, options).map(|frame| {
                let body = frame.body::<M::View<'_>>().expect("the frame's own API");
                (
                    frame.header().correlation_id(),
                    body.to_owned_struct().encode_to_vec(version),
                )
            });
            let owned =
                ResponseFrame::decode_with(bytes.clone(), api, version, options).map(|frame| {
                    let mut body = Vec::new();
                    let written = frame.body.encode(&mut body, version).map(|()| body);
                    (frame.header.correlation_id, written)
                });
            (view, owned)
        }
    };
    if view != owned {
        return Err(format!(
            "frame view {:?} but owned decode {:?} with {options:?}",
            view.err(),
            owned.err()
        ));
    }
    // Lazily: the header checked when made, the body read through every accessor.
    let owned_body = owned.map(|(_, body)| body.expect("re-encoded"));
    let through = |body: Result<M, DecodeError>| body.map(|b| b.encode_to_vec(version).unwrap());
    let lazy = match M::KIND {
        MessageKind::Request => LazyRequestFrame::new(bytes, options).and_then(|frame| {
            let body = frame
                .body::<M::LazyView<'_>>()
                .expect("the frame's own API");
            through(body.to_owned_via_accessors())
        }),
        _ => LazyResponseFrame::new(bytes, api, version, options).and_then(|frame| {
            let body = frame
                .body::<M::LazyView<'_>>()
                .expect("the frame's own API");
            through(body.to_owned_via_accessors())
        }),
    };
    lazy_agrees(
        &format!("lazy frame with {options:?}"),
        &lazy,
        &owned_body,
        false,
    )
}

struct Proof {
    cells: usize,
    failures: Vec<String>,
}

impl Proof {
    fn check<M: MessageCodec + Random + Viewable + 'static>(
        &mut self,
        version: i16,
        rng: &mut SmallRng,
    ) -> Result<(), String> {
        let mut entropy = vec![0; ENTROPY];
        rng.fill_bytes(&mut entropy);
        let options = RandomOptions {
            unknown_tagged_fields: rng.gen(),
        };
        let message = M::random(&mut Unstructured::new(&entropy), version, &options)
            .map_err(|e| format!("random: {e}"))?;
        let bytes = Bytes::from(
            message
                .encode_to_vec(version)
                .map_err(|e| format!("encode: {e}"))?,
        );
        let (view, owned) = both::<M>(&bytes, version);
        let view = view.map_err(|e| format!("view refused a valid message: {e}"))?;
        if view != message || Ok(&view) != owned.as_ref() {
            return Err(format!(
                "view converted to {view:?}, the original is {message:?}"
            ));
        }
        let (through, converted) = lazy::<M>(&bytes, version);
        if through.as_ref() != Ok(&message) || converted.as_ref() != Ok(&message) {
            return Err(format!(
                "lazy view read {through:?} and converted to {converted:?}, the original is {message:?}"
            ));
        }
        let (checked_fields, lazy_fields) = fields::<M>(&bytes, version);
        if checked_fields.as_ref() != Ok(&message) || lazy_fields.as_ref() != Ok(&message) {
            return Err(format!(
                "fields() read {checked_fields:?} (checked) and {lazy_fields:?} (lazy), the original is {message:?}"
            ));
        }
        walk::check::<M>(&bytes, version, false, true)?;
        // Hostile variants of the same bytes: cut short, one byte changed.
        for hostile in 0..8 {
            let mut bad = bytes.to_vec();
            if bad.is_empty() || rng.gen() {
                bad.truncate(rng.gen_range(0..=bad.len()));
            } else {
                let at = rng.gen_range(0..bad.len());
                bad[at] = rng.gen();
            }
            let cut = bad.len() < bytes.len();
            let bad = Bytes::from(bad);
            let (view, owned) = both::<M>(&bad, version);
            if view != owned {
                return Err(format!(
                    "hostile {:02x?}: view {view:?}, owned {owned:?}",
                    &bad[..]
                ));
            }
            let (through, converted) = lazy::<M>(&bad, version);
            let what = format!("hostile {:02x?}", &bad[..]);
            lazy_agrees(&what, &through, &owned, cut)?;
            if converted != owned {
                return Err(format!(
                    "{what}: lazy to_owned {converted:?}, owned {owned:?}"
                ));
            }
            let (checked_fields, lazy_fields) = fields::<M>(&bad, version);
            if checked_fields != owned {
                return Err(format!(
                    "{what}: checked fields() {checked_fields:?}, owned {owned:?}"
                ));
            }
            lazy_agrees(&format!("{what}: fields()"), &lazy_fields, &owned, cut)?;
            walk::check::<M>(&bad, version, cut, hostile == 0)
                .map_err(|e| format!("{what}: {e}"))?;
        }
        // Whole frames, with default and with tight options.
        for options in [DecodeOptions::default(), tight_options(rng)] {
            if let Some(frame) = frame::<M>(&bytes, version, &options) {
                check_frame::<M>(&frame, version, &options)?;
            }
        }
        Ok(())
    }
}

impl ViewableMessageVisitor for Proof {
    fn visit<M: MessageCodec + Random + Viewable + 'static>(&mut self) {
        let valid = M::VALID_VERSIONS;
        for version in valid.min..=valid.max {
            self.cells += 1;
            let mut rng = SmallRng::seed_from_u64(seed(M::NAME, version));
            for case in 0..CASES_PER_VERSION {
                if let Err(e) = self.check::<M>(version, &mut rng) {
                    self.failures
                        .push(format!("{} v{version} case {case}: {e}", M::NAME));
                    break;
                }
            }
        }
    }
}

#[test]
fn views_agree_with_the_owned_decoder_on_random_and_hostile_bytes() {
    let mut proof = Proof {
        cells: 0,
        failures: Vec::new(),
    };
    kafka_codec::visit_viewable_messages(&mut proof);
    assert!(proof.cells > 700, "only {} cells", proof.cells);
    assert!(
        proof.failures.is_empty(),
        "{} of {} cells failed:\n{}",
        proof.failures.len(),
        proof.cells,
        proof
            .failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

struct Golden {
    cases: usize,
    failures: Vec<String>,
}

impl ViewableMessageVisitor for Golden {
    fn visit<M: MessageCodec + Random + Viewable + 'static>(&mut self) {
        let file = support::corpus_file(M::NAME, M::KIND, M::API_KEY);
        let Ok(text) = std::fs::read_to_string(support::golden_dir().join(&file)) else {
            return;
        };
        let direction = support::direction(M::KIND);
        for (number, line) in text.lines().enumerate() {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let items = value.as_array().expect("an array");
            if items[1] != direction {
                continue;
            }
            let (Some(version), Some(hex)) = (items[0].as_i64(), items[3].as_str()) else {
                continue;
            };
            let bytes = Bytes::from(support::unhex(hex).expect("hex"));
            let (view, owned) = both::<M>(&bytes, version as i16);
            let (through, converted) = lazy::<M>(&bytes, version as i16);
            let (checked_fields, lazy_fields) = fields::<M>(&bytes, version as i16);
            let walked = walk::check::<M>(&bytes, version as i16, false, true);
            self.cases += 1;
            if view != owned
                || owned.is_err()
                || through != owned
                || converted != owned
                || checked_fields != owned
                || lazy_fields != owned
                || walked.is_err()
            {
                self.failures.push(format!(
                    "{file}:{}: view {view:?}, lazy {through:?}, owned {owned:?}, walk {walked:?}",
                    number + 1
                ));
            }
        }
    }
}

#[test]
fn the_golden_corpus_reads_the_same_through_views() {
    let mut golden = Golden {
        cases: 0,
        failures: Vec::new(),
    };
    kafka_codec::visit_viewable_messages(&mut golden);
    assert!(golden.cases > 10_000, "only {} golden cases", golden.cases);
    assert!(
        golden.failures.is_empty(),
        "{}",
        golden
            .failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Tagged fields read by name and raw by tag, arrays know their length, a field the version
/// lacks reads as its default, and a frame's body is only viewed as its own API.
#[test]
fn tagged_fields_lengths_defaults_and_the_body_type() {
    use kafka_codec::messages::api_versions_response::{ApiVersion, ApiVersionsResponseView};
    use kafka_codec::messages::produce_request::ProduceRequestView;
    use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse};

    let keys = (0..5).map(|k| ApiVersion::default().with_api_key(k).with_max_version(3));
    let message = ApiVersionsResponse::default()
        .with_api_keys(keys.collect())
        .with_throttle_time_ms(9)
        .with_finalized_features_epoch(5);
    let bytes = message.encode_to_bytes(3).unwrap();
    let view: ApiVersionsResponseView<'_> = view_message(&bytes, 3).unwrap();
    let api_keys = view.api_keys();
    assert_eq!(api_keys.len(), 5);
    assert_eq!(
        api_keys.map(|k| k.api_key()).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(view.finalized_features_epoch(), 5);
    assert_eq!(view.raw_tagged_field(1), Some(&5i64.to_be_bytes()[..]));
    assert_eq!(view.raw_tagged_field(0), None);
    // The same through `fields()`, whose tagged section is the slice it found once.
    let section = view.fields().tagged_section;
    assert_eq!(section.raw(1), Some(&5i64.to_be_bytes()[..]));
    assert_eq!((section.raw(0), section.raw(3)), (None, None));
    assert_eq!(view.throttle_time_ms(), 9);
    // Version 0 has neither the throttle time nor tags: their defaults (-1 for the epoch).
    let bytes = message.encode_to_bytes(0).unwrap();
    let view: ApiVersionsResponseView<'_> = view_message(&bytes, 0).unwrap();
    assert_eq!(
        (view.throttle_time_ms(), view.finalized_features_epoch()),
        (0, -1)
    );
    assert_eq!(view.fields().tagged_section.raw(1), None);
    assert_eq!(
        view.to_owned(),
        ApiVersionsResponse::decode(&mut bytes.clone(), 0).unwrap()
    );

    let frame = RequestFrame::new(ApiVersionsRequest::default(), 3, 11)
        .with_client_id("router")
        .encode_to_bytes()
        .unwrap();
    let view = RequestFrameView::new(&frame, &DecodeOptions::default()).unwrap();
    assert!(view.body::<ProduceRequestView<'_>>().is_none());
    assert!(view
        .body::<kafka_codec::messages::api_versions_request::ApiVersionsRequestView<'_>>()
        .is_some());
    assert_eq!(
        (view.api_key(), view.api_version()),
        (ApiKey::ApiVersions, 3)
    );
    // A slice a view returned, shared with the frame rather than copied.
    let name = view.header().client_id().unwrap().as_bytes();
    assert_eq!(name, b"router");
    assert_eq!(view.share(name).as_ptr(), name.as_ptr());
}

/// The hand-written hostile inputs of the codec's bad-input tests (`tests/codec/bad_input.rs`):
/// the view's own check refuses each (a view that accepted would be `Ok`), with the owned
/// decoder's error.
#[test]
fn hand_written_hostile_inputs_are_refused_when_the_view_is_made() {
    use kafka_codec::messages::api_versions_request::ApiVersionsRequestView;
    use kafka_codec::messages::describe_quorum_request::DescribeQuorumRequestView;
    use kafka_codec::messages::sasl_handshake_request::SaslHandshakeRequestView;
    use support::annotated_hex as hex;

    fn refused<'a, V: StructView<'a, Mode = Checked>>(input: &'a Bytes, version: i16)
    where
        V::Owned: Message + kafka_codec::codegen::DecodeFields + std::fmt::Debug,
    {
        let owned = V::Owned::decode_exact(input.clone(), version).expect_err("hostile");
        let view = view_message::<V>(input, version)
            .map(|_| ())
            .expect_err("refused");
        assert_eq!(view, owned, "{}", input.len());
    }
    for body in [
        "80 80 80 80 08 00",
        "02 00 01 00",
        "ff ff ff ff ff 01",
        "ff ff",
    ] {
        refused::<DescribeQuorumRequestView<'_>>(&hex(body), 0);
    }
    let long = Bytes::from([&[0x80, 0x80, 0x02][..], &[b'a'; 32768][..]].concat());
    for body in [
        hex("65 61"),
        hex("03 ff fe 01 00"),
        hex("03 c3 28 01 00"),
        long,
    ] {
        refused::<ApiVersionsRequestView<'_>>(&body, 3);
    }
    for tags in ["02 05 00 03 00", "02 05 00 05 00", "7f 00"] {
        refused::<ApiVersionsRequestView<'_>>(&hex(&format!("01 01 {tags}")), 3);
    }
    for body in ["ffff", "fffe", "8000"] {
        refused::<SaslHandshakeRequestView<'_>>(&hex(body), 1);
    }

    let fetch_tag = [
        &hex("0001000c00000001 ffff 00")[..],
        &hex("ffffffff 00000000 00000001 00000000 00 00000000 00000000 01 01 01")[..],
        &hex("01 00 03 02 61 00")[..],
    ]
    .concat();
    let frames = [
        hex("0003000400000009 ffff 7fffffff 01"),
        hex("0003000000000009 ffff ffffffff"),
        Bytes::from(fetch_tag),
    ];
    let samples = [
        "0037000200000007000163 00 02 135f5f636c75737465725f6d65746164617461 02 00000000 00 00 00",
        "0012000300000001 0003636c69 00 0261 0231 00",
        "0003000400000009 ffff 00000001 000174 01",
    ];
    let mut cut = Vec::new();
    for sample in samples {
        let whole = hex(sample);
        assert!(RequestFrameView::new(&whole, &DecodeOptions::default()).is_ok());
        cut.extend((0..whole.len()).map(|at| whole.slice(..at)));
    }
    let mut lenient = Vec::new();
    for (at, frame) in frames.iter().chain(&cut).enumerate() {
        let owned = RequestFrame::decode(frame.clone()).expect_err("hostile");
        let view = RequestFrameView::new(frame, &DecodeOptions::default()).map(|_| ());
        assert_eq!(view.expect_err("refused"), owned);
        // Lazily: refused when made (framing, header), or by the first accessor that
        // reaches the bad bytes, with the same error; a frame cut short always is.
        let lazy = LazyRequestFrame::new(frame, &DecodeOptions::default()).and_then(|lazy| {
            use kafka_codec::messages::{
                ApiVersionsRequest, DescribeQuorumRequest, FetchRequest, MetadataRequest,
            };
            fn read<M: Viewable>(body: Option<M::LazyView<'_>>) -> Result<(), DecodeError> {
                body.expect("the frame's own API")
                    .to_owned_via_accessors()
                    .map(drop)
            }
            match lazy.api_key() {
                ApiKey::Fetch => read::<FetchRequest>(lazy.body()),
                ApiKey::Metadata => read::<MetadataRequest>(lazy.body()),
                ApiKey::ApiVersions => read::<ApiVersionsRequest>(lazy.body()),
                ApiKey::DescribeQuorum => read::<DescribeQuorumRequest>(lazy.body()),
                other => panic!("no sample of {other:?}"),
            }
        });
        match lazy {
            Err(lazy) => assert_eq!(lazy, owned, "{frame:02x?}"),
            Ok(()) => lenient.push(at),
        }
    }
    // The one frame a lazy read accepts whole: Fetch v12 whose tagged field 0 (ClusterId, a
    // nullable compact string) is declared 3 bytes long and holds a 2-byte string. The
    // accessor reads the string; the owned decoder also requires the string to fill the
    // declared size, which no accessor checks.
    assert_eq!(
        lenient,
        [2],
        "only the tagged field's size mismatch is read leniently"
    );
}

/// A lazy read that reaches the end of an array (its iterator asked past the last element)
/// has checked every byte of the array: an array's iterator steps over an element only when
/// asked for the next one, and over the last when asked past it, where a bad last element is
/// one more item, the owned decoder's error. Reads of a Produce v13 request (partitions
/// stepped over as handed out) and a Metadata v12 response (partitions stepped over when the
/// next is asked for, their array's end kept for the step over their topic), cut by every
/// length that reaches into the topics (the body's last byte is the root's tagged section,
/// which no reader here reaches): reading only each topic's name or id, or each topic's
/// partitions too, fails with the owned decoder's error (kind, offset, path).
#[test]
fn a_lazy_read_to_an_arrays_end_checks_its_last_element() {
    use kafka_codec::messages::metadata_response::{
        MetadataResponsePartition, MetadataResponseTopic, MetadataResponseView,
    };
    use kafka_codec::messages::produce_request::{
        PartitionProduceData, ProduceRequestView, TopicProduceData,
    };
    use kafka_codec::messages::{MetadataResponse, ProduceRequest};
    use kafka_codec::{Lazy, Uuid};
    type Read = fn(&Bytes) -> Result<u64, DecodeError>;

    fn check(
        name: &str,
        bytes: &Bytes,
        owned: fn(&Bytes) -> Result<u64, DecodeError>,
        reads: [Read; 2],
    ) {
        for read in reads {
            assert_eq!(read(bytes), owned(bytes), "{name}: whole");
        }
        for cut in 2..=bytes.len() {
            let short = bytes.slice(..bytes.len() - cut);
            let want = owned(&short);
            assert!(want.is_err(), "{name}: cut {cut}");
            for (i, read) in reads.iter().enumerate() {
                assert_eq!(read(&short), want, "{name}: read {i}, cut {cut}");
            }
        }
    }

    let produce = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(
            (0..2u8)
                .map(|t| {
                    TopicProduceData::default()
                        .with_topic_id(Uuid([t + 1; 16]))
                        .with_partition_data(
                            (0..2)
                                .map(|p| {
                                    PartitionProduceData::default()
                                        .with_index(p)
                                        .with_records(Some(Bytes::from(vec![p as u8; 40])))
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    fn produce_owned(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = ProduceRequest::decode(&mut bytes.clone(), 13)?;
        Ok(message
            .topic_data
            .iter()
            .map(|t| t.topic_id.halves().0 as u64)
            .sum())
    }
    fn produce_ids(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<ProduceRequest>(bytes, 13)?;
        let view: ProduceRequestView<'_, Lazy> = message.view().expect("its view");
        let mut sum = 0;
        for topic in view.topic_data()? {
            sum += topic?.topic_id()?.halves().0 as u64;
        }
        Ok(sum)
    }
    fn produce_route(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<ProduceRequest>(bytes, 13)?;
        let view: ProduceRequestView<'_, Lazy> = message.view().expect("its view");
        let (mut sum, mut partitions) = (0, 0);
        for topic in view.topic_data()? {
            let topic = topic?;
            sum += topic.topic_id()?.halves().0 as u64;
            for partition in topic.partition_data()? {
                let partition = partition?;
                partitions +=
                    partition.index()? as u64 + partition.records()?.map_or(0, <[u8]>::len) as u64;
            }
        }
        assert_eq!(partitions, 2 * (1 + 80));
        Ok(sum)
    }
    let bytes = produce.encode_to_bytes(13).unwrap();
    check(
        "produce v13",
        &bytes,
        produce_owned,
        [produce_ids, produce_route],
    );

    let metadata = MetadataResponse::default().with_topics(
        (0..2)
            .map(|t| {
                MetadataResponseTopic::default()
                    .with_name(Some(format!("topic-{t}").into()))
                    .with_partitions(
                        (0..2)
                            .map(|p| {
                                MetadataResponsePartition::default()
                                    .with_partition_index(p)
                                    .with_leader_id(t * 10 + p)
                                    .with_replica_nodes([1, 2, 3].into_iter().collect())
                            })
                            .collect(),
                    )
            })
            .collect(),
    );
    fn metadata_owned(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = MetadataResponse::decode(&mut bytes.clone(), 12)?;
        Ok(message
            .topics
            .iter()
            .map(|t| t.name.as_ref().map_or(0, |n| n.len()) as u64)
            .sum())
    }
    fn metadata_names(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<MetadataResponse>(bytes, 12)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().expect("its view");
        let mut sum = 0;
        for topic in view.topics()? {
            sum += topic?.name()?.map_or(0, str::len) as u64;
        }
        Ok(sum)
    }
    fn metadata_route(bytes: &Bytes) -> Result<u64, DecodeError> {
        let message = LazyMessage::new::<MetadataResponse>(bytes, 12)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().expect("its view");
        let (mut sum, mut leaders) = (0, 0);
        for topic in view.topics()? {
            let topic = topic?;
            sum += topic.name()?.map_or(0, str::len) as u64;
            for partition in topic.partitions()? {
                leaders += partition?.leader_id()? as u64;
            }
        }
        assert_eq!(leaders, 22);
        Ok(sum)
    }
    let bytes = metadata.encode_to_bytes(12).unwrap();
    check(
        "metadata v12",
        &bytes,
        metadata_owned,
        [metadata_names, metadata_route],
    );
}
