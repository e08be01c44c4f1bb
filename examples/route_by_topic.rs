//! Routes Produce requests by topic without building them: a proxy reads each partition's
//! topic, index and records straight from the frame's bytes through a lazy zero-copy view
//! (`LazyRequestFrame`, feature `views`: only the framing and header are checked up front,
//! each accessor checks what it reads and returns a `Result`), and hands the records on as
//! slices of the frame. A frame cut short or otherwise bad fails at the accessor that meets
//! the bad bytes, with the owned decoder's error.
//!
//! `cargo run --example route_by_topic --features views`
//!
//! The counting allocator shows the routing read allocating nothing.

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::produce_request::{
    PartitionProduceData, ProduceRequestView, TopicProduceData,
};
use kafka_codec::messages::ProduceRequest;
use kafka_codec::{DecodeOptions, Framing, Lazy, LazyRequestFrame, RequestFrame, Uuid};
use kafka_codec_test_support::counting_alloc::{self, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Which of `brokers` leads a topic: a stand-in for a proxy's routing table.
fn route(topic: &[u8], brokers: usize) -> usize {
    topic.iter().fold(0usize, |h, &b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    }) % brokers
}

/// A Produce request of `topics` topics, one partition each with 64 KiB of records, at
/// `version`: version 13 names topics by id, older versions by name.
fn produce_frame(topics: usize, version: i16) -> Bytes {
    let records = Bytes::from(vec![0x5a; 64 * 1024]);
    let data = (0..topics)
        .map(|t| {
            let partition = PartitionProduceData::default()
                .with_index(t as i32 % 3)
                .with_records(Some(records.clone()));
            TopicProduceData::default()
                .with_name(format!("orders-{t}").into())
                .with_topic_id(Uuid::from_halves(7, t as i64))
                .with_partition_data(vec![partition])
        })
        .collect();
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_topic_data(data);
    let frame = RequestFrame::new(body, version, 42).with_client_id("router");
    let mut out = kafka_codec::bytes::BytesMut::new();
    frame
        .encode(&mut out, Framing::SizePrefixed)
        .expect("encodes");
    out.freeze()
}

fn main() {
    let options = DecodeOptions::default().with_framing(Framing::SizePrefixed);
    for version in [12, 13] {
        let frame = produce_frame(10, version);
        // Per broker: (partitions, record bytes) routed to it.
        let mut routed = [(0usize, 0usize); 3];
        let (result, stats) = counting_alloc::measure(|| {
            let view = LazyRequestFrame::new(&frame, &options)?;
            let Some(produce) = view.body::<ProduceRequestView<'_, Lazy>>() else {
                return Ok(0); // another API: forward as is
            };
            for topic in produce.topic_data()? {
                let topic = topic?;
                // The topic's name before version 13, its id from 13 on.
                let id = topic.topic_id()?;
                let key = if version >= 13 {
                    &id.as_bytes()[..]
                } else {
                    topic.name()?.as_bytes()
                };
                let broker = route(key, routed.len());
                for partition in topic.partition_data()? {
                    let partition = partition?;
                    // The records as a `Bytes` sharing the frame (no copy), to hand on.
                    let records = view.share(partition.records()?.unwrap_or_default());
                    routed[broker].0 += 1;
                    routed[broker].1 += records.len();
                    let _ = partition.index()?;
                }
            }
            Ok::<_, kafka_codec::DecodeError>(view.header().correlation_id())
        });
        let correlation = result.expect("a valid frame");
        println!(
            "Produce v{version}, correlation {correlation}, {} bytes: routed {routed:?} \
             (partitions, record bytes) per broker; heap allocated while routing: {} bytes",
            frame.len(),
            stats.requested
        );
        assert_eq!(stats.requested, 0, "the routing read allocates nothing");
    }

    // Cut short: the frame and header still read, and the accessor that reaches the missing
    // bytes fails as the owned decode fails.
    let frame = produce_frame(2, 13);
    let cut = frame.slice(..frame.len() - 100);
    let cut = {
        let mut bytes = (cut.len() as i32 - 4).to_be_bytes().to_vec();
        bytes.extend_from_slice(&cut[4..]);
        Bytes::from(bytes)
    };
    let view = LazyRequestFrame::new(&cut, &options).expect("framing and header are whole");
    let produce = view
        .body::<ProduceRequestView<'_, Lazy>>()
        .expect("a Produce request");
    let error = produce
        .topic_data()
        .and_then(|topics| {
            for topic in topics {
                for partition in topic?.partition_data()? {
                    partition?.records()?;
                }
            }
            Ok(())
        })
        .expect_err("cut short");
    assert_eq!(
        Some(&error),
        RequestFrame::decode_with(cut.clone(), &options)
            .err()
            .as_ref()
    );
    println!("a frame cut short: {error}");
}
