//! Fixtures for the `codec` benchmark: realistic messages built with kafka-codec's types, and
//! the check that kafka-protocol reads and writes the very same bytes.
//!
//! Every case is built once with our types and encoded with our encoder. Before anything is
//! timed, [`Case::new`] requires that kafka-protocol decodes those bytes completely and
//! re-encodes them byte for byte, and that our decoder gives back the message we built. The
//! benchmark then compares the two crates doing the same work on the same input.

use bytes::{Bytes, BytesMut};
use kafka_codec::codegen::{DecodeFields, EncodeFields};
use kafka_codec::messages::{
    api_versions_response, describe_quorum_response, fetch_response, metadata_response,
    produce_request,
};
use kafka_codec::records::{Compression, RecordBatchBuilder};
use kafka_codec::{ApiKey, Message, PrimitiveArray, Uuid};
use kafka_protocol::protocol::{Decodable, Encodable};

pub mod records;
pub mod redact;
pub mod views;

/// The dense frames of issue 11, shared with the main crate's tests.
pub use kafka_codec_test_support::dense;

/// One benchmarked message: our value, its bytes and the version they are in.
pub struct Case<M> {
    /// The benchmark group's name, e.g. `metadata_response_v13_100x10x3`.
    pub name: &'static str,
    /// The wire version.
    pub version: i16,
    /// Our message.
    pub message: M,
    /// Our encoding of it, which kafka-protocol has been checked to reproduce.
    pub bytes: Bytes,
}

impl<M: Message + DecodeFields + EncodeFields> Case<M> {
    /// Encodes `message` and checks that both crates agree on the bytes.
    ///
    /// `T` is kafka-protocol's type for the same message. Panics if kafka-protocol cannot
    /// decode our bytes, leaves some unread, re-encodes them differently or sizes them
    /// differently, or if our decoder does not give back `message`: the comparison would then
    /// not be of equal work.
    pub fn new<T: Decodable + Encodable>(name: &'static str, version: i16, message: M) -> Self {
        let bytes = message
            .encode_to_bytes(version)
            .unwrap_or_else(|e| panic!("{name}: kafka-codec cannot encode: {e}"));

        let ours = M::decode_exact(bytes.clone(), version)
            .unwrap_or_else(|e| panic!("{name}: kafka-codec cannot decode its own bytes: {e}"));
        assert!(
            ours == message,
            "{name}: kafka-codec round trip changed the message"
        );

        let mut input = bytes.clone();
        let theirs = T::decode(&mut input, version)
            .unwrap_or_else(|e| panic!("{name}: kafka-protocol cannot decode: {e:#}"));
        assert!(
            input.is_empty(),
            "{name}: kafka-protocol left {} of {} bytes unread",
            input.len(),
            bytes.len()
        );
        let size = theirs
            .compute_size(version)
            .unwrap_or_else(|e| panic!("{name}: kafka-protocol cannot size: {e:#}"));
        assert_eq!(
            size,
            bytes.len(),
            "{name}: kafka-protocol sizes differently"
        );
        let mut out = BytesMut::with_capacity(bytes.len());
        theirs
            .encode(&mut out, version)
            .unwrap_or_else(|e| panic!("{name}: kafka-protocol cannot encode: {e:#}"));
        if out[..] != bytes[..] {
            let at = out
                .iter()
                .zip(bytes.iter())
                .position(|(a, b)| a != b)
                .unwrap_or(out.len().min(bytes.len()));
            panic!(
                "{name}: kafka-protocol re-encodes differently: first difference at byte {at} \
                 (lengths {} vs ours {})",
                out.len(),
                bytes.len()
            );
        }
        Case {
            name,
            version,
            message,
            bytes,
        }
    }
}

/// SplitMix64: a small deterministic generator so that every run benchmarks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uuid(&mut self) -> Uuid {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_be_bytes());
        bytes[8..].copy_from_slice(&self.next().to_be_bytes());
        // Version 4, variant 1, as Kafka's Uuid.randomUuid() makes them.
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        Uuid::from_bytes(bytes)
    }

    fn fill(&mut self, len: usize) -> Bytes {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        out.truncate(len);
        Bytes::from(out)
    }
}

const RACKS: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];

