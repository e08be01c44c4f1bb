//! Adding and removing brokers at run time: the cluster's membership changes as an operator
//! changes a Kafka cluster's, and clients see it in Metadata and DescribeCluster.

use super::{ControlHandle, FencedBroker, Node, OperationError, Operator};
use crate::BrokerAddress;
use std::net::SocketAddr;
use std::sync::Arc;

/// What removing a broker did ([`ControlHandle::remove_broker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedBroker {
    /// The broker removed.
    pub node_id: i32,
    /// The partitions it led when it was shut down: topic, partition, new leader (the first
    /// replica left in the ISR; -1: none, the partition is offline). Empty when it was
    /// fenced already.
    pub moved_leaders: Vec<(String, i32, i32)>,
    /// The groups it coordinated, now coordinated by `stand_in`.
    pub moved_groups: Vec<String>,
    /// The broker that coordinates what it did, as fencing it chose one (`None`: none).
    pub stand_in: Option<i32>,
}

/// What reassigning a broker's partitions away and removing it did
/// ([`ControlHandle::reassign_and_remove_broker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReassignedAndRemoved {
    /// The broker removed.
    pub node_id: i32,
    /// The broker that takes what the placement rules would give the removed one from now on
    /// (partitions of topics created later, groups and transactional ids not seen yet).
    pub successor: i32,
    /// The partitions it led, each now led by another broker at a bumped epoch: topic,
    /// partition, new leader.
    pub moved_leaders: Vec<(String, i32, i32)>,
    /// The groups it coordinated, now coordinated by the successor (their members are told
    /// NOT_COORDINATOR and find it).
    pub moved_groups: Vec<String>,
}

impl ControlHandle {
    /// Adds a broker with the next node id, listening on `port` of the cluster's host (a
    /// free one if `None` or 0; an in-memory cluster's broker has no listener). It is in
    /// Metadata and DescribeCluster at once and leads nothing until a leader is moved to it,
    /// as a new Kafka broker leads nothing until partitions are reassigned to it. Call it on
    /// the runtime that serves the cluster.
    pub fn add_broker(&self, port: Option<u16>) -> Result<BrokerAddress, OperationError> {
        let shared = &self.shared;
        let (runtime, listener) = self.bind(port)?;
        let address = match &listener {
            Some(listener) => listener
                .local_addr()
                .map_err(|e| OperationError::Listen(e.to_string()))?,
            None => SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let node_id = shared
            .next_broker_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if shared.is_controller(node_id) || node_id < 0 {
            return Err(OperationError::NodeIdTaken(node_id));
        }
        let broker = BrokerAddress { node_id, address };
        // The switch first: the accept loop subscribes to it when it starts.
        self.nodes().push(Node::new(node_id));
        {
            let mut brokers = shared.brokers.write().unwrap_or_else(|e| e.into_inner());
            let mut now = Vec::clone(&brokers);
            now.push(broker.clone());
            *brokers = Arc::new(now);
        }
        if let Some(mut quorum) = shared.quorum() {
            quorum.add_observer(node_id, crate::controllers::now_ms());
        }
        if let Some(listener) = listener {
            runtime.spawn(crate::broker::serve(
                Arc::clone(shared),
                node_id,
                listener,
                shared.stop.clone(),
            ));
        }
        Ok(broker)
    }

    /// A listener on `port` of the cluster's host (a free one if `None` or 0; none for an
    /// in-memory cluster), and the runtime to serve it on (the caller's).
    fn bind(
        &self,
        port: Option<u16>,
    ) -> Result<(tokio::runtime::Handle, Option<tokio::net::TcpListener>), OperationError> {
        let shared = &self.shared;
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| OperationError::Listen("not called on a tokio runtime".into()))?;
        if shared.in_memory {
            return Ok((runtime, None));
        }
        let bound = std::net::TcpListener::bind((shared.host.as_str(), port.unwrap_or(0)))
            .and_then(|listener| {
                listener.set_nonblocking(true)?;
                let _guard = runtime.enter();
                tokio::net::TcpListener::from_std(listener)
            })
            .map_err(|e| {
                OperationError::Listen(format!("{}:{}: {e}", shared.host, port.unwrap_or(0)))
            })?;
        Ok((runtime, Some(bound)))
    }

