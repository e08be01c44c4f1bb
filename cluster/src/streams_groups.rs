//! KIP-1071 streams groups (StreamsGroupHeartbeat, StreamsGroupDescribe): Kafka Streams
//! members send their topology; the coordinator checks it against the cluster's topics,
//! asks for the internal topics it lacks (the broker then creates them), cuts it into tasks
//! and assigns them itself (the [`sticky`](crate::streams_assignor) assignor), each member
//! reconciling towards its target as a KIP-848 consumer does
//! ([`crate::consumer_groups::next_step`], shared with consumer groups).
//!
//! A group lives in [`Groups`](crate::groups::Groups) beside the classic and consumer ones,
//! as [`Group::streams`](crate::groups::Group::streams): one map of groups, one coordinator
//! rule, one store of committed offsets.
//!
//! Facts (request checks and their messages, status codes and details, the group states,
//! the topic configuration rules) are Kafka 4.4's `GroupCoordinatorService`,
//! `GroupMetadataManager.streamsGroupHeartbeat` and `streams.topics.InternalTopicManager`.
//! Not modelled: the assignment interval (`streams.assignment.interval.ms`: Kafka may batch
//! assignments; here each is computed at once), warm-up tasks (never assigned here), task
//! offsets and lags, topology descriptions (StreamsGroupTopologyDescriptionUpdate, key 93,
//! refused as a Kafka 4.4 broker without a topology description plugin refuses it: see its
//! handler), copartition enforcement, source topic regexes.

use crate::consumer_groups::{next_step, revoked, Owned, Step, STATIC_LEAVE_EPOCH};
use crate::group_members::{self, Membership};
use crate::streams_assignor;
use kafka_codec::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Kafka's `group.streams.session.timeout.ms` default.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// Kafka's `group.streams.heartbeat.interval.ms` default.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);
/// Kafka's `group.streams.initial.rebalance.delay.ms` default.
pub const INITIAL_REBALANCE_DELAY: Duration = Duration::from_secs(3);
/// Kafka's `group.streams.task.offset.interval.ms` default.
pub const TASK_OFFSET_INTERVAL: Duration = Duration::from_secs(60);
/// Kafka's `group.streams.acceptable.recovery.lag` default.
pub const ACCEPTABLE_RECOVERY_LAG: i64 = 10_000;
/// The assignor (Kafka's `group.streams.assignors` default).
pub const ASSIGNOR: &str = "sticky";

/// Tasks by subtopology id (each task a partition of its subtopology).
pub type Tasks = Owned<String>;

/// A heartbeat status (Kafka's `StreamsGroupHeartbeatResponse.Status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// Its code.
    pub code: i8,
    /// Why.
    pub detail: String,
}

/// Kafka's status codes.
pub mod status {
    /// The member's topology epoch is behind the group's.
    pub const STALE_TOPOLOGY: i8 = 0;
    /// Source topics are missing.
    pub const MISSING_SOURCE_TOPICS: i8 = 1;
    /// Topics that should be copartitioned are not, or an internal topic has another count.
    pub const INCORRECTLY_PARTITIONED_TOPICS: i8 = 2;
    /// Internal topics are missing (the broker creates them).
    pub const MISSING_INTERNAL_TOPICS: i8 = 3;
    /// A member asked the whole application to shut down.
    pub const SHUTDOWN_APPLICATION: i8 = 4;
    /// The coordinator delayed the assignment.
    pub const ASSIGNMENT_DELAYED: i8 = 5;
}

/// Active, standby and warm-up tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskTuple {
    /// Active tasks.
    pub active: Tasks,
    /// Standby tasks.
    pub standby: Tasks,
    /// Warm-up tasks.
    pub warmup: Tasks,
}

impl TaskTuple {
    fn count(&self) -> usize {
        [&self.active, &self.standby, &self.warmup]
            .iter()
            .flat_map(|tasks| tasks.values())
            .map(BTreeSet::len)
            .sum()
    }
}

/// An internal or source topic as a topology names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// Its name.
    pub name: String,
    /// Its partitions (0: decided by the coordinator).
    pub partitions: i32,
    /// Its replication factor (0 or -1: the broker's default).
    pub replication_factor: i16,
    /// Its configs.
    pub configs: Vec<(String, String)>,
}

/// One subtopology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtopology {
    /// Its id.
    pub id: String,
    /// The topics it reads.
    pub source_topics: Vec<String>,
    /// The patterns it reads (not served: refused at the heartbeat).
    pub source_topic_regex: Vec<String>,
    /// Its state stores' changelog topics.
    pub changelog_topics: Vec<TopicInfo>,
    /// The repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// The repartition topics it reads.
    pub repartition_source_topics: Vec<TopicInfo>,
}

/// A member's topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Its epoch.
    pub epoch: i32,
    /// Its subtopologies.
    pub subtopologies: Vec<Subtopology>,
}