fn broker_host(node: i32) -> String {
    format!("kafka-{node}.kafka-headless.streaming-prod.svc.cluster.local")
}

/// The name of a benchmark case; both the criterion groups and `examples/profile.rs` use it.
pub const METADATA_SMALL: &str = "metadata_response_v13_100x10x3";
/// See [`METADATA_SMALL`].
pub const METADATA_LARGE: &str = "metadata_response_v13_2000x50x3";

/// MetadataResponse v13 as a 3-broker cluster answers for `topics` topics of `partitions`
/// partitions each, replication factor 3, every replica in sync, none offline.
pub fn metadata_response(
    name: &'static str,
    topics: usize,
    partitions: i32,
) -> Case<metadata_response::MetadataResponse> {
    use metadata_response::*;
    const BROKERS: i32 = 3;
    let mut rng = Rng(0x6d65_7461);
    let domains = [
        "orders",
        "payments",
        "inventory",
        "shipping",
        "customers",
        "search",
        "billing",
        "fraud",
        "notifications",
        "analytics",
    ];
    let streams = [
        "events",
        "commands",
        "changelog",
        "state-snapshots",
        "dead-letter",
        "audit-log",
        "enriched",
        "retry-5m",
        "compacted-v2",
        "cdc.public.records",
    ];
    let brokers = (0..BROKERS)
        .map(|node| {
            MetadataResponseBroker::default()
                .with_node_id(node)
                .with_host(broker_host(node).into())
                .with_port(9092)
                .with_rack(Some(RACKS[node as usize % RACKS.len()].into()))
        })
        .collect();
    let topics = (0..topics)
        .map(|t| {
            let (domain, stream) = (domains[t % 10], streams[(t / 10) % 10]);
            // The first hundred names as a cluster would have them; beyond, numbered.
            let name = match t / 100 {
                0 => format!("prod.{domain}.{stream}"),
                n => format!("prod.{domain}.{stream}.{n}"),
            };
            let t = t as i32;
            let partitions = (0..partitions)
                .map(|p| {
                    let leader = (t + p) % BROKERS;
                    let replicas: PrimitiveArray<i32> =
                        (0..3).map(|r| (leader + r) % BROKERS).collect();
                    MetadataResponsePartition::default()
                        .with_error_code(0)
                        .with_partition_index(p)
                        .with_leader_id(leader)
                        .with_leader_epoch(10 + (t + p) % 40)
                        .with_isr_nodes(replicas.clone())
                        .with_replica_nodes(replicas)
                        .with_offline_replicas(PrimitiveArray::new())
                })
                .collect();
            MetadataResponseTopic::default()
                .with_error_code(0)
                .with_name(Some(name.into()))
                .with_topic_id(rng.uuid())
                .with_is_internal(false)
                .with_partitions(partitions)
                .with_topic_authorized_operations(i32::MIN)
        })
        .collect();
    let message = MetadataResponse::default()
        .with_throttle_time_ms(0)
        .with_brokers(brokers)
        .with_cluster_id(Some("q3Hx9ZbTR2mWkP0vYc7LdA".into()))
        .with_controller_id(2)
        .with_topics(topics)
        .with_error_code(0);
    Case::new::<kafka_protocol::messages::MetadataResponse>(name, 13, message)
}

/// Bytes of one partition's records in the Fetch and Produce cases.
pub const PARTITION_RECORDS_LEN: usize = 64 * 1024;

