//! The one place ACLs are enforced, consulted by [`dispatch`](crate::dispatch) in front of
//! every handler: what a request needs (an operation on each topic, group, transactional id
//! or the cluster it names, as Kafka's `KafkaApis` asks its authorizer) and whether the
//! connection's principal has it, as Kafka's `StandardAuthorizer` decides: super users may
//! do anything; a DENY that matches wins; else an ALLOW for the operation (or ALL, and for
//! DESCRIBE any of READ, WRITE, DELETE, ALTER; for DESCRIBE_CONFIGS, ALTER_CONFIGS); no ACL
//! at all denies (`allow.everyone.if.no.acl.found=false`). An ACL applies when its pattern
//! does (LITERAL: the name or `*`; PREFIXED: a prefix of the name), its principal is the
//! caller or `User:*`, and its host is the caller's address or `*`.
//!
//! Off when SASL is off (every request allowed, as a cluster without an authorizer). Two
//! steps, as Kafka takes them: [`needs`] is what a request needs as a whole (the group of
//! an OffsetCommit, the transactional id of an EndTxn, the cluster for the ACL APIs): one
//! denied and the request is refused whole, with that error in every error field of the
//! response (TOPIC_, GROUP_, CLUSTER_ or TRANSACTIONAL_ID_AUTHORIZATION_FAILED). Then
//! [`split`] (`per_entry`): the entries the principal may not touch are answered with their
//! error beside the others' answers, lists are filtered, and authorized operations computed.

use crate::acls::{operation, pattern_type, permission, resource_type, AclBinding, Acls};
use crate::acls::{CLUSTER_NAME, WILDCARD};
use crate::state::State;
use kafka_codec::{ErrorCode, Request};
use std::net::IpAddr;

mod per_entry;
pub use per_entry::{split, Authority, Finish, Verdict, NOT_ASKED};

/// `AclOperation` codes the requests need.
mod op {
    pub const READ: i8 = 3;
    pub const WRITE: i8 = 4;
    pub const CREATE: i8 = 5;
    pub const DELETE: i8 = 6;
    pub const ALTER: i8 = 7;
    pub const DESCRIBE: i8 = 8;
    pub const CLUSTER_ACTION: i8 = 9;
    pub const DESCRIBE_CONFIGS: i8 = 10;
    pub const ALTER_CONFIGS: i8 = 11;
    pub const IDEMPOTENT_WRITE: i8 = 12;
}

/// One thing a request needs: an operation on a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub resource_type: i8,
    pub name: String,
    pub operation: i8,
}

impl Need {
    fn topic(name: &str, operation: i8) -> Need {
        Need {
            resource_type: resource_type::TOPIC,
            name: name.to_owned(),
            operation,
        }
    }

    fn group(name: &str, operation: i8) -> Need {
        Need {
            resource_type: resource_type::GROUP,
            name: name.to_owned(),
            operation,
        }
    }

    fn transactional_id(name: &str, operation: i8) -> Need {
        Need {
            resource_type: resource_type::TRANSACTIONAL_ID,
            name: name.to_owned(),
            operation,
        }
    }

    fn cluster(operation: i8) -> Need {
        Need {
            resource_type: resource_type::CLUSTER,
            name: CLUSTER_NAME.to_owned(),
            operation,
        }
    }

    /// The error Kafka gives when this is denied.
    pub fn denied(&self) -> ErrorCode {
        match self.resource_type {
            resource_type::TOPIC => ErrorCode::TOPIC_AUTHORIZATION_FAILED,
            resource_type::GROUP => ErrorCode::GROUP_AUTHORIZATION_FAILED,
            resource_type::TRANSACTIONAL_ID => ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            _ => ErrorCode::CLUSTER_AUTHORIZATION_FAILED,
        }
    }
}

