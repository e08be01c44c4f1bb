//! Issue 25's routing reads through zero-copy views allocate nothing: a Produce v13 request
//! (10 topics × 64 KiB of records, read from the whole frame with `RequestFrameView`), a Fetch
//! v18 response (10 partitions × 64 KiB) and a Metadata v13 response (100 topics × 10
//! partitions), each viewed and read (what a router needs) under the counting allocator. The
//! same fields read from the owned decode of the same bytes give the same answer. Each read
//! twice: through the checked views (`RequestFrameView`, `view_message`) and through the lazy
//! ones (`LazyRequestFrame`, `LazyMessage`), whose accessors return `Result`s.

use bytes::Bytes;
use kafka_codec::messages::fetch_response::{self, FetchResponseView};
use kafka_codec::messages::metadata_response::{self, MetadataResponseView};
use kafka_codec::messages::produce_request::{self, ProduceRequestView};
use kafka_codec::messages::{FetchResponse, MetadataResponse, ProduceRequest};
use kafka_codec::{
    view_message, DecodeError, DecodeOptions, Lazy, LazyMessage, LazyRequestFrame, Message,
    Request, RequestFrame, RequestFrameView, Uuid,
};
use kafka_codec_test_support::counting_alloc::measure;

use crate::SERIAL;

/// 64 KiB of records bytes (opaque to the view and to the decoder alike).
fn records(seed: u8) -> Bytes {
    Bytes::from((0..65_536).map(|i| (i as u8) ^ seed).collect::<Vec<u8>>())
}

fn uuid(seed: u8) -> Uuid {
    Uuid([seed; 16])
}

/// Runs `read` under the counting allocator and requires that it asked for no heap.
fn no_heap<T>(what: &str, read: impl FnOnce() -> T) -> T {
    let (value, stats) = measure(read);
    assert_eq!(stats.requested, 0, "{what}: the routing read allocated");
    value
}

#[test]
fn produce_request_v13_routing_read_allocates_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let topics = (0..10u8)
        .map(|t| {
            produce_request::TopicProduceData::default()
                .with_topic_id(uuid(t))
                .with_partition_data(vec![produce_request::PartitionProduceData::default()
                    .with_index(i32::from(t))
                    .with_records(Some(records(t)))])
        })
        .collect();
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_topic_data(topics);
    let frame = RequestFrame::new(body, 13, 42).encode_to_bytes().unwrap();

    let routed = no_heap("produce", || {
        let view = RequestFrameView::new(&frame, &DecodeOptions::default()).unwrap();
        let body: ProduceRequestView<'_> = view.body().unwrap();
        let mut seen = [(Uuid::ZERO, 0i32, 0usize); 10];
        for (slot, topic) in seen.iter_mut().zip(body.topic_data()) {
            let partition = topic.partition_data().next().unwrap();
            *slot = (
                topic.topic_id(),
                partition.index(),
                partition.records().map_or(0, <[u8]>::len),
            );
        }
        seen
    });
    let owned = match RequestFrame::decode(frame.clone()).unwrap().body {
        Request::Produce(body) => body,
        other => panic!("not a produce request: {other:?}"),
    };
    let expected: Vec<_> = owned
        .topic_data
        .iter()
        .map(|t| {
            let p = &t.partition_data[0];
            (
                t.topic_id,
                p.index,
                p.records.as_ref().map_or(0, Bytes::len),
            )
        })
        .collect();
    assert_eq!(routed.to_vec(), expected);

    let lazily = no_heap("produce, lazily", || -> Result<_, DecodeError> {
        let frame = LazyRequestFrame::new(&frame, &DecodeOptions::default())?;
        let body: ProduceRequestView<'_, Lazy> = frame.body().unwrap();
        let mut seen = [(Uuid::ZERO, 0i32, 0usize); 10];
        for (slot, topic) in seen.iter_mut().zip(body.topic_data()?) {
            let topic = topic?;
            let partition = topic.partition_data()?.next().unwrap()?;
            *slot = (
                topic.topic_id()?,
                partition.index()?,
                partition.records()?.map_or(0, <[u8]>::len),
            );
        }
        Ok(seen)
    });
    assert_eq!(lazily.unwrap().to_vec(), expected);
}

