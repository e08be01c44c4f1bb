//! One file per API, as franz-go's kfake keeps them: each says which API it serves and
//! answers its request by reading or changing the cluster's state. [`advertised`] lists
//! exactly these APIs, so ApiVersions never names one that is then refused.

mod add_offsets_to_txn;
mod add_partitions_to_txn;
mod add_raft_voter;
mod alter_client_quotas;
mod alter_configs;
mod alter_partition_reassignments;
mod alter_replica_log_dirs;
mod alter_share_group_offsets;
mod alter_user_scram_credentials;
mod api_versions;
mod consumer_group_describe;
mod consumer_group_heartbeat;
mod create_acls;
mod create_delegation_token;
mod create_partitions;
mod create_topics;
mod delete_acls;
mod delete_groups;
mod delete_records;
mod delete_share_group_offsets;
mod delete_topics;
mod describe_acls;
mod describe_client_quotas;
mod describe_cluster;
mod describe_configs;
mod describe_delegation_token;
mod describe_groups;
mod describe_log_dirs;
mod describe_producers;
mod describe_quorum;
mod describe_share_group_offsets;
mod describe_topic_partitions;
mod describe_transactions;
mod describe_user_scram_credentials;
mod elect_leaders;
mod end_txn;
mod expire_delegation_token;
mod fetch;
mod find_coordinator;
mod get_telemetry_subscriptions;
mod heartbeat;
mod incremental_alter_configs;
mod init_producer_id;
mod join_group;
mod leave_group;
mod list_config_resources;
mod list_groups;
mod list_offsets;
mod list_partition_reassignments;
mod list_transactions;
mod metadata;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
mod offset_for_leader_epoch;
mod produce;
mod push_telemetry;
mod remove_raft_voter;
mod renew_delegation_token;
mod sasl_authenticate;
mod sasl_handshake;
mod share_acknowledge;
mod share_fetch;
mod share_group_describe;
mod share_group_heartbeat;
mod streams_group_describe;
mod streams_group_heartbeat;
mod streams_group_topology_description_update;
mod sync_group;
mod txn_offset_commit;
mod unregister_broker;
mod unregister_controller;
mod update_features;

pub(crate) use alter_partition_reassignments::run_timers as run_reassignment_timers;
pub(crate) use produce::has_transactional_records;

use crate::sasl::Session;
use crate::{BrokerAddress, Shared};
use kafka_codec::conn::{IncomingRequest, SupportedVersions};
use kafka_codec::{ApiKey, ErrorCode, Request, Response};
use std::net::SocketAddr;

/// What a handler knows besides its request.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The cluster.
    pub shared: &'a Shared,
    /// The broker that received the request.
    pub node_id: i32,
    /// The request's version, which the response is written at.
    pub version: i16,
    /// The client's address.
    pub peer: SocketAddr,
}

