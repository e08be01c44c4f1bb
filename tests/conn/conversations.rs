//! The conversation layer (`kafka_codec::conn`): version negotiation and the ApiVersions
//! fallback, the client and server connection state machines, and the observer a tap uses.
//!
//! Property tests draw from a seeded `SmallRng`; `KAFKA_CODEC_SEED=N` replays another seed.

use bytes::{Bytes, BytesMut};
use kafka_codec::conn::{
    ApiVersionsReply, ClientConnection, ConnError, Direction, InFlight, NegotiationError, Observed,
    Observer, RawRequestHeader, ServerConnection, SupportedVersions,
};
use kafka_codec::messages::api_versions_response::ApiVersion;
use kafka_codec::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeQuorumResponse, MetadataRequest,
    MetadataResponse, ProduceRequest, ProduceResponse, ResponseHeader,
};
use kafka_codec::visit_messages;
use kafka_codec::wire::Decoder;
use kafka_codec::ErrorCode;
use kafka_codec::Framing;
use kafka_codec::MessageCodec;
use kafka_codec::{
    ApiKey, DecodeErrorKind, DecodeLimits, DecodeOptions, MessageKind, MessageVisitor, Request,
    RequestFrame, Response, ResponseFrame, VersionRange,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

fn seed(default: u64) -> u64 {
    std::env::var("KAFKA_CODEC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------------------
// Default bodies of every API, to drive the connections with every request and response type

type EncodeDefault = fn(i16) -> Bytes;

fn encode_default<M: MessageCodec>(version: i16) -> Bytes {
    M::default()
        .encode_to_bytes(version)
        .unwrap_or_else(|e| panic!("default {} v{version}: {e}", M::NAME))
}

#[derive(Default)]
struct Defaults {
    requests: BTreeMap<i16, EncodeDefault>,
    responses: BTreeMap<i16, EncodeDefault>,
}

impl MessageVisitor for Defaults {
    fn visit<M: MessageCodec>(&mut self) {
        let table = match M::KIND {
            MessageKind::Request => &mut self.requests,
            MessageKind::Response => &mut self.responses,
            _ => return,
        };
        table.insert(M::API_KEY.expect("an API message"), encode_default::<M>);
    }
}

impl Defaults {
    fn new() -> Self {
        let mut defaults = Defaults::default();
        visit_messages(&mut defaults);
        defaults
    }

    fn request(&self, api: ApiKey, version: i16) -> Request {
        let bytes = self.requests[&api.key()](version);
        Request::decode_from(api, &mut Decoder::new(&bytes), version).unwrap()
    }

    fn response(&self, api: ApiKey, version: i16) -> Response {
        let bytes = self.responses[&api.key()](version);
        Response::decode_from(api, &mut Decoder::new(&bytes), version).unwrap()
    }
}

fn metadata() -> Request {
    Request::from(MetadataRequest::default())
}

fn produce(acks: i16) -> Request {
    Request::from(
        ProduceRequest::default()
            .with_acks(acks)
            .with_timeout_ms(1000),
    )
}

/// A response frame answering `correlation_id` at `version`.
fn answer(correlation_id: i32, version: i16, body: impl Into<Response>) -> ResponseFrame {
    ResponseFrame {
        api_version: version,
        header: ResponseHeader::default().with_correlation_id(correlation_id),
        body: body.into(),
    }
}

fn wire(frame: &ResponseFrame) -> BytesMut {
    let mut out = BytesMut::new();
    frame.encode(&mut out, Framing::SizePrefixed).unwrap();
    out
}

// ---------------------------------------------------------------------------------------------
// Negotiation

#[test]
fn negotiation_picks_the_highest_common_version_of_random_ranges() {
    let seed = seed(0x6e65_676f);
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut overlapping, mut disjoint, mut missing) = (0, 0, 0);
    for case in 0..5_000 {
        let api = ApiKey::ALL[rng.gen_range(0..ApiKey::ALL.len())];
        let range = |rng: &mut SmallRng| {
            let a = rng.gen_range(-1..=20);
            let b = rng.gen_range(-1..=20);
            VersionRange::new(a.min(b), a.max(b))
        };
        let (ours, theirs) = (range(&mut rng), range(&mut rng));
        let listed = rng.gen_bool(0.9);
        let peer = SupportedVersions::from_ranges(
            listed
                .then_some((api.key(), theirs))
                .into_iter()
                .chain([(-7, VersionRange::new(0, 99))]),
        );
        let got = peer.negotiate_within(api, ours);
        let lo = ours.min.max(theirs.min);
        let hi = ours.max.min(theirs.max);
        let want = if !listed {
            missing += 1;
            Err(NegotiationError::NotSupportedByPeer { api })
        } else if lo <= hi {
            overlapping += 1;
            Ok(hi)
        } else {
            disjoint += 1;
            Err(NegotiationError::NoCommonVersion {
                api,
                ours: Some(ours),
                theirs,
            })
        };
        assert_eq!(
            got, want,
            "seed {seed} case {case}: {api} ours {ours} theirs {theirs}"
        );
        if let Ok(version) = got {
            // The pick is in both ranges, and nothing above it is.
            assert!(ours.contains(version) && theirs.contains(version));
            assert!(!(ours.contains(version + 1) && theirs.contains(version + 1)));
            assert_eq!(
                peer.common_versions(api, ours),
                Ok(VersionRange::new(lo, hi))
            );
        }
    }
    assert!(overlapping > 1000 && disjoint > 500 && missing > 100);
}

#[test]
fn negotiation_never_picks_an_unstable_version_unless_asked() {
    let mut unstable = Vec::new();
    for &api in ApiKey::ALL {
        let valid = api.valid_versions();
        // A peer that advertises everything we know, unstable versions included.
        let peer = SupportedVersions::from_ranges([(api.key(), valid)]);
        match api.stable_versions() {
            Some(stable) => {
                assert_eq!(peer.negotiate(api), Ok(stable.max), "{api}");
                assert!(stable.max < valid.max || !api.latest_version_unstable());
            }
            None => assert!(
                matches!(
                    peer.negotiate(api),
                    Err(NegotiationError::NoCommonVersion { ours: None, .. })
                ),
                "{api}"
            ),
        }
        // Opting in reaches the top.
        assert_eq!(peer.negotiate_within(api, valid), Ok(valid.max), "{api}");
        if api.latest_version_unstable() {
            unstable.push(api);
            // A peer that has only the unstable version has nothing in common with us.
            let only_unstable = SupportedVersions::from_ranges([(
                api.key(),
                VersionRange::new(valid.max, valid.max),
            )]);
            assert!(
                matches!(
                    only_unstable.negotiate(api),
                    Err(NegotiationError::NoCommonVersion { .. })
                ),
                "{api}"
            );
        }
    }
    // Kafka 4.4.0 marks at least InitProducerId v6 unstable; the test must see one.
    assert!(unstable.contains(&ApiKey::InitProducerId), "{unstable:?}");
    // And our own provisional DescribeQuorum v3 is marked the same way.
    assert!(unstable.contains(&ApiKey::DescribeQuorum), "{unstable:?}");
}

#[test]
fn describe_quorum_v3_is_used_only_when_asked_for() {
    let api = ApiKey::DescribeQuorum;
    assert_eq!(api.valid_versions(), VersionRange::new(0, 3));
    assert_eq!(api.stable_versions(), Some(VersionRange::new(0, 2)));
    // A server built on this crate does not advertise it by default.
    assert_eq!(
        SupportedVersions::stable([api]).get(api.key()),
        Some(VersionRange::new(0, 2))
    );
    // Against a peer that has it: v2, unless the caller opts in.
    let peer = SupportedVersions::from_ranges([(api.key(), VersionRange::new(0, 3))]);
    assert_eq!(peer.negotiate(api), Ok(2));
    assert_eq!(peer.negotiate_within(api, api.valid_versions()), Ok(3));
    // Against Kafka 4.4.0 (0-2): v2 either way.
    let kafka = SupportedVersions::from_ranges([(api.key(), VersionRange::new(0, 2))]);
    assert_eq!(kafka.negotiate(api), Ok(2));
    assert_eq!(kafka.negotiate_within(api, api.valid_versions()), Ok(2));
}

#[test]
fn supported_versions_read_an_api_versions_response() {
    let entry = |api_key, min_version, max_version| {
        ApiVersion::default()
            .with_api_key(api_key)
            .with_min_version(min_version)
            .with_max_version(max_version)
    };
    let response = ApiVersionsResponse::default().with_api_keys(vec![
        entry(3, 0, 12),
        entry(18, 0, 4),
        entry(2000, 1, 2),
        entry(1, 5, 4),
    ]);
    let peer = SupportedVersions::from_response(&response).unwrap();
    assert_eq!(peer.len(), 4);
    // A key we do not know is kept, not dropped.
    assert_eq!(peer.get(2000), Some(VersionRange::new(1, 2)));
    assert_eq!(peer.negotiate(ApiKey::Metadata), Ok(12));
    // An empty range matches nothing.
    assert!(matches!(
        peer.negotiate(ApiKey::Fetch),
        Err(NegotiationError::NoCommonVersion { .. })
    ));
    assert_eq!(
        peer.to_string(),
        "Fetch 5-4, Metadata 0-12, ApiVersions 0-4, key 2000 1-2"
    );
    let mut by_key = response.api_keys.clone();
    by_key.sort_by_key(|entry| entry.api_key);
    assert_eq!(peer.to_api_keys(), by_key);

    let failed = response
        .clone()
        .with_error_code(ErrorCode::CLUSTER_AUTHORIZATION_FAILED.code());
    assert_eq!(
        SupportedVersions::from_response(&failed),
        Err(NegotiationError::ApiVersionsFailed(
            ErrorCode::CLUSTER_AUTHORIZATION_FAILED
        ))
    );
    let mut twice = response;
    twice.api_keys.push(entry(3, 0, 1));
    assert_eq!(
        SupportedVersions::from_response(&twice),
        Err(NegotiationError::DuplicateApiKey(3))
    );
}

#[test]
fn api_versions_fallback_picks_the_version_to_retry_with() {
    let first = ApiVersionsReply::first_version();
    assert_eq!(
        Some(first),
        ApiKey::ApiVersions.stable_versions().map(|r| r.max)
    );
    let refused = |range: Option<(i16, i16)>| {
        ApiVersionsResponse::default()
            .with_error_code(ErrorCode::UNSUPPORTED_VERSION.code())
            .with_api_keys(
                range
                    .map(|(min_version, max_version)| {
                        ApiVersion::default()
                            .with_api_key(ApiKey::ApiVersions.key())
                            .with_min_version(min_version)
                            .with_max_version(max_version)
                    })
                    .into_iter()
                    .collect(),
            )
    };
    // The broker's range is named: the highest both speak.
    assert_eq!(
        ApiVersionsReply::read(&refused(Some((0, 2))), first),
        Ok(ApiVersionsReply::RetryWith(2))
    );
    // A broker newer than us that still refused (it never does): nothing lower to go to.
    assert_eq!(
        ApiVersionsReply::read(&refused(Some((0, 9))), first),
        Err(NegotiationError::NoApiVersionsFallback {
            sent: first,
            peer_max: Some(9)
        })
    );
    // Brokers before 2.4 name no range: version 0, as Kafka's client does.
    assert_eq!(
        ApiVersionsReply::read(&refused(None), 3),
        Ok(ApiVersionsReply::RetryWith(0))
    );
    // Refused at version 0: the end of the road.
    assert!(matches!(
        ApiVersionsReply::read(&refused(None), 0),
        Err(NegotiationError::NoApiVersionsFallback { sent: 0, .. })
    ));
    // A range that does not overlap ours at all.
    assert!(matches!(
        ApiVersionsReply::read(&refused(Some((-5, -1))), 3),
        Err(NegotiationError::NoApiVersionsFallback { .. })
    ));
    // Success gives the table; another error fails.
    let ok = ApiVersionsResponse::default()
        .with_api_keys(SupportedVersions::stable([ApiKey::Metadata]).to_api_keys());
    assert!(matches!(
        ApiVersionsReply::read(&ok, 3),
        Ok(ApiVersionsReply::Supported(peer)) if peer.negotiate(ApiKey::Metadata).is_ok()
    ));
    let denied = ApiVersionsResponse::default().with_error_code(ErrorCode::INVALID_REQUEST.code());
    assert_eq!(
        ApiVersionsReply::read(&denied, 3),
        Err(NegotiationError::ApiVersionsFailed(
            ErrorCode::INVALID_REQUEST
        ))
    );
}

#[test]
fn api_versions_fallback_property() {
    let seed = seed(0xfa11_bacc);
    let mut rng = SmallRng::seed_from_u64(seed);
    let ours = VersionRange::new(
        ApiKey::ApiVersions.valid_versions().min,
        ApiVersionsReply::first_version(),
    );
    let (mut retries, mut refusals) = (0, 0);
    for case in 0..5_000 {
        let sent: i16 = rng.gen_range(-1..=12);
        let (a, b) = (rng.gen_range(-2..=12), rng.gen_range(-2..=12));
        let theirs = VersionRange::new(a.min(b), a.max(b));
        let listed = rng.gen_bool(0.8);
        let response = ApiVersionsResponse::default()
            .with_error_code(ErrorCode::UNSUPPORTED_VERSION.code())
            .with_api_keys(
                listed
                    .then_some(
                        ApiVersion::default()
                            .with_api_key(ApiKey::ApiVersions.key())
                            .with_min_version(theirs.min)
                            .with_max_version(theirs.max),
                    )
                    .into_iter()
                    .collect(),
            );
        let context =
            format!("seed {seed} case {case}: sent v{sent}, theirs {theirs} listed {listed}");
        match ApiVersionsReply::read(&response, sent) {
            Ok(ApiVersionsReply::RetryWith(version)) => {
                retries += 1;
                // Always lower than what was refused, and one we speak.
                assert!(
                    version < sent && ours.contains(version),
                    "{context}: v{version}"
                );
                if listed {
                    // The highest both speak.
                    assert_eq!(version, theirs.max.min(ours.max), "{context}");
                    assert!(theirs.min <= version, "{context}: v{version}");
                } else {
                    assert_eq!(version, ours.min, "{context}");
                }
            }
            Ok(other) => panic!("{context}: {other:?}"),
            Err(NegotiationError::NoApiVersionsFallback { sent: s, peer_max }) => {
                refusals += 1;
                assert_eq!(s, sent);
                assert_eq!(peer_max, listed.then_some(theirs.max), "{context}");
                // No version below `sent` that both speak (by the peer's highest when listed).
                let candidate = if listed {
                    theirs.max.min(ours.max)
                } else {
                    ours.min
                };
                assert!(
                    candidate >= sent
                        || !ours.contains(candidate)
                        || (listed && candidate < theirs.min),
                    "{context}: v{candidate} was possible"
                );
            }
            Err(other) => panic!("{context}: {other}"),
        }
    }
    assert!(
        retries > 1000 && refusals > 1000,
        "{retries} retries, {refusals} refusals"
    );
}

/// The whole dance, through both sides: the client asks at a version the server cannot read,
/// the server answers as Kafka does (version 0, UNSUPPORTED_VERSION, its range), the client
/// reads that answer at version 0, retries, and negotiates from the real answer.
#[test]
fn api_versions_fallback_dance_through_both_connections() {
    let mut client = ClientConnection::new().with_client_id("dance");
    let mut server = ServerConnection::new();
    let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
    // A newer client: ApiVersions v9, a version this crate cannot read; the body is whatever
    // the newer version holds (Kafka does not read it).
    let newer = ApiKey::ApiVersions.valid_versions().max + 4;
    let sent = client
        .send_encoded(
            ApiKey::ApiVersions,
            newer,
            b"\x05hello\x02\x31\x00",
            true,
            &mut to_server,
        )
        .unwrap();

    let request = server.receive(&mut to_server).unwrap().unwrap();
    assert!(request.is_unsupported_api_versions());
    assert_eq!(request.api_version, 0);
    assert_eq!(request.header.request_api_version, newer);
    assert_eq!(request.header.client_id.as_deref(), Some("dance"));
    assert_eq!(request.correlation_id(), sent.correlation_id);
    let ours = VersionRange::new(0, 2);
    server
        .send(
            &request.unsupported_api_versions_response(ours),
            &mut to_client,
        )
        .unwrap();

    let response = client.receive(&mut to_client).unwrap().unwrap();
    assert_eq!(response.api_version, 0, "read at version 0");
    let Response::ApiVersions(body) = &response.body else {
        panic!("{response:?}")
    };
    let ApiVersionsReply::RetryWith(retry) = ApiVersionsReply::read(body, newer).unwrap() else {
        panic!("no retry")
    };
    assert_eq!(retry, 2);

    client
        .send(
            retry,
            &Request::from(ApiVersionsRequest::default()),
            &mut to_server,
        )
        .unwrap();
    let request = server.receive(&mut to_server).unwrap().unwrap();
    assert!(!request.is_unsupported_api_versions());
    assert_eq!(request.api_version, 2);
    let table = SupportedVersions::stable([ApiKey::ApiVersions, ApiKey::Metadata, ApiKey::Fetch]);
    server
        .send(
            &request.respond(ApiVersionsResponse::default().with_api_keys(table.to_api_keys())),
            &mut to_client,
        )
        .unwrap();
    let response = client.receive(&mut to_client).unwrap().unwrap();
    let Response::ApiVersions(body) = &response.body else {
        panic!()
    };
    assert_eq!(
        ApiVersionsReply::read(body, retry),
        Ok(ApiVersionsReply::Supported(table))
    );
}

/// A v3+ ApiVersions answer that does not decode and is not the v0 fallback stays an error.
#[test]
fn api_versions_answer_that_is_not_the_fallback_is_a_bad_response() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let sent = client
        .send(3, &Request::from(ApiVersionsRequest::default()), &mut out)
        .unwrap();
    // A version-0 body with error NONE: decodes at v0, but it is not Kafka's fallback.
    let mut reply = wire(&answer(
        sent.correlation_id,
        0,
        ApiVersionsResponse::default(),
    ));
    let err = client.receive(&mut reply).unwrap_err();
    assert!(
        matches!(&err, ConnError::BadResponse { request, .. } if request.version == 3),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// The client connection

#[test]
fn pipelined_requests_of_every_api_decode_in_order_from_random_chunks() {
    let seed = seed(0x7069_7065);
    let mut rng = SmallRng::seed_from_u64(seed);
    let defaults = Defaults::new();
    let mut client = ClientConnection::new().with_client_id("pipeline");
    let mut server = ServerConnection::new();
    let mut to_server = BytesMut::new();
    let mut sent = Vec::new();
    let mut per_api = BTreeMap::new();
    for _ in 0..2_000 {
        let api = ApiKey::ALL[rng.gen_range(0..ApiKey::ALL.len())];
        let valid = api.valid_versions();
        let version = rng.gen_range(valid.min..=valid.max);
        let body = if api == ApiKey::Produce && rng.gen_bool(0.5) {
            produce(-1)
        } else {
            defaults.request(api, version)
        };
        let outcome = client.send(version, &body, &mut to_server).unwrap();
        *per_api.entry(api).or_insert(0) += 1;
        sent.push((outcome, api, version, body));
    }
    assert!(per_api.len() > 80, "only {} APIs drawn", per_api.len());
    let awaited: Vec<InFlight> = client.in_flight().copied().collect();
    assert_eq!(
        awaited.len(),
        sent.iter().filter(|(s, ..)| s.expects_response).count()
    );
    let acks_zero = sent.len() - awaited.len();
    assert!(acks_zero > 0, "no acks=0 Produce drawn");

    // The server reads every request from random chunks and answers those that expect it.
    let mut incoming = BytesMut::new();
    let mut received = Vec::new();
    let mut to_client = BytesMut::new();
    let mut bytes = to_server.freeze();
    while !bytes.is_empty() {
        let n = rng.gen_range(1..=bytes.len().min(300));
        incoming.extend_from_slice(&bytes.split_to(n));
        while let Some(request) = server.receive(&mut incoming).unwrap() {
            if request.expects_response() {
                let response = defaults.response(request.api_key(), request.api_version);
                server
                    .send(&request.respond(response), &mut to_client)
                    .unwrap();
            }
            received.push(request);
        }
    }
    assert!(incoming.is_empty());
    assert_eq!(received.len(), sent.len());
    for ((outcome, api, version, body), request) in sent.iter().zip(&received) {
        assert_eq!(request.correlation_id(), outcome.correlation_id);
        assert_eq!((request.api_key(), request.api_version), (*api, *version));
        assert_eq!(&request.body, body);
        // Header v0 (ControlledShutdown v0) has no client id: the field keeps its default.
        let client_id = match api.request_header_version(*version) {
            0 => Some(""),
            _ => Some("pipeline"),
        };
        assert_eq!(request.header.client_id.as_deref(), client_id);
        let frame = RequestFrame {
            header: request.header.clone(),
            body: request.body.clone(),
        };
        assert_eq!(request.to_json().unwrap(), frame.to_json().unwrap());
    }
    assert_eq!(server.awaiting().len(), 0);

    // The client reads the answers, again in random chunks, each at its request's version.
    let mut from_server = BytesMut::new();
    let mut answers = Vec::new();
    let mut bytes = to_client.freeze();
    while !bytes.is_empty() {
        let n = rng.gen_range(1..=bytes.len().min(300));
        from_server.extend_from_slice(&bytes.split_to(n));
        while let Some(response) = client.receive(&mut from_server).unwrap() {
            answers.push(response);
        }
    }
    assert_eq!(answers.len(), awaited.len(), "seed {seed}");
    for (response, request) in answers.iter().zip(&awaited) {
        assert_eq!(response.header.correlation_id, request.correlation_id);
        assert_eq!(
            (response.api_key(), response.api_version),
            (request.api, request.version)
        );
    }
    assert_eq!(client.in_flight().len(), 0);
}

/// Random sends (acks=0 Produce among them) and random deliveries (the right response, one
/// that overtakes, one nobody asked for), checked against a queue the test keeps itself.
#[test]
fn the_client_state_machine_follows_its_model() {
    let seed = seed(0x5747_e000);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut client = ClientConnection::new().with_first_correlation_id(rng.gen());
    let mut model: std::collections::VecDeque<i32> = Default::default();
    let mut next_id = None;
    let (mut delivered, mut overtakes, mut strays) = (0, 0, 0);
    for step in 0..20_000 {
        let context = format!("seed {seed} step {step}");
        match rng.gen_range(0..10) {
            0..=3 => {
                let acks = if rng.gen_bool(0.2) { 0 } else { -1 };
                let sent = client
                    .send(9, &produce(acks), &mut BytesMut::new())
                    .unwrap();
                if let Some(id) = next_id {
                    assert_eq!(sent.correlation_id, id, "{context}");
                }
                next_id = Some(sent.correlation_id.checked_add(1).unwrap_or(0));
                assert_eq!(sent.expects_response, acks != 0, "{context}");
                if sent.expects_response {
                    model.push_back(sent.correlation_id);
                }
            }
            4..=6 => {
                let Some(&oldest) = model.front() else {
                    continue;
                };
                let mut reply = wire(&answer(oldest, 9, ProduceResponse::default()));
                let got = client.receive(&mut reply).unwrap().expect("a whole frame");
                assert_eq!(got.header.correlation_id, oldest, "{context}");
                model.pop_front();
                delivered += 1;
            }
            7..=8 => {
                if model.len() < 2 {
                    continue;
                }
                let later = model[rng.gen_range(1..model.len())];
                let mut reply = wire(&answer(later, 9, ProduceResponse::default()));
                assert_eq!(
                    client.receive(&mut reply),
                    Err(ConnError::OutOfOrder {
                        correlation_id: later,
                        expected: model[0]
                    }),
                    "{context}"
                );
                overtakes += 1;
            }
            _ => {
                let stray = loop {
                    let id: i32 = rng.gen();
                    if !model.contains(&id) {
                        break id;
                    }
                };
                let mut reply = wire(&answer(stray, 9, ProduceResponse::default()));
                assert_eq!(
                    client.receive(&mut reply),
                    Err(ConnError::UnknownCorrelationId {
                        correlation_id: stray,
                        expected: model.front().copied()
                    }),
                    "{context}"
                );
                strays += 1;
            }
        }
        assert!(
            client
                .in_flight()
                .map(|r| r.correlation_id)
                .eq(model.iter().copied()),
            "{context}"
        );
    }
    assert!(delivered > 1000 && overtakes > 500 && strays > 500);
}

#[test]
fn a_response_that_overtakes_an_earlier_one_is_refused() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let first = client.send(12, &metadata(), &mut out).unwrap();
    let second = client.send(12, &metadata(), &mut out).unwrap();
    let mut reply = wire(&answer(
        second.correlation_id,
        12,
        MetadataResponse::default(),
    ));
    assert_eq!(
        client.receive(&mut reply),
        Err(ConnError::OutOfOrder {
            correlation_id: second.correlation_id,
            expected: first.correlation_id
        })
    );
    // Nothing was taken off the in-flight list.
    assert_eq!(client.in_flight().len(), 2);
}

#[test]
fn a_response_with_an_unknown_correlation_id_is_refused() {
    let mut client = ClientConnection::new().with_first_correlation_id(40);
    let mut reply = wire(&answer(40, 12, MetadataResponse::default()));
    assert_eq!(
        client.receive(&mut reply.clone()),
        Err(ConnError::UnknownCorrelationId {
            correlation_id: 40,
            expected: None
        })
    );
    let mut out = BytesMut::new();
    client.send(12, &metadata(), &mut out).unwrap();
    let mut stray = wire(&answer(7, 12, MetadataResponse::default()));
    let err = client.receive(&mut stray).unwrap_err();
    assert_eq!(
        err,
        ConnError::UnknownCorrelationId {
            correlation_id: 7,
            expected: Some(40)
        }
    );
    assert!(err.to_string().contains("correlation id 7"), "{err}");
    assert!(client.receive(&mut reply).unwrap().is_some());
}

#[test]
fn produce_with_acks_zero_is_not_awaited() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let fire = client.send(9, &produce(0), &mut out).unwrap();
    assert!(!fire.expects_response);
    assert_eq!(client.in_flight().len(), 0);
    let acked = client.send(9, &produce(1), &mut out).unwrap();
    assert!(acked.expects_response);
    assert_eq!(acked.correlation_id, fire.correlation_id + 1);
    let ask = client.send(12, &metadata(), &mut out).unwrap();

    // The server sees all three, and owes answers to two.
    let mut server = ServerConnection::new();
    let requests: Vec<_> = std::iter::from_fn(|| server.receive(&mut out).unwrap()).collect();
    assert_eq!(requests.len(), 3);
    assert!(!requests[0].expects_response());
    assert_eq!(server.awaiting().len(), 2);
    // Answering the acks=0 Produce is refused, and writes nothing.
    let mut to_client = BytesMut::new();
    let err = server
        .send(
            &requests[0].respond(ProduceResponse::default()),
            &mut to_client,
        )
        .unwrap_err();
    assert!(
        matches!(err, ConnError::UnexpectedResponse { expected: Some(InFlight { correlation_id, .. }), .. } if correlation_id == acked.correlation_id),
        "{err}"
    );
    assert!(to_client.is_empty());
    for request in &requests[1..] {
        let body: Response = match request.api_key() {
            ApiKey::Produce => ProduceResponse::default().into(),
            _ => MetadataResponse::default().into(),
        };
        server.send(&request.respond(body), &mut to_client).unwrap();
    }
    let first = client.receive(&mut to_client).unwrap().unwrap();
    assert_eq!(first.header.correlation_id, acked.correlation_id);
    let second = client.receive(&mut to_client).unwrap().unwrap();
    assert_eq!(second.header.correlation_id, ask.correlation_id);
    assert_eq!(client.in_flight().len(), 0);
}

#[test]
fn partial_frames_arriving_byte_by_byte() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let mut expected = Vec::new();
    // From v2, where MetadataResponse has a cluster id.
    for version in [2, 4, 9, 12] {
        let sent = client.send(version, &metadata(), &mut out).unwrap();
        expected.push(answer(
            sent.correlation_id,
            version,
            MetadataResponse::default().with_cluster_id(Some("abc".into())),
        ));
    }
    let stream: Vec<u8> = expected.iter().flat_map(|f| wire(f).to_vec()).collect();
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    for (i, byte) in stream.iter().enumerate() {
        buf.extend_from_slice(&[*byte]);
        match client.receive(&mut buf).unwrap() {
            Some(frame) => got.push((i, frame)),
            None => assert!(buf.len() <= stream.len()),
        }
    }
    assert_eq!(
        got.into_iter().map(|(_, f)| f).collect::<Vec<_>>(),
        expected
    );
    assert!(buf.is_empty());
}