#[test]
fn fetch_response_v18_routing_read_allocates_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let partitions = (0..10u8)
        .map(|p| {
            fetch_response::PartitionData::default()
                .with_partition_index(i32::from(p))
                .with_error_code(i16::from(p % 3))
                .with_high_watermark(1_000 + i64::from(p))
                .with_records(Some(records(p)))
        })
        .collect();
    let body = FetchResponse::default().with_responses(vec![
        fetch_response::FetchableTopicResponse::default()
            .with_topic_id(uuid(7))
            .with_partitions(partitions),
    ]);
    let bytes = body.encode_to_bytes(18).unwrap();

    let route = |view: FetchResponseView<'_>| {
        let mut sum = (0u64, 0i64);
        for topic in view.responses() {
            for p in topic.partitions() {
                sum.0 += u64::from(topic.topic_id().0[0]) + p.partition_index() as u64;
                sum.0 += p.error_code() as u64 + p.records().map_or(0, <[u8]>::len) as u64;
                sum.1 += p.high_watermark();
            }
        }
        sum
    };
    let routed = no_heap("fetch", || route(view_message(&bytes, 18).unwrap()));
    let owned = FetchResponse::decode(&mut bytes.clone(), 18).unwrap();
    let mut expected = (0u64, 0i64);
    for topic in &owned.responses {
        for p in &topic.partitions {
            expected.0 += u64::from(topic.topic_id.0[0]) + p.partition_index as u64;
            expected.0 += p.error_code as u64 + p.records.as_ref().map_or(0, Bytes::len) as u64;
            expected.1 += p.high_watermark;
        }
    }
    assert_eq!(routed, expected);

    let lazily = no_heap("fetch, lazily", || -> Result<_, DecodeError> {
        let message = LazyMessage::new::<FetchResponse>(&bytes, 18)?;
        let view: FetchResponseView<'_, Lazy> = message.view().unwrap();
        let mut sum = (0u64, 0i64);
        for topic in view.responses()? {
            let topic = topic?;
            for p in topic.partitions()? {
                let p = p?;
                sum.0 += u64::from(topic.topic_id()?.0[0]) + p.partition_index()? as u64;
                sum.0 += p.error_code()? as u64 + p.records()?.map_or(0, <[u8]>::len) as u64;
                sum.1 += p.high_watermark()?;
            }
        }
        Ok(sum)
    });
    assert_eq!(lazily.unwrap(), expected);
}

#[test]
fn metadata_response_v13_routing_read_allocates_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let topics = (0..100)
        .map(|t| {
            let partitions = (0..10)
                .map(|p| {
                    metadata_response::MetadataResponsePartition::default()
                        .with_partition_index(p)
                        .with_leader_id((t + p) % 3)
                        .with_replica_nodes(vec![0, 1, 2].into())
                        .with_isr_nodes(vec![0, 1, 2].into())
                })
                .collect();
            metadata_response::MetadataResponseTopic::default()
                .with_name(Some(format!("topic-{t}").into()))
                .with_partitions(partitions)
        })
        .collect();
    let body = MetadataResponse::default().with_topics(topics);
    let bytes = body.encode_to_bytes(13).unwrap();

    let route = |view: MetadataResponseView<'_>| {
        let mut sum = 0u64;
        for topic in view.topics() {
            sum += topic.name().map_or(0, str::len) as u64;
            for p in topic.partitions() {
                sum += p.leader_id() as u64;
            }
        }
        sum
    };
    let routed = no_heap("metadata", || route(view_message(&bytes, 13).unwrap()));
    let owned = MetadataResponse::decode(&mut bytes.clone(), 13).unwrap();
    let expected: u64 = owned
        .topics
        .iter()
        .map(|t| {
            t.name.as_ref().map_or(0, |n| n.len()) as u64
                + t.partitions.iter().map(|p| p.leader_id as u64).sum::<u64>()
        })
        .sum();
    assert_eq!(routed, expected);

    let lazily = no_heap("metadata, lazily", || -> Result<_, DecodeError> {
        let message = LazyMessage::new::<MetadataResponse>(&bytes, 13)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().unwrap();
        let mut sum = 0u64;
        for topic in view.topics()? {
            let topic = topic?;
            sum += topic.name()?.map_or(0, str::len) as u64;
            for p in topic.partitions()? {
                sum += p?.leader_id()? as u64;
            }
        }
        Ok(sum)
    });
    assert_eq!(lazily.unwrap(), expected);

    // The same fields handed to a visitor by `walk` (every field, in wire order), checked
    // and lazy: nothing allocated either.
    let walked = no_heap("metadata, walked", || {
        let view: MetadataResponseView<'_> = view_message(&bytes, 13).unwrap();
        let mut names = NamesAndLeaders(0);
        view.walk(&mut names);
        names.0
    });
    assert_eq!(walked, expected);
    let walked = no_heap("metadata, walked lazily", || -> Result<_, DecodeError> {
        let message = LazyMessage::new::<MetadataResponse>(&bytes, 13)?;
        let view: MetadataResponseView<'_, Lazy> = message.view().unwrap();
        let mut names = NamesAndLeaders(0);
        view.walk(&mut names)?;
        Ok(names.0)
    });
    assert_eq!(walked.unwrap(), expected);
}

/// Sums the topic names' lengths and the partitions' leader ids a walk hands over.
struct NamesAndLeaders(u64);

impl<'a> kafka_codec::ViewVisitor<'a> for NamesAndLeaders {
    fn string(&mut self, field: &'static str, value: Option<&'a str>) {
        if field == "Name" {
            self.0 += value.map_or(0, str::len) as u64;
        }
    }
    fn i32(&mut self, field: &'static str, value: i32) {
        if field == "LeaderId" {
            self.0 += value as u64;
        }
    }
}