impl Context<'_> {
    /// The broker that leads `partition` of any topic as placed at creation: partitions are
    /// spread over the brokers in turn, as Kafka's default placement does. A handler asks
    /// [`leader`](Self::leader), which knows the control surface's moves.
    pub fn leader_of(&self, partition: i32) -> i32 {
        partition.rem_euclid(self.shared.placement_brokers as i32)
    }

    /// The replicas of a partition led by `leader` among `brokers` (the brokers now, in
    /// node id order): the leader and the brokers after it in turn, as many as the
    /// replication factor and the brokers allow (Metadata and DescribeTopicPartitions list
    /// them).
    pub fn replicas(brokers: &[BrokerAddress], leader: i32, replication_factor: i16) -> Vec<i32> {
        let ids: Vec<i32> = brokers.iter().map(|broker| broker.node_id).collect();
        crate::state::replicas_among(&ids, leader, replication_factor)
    }

    /// The node ids of the brokers now, in node id order (fenced ones included: replica
    /// lists name them).
    pub fn broker_ids(&self) -> Vec<i32> {
        self.shared
            .brokers()
            .iter()
            .map(|broker| broker.node_id)
            .collect()
    }

    /// Whether this broker coordinates `group_id` (others answer NOT_COORDINATOR, and so
    /// does this one while its `__consumer_offsets` partitions have no leader: fenced, no
    /// other replica to take them). It locks the state: a handler that holds the state asks
    /// [`coordinator_available_in`](Self::coordinator_available_in), one that holds the
    /// groups reads it before and asks [`coordinates_if`](Self::coordinates_if).
    pub fn coordinates(&self, group_id: &str) -> bool {
        self.coordinates_if(group_id, self.coordinator_available())
    }

    /// Whether this broker coordinates `group_id`, `available` being what
    /// [`coordinator_available`](Self::coordinator_available) answered.
    pub fn coordinates_if(&self, group_id: &str, available: bool) -> bool {
        available
            && self
                .shared
                .control
                .coordinator(group_id, self.shared.placement_brokers)
                == self.node_id
    }

    /// Whether this broker's `__consumer_offsets` and `__transaction_state` partitions have
    /// a leader (it), read from the fenced brokers now. It locks the state.
    pub fn coordinator_available(&self) -> bool {
        self.coordinator_available_in(&self.shared.state())
    }

    /// [`coordinator_available`](Self::coordinator_available) for a handler that holds the
    /// state.
    pub fn coordinator_available_in(&self, state: &crate::state::State) -> bool {
        self.shared
            .control
            .coordinator_available(self.node_id, state)
    }

    /// The group a describe of `kind` groups (consumer, share, streams) answers for
    /// `group_id`: `found` (the group of that kind, if held) when this broker coordinates it;
    /// otherwise the error code and message of its entry: NOT_COORDINATOR, or
    /// GROUP_ID_NOT_FOUND with Kafka's message, which tells a group of another kind
    /// (`other_kind`) from none. `available`: what
    /// [`coordinator_available`](Self::coordinator_available) answered.
    pub fn group_to_describe<'g, G>(
        &self,
        group_id: &str,
        kind: &str,
        found: Option<&'g G>,
        other_kind: bool,
        available: bool,
    ) -> Result<&'g G, (i16, Option<String>)> {
        if !self.coordinates_if(group_id, available) {
            return Err((kafka_codec::ErrorCode::NOT_COORDINATOR.code(), None));
        }
        found.ok_or_else(|| {
            let message = if other_kind {
                format!("Group {group_id} is not a {kind} group.")
            } else {
                format!("Group {group_id} not found.")
            };
            (
                kafka_codec::ErrorCode::GROUP_ID_NOT_FOUND.code(),
                Some(message),
            )
        })
    }

    /// Whether this broker coordinates `transactional_id` (others answer NOT_COORDINATOR):
    /// by Kafka's rule unless the control surface moved it, and while its
    /// `__transaction_state` partitions have a leader. It locks the state: a handler that
    /// holds it asks [`coordinates_transaction_in`](Self::coordinates_transaction_in).
    pub fn coordinates_transaction(&self, transactional_id: &str) -> bool {
        self.coordinates_transaction_in(&self.shared.state(), transactional_id)
    }

    /// [`coordinates_transaction`](Self::coordinates_transaction) for a handler that holds
    /// the state.
    pub fn coordinates_transaction_in(
        &self,
        state: &crate::state::State,
        transactional_id: &str,
    ) -> bool {
        let control = &self.shared.control;
        control.transaction_coordinator(transactional_id, self.shared.placement_brokers)
            == self.node_id
            && self.coordinator_available_in(state)
    }

    /// The leader and leader epoch of `topic`'s `partition`: [`leader_of`](Self::leader_of)
    /// at epoch 0 unless the control surface moved it. It locks the state: a handler that
    /// holds the lock asks `State::leader` instead.
    pub fn leader(&self, topic: &str, partition: i32) -> (i32, i32) {
        self.shared
            .state()
            .leader(topic, partition, self.shared.placement_brokers)
    }

    /// Why this broker does not answer for `topic`'s `partition` (led by `leader` at epoch
    /// `ours`), asked naming leader epoch `theirs` (`None`: none named, which each API spells
    /// its own way, or a version without the field), or `None` when it answers, as a Kafka 4.4 broker checks it (recorded:
    /// `tests/fetch_current_leader_kafka.rs`, `tests/offsets_off_leader_kafka.rs`). The
    /// leader checks the epoch: an older one is FENCED_LEADER_EPOCH, a newer one
    /// UNKNOWN_LEADER_EPOCH. A follower (one of the partition's replicas, among `brokers`,
    /// [`broker_ids`](Self::broker_ids) read before the state was locked) checks the epoch
    /// first, then refuses with NOT_LEADER_OR_FOLLOWER unless `follower_serves` (a consumer's
    /// Fetch v11+, KIP-392; a ListOffsets from the debugging replica id). A broker holding no
    /// replica refuses with NOT_LEADER_OR_FOLLOWER, checking no epoch; so does every broker
    /// for an offline partition that it held no replica of.
    pub fn partition_refusal(
        &self,
        state: &crate::state::State,
        (topic, partition): (&str, i32),
        brokers: &[i32],
        (leader, ours): (i32, i32),
        theirs: Option<i32>,
        follower_serves: bool,
    ) -> Option<ErrorCode> {
        let stale = theirs.and_then(|theirs| epoch_error(theirs, ours));
        if leader == self.node_id {
            return stale;
        }
        let follows = state
            .replica_view(topic, partition, brokers, self.shared.placement_brokers)
            .replicas
            .contains(&self.node_id);
        if !follows {
            return Some(ErrorCode::NOT_LEADER_OR_FOLLOWER);
        }
        stale.or((!follower_serves).then_some(ErrorCode::NOT_LEADER_OR_FOLLOWER))
    }

    /// `(node id, host, port)` of each of `nodes` that has a listener: the node endpoints of
    /// the answers that name partition leaders (KIP-951: Produce v10+, ShareFetch,
    /// ShareAcknowledge), each message with an endpoint type of its own.
    pub fn endpoints(&self, nodes: impl IntoIterator<Item = i32>) -> Vec<(i32, String, i32)> {
        nodes
            .into_iter()
            .filter_map(|node| {
                let address = self.shared.address(node)?;
                Some((node, address.ip().to_string(), i32::from(address.port())))
            })
            .collect()
    }
}

