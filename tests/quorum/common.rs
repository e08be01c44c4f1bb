//! Fixtures shared by the quorum tests: a small cluster of controllers `c1`, `c2`, ... with
//! recognisable directory ids, and helpers that spell out expected DescribeQuorum responses.

#![allow(dead_code)]

use bytes::Bytes;
use kafka_codec::messages::describe_quorum_response::{
    Listener, Node, PartitionData, ReplicaState, TopicData,
};
use kafka_codec::messages::{DescribeQuorumResponse, KRaftVersionRecord};
use kafka_codec::quorum::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, ReplicaKey,
    VoterNode, VoterSet,
};
use kafka_codec::{Message, Uuid};

/// The clock at the start of every scenario (2023-11-14T22:13:20Z).
pub const T0: i64 = 1_700_000_000_000;

/// Directory id of controller `id`: sixteen bytes of `id` (`01 01 … 01` for controller 1).
pub fn dir(id: i32) -> Uuid {
    Uuid::from_bytes([id as u8; 16])
}

/// Controller `id` with its directory id.
pub fn key(id: i32) -> ReplicaKey {
    ReplicaKey::new(id, Some(dir(id)))
}

/// Controller `id`'s listener: `CONTROLLER` on host `c<id>`, port 9093.
pub fn endpoints(id: i32) -> Endpoints {
    Endpoints::single("CONTROLLER", &format!("c{id}"), 9093)
}

/// Controller `id` as a voter (supports kraft.version 0–1).
pub fn node(id: i32) -> VoterNode {
    VoterNode::new(key(id), endpoints(id), (0, 1))
}

/// Voters with directory ids.
pub fn voters(ids: &[i32]) -> VoterSet {
    VoterSet::new(ids.iter().map(|&id| node(id))).unwrap()
}

/// The static `controller.quorum.voters` set for `ids` (no directory ids).
pub fn static_voters(ids: &[i32]) -> VoterSet {
    VoterSet::new(
        ids.iter()
            .map(|&id| VoterSet::static_node(id, "CONTROLLER", &format!("c{id}"), 9093)),
    )
    .unwrap()
}

pub fn kraft_version_record(version: i16) -> ControlRecord {
    ControlRecord::kraft_version(
        &KRaftVersionRecord::default()
            .with_version(0)
            .with_k_raft_version(version),
    )
    .unwrap()
}

pub fn voters_record(set: &VoterSet) -> ControlRecord {
    ControlRecord::voters(&set.to_voters_record()).unwrap()
}

/// A log formatted with a bootstrap checkpoint: kraft.version 1 and `ids` at offset -1.
pub fn bootstrapped_log(ids: &[i32]) -> ControlRecordStateMachine {
    let mut log = ControlRecordStateMachine::new(None);
    log.load_snapshot(0, &[kraft_version_record(1), voters_record(&voters(ids))])
        .unwrap();
    log
}

pub fn local(id: i32) -> LocalReplica {
    LocalReplica {
        key: key(id),
        listeners: endpoints(id),
        supported_kraft_versions: (0, 1),
    }
}

/// Controller `leader` elected for `epoch` on a freshly bootstrapped log of `ids`. Its
/// start-of-epoch batch (LeaderChange, KRaftVersion, Voters) fills offsets 0..=2, so its log
/// end offset is 3 and the high watermark is unknown.
pub fn bootstrapped_leader(ids: &[i32], leader: i32, epoch: i32) -> LeaderState {
    let state = LeaderState::new(local(leader), epoch, bootstrapped_log(ids)).unwrap();
    assert_eq!(state.log_end_offset(), 3);
    state
}

/// A wire replica entry.
pub fn entry(id: i32, directory: Uuid, leo: i64, fetch: i64, caught_up: i64) -> ReplicaState {
    ReplicaState::default()
        .with_replica_id(id)
        .with_replica_directory_id(directory)
        .with_log_end_offset(leo)
        .with_last_fetch_timestamp(fetch)
        .with_last_caught_up_timestamp(caught_up)
}

/// A wire entry for controller `id` with its directory id.
pub fn live(id: i32, leo: i64, fetch: i64, caught_up: i64) -> ReplicaState {
    entry(id, dir(id), leo, fetch, caught_up)
}

/// A wire entry for controller `id` that the leader knows nothing about: the sentinels.
pub fn sentinel(id: i32) -> ReplicaState {
    live(id, -1, -1, -1)
}

/// A wire node for controller `id` with its standard listener.
pub fn wire_node(id: i32) -> Node {
    wire_node_with(id, &[("CONTROLLER", &format!("c{id}"), 9093)])
}

pub fn wire_node_with(id: i32, listeners: &[(&str, &str, u16)]) -> Node {
    Node::default().with_node_id(id).with_listeners(
        listeners
            .iter()
            .map(|&(name, host, port)| {
                Listener::default()
                    .with_name(name.into())
                    .with_host(host.into())
                    .with_port(port)
            })
            .collect(),
    )
}

