//! The reference KRaft leader model (`kafka_codec::quorum`): scenarios, voter changes,
//! property tests over operation histories, and Kafka's own answers.

mod common;

mod quorum_golden;
mod quorum_property;
mod quorum_scenarios;
mod quorum_voter_change;