#[test]
fn limits_are_enforced_on_frames_and_bodies() {
    let options = DecodeOptions {
        limits: DecodeLimits {
            max_frame_size: 64,
            max_array_len: 2,
            ..DecodeLimits::default()
        },
        ..DecodeOptions::default()
    };
    let mut client = ClientConnection::new().with_options(options);
    let mut out = BytesMut::new();
    let sent = client.send(12, &metadata(), &mut out).unwrap();

    // A size prefix above the limit is refused from its four bytes, before the body arrives.
    let mut big = BytesMut::from(&1000i32.to_be_bytes()[..]);
    let err = client.receive(&mut big).unwrap_err();
    assert!(
        matches!(&err, ConnError::Framing(e) if matches!(e.kind(), DecodeErrorKind::LimitExceeded { what: "frame size", .. })),
        "{err}"
    );
    let mut negative = BytesMut::from(&(-5i32).to_be_bytes()[..]);
    assert!(matches!(
        client.receive(&mut negative),
        Err(ConnError::Framing(e)) if matches!(e.kind(), DecodeErrorKind::InvalidFrameSize(-5))
    ));
    assert_eq!(client.in_flight().len(), 1);

    // A body over the array limit: a typed error naming the request; the framing holds, so
    // the next response still decodes.
    let second = client.send(12, &metadata(), &mut out).unwrap();
    let crowded = MetadataResponse::default().with_brokers(vec![Default::default(); 3]);
    let mut reply = wire(&answer(sent.correlation_id, 12, crowded));
    reply.extend_from_slice(&wire(&answer(
        second.correlation_id,
        12,
        MetadataResponse::default(),
    )));
    let err = client.receive(&mut reply).unwrap_err();
    let ConnError::BadResponse { request, error, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(request.correlation_id, sent.correlation_id);
    assert!(
        matches!(error.kind(), DecodeErrorKind::LimitExceeded { .. }),
        "{error}"
    );
    let next = client.receive(&mut reply).unwrap().unwrap();
    assert_eq!(next.header.correlation_id, second.correlation_id);

    // The server side applies the same limits to requests.
    let mut server = ServerConnection::new().with_options(options);
    let mut huge = BytesMut::from(&65i32.to_be_bytes()[..]);
    assert!(matches!(
        server.receive(&mut huge),
        Err(ConnError::Framing(_))
    ));
    let mut fine = BytesMut::new();
    client.send(12, &metadata(), &mut fine).unwrap();
    assert!(server.receive(&mut fine).unwrap().is_some());
}

#[test]
fn a_truncated_response_is_a_bad_response_and_the_next_one_decodes() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    let first = client.send(1, &metadata(), &mut out).unwrap();
    let second = client.send(1, &metadata(), &mut out).unwrap();
    let good = answer(first.correlation_id, 1, MetadataResponse::default());
    let body = good.encode_to_bytes().unwrap();
    // The same frame less its last byte, with a size prefix that says so.
    let mut reply = BytesMut::new();
    reply.extend_from_slice(&((body.len() - 1) as i32).to_be_bytes());
    reply.extend_from_slice(&body[..body.len() - 1]);
    reply.extend_from_slice(&wire(&answer(
        second.correlation_id,
        1,
        MetadataResponse::default(),
    )));
    let err = client.receive(&mut reply).unwrap_err();
    assert!(
        matches!(&err, ConnError::BadResponse { request, frame, .. } if request.correlation_id == first.correlation_id && frame.len() == body.len() - 1),
        "{err}"
    );
    assert!(err.to_string().contains("Metadata v1"), "{err}");
    assert!(client.receive(&mut reply).unwrap().is_some());
    // A frame too short for a correlation id.
    let mut tiny = BytesMut::from(&[0, 0, 0, 2, 0, 0][..]);
    assert!(matches!(
        client.receive(&mut tiny),
        Err(ConnError::Framing(_))
    ));
}

