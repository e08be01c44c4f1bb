//! ShareFetch (KIP-932): a share group member's fetch, in its share session (see
//! [`share_groups`](crate::share_groups)): the acknowledgements it carries are applied
//! first, then records are acquired for the member from each partition of its session this
//! broker leads, up to `MaxRecords` (whole batches, unless v2's `ShareAcquireMode` asks for
//! the exact count) and `MaxBytes`, waiting up to `MaxWaitMs` for a record (woken by
//! every append, and when a lock expires; `MinBytes` beyond one record is not waited for). A partition is answered when it has records, an
//! error or acknowledgement results.

use super::Context;
use crate::share_groups::{
    AckBatch, AckType, Acquired, SessionOutcome, DEFAULT_MAX_RECORDS, FINAL_EPOCH, INITIAL_EPOCH,
};
use crate::state::StoredBatch;
use kafka_codec::messages::share_fetch_request::AcknowledgementBatch;
use kafka_codec::messages::share_fetch_response::{
    AcquiredRecords, LeaderIdAndEpoch, NodeEndpoint, PartitionData, ShareFetchableTopicResponse,
};
use kafka_codec::messages::{ShareFetchRequest, ShareFetchResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::time::Instant;

pub const API: ApiKey = ApiKey::ShareFetch;

/// v2's `ShareAcquireMode` that acquires exactly `MaxRecords` (0, the default, acquires
/// whole batches).
const RECORD_LIMIT: i8 = 1;

/// One partition's answer as it is built.
#[derive(Debug, Default)]
struct Answer {
    error: Option<ErrorCode>,
    ack_error: Option<ErrorCode>,
    ack_message: Option<&'static str>,
    leader: (i32, i32),
    acquired: Acquired,
}

/// The acknowledgement batches of a request, read (`None`: malformed, an unknown type,
/// or a renewal outside a renewing request).
pub(super) fn ack_batches(
    batches: impl Iterator<Item = (i64, i64, Vec<i8>)>,
    version: i16,
    renewing: bool,
) -> Option<Vec<AckBatch>> {
    batches
        .map(|(first, last, codes)| {
            let types = codes
                .iter()
                .map(|code| {
                    AckType::from_code(*code, version)
                        .filter(|kind| *kind != AckType::Renew || renewing)
                })
                .collect::<Option<Vec<_>>>()?;
            Some(AckBatch { first, last, types })
        })
        .collect()
}

fn read_acks(
    batches: &[AcknowledgementBatch],
    version: i16,
    renewing: bool,
) -> Option<Vec<AckBatch>> {
    ack_batches(
        batches
            .iter()
            .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.to_vec())),
        version,
        renewing,
    )
}

/// The acquisition lock timeout a share answer reports, in ms: 0 (the field's default)
/// below version `since`, which has no such field; the group's own when its configs set one.
pub(super) fn lock_timeout_ms(context: &Context<'_>, since: i16, group_id: Option<&str>) -> i32 {
    if context.version < since {
        return 0;
    }
    let config = context
        .shared
        .share_groups()
        .config_of(group_id.unwrap_or_default());
    i32::try_from(config.lock_timeout.as_millis()).unwrap_or(i32::MAX)
}

/// The checks the share offsets APIs make of their group id before anything else: empty
/// (INVALID_GROUP_ID), or not coordinated here (NOT_COORDINATOR, no message).
pub(super) fn offsets_group_refusal(
    context: &Context<'_>,
    group_id: &str,
) -> Option<(ErrorCode, Option<String>)> {
    if group_id.is_empty() {
        return Some((
            ErrorCode::INVALID_GROUP_ID,
            Some("The group id is empty.".to_owned()),
        ));
    }
    if !context.coordinates(group_id) {
        return Some((ErrorCode::NOT_COORDINATOR, None));
    }
    None
}

/// Kafka's message for a share request without its group or member id.
pub(super) const MEMBER_IDS_REQUIRED: &str = "GroupId and MemberId are required.";

/// The group and member ids a share request names, unless either is null or empty.
pub(super) fn member_ids<'r>(
    group_id: Option<&'r str>,
    member_id: Option<&'r str>,
) -> Option<(&'r str, &'r str)> {
    match (group_id, member_id) {
        (Some(group), Some(member)) if !group.is_empty() && !member.is_empty() => {
            Some((group, member))
        }
        _ => None,
    }
}

