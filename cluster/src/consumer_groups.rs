//! KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe): the coordinator
//! assigns the partitions itself (the `uniform` and `range` assignors) and each member
//! reconciles towards its target assignment, as Kafka's group coordinator runs it. The
//! assignors place every partition where Kafka 4.4's do for the same members, topics and
//! previous targets ([`kafka_uniform`], [`range`]; `tests/assignor_reference.rs` compares them
//! with Kafka's classes); like Kafka 4.4's, they do not look at racks.
//!
//! A group lives in [`Groups`](crate::groups::Groups) beside the classic ones, as
//! [`Group::consumer`](crate::groups::Group::consumer): one map of groups, one coordinator
//! rule, one store of committed offsets, one byte count.
//!
//! Epochs: the group epoch moves on whenever what the assignment depends on changes (a
//! member leaves, a subscription or the subscribed topics' partitions change); a member
//! joining moves it on by what it subscribes to, and a new group's first member once more
//! (a Kafka 4.4 broker answers its first member epoch 2). A regex new to the group is
//! resolved after the heartbeat that brings it, as Kafka's executor does: the group moves
//! on when the resolution reaches it, at a later heartbeat. The
//! target assignment is computed at once, so its epoch equals the group epoch. A
//! member moves to the target epoch only when it owns nothing another member must still
//! give up: a partition taken from it is first revoked (the member keeps its epoch and is
//! sent its assignment without that partition, in state `UNREVOKED_PARTITIONS`), and a
//! partition another member still holds is assigned only once released
//! (`UNRELEASED_PARTITIONS`). A member that does not revoke within its rebalance timeout,
//! or does not heartbeat within the session timeout, is removed.

use crate::group_members::{self, Membership};
use kafka_codec::{ErrorCode, Uuid};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

pub use crate::group_members::{LEAVE_EPOCH, STATIC_LEAVE_EPOCH};

pub mod java_order;
pub mod kafka_uniform;
pub mod topic_regex;

/// Kafka's `group.consumer.regex.refresh.interval.ms` default: the regexes are resolved
/// again at least this often.
pub const REGEX_REFRESH_INTERVAL: Duration = Duration::from_secs(600);
/// The least time between two resolutions of a group's regexes (fixed in Kafka's
/// `GroupMetadataManager`, 10 s).
pub const REGEX_REFRESH_MIN_INTERVAL: Duration = Duration::from_secs(10);

/// Kafka's `group.consumer.session.timeout.ms` default.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(45);
/// Kafka's `group.consumer.heartbeat.interval.ms` default.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);
/// The assignors served, the first being the default (Kafka's `group.consumer.assignors`).
pub const ASSIGNORS: [&str; 2] = ["uniform", "range"];
/// Partitions by topic id.
pub type Assignment = BTreeMap<Uuid, BTreeSet<i32>>;

/// A topic as the assignors see it: its id and partition count.
pub type TopicsByName = BTreeMap<String, (Uuid, i32)>;

/// Where a member is in reconciling towards its target (Kafka's `MemberState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// At the target epoch with the whole target assignment.
    Stable,
    /// Must give up partitions before it moves on.
    UnrevokedPartitions,
    /// At the target epoch, waiting for partitions other members still hold.
    UnreleasedPartitions,
}

/// One member of a consumer group.
#[derive(Debug, Clone)]
pub struct ConsumerMember {
    /// Who it is, its epochs and deadlines (its id, v1+: chosen by the client; v0: by the
    /// coordinator).
    pub membership: Membership,
    /// Where it is in reconciling.
    pub state: MemberState,
    /// The topics it subscribes to by name.
    pub subscribed_names: Vec<String>,
    /// The regular expression it subscribes with (RE2J, [`topic_regex`]).
    pub subscribed_regex: Option<String>,
    /// What it subscribes to: its names and the topics its regex resolved to, sorted.
    pub subscribed_topics: Vec<String>,
    /// The server assignor it asks for.
    pub server_assignor: Option<String>,
    /// What it owns now.
    pub assigned: Assignment,
    /// What it must give up.
    pub revoking: Assignment,
}

group_members::impl_member!(ConsumerMember);

impl ConsumerMember {
    /// A member joining with nothing yet.
    fn new(membership: Membership) -> Self {
        ConsumerMember {
            membership,
            state: MemberState::Stable,
            subscribed_names: Vec::new(),
            subscribed_regex: None,
            subscribed_topics: Vec::new(),
            server_assignor: None,
            assigned: Assignment::new(),
            revoking: Assignment::new(),
        }
    }

    fn bytes(&self) -> usize {
        128 + self.membership.bytes()
            + self.subscribed_names.iter().map(String::len).sum::<usize>()
            + self.subscribed_regex.as_ref().map_or(0, String::len)
            + self
                .subscribed_topics
                .iter()
                .map(String::len)
                .sum::<usize>()
            + 4 * (count(&self.assigned) + count(&self.revoking))
    }

    fn subscribes(&self, topic: &str) -> bool {
        self.subscribed_topics.iter().any(|name| name == topic)
    }

    /// Its regex, when it has one (an empty one is none, as Kafka reads it).
    fn regex(&self) -> Option<&str> {
        self.subscribed_regex
            .as_deref()
            .filter(|regex| !regex.is_empty())
    }
}

fn count(assignment: &Assignment) -> usize {
    assignment.values().map(BTreeSet::len).sum()
}

/// A KIP-848 consumer group.
#[derive(Debug, Clone, Default)]
pub struct ConsumerGroup {
    /// The group epoch.
    pub epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// Members by id.
    pub members: BTreeMap<String, ConsumerMember>,
    /// Each member's target assignment.
    pub targets: BTreeMap<String, Assignment>,
    /// Each member's target as Kafka's coordinator reads it back, in its hash order, which
    /// the next homogeneous `uniform` assignment walks ([`kafka_uniform`]); an entry whose
    /// contents no longer match [`targets`](Self::targets) is ignored.
    java_targets: BTreeMap<String, kafka_uniform::JavaAssignment>,
    /// The subscribed topics as the target assignment saw them: a change moves the epoch on.
    subscribed_topics: TopicsByName,
    /// The topics each regex of the members resolved to (Kafka's resolved regular
    /// expressions).
    pub resolved: BTreeMap<String, BTreeSet<String>>,
    /// When the regexes were last resolved.
    last_resolved: Option<Instant>,
    /// [`TopicView::created`] when they were.
    resolved_version: u64,
    /// A resolution made and not yet applied: Kafka resolves on its executor and writes the
    /// result after the heartbeat that asked for it, so members see it at a later one.
    pending: Option<BTreeMap<String, BTreeSet<String>>>,
}

