//! Authorization entry by entry, as Kafka's `KafkaApis` does it: the entries of a request
//! (topics, groups, transactional ids, config resources) the principal may not touch are
//! taken out before the handler runs and answered with their authorization error beside
//! the handler's answer for the others (before or after them, as Kafka merges them); lists that Kafka
//! filters (ListGroups, ListTransactions, DescribeTopicPartitions and Metadata for every
//! topic) lose what the principal may not describe; and the authorized operations a
//! request asks for (`include_*_authorized_operations`) are computed from the ACLs.
//!
//! [`split`] is the one table: per API, the operation each entry needs and what a denied
//! entry's answer is. What a request needs as a whole (a group, a transactional id, the
//! cluster) is [`needs`](super::needs)'s, checked first.

use super::{allowed, op, Need};
use crate::acls::resource_type;
use crate::consumer_groups::java_order::JavaHashSet;
use crate::Shared;
use kafka_codec::messages::*;
use kafka_codec::{ErrorCode, Request, Response};
use std::net::IpAddr;

/// Kafka's value for "authorized operations not asked for" (`Integer.MIN_VALUE`).
pub const NOT_ASKED: i32 = i32::MIN;

/// Who asks: with SASL off there is no principal and everything is allowed (Kafka without
/// an authorizer).
pub struct Authority<'a> {
    shared: &'a Shared,
    principal: Option<(String, IpAddr)>,
}

impl<'a> Authority<'a> {
    /// `user`: the connection's SASL user, `None` with SASL off.
    pub fn new(shared: &'a Shared, user: Option<&str>, host: IpAddr) -> Authority<'a> {
        Authority {
            shared,
            principal: user.map(|user| (format!("User:{user}"), host)),
        }
    }

    /// Whether ACLs are enforced (SASL on).
    pub fn enforced(&self) -> bool {
        self.principal.is_some()
    }

    /// Whether the caller may do `need` (the ACLs locked for this answer only). IDEMPOTENT_WRITE
    /// on the cluster is also granted by WRITE on any topic, as Kafka grants an idempotent
    /// producer's InitProducerId (KIP-679).
    pub fn may(&self, need: &Need) -> bool {
        if self.may_exactly(need) {
            return true;
        }
        match &self.principal {
            Some((principal, host))
                if need.resource_type == resource_type::CLUSTER
                    && need.operation == op::IDEMPOTENT_WRITE =>
            {
                super::allowed_on_some(
                    &self.shared.acls(),
                    &self.shared.super_users,
                    principal,
                    *host,
                    resource_type::TOPIC,
                    op::WRITE,
                )
            }
            _ => false,
        }
    }

    /// Whether the ACLs grant `need` itself.
    fn may_exactly(&self, need: &Need) -> bool {
        match &self.principal {
            None => true,
            Some((principal, host)) => allowed(
                &self.shared.acls(),
                &self.shared.super_users,
                principal,
                *host,
                need,
            ),
        }
    }

    fn may_topic(&self, name: &str, operation: i8) -> bool {
        self.may(&Need::topic(name, operation))
    }

    /// The bit set of the operations the caller may do on a resource, as Kafka's
    /// `authorizedOperations` computes it: bit `code` for each operation the resource type
    /// supports that is allowed (implied operations included).
    pub fn operations(&self, resource_type: i8, name: &str) -> i32 {
        supported_operations(resource_type)
            .iter()
            .filter(|&&operation| {
                self.may_exactly(&Need {
                    resource_type,
                    name: name.to_owned(),
                    operation,
                })
            })
            .fold(0, |bits, &operation| bits | 1 << operation)
    }

    /// The cluster's authorized operations, as Metadata and DescribeCluster answer them:
    /// none at all (0) without DESCRIBE on the cluster.
    fn cluster_operations(&self) -> i32 {
        if self.may(&Need::cluster(op::DESCRIBE)) {
            self.operations(resource_type::CLUSTER, super::CLUSTER_NAME)
        } else {
            0
        }
    }

    /// A topic's name, from its name or (when the name is empty) its id; `None`: an id the
    /// cluster does not hold, which the handler answers UNKNOWN_TOPIC_ID.
    fn topic_name(&self, name: &str, id: kafka_codec::Uuid) -> Option<String> {
        if name.is_empty() {
            self.shared
                .state()
                .topic_by_id(id)
                .map(|(name, _)| name.clone())
        } else {
            Some(name.to_owned())
        }
    }

    /// Whether the caller may do `operation` on a topic named by name or id (an unknown id:
    /// yes, so the handler answers it).
    fn may_topic_named(&self, name: &str, id: kafka_codec::Uuid, operation: i8) -> bool {
        self.topic_name(name, id)
            .is_none_or(|name| self.may_topic(&name, operation))
    }
}

/// The operations Kafka's `AclEntry.supportedOperations` lists for a resource type.
fn supported_operations(resource_type: i8) -> &'static [i8] {
    match resource_type {
        resource_type::TOPIC => &[
            op::READ,
            op::WRITE,
            op::CREATE,
            op::DESCRIBE,
            op::DELETE,
            op::ALTER,
            op::DESCRIBE_CONFIGS,
            op::ALTER_CONFIGS,
        ],
        resource_type::GROUP => &[
            op::READ,
            op::DESCRIBE,
            op::DELETE,
            op::DESCRIBE_CONFIGS,
            op::ALTER_CONFIGS,
        ],
        resource_type::CLUSTER => &[
            op::CREATE,
            op::CLUSTER_ACTION,
            op::DESCRIBE_CONFIGS,
            op::ALTER_CONFIGS,
            op::IDEMPOTENT_WRITE,
            op::ALTER,
            op::DESCRIBE,
        ],
        resource_type::TRANSACTIONAL_ID => &[op::DESCRIBE, op::WRITE],
        _ => &[],
    }
}

