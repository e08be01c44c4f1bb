//! Bad input gets a typed error, never a panic: truncation, lying lengths and counts,
//! negative lengths, overlong varints, invalid UTF-8, tag order, unknown APIs and versions,
//! trailing bytes.

use crate::support::annotated_hex as hex;
use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::messages::{
    describe_quorum_request::DescribeQuorumRequest, ApiVersionsRequest, RequestHeader,
    SaslHandshakeRequest,
};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::MessageCodec;
use kafka_codec::{
    ApiKey, DecodeErrorKind, DecodeOptions, Message, Request, RequestFrame, ResponseFrame,
    TrailingBytes,
};
use rand::{rngs::SmallRng, RngCore, SeedableRng};

/// DescribeQuorumRequest v2 (flexible) and ApiVersionsRequest v3 frames.
const DESCRIBE_QUORUM_V2: &str =
    "0037000200000007000163 00 02 135f5f636c75737465725f6d65746164617461 02 00000000 00 00 00";
const API_VERSIONS_V3: &str = "0012000300000001 0003636c69 00 0261 0231 00";
/// MetadataRequest v4 (classic encodings): one topic "t", allow auto-creation.
const METADATA_V4: &str = "0003000400000009 ffff 00000001 000174 01";

/// Random well-formed request frames for every API and version.
fn random_frames(count_per_version: usize) -> Vec<Bytes> {
    struct Collect(Vec<Bytes>, SmallRng, usize);
    impl kafka_codec::RandomMessageVisitor for Collect {
        fn visit<M: MessageCodec + Random>(&mut self) {
            if M::KIND != kafka_codec::MessageKind::Request {
                return;
            }
            let api = ApiKey::from_key(M::API_KEY.unwrap()).unwrap();
            for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
                for _ in 0..self.2 {
                    let mut entropy = vec![0u8; 8192];
                    self.1.fill_bytes(&mut entropy);
                    let mut u = Unstructured::new(&entropy);
                    let body = M::random(&mut u, version, &RandomOptions::default()).unwrap();
                    let mut buf = Vec::new();
                    RequestHeader::default()
                        .with_request_api_key(api.key())
                        .with_request_api_version(version)
                        .with_correlation_id(1)
                        .with_client_id(Some("x".into()))
                        .encode(&mut buf, api.request_header_version(version))
                        .unwrap();
                    body.encode(&mut buf, version).unwrap();
                    self.0.push(Bytes::from(buf));
                }
            }
        }
    }
    let mut collect = Collect(Vec::new(), SmallRng::seed_from_u64(7), count_per_version);
    kafka_codec::visit_random_messages(&mut collect);
    collect.0
}

#[test]
fn every_truncation_of_every_frame_is_a_typed_error() {
    let mut frames = vec![
        hex(DESCRIBE_QUORUM_V2),
        hex(API_VERSIONS_V3),
        hex(METADATA_V4),
    ];
    frames.extend(random_frames(1));
    let mut prefixes = 0;
    for frame in &frames {
        let whole = RequestFrame::decode(frame.clone());
        assert!(whole.is_ok(), "{frame:x?}: {whole:?}");
        for cut in 0..frame.len() {
            let err = RequestFrame::decode(frame.slice(..cut)).unwrap_err();
            assert!(
                err.offset() <= cut,
                "offset {} beyond cut {cut}: {err}",
                err.offset()
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 10_000, "{prefixes}");
}

#[test]
fn a_count_far_beyond_the_input_is_refused_before_allocating() {
    // DescribeQuorumRequest v0 body: Topics compact count 0x7fffffff + 1.
    let mut body = hex("80 80 80 80 08 00");
    let err = DescribeQuorumRequest::decode(&mut body, 0).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::LengthExceedsInput {
                declared: 0x7fff_ffff,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.path().to_string(), "Topics");
    assert_eq!(err.offset(), 0);
    // MetadataRequest v4 with a classic topic count of 0x7fffffff in a 5-byte body.
    let frame = hex("0003000400000009 ffff 7fffffff 01");
    let err = RequestFrame::decode(frame).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::LengthExceedsInput { .. }),
        "{err}"
    );
    assert_eq!(err.offset(), 10);
    assert_eq!(err.message(), Some("MetadataRequest"));
    assert_eq!(err.version(), Some(4));
}

