//! OffsetFetch: a group's committed offsets (-1 where none), one group at v0-v7 and a batch
//! of groups at v8+; all committed topics when the topics are null (v2+); topics by id at
//! v10. `require_stable` (v7+): a partition with an offset an ongoing transaction committed
//! (TxnOffsetCommit) is answered UNSTABLE_OFFSET_COMMIT (offset -1) until the transaction
//! ends, as Kafka answers; without it the offset committed before is answered.

use super::Context;
use crate::groups::Committed;
use kafka_codec::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_codec::messages::{OffsetFetchRequest, OffsetFetchResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};

pub const API: ApiKey = ApiKey::OffsetFetch;

/// One topic's answer: name, id, and (partition, committed or none, error).
type TopicAnswer = (String, Uuid, Vec<(i32, Option<Committed>, ErrorCode)>);

/// The answer for one group: its error and topics. `wanted` is `None` for all committed
/// topics, else (name or "", id, partitions). `member` (v9+): the member id and epoch a
/// KIP-848 consumer names, checked as Kafka's `ConsumerGroup.validateOffsetFetch` does (an
/// admin client names no member and epoch -1).
fn fetch_group(
    context: &Context<'_>,
    group_id: &str,
    wanted: Option<Vec<(String, Uuid, Vec<i32>)>>,
    member: Option<(&str, i32)>,
    require_stable: bool,
) -> (ErrorCode, Vec<TopicAnswer>) {
    if !context.coordinates(group_id) {
        return (ErrorCode::NOT_COORDINATOR, Vec::new());
    }
    let by_id = context.version >= 10;
    // Every topic's name and id, to answer by either.
    let (known, pending): (Vec<(String, Uuid)>, _) = {
        let state = context.shared.state();
        let pending = if require_stable {
            state.pending_offsets(group_id)
        } else {
            Default::default()
        };
        let known = state
            .topics
            .iter()
            .map(|(name, topic)| (name.clone(), topic.id))
            .collect();
        (known, pending)
    };
    let groups = context.shared.groups();
    let group = groups.groups.get(group_id);
    if let (Some(group), Some((member_id, epoch))) = (group, member) {
        // KIP-848 and streams (KIP-1071) members alike.
        let error = match (&group.consumer, &group.streams) {
            (Some(consumer), _) => consumer.validate_member_epoch(member_id, epoch),
            (_, Some(streams)) => streams.validate_member_epoch(member_id, epoch),
            _ => ErrorCode::NONE,
        };
        if error != ErrorCode::NONE {
            return (error, Vec::new());
        }
    }
    let offsets = groups.groups.get(group_id).map(|group| &group.offsets);
    let topics: Vec<TopicAnswer> = match wanted {
        None => offsets
            .into_iter()
            .flatten()
            .filter_map(|(name, partitions)| {
                let id = known.iter().find(|(n, _)| n == name).map(|(_, id)| *id);
                // At v10 a topic is named by its id: a deleted topic's offsets have none.
                if by_id && id.is_none() {
                    return None;
                }
                let partitions = partitions
                    .iter()
                    .map(|(index, committed)| (*index, Some(committed.clone()), ErrorCode::NONE))
                    .collect();
                Some((name.clone(), id.unwrap_or_default(), partitions))
            })
            .collect(),
        Some(wanted) => wanted
            .into_iter()
            .map(|(name, id, partitions)| {
                let name = if by_id {
                    known.iter().find(|(_, i)| *i == id).map(|(n, _)| n.clone())
                } else {
                    Some(name)
                };
                let partitions = partitions
                    .into_iter()
                    .map(|index| match &name {
                        None => (index, None, ErrorCode::UNKNOWN_TOPIC_ID),
                        Some(name) => (
                            index,
                            offsets
                                .and_then(|offsets| offsets.get(name))
                                .and_then(|partitions| partitions.get(&index))
                                .cloned(),
                            ErrorCode::NONE,
                        ),
                    })
                    .collect();
                (name.unwrap_or_default(), id, partitions)
            })
            .collect(),
    };
    let topics = if pending.is_empty() {
        topics
    } else {
        topics
            .into_iter()
            .map(|(name, id, partitions)| {
                let partitions = partitions
                    .into_iter()
                    .map(|(index, committed, error)| {
                        if error == ErrorCode::NONE && pending.contains(&(name.clone(), index)) {
                            (index, None, ErrorCode::UNSTABLE_OFFSET_COMMIT)
                        } else {
                            (index, committed, error)
                        }
                    })
                    .collect();
                (name, id, partitions)
            })
            .collect()
    };
    (ErrorCode::NONE, topics)
}

