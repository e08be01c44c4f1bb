//! The member registry that KIP-848 consumer groups, share groups and streams groups keep
//! alike: who a member is ([`Membership`]: ids, client, epochs, session and revocation
//! deadlines), how a heartbeat's epoch is checked against it (fencing), how a member leaves
//! for good or, static, for now, and which members are due to expire. Each group kind keeps
//! what it assigns (partitions, tasks) beside it and decides when its group epoch moves on.

use kafka_codec::ErrorCode;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The member epoch of a member leaving for good.
pub const LEAVE_EPOCH: i32 = -1;
/// The member epoch of a static member leaving for now (it may come back with its
/// assignment within its session timeout).
pub const STATIC_LEAVE_EPOCH: i32 = -2;

/// What every member of a consumer, share or streams group has.
#[derive(Debug, Clone)]
pub struct Membership {
    /// Its id.
    pub id: String,
    /// Its `group.instance.id` (static membership; share groups have none).
    pub instance_id: Option<String>,
    /// Its rack.
    pub rack_id: Option<String>,
    /// The client id of its requests.
    pub client_id: String,
    /// The host it heartbeats from.
    pub client_host: String,
    /// Its epoch ([`STATIC_LEAVE_EPOCH`] while a static member is away).
    pub epoch: i32,
    /// Its epoch before the last change, which a heartbeat may still name.
    pub previous_epoch: i32,
    /// How long it may take to revoke.
    pub rebalance_timeout: Duration,
    /// When it is removed unless it heartbeats again.
    pub(crate) session_deadline: Instant,
    /// When it is removed unless it gave up what it must revoke.
    pub(crate) revocation_deadline: Option<Instant>,
}

impl Membership {
    /// A member joining at epoch 0, its session not yet started.
    pub fn new(id: String, instance_id: Option<String>, now: Instant) -> Self {
        Membership {
            id,
            instance_id,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            epoch: 0,
            previous_epoch: 0,
            rebalance_timeout: Duration::ZERO,
            session_deadline: now,
            revocation_deadline: None,
        }
    }

    /// The bytes of its strings, for the coordinator's cap.
    pub fn bytes(&self) -> usize {
        self.id.len()
            + self.instance_id.as_ref().map_or(0, String::len)
            + self.rack_id.as_ref().map_or(0, String::len)
            + self.client_id.len()
            + self.client_host.len()
    }

    /// A heartbeat heard: who sent it, and its session starts again.
    pub fn heard(&mut self, client_id: &str, client_host: &str, session_end: Instant) {
        self.client_id.clear();
        self.client_id.push_str(client_id);
        self.client_host.clear();
        self.client_host.push_str(client_host);
        self.session_deadline = session_end;
    }

    /// Its rebalance timeout as a heartbeat gives it (-1: unchanged).
    pub fn set_rebalance_timeout(&mut self, millis: i32) {
        if millis >= 0 {
            self.rebalance_timeout = Duration::from_millis(millis as u64);
        }
    }

    /// Moves it to `epoch`, keeping the one it leaves as its previous.
    pub fn advance_to(&mut self, epoch: i32) {
        if self.epoch != epoch {
            self.previous_epoch = self.epoch;
            self.epoch = epoch;
        }
    }

    /// It must revoke within its rebalance timeout from `now`, at its current epoch.
    pub fn must_revoke(&mut self, now: Instant) {
        self.revocation_deadline = Some(now + self.rebalance_timeout);
    }

    /// It revoked what it had to, and moves to `epoch`.
    pub fn reconciled(&mut self, epoch: i32) {
        self.revocation_deadline = None;
        self.advance_to(epoch);
    }

    /// Whether its session ended or it did not revoke in time.
    fn due(&self, now: Instant) -> bool {
        self.session_deadline <= now || self.revocation_deadline.is_some_and(|at| at <= now)
    }
}

