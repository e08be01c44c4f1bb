//! Tests against a real Kafka: a broker on 127.0.0.1 (`live_broker`) and Kafka's own message
//! classes (`oracle_diff`). Every test is `#[ignore]`d without them; CI runs each module by
//! its path (`cargo test --test live live_broker:: -- --ignored`, see tools/ci-*.sh).

#[path = "../support/mod.rs"]
mod support;

mod live_broker;
mod oracle_diff;
