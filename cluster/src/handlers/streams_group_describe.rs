//! StreamsGroupDescribe (KIP-1071): each streams group's state, epochs, topology (as
//! configured: the internal topics with their partition counts) and members with their
//! current and target tasks. A group not held, or one of another kind: GROUP_ID_NOT_FOUND.

use super::Context;
use crate::streams_groups::{self, Tasks, TopicInfo};
use kafka_codec::messages::streams_group_describe_response::{
    Assignment, DescribedGroup, Endpoint, KeyValue, Member, Subtopology, TaskIds,
    TopicInfo as DescribedTopic, Topology,
};
use kafka_codec::messages::{StreamsGroupDescribeRequest, StreamsGroupDescribeResponse};
use kafka_codec::ApiKey;
use std::collections::BTreeMap;

pub const API: ApiKey = ApiKey::StreamsGroupDescribe;

fn task_ids(tasks: &Tasks) -> Vec<TaskIds> {
    tasks
        .iter()
        .map(|(sub, partitions)| {
            TaskIds::default()
                .with_subtopology_id(sub.clone().into())
                .with_partitions(partitions.iter().copied().collect::<Vec<i32>>().into())
        })
        .collect()
}

fn assignment(tuple: &streams_groups::TaskTuple) -> Assignment {
    Assignment::default()
        .with_active_tasks(task_ids(&tuple.active))
        .with_standby_tasks(task_ids(&tuple.standby))
        .with_warmup_tasks(task_ids(&tuple.warmup))
}

/// An internal topic as configured: its partition count once the coordinator decided it.
fn described_topic(topic: &TopicInfo, counts: &BTreeMap<String, i32>) -> DescribedTopic {
    DescribedTopic::default()
        .with_name(topic.name.clone().into())
        .with_partitions(counts.get(&topic.name).copied().unwrap_or(topic.partitions))
        .with_replication_factor(topic.replication_factor)
        .with_topic_configs(
            topic
                .configs
                .iter()
                .map(|(k, v)| {
                    KeyValue::default()
                        .with_key(k.clone().into())
                        .with_value(v.clone().into())
                })
                .collect(),
        )
}

pub fn handle(
    context: &Context<'_>,
    request: &StreamsGroupDescribeRequest,
) -> StreamsGroupDescribeResponse {
    let counts: BTreeMap<String, i32> = {
        let state = context.shared.state();
        state
            .topics
            .iter()
            .map(|(name, topic)| (name.clone(), topic.partitions.len() as i32))
            .collect()
    };
    // Read before the groups are locked (the two locks are never held together).
    let available = context.coordinator_available();
    let groups = context.shared.groups();
    let described = request
        .group_ids
        .iter()
        .map(|group_id| {
            let answer = DescribedGroup::default().with_group_id(group_id.clone());
            let group = groups.groups.get(group_id.as_str());
            let found = group.and_then(|group| group.streams.as_ref());
            let streams = match context.group_to_describe(
                group_id,
                "streams",
                found,
                group.is_some(),
                available,
            ) {
                Ok(streams) => streams,
                Err((code, message)) => {
                    return answer
                        .with_error_code(code)
                        .with_error_message(message.map(Into::into))
                }
            };
            let topology = streams.topology.as_ref().map(|topology| {
                let mut counts = counts.clone();
                for topic in &streams.configured.to_create {
                    counts.insert(topic.name.clone(), topic.partitions);
                }
                Topology::default()
                    .with_epoch(topology.epoch)
                    .with_subtopologies(Some(
                        topology
                            .subtopologies
                            .iter()
                            .map(|sub| {
                                Subtopology::default()
                                    .with_subtopology_id(sub.id.clone().into())
                                    .with_source_topics(
                                        sub.source_topics
                                            .iter()
                                            .map(|t| t.clone().into())
                                            .collect(),
                                    )
                                    .with_repartition_sink_topics(
                                        sub.repartition_sink_topics
                                            .iter()
                                            .map(|t| t.clone().into())
                                            .collect(),
                                    )
                                    .with_state_changelog_topics(
                                        sub.changelog_topics
                                            .iter()
                                            .map(|t| described_topic(t, &counts))
                                            .collect(),
                                    )
                                    .with_repartition_source_topics(
                                        sub.repartition_source_topics
                                            .iter()
                                            .map(|t| described_topic(t, &counts))
                                            .collect(),
                                    )
                            })
                            .collect(),
                    ))
            });
            let members = streams
                .members
                .values()
                .map(|member| {
                    let target = streams.targets.get(&member.id).cloned().unwrap_or_default();
                    Member::default()
                        .with_member_id(member.id.clone().into())
                        .with_member_epoch(member.epoch)
                        .with_instance_id(member.instance_id.clone().map(Into::into))
                        .with_rack_id(member.rack_id.clone().map(Into::into))
                        .with_client_id(member.client_id.clone().into())
                        .with_client_host(member.client_host.clone().into())
                        .with_topology_epoch(member.topology_epoch)
                        .with_process_id(member.process_id.clone().into())
                        .with_user_endpoint(member.user_endpoint.as_ref().map(|(host, port)| {
                            Endpoint::default()
                                .with_host(host.clone().into())
                                .with_port(*port)
                        }))
                        .with_client_tags(
                            member
                                .client_tags
                                .iter()
                                .map(|(k, v)| {
                                    KeyValue::default()
                                        .with_key(k.clone().into())
                                        .with_value(v.clone().into())
                                })
                                .collect(),
                        )
                        .with_assignment(assignment(&member.assigned))
                        .with_target_assignment(assignment(&target))
                        .with_is_classic(false)
                })
                .collect();
            answer
                .with_group_state(streams.state_name().into())
                .with_group_epoch(streams.epoch)
                .with_assignment_epoch(streams.assignment_epoch)
                .with_topology(topology)
                .with_members(members)
                .with_assignor_name(Some(streams_groups::ASSIGNOR.into()))
        })
        .collect();
    StreamsGroupDescribeResponse::default().with_groups(described)
}
