//! `kafka-codec tap`: the proxy and its log (`proxy`) and TLS on both sides (`tls`). Hostile
//! and idle connections are `tests/hostile.rs`, a binary of its own (it takes most of the
//! process's file descriptors).

#[path = "../support/mod.rs"]
mod support;

mod proxy;
mod tls;