/// What the coordinator sees of the topics when it resolves regexes.
pub struct TopicView<'a> {
    /// How many topics the cluster has created so far (Kafka: the metadata image with new
    /// topics): a newer count makes the regexes resolve again.
    pub created: u64,
    /// Whether the member whose heartbeat resolves may DESCRIBE a topic (ACLs on); Kafka
    /// resolves with that member's request context.
    pub may_describe: &'a dyn Fn(&str) -> bool,
}

/// A ConsumerGroupHeartbeat, read from any version.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    /// The member id (v0: empty for a new member).
    pub member_id: String,
    /// The member epoch: 0 to join, -1 to leave, -2 for a static member leaving for now.
    pub member_epoch: i32,
    /// Its `group.instance.id`.
    pub instance_id: Option<String>,
    /// Its rack (null: unchanged).
    pub rack_id: Option<String>,
    /// Its rebalance timeout (-1: unchanged).
    pub rebalance_timeout_ms: i32,
    /// Its subscription (null: unchanged).
    pub subscribed_names: Option<Vec<String>>,
    /// Its regex subscription (null: unchanged).
    pub subscribed_regex: Option<String>,
    /// Its server assignor (null: unchanged).
    pub server_assignor: Option<String>,
    /// What it owns (null: unchanged since its last full heartbeat).
    pub owned: Option<Assignment>,
    /// The client id of the request.
    pub client_id: String,
    /// The peer's host.
    pub client_host: String,
}

/// A heartbeat's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatOutcome {
    /// The error.
    pub error: ErrorCode,
    /// Why, for an error.
    pub message: Option<String>,
    /// The member's id.
    pub member_id: String,
    /// Its epoch.
    pub member_epoch: i32,
    /// Its assignment, when it changed or the request was a full one.
    pub assignment: Option<Assignment>,
}

impl HeartbeatOutcome {
    /// An error answer.
    pub fn error(error: ErrorCode, message: impl Into<String>) -> Self {
        HeartbeatOutcome {
            error,
            message: Some(message.into()),
            member_id: String::new(),
            member_epoch: 0,
            assignment: None,
        }
    }
}