/// Whether `principal` at `host` may do `need`, with `super_users` allowed everything.
pub fn allowed(
    acls: &Acls,
    super_users: &[String],
    principal: &str,
    host: IpAddr,
    need: &Need,
) -> bool {
    if super_users.iter().any(|user| user == principal) {
        return true;
    }
    let host = host.to_string();
    let applies = |acl: &&AclBinding| {
        acl.resource_type == need.resource_type
            && match acl.pattern_type {
                pattern_type::LITERAL => {
                    acl.resource_name == need.name || acl.resource_name == WILDCARD
                }
                pattern_type::PREFIXED => need.name.starts_with(&acl.resource_name),
                _ => false,
            }
            && (acl.principal == principal || acl.principal == "User:*")
            && (acl.host == host || acl.host == WILDCARD)
    };
    let grants =
        |acl: &AclBinding, wanted: i8| acl.operation == wanted || acl.operation == operation::ALL;
    let applying: Vec<&AclBinding> = acls.all().filter(applies).collect();
    if applying
        .iter()
        .any(|acl| acl.permission == permission::DENY && grants(acl, need.operation))
    {
        return false;
    }
    // DESCRIBE is implied by READ, WRITE, DELETE and ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS.
    let implied: &[i8] = match need.operation {
        op::DESCRIBE => &[op::DESCRIBE, op::READ, op::WRITE, op::DELETE, op::ALTER],
        op::DESCRIBE_CONFIGS => &[op::DESCRIBE_CONFIGS, op::ALTER_CONFIGS],
        _ => std::slice::from_ref(&need.operation),
    };
    applying.iter().any(|acl| {
        acl.permission == permission::ALLOW && implied.iter().any(|wanted| grants(acl, *wanted))
    })
}

