//! `kafka-codec tap`: the proxy and its log (`proxy`), TLS on both sides (`tls`), and the
//! certificates people use: self-signed, client certificates, and failures in words
//! (`certificates`), the metrics of the tap and `quorum serve` (`metrics`). Hostile and idle
//! connections are `tests/hostile.rs`, a binary of its own (it takes most of the process's
//! file descriptors). `cluster_clients`: librdkafka through the tap to `kafka-codec cluster`,
//! every frame decoded (ignored without the clients' venv).

#[path = "../support/mod.rs"]
mod support;

mod certificates;
mod cluster_clients;
mod metrics;
mod proxy;
mod tls;