pub async fn handle(context: &Context<'_>, request: &ShareFetchRequest) -> ShareFetchResponse {
    let lock_ms = lock_timeout_ms(context, 1, request.group_id.as_deref());
    let refuse = |error: ErrorCode, message: &str| {
        ShareFetchResponse::default()
            .with_error_code(error.code())
            .with_error_message(Some(message.to_string().into()))
            .with_acquisition_lock_timeout_ms(lock_ms)
    };
    // A share session that cannot be used: Kafka's error response, no message and no lock
    // timeout (tests/leaderless_coordinator_groups_kafka.rs).
    let session_refused =
        |error: ErrorCode| ShareFetchResponse::default().with_error_code(error.code());
    let ids = member_ids(request.group_id.as_deref(), request.member_id.as_deref());
    let Some((group_id, member_id)) = ids else {
        return refuse(ErrorCode::INVALID_REQUEST, MEMBER_IDS_REQUIRED);
    };
    let epoch = request.share_session_epoch;
    let renewing = context.version >= 2 && request.is_renew_ack;
    let has_acks = request.topics.iter().any(|t| {
        t.partitions
            .iter()
            .any(|p| !p.acknowledgement_batches.is_empty())
    });
    if epoch == INITIAL_EPOCH && has_acks {
        return refuse(
            ErrorCode::INVALID_REQUEST,
            "Acknowledge data present in the initial share fetch request.",
        );
    }
    let named: Vec<(Uuid, i32)> = request
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.topic_id, p.partition_index))
        })
        .collect();
    let forgotten: Vec<(Uuid, i32)> = request
        .forgotten_topics_data
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, p)))
        .collect();
    let mut answers: BTreeMap<(Uuid, i32), Answer> = BTreeMap::new();
    let now = crate::clock::now();
    // The session, and the acknowledgements (before the session's end releases the rest).
    let session = {
        let mut share = context.shared.share_groups();
        if epoch == FINAL_EPOCH && !share.has_session(group_id, member_id) {
            return session_refused(ErrorCode::SHARE_SESSION_NOT_FOUND);
        }
        let session = if epoch == FINAL_EPOCH {
            None
        } else {
            match share.session(group_id, member_id, epoch, &named, &forgotten) {
                Ok(session) => Some(session),
                Err(error) => return session_refused(error),
            }
        };
        let state = context.shared.state();
        for topic in &request.topics {
            let name = state
                .topic_by_id(topic.topic_id)
                .map(|(name, _)| name.clone());
            for partition in &topic.partitions {
                if partition.acknowledgement_batches.is_empty() {
                    continue;
                }
                let key = (topic.topic_id, partition.partition_index);
                let answer = answers.entry(key).or_default();
                let Some(name) = &name else {
                    answer.ack_error = Some(ErrorCode::UNKNOWN_TOPIC_ID);
                    continue;
                };
                answer.leader = state.leader(
                    name,
                    partition.partition_index,
                    context.shared.placement_brokers,
                );
                if answer.leader.0 != context.node_id {
                    answer.ack_error = Some(ErrorCode::NOT_LEADER_OR_FOLLOWER);
                    continue;
                }
                let (error, message) = match read_acks(
                    &partition.acknowledgement_batches,
                    context.version,
                    renewing,
                ) {
                    None => (ErrorCode::INVALID_REQUEST, None),
                    Some(batches) => share.acknowledge(group_id, member_id, key, &batches, now),
                };
                answer.ack_error = Some(error);
                answer.ack_message = message;
            }
        }
        drop(state);
        if epoch == FINAL_EPOCH {
            share
                .session(group_id, member_id, epoch, &[], &[])
                .unwrap_or(SessionOutcome::Closed)
        } else {
            session.unwrap_or(SessionOutcome::Closed)
        }
    };
    let fetching = match session {
        // A renewal only acknowledges.
        SessionOutcome::Open(partitions) if !renewing => partitions,
        _ => BTreeSet::new(),
    };
    let max_records = if context.version >= 1 && request.max_records > 0 {
        request.max_records as usize
    } else {
        DEFAULT_MAX_RECORDS
    };
    let strict = context.version >= 2 && request.share_acquire_mode == RECORD_LIMIT;
    let max_bytes = request.max_bytes.max(0) as usize;
    let deadline = Instant::from_std(crate::clock::now())
        + Duration::from_millis(request.max_wait_ms.max(0) as u64);
    let acked = !answers.is_empty();
    let waits = request.max_wait_ms > 0;
    loop {
        let appended = context.shared.appended.notified();
        let (bytes, errors, wake) = acquire(
            context,
            group_id,
            member_id,
            &fetching,
            (max_records, strict, max_bytes, waits),
            &mut answers,
        );
        let now = Instant::from_std(crate::clock::now());
        if fetching.is_empty() || acked || errors || bytes > 0 || now >= deadline {
            break;
        }
        let until = wake.map_or(deadline, |at| deadline.min(at.into()));
        let _ = tokio::time::timeout_at(until, appended).await;
        if Instant::from_std(crate::clock::now()) >= deadline {
            acquire(
                context,
                group_id,
                member_id,
                &fetching,
                (max_records, strict, max_bytes, waits),
                &mut answers,
            );
            break;
        }
    }
    respond(context, answers, lock_ms)
}