/// A group member: its [`Membership`] and what its group kind adds.
pub trait Member: Clone {
    /// Its membership.
    fn membership(&self) -> &Membership;
    /// Its membership, to change.
    fn membership_mut(&mut self) -> &mut Membership;
}

/// [`Member`], and `Deref` to its [`Membership`] (so `member.epoch` reads as before), for a
/// member type with a `membership` field.
macro_rules! impl_member {
    ($member:ty) => {
        impl $crate::group_members::Member for $member {
            fn membership(&self) -> &$crate::group_members::Membership {
                &self.membership
            }
            fn membership_mut(&mut self) -> &mut $crate::group_members::Membership {
                &mut self.membership
            }
        }

        impl ::std::ops::Deref for $member {
            type Target = $crate::group_members::Membership;
            fn deref(&self) -> &Self::Target {
                &self.membership
            }
        }

        impl ::std::ops::DerefMut for $member {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.membership
            }
        }
    };
}
pub(crate) use impl_member;

/// Why a heartbeat is refused: the error and Kafka's message.
pub type Refusal = (ErrorCode, String);

/// The earliest session or revocation deadline of `members`.
pub fn next_deadline<M: Member>(members: &BTreeMap<String, M>) -> Option<Instant> {
    members
        .values()
        .map(Member::membership)
        .flat_map(|m| [Some(m.session_deadline), m.revocation_deadline])
        .flatten()
        .min()
}

/// The ids of the members whose session ended or who did not revoke in time by `now`.
pub fn due<M: Member>(members: &BTreeMap<String, M>, now: Instant) -> Vec<String> {
    members
        .values()
        .map(Member::membership)
        .filter(|m| m.due(now))
        .map(|m| m.id.clone())
        .collect()
}

/// The member with `group.instance.id` `instance`.
pub fn by_instance<'a, M: Member>(
    members: &'a BTreeMap<String, M>,
    instance: &str,
) -> Option<&'a M> {
    members
        .values()
        .find(|m| m.membership().instance_id.as_deref() == Some(instance))
}

/// The member a leaving heartbeat (epoch -1 or -2) names: by its instance id when it has
/// one (which must be the member's), else by its member id. `unknown` is the message for
/// a member id the group does not know.
pub fn leaving<M: Member>(
    members: &BTreeMap<String, M>,
    member_id: &str,
    instance_id: Option<&str>,
    unknown: impl FnOnce() -> String,
) -> Result<String, Refusal> {
    match instance_id {
        Some(instance) => match by_instance(members, instance).map(Member::membership) {
            None => Err((
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!("Instance id {instance} is unknown."),
            )),
            Some(member) if member.id != member_id => Err((
                ErrorCode::FENCED_INSTANCE_ID,
                format!("Instance id {instance} is in use by another member."),
            )),
            Some(member) => Ok(member.id.clone()),
        },
        None => match members.get(member_id) {
            Some(member) => Ok(member.membership().id.clone()),
            None => Err((ErrorCode::UNKNOWN_MEMBER_ID, unknown())),
        },
    }
}

/// A static member leaving for now: it keeps its assignment, and its previous epoch, until
/// it comes back or its session ends.
pub fn leave_for_now(member: &mut Membership, session: Duration, now: Instant) {
    member.previous_epoch = member.epoch;
    member.epoch = STATIC_LEAVE_EPOCH;
    member.session_deadline = now + session;
}

/// A static member joining with `instance` under `member_id`: the member holding that
/// instance id now, when there is one. One that has not left for now under another id
/// still owns it (UNRELEASED_INSTANCE_ID).
pub fn static_rejoin<M: Member>(
    members: &BTreeMap<String, M>,
    member_id: &str,
    instance: Option<&str>,
) -> Result<Option<M>, Refusal> {
    let Some(instance) = instance else {
        return Ok(None);
    };
    match by_instance(members, instance) {
        Some(old)
            if old.membership().epoch != STATIC_LEAVE_EPOCH
                && old.membership().id != member_id =>
        {
            Err((
                ErrorCode::UNRELEASED_INSTANCE_ID,
                format!(
                    "Static member {member_id} with instance id {instance} cannot join the group because the instance id is owned by member {}.",
                    old.membership().id
                ),
            ))
        }
        old => Ok(old.cloned()),
    }
}