impl Topology {
    fn bytes(&self) -> usize {
        let info = |topics: &[TopicInfo]| {
            topics
                .iter()
                .map(|t| {
                    32 + t.name.len()
                        + t.configs
                            .iter()
                            .map(|(k, v)| k.len() + v.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
        };
        let names = |names: &[String]| names.iter().map(|n| 16 + n.len()).sum::<usize>();
        self.subtopologies
            .iter()
            .map(|s| {
                64 + s.id.len()
                    + names(&s.source_topics)
                    + names(&s.source_topic_regex)
                    + names(&s.repartition_sink_topics)
                    + info(&s.changelog_topics)
                    + info(&s.repartition_source_topics)
            })
            .sum()
    }
}

/// The topology as the cluster's topics configure it (Kafka's `ConfiguredTopology`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Configured {
    /// Tasks per subtopology, when the topology is ready (no error below).
    pub tasks: BTreeMap<String, i32>,
    /// What keeps it from being ready.
    pub error: Option<Status>,
    /// Internal topics to create, with their partition counts.
    pub to_create: Vec<TopicInfo>,
}

impl Configured {
    /// Whether tasks can be assigned.
    pub fn is_ready(&self) -> bool {
        self.error.is_none()
    }
}

/// Kafka's `summarizeTopics`: at most three names, then how many more.
fn summarize<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    let names: Vec<&String> = names.into_iter().collect();
    if names.is_empty() {
        return "<none>".into();
    }
    let shown: Vec<&str> = names.iter().take(3).map(|n| n.as_str()).collect();
    let more = if names.len() > 3 {
        format!(" and {} additional topics", names.len() - 3)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(","))
}

/// Configures `topology` against the cluster's topics (name to partition count), as
/// Kafka's `InternalTopicManager.configureTopics`: missing source topics first, then the
/// repartition topics' counts (from the subtopologies that write them), the changelog
/// topics' (one partition per task), and the internal topics missing or of another count.
pub fn configure(topology: &Topology, topics: &BTreeMap<String, i32>) -> Configured {
    let mut missing: BTreeSet<&String> = BTreeSet::new();
    for sub in &topology.subtopologies {
        missing.extend(
            sub.source_topics
                .iter()
                .filter(|t| !topics.contains_key(*t)),
        );
    }
    if !missing.is_empty() {
        return Configured {
            error: Some(Status {
                code: status::MISSING_SOURCE_TOPICS,
                detail: format!("Source topics {} are missing.", summarize(missing)),
            }),
            ..Configured::default()
        };
    }
    // Repartition topics: a count given, else the most tasks of a subtopology writing it;
    // repeated while counts are learnt (a chain of repartitions).
    let mut repartition: BTreeMap<&str, i32> = BTreeMap::new();
    for sub in &topology.subtopologies {
        for topic in &sub.repartition_source_topics {
            if topic.partitions > 0 {
                repartition.insert(&topic.name, topic.partitions);
            }
        }
    }
    let tasks_of = |sub: &Subtopology, repartition: &BTreeMap<&str, i32>| -> Option<i32> {
        let mut most = 0;
        for topic in &sub.source_topics {
            most = most.max(*topics.get(topic)?);
        }
        for topic in &sub.repartition_source_topics {
            most = most.max(*repartition.get(topic.name.as_str())?);
        }
        Some(most)
    };
    loop {
        let mut learnt = false;
        for sub in &topology.subtopologies {
            let Some(count) = tasks_of(sub, &repartition) else {
                continue;
            };
            for sink in &sub.repartition_sink_topics {
                let entry = repartition.entry(sink.as_str()).or_insert(0);
                if *entry < count {
                    *entry = count;
                    learnt = true;
                }
            }
        }
        if !learnt {
            break;
        }
    }
    let mut tasks = BTreeMap::new();
    let mut internal: Vec<TopicInfo> = Vec::new();
    for sub in &topology.subtopologies {
        let Some(count) = tasks_of(sub, &repartition).filter(|count| *count > 0) else {
            // Kafka's message when a repartition topic's count cannot be learnt.
            return Configured {
                error: Some(Status {
                    code: status::INCORRECTLY_PARTITIONED_TOPICS,
                    detail: "Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic.".into(),
                }),
                ..Configured::default()
            };
        };
        tasks.insert(sub.id.clone(), count);
        for topic in &sub.repartition_source_topics {
            internal.push(TopicInfo {
                partitions: repartition[topic.name.as_str()],
                ..topic.clone()
            });
        }
        for topic in &sub.changelog_topics {
            internal.push(TopicInfo {
                partitions: count,
                ..topic.clone()
            });
        }
    }
    internal.sort_by(|a, b| a.name.cmp(&b.name));
    internal.dedup_by(|a, b| a.name == b.name);
    for topic in &internal {
        if let Some(found) = topics.get(&topic.name) {
            if *found != topic.partitions {
                return Configured {
                    error: Some(Status {
                        code: status::INCORRECTLY_PARTITIONED_TOPICS,
                        detail: format!(
                            "Existing topic {} has different number of partitions: expected {}, found {}",
                            topic.name, topic.partitions, found
                        ),
                    }),
                    ..Configured::default()
                };
            }
        }
    }
    let to_create: Vec<TopicInfo> = internal
        .into_iter()
        .filter(|topic| !topics.contains_key(&topic.name))
        .collect();
    let error = (!to_create.is_empty()).then(|| Status {
        code: status::MISSING_INTERNAL_TOPICS,
        detail: format!(
            "Internal topics are missing: {}",
            summarize(to_create.iter().map(|t| &t.name))
        ),
    });
    Configured {
        tasks,
        error,
        to_create,
    }
}

/// Where a member is in reconciling (Kafka's streams `MemberState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// At the target epoch with its whole target.
    Stable,
    /// Must give up active tasks before it moves on.
    UnrevokedTasks,
    /// At the target epoch, waiting for tasks other members still hold.
    UnreleasedTasks,
}

/// One member of a streams group.
#[derive(Debug, Clone)]
pub struct StreamsMember {
    /// Who it is (its id chosen by the client), its epochs and deadlines
    /// ([`STATIC_LEAVE_EPOCH`] while a static member is away).
    pub membership: Membership,
    /// Where it is in reconciling.
    pub state: MemberState,
    /// The epoch of the topology it runs.
    pub topology_epoch: i32,
    /// Its process (members of one process share its state directory).
    pub process_id: String,
    /// Its interactive-query endpoint.
    pub user_endpoint: Option<(String, u16)>,
    /// Its client tags.
    pub client_tags: Vec<(String, String)>,
    /// What it owns now.
    pub assigned: TaskTuple,
    /// Active tasks it must give up.
    pub revoking: Tasks,
}

group_members::impl_member!(StreamsMember);

