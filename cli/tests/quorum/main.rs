//! `kafka-codec quorum`: the simulated quorum against our own client (`local`), and against a
//! real Kafka controller and Kafka's own tool (`quorum_live`, `#[ignore]`d without them; CI
//! runs them by name, see tools/ci-live.sh).

mod local;
mod quorum_live;
