//! [`VoterNode`] and [`VoterSet`]: the membership of the quorum at one point in the log.

use super::{Endpoints, QuorumError, ReplicaKey};
use crate::messages::voters_record::{self, KRaftVersionFeature, VotersRecord};
use std::collections::{BTreeMap, BTreeSet};

/// One voter: its key, its listeners and the `kraft.version` range it supports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VoterNode {
    key: ReplicaKey,
    listeners: Endpoints,
    supported_kraft_versions: (i16, i16),
}

impl VoterNode {
    /// A voter with the given listeners and supported `kraft.version` range (inclusive).
    pub fn new(
        key: ReplicaKey,
        listeners: Endpoints,
        supported_kraft_versions: (i16, i16),
    ) -> Self {
        VoterNode {
            key,
            listeners,
            supported_kraft_versions,
        }
    }

    /// The voter's key.
    pub fn key(&self) -> ReplicaKey {
        self.key
    }

    /// The voter's listeners.
    pub fn listeners(&self) -> &Endpoints {
        &self.listeners
    }

    /// The `kraft.version` range (min, max) the voter supports.
    pub fn supported_kraft_versions(&self) -> (i16, i16) {
        self.supported_kraft_versions
    }

    /// Whether a replica presenting `key` is this voter ([`ReplicaKey::matches`], with this
    /// voter's key as the stored side).
    pub fn is_voter(&self, key: &ReplicaKey) -> bool {
        self.key.matches(key)
    }
}

/// The voters of the quorum: at most one node per id, never empty.
///
/// A voter set comes from a `VotersRecord` in the log or a snapshot, or from the static
/// `controller.quorum.voters` configuration ([`VoterSet::from_static`]). Iteration is in id
/// order, which is also [`ReplicaKey`] order since ids are unique.
///
/// ```
/// use kafka_codec::quorum::{ReplicaKey, VoterSet};
///
/// let old = VoterSet::from_static("CONTROLLER", [(1, "c1", 9093), (2, "c2", 9093), (3, "c3", 9093)]).unwrap();
/// let grown = old.with_voter(VoterSet::static_node(4, "CONTROLLER", "c4", 9093)).unwrap();
/// assert!(old.has_overlapping_majority(&grown));
/// let shrunk = grown.without_voter(&ReplicaKey::without_directory(1)).unwrap();
/// assert!(old.has_overlapping_majority(&shrunk)); // one out, one in: still overlapping
/// let halved = shrunk.without_voter(&ReplicaKey::without_directory(2)).unwrap();
/// assert!(!old.has_overlapping_majority(&halved)); // two of the old voters gone
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VoterSet {
    voters: BTreeMap<i32, VoterNode>,
}

impl VoterSet {
    /// A voter set from nodes; fails on an empty list or a repeated id.
    pub fn new(nodes: impl IntoIterator<Item = VoterNode>) -> Result<Self, QuorumError> {
        let mut voters = BTreeMap::new();
        for node in nodes {
            let id = node.key.id();
            if voters.insert(id, node).is_some() {
                return Err(QuorumError::DuplicateVoter(id));
            }
        }
        if voters.is_empty() {
            return Err(QuorumError::EmptyVoterSet);
        }
        Ok(VoterSet { voters })
    }

    /// A node as the static configuration describes it: no directory id, one listener,
    /// `kraft.version` 0 only.
    pub fn static_node(id: i32, listener: &str, host: &str, port: u16) -> VoterNode {
        VoterNode::new(
            ReplicaKey::without_directory(id),
            Endpoints::single(listener, host, port),
            (0, 0),
        )
    }

    /// The static voter set of `controller.quorum.voters` (`id@host:port,...`), all on the
    /// controller listener `listener`.
    pub fn from_static<'a>(
        listener: &str,
        voters: impl IntoIterator<Item = (i32, &'a str, u16)>,
    ) -> Result<Self, QuorumError> {
        VoterSet::new(
            voters
                .into_iter()
                .map(|(id, host, port)| VoterSet::static_node(id, listener, host, port)),
        )
    }