/// What `request` needs, as Kafka's `KafkaApis` authorizes it (the APIs served here);
/// topics named by id are looked up in `state` (an unknown id needs nothing: the handler
/// answers it UNKNOWN_TOPIC_ID).
pub fn needs(request: &Request, state: &State) -> Vec<Need> {
    let by_id = |id| state.topic_by_id(id).map(|(name, _)| name.clone());
    let topic_named = |name: &str, id, operation| {
        let name = if name.is_empty() {
            by_id(id)
        } else {
            Some(name.to_owned())
        };
        name.map(|name| Need::topic(&name, operation))
    };
    match request {
        // The topics: per entry (`per_entry::split`).
        // Its transactional id only for transactional records (Kafka ignores it otherwise).
        Request::Produce(body) if crate::handlers::has_transactional_records(body) => body
            .transactional_id
            .iter()
            .map(|id| Need::transactional_id(id, op::WRITE))
            .collect(),
        Request::OffsetForLeaderEpoch(body) => body
            .topics
            .iter()
            .map(|t| Need::topic(&t.topic, op::DESCRIBE))
            .collect(),
        // v0-v3's one key; v4+'s keys are per entry.
        Request::FindCoordinator(body) if body.coordinator_keys.is_empty() => {
            match coordinator_need(body.key_type, &body.key) {
                Some(need) => vec![need],
                None => Vec::new(),
            }
        }
        Request::JoinGroup(body) => vec![Need::group(&body.group_id, op::READ)],
        Request::SyncGroup(body) => vec![Need::group(&body.group_id, op::READ)],
        Request::Heartbeat(body) => vec![Need::group(&body.group_id, op::READ)],
        Request::LeaveGroup(body) => vec![Need::group(&body.group_id, op::READ)],
        Request::OffsetCommit(body) => vec![Need::group(&body.group_id, op::READ)],
        // v0-v7's one group; v8+'s groups are per entry.
        Request::OffsetFetch(body) if body.groups.is_empty() => {
            vec![Need::group(&body.group_id, op::DESCRIBE)]
        }
        Request::OffsetDelete(body) => vec![Need::group(&body.group_id, op::DELETE)],
        Request::InitProducerId(body) => match &body.transactional_id {
            Some(id) => vec![Need::transactional_id(id, op::WRITE)],
            None => vec![Need::cluster(op::IDEMPOTENT_WRITE)],
        },
        // v4+ is a broker's verification, a cluster action; v0-v3 a producer's.
        Request::AddPartitionsToTxn(body) if !body.transactions.is_empty() => {
            vec![Need::cluster(op::CLUSTER_ACTION)]
        }
        Request::AddPartitionsToTxn(body) => vec![Need::transactional_id(
            &body.v3_and_below_transactional_id,
            op::WRITE,
        )],
        Request::AddOffsetsToTxn(body) => vec![
            Need::transactional_id(&body.transactional_id, op::WRITE),
            Need::group(&body.group_id, op::READ),
        ],
        Request::EndTxn(body) => vec![Need::transactional_id(&body.transactional_id, op::WRITE)],
        Request::TxnOffsetCommit(body) => vec![
            Need::transactional_id(&body.transactional_id, op::WRITE),
            Need::group(&body.group_id, op::READ),
        ],
        Request::ConsumerGroupHeartbeat(body) => {
            member_needs(&body.group_id, body.subscribed_topic_names.iter().flatten())
        }
        Request::ShareGroupHeartbeat(body) => {
            member_needs(&body.group_id, body.subscribed_topic_names.iter().flatten())
        }
        Request::ShareGroupDescribe(body) => groups_described(&body.group_ids),
        Request::StreamsGroupTopologyDescriptionUpdate(body) => {
            vec![Need::group(&body.group_id, op::READ)]
        }
        Request::ShareFetch(body) => body
            .group_id
            .iter()
            .map(|g| Need::group(g, op::READ))
            .chain(
                body.topics
                    .iter()
                    .filter_map(|t| topic_named("", t.topic_id, op::READ)),
            )
            .collect(),
        Request::ShareAcknowledge(body) => body
            .group_id
            .iter()
            .map(|g| Need::group(g, op::READ))
            .chain(
                body.topics
                    .iter()
                    .filter_map(|t| topic_named("", t.topic_id, op::READ)),
            )
            .collect(),
        // As Kafka's KafkaApis: DESCRIBE on the group and the topics to describe offsets;
        // READ (altering) or DELETE (deleting) on the group and READ on the topics.
        Request::DescribeShareGroupOffsets(body) => body
            .groups
            .iter()
            .flat_map(|group| {
                std::iter::once(Need::group(&group.group_id, op::DESCRIBE)).chain(
                    group
                        .topics
                        .iter()
                        .flatten()
                        .map(|t| Need::topic(&t.topic_name, op::DESCRIBE)),
                )
            })
            .collect(),
        Request::AlterShareGroupOffsets(body) => {
            std::iter::once(Need::group(&body.group_id, op::READ))
                .chain(
                    body.topics
                        .iter()
                        .map(|t| Need::topic(&t.topic_name, op::READ)),
                )
                .collect()
        }
        Request::DeleteShareGroupOffsets(body) => {
            std::iter::once(Need::group(&body.group_id, op::DELETE))
                .chain(
                    body.topics
                        .iter()
                        .map(|t| Need::topic(&t.topic_name, op::READ)),
                )
                .collect()
        }
        // DescribeCluster needs nothing (its authorized operations: `per_entry`).
        Request::DescribeLogDirs(_) => vec![Need::cluster(op::DESCRIBE)],
        Request::AlterReplicaLogDirs(_) => vec![Need::cluster(op::ALTER)],
        Request::DescribeAcls(_) | Request::DescribeUserScramCredentials(_) => {
            vec![Need::cluster(op::DESCRIBE)]
        }
        Request::CreateAcls(_) | Request::DeleteAcls(_) | Request::AlterUserScramCredentials(_) => {
            vec![Need::cluster(op::ALTER)]
        }
        Request::ElectLeaders(_) => vec![Need::cluster(op::ALTER)],
        Request::AlterPartitionReassignments(_) => vec![Need::cluster(op::ALTER)],
        Request::ListPartitionReassignments(_) => vec![Need::cluster(op::DESCRIBE)],
        Request::DescribeClientQuotas(_) => vec![Need::cluster(op::DESCRIBE_CONFIGS)],
        Request::ListConfigResources(_) => vec![Need::cluster(op::DESCRIBE_CONFIGS)],
        Request::AlterClientQuotas(_) => vec![Need::cluster(op::ALTER_CONFIGS)],
        // Forwarded to the controller, whose `ControllerApis` asks for ALTER on the cluster.
        // Kafka's `ControllerApis`: DESCRIBE on the cluster for DescribeQuorum, ALTER for a
        // voter change.
        Request::DescribeQuorum(_) => vec![Need::cluster(op::DESCRIBE)],
        Request::AddRaftVoter(_) | Request::RemoveRaftVoter(_) => vec![Need::cluster(op::ALTER)],
        Request::UpdateFeatures(_)
        | Request::UnregisterBroker(_)
        | Request::UnregisterController(_) => {
            vec![Need::cluster(op::ALTER)]
        }
        // GetTelemetrySubscriptions and PushTelemetry need nothing: Kafka's `KafkaApis`
        // hands them to its `ClientMetricsManager` without asking the authorizer (KIP-714).
        _ => Vec::new(),
    }
}

/// Kafka's message for CLUSTER_AUTHORIZATION_FAILED.
const CLUSTER_AUTHORIZATION_FAILED: &str = "Cluster authorization failed.";