#[test]
fn a_string_length_beyond_the_input_is_refused() {
    // ApiVersionsRequest v3: ClientSoftwareName claims 100 bytes, 1 follows.
    let mut body = hex("65 61");
    let err = ApiVersionsRequest::decode(&mut body, 3).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::LengthExceedsInput {
                declared: 100,
                remaining: 1
            }
        ),
        "{err}"
    );
    assert_eq!(err.path().to_string(), "ClientSoftwareName");
    // Kafka refuses strings over 32767 bytes even when the bytes are there.
    let mut long = vec![0x81, 0x80, 0x02]; // compact length 32768 + 1
    long.extend(std::iter::repeat_n(b'a', 32768));
    let err = ApiVersionsRequest::decode(&mut Bytes::from(long), 3).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::StringTooLong(32768)),
        "{err}"
    );
}

#[test]
fn negative_lengths_where_null_is_not_allowed() {
    // SaslHandshakeRequest v1 (classic): Mechanism is a non-nullable int16-length string.
    for (bytes, expected) in [
        ("ffff", DecodeErrorKind::UnexpectedNull),
        ("fffe", DecodeErrorKind::NegativeLength(-2)),
        ("8000", DecodeErrorKind::NegativeLength(-32768)),
    ] {
        let err = SaslHandshakeRequest::decode(&mut hex(bytes), 1).unwrap_err();
        assert_eq!(err.kind(), &expected);
        assert_eq!(err.path().to_string(), "Mechanism");
    }
    // Compact form: 0 is null; DescribeQuorumRequest's topic name is not nullable. The
    // topic's other fields are there (empty partitions, no tags), so its count fits.
    let err = DescribeQuorumRequest::decode(&mut hex("02 00 01 00"), 0).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::UnexpectedNull);
    assert_eq!(err.path().to_string(), "Topics[0].TopicName");
    assert_eq!(err.offset(), 1);
    // Classic array count -1 for a non-nullable array (MetadataRequest v0 Topics).
    let frame = hex("0003000000000009 ffff ffffffff");
    let err = RequestFrame::decode(frame).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::UnexpectedNull);
}

#[test]
fn varints_longer_than_five_bytes_are_refused() {
    let err = DescribeQuorumRequest::decode(&mut hex("ff ff ff ff ff 01"), 0).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::VarintTooLong { max_bytes: 5 });
    let input = hex("ff ff ff ff ff ff ff ff ff ff 01");
    let err = kafka_codec::wire::Decoder::new(&input)
        .read_varlong()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::VarintTooLong { max_bytes: 10 }
    );
    // A varint cut short is truncation, not overflow.
    let err = DescribeQuorumRequest::decode(&mut hex("ff ff"), 0).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::UnexpectedEof { .. }),
        "{err}"
    );
}

#[test]
fn invalid_utf8_is_refused() {
    let err = ApiVersionsRequest::decode(&mut hex("03 ff fe 01 00"), 3).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::InvalidUtf8);
    assert_eq!(err.path().to_string(), "ClientSoftwareName");
    let err = ApiVersionsRequest::decode(&mut hex("03 c3 28 01 00"), 3).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::InvalidUtf8);
}

