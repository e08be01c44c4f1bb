//! The quorum behind `quorum serve`: the cluster crate's KRaft quorum
//! ([`kafka_codec_cluster::quorum`], which the cluster's controllers run too) in the shape
//! `quorum serve` has always had.
//!
//! Controllers 1, 2 and 3 are the voters and controller 1 leads epoch 1. Controller 4 runs
//! too but is not a voter (a spare that `add-controller` can add), and broker 100 reads the
//! metadata log. Only the leader has a socket (the server's); the other controllers'
//! endpoints are names under `.invalid`, which resolve nowhere. When a voter change removes
//! the leader and commits, the lowest remaining voter takes over the next epoch, and the
//! server answers as that leader from then on.

use kafka_codec::quorum::Endpoints;
use kafka_codec_cluster::quorum::QuorumShape;
pub use kafka_codec_cluster::quorum::{ids, Quorum, LISTENER};

/// The voters the quorum starts with; the first leads.
const VOTERS: [i32; 3] = [1, 2, 3];
/// A controller that runs but is not a voter.
const SPARE_CONTROLLER: i32 = 4;
/// A broker, reading the metadata log as an observer.
const BROKER: i32 = 100;

/// A fresh quorum at `now_ms`: controller 1 leads epoch 1 and listens on `address`; the
/// others fetch every `fetch_interval_ms` to twice that. A seed fixes everything but the
/// wall clock: directory ids, the cluster id and the fetch intervals.
pub fn quorum(seed: u64, fetch_interval_ms: i64, address: (&str, u16), now_ms: i64) -> Quorum {
    let endpoint = |id: i32| {
        if id == VOTERS[0] {
            Endpoints::single(LISTENER, address.0, address.1)
        } else {
            Endpoints::single(LISTENER, &format!("controller-{id}.invalid"), 9093)
        }
    };
    Quorum::new(
        QuorumShape {
            seed,
            fetch_interval_ms,
            voters: VOTERS.iter().map(|&id| (id, endpoint(id))).collect(),
            spares: vec![(SPARE_CONTROLLER, endpoint(SPARE_CONTROLLER))],
            observers: vec![BROKER],
        },
        now_ms,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::messages::RemoveRaftVoterRequest;
    use kafka_codec::quorum::{NewVoterProbe, ReplicaKey};
    use kafka_codec::Uuid;

    const T0: i64 = 1_700_000_000_000;

    fn cluster(seed: u64) -> Quorum {
        quorum(seed, 1_000, ("127.0.0.1", 9093), T0)
    }

    #[test]
    fn a_seed_names_one_cluster() {
        let (a, b, c) = (cluster(7), cluster(7), cluster(8));
        assert_eq!(a.cluster_id(), b.cluster_id());
        assert_ne!(a.cluster_id(), c.cluster_id());
        let keys = |c: &Quorum| [1, 2, 3, 4, 100].map(|id| c.key(id)).to_vec();
        assert_eq!(keys(&a), keys(&b));
        assert_ne!(keys(&a), keys(&c));
        // The same clock gives the same history.
        let (mut a, mut b) = (a, b);
        for step in 1..=40 {
            let now = T0 + step * 250;
            assert_eq!(a.advance(now), b.advance(now));
            assert_eq!(
                a.leader_mut().describe_quorum(now, 3).unwrap(),
                b.leader_mut().describe_quorum(now, 3).unwrap()
            );
        }
    }

    #[test]
    fn the_high_watermark_and_the_committed_set_follow_a_few_seconds_behind() {
        let mut quorum = cluster(1);
        assert_eq!(quorum.leader().high_watermark(), None);
        let events = quorum.advance(T0 + 5_000);
        let hw = quorum
            .leader()
            .high_watermark()
            .expect("known after a few fetches");
        assert!(hw > quorum.leader().epoch_start_offset());
        assert!(
            events[0].contains("committed voters now {1, 2, 3}"),
            "{events:?}"
        );
        // Remove voter 3: current at once, committed only seconds later.
        let three = quorum.key(3).unwrap();
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(3)
            .with_voter_directory_id(three.directory_id().unwrap());
        let now = T0 + 5_000;
        let id = quorum.cluster_id().to_owned();
        let pending = quorum
            .leader_mut()
            .handle_remove_raft_voter(&request, &id, now, 30_000)
            .unwrap();
        assert_eq!(quorum.leader().current_voter_set().len(), 2);
        assert_eq!(quorum.leader().committed_voter_set().unwrap().len(), 3);
        assert_eq!(pending.poll(quorum.leader(), now), None);
        // Not before one fetch interval: a fetch reports what the previous one brought.
        quorum.advance(now + 999);
        assert_eq!(pending.poll(quorum.leader(), now + 999), None);
        let mut at = now;
        while pending.poll(quorum.leader(), at).is_none() {
            at += 100;
            quorum.advance(at);
        }
        assert_eq!(pending.poll(quorum.leader(), at), Some(Ok(())));
        assert!(at - now <= 4_000, "committed after {} ms", at - now);
        assert_eq!(quorum.leader().committed_voter_set().unwrap().len(), 2);
        // Controller 3 keeps fetching, now as an observer.
        quorum.advance(at + 3_000);
        assert!(quorum.leader().observer_states().any(|s| s.key() == three));
    }

    #[test]
    fn a_leader_that_removes_itself_hands_over_once_the_removal_commits() {
        let mut quorum = cluster(3);
        quorum.advance(T0 + 5_000);
        let one = quorum.key(1).unwrap();
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(1)
            .with_voter_directory_id(one.directory_id().unwrap());
        let id = quorum.cluster_id().to_owned();
        quorum
            .leader_mut()
            .handle_remove_raft_voter(&request, &id, T0 + 5_000, 30_000)
            .unwrap();
        let events = quorum.advance(T0 + 10_000);
        assert!(
            events
                .iter()
                .any(|e| e.contains("controller 2 leads epoch 2")),
            "{events:?}"
        );
        assert_eq!(quorum.leader().leader_id(), 2);
        // The new leader learns its high watermark from the remaining voter, 3.
        quorum.advance(T0 + 15_000);
        assert!(quorum.leader().high_watermark().is_some());
        assert_eq!(
            ids(quorum.leader().committed_voter_set().unwrap()),
            "{2, 3}"
        );
        assert!(quorum.leader().observer_states().any(|s| s.key() == one));
    }

    #[test]
    fn only_a_running_controller_answers_the_new_voter_probe() {
        let quorum = cluster(5);
        let four = quorum.key(SPARE_CONTROLLER).unwrap();
        assert_eq!(quorum.probe(&four), NewVoterProbe::Supports(0, 1));
        let other_disk = ReplicaKey::new(4, Some(Uuid::from_bytes([9; 16])));
        assert_eq!(quorum.probe(&other_disk), NewVoterProbe::NoAnswer);
        let broker = quorum.key(BROKER).unwrap();
        assert_eq!(quorum.probe(&broker), NewVoterProbe::NoAnswer);
        assert_eq!(
            quorum.probe(&ReplicaKey::new(7, Some(Uuid::from_bytes([7; 16])))),
            NewVoterProbe::NoAnswer
        );
    }
}