#[test]
fn a_failed_send_writes_nothing_and_uses_no_correlation_id() {
    let mut client = ClientConnection::new();
    let mut out = BytesMut::from(&b"earlier bytes"[..]);
    let too_new = ApiKey::Metadata.valid_versions().max + 1;
    let err = client.send(too_new, &metadata(), &mut out).unwrap_err();
    assert!(matches!(err, ConnError::Encode(_)), "{err}");
    assert_eq!(&out[..], b"earlier bytes");
    assert_eq!(client.in_flight().len(), 0);
    let sent = client.send(12, &metadata(), &mut out).unwrap();
    assert_eq!(sent.correlation_id, 0);
}

#[test]
fn correlation_ids_count_up_and_wrap_to_zero() {
    let mut client = ClientConnection::new().with_first_correlation_id(i32::MAX - 1);
    let mut out = BytesMut::new();
    let ids: Vec<i32> = (0..3)
        .map(|_| {
            client
                .send(12, &metadata(), &mut out)
                .unwrap()
                .correlation_id
        })
        .collect();
    assert_eq!(ids, [i32::MAX - 1, i32::MAX, 0]);
}

// ---------------------------------------------------------------------------------------------
// The server connection

/// An ApiVersions request newer than a server serves is answered at v0 (Kafka's
/// UNSUPPORTED_VERSION fallback, which the client reads at v0), and the server connection
/// lets that answer through; any other API must be answered at its request's version.
#[test]
fn an_api_versions_request_may_be_answered_at_v0() {
    let mut client = ClientConnection::new();
    let mut server = ServerConnection::new();
    let mut to_server = BytesMut::new();
    client
        .send(
            3,
            &Request::from(ApiVersionsRequest::default()),
            &mut to_server,
        )
        .unwrap();
    let request = server.receive(&mut to_server).unwrap().unwrap();
    assert_eq!(request.api_version, 3);
    let mut out = BytesMut::new();
    let fallback = request.unsupported_api_versions_response(VersionRange::new(0, 2));
    assert_eq!(fallback.api_version, 0);
    server.send(&fallback, &mut out).unwrap();
    let Some(answer) = client.receive(&mut out).unwrap() else {
        panic!("no answer")
    };
    let Response::ApiVersions(body) = answer.body else {
        panic!("not ApiVersions")
    };
    assert_eq!(body.error_code, ErrorCode::UNSUPPORTED_VERSION.code());
    assert_eq!(body.api_keys.len(), 1);
}