/// A real, uncompressed RecordBatch v2 of 1 KiB values (keys and values from `rng`), as many
/// records as fit in [`PARTITION_RECORDS_LEN`] bytes, padded to exactly that size by the
/// last record's value.
fn record_batch(rng: &mut Rng, base_offset: i64) -> Bytes {
    let build = |rng: &mut Rng, last_value: usize| {
        let mut builder = RecordBatchBuilder::new(Compression::None)
            .base_offset(base_offset)
            .producer(4_021, 0, base_offset as i32);
        for i in 0..62 {
            builder.append(
                1_733_140_000_000 + i,
                Some(rng.fill(16)),
                Some(rng.fill(1024)),
            );
        }
        builder.append(
            1_733_140_000_062,
            Some(rng.fill(16)),
            Some(rng.fill(last_value)),
        );
        builder.build()
    };
    // Size the last value so that the batch is exactly 64 KiB (its length varint grows by at
    // most one byte while doing so, hence the second try).
    let mut fork = Rng(rng.0);
    let probe = build(&mut fork, 0).encode_to_bytes().expect("encode batch");
    let mut last = PARTITION_RECORDS_LEN - probe.len();
    loop {
        let mut fork = Rng(rng.0);
        let bytes = build(&mut fork, last)
            .encode_to_bytes()
            .expect("encode batch");
        match bytes.len().cmp(&PARTITION_RECORDS_LEN) {
            std::cmp::Ordering::Equal => {
                rng.0 = fork.0;
                return bytes;
            }
            std::cmp::Ordering::Greater => last -= bytes.len() - PARTITION_RECORDS_LEN,
            std::cmp::Ordering::Less => last += PARTITION_RECORDS_LEN - bytes.len(),
        }
    }
}

/// FetchResponse v18: one topic, 10 partitions, each holding a 64 KiB record batch.
pub fn fetch_response() -> Case<fetch_response::FetchResponse> {
    use fetch_response::*;
    let mut rng = Rng(0x6665_7463);
    let topic_id = rng.uuid();
    let partitions = (0..10)
        .map(|p| {
            let base = 1_250_000 + i64::from(p) * 1_000;
            PartitionData::default()
                .with_partition_index(p)
                .with_error_code(0)
                .with_high_watermark(base + 64)
                .with_last_stable_offset(base + 64)
                .with_log_start_offset(800_000)
                .with_aborted_transactions(None)
                .with_preferred_read_replica(-1)
                .with_records(Some(record_batch(&mut rng, base)))
        })
        .collect();
    let message = FetchResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_session_id(1_834_221_907)
        .with_responses(vec![FetchableTopicResponse::default()
            .with_topic_id(topic_id)
            .with_partitions(partitions)]);
    Case::new::<kafka_protocol::messages::FetchResponse>("fetch_response_v18", 18, message)
}

/// ProduceRequest v13: acks=all, one topic (by id, as v13 names it), 10 partitions, each
/// with a 64 KiB record batch.
pub fn produce_request() -> Case<produce_request::ProduceRequest> {
    use produce_request::*;
    let mut rng = Rng(0x7072_6f64);
    let topic_id = rng.uuid();
    let partition_data = (0..10)
        .map(|p| {
            PartitionProduceData::default()
                .with_index(p)
                .with_records(Some(record_batch(&mut rng, 0)))
        })
        .collect();
    let message = ProduceRequest::default()
        .with_transactional_id(None)
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_topic_id(topic_id)
            .with_partition_data(partition_data)]);
    Case::new::<kafka_protocol::messages::ProduceRequest>("produce_request_v13", 13, message)
}

/// DescribeQuorumResponse v2: the metadata partition with 5 voters and 50 observers, and the
/// 5 voters' nodes with their controller listener.
pub fn describe_quorum_response() -> Case<describe_quorum_response::DescribeQuorumResponse> {
    use describe_quorum_response::*;
    let mut rng = Rng(0x7175_6f72);
    let now = 1_733_140_000_000i64;
    let voters: Vec<ReplicaState> = (0..5)
        .map(|id| {
            ReplicaState::default()
                .with_replica_id(3000 + id)
                .with_replica_directory_id(rng.uuid())
                .with_log_end_offset(4_812_345 - i64::from(id % 2))
                .with_last_fetch_timestamp(now - i64::from(id) * 37)
                .with_last_caught_up_timestamp(now - i64::from(id) * 41)
        })
        .collect();
    let observers = (0..50)
        .map(|id| {
            ReplicaState::default()
                .with_replica_id(id)
                .with_replica_directory_id(rng.uuid())
                .with_log_end_offset(4_812_300 + i64::from(id))
                .with_last_fetch_timestamp(now - 120 - i64::from(id) * 13)
                .with_last_caught_up_timestamp(now - 400 - i64::from(id) * 17)
        })
        .collect();
    let nodes = voters
        .iter()
        .map(|voter| {
            Node::default()
                .with_node_id(voter.replica_id)
                .with_listeners(vec![Listener::default()
                    .with_name("CONTROLLER".into())
                    .with_host(
                        format!(
                            "controller-{}.kafka-controllers.streaming-prod.svc.cluster.local",
                            voter.replica_id - 3000
                        )
                        .into(),
                    )
                    .with_port(9093)])
        })
        .collect();
    let message = DescribeQuorumResponse::default()
        .with_error_code(0)
        // A real 4.4.0 broker writes "" here, not null.
        .with_error_message(Some("".into()))
        .with_topics(vec![TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(0)
                .with_error_code(0)
                .with_error_message(Some("".into()))
                .with_leader_id(3000)
                .with_leader_epoch(57)
                .with_high_watermark(4_812_344)
                .with_current_voters(voters)
                .with_observers(observers)])])
        .with_nodes(nodes);
    Case::new::<kafka_protocol::messages::DescribeQuorumResponse>(
        "describe_quorum_response_v2",
        2,
        message,
    )
}