pub fn handle(context: &Context<'_>, request: &OffsetFetchRequest) -> OffsetFetchResponse {
    if context.version >= 8 {
        let groups = request
            .groups
            .iter()
            .map(|group| {
                let wanted = group.topics.as_ref().map(|topics| {
                    topics
                        .iter()
                        .map(|topic| {
                            (
                                topic.name.to_string(),
                                topic.topic_id,
                                topic.partition_indexes.iter().collect(),
                            )
                        })
                        .collect()
                });
                let member = (context.version >= 9)
                    .then(|| {
                        group
                            .member_id
                            .as_deref()
                            .map(|id| (id, group.member_epoch))
                    })
                    .flatten();
                let (error, topics) = fetch_group(
                    context,
                    &group.group_id,
                    wanted,
                    member,
                    request.require_stable,
                );
                let topics = topics
                    .into_iter()
                    .map(|(name, id, partitions)| {
                        let partitions = partitions
                            .into_iter()
                            .map(|(index, committed, error)| {
                                let committed = committed.unwrap_or(Committed {
                                    offset: -1,
                                    leader_epoch: -1,
                                    metadata: String::new(),
                                });
                                OffsetFetchResponsePartitions::default()
                                    .with_partition_index(index)
                                    .with_committed_offset(committed.offset)
                                    .with_committed_leader_epoch(committed.leader_epoch)
                                    .with_metadata(Some(committed.metadata.into()))
                                    .with_error_code(error.code())
                            })
                            .collect();
                        OffsetFetchResponseTopics::default()
                            .with_name(name.into())
                            .with_topic_id(id)
                            .with_partitions(partitions)
                    })
                    .collect();
                OffsetFetchResponseGroup::default()
                    .with_group_id(group.group_id.clone())
                    .with_topics(topics)
                    .with_error_code(error.code())
            })
            .collect();
        return OffsetFetchResponse::default().with_groups(groups);
    }
    // v0-v1 have no null (all topics): an empty list is empty.
    let wanted = request.topics.as_ref().map(|topics| {
        topics
            .iter()
            .map(|topic| {
                (
                    topic.name.to_string(),
                    Uuid::default(),
                    topic.partition_indexes.iter().collect(),
                )
            })
            .collect()
    });
    let require_stable = context.version >= 7 && request.require_stable;
    let (error, topics) = fetch_group(context, &request.group_id, wanted, None, require_stable);
    if error != ErrorCode::NONE && context.version < 2 {
        // No group-level error before v2: each partition asked for carries it.
        let topics = request
            .topics
            .iter()
            .flatten()
            .map(|topic| {
                let partitions = topic
                    .partition_indexes
                    .iter()
                    .map(|index| {
                        OffsetFetchResponsePartition::default()
                            .with_partition_index(index)
                            .with_committed_offset(-1)
                            .with_metadata(Some("".into()))
                            .with_error_code(error.code())
                    })
                    .collect();
                OffsetFetchResponseTopic::default()
                    .with_name(topic.name.clone())
                    .with_partitions(partitions)
            })
            .collect();
        return OffsetFetchResponse::default().with_topics(topics);
    }
    let topics = topics
        .into_iter()
        .map(|(name, _, partitions)| {
            let partitions = partitions
                .into_iter()
                .map(|(index, committed, error)| {
                    let committed = committed.unwrap_or(Committed {
                        offset: -1,
                        leader_epoch: -1,
                        metadata: String::new(),
                    });
                    let answer = OffsetFetchResponsePartition::default()
                        .with_partition_index(index)
                        .with_committed_offset(committed.offset)
                        .with_metadata(Some(committed.metadata.into()))
                        .with_error_code(error.code());
                    if context.version >= 5 {
                        answer.with_committed_leader_epoch(committed.leader_epoch)
                    } else {
                        answer
                    }
                })
                .collect();
            OffsetFetchResponseTopic::default()
                .with_name(name.into())
                .with_partitions(partitions)
        })
        .collect();
    OffsetFetchResponse::default()
        .with_topics(topics)
        .with_error_code(error.code())
}