/// The request checks of Kafka's `throwIfConsumerGroupHeartbeatRequestIsInvalid`, before
/// any state is looked at.
pub fn validate(request: &Heartbeat, group_id: &str, version: i16) -> Result<(), HeartbeatOutcome> {
    let invalid = |message: &str| Err(HeartbeatOutcome::error(ErrorCode::INVALID_REQUEST, message));
    if group_id.is_empty() {
        return invalid("GroupId can't be empty.");
    }
    if version >= 1 && request.member_id.is_empty() {
        return invalid("MemberId can't be empty.");
    }
    if request.instance_id.as_deref() == Some("") {
        return invalid("InstanceId can't be empty.");
    }
    if request.rack_id.as_deref() == Some("") {
        return invalid("RackId can't be empty.");
    }
    match request.member_epoch {
        0 => {
            if request.rebalance_timeout_ms == -1 {
                return invalid("RebalanceTimeoutMs must be provided in first request.");
            }
            if request.owned.as_ref().is_none_or(|owned| !owned.is_empty()) {
                return invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if request.subscribed_names.is_none() && request.subscribed_regex.is_none() {
                return invalid(
                    "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
                );
            }
        }
        STATIC_LEAVE_EPOCH if request.instance_id.is_none() => {
            return invalid("InstanceId can't be null.");
        }
        epoch if epoch < STATIC_LEAVE_EPOCH => {
            return invalid(&format!("MemberEpoch is invalid: {epoch}."));
        }
        _ => {}
    }
    if request.member_epoch != 0 && request.member_id.is_empty() {
        return invalid("MemberId can't be empty.");
    }
    // An empty regex is none, as Kafka reads it (librdkafka sends "" beside its topic names).
    if let Some(assignor) = &request.server_assignor {
        if !ASSIGNORS.contains(&assignor.as_str()) {
            return Err(HeartbeatOutcome::error(
                ErrorCode::UNSUPPORTED_ASSIGNOR,
                format!("ServerAssignor {assignor} is not supported. Supported assignors: uniform, range."),
            ));
        }
    }
    Ok(())
}

impl ConsumerGroup {
    /// Kafka's state names: `Empty`, `Assigning` (the target is behind the group epoch),
    /// `Reconciling` (a member is not at the target yet), `Stable`.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
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

    /// The assignor in use: the one most members ask for (ties to the first in
    /// [`ASSIGNORS`]), or the default.
    pub fn assignor(&self) -> &'static str {
        let votes = |name: &str| {
            self.members
                .values()
                .filter(|member| member.server_assignor.as_deref() == Some(name))
                .count()
        };
        let mut best = ASSIGNORS[0];
        for name in ASSIGNORS {
            if votes(name) > votes(best) {
                best = name;
            }
        }
        best
    }

    /// Bytes held, for the coordinator's cap.
    pub fn bytes(&self) -> usize {
        64 + self
            .members
            .values()
            .map(ConsumerMember::bytes)
            .sum::<usize>()
            + self
                .targets
                .values()
                .map(|target| 32 + 4 * count(target))
                .sum::<usize>()
            + self
                .resolved
                .iter()
                .map(|(regex, topics)| {
                    32 + regex.len() + topics.iter().map(|t| 16 + t.len()).sum::<usize>()
                })
                .sum::<usize>()
    }

    /// The earliest session or revocation deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        group_members::next_deadline(&self.members)
    }

    /// Removes members whose session expired or who did not revoke in time.
    pub fn expire(&mut self, now: Instant, topics: Option<&TopicsByName>) {
        let due = group_members::due(&self.members, now);
        if due.is_empty() {
            return;
        }
        for id in &due {
            self.members.remove(id);
            self.targets.remove(id);
        }
        self.epoch += 1;
        let topics = topics
            .cloned()
            .unwrap_or_else(|| self.subscribed_topics.clone());
        self.assign(&topics);
    }

    /// Removes member `id` as its session's end would (the control surface's
    /// `expire_session`): the group moves to its next epoch and assigns without it. Whether
    /// it was a member.
    pub fn remove_member(&mut self, id: &str) -> bool {
        if self.members.remove(id).is_none() {
            return false;
        }
        self.targets.remove(id);
        self.epoch += 1;
        let topics = self.subscribed_topics.clone();
        self.assign(&topics);
        true
    }

    /// The topics the members subscribe to, as `topics` has them.
    fn subscribed(&self, topics: &TopicsByName) -> TopicsByName {
        topics
            .iter()
            .filter(|(name, _)| self.members.values().any(|member| member.subscribes(name)))
            .map(|(name, topic)| (name.clone(), *topic))
            .collect()
    }

    /// Each member's [`subscribed_topics`](ConsumerMember::subscribed_topics): its names
    /// and what its regex resolved to; a resolution no member uses any more is dropped
    /// (Kafka's regex tombstone).
    fn update_subscriptions(&mut self) {
        let used: BTreeSet<&str> = self
            .members
            .values()
            .filter_map(ConsumerMember::regex)
            .collect();
        self.resolved
            .retain(|regex, _| used.contains(regex.as_str()));
        for member in self.members.values_mut() {
            let mut topics = member.subscribed_names.clone();
            if let Some(resolved) = member.regex().and_then(|regex| self.resolved.get(regex)) {
                topics.extend(resolved.iter().cloned());
            }
            topics.sort();
            topics.dedup();
            member.subscribed_topics = topics;
        }
    }

    /// Kafka's `maybeUpdateRegularExpressions` at a member's heartbeat: the members'
    /// regexes are resolved against `topics` (whole names, those the member may DESCRIBE)
    /// when one is new to the group (`new_regex`) or has no resolution, topics were created
    /// since the last resolution, or the last is older than [`REGEX_REFRESH_INTERVAL`]; never
    /// twice within [`REGEX_REFRESH_MIN_INTERVAL`], nor while one is pending. Kafka resolves
    /// on its executor and applies the result in a later write: the result waits in
    /// `pending` for the group's next heartbeat ([`Self::apply_resolution`]). Whether a
    /// resolution no member uses was dropped.
    fn refresh_regexes(
        &mut self,
        new_regex: bool,
        topics: &TopicsByName,
        view: &TopicView<'_>,
        now: Instant,
    ) -> bool {
        let used: BTreeSet<String> = self
            .members
            .values()
            .filter_map(ConsumerMember::regex)
            .map(str::to_owned)
            .collect();
        let before = self.resolved.len();
        self.resolved.retain(|regex, _| used.contains(regex));
        let dropped = before != self.resolved.len();
        if used.is_empty()
            || self.pending.is_some()
            || self
                .last_resolved
                .is_some_and(|at| now <= at + REGEX_REFRESH_MIN_INTERVAL)
        {
            return dropped;
        }
        let due = new_regex
            || used.len() != self.resolved.len()
            || self.resolved_version < view.created
            || self
                .last_resolved
                .is_none_or(|at| now > at + REGEX_REFRESH_INTERVAL);
        if !due {
            return dropped;
        }
        // Each was checked when first subscribed; one that no longer compiles (none should)
        // resolves to nothing, as Kafka logs and ignores it.
        let compiled: Vec<(&String, Option<regex::Regex>)> = used
            .iter()
            .map(|regex| (regex, topic_regex::compile(regex).ok()))
            .collect();
        let mut resolved: BTreeMap<String, BTreeSet<String>> = used
            .iter()
            .map(|regex| (regex.clone(), BTreeSet::new()))
            .collect();
        for name in topics.keys() {
            let mut allowed = None;
            for (regex, pattern) in &compiled {
                if pattern.as_ref().is_some_and(|p| p.is_match(name))
                    && *allowed.get_or_insert_with(|| (view.may_describe)(name))
                {
                    resolved
                        .get_mut(*regex)
                        .expect("one entry a regex")
                        .insert(name.clone());
                }
            }
        }
        self.pending = Some(resolved);
        self.last_resolved = Some(now);
        self.resolved_version = view.created;
        dropped
    }

    /// Applies the resolution made at an earlier heartbeat, for the regexes still used.
    fn apply_resolution(&mut self) {
        let Some(mut resolved) = self.pending.take() else {
            return;
        };
        let used: BTreeSet<&str> = self
            .members
            .values()
            .filter_map(ConsumerMember::regex)
            .collect();
        resolved.retain(|regex, _| used.contains(regex.as_str()));
        self.resolved = resolved;
    }

    /// Computes the target assignment at the group epoch.
    fn assign(&mut self, topics: &TopicsByName) {
        self.update_subscriptions();
        self.subscribed_topics = self.subscribed(topics);
        let previous = std::mem::take(&mut self.targets);
        let homogeneous = self.members.values().all(|member| {
            self.members
                .values()
                .next()
                .map(|first| &first.subscribed_topics)
                == Some(&member.subscribed_topics)
        });
        self.targets = match self.assignor() {
            "range" => range(&self.members, &self.subscribed_topics),
            _ if homogeneous => self.uniform_homogeneous(&previous),
            _ => self.uniform_heterogeneous(&previous),
        };
        self.assignment_epoch = self.epoch;
    }

    /// Kafka's `uniform` assignment when every member subscribes to the same topics, in
    /// Kafka's hash order ([`kafka_uniform`]), so that it places partitions as Kafka does.
    fn uniform_homogeneous(
        &mut self,
        previous: &BTreeMap<String, Assignment>,
    ) -> BTreeMap<String, Assignment> {
        let known = std::mem::take(&mut self.java_targets);
        // The previous target as read back: kept from the last assignment when it still
        // says the same (a static member's replacement inherits a target under a new id).
        let replayed: BTreeMap<&str, kafka_uniform::JavaAssignment> = previous
            .iter()
            .filter(|(_, target)| !target.is_empty())
            .map(|(id, target)| {
                let same = known.get(id).filter(|java| {
                    let contents: Assignment = java
                        .iter()
                        .map(|(topic, set)| (*topic, set.items().copied().collect()))
                        .collect();
                    contents == *target
                });
                let java = same
                    .cloned()
                    .unwrap_or_else(|| kafka_uniform::from_contents(target));
                (id.as_str(), java)
            })
            .collect();
        let order = kafka_uniform::member_order(self.members.keys().map(String::as_str));
        let topics: Vec<(Uuid, i32)> = order
            .first()
            .map(|first| {
                kafka_uniform::topic_order(&self.members[*first].subscribed_topics, |name| {
                    self.subscribed_topics.get(name).map(|(id, _)| *id)
                })
            })
            .unwrap_or_default()
            .into_iter()
            .filter_map(|id| {
                self.subscribed_topics
                    .values()
                    .find(|(topic, _)| *topic == id)
                    .copied()
            })
            .collect();
        let specs: Vec<kafka_uniform::Spec<'_>> = order
            .iter()
            .map(|id| kafka_uniform::Spec {
                id,
                previous: replayed.get(id),
            })
            .collect();
        let mut targets = BTreeMap::new();
        for (id, java) in kafka_uniform::assign(&specs, &topics) {
            let target: Assignment = java
                .iter()
                .filter(|(_, set)| !set.is_empty())
                .map(|(topic, set)| (*topic, set.items().copied().collect()))
                .collect();
            self.java_targets
                .insert(id.clone(), kafka_uniform::replayed(&java));
            targets.insert(id, target);
        }
        targets
    }

    /// Kafka's `uniform` assignment when members subscribe to different topics
    /// ([`kafka_uniform::assign_heterogeneous`]). What the next homogeneous assignment walks
    /// is rebuilt from the contents ([`kafka_uniform::from_contents`]).
    fn uniform_heterogeneous(
        &mut self,
        previous: &BTreeMap<String, Assignment>,
    ) -> BTreeMap<String, Assignment> {
        let order = kafka_uniform::member_order(self.members.keys().map(String::as_str));
        let partitions: BTreeMap<Uuid, i32> = self.subscribed_topics.values().copied().collect();
        let members: Vec<kafka_uniform::Subscribed<'_>> = order
            .iter()
            .map(|id| kafka_uniform::Subscribed {
                id,
                topics: self.members[*id]
                    .subscribed_topics
                    .iter()
                    .filter_map(|name| self.subscribed_topics.get(name).map(|(id, _)| *id))
                    .collect(),
                previous: previous.get(*id),
            })
            .collect();
        let targets: BTreeMap<String, Assignment> =
            kafka_uniform::assign_heterogeneous(&members, &partitions)
                .into_iter()
                .collect();
        self.java_targets = targets
            .iter()
            .map(|(id, target)| (id.clone(), kafka_uniform::from_contents(target)))
            .collect();
        targets
    }

    /// Whether partition `index` of `topic` is owned or being revoked by a member other
    /// than `except`.
    fn held_by_other(&self, except: &str, topic: &Uuid, index: i32) -> bool {
        group_members::held_by_other(&self.members, except, topic, index, |member| {
            [&member.assigned, &member.revoking]
        })
    }

    /// Moves member `id` towards its target (Kafka's `CurrentAssignmentBuilder`), given what
    /// it says it owns.
    fn reconcile(&mut self, id: &str, owned: Option<&Assignment>, now: Instant) {
        let Some(member) = self.members.get(id) else {
            return;
        };
        match member.state {
            // It moves on once it no longer owns what it must give up.
            MemberState::UnrevokedPartitions if !revoked(&member.revoking, owned) => return,
            MemberState::Stable if member.epoch == self.assignment_epoch => return,
            _ => {}
        }
        let target = self.targets.get(id).cloned().unwrap_or_default();
        let member = &self.members[id];
        let step = next_step(&member.assigned, &target, |topic, index| {
            self.held_by_other(id, topic, index)
        });
        let (keep, unreleased) = match step {
            Step::Revoke { keep, revoke } => {
                let member = self.members.get_mut(id).expect("looked up above");
                member.assigned = keep;
                member.revoking = revoke;
                member.state = MemberState::UnrevokedPartitions;
                member.must_revoke(now);
                return;
            }
            Step::Advance {
                assigned,
                unreleased,
            } => (assigned, unreleased),
        };
        let assignment_epoch = self.assignment_epoch;
        let member = self.members.get_mut(id).expect("looked up above");
        member.assigned = keep;
        member.revoking.clear();
        member.reconciled(assignment_epoch);
        member.state = if unreleased {
            MemberState::UnreleasedPartitions
        } else {
            MemberState::Stable
        };
    }

    /// A member leaving: for good (-1: its partitions are reassigned) or, for a static
    /// member, for now (-2: it keeps them until it returns or its session expires).
    fn leave(
        &mut self,
        request: &Heartbeat,
        topics: &TopicsByName,
        session: Duration,
        now: Instant,
    ) -> HeartbeatOutcome {
        let found = match group_members::leaving(
            &self.members,
            &request.member_id,
            request.instance_id.as_deref(),
            || format!("Member {} is not a member of the group.", request.member_id),
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
            self.assign(topics);
        }
        HeartbeatOutcome {
            error: ErrorCode::NONE,
            message: None,
            member_id: found,
            member_epoch: request.member_epoch,
            assignment: None,
        }
    }

    /// A ConsumerGroupHeartbeat that [`validate`] accepted, `topics` being every topic of
    /// the cluster, `fresh_id` the id for a new v0 member and `session` the session timeout.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat(
        &mut self,
        request: &Heartbeat,
        topics: &TopicsByName,
        view: &TopicView<'_>,
        fresh_id: impl FnOnce() -> String,
        session: Duration,
        now: Instant,
    ) -> HeartbeatOutcome {
        // What the regexes resolved to since the last heartbeat; the group moves on below if
        // it changed the subscribed topics.
        self.apply_resolution();
        if request.member_epoch < 0 {
            return self.leave(request, topics, session, now);
        }
        // A regex other than the member's own is checked as Kafka checks one new to the
        // group (one another member holds passed that check), after the member checks.
        let requested_regex = request
            .subscribed_regex
            .as_deref()
            .filter(|regex| !regex.is_empty());
        let current_regex = self
            .members
            .get(&request.member_id)
            .and_then(ConsumerMember::regex);
        let refused_regex = requested_regex
            .filter(|regex| Some(*regex) != current_regex)
            .and_then(|regex| topic_regex::compile(regex).err())
            .map(|message| HeartbeatOutcome::error(ErrorCode::INVALID_REGULAR_EXPRESSION, message));
        let new_regex = requested_regex.is_some_and(|regex| {
            Some(regex) != current_regex
                && !self
                    .members
                    .values()
                    .any(|member| member.regex() == Some(regex))
        });
        let mut bump = false;
        let mut reassign = false;
        let mut full = request.member_epoch == 0;
        let id = if request.member_epoch == 0 {
            let replaced = match group_members::static_rejoin(
                &self.members,
                &request.member_id,
                request.instance_id.as_deref(),
            ) {
                Ok(replaced) => replaced,
                Err((error, message)) => return HeartbeatOutcome::error(error, message),
            };
            match replaced {
                Some(_) if refused_regex.is_some() => {
                    return refused_regex.expect("checked");
                }
                None if refused_regex.is_some() => {
                    return refused_regex.expect("checked");
                }
                Some(old) => {
                    // A static member back: it takes over the old member's assignment and
                    // epoch under its new id, without a new group epoch.
                    let id = if request.member_id.is_empty() {
                        fresh_id()
                    } else {
                        request.member_id.clone()
                    };
                    self.members.remove(&old.id);
                    let target = self.targets.remove(&old.id).unwrap_or_default();
                    self.targets.insert(id.clone(), target);
                    let membership = group_members::take_over(&old.membership, id.clone());
                    self.members
                        .insert(id.clone(), ConsumerMember { membership, ..old });
                    id
                }
                None => {
                    let id = if request.member_id.is_empty() {
                        fresh_id()
                    } else {
                        request.member_id.clone()
                    };
                    // A member joining again under a known id starts afresh.
                    if self.members.remove(&id).is_some() {
                        self.targets.remove(&id);
                    }
                    // A new member moves the group on only by what it subscribes to (one
                    // with a regex alone waits for its resolution), but a group's very first
                    // member always does, as a Kafka 4.4 broker answers.
                    if self.epoch == 0 && self.members.is_empty() {
                        self.epoch += 1;
                        reassign = true;
                    }
                    self.members.insert(
                        id.clone(),
                        ConsumerMember::new(Membership::new(
                            id.clone(),
                            request.instance_id.clone(),
                            now,
                        )),
                    );
                    id
                }
            }
        } else {
            let Some(member) = self.members.get(&request.member_id) else {
                return HeartbeatOutcome::error(
                    ErrorCode::UNKNOWN_MEMBER_ID,
                    format!("Member {} is not a member of the group.", request.member_id),
                );
            };
            if member.instance_id.is_some() && member.instance_id != request.instance_id {
                return HeartbeatOutcome::error(
                    ErrorCode::FENCED_INSTANCE_ID,
                    format!(
                        "Member {} has instance id {:?}, not {:?}.",
                        member.id, member.instance_id, request.instance_id
                    ),
                );
            }
            // Kafka's `throwIfMemberEpochIsInvalid`: a member may lag one epoch behind
            // (its answer was lost) if it owns no more than it was given.
            let received = request.member_epoch;
            let owned_within = |assigned: &Assignment| {
                request.owned.as_ref().is_some_and(|owned| {
                    owned.iter().all(|(topic, partitions)| {
                        partitions.is_empty()
                            || assigned
                                .get(topic)
                                .is_some_and(|set| set.is_superset(partitions))
                    })
                })
            };
            if let Err((error, message)) = group_members::check_epoch(
                member,
                received,
                owned_within(&member.assigned),
                "consumer",
                false,
            ) {
                return HeartbeatOutcome::error(error, message);
            }
            if let Some(refused) = refused_regex {
                return refused;
            }
            request.member_id.clone()
        };
        let member = self.members.get_mut(&id).expect("inserted or found above");
        member.heard(&request.client_id, &request.client_host, now + session);
        if let Some(rack) = &request.rack_id {
            member.rack_id = Some(rack.clone());
        }
        member.set_rebalance_timeout(request.rebalance_timeout_ms);
        if let Some(names) = &request.subscribed_names {
            let mut names = names.clone();
            names.sort();
            names.dedup();
            if names != member.subscribed_names {
                member.subscribed_names = names;
                bump = true;
            }
        }
        if let Some(regex) = &request.subscribed_regex {
            let regex = Some(regex.clone()).filter(|regex| !regex.is_empty());
            if regex != member.subscribed_regex {
                // Kafka's REGEX_UPDATED_AND_RESOLVED: a regex the group has resolved moves it
                // on now; a new one once resolved, at a later heartbeat.
                bump |= regex
                    .as_ref()
                    .is_none_or(|regex| self.resolved.contains_key(regex));
                member.subscribed_regex = regex;
            }
        }
        if request.server_assignor.is_some() && request.server_assignor != member.server_assignor {
            member.server_assignor.clone_from(&request.server_assignor);
            bump = true;
        }
        // Kafka's full request: all of the member's settings, sent again after an error.
        if request.owned.is_some()
            && request.rebalance_timeout_ms >= 0
            && (request.subscribed_names.is_some() || request.subscribed_regex.is_some())
        {
            full = true;
        }
        // What the regexes resolve to, and a subscribed topic created, deleted or grown, move
        // the epoch on too.
        if self.refresh_regexes(new_regex, topics, view, now) {
            bump = true;
        }
        self.update_subscriptions();
        if bump || self.subscribed(topics) != self.subscribed_topics {
            self.epoch += 1;
            self.assign(topics);
        } else if reassign {
            self.assign(topics);
        }
        let before = self.members[&id].assigned.clone();
        self.reconcile(&id, request.owned.as_ref(), now);
        let member = &self.members[&id];
        // Sent when the partitions changed (not for a new epoch alone), or to a full request.
        let changed = member.assigned != before;
        HeartbeatOutcome {
            error: ErrorCode::NONE,
            message: None,
            member_id: id.clone(),
            member_epoch: member.epoch,
            assignment: (changed || full).then(|| member.assigned.clone()),
        }
    }

    /// Whether an OffsetCommit of `member_id` at `epoch` may commit (Kafka's
    /// `ConsumerGroup.validateOffsetCommit`): with epoch -1, only to a group with no members;
    /// else a known member at its current epoch (STALE_MEMBER_EPOCH otherwise).
    pub fn validate_commit(&self, member_id: &str, epoch: i32) -> ErrorCode {
        group_members::validate_commit(&self.members, member_id, epoch)
    }

    /// A known member at its current epoch (OffsetFetch v9+ with a member id).
    pub fn validate_member_epoch(&self, member_id: &str, epoch: i32) -> ErrorCode {
        group_members::validate_member_epoch(&self.members, member_id, epoch)
    }
}