#[test]
fn the_server_writes_responses_in_order_only() {
    let mut client = ClientConnection::new();
    let mut server = ServerConnection::new();
    let mut to_server = BytesMut::new();
    client.send(12, &metadata(), &mut to_server).unwrap();
    client.send(4, &metadata(), &mut to_server).unwrap();
    let first = server.receive(&mut to_server).unwrap().unwrap();
    let second = server.receive(&mut to_server).unwrap().unwrap();
    let mut out = BytesMut::new();
    // Second before first, a wrong version, a wrong API: all refused, nothing written.
    for wrong in [
        second.respond(MetadataResponse::default()),
        answer(first.correlation_id(), 11, MetadataResponse::default()),
        first.respond(DescribeQuorumResponse::default()),
    ] {
        let err = server.send(&wrong, &mut out).unwrap_err();
        assert!(
            matches!(err, ConnError::UnexpectedResponse { expected: Some(r), .. } if r.correlation_id == first.correlation_id()),
            "{err}"
        );
        assert!(out.is_empty());
    }
    server
        .send(&first.respond(MetadataResponse::default()), &mut out)
        .unwrap();
    server
        .send(&second.respond(MetadataResponse::default()), &mut out)
        .unwrap();
    let err = server
        .send(&second.respond(MetadataResponse::default()), &mut out)
        .unwrap_err();
    assert!(
        matches!(err, ConnError::UnexpectedResponse { expected: None, .. }),
        "{err}"
    );
    assert_eq!(
        std::iter::from_fn(|| client.receive(&mut out).unwrap()).count(),
        2
    );
}