/// ApiVersionsResponse v3 with 70 keys (the first 70 APIs this crate knows, with their
/// versions) and nothing in the tagged section.
pub fn api_versions_response() -> Case<api_versions_response::ApiVersionsResponse> {
    use api_versions_response::*;
    let api_keys: Vec<ApiVersion> = ApiKey::ALL
        .iter()
        .take(70)
        .map(|api| {
            let versions = api.valid_versions();
            ApiVersion::default()
                .with_api_key(api.key())
                .with_min_version(versions.min)
                .with_max_version(versions.max)
        })
        .collect();
    assert_eq!(api_keys.len(), 70, "the crate knows fewer than 70 APIs");
    let message = ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(api_keys)
        .with_throttle_time_ms(0);
    Case::new::<kafka_protocol::messages::ApiVersionsResponse>(
        "api_versions_response_v3",
        3,
        message,
    )
}

/// Runs something generic over a case's two message types; see [`with_case`].
pub trait CaseVisitor {
    /// Called with the built (and checked) case; `T` is kafka-protocol's type for it.
    fn visit<M: Message + DecodeFields + EncodeFields, T: Decodable + Encodable>(
        &mut self,
        case: Case<M>,
    );
}

/// Every case's name, in the order the benchmark runs them.
pub const CASES: [&str; 6] = [
    "describe_quorum_response_v2",
    METADATA_SMALL,
    METADATA_LARGE,
    "fetch_response_v18",
    "produce_request_v13",
    "api_versions_response_v3",
];

