//! DescribeShareGroupOffsets (KIP-932): each share group's share-partition start offsets
//! and, from v1, their lag. As Kafka 4.4 answers: the start offset as last persisted (one
//! acknowledgement behind when it moved the start) and the lag as the records from the
//! start to the high watermark not yet acknowledged; a partition whose share state was
//! never initialized (never fetched, offsets deleted) or of a topic not held has start
//! offset -1; no topics listed (null) describes every share partition the group holds.

use super::Context;
use crate::share_groups::SharePartition;
use kafka_codec::messages::describe_share_group_offsets_response::{
    DescribeShareGroupOffsetsResponseGroup as Described,
    DescribeShareGroupOffsetsResponsePartition as Partition,
    DescribeShareGroupOffsetsResponseTopic as Topic,
};
use kafka_codec::messages::{DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse};
use kafka_codec::{ApiKey, ErrorCode, Uuid};
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::DescribeShareGroupOffsets;

/// The start offset of a share state never initialized.
const UNINITIALIZED: i64 = -1;

/// What the cluster knows of a topic: its id and each partition's high watermark and
/// leader epoch.
struct Held {
    id: Uuid,
    partitions: Vec<(i64, i32)>,
}

pub fn handle(
    context: &Context<'_>,
    request: &DescribeShareGroupOffsetsRequest,
) -> DescribeShareGroupOffsetsResponse {
    let topics: BTreeMap<String, Held> = {
        let state = context.shared.state();
        let brokers = context.shared.placement_brokers;
        state
            .topics
            .iter()
            .map(|(name, topic)| {
                let partitions = (0..topic.partitions.len() as i32)
                    .zip(&topic.partitions)
                    .map(|(index, log)| {
                        (log.high_watermark(), state.leader(name, index, brokers).1)
                    })
                    .collect();
                let held = Held {
                    id: topic.id,
                    partitions,
                };
                (name.clone(), held)
            })
            .collect()
    };
    let names: BTreeMap<Uuid, &str> = topics
        .iter()
        .map(|(name, held)| (held.id, name.as_str()))
        .collect();
    let share = context.shared.share_groups();
    let groups = request
        .groups
        .iter()
        .map(|asked| {
            let group_id = asked.group_id.as_str();
            let answer = Described::default().with_group_id(asked.group_id.clone());
            if !context.coordinates(group_id) {
                return answer.with_error_code(ErrorCode::NOT_COORDINATOR.code());
            }
            let held = share.groups.get(group_id).map(|group| &group.partitions);
            let describe = |topic: &Held, index: i32| {
                let partition = Partition::default().with_partition_index(index);
                let share = held.and_then(|held| held.get(&(topic.id, index)));
                let log = usize::try_from(index)
                    .ok()
                    .and_then(|at| topic.partitions.get(at));
                match (share, log) {
                    (Some(share), Some(&(high_watermark, epoch))) => partition
                        .with_start_offset(share.persisted_start_offset())
                        .with_leader_epoch(epoch)
                        .with_lag(lag(share, high_watermark)),
                    _ => partition.with_start_offset(UNINITIALIZED),
                }
            };
            let described: Vec<Topic> = match &asked.topics {
                // Every share partition the group holds, topic by topic.
                None => {
                    let mut by_topic: BTreeMap<&str, (&Held, Vec<i32>)> = BTreeMap::new();
                    for (topic_id, index) in held.into_iter().flat_map(|held| held.keys()) {
                        if let Some(name) = names.get(topic_id) {
                            by_topic
                                .entry(name)
                                .or_insert_with(|| (&topics[*name], Vec::new()))
                                .1
                                .push(*index);
                        }
                    }
                    by_topic
                        .into_iter()
                        .map(|(name, (topic, indexes))| {
                            Topic::default()
                                .with_topic_name(name.to_string().into())
                                .with_topic_id(topic.id)
                                .with_partitions(
                                    indexes.into_iter().map(|i| describe(topic, i)).collect(),
                                )
                        })
                        .collect()
                }
                Some(asked) => asked
                    .iter()
                    .map(|wanted| {
                        let answer = Topic::default().with_topic_name(wanted.topic_name.clone());
                        match topics.get(wanted.topic_name.as_str()) {
                            Some(topic) => answer.with_topic_id(topic.id).with_partitions(
                                wanted
                                    .partitions
                                    .iter()
                                    .map(|i| describe(topic, i))
                                    .collect(),
                            ),
                            // A topic not held: no offsets, not an error.
                            None => answer.with_partitions(
                                wanted
                                    .partitions
                                    .iter()
                                    .map(|index| {
                                        Partition::default()
                                            .with_partition_index(index)
                                            .with_start_offset(UNINITIALIZED)
                                    })
                                    .collect(),
                            ),
                        }
                    })
                    .collect(),
            };
            answer.with_topics(described)
        })
        .collect();
    DescribeShareGroupOffsetsResponse::default().with_groups(groups)
}

/// The records from the start offset to the high watermark not yet done with (negative for
/// a start moved past the log end, as Kafka 4.4 reports it).
fn lag(share: &SharePartition, high_watermark: i64) -> i64 {
    high_watermark - share.start_offset() - share.done_past_start()
}
