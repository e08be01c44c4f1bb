//! Building `DescribeQuorumResponse`s from a [`LeaderState`].

use super::{CommittedVoterSource, LeaderState, QuorumError, ReplicaState};
use crate::messages::describe_quorum_response::{self, Node, PartitionData, TopicData};
use crate::messages::{DescribeQuorumRequest, DescribeQuorumResponse};
use crate::{Message, Uuid};

/// The KRaft metadata log's topic name.
pub const METADATA_TOPIC: &str = "__cluster_metadata";
/// The KRaft metadata log's partition.
pub const METADATA_PARTITION: i32 = 0;

/// `NONE`.
pub const ERROR_NONE: i16 = 0;
/// `UNKNOWN_TOPIC_OR_PARTITION`.
pub const ERROR_UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// `NOT_LEADER_OR_FOLLOWER`.
pub const ERROR_NOT_LEADER_OR_FOLLOWER: i16 = 6;

/// The first DescribeQuorum version with `CommittedVoters`: provisional, and marked unstable
/// (see the [module documentation](super)).
pub const COMMITTED_VOTERS_VERSION: i16 = 3;

impl LeaderState {
    /// The leader's answer to a DescribeQuorum request at `version`, at time `now_ms`.
    ///
    /// Expired observers are dropped first ([`LeaderState::expire_observers`]). Then, per
    /// version:
    ///
    /// * all: `LeaderId`, `LeaderEpoch`, `HighWatermark` (`-1` while unknown),
    ///   `CurrentVoters` (the newest voter set, including an uncommitted addition and
    ///   excluding an uncommitted removal) and `Observers`, each in key order, with
    ///   `LogEndOffset` `-1` when unknown; an entry whose id is the leader's reports `now_ms`
    ///   as both timestamps, others their stored times (`-1` if never);
    /// * v1+: the two timestamps are on the wire (at v0 they are dropped);
    /// * v2+: `ReplicaDirectoryId` (zero when unknown) and `Nodes`: one node per current
    ///   voter with its listeners in name order;
    /// * v3+ (provisional): `CommittedVoters`, on the wire between `CurrentVoters` and
    ///   `Observers` ([`LeaderState::committed_voter_states`] rendered exactly like the live
    ///   entries, or with `-1` sentinels), `null` while the high watermark is unknown;
    ///   `Nodes` also lists committed voters that are not current voters, with the
    ///   endpoints of the committed voter set.
    ///
    /// The `ErrorMessage` fields keep their schema default (an empty string), as Kafka's
    /// leader leaves them. Fails only for a version outside 0–3.
    pub fn describe_quorum(
        &mut self,
        now_ms: i64,
        version: i16,
    ) -> Result<DescribeQuorumResponse, QuorumError> {
        check_version(version)?;
        self.expire_observers(now_ms);
        let leader_id = self.leader_id();
        let render = |state: &ReplicaState| render_replica(state, leader_id, now_ms, version);

        let mut partition = PartitionData {
            partition_index: METADATA_PARTITION,
            error_code: ERROR_NONE,
            leader_id,
            leader_epoch: self.epoch(),
            high_watermark: self.high_watermark().unwrap_or(-1),
            current_voters: self.voter_states().map(render).collect(),
            observers: self.observer_states().map(render).collect(),
            ..Default::default()
        };
        let mut nodes = Vec::new();
        if version >= 2 {
            nodes.extend(self.voter_states().map(|state| Node {
                node_id: state.key().id(),
                listeners: state.listeners().to_describe_quorum_listeners(),
                ..Default::default()
            }));
        }
        if version >= COMMITTED_VOTERS_VERSION {
            if let Some(committed) = self.committed_voter_states() {
                let mut rendered = Vec::with_capacity(committed.len());
                for voter in &committed {
                    let key = voter.node.key();
                    rendered.push(match voter.source {
                        CommittedVoterSource::CurrentVoter(state)
                        | CommittedVoterSource::Observer(state) => render(state),
                        CommittedVoterSource::Absent => describe_quorum_response::ReplicaState {
                            replica_id: key.id(),
                            replica_directory_id: key.directory_id_or_zero(),
                            log_end_offset: -1,
                            last_fetch_timestamp: -1,
                            last_caught_up_timestamp: -1,
                            ..Default::default()
                        },
                    });
                    // Committed voters that left the current set still get their endpoints.
                    if self.voter_state(key.id()).is_none() {
                        nodes.push(Node {
                            node_id: key.id(),
                            listeners: voter.node.listeners().to_describe_quorum_listeners(),
                            ..Default::default()
                        });
                    }
                }
                partition.committed_voters = Some(rendered);
            }
            nodes.sort_by_key(|node| node.node_id);
        }
        Ok(DescribeQuorumResponse {
            topics: vec![TopicData {
                topic_name: METADATA_TOPIC.into(),
                partitions: vec![partition],
                ..Default::default()
            }],
            nodes,
            ..Default::default()
        })
    }