/// What completes the handler's answer: the denied entries added, a list filtered, the
/// authorized operations set. Returns whether the connection closes after (a Produce with
/// acks 0 that had a denied topic, as Kafka closes it).
pub type Finish = Box<dyn FnOnce(&Authority<'_>, &mut Response) -> bool + Send>;

/// What dispatch does with a request after the whole-request checks passed.
pub enum Verdict {
    /// The handler answers `request` (`None`: as sent), then `finish` (if any) completes it.
    Handle {
        request: Option<Request>,
        finish: Option<Finish>,
    },
    /// This is the answer; the handler is not asked (an AddPartitionsToTxn with a denied
    /// topic, which Kafka does not attempt; a DescribeTopicPartitions naming only denied
    /// topics).
    Answer(Response),
}

impl Verdict {
    fn as_sent() -> Verdict {
        Verdict::Handle {
            request: None,
            finish: None,
        }
    }

    fn finish(finish: impl FnOnce(&Authority<'_>, &mut Response) + Send + 'static) -> Verdict {
        Verdict::Handle {
            request: None,
            finish: Some(Box::new(move |authority, response| {
                finish(authority, response);
                false
            })),
        }
    }

    fn with(request: Request, finish: impl FnOnce(&mut Response) + Send + 'static) -> Verdict {
        Verdict::Handle {
            request: Some(request),
            finish: Some(Box::new(move |_, response| {
                finish(response);
                false
            })),
        }
    }
}

/// `items` split into those `keep` accepts and the others, or `None` when none is denied.
/// The common case, nothing denied, clones nothing.
fn split_off<T: Clone>(items: &[T], keep: impl Fn(&T) -> bool) -> Option<(Vec<T>, Vec<T>)> {
    if items.iter().all(&keep) {
        return None;
    }
    let (kept, denied): (Vec<T>, Vec<T>) = items.iter().cloned().partition(|item| keep(item));
    (!denied.is_empty()).then_some((kept, denied))
}

const TOPIC_DENIED: ErrorCode = ErrorCode::TOPIC_AUTHORIZATION_FAILED;
const GROUP_DENIED: ErrorCode = ErrorCode::GROUP_AUTHORIZATION_FAILED;

/// The three config APIs split alike: each resource needs `$operation` on itself (a topic)
/// or the cluster, and a denied one is answered with its resource's authorization error.
macro_rules! config_resources {
    ($a:expr, $body:expr, $api:ident, $answers:ident, $operation:expr, $answer:ty,
     $message:expr) => {{
        let Some((kept, denied)) = split_off(&$body.resources, |r| {
            $a.may(&config_need(r.resource_type, &r.resource_name, $operation))
        }) else {
            return Verdict::as_sent();
        };
        let mut body = $body.clone();
        body.resources = kept;
        Verdict::with(Request::$api(body), move |response| {
            if let Response::$api(answer) = response {
                answer.$answers.extend(denied.into_iter().map(|r| {
                    let error = config_need(r.resource_type, &r.resource_name, 0).denied();
                    let message: fn(ErrorCode) -> Option<&'static str> = $message;
                    <$answer>::default()
                        .with_error_code(error.code())
                        .with_error_message(message(error).map(Into::into))
                        .with_resource_type(r.resource_type)
                        .with_resource_name(r.resource_name)
                }));
            }
        })
    }};
}

/// Per API: which entries `authority` may not touch, and how they are answered.
pub fn split(request: &Request, version: i16, authority: &Authority<'_>) -> Verdict {
    let a = authority;
    match request {
        Request::Produce(body) => {
            let Some((kept, denied)) = split_off(&body.topic_data, |t| {
                a.may_topic_named(&t.name, t.topic_id, op::WRITE)
            }) else {
                return Verdict::as_sent();
            };
            let close = body.acks == 0;
            let mut body = body.clone();
            body.topic_data = kept;
            Verdict::Handle {
                request: Some(Request::Produce(body)),
                finish: Some(Box::new(move |_, response| {
                    if let Response::Produce(answer) = response {
                        answer.responses.extend(denied.into_iter().map(|t| {
                            produce_response::TopicProduceResponse::default()
                                .with_name(t.name)
                                .with_topic_id(t.topic_id)
                                .with_partition_responses(
                                    t.partition_data
                                        .iter()
                                        .map(|p| {
                                            produce_response::PartitionProduceResponse::default()
                                                .with_index(p.index)
                                                .with_error_code(TOPIC_DENIED.code())
                                                .with_base_offset(-1)
                                        })
                                        .collect(),
                                )
                        }));
                    }
                    close
                })),
            }
        }
        Request::Fetch(body) => {
            let Some((kept, denied)) = split_off(&body.topics, |t| {
                a.may_topic_named(&t.topic, t.topic_id, op::READ)
            }) else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            // Nothing left to wait for: Kafka answers at once.
            if kept.is_empty() {
                body.max_wait_ms = 0;
            }
            body.topics = kept;
            Verdict::with(Request::Fetch(body), move |response| {
                if let Response::Fetch(answer) = response {
                    answer.responses.extend(denied.into_iter().map(|t| {
                        fetch_response::FetchableTopicResponse::default()
                            .with_topic(t.topic)
                            .with_topic_id(t.topic_id)
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        // Kafka's error partitions carry empty records,
                                        // not null ones.
                                        fetch_response::PartitionData::default()
                                            .with_partition_index(p.partition)
                                            .with_error_code(TOPIC_DENIED.code())
                                            .with_high_watermark(-1)
                                            .with_records(Some(Default::default()))
                                    })
                                    .collect(),
                            )
                    }));
                }
            })
        }
        Request::ListOffsets(body) => {
            let Some((kept, denied)) =
                split_off(&body.topics, |t| a.may_topic(&t.name, op::DESCRIBE))
            else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::ListOffsets(body), move |response| {
                if let Response::ListOffsets(answer) = response {
                    answer.topics.extend(denied.into_iter().map(|t| {
                        list_offsets_response::ListOffsetsTopicResponse::default()
                            .with_name(t.name)
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        list_offsets_response::ListOffsetsPartitionResponse::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(TOPIC_DENIED.code())
                                            .with_timestamp(-1)
                                            .with_offset(-1)
                                    })
                                    .collect(),
                            )
                    }));
                }
            })
        }
        // Kafka answers the denied topics first; with none left, without the coordinator.
        Request::OffsetCommit(body) => {
            let Some((kept, denied)) = split_off(&body.topics, |t| {
                a.may_topic_named(&t.name, t.topic_id, op::READ)
            }) else {
                return Verdict::as_sent();
            };
            let denied: Vec<_> = denied
                .into_iter()
                .map(|t| {
                    offset_commit_response::OffsetCommitResponseTopic::default()
                        .with_name(t.name)
                        .with_topic_id(t.topic_id)
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    offset_commit_response::OffsetCommitResponsePartition::default()
                                        .with_partition_index(p.partition_index)
                                        .with_error_code(TOPIC_DENIED.code())
                                })
                                .collect(),
                        )
                })
                .collect();
            if kept.is_empty() {
                return Verdict::Answer(Response::OffsetCommit(
                    OffsetCommitResponse::default().with_topics(denied),
                ));
            }
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::OffsetCommit(body), move |response| {
                if let Response::OffsetCommit(answer) = response {
                    prepend(&mut answer.topics, denied);
                }
            })
        }
        Request::TxnOffsetCommit(body) => {
            let Some((kept, denied)) = split_off(&body.topics, |t| {
                a.may_topic_named(&t.name, t.topic_id, op::READ)
            }) else {
                return Verdict::as_sent();
            };
            let denied: Vec<_> = denied
                .into_iter()
                .map(|t| {
                    txn_offset_commit_response::TxnOffsetCommitResponseTopic::default()
                        .with_name(t.name)
                        .with_topic_id(t.topic_id)
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    txn_offset_commit_response::TxnOffsetCommitResponsePartition::default()
                                        .with_partition_index(p.partition_index)
                                        .with_error_code(TOPIC_DENIED.code())
                                })
                                .collect(),
                        )
                })
                .collect();
            if kept.is_empty() {
                return Verdict::Answer(Response::TxnOffsetCommit(
                    TxnOffsetCommitResponse::default().with_topics(denied),
                ));
            }
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::TxnOffsetCommit(body), move |response| {
                if let Response::TxnOffsetCommit(answer) = response {
                    prepend(&mut answer.topics, denied);
                }
            })
        }
        Request::OffsetDelete(body) => {
            let Some((kept, denied)) = split_off(&body.topics, |t| a.may_topic(&t.name, op::READ))
            else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::OffsetDelete(body), move |response| {
                if let Response::OffsetDelete(answer) = response {
                    let denied = denied.into_iter().map(|t| {
                        offset_delete_response::OffsetDeleteResponseTopic::default()
                            .with_name(t.name)
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        offset_delete_response::OffsetDeleteResponsePartition::default()
                                            .with_partition_index(p.partition_index)
                                            .with_error_code(TOPIC_DENIED.code())
                                    })
                                    .collect(),
                            )
                    });
                    prepend(&mut answer.topics, denied.collect());
                }
            })
        }
        // Read only: answered whole, then the groups and topics not describable are
        // refused in the answer (every topic asked: left out).
        Request::OffsetFetch(body) => {
            let every_topic_v7 = body.topics.is_none();
            let every_topic: Vec<bool> = body.groups.iter().map(|g| g.topics.is_none()).collect();
            Verdict::finish(move |a, response| {
                if let Response::OffsetFetch(answer) = response {
                    limit_offset_fetch(a, answer, every_topic_v7, &every_topic)
                }
            })
        }
        Request::DeleteRecords(body) => {
            let Some((kept, denied)) =
                split_off(&body.topics, |t| a.may_topic(&t.name, op::DELETE))
            else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::DeleteRecords(body), move |response| {
                if let Response::DeleteRecords(answer) = response {
                    answer.topics.extend(denied.into_iter().map(|t| {
                        delete_records_response::DeleteRecordsTopicResult::default()
                            .with_name(t.name)
                            .with_partitions(
                                t.partitions
                                    .iter()
                                    .map(|p| {
                                        delete_records_response::DeleteRecordsPartitionResult::default()
                                            .with_partition_index(p.partition_index)
                                            .with_low_watermark(-1)
                                            .with_error_code(TOPIC_DENIED.code())
                                    })
                                    .collect(),
                            )
                    }));
                }
            })
        }
        // CREATE on the cluster covers every topic; else CREATE on each.
        Request::CreateTopics(body) => {
            if a.may(&Need::cluster(op::CREATE)) {
                return Verdict::as_sent();
            }
            let Some((kept, denied)) =
                split_off(&body.topics, |t| a.may_topic(&t.name, op::CREATE))
            else {
                return Verdict::as_sent();
            };
            // Kafka's controller answers the denied topics in the order of its `HashSet` of
            // every name the request holds.
            let mut names = JavaHashSet::new();
            for topic in &body.topics {
                names.add(topic.name.to_string());
            }
            let rank: Vec<&String> = names.items().collect();
            let mut denied = denied;
            denied.sort_by_key(|t| rank.iter().position(|name| *name == t.name.as_str()));
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::CreateTopics(body), move |response| {
                if let Response::CreateTopics(answer) = response {
                    answer.topics.extend(denied.into_iter().map(|t| {
                        create_topics_response::CreatableTopicResult::default()
                            .with_name(t.name)
                            .with_error_code(TOPIC_DENIED.code())
                            .with_error_message(Some(AUTHORIZATION_FAILED.into()))
                    }));
                }
            })
        }
        Request::DeleteTopics(body) => {
            let names = split_off(&body.topic_names, |n| a.may_topic(n, op::DELETE));
            let topics = split_off(&body.topics, |t| {
                a.may_topic_named(
                    t.name.as_deref().unwrap_or_default(),
                    t.topic_id,
                    op::DELETE,
                )
            });
            if names.is_none() && topics.is_none() {
                return Verdict::as_sent();
            }
            let mut body = body.clone();
            let mut denied: Vec<delete_topics_response::DeletableTopicResult> = Vec::new();
            if let Some((kept, refused)) = names {
                body.topic_names = kept;
                denied.extend(refused.into_iter().map(|name| {
                    delete_topics_response::DeletableTopicResult::default()
                        .with_name(Some(name))
                        .with_error_code(TOPIC_DENIED.code())
                        .with_error_message(Some(TOPIC_DENIED_MESSAGE.into()))
                }));
            }
            if let Some((kept, refused)) = topics {
                body.topics = kept;
                denied.extend(refused.into_iter().map(|t| {
                    // Named by id: its name only if it may be described.
                    let name = a
                        .topic_name(t.name.as_deref().unwrap_or_default(), t.topic_id)
                        .filter(|name| t.name.is_some() || a.may_topic(name, op::DESCRIBE));
                    delete_topics_response::DeletableTopicResult::default()
                        .with_name(name.map(Into::into))
                        .with_topic_id(t.topic_id)
                        .with_error_code(TOPIC_DENIED.code())
                        .with_error_message(Some(TOPIC_DENIED_MESSAGE.into()))
                }));
            }
            Verdict::with(Request::DeleteTopics(body), move |response| {
                if let Response::DeleteTopics(answer) = response {
                    answer.responses.extend(denied);
                }
            })
        }
        Request::CreatePartitions(body) => {
            let Some((kept, denied)) = split_off(&body.topics, |t| a.may_topic(&t.name, op::ALTER))
            else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            body.topics = kept;
            Verdict::with(Request::CreatePartitions(body), move |response| {
                if let Response::CreatePartitions(answer) = response {
                    answer.results.extend(denied.into_iter().map(|t| {
                        create_partitions_response::CreatePartitionsTopicResult::default()
                            .with_name(t.name)
                            .with_error_code(TOPIC_DENIED.code())
                    }));
                }
            })
        }
        Request::DescribeConfigs(body) => {
            config_resources!(
                a,
                body,
                DescribeConfigs,
                results,
                op::DESCRIBE_CONFIGS,
                describe_configs_response::DescribeConfigsResult,
                // The error's own message, the cluster's too.
                |error| Some(error_message(error))
            )
        }
        Request::AlterConfigs(body) => {
            config_resources!(
                a,
                body,
                AlterConfigs,
                responses,
                op::ALTER_CONFIGS,
                alter_configs_response::AlterConfigsResourceResponse,
                // A topic's with the error's message, a broker's with none.
                |error| { (error == TOPIC_DENIED).then(|| error_message(error)) }
            )
        }
        Request::IncrementalAlterConfigs(body) => {
            config_resources!(
                a,
                body,
                IncrementalAlterConfigs,
                responses,
                op::ALTER_CONFIGS,
                incremental_alter_configs_response::AlterConfigsResourceResponse,
                // As AlterConfigs.
                |error| { (error == TOPIC_DENIED).then(|| error_message(error)) }
            )
        }
        Request::DescribeGroups(body) => {
            let include = body.include_authorized_operations;
            let split = split_off(&body.groups, |g| a.may(&Need::group(g, op::DESCRIBE)));
            let (request, denied) = match split {
                Some((kept, denied)) => {
                    let mut body = body.clone();
                    body.groups = kept;
                    (Some(Request::DescribeGroups(body)), denied)
                }
                None => (None, Vec::new()),
            };
            Verdict::Handle {
                request,
                finish: Some(Box::new(move |a, response| {
                    if let Response::DescribeGroups(answer) = response {
                        if include {
                            for group in &mut answer.groups {
                                if group.error_code == 0 {
                                    group.authorized_operations =
                                        a.operations(resource_type::GROUP, &group.group_id);
                                }
                            }
                        }
                        let denied = denied.into_iter().map(|g| {
                            describe_groups_response::DescribedGroup::default()
                                .with_group_id(g)
                                .with_error_code(GROUP_DENIED.code())
                                .with_authorized_operations(NOT_ASKED)
                        });
                        prepend(&mut answer.groups, denied.collect());
                    }
                    false
                })),
            }
        }
        // DESCRIBE on the cluster lists every group; else the groups describable.
        Request::ListGroups(_) => {
            if a.may(&Need::cluster(op::DESCRIBE)) {
                return Verdict::as_sent();
            }
            Verdict::finish(|a, response| {
                if let Response::ListGroups(answer) = response {
                    answer
                        .groups
                        .retain(|g| a.may(&Need::group(&g.group_id, op::DESCRIBE)));
                }
            })
        }
        Request::DeleteGroups(body) => {
            let Some((kept, denied)) =
                split_off(&body.groups_names, |g| a.may(&Need::group(g, op::DELETE)))
            else {
                return Verdict::as_sent();
            };
            let mut body = body.clone();
            body.groups_names = kept;
            Verdict::with(Request::DeleteGroups(body), move |response| {
                if let Response::DeleteGroups(answer) = response {
                    answer.results.extend(denied.into_iter().map(|g| {
                        delete_groups_response::DeletableGroupResult::default()
                            .with_group_id(g)
                            .with_error_code(GROUP_DENIED.code())
                    }));
                }
            })
        }
        // v4+: each key answered on its own, a denied one with no node.
        Request::FindCoordinator(body) if !body.coordinator_keys.is_empty() => {
            let key_type = body.key_type;
            Verdict::finish(move |a, response| {
                if let Response::FindCoordinator(answer) = response {
                    for coordinator in &mut answer.coordinators {
                        let Some(need) = super::coordinator_need(key_type, &coordinator.key) else {
                            continue;
                        };
                        if !a.may(&need) {
                            *coordinator = find_coordinator_response::Coordinator::default()
                                .with_key(std::mem::take(&mut coordinator.key))
                                .with_node_id(-1)
                                .with_host("".into())
                                .with_port(-1)
                                .with_error_code(need.denied().code());
                        }
                    }
                }
            })
        }
        Request::ListTransactions(_) => Verdict::finish(|a, response| {
            if let Response::ListTransactions(answer) = response {
                answer
                    .transaction_states
                    .retain(|t| a.may(&Need::transactional_id(&t.transactional_id, op::DESCRIBE)));
            }
        }),
        // Read only: the ids not describable refused in place, and a transaction's topics
        // that may not be described left out, as Kafka does.
        Request::DescribeTransactions(_) => Verdict::finish(|a, response| {
            if let Response::DescribeTransactions(answer) = response {
                for state in &mut answer.transaction_states {
                    if !a.may(&Need::transactional_id(
                        &state.transactional_id,
                        op::DESCRIBE,
                    )) {
                        *state = describe_transactions_response::TransactionState::default()
                            .with_transactional_id(std::mem::take(&mut state.transactional_id))
                            .with_error_code(
                                ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code(),
                            );
                    } else {
                        state.topics.retain(|t| a.may_topic(&t.topic, op::DESCRIBE));
                    }
                }
            }
        }),
        Request::DescribeProducers(_) => Verdict::finish(|a, response| {
            if let Response::DescribeProducers(answer) = response {
                for topic in &mut answer.topics {
                    if !a.may_topic(&topic.name, op::READ) {
                        for partition in &mut topic.partitions {
                            *partition = describe_producers_response::PartitionResponse::default()
                                .with_partition_index(partition.partition_index)
                                .with_error_code(TOPIC_DENIED.code());
                        }
                    }
                }
            }
        }),
        Request::DescribeTopicPartitions(body) => {
            let every_topic = body.topics.is_empty();
            if !every_topic
                && body
                    .topics
                    .iter()
                    .all(|t| !a.may_topic(&t.name, op::DESCRIBE))
            {
                let mut answer = DescribeTopicPartitionsResponse::default();
                answer.topics = body
                    .topics
                    .iter()
                    .map(|t| topic_partitions_denied(&t.name))
                    .collect();
                return Verdict::Answer(Response::DescribeTopicPartitions(answer));
            }
            Verdict::finish(move |a, response| {
                if let Response::DescribeTopicPartitions(answer) = response {
                    let name_of = |t: &describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic| {
                        t.name.as_deref().unwrap_or_default().to_owned()
                    };
                    if every_topic {
                        answer
                            .topics
                            .retain(|t| a.may_topic(&name_of(t), op::DESCRIBE));
                    }
                    for topic in &mut answer.topics {
                        let name = name_of(topic);
                        if !a.may_topic(&name, op::DESCRIBE) {
                            *topic = topic_partitions_denied(&name);
                        } else {
                            topic.topic_authorized_operations =
                                a.operations(resource_type::TOPIC, &name);
                        }
                    }
                }
            })
        }
        // v0-v3, a producer's: a denied topic and nothing is attempted.
        Request::AddPartitionsToTxn(body) if body.transactions.is_empty() => {
            let denied: Vec<bool> = body
                .v3_and_below_topics
                .iter()
                .map(|t| !a.may_topic(&t.name, op::WRITE))
                .collect();
            if !denied.contains(&true) {
                return Verdict::as_sent();
            }
            let mut answer = AddPartitionsToTxnResponse::default();
            answer.results_by_topic_v3_and_below = body
                .v3_and_below_topics
                .iter()
                .zip(denied)
                .map(|(t, denied)| {
                    let error = if denied {
                        TOPIC_DENIED
                    } else {
                        ErrorCode::OPERATION_NOT_ATTEMPTED
                    };
                    add_partitions_to_txn_response::AddPartitionsToTxnTopicResult::default()
                        .with_name(t.name.clone())
                        .with_results_by_partition(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult::default()
                                        .with_partition_index(p)
                                        .with_partition_error_code(error.code())
                                })
                                .collect(),
                        )
                })
                .collect();
            Verdict::Answer(Response::AddPartitionsToTxn(answer))
        }
        Request::Metadata(body) => {
            if let Some(verdict) = metadata_creations(body, version, a) {
                return verdict;
            }
            let topics = body.include_topic_authorized_operations && version >= 8;
            let cluster = body.include_cluster_authorized_operations && (8..=10).contains(&version);
            if !topics && !cluster {
                return Verdict::as_sent();
            }
            Verdict::finish(move |a, response| {
                if let Response::Metadata(answer) = response {
                    if cluster {
                        answer.cluster_authorized_operations = a.cluster_operations();
                    }
                    if topics {
                        for topic in &mut answer.topics {
                            // A topic refused keeps "not asked", as Kafka leaves it.
                            if topic.error_code != TOPIC_DENIED.code() {
                                if let Some(name) = topic.name.as_deref() {
                                    topic.topic_authorized_operations =
                                        a.operations(resource_type::TOPIC, name);
                                }
                            }
                        }
                    }
                }
            })
        }
        Request::DescribeCluster(body) if body.include_cluster_authorized_operations => {
            Verdict::finish(|a, response| {
                // Not on an answer refused for its endpoint type.
                if let Response::DescribeCluster(answer) = response {
                    if answer.error_code == 0 {
                        answer.cluster_authorized_operations = a.cluster_operations();
                    }
                }
            })
        }
        Request::ConsumerGroupDescribe(body) => {
            let include = body.include_authorized_operations;
            let split = split_off(&body.group_ids, |g| a.may(&Need::group(g, op::DESCRIBE)));
            let (request, denied) = match split {
                Some((kept, denied)) => {
                    let mut body = body.clone();
                    body.group_ids = kept;
                    (Some(Request::ConsumerGroupDescribe(body)), denied)
                }
                None => (None, Vec::new()),
            };
            Verdict::Handle {
                request,
                finish: Some(Box::new(move |a, response| {
                    if let Response::ConsumerGroupDescribe(answer) = response {
                        if include {
                            for group in &mut answer.groups {
                                if group.error_code == 0 {
                                    group.authorized_operations =
                                        a.operations(resource_type::GROUP, &group.group_id);
                                }
                            }
                        }
                        let denied = denied.into_iter().map(|g| {
                            consumer_group_describe_response::DescribedGroup::default()
                                .with_group_id(g)
                                .with_error_code(GROUP_DENIED.code())
                        });
                        prepend(&mut answer.groups, denied.collect());
                    }
                    false
                })),
            }
        }
        _ => Verdict::as_sent(),
    }
}