/// `old`'s membership taken over by a static member back under `id`: its epoch (the one
/// before it left for now), without a new group epoch.
pub fn take_over(old: &Membership, id: String) -> Membership {
    let epoch = if old.epoch == STATIC_LEAVE_EPOCH {
        old.previous_epoch
    } else {
        old.epoch
    };
    Membership {
        id,
        epoch,
        previous_epoch: epoch,
        ..old.clone()
    }
}

/// Kafka's `throwIfMemberEpochIsInvalid` for a heartbeat at `received`: ahead of the
/// member's epoch, or behind it other than at its previous epoch with `may_lag` (the
/// member's answer was lost), is fenced. `kind` names the group kind in the message
/// ("consumer", "share", "streams"); `name_previous` adds the previous epoch to it, as
/// Kafka's share groups do.
pub fn check_epoch(
    member: &Membership,
    received: i32,
    may_lag: bool,
    kind: &str,
    name_previous: bool,
) -> Result<(), Refusal> {
    let known = member.epoch;
    if received > known {
        return Err((
            ErrorCode::FENCED_MEMBER_EPOCH,
            format!(
                "The {kind} group member has a greater member epoch ({received}) than the one known by the group coordinator ({known}). The member must abandon all its partitions and rejoin."
            ),
        ));
    }
    if received < known && !(received == member.previous_epoch && may_lag) {
        let previous = if name_previous {
            format!(
                ", and it does not match the previous member epoch ({})",
                member.previous_epoch
            )
        } else {
            String::new()
        };
        return Err((
            ErrorCode::FENCED_MEMBER_EPOCH,
            format!(
                "The {kind} group member has a smaller member epoch ({received}) than the one known by the group coordinator ({known}){previous}. The member must abandon all its partitions and rejoin."
            ),
        ));
    }
    Ok(())
}

/// Whether an OffsetCommit of `member_id` at `epoch` may commit (Kafka's
/// `validateOffsetCommit`): with a negative epoch, only to a group with no members; else a
/// known member at its current epoch.
pub fn validate_commit<M: Member>(
    members: &BTreeMap<String, M>,
    member_id: &str,
    epoch: i32,
) -> ErrorCode {
    if epoch < 0 && members.is_empty() {
        return ErrorCode::NONE;
    }
    validate_member_epoch(members, member_id, epoch)
}

/// A known member at its current epoch (OffsetFetch v9+ with a member id):
/// UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH.
pub fn validate_member_epoch<M: Member>(
    members: &BTreeMap<String, M>,
    member_id: &str,
    epoch: i32,
) -> ErrorCode {
    match members.get(member_id) {
        None => ErrorCode::UNKNOWN_MEMBER_ID,
        Some(member) if member.membership().epoch != epoch => ErrorCode::STALE_MEMBER_EPOCH,
        Some(_) => ErrorCode::NONE,
    }
}

/// Whether item `index` of `key` is held by a member other than `except`, `held` giving
/// what a member owns or is giving up.
pub fn held_by_other<'a, M: Member, K: Ord + 'a>(
    members: &'a BTreeMap<String, M>,
    except: &str,
    key: &K,
    index: i32,
    held: impl Fn(&'a M) -> [&'a BTreeMap<K, std::collections::BTreeSet<i32>>; 2],
) -> bool {
    members.values().any(|member| {
        member.membership().id != except
            && held(member)
                .iter()
                .any(|owned| owned.get(key).is_some_and(|set| set.contains(&index)))
    })
}