/// A lazy view's unknown tagged fields, read through its accessors, take no more heap than
/// the owned decode of the same frame, and fail where it fails with its error. The `views`
/// fuzz target found a BrokerRegistration v2 response whose section claimed 13,865 entries
/// in 289 bytes: the lazy read kept making entries (tag 0, no value) past the end of the
/// input, 30,816 bytes of heap where the owned decode refused the count after 120.
#[test]
fn lazy_unknown_tagged_fields_take_no_more_than_the_owned_decode() {
    use kafka_codec::messages::broker_registration_response::BrokerRegistrationResponseView;
    use kafka_codec::{ApiKey, DecodeLimits, LazyResponseFrame, ResponseFrame};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Correlation id, the header's empty tagged section, then ThrottleTimeMs, ErrorCode and
    // BrokerEpoch: the section follows.
    let head = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let tight = DecodeLimits {
        max_array_len: 8,
        ..DecodeLimits::default()
    };
    let entries = |count: u8| {
        (1..=count)
            .flat_map(|tag| [tag, 1, tag])
            .collect::<Vec<u8>>()
    };
    let cases: [(&str, Vec<u8>, DecodeLimits); 4] = [
        // 13,865 entries claimed, 200 zero bytes there: a hundred `tag 0, size 0` entries.
        (
            "a count past the input",
            [&[0xa9, 0x6c][..], &[0; 200]].concat(),
            DecodeLimits::default(),
        ),
        (
            "a count over max_array_len",
            [&[9][..], &entries(9)].concat(),
            tight,
        ),
        (
            "a section cut short",
            [&[3][..], &entries(3)[..7]].concat(),
            DecodeLimits::default(),
        ),
        ("a valid section", [&[3][..], &entries(3)].concat(), tight),
    ];
    for (what, section, limits) in cases {
        let frame = Bytes::from([&head[..], &section].concat());
        let options = DecodeOptions {
            limits,
            ..DecodeOptions::default()
        };
        let api = ApiKey::BrokerRegistration;
        let (owned, owned_heap) = measure(|| {
            ResponseFrame::decode_with(frame.clone(), api, 2, &options).map(|frame| frame.body)
        });
        let (lazy, lazy_heap) = measure(|| {
            let frame = LazyResponseFrame::new(&frame, api, 2, &options)?;
            let body: BrokerRegistrationResponseView<'_, Lazy> = frame.body().unwrap();
            body.to_owned_via_accessors()
        });
        assert_eq!(
            lazy.map(kafka_codec::Response::from),
            owned,
            "{what}: the lazy read differs"
        );
        assert!(
            lazy_heap.peak_if_copied <= owned_heap.peak_if_copied,
            "{what}: the lazy read took {lazy_heap:?}, the owned decode {owned_heap:?}"
        );
    }
}

/// A lazy read through the accessors that fails late (the frame's last byte bad, after a
/// big array has been built) takes no more heap than the owned decode of the same frame:
/// the owned decode it runs again for the error's kind and path must not run while the
/// part of the message already built is still alive, or the peak approaches twice the
/// owned decode's.
#[test]
fn a_late_lazy_failure_takes_no_more_than_the_owned_decode() {
    use kafka_codec::messages::metadata_response::{
        MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_codec::{ApiKey, LazyResponseFrame, ResponseFrame};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let topics = (0..200)
        .map(|t| {
            MetadataResponseTopic::default()
                .with_topic_id(uuid(t as u8))
                .with_partitions(
                    (0..10)
                        .map(|p| {
                            MetadataResponsePartition::default()
                                .with_partition_index(p)
                                .with_replica_nodes(vec![1, 2, 3].into())
                        })
                        .collect(),
                )
        })
        .collect();
    let body = MetadataResponse::default().with_topics(topics);
    let good = ResponseFrame::new(body, 12, 7).encode_to_bytes().unwrap();
    // The body's own tagged section, its last byte, claims a field that is not there.
    let mut bad = good.to_vec();
    assert_eq!(bad.pop(), Some(0));
    bad.push(1);
    let bad = Bytes::from(bad);
    let options = DecodeOptions::default();
    let api = ApiKey::Metadata;
    for (what, frame) in [("valid", &good), ("bad at the end", &bad)] {
        let (owned, owned_heap) = measure(|| {
            ResponseFrame::decode_with(frame.clone(), api, 12, &options).map(|frame| frame.body)
        });
        let (lazy, lazy_heap) = measure(|| {
            let frame = LazyResponseFrame::new(frame, api, 12, &options)?;
            let body: MetadataResponseView<'_, Lazy> = frame.body().unwrap();
            body.to_owned_via_accessors()
        });
        assert_eq!(
            lazy.map(kafka_codec::Response::from),
            owned,
            "{what}: the lazy read differs"
        );
        assert!(
            lazy_heap.peak_if_copied <= owned_heap.peak_if_copied,
            "{what}: the lazy read took {lazy_heap:?}, the owned decode {owned_heap:?}"
        );
    }
}