/// The current leader epoch a ListOffsets (v4+) or OffsetForLeaderEpoch (v2+) names: -1 is
/// none; any other, a negative one too, is checked (Kafka 4.4 answers -5
/// FENCED_LEADER_EPOCH: `tests/offsets_off_leader_kafka.rs`). A Fetch's negative epoch is
/// none, as Kafka's `FetchRequest` reads it.
pub fn named_epoch(epoch: i32) -> Option<i32> {
    (epoch != -1).then_some(epoch)
}

/// The error for a request naming leader epoch `theirs` of a partition at epoch `ours`, as
/// Kafka checks it: an older epoch (a negative one too) is fenced, a newer one not yet known
/// here.
fn epoch_error(theirs: i32, ours: i32) -> Option<ErrorCode> {
    if theirs == ours {
        None
    } else if theirs < ours {
        Some(ErrorCode::FENCED_LEADER_EPOCH)
    } else {
        Some(ErrorCode::UNKNOWN_LEADER_EPOCH)
    }
}

/// The APIs served, each at every stable version this crate knows (a version still in
/// development upstream is left out, as Kafka's `unstable.api.versions.enable=false` does).
const SERVED: [ApiKey; 70] = [
    api_versions::API,
    metadata::API,
    describe_topic_partitions::API,
    create_topics::API,
    delete_topics::API,
    produce::API,
    fetch::API,
    list_offsets::API,
    // Classic groups and their offsets.
    find_coordinator::API,
    join_group::API,
    sync_group::API,
    heartbeat::API,
    leave_group::API,
    offset_commit::API,
    offset_fetch::API,
    describe_groups::API,
    list_groups::API,
    delete_groups::API,
    offset_delete::API,
    // KIP-848 consumer groups.
    consumer_group_heartbeat::API,
    consumer_group_describe::API,
    // KIP-1071 streams groups.
    streams_group_heartbeat::API,
    streams_group_describe::API,
    streams_group_topology_description_update::API,
    // KIP-932 share groups.
    share_group_heartbeat::API,
    share_group_describe::API,
    share_fetch::API,
    share_acknowledge::API,
    describe_share_group_offsets::API,
    alter_share_group_offsets::API,
    delete_share_group_offsets::API,
    init_producer_id::API,
    describe_cluster::API,
    create_partitions::API,
    delete_records::API,
    offset_for_leader_epoch::API,
    describe_log_dirs::API,
    alter_replica_log_dirs::API,
    elect_leaders::API,
    alter_partition_reassignments::API,
    list_partition_reassignments::API,
    describe_configs::API,
    alter_configs::API,
    incremental_alter_configs::API,
    list_config_resources::API,
    describe_client_quotas::API,
    alter_client_quotas::API,
    // Transactions.
    add_partitions_to_txn::API,
    add_offsets_to_txn::API,
    end_txn::API,
    txn_offset_commit::API,
    describe_transactions::API,
    list_transactions::API,
    describe_producers::API,
    // Security.
    sasl_handshake::API,
    sasl_authenticate::API,
    describe_user_scram_credentials::API,
    alter_user_scram_credentials::API,
    create_acls::API,
    describe_acls::API,
    delete_acls::API,
    // Delegation tokens (KIP-48).
    create_delegation_token::API,
    renew_delegation_token::API,
    expire_delegation_token::API,
    describe_delegation_token::API,
    // Features (KIP-584) and broker registrations.
    update_features::API,
    unregister_broker::API,
    unregister_controller::API,
    // Client metrics (KIP-714): left out unless telemetry is on (`with_telemetry`).
    get_telemetry_subscriptions::API,
    push_telemetry::API,
];