/// What a member owns or is assigned, by key: partitions by topic id ([`Assignment`]), or a
/// streams group's tasks by subtopology id.
pub type Owned<K> = BTreeMap<K, BTreeSet<i32>>;

/// The next step of a member towards its target (Kafka's `CurrentAssignmentBuilder`, which
/// consumer and streams groups run alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<K> {
    /// It must first give up `revoke`, keeping `keep`, at its current epoch.
    Revoke {
        /// What it keeps meanwhile.
        keep: Owned<K>,
        /// What it must give up.
        revoke: Owned<K>,
    },
    /// It moves to the target epoch, owning `assigned`: its target less what another
    /// member still holds (`unreleased` when anything was held back).
    Advance {
        /// What it owns at the target epoch.
        assigned: Owned<K>,
        /// Whether part of its target is still held by another member.
        unreleased: bool,
    },
}

/// The step from `assigned` towards `target`; `held_by_other` says whether another member
/// still owns (or is giving up) an item, which is then held back until released.
pub fn next_step<K: Ord + Clone>(
    assigned: &Owned<K>,
    target: &Owned<K>,
    held_by_other: impl Fn(&K, i32) -> bool,
) -> Step<K> {
    let mut keep = Owned::<K>::new();
    let mut revoke = Owned::<K>::new();
    for (key, items) in assigned {
        for &index in items {
            let into = if target.get(key).is_some_and(|set| set.contains(&index)) {
                &mut keep
            } else {
                &mut revoke
            };
            into.entry(key.clone()).or_default().insert(index);
        }
    }
    if !revoke.is_empty() {
        return Step::Revoke { keep, revoke };
    }
    let mut unreleased = false;
    for (key, items) in target {
        for &index in items {
            if keep.get(key).is_some_and(|set| set.contains(&index)) {
                continue;
            }
            if held_by_other(key, index) {
                unreleased = true;
            } else {
                keep.entry(key.clone()).or_default().insert(index);
            }
        }
    }
    Step::Advance {
        assigned: keep,
        unreleased,
    }
}