/// The answer to a request refused whole for `denied`, where Kafka answers it otherwise
/// than with the error in every error field (`kafka_codec::error_response`):
/// DeleteShareGroupOffsets refused on its group carries GROUP_AUTHORIZATION_FAILED and
/// Kafka's message at the top level only, no topics (Kafka's
/// `DeleteShareGroupOffsetsRequest.getErrorResponse`); UpdateFeatures its error at the top
/// level, no results. `None`: the usual answer.
pub fn top_level_refusal(request: &Request, denied: &Need) -> Option<kafka_codec::Response> {
    match request {
        Request::DeleteShareGroupOffsets(_) if denied.resource_type == resource_type::GROUP => {
            Some(
                kafka_codec::messages::DeleteShareGroupOffsetsResponse::default()
                    .with_error_code(ErrorCode::GROUP_AUTHORIZATION_FAILED.code())
                    .with_error_message(Some("Group authorization failed.".into()))
                    .into(),
            )
        }
        // `getErrorResponse`: the top-level error with its exception's (default) message.
        Request::StreamsGroupTopologyDescriptionUpdate(_) => Some(
            kafka_codec::messages::StreamsGroupTopologyDescriptionUpdateResponse::default()
                .with_error_code(ErrorCode::GROUP_AUTHORIZATION_FAILED.code())
                .with_error_message(Some("Group authorization failed.".into()))
                .into(),
        ),
        // Kafka's `ControllerApis` (on a combined node, or the controller a broker forwards
        // to): the top-level error with its exception's (default) message, no topics, for
        // DescribeQuorum; the same message for a voter change (recorded:
        // tests/data/combined-quorum-acl-kafka-4.4.txt).
        Request::DescribeQuorum(_) => Some(
            kafka_codec::messages::DescribeQuorumResponse::default()
                .with_error_code(denied.denied().code())
                .with_error_message(Some(CLUSTER_AUTHORIZATION_FAILED.into()))
                .into(),
        ),
        Request::AddRaftVoter(_) => Some(
            kafka_codec::messages::AddRaftVoterResponse::default()
                .with_error_code(denied.denied().code())
                .with_error_message(Some(CLUSTER_AUTHORIZATION_FAILED.into()))
                .into(),
        ),
        Request::RemoveRaftVoter(_) => Some(
            kafka_codec::messages::RemoveRaftVoterResponse::default()
                .with_error_code(denied.denied().code())
                .with_error_message(Some(CLUSTER_AUTHORIZATION_FAILED.into()))
                .into(),
        ),
        // `UpdateFeaturesResponse.createWithErrors`: the top-level error, no results. Kafka's
        // message names its own request object ("Request … needs ALTER permission."),
        // nothing a client can read; none here.
        Request::UpdateFeatures(_) => Some(
            kafka_codec::messages::UpdateFeaturesResponse::default()
                .with_error_code(denied.denied().code())
                .with_error_message(None)
                .into(),
        ),
        _ => None,
    }
}

/// What Kafka's own error response of `request` (its `getErrorResponse`) sets beyond the
/// error in every error field, for a request refused whole: InitProducerId's producer epoch
/// -1, JoinGroup's null protocol name (v7+), and the ACL APIs' (Describe, Create, Delete)
/// and UnregisterController's and UnregisterBroker's message that the request
/// "needs" the operation denied (Kafka prints its request object there; the API and version
/// stand for it here). Compared with a live 4.4 broker by `tests/acl_refusals.rs`.
pub fn finish_refusal(
    request: &Request,
    version: i16,
    denied: &Need,
    response: &mut kafka_codec::Response,
) {
    use kafka_codec::Response;
    let needs = || {
        let operation = match denied.operation {
            op::ALTER => "ALTER",
            op::DESCRIBE => "DESCRIBE",
            _ => return None,
        };
        let api = request.api_key();
        Some(format!(
            "Request Request(apiKey={api}, apiVersion={version}) needs {operation} permission."
        ))
    };
    match response {
        Response::InitProducerId(answer) => answer.producer_epoch = -1,
        Response::JoinGroup(answer) if version >= 7 => answer.protocol_name = None,
        Response::DescribeAcls(answer) => answer.error_message = needs().map(Into::into),
        // Refused by the controller it is forwarded to, with the same message (both
        // recorded: tests/data/unregister-{controller-acl,broker}-kafka-4.4.txt).
        Response::UnregisterController(answer) => answer.error_message = needs().map(Into::into),
        Response::UnregisterBroker(answer) => answer.error_message = needs().map(Into::into),
        Response::CreateAcls(answer) => {
            for result in &mut answer.results {
                result.error_message = needs().map(Into::into);
            }
        }
        Response::DeleteAcls(answer) => {
            for result in &mut answer.filter_results {
                result.error_message = needs().map(Into::into);
            }
        }
        _ => {}
    }
}