/// ApiVersions answers use response header v0 at every version, even where the body is
/// flexible: the error code follows the correlation id directly, with no tagged-field byte.
#[test]
fn the_server_writes_api_versions_with_response_header_v0() {
    for version in
        ApiKey::ApiVersions.valid_versions().min..=ApiKey::ApiVersions.valid_versions().max
    {
        let mut client = ClientConnection::new();
        let mut server = ServerConnection::new();
        let mut wire_bytes = BytesMut::new();
        client
            .send(
                version,
                &Request::from(ApiVersionsRequest::default()),
                &mut wire_bytes,
            )
            .unwrap();
        let request = server.receive(&mut wire_bytes).unwrap().unwrap();
        let body =
            ApiVersionsResponse::default().with_error_code(ErrorCode::INVALID_REQUEST.code());
        let mut out = BytesMut::new();
        server.send(&request.respond(body), &mut out).unwrap();
        // size (4) + correlation id (4), then the error code.
        assert_eq!(
            &out[8..10],
            ErrorCode::INVALID_REQUEST.code().to_be_bytes(),
            "v{version}"
        );
        let response = client.receive(&mut out).unwrap().unwrap();
        assert_eq!(response.body.error_code(), Some(ErrorCode::INVALID_REQUEST));
    }
}

#[test]
fn the_server_reads_unsupported_api_versions_like_kafka_and_refuses_other_unknown_requests() {
    let mut server = ServerConnection::new();
    let mut client = ClientConnection::new().with_client_id("old-or-new");
    let mut buf = BytesMut::new();
    // Versions below and above ours.
    for version in [-1, ApiKey::ApiVersions.valid_versions().max + 1, i16::MAX] {
        let sent = client
            .send_encoded(ApiKey::ApiVersions, version, &[], true, &mut buf)
            .unwrap();
        let request = server.receive(&mut buf).unwrap().unwrap();
        assert!(request.is_unsupported_api_versions(), "v{version}");
        assert_eq!(request.api_version, 0);
        assert_eq!(request.correlation_id(), sent.correlation_id);
        assert_eq!(request.header.client_id.as_deref(), Some("old-or-new"));
        let mut out = BytesMut::new();
        server
            .send(
                &request.unsupported_api_versions_response(ApiKey::ApiVersions.valid_versions()),
                &mut out,
            )
            .unwrap();
        let response = client.receive(&mut out).unwrap().unwrap();
        assert_eq!(response.api_version, 0);
        assert_eq!(
            response.body.error_code(),
            Some(ErrorCode::UNSUPPORTED_VERSION)
        );
    }
    // Any other API at a version we cannot read, or an unknown key: a typed error with the
    // header fields, and nothing awaits an answer.
    let metadata_too_new = ApiKey::Metadata.valid_versions().max + 1;
    client
        .send_encoded(ApiKey::Metadata, metadata_too_new, &[0; 8], false, &mut buf)
        .unwrap();
    let err = server.receive(&mut buf).unwrap_err();
    assert!(
        matches!(&err, ConnError::BadRequest { header: Some(h), error, .. }
            if h.api_version == metadata_too_new
                && matches!(error.kind(), DecodeErrorKind::UnsupportedVersion { .. })),
        "{err}"
    );
    let mut unknown = BytesMut::new();
    unknown.extend_from_slice(&10i32.to_be_bytes());
    unknown.extend_from_slice(&[0x7f, 0x00, 0, 1, 0, 0, 0, 9, 0xff, 0xff]);
    let err = server.receive(&mut unknown).unwrap_err();
    assert_eq!(
        match &err {
            ConnError::BadRequest { header, .. } => *header,
            _ => None,
        },
        Some(RawRequestHeader {
            api_key: 0x7f00,
            api_version: 1,
            correlation_id: 9
        }),
        "{err}"
    );
    assert!(err.to_string().contains("API key 32512 v1"), "{err}");
    assert_eq!(server.awaiting().len(), 0);
}