impl StreamsMember {
    fn bytes(&self) -> usize {
        160 + self.membership.bytes()
            + self.process_id.len()
            + self
                .user_endpoint
                .as_ref()
                .map_or(0, |(host, _)| host.len())
            + self
                .client_tags
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
            + 8 * self.assigned.count()
            + 8 * self.revoking.values().map(BTreeSet::len).sum::<usize>()
    }
}

/// A streams group.
#[derive(Debug, Clone, Default)]
pub struct StreamsGroup {
    /// The group epoch.
    pub epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The topology the first member sent.
    pub topology: Option<Topology>,
    /// The topology as last configured against the topics.
    pub configured: Configured,
    /// The partition counts of the topics the topology names, as last configured (a change
    /// moves the epoch on).
    topic_counts: BTreeMap<String, i32>,
    /// Members by id.
    pub members: BTreeMap<String, StreamsMember>,
    /// Each member's target.
    pub targets: BTreeMap<String, TaskTuple>,
    /// The epoch of the members' endpoints (moves on with any member's assignment).
    pub endpoint_epoch: i32,
    /// The member that asked the application to shut down.
    pub shutdown_requested_by: Option<String>,
    /// Until when the first assignment waits for more members.
    assignment_delayed_until: Option<Instant>,
    /// Standby replicas per active task (`streams.num.standby.replicas`).
    standby_replicas: usize,
}

/// A StreamsGroupHeartbeat, as read from the request.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat {
    /// The member id.
    pub member_id: String,
    /// The member epoch: 0 to join, -1 to leave, -2 for a static member leaving for now.
    pub member_epoch: i32,
    /// The epoch of the endpoints the member knows.
    pub endpoint_information_epoch: i32,
    /// Its `group.instance.id`.
    pub instance_id: Option<String>,
    /// Its rack (null: unchanged).
    pub rack_id: Option<String>,
    /// Its rebalance timeout (-1: unchanged).
    pub rebalance_timeout_ms: i32,
    /// Its topology (joining only).
    pub topology: Option<Topology>,
    /// What it owns (null: unchanged).
    pub active: Option<Tasks>,
    /// Its standby tasks (null: unchanged).
    pub standby: Option<Tasks>,
    /// Its warm-up tasks (null: unchanged).
    pub warmup: Option<Tasks>,
    /// Its process id (null: unchanged).
    pub process_id: Option<String>,
    /// Its endpoint (null: unchanged).
    pub user_endpoint: Option<(String, u16)>,
    /// Its client tags (null: unchanged).
    pub client_tags: Option<Vec<(String, String)>>,
    /// Whether it asks the whole application to shut down.
    pub shutdown_application: bool,
    /// The client id of the request.
    pub client_id: String,
    /// The peer's host.
    pub client_host: String,
}

/// A heartbeat's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeartbeatOutcome {
    /// The error.
    pub error: ErrorCode,
    /// Why, for an error.
    pub message: Option<String>,
    /// The member's id.
    pub member_id: String,
    /// Its epoch.
    pub member_epoch: i32,
    /// Its tasks, when they changed or it joined.
    pub assignment: Option<TaskTuple>,
    /// The statuses.
    pub statuses: Vec<Status>,
    /// The group's endpoint epoch.
    pub endpoint_epoch: i32,
    /// The members' endpoints and the partitions they hold, when the member's epoch of
    /// them is behind: (endpoint, active partitions, standby partitions) by topic.
    pub endpoints: Option<Vec<Endpoint>>,
    /// Internal topics the broker is to create.
    pub to_create: Vec<TopicInfo>,
}

/// A member's endpoint and the source partitions its tasks read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host and port.
    pub endpoint: (String, u16),
    /// Active partitions by topic.
    pub active: BTreeMap<String, BTreeSet<i32>>,
    /// Standby partitions by topic.
    pub standby: BTreeMap<String, BTreeSet<i32>>,
}

impl HeartbeatOutcome {
    /// An error answer.
    pub fn error(error: ErrorCode, message: impl Into<String>) -> Self {
        HeartbeatOutcome {
            error,
            message: Some(message.into()),
            ..HeartbeatOutcome::default()
        }
    }
}

/// The request checks of Kafka's `throwIfStreamsGroupHeartbeatRequestIsInvalid`, before any
/// state is looked at.
pub fn validate(request: &Heartbeat, group_id: &str) -> Result<(), Box<HeartbeatOutcome>> {
    let invalid = |message: &str| {
        Err(Box::new(HeartbeatOutcome::error(
            ErrorCode::INVALID_REQUEST,
            message,
        )))
    };
    if request.member_id.is_empty() {
        return invalid("MemberId can't be empty.");
    }
    if group_id.is_empty() {
        return invalid("GroupId can't be empty.");
    }
    if request.instance_id.as_deref() == Some("") {
        return invalid("InstanceId can't be empty.");
    }
    if request.rack_id.as_deref() == Some("") {
        return invalid("RackId can't be empty.");
    }
    let non_empty = |tasks: &Option<Tasks>| tasks.as_ref().is_none_or(|t| !t.is_empty());
    if request.member_epoch == 0 {
        if request.rebalance_timeout_ms == -1 {
            return invalid("RebalanceTimeoutMs must be provided in first request.");
        }
        if non_empty(&request.active) {
            return invalid("ActiveTasks must be empty when (re-)joining.");
        }
        if non_empty(&request.standby) {
            return invalid("StandbyTasks must be empty when (re-)joining.");
        }
        if non_empty(&request.warmup) {
            return invalid("WarmupTasks must be empty when (re-)joining.");
        }
        let Some(topology) = &request.topology else {
            return invalid("Topology must be non-null when (re-)joining.");
        };
        for sub in &topology.subtopologies {
            for changelog in &sub.changelog_topics {
                if changelog.partitions != 0 {
                    return Err(Box::new(HeartbeatOutcome::error(
                        ErrorCode::STREAMS_INVALID_TOPOLOGY,
                        format!(
                            "Changelog topic {} must have an undefined partition count, but it is set to {}.",
                            changelog.name, changelog.partitions
                        ),
                    )));
                }
            }
            if !sub.source_topic_regex.is_empty() {
                // Regex sources (resolved against the topics by Kafka) are not served:
                // refused rather than treated as no source.
                return Err(Box::new(HeartbeatOutcome::error(
                    ErrorCode::STREAMS_INVALID_TOPOLOGY,
                    "SourceTopicRegex is not served by this cluster.",
                )));
            }
        }
    } else if request.member_epoch == STATIC_LEAVE_EPOCH && request.instance_id.is_none() {
        return invalid("InstanceId can't be null.");
    } else if request.member_epoch < STATIC_LEAVE_EPOCH {
        return invalid(&format!(
            "MemberEpoch is {}, but must be greater than or equal to -2.",
            request.member_epoch
        ));
    }
    let given = [&request.active, &request.standby, &request.warmup]
        .iter()
        .filter(|t| t.is_some())
        .count();
    if given != 0 && given != 3 {
        return invalid("If one task-type is non-null, all must be non-null.");
    }
    if request.member_epoch != 0 && request.topology.is_some() {
        return invalid("Topology can only be provided when (re-)joining.");
    }
    Ok(())
}