#[test]
fn tagged_fields_out_of_order_repeated_or_missized() {
    // ApiVersionsRequest v3 body with a tagged section of two unknown tags.
    let body = |tags: &str| hex(&format!("01 01 {tags}"));
    let ok = ApiVersionsRequest::decode_exact(body("02 03 00 05 01 aa"), 3).unwrap();
    assert_eq!(ok.unknown_tagged_fields.len(), 2);
    let err = ApiVersionsRequest::decode_exact(body("02 05 00 03 00"), 3).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::TagOutOfOrder {
            tag: 3,
            previous: 5
        }
    );
    let err = ApiVersionsRequest::decode_exact(body("02 05 00 05 00"), 3).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::DuplicateTag(5));
    // A tagged section claiming more entries than bytes can hold.
    let err = ApiVersionsRequest::decode_exact(body("7f 00"), 3).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::LengthExceedsInput { .. }),
        "{err}"
    );
    // A known tag whose value does not fill its declared size: FetchRequest v12's ClusterId
    // (tag 0, compact nullable string) declared 3 bytes but holding a 1-byte string + 1 extra.
    let mut frame = hex("0001000c00000001 ffff 00");
    frame = Bytes::from(
        [
            &frame[..],
            &hex("ffffffff 00000000 00000001 00000000 00 00000000 00000000 01 01 01")[..],
            &hex("01 00 03 02 61 00")[..],
        ]
        .concat(),
    );
    let err = RequestFrame::decode(frame).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::TaggedFieldSize {
                tag: 0,
                declared: 3,
                used: 2
            }
        ),
        "{err}"
    );
}

#[test]
fn unknown_api_keys_and_versions_are_refused() {
    let err = RequestFrame::decode(hex("03e7 0000 00000001 ffff")).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::UnknownApiKey(999));
    // Known keys beyond any version a Kafka release defines: LeaderAndIsr (removed in Kafka 4,
    // 0-7 in 3.9) and Produce (0-13 across 3.9 and 4.4).
    for (frame, version) in [
        ("0004 0008 00000001 ffff", 8),
        ("0000 000e 00000001 ffff", 14),
    ] {
        let err = RequestFrame::decode(hex(frame)).unwrap_err();
        assert!(
            matches!(err.kind(), DecodeErrorKind::UnsupportedVersion { version: v, .. } if *v == version),
            "{err}"
        );
    }
    let err = DescribeQuorumRequest::decode(&mut hex("01 00"), 4).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::UnsupportedVersion { version: 4, .. }
        ),
        "{err}"
    );
    let err =
        ResponseFrame::decode(hex("00000001 00 0000"), ApiKey::DescribeQuorum, -1).unwrap_err();
    assert!(
        matches!(err.kind(), DecodeErrorKind::UnsupportedVersion { .. }),
        "{err}"
    );
    assert!(RequestFrame::decode(hex("00")).is_err());
}

#[test]
fn trailing_bytes_are_refused_or_allowed_on_request() {
    let mut frame = hex(API_VERSIONS_V3).to_vec();
    frame.extend_from_slice(&[0xde, 0xad]);
    let frame = Bytes::from(frame);
    let err = RequestFrame::decode(frame.clone()).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes(2));
    assert_eq!(err.offset(), 19);
    let lenient = DecodeOptions {
        trailing_bytes: TrailingBytes::Allow,
        ..Default::default()
    };
    let decoded = RequestFrame::decode_with(frame, &lenient).unwrap();
    assert!(matches!(decoded.body, Request::ApiVersions(_)));
    // `Message::decode` is lenient and leaves the rest in the buffer.
    let mut body = hex("0261 0231 00 ff");
    ApiVersionsRequest::decode(&mut body, 3).unwrap();
    assert_eq!(&body[..], [0xff]);
    assert!(ApiVersionsRequest::decode_exact(hex("0261 0231 00 ff"), 3).is_err());
}

#[test]
fn error_messages_name_message_version_path_and_offset() {
    let err = DescribeQuorumRequest::decode(&mut hex("02 00 01 00"), 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "null is not allowed here at this version in DescribeQuorumRequest v0 at Topics[0].TopicName (byte offset 1)"
    );
}