// ---------------------------------------------------------------------------------------------
// The observer (what a tap uses)

#[test]
fn the_observer_follows_a_pipelined_conversation_fed_in_random_chunks() {
    let seed = seed(0x0b5e_7e00);
    let mut rng = SmallRng::seed_from_u64(seed);
    let defaults = Defaults::new();
    let mut client = ClientConnection::new();
    let mut server = ServerConnection::new();
    let mut tap = Observer::new();
    let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
    let mut expected_responses = 0;
    for i in 0..500 {
        let api = ApiKey::ALL[rng.gen_range(0..ApiKey::ALL.len())];
        let valid = api.valid_versions();
        let version = rng.gen_range(valid.min..=valid.max);
        if i % 50 == 7 {
            // A frame nobody can decode: an unknown key. Kafka would close; the server here
            // does not answer it either.
            to_server.extend_from_slice(&12i32.to_be_bytes());
            to_server.extend_from_slice(&[0x7f, 0, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f, 1, 2, 3, 4]);
            continue;
        }
        let sent = client
            .send(version, &defaults.request(api, version), &mut to_server)
            .unwrap();
        expected_responses += usize::from(sent.expects_response);
    }
    // Requests cross the tap in chunks, then reach the server; answers likewise.
    let mut seen_requests = 0;
    let mut undecodable = 0;
    let mut bytes = to_server.clone().freeze();
    while !bytes.is_empty() {
        let n = rng.gen_range(1..=bytes.len().min(200));
        tap.feed(Direction::ToServer, &bytes.split_to(n));
        while let Some(observed) = tap.next(Direction::ToServer) {
            let Observed::Request(request) = observed else {
                panic!("{observed:?}")
            };
            seen_requests += 1;
            if request.decoded.is_err() {
                undecodable += 1;
                assert_eq!(request.header.map(|h| h.api_key), Some(0x7f00));
            }
        }
    }
    assert_eq!(seen_requests, 500);
    assert_eq!(undecodable, 10);
    while let Some(result) = {
        match server.receive(&mut to_server) {
            Ok(request) => request.map(Ok),
            Err(error) => Some(Err(error)),
        }
    } {
        let Ok(request) = result else { continue };
        if request.expects_response() {
            let body = defaults.response(request.api_key(), request.api_version);
            server.send(&request.respond(body), &mut to_client).unwrap();
        }
    }
    let mut seen_responses = 0;
    let mut unanswered = 0;
    let mut bytes = to_client.freeze();
    while !bytes.is_empty() {
        let n = rng.gen_range(1..=bytes.len().min(200));
        tap.feed(Direction::ToClient, &bytes.split_to(n));
        while let Some(observed) = tap.next(Direction::ToClient) {
            let Observed::Response(response) = observed else {
                panic!("{observed:?}")
            };
            let request = response.request.expect("matched to its request");
            let decoded = response.decoded.expect("attempted").expect("decodes");
            assert_eq!(decoded.header.correlation_id, request.correlation_id);
            assert_eq!(decoded.api_version, request.api_version);
            unanswered += response.unanswered.len();
            seen_responses += 1;
        }
    }
    assert_eq!(seen_responses, expected_responses, "seed {seed}");
    // The unknown-key requests were assumed to expect answers; the server skipped them.
    assert_eq!(unanswered, 10);
    assert_eq!(tap.buffered(Direction::ToServer), 0);
    assert_eq!(tap.buffered(Direction::ToClient), 0);
}