    /// The voter set a decoded `VotersRecord` describes.
    ///
    /// Stricter than Kafka in one respect: a record naming the same voter id twice is
    /// rejected ([`QuorumError::DuplicateVoter`]) instead of silently keeping the last entry.
    pub fn from_voters_record(record: &VotersRecord) -> Result<Self, QuorumError> {
        VoterSet::new(record.voters.iter().map(|voter| {
            VoterNode::new(
                ReplicaKey::from_wire(voter.voter_id, voter.voter_directory_id),
                Endpoints::from_voters_record(&voter.endpoints),
                (
                    voter.k_raft_version_feature.min_supported_version,
                    voter.k_raft_version_feature.max_supported_version,
                ),
            )
        }))
    }

    /// The `VotersRecord` (record version 0) describing this set, voters in id order.
    pub fn to_voters_record(&self) -> VotersRecord {
        VotersRecord {
            version: 0,
            voters: self
                .nodes()
                .map(|node| voters_record::Voter {
                    voter_id: node.key.id(),
                    voter_directory_id: node.key.directory_id_or_zero(),
                    endpoints: node.listeners.to_voters_record(),
                    k_raft_version_feature: KRaftVersionFeature {
                        min_supported_version: node.supported_kraft_versions.0,
                        max_supported_version: node.supported_kraft_versions.1,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The nodes in id order.
    pub fn nodes(&self) -> impl Iterator<Item = &VoterNode> {
        self.voters.values()
    }

    /// The voter with this id, if any.
    pub fn node(&self, id: i32) -> Option<&VoterNode> {
        self.voters.get(&id)
    }

    /// The voters' keys, in order.
    pub fn voter_keys(&self) -> BTreeSet<ReplicaKey> {
        self.nodes().map(VoterNode::key).collect()
    }

    /// The voters' ids, in order.
    pub fn voter_ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.voters.keys().copied()
    }

    /// Number of voters.
    pub fn len(&self) -> usize {
        self.voters.len()
    }

    /// Always false: a voter set is never empty. (Present for API symmetry with `len`.)
    pub fn is_empty(&self) -> bool {
        self.voters.is_empty()
    }

    /// Whether a replica presenting `key` is one of the voters (see [`VoterNode::is_voter`]).
    pub fn is_voter(&self, key: &ReplicaKey) -> bool {
        self.voters
            .get(&key.id())
            .is_some_and(|node| node.is_voter(key))
    }

    /// This set plus `node`; fails if a voter with that id already exists.
    pub fn with_voter(&self, node: VoterNode) -> Result<Self, QuorumError> {
        let id = node.key.id();
        if self.voters.contains_key(&id) {
            return Err(QuorumError::DuplicateVoter(id));
        }
        let mut voters = self.voters.clone();
        voters.insert(id, node);
        Ok(VoterSet { voters })
    }

    /// This set without the voter whose key equals `key` exactly; fails if there is no such
    /// voter or it is the last one.
    pub fn without_voter(&self, key: &ReplicaKey) -> Result<Self, QuorumError> {
        match self.voters.get(&key.id()) {
            Some(node) if node.key == *key => {}
            _ => return Err(QuorumError::NotAVoter(*key)),
        }
        if self.voters.len() == 1 {
            return Err(QuorumError::EmptyVoterSet);
        }
        let mut voters = self.voters.clone();
        voters.remove(&key.id());
        Ok(VoterSet { voters })
    }

    /// This set with the voter matching `node`'s key replaced by `node` (new listeners or
    /// supported versions); fails if no voter matches.
    pub fn with_updated_voter(&self, node: VoterNode) -> Result<Self, QuorumError> {
        if !self.is_voter(&node.key) {
            return Err(QuorumError::NotAVoter(node.key));
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id(), node);
        Ok(VoterSet { voters })
    }

    /// Whether any majority of `self` and any majority of `other` share a member, which holds
    /// when each set differs from the other by at most one [`ReplicaKey`]. Kafka allows a new
    /// voter set in the log only if it overlaps the previous one this way, so that two leaders
    /// elected under consecutive configurations can never both win.
    pub fn has_overlapping_majority(&self, other: &VoterSet) -> bool {
        let mine = self.voter_keys();
        let theirs = other.voter_keys();
        mine.difference(&theirs).count() <= 1 && theirs.difference(&mine).count() <= 1
    }
}