/// The full v3 response a leader gives (error messages at their default, empty). Fields in
/// wire order: `CommittedVoters` sits between `CurrentVoters` and `Observers`.
pub struct Expected {
    pub leader: i32,
    pub epoch: i32,
    pub high_watermark: i64,
    pub current: Vec<ReplicaState>,
    pub committed: Option<Vec<ReplicaState>>,
    pub observers: Vec<ReplicaState>,
    pub nodes: Vec<Node>,
}

impl Expected {
    pub fn v3(&self) -> DescribeQuorumResponse {
        DescribeQuorumResponse::default()
            .with_topics(vec![TopicData::default()
                .with_topic_name("__cluster_metadata".into())
                .with_partitions(vec![PartitionData::default()
                    .with_partition_index(0)
                    .with_error_code(0)
                    .with_leader_id(self.leader)
                    .with_leader_epoch(self.epoch)
                    .with_high_watermark(self.high_watermark)
                    .with_current_voters(self.current.clone())
                    .with_committed_voters(self.committed.clone())
                    .with_observers(self.observers.clone())])])
            .with_nodes(self.nodes.clone())
    }
}

/// What a leader that knows nothing of committed voters answers at `version` ≤ 2, derived
/// from a full v3 answer: no committed voters, `Nodes` only for current voters (v2), and no
/// directory ids or nodes at v0/v1.
pub fn as_older_version(v3: &DescribeQuorumResponse, version: i16) -> DescribeQuorumResponse {
    assert!(version <= 2);
    let mut out = v3.clone();
    let partition = &mut out.topics[0].partitions[0];
    partition.committed_voters = None;
    let current: Vec<i32> = partition
        .current_voters
        .iter()
        .map(|r| r.replica_id)
        .collect();
    out.nodes.retain(|node| current.contains(&node.node_id));
    if version < 2 {
        out.nodes.clear();
        for replica in partition
            .current_voters
            .iter_mut()
            .chain(partition.observers.iter_mut())
        {
            replica.replica_directory_id = Uuid::ZERO;
        }
    }
    out
}

/// Checks the leader's full answer at v3 against `expected`, and at v0–v2 against what
/// `as_older_version` derives; checks that every answer survives bytes and JSON; and that the
/// v3 answer written at v2 drops the committed voters silently.
pub fn assert_describe(leader: &mut LeaderState, now_ms: i64, expected: &Expected) {
    let v3 = expected.v3();
    let got = leader.describe_quorum(now_ms, 3).unwrap();
    assert_eq!(got, v3, "v3 response at {now_ms}");
    for version in 0..=3 {
        let want = if version == 3 {
            v3.clone()
        } else {
            as_older_version(&v3, version)
        };
        let got = leader.describe_quorum(now_ms, version).unwrap();
        assert_eq!(got, want, "v{version} response at {now_ms}");
        round_trips(&got, version);
    }
    // The v3 answer written at v2: CommittedVoters vanish (ignorable); the only other
    // difference from the v2 answer can be Nodes of committed voters that left.
    let v2 = leader.describe_quorum(now_ms, 2).unwrap();
    let downgraded =
        DescribeQuorumResponse::decode_exact(v3.encode_to_bytes(2).unwrap(), 2).unwrap();
    let mut without_extra_nodes = downgraded.clone();
    without_extra_nodes.nodes = v2.nodes.clone();
    assert_eq!(without_extra_nodes, v2);
    if downgraded.nodes == v2.nodes {
        assert_eq!(
            v3.encode_to_bytes(2).unwrap(),
            v2.encode_to_bytes(2).unwrap()
        );
    }
}

/// Encode → decode and JSON → message at `version`. Fields the version lacks come back as
/// their defaults: the error messages (before v2) and the two timestamps (at v0).
pub fn round_trips(response: &DescribeQuorumResponse, version: i16) {
    let mut expected = response.clone();
    if version < 2 {
        expected.error_message = Some("".into());
        for partition in expected
            .topics
            .iter_mut()
            .flat_map(|t| t.partitions.iter_mut())
        {
            partition.error_message = Some("".into());
        }
    }
    if version == 0 {
        for partition in expected
            .topics
            .iter_mut()
            .flat_map(|t| t.partitions.iter_mut())
        {
            for replica in partition
                .current_voters
                .iter_mut()
                .chain(partition.observers.iter_mut())
            {
                replica.last_fetch_timestamp = -1;
                replica.last_caught_up_timestamp = -1;
            }
        }
    }
    let bytes: Bytes = response.encode_to_bytes(version).unwrap();
    assert_eq!(response.encoded_len(version).unwrap(), bytes.len());
    let decoded = DescribeQuorumResponse::decode_exact(bytes, version).unwrap();
    assert_eq!(decoded, expected, "bytes round trip at v{version}");
    let json = response.to_json(version).unwrap();
    let from_json = DescribeQuorumResponse::from_json(&json, version).unwrap();
    assert_eq!(from_json, expected, "JSON round trip at v{version}");
}
