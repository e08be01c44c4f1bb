//! Changing the controllers' voters from the control surface, and holding the followers'
//! fetches so that a change stays "current, not yet committed" for as long as a test needs.
//!
//! A change goes through the leader model as AddRaftVoter or RemoveRaftVoter would (the
//! same checks, the same VotersRecord appended): DescribeQuorum shows it among the current
//! voters at once, and among the committed voters (v3) once the high watermark passes the
//! record, which takes the followers' fetches: two each after the append, on their timers
//! or by hand ([`ControlHandle::quorum_fetch`]).

use super::{ControlHandle, OperationError};
use crate::controllers::now_ms;
use crate::quorum::{Quorum, VoterOpError};
use kafka_codec::quorum::VoterSet;

/// The quorum as the control surface shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumView {
    /// The leader's node id.
    pub leader: i32,
    /// Its epoch.
    pub epoch: i32,
    /// The leader's log end offset.
    pub log_end_offset: i64,
    /// The high watermark (`None` until the leader knows it in its epoch).
    pub high_watermark: Option<i64>,
    /// The voters of the last voter set in the log, committed or not.
    pub current_voters: Vec<i32>,
    /// The voters of the last committed voter set (`None` while unknown).
    pub committed_voters: Option<Vec<i32>>,
    /// The replicas fetching as observers (brokers, removed controllers).
    pub observers: Vec<i32>,
    /// Whether followers and observers fetch on their timers.
    pub fetching: bool,
}

impl ControlHandle {
    /// Stops node `node_id` ([`Control::stop_broker`](super::Control::stop_broker)); a
    /// controller (or a broker, an observer) also stops fetching and voting in the quorum:
    /// the high watermark then needs a majority of the voters left, and a stopped leader
    /// is replaced at the next epoch if they are a majority (DescribeQuorum shows it). A
    /// broker not restarted within the broker session timeout is then fenced
    /// ([`fence_broker`](Self::fence_broker)).
    pub fn stop_broker(&self, node_id: i32) -> Result<(), OperationError> {
        self.shared.control.stop_broker(node_id)?;
        self.set_running(node_id, false);
        self.fence_when_session_ends(node_id);
        Ok(())
    }

    /// Restarts node `node_id` ([`Control::restart_broker`](super::Control::restart_broker));
    /// in the quorum it fetches again and catches up (a stopped leader rejoins as a
    /// follower if another was elected). A fenced broker is unfenced: in its partitions'
    /// ISR again, leading the offline partitions it was the last in-sync replica of.
    ///
    /// A broker stopped by [`crash_broker`](Self::crash_broker) registers without a clean
    /// shutdown: fenced by its registration and out of every ELR before it is unfenced
    /// ([`fence_broker_unclean`](crate::state::State::fence_broker_unclean)).
    ///
    /// A broker unregistered after its shutdown (UnregisterBroker,
    /// [`remove_broker`](Self::remove_broker)) registers again, as a Kafka 4.4 broker
    /// started again does (same id, a new incarnation; `tests/remove_broker_kafka.rs`,
    /// recorded from a live cluster): on its old address, in DescribeCluster and the
    /// quorum's observers again, then unfenced as above.
    pub fn restart_broker(&self, node_id: i32) -> Result<(), OperationError> {
        self.register_again(node_id)?;
        let crashed = self.shared.control.is_crashed(node_id);
        self.shared.control.restart_broker(node_id)?;
        if crashed {
            self.shared.control.set_crashed(node_id, false)?;
            self.fence_unclean(node_id);
        }
        self.set_running(node_id, true);
        self.unfence(node_id);
        Ok(())
    }

    /// Crashes broker `node_id`: stopped as [`stop_broker`](Self::stop_broker) stops it
    /// (listener closed, connections dropped, fenced when its session times out), and its
    /// [`restart_broker`](Self::restart_broker) registers it as Kafka's broker does after an
    /// unclean shutdown (no `PreviousBrokerEpoch`): the controller fences it and, with
    /// eligible leader replicas on, takes it out of every ELR (it may have lost committed
    /// records), then its heartbeats unfence it.
    pub fn crash_broker(&self, node_id: i32) -> Result<(), OperationError> {
        self.stop_broker(node_id)?;
        self.shared.control.set_crashed(node_id, true)
    }