#[test]
fn the_observer_copes_with_stray_answers_half_frames_and_broken_framing() {
    let mut tap = Observer::new();
    // A response nobody asked for: reported with its correlation id, not decoded.
    let stray = wire(&answer(77, 12, MetadataResponse::default()));
    tap.feed(Direction::ToClient, &stray);
    let Some(Observed::Response(response)) = tap.next(Direction::ToClient) else {
        panic!()
    };
    assert_eq!(response.correlation_id, Some(77));
    assert_eq!(response.request, None);
    assert_eq!(response.decoded, None);
    assert_eq!(response.frame.len(), stray.len() - 4);

    // A client that disconnects mid-frame leaves bytes behind, and nothing is reported.
    let mut client = ClientConnection::new();
    let mut out = BytesMut::new();
    client.send(12, &metadata(), &mut out).unwrap();
    tap.feed(Direction::ToServer, &out[..out.len() - 3]);
    assert_eq!(tap.next(Direction::ToServer), None);
    assert_eq!(tap.buffered(Direction::ToServer), out.len() - 3);

    // A negative size: reported once, then that direction is ignored.
    let mut tap = Observer::new();
    tap.feed(Direction::ToServer, &(-1i32).to_be_bytes());
    assert!(matches!(
        tap.next(Direction::ToServer),
        Some(Observed::Unframeable(e)) if matches!(e.kind(), DecodeErrorKind::InvalidFrameSize(-1))
    ));
    tap.feed(Direction::ToServer, &out);
    assert_eq!(tap.next(Direction::ToServer), None);
    assert_eq!(tap.buffered(Direction::ToServer), 0);
    // The other direction is unaffected.
    tap.feed(Direction::ToClient, &stray);
    assert!(matches!(
        tap.next(Direction::ToClient),
        Some(Observed::Response(_))
    ));
}

