//! StreamsGroupHeartbeat (KIP-1071): a Kafka Streams member joins with its topology,
//! heartbeats, reconciles its tasks and leaves a streams group whose coordinator configures
//! the topology and assigns the tasks (see [`streams_groups`](crate::streams_groups)). The
//! internal topics the group lacks are created here, after the answer is computed, as Kafka
//! 4.4's `KafkaApis` has its `AutoTopicCreationManager` create them (whatever
//! `auto.create.topics.enable` says); the answer still says they are missing.

use super::Context;
use crate::streams_groups::{self, Heartbeat, HeartbeatOutcome, Settings, Tasks, TopicInfo};
use kafka_codec::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_codec::messages::streams_group_heartbeat_request::{
    TaskIds as RequestTasks, TopicInfo as RequestTopicInfo,
};
use kafka_codec::messages::streams_group_heartbeat_response::{
    Endpoint, EndpointToPartitions, Status, TaskIds, TopicPartition,
};
use kafka_codec::messages::{StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse};
use kafka_codec::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub const API: ApiKey = ApiKey::StreamsGroupHeartbeat;

fn tasks(list: &Option<Vec<RequestTasks>>) -> Option<Tasks> {
    list.as_ref().map(|list| {
        let mut tasks = Tasks::new();
        for ids in list {
            tasks
                .entry(ids.subtopology_id.to_string())
                .or_default()
                .extend(ids.partitions.iter());
        }
        tasks
    })
}

fn topic_info(topic: &RequestTopicInfo) -> TopicInfo {
    TopicInfo {
        name: topic.name.to_string(),
        partitions: topic.partitions,
        replication_factor: topic.replication_factor,
        configs: topic
            .topic_configs
            .iter()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect(),
    }
}

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

fn topic_partitions(by_topic: &BTreeMap<String, BTreeSet<i32>>) -> Vec<TopicPartition> {
    by_topic
        .iter()
        .map(|(topic, partitions)| {
            TopicPartition::default()
                .with_topic(topic.clone().into())
                .with_partitions(partitions.iter().copied().collect::<Vec<i32>>().into())
        })
        .collect()
}