/// Kafka's `authorizeByResourceType` (`StandardAuthorizer`): whether `principal` at `host`
/// may do `wanted` on some resource of `resource_type`: a super user may; else an ALLOW
/// (the operation or ALL) whose pattern no DENY covers (a DENY of the literal `*`, of the
/// same literal name, or of a prefix of the name).
pub fn allowed_on_some(
    acls: &Acls,
    super_users: &[String],
    principal: &str,
    host: IpAddr,
    resource_type: i8,
    wanted: i8,
) -> bool {
    if super_users.iter().any(|user| user == principal) {
        return true;
    }
    let host = host.to_string();
    let applying: Vec<&AclBinding> = acls
        .all()
        .filter(|acl| {
            acl.resource_type == resource_type
                && (acl.principal == principal || acl.principal == "User:*")
                && (acl.host == host || acl.host == WILDCARD)
                && (acl.operation == wanted || acl.operation == operation::ALL)
        })
        .collect();
    let denies = |acl: &AclBinding| acl.permission == permission::DENY;
    if applying.iter().any(|acl| {
        denies(acl) && acl.pattern_type == pattern_type::LITERAL && acl.resource_name == WILDCARD
    }) {
        return false;
    }
    let covered = |name: &str, literal: bool| {
        applying.iter().any(|acl| {
            denies(acl)
                && match acl.pattern_type {
                    pattern_type::PREFIXED => name.starts_with(acl.resource_name.as_str()),
                    pattern_type::LITERAL => literal && acl.resource_name == name,
                    _ => false,
                }
        })
    };
    applying.iter().any(|acl| {
        acl.permission == permission::ALLOW
            && match acl.pattern_type {
                pattern_type::LITERAL => !covered(&acl.resource_name, true),
                pattern_type::PREFIXED => !covered(&acl.resource_name, false),
                _ => false,
            }
    })
}

/// A KIP-848 or share group member's heartbeat: READ on the group, DESCRIBE on the topics
/// it subscribes to.
fn member_needs(group: &str, subscribed: impl Iterator<Item = impl AsRef<str>>) -> Vec<Need> {
    std::iter::once(Need::group(group, op::READ))
        .chain(subscribed.map(|name| Need::topic(name.as_ref(), op::DESCRIBE)))
        .collect()
}

/// A group describe: DESCRIBE on each group.
fn groups_described(groups: &[impl AsRef<str>]) -> Vec<Need> {
    groups
        .iter()
        .map(|g| Need::group(g.as_ref(), op::DESCRIBE))
        .collect()
}

/// What finding the coordinator of `key` needs: DESCRIBE on the group or transactional id
/// (other key types are refused by the handler).
fn coordinator_need(key_type: i8, key: &str) -> Option<Need> {
    match key_type {
        0 => Some(Need::group(key, op::DESCRIBE)),
        1 => Some(Need::transactional_id(key, op::DESCRIBE)),
        _ => None,
    }
}

/// A config resource's need: a topic's own (type 2), a group's own (type 32), else the
/// cluster's.
fn config_need(config_resource_type: i8, name: &str, operation: i8) -> Need {
    const TOPIC_CONFIGS: i8 = 2;
    const GROUP_CONFIGS: i8 = 32;
    if config_resource_type == TOPIC_CONFIGS {
        Need::topic(name, operation)
    } else if config_resource_type == GROUP_CONFIGS {
        Need::group(name, operation)
    } else {
        Need::cluster(operation)
    }
}

