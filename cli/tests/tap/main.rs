//! `kafka-codec tap`: the proxy and its log (`proxy`), TLS on both sides (`tls`), and hostile
//! and idle connections within the tap's limits (`hostile`).

#[path = "../support/mod.rs"]
mod support;

mod hostile;
mod proxy;
mod tls;
