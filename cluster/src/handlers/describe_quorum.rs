//! DescribeQuorum (controllers, and brokers, which forward it to the leader, when the cluster
//! has controllers): the leader describes the metadata partition from the
//! crate's leader model, v0-v3 (v3's committed voters are provisional, as the crate keeps
//! them); another controller answers NOT_LEADER_OR_FOLLOWER on the partition, as Kafka's
//! `KafkaRaftClient` does on a follower; a request for another partition gets
//! UNKNOWN_TOPIC_OR_PARTITION on each partition it names.

use super::Context;
use crate::controllers::{advance, now_ms};
use kafka_codec::messages::{DescribeQuorumRequest, DescribeQuorumResponse};
use kafka_codec::quorum::{not_leader_response, unknown_partition_response};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::DescribeQuorum;

pub fn handle(context: &Context<'_>, request: &DescribeQuorumRequest) -> DescribeQuorumResponse {
    let Some(mut quorum) = context.shared.quorum() else {
        return not_leader_response();
    };
    let now = now_ms();
    advance(context.shared, &mut quorum, now);
    // A broker forwards it to the leader (Kafka's brokers forward it to the active
    // controller).
    let forwarded = !context.shared.is_controller(context.node_id);
    if !forwarded && quorum.leader().leader_id() != context.node_id {
        return not_leader_response();
    }
    quorum
        .leader_mut()
        .handle_describe_quorum(request, now, context.version)
        // Only a version the crate does not know fails, and dispatch lets none through.
        .unwrap_or_else(|_| unknown_partition_response(request))
}