/// What a group's settings are for one heartbeat.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The session timeout.
    pub session: Duration,
    /// The initial rebalance delay.
    pub initial_delay: Duration,
    /// Standby replicas per task.
    pub standby_replicas: usize,
}

impl StreamsGroup {
    /// Kafka's state names: `Empty`, `NotReady` (the topology is not configured: topics
    /// missing), `Assigning` (the target is behind the group epoch), `Reconciling` (a
    /// member is not at the target yet), `Stable`.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.topology.is_none() || !self.configured.is_ready() {
            "NotReady"
        } else if self.assignment_epoch < self.epoch {
            "Assigning"
        } else if self.members.values().any(|member| {
            member.epoch != self.assignment_epoch || member.state != MemberState::Stable
        }) {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    /// Bytes held, for the coordinator's cap.
    pub fn bytes(&self) -> usize {
        128 + self.topology.as_ref().map_or(0, Topology::bytes)
            + self
                .members
                .values()
                .map(StreamsMember::bytes)
                .sum::<usize>()
            + self
                .targets
                .values()
                .map(|t| 32 + 8 * t.count())
                .sum::<usize>()
    }

    /// The earliest session, revocation or assignment deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        group_members::next_deadline(&self.members)
            .into_iter()
            .chain(self.assignment_delayed_until)
            .min()
    }

    /// Does what is due: removes members whose session expired or who did not revoke in
    /// time, and assigns once the initial delay is over.
    pub fn expire(&mut self, now: Instant) {
        let due = group_members::due(&self.members, now);
        let delay_over = self.assignment_delayed_until.is_some_and(|at| at <= now);
        if delay_over {
            self.assignment_delayed_until = None;
        }
        for id in &due {
            self.members.remove(id);
            self.targets.remove(id);
        }
        // A delay over with nothing changed meanwhile still needs a new epoch for the
        // members to move to.
        if !due.is_empty() || (delay_over && self.epoch == self.assignment_epoch) {
            self.epoch += 1;
        }
        if !due.is_empty() || delay_over {
            self.assign(now);
        }
    }

    /// Removes member `id` as its session's end would. Whether it was a member.
    pub fn remove_member(&mut self, id: &str, now: Instant) -> bool {
        if self.members.remove(id).is_none() {
            return false;
        }
        self.targets.remove(id);
        self.epoch += 1;
        self.assign(now);
        true
    }

    /// Computes the target assignment at the group epoch (unless the initial delay holds
    /// it back): every member's tasks from the configured topology, empty when it is not
    /// ready.
    fn assign(&mut self, now: Instant) {
        // While the initial delay holds, the target is empty at the first epoch and stays
        // there (members leave epoch 0, as a client at epoch 0 is joining); once it is over
        // the tasks come at the group epoch then. As a Kafka 4.4 broker answers.
        if self.assignment_delayed_until.is_some_and(|at| at > now) {
            if self.assignment_epoch == 0 {
                self.targets.clear();
                self.assignment_epoch = self.epoch;
            }
            for id in self.members.keys() {
                self.targets.entry(id.clone()).or_default();
            }
            return;
        }
        let tasks = if self.configured.is_ready() {
            self.configured.tasks.clone()
        } else {
            BTreeMap::new()
        };
        let members: Vec<streams_assignor::Member<'_>> = self
            .members
            .values()
            .map(|member| streams_assignor::Member {
                id: &member.id,
                process_id: &member.process_id,
                previous: self.targets.get(&member.id),
            })
            .collect();
        let targets = streams_assignor::assign(&members, &tasks, self.standby_replicas);
        self.targets = targets;
        self.assignment_epoch = self.epoch;
    }

    /// Whether active task `index` of `subtopology` is owned or being revoked by a member
    /// other than `except`.
    fn held_by_other(&self, except: &str, subtopology: &String, index: i32) -> bool {
        group_members::held_by_other(&self.members, except, subtopology, index, |member| {
            [&member.assigned.active, &member.revoking]
        })
    }

    /// Moves member `id` towards its target (Kafka's streams `CurrentAssignmentBuilder`):
    /// active tasks are revoked before others are assigned, as for consumer groups; standby
    /// and warm-up tasks follow the target.
    fn reconcile(&mut self, id: &str, owned: Option<&Tasks>, now: Instant) {
        let Some(member) = self.members.get(id) else {
            return;
        };
        match member.state {
            MemberState::UnrevokedTasks if !revoked(&member.revoking, owned) => return,
            MemberState::Stable if member.epoch == self.assignment_epoch => return,
            _ => {}
        }
        let target = self.targets.get(id).cloned().unwrap_or_default();
        let member = &self.members[id];
        let step = next_step(&member.assigned.active, &target.active, |sub, index| {
            self.held_by_other(id, sub, index)
        });
        let assignment_epoch = self.assignment_epoch;
        let member = self.members.get_mut(id).expect("looked up above");
        match step {
            Step::Revoke { keep, revoke } => {
                member.assigned.active = keep;
                // Standby and warm-up tasks leave at once; new ones wait for the epoch.
                member.assigned.standby = intersect(&member.assigned.standby, &target.standby);
                member.assigned.warmup = intersect(&member.assigned.warmup, &target.warmup);
                member.revoking = revoke;
                member.state = MemberState::UnrevokedTasks;
                member.must_revoke(now);
            }
            Step::Advance {
                assigned,
                unreleased,
            } => {
                member.assigned = TaskTuple {
                    active: assigned,
                    standby: target.standby,
                    warmup: target.warmup,
                };
                member.revoking.clear();
                member.reconciled(assignment_epoch);
                member.state = if unreleased {
                    MemberState::UnreleasedTasks
                } else {
                    MemberState::Stable
                };
            }
        }
    }

    /// A member leaving: for good (-1: its tasks are reassigned) or, for a static member,
    /// for now (-2: it keeps them until it returns or its session expires).
    fn leave(
        &mut self,
        group_id: &str,
        request: &Heartbeat,
        session: Duration,
        now: Instant,
    ) -> HeartbeatOutcome {
        let found = match group_members::leaving(
            &self.members,
            &request.member_id,
            request.instance_id.as_deref(),
            || {
                format!(
                    "Member {} is not a member of group {group_id}.",
                    request.member_id
                )
            },
        ) {
            Ok(found) => found,
            Err((error, message)) => return HeartbeatOutcome::error(error, message),
        };
        if request.member_epoch == STATIC_LEAVE_EPOCH {
            let member = self.members.get_mut(&found).expect("found above");
            group_members::leave_for_now(member, session, now);
        } else {
            self.members.remove(&found);
            self.targets.remove(&found);
            self.epoch += 1;
            self.assign(now);
        }
        HeartbeatOutcome {
            member_id: found,
            member_epoch: request.member_epoch,
            endpoint_epoch: self.endpoint_epoch,
            ..HeartbeatOutcome::default()
        }
    }

    /// A StreamsGroupHeartbeat that [`validate`] accepted, `topics` being every topic of
    /// the cluster with its partition count.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        request: &Heartbeat,
        topics: &BTreeMap<String, i32>,
        settings: Settings,
        now: Instant,
    ) -> HeartbeatOutcome {
        if request.member_epoch < 0 {
            return self.leave(group_id, request, settings.session, now);
        }
        let mut statuses = Vec::new();
        let mut bump = false;
        let joining = request.member_epoch == 0;
        let was_empty = self.members.is_empty();
        let id = request.member_id.clone();
        if joining {
            let topology = request.topology.as_ref().expect("validated");
            match &self.topology {
                None => {
                    self.topology = Some(topology.clone());
                    bump = true;
                }
                Some(known) if topology.epoch < known.epoch => {}
                Some(known) if known != topology => {
                    return HeartbeatOutcome::error(
                        ErrorCode::INVALID_REQUEST,
                        "Topology updates are not supported yet.",
                    );
                }
                Some(_) => {}
            }
            let replaced = match group_members::static_rejoin(
                &self.members,
                &id,
                request.instance_id.as_deref(),
            ) {
                Ok(replaced) => replaced,
                Err((error, message)) => return HeartbeatOutcome::error(error, message),
            };
            match replaced {
                Some(old) => {
                    // A static member back: it takes over the old member's tasks and epoch.
                    self.members.remove(&old.id);
                    let target = self.targets.remove(&old.id).unwrap_or_default();
                    self.targets.insert(id.clone(), target);
                    let membership = group_members::take_over(&old.membership, id.clone());
                    self.members
                        .insert(id.clone(), StreamsMember { membership, ..old });
                }
                // A member joining again under its id (as a member still at epoch 0 does,
                // with its topology, while the first assignment waits) stays as it is,
                // Kafka's `getOrMaybeCreateDynamicStreamsGroupMember`.
                None if self.members.contains_key(&id) => {}
                None => {
                    self.members.insert(
                        id.clone(),
                        StreamsMember {
                            membership: Membership::new(
                                id.clone(),
                                request.instance_id.clone(),
                                now,
                            ),
                            state: MemberState::Stable,
                            topology_epoch: topology.epoch,
                            process_id: String::new(),
                            user_endpoint: None,
                            client_tags: Vec::new(),
                            assigned: TaskTuple::default(),
                            revoking: Tasks::new(),
                        },
                    );
                    bump = true;
                }
            }
        } else {
            let Some(member) = self.members.get(&id) else {
                return HeartbeatOutcome::error(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    format!("Member {id} is not a member of group {group_id}."),
                );
            };
            // Kafka's `throwIfStreamsGroupMemberEpochIsInvalid`: ahead of the member's
            // epoch, or behind it and not its previous one, is fenced.
            if let Err((error, message)) =
                group_members::check_epoch(member, request.member_epoch, true, "streams", false)
            {
                return HeartbeatOutcome::error(error, message);
            }
        }
        let member = self.members.get_mut(&id).expect("present above");
        member.heard(
            &request.client_id,
            &request.client_host,
            now + settings.session,
        );
        if request.rack_id.is_some() && request.rack_id != member.rack_id {
            member.rack_id.clone_from(&request.rack_id);
            bump = true;
        }
        member.set_rebalance_timeout(request.rebalance_timeout_ms);
        if let Some(topology) = &request.topology {
            member.topology_epoch = topology.epoch;
        }
        if let Some(process) = &request.process_id {
            if *process != member.process_id {
                member.process_id.clone_from(process);
                bump = true;
            }
        }
        if request.user_endpoint.is_some() && request.user_endpoint != member.user_endpoint {
            member.user_endpoint.clone_from(&request.user_endpoint);
            bump = true;
        }
        if let Some(tags) = &request.client_tags {
            if *tags != member.client_tags {
                member.client_tags.clone_from(tags);
                bump = true;
            }
        }
        let topology_epoch = member.topology_epoch;
        if let Some(group_topology) = &self.topology {
            if topology_epoch < group_topology.epoch {
                statuses.push(Status {
                    code: status::STALE_TOPOLOGY,
                    detail: format!(
                        "The member's topology epoch {topology_epoch} is behind the group's topology epoch {}.",
                        group_topology.epoch
                    ),
                });
            }
        }
        // The topics the topology names: a change (one created, deleted or grown) moves
        // the epoch on and configures the topology again.
        let topology = self.topology.clone().expect("set by the first join");
        let named: BTreeMap<String, i32> = topology
            .subtopologies
            .iter()
            .flat_map(|sub| {
                sub.source_topics
                    .iter()
                    .chain(sub.repartition_source_topics.iter().map(|t| &t.name))
                    .chain(sub.changelog_topics.iter().map(|t| &t.name))
            })
            .filter_map(|name| topics.get(name).map(|count| (name.clone(), *count)))
            .collect();
        if named != self.topic_counts || bump {
            if named != self.topic_counts {
                bump = true;
            }
            self.topic_counts = named;
            self.configured = configure(&topology, topics);
        }
        if settings.standby_replicas != self.standby_replicas {
            self.standby_replicas = settings.standby_replicas;
            bump = true;
        }
        if bump {
            self.epoch += 1;
            if was_empty && !settings.initial_delay.is_zero() {
                self.assignment_delayed_until = Some(now + settings.initial_delay);
            }
            self.assign(now);
        }
        if self.assignment_delayed_until.is_some_and(|at| at > now) {
            statuses.push(Status {
                code: status::ASSIGNMENT_DELAYED,
                detail: "Assignment delayed due to the configured initial rebalance delay.".into(),
            });
        }
        let before = self.members[&id].assigned.clone();
        self.reconcile(&id, request.active.as_ref(), now);
        if request.shutdown_application {
            self.shutdown_requested_by = Some(id.clone());
        }
        if self.shutdown_requested_by.is_some() {
            statuses.push(Status {
                code: status::SHUTDOWN_APPLICATION,
                detail: format!(
                    "Streams group {} requested shutdown.",
                    self.shutdown_requested_by.as_deref().unwrap_or_default()
                ),
            });
        }
        let member = &self.members[&id];
        let changed = member.assigned != before;
        // Kafka's endpoint epoch: moved on by a member with an endpoint whose tasks changed.
        if (joining || changed)
            && (!joining || member.assigned.count() > 0)
            && member.user_endpoint.is_some()
        {
            self.endpoint_epoch += 1;
        }
        let mut to_create = Vec::new();
        if let Some(error) = &self.configured.error {
            statuses.push(error.clone());
            to_create.clone_from(&self.configured.to_create);
        }
        let member = &self.members[&id];
        let endpoints = (request.endpoint_information_epoch != self.endpoint_epoch)
            .then(|| self.endpoints(&topology));
        HeartbeatOutcome {
            error: ErrorCode::NONE,
            message: None,
            member_id: id.clone(),
            member_epoch: member.epoch,
            assignment: (joining || changed).then(|| member.assigned.clone()),
            statuses,
            endpoint_epoch: self.endpoint_epoch,
            endpoints,
            to_create,
        }
    }

    /// Every member's endpoint with the source partitions its active and standby tasks
    /// read (Kafka's `EndpointToPartitionsManager`), for interactive queries.
    fn endpoints(&self, topology: &Topology) -> Vec<Endpoint> {
        let partitions = |tasks: &Tasks| {
            let mut by_topic: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
            for (sub_id, indexes) in tasks {
                let Some(sub) = topology.subtopologies.iter().find(|s| &s.id == sub_id) else {
                    continue;
                };
                for topic in sub
                    .source_topics
                    .iter()
                    .chain(sub.repartition_source_topics.iter().map(|t| &t.name))
                {
                    let count = self.topic_counts.get(topic).copied().unwrap_or(0);
                    by_topic
                        .entry(topic.clone())
                        .or_default()
                        .extend(indexes.iter().filter(|i| **i < count));
                }
            }
            by_topic
        };
        self.members
            .values()
            .filter_map(|member| {
                let endpoint = member.user_endpoint.clone()?;
                Some(Endpoint {
                    endpoint,
                    active: partitions(&member.assigned.active),
                    standby: partitions(&member.assigned.standby),
                })
            })
            .collect()
    }

    /// Whether an OffsetCommit of `member_id` at `epoch` may commit, as for consumer groups.
    pub fn validate_commit(&self, member_id: &str, epoch: i32) -> ErrorCode {
        group_members::validate_commit(&self.members, member_id, epoch)
    }

    /// A known member at its current epoch (OffsetFetch v9+ with a member id).
    pub fn validate_member_epoch(&self, member_id: &str, epoch: i32) -> ErrorCode {
        group_members::validate_member_epoch(&self.members, member_id, epoch)
    }
}