/// The APIs a controller serves: what admin tools send with `--bootstrap-controller`
/// (`controllers::advertised` lists them, DescribeQuorum's provisional v3 included).
pub const CONTROLLER_SERVED: [ApiKey; 6] = [
    api_versions::API,
    describe_cluster::API,
    describe_quorum::API,
    add_raft_voter::API,
    remove_raft_voter::API,
    unregister_controller::API,
];

/// The controllers' APIs a broker lists at their stable versions (DescribeQuorum v0-v2, as
/// Kafka 4.4's brokers list it), with or without controllers: with them it forwards these to
/// the active controller (Kafka's `ControllerApis` answers them); without, the brokers are
/// the voters of a combined quorum (`process.roles=broker,controller`) and answer them
/// from it.
pub const FORWARDED_TO_CONTROLLERS: [ApiKey; 3] = [
    describe_quorum::API,
    add_raft_voter::API,
    remove_raft_voter::API,
];

/// What ApiVersions lists by default (client telemetry off, as on a Kafka broker without a
/// client telemetry receiver).
pub fn advertised() -> SupportedVersions {
    advertised_with(false)
}

/// What ApiVersions lists on a broker, GetTelemetrySubscriptions and PushTelemetry included
/// only with `telemetry` (Kafka lists them only when a metrics reporter that receives client
/// telemetry is configured), [`FORWARDED_TO_CONTROLLERS`] always.
pub fn advertised_with(telemetry: bool) -> SupportedVersions {
    let telemetry_apis = [get_telemetry_subscriptions::API, push_telemetry::API].map(ApiKey::key);
    let forwarded = SupportedVersions::stable(FORWARDED_TO_CONTROLLERS);
    SupportedVersions::from_ranges(
        SupportedVersions::stable(SERVED)
            .iter()
            .filter(|(key, _)| telemetry || !telemetry_apis.contains(key))
            .chain(forwarded.iter()),
    )
}

