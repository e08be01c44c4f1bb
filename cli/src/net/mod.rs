//! What the long-running commands (`tap`, `quorum serve`) share to stay up whatever their
//! peers do: one memory budget for the process ([`budget`]), a cap on connections with
//! eviction of the least useful ([`registry`]), an accept loop that backs off when the OS
//! refuses ([`accept`]), TLS ([`tls`]), connections that hold no buffer while idle
//! ([`stream`]), and the flags that set all of it ([`limits`]); what they count
//! ([`metrics`]) and the HTTP endpoint that serves it to Prometheus ([`scrape`]).
//!
//! Connections are tokio tasks, not threads: no thread is started after the command has
//! started, so a refused thread can only fail the start, never a connection.

pub mod accept;
pub mod budget;
pub mod limits;
pub mod metrics;
pub mod registry;
pub mod scrape;
pub mod stream;
pub mod tls;