fn intersect(have: &Tasks, target: &Tasks) -> Tasks {
    have.iter()
        .filter_map(|(sub, set)| {
            let kept: BTreeSet<i32> = target
                .get(sub)
                .map(|t| set.intersection(t).copied().collect())
                .unwrap_or_default();
            (!kept.is_empty()).then(|| (sub.clone(), kept))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A count-by-key topology: subtopology "0" reads `input`, with one changelog topic.
    fn topology() -> Topology {
        Topology {
            epoch: 0,
            subtopologies: vec![Subtopology {
                id: "0".into(),
                source_topics: vec!["input".into()],
                source_topic_regex: Vec::new(),
                changelog_topics: vec![TopicInfo {
                    name: "app-store-changelog".into(),
                    partitions: 0,
                    replication_factor: 0,
                    configs: vec![("cleanup.policy".into(), "compact".into())],
                }],
                repartition_sink_topics: Vec::new(),
                repartition_source_topics: Vec::new(),
            }],
        }
    }

    fn join(member: &str, process: &str) -> Heartbeat {
        Heartbeat {
            member_id: member.into(),
            member_epoch: 0,
            rebalance_timeout_ms: 10_000,
            topology: Some(topology()),
            active: Some(Tasks::new()),
            standby: Some(Tasks::new()),
            warmup: Some(Tasks::new()),
            process_id: Some(process.into()),
            ..Heartbeat::default()
        }
    }

    fn beat(member: &str, epoch: i32, owned: &Tasks) -> Heartbeat {
        Heartbeat {
            member_id: member.into(),
            member_epoch: epoch,
            active: Some(owned.clone()),
            standby: Some(Tasks::new()),
            warmup: Some(Tasks::new()),
            ..Heartbeat::default()
        }
    }

    const SETTINGS: Settings = Settings {
        session: Duration::from_secs(45),
        initial_delay: Duration::ZERO,
        standby_replicas: 0,
    };

    fn topics(with_changelog: bool) -> BTreeMap<String, i32> {
        let mut topics = BTreeMap::from([("input".to_string(), 4)]);
        if with_changelog {
            topics.insert("app-store-changelog".into(), 4);
        }
        topics
    }

    fn active(outcome: &HeartbeatOutcome) -> Vec<i32> {
        outcome
            .assignment
            .as_ref()
            .expect("an assignment")
            .active
            .get("0")
            .map(|set| set.iter().copied().collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_topology_is_checked_against_the_topics() {
        let missing = configure(&topology(), &BTreeMap::new());
        assert_eq!(
            missing.error,
            Some(Status {
                code: status::MISSING_SOURCE_TOPICS,
                detail: "Source topics input are missing.".into()
            })
        );
        let internal = configure(&topology(), &topics(false));
        assert_eq!(
            internal.error.as_ref().map(|s| (s.code, s.detail.as_str())),
            Some((
                status::MISSING_INTERNAL_TOPICS,
                "Internal topics are missing: app-store-changelog"
            ))
        );
        assert_eq!(internal.to_create.len(), 1);
        assert_eq!(internal.to_create[0].partitions, 4, "one per task");
        let mut wrong = topics(true);
        wrong.insert("app-store-changelog".into(), 2);
        assert_eq!(
            configure(&topology(), &wrong).error.map(|s| s.detail),
            Some("Existing topic app-store-changelog has different number of partitions: expected 4, found 2".into())
        );
        let ready = configure(&topology(), &topics(true));
        assert!(ready.is_ready());
        assert_eq!(ready.tasks, BTreeMap::from([("0".to_string(), 4)]));
        assert_eq!(
            summarize(["a", "b", "c", "d", "e"].map(String::from).iter()),
            "a,b,c and 2 additional topics"
        );
    }

    #[test]
    fn requests_are_checked_as_kafka_checks_them() {
        let refused = |h: Heartbeat| validate(&h, "g").unwrap_err().message.unwrap();
        assert_eq!(
            refused(Heartbeat {
                member_id: String::new(),
                ..join("m", "p")
            }),
            "MemberId can't be empty."
        );
        assert_eq!(
            refused(Heartbeat {
                topology: None,
                ..join("m", "p")
            }),
            "Topology must be non-null when (re-)joining."
        );
        assert_eq!(
            refused(Heartbeat {
                active: None,
                ..join("m", "p")
            }),
            "ActiveTasks must be empty when (re-)joining."
        );
        assert_eq!(
            refused(Heartbeat {
                rebalance_timeout_ms: -1,
                ..join("m", "p")
            }),
            "RebalanceTimeoutMs must be provided in first request."
        );
        assert_eq!(
            refused(Heartbeat {
                standby: None,
                ..beat("m", 3, &Tasks::new())
            }),
            "If one task-type is non-null, all must be non-null."
        );
        assert_eq!(
            refused(beat("m", -3, &Tasks::new())),
            "MemberEpoch is -3, but must be greater than or equal to -2."
        );
        assert_eq!(
            refused(Heartbeat {
                topology: Some(topology()),
                ..beat("m", 2, &Tasks::new())
            }),
            "Topology can only be provided when (re-)joining."
        );
    }

    #[test]
    fn members_join_reconcile_leave_and_expire() {
        let now = crate::clock::now();
        let mut group = StreamsGroup::default();
        let topics = topics(true);
        // The first member gets every task.
        let a = group.heartbeat("g", &join("a", "pa"), &topics, SETTINGS, now);
        assert_eq!(a.error, ErrorCode::NONE);
        assert_eq!((a.member_epoch, active(&a)), (1, vec![0, 1, 2, 3]));
        assert_eq!(group.state_name(), "Stable");
        // A second joins: the target splits, but nothing moves until `a` revokes.
        let b = group.heartbeat("g", &join("b", "pb"), &topics, SETTINGS, now);
        assert_eq!((b.member_epoch, active(&b)), (2, vec![]));
        assert_eq!(group.state_name(), "Reconciling");
        let all = Tasks::from([("0".to_string(), BTreeSet::from([0, 1, 2, 3]))]);
        let a = group.heartbeat("g", &beat("a", 1, &all), &topics, SETTINGS, now);
        assert_eq!(a.member_epoch, 1, "still revoking: the old epoch");
        let kept = active(&a);
        assert_eq!(kept.len(), 2);
        // `b` learns nothing new while `a` still owns its tasks.
        let b = group.heartbeat("g", &beat("b", 2, &Tasks::new()), &topics, SETTINGS, now);
        assert_eq!(b.assignment, None);
        // `a` revokes; it moves to epoch 2 and `b` then gets the released tasks.
        let owned = Tasks::from([("0".to_string(), kept.iter().copied().collect())]);
        let a = group.heartbeat("g", &beat("a", 1, &owned), &topics, SETTINGS, now);
        assert_eq!(a.member_epoch, 2);
        let b = group.heartbeat("g", &beat("b", 2, &Tasks::new()), &topics, SETTINGS, now);
        let mut both = kept.clone();
        both.extend(active(&b));
        both.sort_unstable();
        assert_eq!(both, vec![0, 1, 2, 3], "every task once");
        assert_eq!(group.state_name(), "Stable");
        // Epoch checks.
        let fenced = group.heartbeat("g", &beat("a", 7, &owned), &topics, SETTINGS, now);
        assert_eq!(fenced.error, ErrorCode::FENCED_MEMBER_EPOCH);
        let unknown = group.heartbeat("g", &beat("x", 1, &owned), &topics, SETTINGS, now);
        assert_eq!(
            (unknown.error, unknown.message.as_deref()),
            (
                ErrorCode::UNKNOWN_MEMBER_ID,
                Some("Member x is not a member of group g.")
            )
        );
        assert_eq!(group.validate_commit("a", 2), ErrorCode::NONE);
        assert_eq!(group.validate_commit("a", 1), ErrorCode::STALE_MEMBER_EPOCH);
        // `a` leaves: `b` takes every task at the next epoch.
        let left = group.heartbeat(
            "g",
            &Heartbeat {
                member_epoch: -1,
                ..beat("a", -1, &Tasks::new())
            },
            &topics,
            SETTINGS,
            now,
        );
        assert_eq!((left.error, left.member_epoch), (ErrorCode::NONE, -1));
        let b_owned = Tasks::from([("0".to_string(), active(&b).into_iter().collect())]);
        let b = group.heartbeat("g", &beat("b", 2, &b_owned), &topics, SETTINGS, now);
        assert_eq!((b.member_epoch, active(&b)), (3, vec![0, 1, 2, 3]));
        // `b`'s session runs out: the group is empty.
        let later = now + Duration::from_secs(46);
        assert_eq!(group.next_deadline(), Some(now + Duration::from_secs(45)));
        group.expire(later);
        assert!(group.members.is_empty());
        assert_eq!(group.state_name(), "Empty");
    }

    #[test]
    fn the_first_assignment_waits_for_the_initial_delay() {
        let now = crate::clock::now();
        let settings = Settings {
            initial_delay: Duration::from_secs(3),
            ..SETTINGS
        };
        let mut group = StreamsGroup::default();
        let topics = topics(true);
        let a = group.heartbeat("g", &join("a", "pa"), &topics, settings, now);
        assert_eq!(active(&a), Vec::<i32>::new());
        assert_eq!(
            a.statuses,
            vec![Status {
                code: status::ASSIGNMENT_DELAYED,
                detail: "Assignment delayed due to the configured initial rebalance delay.".into()
            }]
        );
        let b = group.heartbeat("g", &join("b", "pb"), &topics, settings, now);
        assert_eq!(active(&b), Vec::<i32>::new());
        assert_eq!(group.next_deadline(), Some(now + Duration::from_secs(3)));
        group.expire(now + Duration::from_secs(3));
        // Meanwhile both are at the first epoch with no tasks; then at the group's with them.
        assert_eq!((a.member_epoch, b.member_epoch), (1, 1));
        let (a_epoch, b_epoch) = (a.member_epoch, b.member_epoch);
        let a = group.heartbeat(
            "g",
            &beat("a", a_epoch, &Tasks::new()),
            &topics,
            settings,
            now,
        );
        let b = group.heartbeat(
            "g",
            &beat("b", b_epoch, &Tasks::new()),
            &topics,
            settings,
            now,
        );
        assert_eq!((a.member_epoch, b.member_epoch), (2, 2));
        assert_eq!(a.statuses, vec![]);
        assert_eq!((active(&a).len(), active(&b).len()), (2, 2));
    }

    #[test]
    fn missing_topics_leave_the_group_not_ready_and_internal_ones_are_asked_for() {
        let now = crate::clock::now();
        let mut group = StreamsGroup::default();
        let a = group.heartbeat("g", &join("a", "pa"), &BTreeMap::new(), SETTINGS, now);
        assert_eq!(a.statuses[0].code, status::MISSING_SOURCE_TOPICS);
        assert_eq!(active(&a), Vec::<i32>::new());
        assert_eq!(group.state_name(), "NotReady");
        let a = group.heartbeat(
            "g",
            &beat("a", 1, &Tasks::new()),
            &topics(false),
            SETTINGS,
            now,
        );
        assert_eq!(a.statuses[0].code, status::MISSING_INTERNAL_TOPICS);
        assert_eq!(a.to_create[0].name, "app-store-changelog");
        // Once created, the next heartbeat assigns at a new epoch.
        let a = group.heartbeat(
            "g",
            &beat("a", 2, &Tasks::new()),
            &topics(true),
            SETTINGS,
            now,
        );
        assert_eq!(a.statuses, vec![]);
        assert_eq!((a.member_epoch, active(&a)), (3, vec![0, 1, 2, 3]));
    }

    #[test]
    fn a_different_topology_is_refused() {
        let now = crate::clock::now();
        let mut group = StreamsGroup::default();
        group.heartbeat("g", &join("a", "pa"), &topics(true), SETTINGS, now);
        let mut other = join("b", "pb");
        other.topology.as_mut().unwrap().subtopologies[0].id = "1".into();
        let refused = group.heartbeat("g", &other, &topics(true), SETTINGS, now);
        assert_eq!(
            (refused.error, refused.message.as_deref()),
            (
                ErrorCode::INVALID_REQUEST,
                Some("Topology updates are not supported yet.")
            )
        );
    }
}