/// Acquires for the member from each partition of `fetching` this broker leads (errors
/// noted in `answers`); the record bytes acquired, whether a partition failed, and the next
/// lock expiry of these partitions. `waits`: whether the fetch waits at all (MaxWaitMs > 0).
fn acquire(
    context: &Context<'_>,
    group_id: &str,
    member_id: &str,
    fetching: &BTreeSet<(Uuid, i32)>,
    (max_records, strict, max_bytes, waits): (usize, bool, usize, bool),
    answers: &mut BTreeMap<(Uuid, i32), Answer>,
) -> (usize, bool, Option<std::time::Instant>) {
    let mut share = context.shared.share_groups();
    let state = context.shared.state();
    let now = crate::clock::now();
    let mut bytes = 0usize;
    let mut records = 0usize;
    let mut errors = false;
    for key in fetching {
        let (topic_id, index) = *key;
        let Some((name, topic)) = state.topic_by_id(topic_id) else {
            answers.entry(*key).or_default().error = Some(ErrorCode::UNKNOWN_TOPIC_ID);
            errors = true;
            continue;
        };
        let Some(log) = topic.partition(index) else {
            answers.entry(*key).or_default().error = Some(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
            errors = true;
            continue;
        };
        let leader = state.leader(name, index, context.shared.placement_brokers);
        if leader.0 != context.node_id {
            let answer = answers.entry(*key).or_default();
            answer.leader = leader;
            answer.error = Some(ErrorCode::NOT_LEADER_OR_FOLLOWER);
            errors = true;
            continue;
        }
        if !share.holds(group_id) {
            // Kafka reads a share partition's state from its share coordinator before the
            // partition is fetched, asynchronously: a fetch that does not wait is answered
            // first, without the partition (tests/leaderless_coordinator_groups_kafka.rs); one
            // that waits learns that no state is held (tests/share_fetch_unknown_group.rs).
            if !waits {
                continue;
            }
            let answer = answers.entry(*key).or_default();
            answer.leader = leader;
            answer.error = Some(ErrorCode::UNKNOWN_SERVER_ERROR);
            errors = true;
            continue;
        }
        if records >= max_records || (bytes > 0 && bytes >= max_bytes) {
            continue;
        }
        let acquired = share.acquire(
            group_id,
            member_id,
            *key,
            log,
            max_records - records,
            strict,
            max_bytes.saturating_sub(bytes),
            now,
        );
        if acquired.ranges.is_empty() {
            continue;
        }
        records += acquired
            .ranges
            .iter()
            .map(|(first, last, _)| (last - first + 1) as usize)
            .sum::<usize>();
        bytes += acquired.batches.iter().map(|b| b.len()).sum::<usize>();
        let answer = answers.entry(*key).or_default();
        answer.leader = leader;
        answer.acquired.ranges.extend(acquired.ranges);
        answer.acquired.batches.extend(acquired.batches);
    }
    let wake = share.next_lock_deadline(group_id, fetching);
    (bytes, errors, wake)
}

fn respond(
    context: &Context<'_>,
    answers: BTreeMap<(Uuid, i32), Answer>,
    lock_ms: i32,
) -> ShareFetchResponse {
    let mut topics: Vec<ShareFetchableTopicResponse> = Vec::new();
    let mut leaders: BTreeSet<i32> = BTreeSet::new();
    for ((topic_id, index), answer) in answers {
        if answer.error == Some(ErrorCode::NOT_LEADER_OR_FOLLOWER)
            || answer.ack_error == Some(ErrorCode::NOT_LEADER_OR_FOLLOWER)
        {
            leaders.insert(answer.leader.0);
        }
        let records = StoredBatch::concat(&answer.acquired.batches);
        let partition = PartitionData::default()
            .with_partition_index(index)
            .with_error_code(answer.error.unwrap_or(ErrorCode::NONE).code())
            .with_acknowledge_error_code(answer.ack_error.unwrap_or(ErrorCode::NONE).code())
            .with_acknowledge_error_message(answer.ack_message.map(Into::into))
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(answer.leader.0)
                    .with_leader_epoch(answer.leader.1),
            )
            .with_records(Some(records))
            .with_acquired_records(
                answer
                    .acquired
                    .ranges
                    .iter()
                    .map(|(first, last, count)| {
                        AcquiredRecords::default()
                            .with_first_offset(*first)
                            .with_last_offset(*last)
                            .with_delivery_count(*count)
                    })
                    .collect(),
            );
        match topics.last_mut() {
            Some(topic) if topic.topic_id == topic_id => topic.partitions.push(partition),
            _ => topics.push(
                ShareFetchableTopicResponse::default()
                    .with_topic_id(topic_id)
                    .with_partitions(vec![partition]),
            ),
        }
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
    ShareFetchResponse::default()
        .with_acquisition_lock_timeout_ms(lock_ms)
        .with_responses(topics)
        .with_node_endpoints(endpoints)
}