/// A client that reuses a correlation id (Kafka's do not, but the wire allows it): responses
/// still pair with requests in order.
#[test]
fn the_observer_pairs_repeated_correlation_ids_in_order() {
    let mut tap = Observer::new();
    let mut requests = BytesMut::new();
    for (id, version) in [(5, 12), (5, 4), (6, 9)] {
        ClientConnection::new()
            .with_first_correlation_id(id)
            .send(version, &metadata(), &mut requests)
            .unwrap();
    }
    tap.feed(Direction::ToServer, &requests);
    while tap.next(Direction::ToServer).is_some() {}
    let mut responses = BytesMut::new();
    for (id, version) in [(5, 12), (5, 4), (6, 9), (5, 12)] {
        responses.extend_from_slice(&wire(&answer(id, version, MetadataResponse::default())));
    }
    tap.feed(Direction::ToClient, &responses);
    let mut paired = Vec::new();
    while let Some(Observed::Response(response)) = tap.next(Direction::ToClient) {
        paired.push((
            response.correlation_id,
            response.request.map(|r| r.api_version),
            response.decoded.map(|d| d.is_ok()),
        ));
    }
    assert_eq!(
        paired,
        [
            (Some(5), Some(12), Some(true)),
            (Some(5), Some(4), Some(true)),
            (Some(6), Some(9), Some(true)),
            // All answered: a fourth is a stray.
            (Some(5), None, None),
        ]
    );
}

#[test]
fn the_observer_reads_an_unsupported_api_versions_exchange_like_the_peers_do() {
    let mut client = ClientConnection::new();
    let mut server = ServerConnection::new();
    let mut tap = Observer::new();
    let (mut to_server, mut to_client) = (BytesMut::new(), BytesMut::new());
    client
        .send_encoded(ApiKey::ApiVersions, 99, &[], true, &mut to_server)
        .unwrap();
    tap.feed(Direction::ToServer, &to_server);
    let Some(Observed::Request(request)) = tap.next(Direction::ToServer) else {
        panic!()
    };
    let decoded = request.decoded.unwrap();
    assert!(decoded.is_unsupported_api_versions());
    // Logged as what was read: the v2 header as sent, the body as the empty v0 request.
    let json = decoded.to_json().unwrap();
    assert_eq!(json["header"]["requestApiVersion"], 99);
    assert_eq!(json["body"], serde_json::json!({}));
    let incoming = server.receive(&mut to_server).unwrap().unwrap();
    server
        .send(
            &incoming.unsupported_api_versions_response(VersionRange::new(0, 3)),
            &mut to_client,
        )
        .unwrap();
    tap.feed(Direction::ToClient, &to_client);
    let Some(Observed::Response(response)) = tap.next(Direction::ToClient) else {
        panic!()
    };
    let frame = response.decoded.unwrap().unwrap();
    assert_eq!(frame.api_version, 0);
    assert_eq!(
        frame.body.error_code(),
        Some(ErrorCode::UNSUPPORTED_VERSION)
    );
}

// ---------------------------------------------------------------------------------------------
// Error codes on responses

#[test]
fn responses_expose_their_top_level_error_code() {
    let body = Response::from(ApiVersionsResponse::default().with_error_code(35));
    assert_eq!(body.error_code(), Some(ErrorCode::UNSUPPORTED_VERSION));
    // Produce has no top-level error code: its errors are per partition.
    assert_eq!(
        Response::from(ProduceResponse::default()).error_code(),
        None
    );
    // Every response that has the field says so; count them from the schemas' JSON form.
    let defaults = Defaults::new();
    for &api in ApiKey::ALL {
        let valid = api.valid_versions();
        let has_field = (valid.min..=valid.max).any(|version| {
            let json = defaults.response(api, version).to_json(version).unwrap();
            json.get("errorCode").is_some()
        });
        let response = defaults.response(api, valid.max);
        assert_eq!(response.error_code().is_some(), has_field, "{api}");
    }
}

// ---------------------------------------------------------------------------------------------
// Counting awaited responses from the first bytes of a request

#[test]
fn expects_response_from_the_first_bytes_agrees_with_the_decoded_request() {
    use kafka_codec::conn::RawRequestHeader;
    use kafka_codec::random::{Random, RandomOptions};
    let mut rng = SmallRng::seed_from_u64(seed(20));
    let mut checked = 0;
    let range = ApiKey::Produce.valid_versions();
    for version in range.min..=range.max {
        for round in 0..64 {
            let data: Vec<u8> = (0..512).map(|_| rng.gen()).collect();
            let mut u = arbitrary::Unstructured::new(&data);
            let mut body = ProduceRequest::random(&mut u, version, &RandomOptions::default())
                .expect("random Produce");
            // Half of them fire-and-forget, whatever the generator chose.
            if round % 2 == 0 {
                body.acks = 0;
            }
            let frame = RequestFrame::new(body, version, round)
                .with_client_id("c".repeat(round as usize))
                .encode_to_bytes()
                .unwrap();
            let expected = RequestFrame::decode(frame.clone())
                .unwrap()
                .body
                .expects_response();
            assert_eq!(
                RawRequestHeader::expects_response(&frame),
                Some(expected),
                "Produce v{version}"
            );
            // Any prefix either tells the same or cannot tell yet.
            for cut in 0..frame.len() {
                let head = frame.slice(..cut);
                let told = RawRequestHeader::expects_response(&head);
                assert!(
                    told.is_none() || told == Some(expected),
                    "v{version}, cut {cut}"
                );
            }
            checked += 1;
        }
    }
    let other = RequestFrame::new(metadata(), 12, 1)
        .encode_to_bytes()
        .unwrap();
    assert_eq!(RawRequestHeader::expects_response(&other), Some(true));
    assert_eq!(
        RawRequestHeader::expects_response(&other.slice(..8)),
        Some(true)
    );
    assert_eq!(RawRequestHeader::expects_response(&other.slice(..7)), None);
    assert!(checked > 0);
}