    /// Answers a DescribeQuorum request: the leader's description when the request names
    /// exactly the metadata partition, else [`unknown_partition_response`].
    pub fn handle_describe_quorum(
        &mut self,
        request: &DescribeQuorumRequest,
        now_ms: i64,
        version: i16,
    ) -> Result<DescribeQuorumResponse, QuorumError> {
        check_version(version)?;
        if is_metadata_partition_request(request) {
            self.describe_quorum(now_ms, version)
        } else {
            Ok(unknown_partition_response(request))
        }
    }
}

/// One replica entry as the response shows it. The "now" rule for the leader matches by id
/// only, so it also covers the leader's own observer entry while it removes itself.
fn render_replica(
    state: &ReplicaState,
    leader_id: i32,
    now_ms: i64,
    version: i16,
) -> describe_quorum_response::ReplicaState {
    let key = state.key();
    let (last_fetch, last_caught_up) = if key.id() == leader_id {
        (now_ms, now_ms)
    } else {
        (
            state.last_fetch_timestamp().unwrap_or(-1),
            state.last_caught_up_timestamp().unwrap_or(-1),
        )
    };
    describe_quorum_response::ReplicaState {
        replica_id: key.id(),
        replica_directory_id: if version >= 2 {
            key.directory_id_or_zero()
        } else {
            Uuid::ZERO
        },
        log_end_offset: state.end_offset().unwrap_or(-1),
        last_fetch_timestamp: last_fetch,
        last_caught_up_timestamp: last_caught_up,
        ..Default::default()
    }
}

fn check_version(version: i16) -> Result<(), QuorumError> {
    if DescribeQuorumResponse::VALID_VERSIONS.contains(version) {
        Ok(())
    } else {
        Err(QuorumError::UnsupportedVersion(version))
    }
}

/// Whether the request names exactly one topic with exactly one partition, the metadata
/// partition (`__cluster_metadata`-0).
pub fn is_metadata_partition_request(request: &DescribeQuorumRequest) -> bool {
    match request.topics.as_slice() {
        [topic] => {
            topic.topic_name == METADATA_TOPIC
                && matches!(topic.partitions.as_slice(), [p] if p.partition_index == METADATA_PARTITION)
        }
        _ => false,
    }
}

/// The answer to a request that does not name exactly the metadata partition: every
/// requested partition gets `UNKNOWN_TOPIC_OR_PARTITION` (with a message from v2), leader id,
/// epoch and high watermark at their defaults (0) and no replicas; `CommittedVoters` is null.
pub fn unknown_partition_response(request: &DescribeQuorumRequest) -> DescribeQuorumResponse {
    DescribeQuorumResponse {
        topics: request
            .topics
            .iter()
            .map(|topic| TopicData {
                topic_name: topic.topic_name.clone(),
                partitions: topic
                    .partitions
                    .iter()
                    .map(|p| error_partition(p.partition_index, ERROR_UNKNOWN_TOPIC_OR_PARTITION))
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The answer of a node that is not the leader (for example a leader that resigned after
/// removing itself): one metadata partition with `NOT_LEADER_OR_FOLLOWER`.
pub fn not_leader_response() -> DescribeQuorumResponse {
    DescribeQuorumResponse {
        topics: vec![TopicData {
            topic_name: METADATA_TOPIC.into(),
            partitions: vec![error_partition(
                METADATA_PARTITION,
                ERROR_NOT_LEADER_OR_FOLLOWER,
            )],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn error_partition(partition_index: i32, error_code: i16) -> PartitionData {
    let message = match error_code {
        ERROR_UNKNOWN_TOPIC_OR_PARTITION => "This server does not host this topic-partition.",
        ERROR_NOT_LEADER_OR_FOLLOWER => "this node is not the quorum leader",
        _ => "",
    };
    PartitionData {
        partition_index,
        error_code,
        error_message: Some(message.into()),
        committed_voters: None,
        ..Default::default()
    }
}