    fn set_running(&self, node_id: i32, running: bool) {
        // A node the quorum does not hold (no controllers, a broker added at run time) has
        // nothing to stop there.
        let _ = self.with_quorum(|quorum, now| {
            if quorum.key(node_id).is_none() {
                return Ok(());
            }
            quorum.set_running(node_id, running, now).map(drop)
        });
    }

    fn with_quorum<T>(
        &self,
        then: impl FnOnce(&mut Quorum, i64) -> Result<T, VoterOpError>,
    ) -> Result<T, OperationError> {
        let result = {
            let mut quorum = self.shared.quorum().ok_or(OperationError::NoControllers)?;
            let now = now_ms();
            crate::controllers::advance(&self.shared, &mut quorum, now);
            then(&mut quorum, now)
        };
        self.shared.quorum_changed();
        result.map_err(|error| match error {
            VoterOpError::NoSuchController(id) => OperationError::NoSuchController(id),
            VoterOpError::Stopped(id) => OperationError::Stopped(id),
            VoterOpError::Refused(error) => OperationError::VoterChangeRefused(error.to_string()),
        })
    }

    /// The directory id of controller (or observer) `id`, as `kafka-metadata-quorum
    /// remove-controller --controller-directory-id` takes it.
    pub fn quorum_key(&self, id: i32) -> Result<kafka_codec::Uuid, OperationError> {
        self.with_quorum(|quorum, _| {
            quorum
                .key(id)
                .map(|key| key.directory_id_or_zero())
                .ok_or(VoterOpError::NoSuchController(id))
        })
    }

    /// The quorum now.
    pub fn quorum(&self) -> Result<QuorumView, OperationError> {
        self.with_quorum(|quorum, _| {
            let leader = quorum.leader();
            let ids = |set: &VoterSet| set.voter_ids().collect::<Vec<_>>();
            Ok(QuorumView {
                leader: leader.leader_id(),
                epoch: leader.epoch(),
                log_end_offset: leader.log_end_offset(),
                high_watermark: leader.high_watermark(),
                current_voters: ids(leader.current_voter_set()),
                committed_voters: leader.committed_voter_set().map(ids),
                observers: leader.observer_states().map(|s| s.key().id()).collect(),
                fetching: quorum.is_fetching(),
            })
        })
    }

    /// Adds controller `id` (one removed before) to the voters, with its directory id and
    /// listener, as `kafka-metadata-quorum add-controller` would; the offset of the voter
    /// set appended. Refused as the leader refuses AddRaftVoter (a voter already:
    /// DUPLICATE_VOTER; a change not yet committed: REQUEST_TIMED_OUT; a controller not
    /// caught up: REQUEST_TIMED_OUT).
    pub fn add_voter(&self, id: i32) -> Result<i64, OperationError> {
        self.with_quorum(|quorum, now| Ok(quorum.add_voter(id, now)?.offset()))
    }

    /// Removes voter `id`, as `kafka-metadata-quorum remove-controller` would; the offset of
    /// the voter set appended. The leader may remove itself: once that commits it resigns
    /// and the first remaining voter leads the next epoch.
    pub fn remove_voter(&self, id: i32) -> Result<i64, OperationError> {
        self.with_quorum(|quorum, now| Ok(quorum.remove_voter(id, now)?.offset()))
    }

    /// Starts or stops the followers' and observers' timed fetches (stopped, the high
    /// watermark stands still until [`quorum_fetch`](Self::quorum_fetch)).
    pub fn set_quorum_fetching(&self, fetching: bool) -> Result<(), OperationError> {
        self.with_quorum(|quorum, now| {
            quorum.set_fetching(fetching, now);
            Ok(())
        })
    }

    /// Replica `id` (a follower, or an observer) fetches from the leader once now, reporting
    /// what its previous fetch brought; the quorum after it.
    pub fn quorum_fetch(&self, id: i32) -> Result<QuorumView, OperationError> {
        self.with_quorum(|quorum, now| quorum.fetch_now(id, now).map(drop))?;
        self.quorum()
    }
}