/// The group's setting `name` (a group config), else Kafka's default.
fn setting(overrides: Option<&BTreeMap<String, String>>, name: &str, default: u64) -> u64 {
    overrides
        .and_then(|o| o.get(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

pub fn handle(
    context: &Context<'_>,
    request: &StreamsGroupHeartbeatRequest,
    client_id: &str,
) -> StreamsGroupHeartbeatResponse {
    let heartbeat = Heartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        endpoint_information_epoch: request.endpoint_information_epoch,
        instance_id: request.instance_id.as_deref().map(str::to_string),
        rack_id: request.rack_id.as_deref().map(str::to_string),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        topology: request
            .topology
            .as_ref()
            .map(|topology| streams_groups::Topology {
                epoch: topology.epoch,
                subtopologies: topology
                    .subtopologies
                    .iter()
                    .map(|sub| streams_groups::Subtopology {
                        id: sub.subtopology_id.to_string(),
                        source_topics: sub.source_topics.iter().map(|t| t.to_string()).collect(),
                        source_topic_regex: sub
                            .source_topic_regex
                            .iter()
                            .map(|t| t.to_string())
                            .collect(),
                        changelog_topics: sub
                            .state_changelog_topics
                            .iter()
                            .map(topic_info)
                            .collect(),
                        repartition_sink_topics: sub
                            .repartition_sink_topics
                            .iter()
                            .map(|t| t.to_string())
                            .collect(),
                        repartition_source_topics: sub
                            .repartition_source_topics
                            .iter()
                            .map(topic_info)
                            .collect(),
                    })
                    .collect(),
            }),
        active: tasks(&request.active_tasks),
        standby: tasks(&request.standby_tasks),
        warmup: tasks(&request.warmup_tasks),
        process_id: request.process_id.as_deref().map(str::to_string),
        user_endpoint: request
            .user_endpoint
            .as_ref()
            .map(|e| (e.host.to_string(), e.port)),
        client_tags: request.client_tags.as_ref().map(|tags| {
            tags.iter()
                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                .collect()
        }),
        shutdown_application: request.shutdown_application,
        client_id: client_id.to_string(),
        // As Kafka writes the client's address (Java's `InetAddress.toString`).
        client_host: format!("/{}", context.peer.ip()),
    };
    // The group's configs (`streams.*`), else Kafka's defaults.
    let (topics, overrides) = {
        let state = context.shared.state();
        let topics: BTreeMap<String, i32> = state
            .topics
            .iter()
            .map(|(name, topic)| (name.clone(), topic.partitions.len() as i32))
            .collect();
        (
            topics,
            state.configs.groups.get(request.group_id.as_str()).cloned(),
        )
    };
    let overrides = overrides.as_ref();
    let millis = |name: &str, default: Duration| {
        Duration::from_millis(setting(overrides, name, default.as_millis() as u64))
    };
    let settings = Settings {
        session: millis(
            "streams.session.timeout.ms",
            streams_groups::SESSION_TIMEOUT,
        ),
        initial_delay: millis(
            "streams.initial.rebalance.delay.ms",
            streams_groups::INITIAL_REBALANCE_DELAY,
        ),
        standby_replicas: setting(overrides, "streams.num.standby.replicas", 0) as usize,
    };
    let interval = millis(
        "streams.heartbeat.interval.ms",
        streams_groups::HEARTBEAT_INTERVAL,
    );
    let task_offset_interval = millis(
        "streams.task.offset.interval.ms",
        streams_groups::TASK_OFFSET_INTERVAL,
    );
    let recovery_lag = overrides
        .and_then(|o| o.get("streams.acceptable.recovery.lag"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(streams_groups::ACCEPTABLE_RECOVERY_LAG);
    let outcome = if let Err(refused) = streams_groups::validate(&heartbeat, &request.group_id) {
        *refused
    } else if !context.coordinates(&request.group_id) {
        // No message: Kafka 4.4 answers NOT_COORDINATOR with a null one
        // (tests/data/streams-not-coordinator-kafka-4.4.txt).
        HeartbeatOutcome {
            error: ErrorCode::NOT_COORDINATOR,
            ..HeartbeatOutcome::default()
        }
    } else {
        let outcome = context.shared.groups().streams_heartbeat(
            &request.group_id,
            &heartbeat,
            &topics,
            settings,
            crate::clock::now(),
        );
        context.shared.groups_changed.notify_one();
        outcome
    };
    // The internal topics the group lacks, created as a CreateTopics of each would create
    // it (a failure leaves the status as it is; the next heartbeat asks again).
    for topic in &outcome.to_create {
        let wanted = CreatableTopic::default()
            .with_name(topic.name.clone().into())
            .with_num_partitions(topic.partitions)
            .with_replication_factor(if topic.replication_factor > 0 {
                topic.replication_factor
            } else {
                -1
            })
            .with_configs(
                topic
                    .configs
                    .iter()
                    .map(|(key, value)| {
                        CreatableTopicConfig::default()
                            .with_name(key.clone().into())
                            .with_value(Some(value.clone().into()))
                    })
                    .collect(),
            );
        super::create_topics::create_one(context, &wanted);
    }
    let ms = |d: Duration| i32::try_from(d.as_millis()).unwrap_or(i32::MAX);
    let response = StreamsGroupHeartbeatResponse::default()
        .with_error_code(outcome.error.code())
        .with_error_message(outcome.message.map(Into::into));
    if outcome.error != ErrorCode::NONE {
        return response;
    }
    let statuses: Vec<Status> = outcome
        .statuses
        .iter()
        .map(|status| {
            Status::default()
                .with_status_code(status.code)
                .with_status_detail(status.detail.clone().into())
        })
        .collect();
    let mut response = response
        .with_member_id(outcome.member_id.into())
        .with_member_epoch(outcome.member_epoch)
        // A member that left is told 0, as Kafka answers.
        .with_heartbeat_interval_ms(if outcome.member_epoch < 0 {
            0
        } else {
            ms(interval)
        })
        .with_task_offset_interval_ms(ms(task_offset_interval))
        .with_status((!statuses.is_empty()).then_some(statuses))
        .with_endpoint_information_epoch(outcome.endpoint_epoch);
    // v0 carries the lag as an INT32, v1+ as an INT64 (a field outside its versions must
    // keep its default to be written).
    response = if context.version == 0 {
        response
            .with_acceptable_recovery_lag_legacy(i32::try_from(recovery_lag).unwrap_or(i32::MAX))
    } else {
        response.with_acceptable_recovery_lag(recovery_lag)
    };
    if let Some(assignment) = &outcome.assignment {
        response = response
            .with_active_tasks(Some(task_ids(&assignment.active)))
            .with_standby_tasks(Some(task_ids(&assignment.standby)))
            .with_warmup_tasks(Some(task_ids(&assignment.warmup)));
    }
    if let Some(endpoints) = &outcome.endpoints {
        response = response.with_partitions_by_user_endpoint(Some(
            endpoints
                .iter()
                .map(|endpoint| {
                    EndpointToPartitions::default()
                        .with_user_endpoint(
                            Endpoint::default()
                                .with_host(endpoint.endpoint.0.clone().into())
                                .with_port(endpoint.endpoint.1),
                        )
                        .with_active_partitions(topic_partitions(&endpoint.active))
                        .with_standby_partitions(topic_partitions(&endpoint.standby))
                })
                .collect(),
        ));
    }
    response
}