/// Whether a member that must give up `revoking` no longer owns any of it, by what its
/// heartbeat says it owns (`None`: unchanged, so not yet).
pub fn revoked<K: Ord>(revoking: &Owned<K>, owned: Option<&Owned<K>>) -> bool {
    owned.is_some_and(|owned| {
        revoking
            .iter()
            .all(|(key, items)| owned.get(key).is_none_or(|held| held.is_disjoint(items)))
    })
}

/// A group member as the assignors see it: the topics it subscribes to (share
/// groups' members are assigned by the same [`uniform`] code).
pub trait Subscriber {
    /// Its subscription, sorted.
    fn subscription(&self) -> &[String];
}

impl Subscriber for ConsumerMember {
    fn subscription(&self) -> &[String] {
        &self.subscribed_topics
    }
}

/// The members subscribing to each topic, in member-id order.
fn subscribers<'a, M: Subscriber>(
    members: &'a BTreeMap<String, M>,
    topic: &'a str,
) -> impl Iterator<Item = &'a String> + 'a {
    members
        .iter()
        .filter(move |(_, member)| member.subscription().iter().any(|name| name == topic))
        .map(|(id, _)| id)
}

/// Kafka's `range` assignor: for each topic, its partitions cut into contiguous ranges, one
/// a subscribed member, the first `partitions % members` one larger. Members in Kafka's
/// order: static members first by instance id, then the others by member id (Java's stable
/// sort of its member map's order, [`kafka_uniform::member_order`]).
pub fn range(
    members: &BTreeMap<String, ConsumerMember>,
    topics: &TopicsByName,
) -> BTreeMap<String, Assignment> {
    let mut targets: BTreeMap<String, Assignment> = members
        .keys()
        .map(|id| (id.clone(), Assignment::new()))
        .collect();
    let mut order = kafka_uniform::member_order(members.keys().map(String::as_str));
    let instance = |id: &str| members[id].membership.instance_id.as_deref();
    let java = |text: &str| text.encode_utf16().collect::<Vec<u16>>();
    order.sort_by(|a, b| match (instance(a), instance(b)) {
        (Some(x), Some(y)) => java(x).cmp(&java(y)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => java(a).cmp(&java(b)),
    });
    for (name, (topic_id, partitions)) in topics {
        let subscribed: Vec<&str> = order
            .iter()
            .copied()
            .filter(|id| members[*id].subscribes(name))
            .collect();
        if subscribed.is_empty() {
            continue;
        }
        let quota = *partitions as usize / subscribed.len();
        let extra = *partitions as usize % subscribed.len();
        let mut next = 0i32;
        for (at, id) in subscribed.into_iter().enumerate() {
            let take = quota + usize::from(at < extra);
            let set: BTreeSet<i32> = (next..next + take as i32).collect();
            next += take as i32;
            if !set.is_empty() {
                targets
                    .get_mut(id)
                    .expect("every member has a target")
                    .insert(*topic_id, set);
            }
        }
    }
    targets
}

/// A balanced sticky assignor, for share groups (consumer groups take Kafka's own `uniform`
/// placement, [`kafka_uniform`]): every member gets as many partitions of what it subscribes
/// to as any other (within one), and keeps what its previous target gave it as far as
/// that balance allows (sticky). Members in member-id order; partitions in topic-name and
/// partition order. Memory: one entry per partition subscribed to, whatever the members.
pub fn uniform<M: Subscriber>(
    members: &BTreeMap<String, M>,
    topics: &TopicsByName,
    previous: &BTreeMap<String, Assignment>,
) -> BTreeMap<String, Assignment> {
    let mut targets: BTreeMap<String, Assignment> = members
        .keys()
        .map(|id| (id.clone(), Assignment::new()))
        .collect();
    // Each subscribed topic's members, once; each partition names its topic's entry.
    let subscribed: Vec<(Uuid, i32, Vec<&String>)> = topics
        .iter()
        .map(|(name, (id, count))| (*id, *count, subscribers(members, name).collect()))
        .filter(|(_, count, who): &(Uuid, i32, Vec<&String>)| *count > 0 && !who.is_empty())
        .collect();
    let by_topic: BTreeMap<Uuid, usize> = subscribed
        .iter()
        .enumerate()
        .map(|(at, (id, _, _))| (*id, at))
        .collect();
    let total: usize = subscribed.iter().map(|(_, count, _)| *count as usize).sum();
    if members.is_empty() || total == 0 {
        return targets;
    }
    let may_take = |id: &String, topic: &Uuid, index: i32| {
        by_topic.get(topic).is_some_and(|at| {
            let (_, count, who) = &subscribed[*at];
            index >= 0 && index < *count && who.contains(&id)
        })
    };
    // The most a member keeps: with every member subscribing to the same topics, Kafka's
    // quotas (total / members, the first `total % members` over-quota slots one more);
    // otherwise its share of the partitions it may take, rounded up.
    let first = members.values().next().map(M::subscription);
    let homogeneous = members
        .values()
        .all(|member| Some(member.subscription()) == first);
    let min_quota = total / members.len();
    let mut over_quota_slots = total % members.len();
    let share = |id: &String| -> usize {
        let (mine, sharing) = subscribed
            .iter()
            .filter(|(_, _, who)| who.contains(&id))
            .fold((0usize, 1usize), |(mine, sharing), (_, count, who)| {
                (mine + *count as usize, sharing.max(who.len()))
            });
        mine.div_ceil(sharing).max(1)
    };
    let mut taken: BTreeSet<(Uuid, i32)> = BTreeSet::new();
    let mut load: BTreeMap<&String, usize> = members.keys().map(|id| (id, 0)).collect();
    let give = |targets: &mut BTreeMap<String, Assignment>, id: &String, (topic, index)| {
        targets
            .get_mut(id)
            .expect("every member has a target")
            .entry(topic)
            .or_default()
            .insert(index);
    };
    // Sticky: each member keeps what it had and still may take, up to its quota.
    for id in members.keys() {
        let Some(had) = previous.get(id) else {
            continue;
        };
        let mut kept: Vec<(Uuid, i32)> = had
            .iter()
            .flat_map(|(topic, set)| set.iter().map(move |index| (*topic, *index)))
            .filter(|(topic, index)| may_take(id, topic, *index))
            .collect();
        let limit = if homogeneous {
            if kept.len() > min_quota && over_quota_slots > 0 {
                over_quota_slots -= 1;
                min_quota + 1
            } else {
                min_quota
            }
        } else {
            share(id)
        };
        kept.truncate(limit);
        for partition in kept {
            taken.insert(partition);
            give(&mut targets, id, partition);
            *load.get_mut(id).expect("every member has a load") += 1;
        }
    }
    // The rest, each to the least loaded member that may take it (ties: member-id order),
    // members under the minimum quota first.
    for (topic, count, who) in &subscribed {
        for index in 0..*count {
            if taken.contains(&(*topic, index)) {
                continue;
            }
            let Some(id) = who
                .iter()
                .filter(|id| {
                    !homogeneous
                        || load[**id] < min_quota
                        || (load[**id] == min_quota && over_quota_slots > 0)
                })
                .min_by_key(|id| (load[**id], **id))
                .or_else(|| who.iter().min_by_key(|id| (load[**id], **id)))
            else {
                continue;
            };
            if homogeneous && load[*id] == min_quota {
                over_quota_slots = over_quota_slots.saturating_sub(1);
            }
            *load.get_mut(*id).expect("every member has a load") += 1;
            give(&mut targets, id, (*topic, index));
        }
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: &str, topics: &[&str]) -> (String, ConsumerMember) {
        let member = ConsumerMember {
            subscribed_names: topics.iter().map(|t| t.to_string()).collect(),
            subscribed_topics: topics.iter().map(|t| t.to_string()).collect(),
            ..ConsumerMember::new(Membership::new(id.into(), None, crate::clock::now()))
        };
        (id.into(), member)
    }

    fn topics(spec: &[(&str, u8, i32)]) -> TopicsByName {
        spec.iter()
            .map(|(name, id, count)| (name.to_string(), (Uuid([*id; 16]), *count)))
            .collect()
    }

    /// Every (topic, partition) of `targets`, each once, or a panic naming the one twice.
    fn flatten(targets: &BTreeMap<String, Assignment>) -> BTreeSet<(Uuid, i32)> {
        let mut all = BTreeSet::new();
        for assignment in targets.values() {
            for (topic, partitions) in assignment {
                for index in partitions {
                    assert!(
                        all.insert((*topic, *index)),
                        "{topic:?}-{index} assigned twice"
                    );
                }
            }
        }
        all
    }

    /// A heartbeat of member `id` at `epoch` with a regex (and no names), owning `owned`.
    fn regex_beat(id: &str, epoch: i32, regex: Option<&str>, owned: Assignment) -> Heartbeat {
        Heartbeat {
            member_id: id.into(),
            member_epoch: epoch,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: if epoch == 0 { 30_000 } else { -1 },
            subscribed_names: (epoch == 0).then(Vec::new),
            subscribed_regex: regex.map(str::to_owned),
            server_assignor: None,
            owned: Some(owned),
            client_id: String::new(),
            client_host: String::new(),
        }
    }

    fn every(topic: u8, partitions: i32) -> Assignment {
        [(Uuid([topic; 16]), (0..partitions).collect())]
            .into_iter()
            .collect()
    }

    #[test]
    fn a_regex_resolves_after_the_heartbeat_that_brings_it_then_again_after_a_creation_at_most_every_ten_seconds(
    ) {
        let start = crate::clock::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        let allow_all = |_: &str| true;
        let view = |created: u64| TopicView {
            created,
            may_describe: &allow_all,
        };
        let mut group = ConsumerGroup::default();
        let session = SESSION_TIMEOUT;
        let one = topics(&[("orders.a", 1, 2), ("payments", 2, 1)]);
        let regex = Some(r"orders\..*");
        let beat = |group: &mut ConsumerGroup,
                    epoch: i32,
                    owned: Assignment,
                    topics: &TopicsByName,
                    created: u64,
                    secs: u64| {
            group.heartbeat(
                &regex_beat("m", epoch, None, owned),
                topics,
                &view(created),
                String::new,
                session,
                at(secs),
            )
        };
        // The group's first member, its regex not resolved yet: epoch 1, nothing.
        let joined = group.heartbeat(
            &regex_beat("m", 0, regex, Assignment::new()),
            &one,
            &view(2),
            String::new,
            session,
            at(0),
        );
        assert_eq!(joined.error, ErrorCode::NONE, "{joined:?}");
        assert_eq!(
            (joined.member_epoch, joined.assignment),
            (1, Some(Assignment::new()))
        );
        assert!(group.resolved.is_empty(), "resolved after this heartbeat");
        // orders.b is created; the next heartbeat sees the resolution made before it.
        let two = topics(&[("orders.a", 1, 2), ("orders.b", 3, 1), ("payments", 2, 1)]);
        let resolved = beat(&mut group, 1, Assignment::new(), &two, 3, 5);
        assert_eq!(
            (resolved.member_epoch, resolved.assignment),
            (2, Some(every(1, 2)))
        );
        assert_eq!(
            group.resolved[r"orders\..*"],
            BTreeSet::from(["orders.a".to_owned()])
        );
        // After 10 s, the creation makes the regex resolve again, seen a heartbeat later.
        let owned = every(1, 2);
        let asked = beat(&mut group, 2, owned.clone(), &two, 3, 11);
        assert_eq!((asked.member_epoch, asked.assignment), (2, None));
        let later = beat(&mut group, 2, owned, &two, 3, 12);
        let mut both = every(1, 2);
        both.extend(every(3, 1));
        assert_eq!(
            (later.member_epoch, later.assignment),
            (3, Some(both.clone()))
        );
        // A topic created that the regex does not match: resolved again, no new epoch.
        let three = topics(&[
            ("orders.a", 1, 2),
            ("orders.b", 3, 1),
            ("other", 4, 1),
            ("payments", 2, 1),
        ]);
        for secs in [30, 31] {
            let same = beat(&mut group, 3, both.clone(), &three, 4, secs);
            assert_eq!((same.member_epoch, same.assignment), (3, None));
        }
        // orders.a deleted: it leaves the assignment at once (the topics, not the regex).
        let four = topics(&[("orders.b", 3, 1), ("other", 4, 1), ("payments", 2, 1)]);
        let fewer = beat(&mut group, 3, both, &four, 4, 32);
        assert_eq!(fewer.member_epoch, 3, "revoking first");
        assert_eq!(fewer.assignment, Some(every(3, 1)));
    }

    #[test]
    fn names_and_a_regex_are_one_subscription_and_a_bad_regex_is_refused_as_kafka_refuses_it() {
        let now = crate::clock::now();
        let deny_payments = |name: &str| name != "orders.secret";
        let view = TopicView {
            created: 1,
            may_describe: &deny_payments,
        };
        let all = topics(&[
            ("orders.a", 1, 1),
            ("orders.secret", 3, 1),
            ("payments", 2, 1),
        ]);
        let mut group = ConsumerGroup::default();
        let mut join = regex_beat("m", 0, Some("orders.*"), Assignment::new());
        join.subscribed_names = Some(vec!["payments".into()]);
        let joined = group.heartbeat(&join, &all, &view, String::new, SESSION_TIMEOUT, now);
        assert_eq!(joined.assignment, Some(every(2, 1)), "the names at once");
        let resolved = group.heartbeat(
            &regex_beat("m", joined.member_epoch, None, every(2, 1)),
            &all,
            &view,
            String::new,
            SESSION_TIMEOUT,
            now,
        );
        let mut union = every(1, 1);
        union.extend(every(2, 1));
        // orders.secret is left out: the member may not DESCRIBE it.
        assert_eq!(resolved.assignment, Some(union));
        assert_eq!(
            group.members["m"].subscribed_topics,
            ["orders.a", "payments"]
        );
        let bad = group.heartbeat(
            &regex_beat("n", 0, Some("(a"), Assignment::new()),
            &all,
            &view,
            String::new,
            SESSION_TIMEOUT,
            now,
        );
        assert_eq!(bad.error, ErrorCode::INVALID_REGULAR_EXPRESSION);
        assert_eq!(
            bad.message.as_deref(),
            Some("SubscribedTopicRegex `(a` is not a valid regular expression: missing closing ).")
        );
        assert!(!group.members.contains_key("n"), "not joined");
        // The member leaves: its regex's resolution goes with it.
        let left = group.heartbeat(
            &regex_beat("m", LEAVE_EPOCH, None, Assignment::new()),
            &all,
            &view,
            String::new,
            SESSION_TIMEOUT,
            now,
        );
        assert_eq!(left.error, ErrorCode::NONE);
        assert!(group.resolved.is_empty());
    }

    #[test]
    fn uniform_balances_and_keeps_what_it_can() {
        let topics = topics(&[("a", 1, 4), ("b", 2, 3)]);
        let members: BTreeMap<_, _> = ["m1", "m2", "m3"]
            .iter()
            .map(|id| member(id, &["a", "b"]))
            .collect();
        let first = uniform(&members, &topics, &BTreeMap::new());
        assert_eq!(flatten(&first).len(), 7, "every partition assigned");
        let sizes: Vec<usize> = first.values().map(count).collect();
        assert!(sizes.iter().all(|n| *n == 2 || *n == 3), "{sizes:?}");
        // One leaves: the others keep everything they had and share out its partitions.
        let mut fewer = members.clone();
        fewer.remove("m2");
        let second = uniform(&fewer, &topics, &first);
        assert_eq!(flatten(&second).len(), 7);
        for id in ["m1", "m3"] {
            for (topic, partitions) in &first[id] {
                assert!(
                    second[id][topic].is_superset(partitions),
                    "{id} lost a partition"
                );
            }
        }
        let sizes: Vec<usize> = second.values().map(count).collect();
        assert!(sizes.iter().all(|n| *n == 3 || *n == 4), "{sizes:?}");
        // One joins: it takes its share, the others give up only what balance needs.
        let mut more = fewer.clone();
        more.extend([member("m4", &["a", "b"])]);
        let third = uniform(&more, &topics, &second);
        assert_eq!(flatten(&third).len(), 7);
        for id in ["m1", "m3"] {
            for (topic, partitions) in &third[id] {
                assert!(
                    second[id][topic].is_superset(partitions),
                    "{id} was given another's"
                );
            }
        }
        let sizes: Vec<usize> = third.values().map(count).collect();
        assert!(sizes.iter().all(|n| *n == 2 || *n == 3), "{sizes:?}");
    }

    #[test]
    fn uniform_gives_each_partition_to_a_subscriber_only() {
        let topics = topics(&[("a", 1, 4), ("b", 2, 2)]);
        let members: BTreeMap<_, _> = [member("m1", &["a"]), member("m2", &["a", "b"])]
            .into_iter()
            .collect();
        let targets = uniform(&members, &topics, &BTreeMap::new());
        assert_eq!(flatten(&targets).len(), 6);
        assert!(
            !targets["m1"].contains_key(&Uuid([2; 16])),
            "m1 does not subscribe to b"
        );
        assert!(count(&targets["m1"]) >= 2, "{targets:?}");
    }

    #[test]
    fn range_cuts_each_topic_into_contiguous_ranges_larger_first() {
        let topics = topics(&[("a", 1, 5), ("b", 2, 2)]);
        let members: BTreeMap<_, _> = [
            member("m1", &["a", "b"]),
            member("m2", &["a", "b"]),
            member("m3", &["a"]),
        ]
        .into_iter()
        .collect();
        let targets = range(&members, &topics);
        assert_eq!(flatten(&targets).len(), 7);
        for (topic, subscribers) in [
            (Uuid([1; 16]), vec!["m1", "m2", "m3"]),
            (Uuid([2; 16]), vec!["m1", "m2"]),
        ] {
            let mut next = 0;
            let mut sizes = Vec::new();
            for id in subscribers {
                let mine: Vec<i32> = targets[id]
                    .get(&topic)
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect();
                let expected: Vec<i32> = (next..next + mine.len() as i32).collect();
                assert_eq!(
                    mine, expected,
                    "{id}'s range of {topic:?} is contiguous, after the previous member's"
                );
                next += mine.len() as i32;
                sizes.push(mine.len());
            }
            assert!(
                sizes.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
                "{sizes:?}"
            );
        }
    }
}