/// A Metadata that would auto-create topics, as Kafka's `KafkaApis` authorizes it: a topic
/// that does not exist is created only for a caller that may describe it and may CREATE on
/// the cluster or on the topic; the others are left out of the request and answered after
/// the rest, TOPIC_AUTHORIZATION_FAILED with no id (those that may be described first, as
/// Kafka orders them). `None` when nothing is left out (the common case clones nothing).
fn metadata_creations(body: &MetadataRequest, version: i16, a: &Authority<'_>) -> Option<Verdict> {
    let named = body.topics.as_ref().filter(|topics| !topics.is_empty())?;
    if !a.enforced() || (version >= 4 && !body.allow_auto_topic_creation) {
        return None;
    }
    let missing: Vec<String> = {
        let state = a.shared.state();
        if !state.configs.auto_create_topics() {
            return None;
        }
        named
            .iter()
            .filter_map(|topic| topic.name.as_deref())
            .filter(|name| !state.topics.contains_key(*name))
            .map(str::to_owned)
            .collect()
    };
    if missing.is_empty() || a.may(&Need::cluster(op::CREATE)) {
        return None;
    }
    let (mut refused_create, mut refused_describe) = (Vec::new(), Vec::new());
    for name in missing {
        if !a.may_topic(&name, op::DESCRIBE) {
            refused_describe.push(name);
        } else if !a.may_topic(&name, op::CREATE) {
            refused_create.push(name);
        }
    }
    if refused_create.is_empty() && refused_describe.is_empty() {
        return None;
    }
    let mut kept = body.clone();
    kept.topics = Some(
        named
            .iter()
            .filter(|topic| {
                topic.name.as_deref().is_none_or(|name| {
                    !refused_create.iter().any(|r| r == name)
                        && !refused_describe.iter().any(|r| r == name)
                })
            })
            .cloned()
            .collect(),
    );
    // The authorized operations, as the Metadata arm of `split` fills them.
    let include_operations = body.include_topic_authorized_operations && version >= 8;
    let include_cluster = body.include_cluster_authorized_operations && (8..=10).contains(&version);
    Some(Verdict::Handle {
        request: Some(Request::Metadata(kept)),
        finish: Some(Box::new(move |a, response| {
            if let Response::Metadata(answer) = response {
                if include_cluster {
                    answer.cluster_authorized_operations = a.cluster_operations();
                }
                if include_operations {
                    for topic in &mut answer.topics {
                        if topic.error_code != TOPIC_DENIED.code() {
                            if let Some(name) = topic.name.as_deref() {
                                topic.topic_authorized_operations =
                                    a.operations(resource_type::TOPIC, name);
                            }
                        }
                    }
                }
                answer
                    .topics
                    .extend(
                        refused_create
                            .into_iter()
                            .chain(refused_describe)
                            .map(|name| {
                                metadata_response::MetadataResponseTopic::default()
                                    .with_error_code(TOPIC_DENIED.code())
                                    .with_name(Some(name.into()))
                            }),
                    );
            }
            false
        })),
    })
}