/// A Metadata answer as Kafka's authorizer leaves it: the topics `principal` may not
/// describe are left out of an answer for every topic, and a topic named in the request is
/// TOPIC_AUTHORIZATION_FAILED with no partitions and no id (whether it exists or not).
pub fn limit_metadata(
    acls: &Acls,
    super_users: &[String],
    principal: &str,
    host: IpAddr,
    every_topic: bool,
    answer: &mut kafka_codec::messages::MetadataResponse,
) {
    let describable = |name: &str| {
        allowed(
            acls,
            super_users,
            principal,
            host,
            &Need::topic(name, op::DESCRIBE),
        )
    };
    if every_topic {
        answer
            .topics
            .retain(|topic| topic.name.as_deref().is_none_or(describable));
        return;
    }
    for topic in &mut answer.topics {
        if topic.name.as_deref().is_some_and(|name| !describable(name)) {
            topic.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED.code();
            topic.partitions.clear();
            topic.topic_id = Default::default();
            topic.is_internal = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(name: &str, pattern: i8, principal: &str, operation: i8, permission: i8) -> AclBinding {
        AclBinding {
            resource_type: resource_type::TOPIC,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: principal.into(),
            host: "*".into(),
            operation,
            permission,
        }
    }

    #[test]
    fn deny_wins_allow_implies_describe_and_nothing_denies() {
        let host: IpAddr = [127, 0, 0, 1].into();
        let mut acls = Acls::default();
        let read = |name: &str| Need::topic(name, op::READ);
        assert!(!allowed(&acls, &[], "User:alice", host, &read("t")));
        assert!(allowed(
            &acls,
            &["User:alice".into()],
            "User:alice",
            host,
            &read("t")
        ));
        acls.add(acl(
            "orders",
            pattern_type::PREFIXED,
            "User:alice",
            op::READ,
            permission::ALLOW,
        ));
        assert!(allowed(&acls, &[], "User:alice", host, &read("orders-eu")));
        assert!(allowed(
            &acls,
            &[],
            "User:alice",
            host,
            &Need::topic("orders-eu", op::DESCRIBE)
        ));
        assert!(!allowed(
            &acls,
            &[],
            "User:alice",
            host,
            &Need::topic("orders-eu", op::WRITE)
        ));
        assert!(!allowed(&acls, &[], "User:bob", host, &read("orders-eu")));
        acls.add(acl(
            "orders-eu",
            pattern_type::LITERAL,
            "User:*",
            operation::ALL,
            permission::DENY,
        ));
        assert!(!allowed(&acls, &[], "User:alice", host, &read("orders-eu")));
        assert!(allowed(&acls, &[], "User:alice", host, &read("orders-us")));
        acls.add(acl(
            "*",
            pattern_type::LITERAL,
            "User:bob",
            operation::ALL,
            permission::ALLOW,
        ));
        assert!(allowed(
            &acls,
            &[],
            "User:bob",
            host,
            &Need::topic("any", op::WRITE)
        ));
    }

    #[test]
    fn share_group_offsets_need_what_kafka_asks() {
        use kafka_codec::messages::{
            alter_share_group_offsets_request as alter,
            delete_share_group_offsets_request as delete,
            describe_share_group_offsets_request as describe,
        };
        let state = State::new(crate::state::Retention::default());
        let needs = |request: Request| -> Vec<(i8, String, i8)> {
            needs(&request, &state)
                .into_iter()
                .map(|n| (n.resource_type, n.name, n.operation))
                .collect()
        };
        let (group, topic) = (resource_type::GROUP, resource_type::TOPIC);
        let described = kafka_codec::messages::DescribeShareGroupOffsetsRequest::default()
            .with_groups(vec![
                describe::DescribeShareGroupOffsetsRequestGroup::default()
                    .with_group_id("g".into())
                    .with_topics(Some(vec![
                        describe::DescribeShareGroupOffsetsRequestTopic::default()
                            .with_topic_name("t".into()),
                    ])),
            ]);
        assert_eq!(
            needs(described.into()),
            [
                (group, "g".into(), op::DESCRIBE),
                (topic, "t".into(), op::DESCRIBE)
            ]
        );
        let altered = kafka_codec::messages::AlterShareGroupOffsetsRequest::default()
            .with_group_id("g".into())
            .with_topics(vec![
                alter::AlterShareGroupOffsetsRequestTopic::default().with_topic_name("t".into())
            ]);
        assert_eq!(
            needs(altered.into()),
            [(group, "g".into(), op::READ), (topic, "t".into(), op::READ)]
        );
        let deleted = kafka_codec::messages::DeleteShareGroupOffsetsRequest::default()
            .with_group_id("g".into())
            .with_topics(vec![
                delete::DeleteShareGroupOffsetsRequestTopic::default().with_topic_name("t".into())
            ]);
        assert_eq!(
            needs(deleted.into()),
            [
                (group, "g".into(), op::DELETE),
                (topic, "t".into(), op::READ)
            ]
        );
    }
}
