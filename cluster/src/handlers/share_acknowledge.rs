//! ShareAcknowledge (KIP-932): a share group member accepts, releases or rejects (v2: renews)
//! the records it acquired, in its share session (see
//! [`share_groups`](crate::share_groups)); at session epoch -1 the session ends and what
//! the member still holds is released. Epoch 0 cannot acknowledge (a session is opened by
//! a ShareFetch): INVALID_SHARE_SESSION_EPOCH.

use super::share_fetch::{ack_batches, lock_timeout_ms, member_ids, MEMBER_IDS_REQUIRED};
use super::Context;
use crate::share_groups::{FINAL_EPOCH, INITIAL_EPOCH};
use kafka_codec::messages::share_acknowledge_response::{
    LeaderIdAndEpoch, NodeEndpoint, PartitionData, ShareAcknowledgeTopicResponse,
};
use kafka_codec::messages::{ShareAcknowledgeRequest, ShareAcknowledgeResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::BTreeSet;

pub const API: ApiKey = ApiKey::ShareAcknowledge;

pub fn handle(
    context: &Context<'_>,
    request: &ShareAcknowledgeRequest,
) -> ShareAcknowledgeResponse {
    let lock_ms = lock_timeout_ms(context, 2, request.group_id.as_deref());
    let refuse = |error: ErrorCode, message: &str| {
        ShareAcknowledgeResponse::default()
            .with_error_code(error.code())
            .with_error_message(Some(message.to_string().into()))
            .with_acquisition_lock_timeout_ms(lock_ms)
    };
    // A share session that cannot be used: Kafka's error response, no message and no lock
    // timeout (tests/leaderless_coordinator_groups_kafka.rs).
    let session_refused =
        |error: ErrorCode| ShareAcknowledgeResponse::default().with_error_code(error.code());
    let ids = member_ids(request.group_id.as_deref(), request.member_id.as_deref());
    let Some((group_id, member_id)) = ids else {
        return refuse(ErrorCode::INVALID_REQUEST, MEMBER_IDS_REQUIRED);
    };
    let epoch = request.share_session_epoch;
    if epoch == INITIAL_EPOCH {
        return session_refused(ErrorCode::INVALID_SHARE_SESSION_EPOCH);
    }
    let renewing = context.version >= 2 && request.is_renew_ack;
    let now = crate::clock::now();
    let mut share = context.shared.share_groups();
    if epoch == FINAL_EPOCH {
        if !share.has_session(group_id, member_id) {
            return session_refused(ErrorCode::SHARE_SESSION_NOT_FOUND);
        }
    } else if let Err(error) = share.session(group_id, member_id, epoch, &[], &[]) {
        return session_refused(error);
    }
    let state = context.shared.state();
    let mut leaders = BTreeSet::new();
    let responses = request
        .topics
        .iter()
        .map(|topic| {
            let name = state
                .topic_by_id(topic.topic_id)
                .map(|(name, _)| name.clone());
            let partitions = topic
                .partitions
                .iter()
                .map(|partition| {
                    let index = partition.partition_index;
                    let answer = PartitionData::default().with_partition_index(index);
                    let Some(name) = &name else {
                        return answer.with_error_code(ErrorCode::UNKNOWN_TOPIC_ID.code());
                    };
                    let (leader, leader_epoch) =
                        state.leader(name, index, context.shared.placement_brokers);
                    let answer = answer.with_current_leader(
                        LeaderIdAndEpoch::default()
                            .with_leader_id(leader)
                            .with_leader_epoch(leader_epoch),
                    );
                    if leader != context.node_id {
                        leaders.insert(leader);
                        return answer.with_error_code(ErrorCode::NOT_LEADER_OR_FOLLOWER.code());
                    }
                    let batches = partition
                        .acknowledgement_batches
                        .iter()
                        .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.to_vec()));
                    let (error, message) = match ack_batches(batches, context.version, renewing) {
                        None => (ErrorCode::INVALID_REQUEST, None),
                        Some(batches) => share.acknowledge(
                            group_id,
                            member_id,
                            (topic.topic_id, index),
                            &batches,
                            now,
                        ),
                    };
                    answer
                        .with_error_code(error.code())
                        .with_error_message(message.map(Into::into))
                })
                .collect();
            ShareAcknowledgeTopicResponse::default()
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions)
        })
        .collect();
    drop(state);
    if epoch == FINAL_EPOCH {
        // Checked above, under the same lock.
        let _ = share.session(group_id, member_id, epoch, &[], &[]);
    }
    let endpoints = context
        .endpoints(leaders)
        .into_iter()
        .map(|(node, host, port)| {
            NodeEndpoint::default()
                .with_node_id(node)
                .with_host(host.into())
                .with_port(port)
        })
        .collect();
    ShareAcknowledgeResponse::default()
        .with_acquisition_lock_timeout_ms(lock_ms)
        .with_responses(responses)
        .with_node_endpoints(endpoints)
}