/// The handler's answer to `request`; `None` for an API with no handler (never advertised,
/// so [`dispatch`](crate::dispatch::dispatch) has closed the connection before).
pub async fn handle(
    context: &Context<'_>,
    request: &IncomingRequest,
    session: &mut Session,
) -> Option<Response> {
    Some(match &request.body {
        Request::ApiVersions(body) => api_versions::handle(context, body).into(),
        Request::Metadata(body) => metadata::handle(context, body).into(),
        Request::DescribeTopicPartitions(body) => {
            describe_topic_partitions::handle(context, body).into()
        }
        Request::CreateTopics(body) => create_topics::handle(context, body).into(),
        Request::DeleteTopics(body) => delete_topics::handle(context, body).into(),
        Request::Produce(body) => produce::handle(context, body).into(),
        Request::Fetch(body) => fetch::handle(context, body).await.into(),
        Request::ListOffsets(body) => list_offsets::handle(context, body).into(),
        Request::FindCoordinator(body) => find_coordinator::handle(context, body).into(),
        Request::JoinGroup(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            join_group::handle(context, body, client_id).await.into()
        }
        Request::ConsumerGroupHeartbeat(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            consumer_group_heartbeat::handle(context, body, client_id, session).into()
        }
        Request::ConsumerGroupDescribe(body) => {
            consumer_group_describe::handle(context, body).into()
        }
        Request::StreamsGroupHeartbeat(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            streams_group_heartbeat::handle(context, body, client_id).into()
        }
        Request::StreamsGroupDescribe(body) => streams_group_describe::handle(context, body).into(),
        Request::StreamsGroupTopologyDescriptionUpdate(body) => {
            streams_group_topology_description_update::handle(context, body).into()
        }
        Request::ShareGroupHeartbeat(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            share_group_heartbeat::handle(context, body, client_id).into()
        }
        Request::ShareGroupDescribe(body) => share_group_describe::handle(context, body).into(),
        Request::ShareFetch(body) => share_fetch::handle(context, body).await.into(),
        Request::ShareAcknowledge(body) => share_acknowledge::handle(context, body).into(),
        Request::DescribeShareGroupOffsets(body) => {
            describe_share_group_offsets::handle(context, body).into()
        }
        Request::AlterShareGroupOffsets(body) => {
            alter_share_group_offsets::handle(context, body).into()
        }
        Request::DeleteShareGroupOffsets(body) => {
            delete_share_group_offsets::handle(context, body).into()
        }
        Request::SyncGroup(body) => sync_group::handle(context, body).await.into(),
        Request::Heartbeat(body) => heartbeat::handle(context, body).into(),
        Request::LeaveGroup(body) => leave_group::handle(context, body).into(),
        Request::OffsetCommit(body) => offset_commit::handle(context, body).into(),
        Request::OffsetFetch(body) => offset_fetch::handle(context, body).into(),
        Request::DescribeGroups(body) => describe_groups::handle(context, body).into(),
        Request::ListGroups(body) => list_groups::handle(context, body).into(),
        Request::DeleteGroups(body) => delete_groups::handle(context, body).into(),
        Request::OffsetDelete(body) => offset_delete::handle(context, body).into(),
        Request::InitProducerId(body) => init_producer_id::handle(context, body).into(),
        Request::DescribeCluster(body) => describe_cluster::handle(context, body).into(),
        Request::CreatePartitions(body) => create_partitions::handle(context, body).into(),
        Request::DeleteRecords(body) => delete_records::handle(context, body).into(),
        Request::OffsetForLeaderEpoch(body) => {
            offset_for_leader_epoch::handle(context, body).into()
        }
        Request::DescribeLogDirs(body) => describe_log_dirs::handle(context, body).into(),
        Request::AlterReplicaLogDirs(body) => alter_replica_log_dirs::handle(context, body).into(),
        Request::ElectLeaders(body) => elect_leaders::handle(context, body).into(),
        Request::AlterPartitionReassignments(body) => {
            alter_partition_reassignments::handle(context, body).into()
        }
        Request::ListPartitionReassignments(body) => {
            list_partition_reassignments::handle(context, body).into()
        }
        Request::ListConfigResources(body) => list_config_resources::handle(context, body).into(),
        Request::UpdateFeatures(body) => update_features::handle(context, body).into(),
        Request::UnregisterBroker(body) => unregister_broker::handle(context, body).into(),
        Request::UnregisterController(body) => unregister_controller::handle(context, body).into(),
        Request::GetTelemetrySubscriptions(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            get_telemetry_subscriptions::handle(context, body, client_id).into()
        }
        Request::PushTelemetry(body) => {
            let client_id = request.header.client_id.as_deref().unwrap_or_default();
            push_telemetry::handle(context, body, client_id).into()
        }
        Request::DescribeClientQuotas(body) => describe_client_quotas::handle(context, body).into(),
        Request::AlterClientQuotas(body) => alter_client_quotas::handle(context, body).into(),
        Request::DescribeConfigs(body) => describe_configs::handle(context, body).into(),
        Request::AlterConfigs(body) => alter_configs::handle(context, body).into(),
        Request::IncrementalAlterConfigs(body) => {
            incremental_alter_configs::handle(context, body).into()
        }
        Request::DescribeUserScramCredentials(body) => {
            describe_user_scram_credentials::handle(context, body).into()
        }
        Request::AlterUserScramCredentials(body) => {
            alter_user_scram_credentials::handle(context, body).into()
        }
        Request::CreateAcls(body) => create_acls::handle(context, body).into(),
        Request::DescribeAcls(body) => describe_acls::handle(context, body).into(),
        Request::DeleteAcls(body) => delete_acls::handle(context, body).into(),
        Request::SaslHandshake(body) => sasl_handshake::handle(context, body, session).into(),
        Request::SaslAuthenticate(body) => sasl_authenticate::handle(context, body, session).into(),
        // The controllers' (see `controllers::advertised`).
        Request::DescribeQuorum(body) => describe_quorum::handle(context, body).into(),
        Request::AddRaftVoter(body) => add_raft_voter::handle(context, body).await.into(),
        Request::RemoveRaftVoter(body) => remove_raft_voter::handle(context, body).await.into(),
        Request::AddPartitionsToTxn(body) => add_partitions_to_txn::handle(context, body).into(),
        Request::AddOffsetsToTxn(body) => add_offsets_to_txn::handle(context, body).into(),
        Request::EndTxn(body) => end_txn::handle(context, body).into(),
        Request::TxnOffsetCommit(body) => txn_offset_commit::handle(context, body).into(),
        Request::DescribeTransactions(body) => describe_transactions::handle(context, body).into(),
        Request::ListTransactions(body) => list_transactions::handle(context, body).into(),
        Request::DescribeProducers(body) => describe_producers::handle(context, body).into(),
        Request::CreateDelegationToken(body) => {
            create_delegation_token::handle(context, body, session).into()
        }
        Request::RenewDelegationToken(body) => {
            renew_delegation_token::handle(context, body, session).into()
        }
        Request::ExpireDelegationToken(body) => {
            expire_delegation_token::handle(context, body, session).into()
        }
        Request::DescribeDelegationToken(body) => {
            describe_delegation_token::handle(context, body, session).into()
        }
        _ => return None,
    })
}