    /// Registers broker `node_id` again if it was unregistered after its shutdown, as a
    /// Kafka broker started again after `kafka-cluster unregister` registers anew (same id,
    /// a new incarnation): on its old address, listed in DescribeCluster at once, fenced
    /// until [`restart_broker`](Self::restart_broker) unfences it. `Ok(false)`: it was not
    /// unregistered; `Err`: its port could not be bound again (it stays unregistered).
    pub(super) fn register_again(&self, node_id: i32) -> Result<bool, OperationError> {
        let shared = &self.shared;
        let Some(broker) = self
            .unregistered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&node_id)
            .cloned()
        else {
            return Ok(false);
        };
        // Unregistered while it ran: its switch and accept loop are still there (the loop
        // binds its address again when the switch goes up).
        let serving = self.nodes().iter().any(|node| node.id == node_id);
        let (runtime, listener) = if serving {
            (None, None)
        } else {
            let port = (!shared.in_memory).then(|| broker.address.port());
            let (runtime, listener) = self.bind(port)?;
            (Some(runtime), listener)
        };
        self.unregistered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&node_id);
        // The switch first: the accept loop subscribes to it when it starts.
        if !serving {
            self.nodes().push(Node::new(node_id));
        }
        {
            let mut brokers = shared.brokers.write().unwrap_or_else(|e| e.into_inner());
            let mut now = Vec::clone(&brokers);
            let at = now.partition_point(|b| b.node_id < node_id);
            now.insert(at, broker);
            *brokers = Arc::new(now);
        }
        if let (Some(runtime), Some(listener)) = (runtime, listener) {
            runtime.spawn(crate::broker::serve(
                Arc::clone(shared),
                node_id,
                listener,
                shared.stop.clone(),
            ));
        }
        Ok(true)
    }

    /// Removes broker `node_id` as an operator removes a Kafka broker: it is shut down (its
    /// listener closes and its connections are dropped for good; a controlled shutdown, so
    /// it is fenced at once, as [`fence_broker`](Self::fence_broker) fences it: each
    /// partition it led moves to the first replica left in its ISR at a bumped leader epoch,
    /// or goes offline, leader -1, when none is left; it leaves every ISR; its groups and
    /// transactional ids move to a stand-in) and then unregistered (UnregisterBroker): it
    /// leaves DescribeCluster's brokers, fenced ones included, and the quorum's observers.
    /// As on Kafka 4.4 (`tests/remove_broker_kafka.rs`, recorded from a live cluster) its
    /// partitions are not reassigned: their replicas lists keep its id, it stays among their
    /// offline replicas, an offline partition stays offline (its ELR, with eligible leader
    /// replicas on, still names it) and a Produce to it is NOT_LEADER_OR_FOLLOWER. Moving
    /// its partitions to the brokers left, as kfake's `RemoveNode` does, is a reassignment:
    /// [`reassign_and_remove_broker`](Self::reassign_and_remove_broker). Removing the last
    /// broker is refused. [`restart_broker`](Self::restart_broker) registers it again, as a
    /// Kafka broker started again after its unregistration registers anew.
    ///
    /// A broker unregistered while it runs (UnregisterBroker) is only shut down: fenced and
    /// unregistered already, it has nothing more to move.
    pub fn remove_broker(&self, node_id: i32) -> Result<RemovedBroker, OperationError> {
        let shared = &self.shared;
        {
            let brokers = shared.brokers();
            if !brokers.iter().any(|broker| broker.node_id == node_id) {
                let unregistered = self
                    .unregistered
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains_key(&node_id);
                if unregistered && self.is_up(node_id) {
                    drop(brokers);
                    self.stop_broker(node_id)?;
                    return Ok(RemovedBroker {
                        node_id,
                        moved_leaders: Vec::new(),
                        moved_groups: Vec::new(),
                        stand_in: None,
                    });
                }
                return Err(OperationError::NoSuchBroker(node_id));
            }
            if brokers.len() == 1 {
                return Err(OperationError::LastBroker(node_id));
            }
        }
        // The controlled shutdown: stopped, then fenced at once; then unregistered.
        self.stop_broker(node_id)?;
        let fenced = self.operator().unregister_stopped(node_id);
        Ok(RemovedBroker {
            node_id,
            moved_leaders: fenced.moved_leaders,
            moved_groups: fenced.moved_groups,
            stand_in: fenced.stand_in,
        })
    }

    /// What kfake's `RemoveNode` does, which Kafka does only through a reassignment: every
    /// partition broker `node_id` led moves to the brokers left (up ones first), each at a
    /// bumped leader epoch as [`move_leader`](Self::move_leader) bumps it, and replicas
    /// lists of partitions placed by default name only brokers still there, as after
    /// `kafka-reassign-partitions` moved its replicas away; the groups and transactional ids
    /// it coordinated move to a successor (a group's waiting JoinGroup or SyncGroup is
    /// answered NOT_COORDINATOR), which also takes what the coordinator rule would give it
    /// later; then it is removed: its listener closes and its connections are dropped for
    /// good. Removing the last broker is refused. [`remove_broker`](Self::remove_broker)
    /// removes one as Kafka does.
    pub fn reassign_and_remove_broker(
        &self,
        node_id: i32,
    ) -> Result<ReassignedAndRemoved, OperationError> {
        let shared = &self.shared;
        let live: Vec<i32> = {
            let mut brokers = shared.brokers.write().unwrap_or_else(|e| e.into_inner());
            if !brokers.iter().any(|broker| broker.node_id == node_id) {
                return Err(OperationError::NoSuchBroker(node_id));
            }
            if brokers.len() == 1 {
                return Err(OperationError::LastBroker(node_id));
            }
            let now: Vec<BrokerAddress> = brokers
                .iter()
                .filter(|broker| broker.node_id != node_id)
                .cloned()
                .collect();
            let live = now.iter().map(|broker| broker.node_id).collect();
            *brokers = Arc::new(now);
            live
        };
        // Leaders go to brokers that are up where there are some, as Kafka's controller
        // elects from the live replicas.
        let up: Vec<i32> = live
            .iter()
            .copied()
            .filter(|&node| self.is_up(node))
            .collect();
        let targets = if up.is_empty() { &live } else { &up };
        let successor = targets[node_id.unsigned_abs() as usize % targets.len()];
        let brokers = shared.placement_brokers;
        // Groups it coordinates, found before its share moves.
        let moved_groups: Vec<String> = {
            let groups = shared.groups();
            groups
                .groups
                .keys()
                .filter(|group| self.coordinator(group, brokers) == node_id)
                .cloned()
                .collect()
        };
        self.successors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(node_id, successor);
        for moved in [&self.coordinators, &self.transaction_coordinators] {
            for coordinator in moved.lock().unwrap_or_else(|e| e.into_inner()).values_mut() {
                if *coordinator == node_id {
                    *coordinator = successor;
                }
            }
        }
        let moved_leaders = shared
            .state()
            .remove_broker(node_id, successor, targets, brokers);
        {
            let mut groups = shared.groups();
            for group in &moved_groups {
                groups.coordinator_moved(group);
            }
        }
        self.operator().unregister(node_id);
        shared.groups_changed.notify_one();
        shared.appended.notify_waiters();
        Ok(ReassignedAndRemoved {
            node_id,
            successor,
            moved_leaders,
            moved_groups,
        })
    }
}