/// Builds the case called `name` and hands it to `visitor`; false if there is no such case.
pub fn with_case(name: &str, visitor: &mut impl CaseVisitor) -> bool {
    use kafka_protocol::messages as kp;
    match name {
        "describe_quorum_response_v2" => {
            visitor.visit::<_, kp::DescribeQuorumResponse>(describe_quorum_response())
        }
        METADATA_SMALL => {
            visitor.visit::<_, kp::MetadataResponse>(metadata_response(METADATA_SMALL, 100, 10))
        }
        METADATA_LARGE => {
            visitor.visit::<_, kp::MetadataResponse>(metadata_response(METADATA_LARGE, 2_000, 50))
        }
        "fetch_response_v18" => visitor.visit::<_, kp::FetchResponse>(fetch_response()),
        "produce_request_v13" => visitor.visit::<_, kp::ProduceRequest>(produce_request()),
        "api_versions_response_v3" => {
            visitor.visit::<_, kp::ApiVersionsResponse>(api_versions_response())
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::records::decode_batches;

    // Building each case runs the equal-work check; the counts pin the shapes of issue 12.
    #[test]
    fn both_crates_agree_on_every_case() {
        let quorum = describe_quorum_response();
        let partition = &quorum.message.topics[0].partitions[0];
        assert_eq!(
            (
                partition.current_voters.len(),
                partition.observers.len(),
                quorum.message.nodes.len()
            ),
            (5, 50, 5)
        );

        for (topics, partitions) in [(100, 10), (2_000, 50)] {
            let name = if topics == 100 {
                METADATA_SMALL
            } else {
                METADATA_LARGE
            };
            let case = metadata_response(name, topics, partitions);
            assert_eq!(case.message.brokers.len(), 3);
            assert_eq!(case.message.topics.len(), topics);
            for topic in &case.message.topics {
                assert_eq!(topic.partitions.len(), partitions as usize);
                for p in &topic.partitions {
                    assert_eq!((p.replica_nodes.len(), p.isr_nodes.len()), (3, 3));
                    assert!(p.offline_replicas.is_empty());
                }
            }
        }

        // Ten partitions, each one real 64 KiB batch.
        let fetch = fetch_response();
        let produce = produce_request();
        let fetched: Vec<_> = fetch.message.responses[0]
            .partitions
            .iter()
            .map(|p| &p.records)
            .collect();
        let produced: Vec<_> = produce.message.topic_data[0]
            .partition_data
            .iter()
            .map(|p| &p.records)
            .collect();
        for records in [fetched, produced] {
            assert_eq!(records.len(), 10);
            for records in records {
                let records = records.as_ref().unwrap();
                assert_eq!(records.len(), PARTITION_RECORDS_LEN);
                assert_eq!(decode_batches(records).unwrap().len(), 1);
            }
        }

        assert_eq!(api_versions_response().message.api_keys.len(), 70);

        let mut names = Vec::new();
        struct Names<'a>(&'a mut Vec<&'static str>);
        impl CaseVisitor for Names<'_> {
            fn visit<M: Message + DecodeFields + EncodeFields, T: Decodable + Encodable>(
                &mut self,
                case: Case<M>,
            ) {
                self.0.push(case.name);
            }
        }
        for name in CASES {
            assert!(with_case(name, &mut Names(&mut names)));
        }
        assert_eq!(names, CASES);

        for case in records::records_cases() {
            assert_eq!(case.batch.records.len(), records::RECORDS, "{}", case.name);
        }
    }

    // The dense frames of issue 11 are written by hand; they must be exactly what the
    // crate's encoder writes for the same messages, and decode to the promised counts.
    #[test]
    fn dense_frames_are_what_the_encoder_writes() {
        use dense::Shape;
        use kafka_codec::messages::{list_groups_response, metadata_request};
        for target in [0, 1, 7, 8, 13, 100, 1_000, 4_096] {
            let (body, count) = Shape::ListGroupsResponseV3.body(target);
            assert!(body.len() <= target.max(8), "{target}: {}", body.len());
            let message = list_groups_response::ListGroupsResponse::default().with_groups(
                (0..count)
                    .map(|i| {
                        list_groups_response::ListedGroup::default()
                            .with_group_id(
                                std::str::from_utf8(&dense::name::<3>(i)).unwrap().into(),
                            )
                            .with_protocol_type("".into())
                    })
                    .collect(),
            );
            assert_eq!(message.encode_to_vec(3).unwrap(), body, "{target}");

            let (body, count) = Shape::MetadataRequestV9.body(target);
            assert!(body.len() <= target.max(5), "{target}: {}", body.len());
            let message = metadata_request::MetadataRequest::default()
                .with_topics(Some(
                    (0..count)
                        .map(|i| {
                            metadata_request::MetadataRequestTopic::default().with_name(Some(
                                std::str::from_utf8(&dense::name::<2>(i)).unwrap().into(),
                            ))
                        })
                        .collect(),
                ))
                .with_allow_auto_topic_creation(true)
                .with_include_cluster_authorized_operations(false)
                .with_include_topic_authorized_operations(false);
            assert_eq!(message.encode_to_vec(9).unwrap(), body, "{target}");
        }
        // Whole frames, header included, decode as frames.
        let (frame, count) = Shape::ListGroupsResponseV3.frame(10_000);
        let frame =
            kafka_codec::ResponseFrame::decode(Bytes::from(frame), ApiKey::ListGroups, 3).unwrap();
        let kafka_codec::Response::ListGroups(body) = frame.body else {
            panic!("not ListGroups")
        };
        assert_eq!(body.groups.len(), count);
        let (frame, count) = Shape::MetadataRequestV9.frame(10_000);
        let frame = kafka_codec::RequestFrame::decode(Bytes::from(frame)).unwrap();
        let kafka_codec::Request::Metadata(body) = frame.body else {
            panic!("not Metadata")
        };
        assert_eq!(body.topics.unwrap().len(), count);
    }
}
