//! Fixtures for the `codec` benchmark: realistic messages built with kafka-codec's types, and
//! the check that kafka-protocol reads and writes the very same bytes.
//!
//! Every case is built once with our types and encoded with our encoder. Before anything is
//! timed, [`Case::new`] requires that kafka-protocol decodes those bytes completely and
//! re-encodes them byte for byte, and that our decoder gives back the message we built. The
//! benchmark then compares the two crates doing the same work on the same input.

use bytes::{Bytes, BytesMut};
use kafka_codec::messages::{
    api_versions_response, describe_quorum_response, fetch_response, metadata_response,
    produce_request,
};
use kafka_codec::{ApiKey, DecodeFields, EncodeFields, Message, Uuid};

pub mod records;

/// One benchmarked message: our value, its bytes and the version they are in.
pub struct Case<M> {
    /// The benchmark group's name, e.g. `metadata_response_v12`.
    pub name: &'static str,
    /// The wire version.
    pub version: i16,
    /// Our message.
    pub message: M,
    /// Our encoding of it, which kafka-protocol has been checked to reproduce.
    pub bytes: Bytes,
}

impl<M: Message + EncodeFields + DecodeFields> Case<M> {
    /// Encodes `message` and checks that both crates agree on the bytes.
    ///
    /// `T` is kafka-protocol's type for the same message. Panics if kafka-protocol cannot
    /// decode our bytes, leaves some unread, re-encodes them differently or sizes them
    /// differently, or if our decoder does not give back `message`: the comparison would then
    /// not be of equal work.
    pub fn new<T>(name: &'static str, version: i16, message: M) -> Self
    where
        T: kafka_protocol::protocol::Decodable + kafka_protocol::protocol::Encodable,
    {
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

const BROKERS: i32 = 6;
const RACKS: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];

fn broker_host(node: i32) -> String {
    format!("kafka-{node}.kafka-headless.streaming-prod.svc.cluster.local")
}

/// A stand-in for a record batch: `records` is opaque to both codecs (neither looks inside
/// it), so only its length and the copy-or-slice question matter.
fn records(rng: &mut Rng, len: usize) -> Bytes {
    rng.fill(len)
}

/// (a) MetadataResponse v12: 6 brokers, 100 topics × 10 partitions with replication factor 3.
pub fn metadata_response() -> Case<metadata_response::MetadataResponse> {
    use metadata_response::*;
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
        .map(|node| MetadataResponseBroker {
            node_id: node,
            host: broker_host(node).into(),
            port: 9092,
            rack: Some(RACKS[node as usize % RACKS.len()].into()),
            ..Default::default()
        })
        .collect();
    let mut topics = Vec::new();
    for (d, domain) in domains.iter().enumerate() {
        for (s, stream) in streams.iter().enumerate() {
            let t = (d * streams.len() + s) as i32;
            let partitions = (0..10)
                .map(|p| {
                    let leader = (t + p) % BROKERS;
                    let replicas: Vec<i32> = (0..3).map(|r| (leader + r) % BROKERS).collect();
                    // One partition in seven has a follower out of sync.
                    let isr = if (t * 10 + p) % 7 == 0 {
                        replicas[..2].to_vec()
                    } else {
                        replicas.clone()
                    };
                    MetadataResponsePartition {
                        error_code: 0,
                        partition_index: p,
                        leader_id: leader,
                        leader_epoch: 10 + (t + p) % 40,
                        replica_nodes: replicas,
                        isr_nodes: isr,
                        offline_replicas: Vec::new(),
                        ..Default::default()
                    }
                })
                .collect();
            topics.push(MetadataResponseTopic {
                error_code: 0,
                name: Some(format!("prod.{domain}.{stream}").into()),
                topic_id: rng.uuid(),
                is_internal: false,
                partitions,
                topic_authorized_operations: i32::MIN,
                ..Default::default()
            });
        }
    }
    let message = MetadataResponse {
        throttle_time_ms: 0,
        brokers,
        cluster_id: Some("q3Hx9ZbTR2mWkP0vYc7LdA".into()),
        controller_id: 2,
        topics,
        ..Default::default()
    };
    Case::new::<kafka_protocol::messages::MetadataResponse>("metadata_response_v12", 12, message)
}

/// (b) FetchResponse v16: 2 topics × 2 partitions, 16 KiB of records each (64 KiB in all).
pub fn fetch_response() -> Case<fetch_response::FetchResponse> {
    use fetch_response::*;
    let mut rng = Rng(0x6665_7463);
    let responses = (0..2)
        .map(|_| FetchableTopicResponse {
            topic_id: rng.uuid(),
            partitions: (0..2)
                .map(|p| PartitionData {
                    partition_index: p,
                    error_code: 0,
                    high_watermark: 1_250_000 + i64::from(p) * 1_000,
                    last_stable_offset: 1_250_000 + i64::from(p) * 1_000,
                    log_start_offset: 800_000,
                    aborted_transactions: None,
                    preferred_read_replica: -1,
                    records: Some(records(&mut rng, 16 * 1024)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    let message = FetchResponse {
        throttle_time_ms: 0,
        error_code: 0,
        session_id: 1_834_221_907,
        responses,
        ..Default::default()
    };
    Case::new::<kafka_protocol::messages::FetchResponse>("fetch_response_v16", 16, message)
}

/// (c) ProduceRequest v11: acks=all, 2 topics × 2 partitions, 16 KiB of records each.
pub fn produce_request() -> Case<produce_request::ProduceRequest> {
    use produce_request::*;
    let mut rng = Rng(0x7072_6f64);
    let topic_data = ["prod.orders.events", "prod.payments.audit-log"]
        .into_iter()
        .map(|name| TopicProduceData {
            name: name.into(),
            partition_data: (0..2)
                .map(|p| PartitionProduceData {
                    index: p * 3,
                    records: Some(records(&mut rng, 16 * 1024)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    let message = ProduceRequest {
        transactional_id: None,
        acks: -1,
        timeout_ms: 30_000,
        topic_data,
        ..Default::default()
    };
    Case::new::<kafka_protocol::messages::ProduceRequest>("produce_request_v11", 11, message)
}

/// (d) DescribeQuorumResponse v2: the metadata partition with 5 voters and 10 observers, and
/// the voters' controller listeners.
pub fn describe_quorum_response() -> Case<describe_quorum_response::DescribeQuorumResponse> {
    use describe_quorum_response::*;
    let mut rng = Rng(0x7175_6f72);
    let now = 1_733_140_000_000i64;
    let voters: Vec<ReplicaState> = (0..5)
        .map(|id| ReplicaState {
            replica_id: 3000 + id,
            replica_directory_id: rng.uuid(),
            log_end_offset: 4_812_345 - i64::from(id % 2),
            last_fetch_timestamp: now - i64::from(id) * 37,
            last_caught_up_timestamp: now - i64::from(id) * 41,
            ..Default::default()
        })
        .collect();
    let observers = (0..10)
        .map(|id| ReplicaState {
            replica_id: id,
            replica_directory_id: rng.uuid(),
            log_end_offset: 4_812_300 + i64::from(id),
            last_fetch_timestamp: now - 120 - i64::from(id) * 13,
            last_caught_up_timestamp: now - 400 - i64::from(id) * 17,
            ..Default::default()
        })
        .collect();
    let nodes = voters
        .iter()
        .map(|voter| Node {
            node_id: voter.replica_id,
            listeners: vec![Listener {
                name: "CONTROLLER".into(),
                host: format!(
                    "controller-{}.kafka-controllers.streaming-prod.svc.cluster.local",
                    voter.replica_id - 3000
                )
                .into(),
                port: 9093,
                ..Default::default()
            }],
            ..Default::default()
        })
        .collect();
    let message = DescribeQuorumResponse {
        error_code: 0,
        error_message: None,
        topics: vec![TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                error_code: 0,
                error_message: None,
                leader_id: 3000,
                leader_epoch: 57,
                high_watermark: 4_812_344,
                current_voters: voters,
                observers,
                ..Default::default()
            }],
            ..Default::default()
        }],
        nodes,
        ..Default::default()
    };
    Case::new::<kafka_protocol::messages::DescribeQuorumResponse>(
        "describe_quorum_response_v2",
        2,
        message,
    )
}

/// (e) ApiVersionsResponse v3: what a broker answers, every API this crate knows with its
/// versions, plus the supported and finalized features in the tagged section.
pub fn api_versions_response() -> Case<api_versions_response::ApiVersionsResponse> {
    use api_versions_response::*;
    let api_keys = ApiKey::ALL
        .iter()
        .map(|api| {
            let versions = api.valid_versions();
            ApiVersion {
                api_key: api.key(),
                min_version: versions.min,
                max_version: versions.max,
                ..Default::default()
            }
        })
        .collect();
    let features = [
        ("group.version", 0, 1, 1),
        ("kraft.version", 0, 1, 1),
        ("metadata.version", 7, 27, 27),
        ("transaction.version", 0, 2, 2),
    ];
    let message = ApiVersionsResponse {
        error_code: 0,
        api_keys,
        throttle_time_ms: 0,
        supported_features: features
            .iter()
            .map(|&(name, min, max, _)| SupportedFeatureKey {
                name: name.into(),
                min_version: min,
                max_version: max,
                ..Default::default()
            })
            .collect(),
        finalized_features_epoch: 4_812_201,
        finalized_features: features
            .iter()
            .map(|&(name, _, _, level)| FinalizedFeatureKey {
                name: name.into(),
                max_version_level: level,
                min_version_level: level,
                ..Default::default()
            })
            .collect(),
        zk_migration_ready: false,
        ..Default::default()
    };
    Case::new::<kafka_protocol::messages::ApiVersionsResponse>(
        "api_versions_response_v3",
        3,
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Building each case runs the equal-work check; the sizes keep the fixtures honest.
    #[test]
    fn both_crates_agree_on_every_case() {
        let metadata = metadata_response();
        assert_eq!(metadata.message.topics.len(), 100);
        assert!(metadata.bytes.len() > 20_000, "{}", metadata.bytes.len());

        let fetch = fetch_response();
        assert!((64 * 1024..66 * 1024).contains(&fetch.bytes.len()));

        let produce = produce_request();
        assert!((64 * 1024..66 * 1024).contains(&produce.bytes.len()));

        let quorum = describe_quorum_response();
        let partition = &quorum.message.topics[0].partitions[0];
        assert_eq!(
            (partition.current_voters.len(), partition.observers.len()),
            (5, 10)
        );

        let versions = api_versions_response();
        assert!(versions.bytes.len() < 2048, "{}", versions.bytes.len());

        for case in records::records_cases() {
            assert_eq!(case.batch.records.len(), records::RECORDS, "{}", case.name);
        }
    }
}