impl Operator<'_> {
    /// Unregisters stopped broker `node_id`, as Kafka's controller acts on UnregisterBroker
    /// (`tests/remove_broker_kafka.rs`): fenced if it was not yet (out of every ISR, the
    /// partitions it led moved to the first replica left in the ISR or offline; nothing to
    /// move when it was fenced already), then gone from DescribeCluster's brokers, fenced
    /// ones included, and from the quorum's observers. The replicas lists that name it keep
    /// its id, and it stays among their offline replicas; its address is kept for a restart
    /// (`ControlHandle::register_again`). What fencing moved.
    pub(crate) fn unregister_stopped(&self, node_id: i32) -> FencedBroker {
        let fenced = self.unregistered(node_id);
        self.unregister(node_id);
        self.shared.groups_changed.notify_one();
        self.shared.appended.notify_waiters();
        fenced
    }

    /// Unregisters running broker `node_id`, as Kafka 4.4's controller acts on
    /// UnregisterBroker of a broker that runs (`tests/remove_broker_kafka.rs`,
    /// `unregistering_a_running_broker_answers_as_kafka_recorded`, recorded from a live
    /// cluster): what [`unregister_stopped`](Self::unregister_stopped) does to its
    /// partitions and the brokers listed (fenced, gone from Metadata and DescribeCluster,
    /// kept in the replicas lists and among the offline replicas), while it keeps running
    /// and answering from the same metadata (a Produce for a partition it led is
    /// NOT_LEADER_OR_FOLLOWER naming the new leader). It does not come back: Kafka's
    /// controller refuses its heartbeats, which carry the epoch of the registration it
    /// lost, until it is restarted and registers anew (`ControlHandle::restart_broker`).
    pub(crate) fn unregister_running(&self, node_id: i32) -> FencedBroker {
        let shared = self.shared;
        let fenced = self.unregistered(node_id);
        // Out of the brokers listed; its switch stays up (it still serves) and it still
        // reads the metadata log.
        {
            let mut brokers = shared.brokers.write().unwrap_or_else(|e| e.into_inner());
            let now: Vec<BrokerAddress> = brokers
                .iter()
                .filter(|broker| broker.node_id != node_id)
                .cloned()
                .collect();
            *brokers = Arc::new(now);
        }
        shared.groups_changed.notify_one();
        shared.appended.notify_waiters();
        fenced
    }

    /// What unregistering `node_id` does before it leaves the brokers listed: fenced, its
    /// address kept for a restart, its replicas lists kept.
    fn unregistered(&self, node_id: i32) -> FencedBroker {
        let shared = self.shared;
        let fenced = self.fence(node_id);
        // Kept for a restart, which registers it again.
        if let Some(broker) = shared.brokers().iter().find(|b| b.node_id == node_id) {
            shared
                .control
                .unregistered
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(node_id, broker.clone());
        }
        // Its replicas lists keep its id once it is no longer a broker.
        {
            let brokers: Vec<i32> = shared.brokers().iter().map(|b| b.node_id).collect();
            shared
                .state()
                .keep_replicas_of(node_id, &brokers, shared.placement_brokers);
        }
        fenced
    }

    /// Broker `node_id` leaves the brokers listed, its switch and the quorum's observers.
    fn unregister(&self, node_id: i32) {
        let shared = &self.shared;
        {
            let mut brokers = shared.brokers.write().unwrap_or_else(|e| e.into_inner());
            let now: Vec<BrokerAddress> = brokers
                .iter()
                .filter(|broker| broker.node_id != node_id)
                .cloned()
                .collect();
            *brokers = Arc::new(now);
        }
        // Its switch goes down, then goes: the accept loop and connections watching it end.
        {
            let mut nodes = self.nodes();
            if let Some(index) = nodes.iter().position(|node| node.id == node_id) {
                nodes[index].up.send_replace(false);
                nodes.remove(index);
            }
        }
        // It no longer reads the metadata log.
        if let Some(mut quorum) = shared.quorum() {
            let _ = quorum.set_running(node_id, false, crate::controllers::now_ms());
        }
    }
}