/// Kafka's message (`Errors.message()`) of an authorization error.
fn error_message(error: ErrorCode) -> &'static str {
    match error {
        TOPIC_DENIED => TOPIC_DENIED_MESSAGE,
        ErrorCode::GROUP_AUTHORIZATION_FAILED => "Group authorization failed.",
        // A config resource is a topic, a group or the cluster's (broker, client metrics).
        _ => "Cluster authorization failed.",
    }
}

/// Kafka's message for a topic it refuses to create.
const AUTHORIZATION_FAILED: &str = "Authorization failed.";

/// Kafka's message for TOPIC_AUTHORIZATION_FAILED (a topic it refuses to delete).
const TOPIC_DENIED_MESSAGE: &str = "Topic authorization failed.";

/// `first` before what `list` holds (Kafka answers the denied entries of some APIs first).
fn prepend<T>(list: &mut Vec<T>, mut first: Vec<T>) {
    first.append(list);
    *list = first;
}

/// A DescribeTopicPartitions answer for a topic that may not be described: refused, with
/// no id and no partitions (existing or not).
fn topic_partitions_denied(
    name: &str,
) -> describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic {
    describe_topic_partitions_response::DescribeTopicPartitionsResponseTopic::default()
        .with_name(Some(name.into()))
        .with_error_code(TOPIC_DENIED.code())
}