/// A run of fixed-width fields is taken with one length check; a run cut short must still
/// be reported at the field it cuts, as reading field by field reports it.
#[test]
fn a_cut_inside_a_run_of_fixed_width_fields_names_the_field() {
    use kafka_codec::messages::describe_quorum_response::{
        DescribeQuorumResponse, PartitionData, ReplicaState, TopicData,
    };
    use kafka_codec::RawTaggedField;
    // ReplicaState at v2: ReplicaId, ReplicaDirectoryId, LogEndOffset, LastFetchTimestamp,
    // LastCaughtUpTimestamp: one 44-byte run. The values are found in the bytes by pattern.
    let voter = |id: i32| {
        ReplicaState::default()
            .with_replica_id(id)
            .with_log_end_offset(0x0a0b_0c0d_0e0f_1011 + i64::from(id))
            .with_last_fetch_timestamp(0x2122_2324_2526_2728 + i64::from(id))
            .with_last_caught_up_timestamp(-1)
    };
    // The first voter carries an unknown tagged field, so that a cut inside the second one
    // passes the array's count check (two voters of at least 45 bytes) and reaches the run.
    let mut first = voter(1);
    first.unknown_tagged_fields = vec![RawTaggedField {
        tag: 0,
        data: Bytes::from(vec![0x55; 60]),
    }]
    .into();
    let message = DescribeQuorumResponse::default().with_topics(vec![TopicData::default()
        .with_topic_name("t".into())
        .with_partitions(vec![
            PartitionData::default().with_current_voters(vec![first, voter(2)])
        ])]);
    let bytes = message.encode_to_bytes(2).unwrap();
    let find = |value: i64| {
        let pattern = value.to_be_bytes();
        bytes.windows(8).position(|w| w == pattern).unwrap()
    };
    // Cut 3 bytes into the second voter's LastFetchTimestamp.
    let field = find(0x2122_2324_2526_2728 + 2);
    let err = DescribeQuorumResponse::decode(&mut bytes.slice(..field + 3), 2).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::UnexpectedEof {
            needed: 8,
            remaining: 3
        }
    );
    assert_eq!(err.offset(), field);
    assert_eq!(
        err.path().to_string(),
        "Topics[0].Partitions[0].CurrentVoters[1].LastFetchTimestamp"
    );
    // Every cut inside the second voter's run lands on the field it cuts.
    let run = find(0x0a0b_0c0d_0e0f_1011 + 2) - 20;
    for cut in run..run + 44 {
        let err = DescribeQuorumResponse::decode(&mut bytes.slice(..cut), 2).unwrap_err();
        let DecodeErrorKind::UnexpectedEof { needed, remaining } = *err.kind() else {
            panic!("cut {cut}: {err}");
        };
        assert_eq!(err.offset() + remaining, cut, "cut {cut}: {err}");
        let (path, width) = match cut - run {
            0..4 => ("ReplicaId", 4),
            4..20 => ("ReplicaDirectoryId", 16),
            20..28 => ("LogEndOffset", 8),
            28..36 => ("LastFetchTimestamp", 8),
            _ => ("LastCaughtUpTimestamp", 8),
        };
        assert_eq!(needed, width, "cut {cut}: {err}");
        assert_eq!(
            err.path().to_string(),
            format!("Topics[0].Partitions[0].CurrentVoters[1].{path}")
        );
    }
}

/// The same where every version has the run's layout, and a short run is reported by one
/// shared function rather than by reading the fields again.
#[test]
fn a_cut_inside_a_run_of_every_version_names_the_field() {
    use kafka_codec::messages::AllocateProducerIdsRequest;
    // BrokerId (int32), BrokerEpoch (int64): one 12-byte run, then the tagged-field count.
    let request = AllocateProducerIdsRequest::default()
        .with_broker_id(7)
        .with_broker_epoch(9);
    let bytes = request.encode_to_bytes(0).unwrap();
    assert_eq!(bytes.len(), 13);
    for cut in 0..12 {
        let err = AllocateProducerIdsRequest::decode(&mut bytes.slice(..cut), 0).unwrap_err();
        let (path, offset, needed) = if cut < 4 {
            ("BrokerId", 0, 4)
        } else {
            ("BrokerEpoch", 4, 8)
        };
        assert_eq!(
            err.kind(),
            &DecodeErrorKind::UnexpectedEof {
                needed,
                remaining: cut - offset
            },
            "cut {cut}"
        );
        assert_eq!(err.offset(), offset, "cut {cut}");
        assert_eq!(err.path().to_string(), path, "cut {cut}");
    }
}