/// A config resource's need (see [`super::config_need`]).
fn config_need(config_resource_type: i8, name: &str, operation: i8) -> Need {
    super::config_need(config_resource_type, name, operation)
}

/// An OffsetFetch answer as Kafka's authorizer leaves it: a group not describable refused
/// (v8+; v0-v7 refuse the request whole before), a topic not describable refused per
/// partition, or left out of an answer for every topic.
fn limit_offset_fetch(
    a: &Authority<'_>,
    answer: &mut OffsetFetchResponse,
    every_topic_v7: bool,
    every_topic: &[bool],
) {
    if every_topic_v7 {
        answer.topics.retain(|t| a.may_topic(&t.name, op::DESCRIBE));
    }
    for topic in &mut answer.topics {
        if !a.may_topic(&topic.name, op::DESCRIBE) {
            for partition in &mut topic.partitions {
                *partition = offset_fetch_response::OffsetFetchResponsePartition::default()
                    .with_partition_index(partition.partition_index)
                    .with_committed_offset(-1)
                    .with_error_code(TOPIC_DENIED.code());
            }
        }
    }
    for (index, group) in answer.groups.iter_mut().enumerate() {
        if !a.may(&Need::group(&group.group_id, op::DESCRIBE)) {
            *group = offset_fetch_response::OffsetFetchResponseGroup::default()
                .with_group_id(std::mem::take(&mut group.group_id))
                .with_error_code(GROUP_DENIED.code());
            continue;
        }
        let name_of = |t: &offset_fetch_response::OffsetFetchResponseTopics| {
            a.topic_name(&t.name, t.topic_id)
        };
        if every_topic.get(index).copied().unwrap_or(false) {
            group
                .topics
                .retain(|t| name_of(t).is_none_or(|n| a.may_topic(&n, op::DESCRIBE)));
        }
        for topic in &mut group.topics {
            if name_of(topic).is_some_and(|n| !a.may_topic(&n, op::DESCRIBE)) {
                for partition in &mut topic.partitions {
                    *partition = offset_fetch_response::OffsetFetchResponsePartitions::default()
                        .with_partition_index(partition.partition_index)
                        .with_committed_offset(-1)
                        .with_error_code(TOPIC_DENIED.code());
                }
            }
        }
    }
}
